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
* ``thousandth`` (rule ``loss``): the other ``verify_result.py`` rule (LOSS = 1e-3, "absolute
  and relative error both within one thousandth"; 4 of the samples' scripts), computed as the
  script computes it::

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

Mismatches are located in the file's layout: ``layout="registers"`` (index, register, 32-byte
block, lane) for files of registers, ``layout="flat"`` (index only) for compacted outputs such
as squeeze or gather results. Comparing zero elements is an error unless ``allow_empty=True``.
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

# The (rtol, atol, error ratio) settings of the samples' np.isclose scripts, named after their
# values; the default is the loosest in all three (a FAIL under it fails every common script).
PRESETS = {
    "r1e-3-a1e-3-e1e-3": (1e-3, 1e-3, 1e-3),
    "r1e-3-a1e-3-e1e-4": (1e-3, 1e-3, 1e-4),
    "r1e-4-a1e-5-e1e-4": (1e-4, 1e-5, 1e-4),
    "r1e-6-a1e-9-e1e-4": (1e-6, 1e-9, 1e-4),
}
DEFAULT_PRESET = "r1e-3-a1e-3-e1e-3"
RULES = ("isclose", "thousandth", "mere_mare", "bit_exact")
RULE_NAMES = {"loss": "thousandth", "mere-mare": "mere_mare", "bit-exact": "bit_exact"}
LAYOUTS = ("registers", "flat")


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
    wide = codes.astype(np.int64)
    mag = wide & ((1 << top) - 1)
    return np.where(wide >> top, -mag, mag)


# --- the report -----------------------------------------------------------------------------

def _json_value(x: Any) -> Any:
    """A value for JSON: numbers as numbers, nan/inf/-inf as strings (JSON has none)."""
    if isinstance(x, float) and not math.isfinite(x):
        return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    return x


def _json_ulp(x: float) -> int | None:
    return None if x == math.inf else int(x)


@dataclasses.dataclass(frozen=True)
class Mismatch:
    """One element whose bits differ: where it is, both values and bit patterns, ULPs apart.

    ``register`` = index // elements per register; ``lane`` the register lane (the byte-pair
    lane for 4-bit types); ``block`` the 32-byte DataBlock of that lane (all three ``None``
    for ``layout="flat"``). ``ulp`` is ``math.inf`` for a NaN against a number; ``close`` is
    what ``np.isclose`` said of the element under the report's isclose rule.
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

    def as_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d.update(actual=_json_value(self.actual), golden=_json_value(self.golden),
                 ulp=_json_ulp(self.ulp))
        if self.register is None:
            for key in ("register", "block", "lane"):
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

    ``mismatches`` counts elements whose bits differ (NaN pairs excluded); ``max_ulp`` is their
    largest ULP distance (``math.inf`` if a NaN meets a number); ``ulp_histogram`` maps bins
    ("0", "1", "2", "3-4", "5-8", ..., "inf") to counts of mismatches; ``passed`` is True when
    every applied criterion (the ``rules`` asked for) passes; ``layout`` is how mismatches are
    located. ``str(report)`` is a table for people; ``as_dict()`` /
    ``to_json()`` the data (JSON keys as ``ascjax compare --json`` prints them).
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

    def as_dict(self) -> dict:
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        d.pop("passed")
        d.update(max_ulp=_json_ulp(self.max_ulp),
                 first_mismatches=[m.as_dict() for m in self.first_mismatches],
                 criteria={c.name: c.as_dict() for c in self.criteria},
                 ulp_histogram=dict(self.ulp_histogram), rules=list(self.rules))
        d["pass"] = self.passed
        return d

    def to_json(self, **kwargs: Any) -> str:
        return json.dumps(self.as_dict(), **kwargs)

    def __str__(self) -> str:
        ulp = "inf" if self.max_ulp == math.inf else str(self.max_ulp)
        lines = [(f"compare {self.dtype}: {self.elements} elements, {self.mismatches} bit "
                  f"mismatches, max {ulp} ulp")]
        if self.ulp_histogram:
            lines.append("  ulp histogram: " + "  ".join(
                f"{k}: {v}" for k, v in self.ulp_histogram.items()))
        lines.append(f"  NaN pairs {self.nan_pairs} ({self.nan_payload_differs} with other "
                     f"payloads), NaN vs number {self.nan_vs_number}, inf mismatches "
                     f"{self.inf_mismatches}")
        if self.first_mismatches:
            where = (f"{'register':>8} {'block':>5} {'lane':>4} " if self.layout == "registers"
                     else "")
            lines.append(f"  first mismatches:\n    {'index':>10} {where} {'actual':>24}  "
                         f"{'golden':>24}  {'ulp':>6}  isclose")
            for m in self.first_mismatches:
                a, g = f"{m.actual!r} ({m.actual_bits})", f"{m.golden!r} ({m.golden_bits})"
                u = "inf" if m.ulp == math.inf else str(m.ulp)
                at = (f"{m.register:>8} {m.block:>5} {m.lane:>4} " if self.layout == "registers"
                      else "")
                lines.append(f"    {m.index:>10} {at} {a:>24}  {g:>24}  {u:>6}  "
                             f"{'yes' if m.close else 'no'}")
        lines.append(f"  rules (deciding: {', '.join(map(_spelled, self.rules))}):")
        for c in self.criteria:
            figures = ", ".join(f"{k} {_fmt(v)}" for k, v in c.figures.items())
            verdict = ("pass" if c.passed else "FAIL") if c.applied else \
                ("(pass)" if c.passed else "(fail)")
            lines.append(f"    {c.name:<10} {verdict:<6}  ({figures})")
            if c.name == "thousandth" and not c.passed and c.figures["nan_inf_agreeing"]:
                lines.append("               (as verify_result.py does, NaN and inf elements "
                             "fail this rule even where both files agree)")
        isclose = next(c for c in self.criteria if c.name == "isclose")
        # verify_result.py's own line, in its own format
        lines.append("  error ratio: %.4f, tolerance: %.4f" % (  # noqa: UP031
            isclose.figures["error_ratio"], isclose.figures["tolerance"]))
        lines.append("  PASS" if self.passed else "  FAIL")
        return "\n".join(lines)


def _spelled(rule: str) -> str:
    """A rule as the report names it, with the ``--rule`` name where that is another word."""
    given = next((g for g, r in RULE_NAMES.items() if r == rule), rule)
    return f"{rule} (--rule {given})" if given.replace("-", "_") != rule else rule


def _fmt(v: Any) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def _bin_label(ulp: int) -> str:
    if ulp == _INF_ULP:
        return "inf"
    if ulp <= 2:
        return str(ulp)
    hi = 1 << (ulp - 1).bit_length()
    return f"{hi // 2 + 1}-{hi}"


def _bin_key(label: str) -> float:
    return math.inf if label == "inf" else int(label.split("-")[0])


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
                 layout: str, split: bool = True):
        self.fmt, self.first, self.tolerance, self.layout = fmt, first, tolerance, layout
        self.split = split
        self.close_fail = 0
        self.n = self.mismatches = self.max_ulp = 0
        self.nan_pairs = self.nan_payload = self.nan_vs_number = self.inf_mismatches = 0
        self.hist: dict[str, int] = {}
        self.found: list[Mismatch] = []
        self.rtol_fail = self.atol_fail = self.nonfinite_agree = 0
        self.rel_sum, self.rel_max = 0.0, 0.0
        self._rel_group = np.zeros(0, np.float64)  # differing elements' rel, not yet summed

    def add(self, a: np.ndarray, g: np.ndarray, offset: int) -> None:
        self.n += a.size
        where = np.flatnonzero(a != g) if self.split else None
        if where is None or where.size * 2 > a.size:  # mostly differing: no split pays
            self._judge(a, g, np.arange(a.size) + offset)
            return
        self._judge(a[where], g[where], where + offset)
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
        self._thousandth(va, vg, count)
        # The script fails these although both sides agree (NaN pairs, equal infinities).
        differ = (a != g) & ~both_nan
        self.nonfinite_agree += count((both_nan | (inf_a & (a == g))) & ~differ)
        if positions is None:
            return
        self.nan_payload += count(both_nan & (a != g))
        self.nan_vs_number += count(one_nan)
        self.inf_mismatches += count(differ & ~one_nan & (inf_a | inf_g))
        self._relative(va, vg, both_nan, one_nan, a != g)
        where = np.flatnonzero(differ)
        self.mismatches += where.size
        if not where.size:
            return
        d = np.abs(_order(a[where], fmt) - _order(g[where], fmt))
        d = np.where(one_nan[where], _INF_ULP, d)
        self.max_ulp = math.inf if (d == _INF_ULP).any() or self.max_ulp == math.inf \
            else max(self.max_ulp, int(d.max()))
        labels, counts = np.unique(d, return_counts=True)
        for value, n in zip(labels.tolist(), counts.tolist(), strict=True):
            key = _bin_label(value)
            self.hist[key] = self.hist.get(key, 0) + n
        for k, i in enumerate(where[: max(self.first - len(self.found), 0)].tolist()):
            self.found.append(self._mismatch(int(positions[i]), a[i], g[i], int(d[k]),
                                             bool(close[i])))

    def _mismatch(self, index: int, a, g, ulp: int, close: bool) -> Mismatch:
        fmt, per = self.fmt, _elements_per_register(self.fmt)
        lane = (index % per) // (2 if fmt.packed else 1)
        at = (index // per, lane // fmt.per_block, lane) if self.layout == "registers" \
            else (None, None, None)
        digits = max(fmt.bits // 4, 1)
        kind = float if fmt.is_float else int
        va, vg = (kind(_values(np.array([x]), fmt)[0]) for x in (a, g))
        return Mismatch(index, *at, va, vg, f"0x{int(a):0{digits}x}", f"0x{int(g):0{digits}x}",
                        math.inf if ulp == _INF_ULP else ulp, close)

    def _isclose(self, a: np.ndarray, g: np.ndarray) -> np.ndarray:
        """The scripts' np.isclose, on the arrays np.fromfile would give them."""
        rtol, atol, _ = self.tolerance
        x, y = _script_arrays(a, self.fmt), _script_arrays(g, self.fmt)
        with np.errstate(all="ignore"):
            return np.isclose(x, y, rtol=rtol, atol=atol, equal_nan=True)

    def _thousandth(self, va: np.ndarray, vg: np.ndarray, count: Callable) -> None:
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
            "thousandth",
            not (self.rtol_fail > n * LOSS and self.atol_fail > n * LOSS),
            {"rtol_failures": self.rtol_fail, "atol_failures": self.atol_fail,
             "limit": n * LOSS, "nan_inf_agreeing": self.nonfinite_agree},
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
                                  "every element's bits equal (NaN pairs equal)"))
        criteria = [dataclasses.replace(c, applied=c.name in rules) for c in criteria]
        hist = dict(sorted(self.hist.items(), key=lambda kv: _bin_key(kv[0])))
        return CompareReport(name, n, self.mismatches, self.max_ulp, hist, self.nan_pairs,
                             self.nan_payload, self.nan_vs_number, self.inf_mismatches,
                             tuple(self.found), tuple(criteria),
                             all(c.passed for c in criteria if c.applied), rules, self.layout)


def _tally(a: np.ndarray, g: np.ndarray, tally: _Tally, chunk: int) -> _Tally:
    """Feed the stored units of ``a`` and ``g`` to ``tally``, ``chunk`` elements at a time."""
    scale = 2 if tally.fmt.packed else 1  # elements per stored unit
    step = -(-chunk // SUM_BLOCK) * SUM_BLOCK // scale
    for start in range(0, a.size, step):
        tally.add(_codes(np.asarray(a[start:start + step]), tally.fmt),
                  _codes(np.asarray(g[start:start + step]), tally.fmt), start * scale)
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
            error_ratio: float | None = None, layout: str = "registers",
            allow_empty: bool = False) -> CompareReport:
    """Compare ``actual`` (e.g. an NPU dump) with ``golden`` element by element.

    ``actual`` and ``golden`` are .bin paths (read as ``dtype``, chunk by chunk) or arrays in
    ``dtype``'s storage type (or its unsigned bits); any shape, compared flat. Every rule is
    computed; ``rules`` (a name or names: ``"isclose"``, ``"thousandth"``, ``"mere_mare"``,
    ``"bit_exact"``, or the command line's ``loss``, ``mere-mare``, ``bit-exact``; default
    ``"isclose"``) decide ``passed``; ``bit_exact=True`` adds ``"bit_exact"``. The isclose
    rule's (rtol, atol, error ratio) come from ``preset`` (``"r1e-3-a1e-3-e1e-3"``, the
    default, ``"r1e-3-a1e-3-e1e-4"``, ``"r1e-4-a1e-5-e1e-4"`` or ``"r1e-6-a1e-9-e1e-4"``: the
    settings of the samples' scripts), each overridden by ``rtol``, ``atol``,
    ``error_ratio`` when given. ``first`` mismatches are located, in ``layout``
    (``"registers"``: index, register, block, lane; ``"flat"``: index only, for compacted
    outputs). Files of any size are compared ``chunk`` elements at a time (rounded up to a
    multiple of 4096); the report does not depend on ``chunk``. Raises ``ValueError`` when the
    element counts differ, or when there are none (unless ``allow_empty=True``). Rules: the
    module doc.

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
    if layout not in LAYOUTS:
        raise ValueError(f"compare: layout={layout!r} is not one of {list(LAYOUTS)}")
    if isinstance(first, bool) or not isinstance(first, int) or first < 0:
        raise ValueError(f"compare: first={first!r} must be an int >= 0 (--first)")
    if isinstance(chunk, bool) or not isinstance(chunk, int) or chunk < 1:
        raise ValueError(f"compare: chunk={chunk!r} must be an int >= 1")
    a, g = _load(actual, fmt, "actual"), _load(golden, fmt, "golden")
    if a.size != g.size:
        unit = "bytes" if fmt.packed else f"{fmt.name} elements"
        raise ValueError(f"compare: actual has {a.size} {unit} but golden has {g.size}; the "
                         f"lengths must match")
    if a.size == 0 and not allow_empty:
        raise ValueError("compare: both inputs hold 0 elements; nothing was compared (give "
                         "--allow-empty / allow_empty=True if that is expected)")
    tally = _tally(a, g, _Tally(fmt, first, tol, layout), chunk)
    named = (preset or DEFAULT_PRESET) if (rtol, atol, error_ratio) == (None,) * 3 else None
    return tally.report(chosen, named)
