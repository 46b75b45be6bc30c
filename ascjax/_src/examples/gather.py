"""Ports of the gather pages' 调用示例: AscendC::Gather (its three forms, the page's result),
asc_gather on UB (c-memory), asc_gather's two register forms (c-reg) and Reg::Gather (GatherVF).

The register pages show no output: their programs' results are printed and checked against
``ascjax.reference``.
"""

import numpy as np

import ascjax as asc
from ascjax import reference


def _show(label, values):
    values = np.asarray(values)
    head = " ".join(f"{v:g}" for v in values[:3].astype(np.float32))
    tail = " ".join(f"{v:g}" for v in values[-3:].astype(np.float32))
    print(f"{label}: [{head} ... {tail}]")


def main() -> bool:
    """Gather.md: 512 half gathered from 128 by byte offsets [254 252 ... 2 0], srcBaseAddr 0."""
    src_local = np.arange(128, dtype=np.float16)            # [0 1 2 ... 127]
    src_offset_local = np.tile(np.arange(254, -1, -2, dtype=np.uint32), 4)
    dst_local = np.zeros(512, np.float16)
    # By hand from the page's result: [127 126 125 ... 2 1 0], once per 128 elements.
    want = np.tile(np.arange(127, -1, -1), 4).astype(np.float16)
    _show("输入数据srcOffsetLocal", src_offset_local[:128])
    _show("输入数据srcLocal", src_local)
    _show("输出数据(dstLocal)初始值", dst_local)
    passed = True
    # repeatTime = 4, mask = 128, 128 elements one repeat; dstRepStride = 8.
    out = asc.gather(dst_local, src_local, src_offset_local, 0, 128, 4, 8)
    passed &= bool(np.array_equal(np.asarray(out), want))
    mask = [0xFFFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF]
    out = asc.gather(dst_local, src_local, src_offset_local, 0, mask, 4, 8)
    passed &= bool(np.array_equal(np.asarray(out), want))
    count = 512
    out = asc.gather(dst_local, src_local, src_offset_local, 0, count)
    passed &= bool(np.array_equal(np.asarray(out), want))
    _show("进行Gather计算后，输出数据(dstLocal)", out)
    print("[Success] Gather completed." if passed else "[Failed] Gather output mismatch.")
    return passed


def main_ub() -> bool:
    """c-memory asc_gather.md (Atlas A2): src [1 ... 128], offsets [254 ... 0] -> [128 ... 1]."""
    config = asc.Config(product="A2")
    total_length = 128
    src = np.arange(1, total_length + 1, dtype=np.float16)
    src_offset = np.arange(254, -1, -2, dtype=np.uint32)
    dst = np.zeros(total_length, np.float16)
    dst = asc.asc_gather(dst, src, src_offset, total_length, config=config)
    _show("dst", dst)
    passed = bool(np.array_equal(np.asarray(dst), src[::-1]))   # by hand: [128 127 ... 1]
    print("[Success] asc_gather (UB) completed." if passed else
          "[Failed] asc_gather (UB) output mismatch.")
    return passed


def _gather_vf(form, dst_addr, src_addr, index_addr, count, one_repeat_size, repeat_time):
    """c-reg asc_gather.md gather_vf (both forms): per repeat, the mask of the remaining count,
    load the indices, gather, store the active lanes."""
    outs = []
    for i in range(repeat_time):
        mask, count = asc.update_mask(count, "half")
        index = index_addr[i * one_repeat_size:(i + 1) * one_repeat_size]
        if form == "ub":
            dst = asc.asc_gather(src_addr, index, mask)
        else:
            src = src_addr[i * one_repeat_size:(i + 1) * one_repeat_size]
            dst = asc.asc_gather(src, index)
        outs.append(np.where(np.asarray(mask)[::2], np.asarray(dst),
                             dst_addr[i * one_repeat_size:(i + 1) * one_repeat_size]))
    return np.concatenate(outs)


def main_register() -> bool:
    """c-reg asc_gather.md: 300 half, from the UB and from registers (indices past 128 wrap)."""
    rng = np.random.default_rng(0)
    count, one_repeat_size = 300, 128
    repeat_time = -(-count // one_repeat_size)
    src = rng.standard_normal(repeat_time * one_repeat_size).astype(np.float16)
    index = rng.integers(0, count, repeat_time * one_repeat_size).astype(np.uint16)
    dst = np.zeros(repeat_time * one_repeat_size, np.float16)
    passed = True
    for form in ("ub", "register"):
        out = _gather_vf(form, dst, src, index, count, one_repeat_size, repeat_time)
        want = dst.copy()
        for i in range(repeat_time):
            cut = slice(i * one_repeat_size, (i + 1) * one_repeat_size)
            got = (reference.asc_gather(src, index[cut], np.ones(128, bool)) if form == "ub"
                   else reference.asc_gather(src[cut], index[cut]))
            want[cut] = got
        want[count:] = 0                      # lanes past count are not stored
        _show(f"dst ({form})", out[:count])
        passed &= bool(np.array_equal(out.view(np.uint16), want.view(np.uint16)))
    print("[Success] asc_gather (registers) completed." if passed else
          "[Failed] asc_gather (registers) output mismatch.")
    return passed


def main_reg() -> bool:
    """离散搬入（Gather）.md GatherVF<float, uint32_t>: 200 elements, 64 a repeat."""
    rng = np.random.default_rng(1)
    count, one_repeat_size = 200, 64
    src_addr = rng.standard_normal(256).astype(np.float32)
    index_addr = rng.integers(0, 256, 256).astype(np.uint32)
    dst_addr = np.zeros(256, np.float32)
    want = dst_addr.copy()
    repeat_times = -(-count // one_repeat_size)
    remaining = count
    for i in range(repeat_times):
        mask, remaining = asc.update_mask(remaining, "float")
        cut = slice(i * one_repeat_size, (i + 1) * one_repeat_size)
        dst_reg = asc.reg_gather(src_addr, index_addr[cut], mask)
        active = np.asarray(mask)[::4]
        dst_addr[cut] = np.where(active, np.asarray(dst_reg), dst_addr[cut])
        want[cut] = np.where(active, reference.reg_gather(src_addr, index_addr[cut], active),
                             want[cut])
    _show("dstAddr", dst_addr[:count])
    passed = bool(np.array_equal(dst_addr.view(np.uint32), want.view(np.uint32)))
    print("[Success] Reg::Gather completed." if passed else
          "[Failed] Reg::Gather output mismatch.")
    return passed
