"""Recovery checks: errors surface typed, nothing bad passes as a valid call.

``recovery.provider_error``   a turn whose scenario expects an error gets that kind (and status and
                              ``retry_after`` where given); a turn that expects none gets none;
``recovery.arguments_error``  malformed argument JSON ends the call with ``arguments_error``, its raw text kept
                              (equal to what was sent), never as ``{}`` or another valid value;
``recovery.broken_stream``    a broken stream (disconnect, no terminator, error event) ends with an ``error``
                              event, and every call it cut off is reported with an ``arguments_error``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

from conformance.checks._common import CaseContext, verdict
from conformance.model import ErrorEvent, ToolCall, ToolCallEnd
from conformance.scenarios.values import STREAM_FAULTS
from conformance.verdicts import CheckVerdict, Finding

__all__ = ["check_recovery"]


def check_recovery(ctx: CaseContext) -> Sequence[CheckVerdict]:
    verdicts = (_provider_error(ctx), _arguments_error(ctx), _broken_stream(ctx))
    return [v for v in verdicts if v is not None]


def _kind_by_design(ctx: CaseContext, actual: str, expected: str, status: int | None, served: int | None) -> bool:
    """A black-box library raising the provider's status as a more general kind by design, the
    status kept (docs/equivalences.md, "Error kinds": the openai SDK's ``InternalServerError`` for a
    503). Only the status the provider answered counts: a library that changes it is judged as before.
    A 200 body the library cannot read has no status to keep: the library's error carries none."""
    if ctx.client is None or (status != served and not (status is None and served == 200)):
        return False
    from conformance.checks.equivalences import accepts_kind, bundled_table

    return accepts_kind(ctx.equivalences or bundled_table(), ctx.adapter.wire_format, served, expected, actual)


def _provider_error(ctx: CaseContext) -> CheckVerdict:
    check = "recovery.provider_error"
    findings: list[Finding] = []
    for turn in ctx.outcome.turns:
        want = ctx.scenario.turns[turn.turn].expect.error
        got = turn.error
        if want is None:
            if got is not None:
                findings.append(
                    Finding(
                        check=check,
                        message=f"unexpected error: {got.message}",
                        path="$.error",
                        expected=None,
                        actual=got.kind,
                        turn=turn.turn,
                    )
                )
            continue
        if got is None:
            findings.append(
                Finding(
                    check=check,
                    message="expected an error, got none",
                    path="$.error",
                    expected=want.kind,
                    turn=turn.turn,
                )
            )
            continue
        if got.kind != want.kind and not _kind_by_design(ctx, got.kind, want.kind, got.status, turn.status):
            findings.append(
                Finding(
                    check=check,
                    message=f"error kind differs ({got.message})",
                    path="$.error.kind",
                    expected=want.kind,
                    actual=got.kind,
                    turn=turn.turn,
                )
            )
        if want.status is not None and got.status != want.status:
            findings.append(
                Finding(
                    check=check,
                    message="HTTP status differs",
                    path="$.error.status",
                    expected=want.status,
                    actual=got.status,
                    turn=turn.turn,
                )
            )
        if want.retry_after is not None and (
            got.retry_after is None or not math.isclose(got.retry_after, want.retry_after, abs_tol=1e-3)
        ):
            findings.append(
                Finding(
                    check=check,
                    message="retry_after differs",
                    path="$.error.retry_after",
                    expected=want.retry_after,
                    actual=got.retry_after,
                    turn=turn.turn,
                )
            )
    return verdict(check, findings)


def _arguments_error(ctx: CaseContext) -> CheckVerdict | None:
    check = "recovery.arguments_error"
    findings: list[Finding] = []
    ran = False
    for turn in ctx.outcome.turns:
        spec = ctx.scenario.turns[turn.turn]
        expected = spec.expect.tool_calls or ()
        if not any(c.arguments_error for c in expected) or turn.response is None:
            continue
        ran = True
        calls = [p for p in turn.response.parts if isinstance(p, ToolCall)]
        for n, want in enumerate(expected):
            if not want.arguments_error:
                continue
            path = f"$.tool_calls[{n}]"
            if n >= len(calls):
                findings.append(
                    Finding(check=check, message="the malformed call is missing", path=path, turn=turn.turn)
                )
                continue
            call = calls[n]
            if call.arguments is not None or call.arguments_error is None:
                findings.append(
                    Finding(
                        check=check,
                        message="malformed arguments were reported as a valid call",
                        path=f"{path}.arguments",
                        expected="arguments_error",
                        actual=call.arguments,
                        turn=turn.turn,
                    )
                )
            sent = spec.reply.tool_calls[n].arguments_raw if n < len(spec.reply.tool_calls) else None
            if sent is not None and call.arguments_raw != sent and not _carried_as_string(call.arguments_raw, sent):
                findings.append(
                    Finding(
                        check=check,
                        message="the raw argument text was not kept as sent",
                        path=f"{path}.arguments_raw",
                        expected=sent,
                        actual=call.arguments_raw,
                        turn=turn.turn,
                    )
                )
    return verdict(check, findings) if ran else None


def _broken_stream(ctx: CaseContext) -> CheckVerdict | None:
    check = "recovery.broken_stream"
    if ctx.mode != "stream":
        return None
    findings: list[Finding] = []
    ran = False
    for turn in ctx.outcome.turns:
        fault = ctx.scenario.turns[turn.turn].reply.fault
        if fault is None or fault.kind not in STREAM_FAULTS:
            continue
        ran = True
        if not any(isinstance(e, ErrorEvent) for e in turn.events):
            findings.append(
                Finding(
                    check=check,
                    message="the broken stream did not end with an error event",
                    path=f"turn {turn.turn} events",
                    expected="error",
                    actual=[e.type for e in turn.events[-3:]],
                    turn=turn.turn,
                )
            )
        sent = {c.arguments_raw for c in ctx.scenario.turns[turn.turn].reply.tool_calls}
        for event in turn.events:
            if (
                isinstance(event, ToolCallEnd)
                and event.arguments_error is None
                and event.tool_call_arguments_complete not in sent
            ):
                findings.append(
                    Finding(
                        check=check,
                        message="a call cut off by the broken stream was reported as valid",
                        path=f"turn {turn.turn} tool_call_end {event.tool_call_id}",
                        expected="arguments_error",
                        actual=event.arguments,
                        turn=turn.turn,
                    )
                )
    return verdict(check, findings) if ran else None


def _carried_as_string(raw: str, sent: str) -> bool:
    """Wires whose arguments are JSON objects (Anthropic ``input``, Gemini ``args``, Ollama) can carry
    unparseable argument text only as a JSON string; keeping that string is keeping the raw text."""
    try:
        return bool(json.loads(raw) == sent)
    except ValueError:
        return False
