"""Ports of the register reduction pages' 调用示例 (c-reg asc_reduce_sum / max / min, their
DataBlock forms, asc_pair_reduce_sum; cpp-reg Reduce, ReduceDataBlock, PairReduceElem).

The pages show no output, except Reduce.md's index cast (a half max whose index 114 reads as
6.8e-06 until reinterpreted as uint16). So each port prints what it computed and checks it
against the plain-loop model in ``ascjax.reference``; the index cast and PairReduceElem (small
integers, exact sums) are also checked against values worked out by hand / in float64.
"""

import numpy as np

import ascjax as asc
from ascjax import reference

SRC_ADDR, DST_ADDR = 0, 2048     # __ubuf__ src / dst, 32-byte aligned


def _ub_with(src_gm: np.ndarray):
    """A UB holding ``src_gm`` at SRC_ADDR (the pages' "外部输入的UB内存空间地址")."""
    return asc.copy_gm2ub_align(asc.make_ub(), SRC_ADDR, src_gm, src_gm.nbytes)


def _same_bits(got, want) -> bool:
    got, want = np.asarray(got), np.asarray(want)
    unsigned = f"uint{got.dtype.itemsize * 8}"
    return got.dtype == want.dtype and np.array_equal(got.view(unsigned), want.view(unsigned))


# --- c-reg pages: the one snippet each ------------------------------------------------------

C_API = ("asc_reduce_sum", "asc_reduce_max", "asc_reduce_min", "asc_reduce_max_datablock",
         "asc_reduce_min_datablock", "asc_pair_reduce_sum")


def c_api_snippet(name: str, src_gm: np.ndarray) -> np.ndarray:
    """vector_half dst; vector_half src; ... asc_<name>(dst, src, mask);"""
    ub = _ub_with(src_gm)
    mask = asc.create_mask(asc.PAT_ALL, "b16")  # vector_bool mask = asc_create_mask_b16(PAT_ALL);
    src = asc.loadalign(ub, SRC_ADDR, "half")   # asc_loadalign(src, src_addr);
    return asc.instruction(name)(src, mask)     # asc_<name>(dst, src, mask);


# --- cpp-reg pages: the vector functions ------------------------------------------------------

def reduce_vf(kind: str, dtype: str, count: int, src_repeat: int, dst_repeat: int,
              repeat_times: int, ub):
    """Reduce.md's ReduceVF (归约求和 with src/dst repeat sizes; 归约求最大值或者最小值 with
    oneRepeatSize for both): per repeat LoadAlign, UpdateMask<U>(count), Reduce<kind>,
    StoreAlign(dstAddr + i * dstRepeatSize, dstReg, mask)."""
    size = asc.FORMATS[dtype].width      # element bytes: the pointers advance in elements
    for i in range(repeat_times):
        src_reg = asc.loadalign(ub, SRC_ADDR + i * src_repeat * size, dtype)
        mask, count = asc.update_mask(count, dtype)
        dst_reg = asc.reg_reduce(src_reg, mask, reduce_type=kind)
        ub = asc.storealign(ub, DST_ADDR + i * dst_repeat * size, dst_reg, mask)
    return ub


def reduce_data_block_vf(kind: str, dtype: str, count: int, one_repeat: int, repeat_times: int,
                         ub):
    """ReduceDataBlock.md's ReduceDataBlockVF (SUM; MAX and MIN are its commented lines)."""
    size = asc.FORMATS[dtype].width
    for i in range(repeat_times):
        src_reg = asc.loadalign(ub, SRC_ADDR + i * one_repeat * size, dtype)
        mask, count = asc.update_mask(count, dtype)
        dst_reg = asc.reg_reduce_data_block(src_reg, mask, reduce_type=kind)
        ub = asc.storealign(ub, DST_ADDR + i * one_repeat * size, dst_reg, mask)
    return ub


def pair_reduce_elem_vf(count: int, one_repeat: int, repeat_times: int, ub):
    """PairReduceElem.md's PairReduceElemVF, T = half: the upper half of each dst register is
    not stored (carryMask = CreateMask<T, MaskPattern::H>)."""
    carry_mask = asc.create_mask(asc.PAT_H, "half")
    dst_one_repeat = one_repeat >> 1
    for i in range(repeat_times):
        src_reg = asc.loadalign(ub, SRC_ADDR + i * one_repeat * 2, "half")
        cal_mask, count = asc.update_mask(count, "half")
        dst_reg = asc.reg_pair_reduce_elem(src_reg, cal_mask, reduce_type="sum")
        ub = asc.storealign(ub, DST_ADDR + i * dst_one_repeat * 2, dst_reg, carry_mask)
    return ub


def _repeats_match(ub, model, src, dtype, count, kind, lanes_written) -> bool:
    """Each repeat's stored lanes against the model of that repeat's register and mask (the
    repeat sizes are one register: ``lanes`` elements)."""
    lanes = asc.FORMATS[dtype].lanes
    ok = True
    for i in range(-(-count // lanes)):
        active = np.arange(lanes) < count - i * lanes
        want = model(src[i * lanes:(i + 1) * lanes], active, reduce_type=kind)
        out = np.asarray(asc.ub_view(ub, DST_ADDR + i * 256, dtype))[:lanes]
        n = min(lanes_written, int(active.sum()))
        ok &= _same_bits(out[:n], want[:n])
    return bool(ok)


def main() -> bool:
    rng = np.random.default_rng(12)
    passed = True

    # c-reg: a half register with a tie for the max (lanes 7 and 90) and one for the min.
    src = rng.integers(-50, 50, 128).astype(np.float16)
    src[[7, 90]], src[[20, 21]] = 99, -99
    for name in C_API:
        dst = np.asarray(c_api_snippet(name, src))
        model = getattr(reference, name.removeprefix("asc_") if "datablock" in name else name)
        ok = _same_bits(dst, model(src, np.ones(128, bool)))
        shown = dst[:8] if "datablock" in name or "pair" in name else dst[:2]
        print(f"{name}: dst[:{len(shown)}] = {shown.tolist()}"
              + (f" (index bits {dst[1:2].view(np.uint16).tolist()})" if "_m" in name
                 and "datablock" not in name else "") + (" ok" if ok else " MISMATCH"))
        passed &= ok

    # Reduce.md, 索引值需要强制类型转换: max 1.14 at index 114 gives [1.14, 6.8e-06]; the
    # half 6.8e-06 is 114 * 2^-24, the bits 114 (worked out by hand from the page).
    x = (rng.random(128) * 1.1).astype(np.float16)
    x[114] = 1.14
    ub = reduce_vf("max", "half", 128, 128, 128, 1, _ub_with(x))
    dst_addr = np.asarray(asc.ub_view(ub, DST_ADDR, "half"))
    max_index = dst_addr[1]                                  # half maxIndex = *(dstAddr + 1);
    real_index = int(np.asarray(max_index).view(np.uint16))  # reinterpret_cast<uint16_t*>
    ok = dst_addr[0] == np.float16(1.14) and f"{max_index:.1e}" == "6.8e-06" and real_index == 114
    print(f"Reduce<MAX> half: [{dst_addr[0]:.3g}, {max_index:.1e}] -> realIndex {real_index}"
          + (" ok" if ok else " MISMATCH"))
    passed &= bool(ok)

    # Reduce.md ReduceVF: SUM over float (T = U = float), then MAX and MIN over half.
    f32 = rng.standard_normal(160).astype(np.float32)
    ub = reduce_vf("sum", "float", 100, 64, 64, 2, _ub_with(f32))
    ok = _repeats_match(ub, reference.reg_reduce, f32, "float", 100, "sum", 1)
    sums = [round(float(np.asarray(asc.ub_view(ub, DST_ADDR + i * 256, "float"))[0]), 4)
            for i in (0, 1)]
    print(f"Reduce<SUM> float, count 100, 2 repeats: dst[0], dst[64] = {sums}"
          + (" ok" if ok else " MISMATCH"))
    passed &= ok
    for kind in ("max", "min"):
        ub = reduce_vf(kind, "half", 200, 128, 128, 2, _ub_with(src.repeat(2)))
        ok = _repeats_match(ub, reference.reg_reduce, src.repeat(2), "half", 200, kind, 2)
        print(f"Reduce<{kind.upper()}> half, count 200: first repeat "
              f"{np.asarray(asc.ub_view(ub, DST_ADDR, 'half'))[:2].tolist()}"
              + (" ok" if ok else " MISMATCH"))
        passed &= ok

    # ReduceDataBlock.md: SUM, MAX, MIN over float, count 100, 2 repeats of 64.
    for kind in ("sum", "max", "min"):
        ub = reduce_data_block_vf(kind, "float", 100, 64, 2, _ub_with(f32))
        ok = _repeats_match(ub, reference.reg_reduce_data_block, f32, "float", 100, kind, 8)
        print(f"ReduceDataBlock<{kind.upper()}> float: "
              f"{[round(float(v), 3) for v in np.asarray(asc.ub_view(ub, DST_ADDR, 'float'))[:8]]}"
              + (" ok" if ok else " MISMATCH"))
        passed &= ok

    # PairReduceElem.md: half, count 200, 2 repeats of 128 -> 128 contiguous pair sums; pairs
    # past the count have no active element and give 0. Small integers: float64 sums are exact.
    h = rng.integers(-8, 9, 256).astype(np.float16)
    ub = pair_reduce_elem_vf(200, 128, 2, _ub_with(h))
    out = np.asarray(asc.ub_view(ub, DST_ADDR, "half"))[:128]
    golden = np.where(np.arange(128) < 100, h[0::2].astype(np.float64) + h[1::2], 0)
    ok = _same_bits(out, golden.astype(np.float16))
    print(f"PairReduceElem<SUM> half: src {h[:6].tolist()} -> dst {out[:3].tolist()} ..."
          + (" ok" if ok else " MISMATCH"))
    passed &= ok

    print("[Success] register reduction samples reproduced." if passed
          else "[Failed] register reduction samples mismatch.")
    return bool(passed)
