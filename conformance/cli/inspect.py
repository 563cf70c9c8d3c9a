"""``conformance inspect PATH...``: decode recorded cassettes with the reference adapters and show them.

The decoding and both renderings (text for people, JSON for scripts) are
``conformance.traffic.inspect``; this module parses the arguments and prints one of them.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from conformance.cli.options import add_limit_option

__all__ = ["add_command", "inspect_command"]


def add_command(commands: Any) -> None:
    """The ``inspect`` subcommand and its options."""
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
    add_limit_option(inspect)
    inspect.set_defaults(handler=inspect_command)


def inspect_command(args: argparse.Namespace) -> int:
    """Print the cassettes ``args.paths`` name, decoded; the exit code (0, 1 problems, 2 usage)."""
    from conformance.errors import UsageError
    from conformance.traffic.inspect import inspect_paths, render_json, render_text

    try:
        report = inspect_paths(args.paths)
    except UsageError as exc:
        print(f"conformance inspect: error: {exc}", file=sys.stderr)
        return 2
    print(render_json(report) if args.format == "json" else render_text(report))
    return report.exit_code
