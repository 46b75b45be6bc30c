"""CPU and accelerator give the same bits (runs where JAX sees a GPU; CPU-only machines skip it).

benchmarks/gpu_check.sh makes the same comparison at scale, from saved SHA-256s.
"""

import jax
import ml_dtypes
import numpy as np
import pytest

import ascjax

ACCELERATORS = [d for d in jax.devices() if d.platform != "cpu"]
RNG = np.random.default_rng(11)


def _registers(dtype, lanes, n=64):
    width = np.dtype(dtype).itemsize * 8
    raw = RNG.integers(0, 2**width, (n, lanes), dtype=np.uint64).astype(f"uint{width}")
    raw[::4, ::3] &= np.uint64(2**width - 1) >> np.uint64(width // 2 + 2)  # small: subnormals
    return raw.view(dtype)


CASES = {
    "reduce/float": lambda: (ascjax.reduce_sum_datablock, _registers(np.float32, 64),
                             RNG.random((64, 64)) < 0.9),
    "reduce/half": lambda: (ascjax.reduce_sum_datablock, _registers(np.float16, 128),
                            RNG.random((64, 128)) < 0.9),
    "pair/float": lambda: (lambda s, d: ascjax.pair_reduce_sum(d, s, 4, 61, 1, 1, 8),
                           _registers(np.float32, 256), np.zeros((64, 128), np.float32)),
    "squeeze/half": lambda: (ascjax.squeeze_register, _registers(np.float16, 128),
                             RNG.random((64, 128)) < 0.5),
    "asc_reduce_max/half": lambda: (ascjax.asc_reduce_max, _registers(np.float16, 128),
                                    RNG.random((64, 128)) < 0.9),
    "reduce_repeat<min>/float": lambda: (
        lambda s, d: ascjax.reduce_repeat(d, s, 64, 4, 1, 1, 8, reduce_type="min")[0],
        _registers(np.float32, 256), np.zeros((64, 8), np.float32)),
    "reduce_max/half": lambda: (lambda s, d: ascjax.reduce_max(d, s, None, 300, True)[0],
                                _registers(np.float16, 384), np.zeros((64, 2), np.float16)),
    # the gathers and compaction (issue 13): bfloat16 bits through gathers and a scatter-free
    # pack, where XLA's CPU backend once flushed subnormals
    "gather/bfloat16": lambda: (lambda s, o, d: ascjax.gather(d, s, o, 0, 128),
                                _registers(np.uint16, 300).view(ml_dtypes.bfloat16),
                                (RNG.integers(0, 300, (64, 128)) * 2).astype(np.uint32),
                                np.zeros((64, 128), ml_dtypes.bfloat16)),
    "gather_mask(user)/half": lambda: (
        lambda s, m, d: ascjax.gather_mask(d, s, m, False, 0, (1, 2, 8, 0))[0],
        _registers(np.float16, 256), RNG.integers(0, 2**16, (64, 16)).astype(np.uint16),
        np.zeros((64, 256), np.float16)),
    "squeeze/float": lambda: (ascjax.squeeze, _registers(np.float32, 64),
                              RNG.random((64, 64)) < 0.5),
    "gather_datablock/half": lambda: (
        lambda i, m: ascjax.gather_datablock(_registers(np.float16, 512, 1)[0], i, m),
        np.where(np.arange(64) < 8, RNG.integers(0, 32, (64, 64)) * 32, 0).astype(np.uint32),
        RNG.random((64, 256)) < 0.9),
}


@pytest.mark.skipif(not ACCELERATORS, reason="no accelerator visible to JAX on this machine")
@pytest.mark.parametrize("case", CASES)
def test_accelerator_bits_equal_cpu(case):
    fn, *args = CASES[case]()
    cpu = jax.devices("cpu")[0]
    want = np.asarray(jax.jit(fn)(*[jax.device_put(a, cpu) for a in args]))
    for device in ACCELERATORS:
        got = np.asarray(jax.jit(fn)(*[jax.device_put(a, device) for a in args]))
        np.testing.assert_array_equal(got.view(f"uint{got.dtype.itemsize * 8}"),
                                      want.view(f"uint{want.dtype.itemsize * 8}"))
