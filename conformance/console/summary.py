"""What a run prints at its end, laid out for the terminal's width: the defects (one block each, worst
first: ``conformance.reporting._defects``), the model deviations apart from them (``deviation_lines``:
the model behind a live server did not do what a scenario asks, never a defect of the server), the
scenarios that do not all pass, and one line of counts per adapter; with ``-v``, also every failing
case grouped by check id then scenario.

Every line fits ``width`` columns (colour codes take none). Only the cases the run held are shown, so
``-k`` and ``--scenarios`` narrow every table. Values are shown as compact JSON (``null``, never
``None``); a side that has nothing is left out and the finding's message says what is missing or
not expected. Each failing case ends with the command that reruns it alone, wrapped with `` \\`` so
that it can be pasted as it is. All of this is pure: the callers print the lines.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from conformance.console.output import Style, command_lines, cut, shown, visible_width, wrapped
from conformance.reporting._defects import SEVERITIES, SEVERITY_WORDS, DefectData, severity_counts
from conformance.reporting._deviations import model_did
from conformance.reporting._format import MODE_WORDS, defect_where, evidence_place, quantity
from conformance.verdicts import STATUS_ORDER, CaseResult, CheckVerdict, Finding, RunResult, Status

__all__ = [
    "DEFECTS_SHOWN",
    "MODE_WORDS",
    "PROBLEMS",
    "SYMBOLS",
    "adapter_lines",
    "case_lines",
    "defect_lines",
    "deviation_lines",
    "finding_lines",
    "findings_lines",
    "matrix_lines",
    "message_lines",
    "problem_lines",
    "tally_line",
    "unsupported_line",
    "value_text",
]

SYMBOLS: dict[str, str] = {
    "pass": ".",
    "fail": "F",
    "error": "E",
    "unsupported": "u",
    "xfail": "x",
    "left": "c",
    "deviated": "~",
    "stale": "S",
}
"""Status -> its one-character symbol in the progress lines and the matrix (each status its own)."""
PROBLEMS: tuple[Status, ...] = ("fail", "error", "stale")
"""The statuses that make a run fail (and get a rerun command)."""
DEFECTS_SHOWN = 10
"""Defects shown in full on the terminal (the reports have them all; ``-v`` shows every case)."""
FINDINGS_SHOWN = 3
"""Findings shown per check of a case (the reports have them all)."""
_CASE_LEVEL = "(whole case)"
"""The group of a case that failed as a whole, without a failing check (an adapter crash, a missing cassette)."""


def value_text(value: Any) -> str:
    """``value`` as compact JSON (a value JSON cannot hold: its ``str``; nested too deeply: cut)."""
    try:
        return json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str)
    except (RecursionError, ValueError):
        from conformance.reporting import cap_depth

        return json.dumps(cap_depth(value), ensure_ascii=False, separators=(", ", ": "), default=str)


# -- the findings, grouped ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Entry:
    """One failing case under one group (a check id, or the case as a whole)."""

    case: CaseResult
    check: CheckVerdict | None


def _groups(cases: Iterable[CaseResult]) -> dict[str, list[_Entry]]:
    """Check id -> the failing cases, in the order the checks first failed."""
    groups: dict[str, list[_Entry]] = {}
    for case in cases:
        if case.status not in PROBLEMS:
            continue
        failing = [c for c in case.checks if c.status in PROBLEMS]
        if not failing:
            groups.setdefault(_CASE_LEVEL, []).append(_Entry(case, None))
        for check in failing:
            groups.setdefault(check.check, []).append(_Entry(case, check))
    return groups


def _verb(statuses: Counter[str]) -> str:
    words = {"fail": "failed", "error": "errored", "stale": "went stale"}
    return " or ".join(words[s] for s in PROBLEMS if statuses[s])


def _modes_words(entries: Sequence[_Entry]) -> str:
    modes: Counter[str] = Counter(e.case.mode for e in entries)
    if len(modes) == 1:
        [mode] = modes
        return f"all {MODE_WORDS.get(mode, mode)}" if len(entries) > 1 else MODE_WORDS.get(mode, mode)
    return ", ".join(f"{modes[m]} {MODE_WORDS[m]}" for m in MODE_WORDS if modes[m])


def _adapters_words(entries: Sequence[_Entry]) -> str:
    adapters = list(dict.fromkeys(e.case.adapter for e in entries))
    return f"on {adapters[0]}" if len(adapters) == 1 else f"on {len(adapters)} adapters"


def _blame_words(entries: Sequence[_Entry]) -> str:
    """Which mode the findings blame, when a check compares the modes (``Finding.wrong_mode``)."""
    blamed: Counter[str | None] = Counter(
        next((f.wrong_mode for f in e.check.findings if f.wrong_mode), None) for e in entries if e.check is not None
    )
    parts = [
        f"the {MODE_WORDS[m]} decoding is wrong in {'all ' if blamed[m] == len(entries) > 1 else ''}{blamed[m]}"
        for m in MODE_WORDS
        if blamed[m]
    ]
    return "; ".join(parts)


def _headline(group: str, entries: Sequence[_Entry]) -> str:
    statuses: Counter[str] = Counter(e.check.status if e.check is not None else e.case.status for e in entries)
    n = len(entries)
    what = "cases" if group == _CASE_LEVEL else group
    head = f"{n} {what} {_verb(statuses)}" if group == _CASE_LEVEL else f"{what}: {_verb(statuses)} in {n} case"
    head += "" if group == _CASE_LEVEL or n == 1 else "s"
    details = [_modes_words(entries), _adapters_words(entries)]
    blame = _blame_words(entries)
    return f"{head}, {', '.join(details)}" + (f" ({blame})" if blame else "")


def finding_lines(finding: Finding, width: int, *, indent: str = "") -> list[str]:
    """A finding: its place and message (wrapped), then expected and actual (on one line when they fit,
    else a line each, cut to the width; a side that is None is left out: the message says what is
    missing or not expected)."""
    place = " ".join(p for p in (f"turn {finding.turn}" if finding.turn is not None else "", finding.path) if p)
    text = f"{place}: {finding.message}" if place else finding.message
    lines = wrapped(text, width, indent=indent, next_indent=indent + "  ")
    sides = [
        f"{name} {value_text(value)}"
        for name, value in (("expected", finding.expected), ("actual", finding.actual))
        if value is not None
    ]
    both = f"{indent}  {', '.join(sides)}"
    if len(sides) < 2 or len(both) <= width:
        lines += [cut(both, width)] if sides else []
    else:
        lines.append(cut(f"{indent}  expected {value_text(finding.expected)}", width))
        lines.append(cut(f"{indent}  actual   {value_text(finding.actual)}", width))
    return lines


def _check_lines(check: CheckVerdict, width: int, indent: str) -> list[str]:
    lines: list[str] = []
    if check.message:
        lines += message_lines(check.message, width, indent=indent)
    for finding in check.findings[:FINDINGS_SHOWN]:
        lines += finding_lines(finding, width, indent=indent)
    more = len(check.findings) - FINDINGS_SHOWN
    if more > 0:
        lines.append(cut(f"{indent}(and {more} more finding{'s' if more > 1 else ''}: see the reports)", width))
    return lines


def findings_lines(
    result: RunResult, width: int, *, style: Style | None = None, rerun: Callable[[CaseResult], str] | None = None
) -> list[str]:
    """Every failing, erroring or stale case, grouped by check id then scenario: a headline per check
    with its counts (modes, adapters, the blamed mode), then per scenario each case's findings and the
    command that reruns it."""
    style = style or Style()
    groups = _groups(result.cases)
    if not groups:
        return []
    lines: list[str] = []
    for group, entries in groups.items():
        lines.append("")
        lines += [style.paint(line, "bold") for line in wrapped(_headline(group, entries), width, next_indent="  ")]
        by_scenario: dict[str, list[_Entry]] = {}
        for entry in entries:
            by_scenario.setdefault(entry.case.scenario, []).append(entry)
        for cases in by_scenario.values():
            for entry in cases:
                case = entry.case
                lines.append(cut(f"  {_case_title(case, style)}", width))
                lines += (
                    _check_lines(entry.check, width, "    ")
                    if entry.check is not None
                    else message_lines(case.message or case.status, width, indent="    ")
                )
                if rerun is not None:
                    lines += command_lines(rerun(case), width, indent="    rerun: ", next_indent="      ")
    return lines


def _case_title(case: CaseResult, style: Style) -> str:
    return f"{style.paint(case.status.upper(), case.status)} {case.adapter} {case.scenario} [{case.mode}]"


_CODE = re.compile(r"`([^`]+)`")


def message_lines(message: str, width: int, *, indent: str = "") -> list[str]:
    """A message wrapped at ``width``; a command in it (`` `conformance ...` ``) gets lines of its own
    that can be pasted as they are."""
    lines: list[str] = []
    for paragraph in message.strip().splitlines() or [""]:
        text = ""
        for n, part in enumerate(_CODE.split(paragraph)):
            if n % 2 and part.startswith("conformance "):
                lines += wrapped(text.strip(), width, indent=indent, next_indent=indent + "  ") if text.strip() else []
                lines += command_lines(part, width, indent=indent + "  ", next_indent=indent + "    ")
                text = ""
            else:
                text += f"`{part}`" if n % 2 else part
        if text.strip() or not lines:
            lines += wrapped(text.strip(), width, indent=indent, next_indent=indent + "  ")
    return lines


def case_lines(case: CaseResult, width: int, *, rerun: str | None = None, style: Style | None = None) -> list[str]:
    """One case on its own: its line, each check that did not pass with its findings, the cassette,
    and the command that reruns it."""
    style = style or Style()
    lines = [cut(_case_title(case, style), width)]
    lines += message_lines(case.message, width, indent="  ") if case.message.strip() else []
    for check in case.checks:
        if check.status == "pass":
            continue
        lines.append(cut(f"  {check.check}: {check.status}", width))
        lines += _check_lines(check, width, "    ")
    if case.cassette:
        lines += wrapped(f"cassette: {case.cassette}", width, indent="  ", next_indent="    ")
    if rerun:
        lines += command_lines(rerun, width, indent="  rerun: ", next_indent="    ")
    return lines


# -- the defects --------------------------------------------------------------------------------------------

_SEVERITY_STYLE = {"loses_data": "fail", "changes_meaning": "fail", "rejected": "fail", "left": "left", "note": "dim"}


def _rerun_key(defect: DefectData) -> str:
    evidence = defect["evidence"]
    return f"{evidence['adapter']}::{evidence['scenario']}::{evidence['mode']}"


def defect_lines(
    defects: Sequence[DefectData],
    width: int,
    *,
    style: Style | None = None,
    reruns: Mapping[str, str] | None = None,
    shown: int = DEFECTS_SHOWN,
) -> list[str]:
    """The defects, worst first, one block each: severity, check and where; the sentence; what to do;
    the scenarios; the evidence (path, the fragment, the cassette, the command that reruns the case); the
    checks that restate it. ``reruns``: ``adapter::scenario::mode`` -> the rerun command. Only the
    first ``shown`` get a block, and never a note; the rest one line each."""
    style = style or Style()
    reruns = reruns or {}
    if not defects:
        return []
    failing = [d for d in defects if d["kind"] == "defect"]
    head = (
        f"{quantity(len(defects), 'defect')}"
        if len(failing) == len(defects)
        else (f"{quantity(len(failing), 'defect')}, {len(defects) - len(failing)} left to the caller or noted")
    )
    lines = [style.paint(cut(f"{head} (worst first; every case: -v or the reports)", width), "bold")]
    first = True
    for n, defect in enumerate(defects, 1):
        severity = SEVERITY_WORDS[defect["severity"]]
        if n > shown or defect["kind"] == "note":  # a note is one line here; the reports give it whole
            lines.append(cut(f"{n}. [{severity}] {defect['sentence']}", width))
            continue
        lines += [] if first else [""]
        first = False
        title = wrapped(f"{n}. [{severity}] {defect['sentence']}", width, next_indent="   ")
        lines += [style.paint(title[0], _SEVERITY_STYLE[defect["severity"]]), *title[1:]]
        lines += wrapped(defect_where(defect), width, indent="   ", next_indent="   ")
        if defect["remedy"]:
            lines += wrapped(f"to do: {defect['remedy']}", width, indent="   ", next_indent="     ")
        restated = list(
            dict.fromkeys(
                r["check"] + ("" if r["cases"] == len(defect["cases"]) else f" ({quantity(r['cases'], 'case')})")
                for r in defect["restated"]
            )
        )
        checks = defect["check"] + (f"; restated by {', '.join(restated)}" if restated else "")
        lines.append(cut(f"   check: {checks}", width))  # the reports name every restating check
        evidence = defect["evidence"]
        place = evidence_place(evidence)
        case = f"{evidence['scenario']} [{evidence['mode']}]"
        lines += wrapped(f"e.g. {case}" + (f", {place}" if place else ""), width, indent="   ", next_indent="     ")
        together = "     " + ", ".join(evidence["shown"])
        if len(evidence["shown"]) == 2 and visible_width(together) <= width:
            lines.append(together)
        else:
            lines += [cut(f"     {line}", width) for line in evidence["shown"]]
        if evidence["cassette"]:
            lines.append(cut(f"     cassette: {evidence['cassette']}", width))
        rerun = reruns.get(_rerun_key(defect))
        if rerun:
            lines += command_lines(rerun, width, indent="     rerun: ", next_indent="       ")
    return lines


DEVIATIONS_SHOWN = 5
"""Cases in which the model deviated shown with what it did (the reports list them all)."""


def deviation_lines(
    result: RunResult, width: int, *, style: Style | None = None, shown: int = DEVIATIONS_SHOWN
) -> list[str]:
    """The cases in which the model deviated from the scenario (a ``deviated`` case, or a check of a case):
    how many, said apart from the defects (the model's choice, not a server defect, not a failure), then
    the first ``shown`` with what the model did; none: no line."""
    style = style or Style()
    cases = [c for c in result.cases if c.status == "deviated" or any(v.status == "deviated" for v in c.checks)]
    if not cases:
        return []
    head = f"{quantity(len(cases), 'case')}: the model deviated (not a server defect; every one: the reports)"
    lines = [style.paint(cut(head, width), "bold")]
    for case in cases[:shown]:
        lines.append(cut(f"  {_case_title(case, style)}", width))
        said = [v.message or "; ".join(f.message for f in v.findings) for v in case.checks if v.status == "deviated"]
        own = [case.message] if case.status == "deviated" else []  # a failing case's message is its failure's
        told = message_lines(model_did([*own, *said]), width, indent="    ")
        lines += told[:2] + ([cut("    …", width)] if len(told) > 2 else [])
    if len(cases) > shown:
        lines.append(cut(f"  and {len(cases) - shown} more", width))
    return lines


PROBLEMS_SHOWN = 5
"""Erroring or stale cases shown with their message and rerun command (the reports have them all)."""


def problem_lines(
    result: RunResult,
    width: int,
    *,
    style: Style | None = None,
    rerun: Callable[[CaseResult], str] | None = None,
    shown: int = PROBLEMS_SHOWN,
) -> list[str]:
    """The cases that erred or went stale (the suite could not judge them, or a declared gap passes
    now): how many, then the first ``shown`` with their message and the command that reruns them."""
    style = style or Style()
    cases = [c for c in result.cases if c.status in ("error", "stale")]
    if not cases:
        return []
    counts = Counter(c.status for c in cases)
    words = {"error": "errored", "stale": "went stale"}
    head = " and ".join(f"{quantity(counts[s], 'case')} {words[s]}" for s in ("error", "stale") if counts[s])
    lines = [style.paint(cut(f"{head} (every one: -v or the reports)", width), "bold")]
    for case in cases[:shown]:
        lines.append(cut(f"  {_case_title(case, style)}", width))
        said = message_lines(case.message or case.status, width, indent="    ")
        lines += said[:4] + ([cut("    …", width)] if len(said) > 4 else [])
        if rerun is not None:
            lines += command_lines(rerun(case), width, indent="    rerun: ", next_indent="      ")
    if len(cases) > shown:
        lines.append(cut(f"  and {len(cases) - shown} more", width))
    return lines


def tally_line(defects: Sequence[DefectData]) -> str:
    """``3 defects: 1 loses caller data, 2 changes meaning`` (empty when there is none)."""
    if not defects:
        return ""
    counts = severity_counts(defects)
    parts = [f"{counts[s]} {SEVERITY_WORDS[s]}" for s in SEVERITIES if counts[s]]
    return f"{quantity(len(defects), 'defect')}: {', '.join(parts)}"


_REQUIRES = re.compile(r"^requires (.+), which .+ does not declare$")
_UNDECLARED = re.compile(r" does not declare (\w+)$")


def unsupported_line(result: RunResult, width: int) -> list[str]:
    """One line: how many cases are unsupported and why (``22 cases unsupported: written for another
    wire 14, images_in_tool_results not declared 6, ...``); none when no case is."""
    cases = [c for c in result.cases if c.status == "unsupported"]
    if not cases:
        return []
    why: Counter[str] = Counter()
    for case in cases:
        message = case.message.strip()
        match = _REQUIRES.match(message)
        if match:
            why.update(f"{capability} not declared" for capability in match.group(1).split(", "))
        elif message.startswith("the scenario runs only on the "):
            why["written for another wire"] += 1
        elif undeclared := _UNDECLARED.search(message):
            why[f"{undeclared.group(1)} not declared"] += 1
        else:
            why["the wire cannot carry it" if message else "no reason given"] += 1
    reasons = ", ".join(f"{reason} {n}" for reason, n in why.most_common())
    return wrapped(f"{quantity(len(cases), 'case')} unsupported: {reasons}", width, next_indent="  ")


# -- the tables ---------------------------------------------------------------------------------------------


def _ran(result: RunResult) -> tuple[list[str], list[str]]:
    """The adapters and the scenarios that hold a case of the run, in the run's order."""
    adapters = [a.name for a in result.adapters]
    scenarios = [s.id for s in result.scenarios]
    with_cases = {c.adapter for c in result.cases}
    scenarios_run = {c.scenario for c in result.cases}
    extra_adapters = [a for a in dict.fromkeys(c.adapter for c in result.cases) if a not in adapters]
    extra_scenarios = [s for s in dict.fromkeys(c.scenario for c in result.cases) if s not in scenarios]
    return (
        [a for a in adapters if a in with_cases] + extra_adapters,
        [s for s in scenarios if s in scenarios_run] + extra_scenarios,
    )


def adapter_lines(result: RunResult, width: int, *, style: Style | None = None) -> list[str]:
    """One line per adapter that ran a case: its cases by status (only the statuses the run has)."""
    style = style or Style()
    adapters, _ = _ran(result)
    if not adapters:
        return []
    counts: dict[str, Counter[str]] = {a: Counter() for a in adapters}
    for case in result.cases:
        counts[case.adapter][case.status] += 1
    statuses = [s for s in STATUS_ORDER if any(c[s] for c in counts.values())]
    columns = [(s, max(len(s), 5)) for s in statuses]
    numbers = 7 + sum(w + 2 for _, w in columns)
    name_width = max(7, min(max(len(a) for a in adapters), width - numbers))
    head = f"{'adapter':<{name_width}}  {'cases':>5}" + "".join(f"  {s:>{w}}" for s, w in columns)
    lines = [style.paint(cut(head, width), "bold")]
    for adapter in adapters:
        row = counts[adapter]
        cells = "".join(
            "  " + style.paint(f"{row[s]:>{w}}" if row[s] else f"{'-':>{w}}", s if row[s] else "dim")
            for s, w in columns
        )
        lines.append(f"{cut(adapter, name_width):<{name_width}}  {sum(row.values()):>5}{cells}")
    return lines


def matrix_lines(result: RunResult, width: int, *, style: Style | None = None) -> list[str]:
    """Scenario x adapter of the scenarios whose cases do not all pass, unsupported aside (none: no line). Each cell is
    the non-streamed then the streamed symbol (``-``: not run); the adapters are numbered above the
    cells and named below, in as many blocks as the width needs."""
    style = style or Style()
    adapters, scenarios = _ran(result)
    cells: dict[tuple[str, str], dict[str, str]] = {}
    for case in result.cases:
        cells.setdefault((case.scenario, case.adapter), {})[case.mode] = case.status
    rows = [  # a scenario only unsupported by declaration has no row (unsupported_line counts them)
        s
        for s in scenarios
        if any(v not in ("pass", "unsupported") for a in adapters for v in cells.get((s, a), {}).values())
    ]
    if not rows:
        return []
    label = max(len(str(len(adapters))), 2)
    cell = label + 1
    name_width = min(max(len(s) for s in rows), max(16, width - cell * min(len(adapters), 8) - 1))
    per_block = max(1, (width - name_width - 1) // cell)
    lines = [
        style.paint(cut("Scenarios that do not all pass", width), "bold"),
        *wrapped(
            "(each cell: non-streamed then streamed; . pass, F fail, E error, u unsupported, x xfail,"
            " c left to the caller, ~ model deviated, S stale, - not run)",
            width,
        ),
    ]
    for start in range(0, len(adapters), per_block):
        block = list(enumerate(adapters))[start : start + per_block]
        lines.append(" " * name_width + " " + "".join(f"{n + 1:>{cell}}" for n, _ in block))
        for scenario in rows:
            row = [_cell(cells.get((scenario, a), {}), style, cell) for _, a in block]
            name = _cut_middle(scenario, name_width)
            lines.append(name + " " * (name_width - visible_width(name) + 1) + "".join(row))
        lines += _items_lines([f"{n + 1} {a}" for n, a in block], width, indent="  ")
    return lines


def _cell(modes: dict[str, str], style: Style, cell: int) -> str:
    symbols = "".join(style.paint(SYMBOLS[modes[m]], modes[m]) if m in modes else "-" for m in ("non_stream", "stream"))
    return " " * (cell - 2) + symbols


def _cut_middle(text: str, width: int) -> str:
    """``text`` in ``width`` columns, its middle left out (``…``) when it is longer: the ends of a scenario id
    (its folder and its name) say the most."""
    text = shown(text)  # an id from a user's file: its control characters escaped
    if visible_width(text) <= width:
        return text
    if not text.isascii():  # cells and characters differ: keep the start, cut in cells
        return cut(text, width)
    head = (width - 1) // 3
    return text[:head] + "…" + text[len(text) - (width - 1 - head) :]


def _items_lines(items: Sequence[str], width: int, *, indent: str) -> list[str]:
    """``items`` joined by ``, `` in lines of at most ``width`` columns, never breaking an item (one too
    long for a line is cut)."""
    lines: list[str] = []
    line = ""
    for item in items:
        if line and len(indent) + len(line) + 2 + len(item) > width:
            lines.append(indent + line + ",")
            line = ""
        line = f"{line}, {item}" if line else item
    lines.append(cut(indent + line, width))
    return [cut(x, width) for x in lines]
