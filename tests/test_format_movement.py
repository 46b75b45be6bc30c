"""Data movement never touches bits: gather and squeeze carry every code of every type unchanged.

Every code of every 8- and 16-bit type (NaN payloads, -0, subnormals, hifloat8's NaN and inf),
every byte pair of the 4-bit types, and adversarial 32-bit patterns go through ``gather``,
the register DataBlock gather and ``squeeze_and_storeunalign`` and come back bit for bit. (The
seed's gather table has no 4-bit row, so nibble pairs are moved by the others only.)
"""

import jax
import numpy as np
import pytest

import ascjax
from ascjax import FORMATS

RNG = np.random.default_rng(3)
GATHER = [row[1:] for row in ascjax.INSTRUCTIONS["asc_gather"].types
          if row[0] == "UB -> register" and row[1] == row[2]]
SQUEEZE = [row[0] for row in ascjax.INSTRUCTIONS["squeeze_and_storeunalign"].types]
DATABLOCK = [row[0] for row in ascjax.INSTRUCTIONS["gather_datablock"].types
             if row[1].startswith("register")]
_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32}


def patterns(name: str) -> np.ndarray:
    """Unsigned bit patterns (one lane each) covering every code of ``name`` where feasible."""
    width = FORMATS[name].width
    if width <= 2:
        return np.arange(1 << (8 * width), dtype=_UINT[width])
    specials = np.array([0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFA12345, 0x7F800000, 0x80000000,
                         0x00000001, 0x807FFFFF, 0x00800000, 0x7F7FFFFF], np.uint32)
    return np.concatenate([specials, RNG.integers(0, 1 << 32, 64 * 16 - specials.size,
                                                  dtype=np.uint64).astype(np.uint32)])


def as_storage(bits: np.ndarray, name: str) -> np.ndarray:
    return bits.view(FORMATS[name].storage_dtype)


def bits_of(x) -> np.ndarray:
    x = np.asarray(x)
    return x.view(_UINT[x.dtype.itemsize])


@pytest.mark.parametrize("dst,src,idx", GATHER, ids=["-".join(r) for r in GATHER])
def test_gather_moves_every_code_unchanged(dst, src, idx, variant):
    data = patterns(src)
    lanes = FORMATS[idx].lanes
    rows = max(8, -(-data.size // lanes))  # every code at least once, several masks
    index = RNG.permutation(np.resize(np.arange(data.size), rows * lanes))
    index = index.reshape(-1, lanes).astype(FORMATS[idx].storage_dtype)
    mask = RNG.random(index.shape) < 0.8
    mask[0] = True
    out = variant(lambda s, i, m: ascjax.asc_gather(s, i, m, dtype=src))(as_storage(data, src),
                                                                     index, mask)
    want = np.where(mask, data[index.astype(np.int64)], 0).astype(data.dtype)
    if FORMATS[src].width < FORMATS[idx].width:  # value i lands in element 2i
        want = np.stack([want, np.zeros_like(want)], -1).reshape(want.shape[0], -1)
    np.testing.assert_array_equal(bits_of(out), want)


@pytest.mark.parametrize("name", DATABLOCK)
def test_datablock_gather_moves_every_code_unchanged(name, variant):
    """asc_gather_datablock on registers (blocks moved at the type's own width): every code
    from a UB of all of them, each register's 8 blocks at random offsets, some masked off;
    eager, jit and under vmap."""
    data = patterns(name)
    epb = 32 // FORMATS[name].width
    n_blocks = data.size // epb
    # every block at least once (16-bit types: 4096 blocks, 512 registers), the same count for
    # every type: the eager call's argument checks on index and mask, which run op by op
    # outside the kernel, then compile once instead of once per count
    registers = 512
    assert registers * 8 >= n_blocks
    index = np.zeros((registers, 64), np.uint32)
    index[:, :8] = RNG.permutation(np.resize(np.arange(n_blocks), registers * 8)).reshape(-1, 8)
    index[:, :8] *= 32
    index[:, 8:] = RNG.integers(0, 1 << 32, (registers, 56), dtype=np.uint64)  # never read
    mask = RNG.random((registers, 256)) < 0.8
    mask[0] = True
    src = as_storage(data, name)
    call = variant(lambda i, m: ascjax.gather_datablock(src, i, m, dtype=name))
    blocks = data.reshape(-1, epb)[index[:, :8] // 32]
    want = np.where(mask[:, 0:32:4, None], blocks, 0).reshape(registers, -1)
    np.testing.assert_array_equal(bits_of(call(index, mask)), want)
    vmapped = jax.vmap(lambda i, m: ascjax.gather_datablock(src, i, m, dtype=name))
    np.testing.assert_array_equal(bits_of(vmapped(index, mask)), want)


@pytest.mark.parametrize("name", SQUEEZE)
def test_squeeze_moves_every_code_unchanged(name):
    fmt = FORMATS[name]
    data = patterns(name)
    # every code at least once in 512 registers for every type (16-bit: 65536 codes of 128
    # lanes), so that the eager wrapper's ops on the batch's counts compile once, not per count
    rows = 512
    assert rows * fmt.lanes >= data.size
    regs = RNG.permutation(np.resize(data, rows * fmt.lanes)).reshape(rows, fmt.lanes)
    mask = RNG.random(regs.shape) < 0.7
    mask[0] = True
    ub = np.zeros(2 * ascjax.VL_BYTES, np.uint8)
    state = ascjax.squeeze_and_storeunalign_init()
    ub, dst, state = ascjax.squeeze_and_storeunalign(ub, 0, state, as_storage(regs, name), mask,
                                                     dtype=name)
    ub, state = ascjax.squeeze_and_storeunalign_finalize(ub, 0, state)
    order = np.argsort(~mask, axis=-1, kind="stable")
    count = mask.sum(-1, keepdims=True)
    want = np.where(np.arange(fmt.lanes) < count, np.take_along_axis(regs, order, -1), 0)
    np.testing.assert_array_equal(bits_of(dst), want.astype(regs.dtype))
    stored = np.asarray(ub)
    want_bytes = want.astype(regs.dtype).view(np.uint8)  # little-endian, as the UB
    np.testing.assert_array_equal(stored[:, :ascjax.VL_BYTES], want_bytes)
    assert not stored[:, ascjax.VL_BYTES:].any()
    np.testing.assert_array_equal(np.asarray(ascjax.get_squeeze_status(state)),
                                  count[:, 0] * fmt.width)


@pytest.mark.parametrize("name", ["float", "half", "bfloat16_t", "fp8_e4m3fn_t"])
def test_place_low_moves_every_code_unchanged(name, variant):
    """The register reductions' in-place placement (``lanes.place_low``, after the pair sums)
    writes every code into the low lanes bit for bit and +0 above, eager and jit."""
    from ascjax._src.isa.lanes import place_low

    fmt = FORMATS[name]
    values = as_storage(patterns(name), name).reshape(-1, fmt.lanes // 2)
    out = bits_of(variant(lambda v: place_low(v, fmt.lanes))(values))
    np.testing.assert_array_equal(out[:, :fmt.lanes // 2], bits_of(values))
    assert not out[:, fmt.lanes // 2:].any()


def test_place_low_under_vmap_is_one_update():
    """vmap (nested, or over another axis) adds a leading axis to the same update: the bits of
    the batched call and no scatter (a batched offset would make one, 1.3x slower or more)."""
    from ascjax._src.isa.lanes import place_low

    values = as_storage(patterns("float"), "float").reshape(4, 8, 32)
    place = lambda v: place_low(v, 64)
    want = bits_of(place(values))
    np.testing.assert_array_equal(bits_of(jax.vmap(jax.vmap(place))(values)), want)
    moved = jax.vmap(place, in_axes=1)(values)
    np.testing.assert_array_equal(bits_of(moved), want.transpose(1, 0, 2))
    assert "scatter" not in jax.jit(jax.vmap(place)).lower(values).as_text()


def test_kernel_outputs_keep_bfloat16_codes_through_a_broadcast(variant):
    """XLA's CPU backend runs a fusion that broadcasts bfloat16 (or concatenates copies of it)
    in float32: 0x8074 -> 0x8000, 0x7F81 -> 0x7FC1, even when it moves uint16 patterns and only
    bitcasts at the end. ``lanes.kernel`` gives bfloat16 outputs a buffer first."""
    from jax import lax

    from ascjax._src.isa.lanes import kernel

    codes = patterns("bfloat16_t").reshape(-1, 16)  # short rows: XLA shuffles them
    spread = lambda _, bits: lax.bitcast_convert_type(
        lax.broadcast_in_dim(bits, (bits.shape[0], 3, 16), (0, 2)), jax.numpy.bfloat16)
    out = bits_of(variant(lambda b: kernel(spread)(None, b))(codes))
    np.testing.assert_array_equal(out, np.broadcast_to(codes[:, None], out.shape))


FP8 = ["fp8_e5m2_t", "fp8_e4m3fn_t", "fp8_e8m0_t"]


@pytest.mark.parametrize("name", FP8)
def test_fp8_bytes_given_as_uint8_move_unchanged(name, variant):
    """An NPU dump's fp8 bytes, uint8 with ``dtype=`` (XLA 0.11 quiets e5m2 NaNs when it slices
    a float8 array): every code, the NaNs 0x7F / 0xFF included, comes back as uint8 bit for bit,
    as hifloat8's do; the float8 array gives the same bits. Once refused: "src1 has dtype uint8,
    but fp8_e5m2_t is stored as float8_e5m2"."""
    codes = np.arange(256, dtype=np.uint8)
    mask = RNG.random(256) < 0.6
    mask[[0x7F, 0xFF]] = True
    packed = np.zeros(256, np.uint8)
    packed[:mask.sum()] = codes[mask]  # the selected codes in order, then zeros
    got = variant(lambda s, m: ascjax.squeeze_register(s, m, dtype=name))(codes, mask)
    assert got.dtype == np.uint8
    np.testing.assert_array_equal(got, packed)
    as_float8 = ascjax.squeeze_register(codes.view(FORMATS[name].storage_dtype), mask, dtype=name)
    np.testing.assert_array_equal(bits_of(as_float8), packed)

    index = RNG.permutation(np.resize(np.arange(256), 4 * 128)).reshape(4, 128).astype(np.uint16)
    on = RNG.random(index.shape) < 0.8
    want = np.where(on, index, 0).astype(np.uint8)  # codes[i] == i
    want = np.stack([want, np.zeros_like(want)], -1).reshape(4, 256)  # value i to element 2i
    for dst_dtype in (None, name):
        got = variant(lambda s, i, m, d=dst_dtype: ascjax.asc_gather(s, i, m, dtype=name,
                                                                     dst_dtype=d))(codes, index, on)
        assert got.dtype == np.uint8
        np.testing.assert_array_equal(got, want)

    lanes = RNG.permutation(256).astype(np.uint8)  # register form: dst[i] = src[index[i]]
    got = variant(lambda s, i: ascjax.asc_gather(s, i, dtype=name))(codes, lanes)
    assert got.dtype == np.uint8
    np.testing.assert_array_equal(got, lanes)

    ub = np.zeros(2 * ascjax.VL_BYTES, np.uint8)
    ub, dst, state = ascjax.squeeze_and_storeunalign(
        ub, 0, ascjax.squeeze_and_storeunalign_init(), codes, mask, dtype=name)
    ub, _ = ascjax.squeeze_and_storeunalign_finalize(ub, 0, state)
    np.testing.assert_array_equal(dst, packed)
    np.testing.assert_array_equal(np.asarray(ub)[:ascjax.VL_BYTES], packed)


def test_uint8_without_dtype_is_still_uint8_t(variant):
    """No ``dtype=``: uint8 data is uint8_t, as before (its gather table has the zero-extending
    uint8 -> uint16 row, which fp8 has not), and gather_mask moves every uint8 code."""
    codes = np.arange(256, dtype=np.uint8)
    index = np.arange(128, dtype=np.uint16)
    wide = variant(lambda s: ascjax.asc_gather(s, index, np.ones(128, bool),
                                               dst_dtype="uint16_t"))(codes)
    np.testing.assert_array_equal(wide, np.arange(128, dtype=np.uint16))
    with pytest.raises(TypeError, match=r"\(dst=uint16_t, src=fp8_e5m2_t, index=uint16_t\) is "
                                        r"not a supported combination"):
        ascjax.asc_gather(codes, index, np.ones(128, bool), dst_dtype="uint16_t",
                          dtype="fp8_e5m2_t")
    assert ascjax.squeeze_register(codes, np.ones(256, bool)).dtype == np.uint8
    pattern = np.full(32, 0xAA, np.uint8)  # odd elements of each repeat
    dst, count = variant(lambda d, s: ascjax.gather_mask(d, s, pattern, False, 0, (1, 1, 8, 0),
                                                         config=ascjax.Config(product="950")))(
        np.zeros(256, np.uint8), codes)
    assert dst.dtype == np.uint8 and int(count) == 128
    np.testing.assert_array_equal(np.asarray(dst)[:128], codes[1::2])


@pytest.mark.parametrize("name", ["fp8_e5m2_t", "hifloat8_t"])
def test_uint8_storage_has_no_gradient(name):
    """uint8 bits are not differentiable: JAX's own refusal, and a float0 (zero-size) tangent
    and cotangent, for fp8 given as uint8 exactly as for hifloat8."""
    codes, mask = np.arange(256, dtype=np.uint8), np.ones(256, bool)
    f = lambda s: ascjax.squeeze_register(s, mask, dtype=name)
    with pytest.raises(TypeError, match="grad requires real- or complex-valued inputs"):
        jax.grad(lambda s: f(s).sum())(codes)
    zero = np.zeros(256, jax.dtypes.float0)
    assert jax.jvp(f, (codes,), (zero,))[1].dtype == jax.dtypes.float0
    assert jax.vjp(f, codes)[1](zero)[0].dtype == jax.dtypes.float0
