"""The end of a run, whatever its target: the terminal's lines, the reports, the baseline, the exit code.

``finish`` leads with the defects (``-v``: every failing case after them), then the matrix of the
scenarios whose cases do not all pass and the counts per column (with progress shown), the lines of
the baseline, the reports (each format written on its own; one that fails is one line naming the
file, and exit 1), the baseline ``--update-baseline`` writes (after the reports, so that failing
costs none) and the last line, ``N cases: ...; reports: ...``. A run that Ctrl-C or an internal error
stopped writes the reports of the cases that finished, marked incomplete (exit 130 or 1).
``rerun_line`` is the shell command that reruns one case alone, printed and in the Markdown report.
"""

from __future__ import annotations

import dataclasses
import shlex
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from conformance.console.output import Style, cut, output_width, wrapped
from conformance.console.summary import (
    adapter_lines,
    case_lines,
    defect_lines,
    deviation_lines,
    findings_lines,
    matrix_lines,
    problem_lines,
    tally_line,
    unsupported_line,
)
from conformance.pipeline.ci import RERUN_STATUSES, CiOptions
from conformance.pipeline.selection import keyword_literal
from conformance.reporting._data import run_defects
from conformance.verdicts import STATUS_ORDER, CaseResult, RunResult, Selection

if TYPE_CHECKING:
    from conformance.console.progress import Progress
    from conformance.reporting import ReportFailure

__all__ = ["INTERRUPTED", "case_text", "finish", "matrix_text", "rerun_line", "write_run_reports"]

INTERRUPTED = 130
"""The exit code of a run ended by Ctrl-C (its partial reports written)."""


def finish(
    result: RunResult,
    out: TextIO,
    *,
    progress: Progress | None,
    quiet: bool,
    report_dir: Path,
    formats: list[str],
    label: str = "",
    ci: CiOptions | None = None,
    rerun: Callable[[CaseResult], str] | None = None,
    interrupted: bool = False,
    error: str | None = None,
    command: str = "run",
    selection: Selection | None = None,
    verbose: bool = False,
) -> int:
    """End a run on the terminal: the matrix, every failing case, the reports, the summary line;
    the exit code (1 when a case fails, errors or is stale, a scenario file had problems, a report
    could not be written, ``--update-baseline`` wrote entries without a reason or could not write
    the baseline (written after the reports, so that failing costs none), or no case ran,
    unless the run was a shard that holds none). ``interrupted`` (Ctrl-C): the reports of the cases
    that finished, marked incomplete, and one line on stderr;
    exit 130. ``error``: the run stopped on an internal error; the same, exit 1. ``selection``: what
    the command line selected, recorded in the reports. The terminal leads with the defects; ``verbose``
    (``-v``): every failing case after them."""
    if selection is not None:
        result = dataclasses.replace(result, selection=selection)
    if interrupted or error is not None:
        return _finish_early(result, progress, report_dir, formats, ci=ci, rerun=rerun, command=command, error=error)
    settled = ci.settle(result) if ci is not None else None
    notes = list(settled.notes) if settled is not None else []
    result = settled.result if settled is not None else result
    width = output_width()
    style = Style.for_stream(out)
    if progress is not None:
        progress.done()
    lines: list[str] = []
    defects = run_defects(result)
    reruns = _reruns(result, rerun)
    if not quiet:
        shown = defect_lines(defects, width, style=style, reruns=reruns)
        lines += ["", *shown] if shown else []
        problems = [] if verbose else problem_lines(result, width, style=style, rerun=rerun)
        lines += ["", *problems] if problems else []
        deviated = deviation_lines(result, width, style=style)  # the model's choices, apart from the defects
        lines += ["", *deviated] if deviated else []
        lines += findings_lines(result, width, style=style, rerun=rerun) if verbose else []
    if progress is not None:
        for table in (matrix_lines(result, width, style=style), adapter_lines(result, width, style=style)):
            lines += ["", *table] if table else []
        lines += unsupported_line(result, width)
        tally = tally_line(defects)
        lines += [style.paint(cut(tally, width), "bold")] if tally else []
    for line in lines:
        print(line, file=out)
    for note in notes:
        print("\n".join(wrapped(note, width, next_indent="  ")), file=out)
    written, failed = write_run_reports(result, report_dir, formats, reruns=reruns)
    for failure in failed:
        print(f"conformance {command}: error: report {failure}", file=sys.stderr)
    unexplained = not_written = False
    if ci is not None and settled is not None and settled.update is not None:  # the reports first: they stay
        updated, error, unexplained = ci.write_update(settled)
        if error:
            print(f"conformance {command}: error: {error}", file=sys.stderr)
        for note in updated:
            print("\n".join(wrapped(note, width, next_indent="  ")), file=out)
        not_written = bool(error)
    counts = result.counts()
    summary = ", ".join(style.paint(f"{counts[s]} {s}", s) for s in STATUS_ORDER if counts[s])
    print(_last_line(f"{label}{len(result.cases)} cases: {summary or 'none'}", written, width), file=out)
    failures = counts["fail"] + counts["error"] + counts["stale"]
    nothing = not result.cases and (selection is None or selection.shard is None)  # an empty shard is no failure
    return 1 if failures or result.problems or nothing or failed or unexplained or not_written else 0


def _last_line(counts: str, written: Sequence[Path], width: int) -> str:
    """The run's last line, ``N cases: ...; reports: ...``; when the reports do not fit on it, they are
    listed on the lines before it (and counts too long for a line are wrapped)."""
    from conformance.console.output import visible_width

    reports = ", ".join(map(str, written)) or "none"
    line = f"{counts}; reports: {reports}"
    if visible_width(line) <= width:
        return line
    listed = wrapped(f"reports: {reports}", width, next_indent="  ")
    last = f"{counts}; reports: listed above"
    if visible_width(last) > width:  # a long client name: the counts wrap too, never past the width
        return "\n".join([*listed, *wrapped(counts, width, next_indent="  "), "reports: listed above"])
    return "\n".join([*listed, last])


def _finish_early(
    result: RunResult,
    progress: Progress | None,
    report_dir: Path,
    formats: list[str],
    *,
    ci: CiOptions | None,
    rerun: Callable[[CaseResult], str] | None,
    command: str,
    error: str | None,
) -> int:
    if progress is not None:
        progress.done()
    finished = len(result.cases)
    cases = f"{finished} finished case{'' if finished == 1 else 's'}"
    if error is None:
        how, code = "interrupted (Ctrl-C)", INTERRUPTED
    else:
        how, code = f"stopped by an internal error ({error}; please report it)", 1
    if not finished and error is None:  # nothing to report: the last run's reports stay
        print(
            f"conformance {command}: interrupted (Ctrl-C) before any case finished; the reports in {report_dir} "
            "were left as they were",
            file=sys.stderr,
        )
        return INTERRUPTED
    with _ignoring_interrupts():  # a second Ctrl-C does not cost the partial reports
        if ci is not None and not ci.update:  # judged by the baseline; never a baseline from half a run
            result = ci.settle(result).result
        reason = f"{how} after {cases}; the cases that did not finish are not listed"
        reruns = _reruns(result, rerun)
        written, failed = write_run_reports(result, report_dir, formats, reruns=reruns, incomplete=reason)
    for failure in failed:
        print(f"conformance {command}: error: report {failure}", file=sys.stderr)
    reports = f"partial reports (marked incomplete): {', '.join(map(str, written))}" if written else "no report"
    print(f"conformance {command}: {how} after {cases}; {reports}", file=sys.stderr)
    return code


@contextmanager
def _ignoring_interrupts() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _reruns(result: RunResult, rerun: Callable[[CaseResult], str] | None) -> dict[str, str]:
    return {
        f"{c.adapter}::{c.scenario}::{c.mode}": rerun(c)
        for c in result.cases
        if rerun is not None and c.status in RERUN_STATUSES
    }


def write_run_reports(
    result: RunResult,
    report_dir: Path,
    formats: list[str],
    *,
    reruns: dict[str, str] | None = None,
    incomplete: str | None = None,
) -> tuple[list[Path], list[ReportFailure]]:
    """Write the reports in ``formats`` (none: no report), each on its own; the paths written and the
    reports that failed (``reruns``: the command that reruns each failing case, for the Markdown
    report; ``incomplete``: why the run stopped early)."""
    if not formats:
        return [], []
    from conformance.reporting import write_each_report

    done = write_each_report(result, report_dir, formats=tuple(formats), reruns=reruns, incomplete=incomplete)
    return list(done.written), list(done.failed)


def matrix_text(result: RunResult, width: int | None = None) -> str:
    """Scenario x adapter of the scenarios whose cases do not all pass, each cell the non-streamed and
    streamed symbols, within ``width`` columns (default: the terminal's)."""
    return "\n".join(matrix_lines(result, width or output_width()))


def case_text(case: CaseResult, *, rerun: str | None = None, width: int | None = None) -> str:
    """A failing case as the terminal shows it: the case line, then each finding (and the command that
    reruns it alone), within ``width`` columns (default: the terminal's)."""
    return "\n".join(case_lines(case, width or output_width(), rerun=rerun))


def rerun_line(
    command: Sequence[str], case: CaseResult, *, scenario_paths: Sequence[str] = (), options: Sequence[str] = ()
) -> str:
    """The shell command that reruns ``case`` alone: ``conformance`` + ``command`` (the subcommand and how
    it names the target), ``--scenarios`` (the files or folders given, else the case's scenario id),
    ``options`` (those that change what runs), ``-k`` naming the case."""
    words = ["conformance", *command]
    for spec in scenario_paths or [case.scenario]:
        words += ["--scenarios", spec]
    words += options
    words += ["-k", keyword_literal(f"{case.adapter}::{case.scenario}::{case.mode}")]
    return shlex.join(words)
