"""Pictures of registers, masks and what each instruction does (matplotlib).

Every function returns a ``matplotlib.figure.Figure`` (built without pyplot: importing this
module or drawing changes no global matplotlib state). A notebook shows a figure that is a
cell's last value; anywhere else in a cell (in a loop, before other statements) call
``fig.show()``. ``plt.show()`` does not know these figures, as they are not pyplot's. The names
and arguments mirror the instructions: ``ascjax.viz.asc_gather(src, index, mask)`` draws what
``ascjax.asc_gather(src, index, mask)`` does, with the values the instruction returns.

>>> import numpy as np, ascjax
>>> from ascjax import viz
>>> fig = viz.register(np.arange(64, dtype=np.float32), ascjax.create_mask("PAT_M3", "float"))
>>> fig.savefig("register.png")  # doctest: +SKIP
"""

from ascjax._src.viz.compaction import squeeze_register, unsqueeze_register
from ascjax._src.viz.gather import asc_gather
from ascjax._src.viz.gather_mask import gather_mask_patterns
from ascjax._src.viz.mask import mask
from ascjax._src.viz.pair import pair_reduce_sum
from ascjax._src.viz.register import register
from ascjax._src.viz.squeeze import squeeze_and_storeunalign
from ascjax._src.viz.tree import reduce_sum_datablock, summation_tree

__all__ = ["asc_gather", "gather_mask_patterns", "mask", "pair_reduce_sum",
           "reduce_sum_datablock", "register", "squeeze_and_storeunalign", "squeeze_register",
           "summation_tree", "unsqueeze_register"]
