"""Random and adversarial registers, masks and bit comparisons for the property tests.

Hypothesis draws a seed and a few knobs; NumPy then fills a whole batch of registers at once, so
one example exercises many registers with a single (vectorized, jitted) fast call.
"""

from __future__ import annotations

import contextlib
import os
import pathlib
import re
import tempfile

import jax
import ml_dtypes
import numpy as np
from hypothesis import settings

import ascjax

# XLA's CPU backend may carry a bfloat16 array that a loop reads (a scan's xs, a fori_loop's
# slices) as float32; on a CPU with AVX512-BF16 its conversion back flushes subnormals, whatever
# the FTZ setting. Our code moves bfloat16 through loops as bit patterns (orders.stored_bits).
_WHILE = re.compile(r"stablehlo\.while\(.*\) : (.*)$", re.MULTILINE)


def bfloat16_loops(stablehlo: str) -> list[str]:
    """The operand types of each while loop in a StableHLO text that carries a bfloat16 array.

    Checks on any CPU what only fails on one with AVX512-BF16: JAX lowers a loop's every
    operand, the arrays its body reads included, as the while's operands."""
    return [types for types in _WHILE.findall(stablehlo) if "bf16" in types]


@contextlib.contextmanager
def programs_compiled():
    """The StableHLO texts of every program JAX compiles inside the block (its IR dump), filled
    in when the block ends. Caches are cleared first, so every program is lowered again."""
    texts: list[str] = []
    jax.clear_caches()
    before = jax.config.values["jax_dump_ir_to"]
    with tempfile.TemporaryDirectory() as dump:
        jax.config.update("jax_dump_ir_to", dump)
        try:
            yield texts
        finally:
            jax.config.update("jax_dump_ir_to", before)
            texts.extend(p.read_text() for p in sorted(pathlib.Path(dump).glob("*.mlir")))


def few_examples(cap: int) -> settings:
    """Hypothesis settings for a test whose examples each compile or sum a lot: at most ``cap``
    examples (and no more than the profile's) by default; ``ASCJAX_EXAMPLES`` (the deep
    profile) still sets them."""
    deep = os.environ.get("ASCJAX_EXAMPLES")
    return settings(max_examples=int(deep) if deep else min(cap, settings.default.max_examples))


UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def lane_bytes(name: str) -> int:
    """Bytes per register lane (4-bit types are byte pairs)."""
    return max(ascjax.FORMATS[name].bits // 8, 1)


def lanes_of(name: str) -> int:
    return 256 // lane_bytes(name)


def storage(name: str) -> np.dtype:
    return np.dtype(ascjax.FORMATS[name].storage)


def bits_of(x) -> np.ndarray:
    """The bit patterns of an array (NumPy or JAX) as unsigned integers of the same width."""
    x = np.asarray(x)
    return x.view(UINT[x.dtype.itemsize])


def assert_bits_equal(got, want, what: str = "") -> None:
    """Bit-for-bit equality (never allclose); names the first differing lanes in hex."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    g, w = bits_of(got), bits_of(want)
    bad = np.argwhere(g != w)
    if bad.size:
        digits = 2 * got.dtype.itemsize
        rows = [f"  at {tuple(int(i) for i in ix)}: got 0x{int(g[tuple(ix)]):0{digits}x}, "
                f"want 0x{int(w[tuple(ix)]):0{digits}x}" for ix in bad[:8]]
        raise AssertionError(f"{what}: {len(bad)} lane(s) differ\n" + "\n".join(rows))


def float_specials(name: str) -> np.ndarray:
    """Adversarial bit patterns of an IEEE-like format: NaN payloads, +-inf, -0, subnormals..."""
    f = ascjax.FORMATS[name]
    e, m = f.exponent_bits, f.mantissa_bits
    sign = 1 << (e + m)
    exp_all = ((1 << e) - 1) << m
    one = ((1 << (e - 1)) - 1) << m
    pos = [0, 1, (1 << m) - 1, 1 << m, (1 << m) | 1,         # 0, subnormals, smallest normals
           exp_all - 1, exp_all - 2, exp_all - (1 << m),      # max finite and its neighbours
           exp_all,                                           # inf
           exp_all | 1, exp_all | (1 << (m - 1)),             # sNaN, qNaN
           exp_all | (1 << (m - 1)) | 1, exp_all | ((1 << m) - 1),  # NaN payloads
           one, one | 1, one - 1, one + (1 << m)]             # 1, 1+ulp, 1-ulp/2, 2
    return np.array(pos + [p | sign for p in pos], UINT[(e + m + 1) // 8])


def int_specials(name: str) -> np.ndarray:
    info = np.iinfo(storage(name))
    vals = [0, 1, -1, 2, info.max, info.max - 1, info.min, info.min + 1]
    vals = [v for v in vals if info.min <= v <= info.max]
    return np.array(vals, storage(name))


def _float_values(rng, name: str, n: int) -> np.ndarray:
    """Bits of one register of floats, in one of several regimes."""
    f = ascjax.FORMATS[name]
    e, m = f.exponent_bits, f.mantissa_bits
    width = (e + m + 1) // 8
    emax = (1 << e) - 2                                   # largest finite exponent field
    mode = rng.integers(7)
    sign = rng.integers(0, 2, n, dtype=np.uint64) << (e + m)
    mant = rng.integers(0, 1 << m, n, dtype=np.uint64)
    if mode == 0:                                         # any bits
        bits = rng.integers(0, 1 << (8 * width), n, dtype=np.uint64)
    elif mode == 1:                                       # close exponents: rounding, ties
        lo = int(rng.integers(1, emax))
        ex = rng.integers(lo, min(lo + m + 3, emax + 1), n, dtype=np.uint64)
        bits = sign | ex << m | mant
    elif mode == 2:                                       # subnormal and tiny normal
        ex = rng.integers(0, 3, n, dtype=np.uint64)
        bits = sign | ex << m | mant
    elif mode == 3:                                       # near overflow
        ex = rng.integers(emax - 2, emax + 1, n, dtype=np.uint64)
        bits = sign | ex << m | mant
    elif mode == 4:                                       # small integers: exact sums, +-0
        vals = rng.integers(-4, 5, n).astype(storage(name))
        return bits_of(vals).copy()
    elif mode == 5:                                       # specials only
        bits = rng.choice(float_specials(name).astype(np.uint64), n)
    else:                # signed zeros, a few subnormals: sign rules and flush-to-zero
        bits = sign | np.where(rng.random(n) < 0.1, mant, 0).astype(np.uint64)
    return bits.astype(UINT[width])


def register_values(rng, name: str, shape: tuple[int, ...], p_special: float) -> np.ndarray:
    """A batch ``shape = (..., lanes)`` of registers of ``name`` in its storage dtype."""
    fmt = ascjax.FORMATS[name]
    width = lane_bytes(name)
    rows = int(np.prod(shape[:-1], dtype=np.int64))
    n = shape[-1]
    if fmt.kind == "float" and not fmt.packed and fmt.mantissa_bits > 0 and width >= 2:
        bits = np.stack([_float_values(rng, name, n) for _ in range(rows)])
        specials = float_specials(name)
    else:
        # Data-movement formats and integers: uniform bits, plus integer extremes.
        bits = rng.integers(0, 1 << (8 * width), (rows, n), dtype=np.uint64).astype(UINT[width])
        for r in range(rows):
            if fmt.kind in ("int", "uint") and not fmt.packed and rng.integers(3) == 0:
                lo = rng.integers(0, 2)          # near the top or the bottom of the range
                info = np.iinfo(storage(name))
                near = info.max - rng.integers(0, 64, n) if lo else info.min + rng.integers(
                    0, 64, n)
                bits[r] = bits_of(near.astype(storage(name)))
        specials = (bits_of(int_specials(name)) if fmt.kind in ("int", "uint")
                    and not fmt.packed else np.array([0, (1 << (8 * width)) - 1], UINT[width]))
    inject = rng.random(bits.shape) < p_special
    bits = np.where(inject, rng.choice(specials, bits.shape), bits).astype(UINT[width])
    return bits.reshape(shape).view(storage(name))


def masks(rng, shape: tuple[int, ...], block: int) -> np.ndarray:
    """Per-element masks ``(..., lanes)``: all on, all off, random density, per-block mixes."""
    rows = int(np.prod(shape[:-1], dtype=np.int64))
    n = shape[-1]
    out = np.zeros((rows, n), bool)
    for r in range(rows):
        mode = rng.integers(5)
        if mode == 0:
            out[r] = True
        elif mode == 1:
            out[r] = False
        elif mode == 2:
            out[r] = rng.random(n) < rng.choice([0.05, 0.5, 0.95])
        else:                           # each block all on, all off or random
            kind = rng.integers(0, 3, -(-n // block)).repeat(block)[:n]
            out[r] = np.where(kind == 0, True, np.where(kind == 1, False, rng.random(n) < 0.5))
    return out.reshape(shape)


def hardware_mask(elements: np.ndarray, width: int) -> np.ndarray:
    """Canonical hardware form ``(..., 256)``: bit ``i*width`` set for active element i."""
    hw = np.zeros(elements.shape[:-1] + (256,), bool)
    hw[..., ::width] = elements
    return hw


# --- bits for the loop models (their one scalar add is ascjax.reference.add) -----------------

DTYPES = {"half": np.float16, "bfloat16_t": ml_dtypes.bfloat16, "float": np.float32,
          "fp8_e5m2_t": ml_dtypes.float8_e5m2, "fp8_e4m3fn_t": ml_dtypes.float8_e4m3fn}
NAN_BITS = {"half": 0x7E00, "bfloat16_t": 0x7FC0, "float": 0x7FC00000, "fp8_e5m2_t": 0x7E,
            "fp8_e4m3fn_t": 0x7F}


def bits(x, name):
    """Bit patterns, every NaN replaced by the emulator's canonical NaN."""
    x = np.asarray(x, DTYPES[name])
    b = x.view(f"uint{x.dtype.itemsize * 8}").astype(np.int64)
    return np.where(np.isnan(x.astype(np.float32)), NAN_BITS[name], b)

