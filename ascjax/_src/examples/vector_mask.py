"""The mask-mode pages' samples (SetVectorMask, ResetMask, asc_set_mask_count,
asc_set_mask_norm; SetMaskCount / SetMaskNorm point to SetVectorMask's), line for line.

The setter lines are ported as written, the state passed on explicitly. The samples' compute
lines (Add / Sub / Mul / Adds / Muls / asc_add) are not emulated; each is replaced by an
emulated LocalTensor call with the same isSetMask=false, MASK_PLACEHOLDER, repeatTime and
strides (marked "stand-in"). The pages show no output, so each state is checked against the
reference setters and each result against the reference model (``ascjax.reference``).
"""

import numpy as np

import ascjax as asc
from ascjax import reference as ref

A2 = asc.Config(product="A2")  # the C API and ReduceSum's isSetMask: Atlas A2/A3


def _same(got, want) -> bool:
    got, want = np.asarray(got), np.asarray(want)
    return got.shape == want.shape and got.tobytes() == want.tobytes()


def _state(api, ref_api, state, ref_state, *args, **kw):
    """One setter line on both sides; returns (state, reference state, whether they agree)."""
    new, ref_new = api(*args, state=state, **kw), ref_api(*args, state=ref_state, **kw)
    return new, ref_new, (new.mode, new.high, new.low) == tuple(ref_new)


def main() -> bool:
    rng = np.random.default_rng(7)
    src0 = rng.integers(-8, 9, 512).astype(np.float16)
    dst = np.zeros(128, np.float16)
    passed = []

    # SetVectorMask page, Normal mode sample.
    st, rs, ok1 = _state(asc.set_mask_norm, ref.set_mask_norm, None, None)
    st, rs, ok2 = _state(asc.set_vector_mask, ref.set_vector_mask, st, rs, 0xffffffffffffffff,
                         0xffffffffffffffff, dtype="half", mode="normal")   # 逐bit模式
    # SetVectorMask<half, MaskMode::NORMAL>(128);  // 连续模式: the same registers
    same = asc.set_vector_mask(128, dtype="half", mode="normal", state=st) == st
    # stand-in for Add<half, false>(dst, src0, src1, MASK_PLACEHOLDER, 1, {2, 2, 2, 8, 8, 8})
    out = asc.block_reduce_sum(dst, src0, 1, asc.MASK_PLACEHOLDER, 1, 2, 8, is_set_mask=False,
                               mask_state=st)
    want = ref.block_reduce_sum(dst, src0, 1, asc.MASK_PLACEHOLDER, 1, 2, 8, is_set_mask=False,
                                mask_state=rs)
    st, rs, ok3 = _state(asc.reset_mask, ref.reset_mask, st, rs)
    ok = ok1 and ok2 and same and ok3 and _same(out, want) and st == asc.MaskState()
    print(f"Normal mode, bit mask all ones: BlockReduceSum<half, false> -> "
          f"{np.asarray(out)[:8].tolist()}; state after ResetMask {st}")
    passed.append(ok)

    # SetVectorMask page, Counter mode with a tensor high-dimension (repeat/stride) call.
    length = 128  # 参与计算的元素个数
    st, rs, ok1 = _state(asc.set_mask_count, ref.set_mask_count, None, None)
    st, rs, ok2 = _state(asc.set_vector_mask, ref.set_vector_mask, st, rs, length, dtype="half",
                         mode="counter")
    # stand-in for Add<half, false>(dst, src0, src1, MASK_PLACEHOLDER, 1, {1, 1, 1, 8, 8, 8})
    out = asc.whole_reduce_sum(dst, src0, asc.MASK_PLACEHOLDER, 1, 1, 1, 8, is_set_mask=False,
                               mask_state=st)
    want = ref.whole_reduce_sum(dst, src0, asc.MASK_PLACEHOLDER, 1, 1, 1, 8,
                                is_set_mask=False, mask_state=rs)
    st, rs, ok3 = _state(asc.set_mask_norm, ref.set_mask_norm, st, rs)
    st, rs, ok4 = _state(asc.reset_mask, ref.reset_mask, st, rs)
    ok = ok1 and ok2 and ok3 and ok4 and _same(out, want) and float(out[0]) == src0[:128].sum()
    print(f"Counter mode, len {length}: WholeReduceSum<half, false> -> {float(out[0])}")
    passed.append(ok)

    # SetVectorMask page, Counter mode with a tensor first-n call.
    st, rs, ok1 = _state(asc.set_mask_count, ref.set_mask_count, None, None, config=A2)
    st, rs, ok2 = _state(asc.set_vector_mask, ref.set_vector_mask, st, rs, 128, dtype="half",
                         mode="counter", config=A2)  # 参与计算的元素个数为128
    # stand-in for Adds<half, false>(dstLocal, src0Local, num, 1): calCount 1 has no effect
    out, _ = asc.reduce_sum(dst, src0, None, 1, is_set_mask=False, mask_state=st, config=A2)
    want, _ = ref.reduce_sum(dst, src0, None, 1, is_set_mask=False, mask_state=rs, config=A2)
    st, rs, ok3 = _state(asc.set_mask_norm, ref.set_mask_norm, st, rs, config=A2)
    st, rs, ok4 = _state(asc.reset_mask, ref.reset_mask, st, rs, config=A2)
    ok = ok1 and ok2 and ok3 and ok4 and _same(out, want) and float(out[0]) == src0[:128].sum()
    print(f"Counter mode, first-n call with calCount 1: ReduceSum<half, false> -> "
          f"{float(out[0])}")
    passed.append(ok)

    # ResetMask page.
    st, rs, ok1 = _state(asc.set_vector_mask, ref.set_vector_mask, None, None, 128, dtype="half")
    st, rs, ok2 = _state(asc.reset_mask, ref.reset_mask, st, rs)
    passed.append(ok1 and ok2 and st == asc.MaskState())
    print(f"ResetMask: {st}")

    # asc_set_mask_count page (C API, Atlas A2/A3).
    st, rs, ok1 = _state(asc.asc_set_mask_count, ref.asc_set_mask_count, None, None, config=A2)
    st, rs, ok2 = _state(asc.asc_set_vector_mask, ref.asc_set_vector_mask, st, rs, 0, 64,
                         config=A2)  # 设置前64个元素参与计算
    counted = asc.whole_reduce_sum(dst, src0, asc.MASK_PLACEHOLDER, 1, 1, 1, 8,
                                   is_set_mask=False, mask_state=st, config=A2)  # 计算操作
    want = ref.whole_reduce_sum(dst, src0, asc.MASK_PLACEHOLDER, 1, 1, 1, 8, is_set_mask=False,
                                mask_state=rs, config=A2)
    st, rs, ok3 = _state(asc.asc_set_mask_norm, ref.asc_set_mask_norm, st, rs, config=A2)
    passed.append(ok1 and ok2 and ok3 and _same(counted, want)
                  and float(counted[0]) == src0[:64].sum())
    print(f"asc_set_mask_count, 64 elements: {float(counted[0])}; then {st}")

    # asc_set_mask_norm page: every element of each repeat, repeat 1, strides 1 / 8.
    st, rs, ok1 = _state(asc.asc_set_mask_norm, ref.asc_set_mask_norm, None, None, config=A2)
    st, rs, ok2 = _state(asc.asc_set_vector_mask, ref.asc_set_vector_mask, st, rs,
                         0xffffffffffffffff, 0xffffffffffffffff, config=A2)
    total_length, repeat = 128, 1
    dst_repeat_stride, src0_block_stride, src0_repeat_stride = 8, 1, 8
    # stand-in for asc_add(dst, src0, src1, repeat, 1, 1, 1, 8, 8, 8): one register per repeat
    out = asc.pair_reduce_sum(dst, src0[:total_length], repeat, asc.MASK_PLACEHOLDER,
                              dst_repeat_stride, src0_block_stride, src0_repeat_stride,
                              is_set_mask=False, mask_state=st, config=A2)
    want = ref.pair_reduce_sum(dst, src0[:total_length], repeat, asc.MASK_PLACEHOLDER,
                               dst_repeat_stride, src0_block_stride, src0_repeat_stride,
                               is_set_mask=False, mask_state=rs, config=A2)
    passed.append(ok1 and ok2 and _same(out, want))
    print(f"asc_set_mask_norm, all lanes: PairReduceSum -> {np.asarray(out)[:8].tolist()} ...")

    ok = all(passed)
    print("[Success] mask-mode samples reproduced." if ok else "[Failed] mask-mode samples.")
    return ok
