"""GatherMask and asc_reduce: the pages' examples by hand, every built-in pattern, the products'
differences, errors, the Config readings A39-A41 and gradients."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from jax.experimental import checkify
from strategies import assert_bits_equal

import ascjax
from ascjax import Config, reference

A2 = Config(product="A2")
AIC = Config(product="inference AI Core")


def test_page_builtin_example():
    """调用示例 2: src0 = [1 .. 256] (float: 64 per repeat), pattern 2, {1, 4, 8, 0}, in place:
    the odd elements 2, 4, ..., 256 and rsvdCnt 128 (the page's output)."""
    src = np.arange(1, 257, dtype=np.float32)
    dst, cnt = ascjax.gather_mask(src, src, 2, False, 0, (1, 4, 8, 0))
    np.testing.assert_array_equal(np.asarray(dst)[:128], np.arange(2, 257, 2, dtype=np.float32))
    np.testing.assert_array_equal(np.asarray(dst)[128:], src[128:])   # A39: kept bits
    assert int(cnt) == 128 and cnt.dtype == jnp.uint32


def _page_user_example(config=None):
    src = np.arange(1, 257, dtype=np.float32)
    pattern = np.full(4, 0x99999999, np.uint32)   # 1001...1001: element 0 and 3 of each four
    return ascjax.gather_mask(np.zeros(256, np.float32), src, pattern, True, 70, (1, 2, 4, 0),
                              config=config)


def test_page_user_example_counter_per_repeat():
    """调用示例 1 (配置方式一): 2 repeats of 70 elements, the second 4 DataBlocks (32 floats) on;
    by hand: e % 4 in {0, 3} of e < 70 is 35 elements per repeat."""
    dst, cnt = _page_user_example()
    first = [1 + e for e in range(70) if e % 4 in (0, 3)]
    second = [33 + e for e in range(70) if e % 4 in (0, 3)]
    assert int(cnt) == 70
    np.testing.assert_array_equal(np.asarray(dst)[:70], np.float32(first + second))
    assert not np.asarray(dst)[70:].any()


def test_page_user_example_counter_per_call():
    """配置方式二 (inference AI Core): 70 elements over the call, ceil(70 / 64) = 2 repeats,
    the second of 6 elements from element 32: 32 + 3 kept."""
    dst, cnt = _page_user_example(AIC)
    first = [1 + e for e in range(64) if e % 4 in (0, 3)]
    second = [33 + e for e in range(6) if e % 4 in (0, 3)]
    assert int(cnt) == 35
    np.testing.assert_array_equal(np.asarray(dst)[:35], np.float32(first + second))


@pytest.mark.parametrize("dtype, lanes", [(np.float16, 128), (np.float32, 64), (np.uint8, 256)])
@pytest.mark.parametrize("pattern, picks", [
    (1, lambda e: e % 2 == 0), (2, lambda e: e % 2 == 1), (3, lambda e: e % 4 == 0),
    (4, lambda e: e % 4 == 1), (5, lambda e: e % 4 == 2), (6, lambda e: e % 4 == 3),
    (7, lambda e: True)])
def test_builtin_patterns(dtype, lanes, pattern, picks):
    """Each pattern keeps what the page's bit string says, in every repeat."""
    src = (np.arange(2 * lanes) % 251).astype(dtype)
    dst, cnt = ascjax.gather_mask(np.zeros(2 * lanes, dtype), src, pattern, False, 0,
                                  (1, 2, 8, 0))
    want = [src[i] for i in range(2 * lanes) if picks(i % lanes)]
    assert int(cnt) == len(want)
    np.testing.assert_array_equal(np.asarray(dst)[:len(want)], np.array(want, dtype))


def test_params_default_to_the_structs_strides():
    """kernel_struct_gather.h: src0RepeatStride = src1RepeatStride = DEFAULT_REPEAT_STRIDE (8
    DataBlocks). With 0 (as they were here), repeat 1 of GatherMaskParams(repeat_times=2)
    read repeat 0's elements again (found by a new user's trial)."""
    assert tuple(ascjax.GatherMaskParams()) == (1, 0, 8, 8)
    src = np.arange(256, dtype=np.float16)
    for params in (ascjax.GatherMaskParams(repeat_times=2), {"repeat_times": 2}):
        dst, count = ascjax.gather_mask(np.zeros(256, np.float16), src, 7, False, 0, params)
        assert int(count) == 256
        assert_bits_equal(dst, src, "pattern 7 over two consecutive repeats: src as it is")
    # a user pattern moves on by its own default stride too: 8 DataBlocks of uint16 = 128 words
    pattern = np.zeros(256, np.uint16)
    pattern[[0, 128]] = 1  # element 0 of each repeat, with each repeat's own pattern words
    pattern[[1, 129]] = 0x8000  # and element 31
    dst, count = ascjax.gather_mask(np.zeros(8, np.float16), src, pattern, False, 0,
                                    ascjax.GatherMaskParams(repeat_times=2))
    assert int(count) == 4
    assert np.asarray(dst)[:4].tolist() == [0, 31, 128, 159]


def test_bits_move_unchanged():
    """NaN payloads, -0 and subnormals keep their bits."""
    bits = np.array([0x7C01, 0x8000, 0x0001, 0xFE7F, 0x3C00, 0x7E00, 0x8001, 0x0000] * 16,
                    np.uint16)
    dst, _ = ascjax.gather_mask(np.zeros(128, np.float16), bits.view(np.float16), 7, False, 0,
                                (1, 1, 8, 0))
    np.testing.assert_array_equal(np.asarray(dst).view(np.uint16), bits)
    sub = np.full(64, 0x007F, np.uint16).view(ml_dtypes.bfloat16)
    out = jax.jit(lambda d, s: ascjax.gather_mask(d, s, 1, False, 0, (1, 1, 8, 0),
                                                  config=Config(gather_mask_tail="zero_block"))
                  )(np.zeros(64, ml_dtypes.bfloat16), np.concatenate([sub, sub]))
    assert (np.asarray(out[0]).view(np.uint16)[:64] == 0x7F).all()


def test_user_pattern_stride_and_all_zero_one():
    """src1RepeatStride in DataBlocks (16 uint16 words); an all-0 string keeps nothing."""
    src = np.arange(256, dtype=np.int16)
    pattern = np.zeros(32, np.uint16)
    pattern[16:24] = 0xFFFF                      # repeat 1's string, one DataBlock on
    dst, cnt = ascjax.gather_mask(np.full(256, -1, np.int16), src, pattern, False, 0,
                                  (1, 2, 8, 1))
    assert int(cnt) == 128
    np.testing.assert_array_equal(np.asarray(dst)[:128], src[128:])
    dst, cnt = ascjax.gather_mask(np.full(8, -1, np.int16), src, np.zeros(8, np.uint16), False,
                                  0, (1, 1, 8, 0))
    assert int(cnt) == 0 and (np.asarray(dst) == -1).all()


def test_one_pattern_for_a_batch_of_tensors_is_each_tensors_own():
    """A kernel's fixed user pattern, passed once for a batch of tensors: the source search runs
    once (not per tensor), and each tensor gets the bits and count of its own call."""
    rng = np.random.default_rng(3)
    params = (1, 8, 8, 1)
    src = rng.integers(0, 1 << 16, (5, 1024), dtype=np.uint16).view(np.float16)
    dst = rng.integers(0, 1 << 16, (5, 1024), dtype=np.uint16).view(np.float16)
    pattern = rng.integers(0, 1 << 16, 128, dtype=np.uint16)
    dst_shared, cnt_shared = ascjax.gather_mask(dst, src, pattern, False, 0, params)
    dst_each, cnt_each = ascjax.gather_mask(dst, src, np.broadcast_to(pattern, (5, 128)), False,
                                            0, params)
    assert_bits_equal(np.asarray(dst_shared), np.asarray(dst_each))
    assert np.asarray(cnt_shared).shape == (5,)   # one per tensor, as the batch shape says
    assert np.asarray(cnt_each).tolist() == np.asarray(cnt_shared).tolist()
    one_dst, one_cnt = ascjax.gather_mask(dst[3], src[3], pattern, False, 0, params)
    assert_bits_equal(np.asarray(dst_shared)[3], np.asarray(one_dst))
    assert int(one_cnt) == int(cnt_shared[3])


_DST = np.zeros((3, 128), np.float32)
_SRC = np.arange(3 * 128, dtype=np.float32).reshape(3, 128)
_PATTERN = np.array([0b1011, 0], np.uint32)     # elements 0, 1 and 3 of a repeat's string

# (the call, its count by hand); float: 64 elements a repeat, two repeats (src1RepeatStride 0:
# both read the same string)
_COUNT_PATHS = {
    "built-in pattern 1 (the even elements)":
        (lambda: ascjax.gather_mask(_DST, _SRC, 1, False, 0, (1, 2, 8, 0)), 2 * 32),
    "one user pattern for the batch (searched once)":
        (lambda: ascjax.gather_mask(_DST, _SRC, _PATTERN, False, 0, (1, 2, 8, 0)), 2 * 3),
    "a user pattern of batch shape (1,) against (3,)":
        (lambda: ascjax.gather_mask(_DST[0], _SRC, _PATTERN[None], False, 0, (1, 2, 8, 0)),
         2 * 3),
    "Counter mode, 5 elements a repeat (bits 0..4: 0, 1, 3)":
        (lambda: ascjax.gather_mask(_DST, _SRC, _PATTERN, True, 5, (1, 2, 8, 0)), 2 * 3),
    # 0b1100001 keeps 0, 5, 6: all three of repeat 0's 64, two of repeat 1's 6
    "Counter mode over the call (inference AI Core): 70 = 64 + 6":
        (lambda: ascjax.gather_mask(_DST, _SRC, np.array([0b1100001, 0], np.uint32), True, 70,
                                    (1, 1, 8, 0), config=AIC), 3 + 2),
    "built-in pattern in Counter mode, 5 a repeat (0, 2, 4)":
        (lambda: ascjax.gather_mask(_DST, _SRC, 1, True, 5, (1, 2, 8, 0)), 2 * 3),
    "repeat_times 0 (a NOP)":
        (lambda: ascjax.gather_mask(_DST, _SRC, _PATTERN, False, 0, (1, 0, 8, 0)), 0),
}


@pytest.mark.parametrize("path", list(_COUNT_PATHS))
def test_the_count_is_over_the_calls_batch_shape(path):
    """A new user's trial: batched tensors with one user pattern gave a 0-d count, so
    ``cnt[i]`` per tensor broke; every path gives one uint32 count per tensor."""
    call, want = _COUNT_PATHS[path]
    dst, cnt = call()
    assert cnt.shape == (3,) and cnt.dtype == jnp.uint32
    assert np.asarray(cnt).tolist() == [want] * 3
    assert dst.shape == (3, 128)


def test_the_count_is_over_the_batch_shape_under_jit_and_vmap():
    """One count per tensor under jit and vmap too, whichever argument is batched; the kept
    elements are each tensor's own."""
    params = (1, 2, 8, 0)
    dst, cnt = jax.jit(lambda d, s: ascjax.gather_mask(d, s, _PATTERN, False, 0, params))(
        _DST, _SRC)
    assert np.asarray(cnt).tolist() == [6, 6, 6]
    # by hand: elements 0, 1, 3 of each repeat (the second from element 64 on)
    np.testing.assert_array_equal(np.asarray(dst)[:, :6], _SRC[:, [0, 1, 3, 64, 65, 67]])
    _, cnt = jax.jit(jax.vmap(lambda d, s: ascjax.gather_mask(d, s, _PATTERN, False, 0,
                                                               params)))(_DST, _SRC)
    assert np.asarray(cnt).tolist() == [6, 6, 6]
    # a vmapped pattern over shared tensors: 1, 2 and 33 bits a repeat
    patterns = np.array([[1, 0], [3, 0], [0xFFFFFFFF, 1]], np.uint32)
    _, cnt = jax.vmap(lambda p: ascjax.gather_mask(_DST[0], _SRC[0], p, False, 0, params))(
        patterns)
    assert np.asarray(cnt).tolist() == [2, 4, 66]


def test_products_and_types():
    f32, i8 = np.zeros(64, np.float32), np.zeros(256, np.int8)
    with pytest.raises(ValueError, match=r"src1_pattern \(built-in modes on product "
                                         r"'inference AI Core'\)=7"):
        ascjax.gather_mask(f32, f32, 7, False, 0, (1, 1, 8, 0), config=AIC)
    assert int(ascjax.gather_mask(f32, f32, 6, False, 0, (1, 1, 8, 0), config=AIC)[1]) == 16
    with pytest.raises(TypeError, match="gather_mask: not available on product .training."):
        ascjax.gather_mask(f32, f32, 1, False, 0, (1, 1, 8, 0), config=Config(product="training"))
    with pytest.raises(TypeError, match="int8_t"):
        ascjax.gather_mask(i8, i8, 1, False, 0, (1, 1, 8, 0), config=A2)
    bf = np.zeros(128, ml_dtypes.bfloat16)
    with pytest.raises(TypeError, match="bfloat16_t"):
        ascjax.gather_mask(bf, bf, 1, False, 0, (1, 1, 8, 0), config=Config(product="200I/500 A2"))
    assert int(ascjax.gather_mask(i8, i8, np.zeros(32, np.uint8) + 1, False, 0,
                                  (1, 1, 8, 0))[1]) == 32
    with pytest.raises(TypeError, match="user pattern is uint32_t"):
        ascjax.gather_mask(f32, f32, np.zeros(2, np.uint16), False, 0, (1, 1, 8, 0))


def test_argument_errors():
    f32 = np.zeros(64, np.float32)
    gm = ascjax.gather_mask
    with pytest.raises(ValueError, match=r"repeat_times=256.*\[0, 255\]"):
        gm(f32, f32, 1, False, 0, (1, 256, 8, 0))
    with pytest.raises(ValueError, match=r"src0_block_stride=256"):
        gm(f32, f32, 1, False, 0, (256, 1, 8, 0))
    with pytest.raises(ValueError, match=r"src1_repeat_stride=-1"):
        gm(f32, f32, 1, False, 0, (1, 1, 8, -1))
    with pytest.raises(TypeError, match="must be a GatherMaskParams, a tuple of 4 ints"):
        gm(f32, f32, 1, False, 0, (1, 1, 8))
    with pytest.raises(ValueError, match=r"mask \(Counter mode\)=0"):
        gm(f32, f32, 1, True, 0, (1, 1, 8, 0))
    with pytest.raises(ValueError, match=r"mask \(Normal mode: no effect\)=4294967296"):
        gm(f32, f32, 1, False, 2**32, (1, 1, 8, 0))
    with pytest.raises(TypeError, match=r"reduce_mode must be a bool \(False: Normal, True: "
                                        r"Counter\), got 2"):
        gm(f32, f32, 1, 2, 0, (1, 1, 8, 0))
    with pytest.raises(ValueError, match="src0 has 64 elements but repeat 1 reads element 64"):
        gm(f32, f32, 1, False, 0, (1, 2, 8, 0))
    with pytest.raises(ValueError, match="src1_pattern has 1 words but repeat 0 reads its bits "
                                         "from word 1"):
        gm(f32, f32, np.zeros(1, np.uint32), False, 0, (1, 1, 8, 0))
    with pytest.raises(ValueError, match="pattern 7 keeps 64 elements but dst has 10"):
        gm(np.zeros(10, np.float32), f32, 7, False, 0, (1, 1, 8, 0))
    with pytest.raises(TypeError, match="dst dtype half differs from src0 dtype float"):
        gm(np.zeros(64, np.float16), f32, 1, False, 0, (1, 1, 8, 0))


def test_user_pattern_overflowing_dst_raises_eagerly_and_under_jit():
    f32 = np.zeros(64, np.float32)
    ones = np.full(2, 0xFFFFFFFF, np.uint32)
    with pytest.raises(IndexError, match="gather_mask: the gather mask keeps 64 elements but dst "
                                         "has 10"):
        ascjax.gather_mask(np.zeros(10, np.float32), f32, ones, False, 0, (1, 1, 8, 0))
    run = jax.jit(lambda d, p: ascjax.gather_mask(d, f32, p, False, 0, (1, 1, 8, 0))[1])
    with pytest.raises(Exception, match="keeps 64 elements but dst has 10"):
        jax.block_until_ready(run(np.zeros(10, np.float32), ones))
    assert int(run(np.zeros(10, np.float32), np.array([0x3FF, 0], np.uint32))) == 10
    ck = Config(out_of_range="checkify")
    err, _ = checkify.checkify(jax.jit(lambda d, p: ascjax.gather_mask(
        d, f32, p, False, 0, (1, 1, 8, 0), config=ck)[1]))(np.zeros(10, np.float32), ones)
    assert "keeps 64 elements" in str(err.get())
    ignore = Config(out_of_range="ignore")
    d, c = ascjax.gather_mask(np.zeros(10, np.float32), np.arange(64, dtype=np.float32), ones,
                              False, 0, (1, 1, 8, 0), config=ignore)
    assert int(c) == 64 and np.asarray(d).tolist() == list(range(10))


def test_config_readings():
    """A39 zero_block, A40 raise, A41 raise."""
    src = np.arange(1, 65, dtype=np.float32)
    zb = Config(gather_mask_tail="zero_block")
    dst, cnt = ascjax.gather_mask(np.full(64, 9, np.float32), src, 3, False, 0, (1, 1, 8, 0),
                                  config=zb)
    # 16 kept; float DataBlocks are 8 elements, so 16 ends a block: nothing zeroed
    assert int(cnt) == 16 and (np.asarray(dst)[16:] == 9).all()
    dst, cnt = ascjax.gather_mask(np.full(64, 9, np.float32), src, np.array([7, 0], np.uint32),
                                  False, 0, (1, 1, 8, 0), config=zb)
    assert int(cnt) == 3 and np.asarray(dst).tolist()[:10] == [1, 2, 3, 0, 0, 0, 0, 0, 9, 9]
    with pytest.raises(ValueError, match="A40"):
        ascjax.gather_mask(src, src, 1, True, 65, (1, 1, 8, 0),
                           config=Config(gather_mask_counter="raise"))
    with pytest.raises(ValueError, match="A41"):
        ascjax.gather_mask(src, src, 1, False, 0, (1, 0, 8, 0),
                           config=Config(gather_mask_empty="raise"))
    dst, cnt = ascjax.gather_mask(src, src, 1, False, 0, (1, 0, 8, 0))
    assert int(cnt) == 0 and np.array_equal(np.asarray(dst), src)
    # asc_reduce's first n past one repeat reads A40 too: by default on through src0 and src1's
    # bits (every other element of 300: 150 kept), under "raise" refused, as GatherMask is
    a2 = Config(product="A2")
    words = np.arange(300, dtype=np.uint32)
    odd = np.full(10, 0xAAAAAAAA, np.uint32)
    out = np.asarray(ascjax.asc_reduce(np.zeros(300, np.uint32), words, odd, 300, config=a2))
    assert out[:150].tolist() == list(range(1, 300, 2)) and not out[150:].any()
    with pytest.raises(ValueError, match=r"asc_reduce: count=300 is more than the 64 uint32_t "
                                         r"elements of 256 bytes; .*\(A40\)"):
        ascjax.asc_reduce(np.zeros(300, np.uint32), words, odd, 300,
                          config=a2.replace(gather_mask_counter="raise"))


def test_gradients():
    """The cotangent of dst element k goes to the src0 element written there; unwritten dst
    elements pass theirs through; the count has none."""
    src = np.arange(1, 65, dtype=np.float32)
    dst = np.zeros(64, np.float32)
    weights = np.arange(64, dtype=np.float32)
    pattern = np.array([0b1001, 0], np.uint32)      # keeps elements 0 and 3

    def loss(d, s):
        out, cnt = ascjax.gather_mask(d, s, pattern, False, 0, (1, 1, 8, 0))
        return jnp.sum(out * weights) + 0 * cnt.astype(jnp.float32)

    gd, gs = jax.grad(loss, argnums=(0, 1))(dst, src)
    want_s = np.zeros(64, np.float32)
    want_s[0], want_s[3] = 0, 1                      # dst[0] <- src[0], dst[1] <- src[3]
    want_d = weights.copy()
    want_d[:2] = 0
    np.testing.assert_array_equal(gs, want_s)
    np.testing.assert_array_equal(gd, want_d)
    # built-in pattern 2 (odd elements) under jit, through vjp
    _, vjp = jax.vjp(lambda s: ascjax.gather_mask(dst, s, 2, False, 0, (1, 1, 8, 0))[0], src)
    (g,) = vjp(jnp.asarray(weights))
    want = np.zeros(64, np.float32)
    want[1::2] = weights[:32]
    np.testing.assert_array_equal(g, want)


def test_asc_reduce_page_example_and_forms():
    """c-memory 调用示例: 128 uint16, src1 of 128 / 16 words, first-n form."""
    src0 = np.arange(128, dtype=np.uint16)
    src1 = np.full(8, 0x8001, np.uint16)            # bits 0 and 15 of every word
    dst = ascjax.asc_reduce(np.zeros(128, np.uint16), src0, src1, 128, config=A2)
    want = [i for i in range(128) if i % 16 in (0, 15)]
    np.testing.assert_array_equal(np.asarray(dst)[:16], np.uint16(want))
    assert ascjax.instruction("asc_reduce_sync").func is ascjax.asc_reduce
    # repeat form, built-in pattern 3 (src1 unused), two repeats 4 DataBlocks apart
    u32 = np.arange(200, dtype=np.uint32)
    dst = ascjax.asc_reduce(np.zeros(40, np.uint32), u32, None, 2, 1, 3, 4, 0, config=A2)
    want = [e for e in range(64) if e % 4 == 0] + [32 + e for e in range(64) if e % 4 == 0]
    np.testing.assert_array_equal(np.asarray(dst)[:32], np.uint32(want))
    # pattern_mode 0: the user mask, src1_repeat_stride 1 DataBlock = 8 uint32 words
    src1 = np.zeros(16, np.uint32)
    src1[8] = 1
    dst = ascjax.asc_reduce(np.zeros(4, np.uint32), u32, src1, 2, 1, 0, 8, 1, config=A2)
    assert np.asarray(dst).tolist() == [64, 0, 0, 0]


def test_asc_reduce_errors():
    u16 = np.zeros(128, np.uint16)
    with pytest.raises(TypeError, match="asc_reduce: not available on product .950."):
        ascjax.asc_reduce(u16, u16, u16[:8], 128)
    with pytest.raises(TypeError, match="is not supported on product 'A2'"):
        ascjax.asc_reduce(u16.view(np.float16), u16.view(np.float16), u16[:8], 128, config=A2)
    with pytest.raises(ValueError, match=r"pattern_mode=8.*\[0, 7\]"):
        ascjax.asc_reduce(u16, u16, u16, 1, 1, 8, 8, 0, config=A2)
    with pytest.raises(ValueError, match=r"count=129.*\[1, 128\]"):
        ascjax.asc_reduce(u16, u16, u16, 129, config=A2)
    with pytest.raises(TypeError, match="expected .* got 5 positional"):
        ascjax.asc_reduce(u16, u16, u16, 1, 1, config=A2)
    with pytest.raises(TypeError, match="src1 is None; the user pattern is a LocalTensor of "
                                        "uint16_t"):
        ascjax.asc_reduce(u16, u16, None, 1, 1, 0, 8, 0, config=A2)
    with pytest.raises(TypeError, match="src1 has dtype uint32"):
        ascjax.asc_reduce(u16, u16, np.zeros(8, np.uint32), 128, config=A2)


def test_examples_run():
    from ascjax._src.examples import EXAMPLES
    assert EXAMPLES["gather_mask"]()


@pytest.mark.parametrize("mode", ["eager", "jit", "vmap"])
def test_bfloat16_codes_survive_a_zero_block_stride(mode):
    """src0BlockStride 0 reads one block again and again: XLA's CPU backend ran that broadcast
    in float32 and flushed a bfloat16 subnormal (0x8074 -> 0x8000; found by the registry's
    deep profile)."""
    from ascjax import reference

    src = np.arange(16, dtype=np.uint16)
    src[2], src[4] = 0x8074, 0x7F81
    src = src.view(ml_dtypes.bfloat16)
    dst = np.zeros(131, ml_dtypes.bfloat16)
    config = Config(product="A3")
    args = (1, False, 0, (0, 1, 15, 3))
    f = lambda d, s: ascjax.gather_mask(d, s, *args, config=config)[0]
    want = np.asarray(reference.gather_mask(dst, src, *args, config=config)[0]).view(np.uint16)
    if mode == "vmap":
        got = jax.vmap(f)(np.stack([dst] * 2), np.stack([src] * 2))[1]
    else:
        got = (jax.jit(f) if mode == "jit" else f)(dst, src)
    np.testing.assert_array_equal(np.asarray(got).view(np.uint16), want)
    assert 0x8074 in want and 0x7F81 in want


def test_parameter_structs_by_tuple_dict_or_the_pages_field_names():
    """A review: GatherMaskParams as a dict of the page's names raised a bare NamedTuple error,
    and Gatherb refused GatherRepeatParams' nine fields in the page's table 3 order."""
    dst, x = np.zeros(64, np.float32), np.arange(64, dtype=np.float32)
    want = ascjax.gather_mask(dst, x, 2, False, 0, (1, 1, 8, 0))
    for params in ({"src0BlockStride": 1, "repeatTimes": 1, "src0RepeatStride": 8,
                    "src1RepeatStride": 0},
                   {"repeat_times": 1, "src1_repeat_stride": 0},  # the rest: the defaults
                   ascjax.GatherMaskParams(repeat_times=1, src1_repeat_stride=0)):
        got = ascjax.gather_mask(dst, x, 2, False, 0, params)
        np.testing.assert_array_equal(np.asarray(got[0]).view(np.uint32),
                                      np.asarray(want[0]).view(np.uint32))
        assert int(got[1]) == int(want[1]) == 32
    with pytest.raises(TypeError, match=r"gather_mask: gather_mask_params has no field "
                                        r"'src0BlkStride'; its fields are src0BlockStride, "
                                        r"repeatTimes"):
        ascjax.gather_mask(dst, x, 2, False, 0, {"src0BlkStride": 1, "repeatTimes": 1})
    with pytest.raises(TypeError, match=r"a tuple of 4 ints in its field order"):
        ascjax.gather_mask(dst, x, 2, False, 0, (1, 1, 8))
    src = np.arange(256, dtype=np.uint16)
    offset = (np.arange(8)[::-1] * 32).astype(np.uint32)
    pair = np.asarray(ascjax.gatherb(np.zeros(256, np.uint16), src, offset, 1, (1, 8)))
    for params in ((1, 8, 0, 0, 0, 0, 0, 0, 0), {"dstBlkStride": 1, "dstRepStride": 8,
                                                 "blockNumber": 0}):
        np.testing.assert_array_equal(
            np.asarray(ascjax.gatherb(np.zeros(256, np.uint16), src, offset, 1, params)), pair)
    with pytest.raises(TypeError, match=r"a tuple of 2 to 9 ints in its field order "
                                        r"\(dstBlkStride, dstRepStride; then blockNumber"):
        ascjax.gatherb(np.zeros(256, np.uint16), src, offset, 1, (1,))


def test_a_batched_overflow_names_its_tensor():
    """A review: in a batch of 3 tensors only tensor 2's pattern keeps more than dst holds;
    the fault said only 'keeps 40 elements', not which tensor (the README: in a batch, its
    register or tensor). Eager, under jit and under checkify alike."""
    dst = np.zeros((3, 16), np.float32)
    src = np.arange(3 * 64, dtype=np.float32).reshape(3, 64)
    pattern = np.zeros((3, 2), np.uint32)
    pattern[:, 0] = 0xF
    pattern[2] = [0xFFFFFFFF, 0xFF]  # 40 kept
    said = "gather_mask: the gather mask keeps 40 elements in tensor 2 but dst has 16"

    def call(d, s, p, config=None):
        return ascjax.gather_mask(d, s, p, False, 0, (1, 1, 8, 0), config=config)

    with pytest.raises(IndexError, match=said):
        call(dst, src, pattern)
    with pytest.raises(jax.errors.JaxRuntimeError, match=said):
        jax.block_until_ready(jax.jit(call)(dst, src, pattern))
    checked = ascjax.Config(out_of_range="checkify")
    err, _ = jax.jit(checkify.checkify(lambda d, s, p: call(d, s, p, checked)))(dst, src, pattern)
    assert said in err.get()
    with pytest.raises(IndexError, match="keeps 40 elements but dst has 16"):  # one tensor
        call(dst[2], src[2], pattern[2])


def test_asc_reduce_repeat_range_is_an_assumption_with_the_prototypes_reading():
    """A51: asc_reduce's repeat is uint16_t in its prototype, with no range on its page; the
    default reads it as the 8-bit repeat field (GatherMask's repeatTimes), [0, 255], and
    Config(asc_reduce_repeat="prototype") takes [0, 65535], 256 repeats of 256 bytes here."""
    a2 = ascjax.Config(product="A2")
    src = np.arange(128 * 257, dtype=np.uint16)
    dst = np.full(src.size, 0xABCD, np.uint16)
    with pytest.raises(ValueError, match=r"asc_reduce: repeat \(Config\(asc_reduce_repeat="
                                         r"'field'\)\)=256 is outside the valid range \[0, 255\]"):
        ascjax.asc_reduce(dst, src, None, 256, 1, 2, 8, 0, config=a2)
    wide = a2.replace(asc_reduce_repeat="prototype")
    got = ascjax.asc_reduce(dst, src, None, 256, 1, 2, 8, 0, config=wide)
    want = reference.asc_reduce(dst, src, None, 256, 1, 2, 8, 0, config=wide)
    assert np.array_equal(np.asarray(got), np.asarray(want))
    assert np.array_equal(np.asarray(got)[:128 * 128], src[1:128 * 256:2])  # pattern 2: odd
    with pytest.raises(ValueError, match=r"=65536 is outside the valid range \[0, 65535\]"):
        ascjax.asc_reduce(dst, src, None, 65536, 1, 2, 8, 0, config=wide)
