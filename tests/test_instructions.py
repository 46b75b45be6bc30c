"""The four seed instructions: worked cases derived by hand from SPEC, batching, jit, vmap."""

import functools

import chex
import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import ascjax

RNG = np.random.default_rng(7)
ALL = {w: ascjax.create_mask("PAT_ALL", w) for w in ("b8", "b16", "b32")}


def bits(x):
    x = np.asarray(x)
    return x.view(f"uint{x.dtype.itemsize * 8}")


# --- reduce_sum_datablock --------------------------------------------------------------------

def test_reduce_half_tree_order_is_adjacent_pairs():
    """2048 + 1 + 1 + ...: the tree keeps the ones that sequential half addition would drop."""
    src = np.ones(128, np.float16)
    src[::16] = 2048
    out = np.asarray(ascjax.reduce_sum_datablock(src, ALL["b16"]))
    # Tree of 16: (2048+1)=2049 -> rounds to 2048 (ties to even, spacing 2); the other 7 pairs
    # give 2 each, 14 in all; then 2048 + 2 + 4 + 8 = 2062 exactly.
    np.testing.assert_array_equal(out[:8], np.full(8, 2062, np.float16))
    assert not out[8:].any()


def test_reduce_int16_widens_before_adding():
    src = np.full(128, 30000, np.int16)
    out = np.asarray(ascjax.reduce_sum_datablock(src, ALL["b16"]))
    assert out.dtype == np.int32 and out.shape == (64,)
    np.testing.assert_array_equal(out[:8], np.full(8, 480000))


def test_reduce_uint16_widens_and_uint32_wraps():
    out = ascjax.reduce_sum_datablock(np.full(128, 65535, np.uint16), ALL["b16"])
    np.testing.assert_array_equal(np.asarray(out)[:8], np.full(8, 16 * 65535))
    out = ascjax.reduce_sum_datablock(np.full(64, 2**31, np.uint32), ALL["b32"])
    np.testing.assert_array_equal(np.asarray(out)[:8], np.zeros(8))  # 8 * 2^31 mod 2^32


def test_reduce_float_subnormals_survive_jit():
    src = np.full(64, np.float32(1e-45))  # the least subnormal, 2^-149
    got = jax.jit(ascjax.reduce_sum_datablock)(src, ALL["b32"])
    np.testing.assert_array_equal(bits(got)[:8], np.full(8, 8, np.uint32))  # 8 * 2^-149


def test_reduce_masked_lanes_and_signed_zero():
    src = np.full(64, -0.0, np.float32)
    mask = np.ones(64, bool)
    mask[0] = False  # block 0 has one masked lane: +0 enters, the sum is +0 (assumed)
    mask[8:16] = False  # block 1 all masked: +0
    got = bits(ascjax.reduce_sum_datablock(src, mask))
    assert got[0] == 0 and got[1] == 0 and got[2] == 0x80000000
    skip = bits(ascjax.reduce_sum_datablock(src, mask, config=ascjax.Config(masked_lanes="skip")))
    assert skip[0] == 0x80000000 and skip[1] == 0 and skip[2] == 0x80000000


def test_reduce_overflow_and_nan():
    src = np.full(128, 60000, np.float16)
    src[16] = np.nan
    out = bits(ascjax.reduce_sum_datablock(src, ALL["b16"]))
    assert out[0] == 0x7C00 and out[1] == 0x7E00  # inf; canonical NaN


def test_reduce_partials_match_output():
    src = RNG.standard_normal(64).astype(np.float32)
    dst = ascjax.reduce_sum_datablock(src, ALL["b32"])
    levels = ascjax.reduce_sum_datablock_levels(src, ALL["b32"])
    assert [lv.shape for lv in levels] == [(8, 8), (8, 4), (8, 2), (8, 1)]
    np.testing.assert_array_equal(bits(levels[-1][:, 0]), bits(dst)[:8])


# --- pair_reduce_sum -------------------------------------------------------------------------

def test_pair_reduce_strides_and_repeats():
    src = np.arange(512, dtype=np.float32)
    dst = np.full(96, -1, np.float32)
    # float: 8 elements per block, 64 per repeat; src_blk_stride 2 reads every other block,
    # src_rep_stride 3 starts repeat r at block 3r, dst_rep_stride 1 = 32 outputs per repeat.
    out = np.asarray(ascjax.pair_reduce_sum(dst, src, 3, 64, 1, 2, 3))
    want = np.full(96, -1, np.float32)
    for r in range(3):
        elems = [(r * 3 + (e // 8) * 2) * 8 + e % 8 for e in range(64)]
        for k in range(32):
            want[r * 32 + k] = src[elems[2 * k]] + src[elems[2 * k + 1]]
    np.testing.assert_array_equal(out, want)


def test_pair_reduce_masked_pairs_per_product():
    src = np.ones(64, np.float32)
    dst = np.full(32, 9, np.float32)
    keep = np.asarray(ascjax.pair_reduce_sum(dst, src, 1, 62, 1, 1, 8))
    assert keep[30] == 2 and keep[31] == 9  # "the last value does not change"
    zero = np.asarray(ascjax.pair_reduce_sum(dst, src, 1, 62, 1, 1, 8,
                                             config=ascjax.Config(product="200I/500 A2")))
    assert zero[31] == 0
    forced = ascjax.pair_reduce_sum(dst, src, 1, 62, 1, 1, 8,
                                    config=ascjax.Config(masked_pair="zero"))
    assert np.asarray(forced)[31] == 0
    one = np.asarray(ascjax.pair_reduce_sum(dst, src, 1, 61, 1, 1, 8))
    assert one[30] == 1 and one[31] == 9  # one active element of the pair: the other is 0


def test_reduce_pair_elem_masked_pairs_as_its_page_says_per_product():
    """ReducePairElem on the 950 left a pair of two masked lanes unchanged (a new user's
    finding). Its page (约束说明) says the 950 and Atlas 200I/500 A2 write 0 there, Atlas A2 /
    A3 and inference AI Core skip the write; PairReduceSum's page (the seed) keeps the 950's."""
    src, dst = np.ones(128, np.float16), np.full(64, 9, np.float16)
    mask = [0xFFFFFFFFFFFFFFF0, 2**64 - 1]  # lanes 0-3 off: pairs 0 and 1 empty
    for product, first in (("950", 0), ("200I/500 A2", 0), ("A2", 9), ("A3", 9),
                           ("inference AI Core", 9)):
        config = ascjax.Config(product=product)
        out = np.asarray(ascjax.reduce_pair_elem(dst, src, mask, 1, 1, 1, 8, reduce_type="sum",
                                                 config=config))
        assert out[:3].tolist() == [first, first, 2], product
        ref = ascjax.reference.reduce_pair_elem(dst, src, mask, 1, 1, 1, 8, reduce_type="sum",
                                                config=config)
        assert ref[:3].tolist() == [first, first, 2], product
    kept = ascjax.reduce_pair_elem(dst, src, mask, 1, 1, 1, 8, reduce_type="sum",
                                   config=ascjax.Config(masked_pair="keep"))
    assert np.asarray(kept)[:3].tolist() == [9, 9, 2]
    seed = ascjax.pair_reduce_sum(dst, src, 1, mask, 1, 1, 8)  # the seed page: 950 unchanged
    assert np.asarray(seed)[:3].tolist() == [9, 9, 2]


def test_pair_reduce_bit_mode_and_zero_stride_last_repeat_wins():
    src = np.arange(256, dtype=np.float16)
    dst = np.zeros(64, np.float16)
    mask = [0b1100, 0]  # elements 2 and 3: output 1 only
    out = np.asarray(ascjax.pair_reduce_sum(dst, src, 2, mask, 0, 1, 8))
    assert out[1] == 128 + 2 + 128 + 3 and not np.delete(out, 1).any()


def test_pair_reduce_float_bit_mode_accepts_a_zero_second_word():
    src = np.arange(64, dtype=np.float32)
    dst = np.zeros(32, np.float32)
    one = ascjax.pair_reduce_sum(dst, src, 1, [0b1111], 1, 1, 8)
    two = ascjax.pair_reduce_sum(dst, src, 1, [0b1111, 0], 1, 1, 8)
    np.testing.assert_array_equal(np.asarray(one), np.asarray(two))
    assert np.asarray(one)[:3].tolist() == [1, 5, 0]


@pytest.mark.parametrize("dtype, mask, lane, config", [
    (np.float32, [1 << 41, 0], 41, ascjax.Config()),
    (np.float16, [0, 1 << 17], 81, ascjax.Config(product="950", float_overflow="saturate")),
])
@pytest.mark.parametrize("jit", [False, True])
def test_pair_reduce_masked_partner_of_negative_zero_is_plus_zero(dtype, mask, lane, config, jit):
    """-0 + (+0) = +0 (IEEE RNE): the masked partner enters as +0. The static mask made the
    partner a constant and XLA folded ``x + 0.0`` to ``x`` (found by hypothesis)."""
    src = np.zeros(256 // np.dtype(dtype).itemsize, dtype)
    src[lane] = -0.0
    dst = np.full(src.size // 2, 7, dtype)
    f = functools.partial(ascjax.pair_reduce_sum, config=config)
    out = np.asarray((jax.jit(f, static_argnums=(2, 3, 4, 5, 6)) if jit else f)(
        dst, src, 1, tuple(mask), 1, 1, 8))
    assert out.view(f"u{src.itemsize}")[lane // 2] == 0


def test_pair_reduce_repeat_zero_is_identity():
    dst = np.arange(64, dtype=np.float16)
    np.testing.assert_array_equal(np.asarray(ascjax.pair_reduce_sum(dst, dst, 0, 128, 1, 1, 8)),
                                  dst)


# --- gather ----------------------------------------------------------------------------------

def test_gather_zero_extends_and_spreads():
    src = np.array([40, -40, 7], np.int8)
    index = np.zeros(128, np.uint16)
    index[:3] = [1, 0, 2]
    mask = np.zeros(128, bool)
    mask[:3] = True
    wide = np.asarray(ascjax.asc_gather(src, index, mask, dst_dtype="int16_t"))
    assert wide.dtype == np.int16 and wide[:4].tolist() == [216, 40, 7, 0]
    same = np.asarray(ascjax.asc_gather(src, index, mask))
    assert same.dtype == np.int8 and same.shape == (256,)
    assert same[:7].tolist() == [-40, 0, 40, 0, 7, 0, 0]


def test_gather_inactive_lanes_are_zero_and_unchecked():
    src = np.arange(10, dtype=np.float32)
    index = np.full(64, 10**6, np.uint32)
    index[5] = 3
    mask = np.arange(64) == 5
    out = np.asarray(ascjax.asc_gather(src, index, mask))
    assert out[5] == 3 and np.delete(out, 5).tolist() == [0] * 63


def test_gather_moves_bits_of_bfloat16_and_fp8():
    raw = RNG.integers(0, 2**16, 300, dtype=np.uint32).astype(np.uint16)
    src = raw.view(ml_dtypes.bfloat16)
    index = RNG.integers(0, 300, 64, dtype=np.uint32)
    out = ascjax.asc_gather(src, index, ALL["b32"])
    got = bits(out).reshape(64, 2)
    np.testing.assert_array_equal(got[:, 0], raw[index])
    assert not got[:, 1].any()
    f8 = RNG.integers(0, 256, 300, dtype=np.uint32).astype(np.uint8)
    idx16 = RNG.integers(0, 300, 128, dtype=np.uint32).astype(np.uint16)
    out8 = ascjax.asc_gather(f8.view(ml_dtypes.float8_e4m3fn), idx16, ALL["b16"])
    np.testing.assert_array_equal(bits(out8)[0::2], f8[idx16])


# --- squeeze ---------------------------------------------------------------------------------

def _squeeze_all(ub, addr, regs, masks, dtype=None, finalize=True):
    state = ascjax.squeeze_and_storeunalign_init()
    for reg, m in zip(regs, masks, strict=True):
        ub, dst, state = ascjax.squeeze_and_storeunalign(ub, addr, state, reg, m, dtype=dtype)
    if finalize:
        ub, state = ascjax.squeeze_and_storeunalign_finalize(ub, addr, state)
    return np.asarray(ub), dst, state


@pytest.mark.parametrize("addr", [0, 4, 28, 32, 100])
def test_squeeze_writes_only_its_range(addr):
    ub0 = RNG.integers(0, 256, 1024, dtype=np.uint32).astype(np.uint8)
    regs = RNG.integers(0, 2**31, (3, 64), dtype=np.int64).astype(np.int32)
    masks = RNG.random((3, 64)) < 0.3
    ub, dst, state = _squeeze_all(ub0, addr, regs, masks)
    selected = np.concatenate([r[m] for r, m in zip(regs, masks, strict=True)]).view(np.uint8)
    n = selected.size
    assert int(ascjax.get_squeeze_status(state)) == n
    want = ub0.copy()
    want[addr:addr + n] = selected
    np.testing.assert_array_equal(ub, want)
    np.testing.assert_array_equal(np.asarray(dst)[:masks[-1].sum()], regs[-1][masks[-1]])
    assert not np.asarray(dst)[masks[-1].sum():].any()


def test_squeeze_without_finalize_leaves_the_tail_out():
    ub0 = np.zeros(512, np.uint8)
    reg = np.arange(1, 65, dtype=np.uint32)
    mask = np.arange(64) < 11  # 44 bytes from address 4: [4, 48)
    ub, _, state = _squeeze_all(ub0, 4, [reg], [mask], finalize=False)
    assert ub[4:32].view(np.uint32).tolist() == list(range(1, 8))  # the block [0, 32) is full
    assert not ub[32:].any()  # [32, 48) waits in the unaligned register
    ub, _ = ascjax.squeeze_and_storeunalign_finalize(ub, 4, state)
    assert np.asarray(ub)[4:48].view(np.uint32).tolist() == list(range(1, 12))


def test_squeeze_nibble_pairs_and_hifloat8_move_bytes():
    raw = RNG.integers(0, 256, (2, 256), dtype=np.uint32).astype(np.uint8)
    masks = RNG.random((2, 256)) < 0.5
    for fmt in ("int4b_t", "fp4x2_e2m1_t", "hifloat8_t"):
        ub, _, _ = _squeeze_all(np.zeros(1024, np.uint8), 3, raw, masks, dtype=fmt)
        selected = np.concatenate([r[m] for r, m in zip(raw, masks, strict=True)])
        np.testing.assert_array_equal(ub[3:3 + selected.size], selected)


# --- batching, jit, vmap ---------------------------------------------------------------------

GATHER_SRC = RNG.integers(0, 2**16, 2**16, dtype=np.uint32).astype(np.uint16).view(np.float16)
CASES = {
    "reduce_sum_datablock/half": (lambda x, m: ascjax.reduce_sum_datablock(x, m), np.float16, 128),
    "reduce_sum_datablock/float": (lambda x, m: ascjax.reduce_sum_datablock(x, m), np.float32, 64),
    "reduce_sum_datablock/int16": (lambda x, m: ascjax.reduce_sum_datablock(x, m), np.int16, 128),
    "gather/half": (lambda x, m: ascjax.asc_gather(GATHER_SRC, x, m), np.uint16, 128),
    "squeeze/float": (lambda x, m: ascjax.squeeze_and_storeunalign(
        jnp.zeros(512, jnp.uint8), 4, ascjax.squeeze_and_storeunalign_init(), x, m)[:2],
        np.float32, 64),
}


def _random_register(dtype, lanes, batch):
    width = np.dtype(dtype).itemsize * 8
    raw = RNG.integers(0, 2**width, batch + (lanes,), dtype=np.uint64).astype(f"uint{width}")
    return raw.view(dtype)


@pytest.mark.parametrize("case", CASES)
def test_batched_equals_one_at_a_time_jit_and_vmap(case):
    fn, dtype, lanes = CASES[case]
    x = _random_register(dtype, lanes, (6,))
    m = RNG.random((6, lanes)) < 0.8
    batched = jax.tree.map(bits, fn(x, m))
    jitted = jax.tree.map(bits, jax.jit(fn)(x, m))
    mapped = jax.tree.map(bits, jax.vmap(fn)(x, m))
    chex.assert_trees_all_equal(batched, jitted, mapped)
    for i in range(6):
        one = jax.tree.map(bits, fn(x[i:i + 1], m[i:i + 1]))
        chex.assert_trees_all_equal(one, jax.tree.map(lambda a, i=i: a[i:i + 1], batched))


def test_no_retrace_with_same_shapes():
    @jax.jit
    @chex.assert_max_traces(n=1)
    def run(x, m):
        return ascjax.reduce_sum_datablock(x, m)

    for _ in range(3):
        run(_random_register(np.float32, 64, (4,)), RNG.random((4, 64)) < 0.5)


@pytest.mark.parametrize("strides", [(1, 1, 8), (2, 3, 5), (0, 2, 0), (1, 0, 16)])
def test_pair_reduce_plan_is_what_the_kernel_reads_and_writes(strides):
    """pair_reduce_sum_plan (used by checks, kernel and pictures) is what the instruction does."""
    from ascjax._src.isa.reduce_tensor import pair_reduce_sum_plan

    d_stride, b_stride, r_stride = strides
    active = RNG.random(64) < 0.8
    active[:2] = True
    plan = pair_reduce_sum_plan(ascjax.FORMATS["float"], 3, active, d_stride, b_stride,
                                r_stride, False)
    reads, writes = plan.reads, plan.writes
    src = np.arange(1, reads.max() + 2, dtype=np.float32) * 2.0 ** -10  # sums are exact
    dst = np.full(writes.max() + 1, -1, np.float32)
    out = np.asarray(ascjax.pair_reduce_sum(dst, src, 3, [int(np.packbits(
        active, bitorder="little").view(np.uint64)[0])], d_stride, b_stride, r_stride))
    want = dst.copy()
    vals = np.where(active, src[reads], 0)
    for r in range(3):
        for k in range(32):
            if writes[r, k] >= 0:
                want[writes[r, k]] = vals[r, 2 * k] + vals[r, 2 * k + 1]
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("strides", [(1, 1, 8), (2, 3, 5), (0, 2, 0), (1, 0, 16), (3, 1, 8)])
@pytest.mark.parametrize("outputs", [32, 8, 1])  # pairs, DataBlocks, whole repeats (float)
def test_repeat_plan_loads_and_stores_are_its_offsets(strides, outputs):
    """The kernels' reshape / strided-slice loads read ``plan.reads`` and their slice stores
    write ``plan.writes`` (last write wins), with src and dst exactly as long as needed."""
    from ascjax._src.isa.repeat import RepeatPlan

    d_stride, b_stride, r_stride = strides
    mask = RNG.random(64) < 0.7
    mask[0] = True
    written = RNG.random(outputs) < 0.8
    written[0] = True
    plan = RepeatPlan(ascjax.FORMATS["float"], 3, b_stride, r_stride, tuple(mask.tolist()),
                      outputs=outputs, dst_rep_stride=d_stride, dst_unit=outputs,
                      written=tuple(written.tolist()))
    src = np.arange(1, plan.reads[plan.active].max() + 2, dtype=np.int32)
    loaded = np.asarray(plan.load(jnp.asarray(src)))
    np.testing.assert_array_equal(np.where(plan.active, loaded, 0),
                                  np.where(plan.active, src[np.where(plan.active, plan.reads, 0)],
                                           0))
    targets = [(r, k, r * d_stride * outputs + k) for r in range(3) for k in range(outputs)
               if written[k]]
    dst = np.full(max(t for _, _, t in targets) + 1, -1, np.int32)
    values = np.arange(3 * outputs, dtype=np.int32).reshape(3, outputs) + 100
    want = dst.copy()
    for r, k, t in targets:  # repeats in order: a later write wins
        want[t] = values[r, k]
    got = np.asarray(plan.store(jnp.asarray(dst), jnp.asarray(values)))
    np.testing.assert_array_equal(got, want)
    from_plan = dst.copy()
    from_plan[plan.writes[plan.writes >= 0]] = values[plan.writes >= 0]
    np.testing.assert_array_equal(from_plan, want)


def test_the_pages_chip_tags_name_their_products():
    """Config(product="310P") was refused, though the pages tag their product notes by chip
    (``<!-- npu="310p" -->``). Each tag reads as the product its notes name."""
    import pathlib
    import re

    pages = pathlib.Path(__file__).resolve().parents[2] / "shared" / "vendor-docs"
    said = {"910b": "Atlas A2", "310b": "Atlas 200I/500 A2", "310p": "Atlas 推理系列产品 AI Core",
            "910": "Atlas 训练系列产品"}
    if pages.is_dir():  # the tag's note names the product (GatherMask's 产品支持情况)
        text = (pages / "cpp-memory" / "GatherMask.md").read_text(encoding="utf-8")
        for tag, product in said.items():
            note = re.search(rf'<!-- npu="{tag}" id\d+ -->\s*\n- ([^\n]*)', text).group(1)
            assert note.startswith(product), (tag, note)
    for tag, key in (("910b", "A2"), ("910B", "A2"), ("310B", "200I/500 A2"),
                     ("310P", "inference AI Core"), ("910", "training")):
        assert ascjax.Config(product=tag) == ascjax.Config(product=key)
        assert ascjax.Config(product=tag).product == key
    # the product decides: the ReduceSum docstring's example, 2692 on the 950, 2688 on Atlas A2
    x = np.ones(640, np.float16)
    x[0], x[128::128] = 2047, 2
    sums = [float(ascjax.reduce_sum(np.zeros(1, np.float16), x, None, 640,
                                    config=ascjax.Config(product=p))[0][0])
            for p in ("910B", "A2")]
    assert sums == [2688.0, 2688.0]
    with pytest.raises(ValueError, match=r"unknown product '310'; valid: .*'310p' = "
                                         r"'inference AI Core'"):
        ascjax.Config(product="310")
