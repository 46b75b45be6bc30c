"""Ports of the seed pages' example programs, line for line, through the public API.

Each ``main()`` prints what the seed program prints and returns True when it passed.
"""

from . import (
    gather,
    gather_mask,
    pair_reduce_sum,
    reduce_max_min,
    reduce_register,
    reduce_sum_datablock,
    reduce_tensor_minmax,
    squeeze_and_storeunalign,
    vector_mask,
)

EXAMPLES = {
    "reduce_sum_datablock": reduce_sum_datablock.main,
    "pair_reduce_sum": pair_reduce_sum.main,
    "gather": gather.main,
    "gather_mask": gather_mask.main,
    "squeeze_and_storeunalign": squeeze_and_storeunalign.main,
    "reduce_register": reduce_register.main,
    "reduce_tensor_minmax": reduce_tensor_minmax.main,
    "reduce_max": reduce_max_min.main_max,
    "reduce_min": reduce_max_min.main_min,
    "vector_mask": vector_mask.main,
}
