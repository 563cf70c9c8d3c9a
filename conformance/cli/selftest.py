"""``conformance selftest``: the suite's sensitivity, mutant adapters with one real bug each
(``conformance.selftest.selftest_command``; docs/selftest.md)."""

from __future__ import annotations

import argparse
from typing import Any

from conformance.cli.options import seconds

__all__ = ["add_command"]


def add_command(commands: Any) -> None:
    """The ``selftest`` subcommand and its options."""
    selftest = commands.add_parser(
        "selftest",
        help="check the suite's sensitivity: mutant adapters with one real bug each must be caught",
        description=(
            "Run every mutant adapter (a reference adapter with one real-world bug injected) on the bundled "
            "scenarios of its wire, replayed from cassettes, and the reference adapters themselves; print the table "
            "mutant | base | bug | killed by (check @ scenario). Exit 0 when every mutant is killed (or a declared "
            "gap) and the reference adapters have no false failure, 1 otherwise, 2 on usage errors."
        ),
    )
    selftest.add_argument("--mutant", action="append", metavar="NAME|GLOB|BASE", help="mutants to run (repeat)")
    selftest.add_argument("--cassette-dir", metavar="DIR", help="default: the bundled cassettes")
    selftest.add_argument(
        "--timeout", type=seconds("--timeout"), default=30.0, help="seconds per case (default: %(default)s)"
    )
    selftest.add_argument("--markdown", metavar="PATH", help="also write the table as Markdown to PATH")
    selftest.add_argument("--quiet", action="store_true", help="only the summary line")
    selftest.set_defaults(handler=_selftest)


def _selftest(args: argparse.Namespace) -> int:
    from conformance.selftest import selftest_command

    return selftest_command(args)
