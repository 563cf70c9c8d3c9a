"""The shapes of a report's cases as JSON-ready data (``TypedDict``): what ``conformance.reporting._data``
builds and ``conformance.reporting._defects`` groups (no logic here: a module both can import)."""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypeAlias, TypedDict

from conformance.verdicts import FindingKind, Status

__all__ = ["MODES", "CaseData", "CheckData", "FindingData", "Mode"]

Mode: TypeAlias = Literal["non_stream", "stream"]
MODES: tuple[Mode, ...] = ("non_stream", "stream")


class FindingData(TypedDict):
    check: str
    message: str
    path: str
    expected: Any
    actual: Any
    turn: int | None
    kind: FindingKind
    remedy: str
    signature: str
    wrong_mode: NotRequired[str | None]
    """The mode a check comparing the modes blames (``Finding.wrong_mode``; absent from older reports)."""


class CheckData(TypedDict):
    check: str
    family: str
    status: Status
    message: str
    findings: list[FindingData]


class CaseData(TypedDict):
    id: str
    adapter: str
    scenario: str
    mode: Mode
    status: Status
    message: str
    traceback: str | None
    duration: float
    cassette: str | None
    checks: list[CheckData]
    exchanges: list[dict[str, Any]]
