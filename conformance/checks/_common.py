"""What every check family shares: the case context, verdict building and deepdiff findings."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from conformance.adapters.base import Adapter
from conformance.clients.evidence import ClientTurn
from conformance.model import Request
from conformance.run.conversation import ConversationOutcome
from conformance.scenarios.values import Mode, Scenario
from conformance.traffic.transport import Exchange
from conformance.verdicts import CheckVerdict, Finding

__all__ = ["CaseContext", "Check", "diff_findings", "verdict"]


@dataclass(frozen=True, kw_only=True)
class CaseContext:
    """Everything a check may look at for one (adapter, scenario, mode) case. Checks never do I/O."""

    scenario: Scenario
    adapter: Adapter
    mode: Mode
    outcome: ConversationOutcome
    exchanges: tuple[Exchange, ...] = ()
    """The replayed HTTP exchanges, in order (one per turn that was sent)."""
    non_stream: ConversationOutcome | None = None
    """In stream mode: the same scenario's non-streamed outcome, when it ran (fold comparison)."""
    exhaustive: bool = False
    """Streaming: every 2-way cut of each stream, besides single bytes and seeded random cuts."""
    seed: int = 0
    client: tuple[ClientTurn, ...] | None = None
    """A black-box case (``conformance certify``): what the client did each turn. The wire bodies are
    then the client's own, so checks that judge our decoder or our encoder's spelling step aside."""
    extra: Mapping[str, Any] = field(default_factory=dict)
    _read_backs: dict[int, Request] = field(default_factory=dict, compare=False, repr=False)

    def read_back(self, turn: int) -> Request:
        """``request_from_wire`` of the body turn ``turn`` sent, decoded once per case (several
        checks read it)."""
        if turn not in self._read_backs:
            wire = self.outcome.turns[turn].wire
            self._read_backs[turn] = self.adapter.request_from_wire(
                wire.body, path=wire.path, tools=self.scenario.tools
            )
        return self._read_backs[turn]


Check = Callable[[CaseContext], Sequence[CheckVerdict]]
"""A check family: a function of the case giving one verdict per check id it ran (never raising)."""


def verdict(check: str, findings: Sequence[Finding]) -> CheckVerdict:
    """PASS without findings, FAIL with them."""
    return CheckVerdict(check=check, status="fail" if findings else "pass", findings=tuple(findings))


_ROOT_STEP = re.compile(r"\[('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|\d+)\]")


def _json_path(deepdiff_path: str, prefix: str) -> str:
    out = prefix
    for step in _ROOT_STEP.findall(deepdiff_path.removeprefix("root")):
        if step[0] in "'\"":
            key = step[1:-1]
            out += f".{key}" if re.fullmatch(r"[A-Za-z_$][A-Za-z0-9_$-]*", key) else f'["{key}"]'
        else:
            out += f"[{step}]"
    return out


def diff_findings(
    check: str, expected: Any, actual: Any, *, prefix: str = "$", turn: int | None = None, message: str = ""
) -> list[Finding]:
    """One finding per difference deepdiff sees between ``expected`` and ``actual``."""
    if _same(expected, actual):
        return []  # the common case, without deepdiff's cost
    from deepdiff import DeepDiff  # imported on the first difference: it brings numpy and pydantic (~0.2 s)

    diff = DeepDiff(expected, actual, ignore_order=False, verbose_level=2, view="tree")
    findings: list[Finding] = []
    for kind, items in diff.items():
        for item in items:
            path = _json_path(item.path(), prefix)
            t1 = None if type(item.t1).__name__ == "NotPresent" else item.t1
            t2 = None if type(item.t2).__name__ == "NotPresent" else item.t2
            what = kind.replace("_", " ")
            findings.append(
                Finding(
                    check=check,
                    message=f"{message}{': ' if message else ''}{what}",
                    path=path,
                    expected=t1,
                    actual=t2,
                    turn=turn,
                )
            )
    return findings


def _same(expected: Any, actual: Any) -> bool:
    """Equal as JSON values: ``==`` with booleans kept apart from numbers (``True == 1`` in Python)."""
    if isinstance(expected, bool) or isinstance(actual, bool):
        return expected is actual
    if isinstance(expected, dict):
        return (
            isinstance(actual, dict)
            and expected.keys() == actual.keys()
            and all(_same(v, actual[k]) for k, v in expected.items())
        )
    if isinstance(expected, list | tuple):
        return (
            isinstance(actual, list | tuple)
            and len(expected) == len(actual)
            and all(_same(a, b) for a, b in zip(expected, actual, strict=True))
        )
    return type(expected) is type(actual) and bool(expected == actual)
