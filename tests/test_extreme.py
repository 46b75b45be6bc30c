"""``lanes.select_extreme``, the max/min every max/min instruction uses, against a plain loop."""

import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ascjax._src.formats import FORMATS
from ascjax._src.isa.lanes import select_extreme

TYPES = {"half": np.uint16, "float": np.uint32, "int16_t": np.int16, "uint16_t": np.uint16,
         "int32_t": np.int32, "uint32_t": np.uint32}
SPECIAL = {"half": [0x0000, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0x7C01, 0xFE00, 0x0001, 0x8001],
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


@pytest.mark.parametrize("name", list(TYPES))
@pytest.mark.parametrize("kind", ["max", "min"])
@pytest.mark.parametrize("leading", [False, True])
@given(data=st.data())
def test_select_extreme_matches_a_plain_loop(name, kind, leading, data):
    fmt, dtype = FORMATS[name], TYPES[name]
    n = data.draw(st.sampled_from([2, 8, 16, 64, 128]))
    info = np.iinfo(dtype)
    pool = st.integers(int(info.min), int(info.max))
    if name in SPECIAL:
        pool = st.one_of(pool, st.sampled_from(SPECIAL[name]))
    raw = np.array(data.draw(st.lists(pool, min_size=n, max_size=n)), dtype)
    raw[data.draw(st.integers(0, n - 1))] = raw[0]  # a tie
    active = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    with np.errstate(invalid="ignore"):  # a signalling NaN widened to float64
        values = raw.view(fmt.storage_dtype).astype(float if fmt.is_float else int).tolist()
    got = select_extreme(jnp.asarray(raw), active, fmt, kind, leading=leading)
    assert tuple(np.asarray(g).item() for g in got) == _loop(values, active, kind)
