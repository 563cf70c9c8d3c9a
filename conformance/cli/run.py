"""``conformance run``: certify adapters against the scenarios, offline from cassettes.

Selection: ``--adapter NAME|pkg.module:object`` (repeatable; a user's adapter object implements
the contract of ``conformance.adapters.base.Adapter``), ``--adapters a,b``, ``--scenarios PATH|GLOB``
(a file or folder loads those files; otherwise a glob over scenario ids), ``--checks
translation,roundtrip,streaming,recovery`` (families, or check ids such as ``roundtrip.calls``),
``-k EXPR`` (pytest-style: words matched as substrings of ``adapter::scenario::mode``, combined with
``and``/``or``/``not`` and parentheses): ``conformance.pipeline.selection``.

This module parses the arguments into a ``Plan`` and an ``AdapterTarget`` and calls
``conformance.pipeline.run.run_target``, which shows the progress (``conformance.console.progress``),
the defects, the matrix and the counts (``conformance.console.summary``), writes the reports and
gives the exit code; a usage error is exit 2 before anything runs.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any, TextIO

from conformance.cli.options import add_ci_arguments, add_jobs_and_shard, add_limit_option, add_user_dirs, seconds

if TYPE_CHECKING:
    from conformance.pipeline.plan import Plan
    from conformance.pipeline.targets import AdapterTarget

__all__ = ["add_command", "run_command", "run_plan"]


def add_command(commands: Any) -> None:
    """The ``run`` subcommand and its options."""
    run = commands.add_parser(
        "run",
        help="certify adapters against the scenarios, offline from cassettes, and write reports",
        description=(
            "Run every chosen scenario against every chosen adapter (default: all bundled scenarios and all eight "
            "bundled adapters), non-streaming and streaming, replayed from cassettes with no network; print the "
            "progress and a scenario x adapter matrix, and write reports (JSON, Markdown, HTML, JUnit XML). "
            "Exit 0 when every case passes (or is unsupported/xfail), 1 when any fails or errors, 2 on usage errors "
            "(a selection of no case included), 130 on Ctrl-C (reports of the finished cases, marked incomplete)."
        ),
    )
    run.add_argument("--adapter", action="append", metavar="NAME|MODULE:OBJECT", help="adapter to certify (repeat)")
    run.add_argument("--adapters", action="append", metavar="A,B", help="comma-separated adapter names (repeatable)")
    run.add_argument("--scenarios", action="append", metavar="PATH|GLOB", help="scenario files/folders or id glob")
    run.add_argument(
        "--checks",
        metavar="CHECKS",
        help="comma-separated check families (translation,roundtrip,streaming,recovery) and check ids (e.g. "
        "roundtrip.calls: only its verdicts), as `conformance list` shows them (default: every family)",
    )
    add_user_dirs(run)
    run.add_argument("--report-dir", default="reports", metavar="DIR", help="default: %(default)s")
    run.add_argument("--format", default="json,md,html,junit", help="report formats (default: %(default)s)")
    run.add_argument("--fail-fast", action="store_true", help="stop at the first failing or erroring case")
    run.add_argument("-k", dest="keyword", metavar="EXPR", help="select cases by adapter::scenario::mode")
    run.add_argument(
        "--timeout",
        type=seconds("--timeout"),
        default=None,
        help="seconds per case (default: 30, or 300 with --exhaustive)",
    )
    run.add_argument("--exhaustive", action="store_true", help="streaming: also every 2-way cut of each stream")
    run.add_argument("--quiet", action="store_true", help="no progress or matrix, only the summary line")
    run.add_argument(
        "-v", "--verbose", action="store_true", help="after the defects, every failing case with its findings"
    )
    add_jobs_and_shard(run)
    add_ci_arguments(run)
    add_limit_option(run)
    run.set_defaults(handler=run_command)


def run_command(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """``conformance run``: the exit code (2 on a usage error, printed on stderr)."""
    from conformance.errors import UsageError
    from conformance.pipeline.run import run_target

    try:
        target, plan = run_plan(args)
    except UsageError as exc:
        print(f"conformance run: error: {exc}", file=sys.stderr)
        return 2
    return run_target(target, plan, out)


def run_plan(args: argparse.Namespace) -> tuple[AdapterTarget, Plan]:
    """The adapters and the plan ``args`` ask for (``UsageError`` on the first thing wrong)."""
    from conformance.adapters import native_adapters, prompt_adapters
    from conformance.cli.plans import ci_of, plan_of
    from conformance.errors import UsageError
    from conformance.pipeline.selection import (
        EXHAUSTIVE_TIMEOUT,
        TIMEOUT,
        compile_keyword,
        load_adapter,
        read_checks,
        read_formats,
        read_jobs,
        read_shard,
        select_scenarios,
        split_list,
    )
    from conformance.pipeline.targets import AdapterTarget

    names = [*(args.adapter or []), *split_list(args.adapters)] or [*native_adapters(), *prompt_adapters()]
    adapters = [load_adapter(n) for n in names]
    checks, formats = read_checks(args.checks), read_formats(args.format)
    select = compile_keyword(args.keyword) if args.keyword else None
    timeout = args.timeout if args.timeout is not None else (EXHAUSTIVE_TIMEOUT if args.exhaustive else TIMEOUT)
    if timeout <= 0:
        raise UsageError("--timeout must be positive")
    jobs = read_jobs(args.jobs)
    shard = read_shard(args.shard)
    scenarios, problems = select_scenarios(args.scenarios or [], args.scenarios_dir or ())
    ci = ci_of(args)  # --baseline, --last-failed (docs/ci.md)
    plan = plan_of(
        args,
        "run",
        checks=checks,
        formats=formats,
        select=select,
        timeout=timeout,
        jobs=jobs,
        shard=shard,
        scenarios=scenarios,
        problems=problems,
        ci=ci,
    )
    target = AdapterTarget(adapters=tuple(adapters), specs=dict(zip([a.name for a in adapters], names, strict=True)))
    return target, plan
