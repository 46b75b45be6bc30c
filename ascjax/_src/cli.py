"""The ``ascjax`` command line. Every subcommand calls the public API; none holds logic."""

from __future__ import annotations

import argparse
import difflib
import math
import re
import sys
from collections.abc import Callable
from typing import Any

# name -> (help, add_arguments(parser), run(args) -> exit code); later issues add entries.
COMMANDS: dict[str, tuple[str, Callable, Callable]] = {}


def command(name: str, help: str):
    def register(add_arguments: Callable):
        def wrap(run: Callable):
            COMMANDS[name] = (help, add_arguments, run)
            return run
        return wrap
    return register


def _examples_args(p: argparse.ArgumentParser) -> None:
    from .examples import EXAMPLES

    p.add_argument("names", nargs="*", metavar="NAME",
                   help=f"examples to run (default: all): {', '.join(EXAMPLES)}")


@command("examples", "run the ports of the vendor pages' example programs")(_examples_args)
def _examples(args: argparse.Namespace) -> int:
    from .examples import EXAMPLES

    unknown = [name for name in args.names if name not in EXAMPLES]
    if unknown:
        print(f"ascjax examples: unknown example(s) {unknown}; choose from {list(EXAMPLES)}",
              file=sys.stderr)
        return 2
    failed = [name for name in (args.names or EXAMPLES) if not EXAMPLES[name]()]
    return 1 if failed else 0


@command("conformance", "print the conformance table (instruction x dtype, assumptions)")(
    lambda p: None)
def _conformance(args: argparse.Namespace) -> int:
    from .registry import conformance_table

    print(conformance_table())
    return 0


def _add_option(p: argparse.ArgumentParser, option) -> None:
    flag = "--" + option.name.replace("_", "-")
    text = option.help
    if not option.flag and option.default is not None and "default" not in text:
        text += f" (default {option.default})"  # every default said: strides, --tensors
    text = text.replace("%", "%%")  # argparse %-formats help (docs say "addr % 32")
    # Options left out stay out of the namespace (run_bin fills in their defaults), so that
    # run_bin can tell an option given from a default (an explicit --tensors 1 gets no note).
    if option.flag:
        p.add_argument(flag, dest=option.name, action="store_true", default=argparse.SUPPRESS,
                       help=text)
        return
    from .cli_options import ascend_type

    choices = [c for c in option.choices if c is not None] if option.choices else None
    kind = _type_among(choices) if option.type is ascend_type and choices else option.type
    p.add_argument(flag, dest=option.name, type=kind, default=argparse.SUPPRESS,
                   choices=choices, required=option.required, help=text)


def _type_among(choices: list[str]) -> Callable[[str], str]:
    """``ascend_type`` checked against ``choices`` with the word typed in the error: argparse
    would say "invalid choice: 'uint8_t'" of ``--dtype uint8``."""

    from .cli_options import ascend_type

    def parse(text: str) -> str:
        name = ascend_type(text)
        if name not in choices:
            said = repr(text) if name == text else f"{text!r} ({name})"
            raise argparse.ArgumentTypeError(f"invalid choice: {said} (choose from "
                                             f"{', '.join(choices)})")
        return name

    return parse


def _summary(doc: str | None) -> str:
    """The docstring's first two paragraphs, which say what dst holds (``asc_reduce_sum_datablock``:
    "every other lane is 0"), unwrapped, each bullet item ("* ...") a line of its own (for
    ``_LineFormatter``); its example and notes stay in Python's help."""
    paragraphs = [p for p in map(_unwrapped, (doc or "").split("\n\n")[:2])
                  if p and not p.startswith(">>>")]  # an example says nothing alone
    # nor does the head of a list the help would cut off (one whose list comes next stays)
    kept = [p for p, then in zip(paragraphs, [*paragraphs[1:], ""], strict=True)
            if not p.endswith(":") or then.startswith(_BULLETS)]
    return "".join(("\n" if p.startswith(_BULLETS) else " ") * (i > 0) + p
                   for i, p in enumerate(kept))


_BULLETS = ("* ", "- ")


def _unwrapped(paragraph: str) -> str:
    """A paragraph on one line; a list's items on one line each."""
    items: list[list[str]] = []
    for line in paragraph.split("\n"):
        words = line.split()
        if words and (not items or line.strip().startswith(_BULLETS)):
            items.append(words)
        elif words:
            items[-1] += words
    return "\n".join(" ".join(words) for words in items)


class _LineFormatter(argparse.HelpFormatter):
    """Fills each line of a description apart, so a bullet item starts a line of its own (its
    next lines indented under its text); argparse would run them into one paragraph."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        import textwrap

        return "\n".join(textwrap.fill(line, width, initial_indent=indent,
                                        subsequent_indent=indent + "  " * line.startswith(
                                            _BULLETS), break_on_hyphens=False)
                         for line in text.splitlines())


def _run_args(p: argparse.ArgumentParser) -> None:
    from .io.engine import CHUNK
    from .io.runners import RUNNERS

    p.epilog = ("INSTRUCTION is a name below or any vendor name of one (as ascjax.instruction "
                "takes it): asc_reduce_sum_datablock, AscendC::WholeReduceMax (reduce_repeat "
                "with --reduce-type max), ...")
    sub = p.add_subparsers(dest="instruction", metavar="INSTRUCTION", required=True)
    for name, runner in RUNNERS.items():
        ins = runner.instruction
        q = sub.add_parser(name, help=f"{ins.ascend}",  # `ascjax run NAME --help` says more
                           description=_summary(ins.function.__doc__),
                           formatter_class=_LineFormatter)
        groups = {"": q}  # a call form's options in a section of their own
        for option in runner.options:
            if option.group not in groups:
                groups[option.group] = q.add_argument_group(option.group)
            _add_option(groups[option.group], option)
        config = q.add_argument_group("emulation options (the ascjax.Config fields it reads)")
        for option in runner.config_options:
            _add_option(config, option)
        engine = q.add_argument_group("execution")
        engine.add_argument("--chunk", type=_chunk, default=CHUNK,
                            help=f"registers per compiled call (default {CHUNK})")
        engine.add_argument("--devices", type=_devices, default=None,
                            help="use the first N local devices (default: all)")
        engine.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                            help="progress bar on stderr (default: when stderr is a terminal)")
        engine.add_argument("--allow-empty", action="store_true",
                            help="an input of 0 registers writes empty outputs instead of "
                                 "being an error")


def _fail(name: str, error: BaseException) -> int:
    text = " ".join(str(error).split("\n"))  # one line, whatever raised it
    hint = getattr(error, "run_hint", None)  # how run read the data (runners.run_bin)
    try:
        print(f"ascjax {name}: {text.removeprefix(name + ': ')}", file=sys.stderr)
        if hint:
            print(f"  {hint}", file=sys.stderr)
    except OSError:  # stderr is gone or full: the exit code still says bad input
        _quiet(sys.stderr)
    return 2


class _Unwritable(Exception):
    """A command's own output to ``stream`` (stdout, stderr) failed: exit code 2."""

    def __init__(self, stream: Any, error: OSError):
        super().__init__(f"cannot write to {'stderr' if stream is sys.stderr else 'stdout'}: "
                         f"{error}")
        self.stream = stream


def _say(text: Any, stream: Any = None) -> None:
    """``print`` flushed; a failure other than a reader gone (``BrokenPipeError``, which the
    callers handle) raises ``_Unwritable``."""
    stream = stream or sys.stdout
    try:
        print(text, file=stream, flush=True)
    except BrokenPipeError:
        raise
    except OSError as error:
        raise _Unwritable(stream, error) from error


# Errors that mean bad input (files, sizes, options, addresses): exit code 2.
BAD_INPUT = (OSError, ValueError, TypeError, IndexError)


@command("run", "compute goldens for whole .bin files of registers (streamed, sharded)")(_run_args)
def _run(args: argparse.Namespace) -> int:
    import jax

    from .io.runners import RUNNERS, run_bin

    runner = RUNNERS[args.instruction]
    names = [o.name for o in runner.options + runner.config_options]
    progress = sys.stderr.isatty() if args.progress is None else args.progress
    try:
        devices = None
        if args.devices:
            devices = jax.local_devices()
            if args.devices > len(devices):
                raise ValueError(f"--devices {args.devices}: this process sees {len(devices)} "
                                 f"local device(s)")
            devices = devices[: args.devices]
        summary = run_bin(args.instruction, chunk=args.chunk, devices=devices,
                          progress=progress, allow_empty=args.allow_empty,
                          **{n: getattr(args, n) for n in names if hasattr(args, n)})
    except BAD_INPUT as error:
        return _fail("run", error)
    _say(summary, sys.stderr)
    return 0


def nonnegative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is not an integer >= 0")
    return value


def _number(text: str) -> float:
    """A finite number (the option's own range is checked where it is used, with its name)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def _shape(text: str) -> tuple[int, ...]:
    """``--shape 1024,16`` (one entry may be -1: ``--shape -1,16``) as a tuple of ints."""
    try:
        return tuple(int(n) for n in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a shape: ints joined by commas, "
                                         f"e.g. 1024,16 (one may be -1: --shape -1,16)") from None


def _compare_args(p: argparse.ArgumentParser) -> None:
    from .io.compare import DEFAULT_PRESET, PRESETS

    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = ("rules (every one is computed and reported; --rule picks those that decide):\n"
                "  isclose     np.isclose(actual, golden, rtol, atol, equal_nan=True) in the "
                "dtype np.fromfile\n"
                "              gives; pass when failing elements / n <= error ratio (the "
                "samples' verify_result.py)\n"
                "  loss        the samples' LOSS = 1e-3 rule (4 of their scripts)\n"
                "  mere-mare   CANN precision standard: MERE < T and MARE < 10T\n"
                "  bit-exact   every element's bits equal, NaN payloads included\n"
                "presets (rtol, atol, error ratio):\n" + "\n".join(
                    f"  {name}  {r:g}, {a:g}, {e:g}" + ("  (default)" if name == DEFAULT_PRESET
                                                        else "")
                    for name, (r, a, e) in PRESETS.items()) +
                "\nwhere mismatches are (default: registers, for files of registers):\n"
                "  --shape N,LEN   outputs of the LocalTensor instructions (`ascjax run` says\n"
                "                  \"N tensors\"; LEN is the --dst-len, or --dst's length):\n"
                "                  each mismatch as (tensor, element); --shape -1,LEN works out\n"
                "                  N; any shape of the element count, e.g. --shape 256,8\n"
                "  --layout flat   compacted outputs (squeeze, gather): the index only\n"
                "which elements are compared (default: all):\n"
                "  --valid-counts CNT.bin  with --shape N,LEN: the first CNT[t] of row t only\n"
                "                  (GatherMask's dst past rsvdCnt is undefined on the NPU;\n"
                "                  `ascjax run gather_mask --cnt-out CNT.bin` writes them)\n"
                "\nexit code: 0 pass, 1 fail, 2 bad input or a report that could not be "
                "written")
    p.add_argument("actual", help="output to check (.bin, e.g. the NPU dump; a pipe is read "
                   "to its end)")
    p.add_argument("golden", help="golden (.bin)")
    p.add_argument("--dtype", required=True, help="Ascend type of both files (e.g. half)")
    p.add_argument("--rule", action="append", dest="rules",
                   choices=("isclose", "loss", "mere-mare", "bit-exact"),
                   help="rule that decides the verdict; repeat for several (all must pass; "
                        "default isclose)")
    p.add_argument("--preset", choices=tuple(PRESETS),
                   help=f"isclose rtol, atol, error ratio (default {DEFAULT_PRESET})")
    p.add_argument("--rtol", type=_number, help="isclose rtol (overrides the preset's)")
    p.add_argument("--atol", type=_number, help="isclose atol (overrides the preset's)")
    p.add_argument("--error-ratio", type=_number,
                   help="largest share of failing elements that passes (overrides the preset's)")
    p.add_argument("--bit-exact", action="store_true", help="same as --rule bit-exact (added "
                   "to the other rules)")
    p.add_argument("--layout", choices=("registers", "flat"),
                   help="how mismatches are located: registers (index, register, block, lane; "
                        "default) or flat (index only: compacted outputs such as squeeze or "
                        "gather results)")
    p.add_argument("--shape", type=_shape, metavar="N,LEN",
                   help="locate mismatches as index tuples in this shape (comma-separated, "
                        "one may be -1: --shape -1,16), e.g. 1024,16 for a file of 1024 "
                        "LocalTensors of 16 elements")
    p.add_argument("--valid-counts", metavar="FILE",
                   help="uint32 counts, one per row (the --cnt-out file of `ascjax run "
                        "gather_mask`): compare only the first count[t] elements of row t of "
                        "--shape N,LEN; the rest (undefined on the NPU) are excluded and "
                        "counted")
    p.add_argument("--count", type=nonnegative_int, metavar="N",
                   help="compare only the first N elements of each file (a dump of a buffer "
                        "padded past the output); the report says how many were left")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--first", type=nonnegative_int, default=10,
                   help="mismatches to locate, and isclose failures (default 10)")
    p.add_argument("--allow-empty", action="store_true",
                   help="two empty inputs pass instead of being an error")


@command("compare", "compare an output .bin with a golden: the samples' verdicts, ULPs, "
         "locations")(_compare_args)
def _compare(args: argparse.Namespace) -> int:
    from .io.compare import compare

    try:
        report = compare(args.actual, args.golden, dtype=args.dtype, first=args.first,
                         bit_exact=args.bit_exact, rules=args.rules, preset=args.preset,
                         rtol=args.rtol, atol=args.atol, error_ratio=args.error_ratio,
                         layout=args.layout, shape=args.shape,
                         allow_empty=args.allow_empty, valid_counts=args.valid_counts,
                         count=args.count)
    except BAD_INPUT as error:
        return _fail("compare", error)
    code = 0 if report.passed else 1
    try:
        _say(report.to_json() if args.json else report)
    except BrokenPipeError:  # `ascjax compare ... | head`: the reader has gone, say nothing
        _quiet(sys.stdout)
    return code


def _quiet(stream: Any) -> None:
    """Point ``stream`` at /dev/null so the interpreter's final flush cannot fail again."""
    import os

    try:
        fd = stream.fileno()
    except (OSError, ValueError):  # no descriptor (a captured stream): nothing to flush there
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


def _csv(kind: Callable, arg: str, split: Callable | None = None,
         key: Callable | None = None) -> Callable:
    """argparse type of a comma-separated study option: each item through ``kind`` (its
    ValueError or TypeError, less the API's "study: <arg>: " prefix, becomes argparse's
    "argument --<option>: ..."), at least one, none given twice (``key``: what makes two the
    same; the check is ``check_study``'s, so the API and the command agree)."""
    from .study.study import check_unique

    def parse(text: str) -> list:
        items = split(text) if split else [i.strip() for i in text.split(",") if i.strip()]
        try:
            values = [kind(item) for item in items]
            if not values:
                raise ValueError(f"no value in {text!r}; give at least one")
            names = all(isinstance(v, str) for v in values)  # as typed; numbers as read
            check_unique(items if names else values, where="study", arg=arg,
                         keys=[key(v) for v in values] if key else values)
        except (ValueError, TypeError) as error:
            raise argparse.ArgumentTypeError(
                str(error).removeprefix(f"study: {arg}: ")) from None
        return values
    return parse


def _in_range(kind: type, within: Callable[[Any], bool], valid: str, noun: str) -> Callable:
    """argparse type: a ``kind`` (int or float) that is ``within`` the range written ``valid``,
    else an error naming the value and the range."""
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            what = "an integer" if kind is int else "a number"
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}; valid: {noun} in "
                                             f"{valid}") from None
        if not within(value):
            raise argparse.ArgumentTypeError(f"{text.strip()} is outside the valid range {valid}")
        return value
    return parse


def _int_in(lo: int, hi: int) -> Callable[[str], int]:
    return _in_range(int, lambda v: lo <= v <= hi, f"[{lo}, {hi}]", "an integer")


_chunk = _int_in(1, 1 << 30)  # run_bin's own limit on chunk
# Only a lower limit here: run_bin checks the count against the devices this process sees.
_devices = _in_range(int, lambda v: v >= 1, "[1, inf)", "an integer")


def _split_distributions(text: str) -> list[str]:
    """Comma-separated names; a comma inside uniform(a,b) (or the older uniform(a;b)) stays."""
    items = re.split(r",(?![^()]*\))", re.sub(r"\s+", "", text.replace(";", ",")))
    return [item for item in items if item]  # spaces dropped: "uniform(1, 2)" is uniform(1,2)


def _study_order(text: str) -> str:
    from .study.study import STUDY_ORDERS

    if text not in STUDY_ORDERS:
        raise ValueError(f"unknown order {text!r}; valid: {', '.join(STUDY_ORDERS)}")
    return text


_failure = _in_range(float, lambda v: 0 < v < 1, "(0, 1)", "a probability")


def _study_args(p: argparse.ArgumentParser) -> None:
    from ascjax.precision import (
        DEFAULT_DISTRIBUTIONS,
        DEFAULT_FAILURE,
        DEFAULT_FORMATS,
        DEFAULT_KAPPA_N,
        DEFAULT_KAPPAS,
        DEFAULT_SIZES,
        DEFAULT_TRIALS,
        DISTRIBUTIONS,
        LONG_TRIALS,
        ORDERS,
        PATTERNS,
        SUM_FORMATS,
    )

    p.add_argument("--out", required=True, help="directory for study.md, study.csv and the PNGs")
    from .study.study import (
        KAPPA_MIN_N,
        MAX_SEED,
        MAX_SIZE,
        check_distribution,
        distribution_key,
        study_format,
    )

    p.add_argument("--formats", type=_csv(study_format, "formats"), default=list(DEFAULT_FORMATS),
                   help=f"comma-separated formats, from {', '.join(SUM_FORMATS)} (the ones a "
                        f"sum is emulated in; default {','.join(DEFAULT_FORMATS)})")
    p.add_argument("--sizes", type=_csv(_int_in(1, MAX_SIZE), "sizes"),
                   default=list(DEFAULT_SIZES),
                   help=f"comma-separated n, each in [1, {MAX_SIZE}] (default "
                        f"{','.join(map(str, DEFAULT_SIZES))})")
    p.add_argument("--distributions", type=_csv(check_distribution, "distributions",
                                                 _split_distributions, key=distribution_key),
                   default=list(DEFAULT_DISTRIBUTIONS),
                   help=f"comma-separated, from {', '.join(DISTRIBUTIONS)}, uniform(a,b) or "
                        f"kappa(K) (default: all four)")
    p.add_argument("--orders", type=_csv(_study_order, "orders"), default=list(ORDERS),
                   help=f"comma-separated orders (default: all of {', '.join(ORDERS)}; also "
                        f"{', '.join(PATTERNS)})")
    p.add_argument("--trials", type=_int_in(1, MAX_SIZE), default=DEFAULT_TRIALS,
                   help=f"random inputs per cell (default {DEFAULT_TRIALS})")
    p.add_argument("--seed", type=_int_in(0, MAX_SEED), default=0,
                   help="random seed, a non-negative integer (default 0)")
    p.add_argument("--kappas", type=_kappas, default=list(DEFAULT_KAPPAS),
                   help="condition numbers sum|x|/|sum x| of the conditioning sweep "
                        f"(default {','.join(f'{k:g}' for k in DEFAULT_KAPPAS)}; 'none' skips "
                        "it)")
    p.add_argument("--kappa-n", type=_int_in(KAPPA_MIN_N, MAX_SIZE), default=None,
                   help=f"n of the conditioning sweep (default {DEFAULT_KAPPA_N})")
    p.add_argument("--failure-probability", type=_failure, default=DEFAULT_FAILURE,
                   help="probability the probabilistic bound may fail, which fixes its lambda "
                        f"(default {DEFAULT_FAILURE:g})")
    p.add_argument("--long-vectors", action="store_true",
                   help="also run the hardware's long-vector patterns in half (ReduceSum's "
                        "methods, WholeReduceSum chained, half accumulated in float) over "
                        f"n = 2^10..2^20, {LONG_TRIALS} trials: long_vectors.md/.csv/.png "
                        "(about a minute more; its sizes, trials, orders and distributions "
                        "are its own: --sizes, --trials, --orders, --formats and "
                        "--distributions shape the main study only)")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=True,
                   help="progress bar on stderr (default: on)")


def _kappas(text: str) -> list[float]:
    from .study.study import kappa_name

    return [] if text.strip().lower() == "none" else _csv(_kappa, "kappas", key=kappa_name)(text)


_kappa = _in_range(float, lambda v: 1 <= v < math.inf, "[1, inf)", "a kappa")


@command("study", "summation error study: hardware trees vs sequential vs exact, with "
         "Higham's and Higham & Mary's probabilistic bounds, error vs kappa (Markdown, CSV, "
         "PNG plots)")(_study_args)
def _study(args: argparse.Namespace) -> int:
    from ascjax.precision import (
        DEFAULT_KAPPA_N,
        check_study,
        prepare_output,
        run_long_vectors,
        run_study,
        write_study,
    )

    kappas = args.kappas
    if not kappas and args.kappa_n is not None:
        return _fail("study", ValueError("--kappa-n sets the conditioning sweep's n, and "
                                         "--kappas none skips the sweep: give one of them"))
    args.kappa_n = DEFAULT_KAPPA_N if args.kappa_n is None else args.kappa_n
    try:  # every setting and the output directory before about a minute of work
        check_study(formats=args.formats, sizes=args.sizes, distributions=args.distributions,
                    trials=args.trials, orders=args.orders, kappas=kappas,
                    kappa_n=args.kappa_n, failure=args.failure_probability, seed=args.seed)
        prepare_output(args.out)
        study = run_study(formats=args.formats, sizes=args.sizes, distributions=args.distributions,
                          trials=args.trials, seed=args.seed, orders=args.orders,
                          progress=args.progress, kappas=kappas, kappa_n=args.kappa_n,
                          failure=args.failure_probability)
        paths = write_study(study, args.out)
        if args.long_vectors:
            long = run_long_vectors(seed=args.seed, failure=args.failure_probability,
                                    progress=args.progress)
            paths += write_study(long, args.out, name="long_vectors", title=(
                "Long vectors in half: the hardware's reduction patterns over 2^10..2^20 "
                "elements"))
    except (*BAD_INPUT, MemoryError) as error:
        return _fail("study", error)
    for path in paths:
        print(path)
    return 0


def _probe_args(p: argparse.ArgumentParser) -> None:
    from .config import PRODUCTS

    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = ("plan: input files and a README per probe, manifest.json with each reading's "
                "outputs\nemulate: the emulator's outputs for a plan (what an NPU's outputs "
                "are compared with)\ndecide: which reading each probe's outputs match; exit "
                "0 every present probe matches\n        one, 1 one matches none, 2 bad input")
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    q = sub.add_parser("plan", help="write the probe files for an NPU run")
    q.add_argument("--out", required=True, help="directory for the probes and manifest.json")
    q.add_argument("--product", default="950", choices=tuple(PRODUCTS),
                   help="the Ascend product of the NPU that will run them (default 950)")
    q.add_argument("--probe", action="append", dest="names", metavar="NAME",
                   help="only this probe (repeat for several; default all)")
    q = sub.add_parser("emulate", help="write the emulator's outputs for a plan")
    q.add_argument("plan", help="the plan directory (from probe plan)")
    q.add_argument("--out", required=True, help="directory for the outputs, one folder a probe")
    q.add_argument("--config", action="append", default=[], metavar="FIELD=VALUE",
                   help="a Config reading (repeat for several), e.g. masked_lanes=skip")
    q.add_argument("--probe", action="append", dest="names", metavar="NAME",
                   help="only this probe (repeat for several; default all)")
    q = sub.add_parser("decide", help="say which reading an NPU's outputs match")
    q.add_argument("plan", help="the plan directory (from probe plan)")
    q.add_argument("outputs", help="directory of the NPU's outputs, one folder a probe")
    q.add_argument("--json", action="store_true", help="print one JSON object")


@command("probe", "probe files that settle the assumptions and reduction trees on a real NPU")(
    _probe_args)
def _probe(args: argparse.Namespace) -> int:
    import json

    from .io import probe

    try:
        if args.action == "plan":
            manifest = probe.plan(args.out, args.product, args.names)
            print(f"{len(manifest['probes'])} probes for {args.product} in {args.out} "
                  f"({len(manifest['skipped'])} not on this product, "
                  f"{len(manifest['undecidable'])} assumptions no output shows)")
            return 0
        if args.action == "emulate":
            done = probe.emulate(args.plan, args.out, probe.parse_overrides(args.config),
                                 args.names)
            for name, why in done["refused"].items():
                print(f"ascjax probe: {name}: the emulator refuses the call under these "
                      f"readings ({why}); no output written", file=sys.stderr)
            print(f"{len(done['written'])} output files in {args.out}")
            return 0
        report = probe.decide(args.plan, args.outputs)
    except BAD_INPUT as error:
        return _fail(f"probe {args.action}", error)
    print(json.dumps(report, indent=1) if args.json else probe.format_decision(report))
    return report["exit"]


class _Parser(argparse.ArgumentParser):
    """Usage errors in two lines (what is wrong, where to look), not the whole usage. No
    prefixes: ``--repeat`` is not taken for ``--repeat-time`` (a typo must not run)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message}\n(see {self.prog} --help)\n")

    def unknown_flags(self, argv: list[str]) -> list[str]:
        options = argv[:argv.index("--")] if "--" in argv else argv  # after "--": values
        return [w for w in options if w.startswith("--")
                and w.split("=")[0] not in self._option_string_actions]

    def unrecognized(self, extras: list[str]) -> None:
        """Report arguments none of this parser's options take, with the nearest option."""
        flags = [s for s in self._option_string_actions if s.startswith("--")]
        near = {word: match[0] for word in self.unknown_flags(extras)
                for match in [difflib.get_close_matches(word.split("=")[0], flags, n=1,
                                                          cutoff=0.7)]
                if match}
        hint = ("" if not near else f" (did you mean {next(iter(near.values()))}?)"
                if len(near) == 1 else
                f" (did you mean {', '.join(f'{m} for {w}' for w, m in near.items())}?)")
        self.error(f"unrecognized arguments: {' '.join(extras)}{hint}")


def _leaf(parser: argparse.ArgumentParser, argv: list[str]):
    """(the parser ``argv``'s command words lead to, its commands action or None, the word in
    that command's place): ``run block_reduce_sum ...`` -> (its own parser, None, None), whose
    options a misspelt one is matched against; ``probe write --out x`` -> (probe's parser, its
    ACTION, "write"), where the wrong word, not the options, is the error."""
    words = iter(argv)
    while (command := next((a for a in parser._actions
                            if isinstance(a, argparse._SubParsersAction)), None)):
        word = next(words, None)
        if word not in command.choices:
            return parser, command, word
        parser = command.choices[word]
    return parser, None, None


def _check_words(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.ArgumentParser:
    """Usage errors argparse would report by a symptom, by their cause: an option nothing
    takes (with the nearest), before argparse's "required" check; a command that must come
    first left out (``run --src a.bin``: argparse takes a.bin for the instruction). Returns
    the parser whose options the leftovers are matched against."""
    leaf, command, word = _leaf(parser, argv)
    if command is not None and command.required and word and word.startswith("-") \
            and word not in leaf._option_string_actions:
        choices = f" ({', '.join(command.choices)})" if len(command.choices) <= 8 else ""
        leaf.error(f"the {command.metavar}{choices} comes first: {leaf.prog} "
                   f"{command.metavar} {word} ...")
    if (command is None or word is None or word.startswith("-")) and leaf.unknown_flags(argv):
        leaf.unrecognized(leaf.unknown_flags(argv))
    return leaf


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="ascjax", description="Bit-exact JAX emulator of Ascend C vector instructions.")
    from ascjax import __version__

    parser.add_argument("--version", action="version", version=f"ascjax {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (help_text, add_arguments, _) in COMMANDS.items():
        add_arguments(sub.add_parser(name, help=help_text, description=help_text))
    return parser


def _usage_error(message: str) -> None:
    print(f"ascjax run: error: {message}", file=sys.stderr)
    raise SystemExit(2)


def _run_by_vendor_name(argv: list[str]) -> list[str]:
    """``ascjax run NAME ...`` with NAME any name ``ascjax.instruction`` accepts: the runner's
    own name, and the template keywords a vendor name fixes as their options
    (``WholeReduceMax`` -> ``reduce_repeat --reduce-type max``)."""
    if len(argv) < 2 or argv[0] != "run" or argv[1].startswith("-"):
        return argv
    from .io.runners import resolve_runner, sync_form_error

    name = argv[1]
    try:
        runner, fixed = resolve_runner(name)
    except ValueError as error:
        _usage_error(str(error))
    rest = argv[2:]
    helped = any(a in ("-h", "--help") for a in rest)
    given = {a[2:].split("=")[0].replace("-", "_") for a in rest if a.startswith("--")}
    refused = None if helped else sync_form_error(name, runner, given)
    if refused:
        _usage_error(refused)
    if fixed and helped:
        options = " ".join(f"--{k.replace('_', '-')} {v}" for k, v in fixed.items())
        print(f"{name}: `ascjax run {runner}` with {options} (given for you; leave it out)\n")
    for keyword, value in fixed.items():
        flag = "--" + keyword.replace("_", "-")
        if any(a == flag or a.startswith(flag + "=") for a in rest):
            _usage_error(f"{name} fixes {flag} {value}; leave the option out or run {runner}")
        rest += [flag, str(value)]
    return ["run", runner, *rest]


def _negative_shapes_joined(argv: list[str]) -> list[str]:
    """``--shape -1,16`` as ``--shape=-1,16``: argparse reads a value that starts with "-" and
    is not a plain negative number as the next option, and would say --shape has no value."""
    out = []
    for arg in argv:
        if out and out[-1] == "--shape" and arg[:1] == "-" and arg[1:2].isdigit():
            out[-1] = f"--shape={arg}"
        else:
            out.append(arg)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    argv = _run_by_vendor_name(list(sys.argv[1:] if argv is None else argv))
    argv = _negative_shapes_joined(argv)
    leaf = _check_words(parser, argv)
    args, extras = parser.parse_known_args(argv)  # a wrong command word ends it here
    if extras:
        leaf.unrecognized(extras)
    if args.command is None:
        parser.print_help()
        return 0
    try:
        return COMMANDS[args.command][2](args)
    except KeyboardInterrupt:  # outputs were cleaned up on the way out (binio.atomic_outputs)
        print(f"ascjax {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader of stdout has gone (`ascjax ... | head`)
        _quiet(sys.stdout)
        return 141
    except _Unwritable as error:  # a full disk, /dev/full: not the verdict of exit code 1
        _quiet(error.stream)
        return _fail(args.command, error)


if __name__ == "__main__":
    sys.exit(main())
