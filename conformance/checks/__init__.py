"""The check families run on every case; each gives verdicts with stable check ids and never raises.

``translation`` (``conformance.checks.translation``), ``roundtrip``, ``streaming`` and ``recovery``,
and for black-box clients (``conformance certify``) ``client``: see each module's docstring for its
check ids. ``run_checks`` runs the chosen families and turns
a family that raised into an ERROR verdict (``<family>.internal``) with the traceback, so one broken
check never hides the others; given check ids (``--checks roundtrip.calls``), it keeps only their
verdicts, so a case is judged by the chosen checks alone (``chosen``).
"""

from __future__ import annotations

import traceback
from collections.abc import Collection, Iterable, Mapping

from conformance.checks._common import CaseContext, Check, diff_findings, verdict
from conformance.checks.client import check_client
from conformance.checks.recovery import check_recovery
from conformance.checks.roundtrip import check_roundtrip
from conformance.checks.streaming import check_streaming
from conformance.checks.translation import check_translation
from conformance.verdicts import CheckVerdict

__all__ = ["FAMILIES", "CaseContext", "Check", "chosen", "diff_findings", "run_checks", "verdict"]

FAMILIES: Mapping[str, Check] = {
    "translation": check_translation,
    "roundtrip": check_roundtrip,
    "streaming": check_streaming,
    "recovery": check_recovery,
    "client": check_client,
}
"""Family name -> check function, in report order."""


def run_checks(
    ctx: CaseContext, families: Iterable[str] = tuple(FAMILIES), *, only: Collection[str] | None = None
) -> tuple[CheckVerdict, ...]:
    """The verdicts of ``families`` on ``ctx``; ``only``: of those, the verdicts of these check ids
    (``chosen``). None: every verdict."""
    verdicts: list[CheckVerdict] = []
    for family in families:
        try:
            verdicts.extend(FAMILIES[family](ctx))
        except Exception as exc:  # an adapter function the check called raised
            verdicts.append(
                CheckVerdict(
                    check=f"{family}.internal",
                    status="error",
                    message=f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}",
                )
            )
    return chosen(verdicts, only)


def chosen(verdicts: Iterable[CheckVerdict], only: Collection[str] | None) -> tuple[CheckVerdict, ...]:
    """The verdicts of the check ids ``only`` (None: all of them). A family's internal error
    (``<family>.internal``) is kept whatever was chosen: the chosen check of that family did not run."""
    if only is None:
        return tuple(verdicts)
    return tuple(v for v in verdicts if v.check in only or v.check.endswith(".internal"))
