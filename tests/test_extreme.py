"""``lanes.select_extreme``, the max/min every max/min instruction uses, against a plain loop."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ascjax._src.formats import FORMATS
from ascjax._src.isa.lanes import (
    extreme_first_lane,
    extreme_value,
    extreme_with_index,
    select_extreme,
)

TYPES = {"half": np.uint16, "bfloat16_t": np.uint16, "float": np.uint32, "int16_t": np.int16,
         "uint16_t": np.uint16, "int32_t": np.int32, "uint32_t": np.uint32}
QUIET_NAN = {"half": 0x7E00, "bfloat16_t": 0x7FC0, "float": 0x7FC00000}
SPECIAL = {"half": [0x0000, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0x7C01, 0xFE00, 0x0001, 0x8001],
           "bfloat16_t": [0x0000, 0x8000, 0x7F80, 0xFF80, 0x7FC0, 0x7F81, 0xFFC0, 0x0001, 0x8001],
           "float": [0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001,
                     0xFFC00000, 1, 0x80000001]}


def _loop(values, active, kind):
    """The pages' rule, plainly: the first NaN, else the first lane holding the max (min), with
    -0 < +0; no active lane: index 0."""
    best = None
    for i, (v, a) in enumerate(zip(values, active, strict=True)):
        if not a:
            continue
        if isinstance(v, float) and np.isnan(v):
            return i, True, True
        key = (v, not np.signbit(v)) if isinstance(v, float) else (v,)
        if kind == "min":
            key = tuple(-k for k in key)
        if best is None or key > best[0]:
            best = (key, i)
    return (0, False, False) if best is None else (best[1], True, False)


def _draw(name, data, n=None):
    """Random and special bit patterns of a type with a tie, and a random mask (``n`` lanes,
    or a drawn number)."""
    dtype = TYPES[name]
    n = n or data.draw(st.sampled_from([2, 8, 16, 64, 128]))
    info = np.iinfo(dtype)
    pool = st.integers(int(info.min), int(info.max))
    if name in SPECIAL:
        pool = st.one_of(pool, st.sampled_from(SPECIAL[name]))
    raw = np.array(data.draw(st.lists(pool, min_size=n, max_size=n)), dtype)
    raw[data.draw(st.integers(0, n - 1))] = raw[0]  # a tie
    active = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    return raw, active


@pytest.mark.parametrize("name", list(TYPES))
@pytest.mark.parametrize("kind", ["max", "min"])
@pytest.mark.parametrize("leading", [False, True])
@given(data=st.data())
def test_select_extreme_matches_a_plain_loop(name, kind, leading, data):
    fmt = FORMATS[name]
    raw, active = _draw(name, data)
    with np.errstate(invalid="ignore"):  # a signalling NaN widened to float64
        values = raw.view(fmt.storage_dtype).astype(float if fmt.is_float else int).tolist()
    got = select_extreme(jnp.asarray(raw), active, fmt, kind, leading=leading)
    assert tuple(np.asarray(g).item() for g in got) == _loop(values, active, kind)


@pytest.mark.parametrize("name", list(TYPES))
@pytest.mark.parametrize("kind", ["max", "min"])
@given(data=st.data())
def test_extreme_value_is_the_selected_lanes_value(name, kind, data):
    """The index-free value: the plain loop's lane, a NaN as the quiet NaN, ``empty`` (a
    sentinel here) where no lane is active."""
    fmt = FORMATS[name]
    # 64 lanes on: a 32-bit row as runs of 8 lanes (96: not a power of two)
    raw, active = _draw(name, data, data.draw(st.sampled_from([2, 8, 16, 64, 96, 128])))
    if data.draw(st.booleans()):  # a mask array, not a static NumPy one
        active = jnp.asarray(active)
    with np.errstate(invalid="ignore"):
        values = raw.view(fmt.storage_dtype).astype(float if fmt.is_float else int).tolist()
    index, any_active, nan = _loop(values, np.asarray(active), kind)
    empty = np.array(0x1234, raw.dtype)
    if not any_active:
        info = np.iinfo(raw.dtype)  # integers: the type's end, as the pages' empty value
        want = empty if fmt.is_float else np.array(info.min if kind == "max" else info.max,
                                                   raw.dtype)
    elif nan:
        want = np.array(QUIET_NAN[name], raw.dtype)
    else:
        want = raw[index]
    got = np.asarray(extreme_value(jnp.asarray(raw), active, fmt, kind, empty))
    assert got.dtype == raw.dtype and got.item() == want.item(), (hex(got.item()), hex(want.item()))


def _want(raw, active, name, kind, empty):
    """The plain loop's (value bits, index) of one group: a NaN as the quiet NaN, ``empty``
    (the integers' end of the type) where no lane is active."""
    fmt = FORMATS[name]
    with np.errstate(invalid="ignore"):
        values = raw.view(fmt.storage_dtype).astype(float if fmt.is_float else int).tolist()
    index, any_active, nan = _loop(values, active, kind)
    if not any_active:
        info = np.iinfo(raw.dtype)
        return (empty if fmt.is_float else
                np.array(info.min if kind == "max" else info.max, raw.dtype)).item(), 0
    if nan:
        return QUIET_NAN[name], index
    return raw[index].item(), index


def _groups(name, data):
    """Three groups of one power-of-two size side by side on a flat axis."""
    n = data.draw(st.sampled_from([2, 8, 16, 64, 128]))
    return [_draw(name, data, n) for _ in range(3)]


# jitted: one compile per (type, kind, group size) instead of every eager op per example
_flat_value = jax.jit(lambda r, a, fmt, kind, empty, n: extreme_value(
    r, a, fmt, kind, np.array(empty, r.dtype), group=n), static_argnums=(2, 3, 4, 5))
_flat_index = jax.jit(extreme_with_index, static_argnums=(2, 3, 4))


@pytest.mark.parametrize("name", list(TYPES))
@pytest.mark.parametrize("kind", ["max", "min"])
@given(data=st.data())
def test_flat_groups_give_each_groups_plain_loop_answer(name, kind, data):
    """The flat forms (groups as runs of one axis, the LocalTensor kernels' fast paths):
    ``extreme_value(..., group=n)`` and, for 16-bit types, ``extreme_with_index`` (whose
    value must also be the index's lane's, NaNs quiet), group by group."""
    fmt = FORMATS[name]
    groups = _groups(name, data)
    n = groups[0][0].size
    raw = np.concatenate([g[0] for g in groups])
    active = np.concatenate([g[1] for g in groups])
    empty = np.array(0x1234, raw.dtype)
    want = [_want(r, a, name, kind, empty) for r, a in groups]
    got = np.asarray(_flat_value(jnp.asarray(raw), jnp.asarray(active), fmt, kind, empty.item(),
                                 n))
    assert got.tolist() == [w[0] for w in want]
    if fmt.bits == 16:
        value, index, found = _flat_index(jnp.asarray(raw), jnp.asarray(active), fmt, kind, n)
        found = np.asarray(found)
        value = np.where(found, np.asarray(value).view(raw.dtype), empty)
        if not fmt.is_float:  # the kernels write the type's end where nothing is active
            value = np.where(found, value, [w[0] for w in want])
        assert value.tolist() == [w[0] for w in want]
        assert np.asarray(index).tolist() == [w[1] for w in want]
        assert found.tolist() == [bool(g[1].any()) for g in groups]


_first_lane = jax.jit(lambda r, a, fmt, kind, empty: extreme_first_lane(
    r, a, fmt, kind, np.array(empty, r.dtype)), static_argnums=(2, 3, 4))


@pytest.mark.parametrize("name", list(TYPES))
@pytest.mark.parametrize("kind", ["max", "min"])
@given(data=st.data())
def test_extreme_first_lane_gives_each_rows_plain_loop_answer(name, kind, data):
    """The whole-register form's two passes (the value, then the first active lane holding
    it, found from mask words), row by row, on rows of 32, 64 or 128 lanes: the plain loop's
    value (NaNs quiet) and index, -0 against +0, ties, integers' ends among masked lanes."""
    fmt = FORMATS[name]
    n = data.draw(st.sampled_from([32, 64, 128]))
    rows = [_draw(name, data, n) for _ in range(3)]
    if data.draw(st.booleans()):  # the losing end of the type on an active lane, masked beside
        raw, active = rows[0]
        end = np.iinfo(raw.dtype).min if kind == "max" else np.iinfo(raw.dtype).max
        raw[n - 1], active[n - 1], active[0] = end, True, False
    raw = np.stack([r for r, _ in rows])
    active = np.stack([a for _, a in rows])
    empty = np.array(0x1234, raw.dtype)
    want = [_want(r, a, name, kind, empty) for r, a in rows]
    value, index = _first_lane(jnp.asarray(raw), jnp.asarray(active), fmt, kind, empty.item())
    got = list(zip(np.asarray(value).view(raw.dtype).tolist(), np.asarray(index).tolist(),
                   strict=True))
    assert got == want
