"""Batch shapes that do not broadcast name the instruction and its arguments with their shapes
(issue 14 item 5), one case per register-instruction family; the reductions and PairReduceSum
are in test_errors.py."""

import re

import jax
import numpy as np
import pytest

import ascjax

A2 = ascjax.Config(product="A2")


def f32(*shape):
    return np.zeros(shape, np.float32)


def u32(*shape):
    return np.zeros(shape, np.uint32)


def mask(*shape):
    return np.ones(shape, bool)


@pytest.mark.parametrize("call, where, listed", [
    # gathers: index and mask
    (lambda: ascjax.asc_gather(f32(10), u32(2, 64), mask(3, 64)), "asc_gather",
     r"index \(2, 64\), mask \(3, 64\)"),
    (lambda: ascjax.reg_gather(f32(10), u32(2, 64), mask(3, 64)), "reg_gather",
     r"index \(2, 64\), mask \(3, 64\)"),
    (lambda: ascjax.asc_gather(np.zeros((2, 128), np.int16), np.zeros((3, 128), np.uint16)),
     "asc_gather", r"src \(2, 128\), index \(3, 128\)"),
    (lambda: ascjax.gather(f32(2, 16), f32(16), u32(3, 16), 0, 8), "gather",
     r"dst \(2, 16\), src \(16,\), src_offset \(3, 16\)"),
    (lambda: ascjax.asc_gather(u32(2, 16), u32(16), u32(3, 16), 8, config=A2), "asc_gather",
     r"dst \(2, 16\), src \(16,\), src_offset \(3, 16\)"),
    # gather_datablock / GatherB / Gatherb / Scatter
    (lambda: ascjax.gather_datablock(f32(64), u32(2, 64), mask(3, 256)), "gather_datablock",
     r"index \(2, 64\), mask \(3, 256\)"),
    (lambda: ascjax.reg_gather_b(f32(64), u32(2, 64), mask(3, 64)), "reg_gather_b",
     r"index \(2, 64\), mask \(3, 64\)"),
    (lambda: ascjax.gatherb(u32(2, 64), u32(3, 64), u32(8), 1, (1, 8), config=A2), "gatherb",
     r"dst \(2, 64\), src \(3, 64\), offset \(8,\)"),
    (lambda: ascjax.gatherb(u32(2, 64), u32(3, 64), u32(8), 0, (1, 8), config=A2), "gatherb",
     r"dst \(2, 64\), src \(3, 64\)"),
    (lambda: ascjax.scatter(f32(2, 16), f32(3, 16), u32(16), 0, 8), "scatter",
     r"dst \(2, 16\), src \(3, 16\), dst_offset \(16,\)"),
    # the squeeze family: src and mask
    (lambda: ascjax.squeeze(f32(2, 64), mask(3, 64)), "squeeze", r"src \(2, 64\), mask \(3, 64\)"),
    (lambda: ascjax.squeeze_with_status(f32(2, 64), mask(3, 64)), "squeeze_with_status",
     r"src \(2, 64\), mask \(3, 64\)"),
    (lambda: ascjax.squeeze_register(f32(2, 64), mask(3, 64)), "squeeze_register",
     r"src1 \(2, 64\), squeeze_mask \(3, 64\)"),
    (lambda: ascjax.squeeze_and_storeunalign(np.zeros(512, np.uint8), 0,
                                             ascjax.squeeze_and_storeunalign_init(),
                                             f32(2, 64), mask(3, 256)),
     "squeeze_and_storeunalign", r"src1 \(2, 64\), squeeze_mask \(3, 256\)"),
    (lambda: ascjax.squeeze_ub(np.zeros((2, 128), np.uint16), np.zeros((3, 128), np.uint16),
                               np.zeros(128, np.uint16), 1, 1, 1, 1, 8, 8, 8, config=A2),
     "squeeze_ub", r"dst \(2, 128\), src0 \(3, 128\), src1 \(128,\)"),
    (lambda: ascjax.unsqueeze(np.zeros((2, 64), np.int32), mask(3, 64)), "unsqueeze",
     r"dst \(2, 64\), mask \(3, 64\)"),
    # GatherMask and asc_reduce
    (lambda: ascjax.gather_mask(u32(2, 64), u32(3, 64), 1, False, 0, (1, 1, 8, 0)),
     "gather_mask", r"dst \(2, 64\), src0 \(3, 64\)"),
    (lambda: ascjax.gather_mask(u32(2, 64), u32(2, 64), u32(3, 8), False, 0, (1, 1, 8, 0)),
     "gather_mask", r"src1_pattern \(3, 8\)"),
    (lambda: ascjax.asc_reduce(np.zeros((2, 128), np.uint16), np.zeros((3, 128), np.uint16),
                               np.full(8, 1, np.uint16), 128, config=A2),
     "asc_reduce", r"dst \(2, 128\), src0 \(3, 128\)"),
])
def test_batch_shapes_that_do_not_broadcast_are_named(call, where, listed):
    with pytest.raises(ValueError, match=rf"^{where}: the batch axes \(all but the last\) of "
                       rf".*{listed}.* do not broadcast together"):
        call()


def test_batch_shapes_that_broadcast_still_run():
    out = ascjax.asc_gather(np.arange(10, dtype=np.float32), u32(2, 1, 64), mask(3, 64))
    assert out.shape == (2, 3, 64)
    assert ascjax.squeeze(f32(1, 64), mask(4, 64)).shape == (4, 64)
    assert ascjax.unsqueeze(np.zeros((2, 1, 64), np.int32), mask(5, 64)).shape == (2, 5, 64)


# One vmapped call per instruction family with a value-dependent fault check; each function
# maps one instance's arrays.
_VMAPPED_CHECKS = {
    "asc_gather": (lambda i: ascjax.asc_gather(f32(10), i, mask(64)), u32(64)),
    "gather_datablock": (lambda i: ascjax.gather_datablock(f32(64), i, mask(256)), u32(64)),
    "gather": (lambda o: ascjax.gather(f32(16), f32(16), o, 0, 8), u32(16)),
    "scatter": (lambda o: ascjax.scatter(f32(4), f32(16), o, 0, 4), u32(4)),
}


@pytest.mark.parametrize("name", list(_VMAPPED_CHECKS))
def test_a_vmapped_fault_check_is_one_callback_whatever_the_batch(name):
    """Under vmap the fault check stays one host callback (the first faulting element's
    details), instead of jax.debug.callback's one per element: a vmap over 512 registers had
    compiled in 7 s and run eagerly in 34 s. A fault is still raised, eagerly and under jit."""
    call, one = _VMAPPED_CHECKS[name]
    counts = set()
    for batch in (2, 16):
        text = jax.jit(jax.vmap(call)).lower(np.stack([one] * batch)).as_text()
        counts.add(len(re.findall(r"custom_call @\w*callback", text)))
    assert len(counts) == 1 and 1 <= min(counts) <= 3, counts  # Gather checks 3 faults
    bad = np.stack([one] * 5)
    bad[3, 0] = 2**31 + 1                       # faults in every one of these instructions
    for run in (jax.vmap(call), jax.jit(jax.vmap(call))):
        with pytest.raises((IndexError, jax.errors.JaxRuntimeError), match=name):
            jax.block_until_ready(run(bad))
        assert run(bad[:0]).shape[0] == 0     # an empty batch checks nothing
