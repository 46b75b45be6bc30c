"""ascjax.finfo: every field against ml_dtypes.finfo (and en_dtypes for fp4 e1m2), bit for bit;
hifloat8_t against its value table."""

import en_dtypes
import ml_dtypes
import numpy as np
import pytest

import ascjax
from ascjax import FORMATS

FLOATS = [n for n, f in FORMATS.items() if f.is_float]
FIELDS = ("bits", "nexp", "nmant", "minexp", "maxexp", "max", "min", "smallest_normal",
          "smallest_subnormal", "eps")
# Formats a library implements: ml_dtypes where it has them, en_dtypes for fp4 e1m2.
LIBRARY = {"half": ml_dtypes.finfo(np.float16), "float": ml_dtypes.finfo(np.float32),
           "bfloat16_t": ml_dtypes.finfo(ml_dtypes.bfloat16),
           "fp8_e5m2_t": ml_dtypes.finfo(ml_dtypes.float8_e5m2),
           "fp8_e4m3fn_t": ml_dtypes.finfo(ml_dtypes.float8_e4m3fn),
           "fp8_e8m0_t": ml_dtypes.finfo(ml_dtypes.float8_e8m0fnu),
           "fp4x2_e2m1_t": ml_dtypes.finfo(ml_dtypes.float4_e2m1fn),
           "fp4x2_e1m2_t": en_dtypes.finfo(en_dtypes.float4_e1m2)}


def test_every_float_format_is_covered():
    assert sorted(LIBRARY) + ["hifloat8_t"] == sorted(FLOATS)


@pytest.mark.parametrize("name", sorted(LIBRARY))
def test_fields_match_library(name):
    got, want = ascjax.finfo(name), LIBRARY[name]
    for field in FIELDS:
        g, w = getattr(got, field), getattr(want, field)
        if isinstance(g, float):
            assert type(g) is float and np.float64(w).view(np.uint64) == \
                np.float64(g).view(np.uint64), (field, g, w)
        else:
            assert type(g) is int and g == int(w), (field, g, w)
    assert got.bias == FORMATS[name].bias


def test_hifloat8_against_value_table():
    info = ascjax.finfo("hifloat8_t")
    values = np.asarray(ascjax.decode(np.arange(256, dtype=np.uint8), "hifloat8_t"),
                        np.float64)
    finite = np.unique(values[np.isfinite(values) & (values > 0)])
    assert info.max == finite[-1] == 32768.0 and info.min == -info.max
    assert info.smallest_subnormal == finite[0] == 2.0 ** -22
    assert info.eps == finite[finite > 1][0] - 1 == 0.125
    assert 2.0 ** (info.maxexp - 1) <= info.max < 2.0 ** info.maxexp
    # The smallest normal is the lowest binade whose codes carry a mantissa bit: values
    # below it are powers of two only, above it its binade holds 2**minexp * 1.5.
    assert info.smallest_normal == 2.0 ** info.minexp
    assert np.all(np.log2(finite[finite < info.smallest_normal]) % 1 == 0)
    assert 1.5 * info.smallest_normal in finite
    hif = en_dtypes.finfo(en_dtypes.hifloat8)
    for field in ("max", "min", "smallest_normal", "smallest_subnormal", "eps", "nmant"):
        assert getattr(info, field) == float(getattr(hif, field)), field


def test_aliases_dtypes_and_errors():
    assert ascjax.finfo("float8_e4m3fn") is ascjax.finfo(ml_dtypes.float8_e4m3fn)
    assert ascjax.finfo(np.float16) is ascjax.finfo("half")
    assert ascjax.finfo(FORMATS["bfloat16_t"]).max == float(ml_dtypes.finfo(ml_dtypes.bfloat16).max)
    with pytest.raises(TypeError, match="finfo: int8_t is not a float format.*hifloat8_t"):
        ascjax.finfo("int8_t")
    with pytest.raises(TypeError, match="finfo: unknown format 'float7'.*fp4x2_e1m2_t"):
        ascjax.finfo("float7")
