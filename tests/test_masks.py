"""Masks: every pattern, update_mask, both forms, the canonical/replicated layouts."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import ascjax
from ascjax._src.isa.masks import element_mask

WIDTHS = {"b8": ("uint8_t", 1, 256), "b16": ("half", 2, 128), "b32": ("float", 4, 64)}
# Lowest-n patterns and their n, per SPEC 2, written out independently of the enum names.
LOWEST = {"PAT_VL1": 1, "PAT_VL2": 2, "PAT_VL3": 3, "PAT_VL4": 4, "PAT_VL8": 8, "PAT_VL16": 16,
          "PAT_VL32": 32, "PAT_VL64": 64, "PAT_VL128": 128}


def _expected_elements(name, n):
    i = np.arange(n)
    if name in LOWEST:
        return i < min(LOWEST[name], n)
    return {"PAT_ALL": i >= 0, "PAT_ALLF": i < 0, "PAT_M3": i % 3 == 0, "PAT_M4": i % 4 == 0,
            "PAT_H": i < n // 2, "PAT_Q": i < n // 4}[name]


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("pattern", list(ascjax.Pattern))
def test_create_mask_every_pattern(pattern, width):
    dtype, w, n = WIDTHS[width]
    mask = np.asarray(ascjax.create_mask(pattern, dtype))
    assert mask.shape == (256,) and mask.dtype == bool
    want = np.zeros(256, bool)
    want[::w] = _expected_elements(pattern.name, n)
    np.testing.assert_array_equal(mask, want)
    # names with and without the prefix, the enum value, the module constant, "bW" widths
    for spec in (pattern.name, pattern.name[4:], int(pattern), getattr(ascjax, pattern.name)):
        np.testing.assert_array_equal(np.asarray(ascjax.create_mask(spec, width)), want)


def test_pattern_enum_values():
    assert [int(p) for p in ascjax.Pattern] == [*range(14), 15]


def test_replicated_layout_and_cross_width_reuse():
    b32 = ascjax.create_mask("PAT_ALL", "float")
    on_half = np.asarray(element_mask(b32, ascjax.FORMATS["half"], where="t"))
    np.testing.assert_array_equal(on_half, np.arange(128) % 2 == 0)  # canonical: even only
    rep = ascjax.create_mask("PAT_ALL", "float", config=ascjax.Config(mask_layout="replicated"))
    assert np.asarray(element_mask(rep, ascjax.FORMATS["half"], where="t")).all()


def test_vl_overflow_option():
    assert np.asarray(ascjax.create_mask("PAT_VL128", "float"))[::4].all()
    assert not np.asarray(ascjax.create_mask("PAT_VL128", "float",
                                                config=ascjax.Config(vl_overflow="empty"))).any()


@pytest.mark.parametrize("count", [0, 1, 63, 64, 65, 1000, 2**32 - 1])
def test_update_mask(count):
    mask, rest = ascjax.update_mask(count, "float")
    assert rest == max(count - 64, 0)
    np.testing.assert_array_equal(np.asarray(mask)[::4], np.arange(64) < count)
    assert not np.asarray(mask).reshape(64, 4)[:, 1:].any()


def test_update_mask_traced_count():
    counts = jnp.array([0, 70, 130], jnp.uint32)
    mask, rest = jax.jit(lambda c: ascjax.update_mask(c, "half"))(counts)
    np.testing.assert_array_equal(np.asarray(rest), [0, 0, 2])
    np.testing.assert_array_equal(np.asarray(mask)[:, ::2].sum(axis=1), [0, 70, 128])



@pytest.mark.parametrize("count, dtype", [(10, np.int8), (10, np.uint8), (200, np.uint8),
                                          (300, np.int32), (2**32 - 1, np.int32)])
def test_update_mask_array_count_of_any_integer_type_is_the_int_paths(count, dtype):
    """A review: an int8 count of 10 gave 138 lanes and a remainder of 10 under jit (arange
    and n = 256 wrapped in int8); a count is a uint32_t, and -1 converts to 2^32 - 1 as C."""
    want_mask, want_rest = ascjax.update_mask(count, "int8_t")
    array = np.array(count).astype(dtype) if count < 2**31 else np.array(-1, dtype)
    for run in (lambda c: ascjax.update_mask(c, "int8_t"),
                jax.jit(lambda c: ascjax.update_mask(c, "int8_t"))):
        mask, rest = run(array)
        np.testing.assert_array_equal(np.asarray(mask), np.asarray(want_mask))
        assert int(rest) == want_rest and rest.dtype == np.uint32

@pytest.mark.parametrize("bad, error", [
    (("PAT_XYZ", "half"), ValueError), ((14, "half"), ValueError),
    (("PAT_ALL", "complex64"), TypeError), (("PAT_ALL", "b12"), TypeError)])
def test_create_mask_bad_input(bad, error):
    with pytest.raises(error, match="create_mask"):
        ascjax.create_mask(*bad)


def test_update_mask_bad_count():
    with pytest.raises(ValueError, match=r"update_mask: count=-1 is outside uint32_t"):
        ascjax.update_mask(-1, "half")
    with pytest.raises(ValueError, match="update_mask: count=4294967296"):
        ascjax.update_mask(2**32, "half")


def test_element_mask_rejects_wrong_shape_and_dtype():
    fmt = ascjax.FORMATS["float"]
    with pytest.raises(ValueError, match=r"reduce_sum_datablock: mask has shape \(100,\)"):
        element_mask(np.ones(100, bool), fmt, where="reduce_sum_datablock")
    with pytest.raises(TypeError, match="must be a bool array"):
        element_mask(np.ones(64, np.int32), fmt, where="reduce_sum_datablock")
