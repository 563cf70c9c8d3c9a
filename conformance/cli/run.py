"""``conformance run``: choose scenarios, adapters and checks; show progress,
the summary matrix, and write the reports.

Selection: ``--adapter NAME|pkg.module:object`` (repeatable; a user's adapter object implements
the contract of ``conformance.adapters.base.Adapter``), ``--adapters a,b``, ``--scenarios PATH|GLOB``
(a file or folder loads those files; otherwise a glob over scenario ids), ``--checks
translation,roundtrip,streaming,recovery`` (families, or check ids such as ``roundtrip.calls``:
``chosen_checks``), ``-k EXPR`` (pytest-style: words matched as substrings of
``adapter::scenario::mode``, combined with ``and``/``or``/``not`` and parentheses).

The terminal shows a live progress bar (counts and time left; rich) or, when the output is not a
terminal, one line of symbols per adapter; then the failing cases grouped by check id and
scenario, each with the command that reruns it, the scenarios that do not all pass, and the counts
per adapter, every line within the terminal's width (``conformance.console.summary``), in colour on a
terminal (``NO_COLOR`` and ``FORCE_COLOR`` respected).

Before a case runs, a selection of no case is a usage error (exit 2, with a hint; the reports of the
last run are left as they were) and so is a ``--report-dir`` that cannot be written. Ctrl-C ends
the run with one line and exit 130, after writing the reports of the cases that finished, marked
incomplete. When the reader of the output goes away (``| head``), the output goes quiet and the run
goes on to the end: the reports are its product, and the exit code is still the run's verdict.
Each report format is written on its own; one that fails is one line naming the file (exit 1).
"""

from __future__ import annotations

import argparse
import dataclasses
import fnmatch
import importlib
import math
import os
import re
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from conformance.adapters import BUILTIN, get_adapter, native_adapters, prompt_adapters
from conformance.console.output import (
    QuietOnBrokenPipe,
    Style,
    cut,
    is_terminal,
    output_width,
    shown,
    visible_width,
    wrapped,
)
from conformance.console.summary import (
    SYMBOLS,
    adapter_lines,
    case_lines,
    defect_lines,
    findings_lines,
    matrix_lines,
    problem_lines,
    tally_line,
    unsupported_line,
)
from conformance.errors import ConformanceError, UsageError
from conformance.reporting._data import run_defects
from conformance.run.fingerprint import CHECK_IDS
from conformance.scenarios.problems import closest
from conformance.verdicts import STATUS_ORDER, CaseResult, RunResult, Selection

if TYPE_CHECKING:
    from conformance.adapters.base import Adapter
    from conformance.reporting import ReportFailure
    from conformance.run.baseline import Baseline, BaselineEntry
    from conformance.run.shard import Shard
    from conformance.scenarios.values import Scenario

__all__ = [
    "CHECK_IDS",
    "EXHAUSTIVE_TIMEOUT",
    "FAMILIES",
    "INTERRUPTED",
    "LEGEND_WORDS",
    "PROGRESS_HEADING",
    "REPORT_FORMATS",
    "SETTLED_CASES",
    "SETTLED_SECONDS",
    "TIMEOUT",
    "CiOptions",
    "Finished",
    "Progress",
    "Settled",
    "bar_colour",
    "case_text",
    "check_gap_keys",
    "check_scenarios_dirs",
    "chosen_checks",
    "ci_options",
    "compile_keyword",
    "default_jobs",
    "empty_shard",
    "families_and_formats",
    "finish",
    "jobs_option",
    "keyword_literal",
    "last_failed",
    "legend_lines",
    "load_adapter",
    "matrix_text",
    "nothing_selected",
    "record_args",
    "rerun_command",
    "run_command",
    "select_scenarios",
    "selection_of",
    "shard_option",
    "split_list",
    "time_left",
    "time_left_text",
    "write_run_reports",
]

REPORT_FORMATS = ("json", "md", "html", "junit")
TIMEOUT = 30.0
"""Seconds per case by default."""
EXHAUSTIVE_TIMEOUT = 300.0
"""Seconds per case with ``--exhaustive``: every 2-way cut of a stream decodes it again, so a case
costs the square of its streams' length (the longest bundled case takes ~30 s on a busy core)."""
FAMILIES = ("translation", "roundtrip", "streaming", "recovery", "client")
"""The check families (``conformance.checks.FAMILIES``, named here so ``--help`` stays fast); ``client``
judges black-box clients (``conformance certify``) and gives no verdict on an adapter."""
INTERRUPTED = 130
"""The exit code of a run ended by Ctrl-C (its partial reports written)."""
_SYMBOL = SYMBOLS


def load_adapter(spec: str) -> Adapter:
    """A built-in adapter name, or ``pkg.module:object`` naming an object with the adapter contract.

    Any object with the contract's attributes will do: it is checked (``contract_problems``) and
    turned into an ``Adapter`` value, so a wrong declaration is a usage error here (exit 2), naming
    the field and the valid values, never an ERROR in every case later."""
    from conformance.adapters.base import Adapter, contract_problems

    if ":" not in spec:
        if spec not in BUILTIN:
            hint = closest(spec, sorted(BUILTIN))
            raise UsageError(
                f"unknown adapter {spec!r}{' (' + hint + ')' if hint else ''}; use one of "
                f"{', '.join(sorted(BUILTIN))} or pkg.module:object"
            )
        return get_adapter(spec)
    module_name, _, attribute = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise UsageError(f"--adapter {spec}: cannot import {module_name!r} ({exc}); is it on PYTHONPATH?") from exc
    except ConformanceError as exc:  # an Adapter(...) at import time that breaks the contract
        raise UsageError(f"--adapter {spec}: importing {module_name} failed: {exc}") from exc
    obj: Any = module
    for part in attribute.split("."):
        if not hasattr(obj, part):
            raise UsageError(f"--adapter {spec}: {module_name} has no attribute {attribute!r}")
        obj = getattr(obj, part)
    if isinstance(obj, Adapter):
        adapter = obj
    else:
        problems = contract_problems(obj)
        if problems:
            raise UsageError(f"--adapter {spec}: " + "; ".join(problems) + " (see docs/adapters.md)")
        declared = {f.name: getattr(obj, f.name) for f in dataclasses.fields(Adapter) if hasattr(obj, f.name)}
        adapter = Adapter(**{**declared, "capabilities": frozenset(obj.capabilities)})
    check_gap_keys(adapter.known_gaps, f"--adapter {spec}")
    return adapter


def check_gap_keys(gaps: Mapping[str, str], where: str) -> None:
    """Every known-gap key (``check``, ``check@glob``, for a client also ``wire:check[@glob]``) names a
    check id; ``UsageError`` naming ``where`` and the valid ids when one does not."""
    valid = [check for ids in CHECK_IDS.values() for check in ids]
    for key in gaps:
        check = key.partition("@")[0]
        check = check.partition(":")[2] or check
        if check not in valid:
            raise UsageError(f"{where}: known gap {key!r} names no check (valid check ids: {', '.join(valid)})")


def families_and_formats(args: argparse.Namespace) -> tuple[tuple[str, ...], list[str]]:
    """``--checks`` (check families and check ids, as asked; default: every family) and ``--format``
    read and checked: ``UsageError`` names an unknown one with the nearest valid name, and where the
    valid ones are."""
    checks = tuple(dict.fromkeys(split_list([args.checks]))) if args.checks else tuple(FAMILIES)
    ids = [check for family in CHECK_IDS.values() for check in family]
    for name in checks:
        if name not in FAMILIES and name not in ids:
            hint = closest(name, [*FAMILIES, *ids])
            raise UsageError(
                f"unknown check {name!r}{': ' + hint if hint else ''} (--checks takes the families "
                f"{', '.join(FAMILIES)} and their check ids, which `conformance list` shows)"
            )
    formats = split_list([args.format])
    bad = [f for f in formats if f not in REPORT_FORMATS]
    if bad:
        raise UsageError(f"unknown report format {', '.join(bad)} (known: {', '.join(REPORT_FORMATS)})")
    return checks, formats


def chosen_checks(checks: Sequence[str]) -> tuple[tuple[str, ...], frozenset[str] | None]:
    """What ``--checks`` (families and check ids, checked by ``families_and_formats``) runs: the families,
    in the order asked, and the check ids whose verdicts are kept (None: every verdict of those
    families). A family named runs whole; a check id runs its family and keeps that check's verdicts
    alone, so a case is judged by the chosen checks only."""
    family_of = {check: family for family, ids in CHECK_IDS.items() for check in ids}
    families = tuple(dict.fromkeys(name if name in FAMILIES else family_of[name] for name in checks))
    if all(name in FAMILIES for name in checks):
        return families, None
    kept = {check for name in checks for check in (CHECK_IDS[name] if name in FAMILIES else (name,))}
    return families, frozenset(kept)


_TOKEN = re.compile(r'\s*("(?:[^"\\]|\\.)*"|\(|\)|and\b|or\b|not\b|[^\s()]+)')
"""``-k``'s words: a double-quoted literal (``\\"`` and ``\\\\`` inside), a parenthesis, an operator, or a run
of other characters."""
_LITERAL_NEEDED = re.compile(r'[\s()"\\]|^(and|or|not)$')


def keyword_literal(text: str) -> str:
    """``text`` as one ``-k`` word that matches it as a substring: as it is, or double-quoted when it holds
    a space, a parenthesis, a quote or a backslash, or is an operator (a scenario id from a user's file
    may)."""
    if not _LITERAL_NEEDED.search(text):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def compile_keyword(expression: str) -> Callable[[str, str, str], bool]:
    """``-k``: a pytest-style expression over ``adapter::scenario::mode`` (a word in double quotes is
    matched as it is: ``keyword_literal``)."""
    tokens = _TOKEN.findall(expression)
    if not tokens:
        raise UsageError("-k needs an expression")
    words: list[str] = []
    parts: list[str] = []
    for token in tokens:
        if token in ("(", ")", "and", "or", "not"):
            parts.append(token)
        else:
            quoted = len(token) >= 2 and token[0] == token[-1] == '"'
            words.append(re.sub(r"\\(.)", r"\1", token[1:-1]) if quoted else token)
            parts.append(f"(w[{len(words) - 1}] in name)")
    code = " ".join(parts)
    try:
        compiled = compile(code, "<-k>", "eval")
        eval(compiled, {"__builtins__": {}}, {"w": words, "name": ""})
    except SyntaxError as exc:
        raise UsageError(f"-k {expression!r}: not a valid expression") from exc

    def select(adapter: str, scenario: str, mode: str) -> bool:
        return bool(eval(compiled, {"__builtins__": {}}, {"w": words, "name": f"{adapter}::{scenario}::{mode}"}))

    return select


def default_jobs() -> int:
    """``--jobs`` when not given: the CPUs this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def split_list(values: Sequence[str] | None) -> list[str]:
    """``--opt a,b --opt c`` -> ``[a, b, c]``."""
    return [v.strip() for value in values or [] for v in value.split(",") if v.strip()]


def select_scenarios(specs: list[str], dirs: Sequence[str] = ()) -> tuple[list[Scenario], list[str]]:
    """The scenarios ``--scenarios`` names (files, folders or id globs; none: all bundled, plus
    those of ``--scenarios-dir``, which win by id), and the problems of the files that could not be
    loaded."""
    from conformance.scenarios.loader import load_scenarios, load_with_user_dirs

    check_scenarios_dirs(dirs)
    paths = [s for s in specs if Path(s).exists()]
    globs = [s for s in specs if not Path(s).exists()]
    loaded = load_scenarios(paths) if paths else load_with_user_dirs(dirs)
    scenarios = list(loaded.scenarios)
    if globs:
        scenarios = [s for s in scenarios if any(fnmatch.fnmatchcase(s.id, g) or s.id == g for g in globs)]
        if not scenarios:
            ids = [s.id for s in loaded.scenarios]
            hints = [f"{g}: {h}" for g in globs if (h := closest(g, ids))]
            near = f" ({'; '.join(hints)})" if hints else ""
            raise UsageError(f"no scenario id matches {', '.join(globs)}{near} (see `conformance list`)")
    return scenarios, [str(p) for p in loaded.problems]


def check_scenarios_dirs(dirs: Sequence[str]) -> None:
    """Every ``--scenarios-dir`` is a folder (``UsageError`` naming the one that is missing or a file)."""
    for folder in dirs:
        path = Path(folder)
        if not path.exists():
            raise UsageError(f"--scenarios-dir {folder}: no such folder (give the folder holding your scenario files)")
        if not path.is_dir():
            raise UsageError(f"--scenarios-dir {folder}: it is a file, not a folder (give the folder that holds it)")


def record_args(args: argparse.Namespace) -> tuple[str, ...]:
    """What a ``conformance record`` line needs to find the user's scenarios and write where the
    run reads the user's cassettes."""
    found: list[str] = []
    for folder in args.scenarios_dir or ():
        found += ["--scenarios-dir", folder]
    if args.cassette_dir:
        found += ["--cassette-dir", args.cassette_dir[0]]
    if getattr(args, "allow_commands", False):
        found.append("--allow-commands")
    return tuple(found)


def run_command(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = QuietOnBrokenPipe.around(out or sys.stdout)
    from conformance.reporting import check_report_dir
    from conformance.run.runner import RunOptions, chosen_pairs, pair_modes, run_result, run_suite

    try:
        names = [*(args.adapter or []), *split_list(args.adapters)] or [
            *native_adapters(),
            *prompt_adapters(),
        ]
        adapters = [load_adapter(n) for n in names]
        checks, formats = families_and_formats(args)
        families, kept = chosen_checks(checks)
        select = compile_keyword(args.keyword) if args.keyword else None
        timeout = args.timeout if args.timeout is not None else (EXHAUSTIVE_TIMEOUT if args.exhaustive else TIMEOUT)
        if timeout <= 0:
            raise UsageError("--timeout must be positive")
        jobs = jobs_option(args)
        shard = shard_option(args)
        scenarios, problems = select_scenarios(args.scenarios or [], args.scenarios_dir or ())
        ci = ci_options(args)  # --baseline, --last-failed (docs/ci.md)
    except UsageError as exc:
        print(f"conformance run: error: {exc}", file=sys.stderr)
        return 2
    if ci.nothing_to_rerun:
        print(ci.nothing_to_rerun, file=out)
        return 0
    select, scenarios = ci.narrow(select, scenarios)
    specs = dict(zip([a.name for a in adapters], names, strict=True))
    for problem in problems:
        print(problem, file=sys.stderr)
    options = RunOptions(
        user_cassette_dirs=tuple(Path(d) for d in args.cassette_dir or ()),
        record_args=record_args(args),
        families=families,
        checks=kept,
        timeout=timeout,
        fail_fast=args.fail_fast,
        exhaustive=args.exhaustive,
        select=select,
        jobs=jobs,
        shard=shard,
    )
    report_dir = Path(args.report_dir)
    try:
        if not problems and not any(pair_modes(s, a, options) for a in adapters for s in scenarios):
            raise UsageError(nothing_selected(args, [a.name for a in adapters], scenarios))
        check_report_dir(report_dir, formats)
    except UsageError as exc:
        print(f"conformance run: error: {exc}", file=sys.stderr)
        return 2
    total = sum(len(pair_modes(s, a, options)) for a, s in chosen_pairs(adapters, scenarios, options))
    if not total and shard is not None:
        print(empty_shard(shard), file=out)
    progress = None if args.quiet else Progress(out, judge=ci.judge, total=total)
    finished = Finished(progress)
    result = finished.run(
        lambda: run_suite(scenarios, adapters, options, progress=finished, problems=problems),
        allow_commands=args.allow_commands,
        partial=lambda: run_result(adapters, scenarios, finished.cases, problems=problems),
    )
    return finish(
        result,
        out,
        progress=progress,
        quiet=args.quiet,
        verbose=args.verbose,
        report_dir=report_dir,
        formats=formats,
        ci=ci,
        rerun=lambda case: rerun_command(args, case, ["run", "--adapter", specs.get(case.adapter, case.adapter)]),
        interrupted=finished.interrupted,
        error=finished.error,
        selection=selection_of(args, "run", checks, shard),
    )


def jobs_option(args: argparse.Namespace) -> int:
    """``--jobs`` (default: ``default_jobs()``); ``UsageError`` below 1."""
    jobs = default_jobs() if getattr(args, "jobs", None) is None else int(args.jobs)
    if jobs < 1:
        raise UsageError(f"--jobs {jobs}: must be at least 1 (1 runs the pairs one at a time; omit it for one per CPU)")
    return jobs


def shard_option(args: argparse.Namespace) -> Shard | None:
    """``--shard K/N`` read (None when not given); ``UsageError`` naming the flag and the form."""
    from conformance.run.shard import parse_shard

    text = getattr(args, "shard", None)
    return None if text is None else parse_shard(text)


def empty_shard(shard: Shard) -> str:
    """What a shard that holds none of the selected cases says (its report is empty; exit 0)."""
    return (
        f"--shard {shard}: this shard holds none of the selected cases (there are fewer pairs of adapter and "
        f"scenario than shards); its report is empty, and `conformance merge-reports` takes it with the others"
    )


def selection_of(args: argparse.Namespace, command: str, checks: Sequence[str], shard: Shard | None) -> Selection:
    """What the command line selected, for the report (``selection``; ``checks``: the families and check
    ids of ``--checks``, as asked)."""
    wires = getattr(args, "wires", None)
    return Selection(
        command=command,
        scenarios=tuple(getattr(args, "scenarios", None) or ()),
        keyword=getattr(args, "keyword", None),
        checks=tuple(checks),
        wires=tuple(split_list([wires])) if wires is not None else None,
        model=getattr(args, "model", None),
        shard=None if shard is None else str(shard),
        note=getattr(args, "note", None),
    )


def nothing_selected(
    args: argparse.Namespace,
    columns: Sequence[str],
    scenarios: Sequence[Scenario],
    *,
    noun: str = "adapters",
    known: str = "",
) -> str:
    """Why a run selects no case, and what shows the names to select from (for a usage error;
    ``known``: more names to choose from, e.g. the wires a client declares)."""
    chosen = [f"-k {args.keyword!r}"] if getattr(args, "keyword", None) else []
    chosen += [f"--scenarios {spec}" for spec in getattr(args, "scenarios", None) or ()]
    if getattr(args, "wires", None) is not None:
        chosen.append(f"--wires {args.wires!r}")
    if getattr(args, "last_failed", False):
        chosen.append("--last-failed")
    example = f"{columns[0]}::{scenarios[0].id}::non_stream" if columns and scenarios else "adapter::scenario::mode"
    return (
        f"{' with '.join(chosen) or 'this selection'} selects no case of {len(scenarios)} scenarios x "
        f"{len(columns)} {noun} (a case is named like {example}; {known + '; ' if known else ''}`conformance list` "
        f"shows the scenario ids and adapters); nothing ran and the reports in {args.report_dir} were left as they were"
    )


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
        if rerun is not None and c.status in ("fail", "error", "stale")
    }


class Finished:
    """The progress callback of a run: keeps every case that finished, in order (the reports of a run
    that Ctrl-C ended come from here), and passes it on to ``show``.

    ``watching()`` notes every Ctrl-C while the run goes: Python drops a ``KeyboardInterrupt``
    raised where it cannot propagate (in an at-fork hook while a worker starts, in a finaliser) and
    prints it as "Exception ignored"; such a Ctrl-C still ends the run, at the next finished case,
    and is not printed."""

    def __init__(self, show: Callable[[CaseResult], None] | None = None) -> None:
        self.cases: list[CaseResult] = []
        self.show = show
        self.interrupted = False
        self.error: str | None = None
        """Set by ``crashed()``: the run stopped on an internal error (type and message)."""

    @property
    def early(self) -> bool:
        """Did the run stop before its end (Ctrl-C, an internal error)?"""
        return self.interrupted or self.error is not None

    def crashed(self) -> None:
        """Note the exception being handled as the end of the run, and print its traceback (a bug to report)."""
        kind, exc, _ = sys.exc_info()
        traceback.print_exc(file=sys.stderr)
        self.error = f"{kind.__name__ if kind else 'error'}: {exc}"

    def run(
        self, work: Callable[[], RunResult], *, allow_commands: bool, partial: Callable[[], RunResult]
    ) -> RunResult:
        """``work()`` under the trust policy of scenario commands (docs/scenarios.md#trust), noting a
        Ctrl-C or an internal error here; its result, or ``partial()`` (the cases that finished) when
        the run stopped early, with the commands the run started."""
        from conformance.mcp_bridge.trust import command_policy

        result: RunResult | None = None
        with command_policy(allow=allow_commands) as started:
            try:
                with self.watching():
                    result = work()
            except KeyboardInterrupt:
                self.interrupted = True
            except Exception:  # a bug of ours: the cases that finished are still reported
                self.crashed()
        if result is None or self.early:
            result = partial()
        return dataclasses.replace(result, commands=tuple(c.to_json() for c in started.commands()))

    def __call__(self, case: CaseResult) -> None:
        self.cases.append(case)
        if self.show is not None:
            self.show(case)
        if self.interrupted:
            raise KeyboardInterrupt

    @contextmanager
    def watching(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread() or (
            signal.getsignal(signal.SIGINT) is not signal.default_int_handler  # ignored (nohup, a test): as it is
        ):
            yield
            return
        previous_hook = sys.unraisablehook

        def interrupt(signum: int, frame: object) -> None:
            self.interrupted = True
            raise KeyboardInterrupt

        def hook(unraisable: Any) -> None:
            if not isinstance(unraisable.exc_value, KeyboardInterrupt):  # a dropped Ctrl-C is noted above
                previous_hook(unraisable)

        signal.signal(signal.SIGINT, interrupt)
        sys.unraisablehook = hook
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, signal.default_int_handler)
            sys.unraisablehook = previous_hook


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


PROGRESS_HEADING = "Progress: a symbol per case as it finishes, a line per adapter"
LEGEND_WORDS = {
    "pass": "pass",
    "fail": "fail",
    "error": "error",
    "unsupported": "unsupported",
    "xfail": "xfail",
    "left": "left to the caller",
    "stale": "stale",
}
"""What each progress symbol (``SYMBOLS``) stands for, in the order of the legend."""


def legend_lines(width: int, style: Style | None = None) -> list[str]:
    """The progress symbols' legend (``. pass  F fail ...``) in lines of at most ``width`` cells, never
    breaking an entry."""
    style = style or Style()
    lines: list[str] = []
    line, used = "  ", 2
    for status, words in LEGEND_WORDS.items():
        entry, size = f"{style.paint(_SYMBOL[status], status)} {words}", len(words) + 2
        if used > 2 and used + 2 + size > width:
            lines.append(line)
            line, used = "  ", 2
        line, used = (f"{line}  {entry}", used + 2 + size) if used > 2 else (line + entry, used + size)
    return [*lines, line]


class Progress:
    """The run's progress. On a terminal: a live bar with the cases done, the counts by status and the
    time left (rich, imported only then), gone when the run ends. Elsewhere: a heading and the legend
    of the symbols (once per run), then one line per adapter, one symbol per case (``.`` pass, ``F``
    fail, ``E`` error, ...), wrapped at the width. Names are shown as ``shown`` escapes them."""

    def __init__(
        self,
        out: TextIO,
        judge: Callable[[CaseResult], CaseResult] | None = None,
        *,
        total: int | None = None,
        live: bool | None = None,
    ) -> None:
        self.out = out
        self.adapter: str | None = None
        self.judge = judge  # how a case is shown (--baseline: a baselined failure is x)
        self.total = total
        self.width = output_width()
        self.style = Style.for_stream(out)
        self.column = 0
        self.indent = 0
        self.headed = False
        self.counts: dict[str, int] = {}
        wanted = (
            live if live is not None else is_terminal(out) and os.environ.get("TERM", "") not in ("dumb", "unknown")
        )
        self.bar: Any = _LiveBar(out, total) if wanted else None

    def __call__(self, case: CaseResult) -> None:
        if self.judge is not None:
            case = self.judge(case)
        self.counts[case.status] = self.counts.get(case.status, 0) + 1
        if self.bar is not None:
            self.bar.advance(case.adapter, self.counts)
            return
        if not self.headed:
            self.headed = True
            heading = [self.style.paint(line, "bold") for line in wrapped(PROGRESS_HEADING, self.width)]
            self.out.write("\n".join([*heading, *legend_lines(self.width, self.style)]) + "\n")
        if case.adapter != self.adapter:
            if self.adapter is not None:
                self.out.write("\n")
            self.adapter = case.adapter
            name = shown(case.adapter)
            prefix = name + " " * max(1, 19 - visible_width(name))
            size = visible_width(prefix)
            self.indent = size if size <= self.width // 2 else 2
            if size < self.width:
                self.out.write(prefix)
                self.column = size
            else:
                self.out.write(cut(name, self.width) + "\n" + " " * self.indent)
                self.column = self.indent
        if self.column >= self.width:
            self.out.write("\n" + " " * self.indent)
            self.column = self.indent
        self.out.write(self.style.paint(_SYMBOL[case.status], case.status))
        self.column += 1
        self.out.flush()

    def done(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None
        elif self.adapter is not None:
            self.out.write("\n")
            self.adapter = None


SETTLED_CASES = 3
SETTLED_SECONDS = 1.0
"""The live bar shows no time left before this many cases and seconds: the first cases say little
of the rate of the run (they start its workers)."""


def time_left(done: int, total: int | None, elapsed: float) -> float | None:
    """The seconds a run has left after ``done`` of ``total`` cases in ``elapsed`` seconds, at the rate
    of the whole run so far (not of the last cases, which finish in bursts when the cases run in
    parallel: rich's own estimate then jumps from seconds to minutes and back); None before
    ``SETTLED_CASES`` cases and ``SETTLED_SECONDS``, or without a total."""
    if total is None or done < SETTLED_CASES or elapsed < SETTLED_SECONDS:
        return None
    return max(0, total - done) * elapsed / done


def time_left_text(seconds: float | None) -> str:
    """``time_left`` as the bar shows it: ``12 s left``, ``3 min left``, ``1 h 5 min left`` (nothing: none yet)."""
    if seconds is None:
        return ""
    whole = math.ceil(seconds)
    if whole < 60:
        return f"{whole} s left"
    minutes = math.ceil(whole / 60)
    return f"{minutes} min left" if minutes < 60 else f"{minutes // 60} h {minutes % 60} min left"


_BAR_COLOURS = {"pass": "green", "fail": "bold red", "error": "bold magenta", "stale": "yellow", "xfail": "yellow"}


def bar_colour(counts: Mapping[str, int]) -> str:
    """The live bar's colour: the colour of the first of fail, error and stale the run has so far; green
    without one (rich's own bar is red-pink whatever the cases did)."""
    return next((_BAR_COLOURS[s] for s in ("fail", "error", "stale") if counts.get(s)), "green")


class _LiveBar:
    """rich's progress bar on ``out``: the adapter running, a bar (its colour: ``bar_colour``), cases done
    of the total, the counts by status, the time left (``time_left``)."""

    def __init__(self, out: TextIO, total: int | None) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, ProgressColumn, Task, TextColumn
        from rich.progress import Progress as RichProgress
        from rich.text import Text

        class TimeLeft(ProgressColumn):
            def render(self, task: Task) -> Text:
                left = time_left(
                    int(task.completed), None if task.total is None else int(task.total), task.elapsed or 0
                )
                return Text(time_left_text(left), style="progress.remaining")

        console = Console(file=out, force_terminal=True, width=output_width())
        colour = bar_colour({})
        self.bar = BarColumn(bar_width=None, complete_style=colour, finished_style=colour, pulse_style=colour)
        self.progress = RichProgress(
            TextColumn("{task.description}"),
            self.bar,
            MofNCompleteColumn(),
            TextColumn("{task.fields[counts]}"),
            TimeLeft(),
            console=console,
            transient=True,
            expand=True,
        )
        self.task = self.progress.add_task("cases", total=total, counts="")
        self.progress.start()

    def advance(self, adapter: str, counts: Mapping[str, int]) -> None:
        from rich.markup import escape

        text = " ".join(f"[{_BAR_COLOURS.get(s, 'dim')}]{counts[s]} {s}[/]" for s in STATUS_ORDER if counts.get(s))
        colour = bar_colour(counts)
        self.bar.complete_style = self.bar.finished_style = self.bar.pulse_style = colour
        self.progress.update(self.task, advance=1, description=escape(cut(shown(adapter), 18)), counts=text)

    def stop(self) -> None:
        self.progress.stop()


def matrix_text(result: RunResult, width: int | None = None) -> str:
    """Scenario x adapter of the scenarios whose cases do not all pass, each cell the non-streamed and
    streamed symbols, within ``width`` columns (default: the terminal's)."""
    return "\n".join(matrix_lines(result, width or output_width()))


def case_text(case: CaseResult, *, rerun: str | None = None, width: int | None = None) -> str:
    """A failing case as the terminal shows it: the case line, then each finding (and the command that
    reruns it alone), within ``width`` columns (default: the terminal's)."""
    return "\n".join(case_lines(case, width or output_width(), rerun=rerun))


# -- baselines, --last-failed and rerun commands (docs/ci.md) ----------------------------------------------

DEFAULT_BASELINE = "conformance-baseline.yaml"
_RERUN = ("fail", "error", "stale")


@dataclass(frozen=True, kw_only=True)
class CiOptions:
    """What ``--baseline``, ``--update-baseline``, ``--strict-baseline`` and ``--last-failed`` asked for."""

    baseline_path: Path | None = None
    baseline: Baseline | None = None
    update: bool = False
    strict: bool = False
    last_failed: frozenset[tuple[str, str, str]] | None = None
    nothing_to_rerun: str = ""
    """Set when ``--last-failed`` found a report without failures: the message, and no run."""

    def narrow(
        self, select: Callable[[str, str, str], bool] | None, scenarios: list[Scenario]
    ) -> tuple[Callable[[str, str, str], bool] | None, list[Scenario]]:
        """``-k`` and the scenarios, narrowed to the cases that failed last time (``--last-failed``)."""
        wanted = self.last_failed
        if wanted is None:
            return select, scenarios
        ids = {scenario for _, scenario, _ in wanted}

        def again(adapter: str, scenario: str, mode: str) -> bool:
            return (adapter, scenario, mode) in wanted and (select is None or select(adapter, scenario, mode))

        return again, [s for s in scenarios if s.id in ids]

    def judge(self, case: CaseResult) -> CaseResult:
        """A case as the baseline judges it (for the progress line; ``--update-baseline``: as it is)."""
        from conformance.run.baseline import baseline_case

        if self.baseline is None or self.update:
            return case
        return baseline_case(case, self.baseline, strict=self.strict)

    def settle(self, result: RunResult) -> Settled:
        """The run judged against the baseline (under ``--update-baseline``: against the baseline it is
        about to write, which ``write_update`` writes once the reports are written) and the lines to
        print before the reports."""
        from conformance.run.baseline import Baseline, apply_baseline, new_defects_lines, updated_entries

        if self.baseline_path is None:
            return Settled(result=result)
        baseline = self.baseline
        update = None
        if self.update:
            update = tuple(updated_entries(result, baseline))
            baseline = Baseline(source=str(self.baseline_path), entries=update)
        if baseline is None:
            return Settled(result=result)
        applied = apply_baseline(result, baseline, strict=self.strict)
        notes: list[str] = []
        if applied.baselined:
            notes.append(f"baseline: {applied.baselined} known failures accepted as xfail ({baseline.source})")
        notes += new_defects_lines(applied, baseline.source)
        prefix = "stale baseline entry" if self.strict else "warning: stale baseline entry"
        notes += [f"{prefix}: {line}" for line in applied.stale]
        return Settled(result=applied.result, notes=tuple(notes), update=update)

    def write_update(self, settled: Settled) -> tuple[list[str], str, bool]:
        """Write the baseline ``settled`` holds (``--update-baseline``; the reports are written first):
        the lines to print, the one error line when it could not be written (the old file is then whole,
        and the run fails), and whether it has entries without a reason, which accept nothing: they are
        listed (``missing_reasons``) and fail the run too."""
        from conformance.run.baseline import missing_reasons, unmigrated, write_baseline

        if self.baseline_path is None or settled.update is None:
            return [], "", False
        try:
            write_baseline(self.baseline_path, settled.update)
        except UsageError as exc:
            return [], str(exc), False
        notes: list[str] = []
        baseline = self.baseline
        if baseline is not None and baseline.version1:
            lost = unmigrated(settled.result, baseline)
            notes.append(
                f"baseline: migrated {self.baseline_path} from version 1 to signatures: each entry's reason "
                "now stands beside the signatures of its check that this run found"
                + (
                    f"; {_entries(len(lost))} of cases this run did not run could not be carried over "
                    f"({', '.join(f'{o.case} {o.check}' for o in lost)}): run them too and update again"
                    if lost
                    else ""
                )
            )
        notes.append(f"baseline: wrote {_entries(len(settled.update))} to {self.baseline_path}")
        missing = missing_reasons(str(self.baseline_path), settled.update)
        return notes + missing, "", bool(missing)


@dataclass(frozen=True, kw_only=True)
class Settled:
    """A run judged against its baseline (``CiOptions.settle``)."""

    result: RunResult
    """The run with the baseline applied."""
    notes: tuple[str, ...] = ()
    """The lines to print before the reports (cases accepted, new defects, stale entries)."""
    update: tuple[BaselineEntry, ...] | None = None
    """The baseline ``--update-baseline`` writes once the reports are written (``CiOptions.write_update``)."""


def _entries(count: int) -> str:
    return f"{count} entr{'y' if count == 1 else 'ies'}"


def ci_options(args: argparse.Namespace) -> CiOptions:
    """The baseline and ``--last-failed`` options of ``args`` (``UsageError`` on a bad baseline file or
    a missing report)."""
    from conformance.run.baseline import read_baseline

    path_arg = getattr(args, "baseline", None)
    update = bool(getattr(args, "update_baseline", False))
    strict = bool(getattr(args, "strict_baseline", False))
    options: dict[str, Any] = {"update": update, "strict": strict}
    if strict and not path_arg:
        raise UsageError("--strict-baseline needs --baseline FILE")
    if path_arg or update:
        path = Path(path_arg or DEFAULT_BASELINE)
        valid = [check for ids in CHECK_IDS.values() for check in ids]
        options["baseline_path"] = path
        if not update:
            options["baseline"] = read_baseline(path, check_ids=valid)
        elif path.exists():  # updating keeps the reasons already written (accepts empty ones, migrates version 1)
            options["baseline"] = read_baseline(path, check_ids=valid, require_reasons=False, migrate=True)
    if getattr(args, "last_failed", False):
        report = Path(args.report_dir) / "report.json"
        wanted = last_failed(report)
        options["last_failed"] = wanted
        if not wanted:
            options["nothing_to_rerun"] = (
                f"--last-failed: no case failed, errored or went stale in {report}: nothing to rerun"
            )
    return CiOptions(**options)


def last_failed(report: Path) -> frozenset[tuple[str, str, str]]:
    """The (adapter, scenario, mode) of every case the JSON report ``report`` holds as failed, errored
    or stale (read bounded, like cassettes: ``conformance.reporting._read.load_report``)."""
    from conformance.reporting._read import load_report

    try:
        data = load_report(report, f"--last-failed: {report}")
        cases = data["cases"]
        return frozenset(
            (str(c["adapter"]), str(c["scenario"]), str(c["mode"])) for c in cases if c["status"] in _RERUN
        )
    except FileNotFoundError as exc:
        raise UsageError(
            f"--last-failed: no report at {report} (run once without --last-failed, or give the --report-dir "
            "that run wrote to)"
        ) from exc
    except (KeyError, TypeError) as exc:
        raise UsageError(f"--last-failed: {report} is not a conformance JSON report ({exc})") from exc


def rerun_command(args: argparse.Namespace, case: CaseResult, command: list[str]) -> str:
    """The shell command that reruns ``case`` alone: ``conformance`` + ``command`` (the subcommand and how
    it names the adapter or client), the options that change what runs, ``-k`` naming the case."""
    import shlex

    words = ["conformance", *command]
    specs = args.scenarios or []
    paths = [s for s in specs if Path(s).exists()]
    for spec in paths or [case.scenario]:
        words += ["--scenarios", spec]
    if getattr(args, "checks", None):
        words += ["--checks", args.checks]
    if getattr(args, "exhaustive", False):
        words.append("--exhaustive")
    if getattr(args, "model", None):
        words += ["--model", args.model]
    if getattr(args, "allow_commands", False):
        words.append("--allow-commands")
    for option in ("cassette_dir", "scenarios_dir"):
        value = getattr(args, option, None) or ()
        for folder in [value] if isinstance(value, str) else value:  # repeatable: each one again
            words += [f"--{option.replace('_', '-')}", str(folder)]
    words += ["-k", keyword_literal(f"{case.adapter}::{case.scenario}::{case.mode}")]
    return shlex.join(words)
