"""Baselines: adopt the suite in CI before every check passes (``--baseline``, ``--update-baseline``,
``--strict-baseline`` of ``conformance run`` and ``conformance certify``; format in ``docs/ci.md``).

A baseline file lists the defects a project knows about, by *signature* (``conformance.verdicts.signature``:
check, JSON path with its indices generalised, expected and actual kinds), per case, with the reason
they are accepted::

    version: 2
    entries:
      - case: "acme::basic/text_before_call::stream"   # adapter (or client/wire) :: scenario :: mode
        reason: "ACME-12: our decoder drops the text before a call"
        signatures:                                     # the accepted defects (report.json: "signature")
          - "roundtrip.text at $.text: string -> string"
      - case: "acme::errors/stream_disconnect::stream"
        reason: "ACME-13: our retry wrapper hangs on a cut stream"   # no signatures: the case ERRORs

A failing check whose defect findings all have listed signatures becomes XFAIL with the entry's reason
(in every report); a check with one defect whose signature is not listed still FAILs, and its message
names the new signature(s): a known defect stays known, and a new one in the same case and check
fails CI (version 1 accepted a whole failing check, which masked them). Only ``defect`` findings
count: ``unasked``, ``note`` and ``left`` findings never fail a check, and a ``deviated`` check or case
(the model behind a live server did not do what the scenario asks) is no failure to baseline. An
entry without signatures accepts the case being an ERROR. An entry without a reason accepts nothing:
reading a file that has one is refused (``missing_reasons`` says what to do and lists them), and
``--update-baseline``, which writes them for new failures, leaves those failing and fails the run
until they are filled in. A listed signature that no longer appears in a check that ran is *stale*:
a warning line, or a STALE verdict that fails the run under ``--strict-baseline``, so the baseline
only shrinks.

Pure functions (parse, validate, apply, update, render) and one function with the file I/O
(``baseline_file``; ``read_baseline`` / ``write_baseline`` are its two directions).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from conformance.errors import ConformanceError, InputLimitError, UsageError
from conformance.scenarios.problems import closest
from conformance.verdicts import (
    VALUE_KINDS,
    CaseResult,
    CheckVerdict,
    RunResult,
    Status,
    generalised_path,
    signature,
    worst,
)

__all__ = [
    "BASELINE_VERSION",
    "PLACEHOLDER",
    "AppliedBaseline",
    "Baseline",
    "BaselineEntry",
    "Version1Entry",
    "apply_baseline",
    "baseline_case",
    "baseline_file",
    "case_key",
    "current_failures",
    "missing_reasons",
    "new_defects_lines",
    "parse_baseline",
    "read_baseline",
    "render_baseline",
    "signature_problem",
    "unmigrated",
    "updated_entries",
    "write_baseline",
]

BASELINE_VERSION = 2
PLACEHOLDER = ""
"""The reason ``--update-baseline`` writes: a baseline holding it is refused until it is filled in."""
_MODES = ("non_stream", "stream")
_ENTRY_KEYS = ("case", "reason", "signatures")
_VERSION1_KEYS = ("case", "check", "reason")
_TOP_KEYS = ("version", "entries")
_JUDGED: frozenset[Status] = frozenset({"pass", "fail", "left", "xfail", "stale"})
"""The statuses of a check that ran to a judgement (its findings say which defects it has); an
``unsupported`` or ``error`` check says nothing about them, nor does a ``deviated`` one (the model did
not do what the scenario asks, so the script could not be judged), so its listed signatures are not
stale, and ``--update-baseline`` keeps them."""
_EXAMPLE = "roundtrip.text at $.text: string -> string"
_FORM = "<check> at <path>: <expected-kind> -> <actual-kind>"
_SIGNATURE = re.compile(r"(?P<check>\S+) at (?P<path>.+): (?P<expected>\S+) -> (?P<actual>\S+)")
"""``conformance.verdicts.signature``'s form; the path is greedy, so a ``: `` inside it stays in it."""
_SHOWN = 3
"""Cases named per new signature in the run's note (the reports name them all)."""
_LISTED = 20
"""Entries without a reason listed one a line (``missing_reasons``); the rest are counted."""


@dataclass(frozen=True, kw_only=True)
class BaselineEntry:
    """Defects of one case accepted for one reason (a case may have several entries, one per reason)."""

    case: str
    """``adapter::scenario::mode`` (certify: ``client/wire::scenario::mode``), as ``-k`` names cases."""
    signatures: tuple[str, ...] = ()
    """The signatures of the accepted defects; empty: the entry accepts the case being an ERROR."""
    reason: str = PLACEHOLDER
    """Why they are accepted (an issue link, the known bug); empty only while ``--update-baseline``
    waits for it to be filled in."""


@dataclass(frozen=True, kw_only=True)
class Version1Entry:
    """An entry of a version-1 baseline (a whole failing check), read only to carry its reason over to
    the signatures of that check (``--update-baseline``)."""

    case: str
    """``adapter::scenario::mode``."""
    check: str | None
    """The failing check id; ``None``: the case ERRORs."""
    reason: str
    """Its reason (possibly empty)."""


@dataclass(frozen=True, kw_only=True)
class Baseline:
    """A parsed, validated baseline file."""

    source: str
    """The file it came from (named in every message)."""
    entries: tuple[BaselineEntry, ...] = ()
    """Its entries (none when the file is version 1)."""
    version1: tuple[Version1Entry, ...] = ()
    """The entries of a version-1 file being migrated (``parse_baseline(..., migrate=True)``)."""


@dataclass(frozen=True, kw_only=True)
class AppliedBaseline:
    """A run judged against a baseline, and what to say about it."""

    result: RunResult
    """The run with accepted failures as XFAIL (and, under strict, stale entries as STALE)."""
    baselined: int
    """How many failing checks (or erroring cases) the baseline accepted."""
    stale: tuple[str, ...]
    """One line per listed signature (or ERROR entry) that no longer appears (warnings unless strict)."""
    new: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Each defect signature that fails the run because the baseline does not list it -> its cases."""


def case_key(case: CaseResult) -> str:
    return f"{case.adapter}::{case.scenario}::{case.mode}"


def _check_of(text: str) -> str:
    return text.partition(" at ")[0]


def _not_run(case: CaseResult) -> bool:
    """Did the case not run, so that nothing can be said of its ERROR entry: it is unsupported, or its
    cassette is stale (a STALE case without checks: re-recorded, it may still error)."""
    return case.status == "unsupported" or (case.status == "stale" and not case.checks)


# -- parse and validate ----------------------------------------------------------------------------------


def signature_problem(text: str, check_ids: Collection[str]) -> str:
    """What is wrong with ``text`` as a signature and what to write instead (``""``: nothing). A valid
    one is what ``conformance.verdicts.signature`` writes: ``check at path: expected-kind ->
    actual-kind``, a known check id, the path's indices generalised, kinds of ``VALUE_KINDS``."""
    match = _SIGNATURE.fullmatch(text)
    if match is None:
        return (
            f"not a signature: write {_FORM!r} (e.g. {_EXAMPLE!r}), as report.json shows it in each finding's "
            "'signature' and --update-baseline writes it"
        )
    check, path = match["check"], match["path"]
    if check not in check_ids:
        hint = closest(check, check_ids)
        return f"unknown check id {check!r} ({hint + ' ' if hint else ''}valid: {', '.join(sorted(check_ids))})"
    for side in ("expected", "actual"):
        if match[side] not in VALUE_KINDS:
            hint = closest(match[side], VALUE_KINDS)
            return f"unknown {side} kind {match[side]!r} ({hint + ' ' if hint else ''}valid: {', '.join(VALUE_KINDS)})"
    if path != path.strip():
        return f"the path {path!r} has spaces around it: write {path.strip()!r}"
    general = generalised_path(path)
    if general != path:
        return f"the path {path!r} names an index, which a signature generalises: write {general!r}"
    return ""


def parse_baseline(
    data: Any, source: str, *, check_ids: Collection[str], require_reasons: bool = True, migrate: bool = False
) -> Baseline:
    """The baseline in ``data`` (a loaded YAML document), validated; ``UsageError`` names the file, the
    entry and what to do. A version-1 file is refused with how to migrate it, unless ``migrate``
    (``--update-baseline``): then its entries come back in ``Baseline.version1``."""

    def bad(where: str, problem: str) -> UsageError:
        return UsageError(f"baseline {source}: {where}: {problem}")

    if data is None:
        data = {"version": BASELINE_VERSION, "entries": []}
    if not isinstance(data, dict):
        raise bad("top level", f"expected a mapping with {', '.join(_TOP_KEYS)}, got {type(data).__name__}")
    unknown = [str(k) for k in data if k not in _TOP_KEYS]
    if unknown:
        raise bad("top level", f"unknown key {', '.join(map(repr, unknown))} (known: {', '.join(_TOP_KEYS)})")
    version = data.get("version")
    if isinstance(version, bool) or (version is not None and not isinstance(version, int)):
        shown = str(version).lower() if isinstance(version, bool) else repr(version)
        kind = "a boolean" if isinstance(version, bool) else f"a {type(version).__name__}"
        raise bad("version", f"expected {BASELINE_VERSION}, got {shown} ({kind}, not a whole number)")
    if version == 1 and not migrate:
        raise bad(
            "version",
            "version 1 accepts whole failing checks, which would mask a new defect in a check that already "
            f"fails; version {BASELINE_VERSION} lists the signatures of the accepted defects. Migrate: run the "
            "same command once with --update-baseline (it writes the signatures this run finds, keeping each "
            "entry's reason for the signatures of its check), then read the reasons over",
        )
    if version not in (BASELINE_VERSION, 1):
        raise bad("version", f"expected {BASELINE_VERSION}, got {version!r}")
    raw = data.get("entries")
    raw = [] if raw is None else raw
    if not isinstance(raw, list):
        raise bad("entries", f"expected a list, got {type(raw).__name__}")
    if version == 1:
        return Baseline(source=source, version1=tuple(_version1_entries(raw, bad, check_ids)))
    entries: list[BaselineEntry] = []
    seen: dict[tuple[str, str | None], int] = {}
    for index, item in enumerate(raw):
        where = f"entry {index + 1}"
        if not isinstance(item, dict):
            raise bad(where, f"expected a mapping with {', '.join(_ENTRY_KEYS)}, got {type(item).__name__}")
        if isinstance(item.get("case"), str):
            where = f"entry {index + 1} ({item['case']})"
        if "check" in item:
            raise bad(
                where,
                f"'check' is version 1; version {BASELINE_VERSION} lists the accepted defects in 'signatures' "
                "(report.json shows each finding's signature; --update-baseline writes them)",
            )
        unknown = [str(k) for k in item if k not in _ENTRY_KEYS]
        if unknown:
            raise bad(where, f"unknown key {', '.join(map(repr, unknown))} (known: {', '.join(_ENTRY_KEYS)})")
        case = _case(item.get("case"), where, bad)
        reason = _reason(item.get("reason", PLACEHOLDER), where, bad)
        signatures = _signatures(item, where, bad, check_ids)
        for sig in signatures or (None,):
            if (case, sig) in seen:
                what = "the ERROR of this case is" if sig is None else f"signature {sig!r} is"
                raise bad(where, f"{what} listed twice (also in entry {seen[case, sig]}): delete one of them")
            seen[case, sig] = index + 1
        entries.append(BaselineEntry(case=case, signatures=signatures, reason=reason))
    missing = missing_reasons(source, entries)
    if require_reasons and missing:
        raise UsageError("\n".join(missing))
    return Baseline(source=source, entries=tuple(entries))


def missing_reasons(source: str, entries: Sequence[BaselineEntry]) -> list[str]:
    """What to do about the entries of the baseline ``source`` (``entries``, in the file's order) that
    have no reason, in lines: the instruction first, then one line per entry (its number, case and
    first signature; the first ``_LISTED``, then how many more). None: every entry has a reason."""
    missing = [(number, entry) for number, entry in enumerate(entries, start=1) if not entry.reason]
    if not missing:
        return []
    lines = [
        f"baseline {source}: give each entry a reason (an issue link, the known bug), or fix the failure and "
        "delete the entry",
        f"{_entries(len(missing))} of {len(entries)} {'has' if len(missing) == 1 else 'have'} none (and "
        f"accept{'s' * (len(missing) == 1)} nothing until then):",
    ]
    for number, entry in missing[:_LISTED]:
        if not entry.signatures:
            what = "its ERROR (no signatures)"
        else:
            more = len(entry.signatures) - 1
            what = entry.signatures[0] + (f" (and {more} more signature{'s' * (more > 1)})" if more else "")
        lines.append(f"  entry {number} ({entry.case}): {what}")
    if len(missing) > _LISTED:
        lines.append(f"  and {len(missing) - _LISTED} more")
    return lines


def _entries(count: int) -> str:
    return f"{count} entr{'y' if count == 1 else 'ies'}"


def _case(case: Any, where: str, bad: Any) -> str:
    if not isinstance(case, str):
        raise bad(where, f"'case' must be a string adapter::scenario::mode, got {case!r}")
    parts = case.split("::")
    if len(parts) != 3 or not all(parts) or parts[2] not in _MODES:
        raise bad(where, f"'case' must be adapter::scenario::mode with mode non_stream or stream, got {case!r}")
    return case


def _reason(reason: Any, where: str, bad: Any) -> str:
    if reason is None:
        return PLACEHOLDER
    if not isinstance(reason, str):
        raise bad(where, f"'reason' must be a string, got {reason!r}")
    return reason.strip()


def _signatures(item: Mapping[str, Any], where: str, bad: Any, check_ids: Collection[str]) -> tuple[str, ...]:
    if "signatures" not in item:
        return ()
    raw = item["signatures"]
    if not isinstance(raw, list) or not raw:
        got = "an empty list" if raw == [] else repr(raw)
        raise bad(
            where,
            f"'signatures' must be a list of signatures, one per line (- {_EXAMPLE!r}), got {got}; leave the key "
            "out for an entry that accepts the case being an ERROR",
        )
    out: list[str] = []
    for n, sig in enumerate(raw, start=1):
        if not isinstance(sig, str):
            raise bad(where, f"signature {n} must be a string {_FORM!r}, got {sig!r}")
        problem = signature_problem(sig, check_ids)
        if problem:
            raise bad(where, f"signature {n} {sig!r}: {problem}")
        if sig in out:
            raise bad(where, f"signature {sig!r} is listed twice in this entry: delete one of them")
        out.append(sig)
    return tuple(out)


def _version1_entries(raw: list[Any], bad: Any, check_ids: Collection[str]) -> list[Version1Entry]:
    """The entries of a version-1 file, validated as version 1 validated them (reasons may be empty:
    it is being migrated)."""
    entries: list[Version1Entry] = []
    seen: set[tuple[str, str | None]] = set()
    for index, item in enumerate(raw):
        where = f"entry {index + 1}"
        if not isinstance(item, dict):
            raise bad(where, f"expected a mapping with {', '.join(_VERSION1_KEYS)}, got {type(item).__name__}")
        if isinstance(item.get("case"), str):
            where = f"entry {index + 1} ({item['case']}{' ' + str(item['check']) if item.get('check') else ''})"
        unknown = [str(k) for k in item if k not in _VERSION1_KEYS]
        if unknown:
            raise bad(where, f"unknown key {', '.join(map(repr, unknown))} (known: {', '.join(_VERSION1_KEYS)})")
        case, check = _case(item.get("case"), where, bad), item.get("check")
        if check is not None:
            if not isinstance(check, str):
                raise bad(where, f"'check' must be a check id string, got {check!r}")
            if check not in check_ids:
                raise bad(where, f"unknown check id {check!r} (valid: {', '.join(sorted(check_ids))})")
        if (case, check) in seen:
            raise bad(where, "listed twice: delete one of them")
        seen.add((case, check))
        entries.append(Version1Entry(case=case, check=check, reason=_reason(item.get("reason"), where, bad)))
    return entries


# -- apply -----------------------------------------------------------------------------------------------


def apply_baseline(result: RunResult, baseline: Baseline, *, strict: bool = False) -> AppliedBaseline:
    """``result`` with ``baseline`` applied: a failing check whose defects are all listed for its case
    (or an erroring case with an entry without signatures) becomes XFAIL with the entries' reasons; a
    failing check with an unlisted defect stays FAIL, its message naming the new signatures; so does one
    with a defect listed without a reason (``PLACEHOLDER``: an entry without one accepts nothing). A listed
    signature whose check ran and no longer has it (or an ERROR entry of a case that ran and no longer
    errors) is stale: STALE under ``strict``, else only reported in ``stale``. Entries for cases or
    checks this run did not run are ignored."""
    by_case = _by_case(baseline)
    cases: list[CaseResult] = []
    baselined = 0
    stale: list[str] = []
    new: dict[str, list[str]] = {}
    for case in result.cases:
        judged = _Judged.of(case, by_case.get(case_key(case), ()), baseline.source, strict)
        cases.append(judged.case)
        baselined += judged.accepted
        stale += judged.stale
        for sig in judged.new:
            new.setdefault(sig, []).append(case_key(case))
    return AppliedBaseline(
        result=replace(result, cases=tuple(cases)),
        baselined=baselined,
        stale=tuple(stale),
        new={sig: tuple(keys) for sig, keys in new.items()},
    )


def baseline_case(case: CaseResult, baseline: Baseline, *, strict: bool = False) -> CaseResult:
    """One case with ``baseline`` applied (what ``apply_baseline`` makes of it; for progress lines)."""
    entries = tuple(e for e in baseline.entries if e.case == case_key(case))
    return _Judged.of(case, entries, baseline.source, strict).case


def new_defects_lines(applied: AppliedBaseline, source: str) -> list[str]:
    """One line per defect signature the baseline does not list, with the cases it appears in."""
    lines = []
    for sig, keys in applied.new.items():
        shown = ", ".join(keys[:_SHOWN]) + (f" and {len(keys) - _SHOWN} more" if len(keys) > _SHOWN else "")
        lines.append(
            f"new defect (not in baseline {source}): {sig} in {len(keys)} case{'s' * (len(keys) > 1)}: {shown}"
        )
    return lines


def _by_case(baseline: Baseline) -> dict[str, tuple[BaselineEntry, ...]]:
    grouped: dict[str, list[BaselineEntry]] = {}
    for entry in baseline.entries:
        grouped.setdefault(entry.case, []).append(entry)
    return {case: tuple(entries) for case, entries in grouped.items()}


def _defects(verdict: CheckVerdict) -> list[str]:
    """The signatures of ``verdict``'s defect findings, each once, in order."""
    return list(dict.fromkeys(signature(f) for f in verdict.findings if f.kind == "defect"))


@dataclass(frozen=True, kw_only=True)
class _Judged:
    """One case judged against its entries."""

    case: CaseResult
    """The case with its accepted failures as XFAIL (and, under strict, its stale entries as STALE)."""
    accepted: int
    """How many failing checks (and its ERROR) the entries accepted."""
    stale: tuple[str, ...]
    """One line per listed signature (or ERROR entry) that no longer appears."""
    new: tuple[str, ...]
    """The signatures of its failing checks' defects that no entry lists."""

    @classmethod
    def of(cls, case: CaseResult, entries: Sequence[BaselineEntry], source: str, strict: bool) -> _Judged:
        key = case_key(case)
        listed = {sig: entry.reason for entry in entries for sig in entry.signatures}
        whole = next((entry for entry in entries if not entry.signatures), None)
        accepts_error = whole is not None and bool(whole.reason)  # without a reason, an entry accepts nothing
        judged = [v for v in case.checks if v.status in _JUDGED]
        found = {sig for v in judged for sig in _defects(v)}
        ran = {v.check for v in judged}
        stale_by_check: dict[str, list[str]] = {}
        for sig, reason in listed.items():
            if _check_of(sig) in ran and sig not in found:
                line = f"{key}: {sig}: baselined in {source} ({reason}) but no longer found: delete it"
                stale_by_check.setdefault(_check_of(sig), []).append(line)
        stale = [line for lines in stale_by_check.values() for line in lines]
        error_accepted = case.status == "error" and accepts_error
        error_stale = whole is not None and case.status != "error" and not _not_run(case)
        if whole is not None and error_stale:
            stale.insert(0, f"{key}: baselined as an ERROR in {source} ({whole.reason}) but no longer errors")
        checks: list[CheckVerdict] = []
        accepted = int(error_accepted)
        new: list[str] = []
        for verdict in case.checks:
            if verdict.status == "error" and whole is not None and accepts_error:
                verdict = replace(verdict, status="xfail", message=_baselined(source, [whole.reason], verdict.message))
            elif verdict.status == "fail":
                defects = _defects(verdict)
                unlisted = [sig for sig in defects if sig not in listed]
                unexplained = [sig for sig in defects if listed.get(sig) == PLACEHOLDER]
                if defects and not unlisted and not unexplained:
                    reasons = [listed[sig] for sig in defects]
                    verdict = replace(verdict, status="xfail", message=_baselined(source, reasons, verdict.message))
                    accepted += 1
                else:
                    new += unlisted
                    verdict = replace(verdict, message=_new(source, unlisted, unexplained, verdict.message))
            lines = stale_by_check.get(verdict.check, [])
            if strict and lines and verdict.status in _JUDGED:
                said = [verdict.message] if verdict.status == "fail" else []
                verdict = replace(verdict, status=worst([verdict.status, "stale"]), message="\n".join([*said, *lines]))
            checks.append(verdict)
        if tuple(checks) == case.checks and not error_accepted and not (strict and error_stale):
            return cls(case=case, accepted=accepted, stale=tuple(stale), new=tuple(new))
        statuses = [v.status for v in checks]
        message = case.message
        if case.status == "error" and not error_accepted:
            status: Status = "error"  # the case itself crashed or hung: no entry accepts that
        elif error_accepted:
            status = worst([*statuses, "xfail"])
            message = _baselined(source, [whole.reason if whole else ""], case.message)
        else:
            status = worst(statuses)
        if strict and error_stale:
            status, message = worst([status, "stale"]), stale[0]
        out = replace(case, status=status, checks=tuple(checks), message=message)
        return cls(case=out, accepted=accepted, stale=tuple(stale), new=tuple(new))


def _baselined(source: str, reasons: Iterable[str], was: str) -> str:
    return f"baselined ({source}): {'; '.join(dict.fromkeys(reasons))}" + (f" [{was}]" if was else "")


def _new(source: str, unlisted: Sequence[str], unexplained: Sequence[str], was: str) -> str:
    said = []
    if unlisted:  # none: a FAIL without a defect finding, nothing a signature could accept
        what = "new defect" if len(unlisted) == 1 else "new defects"
        said.append(f"{what} (not in baseline {source}): {'; '.join(unlisted)}")
    if unexplained:  # only while --update-baseline waits for the reasons
        said.append(f"listed without a reason in baseline {source}: {'; '.join(unexplained)}")
    if not said:
        return was
    return "; ".join(said) + (f" [{was}]" if was else "")


# -- update ----------------------------------------------------------------------------------------------


def current_failures(result: RunResult) -> list[BaselineEntry]:
    """The failures of ``result`` as baseline entries with the placeholder reason: per case, one entry
    with the signatures of the defects of its failing checks, and one without signatures when it
    ERRORs."""
    entries: list[BaselineEntry] = []
    for case in result.cases:
        if case.status == "error":
            entries.append(BaselineEntry(case=case_key(case)))
        signatures = [sig for v in case.checks if v.status == "fail" for sig in _defects(v)]
        if signatures:
            entries.append(BaselineEntry(case=case_key(case), signatures=tuple(dict.fromkeys(signatures))))
    return entries


def updated_entries(result: RunResult, previous: Baseline | None) -> list[BaselineEntry]:
    """The baseline ``--update-baseline`` writes: the current failures of ``result``, each signature
    with the reason the previous baseline gave it (a version-1 baseline: the reason of its entry for
    the signature's check), one entry per case and reason; plus what this run could not judge, as it
    was: the entries of cases it did not run, the signatures of checks that did not run (``--checks``)
    or erred, the ERROR entry of a case that did not run now (unsupported, or its cassette stale)."""
    previous = previous or Baseline(source="")
    given = {(e.case, sig): e.reason for e in previous.entries for sig in e.signatures or (None,)}
    version1 = {(o.case, o.check): o.reason for o in previous.version1}

    def reason_of(case: str, sig: str | None) -> str:
        check = None if sig is None else _check_of(sig)
        return given.get((case, sig)) or version1.get((case, check)) or PLACEHOLDER

    ran = {case_key(c): c for c in result.cases}
    errors: dict[str, str] = {}
    accepted: dict[tuple[str, str], list[str]] = {}
    for entry in current_failures(result):
        if not entry.signatures:
            errors[entry.case] = reason_of(entry.case, None)
        for sig in entry.signatures:
            accepted.setdefault((entry.case, reason_of(entry.case, sig)), []).append(sig)
    for key, case in ran.items():
        judged = {v.check for v in case.checks if v.status in _JUDGED}
        for (where, old), why in given.items():
            if where == key and old is not None and _check_of(old) not in judged:
                accepted.setdefault((key, why), []).append(old)
        if _not_run(case) and ((key, None) in given or (key, None) in version1):
            errors[key] = reason_of(key, None)
    entries = [e for e in previous.entries if e.case not in ran]
    entries += [
        BaselineEntry(case=o.case, reason=o.reason) for o in previous.version1 if not o.check and o.case not in ran
    ]
    entries += [BaselineEntry(case=key, reason=why) for key, why in errors.items()]
    entries += [
        BaselineEntry(case=key, signatures=tuple(sorted(sigs)), reason=why) for (key, why), sigs in accepted.items()
    ]
    return sorted(entries, key=lambda e: (e.case, e.signatures))


def unmigrated(result: RunResult, previous: Baseline | None) -> list[Version1Entry]:
    """The entries of a version-1 ``previous`` that ``updated_entries`` cannot carry over: a failing
    check of a case this run did not run (its signatures are known only from a run of it)."""
    ran = {case_key(c) for c in result.cases}
    return [o for o in previous.version1 if o.check and o.case not in ran] if previous is not None else []


def render_baseline(entries: Iterable[BaselineEntry]) -> str:
    """The baseline file's text (a documented header, then the entries)."""
    items = []
    for entry in entries:
        item: dict[str, Any] = {"case": entry.case, "reason": entry.reason}
        if entry.signatures:
            item["signatures"] = list(entry.signatures)
        items.append(item)
    header = (
        "# conformance baseline (docs/ci.md): known defects that do not fail the run.\n"
        "# Each entry accepts the listed defect signatures of one case (no signatures: the case ERRORs);\n"
        "# a defect of that case with another signature still fails. Every entry needs a reason (an issue\n"
        "# link, the known bug); an entry with an empty reason is refused. Delete what is fixed.\n"
    )
    body = yaml.safe_dump(
        {"version": BASELINE_VERSION, "entries": items}, sort_keys=False, allow_unicode=True, width=1000
    )
    return header + body


# -- the file --------------------------------------------------------------------------------------------


def baseline_file(path: Path, text: str | None = None) -> str:
    """The file I/O of baselines: read ``path`` (``text`` None) or write ``text`` to it; ``UsageError``
    (one line naming the file and what to do) when it cannot be read or written.

    Written as cassettes and reports are (``conformance.traffic.atomic.write_atomic``: a temporary
    file of its own, fsync, rename): a write that fails (a full disk, a read-only folder) leaves
    the old file whole, and a symbolic link at ``path`` is followed only inside its folder. Read
    bounded: a file larger than the ``yaml_expanded_bytes`` limit is refused before it is parsed."""
    from conformance.limits import read_bounded
    from conformance.traffic.atomic import write_atomic

    if text is not None:
        try:
            write_atomic(path, text.encode("utf-8"))
        except (OSError, UsageError) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise UsageError(
                f"baseline {path}: cannot write it ({why}); the file is as it was: free space or fix the path, "
                "then run again with --update-baseline"
            ) from exc
        return text
    try:
        return read_bounded(path, f"baseline {path}").decode("utf-8")
    except FileNotFoundError as exc:
        raise UsageError(f"baseline {path}: no such file (write one with --update-baseline)") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"baseline {path}: cannot read it ({exc})") from exc


def read_baseline(
    path: Path, *, check_ids: Collection[str], require_reasons: bool = True, migrate: bool = False
) -> Baseline:
    """The baseline at ``path``, validated (``UsageError`` on any problem; ``migrate``: see
    ``parse_baseline``). Read with the bounds of cassettes (``conformance.limits``: nodes, aliases,
    nesting): past one, the error names the file, the line and the limit."""
    from conformance.limits import current
    from conformance.traffic.safe_yaml import load_yaml, nests_deeper

    text = baseline_file(path)
    try:
        data = load_yaml(text, name=str(path))
    except InputLimitError as exc:
        raise UsageError(f"baseline {exc}") from exc
    except (yaml.YAMLError, ConformanceError, ValueError, RecursionError) as exc:
        depth = current().nesting_depth
        if nests_deeper(text.encode("utf-8"), depth):  # libyaml's own limit (1000 levels) spoke first
            raise UsageError(
                f"baseline {path}: the YAML nests too deeply: past the limit nesting_depth={depth} "
                f"({InputLimitError.how_to_raise('nesting_depth')})"
            ) from exc
        raise UsageError(f"baseline {path}: not valid YAML ({' '.join(str(exc).split())})") from exc
    return parse_baseline(data, str(path), check_ids=check_ids, require_reasons=require_reasons, migrate=migrate)


def write_baseline(path: Path, entries: Iterable[BaselineEntry]) -> str:
    """Write ``entries`` as the baseline at ``path``; returns the text written."""
    return baseline_file(path, render_baseline(entries))
