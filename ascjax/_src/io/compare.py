"""Compare an NPU output dump with a golden: where, by how much, and the CANN verdicts.

Bits first: a mismatch is an element whose bit patterns differ, except two NaNs, which count as
equal whatever their payloads (reported apart). The ULP distance is taken on the ordered
integers of the patterns (sign-magnitude turned into two's-complement order), so +0 and -0 are
0 apart and inf is one past the largest finite value; formats of 8 bits or fewer use the rank
of the value among all the format's values, which is the same thing for the IEEE-like ones and
also right for the tapered hifloat8. A NaN against a number is infinitely far (``math.inf``;
``null`` in JSON). Integers are |a - b| apart.

The rules (``criteria``; every one is computed and reported, the ``rules`` asked for decide the
verdict, ``isclose`` by default):

* ``isclose``: the rule of 148 of the 152 ``verify_result.py`` scripts of the Ascend samples::

      close = np.isclose(output, golden, rtol=R, atol=A, equal_nan=True)
      error_ratio = float(count(!close)) / golden.size;  pass if error_ratio <= E

  called as the scripts call it, on the arrays ``np.fromfile`` gives them (float16 for half,
  float32 for float, the integer types as such; ml_dtypes' bfloat16 / float8 types for those;
  hifloat8 and the 4-bit types, which NumPy cannot load, as float32 values), so the arithmetic
  (float16 for half: ``atol + rtol * |golden|`` is rounded to float16) is the scripts'.
  ``PRESETS`` name the common (R, A, E) settings; ``DEFAULT_PRESET`` is the default.
* ``loss`` (``--rule loss``; formerly named ``thousandth``, still accepted): the other
  ``verify_result.py`` rule (LOSS = 1e-3, "absolute and relative error both within one
  thousandth"; 4 of the samples' scripts), computed as the script computes it::

      diff = |actual - golden|;  deno = max(|actual|, |golden|)
      atol_ok = diff <= LOSS;    rtol_ok = diff / (deno + 10e-10) <= LOSS
      fail if count(!rtol_ok) > n * LOSS and count(!atol_ok) > n * LOSS

  in the NumPy type ``np.fromfile`` gives (float16 for half, so 10e-10 rounds to 0 there and
  an exact 0 fails the relative test; float32 otherwise, float64 for 32-bit integers). As in
  the script, an element with a NaN or an inf on either side fails both tests, even when the
  bits agree (inf - inf is NaN); the report counts those agreeing ones (``nan_inf_agreeing``).
* ``mere_mare``: the CANN precision standard's threshold test. With
  ``rel = |actual - golden| / (|golden| + 1e-7)`` (float64), MERE = mean(rel), MARE = max(rel);
  pass when MERE < T and MARE < 10 T, T = 2^-10 (half), 2^-7 (bfloat16), 2^-13 (float),
  2^-3 (fp8 e4m3), 2^-2 (fp8 e5m2); other types have no T and no such verdict. Equal values
  and NaN pairs have rel = 0; a NaN against a number, or an inf against a different value, has
  rel = inf.
* ``bit_exact``: no mismatch.

Mismatches are located in the data's layout: ``layout="registers"`` (index, register, 32-byte
block, lane) for files of registers, ``layout="flat"`` (index only) for compacted outputs such
as squeeze or gather results, or ``shape=`` (layout ``"shape"``: the index tuple of the element
in an array of that shape, e.g. ``(tensor, element)`` for a file of LocalTensors, ``shape=(-1,
16)`` for rows of 16) for anything else; arrays of more than one dimension are located in their
own shape unless a layout is given. A lane is the element's index in its register: for the
4-bit types (two elements a byte, element 2k in the low nibble) 0..511, with the register
``byte`` that holds it reported apart. Values are printed in the shortest form that reads back
to the same value of their own format (``0.1`` for float 0.1, not its float64 expansion),
with ``|actual - golden|`` in float64 beside them. ``valid_counts=`` (one count per row of a
2-D shape: GatherMask's rsvdCnt, past which its dst is undefined on the NPU) compares the
first count elements of each row only; every figure is then of those elements. Comparing
zero elements is an error unless ``allow_empty=True``.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import os
from collections.abc import Callable
from typing import Any

import numpy as np

from ..formats import FORMATS, Format, resolve
from ..isa.codecs import decode
from .binio import read_bin

LOSS = 1e-3  # verify_result.py: "fp16: absolute and relative error both within 1/1000"
MINIMUM = 10e-10  # verify_result.py's guard in the relative error's denominator
MERE_EPS = 1e-7  # CANN precision standard: rel = |a - g| / (|g| + 1e-7)
THRESHOLDS = {  # CANN precision standard, threshold T per output type
    "half": 2.0**-10, "bfloat16_t": 2.0**-7, "float": 2.0**-13,
    "fp8_e4m3fn_t": 2.0**-3, "fp8_e5m2_t": 2.0**-2,
}
CHUNK_ELEMENTS = 1 << 22  # elements compared per step: bounded memory for any file size
SUM_BLOCK = 1 << 12  # MERE's rel is summed this many at a time: same bits for any chunk size
_INF_ULP = -1  # the integer stand-in for "a NaN against a number" inside the arrays
_PAYLOAD_ULP = -2  # ... for two NaNs of different payloads: no distance, but not the same bits

# The (rtol, atol, error ratio) settings of the samples' np.isclose scripts, named after their
# values; the default is the loosest in all three (a FAIL under it fails every common script).
PRESETS = {
    "r1e-3-a1e-3-e1e-3": (1e-3, 1e-3, 1e-3),
    "r1e-3-a1e-3-e1e-4": (1e-3, 1e-3, 1e-4),
    "r1e-4-a1e-5-e1e-4": (1e-4, 1e-5, 1e-4),
    "r1e-6-a1e-9-e1e-4": (1e-6, 1e-9, 1e-4),
}
DEFAULT_PRESET = "r1e-3-a1e-3-e1e-3"
RULES = ("isclose", "loss", "mere_mare", "bit_exact")
# other spellings: the command line's, and "thousandth" (the loss rule's former name)
RULE_NAMES = {"thousandth": "loss", "mere-mare": "mere_mare", "bit-exact": "bit_exact"}
LAYOUTS = ("registers", "flat", "shape")


# --- per-format element model: codes, values, NaN/inf, order --------------------------------

@functools.cache
def _code_table(name: str) -> tuple[np.ndarray, np.ndarray]:
    """(float64 value, rank among the format's values) of every code of an 8- or 4-bit float
    type. Ranks count distinct values in increasing order (+0 and -0 share one); NaN ranks -1."""
    fmt = FORMATS[name]
    values = np.asarray(decode(np.arange(1 << fmt.bits, dtype=np.uint8), name), np.float64)
    numbers = ~np.isnan(values)
    rank = np.full(values.shape, -1, np.int64)
    rank[numbers] = np.searchsorted(np.unique(values[numbers]), values[numbers])
    return values, rank


def _codes(data: np.ndarray, fmt: Format) -> np.ndarray:
    """Unsigned per-element codes: the lane bit patterns, nibbles unpacked (element 2k low)."""
    bits = data.view(fmt.bits_dtype) if data.dtype != fmt.bits_dtype else data
    if fmt.packed:
        return np.stack([bits & 0xF, bits >> 4], axis=-1).reshape(-1)
    return bits.reshape(-1)


def _elements_per_register(fmt: Format) -> int:
    return fmt.lanes * (2 if fmt.packed else 1)


def _small_float(fmt: Format) -> bool:
    return fmt.is_float and fmt.bits <= 8


def _values(codes: np.ndarray, fmt: Format) -> np.ndarray:
    """float64 values of the codes (exact for every format)."""
    if _small_float(fmt) or fmt.name == "int4b_t":
        return _code_table(fmt.name)[0][codes]
    with np.errstate(invalid="ignore"):  # a signalling NaN is quieted: a NaN all the same
        return codes.view(fmt.storage_dtype).astype(np.float64)


def _ieee_fields(fmt: Format) -> tuple[int, int]:
    man = (1 << fmt.mantissa_bits) - 1
    return (((1 << fmt.exponent_bits) - 1) << fmt.mantissa_bits), man


def _nan_inf(codes: np.ndarray, fmt: Format) -> tuple[np.ndarray, np.ndarray]:
    if not fmt.is_float:
        none = np.zeros(codes.shape, bool)
        return none, none
    if _small_float(fmt):
        values = _code_table(fmt.name)[0][codes]
        return np.isnan(values), np.isinf(values)
    exp, man = _ieee_fields(fmt)
    special = (codes & exp) == exp
    return special & ((codes & man) != 0), special & ((codes & man) == 0)


def _order(codes: np.ndarray, fmt: Format) -> np.ndarray:
    """int64 keys whose differences are ULP distances (NaNs excluded by the caller)."""
    if _small_float(fmt):
        return _code_table(fmt.name)[1][codes]
    if not fmt.is_float:
        if fmt.name == "int4b_t":
            return _code_table(fmt.name)[0][codes].astype(np.int64)
        return codes.view(fmt.storage_dtype).astype(np.int64)
    top = fmt.register_bits - 1
    wide = codes.astype(np.int32 if top < 31 else np.int64)  # half the traffic for 16 bits
    mag = wide & ((1 << top) - 1)
    np.negative(mag, out=mag, where=(wide >> top).astype(bool))
    return mag


# --- the report -----------------------------------------------------------------------------

def _json_value(x: Any) -> Any:
    """A value for JSON: numbers as numbers, nan/inf/-inf as strings (JSON has none)."""
    if isinstance(x, float) and not math.isfinite(x):
        return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    return x


def _json_ulp(x: float) -> int | str:
    """An ULP distance for JSON: an int, or "inf" (a NaN against a number) or "nan" (two NaNs
    of different payloads), as ``_json_value`` writes non-finite values."""
    return int(x) if math.isfinite(x) else _json_value(float(x))


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}es" if word.endswith("h") else f"{n} {word}s"


def _neighbours(value: float, fmt: Format) -> tuple[float, float]:
    """The values of ``fmt`` either side of the finite nonzero ``value``; past the largest (or
    smallest) finite value, its mirror image (so the cut between them is where round to
    nearest overflows)."""
    if fmt.bits > 8:  # bfloat16: ml_dtypes steps through its values
        v = np.array([value], fmt.storage_dtype)
        lo, hi = (float(np.nextafter(v, np.array([end], fmt.storage_dtype))[0])
                  for end in (-np.inf, np.inf))
    else:
        values = _code_table(fmt.name)[0]
        values = np.unique(values[np.isfinite(values)])
        i = int(np.searchsorted(values, value))
        lo = float(values[i - 1]) if i > 0 else math.inf
        hi = float(values[i + 1]) if i + 1 < values.size else math.inf
    if math.isinf(lo):
        lo = 2 * value - hi
    if math.isinf(hi):
        hi = 2 * value - lo
    return lo, hi


def shortest(value: float, dtype: Any) -> str:
    """``value`` (exact in ``dtype``) in the fewest significant digits that read back, rounded
    to the nearest value of ``dtype``, to the same value: ``0.1`` for float's 0.1 (whose
    float64 repr is 0.10000000149011612) and for bfloat16's 0.10009765625. half and float as
    NumPy prints its float16 / float32 scalars (``6.55e+04`` for 65504); the other types as
    Python prints the float of those digits (``0.1``, ``448.0``), taking no decimal that lies
    halfway between two values (it reads back by the tie rule only)."""
    fmt = resolve(dtype, where="compare")
    if not fmt.is_float or isinstance(value, int):
        return str(value)
    if fmt.name in ("half", "float"):
        return str(np.dtype(fmt.storage_dtype).type(value))
    if value == 0 or not math.isfinite(value):
        return repr(float(value))
    lo, hi = _neighbours(value, fmt)
    for digits in range(1, 18):  # read back: nearer to value than to either neighbour (no tie)
        x = float(f"{value:.{digits}g}")
        if abs(x - value) < min(abs(x - lo), abs(x - hi)):
            return repr(x)
    return repr(float(value))


@dataclasses.dataclass(frozen=True)
class Mismatch:
    """One element whose bits differ: where it is, both values and bit patterns, ULPs apart.

    ``index`` is the element's index in the flat data. ``layout="registers"``: ``register`` =
    index // elements per register; ``lane`` the element's index in that register (for the
    4-bit types an element index, 0..511, and ``byte`` the register byte holding it: lane // 2,
    element 2k in the low nibble; ``None`` for other types); ``block`` the 32-byte DataBlock
    of the element. ``position`` (``layout="shape"``): the element's index tuple in the shape
    given. Fields of the other layouts are ``None`` (and left out of ``as_dict``). ``ulp`` is
    ``math.inf`` for a NaN against a number; ``close`` is what ``np.isclose`` said of the
    element under the report's isclose rule. ``actual`` / ``golden`` hold the exact values
    (``str(report)`` prints them in their own format's shortest form, ``shortest``);
    ``abs_diff`` is ``|actual - golden|`` in float64 (nan where a side is NaN, inf where one is
    infinite), ``rel_diff`` that over ``|golden|``.
    """

    index: int
    register: int | None
    block: int | None
    lane: int | None
    actual: float
    golden: float
    actual_bits: str
    golden_bits: str
    ulp: float | int
    close: bool = True
    byte: int | None = None
    position: tuple[int, ...] | None = None

    @property
    def abs_diff(self) -> float:
        # float64 (Python's float): inf - -inf is inf, a NaN side gives nan
        return abs(float(self.actual) - float(self.golden))

    @property
    def rel_diff(self) -> float:
        """``abs_diff / |golden|`` in float64: inf against a golden 0, nan for a NaN side."""
        diff, golden = self.abs_diff, abs(float(self.golden))
        if math.isnan(diff) or math.isnan(golden):
            return math.nan
        return diff / golden if golden else (0.0 if diff == 0 else math.inf)

    def as_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d.update(actual=_json_value(self.actual), golden=_json_value(self.golden),
                 ulp=_json_ulp(self.ulp), abs_diff=_json_value(self.abs_diff),
                 rel_diff=_json_value(self.rel_diff))
        if self.position is not None:
            d["position"] = list(self.position)
        for key in ("register", "block", "lane", "byte", "position"):
            if d[key] is None:
                d.pop(key)
        return d


@dataclasses.dataclass(frozen=True)
class Criterion:
    """One rule: its name, whether it passed, the figures it rests on, the rule in words, and
    whether it decides the verdict (``applied``: one of the rules asked for)."""

    name: str
    passed: bool
    figures: dict
    rule: str
    applied: bool = True

    def as_dict(self) -> dict:
        figures = {k: _json_value(v) for k, v in self.figures.items()}
        return {"name": self.name, "pass": self.passed, "applied": self.applied,
                "figures": figures, "rule": self.rule}


@dataclasses.dataclass(frozen=True)
class CompareReport:
    """What ``compare`` found (see the module doc for every rule).

    ``mismatches`` counts elements whose bits differ, two NaNs of different payloads included
    (``nan_payload_differs`` of them: a data movement keeps payloads); ``max_ulp`` is their
    largest ULP distance (``math.inf`` if a NaN meets a number; a payload pair has none, its
    ``Mismatch.ulp`` is NaN); ``ulp_histogram`` maps bins ("0", "1", "2", "3-4", "5-8", ...,
    "inf", "NaN payload") to counts of mismatches; ``passed`` is True when
    every applied criterion (the ``rules`` asked for) passes; ``layout`` is how mismatches are
    located (``"registers"``, ``"flat"`` or ``"shape"``, in ``shape``); ``excluded`` counts the
    elements left out past each row's valid count (``valid_counts=``; None without it), which
    ``elements`` does not include. ``first_isclose_failures`` are the first elements
    ``np.isclose`` fails (as many as ``first_mismatches``; ``str(report)`` lists them when the
    isclose rule decides and fails); ``max_ulp_at`` is the first mismatch at ``max_ulp`` (None
    without one: no mismatch, or NaN payloads only). ``max_finite_ulp`` / ``max_finite_ulp_at``
    are the same over the mismatches whose two values are finite, the largest error that is
    a number (None without one), shown apart where a NaN or inf holds ``max_ulp``;
    ``signed_zero_mismatches`` counts +0 against -0; ``mismatched_rows`` the registers
    (layout ``"registers"``) or rows of ``shape`` (its first axis) holding a mismatch (None
    for ``"flat"``). ``str(report)`` is a table for people,
    closing with the deciding rules' lines and the verdict; ``as_dict()`` / ``to_json()`` the
    data (JSON keys as ``ascjax compare --json`` prints them).
    """

    dtype: str
    elements: int
    mismatches: int
    max_ulp: float | int
    ulp_histogram: dict
    nan_pairs: int
    nan_payload_differs: int
    nan_vs_number: int
    inf_mismatches: int
    first_mismatches: tuple[Mismatch, ...]
    criteria: tuple[Criterion, ...]
    passed: bool
    rules: tuple[str, ...] = ("isclose",)
    layout: str = "registers"
    shape: tuple[int, ...] | None = None
    excluded: int | None = None
    first_isclose_failures: tuple[Mismatch, ...] = ()
    max_ulp_at: Mismatch | None = None
    signed_zero_mismatches: int = 0
    max_finite_ulp: int | None = None
    max_finite_ulp_at: Mismatch | None = None
    mismatched_rows: int | None = None
    uncompared: tuple[int, int] | None = None

    def as_dict(self) -> dict:
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        d.pop("passed")
        d.update(max_ulp=_json_ulp(self.max_ulp),
                 max_ulp_at=None if self.max_ulp_at is None else self.max_ulp_at.as_dict(),
                 max_finite_ulp_at=(None if self.max_finite_ulp_at is None
                                    else self.max_finite_ulp_at.as_dict()),
                 first_mismatches=[m.as_dict() for m in self.first_mismatches],
                 first_isclose_failures=[m.as_dict() for m in self.first_isclose_failures],
                 criteria={c.name: c.as_dict() for c in self.criteria},
                 ulp_histogram=dict(self.ulp_histogram), rules=list(self.rules),
                 shape=None if self.shape is None else list(self.shape),
                 uncompared=None if self.uncompared is None else list(self.uncompared))
        d["pass"] = self.passed
        return d

    def to_json(self, **kwargs: Any) -> str:
        return json.dumps(self.as_dict(), **kwargs)

    def __str__(self) -> str:
        ulp = "inf" if self.max_ulp == math.inf else str(self.max_ulp)
        within = ""
        if self.mismatched_rows is not None and self.mismatches:
            unit = "register" if self.layout == "registers" else "row"
            within = f" in {_plural(self.mismatched_rows, unit)}" + (
                "" if self.layout == "registers" else f" of shape {self.shape}")
        lines = [(f"compare {self.dtype}: {_plural(self.elements, 'element')}, "
                  f"{_plural(self.mismatches, 'bit mismatch')}{within}, max {ulp} ulp")]
        if self.excluded is not None:
            lines.append(f"  valid counts: {_plural(self.excluded, 'element')} past each row's "
                         f"count excluded as undefined (not compared)")
        if self.uncompared is not None:
            lines.append(f"  count: the first {_plural(self.elements, 'element')} of each "
                         f"compared; actual's {self.uncompared[0]} and golden's "
                         f"{self.uncompared[1]} after them were not")
        if self.ulp_histogram:
            lines.append("  ulp histogram: " + "  ".join(
                f"{k}: {v}" for k, v in self.ulp_histogram.items()))
        if self.max_ulp_at is not None:
            m = self.max_ulp_at
            place = ", ".join(f"{k} {v}" for k, v in self._where(m))
            lines.append(f"  max ulp {ulp} at index {m.index}" + (f" ({place})" if place else "")
                         + f": actual {self._value(m.actual, m.actual_bits)}, golden "
                         f"{self._value(m.golden, m.golden_bits)}")
        f = self.max_finite_ulp_at
        if f is not None and f != self.max_ulp_at:  # shown where it is not max_ulp_at
            place = ", ".join(f"{k} {v}" for k, v in self._where(f))
            lines.append(f"  max finite ulp {self.max_finite_ulp} (both values finite) at index "
                         f"{f.index}" + (f" ({place})" if place else "")
                         + f": actual {self._value(f.actual, f.actual_bits)}, golden "
                         f"{self._value(f.golden, f.golden_bits)}")
        lines.append(f"  NaN pairs {self.nan_pairs} ({self.nan_payload_differs} with other "
                     f"payloads), NaN vs number {self.nan_vs_number}, inf mismatches "
                     f"{self.inf_mismatches}, +0 vs -0 {self.signed_zero_mismatches}")
        if self.first_mismatches:
            lines += self._located("first mismatches", self.first_mismatches)
        if self.first_isclose_failures and any(
                c.name == "isclose" and c.applied and not c.passed for c in self.criteria):
            lines += self._located("first isclose failures", self.first_isclose_failures)
        others = "; the others, in parentheses, do not decide" if any(
            not c.applied for c in self.criteria) else ""
        lines.append(f"  rules (deciding: {', '.join(map(_spelled, self.rules))}{others}):")
        for c in self.criteria:
            figures = ", ".join(f"{k} {_fmt(v)}" for k, v in c.figures.items())
            verdict = ("pass" if c.passed else "FAIL") if c.applied else \
                ("(pass)" if c.passed else "(fail)")
            lines.append(f"    {_spelled(c.name):<10} {verdict:<6}  ({figures})")
            if c.name == "loss" and not c.passed and c.figures["nan_inf_agreeing"]:
                lines.append("               (as verify_result.py does, NaN and inf elements "
                             "fail this rule even where both files agree)")
            if c.name == "loss" and c.figures["zeros_agreeing"]:
                lines.append("               (as verify_result.py computes in float16, where its "
                             "10e-10 rounds to 0, a pair of exact zeros fails the relative "
                             "test: zeros_agreeing)")
        # the verdict: each deciding rule's line, then PASS / FAIL naming the rules
        deciding = [c for c in self.criteria if c.applied]
        lines += [f"  {_closing(c)}" for c in deciding]
        failed = [_spelled(c.name) for c in deciding if not c.passed]
        odd = [f"{_plural(n, what)}" for n, what in (
            (self.nan_vs_number, "NaN against a number"), (self.inf_mismatches, "inf mismatch"))
            if n]
        if odd and not failed:
            lines.append(f"  note: {' and '.join(odd)} passed within the share of failing "
                         f"elements the rules allow: a NaN or an inf is seldom a rounding "
                         f"difference (bit-exact fails on them)")
        lines.append(f"  FAIL ({', '.join(failed)})" if failed else
                     f"  PASS ({', '.join(_spelled(c.name) for c in deciding)})")
        return "\n".join(lines)

    def _where(self, m: Mismatch) -> list[tuple[str, Any]]:
        """(field, value) of where ``m`` is, past its index, in the report's layout."""
        if self.layout == "registers":
            fields = [("register", m.register), ("block", m.block), ("lane", m.lane)]
            return fields + ([("byte", m.byte)] if FORMATS[self.dtype].packed else [])
        return [("position", m.position)] if self.layout == "shape" else []

    def _value(self, value: float, bits: str) -> str:
        return f"{shortest(value, self.dtype)} ({bits})"

    def _located(self, what: str, found: tuple[Mismatch, ...]) -> list[str]:
        """A table of mismatches (``what``: its title), in the report's layout."""
        packed = FORMATS[self.dtype].packed
        width = max((len(str(m.position)) for m in found), default=0)
        width = max(width, len("position"))
        widths = {"register": 8, "block": 5, "lane": 4, "byte": 4, "position": width}
        head = "".join(f"{k:>{widths[k]}} " for k, _ in self._where(found[0]))
        title = {"registers": "registers", "flat": "flat index",
                 "shape": f"shape {self.shape}"}[self.layout]
        lines = [f"  {what} ({title}):"]
        if self.layout == "registers" and packed:
            lines.append("    (4-bit type: lane = the element's index in its register, 0-511; "
                         "byte = the register byte holding it, element 2k in the low nibble)")
        lines.append(f"    {'index':>10} {head} {'actual':>24}  {'golden':>24}  "
                     f"{'abs diff':>12}  {'rel diff':>9}  {'ulp':>6}  isclose")
        for m in found:
            where = "".join(f"{v!s:>{widths[k]}} " for k, v in self._where(m))
            a, g = self._value(m.actual, m.actual_bits), self._value(m.golden, m.golden_bits)
            u = str(m.ulp) if math.isfinite(m.ulp) else "inf" if m.ulp == math.inf else "payload"
            lines.append(f"    {m.index:>10} {where} {a:>24}  {g:>24}  "
                         f"{_diff_text(m.abs_diff, self.dtype):>12}  {m.rel_diff:>9.3g}  "
                         f"{u:>6}  "
                         f"{'yes' if m.close else 'no'}")
        return lines


def _diff_text(diff: float, dtype: str) -> str:
    """|a - b| in the shortest form that reads back to it: a float64's repr (it need not be a
    value of ``dtype``), an integer type's difference as an integer."""
    if FORMATS[dtype].is_float or not math.isfinite(diff):
        return repr(diff)
    return str(int(diff))


def _closing(c: Criterion) -> str:
    """A deciding rule's closing line: the samples' own line for isclose."""
    f = c.figures
    if c.name == "isclose":  # verify_result.py's own line, in its own format
        return "error ratio: %.4f, tolerance: %.4f" % (  # noqa: UP031
            f["error_ratio"], f["tolerance"])
    if c.name == "loss":
        return (f"loss: {f['rtol_failures']} over the relative limit, {f['atol_failures']} over "
                f"the absolute limit (LOSS 1e-3); fails when both exceed {_fmt(f['limit'])}")
    if c.name == "mere_mare":
        return (f"mere-mare: MERE {_fmt(f['mere'])} (limit {_fmt(f['threshold'])}), MARE "
                f"{_fmt(f['mare'])} (limit {_fmt(f['mare_threshold'])})")
    return f"bit-exact: {_plural(f['mismatches'], 'bit mismatch')}"


def _spelled(rule: str) -> str:
    """A rule as the command line's ``--rule`` names it."""
    return rule.replace("_", "-")


def _fmt(v: Any) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def _bin_label(ulp: int) -> str:
    if ulp == _INF_ULP:
        return "inf"
    if ulp == _PAYLOAD_ULP:
        return "NaN payload"
    if ulp <= 2:
        return str(ulp)
    hi = 1 << (ulp - 1).bit_length()
    return f"{hi // 2 + 1}-{hi}"


def _bin_key(label: str) -> tuple[int, int]:
    """Bins in order: the distances, then "inf", then "NaN payload"."""
    return {"inf": (1, 0), "NaN payload": (2, 0)}.get(label) or (0, int(label.split("-")[0]))


# --- the comparison -------------------------------------------------------------------------

class _Tally:
    """Running totals over chunks, so files of any size are compared in bounded memory.

    Speed: only the elements whose bits differ go through the per-element model (``_judge``).
    An agreeing pair's verdict under every rule depends only on its value's class (zero, finite
    nonzero, or the NaN / inf code itself: ``x - x`` is 0 for a finite x, NaN otherwise, and
    the scripts' relative tests then divide 0 by ``|x|`` plus a guard that rounds to 0 in
    half), so agreeing pairs are counted per class and each class is judged once, by the same
    model, with its count as weight. ``split=False`` judges every element (the plain model,
    which the tests hold the split one to).
    """

    def __init__(self, fmt: Format, first: int, tolerance: tuple[float, float, float],
                 layout: str, split: bool = True, shape: tuple[int, ...] | None = None):
        self.fmt, self.first, self.tolerance, self.layout = fmt, first, tolerance, layout
        self.split, self.shape = split, shape
        self.excluded: int | None = None  # elements past the valid counts, when given
        self.uncompared: tuple[int, int] | None = None  # elements past count=, when given
        self.close_fail = 0
        self.n = self.mismatches = self.max_ulp = 0
        self.nan_pairs = self.nan_payload = self.nan_vs_number = self.inf_mismatches = 0
        self.hist: dict[str, int] = {}
        self.found: list[Mismatch] = []
        self.failing: list[Mismatch] = []  # the first elements np.isclose fails
        self.max_at: Mismatch | None = None  # the first element at the largest distance
        self._max_key = -1  # its distance, inf as int64's largest (payload pairs: -2, none)
        self.max_finite_at: Mismatch | None = None  # ... of those whose values are finite
        self.signed_zeros = 0
        self.rows = 0 if self._row_size() else None  # rows holding a mismatch
        self._last_row = -1  # the last of them counted: a row may span two chunks
        self.rtol_fail = self.atol_fail = self.nonfinite_agree = self.zero_agree = 0
        self.rel_sum, self.rel_max = 0.0, 0.0
        self._rel_group = np.zeros(0, np.float64)  # differing elements' rel, not yet summed

    def _row_size(self) -> int | None:
        """Elements per row: a register's, or a row of the shape (its first axis)."""
        if self.layout == "registers":
            return _elements_per_register(self.fmt)
        if self.layout == "shape" and self.shape is not None and len(self.shape) > 1:
            return math.prod(self.shape[1:])
        return None

    def add(self, a: np.ndarray, g: np.ndarray, offset: int,
            index: np.ndarray | None = None) -> None:
        """``index``: each element's index in the file, where some were left out (valid
        counts); else the elements are those from ``offset`` on."""
        self.n += a.size
        where = np.flatnonzero(a != g) if self.split else None
        if where is None or where.size * 2 > a.size:  # mostly differing: no split pays
            self._judge(a, g, np.arange(a.size) + offset if index is None else index)
            return
        self._judge(a[where], g[where], where + offset if index is None else index[where])
        self._agreeing(g, where)

    def _agreeing(self, g: np.ndarray, where: np.ndarray) -> None:
        """Judge the pairs whose bits agree by class: the count of each class as its weight."""
        fmt = self.fmt
        if fmt.bits <= 8:  # every code is its own class: 256 (or 16) weights
            top = 1 << fmt.bits
            weight = np.bincount(g, minlength=top) - np.bincount(g[where], minlength=top)
            codes = np.flatnonzero(weight).astype(g.dtype)
            self._judge(codes, codes, weight=weight[codes])
            return
        magnitude = g & ((1 << (fmt.bits - 1)) - 1) if fmt.is_float else g
        zeros = int(np.count_nonzero(magnitude == 0))
        zeros -= int(np.count_nonzero(magnitude[where] == 0))
        special = np.zeros(0, g.dtype)
        if fmt.is_float:
            exp = _ieee_fields(fmt)[0]
            at = np.flatnonzero(magnitude >= exp)
            if at.size:  # NaNs and infs as themselves (rare: their own codes, weight 1)
                special = g[np.setdiff1d(at, where, assume_unique=True)]
        others = g.size - where.size - zeros - special.size
        one = np.ones(1, fmt.storage_dtype).view(g.dtype)  # any finite nonzero code
        codes = np.concatenate([one, np.zeros(1, g.dtype), special])
        weight = np.concatenate([[others, zeros], np.ones(special.size, np.int64)])
        self._judge(codes, codes, weight=weight)

    def _judge(self, a: np.ndarray, g: np.ndarray, positions: np.ndarray | None = None,
               weight: np.ndarray | None = None) -> None:
        """The per-element model on the pairs (a, g): ``positions`` (their indices in the
        file) for pairs that may differ, or ``weight`` (how many elements each pair stands
        for) for agreeing pairs."""
        if a.size == 0:
            return

        def count(m: np.ndarray) -> int:
            return int(np.count_nonzero(m) if weight is None else weight[m].sum())

        fmt = self.fmt
        nan_a, inf_a = _nan_inf(a, fmt)
        nan_g, inf_g = _nan_inf(g, fmt)
        both_nan = nan_a & nan_g
        one_nan = nan_a ^ nan_g
        close = self._isclose(a, g)
        self.close_fail += count(~close)
        self.nan_pairs += count(both_nan)
        va, vg = _values(a, fmt), _values(g, fmt)
        self._loss(va, vg, count)
        # The script fails these although both sides agree (NaN pairs, equal infinities).
        differ = (a != g) & ~both_nan
        self.nonfinite_agree += count((both_nan | (inf_a & (a == g))) & ~differ)
        if positions is None:
            return
        self.nan_payload += count(both_nan & (a != g))
        self.nan_vs_number += count(one_nan)
        self.inf_mismatches += count(differ & ~one_nan & (inf_a | inf_g))
        self._relative(va, vg, both_nan, one_nan, a != g)
        where = np.flatnonzero(a != g)  # NaN payloads too: a data movement keeps them
        self.mismatches += where.size
        if not where.size:
            return
        self.signed_zeros += count((va == 0) & (vg == 0) & (a != g))
        if self.rows is not None:  # positions ascend: a row's mismatches come together
            rows = np.unique(positions[where] // self._row_size())
            self.rows += rows.size - int(rows[0] == self._last_row)
            self._last_row = int(rows[-1])
        # int64 from here: the stand-ins and int64's largest (for inf) share its arrays
        d = np.abs(_order(a[where], fmt) - _order(g[where], fmt)).astype(np.int64)
        d = np.where(one_nan[where], _INF_ULP, np.where(both_nan[where], _PAYLOAD_ULP, d))
        self.max_ulp = math.inf if (d == _INF_ULP).any() or self.max_ulp == math.inf \
            else max(self.max_ulp, int(d.max(initial=0)))
        labels, counts = np.unique(d, return_counts=True)
        for value, n in zip(labels.tolist(), counts.tolist(), strict=True):
            key = _bin_label(value)
            self.hist[key] = self.hist.get(key, 0) + n

        def at(k: int) -> Mismatch:
            i = where[k]
            return self._mismatch(int(positions[i]), a[i], g[i], int(d[k]), bool(close[i]))

        self.found += map(at, range(min(where.size, max(self.first - len(self.found), 0))))
        # equal bits are always close (equal_nan=True): isclose fails only where bits differ
        fails = np.flatnonzero(~close[where])[: max(self.first - len(self.failing), 0)]
        self.failing += map(at, fails.tolist())
        key = np.where(d == _INF_ULP, np.iinfo(np.int64).max, d)
        k = int(np.argmax(key))  # the first of the largest; an earlier chunk's tie stays
        if key[k] > self._max_key:
            self._max_key, self.max_at = int(key[k]), at(k)
        finite = ~(nan_a | nan_g | inf_a | inf_g)[where]
        if finite.any():
            k = int(np.argmax(np.where(finite, d, -1)))
            if self.max_finite_at is None or d[k] > self.max_finite_at.ulp:
                self.max_finite_at = at(k)

    def _mismatch(self, index: int, a, g, ulp: int, close: bool) -> Mismatch:
        fmt, per = self.fmt, _elements_per_register(self.fmt)
        at, byte, position = (None, None, None), None, None
        if self.layout == "registers":
            lane = index % per  # the element's index in its register
            byte_lane = lane // 2 if fmt.packed else lane  # the register lane holding it
            at = (index // per, byte_lane // fmt.per_block, lane)
            byte = byte_lane if fmt.packed else None
        elif self.layout == "shape":
            position = tuple(int(i) for i in np.unravel_index(index, self.shape))
        digits = max(fmt.bits // 4, 1)
        kind = float if fmt.is_float else int
        va, vg = (kind(_values(np.array([x]), fmt)[0]) for x in (a, g))
        return Mismatch(index, *at, va, vg, f"0x{int(a):0{digits}x}", f"0x{int(g):0{digits}x}",
                        {_INF_ULP: math.inf, _PAYLOAD_ULP: math.nan}.get(ulp, ulp), close, byte,
                        position)

    def _isclose(self, a: np.ndarray, g: np.ndarray) -> np.ndarray:
        """The scripts' np.isclose, on the arrays np.fromfile would give them."""
        rtol, atol, _ = self.tolerance
        x, y = _script_arrays(a, self.fmt), _script_arrays(g, self.fmt)
        with np.errstate(all="ignore"):
            return np.isclose(x, y, rtol=rtol, atol=atol, equal_nan=True)

    def _loss(self, va: np.ndarray, vg: np.ndarray, count: Callable) -> None:
        # The script's own arithmetic, in the type np.fromfile would give it.
        kind = {"half": np.float16}.get(self.fmt.name, np.float32)
        if self.fmt.bits == 32 and not self.fmt.is_float:
            kind = np.float64
        a, g = va.astype(kind), vg.astype(kind)
        with np.errstate(all="ignore"):
            result = np.abs(a - g)
            deno = np.maximum(np.abs(a), np.abs(g))
            atol_ok = np.less_equal(result, LOSS)
            rtol_ok = np.less_equal(result / np.add(deno, MINIMUM), LOSS)
        self.atol_fail += count(~atol_ok)
        self.rtol_fail += count(~rtol_ok)
        # float16 rounds the script's 10e-10 to 0: a pair of exact zeros is 0/0, a failure
        self.zero_agree += count(~rtol_ok & (a == 0) & (g == 0))

    def _relative(self, va, vg, both_nan, one_nan, differ_bits) -> None:
        """MERE's rel of the elements whose bits differ (the others have rel 0), summed in
        groups of ``SUM_BLOCK`` of them in file order: the same sum for any chunk size."""
        with np.errstate(all="ignore"):
            rel = np.abs(va - vg) / (np.abs(vg) + MERE_EPS)
        rel = np.where((va == vg) | both_nan, 0.0, np.where(one_nan, np.inf, rel))
        rel = np.where(np.isnan(rel), np.inf, rel)[differ_bits]  # inf against -inf
        if rel.size:
            self.rel_max = max(self.rel_max, float(rel.max()))
        pending = np.concatenate([self._rel_group, rel])
        full = pending.size - pending.size % SUM_BLOCK
        for start in range(0, full, SUM_BLOCK):
            self.rel_sum += float(pending[start:start + SUM_BLOCK].sum())
        self._rel_group = pending[full:]

    def report(self, rules: tuple[str, ...], preset: str | None) -> CompareReport:
        n, name = self.n, self.fmt.name
        rtol, atol, tol = self.tolerance
        ratio = float(self.close_fail) / n if n else 0.0  # the scripts' own division
        criteria = [Criterion(
            "isclose", ratio <= tol,
            {"failures": self.close_fail, "error_ratio": ratio, "tolerance": tol, "rtol": rtol,
             "atol": atol, "preset": preset},
            "Ascend samples verify_result.py: np.isclose(output, golden, rtol, atol, "
            "equal_nan=True); pass when the share of failing elements <= tolerance"),
            Criterion(
            "loss",
            not (self.rtol_fail > n * LOSS and self.atol_fail > n * LOSS),
            {"rtol_failures": self.rtol_fail, "atol_failures": self.atol_fail,
             "limit": n * LOSS, "nan_inf_agreeing": self.nonfinite_agree,
             "zeros_agreeing": self.zero_agree},
            "Ascend samples verify_result.py: fail when both the relative and the absolute "
            "error exceed LOSS=1e-3 on more than n*LOSS elements")]
        if name in THRESHOLDS:
            t = THRESHOLDS[name]
            mere = (self.rel_sum + float(self._rel_group.sum())) / n if n else 0.0
            criteria.append(Criterion(
                "mere_mare", mere < t and self.rel_max < 10 * t,
                {"mere": mere, "mare": self.rel_max, "threshold": t, "mare_threshold": 10 * t},
                "CANN precision standard: MERE < T and MARE < 10T, "
                "rel = |a-g|/(|g|+1e-7)"))
        criteria.append(Criterion("bit_exact", self.mismatches == 0,
                                  {"mismatches": self.mismatches},
                                  "every element's bits equal, NaN payloads included"))
        criteria = [dataclasses.replace(c, applied=c.name in rules) for c in criteria]
        hist = dict(sorted(self.hist.items(), key=lambda kv: _bin_key(kv[0])))
        return CompareReport(name, n, self.mismatches, self.max_ulp, hist, self.nan_pairs,
                             self.nan_payload, self.nan_vs_number, self.inf_mismatches,
                             tuple(self.found), tuple(criteria),
                             all(c.passed for c in criteria if c.applied), rules, self.layout,
                             self.shape, self.excluded, tuple(self.failing), self.max_at,
                             self.signed_zeros,
                             None if self.max_finite_at is None else self.max_finite_at.ulp,
                             self.max_finite_at, self.rows, self.uncompared)


def _tally(a: np.ndarray, g: np.ndarray, tally: _Tally, chunk: int,
           counts: np.ndarray | None = None) -> _Tally:
    """Feed the stored units of ``a`` and ``g`` to ``tally``, ``chunk`` elements at a time;
    with ``counts`` (one per row of ``tally.shape``), only the first ``counts[t]`` elements of
    each row t."""
    scale = 2 if tally.fmt.packed else 1  # elements per stored unit
    step = -(-chunk // SUM_BLOCK) * SUM_BLOCK // scale
    for start in range(0, a.size, step):
        ca = _codes(np.asarray(a[start:start + step]), tally.fmt)
        cg = _codes(np.asarray(g[start:start + step]), tally.fmt)
        if counts is None:
            tally.add(ca, cg, start * scale)
            continue
        length = tally.shape[1]
        index = np.arange(start * scale, start * scale + ca.size)
        keep = index % length < counts[index // length]
        tally.add(ca[keep], cg[keep], start * scale, index[keep])
    return tally


def _script_arrays(codes: np.ndarray, fmt: Format) -> np.ndarray:
    """The codes as the array a samples script holds: np.fromfile's dtype where NumPy (or
    ml_dtypes) has one, else float32 values (hifloat8, 4-bit types)."""
    if fmt.packed or fmt.storage_dtype == np.uint8 and fmt.is_float:
        return _values(codes, fmt).astype(np.float32)
    return codes.view(fmt.storage_dtype)


def _load(x: Any, fmt: Format, arg: str) -> np.ndarray:
    if isinstance(x, (str, os.PathLike)):
        return read_bin(x, fmt, mmap=True, arg=arg)
    x = np.asarray(x)
    if x.dtype not in (fmt.storage_dtype, fmt.bits_dtype):
        raise TypeError(f"compare: {arg} has dtype {x.dtype}; {fmt.name} is stored as "
                        f"{fmt.storage_dtype} (or give its bits as {fmt.bits_dtype})")
    return x.reshape(-1)


def _first_elements(a: np.ndarray, g: np.ndarray, count: Any,
                    fmt: Format) -> tuple[np.ndarray, np.ndarray, tuple[int, int]]:
    """The first ``count`` elements of ``a`` and ``g`` (bytes for a packed type, two
    elements each), and how many elements of each come after them."""
    per = 2 if fmt.packed else 1
    most = min(a.size, g.size) * per
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or \
            not 0 <= count <= most:
        raise ValueError(f"compare: count={count!r} must be an int in [0, {most}] (--count; "
                         f"actual has {a.size * per} {fmt.name} elements, golden {g.size * per})")
    if count % per:
        raise ValueError(f"compare: count={count} must be even for {fmt.name}: its files hold "
                         f"two elements a byte")
    n = int(count) // per
    return a[:n], g[:n], ((a.size - n) * per, (g.size - n) * per)


def _array_shape(x: Any, fmt: Format) -> tuple[int, ...] | None:
    """The element shape of an array input of more than one dimension (a packed type's last
    axis counts bytes: two elements each); None for a path or a flat array."""
    if isinstance(x, (str, os.PathLike)) or np.ndim(x) < 2:
        return None
    shape = tuple(int(n) for n in np.shape(x))
    return (*shape[:-1], 2 * shape[-1]) if fmt.packed else shape


def _layout(layout: str | None, shape: Any, actual: Any, golden: Any,
            fmt: Format) -> tuple[str, Any]:
    """(layout, shape asked for): ``shape=`` means layout "shape"; with neither given, an array
    input of more than one dimension is located in its own shape, anything else in registers."""
    if layout is not None and layout not in LAYOUTS:
        raise ValueError(f"compare: layout={layout!r} is not one of {list(LAYOUTS)}")
    if shape is not None:
        if layout not in (None, "shape"):
            raise ValueError(f"compare: layout={layout!r} and shape={shape!r} both say how to "
                             f"locate mismatches; give one (--layout or --shape)")
        return "shape", shape
    if layout not in (None, "shape"):
        return layout, None
    shapes = [s for s in (_array_shape(actual, fmt), _array_shape(golden, fmt)) if s]
    if len(shapes) == 2 and shapes[0] != shapes[1]:
        raise ValueError(f"compare: actual has shape {shapes[0]} but golden has shape "
                         f"{shapes[1]} ({fmt.name} elements); give shape= or layout= to say "
                         f"how to locate mismatches")
    if shapes:
        return "shape", shapes[0]
    if layout == "shape":
        raise ValueError("compare: layout='shape' needs shape= (or array inputs of more than "
                         "one dimension)")
    return "registers", None


def _checked_shape(shape: Any, count: int, fmt: Format) -> tuple[int, ...]:
    """``shape`` (an int or ints; one may be -1, as in NumPy's reshape) as a tuple whose size is
    ``count``, the number of elements compared."""
    dims = (shape,) if isinstance(shape, (int, np.integer)) else shape
    try:
        dims = tuple(dims)
    except TypeError:
        dims = None
    if dims is None or not dims or any(
            isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < -1
            for n in dims) or list(dims).count(-1) > 1:
        raise ValueError(f"compare: shape={shape!r} is not a shape: one or more ints >= 0, "
                         f"one of them may be -1 (--shape, e.g. --shape 1024,16)")
    dims = tuple(int(n) for n in dims)
    known = math.prod(n for n in dims if n != -1)
    if -1 in dims:
        if known == 0 or count % known:
            raise ValueError(f"compare: shape={dims} cannot hold the {count} {fmt.name} "
                             f"elements compared: {count} is not a multiple of {known} "
                             f"(--shape)")
        return tuple(count // known if n == -1 else n for n in dims)
    if known != count:
        raise ValueError(f"compare: shape={dims} holds {known} elements but the inputs hold "
                         f"{count} {fmt.name} elements (--shape)")
    return dims


def _valid_counts(valid_counts: Any, shape: tuple[int, ...] | None, fmt: Format) -> np.ndarray:
    """One count per row of ``shape`` (N, LEN), each in [0, LEN], as int64: from a .bin of
    uint32 (what ``ascjax run gather_mask --cnt-out`` writes) or an array of integers."""
    where = "compare: valid_counts"
    if shape is None or len(shape) != 2:
        given = "no row layout" if shape is None else f"shape={shape}"
        raise ValueError(f"{where} limits each row to its count, so it needs rows: give "
                         f"shape=(N, LEN) (--shape N,LEN) or 2-D arrays; got {given} "
                         f"(--valid-counts)")
    rows, length = shape
    if isinstance(valid_counts, (str, os.PathLike)):
        counts = np.asarray(read_bin(valid_counts, FORMATS["uint32_t"], arg="--valid-counts"))
    else:
        counts = np.asarray(valid_counts)
        if counts.dtype == np.bool_ or not np.issubdtype(counts.dtype, np.integer):
            raise TypeError(f"{where} has dtype {counts.dtype}; give integers (uint32, as "
                            f"--cnt-out writes them)")
    counts = counts.reshape(-1).astype(np.int64)
    if counts.size != rows:
        raise ValueError(f"{where} holds {counts.size} counts but the {fmt.name} data has "
                         f"{rows} rows of {length} (shape {tuple(shape)}); give one count per "
                         f"row (--valid-counts)")
    bad = np.flatnonzero((counts < 0) | (counts > length))
    if bad.size:
        t = int(bad[0])
        raise ValueError(f"{where}: row {t} has count {int(counts[t])}, outside [0, {length}] "
                         f"(a row holds {length} elements) (--valid-counts)")
    return counts


def _rules(rules: Any, bit_exact: bool) -> tuple[str, ...]:
    given = ("isclose",) if rules is None else ((rules,) if isinstance(rules, str) else rules)
    named = [RULE_NAMES.get(r, r) for r in given]
    bad = [r for r in named if r not in RULES]
    if bad or not named:
        raise ValueError(f"compare: rules={list(given)!r}: choose one or more of {list(RULES)} "
                         f"(or {', '.join(RULE_NAMES)})")
    return tuple(dict.fromkeys([*named, *(["bit_exact"] if bit_exact else [])]))


def tolerance(preset: str | None = None, rtol: float | None = None, atol: float | None = None,
              error_ratio: float | None = None) -> tuple[float, float, float]:
    """(rtol, atol, error ratio) of the isclose rule: ``preset`` (default ``DEFAULT_PRESET``),
    each given value replacing the preset's; checked (finite, >= 0; the ratio at most 1)."""
    if preset is not None and preset not in PRESETS:
        raise ValueError(f"compare: unknown preset {preset!r}; presets (rtol, atol, error "
                         f"ratio): {', '.join(f'{k} {v}' for k, v in PRESETS.items())}")
    base = PRESETS[preset or DEFAULT_PRESET]
    values = []
    for name, value, default, top in (("rtol", rtol, base[0], math.inf),
                                      ("atol", atol, base[1], math.inf),
                                      ("error_ratio", error_ratio, base[2], 1.0)):
        value = default if value is None else value
        number = not isinstance(value, bool) and isinstance(value, (int, float, np.floating))
        if not (number and 0 <= value <= top and math.isfinite(value)):
            valid = "a number in [0, 1]" if top == 1 else "a finite number >= 0"
            raise ValueError(f"compare: {name}={value!r} is not {valid} "
                             f"(--{name.replace('_', '-')})")
        values.append(float(value))
    return tuple(values)


def compare(actual: Any, golden: Any, *, dtype: Any, first: int = 10, bit_exact: bool = False,
            chunk: int = CHUNK_ELEMENTS, rules: Any = None, preset: str | None = None,
            rtol: float | None = None, atol: float | None = None,
            error_ratio: float | None = None, layout: str | None = None,
            shape: Any = None, allow_empty: bool = False,
            valid_counts: Any = None, count: int | None = None) -> CompareReport:
    """Compare ``actual`` (e.g. an NPU dump) with ``golden`` element by element.

    ``actual`` and ``golden`` are .bin paths (read as ``dtype``, chunk by chunk) or arrays in
    ``dtype``'s storage type (or its unsigned bits); any shape, compared flat. Every rule is
    computed; ``rules`` (a name or names: ``"isclose"``, ``"loss"``, ``"mere_mare"``,
    ``"bit_exact"``, or the command line's ``mere-mare``, ``bit-exact``, or ``"thousandth"``,
    the loss rule's former name; default ``"isclose"``) decide ``passed``; ``bit_exact=True``
    adds ``"bit_exact"``. The isclose rule's (rtol, atol, error ratio) come from ``preset``
    (``"r1e-3-a1e-3-e1e-3"``, the default, ``"r1e-3-a1e-3-e1e-4"``, ``"r1e-4-a1e-5-e1e-4"``
    or ``"r1e-6-a1e-9-e1e-4"``: the settings of the samples' scripts), each overridden by
    ``rtol``, ``atol``, ``error_ratio`` when given. ``first`` mismatches (and as many isclose
    failures) are located: with ``shape`` (ints, one of them may be -1; their product must be
    the element count) by their index tuple in that shape (``shape=(1024, 16)``: (tensor,
    element) of a file of 1024 LocalTensors of 16 elements, as ``ascjax run`` writes for the
    LocalTensor instructions);
    else in ``layout``: ``"registers"`` (index, register, block, lane: files of registers),
    ``"flat"`` (index only, for compacted outputs) or ``"shape"``; by default arrays of more
    than one dimension are located in their own shape (a 4-bit type's last axis counts bytes,
    two elements each) and anything else in registers. Files of any size are compared
    ``chunk`` elements at a time (rounded up to a multiple of 4096); the report does not depend
    on ``chunk``. ``valid_counts`` (a .bin of uint32, as ``ascjax run gather_mask --cnt-out``
    writes, or an array of ints; one per row of a 2-D ``shape`` or of 2-D arrays) compares
    only the first ``valid_counts[t]`` elements of each row t: GatherMask's dst past rsvdCnt
    is undefined on the NPU; the report counts the rest as ``excluded``. ``count`` compares
    only the first ``count`` elements of each input (a dump of a buffer padded past the
    output's length); the report says how many of each were left (``uncompared``). Raises
    ``ValueError`` when the element counts differ (without ``count``), when there are none (unless
    ``allow_empty=True``), when ``shape`` does not hold the element count, or when the valid
    counts are not one per row, each at most the row's length. Rules: the module doc.

    >>> import numpy as np, ascjax
    >>> g = np.ones(128, np.float16)
    >>> a = g.copy(); a[5] = np.nextafter(a[5], np.float16(2))
    >>> r = ascjax.compare(a, g, dtype="half")
    >>> r.mismatches, r.max_ulp, r.first_mismatches[0].lane, r.passed
    (1, 1, 5, True)
    """
    fmt = resolve(dtype, where="compare")
    chosen = _rules(rules, bit_exact)
    tol = tolerance(preset, rtol, atol, error_ratio)
    layout, shape = _layout(layout, shape, actual, golden, fmt)
    if isinstance(first, bool) or not isinstance(first, int) or first < 0:
        raise ValueError(f"compare: first={first!r} must be an int >= 0 (--first)")
    if isinstance(chunk, bool) or not isinstance(chunk, int) or chunk < 1:
        raise ValueError(f"compare: chunk={chunk!r} must be an int >= 1")
    a, g = _load(actual, fmt, "actual"), _load(golden, fmt, "golden")
    uncompared = None
    if count is not None:
        a, g, uncompared = _first_elements(a, g, count, fmt)
    if a.size != g.size:
        unit = "bytes" if fmt.packed else f"{fmt.name} elements"
        common = min(a.size, g.size) * (2 if fmt.packed else 1)
        raise ValueError(f"compare: actual has {a.size} {unit} but golden has {g.size}; the "
                         f"lengths must match (--count {common} / count={common} compares the "
                         f"first {common} elements of each, as for a dump padded past the "
                         f"output)")
    if a.size == 0 and not allow_empty:
        raise ValueError("compare: both inputs hold 0 elements; nothing was compared (give "
                         "--allow-empty / allow_empty=True if that is expected)")
    if shape is not None:
        shape = _checked_shape(shape, a.size * (2 if fmt.packed else 1), fmt)
    counts = None if valid_counts is None else _valid_counts(valid_counts, shape, fmt)
    if counts is not None and a.size and not counts.sum() and not allow_empty:
        raise ValueError("compare: every valid count is 0; nothing was compared (give "
                         "--allow-empty / allow_empty=True if that is expected)")
    tally = _Tally(fmt, first, tol, layout, shape=shape)
    tally.uncompared = uncompared
    if counts is not None:
        tally.excluded = math.prod(shape) - int(counts.sum())
    tally = _tally(a, g, tally, chunk, counts)
    named = (preset or DEFAULT_PRESET) if (rtol, atol, error_ratio) == (None,) * 3 else None
    return tally.report(chosen, named)
