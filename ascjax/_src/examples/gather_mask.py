"""Ports of the GatherMask page's two 调用示例 (cpp-memory/GatherMask.md) and asc_reduce's
(c-memory/asc_reduce.md), line for line."""

import numpy as np

import ascjax as AscendC
from ascjax import reference


def builtin_pattern() -> bool:
    """内置固定模式示例: src0Local = [1 .. 256] (float), pattern 2, Normal mode, {1, 4, 8, 0},
    dst and src0 the same tensor. The page prints dst = [2 4 ... 256 undefined ..] and
    rsvdCnt 128."""
    src0_local = np.arange(1, 257, dtype=np.float32)
    mask = 0                 # normal模式下mask建议设置为0
    src1_pattern = 2         # 内置固定模式
    dst_local, rsvd_cnt = AscendC.gather_mask(src0_local, src0_local, src1_pattern, False, mask,
                                              (1, 4, 8, 0))
    dst_local = np.asarray(dst_local)
    print("输入数据src0Local：[1 2 3 ... 256]")
    print("输入数据src1Pattern：src1Pattern = 2;")
    print("输出数据dstLocal：[" + " ".join(str(int(v)) for v in dst_local[:int(rsvd_cnt)])
          + " undefined ..undefined]")
    print(f"输出数据rsvdCnt：{int(rsvd_cnt)}")
    # the page's output: 2, 4, ..., 256 and 128
    return bool(int(rsvd_cnt) == 128 and np.array_equal(
        dst_local[:128], np.arange(2, 257, 2, dtype=np.float32)))


def user_tensor() -> bool:
    """用户自定义Tensor示例: mask 70, Counter mode, {1, 2, 4, 0}, src1 = 0x99999999 words (the
    figures' pattern). The page shows no output: print it and check it against the reference."""
    mask = 70
    src0_local = np.arange(1, 257, dtype=np.float32)
    src1_local = np.full(8, 0x99999999, np.uint32)
    dst_local = np.zeros(256, np.float32)
    dst_local, rsvd_cnt = AscendC.gather_mask(dst_local, src0_local, src1_local, True, mask,
                                              (1, 2, 4, 0))
    want, want_cnt = reference.gather_mask(np.zeros(256, np.float32), src0_local, src1_local,
                                           True, mask, (1, 2, 4, 0))
    dst_local = np.asarray(dst_local)
    print("dstLocal: " + " ".join(str(int(v)) for v in dst_local[:int(rsvd_cnt)]))
    print(f"rsvdCnt: {int(rsvd_cnt)}")
    return bool(int(rsvd_cnt) == int(want_cnt) and np.array_equal(
        dst_local.view(np.uint32), want.view(np.uint32)))


def asc_reduce_example() -> bool:
    """asc_reduce 调用示例: 128 uint16 elements, src1 of 128 / 16 words, first-n form (Atlas
    A2). The page fills no data: src0 = 0 .. 127 and src1 words 0x8001 (elements 0 and 15 of
    every 16) here, checked against the reference."""
    total_length = 128
    src0 = np.arange(total_length, dtype=np.uint16)
    src1 = np.full(total_length // 16, 0x8001, np.uint16)
    dst = np.zeros(total_length, np.uint16)
    config = AscendC.Config(product="A2")
    dst = np.asarray(AscendC.asc_reduce(dst, src0, src1, total_length, config=config))
    want = reference.asc_reduce(np.zeros(total_length, np.uint16), src0, src1, total_length,
                                config=config)
    print("asc_reduce dst: " + " ".join(str(int(v)) for v in dst[:16]) + " ...")
    return bool(np.array_equal(dst, want))


def main() -> bool:
    results = [builtin_pattern(), user_tensor(), asc_reduce_example()]
    passed = all(results)
    print("[Success] GatherMask / asc_reduce completed." if passed else
          "[Failed] GatherMask / asc_reduce output mismatch.")
    return passed
