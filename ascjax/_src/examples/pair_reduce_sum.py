"""The PairReduceSum page's sample: half, mask 128 (continuous and bit mode), repeat 1.

The page shows the first 16 inputs and first 8 outputs and elides the rest ("...."); the rest
of the register is filled here with a fixed pseudo-random pattern and checked against pair
sums computed in float64 and rounded once, which is exact for these small integers.
"""

import numpy as np

import ascjax as asc

SHOWN_INPUT = [1, 1, 1, -1, 2, 2, -1, 2, 3, 3, 3, -1, 4, 4, -2, 4]
SHOWN_OUTPUT = [2, 0, 4, 1, 6, 2, 8, 2]


def main() -> bool:
    rng = np.random.default_rng(2024)
    src = np.concatenate([SHOWN_INPUT, rng.integers(-8, 9, 128 - 16)]).astype(np.float16)
    dst = np.zeros(64, np.float16)
    golden = (src[0::2].astype(np.float64) + src[1::2]).astype(np.float16)
    passed = True
    for label, mask in (("continuous", 256 // 2), ("bit", [2**64 - 1, 2**64 - 1])):
        # AscendC::PairReduceSum<half>(dstLocal, srcLocal, repeat, mask, 1, 1, 8);
        out = np.asarray(asc.pair_reduce_sum(dst, src, 1, mask, 1, 1, 8))
        ok = out[:8].tolist() == SHOWN_OUTPUT and np.array_equal(out, golden)
        print(f"mask {label} mode: src_gm {src[:8].tolist()} ... -> dst_gm {out[:8].tolist()} ...")
        passed &= ok
    print("[Success] PairReduceSum sample reproduced." if passed
          else "[Failed] PairReduceSum sample mismatch.")
    return bool(passed)
