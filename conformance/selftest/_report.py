"""The self-test's table (text and Markdown) and the ``conformance selftest`` command."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from conformance.errors import UsageError
from conformance.selftest._run import (
    Kill,
    MutantResult,
    MutantStatus,
    SelftestResult,
    replayed_scenarios,
    run_selftest,
    select_mutants,
)

__all__ = ["killed_by", "selftest_command", "summary_line", "table_markdown", "table_text"]

_COUNTED: tuple[tuple[MutantStatus, str], ...] = (
    ("killed", "killed"),
    ("gap", "known gaps"),
    ("survived", "survived"),
    ("stale", "stale"),
)
_LABEL = {"killed": "killed", "survived": "NOT KILLED", "gap": "not killed (gap)", "stale": "STALE gap"}


def killed_by(kills: Sequence[Kill], *, limit: int = 3) -> list[str]:
    """``check @ scenario [modes]`` for each distinct (check, scenario), at most ``limit`` of them
    and a ``+N more`` tail."""
    grouped: dict[tuple[str, str], list[str]] = {}
    for kill in kills:
        modes = grouped.setdefault((kill.check, kill.scenario), [])
        if kill.mode not in modes:
            modes.append(kill.mode)
    items = [f"{check} @ {scenario} [{', '.join(modes)}]" for (check, scenario), modes in grouped.items()]
    if len(items) > limit:
        items = [*items[:limit], f"+{len(items) - limit} more"]
    return items


def _verdict(result: MutantResult) -> str:
    if result.status == "killed":
        return "; ".join(killed_by(result.kills))
    if result.status == "stale":
        return f"STALE: declared gap but killed by {'; '.join(killed_by(result.kills))}"
    if result.status == "gap":
        return f"not killed (known gap): needs {result.mutant.gap}"
    return "NOT KILLED by any bundled scenario"


def summary_line(result: SelftestResult) -> str:
    counts = ", ".join(
        f"{result.count(status)} {label}" for status, label in _COUNTED if result.count(status) or status == "killed"
    )
    refs = ", ".join(result.references)
    return (
        f"{len(result.mutants)} mutants: {counts}; reference adapters ({refs}): {result.reference_cases} cases, "
        f"{len(result.false_failures)} false failures; {result.duration:.1f} s"
    )


def table_text(result: SelftestResult) -> str:
    """One row per mutant: mutant | base | bug | killed by (check @ scenario)."""
    rows = [("mutant", "base", "bug", "killed by (check @ scenario)")]
    rows += [(r.mutant.name, r.mutant.base, r.mutant.bug, _verdict(r)) for r in result.mutants]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    lines = [" | ".join(f"{cell:<{widths[i]}}" if i < 3 else cell for i, cell in enumerate(row)) for row in rows]
    lines.insert(1, "-+-".join("-" * w for w in [*widths, len(rows[0][3])]))
    for case in result.false_failures:
        bad = [v.check for v in case.checks if v.status not in ("pass", "unsupported")]
        what = ", ".join(bad) if bad else (case.message.splitlines()[0] if case.message else "")
        lines.append(f"FALSE FAILURE {case.adapter} {case.scenario} [{case.mode}]: {case.status} {what}".rstrip())
    lines.append(summary_line(result))
    return "\n".join(lines)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def table_markdown(result: SelftestResult) -> str:
    """The table as Markdown (bug = description and real-world source)."""
    lines = [
        "| mutant | base | bug | killed by (check @ scenario) |",
        "|---|---|---|---|",
    ]
    for r in result.mutants:
        bug = f"{r.mutant.description} Source: {r.mutant.source}"
        verdict = "<br>".join(killed_by(r.kills, limit=4)) if r.status == "killed" else _verdict(r)
        lines.append(f"| `{r.mutant.name}` | {r.mutant.base} | {_cell(bug)} | {_cell(verdict)} |")
    lines += ["", summary_line(result), ""]
    return "\n".join(lines)


def selftest_command(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """``conformance selftest``: 0 when every mutant is killed (or a declared gap) and the
    reference adapters have no false failure, 1 otherwise, 2 on usage errors."""
    out = out or sys.stdout
    try:
        mutants = select_mutants([p.strip() for v in args.mutant or [] for p in v.split(",") if p.strip()])
        if args.timeout <= 0:
            raise UsageError("--timeout must be positive")
        cassette_dir = Path(args.cassette_dir) if args.cassette_dir else None
        if cassette_dir is not None and not cassette_dir.is_dir():
            raise UsageError(f"--cassette-dir {cassette_dir} is not a directory")
    except UsageError as exc:
        print(f"conformance selftest: error: {exc}", file=sys.stderr)
        return 2

    def progress(result: MutantResult) -> None:
        out.write(f"{_LABEL[result.status]:<17} {result.mutant.name} ({result.duration:.1f} s)\n")
        out.flush()

    try:
        scenarios = replayed_scenarios()
    except UsageError as exc:
        print(f"conformance selftest: error: {exc}", file=sys.stderr)
        return 1
    result = run_selftest(
        mutants,
        scenarios=scenarios,
        cassette_dir=cassette_dir,
        timeout=args.timeout,
        progress=None if args.quiet else progress,
    )
    print(summary_line(result) if args.quiet else "\n" + table_text(result), file=out)
    if args.markdown:
        path = Path(args.markdown)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(table_markdown(result), encoding="utf-8")
        print(f"table written to {path}", file=out)
    return result.exit_code
