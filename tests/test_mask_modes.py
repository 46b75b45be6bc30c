"""Mask modes (guide 如何使用掩码操作API; SetMaskCount / SetMaskNorm / SetVectorMask / ResetMask
and the C API asc_set_*): the state setters, is_set_mask=False and Counter mode through the
LocalTensor reduce family. Expected values are derived by hand from the guide's rules (comments
say how); the harness in test_registry.py compares against the reference models."""

from __future__ import annotations

import re

import jax
import numpy as np
import pytest

import ascjax
from ascjax import Config, MaskState, reference

W = 2**64 - 1
A2, P950 = Config(product="A2"), Config(product="950")


def bits(x):
    x = np.asarray(x)
    return x.view({2: np.uint16, 4: np.uint32}[x.itemsize])


# --- the setters ----------------------------------------------------------------------------

def test_power_on_state_and_mode_switches_keep_the_words():
    assert MaskState() == MaskState("normal", W, W)
    st = ascjax.set_mask_count()
    assert st == MaskState("counter", W, W)
    st = ascjax.set_vector_mask(300, dtype="half", mode="counter", state=st)
    assert st == MaskState("counter", 0, 300)
    assert ascjax.set_mask_norm(state=st) == MaskState("normal", 0, 300)
    assert ascjax.reset_mask(state=st) == MaskState("counter", W, W)   # ResetMask keeps the mode
    assert hash(st) == hash(MaskState("counter", 0, 300))


def test_set_vector_mask_continuous_mode_packs_the_first_len_lanes():
    # Normal mode (len): lane j <-> bit j of maskHigh:maskLow.
    assert ascjax.set_vector_mask(128, dtype="half") == MaskState("normal", W, W)
    assert ascjax.set_vector_mask(70, dtype="half") == MaskState("normal", 0b111111, W)
    assert ascjax.set_vector_mask(3, dtype="float") == MaskState("normal", 0, 0b111)
    assert ascjax.set_vector_mask(64, dtype="float") == MaskState("normal", 0, W)
    # The guide's two spellings of "every half lane" are the same registers.
    assert (ascjax.set_vector_mask(W, W, dtype="half")
            == ascjax.set_vector_mask(128, dtype="half"))


def test_guide_scenario_1_normal_mode_state_mask_equals_the_argument():
    """SetMaskNorm; SetVectorMask<half, NORMAL>(...); calls with isSetMask=false and
    MASK_PLACEHOLDER read the registers; ResetMask restores all ones."""
    rng = np.random.default_rng(0)
    src = rng.standard_normal(1024).astype(np.float16)
    dst = np.zeros(64, np.float16)
    st = ascjax.set_mask_norm()
    st = ascjax.set_vector_mask(0x0F0F, 0xFFFF0000FFFF0000, dtype="half", state=st)
    got = ascjax.block_reduce_sum(dst, src, 3, ascjax.MASK_PLACEHOLDER, 1, 2, 8,
                                  is_set_mask=False, mask_state=st)
    want = ascjax.block_reduce_sum(dst, src, 3, [0xFFFF0000FFFF0000, 0x0F0F], 1, 2, 8)
    np.testing.assert_array_equal(bits(got), bits(want))
    assert ascjax.reset_mask(state=st) == MaskState()


def test_guide_scenario_2_counter_mode_derives_the_repeats():
    """SetMaskCount; SetVectorMask<half, COUNTER>(len); repeatTime 1 'has no effect'."""
    src = np.ones(512, np.float16)
    dst = np.full(8, -1, np.float16)
    st = ascjax.set_vector_mask(300, dtype="half", mode="counter", state=ascjax.set_mask_count())
    got = ascjax.whole_reduce_sum(dst, src, ascjax.MASK_PLACEHOLDER, 1, 1, 1, 8,
                                  is_set_mask=False, mask_state=st)
    # 300 elements of 128 lanes: repeats of 128, 128 and 44 ones; dst[3:] untouched.
    np.testing.assert_array_equal(np.asarray(got), [128, 128, 44, -1, -1, -1, -1, -1])
    for repeat_time in (0, 255):                  # repeatTime is ignored in Counter mode
        again = ascjax.whole_reduce_sum(dst, src, 300, repeat_time, 1, 1, 8, mask_state=st)
        np.testing.assert_array_equal(bits(again), bits(got))
    st = ascjax.reset_mask(state=ascjax.set_mask_norm(state=st))
    assert st == MaskState()


def test_guide_scenario_3_first_n_with_is_set_mask_false():
    """SetVectorMask<half, COUNTER>(128) without SetMaskCount; the first-n call with
    isSetMask=false and count 1 sums the 128 elements the registers count (Atlas A2/A3, where
    ReduceSum's isSetMask has an effect); on the 950 the flag has no effect (page)."""
    src = np.arange(300).astype(np.float32)
    st = ascjax.set_vector_mask(128, dtype="float", mode="counter")
    assert st.mode == "normal" and st.low == 128
    dst = np.zeros(1, np.float32)
    got, _ = ascjax.reduce_sum(dst, src, None, 1, is_set_mask=False, mask_state=st, config=A2)
    assert float(got[0]) == sum(range(128))      # 8128, exact in float
    got, _ = ascjax.reduce_sum(dst, src, None, 1, is_set_mask=False, mask_state=st, config=P950)
    assert float(got[0]) == 0.0                  # count 1: src[0] = 0


def test_counter_mode_counts_in_processing_order_through_strides():
    """Element n of the call is lane n % 64 of repeat n // 64 (float), read through the
    strides; not the src element at offset n."""
    src = np.ones(400, np.float32)
    dst = np.full(24, -1, np.float32)
    st = ascjax.set_mask_count()
    got = np.asarray(ascjax.block_reduce_sum(dst, src, 1, 150, 1, 2, 16, mask_state=st))
    # 150 = 64 + 64 + 22: repeats 0, 1 full (8 blocks of 8 ones); repeat 2 has lanes 0..21:
    # blocks 0, 1 full, block 2 six lanes, blocks 3..7 empty (+0, empty_block="zero").
    np.testing.assert_array_equal(got, [8] * 16 + [8, 8, 6, 0, 0, 0, 0, 0])
    keep = ascjax.block_reduce_sum(dst, src, 1, 150, 1, 2, 16, mask_state=st,
                                   config=Config(empty_block="keep"))
    np.testing.assert_array_equal(np.asarray(keep)[19:], [-1] * 5)
    # The last element read: repeat 2, lane 21 at (2*16 + 2*2)*8 + 5 = 293.
    with pytest.raises(ValueError, match="src has 293 elements but repeat 2 reads element 293"):
        ascjax.block_reduce_sum(dst, src[:293], 1, 150, 1, 2, 16, mask_state=st)
    ascjax.block_reduce_sum(dst, src[:294], 1, 150, 1, 2, 16, mask_state=st)


def test_counter_mode_partial_pairs_follow_the_product():
    """PairReduceSum, count 65 floats: repeat 1 has lane 0 alone, so its pair 0 is x + 0 and
    its pairs 1..31 are both masked: kept, or 0 on Atlas 200I/500 A2 (page)."""
    src = np.arange(1, 129).astype(np.float32)
    dst = np.full(64, -1, np.float32)
    st = ascjax.set_mask_count()
    got = np.asarray(ascjax.pair_reduce_sum(dst, src, 1, 65, 1, 1, 8, mask_state=st))
    want = [src[2 * k] + src[2 * k + 1] for k in range(32)] + [65] + [-1] * 31
    np.testing.assert_array_equal(got, want)
    zero = np.asarray(ascjax.pair_reduce_sum(dst, src, 1, 65, 1, 1, 8, mask_state=st,
                                             config=Config(product="200I/500 A2")))
    np.testing.assert_array_equal(zero[33:], [0] * 31)


def test_counter_mode_dst_stride_zero_last_writer_per_output():
    """dst stride 0: every repeat writes the same outputs; the last repeat that writes an
    output wins. Count 130 halves: repeat 1 writes pair 0 only (lanes 0, 1)."""
    src = np.arange(256).astype(np.float16) % 8
    dst = np.full(64, -1, np.float16)
    got = np.asarray(ascjax.pair_reduce_sum(dst, src, 1, 130, 0, 1, 8,
                                            mask_state=ascjax.set_mask_count()))
    want = [(src[2 * k] + src[2 * k + 1]) for k in range(64)]   # repeat 0
    want[0] = src[128] + src[129]                               # repeat 1 wins output 0
    np.testing.assert_array_equal(got, np.float16(want))


def test_a2_a3_mask_zero_is_a_nop_and_an_error_elsewhere():
    src = np.ones(256, np.float16)
    dst = np.full(16, 7, np.float16)
    for mask in (0, [0, 0]):
        out = ascjax.block_reduce_sum(dst, src, 2, mask, 1, 1, 8, config=A2)
        np.testing.assert_array_equal(np.asarray(out), dst)
        with pytest.raises(ValueError, match="block_reduce_sum: .*mask"):
            ascjax.block_reduce_sum(dst, src, 2, mask, 1, 1, 8, config=P950)
    counter = ascjax.set_mask_count()
    out = ascjax.whole_reduce_sum(dst, src, 0, 1, 1, 1, 8, mask_state=counter,
                                  config=Config(product="A3"))
    np.testing.assert_array_equal(np.asarray(out), dst)
    with pytest.raises(ValueError, match=r"whole_reduce_sum: mask \(Counter mode"):
        ascjax.whole_reduce_sum(dst, src, 0, 1, 1, 1, 8, mask_state=counter)
    empty = MaskState("normal", W, 0)              # no lane of a 32-bit type
    f = np.ones(128, np.float32)
    out = ascjax.whole_reduce_sum(dst.astype(np.float32), f, None, 1, 1, 1, 8,
                                  is_set_mask=False, mask_state=empty, config=A2)
    np.testing.assert_array_equal(np.asarray(out), np.float32(dst))
    with pytest.raises(ValueError, match="mask_state words enable no lane of float"):
        ascjax.whole_reduce_sum(dst.astype(np.float32), f, None, 1, 1, 1, 8,
                                is_set_mask=False, mask_state=empty)
    # ReduceSum's first-n form: count 0 is a NOP on A2/A3 (page).
    np.testing.assert_array_equal(np.asarray(ascjax.reduce_sum(dst, src, None, 0,
                                                               config=A2)[0]), dst)


def test_a38_zero_vector_mask_on_a2():
    st = ascjax.set_vector_mask(5, dtype="half")
    assert ascjax.set_vector_mask(0, dtype="half", state=st, config=A2) == MaskState(
        "normal", 0, 0)
    ignored = Config(product="A2", zero_vector_mask="ignored")
    assert ascjax.set_vector_mask(0, 0, dtype="half", state=st, config=ignored) == st
    assert ascjax.asc_set_vector_mask(0, 0, state=ascjax.asc_set_mask_count(config=A2),
                                      config=ignored) == MaskState("counter", W, W)
    # Elsewhere the page's range applies: 16-bit bit mode must not be all 0.
    with pytest.raises(ValueError, match="must not both be 0"):
        ascjax.set_vector_mask(0, 0, dtype="half")
    assert ascjax.set_vector_mask(0, dtype="half").low == 0   # len range [0, 128]


def test_is_set_mask_false_ignores_the_mask_argument():
    rng = np.random.default_rng(1)
    src = rng.standard_normal(512).astype(np.float32)
    dst = np.zeros(8, np.float32)
    st = ascjax.set_vector_mask(37, dtype="float")
    want = ascjax.whole_reduce_sum(dst, src, 37, 4, 1, 1, 8)
    for placeholder in (ascjax.MASK_PLACEHOLDER, None, 64, [0, 0], np.uint64(3)):
        got = ascjax.whole_reduce_sum(dst, src, placeholder, 4, 1, 1, 8, is_set_mask=False,
                                      mask_state=st)
        np.testing.assert_array_equal(bits(got), bits(want))
        ref = reference.whole_reduce_sum(dst, src, placeholder, 4, 1, 1, 8, is_set_mask=False,
                                         mask_state=st)
        np.testing.assert_array_equal(bits(ref), bits(want))
    # RepeatReduceSum takes a continuous mask only, but the state's words may hold any bits.
    odd = ascjax.set_vector_mask(0, 0xAAAA, dtype="float")
    got = ascjax.repeat_reduce_sum(dst, src, 2, None, 0, 1, 1, 8, is_set_mask=False,
                                   mask_state=odd)
    want = ascjax.whole_reduce_sum(dst, src, [0xAAAA], 2, 1, 1, 8)
    np.testing.assert_array_equal(bits(got), bits(want))


def test_state_is_static_under_jit_and_vmap():
    st = ascjax.set_vector_mask(200, dtype="half", mode="counter", state=ascjax.set_mask_count())
    src = np.random.default_rng(2).standard_normal((3, 256)).astype(np.float16)
    dst = np.zeros((3, 4), np.float16)

    def f(d, s):
        return ascjax.whole_reduce_sum(d, s, ascjax.MASK_PLACEHOLDER, 1, 1, 1, 8,
                                       is_set_mask=False, mask_state=st)

    eager = f(dst, src)
    np.testing.assert_array_equal(bits(jax.jit(f)(dst, src)), bits(eager))
    np.testing.assert_array_equal(bits(jax.vmap(f)(dst, src)), bits(eager))


def test_counter_mode_gradient_reaches_the_counted_elements_only():
    src = np.ones(300, np.float32)
    dst = np.zeros(8, np.float32)
    st = ascjax.set_mask_count()

    def loss(s):
        return ascjax.whole_reduce_sum(dst, s, 100, 1, 1, 2, 16, mask_state=st).sum()

    g = np.asarray(jax.grad(loss)(src))
    # Elements 0..63 (repeat 0) at offsets (e//8)*16 + e%8; 64..99 (repeat 1) at 128 + ...
    want = np.zeros(300, np.float32)
    for n in range(100):
        r, e = divmod(n, 64)
        want[(r * 16 + e // 8 * 2) * 8 + e % 8] = 1
    np.testing.assert_array_equal(g, want)


def test_repeat_plan_count_is_processing_order():
    from ascjax._src.isa.repeat import RepeatPlan
    plan = RepeatPlan(ascjax.FORMATS["float"], 3, 2, 16, (True,) * 64, count=150)
    n = np.arange(192).reshape(3, 64)
    np.testing.assert_array_equal(plan.active, n < 150)
    assert plan.reads[2, 21] == 293 and plan.active[2, 21] and not plan.active[2, 22]


# --- errors ---------------------------------------------------------------------------------

@pytest.mark.parametrize("call, error, match", [
    (lambda: ascjax.set_vector_mask(129, dtype="half"), ValueError,
     r"set_vector_mask: len \(Normal mode, half\)=129 is outside the valid range \[0, 128\]"),
    (lambda: ascjax.set_vector_mask(65, dtype="float"), ValueError, r"\[0, 64\]"),
    (lambda: ascjax.set_vector_mask(1, 5, dtype="float"), ValueError,
     r"mask_high \(Normal mode, float\)=1 is outside the valid range \[0, 0\]"),
    (lambda: ascjax.set_vector_mask(1, 5, dtype="half", mode="counter"), ValueError,
     r"mask_high \(Counter mode, half\)=1"),
    (lambda: ascjax.set_vector_mask(-1, dtype="half", mode="counter"), ValueError,
     r"len \(Counter mode\)=-1 is outside the valid range \[0, 2147483647\]"),
    (lambda: ascjax.set_vector_mask(2**64, 0, dtype="half"), ValueError, "mask_high"),
    (lambda: ascjax.set_vector_mask(8, dtype="int8_t"), TypeError, "int8_t is 8-bit"),
    (lambda: ascjax.set_vector_mask(8, dtype="half", mode="count"), ValueError,
     r"mode='count' is not one of \['normal', 'counter'\] \(or the page's MaskMode::"),
    (lambda: ascjax.set_vector_mask(1, 2, 3, dtype="half"), TypeError, "3 positional"),
    (lambda: ascjax.set_vector_mask(1.0, dtype="half"), TypeError, "must be a Python int"),
    (lambda: ascjax.set_mask_count(config=Config(product="training")), TypeError,
     "set_mask_count: not available on product 'training'"),
    (lambda: ascjax.reset_mask(config=Config(product="training")), TypeError, "reset_mask"),
    (lambda: ascjax.asc_set_mask_norm(), TypeError,
     r"asc_set_mask_norm: not available on product '950'; available on \['A3', 'A2'\]"),
    (lambda: ascjax.asc_set_vector_mask(0, 0, config=A2), ValueError, "must not both be 0"),
    (lambda: ascjax.asc_set_vector_mask(
        1, 9, state=MaskState("counter"), config=A2), ValueError, r"mask1 \(Counter mode\)"),
    (lambda: ascjax.set_mask_norm(state="normal"), TypeError,
     "set_mask_norm: state must be an ascjax.MaskState"),
    (lambda: MaskState("count"), ValueError, "mode='count'"),
    (lambda: MaskState("normal", -1), ValueError, "high=-1"),
])
def test_setter_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


_SRC, _DST = np.ones(2048, np.float16), np.zeros(64, np.float16)


@pytest.mark.parametrize("call, error, match", [
    (lambda: ascjax.pair_reduce_sum(_DST, _SRC, 1, 128, 1, 1, 8, is_set_mask=2), TypeError,
     "pair_reduce_sum: is_set_mask must be a bool .*got 2"),
    (lambda: ascjax.pair_reduce_sum(_DST, _SRC, 1, "x", 1, 1, 8, is_set_mask=False), TypeError,
     "placeholder"),
    (lambda: ascjax.pair_reduce_sum(_DST, _SRC, 1, 128, 1, 1, 8, mask_state=(0, 1, 1)),
     TypeError, "mask_state must be an ascjax.MaskState"),
    (lambda: ascjax.block_reduce_sum(_DST, _SRC, 1, [W, W], 1, 1, 8,
                                     mask_state=MaskState("counter")), TypeError,
     "Counter mode the mask argument is an element count"),
    (lambda: ascjax.block_reduce_sum(_DST, _SRC, 1, 9, 1, 1, 8, mask_state=MaskState("counter"),
                                     config=Config(product="training")), ValueError,
     "Counter mask mode is not available on product 'training'"),
    (lambda: ascjax.whole_reduce_sum(_DST, _SRC, 2**17 + 1, 1, 1, 1, 8,
                                     mask_state=MaskState("counter")), ValueError,
     r"mask=131073 \(Counter mode.* more than the 131072 half elements"),
    (lambda: ascjax.whole_reduce_sum(_DST, _SRC, None, 1, 1, 1, 8, is_set_mask=False,
                                     mask_state=MaskState("counter")), ValueError,
     r"mask_state.low=18446744073709551615"),
    (lambda: ascjax.whole_reduce_sum(_DST, _SRC, 2**31, 1, 1, 1, 8,
                                     mask_state=MaskState("counter")), ValueError,
     r"\[1, 2147483647\]"),
    (lambda: ascjax.whole_reduce_sum(_DST, _SRC, 128, 256, 1, 1, 8,
                                     mask_state=MaskState("counter")), ValueError,
     "repeat_time=256"),
    (lambda: ascjax.reduce_sum(_DST, _SRC, None, 128, 1, 8, is_set_mask=False), TypeError,
     "level-0 .* has no isSetMask"),
    (lambda: ascjax.reduce_sum(_DST, _SRC, None, 128, 1, 8, mask_state=MaskState("counter")),
     ValueError, "runs in Normal mask mode"),
    (lambda: ascjax.reduce_sum(_DST, _SRC, None, 1, is_set_mask=False,
                               mask_state=MaskState("counter", 0, 4096), config=A2),
     ValueError, r"count \(mask_state.low, is_set_mask=False\)=4096"),
])
def test_instruction_mask_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_the_example_port_passes():
    from ascjax._src.examples import EXAMPLES
    assert EXAMPLES["vector_mask"]()


def test_is_set_mask_false_without_a_mask_state_says_what_to_pass():
    """isSetMask=false on Atlas A2 with no mask_state blamed a count of 2^64 - 1 (the reset
    state's mask, a new user's finding); the message now names the state to pass, and that
    state, built as it says, sums the 300 elements it counts."""
    a2 = ascjax.Config(product="A2")
    dst, src = np.zeros(2, np.float16), np.ones(512, np.float16)
    with pytest.raises(ValueError, match=re.escape(
            "reduce_sum: is_set_mask=False takes the count from the mask SetVectorMask wrote in "
            "Counter mode, but no mask_state was given: pass mask_state=ascjax.set_vector_mask("
            "count, dtype=T, mode=\"counter\", state=ascjax.set_mask_count(config=config), "
            "config=config)")):
        ascjax.reduce_sum(dst, src, None, 1, is_set_mask=False, config=a2)
    state = ascjax.set_vector_mask(300, dtype=np.float16, mode="counter",
                                   state=ascjax.set_mask_count(config=a2), config=a2)
    total, _ = ascjax.reduce_sum(dst, src, None, 1, is_set_mask=False, mask_state=state,
                                 config=a2)
    assert float(total[0]) == 300


def test_template_enums_take_the_pages_spellings():
    """Every template enum keyword takes ours or the page's spelling, any case, with or
    without namespaces: MaskMode and MaskMergeMode were refused in the page's
    ``SetVectorMask<half, AscendC::MaskMode::COUNTER>`` / ``MaskMergeMode::ZEROING`` while
    ReduceType and ReduceOrder took theirs."""
    for mode in ("counter", "COUNTER", "MaskMode::COUNTER", "AscendC::MaskMode::COUNTER"):
        assert ascjax.set_vector_mask(8, dtype="half", mode=mode) == ascjax.set_vector_mask(
            8, dtype="half", mode="counter")
    x = np.arange(128, dtype=np.float16)
    mask = ascjax.create_mask("PAT_ALL", "b16")
    want = np.asarray(ascjax.reg_reduce(x, mask)).view(np.uint16)
    for mode in ("ZEROING", "MaskMergeMode::ZEROING", "AscendC::Reg::MaskMergeMode::ZEROING"):
        got = np.asarray(ascjax.instruction("Reg::Reduce")(x, mask, mode=mode)).view(np.uint16)
        assert np.array_equal(got, want), mode
    with pytest.raises(ValueError, match="MERGING.*not supported"):
        ascjax.reg_reduce(x, mask, mode="MaskMergeMode::MERGING")
    with pytest.raises(ValueError, match=r"mode=3 is not one of \['zeroing'\]"):
        ascjax.reg_reduce(x, mask, mode=3)
    src = np.arange(64, dtype=np.float32)
    for order in ("value_index", "ORDER_VALUE_INDEX", "AscendC::ReduceOrder::ORDER_VALUE_INDEX"):
        _, spr = ascjax.reduce_repeat(np.zeros(2, np.float32), src, 64, 1, 1, 1, 8,
                                      reduce_type="AscendC::ReduceType::MAX", order=order)
        assert float(spr.value) == 63.0 and int(spr.index) == 63, order
