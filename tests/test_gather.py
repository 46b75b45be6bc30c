"""Gather (AscendC::Gather), asc_gather in all its forms, Reg::Gather: the pages' examples by
hand, the layouts, errors (eager and under jit) and gradients."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import checkify

import ascjax
from ascjax import Config, reference

A2 = Config(product="A2")
OFFSETS = (np.arange(128)[::-1] * 2).astype(np.uint32)    # the pages' [254, 252, ..., 2, 0]


def bits(x):
    x = np.asarray(x)
    return x.view(f"uint{8 * x.itemsize}")


# --- the pages' examples ----------------------------------------------------------------------

@pytest.mark.parametrize("form", ["continuous", "bits", "count"])
def test_gather_page_example(form):
    """Gather.md 调用示例: 128 half [0..127] gathered by byte offsets [254..0] (srcBaseAddr 0),
    512 elements: by hand, dst[i] = 127 - i % 128 (offset 254 - 2j is element 127 - j)."""
    src = np.arange(128, dtype=np.float16)
    offsets = np.tile(OFFSETS, 4)
    dst = np.zeros(512, np.float16)
    args = {"continuous": (128, 4, 8), "bits": ([2**64 - 1, 2**64 - 1], 4, 8),
            "count": (512,)}[form]
    out = ascjax.gather(dst, src, offsets, 0, *args)
    want = (127 - np.arange(512) % 128).astype(np.float16)
    np.testing.assert_array_equal(bits(out), bits(want))
    np.testing.assert_array_equal(bits(reference.gather(dst, src, offsets, 0, *args)), bits(want))


def test_asc_gather_ub_page_example():
    """c-memory asc_gather.md: src [1..128] half, offsets [254..0] bytes -> dst [128..1]."""
    src = np.arange(1, 129, dtype=np.float16)
    dst = np.zeros(128, np.float16)
    want = np.arange(128, 0, -1).astype(np.float16)
    for f in (ascjax.asc_gather, ascjax.instruction("asc_gather_sync"), reference.asc_gather):
        np.testing.assert_array_equal(bits(f(dst, src, OFFSETS, 128, config=A2)), bits(want))


def test_src_base_addr_and_unwritten_elements():
    """srcBaseAddr shifts every read by bytes; elements past count keep their bits."""
    src = np.arange(64, dtype=np.int32)
    offsets = np.array([0, 4, 8, 12], np.uint32)
    dst = np.full(6, -7, np.int32)
    out = np.asarray(ascjax.gather(dst, src, offsets, 40, 3))   # 40 bytes = 10 int32
    np.testing.assert_array_equal(out, [10, 11, 12, -7, -7, -7])


def test_repeats_overlap_and_the_later_write_wins():
    """dstRepStride 1 (one DataBlock = 16 halves): repeat 1 writes dst[16:144] over repeat 0's
    dst[16:128]; under A30 lane e of repeat r reads srcOffset[128 r + e]."""
    src = np.arange(300, dtype=np.float16)
    offsets = (np.arange(256) * 2).astype(np.uint32)           # lane n reads element n
    dst = np.full(160, -1, np.float16)
    out = np.asarray(ascjax.gather(dst, src, offsets, 0, 128, 2, 1))
    want = dst.copy()
    want[:16] = np.arange(16)
    want[16:144] = np.arange(128, 256)
    np.testing.assert_array_equal(bits(out), bits(want))
    # The other reading: the offset at the lane's dst position.
    out = np.asarray(ascjax.gather(dst, src, offsets, 0, 128, 2, 1,
                                   config=Config(gather_offsets="dst")))
    want[16:144] = np.arange(16, 144)
    np.testing.assert_array_equal(bits(out), bits(want))


def test_bit_mask_and_stride_leave_gaps():
    """A bit mask enables the same lanes every repeat; dstRepStride 9 leaves a DataBlock gap."""
    src = np.arange(100, dtype=np.float32)
    offsets = np.full(128, 4 * 7, np.uint32)                    # every lane reads element 7
    dst = np.zeros(64 * 2 + 8, np.float32)
    out = np.asarray(ascjax.gather(dst, src, offsets, 0, [0b101], 2, 9))
    want = dst.copy()
    want[[0, 2, 72, 74]] = 7
    np.testing.assert_array_equal(out, want)


def test_b8_repeat_is_four_datablocks_on_200i():
    """200I/500 A2, int8_t: a repeat covers 4 DataBlocks, 128 lanes (A32); the 950 takes 8-bit
    T only in the first-n form."""
    src = np.arange(-64, 64, dtype=np.int8)
    offsets = np.arange(256, dtype=np.uint32)[::-1] % 128
    dst = np.zeros(256, np.int8)
    out = np.asarray(ascjax.gather(dst, src, offsets, 0, 128, 2, 4,
                                   config=Config(product="200I/500 A2")))
    np.testing.assert_array_equal(out, src[offsets])
    with pytest.raises(TypeError, match="int8_t takes only the first-n"):
        ascjax.gather(dst, src, offsets, 0, 128, 2, 4)
    np.testing.assert_array_equal(np.asarray(ascjax.gather(dst, src, offsets, 0, 256)),
                                  src[offsets])


def test_asc_gather_ub_repeat_form_under_the_mask_state():
    """The C API's repeat form has no mask argument: Counter mode, 200 halves = 2 repeats, the
    second partial (A28)."""
    src = np.arange(256, dtype=np.float16)
    offsets = (np.arange(256)[::-1] * 2).astype(np.uint32)
    dst = np.full(256, -1, np.float16)
    state = ascjax.MaskState("counter", 0, 200)
    out = np.asarray(ascjax.asc_gather(dst, src, offsets, 8, 1, mask_state=state, config=A2))
    want = dst.copy()
    want[:200] = np.arange(255, 55, -1)
    np.testing.assert_array_equal(bits(out), bits(want))
    np.testing.assert_array_equal(bits(reference.asc_gather(dst, src, offsets, 8, 1,
                                                            mask_state=state, config=A2)),
                                  bits(want))


def test_asc_gather_from_a_register_wraps_the_index():
    """c-reg page: an index past the register counts modulo its lanes (128 for b16)."""
    src = np.arange(128, dtype=np.uint16) * 3
    index = np.array([0, 1, 127, 128, 129, 65535] + [5] * 122, np.uint16)
    out = np.asarray(ascjax.asc_gather(src, index))
    np.testing.assert_array_equal(out[:6], [0, 3, 381, 0, 3, 127 * 3])   # 65535 % 128 = 127
    nan = np.array([0x7E01, 0x8000, 0x0001] + [0] * 125, np.uint16).view(np.float16)
    out = ascjax.asc_gather(nan, np.array([2, 1, 0] * 42 + [0, 0], np.uint16))
    np.testing.assert_array_equal(bits(out)[:3], [0x0001, 0x8000, 0x7E01])


def test_reg_gather_is_the_seed_kernel_on_its_table():
    rng = np.random.default_rng(1)
    src = rng.standard_normal(300).astype(np.float32)
    index = rng.integers(0, 300, 64).astype(np.uint32)
    mask = rng.random(64) < 0.5
    np.testing.assert_array_equal(bits(ascjax.reg_gather(src, index, mask)),
                                  bits(ascjax.asc_gather(src, index, mask)))
    assert ascjax.instruction("AscendC::Reg::Gather") is ascjax.reg_gather
    with pytest.raises(TypeError, match=r"Reg::Gather table 3"):
        ascjax.reg_gather(np.zeros(8, np.int8), np.zeros(128, np.uint16), np.ones(128, bool),
                          dst_dtype="int8_t")
    # 8-bit data has one row, dst int16_t (a review: it needed dst_dtype, and the error named
    # an int8_t dst never given): zero-extended, as asc_gather's widening row
    data = np.arange(-60, 60, dtype=np.int8)
    lanes = (np.arange(128) % 120).astype(np.uint16)
    every = ascjax.create_mask("PAT_ALL", "int16_t")
    got = ascjax.reg_gather(data, lanes, every)
    assert got.dtype == np.int16 and int(got[0]) == 196  # -60 as a byte, zero-extended
    np.testing.assert_array_equal(
        bits(got), bits(ascjax.asc_gather(data, lanes, every, dst_dtype="int16_t")))
    np.testing.assert_array_equal(bits(got), bits(reference.reg_gather(data, lanes, every)))
    with pytest.raises(TypeError, match="reg_gather: not available on product 'A2'"):
        ascjax.reg_gather(src, index, mask, config=A2)


# --- errors -----------------------------------------------------------------------------------

def test_the_old_register_signature_points_to_asc_gather():
    src = np.arange(10, dtype=np.float32)
    idx = np.zeros(64, np.uint32)
    with pytest.raises(TypeError, match="now ascjax.asc_gather"):
        ascjax.gather(src, idx, np.ones(64, bool))
    with pytest.raises(TypeError, match="got dst_dtype.*now ascjax.asc_gather"):
        ascjax.gather(src, idx, np.ones(64, bool), dst_dtype="float")
    with pytest.raises(TypeError, match=r"gather: unexpected keyword argument\(s\) "
                                        r"\['mask_state'\]"):
        ascjax.gather(src, src, idx, 0, 4, mask_state=None)


def test_static_errors():
    src = np.arange(16, dtype=np.float16)
    dst = np.zeros(16, np.float16)
    off = np.zeros(16, np.uint32)
    with pytest.raises(ValueError, match="src_base_addr=3 is not a multiple of sizeof"):
        ascjax.gather(dst, src, off, 3, 4)
    with pytest.raises(ValueError, match=r"gather: count .*=17 is outside the valid range "
                                         r"\[0, 16\]"):
        ascjax.gather(dst, src, off, 0, 17)
    with pytest.raises(TypeError, match="src_offset must be a uint32"):
        ascjax.gather(dst, src, off.astype(np.int32), 0, 4)
    with pytest.raises(TypeError, match="is not supported on product '200I/500 A2'"):
        ascjax.gather(dst.astype(jnp.bfloat16), src.astype(jnp.bfloat16), off, 0, 4,
                      config=Config(product="200I/500 A2"))
    with pytest.raises(TypeError, match="not available on product 'training'"):
        ascjax.gather(dst, src, off, 0, 4, config=Config(product="training"))
    with pytest.raises(ValueError, match="dst has 16 elements but lane 16 writes dst\\[16\\]"):
        ascjax.gather(dst, src, np.zeros(256, np.uint32), 0, 128, 2, 1)
    with pytest.raises(ValueError, match=r"repeat_time=256 is outside the valid range \[0, 255\]"):
        ascjax.gather(dst, src, off, 0, 128, 256, 8)
    with pytest.raises(TypeError, match="asc_gather: 4 positional arguments is the UB form, "
                                        "which the pages give on A3, A2; on product '950'"):
        ascjax.asc_gather(dst, src, off, 4)
    with pytest.raises(TypeError, match="asc_gather: expected"):
        ascjax.asc_gather(src)
    with pytest.raises(TypeError, match="asc_gather: the register forms are on"):
        reference.asc_gather(src, off.astype(np.uint16), config=A2)


def test_empty_calls():
    """count 0 / repeatTime 0 leave dst unchanged (A31); gather_empty="raise" rejects them
    off Atlas A2/A3."""
    src = np.arange(16, dtype=np.float32)
    dst = np.full(8, 3.0, np.float32)
    off = np.zeros(8, np.uint32)
    np.testing.assert_array_equal(np.asarray(ascjax.gather(dst, src, off, 0, 0)), dst)
    np.testing.assert_array_equal(np.asarray(ascjax.gather(dst, src, off, 0, 64, 0, 8)), dst)
    strict = Config(gather_empty="raise")
    with pytest.raises(ValueError, match="count=0 is a NOP only on"):
        ascjax.gather(dst, src, off, 0, 0, config=strict)
    with pytest.raises(ValueError, match="count / repeat 0 rejected"):
        reference.gather(dst, src, off, 0, 0, config=strict)
    out = ascjax.gather(dst, src, off, 0, 0, config=Config(product="A2", gather_empty="raise"))
    np.testing.assert_array_equal(np.asarray(out), dst)


@pytest.mark.parametrize("offset, why", [
    (6, "is not a multiple of sizeof\\(float\\) = 4"),
    (64, "reads past the end of src"),
])
def test_bad_offset_names_the_lane_eagerly(offset, why):
    src = np.arange(16, dtype=np.float32)
    off = (np.arange(8) * 4).astype(np.uint32)
    off[5] = offset
    with pytest.raises(IndexError, match=f"gather: active lane 5 has srcOffset {offset} bytes, "
                                         f"which {why}"):
        ascjax.gather(np.zeros(8, np.float32), src, off, 0, 8)
    with pytest.raises(IndexError, match="active lane 5"):
        reference.gather(np.zeros(8, np.float32), src, off, 0, 8)
    batch = np.stack([(np.arange(8) * 4).astype(np.uint32), off])  # the tensor, in a batch
    with pytest.raises(IndexError, match=f"gather: active lane 5 of tensor 1 has srcOffset "
                                         f"{offset} bytes, which {why}"):
        ascjax.gather(np.zeros((2, 8), np.float32), src, batch, 0, 8)


def test_offset_beyond_the_products_range():
    """950: a 16-bit T's offset is at most 2^17 - 1 bytes (page), even inside src."""
    src = np.zeros(70000, np.float16)
    off = np.array([0, 2**17], np.uint32)
    with pytest.raises(IndexError, match="lane 1 has srcOffset 131072 bytes, which exceeds the "
                                         "largest offset 131071"):
        ascjax.gather(np.zeros(2, np.float16), src, off, 0, 2)
    out = ascjax.gather(np.zeros(2, np.float16), src, off, 0, 2, config=A2)
    assert np.asarray(out).shape == (2,)


def test_inactive_lanes_are_never_checked():
    """Lanes the mask disables may hold any offset; so may srcOffset past count."""
    src = np.arange(64, dtype=np.float32)
    off = np.full(64, 3, np.uint32)                  # misaligned and past the end: unused
    off[0] = 8
    dst = np.zeros(64, np.float32)
    out = np.asarray(ascjax.gather(dst, src, off, 0, [1], 1, 8))
    assert out[0] == 2 and not out[1:].any()
    np.testing.assert_array_equal(np.asarray(ascjax.gather(dst, src, off, 0, 1)), out)


@pytest.mark.parametrize("offset, why", [(1000, "reads past the end"), (6, "not a multiple")])
def test_bad_offset_under_jit(offset, why):
    src = np.arange(16, dtype=np.float32)
    off = (np.arange(8) * 4).astype(np.uint32)
    off[2] = offset
    dst = np.zeros(8, np.float32)
    with pytest.raises(Exception, match=f"active lane 2 has srcOffset {offset} bytes, .*{why}"):
        jax.jit(lambda o: ascjax.gather(dst, src, o, 0, 8))(off).block_until_ready()
    checked = checkify.checkify(jax.jit(lambda o: ascjax.gather(
        dst, src, o, 0, 8, config=Config(out_of_range="checkify"))))
    err, _ = checked(off)
    assert f"active lane 2 has srcOffset {offset} bytes" in err.get()
    if offset != 1000:
        return
    out = jax.jit(lambda o: ascjax.gather(dst, src, o, 0, 8,
                                          config=Config(out_of_range="ignore")))(off)
    assert np.asarray(out)[2] == 0 and np.asarray(out)[3] == 3   # the lane reads 0


# --- gradients --------------------------------------------------------------------------------

def test_gather_grads_scatter_add_and_pass_unwritten_dst():
    """By hand: d(sum w_i dst_i)/d src_j sums w_i over the lanes reading j; dst elements no lane
    writes pass their cotangent, written ones get none."""
    src = jnp.arange(8, dtype=jnp.float32)
    off = np.array([4, 4, 0, 28], np.uint32)        # elements 1, 1, 0, 7
    dst = jnp.full(6, 5.0, jnp.float32)
    w = jnp.arange(1.0, 7.0)
    out, vjp = jax.vjp(lambda d, s: ascjax.gather(d, s, off, 0, 4), dst, src)
    g_dst, g_src = vjp(w)
    np.testing.assert_array_equal(np.asarray(out), [1, 1, 0, 7, 5, 5])
    np.testing.assert_array_equal(np.asarray(g_src), [3, 3, 0, 0, 0, 0, 0, 4])
    np.testing.assert_array_equal(np.asarray(g_dst), [0, 0, 0, 0, 5, 6])
    index = np.array([1, 1, 200] + [0] * 125, np.uint16)       # 200 wraps to 72
    g = jax.grad(lambda s: ascjax.asc_gather(s, index).astype(jnp.float32).sum())(
        jnp.zeros(128, jnp.float16))
    assert float(g[0]) == 125 and float(g[1]) == 2 and float(g[72]) == 1


def test_asc_gather_ub_grad_under_jit():
    src = jnp.arange(1, 129, dtype=jnp.float16)
    g = jax.jit(jax.grad(lambda s: ascjax.asc_gather(
        jnp.zeros(128, jnp.float16), s, OFFSETS, 128, config=A2).astype(jnp.float32)[:3].sum()))(
        src)
    want = np.zeros(128, np.float16)
    want[[127, 126, 125]] = 1
    np.testing.assert_array_equal(np.asarray(g), want)


# --- an empty src (issue 14 item 5) -----------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda src, idx, m: ascjax.asc_gather(src, idx, m),
    lambda src, idx, m: ascjax.reg_gather(src, idx, m),
    lambda src, idx, m: jax.jit(lambda s, i, k: ascjax.asc_gather(s, i, k))(src, idx, m),
])
def test_all_masked_gather_on_an_empty_src_is_zeros(call):
    """Every lane masked reads nothing, so an empty src is fine: dst is all 0 (as the reference
    model says); one active lane is still the address fault, naming that lane."""
    empty, idx = np.zeros(0, np.float32), np.full(64, 7, np.uint32)
    out = call(empty, idx, np.zeros(64, bool))
    np.testing.assert_array_equal(bits(out), np.zeros(64, np.uint32))
    np.testing.assert_array_equal(bits(reference.asc_gather(empty, idx, np.zeros(64, bool))),
                                  np.zeros(64, np.uint32))
    batched = ascjax.asc_gather(np.zeros(0, np.float16), np.zeros((3, 128), np.uint16),
                                np.zeros((3, 128), bool))
    assert batched.shape == (3, 128) and not np.any(bits(batched))
    mask = np.zeros(64, bool)
    mask[5] = True
    # Eagerly an IndexError; under jit the host callback's AddressFault, wrapped by the runtime.
    with pytest.raises(Exception, match="active index lane 5 .* src has 0 elements"):
        jax.block_until_ready(call(empty, idx, mask))


def test_all_masked_gather_on_an_empty_src_under_checkify_and_grad():
    empty, idx = np.zeros(0, np.float32), np.zeros(64, np.uint32)
    cfg = Config(out_of_range="checkify")
    run = checkify.checkify(jax.jit(lambda s, m: ascjax.asc_gather(s, idx, m, config=cfg)))
    err, out = run(empty, np.zeros(64, bool))
    assert err.get() is None and not np.any(bits(out))
    mask = np.ones(64, bool)
    err, _ = run(empty, mask)
    assert "src has 0 elements" in err.get()
    grad = jax.grad(lambda s: ascjax.asc_gather(s, idx, np.zeros(64, bool)).sum())(empty)
    assert grad.shape == (0,)


def test_other_gathers_on_an_empty_src():
    """gather_datablock / Reg::GatherB with every block masked, Gather with count 0, Gatherb
    with repeat 0 read nothing: dst as the reference says; an active block still faults."""
    empty, idx = np.zeros(0, np.float32), np.zeros(64, np.uint32)
    for call in (ascjax.gather_datablock, ascjax.reg_gather_b):
        out = call(empty, idx, np.zeros(256, bool))
        np.testing.assert_array_equal(bits(out), np.zeros(64, np.uint32))
    np.testing.assert_array_equal(bits(reference.gather_datablock(empty, idx,
                                                                   np.zeros(256, bool))),
                                  np.zeros(64, np.uint32))
    one = np.zeros(256, bool)
    one[4] = True
    with pytest.raises(IndexError, match="gather_datablock: index lane 1 .* src \\(0 bytes\\)"):
        ascjax.gather_datablock(empty, idx, one)
    dst = np.arange(64, dtype=np.uint32)
    for out in (ascjax.gather(dst, np.zeros(0, np.uint32), np.zeros(8, np.uint32), 0, 0,
                              config=A2),
                ascjax.gatherb(dst, np.zeros(0, np.uint32), np.zeros(8, np.uint32), 0, (1, 8),
                               config=A2)):
        np.testing.assert_array_equal(np.asarray(out), dst)
