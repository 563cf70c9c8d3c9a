"""Verdicts: what a run found, per (adapter, scenario, mode, check), as frozen values.

A *case* is one (adapter, scenario, mode) conversation; each check run on it gives a
``CheckVerdict`` with a stable check id (``translation.tool_names``, ``streaming.lifecycle``, ...)
and its findings. The case's verdict is the worst of its checks (``STATUS_ORDER``). A
``RunResult`` holds every case plus what the report needs to show where they came from.

Statuses: ``pass``; ``fail`` (findings with a JSON path, expected and actual); ``unsupported``
(the scenario requires a capability the adapter does not declare); ``xfail`` (the adapter declares
a known gap, with a reason); ``left`` (left to the caller: a black-box client does not take on the
duty the check judges, docs/clients.md "Duties"; shown and counted, never a failure and never a
pass); ``deviated`` (the model behind a live server did not do what the scenario asks: text instead
of a call, another tool, other arguments; the scenario's script could not be judged, but what the
server sent was still judged for shape, and a malformed answer is a ``fail`` that wins as the worse
check; the model's choice, never a server defect: shown, counted and listed apart from the defects,
never a failure and never a pass); ``stale`` (declared a known gap, but the check now passes; a
baselined defect no longer found, under ``--strict-baseline``; or, for a whole case with no check
run, its cassette was recorded from another version of the scenario: ``message`` names it and the
line that re-records it); ``error`` (the adapter crashed or hung, the cassette is missing:
``message`` and ``traceback`` say which).

A ``Finding`` is one of four kinds (``FindingKind``): a ``defect`` (the library lost or changed what
the caller gave or the provider sent, or sent what the provider rejects: the only kind that fails a
check), ``unasked`` (a parameter the caller did not ask for that changes what the provider does),
``note`` (one that changes nothing) and ``left`` (a duty the client does not take on; the check's
status is then ``left``). ``signature`` names a finding independently of the case it appears in
(check, JSON path with indices generalised, expected and actual kinds): findings with one signature
are one defect, and baselines list signatures.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

__all__ = [
    "FINDING_KINDS",
    "STATUS_ORDER",
    "VALUE_KINDS",
    "AdapterInfo",
    "CaseResult",
    "CheckVerdict",
    "Finding",
    "FindingKind",
    "RunResult",
    "ScenarioInfo",
    "Selection",
    "Status",
    "SuiteInfo",
    "generalised_path",
    "signature",
    "value_kind",
    "worst",
]

Status: TypeAlias = Literal["pass", "xfail", "unsupported", "left", "deviated", "stale", "fail", "error"]
STATUS_ORDER: tuple[Status, ...] = ("pass", "xfail", "unsupported", "left", "deviated", "stale", "fail", "error")
"""From best to worst; a case shows its worst check."""

FindingKind: TypeAlias = Literal["defect", "unasked", "note", "left"]
FINDING_KINDS: tuple[FindingKind, ...] = ("defect", "unasked", "note", "left")
"""What a finding is worth: only a ``defect`` fails its check (see the module docstring)."""

VALUE_KINDS: tuple[str, ...] = ("none", "boolean", "number", "string", "object", "array", "other")
"""The kinds of an expected or actual value in a signature (``none``: nothing, the message says what)."""


@dataclass(frozen=True, kw_only=True)
class Finding:
    """One difference a check found."""

    check: str
    """The stable check id."""
    message: str
    path: str = ""
    """Where: a JSON path into the wire body or the unified value (``$.tools[0].name``), or a turn."""
    expected: Any = None
    """What the scenario or the recording says (None: nothing, the message says what is missing)."""
    actual: Any = None
    """What the adapter produced (None: nothing, the message says what is not expected)."""
    turn: int | None = None
    wrong_mode: Literal["non_stream", "stream"] | None = None
    """Set when a check compares the two modes and the scenario says which one is right: the mode
    whose result is wrong (``streaming.fold`` in a streamed case may blame the non-streamed decoder)."""
    kind: FindingKind = "defect"
    """What it is worth (``FINDING_KINDS``): only a defect fails its check."""
    remedy: str = ""
    """What the caller must do about it and what the provider does otherwise (a ``left`` finding:
    "map the names yourself: the API answers 400"), or what an ``unasked`` parameter changes."""


@dataclass(frozen=True, kw_only=True)
class CheckVerdict:
    check: str
    status: Status
    findings: tuple[Finding, ...] = ()
    message: str = ""
    """Why (an UNSUPPORTED's missing capability, an XFAIL's declared reason, an ERROR's cause)."""


@dataclass(frozen=True, kw_only=True)
class CaseResult:
    """One (adapter, scenario, mode) conversation and the verdicts of the checks run on it."""

    adapter: str
    scenario: str
    mode: Literal["non_stream", "stream"]
    status: Status
    checks: tuple[CheckVerdict, ...] = ()
    message: str = ""
    traceback: str | None = None
    duration: float = 0.0
    """Seconds (shown in reports; never asserted on)."""
    cassette: str | None = None
    """The cassette replayed (path relative to the run's root where possible)."""
    exchanges: tuple[Mapping[str, Any], ...] = ()
    """The wire requests and responses of the case (``{"request": {...}, "status": 200, "response": "..."}``),
    kept for failing and erroring cases so the report can show them."""


@dataclass(frozen=True, kw_only=True)
class AdapterInfo:
    name: str
    wire_format: str
    capabilities: tuple[str, ...] = ()
    known_gaps: Mapping[str, str] = field(default_factory=dict)
    """Check id (or ``check@scenario``) -> reason, declared by the adapter."""
    model: str | None = None
    """The model name asked for on this adapter's wire (``--model``, else the wire's default)."""


@dataclass(frozen=True, kw_only=True)
class ScenarioInfo:
    id: str
    behavior: str
    source: str
    requires: tuple[str, ...] = ()
    file: str | None = None
    """The scenario's file when it is not a bundled one (a ``--scenarios-dir`` of the user's)."""


@dataclass(frozen=True, kw_only=True)
class SuiteInfo:
    """The suite that judged a run (``conformance.run.fingerprint``): two reports with one
    ``fingerprint`` were judged by the same scenarios, checks and equivalences, whatever they selected."""

    fingerprint: str
    """sha256 over the scenario set (ids and content), the check ids, ``check_version`` and the
    equivalence table used."""
    version: str
    """The conformance version that made the report (not part of the fingerprint)."""
    check_version: int
    """``conformance.run.fingerprint.CHECK_VERSION``: bumped when a check's judgement changes."""
    scenarios: int
    """How many scenarios the set holds (the bundled ones and the run's own)."""
    equivalences: str
    """sha256 of the equivalence table used (the suite's, or merged with ``--equivalences`` files)."""


@dataclass(frozen=True, kw_only=True)
class Selection:
    """What a run was asked to run, out of the suite (recorded in the report, never fingerprinted)."""

    command: str
    """``run`` or ``certify`` (``merge-reports`` keeps the shards' command)."""
    scenarios: tuple[str, ...] = ()
    """``--scenarios`` as given (none: every scenario)."""
    keyword: str | None = None
    """``-k``."""
    checks: tuple[str, ...] = ()
    """``--checks`` as asked: check families and check ids (default: every family)."""
    wires: tuple[str, ...] | None = None
    """``certify --wires`` (None: every wire the client declares, or not a certification)."""
    model: str | None = None
    """``certify --model`` (None: each wire's default, named per adapter in the report)."""
    shard: str | None = None
    """``--shard K/N``: this report holds the K-th of N shards of the selection's cases."""
    merged: tuple[str, ...] = ()
    """``merge-reports``: the shards this report was merged from."""
    note: str | None = None
    """``certify --note``: what the reader must know about this run (a library whose behaviour depends
    on the model asked for, and why this model)."""


@dataclass(frozen=True, kw_only=True)
class RunResult:
    suite_version: str
    adapters: tuple[AdapterInfo, ...]
    scenarios: tuple[ScenarioInfo, ...]
    cases: tuple[CaseResult, ...]
    provenance: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """Cassette path -> its provenance block."""
    problems: tuple[str, ...] = ()
    """Run-level problems (scenario files that did not load, ...), each a full message."""
    commands: tuple[Mapping[str, Any], ...] = ()
    """The MCP server commands the run started, one per scenario (``ServerCommand.to_json`` of
    ``conformance.mcp_bridge.trust``: scenario, file, argv, cwd, env_keys, bundled, transport, url,
    header_keys)."""
    suite: SuiteInfo | None = None
    """The suite that judged the run (its fingerprint)."""
    selection: Selection | None = None
    """What the command line selected (scenarios, ``-k``, wires, model, shard)."""

    def counts(self) -> dict[Status, int]:
        return {status: sum(case.status == status for case in self.cases) for status in STATUS_ORDER}


def worst(statuses: list[Status] | tuple[Status, ...]) -> Status:
    """The worst status of ``statuses`` (``pass`` when empty)."""
    return max(statuses, key=STATUS_ORDER.index, default="pass")


def value_kind(value: Any) -> str:
    """The kind of a finding's expected or actual value in its signature (``VALUE_KINDS``)."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, list | tuple):
        return "array"
    return "other"


_INDEX = re.compile(r"\[\d+\]|\['(?:[^'\\]|\\.)*'\]")
"""A list index, or a tool named by its MCP name (``tools['gmail.search']``); a JSON key spelt
``["content-type"]`` is a field, not an index, and stays."""
_NUMBERED = re.compile(r"(#|turn )\d+")


def generalised_path(path: str) -> str:
    """A finding's path with its indices generalised: ``$.messages[2].parts[0]`` is
    ``$.messages[*].parts[*]``, ``tools['gmail.search']`` is ``tools[*]`` (a key in double quotes
    stays), ``call #1`` is ``call #*`` and ``turn 0 events`` is ``turn * events``."""
    return _NUMBERED.sub(lambda m: m.group(1) + "*", _INDEX.sub("[*]", path))


def signature(finding: Finding) -> str:
    """The finding's signature: ``check at path: expected-kind -> actual-kind`` with the path's
    indices generalised (``client.call_ids at $.messages[*].tool_call_id (call #*): string -> array``).
    Findings with one signature are one defect, wherever they appear."""
    return (
        f"{finding.check} at {generalised_path(finding.path) or '-'}:"
        f" {value_kind(finding.expected)} -> {value_kind(finding.actual)}"
    )
