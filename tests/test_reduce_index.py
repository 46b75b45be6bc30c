"""ReduceMax / ReduceMin (AscendC::ReduceMax, ReduceMin with calIndex): hand-checked cases from
the pages, the index's storage, ties, NaN and signed zeros, the checks, gradients, and the
argument handling ReduceSum shares."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import ascjax
from ascjax import Config, reference
from ascjax._src.examples import EXAMPLES
from ascjax._src.isa.reduce_tensor_index import shared_tmp_size

H, F = np.float16, np.float32
A2 = Config(product="A2")


def bits(x):
    x = np.asarray(x)
    return x.view({2: np.uint16, 4: np.uint32}[x.itemsize])


def run(name, *args, **kw):
    """The emulator and the reference model, which must agree bit for bit: dst and the SPRs
    the call returns with it. Returns dst."""
    got, spr = getattr(ascjax, name)(*args, **kw)
    want, want_spr = getattr(reference, name)(*args, **kw)
    got = np.asarray(got)
    assert got.tobytes() == want.tobytes(), (got, want)
    for g, w in zip(spr, want_spr, strict=True):
        g, w = np.asarray(g), np.asarray(w)
        assert (g.dtype, g.tobytes()) == (w.dtype, w.tobytes()), (spr, want_spr)
    return got


@pytest.mark.parametrize("name", ["reduce_max", "reduce_min"])
def test_page_samples(name):
    assert EXAMPLES[name]()


def test_tmp_sizes_as_the_pages_compute_them():
    # The pages' six hand computations (ReduceMax.md, 关键特性说明 examples one to six).
    half, single = ascjax.FORMATS["half"], ascjax.FORMATS["float"]
    assert shared_tmp_size(half, 65, True) == 176
    assert shared_tmp_size(half, 255, True) == 544
    assert shared_tmp_size(half, 511, True) == 1056
    assert shared_tmp_size(half, 4, True) == 32
    assert shared_tmp_size(half, 511, False) == 1024
    assert shared_tmp_size(single, 130, True) == 288
    # public, by type name (a review: the docstrings cited private helpers taking a Format)
    assert ascjax.shared_tmp_size("half", 65, True) == 176
    assert ascjax.shared_tmp_size(np.float32, 130, True) == 288
    assert ascjax.reduce_sum_tmp_size("float", 4) == 8  # DivCeil(4, 8) * 8
    assert ascjax.reduce_sum_tmp_size("half", 17) == 32  # DivCeil(17, 16) * 16
    with pytest.raises(ValueError, match="shared_tmp_size: first_repeats=-1 is outside"):
        ascjax.shared_tmp_size("half", -1, True)


@pytest.mark.parametrize("how", ["positional", "keyword"])
def test_value_and_index_both_forms(how):
    x = np.zeros(300, H)
    x[[7, 200, 201]] = [3, 9, 9]          # a tie: the smaller index wins (the page)
    x[250] = -5
    dst = np.full(4, 7, H)
    kw = {"cal_index": True} if how == "keyword" else {}
    pos = (True,) if how == "positional" else ()
    out = run("reduce_max", dst, x, x, 300, *pos, **kw)
    assert out[0] == 9 and bits(out)[1] == 200 and out[2] == out[3] == 7
    out = run("reduce_min", dst, x, x, 128, 2, 8, *pos, config=A2, **kw)
    assert out[0] == -5 and bits(out)[1] == 250
    # Without the index only dst[0] changes: dst[1] keeps its bits.
    out = run("reduce_max", dst, x, x, 300)
    assert out[0] == 9 and out[1] == 7
    out = run("reduce_max", dst, x, x, 300, False)
    assert out[0] == 9 and out[1] == 7


def test_index_is_stored_as_bits_not_as_a_value():
    """The pages: the index is T's bits, read back with reinterpret_cast; 2049 is not rounded
    (as a half value it would be 2048) and 40000 is not 65504-saturated or negative-checked."""
    for at in (114, 2049, 31745, 40000, 65535):   # 31745 = 0x7C01, a NaN pattern
        x = np.zeros(65536, H)
        x[at] = 1
        out, _ = jax.jit(lambda d, s: ascjax.reduce_max(d, s, None, 65536, True))(
            np.zeros(2, H), x)
        assert bits(out)[1] == at
    x = np.zeros(64, F)
    x[37] = 1
    out, _ = jax.jit(lambda d, s: ascjax.reduce_max(d, s, s, 64, 1, 8, True))(np.zeros(2, F), x)
    assert bits(out)[1] == 37                     # a float32 subnormal pattern, not flushed


def test_level0_index_is_the_src_offset():
    """A25: element e of repeat r reports r*srcRepStride*epb + e (vendor implementations); the
    other reading reports r*lanes + e."""
    x = np.zeros(600, H)
    x[16 * 16 + 5] = 4                            # repeat 1, lane 5 with srcRepStride 16
    out = run("reduce_max", np.zeros(2, H), x, x, 128, 2, 16, True)
    assert bits(out)[1] == 261
    out = run("reduce_max", np.zeros(2, H), x, x, 128, 2, 16, True,
              config=Config(reduce_max_index="repeat"))
    assert bits(out)[1] == 133
    # srcRepStride 0: every repeat reads the same register; the index is the lane either way.
    y = np.zeros(128, H)
    y[9] = 1
    for reading in ("offset", "repeat"):
        out = run("reduce_max", np.zeros(2, H), y, y, 128, 7, 0, True,
                  config=Config(reduce_max_index=reading))
        assert bits(out)[1] == 9


def test_overlapping_repeats_report_the_smallest_index():
    # srcRepStride 1 (16 halves): lanes 0 and 20 active; repeat 0 reads offsets 0 and 20,
    # repeat 1 offsets 16 and 36. Equal maxima at 20 (repeat 0) and 16 (repeat 1): the page
    # says the smallest index, 16.
    mask = [(1 << 0) | (1 << 20), 0]
    x = np.zeros(160, H)
    x[[16, 20]] = 2
    out = run("reduce_max", np.zeros(2, H), x, x, mask, 2, 1, True)
    assert bits(out)[1] == 16
    # Read as r*lanes + e, the same elements are 20 (repeat 0) and 128 (repeat 1).
    out = run("reduce_max", np.zeros(2, H), x, x, mask, 2, 1, True,
              config=Config(reduce_max_index="repeat"))
    assert bits(out)[1] == 20


def test_nan_and_signed_zeros():
    nan = np.array([0x7E01], np.uint16).view(H)[0]   # a payload
    x = np.array([1, nan, 5, -np.nan] + [0] * 124, H)
    for name in ("reduce_max", "reduce_min"):
        out = run(name, np.zeros(2, H), x, x, 128, True)
        assert bits(out)[0] == 0x7E00 and bits(out)[1] == 1          # A21, A19: quiet NaN
        out = run(name, np.zeros(2, H), x, x, 128, True, config=Config(extreme_nan="first"))
        assert bits(out)[0] == 0x7E01 and bits(out)[1] == 1          # moved, payload kept
    out = run("reduce_max", np.zeros(2, H), x, x, 128, True,
              config=Config(max_min_nan="ignore"))
    assert out[0] == 5 and bits(out)[1] == 2
    only = np.full(8, np.nan, F)
    out = run("reduce_min", np.zeros(2, F), only, only, 8, True,
              config=Config(max_min_nan="ignore"))
    assert np.isnan(out[0]) and bits(out)[1] == 0
    z = np.array([-0.0, 0.0, -0.0], F)
    out = run("reduce_max", np.zeros(2, F), z, z, 3, True)
    assert bits(out)[0] == 0 and bits(out)[1] == 1                   # A22: +0 > -0
    out = run("reduce_min", np.ones(2, F), z[::-1].copy(), z, 3, True)
    assert bits(out)[0] == 0x80000000 and bits(out)[1] == 0
    equal = Config(signed_zero="equal")
    out = run("reduce_max", np.zeros(2, F), z, z, 3, True, config=equal)
    assert bits(out)[0] == 0x80000000 and bits(out)[1] == 0          # the first zero


def test_integers_on_the_950():
    x = np.array([-3, 7, -30000, 7, 12], np.int16)
    out = run("reduce_min", np.zeros(2, np.int16), x, None, 5, True)
    assert out[0] == -30000 and out[1] == 2
    u = np.array([5, 2**32 - 1, 2**31, 2**32 - 1], np.uint32)
    out = run("reduce_max", np.zeros(2, np.uint32), u, None, 4, True)
    assert out[0] == 2**32 - 1 and out[1] == 1
    big = np.zeros(40001, np.int16)
    big[40000] = 1
    out = run("reduce_max", np.zeros(2, np.int16), big, None, 40001, True)
    assert bits(out)[1] == 40000                                      # as uint16 bits


def test_empty_count_and_repeat():
    x = np.ones(128, H)
    dst = np.full(2, 3, H)
    for product in ("950", "A2", "training"):                         # repeat_time 0 (A26)
        out = run("reduce_max", dst, x, x, 128, 0, 8, True, config=Config(product=product))
        assert (out == 3).all()
    for product in ("A2", "A3"):                                      # count 0: the page's NOP
        out = run("reduce_min", dst, x, x, 0, True, config=Config(product=product))
        assert (out == 3).all()
    with pytest.raises(ValueError, match=r"reduce_max: count=0 is outside the valid range"):
        ascjax.reduce_max(dst, x, x, 0)
    with pytest.raises(ValueError, match=r"reduce_max: repeat_time=0 is a NOP only on \['A3', "
                                         r"'A2'\] \(the page\)"):
        ascjax.reduce_max(dst, x, x, 128, 0, 8, config=Config(reduce_empty="raise"))
    out, _ = ascjax.reduce_max(dst, x, x, 128, 0, 8, config=Config(product="A2",
                                                                   reduce_empty="raise"))
    assert (np.asarray(out) == 3).all()
    with pytest.raises(ValueError, match="reduce_sum: repeat_time=0 is a NOP only on"):
        ascjax.reduce_sum(dst, x, None, 128, 0, 8, config=Config(reduce_empty="raise"))


def test_repeat_time_beyond_255():
    """The pages: ReduceMax/ReduceMin/ReduceSum take any repeatTime up to int32's maximum."""
    x = np.zeros(128, F)
    x[100] = -2
    run("reduce_min", np.zeros(2, F), x, np.zeros(632, F), 64, 300, 0, True, config=A2)
    out = run("reduce_sum", np.zeros(1, F), np.ones(128, F), None, 64, 300, 0)
    assert out[0] == 19200
    out, _ = ascjax.reduce_sum(np.full(1, 5, F), x, None, 0, config=A2)  # count 0: a NOP
    assert np.asarray(out)[0] == 5


@pytest.mark.parametrize("call, error, match", [
    (lambda: ascjax.reduce_max(np.zeros(2, H), np.ones(512, H), np.zeros(31, H), 128, 4, 8,
                               True, config=A2), ValueError,
     (r"reduce_max: shared_tmp_buffer has 31 elements; the page requires at least 32 "
      r"\(64 bytes\) for firstMaxRepeat=4, cal_index=True on product 'A2'")),
    (lambda: ascjax.reduce_min(np.zeros(2, F), np.ones(8320, F), np.zeros(287, F), 64, 130, 8,
                               True, config=A2), ValueError,
     "reduce_min: shared_tmp_buffer has 287 elements; the page requires at least 288"),
    (lambda: ascjax.reduce_max(np.zeros(2, H), np.ones(512, H), None, 512, config=A2),
     TypeError, r"reduce_max: product 'A2' needs a sharedTmpBuffer \(a LocalTensor of half\)"),
    (lambda: ascjax.reduce_max(np.zeros(2, H), np.ones(512, H), np.zeros(64, F), 512,
                               config=A2), TypeError,
     r"reduce_max: shared_tmp_buffer dtype float32 differs from T half"),
    (lambda: ascjax.reduce_max(np.zeros(2, H), np.ones(70000, H), None, 70000, True),
     ValueError, (r"reduce_max: with cal_index, a half tensor's index can reach 69999; the "
                  r"page supports indices up to 65535")),
    (lambda: ascjax.reduce_max(np.zeros(1, H), np.ones(8, H), None, 8, True), ValueError,
     r"reduce_max: dst has 1 element\(s\); the value and its index need 2"),
    (lambda: ascjax.reduce_max(np.zeros(2, H), np.ones(8, H), None, 8, True, cal_index=True),
     TypeError, "reduce_max: cal_index given both positionally and as a keyword"),
    (lambda: ascjax.reduce_max(np.zeros(2, H), np.ones(8, H), None, 8, "yes"), TypeError,
     r"reduce_max: cal_index must be a bool \(the page's calIndex\), got 'yes'"),
    (lambda: ascjax.reduce_max(np.zeros(2, H), np.ones(8, H), None, 8, 1, 8, True, 0),
     TypeError, r"reduce_max: expected \(dst, src, shared_tmp_buffer, count\[, cal_index\]\) or"),
    (lambda: ascjax.reduce_max(np.zeros(2, H), np.ones(8, H), None, 9), ValueError,
     r"reduce_max: count=9 is outside the valid range \[1, 8\]"),
    (lambda: ascjax.reduce_max(np.zeros(2, H), np.ones(8, H), None, 128, 2**31, 0), ValueError,
     r"reduce_max: repeat_time=2147483648 is outside the valid range \[0, 2147483647\]"),
    (lambda: ascjax.reduce_min(np.zeros(2, H), np.ones(8, H), None, 128, 1, 65536), ValueError,
     r"reduce_min: src_rep_stride=65536 is outside the valid range \[0, 65535\]"),
    (lambda: ascjax.reduce_min(np.zeros(2, H), np.ones(100, H), None, 128, 1, 8), ValueError,
     "reduce_min: src has 100 elements but repeat 0 reads element 127"),
    (lambda: ascjax.reduce_max(np.zeros(2, np.int16), np.ones(8, np.int16), np.zeros(16, np.int16),
                               8, config=A2), TypeError,
     r"reduce_max: T int16_t is not supported on product 'A2'; supported: \['half', 'float'\]"),
    (lambda: ascjax.reduce_min(np.zeros(2, F), np.ones(8, F), np.zeros(16, F), 8,
                               config=Config(product="training")), TypeError,
     r"reduce_min: T float is not supported on product 'training'; supported: \['half'\]"),
])
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_tmp_any_size_on_the_950_and_exact_minimum_elsewhere():
    x = np.arange(288, dtype=H)
    ascjax.reduce_max(np.zeros(2, H), x, np.zeros(1, H), 288, True)          # 950: any size
    # First-n form: firstMaxRepeat = 288 // 128 = 2, so 16 + 16 elements with the index and
    # 16 without (A27); count < 128 counts as one repeat, as ReduceSum's page says.
    ascjax.reduce_max(np.zeros(2, H), x, np.zeros(32, H), 288, True, config=A2)
    ascjax.reduce_max(np.zeros(2, H), x, np.zeros(16, H), 288, config=A2)
    ascjax.reduce_max(np.zeros(2, H), x, np.zeros(16, H), 100, config=A2)
    with pytest.raises(ValueError, match="requires at least 32"):
        ascjax.reduce_max(np.zeros(2, H), x, np.zeros(31, H), 288, True, config=A2)


def test_gradients_go_to_the_selected_element():
    x = jnp.array([1.0, 4.0, -2.0, 4.0, 0.5], F)
    d = jnp.arange(4, dtype=F)
    for name, at in (("reduce_max", 1), ("reduce_min", 2)):
        f = getattr(ascjax, name)
        g = jax.grad(lambda s, f=f: f(d, s, None, 5, True)[0][0])(x)
        np.testing.assert_array_equal(g, np.eye(5, dtype=F)[at])
        # dst: elements 0 (value) and 1 (index) are overwritten; 2 and 3 pass through.
        gd = jax.grad(lambda t, f=f: jnp.sum(f(t, x, None, 5, True)[0]
                                             * jnp.arange(1.0, 5.0)))(d)
        np.testing.assert_array_equal(gd, [0, 0, 3, 4])
        # The index slot takes no gradient from src.
        gi = jax.grad(lambda s, f=f: f(d, s, None, 5, True)[0][1])(x)
        np.testing.assert_array_equal(gi, np.zeros(5, F))
        # Nor does the SPR (its value is dst[0]'s, without the gradient).
        gs = jax.grad(lambda s, f=f: f(d, s, None, 5, True)[1].value)(x)
        np.testing.assert_array_equal(gs, np.zeros(5, F))
    # Level-0 form with srcRepStride 0 (every repeat reads the same elements).
    y = jnp.array(np.r_[np.zeros(63), 3.0].astype(F))
    g = jax.grad(lambda s: ascjax.reduce_max(jnp.zeros(2, F), s, None, 64, 3, 0)[0][0])(y)
    np.testing.assert_array_equal(g, np.eye(64, dtype=F)[63])


def test_vmap_over_tensors():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 300)).astype(H)
    out, _ = jax.vmap(lambda s: ascjax.reduce_min(np.zeros(2, H), s, None, 128, 2, 9, True))(x)
    for k in range(4):
        want, _ = reference.reduce_min(np.zeros(2, H), x[k], None, 128, 2, 9, True)
        assert np.asarray(out[k]).tobytes() == want.tobytes()


# --- the max / min SPRs ReduceMax / ReduceMin set (GetReduceRepeatMaxMinSpr) ---------------

def _u(x):
    """Bits of an array or scalar, as unsigned integers of its width."""
    x = np.asarray(x)
    return x.view(np.dtype(f"u{x.dtype.itemsize}"))


@pytest.mark.parametrize("name, numpy", [("reduce_max", np.max), ("reduce_min", np.min)])
def test_page_example_gives_the_spr_the_getter_reads(name, numpy):
    """GetReduceRepeatMaxMinSpr's example 2 (Atlas A2): ReduceMax(dst, src, work, 64, 1, 8,
    true), then GetReduceRepeatMaxMinSpr<float>(val, idx): val is the max (NumPy's), the bits
    dst[0] holds; the index (not accurate on the NPU, the page says) is ReduceMax's own, A46."""
    src = np.random.default_rng(21).standard_normal(64).astype(F)
    work = np.zeros(shared_tmp_size(ascjax.FORMATS["float"], 1, True), F)
    dst, spr = getattr(ascjax, name)(np.zeros(2, F), src, work, 64, 1, 8, True, config=A2)
    val, idx = ascjax.get_reduce_repeat_max_min_spr(spr, config=A2)
    assert _u(val) == _u(numpy(src)) == _u(np.asarray(dst)[0])
    assert _u(idx) == _u(np.asarray(dst)[1]) == (src.argmax() if name == "reduce_max"
                                                 else src.argmin())
    # half, the first-n form over several repeats, without calIndex: the same registers
    x = np.random.default_rng(22).standard_normal(1000).astype(H)
    dst, spr = getattr(ascjax, name)(np.zeros(2, H), x, None, 1000)
    at = x.argmax() if name == "reduce_max" else x.argmin()
    assert _u(spr.value) == _u(x[at]) and int(spr.index) == at
    assert spr.value.dtype == H and spr.index.dtype == np.uint32


@pytest.mark.parametrize("name", ["reduce_max", "reduce_min"])
def test_spr_eager_jit_vmap_and_batched_agree_bit_for_bit(name):
    """The SPRs of every form (first n; level 0 with srcRepStride 8, 16 (A47) and 0) are the
    same bits eagerly, under jit, under vmap and over a batch's leading axis, and the
    reference model's."""
    rng = np.random.default_rng(23)
    x = rng.standard_normal((3, 700)).astype(F)
    x[1, 5] = x[1, 300]                              # a tie: the smaller index
    x[2, 40] = np.nan                                # a NaN wins (A21), quiet (A19)
    f = getattr(ascjax, name)
    for args in ((700,), (64, 5, 8, True), (64, 4, 16), ([2**63 + 1], 3, 0, True)):
        def call(s, args=args):
            return f(np.zeros(2, F), s, None, *args)
        eager = [call(row) for row in x]
        jitted = [jax.jit(call)(row) for row in x]
        vmapped = jax.vmap(call)(x)
        batched = f(np.zeros((3, 2), F), x, None, *args)
        for k in range(3):
            want = getattr(reference, name)(np.zeros(2, F), x[k], None, *args)
            for got in (eager[k], jitted[k], (vmapped[0][k], jax.tree.map(lambda a, k=k: a[k],
                                                                           vmapped[1])),
                        (batched[0][k], jax.tree.map(lambda a, k=k: a[k], batched[1]))):
                assert _u(got[0]).tolist() == _u(want[0]).tolist(), (args, k)
                assert [_u(a).tolist() for a in got[1]] == [_u(a).tolist() for a in want[1]], \
                    (args, k)


def test_the_sum_register_keeps_its_bits_and_a_nop_keeps_all():
    """ReduceMax / ReduceMin set value and index only: an incoming spr's sum (a NaN with a
    payload here) keeps its bits; repeatTime 0 and count 0 (Atlas A2) change no register
    (A26)."""
    payload = np.array([0x7E01], np.uint16).view(H)[0]
    before = ascjax.ReduceSpr(payload, np.float16(-2.5), np.uint32(0xDEADBEEF))
    x = np.arange(300).astype(H)
    for name in ("reduce_max", "reduce_min"):
        _, spr = getattr(ascjax, name)(np.zeros(2, H), x, None, 300, spr=before)
        assert _u(spr.sum) == 0x7E01
        assert float(spr.value) == (299 if name == "reduce_max" else 0)
        for args, config in (((128, 0, 8), Config()), ((0,), A2)):
            tmp = None if config.product == "950" else np.zeros(32, H)
            _, spr = jax.jit(lambda s, name=name, args=args, config=config, tmp=tmp: getattr(
                ascjax, name)(np.zeros(2, H), s, tmp, *args, spr=before, config=config))(x)
            assert [_u(a) for a in spr] == [0x7E01, _u(np.float16(-2.5)), 0xDEADBEEF]
    with pytest.raises(TypeError, match="reduce_max: spr must be a ReduceSpr"):
        ascjax.reduce_max(np.zeros(2, H), x, None, 300, spr=(0, 0, 0))
