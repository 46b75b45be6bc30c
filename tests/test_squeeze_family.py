"""asc_squeeze (registers and UB), asc_squeeze_with_status / asc_squeeze_v2, asc_unsqueeze and
asc_get_mask_spr: hand-checked page cases, the Config readings, errors and gradients (the
bit-for-bit sweep against the reference models is tests/test_registry.py)."""

from __future__ import annotations

import contextlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import assert_bits_equal, few_examples, lanes_of, register_values, storage

import ascjax
from ascjax import Config, reference
from ascjax._src import native
from ascjax._src.isa.squeeze import (
    BYTE_SEARCH_LANES,
    REGISTER_SQUEEZE_TYPES,
    UNSQUEEZE_TYPES,
    word_source_lanes,
)

A2 = Config(product="A2")
ALL32 = ascjax.create_mask("PAT_ALL", "float")
M3 = ascjax.create_mask("PAT_M3", "float")


def _kw(name):
    return {"dtype": name} if storage(name) == np.uint8 and name != "uint8_t" else {}


# --- registers ------------------------------------------------------------------------------

@few_examples(20)
@given(seed=st.integers(0, 2**32 - 1), n_words=st.sampled_from([1, 2, 4, 8, 12, 16, 32, 36]),
       density=st.sampled_from([0.0, 0.03, 0.5, 0.97, 1.0]))
def test_word_source_lanes_finds_each_set_bit_in_order(seed, n_words, density):
    """The search behind squeeze and GatherMask (a chain over groups of words, then the word,
    then the bit) against np.flatnonzero per row, eager and under jit: output lane j is the
    (j+1)-th set bit's lane; lanes past the count hold some lane of the row (they are read,
    then masked)."""
    rng = np.random.default_rng(seed)
    bits = rng.random((6, 32 * n_words)) < density
    bits[0], bits[1, ::7] = False, True           # an empty row; a sparse, regular one
    bits[2, -1] = True                            # the very last lane set
    _assert_sources_are_the_set_bits(bits, f"{n_words} words")


def _assert_sources_are_the_set_bits(bits, label: str):
    """``word_source_lanes`` of the rows of ``bits`` (rows, lanes), lanes a multiple of 32,
    eager and under jit, against np.flatnonzero; returns the mask words it searched."""
    rows, lanes = bits.shape
    words = (bits.reshape(rows, lanes // 32, 32) * (1 << np.arange(32, dtype=np.uint64))).sum(-1)
    words = words.astype(np.uint32)
    for source, count in (word_source_lanes(jnp.asarray(words)),
                          jax.jit(word_source_lanes)(words)):
        for row, src, n in zip(bits, np.asarray(source), np.asarray(count), strict=True):
            want = np.flatnonzero(row)
            assert n == want.size
            assert_bits_equal(src[:n], want.astype(np.int32), label)
            assert ((src[n:] >= 0) & (src[n:] < lanes)).all()
    return words


@pytest.mark.parametrize("n_words", [8, 9])
def test_the_byte_search_holds_its_widest_masks(n_words):
    """Up to 256 lanes the search counts in uint8 (``BYTE_SEARCH_LANES``), past that in uint16:
    at 256 lanes a full mask's last group starts at lane 224 and its count (256) does not fit
    a byte. Each side of the boundary, on the masks that reach those extremes, against
    np.flatnonzero; and each side runs in the width it was chosen for."""
    lanes = 32 * n_words
    bits = np.zeros((6, lanes), bool)
    bits[0] = True                                  # every lane: count = lanes
    bits[1, -1] = True                              # the last lane only
    bits[2, 0] = True                               # the first lane only
    bits[3, ::2] = True
    bits[4, lanes // 2:] = True                     # the high half: every rank offset by it
    bits[5, 1::3] = True
    words = _assert_sources_are_the_set_bits(bits, f"{lanes} lanes")
    width = "ui8" if lanes <= BYTE_SEARCH_LANES else "ui16"
    text = jax.jit(word_source_lanes).lower(words).as_text()
    assert f"x{lanes}x{width}>" in text and f"x{lanes}x{'ui16' if width == 'ui8' else 'ui8'}>" \
        not in text


def test_word_source_lanes_refuses_a_mask_its_uint16_counts_cannot_hold():
    # The width is checked while tracing: eval_shape traces without running the 2^15-lane
    # search (eagerly, op by op, it took 30 s).
    def words(n):
        return jax.ShapeDtypeStruct((1, n), jnp.uint32)

    source, count = jax.eval_shape(word_source_lanes, words(1024))  # 2^15 lanes: the most
    assert source.shape == (1, 1 << 15) and count.shape == (1,)
    with pytest.raises(ValueError, match="32800 lanes; the search counts in uint16"):
        jax.eval_shape(word_source_lanes, words(1025))


def test_the_source_search_runs_apart_from_the_gather_that_reads_it():
    """XLA's CPU backend fuses whatever computes a gather's indices into the gather's loop and
    does not vectorize that loop: the squeeze ran 2.5-4.5x slower on an AVX2 machine with its
    search there. The compiled squeeze keeps the search (its popcounts) out of the gather's
    fusion. Moving it apart changes no bit: vmap, an empty batch and one register agree with
    the batched call, with the XLA path and with the compaction kernel."""
    rng = np.random.default_rng(5)
    x = rng.integers(0, 1 << 16, (6, 128), dtype=np.uint16).view(np.float16)
    mask = rng.random((6, 128)) < 0.4
    with native.native_kernels_off():  # the XLA path (the kernel on CPU: tests/test_native.py)
        hlo = jax.jit(ascjax.squeeze_register).lower(x, mask).compile().as_text()
    computations = hlo.split("\n\n")
    gathers = [c for c in computations if " gather(" in c]
    assert gathers and any("popcnt(" in c for c in computations)
    assert not any("popcnt(" in c for c in gathers)
    want = np.asarray(ascjax.squeeze_register(x, mask))
    for path in (native.native_kernels_off(), contextlib.nullcontext()):
        with path:
            assert_bits_equal(np.asarray(ascjax.squeeze_register(x, mask)), want)
            assert_bits_equal(np.asarray(jax.vmap(ascjax.squeeze_register)(x, mask)), want)
            assert_bits_equal(np.asarray(ascjax.squeeze_register(x[2], mask[2])), want[2])
            assert ascjax.squeeze_register(x[:0], mask[:0]).shape == (0, 128)


def test_a_mask_shared_by_a_batch_of_registers_squeezes_each():
    """One mask for a batch of registers (and one register under a batch of masks) broadcast
    as their batch shapes say: each register as if it had the mask of its own. (It raised
    take_along_axis's "indices and arr must have the same number of dimensions".) The
    gradient too."""
    rng = np.random.default_rng(6)
    x = rng.integers(0, 1 << 16, (5, 128), dtype=np.uint16).view(np.float16)
    mask = rng.random(128) < 0.5
    each = np.broadcast_to(mask, (5, 128))
    for fn in (ascjax.squeeze_register, ascjax.squeeze):
        kw = {"config": Config(product="950")} if fn is ascjax.squeeze else {}
        assert_bits_equal(np.asarray(fn(x, mask, **kw)), np.asarray(fn(x, each, **kw)))
        masks = rng.random((5, 128)) < 0.5
        assert_bits_equal(np.asarray(fn(x[0], masks, **kw)),
                          np.asarray(fn(np.broadcast_to(x[0], (5, 128)), masks, **kw)))
    xf = rng.standard_normal((5, 64)).astype(np.float32)
    mf = rng.random(64) < 0.5
    weights = jnp.arange(64.0, dtype=jnp.float32)
    grads = [jax.grad(lambda v, m=m: (ascjax.squeeze_register(v, m) * weights).sum())(xf)
             for m in (mf, np.broadcast_to(mf, (5, 64)))]
    assert_bits_equal(np.asarray(grads[0]), np.asarray(grads[1]))


def test_squeeze_packs_selected_lanes_and_zeroes_the_rest():
    # By hand: PAT_M3 on 64 float lanes selects 0, 3, ..., 63 (22 lanes).
    x = np.arange(64, dtype=np.float32) + 0.5
    dst = np.asarray(ascjax.squeeze(x, M3))
    assert_bits_equal(dst[:22], x[::3])
    assert_bits_equal(dst[22:], np.zeros(42, np.float32))
    assert ascjax.instruction("asc_squeeze") is ascjax.squeeze


@pytest.mark.parametrize("name", REGISTER_SQUEEZE_TYPES)
def test_squeeze_moves_bits_and_agrees_with_the_seed_register_part(name):
    rng = np.random.default_rng(5)
    lanes = lanes_of(name)
    x = register_values(rng, name, (4, lanes), p_special=0.5)
    m = rng.random((4, lanes)) < 0.5
    got = ascjax.squeeze(x, m, **_kw(name))
    assert_bits_equal(got, ascjax.squeeze_register(x, m, **_kw(name)))
    for k in range(4):
        # NumPy indexing: JAX 0.12's own (got[k]) makes a float8_e5m2 NaN 0x7f on the CPU
        assert_bits_equal(np.asarray(got)[k][:m[k].sum()], x[k][m[k]])


def test_squeeze_with_status_reports_this_calls_bytes():
    x = np.arange(64, dtype=np.float32)
    dst, ar = ascjax.squeeze_with_status(x, M3)
    assert_bits_equal(dst, ascjax.squeeze(x, M3))
    assert int(ar) == 22 * 4                        # 22 floats, bytes (A42)
    _, n = ascjax.squeeze_with_status(x, M3, config=Config(squeeze_status="elements"))
    assert int(n) == 22
    # Set, not added: the same call twice reports the same AR.
    masks = np.stack([np.asarray(M3), np.asarray(ALL32)])
    _, ars = ascjax.squeeze_with_status(np.stack([x, x]), masks)
    assert ars.tolist() == [88, 256]
    assert ascjax.instruction("asc_squeeze_v2") is ascjax.squeeze_with_status
    i8 = np.arange(256).astype(np.uint8).view(np.int8)
    assert int(ascjax.squeeze_with_status(i8, ascjax.create_mask("PAT_ALL", "int8_t"))[1]) == 256


def test_unsqueeze_is_the_exclusive_prefix_count():
    # The page's rule, by hand: mask 1,0,1,1,0,... -> 0,1,1,2,3,...
    m = np.zeros(64, bool)
    m[[0, 2, 3, 7]] = True
    got = np.asarray(ascjax.unsqueeze(np.full(64, 9, np.uint32), m))
    want = np.zeros(64, np.uint32)
    want[1:3], want[3], want[4:8], want[8:] = 1, 2, 3, 4
    assert got.tolist() == want.tolist()
    # The top lane's bit is ignored, and int8_t counts past 127 wrap as bits.
    top = np.zeros(256, bool)
    top[-1] = True
    assert not np.asarray(ascjax.unsqueeze(np.zeros(256, np.int8), top)).any()
    full = np.asarray(ascjax.unsqueeze(np.zeros(256, np.int8), np.ones(256, bool)))
    assert full.view(np.uint8).tolist() == list(range(256))


def test_unsqueeze_count_through_reads_the_pages_second_sentence():
    """A48's other reading: "dst[i] = dst[i-1] + 1 where mask[i] is 1" read literally counts
    lanes 1..i, so lane 0's bit is ignored and the top lane's counted (the default ignores the
    top lane's, as the page's first sentence says)."""
    m = np.zeros(64, bool)
    m[[0, 2, 3, 63]] = True
    through = ascjax.Config(unsqueeze_count="through")
    got = np.asarray(ascjax.unsqueeze(np.full(64, 9, np.int32), m, config=through))
    want = np.cumsum(m) - m[0]                  # 1s among lanes 1..i
    assert got.tolist() == want.tolist() and got[[0, 1, 2, 3, 62, 63]].tolist() == [0, 0, 1, 2,
                                                                                   2, 3]
    default = np.asarray(ascjax.unsqueeze(np.full(64, 9, np.int32), m))
    assert default.tolist() == (np.cumsum(m) - m).tolist()  # 1s among lanes 0..i-1
    assert default[[0, 1, 63]].tolist() == [0, 1, 3]


@pytest.mark.parametrize("name", [t for t in UNSQUEEZE_TYPES if lanes_of(t) < 256])
def test_unsqueeze_then_gather_puts_squeezed_lanes_back(name):
    """dst = unsqueeze(mask) indexes the squeezed register: gathering it under the mask gives
    the selected lanes at their places (the expansion the pair is for; asc_gather has no
    8-bit index)."""
    rng = np.random.default_rng(1)
    lanes = lanes_of(name)
    data = {128: np.float16, 64: np.float32}[lanes]
    x = rng.standard_normal(lanes).astype(data)
    m = rng.random(lanes) < 0.4
    idx = ascjax.unsqueeze(np.zeros(lanes, storage(name)), m)
    back = ascjax.asc_gather(ascjax.squeeze(x, m), np.asarray(idx).astype(f"uint{8 * x.itemsize}"),
                         m)
    assert_bits_equal(back, np.where(m, x, 0).astype(data))


def test_get_mask_spr_formats_by_data_type():
    state = ascjax.MaskState("normal", 1 << 63, 0b1011)
    b16 = np.asarray(ascjax.get_mask_spr("b16", state=state))
    on16 = np.nonzero(b16)[0].tolist()
    # By hand: lanes 0, 1, 3 and 127, each bit copied to 2 mask bits.
    assert on16 == [0, 1, 2, 3, 6, 7, 254, 255]
    b32 = np.asarray(ascjax.get_mask_spr("float", state=state))
    assert np.nonzero(b32)[0].tolist() == [0, 1, 2, 3, 4, 5, 6, 7, 12, 13, 14, 15]
    assert np.asarray(ascjax.get_mask_spr("b32")).all()          # power-on: every bit 1
    # A SetVectorMask state read back drives a register instruction lane for lane.
    st = ascjax.set_vector_mask(10, dtype="half")
    x = np.arange(128, dtype=np.float16)
    assert np.asarray(ascjax.squeeze(x, ascjax.get_mask_spr("b16", state=st)))[:11].tolist() \
        == list(range(10)) + [0]
    spr32 = ascjax.instruction("asc_get_mask_spr_b32")  # the width bound: called as written
    assert spr32.func is ascjax.get_mask_spr and spr32.keywords == {"dtype": "b32"}
    assert_bits_equal(spr32(state=st), ascjax.get_mask_spr("b32", state=st), "spr b32")
    assert_bits_equal(b16, reference.get_mask_spr("b16", state=state))


# --- UB -------------------------------------------------------------------------------------

def _ub_case(seed, n=512, dtype=np.uint16):
    rng = np.random.default_rng(seed)
    top = np.iinfo(dtype).max
    return (rng.integers(0, top, n, dtype=dtype), rng.integers(0, top, n, dtype=dtype),
            np.where(rng.random(n) < 0.3, rng.integers(1, top, n, dtype=dtype), 0).astype(dtype))


def test_ub_squeeze_by_hand_and_config_readings():
    # uint32: 64 lanes, 8 per DataBlock. Two repeats, src0 repeat stride 8, src1 every 3rd.
    src0 = np.arange(256, dtype=np.uint32) + 1000
    src1 = (np.arange(256) % 3 == 0).astype(np.uint32) * 7
    dst0 = np.full(256, 5, np.uint32)
    dst = np.asarray(ascjax.squeeze(dst0, src0, src1, 2, 1, 1, 1, 8, 8, 8, config=A2))
    # Repeat 0 selects elements 0, 3, ..., 63 (22); repeat 1 elements 66, 69, ..., 126 (21).
    assert dst[:22].tolist() == list(range(1000, 1064, 3))
    assert dst[64:85].tolist() == list(range(1066, 1128, 3))
    assert not dst[22:64].any() and not dst[85:128].any()            # A44: written 0
    assert (dst[128:] == 5).all()                                      # beyond the repeats
    keep = np.asarray(ascjax.squeeze(dst0, src0, src1, 2, 1, 1, 1, 8, 8, 8,
                                     config=A2.replace(squeeze_ub_tail="keep")))
    assert (keep[22:64] == 5).all() and keep[:22].tolist() == dst[:22].tolist()
    # "bits": src1 words as a bit mask; 0x5 in word 0 selects lanes 0 and 2 of repeat 0.
    bits = np.zeros(256, np.uint32)
    bits[0] = 0b101
    one = np.asarray(ascjax.squeeze(dst0, src0, bits, 1, 1, 1, 1, 8, 8, 8,
                                    config=A2.replace(squeeze_ub_mask="bits")))
    assert one[:3].tolist() == [1000, 1002, 0]


def test_ub_squeeze_strides_and_overlap_match_reference():
    for seed, args in enumerate([(3, 2, 1, 3, 16, 8, 9), (4, 0, 2, 1, 0, 20, 3),
                                 (2, 1, 0, 0, 8, 0, 1), (255, 1, 1, 1, 8, 8, 8), (0, 1, 1, 1, 8,
                                                                                   8, 8)]):
        dst, src0, src1 = _ub_case(seed, n=255 * 128 + 128)
        for config in (A2, A2.replace(squeeze_ub_tail="keep"),
                       Config(product="A3", squeeze_ub_mask="bits")):
            got = ascjax.squeeze(dst, src0, src1, *args, config=config)
            want = reference.squeeze(dst, src0, src1, *args, config=config)
            assert_bits_equal(got, want, f"{args} {config}")
    jitted = jax.jit(lambda d, a, b: ascjax.squeeze(d, a, b, 3, 0, 1, 2, 1, 8, 8, config=A2))
    dst, src0, src1 = _ub_case(9)
    assert_bits_equal(jitted(dst, src0, src1),
                      reference.squeeze(dst, src0, src1, 3, 0, 1, 2, 1, 8, 8, config=A2))


# --- errors ---------------------------------------------------------------------------------

def test_errors_name_the_instruction_argument_and_range():
    x = np.zeros(64, np.float32)
    with pytest.raises(TypeError, match=r"squeeze: not available on product 'A2'"):
        ascjax.squeeze(x, ALL32, config=A2)
    with pytest.raises(TypeError, match=r"squeeze: src dtype int4b_t is not supported"):
        ascjax.squeeze(np.zeros(256, np.uint8), np.ones(256, bool), dtype="int4b_t")
    with pytest.raises(TypeError, match=r"squeeze: got 3 positional arguments"):
        ascjax.squeeze(x, ALL32, 1)
    with pytest.raises(ValueError, match=r"squeeze: mask has shape \(10,\)"):
        ascjax.squeeze(x, np.ones(10, bool))
    with pytest.raises(TypeError, match=r"unsqueeze: dst dtype half is not supported"):
        ascjax.unsqueeze(np.zeros(128, np.float16), np.ones(128, bool))
    with pytest.raises(TypeError, match=r"get_mask_spr: dtype 'b8' is 8-bit"):
        ascjax.get_mask_spr("b8")
    with pytest.raises(TypeError, match=r"get_mask_spr: state must be an ascjax.MaskState"):
        ascjax.get_mask_spr("b16", state=3)
    u16 = np.zeros(256, np.uint16)
    with pytest.raises(TypeError, match=r"squeeze_ub: not available on product '950'"):
        ascjax.squeeze(u16, u16, u16, 1, 1, 1, 1, 8, 8, 8)
    with pytest.raises(TypeError, match=r"squeeze_ub: src0 dtype half is not supported"):
        ascjax.squeeze(u16, u16.view(np.float16), u16, 1, 1, 1, 1, 8, 8, 8, config=A2)
    with pytest.raises(TypeError, match=r"must have one type"):
        ascjax.squeeze(u16, u16, np.zeros(64, np.uint32), 1, 1, 1, 1, 8, 8, 8, config=A2)
    with pytest.raises(ValueError, match=r"squeeze_ub: repeat=256 is outside "
                                         r"the valid range \[0, 255\]"):
        ascjax.squeeze(u16, u16, u16, 256, 1, 1, 1, 8, 8, 8, config=A2)
    with pytest.raises(ValueError, match=r"src1_repeat_stride=-1 is outside "
                                         r"the valid range \[0, 255\]"):
        ascjax.squeeze(u16, u16, u16, 1, 1, 1, 1, 8, 8, -1, config=A2)
    with pytest.raises(ValueError, match=r"squeeze_ub: src0 has 256 elements but repeat 2 lane "
                                         r"0 reads element 256"):
        ascjax.squeeze(u16, u16, u16, 3, 1, 1, 1, 0, 8, 0, config=A2)
    with pytest.raises(ValueError, match=r"dst has 100 elements but repeat 0 lane 100 writes"):
        ascjax.squeeze(u16[:100], u16, u16, 1, 1, 1, 1, 8, 8, 8, config=A2)
    # Offsets are static ints: a too-short tensor is the same error under jit, at trace time.
    with pytest.raises(ValueError, match=r"src1 has 256 elements but repeat 1 lane 0 reads"):
        jax.jit(lambda d, a, b: ascjax.squeeze(d, a, b, 2, 1, 1, 1, 8, 8, 16, config=A2))(
            u16, u16, u16)
    with pytest.raises(TypeError, match=r"dtype= belongs to the register form"):
        ascjax.squeeze(u16, u16, u16, 1, 1, 1, 1, 8, 8, 8, dtype="uint16_t", config=A2)


# --- gradients ------------------------------------------------------------------------------

def test_squeeze_gradient_goes_back_to_the_selected_lanes():
    rng = np.random.default_rng(3)
    x = rng.standard_normal(64).astype(np.float32)
    m = rng.random(64) < 0.5
    w = rng.standard_normal(64).astype(np.float32)
    g = jax.grad(lambda s: jnp.sum(ascjax.squeeze(s, m) * w))(x)
    # By hand: dst lane j holds the j-th selected lane, so that lane's gradient is w[j].
    want = np.zeros(64, np.float32)
    want[np.nonzero(m)[0]] = w[:m.sum()]
    assert_bits_equal(g, want)
    _, vjp = jax.vjp(lambda s: ascjax.squeeze_with_status(s, m)[0], x)
    assert_bits_equal(vjp(w)[0], want)


def test_expansion_gradient_is_the_adjoint_of_squeeze():
    """squeeze then the unsqueeze-indexed gather: the round trip's gradient is the mask."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal(128).astype(np.float16)
    m = rng.random(128) < 0.5
    idx = ascjax.unsqueeze(np.zeros(128, np.uint16), m)

    def round_trip(s):
        return jnp.sum(ascjax.asc_gather(ascjax.squeeze(s, m), idx, m).astype(jnp.float32))

    assert_bits_equal(jax.grad(round_trip)(x), m.astype(np.float16))
