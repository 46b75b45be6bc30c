"""Slow, plain scalar reference models of the ascjax instructions (like JAX's ``lax_reference``).

Each model is written from SPEC.md and the vendor pseudo-code in ``seeds/``, independently of the
fast implementation in ``ascjax._src`` (only ``Config`` and the format table are shared): one
register (or one LocalTensor) at a time, Python loops over elements, NumPy / ml_dtypes scalars, a
Python ``bytearray``-style UB. Every instruction of the registry (``ascjax.INSTRUCTIONS``) has a
model here under the same name and argument order, so a test can compare the two by name
(``tests/test_registry.py`` does, for all of them). Masks may be per-element (one bool per lane)
or the hardware form ``(256,)`` that ``create_mask`` returns, read at bit ``i * width``.

Floating adds are NumPy scalar adds in the destination type: one IEEE-754 round-to-nearest-even
rounding with subnormals kept (NumPy on CPU never flushes them). For binary16 NumPy adds in a wider
type and rounds once more, which is exact here: 24 >= 2*11 + 2 bits makes the double rounding
innocuous. A NaN result of any add is the canonical quiet NaN (assumption A8). ``add`` is the one
scalar add, shared by the instruction models and the summation orders.

The codecs (``encode`` / ``decode``) take their values from independent libraries (ml_dtypes,
NumPy, and en_dtypes, a test extra, for hifloat8).

Use it in tests only: it is orders of magnitude slower than the fast functions.
"""

# One private module per family; this file only names the public models.
from ._codecs import decode as decode
from ._codecs import encode as encode
from ._codecs import library_type as library_type
from ._codecs import value_grid as value_grid
from ._gather import asc_gather as asc_gather
from ._gather import gather as gather
from ._gather import reg_gather as reg_gather
from ._gather_block import gather_datablock as gather_datablock
from ._gather_block import gatherb as gatherb
from ._gather_block import reg_gather_b as reg_gather_b
from ._gather_mask import asc_reduce as asc_reduce
from ._gather_mask import gather_mask as gather_mask
from ._masks import create_mask as create_mask
from ._masks import update_mask as update_mask
from ._memory import copy_gm2ub_align as copy_gm2ub_align
from ._memory import copy_ub2gm_align as copy_ub2gm_align
from ._memory import loadalign as loadalign
from ._memory import storealign as storealign
from ._orders import SUMMATION_ORDERS as SUMMATION_ORDERS
from ._orders import sum_adjacent_tree as sum_adjacent_tree
from ._orders import sum_kahan as sum_kahan
from ._orders import sum_numpy_pairwise as sum_numpy_pairwise
from ._orders import sum_repeats as sum_repeats
from ._orders import sum_sequential as sum_sequential
from ._reduce import ReduceSpr as ReduceSpr
from ._reduce import block_reduce_sum as block_reduce_sum
from ._reduce import pair_reduce_sum as pair_reduce_sum
from ._reduce import reduce_sum as reduce_sum
from ._reduce import reduce_sum_datablock as reduce_sum_datablock
from ._reduce import repeat_reduce_sum as repeat_reduce_sum
from ._reduce import whole_reduce_sum as whole_reduce_sum
from ._reduce_index import reduce_max as reduce_max
from ._reduce_index import reduce_min as reduce_min
from ._reduce_minmax import asc_pair_reduce_sum as asc_pair_reduce_sum
from ._reduce_minmax import asc_repeat_reduce_sum as asc_repeat_reduce_sum
from ._reduce_minmax import block_reduce_max as block_reduce_max
from ._reduce_minmax import block_reduce_min as block_reduce_min
from ._reduce_minmax import datablock_reduce_max as datablock_reduce_max
from ._reduce_minmax import datablock_reduce_min as datablock_reduce_min
from ._reduce_minmax import datablock_reduce_sum as datablock_reduce_sum
from ._reduce_minmax import get_reduce_max_cnt as get_reduce_max_cnt
from ._reduce_minmax import get_reduce_min_cnt as get_reduce_min_cnt
from ._reduce_minmax import get_reduce_repeat_max_min_spr as get_reduce_repeat_max_min_spr
from ._reduce_minmax import get_reduce_repeat_sum_spr as get_reduce_repeat_sum_spr
from ._reduce_minmax import pair_reduce_sum_ub as pair_reduce_sum_ub
from ._reduce_minmax import reduce_data_block as reduce_data_block
from ._reduce_minmax import reduce_pair_elem as reduce_pair_elem
from ._reduce_minmax import reduce_repeat as reduce_repeat
from ._reduce_minmax import repeat_reduce_max as repeat_reduce_max
from ._reduce_minmax import repeat_reduce_min as repeat_reduce_min
from ._reduce_register import asc_reduce_max as asc_reduce_max
from ._reduce_register import asc_reduce_min as asc_reduce_min
from ._reduce_register import asc_reduce_sum as asc_reduce_sum
from ._reduce_register import reduce_max_datablock as reduce_max_datablock
from ._reduce_register import reduce_min_datablock as reduce_min_datablock
from ._reduce_register import reg_pair_reduce_elem as reg_pair_reduce_elem
from ._reduce_register import reg_reduce as reg_reduce
from ._reduce_register import reg_reduce_data_block as reg_reduce_data_block
from ._scalar import add as add
from ._scatter import scatter as scatter
from ._squeeze import SqueezeState as SqueezeState
from ._squeeze import get_mask_spr as get_mask_spr
from ._squeeze import get_squeeze_status as get_squeeze_status
from ._squeeze import squeeze as squeeze
from ._squeeze import squeeze_and_storeunalign as squeeze_and_storeunalign
from ._squeeze import squeeze_and_storeunalign_finalize as squeeze_and_storeunalign_finalize
from ._squeeze import squeeze_and_storeunalign_init as squeeze_and_storeunalign_init
from ._squeeze import squeeze_ub as squeeze_ub
from ._squeeze import squeeze_with_status as squeeze_with_status
from ._squeeze import unsqueeze as unsqueeze
from ._vector_mask import MaskState as MaskState
from ._vector_mask import asc_set_mask_count as asc_set_mask_count
from ._vector_mask import asc_set_mask_norm as asc_set_mask_norm
from ._vector_mask import asc_set_vector_mask as asc_set_vector_mask
from ._vector_mask import reset_mask as reset_mask
from ._vector_mask import set_mask_count as set_mask_count
from ._vector_mask import set_mask_norm as set_mask_norm
from ._vector_mask import set_vector_mask as set_vector_mask

__all__ = [
    "SUMMATION_ORDERS",
    "MaskState",
    "ReduceSpr",
    "SqueezeState",
    "add",
    "asc_gather",
    "asc_pair_reduce_sum",
    "asc_reduce",
    "asc_reduce_max",
    "asc_reduce_min",
    "asc_reduce_sum",
    "asc_repeat_reduce_sum",
    "asc_set_mask_count",
    "asc_set_mask_norm",
    "asc_set_vector_mask",
    "block_reduce_max",
    "block_reduce_min",
    "block_reduce_sum",
    "copy_gm2ub_align",
    "copy_ub2gm_align",
    "create_mask",
    "datablock_reduce_max",
    "datablock_reduce_min",
    "datablock_reduce_sum",
    "decode",
    "encode",
    "gather",
    "gather_datablock",
    "gather_mask",
    "gatherb",
    "get_mask_spr",
    "get_reduce_max_cnt",
    "get_reduce_min_cnt",
    "get_reduce_repeat_max_min_spr",
    "get_reduce_repeat_sum_spr",
    "get_squeeze_status",
    "library_type",
    "loadalign",
    "pair_reduce_sum",
    "pair_reduce_sum_ub",
    "reduce_data_block",
    "reduce_max",
    "reduce_max_datablock",
    "reduce_min",
    "reduce_min_datablock",
    "reduce_pair_elem",
    "reduce_repeat",
    "reduce_sum",
    "reduce_sum_datablock",
    "reg_gather",
    "reg_gather_b",
    "reg_pair_reduce_elem",
    "reg_reduce",
    "reg_reduce_data_block",
    "repeat_reduce_max",
    "repeat_reduce_min",
    "repeat_reduce_sum",
    "reset_mask",
    "scatter",
    "set_mask_count",
    "set_mask_norm",
    "set_vector_mask",
    "squeeze",
    "squeeze_and_storeunalign",
    "squeeze_and_storeunalign_finalize",
    "squeeze_and_storeunalign_init",
    "squeeze_ub",
    "squeeze_with_status",
    "storealign",
    "sum_adjacent_tree",
    "sum_kahan",
    "sum_numpy_pairwise",
    "sum_repeats",
    "sum_sequential",
    "unsqueeze",
    "update_mask",
    "value_grid",
    "whole_reduce_sum",
]
