"""The one table of Ascend data formats and the machine constants derived from it.

Every list of types in the package (docs, dtype checks, test parameters) is derived from
``FORMATS``. A format is named by its Ascend C type name (``"half"``, ``"hifloat8_t"``, ...).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any

import ml_dtypes
import numpy as np

VL_BYTES = 256  # vector register length, every dtype
DATABLOCK_BYTES = 32
BLOCKS_PER_REGISTER = VL_BYTES // DATABLOCK_BYTES
UB_BYTES = 256 * 1024  # upper limit of the Unified Buffer; usable size is a Config parameter


@dataclasses.dataclass(frozen=True)
class Format:
    """One Ascend data type.

    ``bits`` is the width of one element (4 for the packed nibble types); ``storage`` is the
    NumPy dtype an array of it is held in (for nibble types: one byte per *pair*). Floating
    formats give their layout (``exponent_bits``, ``mantissa_bits``, ``bias``); ``specials``
    says in words how inf, NaN and zero are coded. ``library`` names an existing implementation
    of the value format, where one exists.

    Codec fields (``ascjax.encode`` / ``ascjax.decode``; a type without ``round_modes`` has no
    codec): ``round_modes`` are the hardware Cast round modes into the type, the default first;
    ``cast_from`` the source types the Cast table lists for them (empty: none documented, the
    modes are assumed); ``max_code``, ``inf_code``, ``nan_code`` the bit patterns (sign clear)
    of the largest finite value, of +inf and of the NaN that ``encode`` writes (None: the type
    has none); ``sign_bit`` False for unsigned fp8_e8m0. ``reference`` is an importable NumPy
    scalar type holding one unpacked element (tests and docs compare against it) and
    ``reference_mode`` the round mode its float32 conversion agrees with. ``assumed`` says what
    the codec assumes where the vendor documents are silent.
    """

    name: str
    bits: int
    kind: str  # "float" | "int" | "uint"
    storage: Any
    exponent_bits: int = 0
    mantissa_bits: int = 0
    bias: int = 0
    specials: str = ""
    library: str = ""
    aliases: tuple[str, ...] = ()
    round_modes: tuple[str, ...] = ()
    cast_from: tuple[str, ...] = ()
    max_code: int = 0
    inf_code: int | None = None
    nan_code: int | None = None
    sign_bit: bool = True
    reference: str = ""
    reference_mode: str = ""
    assumed: str = ""

    @property
    def storage_dtype(self) -> np.dtype:
        return np.dtype(self.storage)

    @property
    def packed(self) -> bool:
        """True for the 4-bit types held two per byte (element 2k in the low nibble)."""
        return self.bits == 4

    @property
    def register_bits(self) -> int:
        """Width of one register lane: nibble pairs occupy a byte lane."""
        return max(self.bits, 8)

    @property
    def width(self) -> int:
        """Bytes per register lane (the mask bits that govern one lane)."""
        return self.register_bits // 8

    @property
    def lanes(self) -> int:
        """Lanes of a ``vector_<T>``: 256 / sizeof(T); 256 byte-pairs for 4-bit types."""
        return VL_BYTES // self.width

    @property
    def per_block(self) -> int:
        """Lanes of one 32-byte DataBlock."""
        return DATABLOCK_BYTES // self.width

    @property
    def bits_dtype(self) -> np.dtype:
        """Unsigned integer dtype of one lane's bit pattern."""
        return np.dtype(f"uint{self.register_bits}")

    @property
    def is_float(self) -> bool:
        return self.kind == "float"


def _ieee(name, bits, storage, e, m, specials, library, aliases=(), **codec):
    return Format(name, bits, "float", storage, e, m, (1 << (e - 1)) - 1, specials, library,
                  aliases, **codec)


# Round modes of the Ascend Cast (RoundMode::CAST_RINT, ...), as encode() names them.
ROUND_MODES = ("rint", "round", "floor", "ceil", "trunc", "odd", "hybrid")
ALL_CAST_MODES = ("rint", "round", "floor", "ceil", "trunc")
_NAN_RULE = "NaN encodes as the type's canonical NaN (sign kept where the type has signed NaNs)"


FORMATS: dict[str, Format] = {
    f.name: f
    for f in (
        Format("int8_t", 8, "int", np.int8, library="numpy.int8", aliases=("int8",)),
        Format("uint8_t", 8, "uint", np.uint8, library="numpy.uint8", aliases=("uint8",)),
        Format("int16_t", 16, "int", np.int16, library="numpy.int16", aliases=("int16",)),
        Format("uint16_t", 16, "uint", np.uint16, library="numpy.uint16", aliases=("uint16",)),
        Format("int32_t", 32, "int", np.int32, library="numpy.int32", aliases=("int32",)),
        Format("uint32_t", 32, "uint", np.uint32, library="numpy.uint32", aliases=("uint32",)),
        _ieee("half", 16, np.float16, 5, 10, "IEEE binary16: inf, NaN, -0, subnormals",
              "numpy.float16", ("float16",), round_modes=(*ALL_CAST_MODES, "odd"),
              cast_from=("float",), max_code=0x7BFF, inf_code=0x7C00, nan_code=0x7E00,
              reference="numpy.float16", reference_mode="rint", assumed=_NAN_RULE),
        _ieee("float", 32, np.float32, 8, 23, "IEEE binary32: inf, NaN, -0, subnormals",
              "numpy.float32", ("float32",)),
        _ieee("bfloat16_t", 16, ml_dtypes.bfloat16, 8, 7, "1-8-7: inf, NaN, -0, subnormals",
              "ml_dtypes.bfloat16", ("bfloat16",), round_modes=ALL_CAST_MODES,
              cast_from=("float",), max_code=0x7F7F, inf_code=0x7F80, nan_code=0x7FC0,
              reference="ml_dtypes.bfloat16", reference_mode="rint", assumed=_NAN_RULE),
        _ieee("fp8_e5m2_t", 8, ml_dtypes.float8_e5m2, 5, 2, "1-5-2: inf, NaN, -0",
              "ml_dtypes.float8_e5m2", ("float8_e5m2",), round_modes=("rint",),
              cast_from=("float",), max_code=0x7B, inf_code=0x7C, nan_code=0x7E,
              reference="ml_dtypes.float8_e5m2", reference_mode="rint", assumed=_NAN_RULE),
        Format("fp8_e4m3fn_t", 8, "float", ml_dtypes.float8_e4m3fn, 4, 3, 7,
               "1-4-3: no inf, NaN 0x7F/0xFF, max 448, -0", "ml_dtypes.float8_e4m3fn",
               ("float8_e4m3fn",), round_modes=("rint",), cast_from=("float",), max_code=0x7E,
               nan_code=0x7F, reference="ml_dtypes.float8_e4m3fn", reference_mode="rint",
               assumed=_NAN_RULE + "; inf and overflow give NaN (no inf code)"),
        Format("fp8_e8m0_t", 8, "float", ml_dtypes.float8_e8m0fnu, 8, 0, 127,
               "exponent only 2^(e-127), 0xFF NaN; hardware cast decodes 0x00 as +0",
               "ml_dtypes.float8_e8m0fnu", ("float8_e8m0fnu",), round_modes=ALL_CAST_MODES,
               max_code=0xFE, nan_code=0xFF, sign_bit=False,
               reference="ml_dtypes.float8_e8m0fnu", reference_mode="round",
               assumed=("round modes (no Cast row lists e8m0); negative values, inf and "
                        "overflow give NaN 0xFF; code 0x00 per Config.e8m0 (SPEC 11.6)")),
        Format("hifloat8_t", 8, "float", np.uint8, specials=(
               "tapered dot-coded: 0x00 = 0, 0x80 = NaN, 0x6F/0xEF = +-inf, max 32768, "
               "min subnormal 2^-22"), library="en_dtypes.hifloat8 (independent check)",
               aliases=("hifloat8",), round_modes=("round", "hybrid"),
               cast_from=("float", "half"), max_code=0x6E, inf_code=0x6F, nan_code=0x80,
               reference="en_dtypes.hifloat8", reference_mode="round",
               assumed=("hybrid follows Huawei's host reference codec (F >= T test on "
                        "source bits, see ascjax.encode)")),
        Format("int4b_t", 4, "int", np.uint8, specials="two's complement [-8, 7], two per byte",
               library="ml_dtypes.int4 (unpacked)", aliases=("int4",),
               round_modes=ALL_CAST_MODES, cast_from=("half",), max_code=7,
               reference="ml_dtypes.int4", reference_mode="trunc",
               assumed="always saturates to [-8, 7]; NaN gives 0"),
        Format("fp4x2_e2m1_t", 4, "float", np.uint8, 2, 1, 1,
               "1-2-1: {0,.5,1,1.5,2,3,4,6}, no inf/NaN, two per byte",
               "ml_dtypes.float4_e2m1fn (unpacked)", ("float4_e2m1fn",),
               round_modes=ALL_CAST_MODES, cast_from=("bfloat16_t",), max_code=7,
               reference="ml_dtypes.float4_e2m1fn", reference_mode="rint",
               assumed="inf and overflow saturate to +-6; NaN gives +0 (no inf/NaN codes)"),
        Format("fp4x2_e1m2_t", 4, "float", np.uint8, 1, 2, 1,
               "1-1-2: {0,.25,...,1.75}, no inf/NaN, two per byte",
               "en_dtypes.float4_e1m2 (unpacked, independent check)", ("float4_e1m2",),
               round_modes=ALL_CAST_MODES, cast_from=("bfloat16_t",), max_code=7,
               reference="en_dtypes.float4_e1m2", reference_mode="rint",
               assumed="inf and overflow saturate to +-1.75; NaN gives +0 (no inf/NaN codes)"),
    )
}

BY_ALIAS = {alias: f for f in FORMATS.values() for alias in (f.name, *f.aliases)}
# A NumPy dtype names the format whose storage it is; uint8 means uint8_t, never a
# byte-stored format (hifloat8, nibble pairs): those must be named explicitly.
_BY_DTYPE = {}
for _f in FORMATS.values():
    _BY_DTYPE.setdefault(np.dtype(_f.storage), _f)


# Types with a value codec (ascjax.encode / decode), in table order.
CODEC_FORMATS: tuple[str, ...] = tuple(n for n, f in FORMATS.items() if f.round_modes)


def format_names() -> list[str]:
    return list(FORMATS)


def supported_table() -> str:
    return ", ".join(FORMATS)


def resolve(spec: Any, *, where: str = "ascjax", arg: str = "dtype") -> Format:
    """Return the Format for an Ascend type name, alias, Format or NumPy/JAX dtype.

    Raises ``TypeError`` naming ``where`` (the instruction) and ``arg`` on anything unknown.
    """
    if isinstance(spec, Format):
        return spec
    if isinstance(spec, str):
        if spec in BY_ALIAS:
            return BY_ALIAS[spec]
        raise TypeError(f"{where}: unknown {arg} {spec!r}; supported Ascend types: "
                        f"{supported_table()}")
    try:
        dtype = np.dtype(spec)
    except TypeError:
        raise TypeError(f"{where}: {arg} {spec!r} is not a dtype or Ascend type name; "
                        f"supported: {supported_table()}") from None
    if dtype in _BY_DTYPE:
        return _BY_DTYPE[dtype]
    raise TypeError(f"{where}: {arg} {dtype} has no Ascend type; supported: {supported_table()}")


resolve_format = resolve  # public name


# --- derived numeric facts ------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class FInfo:
    """Machine limits of a float format, as ``ml_dtypes.finfo`` gives them (exact Python numbers).

    ``bits`` element width; ``nexp`` / ``nmant`` exponent and mantissa field widths; ``bias``
    the exponent bias; ``minexp`` the exponent of the smallest normal (``smallest_normal =
    2**minexp``); ``maxexp`` one past the exponent of the largest finite value (NumPy's
    convention: ``2**(maxexp - 1) <= max < 2**maxexp``); ``max`` the largest finite value and
    ``min`` the most negative one (``-max``; for unsigned fp8_e8m0 its least value, as
    ml_dtypes has it); ``smallest_subnormal`` the least positive value (``smallest_normal``
    where there are no subnormals); ``eps`` the gap between 1 and the next value.

    fp8_e8m0_t follows the format (code 0x00 is 2**-127, as in ml_dtypes); under
    ``Config(e8m0="cast")`` the hardware reads that code as +0 instead.

    hifloat8_t is tapered, not IEEE: the mantissa narrows from 3 bits near 1 to 1 bit at the
    ends and the exponent is sign-magnitude with no bias. There ``nexp`` is the widest exponent
    field (4: the dot-``11`` codes), ``nmant`` the widest mantissa (3, near 1, so ``eps`` is
    2**-3), ``bias`` 0, ``minexp`` -15 the lowest binade with a mantissa bit (the codes below
    are the denormals 2**-22 .. 2**-16), ``maxexp`` 16 (max = 2**15).
    """

    name: str
    bits: int
    nexp: int
    nmant: int
    bias: int
    minexp: int
    maxexp: int
    max: float
    min: float
    smallest_normal: float
    smallest_subnormal: float
    eps: float


# Tapered formats have no field arithmetic: their facts are read off the layout (hifloat8).
_TAPERED = {"hifloat8_t": {"nexp": 4, "nmant": 3, "bias": 0, "minexp": -15, "maxexp": 16,
                            "max": 2.0 ** 15, "smallest_subnormal": 2.0 ** -22}}


def is_tapered(fmt: Format) -> bool:
    """Whether the mantissa width varies with the exponent (no single unit roundoff)."""
    return fmt.name in _TAPERED


@functools.cache
def _finfo(name: str) -> FInfo:
    f = FORMATS[name]
    if name in _TAPERED:
        t = _TAPERED[name]
        return FInfo(name, f.bits, t["nexp"], t["nmant"], t["bias"], t["minexp"], t["maxexp"],
                     t["max"], -t["max"], 2.0 ** t["minexp"], t["smallest_subnormal"],
                     2.0 ** -t["nmant"])
    m = f.mantissa_bits
    # The largest finite code: the table's, else IEEE's (all ones below the inf pattern).
    top = f.max_code or ((((1 << f.exponent_bits) - 1) << m) - 1)
    field, frac = top >> m, top & ((1 << m) - 1)
    big = math.ldexp((1 << m) + frac, field - f.bias - m)
    # Without a mantissa there are no subnormals: code 0 is the normal 2**-bias.
    minexp = 1 - f.bias if m else -f.bias
    tiny = math.ldexp(1.0, minexp)
    return FInfo(name, f.bits, f.exponent_bits, m, f.bias, minexp, field - f.bias + 1, big,
                 -big if f.sign_bit else tiny, tiny, math.ldexp(1.0, minexp - m),
                 math.ldexp(1.0, -m))


def finfo(fmt: Any) -> FInfo:
    """``FInfo`` (machine limits, as ``ml_dtypes.finfo``) of a float format: a name, alias,
    Format or dtype. Raises ``TypeError`` for an integer or unknown format.

    >>> ascjax.finfo("fp8_e4m3fn_t").max
    448.0
    """
    floats = ", ".join(n for n, f in FORMATS.items() if f.is_float)
    try:
        f = resolve(fmt, where="finfo", arg="fmt")
    except TypeError:
        raise TypeError(f"finfo: unknown format {fmt!r}; float formats: {floats}") from None
    if not f.is_float:
        raise TypeError(f"finfo: {f.name} is not a float format; float formats: {floats}")
    return _finfo(f.name)
