"""encode / decode / nibble pairs, bit for bit.

Every code of every type is decoded and compared with its independent library (ml_dtypes,
en_dtypes, NumPy). Encoding is checked on every float16 pattern, a million random float32
patterns per type (half of them in the type's range) and every tie and boundary (each value,
each midpoint, and their float32 neighbours, both signs): against the library in the round
mode it implements, and against ``ascjax.reference`` (the documented rules) in every mode.
"""

import functools
import zlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import ascjax
from ascjax import FORMATS
from ascjax import reference as ref

N_RANDOM = 1_000_000
CODECS = ascjax.CODEC_FORMATS
READINGS = [(n, r) for n in CODECS for r in (("cast", "format") if n == "fp8_e8m0_t"
                                            else ("cast",))]
MODES = [(n, m, r) for n, r in READINGS for m in FORMATS[n].round_modes if m != "hybrid"]


def _uint(bits: int):
    return np.uint8 if bits <= 8 else np.uint16


def hexdiff(x, got, want):
    """None if equal, else a message naming the first differing inputs in hex."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype)
    bad = np.flatnonzero(got != want)
    if not bad.size:
        return None
    xs = np.asarray(x).reshape(-1)
    rows = [f"x=0x{int(xs[i].view(np.uint32)):08x} ({xs[i]!r}): got 0x{int(got.flat[i]):x}, "
            f"want 0x{int(want.flat[i]):x}" for i in bad[:6]]
    return f"{bad.size} of {got.size} differ\n" + "\n".join(rows)


@functools.cache
def inputs(name: str, e8m0: str = "cast") -> np.ndarray:
    """float32 test values: every float16, random patterns, and every tie and boundary."""
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    every_half = np.arange(1 << 16, dtype=np.uint16).view(np.float16).astype(np.float32)
    raw = rng.integers(0, 1 << 32, N_RANDOM // 2, dtype=np.uint64).astype(np.uint32)
    if name == "int4b_t":
        points = np.arange(-20, 20, 0.25)
        lo_e, hi_e = -4, 5
    else:
        grid, _, nxt = ref.value_grid(name, config=ascjax.Config(e8m0=e8m0))
        points = np.concatenate([grid, [nxt], (grid[:-1] + grid[1:]) / 2, [(grid[-1] + nxt) / 2]])
        positive = grid[grid > 0]
        lo_e, hi_e = int(np.log2(positive[0])) - 3, int(np.log2(nxt)) + 2
    # In range: exponents from below the smallest subnormal to past the overflow point.
    n = N_RANDOM - raw.size
    field = np.clip(rng.integers(lo_e, hi_e + 1, n) + 127, 0, 255).astype(np.uint32)
    in_range = ((rng.integers(0, 2, n).astype(np.uint32) << 31) | (field << 23)
                | rng.integers(0, 1 << 23, n).astype(np.uint32))
    with np.errstate(over="ignore"):
        p = points.astype(np.float32)
    finite = np.isfinite(p)
    p = p[finite]
    assert np.all(p.astype(np.float64) == points[finite])  # every tie is a float32
    ties = np.concatenate([p, np.nextafter(p, np.float32(np.inf)),
                           np.nextafter(p, np.float32(-np.inf))])
    specials = np.array([0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFA12345, 0x7F800000, 0xFF800000,
                         0x00000001, 0x80000001, 0x007FFFFF], np.uint32).view(np.float32)
    return np.concatenate([every_half, raw.view(np.float32), in_range.view(np.float32),
                           ties, -ties, specials])


def library_encode(x: np.ndarray, name: str) -> np.ndarray:
    t = np.dtype(ref.library_type(name))
    with np.errstate(all="ignore"):
        return x.astype(t).view(_uint(8 * t.itemsize))


# --- decode -----------------------------------------------------------------------------------

@pytest.mark.parametrize("name,e8m0", READINGS)
def test_decode_every_code_matches_library(name, e8m0, variant):
    f = FORMATS[name]
    codes = np.arange(1 << f.bits).astype(_uint(f.bits))
    got = variant(lambda c: ascjax.decode(c, name, config=ascjax.Config(e8m0=e8m0)))(codes)
    want = ref.decode(codes, name, config=ascjax.Config(e8m0=e8m0))
    assert got.dtype == jnp.float32
    assert hexdiff(codes, np.asarray(got).view(np.uint32), want.view(np.uint32)) is None


def test_decode_reads_storage_types_and_checks_codes():
    x = np.array([1.5, -0.0, np.inf], np.float16)
    np.testing.assert_array_equal(np.asarray(ascjax.decode(x, "half")).view(np.uint32),
                                  x.astype(np.float32).view(np.uint32))
    with pytest.raises(ValueError, match="unpack_nibbles"):
        ascjax.decode(np.array([0x10], np.uint8), "fp4x2_e2m1_t")
    with pytest.raises(TypeError, match="no value codec"):
        ascjax.decode(np.array([1], np.uint8), "int8_t")


# --- encode -----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", CODECS)
def test_encode_matches_library(name):
    """In the library's own round mode; where a documented rule differs, the rule is checked."""
    f = FORMATS[name]
    e8m0 = "format" if name == "fp8_e8m0_t" else "cast"  # ml_dtypes implements the format
    x = inputs(name, e8m0)
    got = np.asarray(ascjax.encode(x, name, round_mode=f.reference_mode,
                                   config=ascjax.Config(e8m0=e8m0)))
    want = library_encode(x, name)
    same = np.ones(x.shape, bool)
    if name in ("half", "fp4x2_e2m1_t", "fp4x2_e1m2_t"):
        same &= ~np.isnan(x)  # NumPy keeps NaN payloads; fp4 libraries disagree on NaN's sign
    if name == "int4b_t":
        same &= np.abs(x) < 8  # ml_dtypes wraps out-of-range integers
    if name == "fp8_e8m0_t":
        a = np.abs(x)  # ml_dtypes rounds every value in (2**-127, 2**-126) up
        same &= ~((a > 2.0 ** -127) & (a < 2.0 ** -126))
    assert hexdiff(x[same], got[same], want[same]) is None
    rule = ref.encode(x[~same], name, round_mode=f.reference_mode,
                      config=ascjax.Config(e8m0=e8m0))
    assert hexdiff(x[~same], got[~same], rule) is None


@pytest.mark.parametrize("name,mode,e8m0", MODES)
def test_encode_matches_reference(name, mode, e8m0):
    x = inputs(name, e8m0)
    got = ascjax.encode(x, name, round_mode=mode, config=ascjax.Config(e8m0=e8m0))
    want = ref.encode(x, name, round_mode=mode, config=ascjax.Config(e8m0=e8m0))
    assert hexdiff(x, got, want) is None


@pytest.mark.parametrize("name,e8m0", READINGS)
def test_encode_saturate_matches_reference(name, e8m0):
    x = inputs(name, e8m0)
    got = ascjax.encode(x, name, saturate=True, config=ascjax.Config(e8m0=e8m0))
    want = ref.encode(x, name, saturate=True, config=ascjax.Config(e8m0=e8m0))
    assert hexdiff(x, got, want) is None


def test_hifloat8_hybrid_matches_vendor_reference():
    x = inputs("hifloat8_t")
    assert hexdiff(x, ascjax.encode(x, "hifloat8_t", round_mode="hybrid"),
                   ref.encode(x, "hifloat8_t", round_mode="hybrid")) is None
    h = np.arange(1 << 16, dtype=np.uint16).view(np.float16)  # Cast from half: its own rule
    want = ref.encode(h, "hifloat8_t", round_mode="hybrid")
    assert hexdiff(h, ascjax.encode(h, "hifloat8_t", round_mode="hybrid"), want) is None
    assert hexdiff(h, ascjax.encode(jnp.asarray(h), "hifloat8_t", round_mode="hybrid"),
                   want) is None


def test_hifloat8_vendor_rules():
    f32 = np.float32
    below = np.nextafter(f32(2.0 ** -23), f32(0))
    x = np.array([40960, np.nextafter(f32(40960), f32(0)), 2.0 ** -23, below, 1.0625, -1.1875,
                  -0.0, np.inf, np.nan, -65504], f32)
    got = np.asarray(ascjax.encode(x, "hifloat8_t"))
    np.testing.assert_array_equal(got, [0x6F, 0x6E, 0x01, 0x00, 0x09, 0x8A, 0x00, 0x6F, 0x80, 0xEF])
    sat = np.asarray(ascjax.encode(x, "hifloat8_t", saturate=True))
    np.testing.assert_array_equal(sat, [0x6E, 0x6E, 0x01, 0x00, 0x09, 0x8A, 0x00, 0x6E, 0x00, 0xEE])


def test_e8m0_readings():
    x = np.array([0.0, 2.0 ** -127, 2.0 ** -128, 1.0, -1.0, np.inf], np.float32)
    np.testing.assert_array_equal(np.asarray(ascjax.encode(x, "fp8_e8m0_t")),
                                  [0x00, 0x00, 0x00, 0x7F, 0xFF, 0xFF])
    fmt_reading = ascjax.Config(e8m0="format")
    np.testing.assert_array_equal(np.asarray(ascjax.encode(x, "fp8_e8m0_t", config=fmt_reading)),
                                  [0xFF, 0x00, 0x00, 0x7F, 0xFF, 0xFF])
    np.testing.assert_array_equal(np.asarray(ascjax.encode(x, "fp8_e8m0_t", saturate=True)),
                                  [0x00, 0x00, 0x00, 0x7F, 0x00, 0xFE])
    zero = np.array([0], np.uint8)
    assert np.asarray(ascjax.decode(zero, "fp8_e8m0_t")).view(np.uint32)[0] == 0
    assert np.asarray(ascjax.decode(zero, "fp8_e8m0_t", config=fmt_reading)).view(np.uint32)[0] \
        == 0x00400000


@pytest.mark.parametrize("name", ["half", "bfloat16_t", "fp8_e4m3fn_t", "hifloat8_t",
                                  "fp4x2_e1m2_t", "int4b_t"])
def test_encode_jit_vmap_and_source_types_agree(name):
    """Eager, jit and vmap agree; half/bfloat16 sources widen exactly (NumPy or JAX)."""
    x = inputs(name)[:65536 * 3].reshape(3, -1)
    eager = np.asarray(ascjax.encode(x, name))
    jitted = jax.jit(lambda v: ascjax.encode(v, name))(jnp.asarray(x))
    mapped = jax.vmap(lambda v: ascjax.encode(v, name))(jnp.asarray(x))
    assert hexdiff(x, jitted, eager) is None and hexdiff(x, mapped, eager) is None
    for t in (np.float16, np.dtype(ascjax.FORMATS["bfloat16_t"].storage)):
        every = np.arange(1 << 16, dtype=np.uint16).view(t)
        want = np.asarray(ascjax.encode(every.astype(np.float32), name))
        assert hexdiff(every, ascjax.encode(every, name), want) is None
        if name != "hifloat8_t" or t != np.float16:  # hybrid aside, the source type is moot
            assert hexdiff(every, ascjax.encode(jnp.asarray(every), name), want) is None


def test_encode_checks_arguments():
    with pytest.raises(ValueError, match="round_mode='rint' is not offered.*hifloat8_t"):
        ascjax.encode([1.0], "hifloat8_t", round_mode="rint")
    with pytest.raises(ValueError, match="valid: rint"):
        ascjax.encode([1.0], "fp8_e5m2_t", round_mode="trunc")
    with pytest.raises(TypeError, match="no value codec"):
        ascjax.encode([1.0], "float")
    with pytest.raises(ValueError, match="e8m0"):
        ascjax.encode([1.0], "fp8_e8m0_t", config=ascjax.Config(e8m0="zero"))
    with pytest.raises(TypeError, match="float32, float16 or bfloat16"):
        ascjax.encode(jnp.arange(3), "half")


# --- nibble pairs -----------------------------------------------------------------------------

def test_nibble_order_and_round_trip():
    codes = np.arange(512, dtype=np.uint8).reshape(2, 256) & 0xF
    packed = np.asarray(ascjax.pack_nibbles(codes))
    np.testing.assert_array_equal(packed, codes[:, 0::2] | (codes[:, 1::2] << 4))
    np.testing.assert_array_equal(np.asarray(ascjax.pack_nibbles(np.array([1, 0xA]))), [0xA1])
    every_byte = np.arange(256, dtype=np.uint8)
    unpacked = np.asarray(ascjax.unpack_nibbles(every_byte))
    np.testing.assert_array_equal(unpacked[0::2], every_byte & 0xF)  # element 2k: low nibble
    np.testing.assert_array_equal(np.asarray(ascjax.pack_nibbles(unpacked)), every_byte)
    int4 = np.array([-8, 7, -1, 0])  # two's complement values pack as their codes
    np.testing.assert_array_equal(np.asarray(ascjax.pack_nibbles(int4)), [0x78, 0x0F])
    with pytest.raises(ValueError, match="even"):
        ascjax.pack_nibbles(np.zeros(3, np.uint8))
