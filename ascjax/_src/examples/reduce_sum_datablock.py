"""Port of the asc_reduce_sum_datablock seed program (uint32, 64 elements, update_mask)."""

import numpy as np

import ascjax as asc

ELEMENT_COUNT = 64
SIZE = ELEMENT_COUNT * 4  # bytes


def reduce(ub, dst, src):
    """``__simd_vf__ reduce``: one register, all 64 lanes active."""
    count = ELEMENT_COUNT
    mask, count = asc.update_mask(count, "uint32_t")
    src_reg = asc.loadalign(ub, src, "uint32_t")
    dst_reg = asc.reduce_sum_datablock(src_reg, mask)
    return asc.storealign(ub, dst, dst_reg, mask)


def kernel(dst_gm, src_gm):
    ub = asc.make_ub()
    dst_local, src_local = 0, SIZE  # __ubuf__ uint32_t dst_local[64], src_local[64]
    ub = asc.copy_gm2ub_align(ub, src_local, src_gm, SIZE)
    asc.sync_notify("PIPE_MTE2", "PIPE_V", "EVENT_ID0")
    asc.sync_wait("PIPE_MTE2", "PIPE_V", "EVENT_ID0")
    ub = reduce(ub, dst_local, src_local)
    asc.sync_notify("PIPE_V", "PIPE_MTE3", "EVENT_ID0")
    asc.sync_wait("PIPE_V", "PIPE_MTE3", "EVENT_ID0")
    dst_gm = asc.copy_ub2gm_align(dst_gm, ub, dst_local, SIZE)
    asc.sync()
    return dst_gm


def main() -> bool:
    src = np.arange(1, ELEMENT_COUNT + 1, dtype=np.uint32)
    output = np.zeros(ELEMENT_COUNT, np.uint32)
    golden = np.zeros(ELEMENT_COUNT, np.uint32)
    for block in range(8):
        for i in range(8):
            golden[block] += src[block * 8 + i]
    output = np.asarray(kernel(output, src))
    passed = bool(np.array_equal(output, golden))
    print("[Success] asc_reduce_sum_datablock passed." if passed
          else "[Failed] asc_reduce_sum_datablock failed.")
    return passed
