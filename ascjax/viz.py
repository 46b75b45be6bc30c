"""Pictures of registers, masks and what each instruction does (matplotlib).

Every function returns a ``matplotlib.figure.Figure`` (built without pyplot: importing this
module or drawing changes no global matplotlib state; notebooks show the figure). The names
and arguments mirror the instructions: ``ascjax.viz.gather(src, index, mask)`` draws what
``ascjax.gather(src, index, mask)`` does, with the values the instruction returns.

>>> import numpy as np, ascjax
>>> from ascjax import viz
>>> fig = viz.register(np.arange(64, dtype=np.float32), ascjax.create_mask("PAT_M3", "float"))
>>> fig.savefig("register.png")  # doctest: +SKIP
"""

from ascjax._src.viz.core import mask, reduce_sum_datablock, register, summation_tree
from ascjax._src.viz.memory import gather, pair_reduce_sum, squeeze_and_storeunalign

__all__ = ["gather", "mask", "pair_reduce_sum", "reduce_sum_datablock", "register",
           "squeeze_and_storeunalign", "summation_tree"]
