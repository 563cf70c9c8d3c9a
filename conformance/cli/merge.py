"""``conformance merge-reports REPORT... [--report-dir DIR] [--format ...] [--allow-partial]``: join
the JSON reports of the shards of one run (``run``/``certify --shard K/N``) into one report.

Each REPORT is a shard's ``report.json``, or the folder holding it (a CI artifact as downloaded).
The reports are read and checked here (``conformance.reporting.merge_reports`` says what is
refused, always as a usage error naming the file and what to do: exit 2), then the merged report
is written in every ``--format`` and summarised in one line. Exit 0 when every case passes (or is
unsupported/xfail/left), 1 when a case fails, errors or is stale, a shard had problems, the merged
report is incomplete (a shard was interrupted, or shards are missing with ``--allow-partial``) or
a format could not be written; 2 on usage errors.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, TextIO

from conformance.cli.options import add_limit_option

__all__ = ["add_command", "merge_command", "read_report"]


def add_command(commands: Any) -> None:
    """The ``merge-reports`` subcommand and its options."""
    merge = commands.add_parser(
        "merge-reports",
        help="join the JSON reports of the shards of one run (--shard K/N) into one report",
        description=(
            "Read the report.json of every shard (a file, or the --report-dir a shard wrote) and write one report "
            "of all their cases, with the counts, matrix and verdict recomputed, in every --format. The reports "
            "must come from the same suite (one fingerprint) and the same selection, hold no case twice, and be "
            "every shard of K/N (or, with --allow-partial, some of them: the report is marked incomplete, naming "
            "the shards missing). Reports of runs without --shard merge too when no case is in two of them. "
            "Exit 0 when every case passes (or is unsupported/xfail), 1 when any fails or errors or the merged "
            "report is incomplete, 2 on usage errors (naming the file and what to do)."
        ),
    )
    merge.add_argument("reports", nargs="+", metavar="REPORT", help="a shard's report.json, or the folder holding it")
    merge.add_argument("--report-dir", default="reports", metavar="DIR", help="where to write (default: %(default)s)")
    merge.add_argument("--format", default="json,md,html,junit", help="report formats (default: %(default)s)")
    merge.add_argument(
        "--allow-partial",
        action="store_true",
        help="merge when some shards of K/N are missing (the report is marked incomplete and names them)",
    )
    merge.add_argument("--quiet", action="store_true", help="only the summary line")
    add_limit_option(merge)
    merge.set_defaults(handler=merge_command)


def read_report(spec: str) -> tuple[str, Any]:
    """(the file's name, its parsed JSON) for a REPORT argument: a file, or a folder holding
    ``report.json``; ``UsageError`` naming it and what to give instead (bounded: ``load_report``)."""
    from conformance.errors import UsageError
    from conformance.reporting._read import load_report

    path = Path(spec)
    if path.is_dir():
        path = path / "report.json"
        if not path.is_file():
            raise UsageError(
                f"{spec}: a folder without report.json; give a shard's report.json, or the --report-dir it wrote"
            )
    try:
        return str(path), load_report(path, str(path))
    except FileNotFoundError:
        raise UsageError(f"{spec}: no such file; give the report.json each shard wrote") from None


def merge_command(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    from conformance.console.output import QuietOnBrokenPipe, Style, output_width
    from conformance.console.summary import adapter_lines, defect_lines
    from conformance.errors import UsageError
    from conformance.pipeline.selection import read_formats
    from conformance.reporting import check_report_dir, merge_reports, report_defects, report_schema, write_report_data
    from conformance.verdicts import STATUS_ORDER

    out = QuietOnBrokenPipe.around(out)
    try:
        formats = read_formats(args.format)
        reports = [read_report(spec) for spec in args.reports]
        merged = merge_reports(reports, schema=report_schema(), allow_partial=args.allow_partial)
        report_dir = Path(args.report_dir)
        check_report_dir(report_dir, formats)
    except UsageError as exc:
        print(f"conformance merge-reports: error: {exc}", file=sys.stderr)
        return 2
    for note in merged.notes:
        print(f"conformance merge-reports: note: {note}", file=sys.stderr)
    report = merged.report
    done = write_report_data(report, report_dir, formats)
    for failure in done.failed:
        print(f"conformance merge-reports: error: report {failure}", file=sys.stderr)
    summary = report["summary"]
    style = Style.for_stream(out)
    if not args.quiet:
        shown = defect_lines(report_defects(report), output_width(), style=style)
        for line in [
            *shown,
            *([""] if shown else []),
            *adapter_lines(_counts_only(report), output_width(), style=style),
        ]:
            print(line, file=out)
    counts = ", ".join(style.paint(f"{summary['statuses'][s]} {s}", s) for s in STATUS_ORDER if summary["statuses"][s])
    written = ", ".join(map(str, done.written)) or "none"
    selection = report.get("selection")
    shards = selection["merged"] if selection else []
    source = f"{len(shards)} shards" if shards else f"{len(reports)} reports"
    print(f"merged {source}: {summary['cases']} cases: {counts or 'none'}; reports: {written}", file=out)
    failures = sum(summary["statuses"][s] for s in ("fail", "error", "stale"))
    return 1 if failures or summary["problems"] or report.get("incomplete") or done.failed else 0


def _counts_only(report: Any) -> Any:
    """What ``adapter_lines`` reads of a run: its adapters' cases' statuses."""
    from conformance.verdicts import CaseResult, RunResult

    cases = tuple(
        CaseResult(adapter=c["adapter"], scenario=c["scenario"], mode=c["mode"], status=c["status"])
        for c in report["cases"]
    )
    return RunResult(suite_version=str(report["suite_version"]), adapters=(), scenarios=(), cases=cases)
