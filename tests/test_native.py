"""The compaction kernels (``ascjax/_src/native``): the same bits as XLA's compaction and as
np.flatnonzero, eager, under jit and vmap, on every width they move; the instructions that
use them (squeeze, GatherMask) bit for bit against the XLA path; gradients still flow; a
failed build falls back with a warning."""

from __future__ import annotations

import fnmatch
import os
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import assert_bits_equal, few_examples

import ascjax
from ascjax._src import native
from ascjax._src.isa.squeeze import word_source_lanes

pytestmark = pytest.mark.skipif(not native.enabled(), reason="no C++ compiler: kernels off")


def _words(bits):
    """uint32 words ``(..., lanes / 32)`` of a bool mask, lane i at bit i % 32."""
    shape = bits.shape[:-1] + (bits.shape[-1] // 32, 32)
    return (bits.reshape(shape) * (1 << np.arange(32, dtype=np.uint64))).sum(-1).astype(np.uint32)


def _masks(rng, rows: int, lanes: int, density: float):
    """Random rows of the density, and the rows that reach the extremes: none, every lane,
    the first lane only, the last lane only, every other lane, the high half."""
    bits = rng.random((rows, lanes)) < density
    for row, pick in zip(bits, (slice(0, 0), slice(None), slice(0, 1), slice(-1, None),
                                slice(None, None, 2), slice(lanes // 2, None)), strict=False):
        row[:] = False
        row[pick] = True
    return bits


def _runs(fn, *args):
    """``fn`` eagerly, under jit and under vmap over the rows: three results."""
    return [fn(*args), jax.jit(fn)(*args), jax.vmap(fn)(*args)]


def _uses(fn, target: str, *args) -> bool:
    return f'custom_call_target="{target}"' in jax.jit(fn).lower(*args).as_text("hlo")


@few_examples(12)
@given(seed=st.integers(0, 2**32 - 1), n_words=st.sampled_from([1, 2, 3, 8, 9, 16, 32, 33, 64]),
       density=st.sampled_from([0.0, 0.03, 0.5, 0.97, 1.0]))
def test_the_source_lanes_kernel_finds_each_set_bit_as_the_xla_search_does(seed, n_words,
                                                                           density):
    """Every lane's source (past the count too: lanes - 1) and the count, uint8 sources up to
    256 lanes and uint16 past them, against np.flatnonzero and the XLA search."""
    rng = np.random.default_rng(seed)
    bits = _masks(rng, 9, 32 * n_words, density)
    words = jnp.asarray(_words(bits))
    assert _uses(word_source_lanes, "ascjax_source_lanes", words)
    with native.native_kernels_off():
        xla_source, xla_count = jax.jit(word_source_lanes)(words)
    for source, count in _runs(word_source_lanes, words):
        assert_bits_equal(np.asarray(source), np.asarray(xla_source), "source")
        assert_bits_equal(np.asarray(count), np.asarray(xla_count), "count")
        for row, src, n in zip(bits, np.asarray(source), np.asarray(count), strict=True):
            assert n == row.sum()
            assert_bits_equal(src[:n], np.flatnonzero(row).astype(np.int32), "set bits")


def _no_portable(n: int):
    """A portable path that gets every bit wrong: only the kernel can pass these tests."""
    def zeros(v, w, f):
        return jnp.zeros(v.shape[:-1] + (n,), v.dtype), jnp.zeros(v.shape[:-1], jnp.int32)
    return zeros


def _compressed(values, bits, fill, n):
    """The reference: each row's selected values from the front, then fill (or zeros)."""
    out = np.zeros(values.shape[:-1] + (n,), values.dtype) if fill is None else fill.copy()
    for at in np.ndindex(values.shape[:-1]):
        kept = values[at][bits[at]][:n]
        out[at][:kept.size] = kept
    return out


def _any_bits(rng, dtype, shape):
    """Every bit pattern of ``dtype`` equally likely: NaN payloads, -0, subnormals, inf."""
    width = np.dtype(dtype).itemsize
    return rng.integers(0, 1 << 8 * width, shape, dtype=np.uint64).astype(
        f"uint{8 * width}").view(dtype)


@few_examples(16)
@given(seed=st.integers(0, 2**32 - 1),
       dtype=st.sampled_from([np.uint8, np.int8, ml_dtypes.float8_e5m2, np.float16,
                              ml_dtypes.bfloat16, np.int16, np.float32, np.uint32]),
       n_words=st.sampled_from([1, 4, 8, 32]), n_delta=st.sampled_from([0, -5, 7, "one"]),
       density=st.sampled_from([0.0, 0.1, 0.5, 1.0]), fill=st.booleans())
def test_the_compress_kernel_moves_every_bit_as_the_xla_path_does(seed, dtype, n_words,
                                                                  n_delta, density, fill):
    """Values of every width (as themselves, not bitcast), outputs shorter and longer than the
    values, fill or zeros past the count, a batch of two axes: against a NumPy reference and the
    portable path, eager, under jit and under vmap."""
    rng = np.random.default_rng(seed)
    lanes = 32 * n_words
    n = 1 if n_delta == "one" else lanes + n_delta
    bits = _masks(rng, 12, lanes, density).reshape(3, 4, lanes)
    values = _any_bits(rng, dtype, bits.shape)
    fills = _any_bits(rng, dtype, bits.shape[:-1] + (n,)) if fill else None
    want = _compressed(values, bits, fills, n)

    def call(v, w, f):
        return native.compress(v, w, f, n, _no_portable(n))

    args = (jnp.asarray(values), jnp.asarray(_words(bits)),
            None if fills is None else jnp.asarray(fills))
    assert _uses(lambda v, w: call(v, w, args[2]), "ascjax_compress", *args[:2])
    for out, count in _runs(call, *args):
        assert_bits_equal(np.asarray(out), want, np.dtype(dtype).name)
        assert_bits_equal(np.asarray(count), bits.sum(-1, dtype=np.int32), "count")


def test_the_kernels_split_many_rows_over_the_thread_pool():
    """Enough rows for many chunks (a chunk is 256 KB of rows), uneven at the end."""
    rng = np.random.default_rng(7)
    bits = rng.random((3001, 1024)) < 0.3
    bits[1234] = True
    values = _any_bits(rng, np.float16, bits.shape)
    out, count = jax.jit(lambda v, w: native.compress(v, w, None, 1024, _no_portable(1024)))(
        jnp.asarray(values), jnp.asarray(_words(bits)))
    assert_bits_equal(np.asarray(out), _compressed(values, bits, None, 1024), "rows")
    source, count2 = jax.jit(word_source_lanes)(jnp.asarray(_words(bits)))
    assert_bits_equal(np.asarray(count), bits.sum(-1, dtype=np.int32), "count")
    assert_bits_equal(np.asarray(count2), bits.sum(-1, dtype=np.int32), "count")
    assert_bits_equal(np.asarray(source[1234]), np.arange(1024, dtype=np.int32), "full row")


def _blocks_reference(table, offsets, keep):
    """The DataBlock gather: block k the 32 bytes at byte offsets[..., k] of table, or 0."""
    raw = table.view(np.uint8)
    keep = np.broadcast_to(keep, offsets.shape)
    out = np.zeros(offsets.shape[:-1] + (8, 32), np.uint8)
    for at in np.ndindex(offsets.shape):
        if keep[at]:
            out[at] = raw[offsets[at]:offsets[at] + 32]
    return out.reshape(offsets.shape[:-1] + (256,)).view(table.dtype)


@few_examples(12)
@given(seed=st.integers(0, 2**32 - 1),
       dtype=st.sampled_from([np.uint8, ml_dtypes.float8_e4m3fn, np.float16, ml_dtypes.bfloat16,
                              np.int16, np.float32, np.int32]),
       blocks=st.sampled_from([1, 2, 64]), density=st.sampled_from([0.0, 0.5, 1.0]))
def test_the_block_gather_kernel_moves_each_block_as_the_xla_path_does(seed, dtype, blocks,
                                                                        density):
    """The DataBlock gather (``asc_gather_datablock``'s forward pass) on every width, as the
    values themselves: against a NumPy reference and the portable path, eager, under jit, under
    vmap (the batch as rows), with an unbatched keep, and a table batched under vmap (which
    takes the portable path)."""
    rng = np.random.default_rng(seed)
    table = _any_bits(rng, dtype, (blocks * 32 // np.dtype(dtype).itemsize,))
    offsets = (rng.integers(0, blocks, (3, 5, 8)) * 32).astype(np.uint32)
    keep = rng.random((3, 5, 8)) < density
    want = _blocks_reference(table, offsets, keep)

    def zeros(t, o, k):  # only the kernel can pass
        return jnp.zeros(o.shape[:-1] + (256 // t.dtype.itemsize,), t.dtype)

    def call(t, o, k):
        return native.block_gather(t, o, k, zeros)

    args = (jnp.asarray(table), jnp.asarray(offsets), jnp.asarray(keep))
    assert _uses(call, "ascjax_block_gather", *args)
    for out in (call(*args), jax.jit(call)(*args),
                jax.vmap(call, in_axes=(None, 0, 0))(*args)):
        assert_bits_equal(np.asarray(out), want, np.dtype(dtype).name)
    shared = jax.vmap(call, in_axes=(None, 0, None))(args[0], args[1], args[2][0])
    assert_bits_equal(np.asarray(shared), _blocks_reference(table, offsets, keep[0]), "shared")

    def portable(t, o, k):  # XLA's gather, for a table per instance
        taken = t.reshape(-1, 32 // t.dtype.itemsize)[(o // 32).astype(jnp.int32)]
        return jnp.where(k[..., None], taken, jnp.zeros((), t.dtype)).reshape(
            o.shape[:-1] + (-1,))

    tables = jnp.stack([args[0], args[0][::-1]])
    batched = jax.vmap(lambda t, o, k: native.block_gather(t, o, k, portable))(
        tables, args[1][:2], args[2][:2])
    assert_bits_equal(np.asarray(batched[1]), _blocks_reference(
        np.asarray(tables[1]), offsets[1], keep[1]), "a table per instance")


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.float32, np.uint8])
def test_gather_datablock_gives_the_xla_paths_bits(dtype):
    """``asc_gather_datablock`` and ``Reg::GatherB`` through the kernel: a register's blocks,
    the masked blocks zero, offsets past src and misaligned ones under out_of_range="ignore"
    (zero blocks, never read), against the XLA path; gradients as with the kernels off."""
    rng = np.random.default_rng(5)
    lanes = 256 // np.dtype(dtype).itemsize
    src = _any_bits(rng, dtype, (40 * lanes // 8,))
    index = np.zeros((6, 64), np.uint32)
    index[:, :8] = rng.integers(0, 40, (6, 8)) * 32
    index[4, 3], index[5, 7] = 40 * 32, 33  # past src; misaligned
    mask = rng.random((6, 256)) < 0.6
    ignore = ascjax.Config(out_of_range="ignore")
    calls = [lambda i, m: ascjax.gather_datablock(src, i, m, config=ignore),
             lambda i, m: ascjax.reg_gather_b(src, i, m, config=ignore)]
    for fn in calls:
        assert _uses(fn, "ascjax_block_gather", index, mask)
        with native.native_kernels_off():
            want = np.asarray(jax.jit(fn)(index, mask))
        for got in (fn(index, mask), jax.jit(fn)(index, mask), jax.vmap(fn)(index, mask)):
            assert_bits_equal(np.asarray(got), want, np.dtype(dtype).name)
    if dtype == np.float32:
        def loss(s):
            return jnp.sum(ascjax.gather_datablock(s, index, mask, config=ignore) ** 2)
        with native.native_kernels_off():
            want = jax.grad(loss)(src)
        assert_bits_equal(np.asarray(jax.grad(loss)(src)), np.asarray(want), "grad")


def _table_reference(table, index, keep):
    """``table[index]`` where ``keep`` and the index lies inside the table, else zeros; each
    register's largest index."""
    inside = index.astype(np.int64) < table.size
    taken = table[np.where(inside, index, 0)]
    out = np.where(keep & inside, taken.view(f"uint{8 * table.itemsize}"), 0)
    return out.astype(f"uint{8 * table.itemsize}").view(table.dtype), index.max(-1).astype(
        np.uint32)


@few_examples(12)
@given(seed=st.integers(0, 2**32 - 1),
       dtype=st.sampled_from([np.uint8, ml_dtypes.float8_e5m2, np.float16, ml_dtypes.bfloat16,
                              np.int16, np.float32, np.int32]),
       index_dtype=st.sampled_from([np.uint16, np.uint32]),
       n_src=st.sampled_from([1, 3, 100, 4096]), lanes=st.sampled_from([1, 7, 16, 64, 131]),
       density=st.sampled_from([0.0, 0.5, 1.0]))
def test_the_table_gather_kernel_moves_each_element_as_the_xla_path_does(
        seed, dtype, index_dtype, n_src, lanes, density):
    """The UB ``asc_gather``'s forward pass on every width, as the values themselves, by uint16
    and uint32 indices, some past the table (zeros, never read; 1-3 elements from its end,
    where a 32-bit gather of a narrow element would reach past it) and large ones (2^31 and up:
    the vector gathers' indices are signed), lane counts off the vector steps: against a NumPy
    reference, eager, under jit, under vmap (the batch as rows), with a keep shared by the
    batch, and a table batched under vmap (the portable path)."""
    rng = np.random.default_rng(seed)
    table = _any_bits(rng, dtype, (n_src,))
    top = np.iinfo(index_dtype).max
    index = rng.integers(0, n_src + 4, (3, 5, lanes)).astype(index_dtype)
    index[0, 0, ::3] = rng.integers(n_src - min(n_src, 3), n_src + 3, index[0, 0, ::3].shape)
    index[1, 1, ::2] = rng.integers(top - 3, top, index[1, 1, ::2].shape, endpoint=True)
    keep = rng.random((3, 5, lanes)) < density
    want = _table_reference(table, index, keep)

    def zeros(t, i, k):  # only the kernel can pass
        batch = jnp.broadcast_shapes(i.shape, k.shape)
        return jnp.zeros(batch, t.dtype), jnp.zeros(batch[:-1], jnp.uint32)

    def call(t, i, k):
        return native.table_gather(t, i, k, zeros)

    args = (jnp.asarray(table), jnp.asarray(index), jnp.asarray(keep))
    assert _uses(lambda *a: call(*a)[0], "ascjax_table_gather", *args)
    for out, high in (call(*args), jax.jit(call)(*args),
                      jax.vmap(call, in_axes=(None, 0, 0))(*args), call(args[0], args[1][1, 2],
                                                                         args[2][1, 2])):
        at = (1, 2) if out.ndim == 1 else ()
        assert_bits_equal(np.asarray(out), want[0][at], np.dtype(dtype).name)
        assert_bits_equal(np.asarray(high), want[1][at], "top")
    shared = jax.vmap(call, in_axes=(None, 0, None))(args[0], args[1], args[2][0, 0])
    assert_bits_equal(np.asarray(shared[0]), _table_reference(table, index, keep[0, 0])[0],
                      "shared keep")

    tables = jnp.stack([args[0], args[0][::-1]])
    per_instance = jax.vmap(lambda t, i, k: native.table_gather(t, i, k, _table_portable))(
        tables, args[1][:2], args[2][:2])
    for got, w in zip(per_instance, _table_reference(np.asarray(tables[1]), index[1], keep[1]),
                      strict=True):
        assert_bits_equal(np.asarray(got[1]), w, "a table per instance")


def _table_portable(t, i, k):
    from ascjax._src.isa.gather import _take_with_top
    return _take_with_top(t, i, k)


@pytest.mark.parametrize("rows", ["float16 <- uint16", "float32 <- uint32",
                                  "bfloat16_t <- uint32", "int16_t <- int8_t", "uint8_t"])
def test_asc_gather_gives_the_xla_paths_bits(rows):
    """The UB ``asc_gather`` and ``Reg::Gather`` through the kernel, on type rows that keep
    src's layout and on those that place it (an 8-bit src into 16-bit lanes, a 16-bit one by
    uint32 indices into every other element): NaN payloads, masked lanes and indices past src
    under out_of_range="ignore", against the XLA path; a bad index still raises, eagerly and
    under jit, naming its lane; gradients as with the kernels off."""
    rng = np.random.default_rng(9)
    dst_dtype, src_dtype, index_dtype = {
        "float16 <- uint16": (None, np.float16, np.uint16),
        "float32 <- uint32": (None, np.float32, np.uint32),
        "bfloat16_t <- uint32": (None, ml_dtypes.bfloat16, np.uint32),
        "int16_t <- int8_t": ("int16_t", np.int8, np.uint16),
        "uint8_t": (None, np.uint8, np.uint16)}[rows]
    src = _any_bits(rng, src_dtype, (300,))
    lanes = 256 // np.dtype(index_dtype).itemsize
    index = rng.integers(0, 310, (6, lanes)).astype(index_dtype)
    mask = rng.random((6, lanes)) < 0.7
    ignore = ascjax.Config(out_of_range="ignore")
    calls = [lambda i, m: ascjax.asc_gather(src, i, m, dst_dtype=dst_dtype, config=ignore)]
    if np.dtype(src_dtype) != np.uint8 and rows != "bfloat16_t <- uint32":
        calls.append(lambda i, m: ascjax.reg_gather(src, i, m, dst_dtype=dst_dtype,
                                                    config=ignore))
    for fn in calls:
        assert _uses(fn, "ascjax_table_gather", index, mask)
        with native.native_kernels_off():
            want = np.asarray(jax.jit(fn)(index, mask))
            shared = np.asarray(jax.jit(fn)(index, mask[0]))  # one mask for every register
        for got in (fn(index, mask), jax.jit(fn)(index, mask), jax.vmap(fn)(index, mask)):
            assert_bits_equal(np.asarray(got), want, str(rows))
        assert_bits_equal(np.asarray(fn(index, mask[0])), shared, f"{rows}, one mask")
    bad = index % np.asarray(300, index_dtype)  # in range but one active lane
    bad[4, 5], mask[4, 5] = 300, True
    for run in (ascjax.asc_gather, jax.jit(ascjax.asc_gather)):
        with pytest.raises(Exception, match="lane 5 of register 4.*reads element 300"):
            jax.block_until_ready(run(src, bad, mask))
    # src batched by vmap with the index and mask concrete: still found eagerly (the kernel's
    # maximum comes back batched there), so even "checkify" raises at once
    checkify = ascjax.Config(out_of_range="checkify")
    with pytest.raises(IndexError, match="lane 5 of register 4.*reads element 300"):
        jax.vmap(lambda s: ascjax.asc_gather(s, bad, mask, config=checkify))(
            np.stack([src, src[::-1]]))
    if np.dtype(src_dtype) == np.float32:
        src = rng.standard_normal(300).astype(np.float32)

        def loss(s):
            return jnp.sum(ascjax.asc_gather(s, index, mask, config=ignore) ** 2)
        with native.native_kernels_off():
            want = jax.grad(loss)(src)
        assert_bits_equal(np.asarray(jax.grad(loss)(src)), np.asarray(want), "grad")


_PARAMS = (1, 8, 8, 1)  # each repeat's string one DataBlock of the pattern on


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.float32, np.int16])
def test_gather_mask_and_squeeze_give_the_xla_paths_bits(dtype):
    """A user pattern per tensor and one shared, and the register squeeze, through the
    instructions: the kernel's bits are the XLA path's, NaN payloads and subnormals kept."""
    rng = np.random.default_rng(11)
    bits = 8 * np.dtype(dtype).itemsize
    lanes = 256 // np.dtype(dtype).itemsize
    dst, src = (_any_bits(rng, dtype, (5, 8 * lanes)) for _ in range(2))
    patterns = rng.integers(0, 1 << bits, (5, 8 * 256 // bits), dtype=np.uint64).astype(
        f"uint{bits}")
    patterns[0], patterns[1] = 0, (1 << bits) - 1

    def gather_mask(d, s, p):
        return ascjax.gather_mask(d, s, p, False, 0, _PARAMS)

    calls = [(gather_mask, (dst, src, patterns)), (gather_mask, (dst, src, patterns[2:3])),
             (ascjax.squeeze_register, (src[:, :lanes], rng.random((5, lanes)) < 0.5))]
    for fn, args in calls:
        assert _uses(fn, "ascjax_compress", *args)
        with native.native_kernels_off():
            want = jax.tree.map(np.asarray, jax.jit(fn)(*args))
        for got in (fn(*args), jax.jit(fn)(*args)):
            for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want), strict=True):
                assert_bits_equal(np.asarray(g), w, fn.__name__)


def test_gradients_flow_through_the_kernels_forward():
    """The kernel has no derivative; GatherMask's and squeeze's tangents take the XLA path:
    the selected elements' cotangents come back to them, the same as with the kernels off."""
    rng = np.random.default_rng(3)
    src = rng.standard_normal((2, 1024)).astype(np.float32)
    dst = rng.standard_normal((2, 1024)).astype(np.float32)
    pattern = rng.integers(0, 1 << 32, (2, 256), dtype=np.uint64).astype(np.uint32)
    weights = rng.standard_normal((2, 1024)).astype(np.float32)

    def loss(d, s):
        return jnp.sum(weights * ascjax.gather_mask(d, s, pattern, False, 0, (1, 4, 8, 0))[0])

    grads = jax.grad(loss, argnums=(0, 1))(dst, src)
    with native.native_kernels_off():
        want = jax.grad(loss, argnums=(0, 1))(dst, src)
    for g, w in zip(grads, want, strict=True):
        assert_bits_equal(np.asarray(g), np.asarray(w), "grad")
    assert np.count_nonzero(np.asarray(grads[1])) > 0


_FALLBACK = textwrap.dedent("""
    import warnings
    import numpy as np
    import ascjax
    from ascjax._src import native
    x = np.arange(128, dtype=np.float16)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = ascjax.squeeze_register(x, x % 3 == 0)
    print(native.enabled(), np.asarray(out).view(np.uint16)[:43].tolist() ==
          x[::3].view(np.uint16).tolist(), [str(w.message) for w in caught])
""")


@pytest.mark.parametrize("env", [{"CXX": "/bin/false"}, {"ASCJAX_NATIVE": "0"}])
def test_without_the_kernels_the_xla_path_runs(tmp_path, env):
    """A compiler that fails: a warning says why, and the squeeze still gives its bits;
    ASCJAX_NATIVE=0: off without a word. (A fresh process, with a cache of its own.)"""
    done = subprocess.run([sys.executable, "-c", _FALLBACK], capture_output=True, text=True,
                          check=True, env={**os.environ, "ASCJAX_CACHE": str(tmp_path), **env},
                          timeout=120)
    enabled, right, messages = done.stdout.strip().split(" ", 2)
    assert (enabled, right) == ("False", "True")
    if "CXX" in env:
        assert "native kernels are off (/bin/false failed" in messages
    else:
        assert messages == "[]"


@pytest.mark.parametrize("isa", ["scalar", "avx2", "avx512"])
def test_each_instruction_set_path_gives_the_same_bits(isa):
    """Where the CPU lacks AVX-512 (VBMI2 for 8- and 16-bit compaction) the kernels take AVX2,
    AVX-512F or scalar loops: forced here by ASCJAX_NATIVE_ISA, the kernel tests pass again in
    a process of their own (the instructions' bits on each path: tests/test_registry.py on such
    a host). Under "avx512" only compaction differs from the widest path."""
    if os.environ.get("ASCJAX_NATIVE_ISA"):
        pytest.skip("this process is that run")
    compaction = [f"{__file__}::{t.__name__}" for t in (
        test_the_source_lanes_kernel_finds_each_set_bit_as_the_xla_search_does,
        test_the_compress_kernel_moves_every_bit_as_the_xla_path_does,
        test_the_kernels_split_many_rows_over_the_thread_pool)]
    sums = f"{os.path.dirname(__file__)}/test_native_sums.py"
    tests = compaction if isa == "avx512" else compaction + [f"{sums}::{name}" for name in (
        "test_the_chain_kernel_adds_as_xla_and_the_reference_do",
        "test_tiny_and_special_inputs_reach_the_result_as_xla_says",
        "test_the_shifted_layout_reads_each_row_in_order",
        "test_the_wide_sums_are_within_their_bound")] + [
        f"{__file__}::test_the_table_gather_kernel_moves_each_element_as_the_xla_path_does"]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", *tests],
        capture_output=True, text=True, check=False,
        # 4 examples each (the deep profile's own count where set): the paths differ in code,
        # not in what the examples explore
        env={**os.environ, "ASCJAX_NATIVE_ISA": isa,
             "ASCJAX_EXAMPLES": os.environ.get("ASCJAX_EXAMPLES", "4")}, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:]
    passed = 3 if isa == "avx512" else 12  # the shifted-layout test runs for 5 layouts
    assert f"\n{passed} passed" in done.stdout, done.stdout[-500:]


_SHARDED = textwrap.dedent("""
    import jax, numpy as np, ascjax
    from jax.sharding import Mesh, NamedSharding, PartitionSpec
    rows = NamedSharding(Mesh(np.array(jax.devices()), ("rows",)), PartitionSpec("rows"))
    rng = np.random.default_rng(2)
    x = rng.integers(0, 1 << 16, (64, 1024), dtype=np.uint16).view(np.float16)
    pattern = rng.integers(0, 1 << 16, (64, 128), dtype=np.uint16)
    def gather_mask(d, s, p):
        return ascjax.gather_mask(d, s, p, False, 0, (1, 8, 8, 1))[0]
    for fn, args in ((ascjax.squeeze_register, (x[:, :128], x[:, 128:256] > 0)),
                     (gather_mask, (x[::-1], x, pattern))):
        split = jax.jit(fn, in_shardings=(rows,) * len(args), out_shardings=rows)
        text = split.lower(*args).compile().as_text()
        calls = [ln for ln in text.splitlines() if 'custom_call_target="ascjax_compress"' in ln]
        assert len(calls) == 1 and " custom-call(" in calls[0] and "[32," in calls[0], calls
        # (GatherMask's fault check gathers a few per-row scalars; no row of data moves)
        assert not [ln for ln in text.splitlines() if "all-gather(" in ln and "[64," in ln]
        got = split(*args)
        assert len(got.sharding.device_set) == 2
        want = jax.jit(fn)(*jax.device_put(args, jax.devices()[0]))
        assert (np.asarray(got).view(np.uint16) == np.asarray(want).view(np.uint16)).all()
    print("ok")
""")


def test_a_call_split_over_devices_runs_each_devices_rows():
    """Rows sharded over two host devices (``ascjax run`` on several devices or processes):
    the kernel runs on each device's 32 rows, no row gathered to both, and gives the bits of
    one device's whole call."""
    done = subprocess.run([sys.executable, "-c", _SHARDED], capture_output=True, text=True,
                          check=False, timeout=300, env={
                              **os.environ,
                              "XLA_FLAGS": "--xla_force_host_platform_device_count=2"})
    assert done.stdout.strip() == "ok", done.stderr[-3000:]


def test_vmap_over_a_shared_operand_keeps_every_bit():
    """vmap with one operand unbatched broadcasts it into more rows: bfloat16 NaN payloads and
    subnormals come through (as bits), for the squeeze and GatherMask, as by XLA's path."""
    bits = np.arange(128, dtype=np.uint16)
    bits[:8] = [0x7F81, 0xFF81, 0x0001, 0x8001, 0x007F, 0x7FC1, 0x0040, 0x8040]
    x = bits.view(ml_dtypes.bfloat16)
    masks = np.random.default_rng(4).random((5, 128)) < 0.6
    masks[0] = True
    patterns = np.random.default_rng(5).integers(0, 1 << 16, (5, 16), dtype=np.uint16)

    def gather_mask(d, s, p):
        return ascjax.gather_mask(d, s, p, False, 0, (1, 1, 8, 0))[0]

    calls = [(jax.vmap(ascjax.squeeze_register, in_axes=(None, 0)), (x, masks)),
             (jax.vmap(gather_mask, in_axes=(None, None, 0)), (x[::-1], x, patterns))]
    for fn, args in calls:
        assert _uses(fn, "ascjax_compress", *args)
        with ascjax.native_kernels_off():
            want = np.asarray(jax.jit(fn)(*args))
        assert_bits_equal(np.asarray(jax.jit(fn)(*args)), want, "vmap")
    assert_bits_equal(np.asarray(calls[0][0](*calls[0][1]))[0], x, "every lane kept")


def test_export_takes_xla_path_with_the_kernels_off():
    """jax.export cannot serialize a custom call with no compatibility guarantee: with the
    kernels on it refuses, inside ``ascjax.native_kernels_off()`` it exports XLA's path,
    which gives the same bits."""
    x = np.arange(128, dtype=np.float16)
    mask = x % 3 == 0
    with pytest.raises(ValueError, match="custom calls"):
        jax.export.export(jax.jit(ascjax.squeeze_register))(x, mask)
    with ascjax.native_kernels_off():
        exported = jax.export.export(jax.jit(ascjax.squeeze_register))(x, mask)
    assert_bits_equal(np.asarray(exported.call(x, mask)),
                      np.asarray(ascjax.squeeze_register(x, mask)), "exported")


def test_a_bad_instruction_set_cap_is_an_error(monkeypatch):
    """ASCJAX_NATIVE_ISA takes scalar, avx2 or avx512; any other value (a typo would otherwise
    give the widest path, unnoticed) names itself and the valid ones."""
    monkeypatch.setenv("ASCJAX_NATIVE_ISA", "AVX2")
    with pytest.raises(ValueError, match="ASCJAX_NATIVE_ISA='AVX2': valid values are scalar, "
                                         "avx2, avx512"):
        native.enabled()


def test_nested_blocks_keep_the_kernels_off():
    """An inner ``native_kernels_off`` block ending leaves the outer one's setting."""
    with ascjax.native_kernels_off():
        with ascjax.native_kernels_off():
            assert not native.enabled()
        assert not native.enabled()
    assert native.enabled()


def test_the_package_ships_every_file_the_build_reads():
    """``pip install .`` (not editable) copies only the package data pyproject.toml names: each
    source and header the build compiles matches one of its patterns (``rows.h`` did not at
    first, so an installed copy would have warned and run XLA's paths)."""
    config = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    shipped = config["tool"]["setuptools"]["package-data"]["ascjax._src.native"]
    for path in native.SOURCES + native.HEADERS:
        assert any(fnmatch.fnmatch(path.name, pattern) for pattern in shipped), path.name


_REBUILD = textwrap.dedent("""
    import warnings
    warnings.simplefilter("error")
    from ascjax._src import native
    print(native.enabled(), native._build().name)
""")


def test_a_cached_library_that_does_not_load_is_built_again(tmp_path):
    """A cached file cut short (or another machine's) is compiled again, not taken as no
    compiler: the kernels stay on, without a warning."""
    env = {**os.environ, "ASCJAX_CACHE": str(tmp_path)}
    first = ["True", native._build().name]  # this process's library: the name a build gives
    (tmp_path / first[1]).write_bytes(b"not a library")
    again = subprocess.run([sys.executable, "-c", _REBUILD], capture_output=True, text=True,
                           check=False, env=env, timeout=300)
    assert again.stdout.split() == first, again.stderr[-2000:]
    assert (tmp_path / first[1]).stat().st_size > 10_000
    assert [p.name for p in tmp_path.iterdir()] == [first[1]]  # no temporary file left


def test_the_instruction_set_the_kernels_report():
    """``native.isa()`` names what rows.h chose; ASCJAX_NATIVE_ISA caps it (a fresh process)."""
    assert native.isa() in native.ISA_NAMES
    code = "from ascjax._src import native; print(native.isa(), native.trees_enabled())"
    for cap in native.ISA_CAPS:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              check=True, env={**os.environ, "ASCJAX_NATIVE_ISA": cap},
                              timeout=120)
        got, trees = done.stdout.split()
        assert trees == str(got == "avx512")
        # a CPU without the capped set reports what it has
        assert native.ISA_NAMES.index(got) <= native.ISA_NAMES.index(cap)
        assert got == cap or got == native.isa()
