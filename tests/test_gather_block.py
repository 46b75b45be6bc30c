"""DataBlock gathers (Gatherb, asc_gather_datablock, Reg::GatherB) and Scatter: the pages'
examples by hand, the readings of what the pages leave open, the errors and the gradients."""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from jax.experimental import checkify
from strategies import assert_bits_equal

import ascjax
from ascjax import Config, reference
from ascjax._src.examples import EXAMPLES

A2 = Config(product="A2")


def _bf16(bits):
    return np.asarray(bits, np.uint16).view(ml_dtypes.bfloat16)


# --- the pages' examples ---------------------------------------------------------------------

@pytest.mark.parametrize("name", ["gatherb", "gather_datablock", "gather_datablock_register",
                                  "reg_gather_b", "scatter"])
def test_page_examples_pass(name, capsys):
    assert EXAMPLES[name]() is True
    assert "[Success]" in capsys.readouterr().out


def test_gatherb_page_output_by_hand():
    # Offsets [224 ... 0] (bytes) name uint16 blocks 7 ... 0: dst block j is src block 7 - j.
    out = ascjax.gatherb(np.zeros(128, np.uint16), np.arange(128, dtype=np.uint16),
                         np.array([224, 192, 160, 128, 96, 64, 32, 0], np.uint32), 1, (1, 8))
    assert np.asarray(out).reshape(8, 16)[:, 0].tolist() == [112, 96, 80, 64, 48, 32, 16, 0]


def test_reg_gather_b_page_table():
    # index [0*32, ..., 6*32, 32*32] -> DataBlocks 0..6 and 32 (page); only 8 index lanes count.
    index = np.full(64, 7, np.uint32)        # lanes 8.. are misaligned: never read
    index[:8] = [0, 32, 64, 96, 128, 160, 192, 1024]
    src = np.arange(2048, dtype=np.uint16)
    out = np.asarray(ascjax.reg_gather_b(src, index, np.ones(256, bool)))
    assert out.reshape(8, 16)[:, 0].tolist() == [0, 16, 32, 48, 64, 80, 96, 512]


# --- semantics -------------------------------------------------------------------------------

def test_bits_survive_every_move():
    """NaN payloads, -0 and bfloat16 subnormals (XLA's CPU backend would flush them in a
    bfloat16 gather) come through unchanged."""
    pattern = np.array([0x8001, 0x0005, 0x7FC1, 0xFF81, 0x8000, 0x0001, 0x807F, 0x3F80], np.uint16)
    src = _bf16(np.tile(pattern, 8))
    offsets = np.array([32, 0, 96, 64] * 2, np.uint32)
    out = ascjax.gatherb(_bf16(np.zeros(128)), src, offsets, 1, (1, 1))
    want = reference.gatherb(_bf16(np.zeros(128)), src, offsets, 1, (1, 1))
    assert_bits_equal(out, want)
    assert np.asarray(out).view(np.uint16)[16] == 0x8001
    index = np.zeros(64, np.uint32)
    assert_bits_equal(ascjax.reg_gather_b(src, index, np.ones(256, bool)),
                      np.tile(src[:16], 8))
    off = np.arange(62, -1, -2, dtype=np.uint32)
    assert_bits_equal(ascjax.scatter(_bf16(np.zeros(32)), src[:32], off, 0, 32), src[:32][::-1])


def test_gatherb_strides_and_overlap():
    src = np.arange(64, dtype=np.uint32)        # 8 blocks of 8
    off = (np.arange(16, dtype=np.uint32) % 8) * 32
    # dstBlkStride 0 is taken as 1 (page); dstRepStride 0: repeat 1 overwrites repeat 0.
    a = ascjax.gatherb(np.zeros(64, np.uint32), src, off[::-1].copy(), 2, (0, 0))
    assert np.asarray(a).reshape(8, 8)[:, 0].tolist() == [56, 48, 40, 32, 24, 16, 8, 0]
    # dstBlkStride 2 leaves the odd blocks of dst alone.
    b = np.asarray(ascjax.gatherb(np.full(128, 9, np.uint32), src, off, 1, (2, 8)))
    assert b.reshape(16, 8)[:, 0].tolist() == [0, 9, 8, 9, 16, 9, 24, 9, 32, 9, 40, 9, 48, 9,
                                                56, 9]


def test_repeat_zero_is_a_nop_or_rejected():
    dst, src, off = np.arange(16, dtype=np.uint16), np.zeros(16, np.uint16), np.zeros(8, np.uint32)
    assert_bits_equal(ascjax.gatherb(dst, src, off, 0, (1, 8)), dst)
    raising = Config(empty_move="raise")
    with pytest.raises(ValueError, match="repeat_time=0 is a NOP only on"):
        ascjax.gatherb(dst, src, off, 0, (1, 8), config=raising)
    assert_bits_equal(ascjax.gatherb(dst, src, off, 0, (1, 8),
                                     config=raising.replace(product="A3")), dst)
    with pytest.raises(ValueError, match="count or repeat_time of 0"):
        ascjax.scatter(dst, src, off, 0, 0, config=raising)


def test_register_mask_readings():
    src = np.arange(256, dtype=np.float32)      # 32 blocks of 8
    index = np.zeros(64, np.uint32)
    index[:8] = 32 * np.arange(8)
    per_element = np.zeros(64, bool)
    per_element[[1, 3, 9]] = True               # b32 elements 1 and 3: blocks 1 and 3 (A34)
    hw = np.zeros(256, bool)
    hw[::4] = per_element
    blocks = np.asarray(ascjax.gather_datablock(src, index, hw))
    want = np.where(np.isin(np.arange(64) // 8, [1, 3]), src[:64], 0)
    assert_bits_equal(blocks, want)
    assert_bits_equal(ascjax.gather_datablock(src, index, per_element), want)
    assert_bits_equal(ascjax.reg_gather_b(src, index, hw), want)
    element = np.asarray(ascjax.gather_datablock(src, index, hw,
                                                 config=Config(datablock_mask="element")))
    assert_bits_equal(element, np.where(per_element, src[:64], 0))
    # Reg::GatherB reads the page's bits whatever the Config says.
    assert_bits_equal(ascjax.reg_gather_b(src, index, hw,
                                          config=Config(datablock_mask="element")), want)
    assert_bits_equal(ascjax.gather_datablock(src, index), src[:64])   # no mask: all blocks


def test_packed_and_byte_types_move_bytes():
    src = np.arange(256, dtype=np.uint8)
    index = np.zeros(64, np.uint32)
    index[:8] = 32 * np.arange(7, -1, -1)
    for name in ("int4b_t", "fp4x2_e2m1_t", "hifloat8_t", "fp8_e8m0_t"):
        data = src.view(ascjax.FORMATS[name].storage_dtype)
        out = np.asarray(ascjax.gather_datablock(data, index, dtype=name)).view(np.uint8)
        assert out.reshape(8, 32)[:, 0].tolist() == [224, 192, 160, 128, 96, 64,
                                                                  32, 0]


def test_scatter_duplicates_and_forms():
    src = np.arange(1, 9, dtype=np.int32)
    off = np.array([0, 4, 4, 8, 0, 12, 16, 20], np.uint32)
    last = np.asarray(ascjax.scatter(np.zeros(8, np.int32), src, off, 0, 8))
    first = np.asarray(ascjax.scatter(np.zeros(8, np.int32), src, off, 0, 8,
                                      config=Config(scatter_duplicates="first")))
    assert last.tolist() == [5, 3, 4, 6, 7, 8, 0, 0]          # A35: the later element wins
    assert first.tolist() == [1, 2, 4, 6, 7, 8, 0, 0]
    # dstBaseAddr moves every element; elements not written keep their bits.
    based = np.asarray(ascjax.scatter(np.full(8, -1, np.int32), src[:2], off[:2], 8, 2))
    assert based.tolist() == [-1, -1, 1, 2, -1, -1, -1, -1]
    # Mask form: lanes 0..63 of a float repeat under mask 2 (continuous), 2 repeats, srcRepStride
    # 1 block: src elements 0, 1 then 8, 9; offsets 0, 1 then 64, 65 (A37).
    src = np.arange(80, dtype=np.float32)
    off = np.zeros(128, np.uint32)
    off[[0, 1, 64, 65]] = [0, 4, 8, 12]
    out = np.asarray(ascjax.scatter(np.zeros(4, np.float32), src, off, 0, 2, 2, 1))
    assert out.tolist() == [0, 1, 8, 9]
    off_src = np.zeros(80, np.uint32)
    off_src[[0, 1, 8, 9]] = [12, 8, 4, 0]
    out = np.asarray(ascjax.scatter(np.zeros(4, np.float32), src, off_src, 0, 2, 2, 1,
                                    config=Config(scatter_offset="src")))
    assert out.tolist() == [9, 8, 1, 0]


def test_scatter_eight_bit_repeats_cover_four_blocks():
    config = Config(product="200I/500 A2")
    src = np.arange(256, dtype=np.uint8)
    off = np.arange(255, -1, -1, dtype=np.uint32)
    out = np.asarray(ascjax.scatter(np.zeros(256, np.uint8), src, off, 0, 128, 2, 4,
                                    config=config))
    assert_bits_equal(out, src[::-1])             # 2 repeats of 128 cover all 256
    assert_bits_equal(out, reference.scatter(np.zeros(256, np.uint8), src, off, 0, 128, 2, 4,
                                             config=config))
    with pytest.raises(TypeError, match="takes only the first-n"):
        ascjax.scatter(np.zeros(256, np.uint8), src, off, 0, 128, 2, 4)


# --- errors ----------------------------------------------------------------------------------

def test_bad_offsets_name_the_element_and_the_offset():
    src, dst = np.arange(64, dtype=np.uint16), np.zeros(128, np.uint16)
    off = np.array([0, 32, 64, 96, 0, 0, 0, 40], np.uint32)
    with pytest.raises(IndexError, match=r"gatherb: offset element 7 holds byte offset 40; it "
                       r"must be a multiple of 32"):
        ascjax.gatherb(dst, src, off, 1, (1, 8))
    off[7] = 128                                  # the block past the end of src's 128 bytes
    with pytest.raises(IndexError, match="offset element 7 holds byte offset 128"):
        ascjax.gatherb(dst, src, off, 1, (1, 8))
    with pytest.raises(jax.errors.JaxRuntimeError, match="offset element 7 holds byte offset"):
        jax.jit(lambda o: ascjax.gatherb(dst, src, o, 1, (1, 8)))(off).block_until_ready()
    checked = checkify.checkify(jax.jit(lambda o: ascjax.gatherb(
        dst, src, o, 1, (1, 8), config=Config(out_of_range="checkify"))))
    err, _ = checked(off)
    assert "offset element 7 holds byte offset 128" in err.get()
    ignored = ascjax.gatherb(np.full(128, 5, np.uint16), src, off, 1, (1, 8),
                             config=Config(out_of_range="ignore"))
    assert np.asarray(ignored)[112:].tolist() == [0] * 16       # a bad block reads zeros
    with pytest.raises(IndexError, match="scatter: dst_offset element 3 holds byte offset 7"):
        ascjax.scatter(dst, src, np.array([0, 2, 4, 7], np.uint32), 0, 4)
    with pytest.raises(IndexError, match="scatter: dst_offset element 0 holds byte offset 256"):
        ascjax.scatter(dst, src, np.array([256], np.uint32), 0, 1)
    batch = np.zeros((3, 8), np.uint32)
    batch[2, 6] = 40  # in a batch of tensors, the tensor too
    with pytest.raises(IndexError, match="offset element 6 of tensor 2 holds byte offset 40"):
        ascjax.gatherb(np.zeros((3, 128), np.uint16), src, batch, 1, (1, 8))


def test_inactive_blocks_are_never_checked():
    src = np.arange(64, dtype=np.float32)
    index = np.full(64, 2**31 + 3, np.uint32)     # wild offsets everywhere
    index[2] = 32
    hw = np.zeros(256, bool)
    hw[8] = True                                  # b32 element 2: block 2 only
    out = np.asarray(ascjax.reg_gather_b(src, index, hw))
    assert out[16:24].tolist() == list(range(8, 16)) and not out[:16].any()
    with pytest.raises(IndexError, match=r"reg_gather_b: index lane 0 holds byte offset"):
        ascjax.reg_gather_b(src, index, np.ones(256, bool))
    # Scatter's masked-off lanes (mask form) are not checked either.
    off = np.full(64, 3, np.uint32)
    off[0] = 4
    out = ascjax.scatter(np.zeros(4, np.float32), src + 1, off, 0, 1, 1, 8)
    assert np.asarray(out).tolist() == [0, 1, 0, 0]


def test_register_form_faults_under_jit_vmap_checkify_and_ignore():
    """The register form's offset check where Python cannot see values: the first bad read
    lane is named under jit and checkify; a masked-off block's wild offset is never checked;
    under out_of_range="ignore" a bad block reads zeros, the same batched, one at a time and
    under vmap (the kernel gathers clamped blocks and zeroes them after)."""
    src = np.arange(64, dtype=np.float32)               # 8 DataBlocks: byte offsets 0..224
    index = np.zeros((3, 64), np.uint32)
    index[:, :8] = np.arange(8) * 32
    index[1, 5] = 256                                   # past src's 256 bytes
    index[2, 3] = 2**31 + 1                             # wild, but its block is masked off
    hw = np.ones((3, 256), bool)
    hw[2, 12] = False                                   # b32 element 3: block 3 of register 2
    call = jax.jit(lambda i, m: ascjax.gather_datablock(src, i, m))
    with pytest.raises(jax.errors.JaxRuntimeError,
                       match="index lane 5 of register 1 holds byte offset 256"):
        call(index, hw).block_until_ready()
    checked = checkify.checkify(jax.jit(lambda i, m: ascjax.gather_datablock(
        src, i, m, config=Config(out_of_range="checkify"))))
    err, _ = checked(index, hw)
    assert "index lane 5 of register 1 holds byte offset 256" in err.get()
    good = index.copy()
    good[1, 5] = 0
    blocks = src.reshape(8, 8)
    want = np.stack([blocks[np.asarray(good[r, :8]) // 32 % 8] for r in range(3)])
    want[2, 3] = 0                                      # masked off: zeros
    assert_bits_equal(call(good, hw), want.reshape(3, 64), "masked wild offset")
    ignore = Config(out_of_range="ignore")
    want[1, 5] = 0                                      # the bad block reads zeros
    for got in (ascjax.gather_datablock(src, index, hw, config=ignore),
                jax.vmap(lambda i, m: ascjax.gather_datablock(src, i, m, config=ignore))(
                    index, hw),
                np.stack([ascjax.gather_datablock(src, index[r], hw[r], config=ignore)
                          for r in range(3)])):
        assert_bits_equal(got, want.reshape(3, 64), "ignore")


def test_static_errors():
    u16 = np.zeros(64, np.uint16)
    off = np.zeros(8, np.uint32)
    with pytest.raises(TypeError, match=r"gatherb: T int8_t is not supported on product 'A2'"):
        ascjax.gatherb(np.zeros(64, np.int8), np.zeros(64, np.int8), off, 1, (1, 8), config=A2)
    with pytest.raises(TypeError, match="not available on product 'training'"):
        ascjax.gatherb(u16, u16, off, 1, (1, 8), config=Config(product="training"))
    with pytest.raises(TypeError, match="offset must be a uint32 LocalTensor"):
        ascjax.gatherb(u16, u16, off.astype(np.int32), 1, (1, 8))
    with pytest.raises(ValueError, match=r"repeat_time=256 is outside the valid range \[0, 255\]"):
        ascjax.gatherb(u16, u16, off, 256, (1, 8))
    with pytest.raises(ValueError, match=r"dst_blk_stride=256 is outside"):
        ascjax.gatherb(u16, u16, off, 1, (256, 8))
    with pytest.raises(ValueError, match="offset has 8 elements but repeat_time=2 reads 16"):
        ascjax.gatherb(u16, u16, off, 2, (1, 8))
    with pytest.raises(ValueError, match="dst has 64 elements but the repeats write DataBlock 14"):
        ascjax.gatherb(u16, u16, off, 1, ascjax.GatherRepeatParams(2, 8))
    with pytest.raises(TypeError, match="repeat_params must be a GatherRepeatParams"):
        ascjax.gatherb(u16, u16, off, 1, 8)
    with pytest.raises(TypeError, match="gather_datablock: not available on product '950'"):
        ascjax.gather_datablock(u16, u16, off, 8, 1, 1)
    with pytest.raises(TypeError, match="not available on product 'A2'"):
        ascjax.gather_datablock(u16, np.zeros(64, np.uint32), config=A2)
    with pytest.raises(TypeError, match="expected .src, index.*got 4 positional"):
        ascjax.gather_datablock(u16, u16, off, 8)
    with pytest.raises(TypeError, match="index must be a vector_uint32_t register"):
        ascjax.reg_gather_b(u16, np.zeros(128, np.uint16), np.ones(256, bool))
    with pytest.raises(ValueError, match=r"index has shape \(8,\)"):
        ascjax.reg_gather_b(u16, off, np.ones(256, bool))
    with pytest.raises(ValueError, match=r"dst_base_addr=3 is not a multiple of sizeof\(half\)"):
        ascjax.scatter(np.zeros(8, np.float16), np.zeros(8, np.float16), off, 3, 8)
    with pytest.raises(TypeError,
                       match="scatter: T int16_t is not supported on product 'inference AI Core'"):
        ascjax.scatter(np.zeros(8, np.int16), np.zeros(8, np.int16), off, 0, 8,
                       config=Config(product="inference AI Core"))
    with pytest.raises(ValueError, match=r"count .*=9 is outside the valid range \[0, 8\]"):
        ascjax.scatter(np.zeros(8, np.int16), np.zeros(8, np.int16), off, 0, 9)
    with pytest.raises(ValueError, match="dst_offset has 8 elements but the call reads element "
                       "127"):     # the mask form: 128 int16 lanes
        ascjax.scatter(np.zeros(128, np.int16), np.zeros(128, np.int16), off, 0, 128, 1, 8)


def test_scatter_offset_range_per_width():
    # 8-bit: offsets up to 2^16 - 1 on the 950 (page), whatever dst's size.
    dst = np.zeros(2**16 + 8, np.int8)
    with pytest.raises(IndexError, match="exceeds the largest offset 65535 this product takes "
                       "for int8_t"):
        ascjax.scatter(dst, np.ones(1, np.int8), np.array([2**16], np.uint32), 0, 1)
    out = np.asarray(ascjax.scatter(dst, np.ones(1, np.int8), np.array([2**16 - 1], np.uint32),
                                    0, 1))
    assert out[2**16 - 1] == 1 and out.sum() == 1


_SCATTER_FAULTS = [  # (dst's half elements, element 0's offset, the condition it fails)
    (128, 255, r"is not a multiple of sizeof\(half\) = 2 \(the page: unexpected behaviour\)"),
    (128, 256, (r"lands past the end of dst \(128 half elements from its start, dstBaseAddr 0; "
                r"the hardware raises an address exception\)")),
    # inside a 2^17 + 16 byte dst, past the 950's range only
    (2**16 + 8, 2**17, r"exceeds the largest offset 131071 this product takes for half"),
]


@pytest.mark.parametrize("n, offset, why", _SCATTER_FAULTS)
def test_scatter_offset_fault_says_which_condition_failed(n, offset, why):
    """A new user's trial: a misaligned offset and one past dst got the same text listing
    every condition; each now says the one it fails, eagerly, under jit and checkify, and for
    the tensor of a batch (as Gather's do)."""
    dst, src = np.zeros(n, np.float16), np.arange(128, dtype=np.float16)
    off = np.arange(0, 256, 2, dtype=np.uint32)[::-1].copy()     # 254, 252, ..., 0: all good
    off[0] = offset
    want = rf"^scatter: dst_offset element 0 holds byte offset {offset}, which {why}$"
    with pytest.raises(IndexError, match=want):
        ascjax.scatter(dst, src, off, 0, 128)
    with pytest.raises(jax.errors.JaxRuntimeError, match=want[1:-1]):
        jax.jit(lambda o: ascjax.scatter(dst, src, o, 0, 128))(off).block_until_ready()
    checked = checkify.checkify(jax.jit(lambda o: ascjax.scatter(
        dst, src, o, 0, 128, config=Config(out_of_range="checkify"))))
    err, _ = checked(off)
    assert re.search(want[1:-1], err.get())
    batch = np.stack([np.roll(off, 5)] * 3)         # the bad offset now element 5
    batch[:2, 5] = 0
    with pytest.raises(IndexError, match=f"dst_offset element 5 of tensor 2 holds byte offset "
                       f"{offset}, which {why}"):
        ascjax.scatter(dst, src, batch, 0, 128)
    with pytest.raises(jax.errors.JaxRuntimeError, match=f"dst_offset element 5 holds byte "
                       f"offset {offset}, which {why}"):   # vmap: the first faulting element's
        jax.jit(jax.vmap(lambda o: ascjax.scatter(dst, src, o, 0, 128)))(
            batch).block_until_ready()


def test_scatter_fault_names_the_dst_offset_element_of_a_masked_lane():
    """The mask form: lane e of repeat r reads dst_offset[r*lanes + e] (A37); the message
    names that element (repeat 1's lane 4: 64 + 4 with float's 64 lanes), not its place among
    the active lanes."""
    def call(off):  # lanes 4..7 active; float: an offset is a multiple of 4
        return ascjax.scatter(np.zeros(64, np.float32), np.ones(128, np.float32), off, 0,
                              [0xF0, 0], 2, 8)

    off = np.zeros(128, np.uint32)
    off[67] = 6                              # lane 3 of repeat 1: not read
    assert np.asarray(call(off)).tolist() == [1] + [0] * 63
    off[67], off[68] = 0, 6                  # lane 4 of repeat 1: the 5th active element
    with pytest.raises(IndexError, match=r"^scatter: dst_offset element 68 holds byte offset 6, "
                       r"which is not a multiple of sizeof\(float\) = 4"):
        call(off)


def test_scatter_count_names_the_tensors_that_limit_it():
    """count is limited by src and dst_offset (element i reads both), not by dst (written
    through the offsets), as Gather's count names its limits."""
    dst, src = np.zeros(128, np.float16), np.arange(128, dtype=np.float16)
    off = np.arange(0, 256, 2, dtype=np.uint32)
    with pytest.raises(ValueError, match=r"^scatter: count \(at most the 4 elements of src and "
                       r"the 128 of dst_offset\)=128 is outside the valid range \[0, 4\]$"):
        ascjax.scatter(dst, src[:4], off, 0, 128)
    with pytest.raises(ValueError, match=r"^scatter: count \(at most the 128 elements of src "
                       r"and the 6 of dst_offset\)=7 is outside the valid range \[0, 6\]$"):
        ascjax.scatter(dst, src, off[:6], 0, 7)
    # a dst shorter than count is no limit: 4 elements land in a 4-element dst
    out = ascjax.scatter(np.zeros(4, np.float16), src[:8], np.array([6, 4, 2, 0, 0, 0, 0, 0],
                         np.uint32), 0, 8)
    assert np.asarray(out).tolist() == [7, 2, 1, 0]   # last writer wins at offset 0 (A35)


# --- gradients -------------------------------------------------------------------------------

def test_gatherb_gradient_returns_each_block_to_its_source():
    src = jnp.arange(32, dtype=jnp.float32)       # 4 blocks of 8
    dst = jnp.zeros(64, jnp.float32)
    off = np.array([0, 0, 32, 96, 0, 32, 64, 96], np.uint32)
    w = jnp.arange(64, dtype=jnp.float32)
    g_dst, g_src = jax.grad(lambda d, s: (ascjax.gatherb(d, s, off, 1, (1, 8)) * w).sum(),
                            argnums=(0, 1))(dst, src)
    # Hand-derived: dst block j takes src block off[j] / 32, so src block b receives the sum
    # of w over the dst blocks that read it; every dst element is overwritten (gradient 0).
    wb = np.arange(64, dtype=np.float32).reshape(8, 8)
    want = np.zeros((4, 8), np.float32)
    for j, o in enumerate(off // 32):
        want[o] += wb[j]
    assert np.array_equal(np.asarray(g_src).reshape(4, 8), want)
    assert not np.asarray(g_dst).any()
    # A dst block the repeats do not write passes its cotangent straight through.
    g_dst = jax.grad(lambda d: ascjax.gatherb(d, src, off, 1, (1, 8)).sum())(
        jnp.zeros(72, jnp.float32))
    assert np.asarray(g_dst).tolist() == [0.0] * 64 + [1.0] * 8


def test_register_gradient_is_a_scatter_add():
    src = jnp.arange(64, dtype=jnp.float32)
    index = np.zeros(64, np.uint32)
    index[:8] = [0, 0, 32, 0, 224, 96, 96, 32]
    hw = np.ones(256, bool)
    hw[4] = False                                 # block 1 masked: no gradient through it
    _, vjp = jax.vjp(lambda s: ascjax.gather_datablock(s, index, hw), src)
    (g,) = vjp(jnp.ones(64, jnp.float32))
    assert np.asarray(g).reshape(8, 8)[:, 0].tolist() == [2, 2, 0, 2, 0, 0, 0, 1]


def test_scatter_gradient_is_a_gather():
    src = jnp.arange(1, 5, dtype=jnp.float32)
    dst = jnp.zeros(6, jnp.float32)
    off = np.array([20, 4, 4, 0], np.uint32)      # elements 1 and 2 collide: 2 wins (A35)
    w = jnp.arange(10, 16, dtype=jnp.float32)
    g_dst, g_src = jax.grad(lambda d, s: (ascjax.scatter(d, s, off, 0, 4) * w).sum(),
                            argnums=(0, 1))(dst, src)
    assert np.asarray(g_src).tolist() == [15, 0, 11, 10]
    assert np.asarray(g_dst).tolist() == [0, 0, 12, 13, 14, 0]


def test_vendor_names():
    assert ascjax.instruction("asc_gather_datablock_sync").func is ascjax.gather_datablock
    assert ascjax.instruction("AscendC::Gatherb") is ascjax.gatherb
    assert ascjax.instruction("AscendC::Reg::GatherB") is ascjax.reg_gather_b
    assert ascjax.instruction("AscendC::Scatter") is ascjax.scatter
