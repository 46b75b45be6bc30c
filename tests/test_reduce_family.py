"""BlockReduceSum, WholeReduceSum, RepeatReduceSum, ReduceSum: bit for bit against plain loops
written from SPEC 5/10, with repeats, strides, masks, specials, errors and gradients."""

import math
import re

import jax
import numpy as np
import pytest
from strategies import DTYPES, bits, bits_of, register_values

import ascjax
from ascjax import reference

DT = DTYPES
RNG = np.random.default_rng(5)


def tree(values, name):
    """Adjacent-pair tree over a power-of-two list."""
    return reference.sum_adjacent_tree(values, name)


def active_of(mask, lanes):
    if isinstance(mask, int):
        return [e < mask for e in range(lanes)]
    return [bool((mask[e // 64] >> (e % 64)) & 1) for e in range(lanes)]


def source(name, n):
    fi = np.finfo(DT[name])
    x = (RNG.standard_normal(n) * np.exp2(RNG.integers(-8, 8, n))).astype(DT[name])
    x[RNG.integers(0, n, 6)] = [np.inf, -np.inf, np.nan, -0.0, fi.smallest_subnormal, fi.max]
    return x


# (repeat, mask, dst_rep_stride, src_blk_stride, src_rep_stride)
CASES = [
    (1, 256, 1, 1, 8),
    (3, 77, 1, 1, 8),
    (2, [0xF0F0F0F0F0F0F0F0, 0x1], 2, 2, 16),
    (4, 64, 0, 1, 4),  # dst stride 0: the last repeat's write wins
    (2, [0, 1 << 63], 1, 1, 0),  # bit mode, second word only; src stride 0 reads one repeat twice
]


def mask_for(name, mask):
    """CASES hold 16-bit masks; a 32-bit type takes the continuous count clipped, or word 0."""
    if name == "half":
        return mask
    if isinstance(mask, int):
        return min(mask, 64)
    return [mask[0] or mask[1]]


@pytest.mark.parametrize("name", ["half", "float"])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_block_reduce_sum_matches_loops(name, case):
    repeat, mask, dst_rep, blk, rep = CASES[case]
    mask = mask_for(name, mask if not isinstance(mask, int) else min(mask, 128))
    src = source(name, 1024)
    dst = np.full(64, 7, DT[name])
    got = ascjax.block_reduce_sum(dst, src, repeat, mask, dst_rep, blk, rep)
    want = reference.block_reduce_sum(dst, src, repeat, mask, dst_rep, blk, rep)
    np.testing.assert_array_equal(bits(got, name), bits(want, name))


@pytest.mark.parametrize("name", ["half", "float"])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_whole_and_repeat_reduce_sum_match_loops(name, case):
    repeat, mask, dst_rep, blk, rep = CASES[case]
    mask = mask_for(name, mask if not isinstance(mask, int) else min(mask, 128))
    src = source(name, 1024)
    dst = np.full(16, 7, DT[name])
    want = reference.whole_reduce_sum(dst, src, mask, repeat, dst_rep, blk, rep)
    got = ascjax.whole_reduce_sum(dst, src, mask, repeat, dst_rep, blk, rep)
    np.testing.assert_array_equal(bits(got, name), bits(want, name))
    if isinstance(mask, int):
        got = ascjax.repeat_reduce_sum(dst, src, repeat, mask, 123, blk, dst_rep, rep)
        np.testing.assert_array_equal(bits(got, name), bits(want, name))


def test_block_reduce_sum_empty_blocks():
    src = np.ones(128, np.float16)
    dst = np.full(8, 9, np.float16)
    zero = np.asarray(ascjax.block_reduce_sum(dst, src, 1, 20, 1, 1, 8))
    assert zero.tolist() == [16, 4, 0, 0, 0, 0, 0, 0]
    keep = np.asarray(ascjax.block_reduce_sum(dst, src, 1, 20, 1, 1, 8,
                                              config=ascjax.Config(empty_block="keep")))
    assert keep.tolist() == [16, 4, 9, 9, 9, 9, 9, 9]


@pytest.mark.parametrize("name", ["half", "float"])
@pytest.mark.parametrize("count", [1, 100, 300, 1000])
def test_reduce_sum_count_form_every_method(name, count):
    src = source(name, 1000)
    dst = np.full(4, 5, DT[name])
    for method in (1, 2, 3):
        got = np.asarray(ascjax.reduce_sum(dst, src, None, count, method=method)[0])
        want, _ = reference.reduce_sum(dst, src, None, count, method=method)
        np.testing.assert_array_equal(bits(got[:1], name), bits(want[:1], name))
        np.testing.assert_array_equal(got[1:], dst[1:])


def test_reduce_sum_methods_numbered_as_the_page():
    """The issue's reproducer: 512 halves, 2048 at element 0 and 1 at 128, 256 and 384 (first-n
    form, 4 repeats with sums 2048, 1, 1, 1). In order (method 1) every 2048 + 1 is a tie that
    rounds back to 2048; the tree (method 2) adds 1 + 1 first: 2048 + 2 = 2050. The vector
    merge (method 3) adds lane 0 in repeat order, 2048 + 1 + 1 + 1 = 2048."""
    src = np.zeros(512, np.float16)
    src[0], src[128::128] = 2048, 1
    dst = np.zeros(1, np.float16)
    for method, name, want in ((1, "sequential", 2048.0), (2, "tree", 2050.0),
                               (3, "vector_merge", 2048.0)):
        for m in (method, name):
            assert float(ascjax.reduce_sum(dst, src, None, 512, method=m)[0][0]) == want
            assert float(reference.reduce_sum(dst, src, None, 512, method=m)[0][0]) == want
    # A tree of register adds over the repeats: (2048 + 1) + (1 + 1) = 2050.
    merge_tree = ascjax.Config(vector_merge="tree")
    assert float(ascjax.reduce_sum(dst, src, None, 512, method=3,
                                   config=merge_tree)[0][0]) == 2050
    assert float(reference.reduce_sum(dst, src, None, 512, method=3,
                                      config=merge_tree)[0][0]) == 2050


@pytest.mark.parametrize("dtype", [np.int32, np.uint32])
def test_reduce_sum_takes_32_bit_integers_on_the_950(dtype):
    """The 950's 数据类型 row lists int32_t and uint32_t (they were refused as "not supported on
    product '950'"). Adds wrap; under saturation the order shows: in method 1 the repeat sums
    2^30 * 64 saturate each, then their sum saturates; method 3 saturates lane by lane."""
    top = np.iinfo(dtype).max
    dst = np.full(2, 7, dtype)
    total, _ = ascjax.reduce_sum(dst, np.arange(100, dtype=dtype), None, 100)
    assert total.tolist() == [4950, 7]
    big = np.full(256, 2**30, dtype)  # 4 repeats of 64 lanes: 2^38 in all
    saturate = ascjax.Config(int_overflow="saturate")
    for method in (1, 2, 3):
        assert int(ascjax.reduce_sum(dst, big, None, 256, method=method)[0][0]) == 2**38 % 2**32
        assert int(ascjax.reduce_sum(dst, big, None, 256, method=method,
                                     config=saturate)[0][0]) == top
    if dtype == np.int32:
        # repeat 0's tree saturates top + 1 at top, repeat 1 sums to -64: methods 1 and 2 give
        # top - 64; method 3 adds lane by lane first (top - 1, 1 - 1, then -1s): exact, top - 63
        mixed = np.array([top, 1] + [0] * 62 + [-1] * 64, dtype)
        for method, want in ((1, top - 64), (2, top - 64), (3, top - 63)):
            got, _ = ascjax.reduce_sum(dst, mixed, None, 128, method=method, config=saturate)
            ref, _ = reference.reduce_sum(dst, mixed, None, 128, method=method, config=saturate)
            assert int(got[0]) == int(ref[0]) == want, (method, got, ref)
    with pytest.raises(TypeError, match=r"reduce_sum: T int32_t is not supported on product "
                                        r"'A2'; supported: \['half', 'float'\]"):
        ascjax.reduce_sum(np.zeros(1, np.int32), np.arange(8, dtype=np.int32), None, 8,
                          config=ascjax.Config(product="A2"))


def _adversarial(rng, name, n):
    """Random values with NaN, +-inf, -0, subnormals and large values mixed in."""
    return register_values(rng, name, (n,), p_special=float(rng.choice([0.05, 0.3, 0.7])))


@pytest.mark.parametrize("name", ["half", "float"])
@pytest.mark.parametrize("merge", ["sequential", "tree"])
@pytest.mark.parametrize("lanes_skipped", [False, True])
def test_reduce_sum_vector_merge_matches_loops(name, merge, lanes_skipped):
    rng = np.random.default_rng(18)
    lanes = 128 if name == "half" else 64
    config = ascjax.Config(vector_merge=merge,
                           masked_lanes="skip" if lanes_skipped else "zero")
    dst = np.full(2, 3, DT[name])
    # first-n form: one repeat, exact repeats, a partial last repeat
    for count in (1, lanes - 3, lanes, 2 * lanes, 3 * lanes + 5, 7 * lanes + 1):
        src = _adversarial(rng, name, count + 10)
        got, _ = ascjax.reduce_sum(dst, src, None, count, method=3, config=config)
        want, _ = reference.reduce_sum(dst, src, None, count, method=3, config=config)
        np.testing.assert_array_equal(bits(got, name), bits(want, name), err_msg=f"n={count}")
    # level-0 form: masks (continuous, bit mode) and strides, including overlapping repeats
    for repeats, mask, rep in ((1, lanes, 8), (3, 77 % lanes, 8), (5, [0xF0F0F0F0F0F0F0F0] *
                                                                    (lanes // 64), 16),
                               (4, 5, 0), (6, lanes, 3)):
        src = _adversarial(rng, name, (repeats * rep + 8) * (lanes // 8) + 10)
        got, _ = ascjax.reduce_sum(dst, src, None, mask, repeats, rep, method=3, config=config)
        want, _ = reference.reduce_sum(dst, src, None, mask, repeats, rep, method=3,
                                       config=config)
        np.testing.assert_array_equal(bits(got, name), bits(want, name),
                                      err_msg=f"{repeats} {mask} {rep}")
    batch = np.stack([_adversarial(rng, name, 4 * lanes) for _ in range(3)])
    got, _ = jax.jit(lambda s: ascjax.reduce_sum(np.zeros((3, 1), DT[name]), s, None,
                                                 3 * lanes + 7, method="vector_merge",
                                                 config=config))(batch)
    for k in range(3):
        want, _ = reference.reduce_sum(np.zeros(1, DT[name]), batch[k], None, 3 * lanes + 7,
                                       method=3, config=config)
        np.testing.assert_array_equal(bits(got[k], name), bits(want, name))


def _default_of(product, name, count=None, config=None, level0=False):
    """The methods whose bits reduce_sum's default gives, on two inputs of four repeats in the
    first lanes (cut to ``count`` elements). A: 2^p at lane 0 of repeat 0 and 1 at lane 0 of
    repeats 1-3: in order, or merged lane by lane, every 2^p + 1 is a tie that rounds to 2^p;
    the tree adds 1 + 1 first and gives 2^p + 2. B: 2^p and 1 at lanes 0 and 1 of repeat 0 and
    1 at lane 1 of repeat 1: only the merge adds the two 1s first (2^p + 2). 2^p is 2048 for
    half, 2^24 for float. The default's bits are the reference model's default, and each
    method's bits are the reference model's (the emulator's explicit methods are checked
    against it elsewhere): one compile per call form, not four."""
    lanes = 128 if name == "half" else 64
    big = 2048 if name == "half" else 2**24
    config = (config or ascjax.Config()).replace(product=product)
    args = (lanes, 4, 8) if level0 else (count,)
    dst = np.zeros(1, DT[name])
    matches = {1, 2, 3}
    for ones in ([lanes, 2 * lanes, 3 * lanes], [1, lanes + 1]):
        src = np.zeros(4 * lanes + 64, DT[name])
        src[0], src[ones] = big, 1
        got = bits(ascjax.reduce_sum(dst, src, None, *args, config=config)[0], name)
        want = bits(reference.reduce_sum(dst, src, None, *args, config=config)[0], name)
        np.testing.assert_array_equal(got, want)
        matches &= {m for m in (1, 2, 3) if np.array_equal(got, bits(
            reference.reduce_sum(dst, src, None, *args, method=m, config=config)[0], name))}
    return sorted(matches)


@pytest.mark.parametrize("name", ["half", "float"])
def test_reduce_sum_default_method_per_product_and_form(name):
    """The page's table: A2 / A3 first-n form 1, level-0 form 2; 200I/500 A2, inference AI
    Core, training (half alone there): 2; 950 level-0 (normal mask mode) 2. Four whole
    repeats."""
    four = 4 * (128 if name == "half" else 64) + 8  # 4 repeats and a partial fifth
    training = ("training",) if name == "half" else ()
    for product in ("A2", "A3"):
        assert _default_of(product, name, four - 8) == [1]
        assert _default_of(product, name, four) == [1]
    for product in ("A2", "A3", "950", "200I/500 A2", "inference AI Core") + training:
        assert _default_of(product, name, level0=True) == [2]
    for product in ("200I/500 A2", "inference AI Core") + training:
        assert _default_of(product, name, four - 8) == [2]
        assert _default_of(product, name, four) == [2]


@pytest.mark.parametrize("name", ["half", "float"])
def test_reduce_sum_950_first_n_default_by_bytes(name):
    """The 950's first-n form runs in counter mask mode (A17): 256 to 1024 bytes of data use
    method 3, more use method 2; under Config(first_n_mask_mode="normal") always method 2."""
    size = 2 if name == "half" else 4
    normal = ascjax.Config(first_n_mask_mode="normal")
    # 256 bytes: one repeat, where the three methods give the same bits.
    assert _default_of("950", name, 256 // size) == [1, 2, 3]
    assert _default_of("950", name, 256 // size, config=normal) == [1, 2, 3]
    for nbytes in (512, 1024):                      # 2 and 4 repeats
        assert _default_of("950", name, nbytes // size) == [3]
        assert 2 in _default_of("950", name, nbytes // size, config=normal)
    assert _default_of("950", name, 1024 // size, config=normal) == [2]
    for nbytes in (1024 + size, 1024 + 32 * size):  # a fifth, partial repeat
        assert _default_of("950", name, nbytes // size) == [2]
        assert _default_of("950", name, nbytes // size, config=normal) == [2]


def test_reduce_sum_default_modes_per_product():
    # Repeat sums 2174, 129, 129, 129, 129: method 1 adds each odd 129 to a number above 2048,
    # where half's spacing is 2 (a rounding each time); method 2 adds the 129s together first.
    src = np.ones(128 * 5, np.float16)
    src[0] = 2047
    src[128::128] = 2
    dst = np.zeros(1, np.float16)
    tree = float(ascjax.reduce_sum(dst, src, None, 640)[0][0])
    seq = float(ascjax.reduce_sum(dst, src, None, 640, config=ascjax.Config(product="A2"))[0][0])
    assert tree == float(reference.reduce_sum(dst, src, None, 640, method=2)[0][0])
    assert seq == float(reference.reduce_sum(dst, src, None, 640, method=1)[0][0])
    assert (tree, seq) == (2692.0, 2688.0)
    # The level-0 (mask, repeat) form is method 2 on A2 too.
    level0 = float(ascjax.reduce_sum(dst, src, None, 128, 5, 8,
                                    config=ascjax.Config(product="A2"))[0][0])
    assert level0 == tree


def test_reduce_sum_level0_form_masks_and_strides():
    src = source("float", 512)
    dst = np.zeros(2, np.float32)
    got, _ = ascjax.reduce_sum(dst, src, None, [0xFFFF0000FFFF], 3, 16)
    act = active_of([0xFFFF0000FFFF], 64)
    sums = [tree([src[r * 16 * 8 + e] if act[e] else np.float32(0) for e in range(64)], "float")
            for r in range(3)]
    want = tree(sums + [np.float32(0)], "float")
    np.testing.assert_array_equal(bits(np.asarray(got)[:1], "float"), bits([want], "float"))
    np.testing.assert_array_equal(np.asarray(ascjax.reduce_sum(dst, src, None, 64, 0, 8)[0]),
                                  dst)


def test_batched_jit_and_eager_agree():
    src = np.stack([source("half", 512) for _ in range(3)])
    dst = np.zeros((3, 32), np.float16)

    def f(d, s):
        return ascjax.block_reduce_sum(d, s, 4, 128, 1, 1, 8)

    batched = f(dst, src)
    np.testing.assert_array_equal(bits(jax.jit(f)(dst, src), "half"), bits(batched, "half"))
    for k in range(3):
        np.testing.assert_array_equal(bits(f(dst[k], src[k]), "half"), bits(batched[k], "half"))

    def g(d, s):
        return ascjax.reduce_sum(d, s, None, 500)[0]

    np.testing.assert_array_equal(bits(jax.jit(g)(dst, src), "half"), bits(g(dst, src), "half"))


def test_gradients_are_those_of_the_exact_operation():
    src = np.linspace(-1, 1, 256, dtype=np.float32)
    dst = np.zeros(16, np.float32)
    g = jax.grad(lambda s: ascjax.whole_reduce_sum(dst, s, 10, 4, 1, 1, 8).sum())(src)
    want = np.zeros(256, np.float32)
    for r in range(4):
        want[r * 64:r * 64 + 10] = 1
    np.testing.assert_array_equal(np.asarray(g), want)
    g = jax.grad(lambda s: ascjax.reduce_sum(dst, s, None, 100)[0][0])(src)
    np.testing.assert_array_equal(np.asarray(g), (np.arange(256) < 100).astype(np.float32))
    gd = jax.grad(lambda d: ascjax.block_reduce_sum(d, src, 1, 64, 1, 1, 8).sum())(dst)
    np.testing.assert_array_equal(np.asarray(gd), (np.arange(16) >= 8).astype(np.float32))


def test_errors_name_the_instruction_and_argument():
    h = np.zeros(256, np.float16)
    with pytest.raises(ValueError, match="block_reduce_sum: repeat_time=256"):
        ascjax.block_reduce_sum(h, h, 256, 128, 1, 1, 8)
    with pytest.raises(ValueError, match=r"whole_reduce_sum: mask \(continuous mode, half: 128 "
                                         r"lanes a repeat\)=129"):
        ascjax.whole_reduce_sum(h, h, 129, 1, 1, 1, 8)
    with pytest.raises(ValueError, match="LocalTensor is too short"):
        ascjax.whole_reduce_sum(h, h, 128, 3, 1, 1, 8)
    with pytest.raises(ValueError, match="dst has 1 elements"):
        ascjax.block_reduce_sum(h[:1], h, 1, 128, 1, 1, 8)
    with pytest.raises(TypeError, match="continuous mode only"):
        ascjax.repeat_reduce_sum(h, h, 1, [1, 0], 0, 1, 1, 8)
    with pytest.raises(TypeError, match="not available on product 'A3'"):
        ascjax.repeat_reduce_sum(h, h, 1, 128, 0, 1, 1, 8,
                                 config=ascjax.Config(product="A3"))
    with pytest.raises(TypeError, match="is not supported on product 'training'"):
        ascjax.block_reduce_sum(np.zeros(64, np.float32), np.zeros(64, np.float32), 1, 64, 1,
                                1, 8, config=ascjax.Config(product="training"))
    # ReduceSum's page: "Atlas 训练系列产品，支持half" (it summed float there, both forms)
    f = np.ones(192, np.float32)
    for args in ((64,), (64, 3, 8)):
        with pytest.raises(TypeError, match=r"reduce_sum: T float is not supported on product "
                                            r"'training'; supported: \['half'\]"):
            ascjax.reduce_sum(np.zeros(1, np.float32), f, np.zeros(8, np.float32), *args,
                              config=ascjax.Config(product="training"))
    with pytest.raises(ValueError, match="dst_rep_stride=0"):
        ascjax.whole_reduce_sum(h, h, 128, 1, 0, 1, 8,
                                config=ascjax.Config(product="training"))
    with pytest.raises(ValueError, match="count=300"):
        ascjax.reduce_sum(h, h, None, 300)
    for bad in (4, 0, True, "merge", 2.0):
        with pytest.raises(ValueError, match=f"reduce_sum: method={bad!r} is not one of 1, 2, "
                                             f"3, 'sequential', 'tree', 'vector_merge'"):
            ascjax.reduce_sum(h, h, None, 100, method=bad)
    with pytest.raises(ValueError, match="reduce_sum: method=4"):
        ascjax.reduce_sum(h, h, None, 128, 0, 8, method=4)
    with pytest.raises(TypeError, match="mode"):
        ascjax.reduce_sum(h, h, None, 100, mode=1)  # the old keyword is gone
    with pytest.raises(TypeError, match="positional arguments"):
        ascjax.reduce_sum(h, h, None, 1, 2)
    with pytest.raises(TypeError, match="differs from src dtype"):
        ascjax.block_reduce_sum(np.zeros(8, np.float32), h, 1, 128, 1, 1, 8)


def test_registry_and_conformance_table():
    for name in ("block_reduce_sum", "whole_reduce_sum", "repeat_reduce_sum", "reduce_sum"):
        ins = ascjax.INSTRUCTIONS[name]
        assert ins.function is getattr(ascjax, name) and ins.spec == "10"
    table = ascjax.conformance_table()
    assert "`reduce_sum` | `ReduceSum`" in table and "| A12 |" in table
    assert "assumed (A3, A7, A8, A9, A12, A17, A18, A26, A47)" in table
    assert 'Config(first_n_mask_mode="normal")' in table and 'Config(vector_merge="tree")' in table


def test_reduce_sum_shared_tmp_buffer_is_checked_as_the_page_sizes_it():
    """shared_tmp_buffer was ignored. The page (关键特性说明): method 1 takes any size and never
    uses it; method 2 needs DivCeil(firstMaxRepeat, elementsPerBlock) * elementsPerBlock
    elements of T, firstMaxRepeat = repeatTime (level 0) or count / elementsPerRepeat (integer
    division; 1 below one repeat). The page sizes no buffer for method 3. None: not checked."""
    half, dst = np.ones(8320, np.float16), np.zeros(16, np.float16)
    level0 = (128, 65, 8)  # the page's sample: repeatTime 65, DivCeil(65, 16) * 16 = 80 halves
    short, enough = np.zeros(79, np.float16), np.zeros(80, np.float16)
    message = ("reduce_sum: shared_tmp_buffer has 79 elements; method 2 requires at least 80 "
               "(160 bytes) for firstMaxRepeat=65 (the page: DivCeil(firstMaxRepeat, 16) * 16; "
               "methods 1 and 3 take any size)")
    for args in (level0, (8320,)):  # first n: 8320 / 128 = 65 too
        with pytest.raises(ValueError, match=re.escape(message)):
            ascjax.reduce_sum(dst, half, short, *args, method=2)
        for tmp, method in ((short, 1), (short, 3), (np.zeros(1, np.float16), 1), (enough, 2),
                            (np.zeros((2, 80), np.float16), 2), (None, 2), (None, 1)):
            assert float(ascjax.reduce_sum(dst, half, tmp, *args, method=method)[0][0]) == 8320
    # Atlas A2: first n defaults to method 1 (any size), level 0 to method 2
    a2 = ascjax.Config(product="A2")
    assert float(ascjax.reduce_sum(dst, half, short, 8320, config=a2)[0][0]) == 8320
    with pytest.raises(ValueError, match=re.escape(message)):
        ascjax.reduce_sum(dst, half, short, *level0, config=a2)
    # count 100 < 128: 1 -> 16; 2049 = 16 * 128 + 1: 16 -> 16 (not the 17 repeats run: 32);
    # 2176 = 17 * 128: 17 -> 32
    for count, first, need in ((100, 1, 16), (2049, 16, 16), (2176, 17, 32)):
        got, _ = ascjax.reduce_sum(dst, half, np.zeros(need, np.float16), count, method=2)
        assert float(got[0]) == float(ascjax.reduce_sum(dst, half, None, count, method=2)[0][0])
        with pytest.raises(ValueError, match=re.escape(
                f"has {need - 1} elements; method 2 requires at least {need} ({2 * need} bytes) "
                f"for firstMaxRepeat={first} ")):
            ascjax.reduce_sum(dst, half, np.zeros(need - 1, np.float16), count, method=2)
    # float: 8 per DataBlock, DivCeil(65, 8) * 8 = 72 floats
    single = np.ones(65 * 64, np.float32)
    with pytest.raises(ValueError, match=re.escape(
            "has 71 elements; method 2 requires at least 72 (288 bytes) for firstMaxRepeat=65 "
            "(the page: DivCeil(firstMaxRepeat, 8) * 8;")):
        ascjax.reduce_sum(np.zeros(8, np.float32), single, np.zeros(71, np.float32), 64, 65, 8,
                          method=2)
    # a given buffer is a LocalTensor of T, whatever the method
    for method in (1, 2, 3):
        with pytest.raises(TypeError, match=re.escape(
                "reduce_sum: shared_tmp_buffer dtype float32 differs from T half (float16)")):
            ascjax.reduce_sum(dst, half, np.zeros(80, np.float32), *level0, method=method)
    with pytest.raises(TypeError, match=re.escape(
            "reduce_sum: shared_tmp_buffer must be None or a LocalTensor of T (an array), "
            "got list: the third argument is the buffer")):
        ascjax.reduce_sum(dst, half, [0.0] * 80, *level0)


# --- the sum SPR ReduceSum sets (GetReduceRepeatSumSpr) -------------------------------------

@pytest.mark.parametrize("product", ["950", "A3", "A2"])
def test_reduce_sum_page_example_gives_the_sum_the_getter_reads(product):
    """GetReduceRepeatSumSpr's example: ``ReduceSum(dst, src, work, 128); float res =
    GetReduceRepeatSumSpr<float>();`` is "the sum of the first 128": dst[0]'s bits, and, on
    inputs whose every partial sum is exact (multiples of 1/8 below 125), math.fsum's."""
    src = (np.random.default_rng(31).integers(-1000, 1001, 300) / 8).astype(np.float32)
    config = ascjax.Config(product=product)
    dst, spr = ascjax.reduce_sum(np.zeros(8, np.float32), src, np.zeros(64, np.float32), 128,
                                 config=config)
    res = ascjax.get_reduce_repeat_sum_spr(spr, config=config)
    assert float(res) == math.fsum(src[:128].tolist())
    assert bits_of(res) == bits_of(np.asarray(dst)[0])
    assert (res.dtype, spr.value.dtype, spr.index.dtype) == (np.float32, np.float32, np.uint32)
    # where the order rounds (half, 640 elements: 2692 on the 950, 2688 on Atlas A2/A3), the
    # register holds the sum as the product computed it, the one dst[0] got
    x = np.ones(640, np.float16)
    x[0], x[128::128] = 2047, 2
    dst, spr = ascjax.reduce_sum(np.zeros(1, np.float16), x, None, 640, config=config)
    res = ascjax.get_reduce_repeat_sum_spr(spr, config=config)
    assert float(res) == (2692.0 if product == "950" else 2688.0)
    assert bits_of(res) == bits_of(np.asarray(dst)[0])


@pytest.mark.parametrize("name", ["half", "float"])
def test_reduce_sum_spr_eager_jit_vmap_and_batched_agree(name):
    """The sum register of every form (first n, the A2 isSetMask=false count, level 0: A47) is
    dst[0]'s bits, and the same eagerly, under jit, under vmap and over a batch's leading axis,
    and the reference model's (NaN payloads, infs and subnormals in the inputs)."""
    rng = np.random.default_rng(32)
    dt, lanes = DT[name], 128 if name == "half" else 64
    x = np.stack([_adversarial(rng, name, 1100) for _ in range(3)])
    counted = ascjax.set_vector_mask(300, dtype=name, mode="counter")
    for args, kw, product in (((700,), {}, "A2"), ((5 * lanes + 3,), {}, "950"),
                              ((1,), {"is_set_mask": False, "mask_state": counted}, "A2"),
                              ((lanes, 3, 8), {}, "A2"), ((40, 4, 16), {}, "950")):
        config = ascjax.Config(product=product)

        def call(s, args=args, kw=kw, config=config):
            return ascjax.reduce_sum(np.zeros(2, dt), s, None, *args, config=config, **kw)

        eager = [call(row) for row in x]
        jitted = [jax.jit(call)(row) for row in x]
        vmapped = jax.vmap(call)(x)
        batched = ascjax.reduce_sum(np.zeros((3, 2), dt), x, None, *args, config=config, **kw)
        for k in range(3):
            want = reference.reduce_sum(np.zeros(2, dt), x[k], None, *args, config=config,
                                        **kw)
            assert bits_of(want[1].sum) == bits_of(want[0][0])
            for got in (eager[k], jitted[k],
                        (vmapped[0][k], jax.tree.map(lambda a, k=k: a[k], vmapped[1])),
                        (batched[0][k], jax.tree.map(lambda a, k=k: a[k], batched[1]))):
                assert bits_of(got[0]).tolist() == bits_of(want[0]).tolist(), (args, k)
                assert [bits_of(a).tolist() for a in got[1]] == \
                    [bits_of(a).tolist() for a in want[1]], (args, k)


def test_reduce_sum_keeps_the_max_min_registers_and_a_nop_keeps_all():
    """ReduceSum sets the sum register only: an incoming spr's value (a NaN with a payload) and
    index keep their bits, also broadcast over a batch; count 0 (Atlas A2) and repeatTime 0
    change no register (A26). The register carries no gradient."""
    payload = np.array([0x7E01], np.uint16).view(np.float16)[0]
    before = ascjax.ReduceSpr(np.float16(3), payload, np.uint32(0xDEADBEEF))
    x = np.arange(300).astype(np.float16) / 64
    dst, spr = ascjax.reduce_sum(np.zeros(1, np.float16), x, None, 300, spr=before)
    assert [int(bits_of(a)) for a in spr] == [int(bits_of(np.asarray(dst)[0])), 0x7E01,
                                              0xDEADBEEF]
    _, spr = jax.jit(lambda s: ascjax.reduce_sum(np.zeros((4, 1), np.float16), s, None, 300,
                                                 spr=before))(np.stack([x] * 4))
    assert bits_of(spr.value).tolist() == [0x7E01] * 4
    assert bits_of(spr.index).tolist() == [0xDEADBEEF] * 4
    a2 = ascjax.Config(product="A2")
    for args in ((0,), (128, 0, 8)):
        _, spr = ascjax.reduce_sum(np.zeros(1, np.float16), x, None, *args, spr=before, config=a2)
        assert [int(bits_of(a)) for a in spr] == [0x4200, 0x7E01, 0xDEADBEEF]
    g = jax.grad(lambda s: ascjax.reduce_sum(np.zeros(1, np.float32), s, None, 100)[1].sum)(
        np.ones(128, np.float32))
    np.testing.assert_array_equal(np.asarray(g), np.zeros(128, np.float32))
    with pytest.raises(TypeError, match="reduce_sum: spr must be a ReduceSpr"):
        ascjax.reduce_sum(np.zeros(1, np.float16), x, None, 300, spr=[0, 0, 0])
