"""Draw the README's picture with the public API: ``python docs/make_figures.py``.

Writes ``docs/squeeze.png``: the seed page's asc_squeeze_and_storeunalign program (two float
registers, every third element) at an unaligned destination, after each call and finalize.
"""

from pathlib import Path

import numpy as np

import ascjax
from ascjax import viz

HERE = Path(__file__).resolve().parent


def main() -> None:
    registers = (np.arange(128, dtype=np.float32) + 0.5).reshape(2, 64)
    fig = viz.squeeze_and_storeunalign(registers, ascjax.create_mask(ascjax.PAT_M3, "float"),
                                       dst_addr=0x204)
    fig.savefig(HERE / "squeeze.png", dpi=90)


if __name__ == "__main__":
    main()
