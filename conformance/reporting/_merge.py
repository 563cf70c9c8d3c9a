"""Merging the JSON reports of a run's shards (``--shard K/N``) into the report of one run (pure).

``merge_reports`` takes the parsed ``report.json`` of each shard, with the name of the file it came
from, and gives one ``Report``: every case of every shard, in the order one run lists them, with
the summary, the matrix, the verdict, the defects and the model deviations recomputed from the
cases; the adapters, scenarios, provenance, problems and MCP commands joined. Each renderer takes
it as it takes a run's report.

It refuses (``UsageError``, naming the file and what to do) what would not be the report of one
run: a file that is not a report (checked against ``report.schema.json``; its ``report_format`` must
be the integer this suite writes, never ``true``), a report without a suite fingerprint (written
before reports carried one), reports made by different suites (fingerprints differ), reports whose
selections differ beyond ``--shard``, shards of different N, a shard given twice or a case in two
reports, a mix of sharded and unsharded reports, and missing shards (K of N absent) unless
``allow_partial``: then the report is marked incomplete and names them. A shard that was itself
incomplete (interrupted) makes the merged report incomplete too. Reports of runs without
``--shard`` merge as well, when no case is in two of them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from conformance.errors import UsageError
from conformance.reporting._data import (
    MODES,
    REPORT_FORMAT,
    CaseData,
    CommandData,
    ProvenanceEntry,
    Report,
    SelectionData,
    _ordered,
    matrix_of,
    summary_of,
)
from conformance.reporting._defects import (
    defects_of,
)
from conformance.reporting._deviations import deviations_of

__all__ = ["MergedReport", "merge_reports"]

_NOT_SHARD = ("shard", "merged")
"""The selection fields in which a run's shards differ; every other field must be equal."""


@dataclass(frozen=True)
class MergedReport:
    """The merged report, and what to tell the user about it (versions that differ, shards missing)."""

    report: Report
    notes: tuple[str, ...] = ()


def merge_reports(
    reports: Sequence[tuple[str, Mapping[str, Any]]],
    *,
    schema: Mapping[str, Any] | None = None,
    allow_partial: bool = False,
) -> MergedReport:
    """One report of every case of ``reports`` ((file name, parsed report.json) of each shard), each
    first checked against ``schema`` (the published report schema) when given."""
    if not reports:
        raise UsageError("give the report.json of every shard to merge")
    for source, data in reports:
        _check_shape(source, data, schema)
    first_source, first = reports[0]
    for source, data in reports[1:]:
        _same_suite(first_source, first, source, data)
    notes: list[str] = []
    versions = sorted({str(d["suite_version"]) for _, d in reports})
    if len(versions) > 1:
        notes.append(
            f"the reports were written by conformance {', '.join(versions)}: one suite fingerprint, so one set of "
            "scenarios, checks and equivalences judged them"
        )
    shards, missing = _shards(reports)
    incomplete = [
        f"{_shard_name(data, source)}: {data['incomplete']}" for source, data in reports if data.get("incomplete")
    ]
    if missing:
        count = shards[0].partition("/")[2] if shards else "?"
        listed = ", ".join(f"{k}/{count}" for k in missing)
        if not allow_partial:
            raise UsageError(
                f"shard{'s' if len(missing) > 1 else ''} {listed} of the run {'are' if len(missing) > 1 else 'is'} "
                f"missing (given: {', '.join(shards)}): give the report.json of every shard, or --allow-partial to "
                "merge these alone (the report is then marked incomplete and names the shards missing)"
            )
        incomplete.insert(0, f"shards missing: {listed} (merged {', '.join(shards)} only with --allow-partial)")
        notes.append(f"merged without shard{'s' if len(missing) > 1 else ''} {listed}: the report is marked incomplete")
    cases = _cases(reports)
    adapters_data = _first_of_each([a for _, d in reports for a in d["adapters"]], "name")
    scenarios_data = _first_of_each([s for _, d in reports for s in d["scenarios"]], "id")
    adapters = _ordered([a["name"] for a in adapters_data], (c["adapter"] for c in cases))
    scenarios = _ordered([s["id"] for s in scenarios_data], (c["scenario"] for c in cases))
    rank_a = {name: i for i, name in enumerate(adapters)}
    rank_s = {name: i for i, name in enumerate(scenarios)}
    cases.sort(key=lambda c: (rank_s[c["scenario"]], rank_a[c["adapter"]], MODES.index(c["mode"])))
    problems = list(dict.fromkeys(str(p) for _, d in reports for p in d["problems"]))
    reason = "; ".join(incomplete) or None
    report: Report = {
        "report_format": first["report_format"],
        "suite_version": first["suite_version"],
        "suite": first["suite"],
        "selection": _selection(first.get("selection"), shards),
        "incomplete": reason,
        "summary": summary_of(cases, adapters, problems=len(problems), incomplete=reason is not None),
        "adapters": adapters_data,
        "scenarios": scenarios_data,
        "matrix": matrix_of(cases, adapters, scenarios),
        "defects": defects_of(cases, {a["name"]: a["wire_format"] for a in adapters_data}),
        "deviations": deviations_of(cases),
        "cases": cases,
        "provenance": _provenance([e for _, d in reports for e in d["provenance"]], cases),
        "problems": problems,
        "commands": _commands([c for _, d in reports for c in d.get("commands", [])]),
    }
    return MergedReport(report=report, notes=tuple(notes))


def _check_shape(source: str, data: Mapping[str, Any], schema: Mapping[str, Any] | None) -> None:
    if not isinstance(data, Mapping) or "cases" not in data or "report_format" not in data:
        raise UsageError(
            f"{source}: not a conformance JSON report (no report_format and cases); give the report.json that "
            "`conformance run` or `conformance certify` wrote"
        )
    version = data["report_format"]
    if type(version) is not int or version != REPORT_FORMAT:  # ``true`` is no format (yet ``== 1`` in Python)
        raise UsageError(
            f"{source}: report_format is {json.dumps(version)}, not {REPORT_FORMAT}: a report of another format, or "
            "edited; give the report.json that `conformance run` or `conformance certify` of this version wrote"
        )
    if schema is not None:
        from jsonschema import Draft202012Validator
        from jsonschema.exceptions import best_match

        error = best_match(Draft202012Validator(schema).iter_errors(data))
        if error is not None:
            where = "/".join(str(p) for p in error.absolute_path) or "the top level"
            raise UsageError(
                f"{source}: not a valid conformance JSON report (at {where}: {error.message}); give the report.json "
                "that `conformance run` or `conformance certify` wrote, unedited"
            )
    if not data.get("suite"):
        raise UsageError(
            f"{source}: carries no suite fingerprint (written by a conformance before reports carried one); re-run "
            "every shard with this conformance"
        )


def _same_suite(first_source: str, first: Mapping[str, Any], source: str, data: Mapping[str, Any]) -> None:
    theirs, ours = str(data["suite"]["fingerprint"]), str(first["suite"]["fingerprint"])
    if theirs != ours:
        raise UsageError(
            f"{source}: made by a different suite than {first_source} (fingerprint {theirs[:12]} vs {ours[:12]}: "
            "other scenarios, checks or equivalences); re-run every shard with the same conformance (and the same "
            "--scenarios-dir and --equivalences)"
        )
    mine, other = first.get("selection") or {}, data.get("selection") or {}
    differs = sorted(k for k in set(mine) | set(other) if k not in _NOT_SHARD and mine.get(k) != other.get(k))
    if differs:
        shown = "; ".join(f"{k}: {other.get(k)!r} there, {mine.get(k)!r} in {first_source}" for k in differs)
        raise UsageError(
            f"{source}: run with another selection than {first_source} ({shown}); run every shard with the same "
            "flags but --shard"
        )


def _shard_name(data: Mapping[str, Any], source: str) -> str:
    shard = (data.get("selection") or {}).get("shard")
    return f"shard {shard} ({source})" if shard else source


def _held(data: Mapping[str, Any]) -> list[str]:
    """The shards a report holds: its own, or those it was merged from."""
    selection = data.get("selection") or {}
    if selection.get("merged"):
        return [str(k) for k in selection["merged"]]
    return [str(selection["shard"])] if selection.get("shard") else []


def _shards(reports: Sequence[tuple[str, Mapping[str, Any]]]) -> tuple[list[str], list[int]]:
    """The shards given, sorted (empty: reports of unsharded runs), and the K of those missing."""
    held = [(source, _held(data)) for source, data in reports]
    sharded = [(source, shards) for source, shards in held if shards]
    if not sharded:
        return [], []
    plain = [source for source, shards in held if not shards]
    if plain:
        raise UsageError(
            f"{plain[0]}: not a shard (run without --shard), while {sharded[0][0]} is shard "
            f"{sharded[0][1][0]}: merge the shards of one run, or reports of unsharded runs, not both"
        )
    seen: dict[str, str] = {}
    counts: dict[int, str] = {}
    for source, shards in sharded:
        for shard in shards:
            counts.setdefault(int(shard.partition("/")[2]), source)
            if shard in seen:
                raise UsageError(
                    f"{source}: shard {shard} is also in {seen[shard]}: overlapping shards; give each shard's report "
                    "once"
                )
            seen[shard] = source
    if len(counts) > 1:
        (n1, s1), (n2, s2) = sorted(counts.items())[:2]
        raise UsageError(
            f"{s2} is a shard of {n2} and {s1} a shard of {n1}: every shard of a run is K/N with one N; run them again "
            "with the same N"
        )
    count = next(iter(counts))
    given = sorted(seen, key=lambda s: int(s.partition("/")[0]))
    indices = {int(s.partition("/")[0]) for s in given}
    return given, [k for k in range(1, count + 1) if k not in indices]


def _cases(reports: Sequence[tuple[str, Mapping[str, Any]]]) -> list[CaseData]:
    found: dict[tuple[str, str, str], str] = {}
    cases: list[CaseData] = []
    for source, data in reports:
        for case in data["cases"]:
            key = (str(case["adapter"]), str(case["scenario"]), str(case["mode"]))
            if key in found:
                raise UsageError(
                    f"{source}: case {'::'.join(key)} is also in {found[key]}: the reports overlap (a shard given "
                    "twice, or runs that are not shards of one run); give each case's report once"
                )
            found[key] = source
            cases.append(cast(CaseData, {**case, "id": "/".join(key)}))
    return cases


def _first_of_each(items: list[Any], key: str) -> list[Any]:
    chosen: dict[str, Any] = {}
    for item in items:
        chosen.setdefault(str(item[key]), item)
    return list(chosen.values())


def _selection(selection: Mapping[str, Any] | None, shards: list[str]) -> SelectionData | None:
    if selection is None:
        return None
    merged = dict(selection)
    merged["shard"] = None
    merged["merged"] = list(shards)
    return cast(SelectionData, merged)


def _provenance(entries: list[Mapping[str, Any]], cases: list[CaseData]) -> list[ProvenanceEntry]:
    """Each cassette once, with its provenance block and the merged cases that replayed it, in the
    report's order (as ``build_report`` lists them)."""
    blocks: dict[str, Any] = {}
    for entry in entries:
        if blocks.get(str(entry["cassette"])) is None:
            blocks[str(entry["cassette"])] = entry.get("provenance")
    users: dict[str, list[str]] = {path: [] for path in blocks}
    for case in cases:
        if case["cassette"] is not None:
            users.setdefault(case["cassette"], []).append(case["id"])
    return [{"cassette": path, "cases": users[path], "provenance": blocks.get(path)} for path in sorted(users)]


def _commands(commands: list[Mapping[str, Any]]) -> list[CommandData]:
    seen: dict[tuple[str, tuple[str, ...]], CommandData] = {}
    for command in commands:
        seen.setdefault((str(command["scenario"]), tuple(command["argv"])), cast(CommandData, dict(command)))
    return list(seen.values())
