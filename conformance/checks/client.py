"""Client checks: what a black-box client really did on the wire (``conformance certify`` only).

``client.one_request``  each turn sent exactly one request (a hidden SDK retry is a finding: it doubles
                        the load on a provider that said "slow down", and its body is the one judged);
``client.stream_mode``  the stream mode the call asked for is the mode the request asked the provider for;
``client.call_ids``     the call ids the client decoded from the provider's answer are the ids it sends back
                        (the assistant's calls and the results answering them) on the next turn;
``client.recorded_request`` what the client sent means what the cassette recorded for that turn, both read
                        back by the same reference adapter (``conformance.checks.client_request``);
``client.request_headers`` the headers each wire requires are there and well-formed, the API key is sent only
                        where the wire puts it, and no header carries a runtime placeholder (``None``,
                        ``undefined``) as its value (``conformance.checks.client_headers``);
``client.typed_errors`` every exception the library raised maps to an error kind (``error_info`` gave an
                        ``ErrorInfo``; an untyped exception leaves callers unable to tell a rate limit
                        from a bug), and ``error_info`` itself did not fail.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence

from conformance.checks._common import CaseContext, verdict
from conformance.checks.client_headers import client_request_headers
from conformance.checks.client_request import client_recorded_request
from conformance.model import ToolCall, ToolResult
from conformance.verdicts import CheckVerdict, Finding

__all__ = ["check_client"]


def check_client(ctx: CaseContext) -> Sequence[CheckVerdict]:
    if ctx.client is None:
        return ()
    verdicts = (
        _one_request(ctx),
        _stream_mode(ctx),
        _call_ids(ctx),
        client_recorded_request(ctx),
        client_request_headers(ctx),
        _typed_errors(ctx),
    )
    return [v for v in verdicts if v is not None]


def _one_request(ctx: CaseContext) -> CheckVerdict:
    check = "client.one_request"
    findings: list[Finding] = []
    for turn in ctx.client or ():
        if turn.result.returned == "timeout":
            continue
        count = len(turn.sent)
        if count == 1:
            continue
        statuses = [s.status for s in turn.sent]
        message = (
            "the client sent no request for this turn"
            if count == 0
            else f"the client sent {count} requests for one turn (hidden retries; answered {statuses})"
        )
        findings.append(Finding(check=check, message=message, path="$", expected=1, actual=count, turn=turn.turn))
    return verdict(check, findings)


def _stream_mode(ctx: CaseContext) -> CheckVerdict | None:
    check = "client.stream_mode"
    findings: list[Finding] = []
    ran = False
    for turn in ctx.client or ():
        for sent in turn.sent:
            ran = True
            if sent.stream != turn.asked_stream:
                asked = "a streamed" if turn.asked_stream else "a non-streamed"
                got = "a stream" if sent.stream else "a whole body"
                findings.append(
                    Finding(
                        check=check,
                        message=f"{asked} call was asked for, but the request asked the provider for {got}",
                        path=_stream_path(ctx.adapter.wire_format),
                        expected=turn.asked_stream,
                        actual=sent.stream,
                        turn=turn.turn,
                    )
                )
                break
    return verdict(check, findings) if ran else None


def _stream_path(wire: str) -> str:
    return "$.path (:streamGenerateContent)" if wire == "gemini" else "$.stream"


def _call_ids(ctx: CaseContext) -> CheckVerdict | None:
    """The ids decoded on turn k must come back on turn k+1: on its assistant calls and on the
    results answering them (an id the provider never sent, one the client made up, is not asked
    back: only ids that appear in the answer's bytes)."""
    check = "client.call_ids"
    findings: list[Finding] = []
    ran = False
    seen = {turn.turn: turn for turn in ctx.client or ()}
    turns = ctx.outcome.turns
    for earlier, later in itertools.pairwise(turns):
        if earlier.response is None or later.turn != earlier.turn + 1 or earlier.turn not in seen:
            continue
        served = b"".join(sent.response_body for sent in seen[earlier.turn].sent)
        decoded = [p.id for p in earlier.response.parts if isinstance(p, ToolCall) and p.id]
        decoded = [i for i in decoded if _sent_as_string(i, served)]
        if not decoded:
            continue
        ran = True
        back = ctx.read_back(later.turn)
        sent_calls = {p.id for m in back.messages if m.role == "assistant" for p in m.parts if isinstance(p, ToolCall)}
        sent_results = {p.call_id for m in back.messages for p in m.parts if isinstance(p, ToolResult)}
        for number, call_id in enumerate(decoded):
            if call_id not in sent_calls:
                findings.append(
                    Finding(
                        check=check,
                        message="a call id the provider sent is missing from the assistant's calls sent back",
                        path=f"{_call_path(ctx.adapter.wire_format)} (call #{number})",
                        expected=call_id,
                        actual=sorted(sent_calls) or None,
                        turn=later.turn,
                    )
                )
            if call_id not in sent_results:
                findings.append(
                    Finding(
                        check=check,
                        message="the tool result answering a call does not carry the call id the provider sent",
                        path=f"{_result_path(ctx.adapter.wire_format)} (call #{number})",
                        expected=call_id,
                        actual=sorted(sent_results) or None,
                        turn=later.turn,
                    )
                )
    return verdict(check, findings) if ran else None


def _sent_as_string(call_id: str, served: bytes) -> bool:
    """``call_id`` is a whole JSON string of the answer's bytes (``"call_0"``, never a piece of
    ``"call_0ldertvh"``: a client's made-up ``call_0`` is not an id the provider sent)."""
    return any(json.dumps(call_id, ensure_ascii=ascii).encode() in served for ascii in (True, False))


_CALL_PATHS = {
    "openai_chat": "$.messages[*].tool_calls[*].id",
    "openai_responses": "$.input[*].call_id (function_call)",
    "anthropic": "$.messages[*].content[*].id (tool_use)",
    "gemini": "$.contents[*].parts[*].functionCall.id",
    "ollama": "$.messages[*].tool_calls[*].id",
}
_RESULT_PATHS = {
    "openai_chat": "$.messages[*].tool_call_id",
    "openai_responses": "$.input[*].call_id (function_call_output)",
    "anthropic": "$.messages[*].content[*].tool_use_id",
    "gemini": "$.contents[*].parts[*].functionResponse.id",
    "ollama": "$.messages[*].tool_call_id",
}


def _call_path(wire: str) -> str:
    return _CALL_PATHS.get(wire, "$ (assistant tool calls)")


def _result_path(wire: str) -> str:
    return _RESULT_PATHS.get(wire, "$ (tool results)")


def _typed_errors(ctx: CaseContext) -> CheckVerdict | None:
    check = "client.typed_errors"
    findings: list[Finding] = []
    ran = False
    for turn in ctx.client or ():
        result = turn.result
        if result.returned != "raised":
            continue
        ran = True
        if result.error_info_failed is not None:
            findings.append(
                Finding(
                    check=check,
                    message=f"error_info failed on {result.exception}: {result.error_info_failed}",
                    path="error_info",
                    turn=turn.turn,
                )
            )
        elif result.error_info is None:
            findings.append(
                Finding(
                    check=check,
                    message="the library raised an exception error_info does not map to an error kind (untyped)",
                    path="error_info",
                    actual=result.exception,
                    turn=turn.turn,
                )
            )
    return verdict(check, findings) if ran else None
