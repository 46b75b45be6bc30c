"""Gradients are those of the exact real operation (rounding passes them straight through)."""

import jax
import jax.numpy as jnp
import numpy as np
from jax.test_util import check_grads

import ascjax

RNG = np.random.default_rng(3)
MASK32 = RNG.random(64) < 0.7


def test_reduce_sum_datablock_grads():
    x = RNG.standard_normal(64).astype(np.float32)
    f = lambda s: ascjax.reduce_sum_datablock(s, MASK32)
    check_grads(f, (x,), order=1, modes=("fwd", "rev"), atol=1e-2, rtol=1e-2)
    g = jax.grad(lambda s: f(s)[3])(x)
    np.testing.assert_array_equal(np.asarray(g), ((np.arange(64) // 8 == 3) & MASK32) * 1.0)


def test_reduce_sum_datablock_half_grad_is_mask_of_block():
    x = RNG.standard_normal(128).astype(np.float16)
    m = RNG.random(128) < 0.5
    g = jax.grad(lambda s: ascjax.reduce_sum_datablock(s, m)[0].astype(jnp.float32))(x)
    np.testing.assert_array_equal(np.asarray(g, np.float32), ((np.arange(128) < 16) & m) * 1.0)


def test_pair_reduce_sum_grads():
    dst = RNG.standard_normal(64).astype(np.float32)
    src = RNG.standard_normal(192).astype(np.float32)
    f = lambda d, s: ascjax.pair_reduce_sum(d, s, 2, 61, 1, 1, 8)
    check_grads(f, (dst, src), order=1, modes=("fwd", "rev"), atol=1e-2, rtol=1e-2)
    gd, gs = jax.grad(lambda d, s: jnp.sum(f(d, s) * jnp.arange(64.0, dtype=jnp.float32)),
                      argnums=(0, 1))(dst, src)
    # outputs 0..30 of repeats 0, 1 are written (pair 30 has one active element), 31 and 63 keep dst
    want_d = np.zeros(64, np.float32)
    want_d[[31, 63]] = [31, 63]
    np.testing.assert_array_equal(np.asarray(gd), want_d)
    want_s = np.zeros(192, np.float32)
    for r in range(2):
        for e in range(61):
            want_s[r * 64 + e] = r * 32 + e // 2
    np.testing.assert_array_equal(np.asarray(gs), want_s)


def test_gather_grads_scatter_add():
    src = RNG.standard_normal(20).astype(np.float32)
    index = RNG.integers(0, 20, 64).astype(np.uint32)
    f = lambda s: ascjax.asc_gather(s, index, MASK32)
    check_grads(f, (src,), order=1, modes=("fwd", "rev"), atol=1e-2, rtol=1e-2)
    g = jax.grad(lambda s: jnp.sum(f(s)))(src)
    np.testing.assert_array_equal(np.asarray(g), np.bincount(index[MASK32], minlength=20))


def test_squeeze_dst_grads():
    src = RNG.standard_normal(64).astype(np.float32)

    def f(s):
        _, dst, _ = ascjax.squeeze_and_storeunalign(
            jnp.zeros(1024, jnp.uint8), 0, ascjax.squeeze_and_storeunalign_init(), s, MASK32)
        return dst

    check_grads(f, (src,), order=1, modes=("fwd", "rev"), atol=1e-2, rtol=1e-2)
    weights = np.arange(64, dtype=np.float32)
    g = jax.grad(lambda s: jnp.sum(f(s) * weights))(src)
    want = np.zeros(64, np.float32)
    want[MASK32] = np.arange(MASK32.sum())
    np.testing.assert_array_equal(np.asarray(g), want)


def test_grad_under_jit_and_vmap():
    x = RNG.standard_normal((5, 64)).astype(np.float32)
    g = jax.jit(jax.vmap(jax.grad(lambda s: ascjax.reduce_sum_datablock(s, MASK32)[0])))(x)
    np.testing.assert_array_equal(np.asarray(g), np.broadcast_to((np.arange(64) < 8) & MASK32,
                                                                 (5, 64)) * 1.0)
