"""The option groups several commands share, and the argparse types of their values.

- ``number``, ``seconds``, ``optional``, ``size``: argparse types whose errors are one line naming the
  option, the value and what it must be (exit 2);
- ``add_user_dirs`` (``--scenarios-dir``, ``--cassette-dir``, ``--allow-commands``), ``add_jobs_and_shard``
  (``--jobs``, ``--shard``), ``add_ci_arguments`` (baselines and reruns, docs/ci.md), ``add_live_options``
  (a live recording's bounds and sampling), ``add_limit_option`` (``--limit``, docs/limits.md) and
  ``apply_limits``.

Only the standard library at import: ``conformance --help`` builds every command's parser.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import Any

__all__ = [
    "PAIR_TIMEOUT_HELP",
    "add_ci_arguments",
    "add_jobs_and_shard",
    "add_limit_option",
    "add_live_options",
    "add_mcp_options",
    "add_user_dirs",
    "apply_limits",
    "number",
    "optional",
    "seconds",
    "size",
]


def add_live_options(parser: argparse.ArgumentParser) -> argparse._ArgumentGroup:
    """``--exchange-timeout`` and the sampling knobs of a live recording (``record``, ``drift``)."""
    parser.add_argument(
        "--exchange-timeout",
        type=seconds("--exchange-timeout"),
        default=120.0,
        metavar="S",
        help="seconds one HTTP exchange may take, request to last byte, connecting and the headers included: a "
        "silent server, headers sent a byte at a time or a stream that never ends fail their pair "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--max-body",
        type=number("--max-body", size, low=1, what="positive (a size in bytes; K, M, G allowed)"),
        default=64 * 1024 * 1024,
        metavar="BYTES",
        help="bytes one response body may have once decoded (gzip counted as it inflates): a larger one fails its "
        "pair (K, M, G allowed; default: 64M)",
    )
    live_knobs = parser.add_argument_group("sampling (with --live; 'none' leaves a field out)")
    unset = argparse.SUPPRESS  # not given: the recording's default (conformance.run.live.DEFAULT_SAMPLING)
    live_knobs.add_argument(
        "--temperature",
        type=optional(number("--temperature", float, low=0.0, what="a finite number, 0 or more (or none)")),
        default=unset,
        metavar="T",
        help="default: 0",
    )
    live_knobs.add_argument(
        "--seed",
        type=optional(number("--seed", int, what="a whole number (or none)")),
        default=unset,
        metavar="N",
        help="where the wire has one (default: 42)",
    )
    live_knobs.add_argument(
        "--max-tokens",
        type=optional(number("--max-tokens", int, low=1, what="positive (a whole number, or none)")),
        default=unset,
        metavar="N",
        help="when the scenario sets none (default: 256)",
    )
    return live_knobs


def add_jobs_and_shard(parser: argparse.ArgumentParser) -> None:
    """``--jobs`` and ``--shard`` (``run`` and ``certify``; docs/ci.md)."""
    parser.add_argument(
        "-j",
        "--jobs",
        type=number(
            "--jobs",
            int,
            low=1,
            said="{flag} {text}: must be at least 1 (1 runs the pairs one at a time; omit it for one per CPU)",
        ),
        metavar="N",
        help="worker processes (default: the number of CPUs; 1 runs the pairs in one worker process); "
        "the output is the same for every N",
    )
    parser.add_argument(
        "--shard",
        metavar="K/N",
        help="run only the K-th of N parts of the selected cases (1 <= K <= N; a stable split by adapter and "
        "scenario, the same on every machine): run each part on its own machine, then join the JSON reports "
        "with `conformance merge-reports` (docs/ci.md)",
    )


def add_user_dirs(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--scenarios-dir",
        action="append",
        metavar="DIR",
        help="your scenarios, added to the bundled ones (same id: yours wins; repeatable)",
    )
    parser.add_argument(
        "--cassette-dir",
        action="append",
        metavar="DIR",
        help="your cassettes (<format>/<scenario id>.yaml), searched before the bundled ones (repeatable)",
    )
    parser.add_argument(
        "--allow-commands",
        action="store_true",
        help="let scenarios that are not bundled start their tools.mcp commands (trusted scenarios only: "
        "docs/scenarios.md#trust)",
    )
    add_mcp_options(parser)


def add_mcp_options(parser: argparse.ArgumentParser) -> None:
    """``--allow-remote-mcp`` and ``--mcp-transport`` (docs/mcp.md#streamable-http)."""
    parser.add_argument(
        "--allow-remote-mcp",
        action="store_true",
        help="let scenarios reach MCP servers at tools.mcp.url addresses that are not loopback (their tool calls "
        "and headers go to that machine: docs/mcp.md#streamable-http)",
    )
    parser.add_argument(
        "--mcp-transport",
        choices=("stdio", "http"),
        default="stdio",
        help="how the bundled MCP server (conformance mcp-server) is run: stdio, or http (Streamable HTTP on "
        "127.0.0.1); scenarios with other servers run as written (default: %(default)s)",
    )


def add_ci_arguments(parser: argparse.ArgumentParser) -> None:
    """Baselines and reruns (docs/ci.md), shared by ``run`` and ``certify``."""
    ci = parser.add_argument_group("baselines and reruns (docs/ci.md)")
    ci.add_argument(
        "--baseline",
        metavar="FILE",
        help="known defects (case, their signatures, reason) that do not fail the run: a failing check whose "
        "defects are all listed is reported XFAIL with the reason; a new defect fails it, even in a listed case",
    )
    ci.add_argument(
        "--update-baseline",
        action="store_true",
        help="write this run's defect signatures to the --baseline file (default: conformance-baseline.yaml), "
        "keeping the reasons already given (a version-1 file: per check) and empty ones to fill in (until then "
        "the run exits 1 and lists them); entries of cases not run are kept",
    )
    ci.add_argument(
        "--strict-baseline",
        action="store_true",
        help="a baselined signature that no longer appears is STALE and fails the run (default: a warning)",
    )
    ci.add_argument(
        "--last-failed",
        action="store_true",
        help="rerun only the cases that failed, errored or went stale in the last run (<report-dir>/report.json)",
    )


PAIR_TIMEOUT_HELP = (
    "seconds per adapter x scenario pair; a pair past it fails and its exchange in flight is cut (default: %(default)s)"
)


def size(text: str) -> int:
    """A size in bytes (``conformance.limits.parse_size``: K, M, G allowed), imported when an option needs it."""
    from conformance.limits import parse_size

    return parse_size(text)


def number(
    flag: str,
    kind: Callable[[str], Any],
    *,
    low: float | None = None,
    high: float | None = None,
    above: float | None = None,
    what: str = "",
    said: str = "",
) -> Callable[[str], Any]:
    """An argparse type for the numeric option ``flag``: ``kind`` of the value (``int``, ``float``,
    ``size``), finite, within ``low``..``high`` and more than ``above``. Anything else (garbage, ``nan``, ``inf``, a
    value out of range) is a usage error (exit 2) whose one line names the option, the value and
    ``what`` it must be (``said``: the whole line, with ``{flag}`` and ``{text}``)."""

    def parse(text: str) -> Any:
        try:
            value = kind(text.strip())
        except (ValueError, OverflowError):
            value = None
        if (
            value is None
            or (isinstance(value, float) and not math.isfinite(value))
            or (low is not None and value < low)
            or (high is not None and value > high)
            or (above is not None and value <= above)
        ):
            raise argparse.ArgumentTypeError(
                said.format(flag=flag, text=text) if said else f"{flag} must be {what}, not {text!r}"
            )
        return value

    parse.__name__ = getattr(kind, "__name__", "value")
    return parse


def seconds(flag: str) -> Callable[[str], Any]:
    """The argparse type of a number of seconds: finite and above 0 (``--timeout nan`` is a usage error)."""
    return number(flag, float, above=0.0, what="positive (a finite number of seconds above 0)")


def optional(kind: Callable[[str], Any]) -> Callable[[str], Any]:
    """An argparse type: ``kind`` of the value, or None for ``none`` (the field is not sent)."""

    def parse(value: str) -> Any:
        return None if value.strip().lower() == "none" else kind(value)

    parse.__name__ = getattr(kind, "__name__", "value")  # argparse names it in "invalid float value"
    return parse


def add_limit_option(parser: argparse.ArgumentParser) -> None:
    """``--limit NAME=VALUE``, for the commands that read untrusted files (``conformance.limits``)."""
    parser.add_argument(
        "--limit",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="change a bound on input files, e.g. yaml_nodes=2000000 (repeatable; names and defaults: docs/limits.md)",
    )


def apply_limits(args: argparse.Namespace) -> str | None:
    """Put ``--limit`` into ``$CONFORMANCE_LIMITS`` (worker processes inherit it); the usage error, if any."""
    from conformance.errors import UsageError
    from conformance.limits import with_overrides

    try:
        with_overrides(getattr(args, "limit", []))  # checks $CONFORMANCE_LIMITS for every command
    except UsageError as exc:
        return str(exc)
    return None
