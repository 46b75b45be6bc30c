"""Port of the asc_squeeze_and_storeunalign seed program (float, PAT_M3, two repeats)."""

import numpy as np

import ascjax as asc

ELEMENTS_PER_REGISTER = 64
REPEAT_COUNT = 2
SELECTED_PER_REGISTER = 22
INPUT_COUNT = ELEMENTS_PER_REGISTER * REPEAT_COUNT
OUTPUT_COUNT = SELECTED_PER_REGISTER * REPEAT_COUNT


def pack_selected(ub, output, register_output, input_):
    """``__simd_vf__ pack_selected``: squeeze every third element of two registers."""
    squeeze_mask = asc.create_mask(asc.PAT_M3, "float")
    store_mask = asc.create_mask(asc.PAT_ALL, "float")
    unalign_reg = asc.squeeze_and_storeunalign_init()
    dst = None
    for repeat in range(REPEAT_COUNT):
        src = asc.loadalign(ub, input_ + repeat * ELEMENTS_PER_REGISTER * 4, "float")
        ub, dst, unalign_reg = asc.squeeze_and_storeunalign(ub, output, unalign_reg, src,
                                                            squeeze_mask)
    ub, unalign_reg = asc.squeeze_and_storeunalign_finalize(ub, output, unalign_reg)
    return asc.storealign(ub, register_output, dst, store_mask)


def kernel(output_gm, register_gm, input_gm):
    ub = asc.make_ub()
    input_local = 0
    output_local = input_local + INPUT_COUNT * 4
    register_local = output_local + ELEMENTS_PER_REGISTER * 4
    ub = asc.copy_gm2ub_align(ub, input_local, input_gm, INPUT_COUNT * 4)
    asc.sync_notify("PIPE_MTE2", "PIPE_V", "EVENT_ID0")
    asc.sync_wait("PIPE_MTE2", "PIPE_V", "EVENT_ID0")
    ub = pack_selected(ub, output_local, register_local, input_local)
    asc.sync_notify("PIPE_V", "PIPE_MTE3", "EVENT_ID0")
    asc.sync_wait("PIPE_V", "PIPE_MTE3", "EVENT_ID0")
    output_gm = asc.copy_ub2gm_align(output_gm, ub, output_local, OUTPUT_COUNT * 4)
    register_gm = asc.copy_ub2gm_align(register_gm, ub, register_local,
                                       ELEMENTS_PER_REGISTER * 4)
    asc.sync()
    return output_gm, register_gm


def main() -> bool:
    input_ = np.array([i + 0.5 for i in range(INPUT_COUNT)], np.float32)
    output = np.zeros(OUTPUT_COUNT, np.float32)
    register_output = np.zeros(ELEMENTS_PER_REGISTER, np.float32)
    golden = [input_[r * ELEMENTS_PER_REGISTER + i] for r in range(REPEAT_COUNT)
              for i in range(0, ELEMENTS_PER_REGISTER, 3)]
    register_golden = np.zeros(ELEMENTS_PER_REGISTER, np.float32)
    register_golden[:SELECTED_PER_REGISTER] = golden[-SELECTED_PER_REGISTER:]
    output, register_output = (np.asarray(a) for a in kernel(output, register_output, input_))
    passed = (np.array_equal(output, np.array(golden, np.float32))
              and np.array_equal(register_output, register_golden))
    print("[Success] squeeze and unaligned store completed." if passed
          else "[Failed] output mismatch.")
    return bool(passed)
