"""Ports of the seed pages' example programs, line for line, through the public API.

Each ``main()`` prints what the seed program prints and returns True when it passed.
"""

from . import (
    asc_gather,
    gather,
    gather_block,
    gather_mask,
    pair_reduce_sum,
    reduce_max_min,
    reduce_register,
    reduce_sum_datablock,
    reduce_tensor_minmax,
    squeeze_and_storeunalign,
    squeeze_family,
    vector_mask,
)

EXAMPLES = {
    "reduce_sum_datablock": reduce_sum_datablock.main,
    "pair_reduce_sum": pair_reduce_sum.main,
    "asc_gather": asc_gather.main,
    "gather": gather.main,
    "asc_gather_ub": gather.main_ub,
    "asc_gather_register": gather.main_register,
    "reg_gather": gather.main_reg,
    "gather_mask": gather_mask.main,
    "squeeze_and_storeunalign": squeeze_and_storeunalign.main,
    "squeeze": squeeze_family.main,
    "reduce_register": reduce_register.main,
    "reduce_tensor_minmax": reduce_tensor_minmax.main,
    "get_reduce_repeat_sum_spr": reduce_tensor_minmax.main_sum_spr,
    "get_reduce_repeat_max_min_spr": reduce_tensor_minmax.main_max_min_spr,
    "reduce_max": reduce_max_min.main_max,
    "reduce_min": reduce_max_min.main_min,
    "vector_mask": vector_mask.main,
    "gatherb": gather_block.main_gatherb,
    "gather_datablock": gather_block.main_gather_datablock,
    "gather_datablock_register": gather_block.main_gather_datablock_register,
    "reg_gather_b": gather_block.main_reg_gather_b,
    "scatter": gather_block.main_scatter,
}
