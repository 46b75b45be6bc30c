"""The ReduceMax and ReduceMin pages' samples (调用示例), line for line.

* the three call-form snippets (half, 8320 elements, mask 128 in both modes / count 8320, with
  the index): the pages show no output, so the result is printed and checked against the
  reference model;
* the six sharedTmpBuffer size computations: the minimum the pages work out by hand (176, 544,
  1056, 32, 1024, 288 elements), against ``shared_tmp_size``;
* the two complete programs (level 0: 512 halves, mask 128, 4 repeats; first n: 288 halves),
  whose outputs the pages print. They show only the first 19 inputs and the last ones ("...");
  the rest is a fixed pseudo-random pattern kept strictly below the printed maximum (above the
  printed minimum), so the pages' value and index are the answer: ReduceMax [0.9985, 6.8e-06]
  (index 114) and [0.999, 1.38e-05] (index 232); ReduceMin [0.01034, 2.104e-05] (index 353)
  and [0.00393, 4.3e-06] (index 72).
"""

import numpy as np

import ascjax as asc
from ascjax import reference

from ..formats import resolve
from ..isa.reduce_tensor_index import shared_tmp_size

HALF = resolve("half")

# (firstMaxRepeat, calIndex, T) of the six size examples, and the minimum each page computes.
TMP_EXAMPLES = [(65, True, "half", 176), (255, True, "half", 544),
                (65408 // 128, True, "half", 1056), (4, True, "half", 32),
                (65408 // 128, False, "half", 1024), (130, True, "float", 288)]

PAGES = {
    "max": {
        "f": asc.reduce_max, "ref": reference.reduce_max,
        "level0": ([0.4795, 0.951, 0.866, 0.008545, 0.8037, 0.551, 0.754, 0.73, 0.6035, 0.251,
                    0.4841, 0.05914, 0.9414, 0.379, 0.664, 0.6914, 0.9307, 0.3853, 0.4048],
                   [0.4106, 0.604], 0.9985, 114),
        "first_n": ([0.4778, 0.5903, 0.2433, 0.698, 0.1943, 0.407, 0.891, 0.1766, 0.5977, 0.9473,
                     0.6523, 0.10913, 0.0143, 0.86, 0.2366, 0.625, 0.3696, 0.708, 0.946],
                    [0.262], 0.999, 232),
    },
    "min": {
        "f": asc.reduce_min, "ref": reference.reduce_min,
        "level0": ([0.769, 0.8584, 0.1082, 0.2715, 0.1759, 0.7646, 0.6406, 0.2944, 0.4255, 0.927,
                    0.8022, 0.04507, 0.9688, 0.919, 0.3008, 0.7144, 0.3206, 0.6753, 0.8276],
                   [0.304], 0.01034, 353),
        "first_n": ([0.556, 0.5225, 0.3623, 0.214, 0.556, 0.0643, 0.769, 0.594, 0.261, 0.3652,
                     0.911, 0.924, 0.386, 0.3696, 0.2296, 0.5957, 0.1709, 0.79, 0.8516],
                    [0.2242], 0.00393, 72),
    },
}


def _fill(rng, n, head, tail, extreme, at, kind):
    """The page's shown inputs, the extreme at its index, a pattern strictly inside it."""
    if kind == "max":
        rest = rng.uniform(0.0, 0.998, n)       # every half of these is <= 0.99805 < 0.9985
    else:
        rest = rng.uniform(0.0105, 1.0, n)      # every half of these is > 0.01034
    src = rest.astype(np.float16)
    src[:len(head)] = head
    src[n - len(tail):] = tail
    src[at] = extreme
    return src


def _show(label, out):
    index = int(out.view(np.uint16)[1])
    print(f"{label}: dst_gm [{out[0]!s}, {out[1]!s}] -> index {index} "
          f"(reinterpret_cast<uint16_t*>)")
    return index


def _run(kind: str) -> bool:
    page = PAGES[kind]
    f, ref, name = page["f"], page["ref"], f"Reduce{kind.capitalize()}"
    rng = np.random.default_rng(11)
    passed = True

    # The call-form snippets: 8320 halves, 65 repeats of 128, the index wanted.
    src_local = rng.uniform(0, 1, 8320).astype(np.float16)
    dst_local = np.zeros(16, np.float16)
    tmp = np.zeros(shared_tmp_size(HALF, 65, True), np.float16)
    mask = 128
    # each call returns (dst, spr): the new dst and the SPRs GetReduceRepeatMaxMinSpr reads
    outs = [f(dst_local, src_local, tmp, mask, 65, 8, True)[0]]       # mask continuous mode
    mask = [0xFFFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF]
    outs.append(f(dst_local, src_local, tmp, mask, 65, 8, True)[0])   # mask bit mode
    outs.append(f(dst_local, src_local, tmp, 8320, True)[0])          # first n
    want, _ = ref(dst_local, src_local, tmp, 8320, True)
    for label, out in zip(("mask continuous", "mask bit", "first n"), outs, strict=True):
        out = np.asarray(out)
        _show(f"{name} 8320 halves, {label}", out)
        passed &= out.tobytes() == want.tobytes()

    # The sharedTmpBuffer sizes the page computes by hand.
    for first, cal_index, t, page_size in TMP_EXAMPLES:
        size = shared_tmp_size(resolve(t), first, cal_index)
        print(f"{name} sharedTmpBuffer, {t}, firstMaxRepeat {first}, calIndex {cal_index}: "
              f"{size} elements ({size * resolve(t).width} bytes); page: {page_size}")
        passed &= size == page_size

    # tensor高维切分计算接口完整示例: 512 halves, mask 128, repeat 4, repStride 8.
    head, tail, extreme, at = page["level0"]
    src_data_size, mask, rep_stride = 512, 128, 8
    repeat = src_data_size // mask
    src_local = _fill(rng, src_data_size, head, tail, extreme, at, kind)
    tmp = np.zeros(shared_tmp_size(HALF, repeat, True), np.float16)
    out = np.asarray(f(np.zeros(16, np.float16), src_local, tmp, mask, repeat, rep_stride,
                       True)[0])
    index = _show(f"{name} level 0 (512 halves)", out)
    passed &= out[0] == np.float16(extreme) and index == at

    # tensor前n个数据计算接口完整调用示例: the first 288 halves.
    head, tail, extreme, at = page["first_n"]
    src_data_size = 288
    src_local = _fill(rng, src_data_size, head, tail, extreme, at, kind)
    tmp = np.zeros(shared_tmp_size(HALF, src_data_size // 128, True), np.float16)
    out = np.asarray(f(np.zeros(16, np.float16), src_local, tmp, src_data_size, True)[0])
    index = _show(f"{name} first n (288 halves)", out)
    passed &= out[0] == np.float16(extreme) and index == at

    print(f"[Success] {name} samples reproduced." if passed else f"[Failed] {name} samples.")
    return bool(passed)


def main_max() -> bool:
    return _run("max")


def main_min() -> bool:
    return _run("min")
