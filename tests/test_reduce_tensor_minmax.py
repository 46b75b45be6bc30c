"""ReduceDataBlock, ReduceRepeat, ReducePairElem, BlockReduceMax/Min, the reduce SPRs and the C
API on UB: the pages' examples, hand-checked cases, errors and gradients."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from strategies import assert_bits_equal

import ascjax
from ascjax import Config, reference
from ascjax._src.examples import EXAMPLES

A2 = Config(product="A2")


def bits(x):
    x = np.asarray(x)
    return x.view(np.uint16 if x.itemsize == 2 else np.uint32)


def test_page_examples():
    assert EXAMPLES["reduce_tensor_minmax"]()


def test_getter_page_examples_after_reduce_sum_and_reduce_max(capsys):
    """The two getter pages' calls after ReduceSum / ReduceMax, ported into ``ascjax
    examples``: each checks its value against one computed without the emulator."""
    assert EXAMPLES["get_reduce_repeat_sum_spr"]()
    assert EXAMPLES["get_reduce_repeat_max_min_spr"]()
    out = capsys.readouterr().out
    assert "[Success] GetReduceRepeatSumSpr sample reproduced." in out
    assert "[Success] GetReduceRepeatMaxMinSpr sample reproduced." in out


def test_the_sprs_pass_from_call_to_call():
    """The registers are one state: ReduceRepeat<MAX>'s max survives a ReduceSum (which sets
    the sum only), and ReduceRepeat<SUM>'s sum survives a ReduceMax (which sets the max and
    its index): each getter reads the last call that set its register."""
    src = np.random.default_rng(41).standard_normal(512).astype(np.float32)
    _, spr = ascjax.reduce_repeat(np.zeros(16, np.float32), src, 64, 8, 1, 1, 8,
                                  reduce_type="max", config=A2)
    value, index = ascjax.get_reduce_repeat_max_min_spr(spr, config=A2)
    dst, spr = ascjax.reduce_sum(np.zeros(1, np.float32), src, np.zeros(64, np.float32), 512,
                                 spr=spr, config=A2)
    assert bits(ascjax.get_reduce_repeat_sum_spr(spr, config=A2)) == bits(np.asarray(dst)[0])
    after = ascjax.get_reduce_repeat_max_min_spr(spr, config=A2)
    assert bits(after[0]) == bits(value) == bits(src.max())
    assert bits(after[1]) == bits(index) == src.argmax()
    _, spr = ascjax.reduce_repeat(np.zeros(8, np.float32), src, 64, 8, 1, 1, 8,
                                  reduce_type="sum", spr=spr, config=A2)
    total = ascjax.get_reduce_repeat_sum_spr(spr, config=A2)
    low = -src
    dst, spr = ascjax.reduce_min(np.zeros(2, np.float32), low, np.zeros(32, np.float32), 64, 8,
                                 8, spr=spr, config=A2)
    assert bits(ascjax.get_reduce_repeat_sum_spr(spr, config=A2)) == bits(total)
    assert bits(ascjax.get_reduce_repeat_max_min_spr(spr, config=A2)[0]) == bits(
        np.asarray(dst)[0]) == bits(low.min())


def test_getters_read_half_and_float_sprs_alone():
    """The getters' pages give T half and float: the int32 sum of ReduceSum or of a 16-bit
    integer ReduceRepeat<SUM>, and an integer max, are refused by name (they were returned)."""
    _, spr = ascjax.reduce_sum(np.zeros(1, np.int32), np.ones(64, np.int32), None, 64)
    with pytest.raises(TypeError, match=r"get_reduce_repeat_sum_spr: T is half or float \(its "
                                        r"page\); spr.sum holds int32"):
        ascjax.get_reduce_repeat_sum_spr(spr)
    _, spr = ascjax.reduce_repeat(np.zeros(2, np.int32), np.ones(128, np.int16), 128, 1, 1, 1,
                                  8, reduce_type="sum")
    with pytest.raises(TypeError, match="spr.sum holds int32"):
        ascjax.get_reduce_repeat_sum_spr(spr)
    _, spr = ascjax.reduce_max(np.zeros(2, np.int16), np.arange(128, dtype=np.int16), None,
                               128, spr=None, config=Config())
    with pytest.raises(TypeError, match="get_reduce_repeat_max_min_spr: .*spr.value holds int16"):
        ascjax.get_reduce_repeat_max_min_spr(spr, config=A2)
    _, spr = ascjax.reduce_sum(np.zeros(1, np.float16), np.ones(128, np.float16), None, 128)
    assert float(ascjax.get_reduce_repeat_sum_spr(spr)) == 128


def test_c_api_pages_saturating_example_under_its_reading():
    """asc_repeat_reduce_sum / asc_datablock_reduce_sum's pages (A2/A3): [60000, 60000, -30000,
    100], a pair sum above 65504 stored as 65504, then 65504 - 29900 = 35604 (exact; in half
    each add rounds: -29900 -> -29904, 65504 - 29904 = 35600 -> 35584). That is the saturate
    reading; the default (A3) gives inf, as ReduceDataBlock's page says of half's default."""
    src = np.zeros(128, np.float16)
    src[:4] = [60000, 60000, -30000, 100]

    def saturated(a, b):
        return np.float16(np.clip(np.float32(a) + np.float32(b), -65504, 65504))

    want = saturated(saturated(src[0], src[1]), saturated(src[2], src[3]))
    assert float(want) == 35584
    for call, dst in ((ascjax.asc_repeat_reduce_sum, np.zeros(1, np.float16)),
                      (ascjax.datablock_reduce_sum, np.zeros(8, np.float16))):
        sat = np.asarray(call(dst, src, 128, config=Config(product="A2",
                                                           float_overflow="saturate")))
        assert bits(sat[:1]) == bits(want), call.__name__
        assert np.isposinf(np.asarray(call(dst, src, 128, config=A2))[0]), call.__name__


@pytest.mark.parametrize("call", [
    lambda d, s, c: ascjax.pair_reduce_sum(d, s, 0, 128, 1, 1, 8, config=c),
    lambda d, s, c: ascjax.block_reduce_sum(d, s, 0, 128, 1, 1, 8, config=c),
    lambda d, s, c: ascjax.whole_reduce_sum(d, s, 128, 0, 1, 1, 8, config=c),
    lambda d, s, c: ascjax.repeat_reduce_sum(d, s, 0, 128, 0, 1, 1, 8, config=c),
    lambda d, s, c: ascjax.block_reduce_max(d, s, 0, 128, 1, 1, 8, config=c),
    lambda d, s, c: ascjax.reduce_data_block(d, s, 128, 0, 1, 1, 8, reduce_type="sum",
                                             config=c),
    lambda d, s, c: ascjax.reduce_repeat(d, s, 128, 0, 1, 1, 8, reduce_type="max", config=c),
    lambda d, s, c: ascjax.reduce_pair_elem(d, s, 128, 0, 1, 1, 8, reduce_type="sum",
                                            config=c)],
    ids=["pair_reduce_sum", "block_reduce_sum", "whole_reduce_sum", "repeat_reduce_sum",
         "block_reduce_max", "reduce_data_block", "reduce_repeat", "reduce_pair_elem"])
def test_repeat_time_zero_is_a_nop_or_refused_as_reduce_empty_says(call):
    """A26 for the whole repeat family (its pages: a NOP on Atlas A2/A3, not guaranteed on the
    950): dst keeps its bits by default, on every product; Config(reduce_empty="raise")
    refuses it off A2/A3, as it does ReduceSum's, and keeps the documented NOP there."""
    dst, src = np.full(64, 3, np.float16), np.ones(256, np.float16)

    def dst_of(out):
        return np.asarray(out[0] if isinstance(out, tuple) else out)

    for product in ("950", "A2"):
        assert (dst_of(call(dst, src, Config(product=product))) == 3).all(), product
    with pytest.raises(ValueError, match=r"repeat_time=0 is a NOP only on \['A3', 'A2'\] "
                                         r"\(the page\); Config\(reduce_empty=\"raise\"\)"):
        call(dst, src, Config(reduce_empty="raise"))
    assert (dst_of(call(dst, src, Config(product="A2", reduce_empty="raise"))) == 3).all()


def test_empty_data_block_per_product():
    """The ReduceDataBlock page: mask 32 on float leaves blocks 4..7 empty; A2 / A3 keep dst,
    the 950 writes -inf for MAX, 200I/500 A2 -65504 for half MAX and 65504 for MIN."""
    src = np.arange(64, dtype=np.float32)
    dst = np.full(8, 9, np.float32)
    got = np.asarray(ascjax.reduce_data_block(dst, src, 32, 1, 1, 1, 8, reduce_type="max"))
    assert got.tolist() == [7, 15, 23, 31] + [-np.inf] * 4
    got = np.asarray(ascjax.reduce_data_block(dst, src, 32, 1, 1, 1, 8, reduce_type="min",
                                              config=Config(product="A3")))
    assert got.tolist() == [0, 8, 16, 24] + [9] * 4
    half = np.arange(128).astype(np.float16)
    dst16 = np.full(8, 9, np.float16)
    for kind, fill in (("max", -65504), ("min", 65504), ("sum", 0)):
        got = np.asarray(ascjax.reduce_data_block(dst16, half, 16, 1, 1, 1, 8, reduce_type=kind,
                                                  config=Config(product="200I/500 A2")))
        assert got[1:].tolist() == [fill] * 7
    # Forced readings.
    got = ascjax.block_reduce_max(dst, src, 1, 32, 1, 1, 8, config=Config(empty_block="keep"))
    assert np.asarray(got)[4:].tolist() == [9] * 4
    got = ascjax.block_reduce_min(dst, src, 1, 32, 1, 1, 8,
                                  config=Config(product="A2", empty_block="fill"))
    assert np.asarray(got)[4:].tolist() == [np.inf] * 4


def test_block_reduce_sum_keeps_empty_blocks_on_a2():
    src = np.ones(128, np.float16)
    dst = np.full(8, 9, np.float16)
    got = np.asarray(ascjax.block_reduce_sum(dst, src, 1, 20, 1, 1, 8, config=A2))
    assert got.tolist() == [16, 4, 9, 9, 9, 9, 9, 9]


def test_max_min_ties_signed_zero_and_nan():
    src = np.zeros(64, np.float32)
    src[3], src[5] = -0.0, 7.0
    src[9] = 7.0                        # a tie: the first index (5) wins
    dst = np.zeros(2, np.float32)
    out, spr = ascjax.reduce_repeat(dst, src, 64, 1, 1, 1, 8, reduce_type="max")
    assert bits(out)[1] == 5 and out[0] == 7
    # max(-0, +0) is +0 (lane 0), min is -0 (lane 3) (A22), unless signed_zero="equal".
    zeros = np.zeros(64, np.float32)
    zeros[3] = -0.0
    out, _ = ascjax.reduce_repeat(dst, zeros, 64, 1, 1, 1, 8, reduce_type="min")
    assert bits(out).tolist() == [0x80000000, 3]
    out, _ = ascjax.reduce_repeat(dst, zeros, 64, 1, 1, 1, 8, reduce_type="min",
                                  config=Config(signed_zero="equal"))
    assert bits(out).tolist() == [0, 0]
    # The first NaN wins (A21), written as the quiet NaN (A19) or with its payload
    # (extreme_nan="first"); "ignore" passes over it.
    nan = src.copy()
    nan.view(np.uint32)[7] = 0x7F800123
    out, spr = ascjax.reduce_repeat(dst, nan, 64, 1, 1, 1, 8, reduce_type="min")
    assert bits(out).tolist() == [0x7FC00000, 7] and int(spr.index) == 7
    assert int(np.asarray(spr.value).view(np.uint32)) == 0x7FC00000
    out, spr = ascjax.reduce_repeat(dst, nan, 64, 1, 1, 1, 8, reduce_type="min",
                                    config=Config(extreme_nan="first"))
    assert bits(out).tolist() == [0x7F800123, 7]
    assert int(np.asarray(spr.value).view(np.uint32)) == 0x7F800123
    out, _ = ascjax.reduce_repeat(dst, nan, 64, 1, 1, 1, 8, reduce_type="min",
                                  config=Config(max_min_nan="ignore"))
    assert bits(out)[1] == 3


def test_spr_over_repeats_and_passthrough():
    src = np.ones(256, np.float16)
    src[200] = 5
    src[250] = 5
    dst = np.zeros(4, np.float16)
    out, spr = ascjax.reduce_repeat(dst, src, 128, 2, 1, 1, 8, reduce_type="max", config=A2)
    value, index = ascjax.get_reduce_repeat_max_min_spr(spr, config=A2)
    assert float(value) == 5 and bits(index) == 200    # first over repeats: r*128 + 72
    # repeat 0 changes neither dst nor the registers.
    again, spr2 = ascjax.reduce_repeat(out, src, 128, 0, 1, 1, 8, reduce_type="sum", spr=spr,
                                       config=A2)
    assert np.array_equal(bits(again), bits(out))
    assert all(np.array_equal(a, b) for a, b in zip(spr2, spr, strict=True))
    # SUM sets only the sum register: ((s0 + s1)) in repeat order (A23).
    _, spr3 = ascjax.reduce_repeat(dst, src, 128, 2, 1, 1, 8, reduce_type="sum", spr=spr,
                                   config=A2)
    assert float(ascjax.get_reduce_repeat_sum_spr(spr3, config=A2)) == 128 + 126 + 10
    assert int(spr3.index) == 200
    # spr_index="offset": the src offset; with src_rep_stride 16 repeat 1 starts at 256.
    wide = np.ones(512, np.float16)
    wide[256 + 72] = 5
    _, spr4 = ascjax.reduce_repeat(dst, wide, 128, 2, 1, 1, 16, reduce_type="max",
                                   config=Config(product="A2", spr_index="offset"))
    assert int(spr4.index) == 256 + 72


def test_first_n_forms_keep_the_tail():
    src = np.arange(1, 101).astype(np.float32)  # 100 floats: repeat 1 has 36 active lanes
    dst = np.full(16, -1, np.float32)
    got = np.asarray(ascjax.datablock_reduce_max(dst, src, 100, config=A2))
    # blocks of repeat 1: 72, 80, 88, 96, then 100 (4 lanes), then three empty blocks kept
    assert got.tolist() == [8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 100, -1, -1, -1]
    got = ascjax.instruction("asc_datablock_reduce_max_sync")(dst, src, 100, config=A2)
    assert np.array_equal(np.asarray(got), np.asarray(ascjax.datablock_reduce_max(
        dst, src, 100, config=A2)))
    out, spr = ascjax.repeat_reduce_min(np.zeros(4, np.float32), src[::-1].copy(), 100,
                                        config=A2)
    assert bits(out).tolist()[1] == 63 and out[2] == 1 and bits(out)[3] == 35
    assert ascjax.get_reduce_min_cnt(spr, config=A2)[1] == 99


def test_gradients():
    src = jnp.asarray(np.random.default_rng(0).standard_normal(128).astype(np.float32))
    dst = jnp.zeros(16, jnp.float32)

    def total(s, kind):
        return jnp.sum(ascjax.reduce_data_block(dst, s, 64, 2, 1, 1, 8, reduce_type=kind))

    g = jax.grad(total)(src, "max")
    want = np.zeros(128)
    for b in range(16):
        want[8 * b + int(np.argmax(np.asarray(src)[8 * b:8 * b + 8]))] = 1
    assert np.array_equal(np.asarray(g), want)
    assert np.array_equal(np.asarray(jax.grad(total)(src, "sum")), np.ones(128))

    def repeat_value(s):  # only the value slots carry a gradient, not the index
        out, _ = ascjax.reduce_repeat(jnp.zeros(4, jnp.float32), s, 64, 2, 1, 1, 8,
                                      reduce_type="min")
        return jnp.sum(out)

    g = np.asarray(jax.grad(repeat_value)(src))
    assert g.sum() == 2 and g[int(np.argmin(src[:64]))] == 1
    assert g[64 + int(np.argmin(src[64:]))] == 1


def test_errors():
    src, dst = np.ones(128, np.float16), np.zeros(8, np.float16)
    with pytest.raises(ValueError, match=r"reduce_data_block: reduce_type='avg' is not one of"):
        ascjax.reduce_data_block(dst, src, 128, 1, 1, 1, 8, reduce_type="avg")
    with pytest.raises(ValueError, match=r"reduce_pair_elem: reduce_type='max' is not one of "
                                         r"\['sum'\]"):
        ascjax.reduce_pair_elem(dst, src, 128, 1, 1, 1, 8, reduce_type="max")
    with pytest.raises(ValueError, match=r"reduce_repeat: order='only_index' is not supported "
                                         r"on product 'training'"):
        ascjax.reduce_repeat(dst, src, 128, 1, 1, 1, 8, reduce_type="max", order="only_index",
                             config=Config(product="training"))
    with pytest.raises(ValueError, match=r"reduce_repeat: order='value' is not one of"):
        ascjax.reduce_repeat(dst, src, 128, 1, 1, 1, 8, reduce_type="max", order="value")
    with pytest.raises(ValueError, match=r"reduce_repeat: repeat_time=256 is outside"):
        ascjax.reduce_repeat(dst, src, 128, 256, 1, 1, 8, reduce_type="sum")
    with pytest.raises(TypeError, match=r"asc_datablock_reduce_sum: not available on product "
                                        r"'950'; available on \['A3', 'A2'\]"):
        ascjax.datablock_reduce_sum(dst, src, 128)
    with pytest.raises(TypeError, match=r"asc_repeat_reduce_max: expected \(dst, src, count\)"):
        ascjax.repeat_reduce_max(dst, src, 1, 1, config=A2)
    with pytest.raises(ValueError, match=r"asc_datablock_reduce_min: count=129 is outside"):
        ascjax.datablock_reduce_min(dst, src, 129, config=A2)
    with pytest.raises(TypeError, match=r"asc_pair_reduce_sum: mask_state must be an "
                                        r"ascjax.MaskState or None"):
        ascjax.pair_reduce_sum_ub(dst, src, 1, 1, 1, 8, mask_state=object(), config=A2)
    with pytest.raises(TypeError, match=r"get_reduce_repeat_max_min_spr: not available on "
                                        r"product '950'"):
        ascjax.get_reduce_repeat_max_min_spr(ascjax.reduce_spr_reset())
    with pytest.raises(TypeError, match=r"get_reduce_max_cnt: spr must be the ReduceSpr"):
        ascjax.get_reduce_max_cnt((1, 2, 3), config=A2)
    with pytest.raises(ValueError, match=r"reduce_data_block: dst has 4 elements"):
        ascjax.reduce_data_block(dst[:4], src, 128, 1, 1, 1, 8, reduce_type="min")


def test_pair_reduce_sum_ub_matches_reference():
    rng = np.random.default_rng(3)
    src = rng.standard_normal(600).astype(np.float32)
    dst = rng.standard_normal(200).astype(np.float32)
    for args in ((3, 1, 1, 8), (2, 0, 2, 9), (0, 1, 1, 8)):
        got = ascjax.pair_reduce_sum_ub(dst, src, *args, config=A2)
        want = reference.pair_reduce_sum_ub(dst, src, *args, config=A2)
        assert np.array_equal(bits(got), bits(want))


def test_mask_state_drives_the_c_api_and_is_set_mask():
    """The C API's high-dimensional form reads the hardware mask: Normal-mode words, or a
    Counter-mode count over the call (its repeat argument then has no effect)."""
    rng = np.random.default_rng(5)
    src = rng.standard_normal(256).astype(np.float32)
    dst = np.zeros(32, np.float32)
    normal = ascjax.asc_set_vector_mask(0, 0xFF00FF, config=A2)      # lanes 0-7, 16-23
    got = ascjax.datablock_reduce_max(dst, src, 2, 1, 1, 8, mask_state=normal, config=A2)
    want = ascjax.reduce_data_block(dst, src, [0xFF00FF], 2, 1, 1, 8, reduce_type="max",
                                    config=A2)
    assert np.array_equal(bits(got), bits(want))
    counter = ascjax.asc_set_vector_mask(0, 100, state=ascjax.asc_set_mask_count(config=A2),
                                         config=A2)
    got, spr = ascjax.repeat_reduce_max(dst, src, 7, 1, 1, 8, mask_state=counter, config=A2)
    want, spr_want = ascjax.repeat_reduce_max(dst, src, 100, config=A2)   # the first-n form
    assert np.array_equal(bits(got), bits(want))
    assert int(spr.index) == int(spr_want.index) == int(np.argmax(src[:100]))
    # isSetMask false: the class-library call takes its mask from the state.
    got = ascjax.reduce_data_block(dst, src, ascjax.MASK_PLACEHOLDER, 2, 1, 1, 8,
                                   reduce_type="min", is_set_mask=False, mask_state=normal,
                                   config=A2)
    want = ascjax.reduce_data_block(dst, src, [0xFF00FF], 2, 1, 1, 8, reduce_type="min",
                                    config=A2)
    assert np.array_equal(bits(got), bits(want))


# --- ReduceRepeat's 950 integer rows ----------------------------------------------------------

N950 = Config(product="950")


@pytest.mark.parametrize("impl", [ascjax, reference])
def test_reduce_repeat_int16_sum_widens_to_int32(impl):
    """Hand-computed: repeat 0 sums 128 x 30000 = 3840000 (far past int16: the elements are
    widened before any add); repeat 1 holds -32768, -32768, 5, then 125 x 30000: masked to its
    first 3 lanes it sums to -65531, in full to 3750000 - 65531 = 3684469. The sum SPR (int32)
    adds the repeat results; GetReduceRepeatSumSpr reads half and float alone (its page)."""
    src = np.full(256, 30000, np.int16)
    src[128:131] = [-32768, -32768, 5]
    dst = np.full(3, 7, np.int32)
    out, spr = impl.reduce_repeat(dst, src, 128, 2, 2, 1, 8, reduce_type="sum", config=N950)
    assert np.asarray(out).dtype == np.int32
    assert np.asarray(out).tolist() == [3840000, 7, 3684469]
    assert np.asarray(spr.sum).dtype == np.int32 and int(spr.sum) == 3840000 + 3684469
    out, spr = impl.reduce_repeat(dst, src, 3, 2, 1, 1, 8, reduce_type="sum", config=N950)
    assert np.asarray(out).tolist() == [90000, -65531, 7]
    assert int(spr.sum) == 90000 - 65531
    if impl is ascjax:
        with pytest.raises(TypeError, match="spr.sum holds int32"):
            impl.get_reduce_repeat_sum_spr(spr, config=N950)


@pytest.mark.parametrize("impl", [ascjax, reference])
def test_reduce_repeat_uint32_sum_wraps_or_saturates(impl):
    """0xFFFFFFFF + 0xFFFFFFFF: 0xFFFFFFFE wrapping, 0xFFFFFFFF saturating (int_overflow)."""
    src = np.full(64, 0xFFFFFFFF, np.uint32)
    dst = np.zeros(1, np.uint32)
    wrap, _ = impl.reduce_repeat(dst, src, 2, 1, 1, 1, 8, reduce_type="sum", config=N950)
    sat, _ = impl.reduce_repeat(dst, src, 2, 1, 1, 1, 8, reduce_type="sum",
                                config=N950.replace(int_overflow="saturate"))
    assert np.asarray(wrap).tolist() == [0xFFFFFFFE]
    assert np.asarray(sat).tolist() == [0xFFFFFFFF]


@pytest.mark.parametrize("impl", [ascjax, reference])
def test_reduce_repeat_int32_max_with_index(impl):
    """Hand-computed: repeat 0 is -100 .. -37 with 7 at lanes 5 and 40 (the first index, 5,
    wins); repeat 1 is INT32_MIN but lanes 0 and 63, -2147483647. MAX, value_index:
    [7, 5, -2147483647, 0]; the SPR: 7 at 5. MIN, only_index (one int32 slot per repeat):
    -100 at 0, INT32_MIN first at lane 1; its SPR: INT32_MIN at 64 + 1."""
    src = np.zeros(128, np.int32)
    src[:64] = np.arange(64) - 100
    src[[5, 40]] = 7
    src[64:] = -2**31
    src[[64, 127]] = -2**31 + 1
    dst = np.full(4, 9, np.int32)
    out, spr = impl.reduce_repeat(dst, src, 64, 2, 1, 1, 8, reduce_type="max", config=N950)
    assert np.asarray(out).tolist() == [7, 5, -2147483647, 0]
    assert (int(spr.value), int(spr.index)) == (7, 5)
    out, _ = impl.reduce_repeat(dst, src, 64, 2, 1, 1, 8, reduce_type="max",
                                order="index_value", config=N950)
    assert np.asarray(out).tolist() == [5, 7, 0, -2147483647]
    out, spr = impl.reduce_repeat(dst, src, 64, 2, 1, 1, 8, reduce_type="min",
                                  order="only_index", config=N950)
    assert np.asarray(out).tolist() == [0, 1, 9, 9]
    assert (int(spr.value), int(spr.index)) == (-2**31, 65)


@pytest.mark.parametrize("impl", [ascjax, reference])
def test_reduce_repeat_16_bit_ints_store_the_index_in_their_bits(impl):
    """uint16 max: 65535 at lane 100 of repeat 0; value_index stores the index as the
    element's bits; only_index as a uint32 over two elements (the page's 950 note)."""
    src = np.arange(128, dtype=np.uint16)
    src[100] = 65535
    out, _ = impl.reduce_repeat(np.zeros(2, np.uint16), src, 128, 1, 1, 1, 8,
                                reduce_type="max", config=N950)
    assert np.asarray(out).tolist() == [65535, 100]
    neg = src.view(np.int16)                     # 65535 is -1 as int16: the max is 127 at 127
    out, _ = impl.reduce_repeat(np.zeros(2, np.int16), neg, 128, 1, 1, 1, 8,
                                reduce_type="max", order="only_index", config=N950)
    assert np.asarray(out).view(np.uint32).tolist() == [127]


def test_reduce_repeat_int_errors():
    src16 = np.zeros(128, np.int16)
    with pytest.raises(TypeError, match=r"dst dtype int16_t with src dtype int16_t.*"
                                        r"int32_t <- int16_t"):
        ascjax.reduce_repeat(np.zeros(1, np.int16), src16, 128, 1, 1, 1, 8, reduce_type="sum",
                             config=N950)
    with pytest.raises(TypeError, match="dst dtype int32_t with src dtype uint16_t"):
        ascjax.reduce_repeat(np.zeros(1, np.int32), src16.view(np.uint16), 128, 1, 1, 1, 8,
                             reduce_type="sum", config=N950)
    with pytest.raises(TypeError, match="dst dtype int32_t differs from src dtype int16_t"):
        ascjax.reduce_repeat(np.zeros(2, np.int32), src16, 128, 1, 1, 1, 8, reduce_type="max",
                             config=N950)
    with pytest.raises(TypeError,
                       match=r"reduce_repeat: T int16_t is not supported on product 'A2'"):
        ascjax.reduce_repeat(np.zeros(2, np.int16), src16, 128, 1, 1, 1, 8, reduce_type="max",
                             config=A2)
    with pytest.raises(TypeError, match="dst dtype float with src dtype half is not a supported"):
        ascjax.reduce_repeat(np.zeros(2, np.float32), src16.view(np.float16), 128, 1, 1, 1, 8,
                             reduce_type="sum", config=N950)


def test_reduce_order_is_the_pages_eighth_argument_in_its_spelling():
    """A review: ReduceRepeat(dst, src, mask, repeatTime, dstRepStride, srcBlkStride,
    srcRepStride, ReduceOrder order) took order as a keyword only, and not as the page writes
    it; and instruction("WholeReduceMax") ran a min when given reduce_type="min"."""
    rng = np.random.default_rng(5)
    src = rng.standard_normal(512).astype(np.float16)
    dst = np.zeros(16, np.float16)
    want = ascjax.reduce_repeat(dst, src, 128, 4, 1, 1, 8, reduce_type="max",
                                order="index_value")
    for order in ("index_value", "ORDER_INDEX_VALUE", "ReduceOrder::ORDER_INDEX_VALUE",
                  "AscendC::ReduceOrder::ORDER_INDEX_VALUE"):
        got = ascjax.reduce_repeat(dst, src, 128, 4, 1, 1, 8, order, reduce_type="MAX")
        assert_bits_equal(got[0], want[0], order)
        ref = reference.reduce_repeat(dst, src, 128, 4, 1, 1, 8, "index_value",
                                      reduce_type="max")
        assert_bits_equal(got[0], ref[0], order)
    whole_max = ascjax.instruction("WholeReduceMax")
    assert_bits_equal(whole_max(dst, src, 128, 4, 1, 1, 8, "ORDER_INDEX_VALUE")[0], want[0], "")
    assert_bits_equal(whole_max(dst, src, 128, 4, 1, 1, 8, "index_value",
                                reduce_type="MAX")[0], want[0], "same value, other case")
    with pytest.raises(TypeError, match=r"WholeReduceMax fixes reduce_type='max'; got "
                                        r"reduce_type='min' \(call ascjax.reduce_repeat"):
        whole_max(dst, src, 128, 4, 1, 1, 8, reduce_type="min")
    with pytest.raises(ValueError, match=r"order='ORDER_SIDEWAYS' is not one of .* \(or the "
                                         r"page's ReduceOrder::ORDER_\.\.\. names\)"):
        ascjax.reduce_repeat(dst, src, 128, 4, 1, 1, 8, "ORDER_SIDEWAYS", reduce_type="max")


def test_a_huge_repeat_time_past_a_short_src_is_refused_without_exhausting_memory():
    """repeatTime may reach int32's maximum (ReduceMax/Min/Sum pages); with a 640-element src
    the length check built a (repeats, lanes) index array first: 2^31 - 1 repeats asked for
    1 TiB (MemoryError), and the message named the last repeat's element for the first
    repeat past the end. Repeat 10 reads elements 640..703."""
    for name in ("ReduceSum", "ReduceMax", "ReduceMin"):
        for repeats in (11, 100000, 2**31 - 1):
            with pytest.raises(ValueError, match="src has 640 elements but repeat 10 reads "
                                                 "element 703; the LocalTensor is too short"):
                ascjax.instruction(name)(np.zeros(2, np.float32), np.ones(640, np.float32),
                                         None, 64, repeats, 8)


@pytest.mark.parametrize("seed", range(40))
def test_the_length_check_finds_the_first_repeat_past_src_as_the_arrays_do(seed):
    """``RepeatPlan``'s check, worked out per kind of repeat, against every read spelled out:
    random strides (0 included), masks, Counter-mode counts and src lengths."""
    from ascjax._src.isa.repeat import RepeatPlan

    rng = np.random.default_rng(seed)
    fmt = ascjax.FORMATS[["half", "float"][seed % 2]]
    lanes = fmt.lanes
    repeats = int(rng.integers(1, 12))
    mask = rng.random(lanes) < rng.choice([0.0, 0.05, 0.5, 1.0])
    count = None if seed % 3 == 0 else int(rng.integers(0, repeats * lanes + 5))
    plan = RepeatPlan(fmt, repeats, int(rng.integers(0, 4)), int(rng.integers(0, 12)),
                      tuple(mask.tolist()), count=count)
    needed = np.where(plan.active, plan.reads, -1)
    top = max(int(needed.max()), 0)
    for src_len in {0, 1, top, top + 1, int(rng.integers(0, top + 2))}:
        past = needed >= src_len
        want = None
        if past.any():
            r = int(np.argmax(past.any(axis=1)))
            want = (r, int(needed[r].max()))
        assert plan._first_read_past(src_len) == want, (plan, src_len)
