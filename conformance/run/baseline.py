"""Baselines: adopt the suite in CI before every check passes (``--baseline``, ``--update-baseline``,
``--strict-baseline`` of ``conformance run`` and ``conformance certify``; format in ``docs/ci.md``).

A baseline file lists the failures a project knows about, each with the reason it is accepted::

    version: 1
    entries:
      - case: "anthropic::basic/get_time::stream"    # adapter (or client/wire) :: scenario :: mode
        check: roundtrip.calls                         # the failing check id; omitted for an ERROR case
        reason: "ACME-12: our decoder drops the second call"

A failure listed there becomes XFAIL with the baseline's reason (in every report); a failure not
listed fails the run as before; an entry whose check now passes is *stale*: a warning line, or a
STALE verdict that fails the run under ``--strict-baseline``, so the baseline only shrinks.

Pure functions (parse, validate, apply, render) and one function with the file I/O
(``read_baseline`` / ``write_baseline`` are its two directions).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

from conformance.errors import ConformanceError, UsageError
from conformance.verdicts import CaseResult, CheckVerdict, RunResult, worst

__all__ = [
    "BASELINE_VERSION",
    "PLACEHOLDER",
    "AppliedBaseline",
    "Baseline",
    "BaselineEntry",
    "apply_baseline",
    "baseline_case",
    "baseline_file",
    "case_key",
    "current_failures",
    "parse_baseline",
    "read_baseline",
    "render_baseline",
    "updated_entries",
    "write_baseline",
]

BASELINE_VERSION = 1
PLACEHOLDER = ""
"""The reason ``--update-baseline`` writes: a baseline holding it is refused until it is filled in."""
_MODES = ("non_stream", "stream")
_ENTRY_KEYS = ("case", "check", "reason")
_TOP_KEYS = ("version", "entries")


@dataclass(frozen=True, kw_only=True)
class BaselineEntry:
    case: str
    """``adapter::scenario::mode`` (certify: ``client/wire::scenario::mode``), as ``-k`` names cases."""
    check: str | None = None
    """The failing check id; ``None``: the whole case errors."""
    reason: str = PLACEHOLDER


@dataclass(frozen=True, kw_only=True)
class Baseline:
    source: str
    """The file it came from (named in every message)."""
    entries: tuple[BaselineEntry, ...] = ()


@dataclass(frozen=True, kw_only=True)
class AppliedBaseline:
    result: RunResult
    """The run with baselined failures as XFAIL (and, under strict, stale entries as STALE)."""
    baselined: int
    """How many failing checks (or erroring cases) the baseline accepted."""
    stale: tuple[str, ...]
    """One line per entry that passes now (warnings unless strict)."""


def case_key(case: CaseResult) -> str:
    return f"{case.adapter}::{case.scenario}::{case.mode}"


# -- parse and validate ----------------------------------------------------------------------------------


def parse_baseline(data: Any, source: str, *, check_ids: Collection[str], require_reasons: bool = True) -> Baseline:
    """The baseline in ``data`` (a loaded YAML document), validated; ``UsageError`` names the file, the
    entry and what to do."""

    def bad(where: str, problem: str) -> UsageError:
        return UsageError(f"baseline {source}: {where}: {problem}")

    if data is None:
        data = {"version": BASELINE_VERSION, "entries": []}
    if not isinstance(data, dict):
        raise bad("top level", f"expected a mapping with {', '.join(_TOP_KEYS)}, got {type(data).__name__}")
    unknown = [str(k) for k in data if k not in _TOP_KEYS]
    if unknown:
        raise bad("top level", f"unknown key {', '.join(map(repr, unknown))} (known: {', '.join(_TOP_KEYS)})")
    if data.get("version") != BASELINE_VERSION:
        raise bad("version", f"expected {BASELINE_VERSION}, got {data.get('version')!r}")
    raw = data.get("entries")
    raw = [] if raw is None else raw
    if not isinstance(raw, list):
        raise bad("entries", f"expected a list, got {type(raw).__name__}")
    entries: list[BaselineEntry] = []
    seen: set[tuple[str, str | None]] = set()
    unexplained: list[str] = []
    for index, item in enumerate(raw):
        where = f"entry {index + 1}"
        if not isinstance(item, dict):
            raise bad(where, f"expected a mapping with {', '.join(_ENTRY_KEYS)}, got {type(item).__name__}")
        if isinstance(item.get("case"), str):
            where = f"entry {index + 1} ({item['case']}{' ' + str(item['check']) if item.get('check') else ''})"
        unknown = [str(k) for k in item if k not in _ENTRY_KEYS]
        if unknown:
            raise bad(where, f"unknown key {', '.join(map(repr, unknown))} (known: {', '.join(_ENTRY_KEYS)})")
        case, check, reason = item.get("case"), item.get("check"), item.get("reason", PLACEHOLDER)
        if not isinstance(case, str):
            raise bad(where, f"'case' must be a string adapter::scenario::mode, got {case!r}")
        parts = case.split("::")
        if len(parts) != 3 or not all(parts) or parts[2] not in _MODES:
            raise bad(where, f"'case' must be adapter::scenario::mode with mode non_stream or stream, got {case!r}")
        if check is not None:
            if not isinstance(check, str):
                raise bad(where, f"'check' must be a check id string, got {check!r}")
            if check not in check_ids:
                raise bad(where, f"unknown check id {check!r} (valid: {', '.join(sorted(check_ids))})")
        if reason is None:
            reason = PLACEHOLDER
        if not isinstance(reason, str):
            raise bad(where, f"'reason' must be a string, got {reason!r}")
        if require_reasons and not reason.strip():
            unexplained.append(where)
        if (case, check) in seen:
            raise bad(where, "listed twice: delete one of them")
        seen.add((case, check))
        entries.append(BaselineEntry(case=case, check=check, reason=reason.strip()))
    if unexplained:
        more = f" (and {len(unexplained) - 1} more: {'; '.join(unexplained[1:])})" if len(unexplained) > 1 else ""
        raise bad(
            unexplained[0],
            f"no reason given{more}: write why this failure is accepted (an issue link, the known bug) in its "
            "'reason', or fix the failure and delete the entry",
        )
    return Baseline(source=source, entries=tuple(entries))


# -- apply -----------------------------------------------------------------------------------------------


def apply_baseline(result: RunResult, baseline: Baseline, *, strict: bool = False) -> AppliedBaseline:
    """``result`` with ``baseline`` applied: a listed failing check (or erroring case) becomes XFAIL
    with the baseline's reason; an entry whose check (or case) passes now is stale: STALE under
    ``strict``, else only reported in ``stale``. Entries for cases or checks this run did not run are
    ignored."""
    by_case: dict[str, dict[str | None, BaselineEntry]] = {}
    for entry in baseline.entries:
        by_case.setdefault(entry.case, {})[entry.check] = entry
    cases: list[CaseResult] = []
    baselined = 0
    stale: list[str] = []
    for case in result.cases:
        entries = by_case.get(case_key(case))
        if not entries:
            cases.append(case)
            continue
        new_case, accepted, found = _apply_case(case, entries, baseline.source, strict)
        cases.append(new_case)
        baselined += accepted
        stale += found
    return AppliedBaseline(result=replace(result, cases=tuple(cases)), baselined=baselined, stale=tuple(stale))


def baseline_case(case: CaseResult, baseline: Baseline, *, strict: bool = False) -> CaseResult:
    """One case with ``baseline`` applied (what ``apply_baseline`` makes of it; for progress lines)."""
    entries = {e.check: e for e in baseline.entries if e.case == case_key(case)}
    return _apply_case(case, entries, baseline.source, strict)[0] if entries else case


def _apply_case(
    case: CaseResult, entries: dict[str | None, BaselineEntry], source: str, strict: bool
) -> tuple[CaseResult, int, list[str]]:
    key = case_key(case)
    whole = entries.get(None)
    if case.status == "error":
        if whole is None:
            return case, 0, []
        why = whole.reason
        checks = tuple(
            replace(v, status="xfail", message=_baselined(source, why, v.message)) if v.status == "error" else v
            for v in case.checks
        )
        message = _baselined(source, whole.reason, case.message)
        return replace(case, status="xfail", checks=checks, message=message), 1, []
    stale: list[str] = []
    if whole is not None and case.status in ("pass", "fail", "xfail", "stale"):
        stale.append(f"{key}: baselined as an ERROR in {source} ({whole.reason}) but no longer errors")
    checks_out: list[CheckVerdict] = []
    accepted = 0
    for verdict in case.checks:
        entry = entries.get(verdict.check)
        if entry is None or verdict.status not in ("pass", "fail"):
            checks_out.append(verdict)
        elif verdict.status == "fail":
            message = _baselined(source, entry.reason, verdict.message)
            checks_out.append(replace(verdict, status="xfail", message=message))
            accepted += 1
        else:
            line = f"{key} {verdict.check}: baselined in {source} ({entry.reason}) but passes now: delete the entry"
            stale.append(line)
            checks_out.append(replace(verdict, status="stale", message=line) if strict else verdict)
    if not accepted and not (strict and stale):
        return case, 0, stale
    status = worst([v.status for v in checks_out]) if checks_out else case.status
    message = case.message
    if strict and whole is not None:
        status = worst([status, "stale"])
        message = stale[0]
    return replace(case, status=status, checks=tuple(checks_out), message=message), accepted, stale


def _baselined(source: str, reason: str, was: str) -> str:
    return f"baselined ({source}): {reason}" + (f" [{was}]" if was else "")


# -- update ----------------------------------------------------------------------------------------------


def current_failures(result: RunResult) -> list[BaselineEntry]:
    """The failures of ``result`` as baseline entries with the placeholder reason: per failing check
    of a FAIL case, one entry (no check) per ERROR case."""
    entries: list[BaselineEntry] = []
    for case in result.cases:
        if case.status == "error":
            entries.append(BaselineEntry(case=case_key(case), check=None))
        elif case.status == "fail":
            for verdict in case.checks:
                if verdict.status == "fail":
                    entries.append(BaselineEntry(case=case_key(case), check=verdict.check))
    return entries


def updated_entries(result: RunResult, previous: Baseline | None) -> list[BaselineEntry]:
    """The baseline ``--update-baseline`` writes: the current failures of ``result`` (keeping the reason
    an entry already had), plus the previous entries for cases this run did not run."""
    reasons = {(e.case, e.check): e.reason for e in previous.entries} if previous else {}
    ran = {case_key(c) for c in result.cases}
    fresh = [replace(e, reason=reasons.get((e.case, e.check), PLACEHOLDER)) for e in current_failures(result)]
    kept = [e for e in previous.entries if e.case not in ran] if previous else []
    unique = {(e.case, e.check or ""): e for e in [*kept, *fresh]}
    return [unique[k] for k in sorted(unique)]


def render_baseline(entries: Iterable[BaselineEntry]) -> str:
    """The baseline file's text (a documented header, then the entries)."""
    items = []
    for entry in entries:
        item: dict[str, str] = {"case": entry.case}
        if entry.check is not None:
            item["check"] = entry.check
        item["reason"] = entry.reason
        items.append(item)
    header = (
        "# conformance baseline (docs/ci.md): known failures that do not fail the run.\n"
        "# Every entry needs a reason (why it is accepted: an issue link, the known bug); an entry\n"
        "# with an empty reason is refused. Delete an entry once its check passes.\n"
    )
    body = yaml.safe_dump(
        {"version": BASELINE_VERSION, "entries": items}, sort_keys=False, allow_unicode=True, width=1000
    )
    return header + body


# -- the file --------------------------------------------------------------------------------------------


def baseline_file(path: Path, text: str | None = None) -> str:
    """The file I/O of baselines: read ``path`` (``text`` None) or write ``text`` to it; ``UsageError``
    when it cannot be read."""
    if text is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return text
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise UsageError(f"baseline {path}: no such file (write one with --update-baseline)") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"baseline {path}: cannot read it ({exc})") from exc


def read_baseline(path: Path, *, check_ids: Collection[str], require_reasons: bool = True) -> Baseline:
    """The baseline at ``path``, validated (``UsageError`` on any problem)."""
    from conformance.traffic.safe_yaml import load_yaml

    text = baseline_file(path)
    try:
        data = load_yaml(text)
    except (yaml.YAMLError, ConformanceError, ValueError) as exc:
        raise UsageError(f"baseline {path}: not valid YAML ({' '.join(str(exc).split())})") from exc
    return parse_baseline(data, str(path), check_ids=check_ids, require_reasons=require_reasons)


def write_baseline(path: Path, entries: Iterable[BaselineEntry]) -> str:
    """Write ``entries`` as the baseline at ``path``; returns the text written."""
    return baseline_file(path, render_baseline(entries))
