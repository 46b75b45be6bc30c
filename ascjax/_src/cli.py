"""The ``ascjax`` command line. Every subcommand calls the public API; none holds logic."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

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


@command("examples", "run the ports of the seed pages' example programs")(_examples_args)
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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ascjax", description="Bit-exact JAX emulator of Ascend C vector instructions.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (help_text, add_arguments, _) in COMMANDS.items():
        add_arguments(sub.add_parser(name, help=help_text, description=help_text))
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    return COMMANDS[args.command][2](args)


if __name__ == "__main__":
    sys.exit(main())
