"""Ports of the 调用示例 of Gatherb, asc_gather_datablock (UB and register forms), Reg::GatherB
and Scatter. Where a page shows its output, the port checks against it (derived by hand from
the page); where it shows none, the port prints the result and checks it against the reference
model."""

import numpy as np

import ascjax as asc
from ascjax import reference


def _show(label, values, count=16):
    values = np.asarray(values)
    tail = " ..." if values.size > count else ""
    print(f"{label}: [" + " ".join(str(v) for v in values[:count].tolist()) + tail + "]")


def _verdict(name, passed):
    print(f"[Success] {name} completed." if passed else f"[Failed] {name} output mismatch.")
    return bool(passed)


def main_gatherb() -> bool:
    """Gatherb page: 128 uint16_t, offsets [224 192 ... 0], GatherRepeatParams{1, 8}."""
    buffer_len = 128
    params = asc.GatherRepeatParams(1, 8)
    repeat_time = buffer_len * 2 // 256
    offset_local = np.array([224, 192, 160, 128, 96, 64, 32, 0], np.uint32)
    x_buf = np.arange(buffer_len, dtype=np.uint16)
    y_buf = np.zeros(buffer_len, np.uint16)
    # repeatTime重复迭代次数，每次迭代完成8个datablock的数据收集
    y_buf = np.asarray(asc.gatherb(y_buf, x_buf, offset_local, repeat_time, params))
    _show("输入数据(offsetLocal)", offset_local)
    _show("输入数据(srcLocal)", x_buf)
    for k in range(0, buffer_len, 16):
        _show("输出数据(dstGlobal)", y_buf[k:k + 16])
    # The page's output: block j of dst is src block 7 - j (112..127, 96..111, ..., 0..15).
    page = np.concatenate([np.arange(16 * (7 - j), 16 * (8 - j)) for j in range(8)])
    return _verdict("Gatherb", np.array_equal(y_buf, page.astype(np.uint16)))


def main_gather_datablock() -> bool:
    """c-memory page: asc_gather_datablock(dst, src, src_offset, 8, 1, 2) on 128 uint32_t."""
    config = asc.Config(product="A2")           # the UB form is on Atlas A2 / A3
    total_length = 128
    src_offset = np.arange(total_length * 4 // 32, dtype=np.uint32) * 32    # [0, 32, ..., 480]
    dst = np.zeros(total_length, np.uint32)
    src = np.arange(1, total_length + 1, dtype=np.uint32)                  # [1, 2, ..., 128]
    dst = np.asarray(asc.gather_datablock(dst, src, src_offset, 8, 1, 2, config=config))
    _show("src", src)
    _show("src_offset", src_offset)
    _show("dst", dst)
    return _verdict("asc_gather_datablock", np.array_equal(dst, src))      # the page: dst = src


def _gather_datablock_vf(ub, dst_addr, src_addr, index_addr, count, one_repeat_size,
                         one_block_size, repeat_time, masked):
    """``gather_datablock_vf`` (c-reg page), int8_t: the register of repeat i is loaded from
    ``index_addr`` + i * one_repeat_size uint32 elements and stored at ``dst_addr`` + i *
    one_block_size bytes (the page's post-incrementing load and store)."""
    src = asc.ub_view(ub, src_addr, "int8_t")
    for i in range(repeat_time):
        mask, count = asc.update_mask(count, "int8_t")
        index = asc.loadalign(ub, index_addr + i * one_repeat_size * 4, "uint32_t")
        if masked:
            dst = asc.gather_datablock(src, index, mask)
        else:
            dst = asc.gather_datablock(src, index)
        ub = asc.storealign(ub, dst_addr + i * one_block_size, dst, mask)
    return ub


def main_gather_datablock_register() -> bool:
    """c-reg page: both gather_datablock_vf programs, int8_t, 2 repeats of 256 bytes; each
    repeat gathers its own 8 DataBlocks in reverse order. No output on the page: checked
    against the reference model (and the reversal, by hand)."""
    count, repeat_time = 448, 2                 # the second repeat is partial (192 bytes)
    src_addr, index_addr, dst_addr = 0, 1024, 2048
    rng = np.random.default_rng(7)
    src = rng.integers(-128, 128, 512, dtype=np.int16).astype(np.int8)
    index = np.zeros((repeat_time, 64), np.uint32)
    for i in range(repeat_time):
        index[i, :8] = 256 * i + 32 * np.arange(7, -1, -1)
    passed = True
    for masked in (True, False):
        ub = asc.make_ub(4096)
        ub = ub.at[src_addr:src_addr + 512].set(src.view(np.uint8))
        ub = ub.at[index_addr:index_addr + index.nbytes].set(index.reshape(-1).view(np.uint8))
        ub = _gather_datablock_vf(ub, dst_addr, src_addr, index_addr, count, 64, 256,
                                  repeat_time, masked)
        got = np.asarray(ub[dst_addr:dst_addr + count]).view(np.int8)
        want = np.concatenate([reference.gather_datablock(src, index[i], *(
            [np.arange(256) < count - 256 * i] if masked else [])) for i in range(repeat_time)])
        by_hand = src.reshape(2, 8, 32)[:, ::-1].reshape(-1)
        _show(f"dst ({'mask' if masked else 'no mask'})", got)
        passed &= np.array_equal(got, want[:count]) and np.array_equal(got, by_hand[:count])
    return _verdict("asc_gather_datablock (registers)", passed)


def main_reg_gather_b() -> bool:
    """Reg::GatherB page: GatherBVF<float> over count elements, one register a repeat, the
    index of the page's table ([0, 32, ..., 6*32, 32*32]: DataBlocks 0..6 and 32). No output
    on the page: checked against the reference model and the table."""
    count, one_repeat_size = 100, 64
    src = np.arange(512, dtype=np.float32) * 0.5
    index = np.zeros(2 * one_repeat_size, np.uint32)
    index[:8] = [0, 32, 64, 96, 128, 160, 192, 32 * 32]
    index[one_repeat_size:one_repeat_size + 8] = 32 * np.arange(8, 16)
    dst = np.zeros(2 * one_repeat_size, np.float32)
    repeat_times = -(-count // one_repeat_size)
    remaining = count
    for i in range(repeat_times):
        mask, remaining = asc.update_mask(remaining, "float")
        index_reg = index[i * one_repeat_size:(i + 1) * one_repeat_size]
        dst_reg = asc.reg_gather_b(src, index_reg, mask)
        keep = np.asarray(mask)[::4]
        dst[i * one_repeat_size:(i + 1) * one_repeat_size] = np.where(
            keep, np.asarray(dst_reg), dst[i * one_repeat_size:(i + 1) * one_repeat_size])
        want = reference.reg_gather_b(src, index_reg, np.asarray(mask))
        if not np.array_equal(np.asarray(dst_reg).view(np.uint32), want.view(np.uint32)):
            return _verdict("Reg::GatherB", False)
    _show("dst", dst[:count])
    table = np.concatenate([src[8 * b:8 * b + 8] for b in (*range(7), 32, *range(8, 16))])
    return _verdict("Reg::GatherB", np.array_equal(dst[:count], table[:count]))


def main_scatter() -> bool:
    """Scatter page: 128 half, dstOffset [254 252 ... 0], dstBaseAddr 0."""
    count = 128
    dst_offset_local = np.arange(254, -1, -2, dtype=np.uint32)
    src_local = np.arange(count, dtype=np.float16)
    dst_local = np.zeros(count, np.float16)
    # dstOffsetLocal用于存储源操作数的每个元素在dst中对应的地址偏移
    dst_local = np.asarray(asc.scatter(dst_local, src_local, dst_offset_local, 0, count))
    _show("输入数据dstOffsetLocal", dst_offset_local)
    _show("输入数据srcLocal", src_local.astype(int))
    _show("输出数据dstGlobal", dst_local.astype(int))
    # The page's output: [127 126 125 ... 2 1 0].
    return _verdict("Scatter", np.array_equal(dst_local, np.arange(127, -1, -1,
                                                                   dtype=np.float16)))
