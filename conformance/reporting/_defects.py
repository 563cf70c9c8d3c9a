"""Defects, not cases: a report's findings grouped into the defects a maintainer acts on (pure).

One bug fails many cases, and often several checks per case. This module turns the findings of a
report's cases into ``DefectData``, each said once:

- **one signature, one defect.** Findings with one signature (``conformance.verdicts.signature``:
  check, JSON path with indices generalised, expected and actual kinds) are one defect, on however
  many cases, scenarios, modes and adapters it appears; for a finish reason or an error kind, whose
  values come from a closed vocabulary, each pair of values is a defect of its own (one mapping);
- **a fact restated by other checks is listed under its defect.** Two signatures of different checks
  *restate* one fact when the one seen on fewer turns of conversations (adapter, scenario and turn,
  either mode) is seen only where the other is, on at least half as many. Restatements are joined
  (transitively); the defect is named by the member whose check says the most (``PRIMARY_ORDER``),
  the others are listed under it, with their case counts. A defect, a duty left to the caller and a
  note are never joined;
- **a severity** (``SEVERITIES``, worst first): ``loses_data`` (the library lost what the caller gave
  or the provider sent), ``changes_meaning``, ``rejected`` (the provider would reject the request),
  ``left`` (a duty the client does not take on) and ``note``. A defect's severity is the one its plain
  words give when they know the pattern (a stream cut taken as an end changes meaning, whatever the
  checks restating it say), else the worst of its members';
- **plain words and evidence** (``conformance.reporting._words``): one sentence of what the library
  does wrong, what to do where the suite knows it, and the smallest fragment that shows it, taken from
  the first case (in report order) the defect appears in.

Defects are ordered by severity, then by how many cases they fail, then by signature. Only the findings
that count are grouped: ``defect`` findings of a failing check, ``left`` findings, and ``note`` or
``unasked`` findings; a check accepted as XFAIL (a declared gap, a baseline) or STALE is left out,
and so is a DEVIATED one (the model did not do what the scenario asks: its choice, never a defect of
the server; ``conformance.reporting._deviations`` lists those apart). A case that erred or went
stale has no findings: it is not a defect (the reports list it apart).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Literal, TypeAlias, TypedDict

from conformance.reporting._words import (
    SEVERITIES,
    SEVERITY_WORDS,
    Severity,
    Words,
    describe,
    field_of,
    severity_of,
)

if TYPE_CHECKING:
    from conformance.reporting._shapes import CaseData, FindingData

__all__ = [
    "CLOSED_FIELDS",
    "PRIMARY_ORDER",
    "SEVERITIES",
    "SEVERITY_WORDS",
    "DefectData",
    "EvidenceData",
    "RestatedData",
    "Severity",
    "defects_of",
    "severity_counts",
]

PRIMARY_ORDER: tuple[str, ...] = (
    "client.call_ids",
    "roundtrip.call_ids",
    "roundtrip.calls",
    "roundtrip.finish_reason",
    "roundtrip.reasoning_replay",
    "roundtrip.reasoning",
    "recovery.broken_stream",
    "recovery.provider_error",
    "recovery.arguments_error",
    "client.one_request",
    "client.typed_errors",
    "client.stream_mode",
    "translation.tool_names",
    "translation.tool_definitions",
    "translation.tool_list",
    "translation.tool_choice",
    "translation.wire_paths",
    "roundtrip.text",
    "roundtrip.usage",
    "roundtrip.cache_prefix",
    "client.request_headers",
    "streaming.lifecycle",
    "streaming.events",
    "streaming.fold",
    "streaming.chunk_invariance",
    "translation.request_shape",
    "roundtrip.request",
    "roundtrip.wire",
    "translation.recorded_request",
    "client.recorded_request",
    "translation.no_mutation",
)
"""Which check names a joined defect: the most specific first (a check not listed comes last)."""

CLOSED_FIELDS: tuple[str, ...] = ("finish_reason", "kind")
"""Fields whose values come from a closed vocabulary: one defect per pair of values (``_key``)."""

_Class: TypeAlias = Literal["defect", "left", "note"]
_Key: TypeAlias = tuple[str, str, "int | None"]
"""(adapter, scenario, turn): where a finding appears, either mode."""


class EvidenceData(TypedDict):
    """The smallest fragment that shows a defect, in the first case it appears in."""

    case: str
    adapter: str
    scenario: str
    mode: str
    turn: int | None
    path: str
    shown: list[str]
    """The fragment, one line each (``expected ...``, ``actual ...``, or both orders of a call list)."""
    cassette: str | None


class RestatedData(TypedDict):
    """Another check's findings that restate the defect's fact."""

    signature: str
    check: str
    message: str
    cases: int


class DefectData(TypedDict):
    signature: str
    check: str
    kind: str
    """``defect`` (fails a run), ``left`` (left to the caller) or ``note``."""
    severity: Severity
    sentence: str
    remedy: str
    """What to do about it, where the suite knows it ("" otherwise)."""
    cases: list[str]
    """The ids of the cases it appears in, restated or not (report order)."""
    adapters: list[str]
    scenarios: list[str]
    modes: list[str]
    wrong_mode: str | None
    """The mode the findings blame when a check compares the modes (``Finding.wrong_mode``)."""
    evidence: EvidenceData
    restated: list[RestatedData]


def _class_of(finding: FindingData, status: str) -> _Class | None:
    if status == "deviated":  # the model's choice: listed apart (``conformance.reporting._deviations``)
        return None
    kind = finding["kind"]
    if kind == "defect":
        return "defect" if status == "fail" else None
    if kind == "left":
        return "left" if status in ("left", "fail") else None
    return "note" if status not in ("xfail", "stale") else None


def _rank(check: str) -> int:
    return PRIMARY_ORDER.index(check) if check in PRIMARY_ORDER else len(PRIMARY_ORDER)


class _Member:
    """One signature's findings across the report."""

    def __init__(self, signature: str, check: str, kind: _Class) -> None:
        self.signature = signature
        self.check = check
        self.kind = kind
        self.found: list[tuple[CaseData, FindingData]] = []
        self.keys: set[_Key] = set()
        self.cases: dict[str, None] = {}


def defects_of(cases: Sequence[CaseData], wires: Mapping[str, str] | None = None) -> list[DefectData]:
    """The defects of ``cases`` (a report's, in report order); ``wires``: adapter -> wire format (the
    plain words of some defects depend on the wire)."""
    members: dict[str, _Member] = {}
    by_case: dict[str, CaseData] = {}
    for case in cases:
        by_case[case["id"]] = case
        for check in case["checks"]:
            for finding in check["findings"]:
                kind = _class_of(finding, check["status"])
                if kind is None:
                    continue
                key = _key(finding)
                member = members.get(key)
                if member is None:
                    member = members[key] = _Member(finding["signature"], finding["check"], kind)
                member.found.append((case, finding))
                member.keys.add((case["adapter"], case["scenario"], finding["turn"]))
                member.cases[case["id"]] = None
    groups = _joined(list(members.values()))
    defects = [_defect(group, by_case, wires or {}) for group in groups]
    return sorted(defects, key=lambda d: (SEVERITIES.index(d["severity"]), -len(d["cases"]), d["signature"]))


def _key(finding: FindingData) -> str:
    """What makes one defect: the signature, and for a field of a closed vocabulary (a finish reason, an
    error kind) the two values too: ``tool_calls`` read as ``stop`` and ``length`` read as ``stop`` are
    two mappings, two defects."""
    values = (finding["expected"], finding["actual"])
    if field_of(finding["path"]) in CLOSED_FIELDS and all(v is None or isinstance(v, str) for v in values):
        return f"{finding['signature']} ({values[0]} -> {values[1]})"
    return finding["signature"]


def _joined(members: list[_Member]) -> list[list[_Member]]:
    """The members joined where they restate one fact (union-find over the pairs that share a key)."""
    parent = list(range(len(members)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    sharing: dict[_Key, list[int]] = {}
    for i, member in enumerate(members):
        for key in member.keys:
            sharing.setdefault(key, []).append(i)
    tried: set[tuple[int, int]] = set()
    for indices in sharing.values():
        for n, i in enumerate(indices):
            for j in indices[n + 1 :]:
                if (i, j) in tried:
                    continue
                tried.add((i, j))
                if _restate(members[i], members[j]):
                    parent[root(j)] = root(i)
    groups: dict[int, list[_Member]] = {}
    for i, member in enumerate(members):
        groups.setdefault(root(i), []).append(member)
    return list(groups.values())


def _restate(a: _Member, b: _Member) -> bool:
    """``a`` and ``b`` restate one fact: different checks, one kind, and the one seen on fewer turns is
    seen only where the other is, on at least half as many."""
    if a.kind != b.kind or a.check == b.check:
        return False
    small, large = sorted((a.keys, b.keys), key=len)
    return 2 * len(small) >= len(large) and small <= large


def _defect(group: list[_Member], by_case: Mapping[str, CaseData], wires: Mapping[str, str]) -> DefectData:
    group = sorted(group, key=lambda m: (_rank(m.check), -len(m.cases), m.signature))
    primary = group[0]
    case, finding = primary.found[0]
    related = [f for m in group for c, f in m.found if c["id"] == case["id"]]
    related += [  # a restating check seen only in the other mode (streaming.fold blames the non-streamed one)
        f for m in group if case["id"] not in m.cases for c, f in m.found if _sibling(c, case)
    ]
    words: Words = describe(
        finding,
        related,
        wire=wires.get(case["adapter"], ""),
        modes=sorted({by_case[c]["mode"] for c in primary.cases}),
    )
    seen = {c for m in group for c in m.cases}
    named = [c for c in by_case if c in seen]  # report order
    chosen = [by_case[c] for c in named]
    severities = [words.severity] + ([] if words.known else [severity_of(m.found[0][1]) for m in group[1:]])
    blamed = [f.get("wrong_mode") for m in group for _, f in m.found if f.get("wrong_mode")]
    return {
        "signature": primary.signature,
        "check": primary.check,
        "kind": primary.kind,
        "severity": min(severities, key=SEVERITIES.index),
        "sentence": words.sentence,
        "remedy": words.remedy,
        "cases": named,
        "adapters": list(dict.fromkeys(c["adapter"] for c in chosen)),
        "scenarios": list(dict.fromkeys(c["scenario"] for c in chosen)),
        "modes": [m for m in ("non_stream", "stream") if any(c["mode"] == m for c in chosen)],
        "wrong_mode": str(blamed[0]) if blamed and len(set(blamed)) == 1 else None,
        "evidence": {
            "case": case["id"],
            "adapter": case["adapter"],
            "scenario": case["scenario"],
            "mode": case["mode"],
            "turn": finding["turn"],
            "path": finding["path"],
            "shown": list(words.shown),
            "cassette": case["cassette"],
        },
        "restated": [
            {
                "signature": m.signature,
                "check": m.check,
                "message": m.found[0][1]["message"],
                "cases": len(m.cases),
            }
            for m in group[1:]
        ],
    }


def _sibling(other: CaseData, case: CaseData) -> bool:
    return other["adapter"] == case["adapter"] and other["scenario"] == case["scenario"]


def severity_counts(defects: Iterable[DefectData]) -> dict[str, int]:
    """How many defects of each severity (``SEVERITIES`` order, every severity present)."""
    counts: dict[str, int] = dict.fromkeys(SEVERITIES, 0)
    for defect in defects:
        counts[defect["severity"]] += 1
    return counts
