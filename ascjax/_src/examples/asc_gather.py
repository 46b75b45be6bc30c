"""Port of the asc_gather seed program (uint16 data gathered by itself as index)."""

import numpy as np

import ascjax as asc

ELEMENT_COUNT = 128
SIZE = ELEMENT_COUNT * 2  # bytes


def print_data(label, values):
    count = min(len(values), 8)
    tail = " ..." if len(values) > count else ""
    print(f"{label}:" + "".join(f" {int(v)}" for v in values[:count]) + tail)


def gather_vf(ub, output, input_):
    """``__simd_vf__ gather_vf``: index = the input itself, all lanes active."""
    mask = asc.create_mask(asc.PAT_ALL, "uint16_t")
    index = asc.loadalign(ub, input_, "uint16_t")
    dst = asc.asc_gather(asc.ub_view(ub, input_, "uint16_t"), index, mask)
    return asc.storealign(ub, output, dst, mask)


def kernel(output_gm, input_gm):
    ub = asc.make_ub()
    output_local, input_local = 0, SIZE
    ub = asc.copy_gm2ub_align(ub, input_local, input_gm, SIZE)
    asc.sync_notify("PIPE_MTE2", "PIPE_V", "EVENT_ID0")
    asc.sync_wait("PIPE_MTE2", "PIPE_V", "EVENT_ID0")
    ub = gather_vf(ub, output_local, input_local)
    asc.sync_notify("PIPE_V", "PIPE_MTE3", "EVENT_ID0")
    asc.sync_wait("PIPE_V", "PIPE_MTE3", "EVENT_ID0")
    output_gm = asc.copy_ub2gm_align(output_gm, ub, output_local, SIZE)
    asc.sync()
    return output_gm


def main() -> bool:
    input_ = np.array([ELEMENT_COUNT - 1 - i for i in range(ELEMENT_COUNT)], np.uint16)
    output = np.full(ELEMENT_COUNT, 0xFF, np.uint16)
    golden = np.array([input_[input_[i]] for i in range(ELEMENT_COUNT)], np.uint16)
    output = np.asarray(kernel(output, input_))
    print_data("Input bytes", input_)
    print_data("Output bytes", output)
    print_data("Golden", golden)
    passed = bool(np.array_equal(output, golden))
    print("[Success] asc_gather completed." if passed else "[Failed] asc_gather output mismatch.")
    return passed
