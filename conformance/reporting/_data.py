"""The report as pure data: a ``RunResult`` becomes one JSON-ready mapping (pure, deterministic).

Every renderer reads this mapping, never the ``RunResult``, so the JSON, Markdown, HTML and JUnit
forms cannot disagree. Key order is fixed by construction; cases are ordered like the matrix
(scenario rows, adapter columns, non-stream before stream), adapters and scenarios keep the run's
order (ones only named by a case follow, sorted). Values become JSON values (tuples -> lists,
bytes -> text, non-finite floats -> strings, anything else -> ``repr``), then every string goes
through ``conformance.traffic.scrub``: key-shaped strings and the caller's named secrets become
``REDACTED``, and so does the value of every secret header and key query parameter in an exchange.
A list or mapping nested deeper than ``MAX_DEPTH`` levels becomes a marker string (``cap_depth``), so
no renderer recurses without bound on a hostile body. A run that was interrupted carries its reason
in ``incomplete`` (and an ``error`` verdict: it did not do what was asked).
The published contract is ``conformance/schemas/report.schema.json``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping
from typing import Any, NotRequired, TypedDict, cast

from conformance.reporting._defects import DefectData, defects_of
from conformance.reporting._deviations import DeviationData, deviations_of
from conformance.reporting._shapes import MODES, CaseData, CheckData, FindingData
from conformance.traffic.scrub import Scrubber
from conformance.verdicts import (
    STATUS_ORDER,
    CaseResult,
    CheckVerdict,
    Finding,
    RunResult,
    Status,
    signature,
    worst,
)

__all__ = [
    "MAX_DEPTH",
    "MODES",
    "REPORT_FORMAT",
    "AdapterData",
    "CaseData",
    "CheckData",
    "CommandData",
    "DeviationData",
    "FindingData",
    "MatrixCell",
    "MatrixData",
    "MatrixRow",
    "ModeCell",
    "ProvenanceEntry",
    "Report",
    "ScenarioData",
    "SelectionData",
    "SuiteData",
    "Summary",
    "Tally",
    "as_report",
    "build_report",
    "cap_depth",
    "case_defects",
    "check_family",
    "matrix_of",
    "report_defects",
    "report_deviations",
    "run_defects",
    "summary_of",
]

REPORT_FORMAT = 1
"""The version of the report's shape (``report_format`` in the JSON; bumped on incompatible change)."""


MAX_DEPTH = 100
"""Lists and mappings nested deeper than this in a reported value are cut (``cap_depth``)."""

_HEADER_KEYS = frozenset({"headers", "request_headers", "response_headers"})
_URL_KEYS = frozenset({"url", "uri"})


class AdapterData(TypedDict):
    name: str
    wire_format: str
    capabilities: list[str]
    known_gaps: dict[str, str]
    model: NotRequired[str | None]
    """The model asked for on the adapter's wire (absent from reports written before it was kept)."""


class SuiteData(TypedDict):
    """``SuiteInfo``: the suite that judged the run (``conformance.run.fingerprint``)."""

    fingerprint: str
    version: str
    check_version: int
    scenarios: int
    equivalences: str


class SelectionData(TypedDict):
    """``Selection``: what the command line selected out of the suite."""

    command: str
    scenarios: list[str]
    keyword: str | None
    checks: list[str]
    wires: list[str] | None
    model: str | None
    shard: str | None
    merged: list[str]
    note: NotRequired[str | None]


class ScenarioData(TypedDict):
    id: str
    behavior: str
    source: str
    requires: list[str]
    file: NotRequired[str]
    """Only for a scenario that is not bundled: the user's file it was read from."""


class Tally(TypedDict):
    total: int
    statuses: dict[str, int]


class Summary(TypedDict):
    verdict: Status
    cases: int
    statuses: dict[str, int]
    duration: float
    problems: int
    by_adapter: dict[str, Tally]
    by_mode: dict[str, Tally]
    by_check_family: dict[str, Tally]


class ModeCell(TypedDict):
    status: Status
    case: str


class MatrixCell(TypedDict):
    adapter: str
    status: Status | None
    modes: dict[str, ModeCell | None]


class MatrixRow(TypedDict):
    scenario: str
    cells: list[MatrixCell]


class MatrixData(TypedDict):
    adapters: list[str]
    modes: list[str]
    rows: list[MatrixRow]


class ProvenanceEntry(TypedDict):
    cassette: str
    cases: list[str]
    provenance: dict[str, Any] | None


class CommandData(TypedDict):
    scenario: str
    file: str
    argv: list[str]
    cwd: str | None
    env_keys: list[str]
    bundled: bool
    transport: NotRequired[str]
    url: NotRequired[str | None]
    header_keys: NotRequired[list[str]]


class Report(TypedDict):
    report_format: int
    suite_version: str
    suite: NotRequired[SuiteData | None]
    """The suite that judged the run (absent from reports written before it was kept; None when the
    ``RunResult`` carried none)."""
    selection: NotRequired[SelectionData | None]
    """What the command line selected (None: a run made through the API)."""
    incomplete: str | None
    """Why the report does not hold every selected case (the run was interrupted), or None."""
    summary: Summary
    adapters: list[AdapterData]
    scenarios: list[ScenarioData]
    matrix: MatrixData
    defects: NotRequired[list[DefectData]]
    """The findings grouped into defects (``conformance.reporting._defects``; absent from older reports:
    ``report_defects`` computes them)."""
    deviations: NotRequired[list[DeviationData]]
    """The cases in which the model deviated from the scenario, listed apart from the defects
    (``conformance.reporting._deviations``; absent from older reports: ``report_deviations`` computes them)."""
    cases: list[CaseData]
    provenance: list[ProvenanceEntry]
    problems: list[str]
    commands: NotRequired[list[CommandData]]
    """The MCP server commands the run started (absent from reports written before it was kept)."""


def report_defects(report: Report) -> list[DefectData]:
    """The report's defects: as kept, or (a report written before they were kept) computed from its cases."""
    kept = report.get("defects")
    if kept is not None:
        return kept
    return defects_of(report["cases"], {a["name"]: a["wire_format"] for a in report["adapters"]})


def report_deviations(report: Report) -> list[DeviationData]:
    """The report's model deviations: as kept, or (a report written before they were kept) computed from its cases."""
    kept = report.get("deviations")
    if kept is not None:
        return kept
    return deviations_of(report["cases"])


def check_family(check: str) -> str:
    """The family of a check id: its first dotted part (``translation.tool_names`` -> ``translation``)."""
    return check.split(".", 1)[0] or check


def build_report(run: RunResult, *, secrets: Iterable[str] = (), incomplete: str | None = None) -> Report:
    """The whole report of ``run`` as JSON-ready data, scrubbed of key-shaped strings and ``secrets``;
    ``incomplete``: why the run stopped before its end (its report lists only the cases that finished)."""
    adapters, scenarios, ordered = _in_order(run)
    ids = _case_ids(ordered)
    cases = [_case(case, ids[i]) for i, case in enumerate(ordered)]
    report: Report = {
        "report_format": REPORT_FORMAT,
        "suite_version": run.suite_version,
        "suite": _suite(run),
        "selection": _selection(run),
        "incomplete": incomplete,
        "summary": summary_of(cases, adapters, problems=len(run.problems), incomplete=incomplete is not None),
        "adapters": [_adapter(run, name) for name in adapters],
        "scenarios": [_scenario(run, name) for name in scenarios],
        "matrix": matrix_of(cases, adapters, scenarios),
        "defects": defects_of(cases, {a.name: a.wire_format for a in run.adapters}),
        "deviations": deviations_of(cases),
        "cases": cases,
        "provenance": _provenance(run, cases),
        "problems": [str(p) for p in run.problems],
        "commands": [cast(CommandData, _jsonable(dict(c))) for c in run.commands],
    }
    return cast(Report, _scrub(report, _CachedScrubber(secrets)))


def run_defects(run: RunResult, *, secrets: Iterable[str] = ()) -> list[DefectData]:
    """The defects of ``run``, as ``build_report`` lists them (the same case ids), scrubbed like a report;
    without building the whole report (the terminal shows them before the reports are written)."""
    _, _, ordered = _in_order(run)
    ids = _case_ids(ordered)
    cases = [_case(dataclasses.replace(case, exchanges=()), ids[i]) for i, case in enumerate(ordered)]
    defects = defects_of(cases, {a.name: a.wire_format for a in run.adapters})
    return cast(list[DefectData], _scrub(defects, _CachedScrubber(secrets)))


def case_defects(case: CaseResult, wire: str = "") -> list[DefectData]:
    """The defects of one case on its own (a pytest item's failure), scrubbed like a report; ``wire``: its
    wire format (some plain words depend on it)."""
    data = _case(dataclasses.replace(case, exchanges=()), f"{case.adapter}/{case.scenario}/{case.mode}")
    return cast(list[DefectData], _scrub(defects_of([data], {case.adapter: wire}), _CachedScrubber()))


def as_report(value: RunResult | Report | Mapping[str, Any]) -> Report:
    """A built report as is; a ``RunResult`` built with ``build_report`` (renderers accept both)."""
    if isinstance(value, RunResult):
        return build_report(value)
    return cast(Report, value)


# -- pieces ----------------------------------------------------------------------------------------------


def _in_order(run: RunResult) -> tuple[list[str], list[str], list[CaseResult]]:
    """The run's adapters, scenarios and cases in report order (scenario rows, adapter columns, modes)."""
    adapters = _ordered([a.name for a in run.adapters], (c.adapter for c in run.cases))
    scenarios = _ordered([s.id for s in run.scenarios], (c.scenario for c in run.cases))
    rank_a = {name: i for i, name in enumerate(adapters)}
    rank_s = {name: i for i, name in enumerate(scenarios)}
    ordered = sorted(run.cases, key=lambda c: (rank_s[c.scenario], rank_a[c.adapter], MODES.index(c.mode)))
    return adapters, scenarios, ordered


def _ordered(declared: list[str], seen: Iterable[str]) -> list[str]:
    names = list(dict.fromkeys(declared))
    known = set(names)
    return names + sorted({name for name in seen if name not in known})


def _case_ids(cases: list[CaseResult]) -> list[str]:
    """``adapter/scenario/mode``; a repeated case gets ``#2``, ``#3`` (never two cases with one id)."""
    ids: list[str] = []
    used: dict[str, int] = {}
    for case in cases:
        base = f"{case.adapter}/{case.scenario}/{case.mode}"
        used[base] = used.get(base, 0) + 1
        ids.append(base if used[base] == 1 else f"{base}#{used[base]}")
    return ids


def _finding(finding: Finding) -> FindingData:
    return {
        "check": finding.check,
        "message": finding.message,
        "path": finding.path,
        "expected": _jsonable(finding.expected),
        "actual": _jsonable(finding.actual),
        "turn": finding.turn,
        "kind": finding.kind,
        "remedy": finding.remedy,
        "signature": signature(finding),
        "wrong_mode": finding.wrong_mode,
    }


def _check(verdict: CheckVerdict) -> CheckData:
    return {
        "check": verdict.check,
        "family": check_family(verdict.check),
        "status": verdict.status,
        "message": verdict.message,
        "findings": [_finding(f) for f in verdict.findings],
    }


def _case(case: CaseResult, case_id: str) -> CaseData:
    return {
        "id": case_id,
        "adapter": case.adapter,
        "scenario": case.scenario,
        "mode": case.mode,
        "status": case.status,
        "message": case.message,
        "traceback": case.traceback,
        "duration": _seconds(case.duration),
        "cassette": case.cassette,
        "checks": [_check(v) for v in case.checks],
        "exchanges": [cast(dict[str, Any], _jsonable(e)) for e in case.exchanges],
    }


def _counts(statuses: Iterable[Status]) -> Tally:
    counts: dict[str, int] = dict.fromkeys(STATUS_ORDER, 0)
    for status in statuses:
        counts[status] += 1
    return {"total": sum(counts.values()), "statuses": dict(counts)}


def summary_of(cases: list[CaseData], adapters: list[str], *, problems: int, incomplete: bool) -> Summary:
    """The report's summary of ``cases`` (ordered as the report lists them), with ``problems`` run-level
    problems; ``incomplete``: the run did not hold every selected case (its verdict is error)."""
    overall = _counts(c["status"] for c in cases)
    families: dict[str, list[Status]] = {}
    for case in cases:
        for check in case["checks"]:
            families.setdefault(check["family"], []).append(check["status"])
    verdict = worst([c["status"] for c in cases])
    if problems or incomplete:  # a scenario that did not load, an interrupted run: not what was asked
        verdict = "error"
    return {
        "verdict": verdict,
        "cases": overall["total"],
        "statuses": overall["statuses"],
        "duration": _seconds(sum(c["duration"] for c in cases)),
        "problems": problems,
        "by_adapter": {a: _counts(c["status"] for c in cases if c["adapter"] == a) for a in adapters},
        "by_mode": {m: _counts(c["status"] for c in cases if c["mode"] == m) for m in MODES},
        "by_check_family": {f: _counts(families[f]) for f in sorted(families)},
    }


def _adapter(run: RunResult, name: str) -> AdapterData:
    for info in run.adapters:
        if info.name == name:
            return {
                "name": info.name,
                "wire_format": info.wire_format,
                "capabilities": sorted(info.capabilities),
                "known_gaps": {str(k): str(info.known_gaps[k]) for k in sorted(info.known_gaps)},
                "model": info.model,
            }
    return {"name": name, "wire_format": "", "capabilities": [], "known_gaps": {}, "model": None}


def _suite(run: RunResult) -> SuiteData | None:
    info = run.suite
    if info is None:
        return None
    return {
        "fingerprint": info.fingerprint,
        "version": info.version,
        "check_version": info.check_version,
        "scenarios": info.scenarios,
        "equivalences": info.equivalences,
    }


def _selection(run: RunResult) -> SelectionData | None:
    chosen = run.selection
    if chosen is None:
        return None
    return {
        "command": chosen.command,
        "scenarios": list(chosen.scenarios),
        "keyword": chosen.keyword,
        "checks": list(chosen.checks),
        "wires": None if chosen.wires is None else list(chosen.wires),
        "model": chosen.model,
        "shard": chosen.shard,
        "merged": list(chosen.merged),
        "note": chosen.note,
    }


def _scenario(run: RunResult, scenario_id: str) -> ScenarioData:
    for info in run.scenarios:
        if info.id == scenario_id:
            data: ScenarioData = {
                "id": info.id,
                "behavior": info.behavior,
                "source": info.source,
                "requires": list(info.requires),
            }
            if info.file is not None:
                data["file"] = info.file
            return data
    return {"id": scenario_id, "behavior": "", "source": "", "requires": []}


def matrix_of(cases: list[CaseData], adapters: list[str], scenarios: list[str]) -> MatrixData:
    """The scenario x adapter matrix of ``cases``: each cell the worst of its modes."""
    by_key: dict[tuple[str, str, str], list[CaseData]] = {}
    for case in cases:
        by_key.setdefault((case["scenario"], case["adapter"], case["mode"]), []).append(case)
    rows: list[MatrixRow] = []
    for scenario in scenarios:
        cells: list[MatrixCell] = []
        for adapter in adapters:
            modes: dict[str, ModeCell | None] = {}
            for mode in MODES:
                found = by_key.get((scenario, adapter, mode), [])
                # a repeated case shows its worst run (STATUS_ORDER ranks best to worst)
                pick = max(found, key=lambda c: STATUS_ORDER.index(c["status"]), default=None)
                modes[mode] = None if pick is None else {"status": pick["status"], "case": pick["id"]}
            present = [cell["status"] for cell in modes.values() if cell is not None]
            cells.append({"adapter": adapter, "status": worst(present) if present else None, "modes": modes})
        rows.append({"scenario": scenario, "cells": cells})
    return {"adapters": list(adapters), "modes": list(MODES), "rows": rows}


def _provenance(run: RunResult, cases: list[CaseData]) -> list[ProvenanceEntry]:
    users: dict[str, list[str]] = {str(path): [] for path in run.provenance}
    for case in cases:
        if case["cassette"] is not None:
            users.setdefault(case["cassette"], []).append(case["id"])
    blocks = {str(path): block for path, block in run.provenance.items()}
    return [
        {
            "cassette": path,
            "cases": users[path],
            "provenance": cast(dict[str, Any], _jsonable(blocks[path])) if path in blocks else None,
        }
        for path in sorted(users)
    ]


def _seconds(value: float) -> float:
    return round(value, 3) if math.isfinite(value) else 0.0


# -- JSON values and scrubbing ---------------------------------------------------------------------------


def cap_depth(value: Any, limit: int = MAX_DEPTH) -> Any:
    """A copy of the JSON value ``value`` in which every list or mapping nested deeper than ``limit``
    levels (the outermost is level 1) is a marker string (iterative: any depth is safe)."""
    root: list[Any] = [None]
    stack: list[tuple[Any, Any, Any, int]] = [(value, root, 0, 0)]  # (value, its container, key, depth)
    while stack:
        item, parent, key, depth = stack.pop()
        if isinstance(item, Mapping | list | tuple) and depth >= limit:
            parent[key] = _cut(limit)
        elif isinstance(item, Mapping):
            copy: dict[Any, Any] = dict.fromkeys(item)
            parent[key] = copy
            stack.extend((v, copy, k, depth + 1) for k, v in item.items())
        elif isinstance(item, list | tuple):
            items: list[Any] = [None] * len(item)
            parent[key] = items
            stack.extend((v, items, i, depth + 1) for i, v in enumerate(item))
        else:
            parent[key] = item
    return root[0]


def _cut(limit: int) -> str:
    return f"… (nested deeper than {limit} levels: cut in the report)"


def _jsonable(value: Any, depth: int = 0) -> Any:
    """``value`` as a JSON value (every run result can be reported, whatever a check put in it); lists
    and mappings deeper than ``MAX_DEPTH`` become a marker (a recursion never goes deeper)."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).decode("utf-8", errors="replace")
    deeper = depth + 1
    if deeper > MAX_DEPTH and isinstance(value, Mapping | list | tuple | set | frozenset):
        return _cut(MAX_DEPTH)
    if isinstance(value, Mapping):
        return {k if isinstance(k, str) else repr(k): _jsonable(v, deeper) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v, deeper) for v in value]
    if isinstance(value, set | frozenset):
        return sorted((_jsonable(v, deeper) for v in value), key=repr)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        if deeper > MAX_DEPTH:
            return _cut(MAX_DEPTH)
        return _jsonable({f.name: getattr(value, f.name) for f in dataclasses.fields(value)}, depth)
    return repr(value)


class _CachedScrubber(Scrubber):
    """A ``Scrubber`` that scrubs each distinct text once: a report repeats the same check ids, statuses
    and keys thousands of times (a 2,000-case report: about 300,000 strings, a few thousand distinct)."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        super().__init__(secrets)
        self._done: dict[str, str] = {}

    def text(self, text: str) -> str:
        done = self._done.get(text)
        if done is None:
            done = self._done[text] = super().text(text)
        return done


def _scrub(value: Any, scrubber: Scrubber, key: str | None = None) -> Any:
    if isinstance(value, str):
        return scrubber.url(value) if key in _URL_KEYS else scrubber.text(value)
    if isinstance(value, dict):
        if key in _HEADER_KEYS:
            return {scrubber.text(k): _scrub_header(k, v, scrubber) for k, v in value.items()}
        return {scrubber.text(k): _scrub(v, scrubber, k) for k, v in value.items()}
    if isinstance(value, list):
        if key in _HEADER_KEYS:  # headers as [name, value] pairs
            return [_scrub_pair(v, scrubber) for v in value]
        return [_scrub(v, scrubber) for v in value]
    return value


def _scrub_pair(pair: Any, scrubber: Scrubber) -> Any:
    if isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str):
        return [scrubber.text(pair[0]), _scrub_header(pair[0], pair[1], scrubber)]
    return _scrub(pair, scrubber)


def _scrub_header(name: str, value: Any, scrubber: Scrubber) -> Any:
    if isinstance(value, str):
        return scrubber.header(name, value)
    if isinstance(value, list):
        return [_scrub_header(name, v, scrubber) for v in value]
    return _scrub(value, scrubber)
