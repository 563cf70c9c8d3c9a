"""Model deviations: the cases in which the model behind a live server did not do what the scenario
asks, listed apart from the defects (pure).

A check is ``deviated`` (``conformance.verdicts``) when the model answered text instead of a call,
called another tool or gave other arguments: the scenario's script could not be judged, while what
the server sent was still judged for its shape. That is the model's choice, never a defect of the
server or gateway, so ``conformance.reporting._defects`` never groups its findings; a report lists
each such case here instead (issue 29: a certification "lists server defects apart from model
deviations"), with what the model did in the words of the checks that saw it. A case whose answer
was also malformed is a ``fail`` (the worst check wins): its defect is among the defects, and its
deviation is listed here too.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, TypedDict

from conformance.verdicts import Status

if TYPE_CHECKING:
    from conformance.reporting._shapes import CaseData

__all__ = ["NO_WORDS", "DeviationData", "deviations_of", "model_did"]

NO_WORDS = "the model did not do what the scenario asks (no check said how)"
"""What the model did when no check said it."""
_PREFIX = "model deviated:"
"""How a check may start its message (``conformance.servers.server``'s ``server.model``); said once."""


class DeviationData(TypedDict):
    """One case in which the model deviated from the scenario."""

    case: str
    """The case's id in the report (``column/scenario/mode``)."""
    adapter: str
    """The column: an adapter, a client's wire, a server's wire (``name/wire``) or a gateway's route."""
    scenario: str
    mode: str
    status: Status
    """The case's own status: ``deviated``, or worse when another check found a defect (a malformed
    answer is a ``fail`` whatever the model did)."""
    checks: list[str]
    """The checks that saw the deviation (none: the case as a whole was judged deviated)."""
    message: str
    """What the model did, in the words of those checks (each said once)."""


def deviations_of(cases: Sequence[CaseData]) -> list[DeviationData]:
    """The model deviations of ``cases`` (a report's, in report order): every case that is ``deviated``
    or has a ``deviated`` check, in that order."""
    found: list[DeviationData] = []
    for case in cases:
        deviated = [check for check in case["checks"] if check["status"] == "deviated"]
        if not deviated and case["status"] != "deviated":
            continue
        said = [check["message"] for check in deviated]
        said += [f["message"] for check in deviated if not check["message"] for f in check["findings"]]
        if case["status"] == "deviated" and case["message"]:
            said.insert(0, case["message"])
        found.append(
            {
                "case": case["id"],
                "adapter": case["adapter"],
                "scenario": case["scenario"],
                "mode": case["mode"],
                "status": case["status"],
                "checks": [check["check"] for check in deviated],
                "message": model_did(said),
            }
        )
    return found


def model_did(texts: Iterable[str]) -> str:
    """What the model did, from the words of the checks (and the case) that saw it: each text on one
    line, a leading ``model deviated:`` dropped (the reports say it once), each said once, joined by
    ``; `` (none: ``NO_WORDS``)."""
    words: list[str] = []
    for text in texts:
        line = " ".join(text.split())
        if line.lower().startswith(_PREFIX):
            line = line[len(_PREFIX) :].strip()
        if line:
            words.append(line)
    return "; ".join(dict.fromkeys(words)) or NO_WORDS
