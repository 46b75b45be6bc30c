"""The register reductions (asc_reduce_sum / max / min, their DataBlock forms, the register
asc_pair_reduce_sum, Reg::Reduce / ReduceDataBlock / PairReduceElem): values worked out by hand
from the pages' rules, the assumptions' two readings, errors, gradients and name lookups.
(Random and adversarial data against the reference models: tests/test_registry.py.)"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import ascjax
from ascjax import Config

ALL16, ALL32 = np.ones(128, bool), np.ones(64, bool)


def u(x):
    x = np.asarray(x)
    return x.view(f"uint{x.dtype.itemsize * 8}")


def half(*values, fill=0.0):
    return np.array(list(values) + [fill] * (128 - len(values)), np.float16)


# --- sums -------------------------------------------------------------------------------------

def test_reduce_sum_is_an_adjacent_pair_tree():
    # Tree: (2048 + 1) = 2048 (tie to even), (1 + 1) = 2, 2048 + 2 = 2050. A sequential sum
    # would give 2048 + 1 + 1 + 1 = 2048.
    dst = ascjax.asc_reduce_sum(half(2048, 1, 1, 1), ALL16)
    assert dst.dtype == np.float16 and dst[0] == 2050 and not np.asarray(dst[1:]).any()


def test_reduce_sum_widens_16_bit_integers():
    dst = ascjax.asc_reduce_sum(np.full(128, 32767, np.int16), ALL16)
    assert dst.dtype == np.int32 and dst.shape == (64,) and dst[0] == 128 * 32767
    dst = ascjax.asc_reduce_sum(np.full(128, 65535, np.uint16), ALL16)
    assert dst.dtype == np.uint32 and dst[0] == 128 * 65535


def test_reduce_sum_wraps_or_saturates_int32():
    x = np.zeros(64, np.int32)
    x[:2] = 2**31 - 1, 1
    assert ascjax.asc_reduce_sum(x, ALL32)[0] == -2**31
    assert ascjax.asc_reduce_sum(x, ALL32, config=Config(int_overflow="saturate"))[0] == 2**31 - 1


def test_reduce_sum_empty_mask_and_signed_zeros():
    minus = np.full(64, -0.0, np.float32)
    none = np.zeros(64, bool)
    one_off = ALL32.copy()
    one_off[5] = False
    # The page: no active element writes +0 (under either reading of A7).
    for config in (Config(), Config(masked_lanes="skip")):
        assert u(ascjax.asc_reduce_sum(minus, none, config=config))[0] == 0
    # All active -0: -0. One masked lane enters as +0 (A7), or takes no part.
    assert u(ascjax.asc_reduce_sum(minus, ALL32))[0] == 0x80000000
    assert u(ascjax.asc_reduce_sum(minus, one_off))[0] == 0
    assert u(ascjax.asc_reduce_sum(minus, one_off,
                                   config=Config(masked_lanes="skip")))[0] == 0x80000000


def test_reg_reduce_sum_forms_are_the_c_api():
    x = np.random.default_rng(1).standard_normal(64).astype(np.float32)
    m = np.random.default_rng(2).random(64) < 0.5
    np.testing.assert_array_equal(u(ascjax.reg_reduce(x, m)), u(ascjax.asc_reduce_sum(x, m)))
    np.testing.assert_array_equal(u(ascjax.reg_reduce_data_block(x, m)),
                                  u(ascjax.reduce_sum_datablock(x, m)))
    np.testing.assert_array_equal(u(ascjax.reg_pair_reduce_elem(x, m)),
                                  u(ascjax.asc_pair_reduce_sum(x, m)))


def test_pair_reduce_sum_page_rules():
    # Pairs (a, b): both masked -> 0; only a -> a; only b -> b; both -> a + b; upper half 0.
    x = half(3, 4, 3, 4, 3, 4, 3, 4, fill=1.0)
    m = ALL16.copy()
    m[[0, 1, 3, 4]] = False
    dst = ascjax.asc_pair_reduce_sum(x, m)
    assert dst[:5].tolist() == [0, 3, 4, 7, 2] and not np.asarray(dst[64:]).any()
    # Only a = -0 active: a masked b enters as +0 (A7) -> +0; "skip" keeps a = -0.
    x = half(-0.0, 5)
    m = np.zeros(128, bool)
    m[0] = True
    assert u(ascjax.asc_pair_reduce_sum(x, m))[0] == 0
    assert u(ascjax.asc_pair_reduce_sum(x, m, config=Config(masked_lanes="skip")))[0] == 0x8000


# --- max / min --------------------------------------------------------------------------------

def test_max_min_value_index_and_first_tie():
    x = np.array([3, 9, 1, 9, -4, -4] + [0] * 58, np.int32)
    m = np.arange(64) < 6
    assert ascjax.asc_reduce_max(x, m)[:3].tolist() == [9, 1, 0]
    assert ascjax.asc_reduce_min(x, m)[:3].tolist() == [-4, 4, 0]
    assert not np.asarray(ascjax.asc_reduce_max(x, m)[2:]).any()


def test_index_is_stored_as_the_dst_type_bits():
    # Reduce.md: a half max at index 114 reads [1.14, 6.8e-06]; 6.8e-06 is the bits 114.
    x = half(fill=0.5)
    x[114] = 1.14
    dst = np.asarray(ascjax.reg_reduce(x, ALL16, reduce_type="max"))
    assert dst[0] == np.float16(1.14) and u(dst)[1] == 114 and f"{dst[1]:.1e}" == "6.8e-06"
    y = np.zeros(64, np.float32)
    y[63] = 1
    assert u(ascjax.asc_reduce_max(y, ALL32))[1] == 63


def test_signed_zeros():
    x = half(-0.0, 0.0, -0.0, fill=0.0)
    m = np.arange(128) < 3
    assert u(ascjax.asc_reduce_max(x, m))[:2].tolist() == [0x0000, 1]   # max(-0, +0) = +0
    assert u(ascjax.asc_reduce_min(x, m))[:2].tolist() == [0x8000, 0]   # min(-0, +0) = -0
    assert u(ascjax.reduce_min_datablock(x, m))[0] == 0x8000
    assert u(ascjax.reduce_max_datablock(x, m))[0] == 0


def test_nan_wins_with_its_index_a19():
    x = np.full(64, 1.0, np.float32)
    x[[2, 7]] = np.inf
    x.view(np.uint32)[5] = 0xFFC00001   # a negative NaN with a payload
    x.view(np.uint32)[9] = 0x7F800001
    for f in (ascjax.asc_reduce_max, ascjax.asc_reduce_min):
        assert u(f(x, ALL32))[:2].tolist() == [0x7FC00000, 5]
        assert u(f(x, ALL32, config=Config(extreme_nan="first")))[:2].tolist() == [0xFFC00001, 5]
    m = ALL32.copy()
    m[5] = False                         # a masked NaN takes no part
    assert u(ascjax.asc_reduce_max(x, m, config=Config(extreme_nan="first")))[:2].tolist() == [
        0x7F800001, 9]
    assert u(ascjax.reduce_max_datablock(x, ALL32))[:3].tolist() == [0x7FC00000, 0x7FC00000,
                                                                     0x3F800000]


def test_empty_mask_writes_the_type_extreme_and_index_0():
    none16, none32 = np.zeros(128, bool), np.zeros(64, bool)
    assert u(ascjax.asc_reduce_max(half(7), none16))[:3].tolist() == [0xFC00, 0, 0]   # -inf
    assert u(ascjax.asc_reduce_min(half(7), none16))[:2].tolist() == [0x7C00, 0]      # +inf
    i32 = np.arange(64, dtype=np.int32)
    assert ascjax.asc_reduce_max(i32, none32)[:2].tolist() == [-2**31, 0]
    assert ascjax.asc_reduce_min(np.arange(128, dtype=np.uint16), none16)[:2].tolist() == [
        65535, 0]
    # DataBlocks: block 1 empty, the others their max; no index; lanes 8.. are 0.
    m = ALL32.copy()
    m[8:16] = False
    dst = ascjax.reduce_max_datablock(np.arange(64, dtype=np.float32), m)
    assert dst[:8].tolist() == [7, -np.inf, 23, 31, 39, 47, 55, 63]
    assert not np.asarray(dst[8:]).any()
    dst = ascjax.reg_reduce_data_block(np.arange(64, dtype=np.int32), m, reduce_type="min")
    assert dst[:3].tolist() == [0, 2**31 - 1, 16]


def test_masked_lanes_on_a_tie_with_the_empty_value_a20():
    x = np.full(64, -2**31, np.int32)
    m = np.arange(64) >= 3
    assert ascjax.asc_reduce_max(x, m)[:2].tolist() == [-2**31, 3]
    assert ascjax.asc_reduce_max(x, m, config=Config(masked_extreme="fill"))[:2].tolist() == [
        -2**31, 0]
    # No tie with the empty value: the readings agree.
    x[10] = 5
    for config in (Config(), Config(masked_extreme="fill")):
        assert ascjax.asc_reduce_max(x, m, config=config)[:2].tolist() == [5, 10]


def test_both_mask_forms_and_batches():
    rng = np.random.default_rng(3)
    x = rng.integers(-100, 100, (4, 128)).astype(np.int16)
    m = rng.random((4, 128)) < 0.5
    hw = np.zeros((4, 256), bool)
    hw[:, ::2] = m
    for f in (ascjax.asc_reduce_max, ascjax.reduce_min_datablock, ascjax.asc_reduce_sum):
        batch = np.asarray(f(x, m))
        np.testing.assert_array_equal(batch, np.asarray(f(x, hw)))
        for k in range(4):
            np.testing.assert_array_equal(batch[k], np.asarray(f(x[k], m[k])))


# --- errors -----------------------------------------------------------------------------------

def test_errors_name_the_instruction_and_the_valid_choices():
    with pytest.raises(TypeError, match=r"asc_reduce_max: src dtype int8_t is not supported; "
                                        r"supported: \['uint16_t', 'int16_t', 'half'"):
        ascjax.asc_reduce_max(np.zeros(256, np.int8), np.ones(256, bool))
    with pytest.raises(TypeError, match=r"asc_pair_reduce_sum: src dtype int32_t .* \['half', "
                                        r"'float'\]"):
        ascjax.asc_pair_reduce_sum(np.zeros(64, np.int32), ALL32)
    with pytest.raises(ValueError, match=r"asc_reduce_sum: src has shape \(63,\)"):
        ascjax.asc_reduce_sum(np.zeros(63, np.float32), ALL32)
    with pytest.raises(ValueError, match=r"reduce_min_datablock: mask has shape \(5,\)"):
        ascjax.reduce_min_datablock(np.zeros(64, np.float32), np.ones(5, bool))
    with pytest.raises(ValueError, match=r"reg_reduce: reduce_type='avg' is not one of "
                                         r"\['sum', 'max', 'min'\]"):
        ascjax.reg_reduce(np.zeros(64, np.float32), ALL32, reduce_type="avg")
    with pytest.raises(ValueError, match=r"reg_pair_reduce_elem: reduce_type='max' is not one "
                                         r"of \['sum'\]"):
        ascjax.reg_pair_reduce_elem(np.zeros(64, np.float32), ALL32, reduce_type="max")
    with pytest.raises(ValueError, match=r"reg_reduce_data_block: mode='merging' "
                                         r"\(MaskMergeMode::MERGING\) is not supported"):
        ascjax.reg_reduce_data_block(np.zeros(64, np.float32), ALL32, mode="merging")
    with pytest.raises(ValueError, match=r"reg_reduce: mode='blend' is not one of \['zeroing'\] "
                                         r"\(or the page's MaskMergeMode::\.\.\. names\)"):
        ascjax.reg_reduce(np.zeros(64, np.float32), ALL32, mode="blend")
    with pytest.raises(ValueError, match=r"extreme_nan='quiet' is not one of"):
        Config(extreme_nan="quiet")
    with pytest.raises(ValueError, match=r"masked_extreme='x' is not one of"):
        Config(masked_extreme="x")
    assert ascjax.reg_reduce(half(1, 2), ALL16, reduce_type="MAX", mode="ZEROING")[0] == 2


def test_pair_reduce_sum_other_arguments_name_the_register_form():
    dst, src = np.zeros(64, np.float16), np.zeros(128, np.float16)
    # The C name's three overloads (register; UB first n; UB high-dimensional) by arity.
    with pytest.raises(TypeError, match=r"asc_pair_reduce_sum: got 5 positional arguments; the "
                                        r"forms are \(src, mask\) on registers, \(dst, src, "
                                        r"count\)"):
        ascjax.asc_pair_reduce_sum(dst, src, 1, 128, 8)
    with pytest.raises(TypeError, match=r"asc_pair_reduce_sum: no keyword 'repeat_time' \(its "
                                        r"keywords: mask_state, dtype, config\)"):
        ascjax.asc_pair_reduce_sum(src, np.ones(128, bool), repeat_time=1)
    with pytest.raises(TypeError, match=r"register form \(src, mask\) takes its mask as an "
                                        r"argument, not mask_state"):
        ascjax.asc_pair_reduce_sum(src, np.ones(128, bool), mask_state=ascjax.MaskState())


# --- gradients --------------------------------------------------------------------------------

def test_sum_gradients_are_the_exact_sums():
    x = np.linspace(-1, 1, 64).astype(np.float32)
    m = np.arange(64) % 3 != 0
    g = jax.grad(lambda s: ascjax.asc_reduce_sum(s, m)[0])(x)
    np.testing.assert_array_equal(g, m.astype(np.float32))
    g = jax.grad(lambda s: ascjax.asc_pair_reduce_sum(s, m)[:32].sum()
                 + 100 * ascjax.asc_pair_reduce_sum(s, m)[32:].sum())(x)
    np.testing.assert_array_equal(g, m.astype(np.float32))   # the upper half is constant 0
    w = jnp.arange(1.0, 65.0)
    g = jax.grad(lambda s: jnp.dot(ascjax.reg_reduce_data_block(s, m), w))(x)
    np.testing.assert_array_equal(g, np.where(m, np.arange(64) // 8 + 1.0, 0))


def test_max_min_gradients_go_to_the_selected_lane():
    x = np.array([1, 5, 3, 5, -2] + [0] * 59, np.float32)
    m = np.arange(64) < 5
    w = jnp.arange(1.0, 65.0)   # lane 1 (the index) gets no gradient
    g = jax.grad(lambda s: jnp.dot(ascjax.asc_reduce_max(s, m), w))(x)
    np.testing.assert_array_equal(g, np.eye(64, dtype=np.float32)[1])
    g = jax.grad(lambda s: ascjax.reg_reduce(s, m, reduce_type="min")[0])(x)
    np.testing.assert_array_equal(g, np.eye(64, dtype=np.float32)[4])
    g = jax.grad(lambda s: ascjax.asc_reduce_max(s, np.zeros(64, bool))[0])(x)
    assert not g.any()                                          # nothing selected
    late = np.arange(64) >= 3
    g = jax.grad(lambda s: ascjax.asc_reduce_max(s, late, config=Config(masked_extreme="fill"))[
        0])(np.full(64, -np.inf, np.float32))
    assert not g.any()                                          # masked lane 0 won the tie
    g = jax.grad(lambda s: ascjax.asc_reduce_max(s, late)[0])(np.full(64, -np.inf, np.float32))
    np.testing.assert_array_equal(g, np.eye(64, dtype=np.float32)[3])
    y = np.arange(64, dtype=np.float32)[::-1].copy()
    g = jax.grad(lambda s: jnp.dot(ascjax.reduce_max_datablock(s, ALL32), w))(y)
    np.testing.assert_array_equal(g, np.where(np.arange(64) % 8 == 0, np.arange(64) // 8 + 1.0,
                                              0))
    _, t = jax.jvp(lambda s: ascjax.asc_reduce_min(s, m), (x,), (np.ones(64, np.float32),))
    assert t[:2].tolist() == [1.0, 0.0]


# --- names ------------------------------------------------------------------------------------

def test_vendor_names_find_the_functions():
    assert ascjax.instruction("Reduce") is ascjax.reg_reduce
    assert ascjax.instruction("AscendC::Reg::Reduce") is ascjax.reg_reduce
    assert ascjax.instruction("Reg::ReduceDataBlock") is ascjax.reg_reduce_data_block
    assert ascjax.instruction("AscendC::Reg::ReduceDataBlock") is ascjax.reg_reduce_data_block
    assert ascjax.instruction("PairReduceElem") is ascjax.reg_pair_reduce_elem
    assert ascjax.instruction("asc_reduce_max_datablock") is ascjax.reduce_max_datablock
    assert ascjax.instruction("asc_reduce_sum") is ascjax.asc_reduce_sum
    assert ascjax.instruction("asc_pair_reduce_sum") is ascjax.asc_pair_reduce_sum


def test_example_ports_pass():
    from ascjax._src.examples import EXAMPLES
    assert EXAMPLES["reduce_register"]()
