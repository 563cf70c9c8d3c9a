"""The ``conformance`` command line.

Each subcommand parses its arguments and calls one function. Heavy modules are imported inside
the subcommand, so ``conformance --help`` stays fast. Exit codes: 0 success, 1 findings or
problems, 2 usage errors.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

__all__ = ["build_parser", "main"]

_USAGE_ERROR = 2


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(
        prog="conformance",
        description="Conformance suite and recorder for LLM tool-calling adapters.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    inspect = commands.add_parser(
        "inspect",
        help="decode recorded cassettes with the reference adapters and show what they hold",
        description=(
            "Decode every interaction of the given cassettes (files, or directories searched for *.yaml and "
            "*.yml) with the adapter its URL calls for, and print requests, responses, tool calls, stream "
            "events and provider errors. Exit 0 when everything decoded, 1 when an interaction had problems "
            "or a file could not be read, 2 on usage errors."
        ),
    )
    inspect.add_argument("paths", nargs="+", metavar="PATH", help="cassette file or directory")
    inspect.add_argument(
        "--format", choices=("text", "json"), default="text", help="output format (default: %(default)s)"
    )
    inspect.set_defaults(handler=_inspect)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (argparse's own exits included)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help (0) and usage errors (2)
        return exc.code if isinstance(exc.code, int) else _USAGE_ERROR
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_usage(sys.stderr)
        print(f"{parser.prog}: error: a command is required (try `{parser.prog} --help`)", file=sys.stderr)
        return _USAGE_ERROR
    code: int = handler(args)
    return code


def _inspect(args: argparse.Namespace) -> int:
    from conformance.errors import UsageError
    from conformance.inspect import inspect_paths, render_json, render_text

    try:
        report = inspect_paths(args.paths)
    except UsageError as exc:
        print(f"conformance inspect: error: {exc}", file=sys.stderr)
        return _USAGE_ERROR
    print(render_json(report) if args.format == "json" else render_text(report))
    return report.exit_code
