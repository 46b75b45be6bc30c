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
    registers = max(8, -(-n_blocks // 8))
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
    regs = RNG.permutation(np.resize(data, max(data.size, 8 * fmt.lanes))).reshape(-1, fmt.lanes)
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
