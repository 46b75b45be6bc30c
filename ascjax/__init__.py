"""ascjax: a bit-exact, differentiable JAX emulator of Ascend C vector instructions.

Registers are arrays ``(..., lanes)``; leading axes are independent registers. Names mirror
Ascend C (``asc_reduce_sum_datablock`` -> ``reduce_sum_datablock``); out-parameters become
return values and hidden registers explicit state. See ``INSTRUCTIONS`` for the registry.
"""

from ascjax._src.config import PRODUCTS as PRODUCTS
from ascjax._src.config import Config as Config
from ascjax._src.formats import CODEC_FORMATS as CODEC_FORMATS
from ascjax._src.formats import DATABLOCK_BYTES as DATABLOCK_BYTES
from ascjax._src.formats import FORMATS as FORMATS
from ascjax._src.formats import ROUND_MODES as ROUND_MODES
from ascjax._src.formats import UB_BYTES as UB_BYTES
from ascjax._src.formats import VL_BYTES as VL_BYTES
from ascjax._src.formats import Format as Format
from ascjax._src.formats import finfo as finfo
from ascjax._src.formats import resolve_format as resolve_format
from ascjax._src.io.binio import BinFileError as BinFileError
from ascjax._src.io.binio import read_bin as read_bin
from ascjax._src.io.binio import write_bin as write_bin
from ascjax._src.io.compare import CompareReport as CompareReport
from ascjax._src.io.compare import compare as compare
from ascjax._src.io.engine import map_registers as map_registers
from ascjax._src.io.runners import RUNNERS as RUNNERS
from ascjax._src.io.runners import RunSummary as RunSummary
from ascjax._src.io.runners import run_bin as run_bin
from ascjax._src.isa.codecs import decode as decode
from ascjax._src.isa.codecs import encode as encode
from ascjax._src.isa.codecs import pack_nibbles as pack_nibbles
from ascjax._src.isa.codecs import unpack_nibbles as unpack_nibbles
from ascjax._src.isa.gather import asc_gather as asc_gather
from ascjax._src.isa.gather import reg_gather as reg_gather
from ascjax._src.isa.gather_block import GatherRepeatParams as GatherRepeatParams
from ascjax._src.isa.gather_block import gather_datablock as gather_datablock
from ascjax._src.isa.gather_block import gatherb as gatherb
from ascjax._src.isa.gather_block import reg_gather_b as reg_gather_b
from ascjax._src.isa.gather_mask import GatherMaskParams as GatherMaskParams
from ascjax._src.isa.gather_mask import asc_reduce as asc_reduce
from ascjax._src.isa.gather_mask import gather_mask as gather_mask
from ascjax._src.isa.gather_tensor import gather as gather
from ascjax._src.isa.masks import Pattern as Pattern
from ascjax._src.isa.masks import create_mask as create_mask
from ascjax._src.isa.masks import update_mask as update_mask
from ascjax._src.isa.memory import copy_gm2ub_align as copy_gm2ub_align
from ascjax._src.isa.memory import copy_ub2gm_align as copy_ub2gm_align
from ascjax._src.isa.memory import loadalign as loadalign
from ascjax._src.isa.memory import make_ub as make_ub
from ascjax._src.isa.memory import storealign as storealign
from ascjax._src.isa.memory import sync as sync
from ascjax._src.isa.memory import sync_notify as sync_notify
from ascjax._src.isa.memory import sync_wait as sync_wait
from ascjax._src.isa.memory import ub_view as ub_view
from ascjax._src.isa.reduce_register import asc_reduce_sum as asc_reduce_sum
from ascjax._src.isa.reduce_register import reduce_sum_datablock as reduce_sum_datablock
from ascjax._src.isa.reduce_register import (
    reduce_sum_datablock_levels as reduce_sum_datablock_levels,
)
from ascjax._src.isa.reduce_register_minmax import asc_reduce_max as asc_reduce_max
from ascjax._src.isa.reduce_register_minmax import asc_reduce_min as asc_reduce_min
from ascjax._src.isa.reduce_register_minmax import reduce_max_datablock as reduce_max_datablock
from ascjax._src.isa.reduce_register_minmax import reduce_min_datablock as reduce_min_datablock
from ascjax._src.isa.reduce_register_minmax import reg_pair_reduce_elem as reg_pair_reduce_elem
from ascjax._src.isa.reduce_register_minmax import reg_reduce as reg_reduce
from ascjax._src.isa.reduce_register_minmax import (
    reg_reduce_data_block as reg_reduce_data_block,
)
from ascjax._src.isa.reduce_tensor import ReduceSpr as ReduceSpr
from ascjax._src.isa.reduce_tensor import block_reduce_sum as block_reduce_sum
from ascjax._src.isa.reduce_tensor import pair_reduce_sum as pair_reduce_sum
from ascjax._src.isa.reduce_tensor import reduce_spr_reset as reduce_spr_reset
from ascjax._src.isa.reduce_tensor import reduce_sum as reduce_sum
from ascjax._src.isa.reduce_tensor import reduce_sum_tmp_size as reduce_sum_tmp_size
from ascjax._src.isa.reduce_tensor import repeat_reduce_sum as repeat_reduce_sum
from ascjax._src.isa.reduce_tensor import whole_reduce_sum as whole_reduce_sum
from ascjax._src.isa.reduce_tensor_index import reduce_max as reduce_max
from ascjax._src.isa.reduce_tensor_index import reduce_min as reduce_min
from ascjax._src.isa.reduce_tensor_index import shared_tmp_size as shared_tmp_size
from ascjax._src.isa.reduce_tensor_minmax import asc_pair_reduce_sum as asc_pair_reduce_sum
from ascjax._src.isa.reduce_tensor_minmax import asc_repeat_reduce_sum as asc_repeat_reduce_sum
from ascjax._src.isa.reduce_tensor_minmax import block_reduce_max as block_reduce_max
from ascjax._src.isa.reduce_tensor_minmax import block_reduce_min as block_reduce_min
from ascjax._src.isa.reduce_tensor_minmax import datablock_reduce_max as datablock_reduce_max
from ascjax._src.isa.reduce_tensor_minmax import datablock_reduce_min as datablock_reduce_min
from ascjax._src.isa.reduce_tensor_minmax import datablock_reduce_sum as datablock_reduce_sum
from ascjax._src.isa.reduce_tensor_minmax import get_reduce_max_cnt as get_reduce_max_cnt
from ascjax._src.isa.reduce_tensor_minmax import get_reduce_min_cnt as get_reduce_min_cnt
from ascjax._src.isa.reduce_tensor_minmax import (
    get_reduce_repeat_max_min_spr as get_reduce_repeat_max_min_spr,
)
from ascjax._src.isa.reduce_tensor_minmax import (
    get_reduce_repeat_sum_spr as get_reduce_repeat_sum_spr,
)
from ascjax._src.isa.reduce_tensor_minmax import pair_reduce_sum_ub as pair_reduce_sum_ub
from ascjax._src.isa.reduce_tensor_minmax import reduce_data_block as reduce_data_block
from ascjax._src.isa.reduce_tensor_minmax import reduce_pair_elem as reduce_pair_elem
from ascjax._src.isa.reduce_tensor_minmax import reduce_repeat as reduce_repeat
from ascjax._src.isa.reduce_tensor_minmax import repeat_reduce_max as repeat_reduce_max
from ascjax._src.isa.reduce_tensor_minmax import repeat_reduce_min as repeat_reduce_min
from ascjax._src.isa.scatter import scatter as scatter
from ascjax._src.isa.squeeze import SqueezeState as SqueezeState
from ascjax._src.isa.squeeze import get_mask_spr as get_mask_spr
from ascjax._src.isa.squeeze import get_squeeze_status as get_squeeze_status
from ascjax._src.isa.squeeze import squeeze as squeeze
from ascjax._src.isa.squeeze import squeeze_and_storeunalign as squeeze_and_storeunalign
from ascjax._src.isa.squeeze import (
    squeeze_and_storeunalign_finalize as squeeze_and_storeunalign_finalize,
)
from ascjax._src.isa.squeeze import squeeze_and_storeunalign_init as squeeze_and_storeunalign_init
from ascjax._src.isa.squeeze import squeeze_register as squeeze_register
from ascjax._src.isa.squeeze import squeeze_ub as squeeze_ub
from ascjax._src.isa.squeeze import squeeze_with_status as squeeze_with_status
from ascjax._src.isa.squeeze import unsqueeze as unsqueeze
from ascjax._src.isa.vector_mask import MASK_PLACEHOLDER as MASK_PLACEHOLDER
from ascjax._src.isa.vector_mask import MaskState as MaskState
from ascjax._src.isa.vector_mask import asc_set_mask_count as asc_set_mask_count
from ascjax._src.isa.vector_mask import asc_set_mask_norm as asc_set_mask_norm
from ascjax._src.isa.vector_mask import asc_set_vector_mask as asc_set_vector_mask
from ascjax._src.isa.vector_mask import reset_mask as reset_mask
from ascjax._src.isa.vector_mask import set_mask_count as set_mask_count
from ascjax._src.isa.vector_mask import set_mask_norm as set_mask_norm
from ascjax._src.isa.vector_mask import set_vector_mask as set_vector_mask
from ascjax._src.native import native_kernels_off as native_kernels_off
from ascjax._src.registry import ASSUMPTIONS as ASSUMPTIONS
from ascjax._src.registry import COMPANIONS as COMPANIONS
from ascjax._src.registry import INSTRUCTIONS as INSTRUCTIONS
from ascjax._src.registry import UnknownInstruction as UnknownInstruction
from ascjax._src.registry import conformance_table as conformance_table
from ascjax._src.registry import instruction as instruction
from ascjax._src.tables import format_spacing as format_spacing
from ascjax._src.tables import format_table as format_table
from ascjax._src.tables import value_table as value_table

# Pattern constants, as in Ascend C: ascjax.PAT_ALL, ascjax.PAT_M3, ...
PAT_ALL, PAT_VL1, PAT_VL2, PAT_VL3, PAT_VL4 = (Pattern.PAT_ALL, Pattern.PAT_VL1, Pattern.PAT_VL2,
                                               Pattern.PAT_VL3, Pattern.PAT_VL4)
PAT_VL8, PAT_VL16, PAT_VL32, PAT_VL64 = (Pattern.PAT_VL8, Pattern.PAT_VL16, Pattern.PAT_VL32,
                                         Pattern.PAT_VL64)
PAT_VL128, PAT_M3, PAT_M4, PAT_H, PAT_Q, PAT_ALLF = (Pattern.PAT_VL128, Pattern.PAT_M3,
                                                     Pattern.PAT_M4, Pattern.PAT_H, Pattern.PAT_Q,
                                                     Pattern.PAT_ALLF)

# Each instruction as the registry holds it (the imports above name them for readers): with
# the check that names a page's camelCase keyword (reduceMode= is reduce_mode= here).
globals().update({_ins.name: _ins.function for _ins in INSTRUCTIONS.values()})

# The name native_kernels_off had when the only kernels were compaction's.
compaction_kernels_off = native_kernels_off

__version__ = "0.1.0"

_SUBMODULES = ("precision", "reference", "viz")


def __getattr__(name: str):
    """``ascjax.viz`` / ``ascjax.precision`` / ``ascjax.reference`` load on first use."""
    if name in _SUBMODULES:
        import importlib

        return importlib.import_module(f"ascjax.{name}")
    raise AttributeError(f"module 'ascjax' has no attribute {name!r}")
