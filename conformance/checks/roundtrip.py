"""Round-trip checks: what the adapter decoded is what the scenario scripted, and nothing is lost.

``roundtrip.calls``          each turn's decoded tool calls: names (the original MCP names), arguments
                             (exact, subset or JSON Schema), non-empty unique ids, no ``arguments_error``
                             where the arguments were valid;
``roundtrip.text``           the decoded text (exact or contains);
``roundtrip.finish_reason``  the decoded finish reason;
``roundtrip.request``        unified -> wire -> unified keeps tools, texts, calls (ids where the adapter
                             declares ``call_ids``), arguments, results and ``isError`` (where the adapter
                             declares ``is_error_in_tool_results``);
``roundtrip.wire``           wire -> unified -> wire gives a JSON-equal request body;
``roundtrip.call_ids``       every call id a later request sends back (in the assistant's calls and the tool
                             results) is one the provider sent in an earlier response, byte for byte
                             (adapters declaring ``call_ids``; E12: the Responses item id ``fc_...`` is not
                             the call id ``call_...``);
``roundtrip.usage``          each answered turn's decoded usage equals what its recorded body reports
                             (``checks.usage``: per wire, streamed and not, reasoning and cache tokens included);
``roundtrip.reasoning``      each turn's decoded reasoning parts as scripted, ``source`` naming the wire
                             (``checks.reasoning``);
``roundtrip.reasoning_replay`` each later request sends back the reasoning the provider produced, where and
                             as the wire's rule says, and nothing another wire produced (``checks.reasoning``);
``roundtrip.cache_prefix``   each request's cacheable prefix is the previous request's, extended
                             (``checks.prefix``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from conformance.adapters._tool_output import carried_kinds, request_view
from conformance.checks._common import (
    CaseContext,
    calls_words,
    diff_findings,
    system_first,
    unwrapped_results,
    verdict,
)
from conformance.checks.prefix import check_cache_prefix
from conformance.checks.reasoning import check_reasoning, check_reasoning_replay
from conformance.checks.usage import usage_verdict
from conformance.model import Image, Request, Resource, Response, Text, ToolCall, ToolResult
from conformance.scenarios.values import ExpectedCall
from conformance.verdicts import CheckVerdict, Finding

__all__ = ["CALL_ID_KEYS", "calls_findings", "check_roundtrip", "is_subset", "request_projection"]


def check_roundtrip(ctx: CaseContext) -> Sequence[CheckVerdict]:
    calls: list[Finding] = []
    text: list[Finding] = []
    finish: list[Finding] = []
    ran_calls = ran_text = ran_finish = False
    for turn in ctx.outcome.turns:
        spec = ctx.scenario.turns[turn.turn]
        if spec.expect.error is not None or turn.response is None or turn.error is not None:
            continue
        if spec.expect.tool_calls is not None:
            ran_calls = True
            calls += _calls(turn.response, spec.expect.tool_calls, turn.turn)
        if spec.expect.text is not None:
            ran_text = True
            got = "".join(p.text for p in turn.response.parts if isinstance(p, Text))
            want = spec.expect.text
            ok = got == want.value if want.mode == "exact" else want.value in got
            if not ok:
                text.append(
                    Finding(
                        check="roundtrip.text",
                        message=f"text {'differs' if want.mode == 'exact' else 'does not contain the expected text'}",
                        path="$.text",
                        expected=want.value,
                        actual=got,
                        turn=turn.turn,
                    )
                )
        if spec.expect.finish_reason is not None:
            ran_finish = True
            if turn.response.finish_reason != spec.expect.finish_reason:
                finish.append(
                    Finding(
                        check="roundtrip.finish_reason",
                        message="finish reason differs",
                        path="$.finish_reason",
                        expected=spec.expect.finish_reason,
                        actual=turn.response.finish_reason,
                        turn=turn.turn,
                    )
                )
    verdicts: list[CheckVerdict] = []
    if ran_calls:
        verdicts.append(verdict("roundtrip.calls", calls))
    if ran_text:
        verdicts.append(verdict("roundtrip.text", text))
    if ran_finish:
        verdicts.append(verdict("roundtrip.finish_reason", finish))
    verdicts.append(_request_roundtrip(ctx))
    if ctx.client is None:  # a client's body is its own spelling, judged on its read-back instead
        verdicts.append(_wire_roundtrip(ctx))
    ids = _call_ids(ctx)
    if ids is not None:
        verdicts.append(ids)
    for extra in (usage_verdict(ctx), check_reasoning(ctx), check_reasoning_replay(ctx), check_cache_prefix(ctx)):
        if extra is not None:
            verdicts.append(extra)
    return verdicts


def is_subset(expected: Any, actual: Any) -> bool:
    """Every key of ``expected`` is in ``actual`` with a value that is (recursively) a subset."""
    if isinstance(expected, Mapping):
        return isinstance(actual, Mapping) and all(k in actual and is_subset(v, actual[k]) for k, v in expected.items())
    if isinstance(expected, list):
        return isinstance(actual, list) and len(expected) == len(actual) and all(map(is_subset, expected, actual))
    if isinstance(expected, bool) or isinstance(actual, bool):
        return expected is actual
    if isinstance(expected, int | float) and isinstance(actual, int | float):
        return expected == actual
    return bool(type(expected) is type(actual) and expected == actual)


def calls_findings(response: Response, expected: Sequence[ExpectedCall], turn: int) -> list[Finding]:
    """What ``roundtrip.calls`` finds in ``response`` against the calls a turn expects (none: they match)."""
    return _calls(response, expected, turn)


def _calls(response: Response, expected: Sequence[ExpectedCall], turn: int) -> list[Finding]:
    check = "roundtrip.calls"
    got = [p for p in response.parts if isinstance(p, ToolCall)]
    findings: list[Finding] = []
    if len(got) != len(expected):
        given = calls_words([c.name for c in got]) if got else "none"
        findings.append(
            Finding(
                check=check,
                message=f"expected {calls_words([c.name for c in expected])}, got {given}",
                path="$.tool_calls",
                expected=[c.name for c in expected],
                actual=[c.name for c in got],
                turn=turn,
            )
        )
    ids = [c.id for c in got]
    if any(not i for i in ids) or len(set(ids)) != len(ids):
        findings.append(
            Finding(
                check=check,
                message="a tool-call id is empty or repeated (each must be non-empty and unique)",
                path="$.tool_calls[*].id",
                actual=ids,
                turn=turn,
            )
        )
    for n, (want, call) in enumerate(zip(expected, got, strict=False)):
        path = f"$.tool_calls[{n}]"
        if call.name != want.name:
            findings.append(
                Finding(
                    check=check,
                    message="the tool name differs",
                    path=f"{path}.name",
                    expected=want.name,
                    actual=call.name,
                    turn=turn,
                )
            )
        if want.arguments_error:
            continue  # recovery.arguments_error checks these
        if call.arguments_error is not None or call.arguments is None:
            findings.append(
                Finding(
                    check=check,
                    message=f"valid arguments were decoded as an error ({call.arguments_error})",
                    path=f"{path}.arguments",
                    expected=want.arguments,
                    actual=call.arguments_raw,
                    turn=turn,
                )
            )
            continue
        findings += _arguments(want, call, f"{path}.arguments", turn)
    return findings


def _arguments(want: ExpectedCall, call: ToolCall, path: str, turn: int) -> list[Finding]:
    check = "roundtrip.calls"
    if want.match == "exact":
        return diff_findings(check, want.arguments, call.arguments, prefix=path, turn=turn, message="arguments")
    if want.match == "subset":
        if is_subset(want.arguments or {}, call.arguments):
            return []
        return [
            Finding(
                check=check,
                message="arguments do not contain the expected subset",
                path=path,
                expected=want.arguments,
                actual=call.arguments,
                turn=turn,
            )
        ]
    try:
        errors = list(Draft202012Validator(want.arguments or {}).iter_errors(call.arguments))
    except SchemaError as exc:
        return [Finding(check=check, message=f"the scenario's argument schema is invalid: {exc.message}", path=path)]
    return [
        Finding(check=check, message=f"arguments do not match the schema: {e.message}", path=path, turn=turn)
        for e in errors
    ]


def request_projection(request: Request, *, ids: bool, is_error: bool, images: bool = True) -> dict[str, Any]:
    """What a unified request must keep through the wire and back.

    Tool-result content is compared as its text (text items and embedded text resources joined,
    whitespace-insensitive: wires with one content string join items) plus its image types where
    the adapter declares ``images_in_tool_results``. With ``tool_choice`` none an adapter may
    leave the tools out (Ollama has no tool_choice field).
    """
    parts: list[Any] = []
    for message in request.messages:
        parts += [_part(p, ids=ids, is_error=is_error, images=images) for p in message.parts]
    tools = [{"name": t.name, "description": t.description or ""} for t in request.tools]
    return {
        "tools": [] if request.tool_choice == "none" else tools,
        "system": request.system,
        "parts": [p for p in parts if p is not None],
    }


def _part(part: Any, *, ids: bool, is_error: bool, images: bool) -> Any:
    if isinstance(part, Text):
        return {"text": part.text} if part.text else None
    if isinstance(part, ToolCall):
        return {"call": part.name, "arguments": part.arguments, **({"id": part.id} if ids else {})}
    if isinstance(part, ToolResult):
        text = "".join(c.text or "" for c in part.content if isinstance(c, Text | Resource))
        shown: dict[str, Any] = {"result": "".join(text.split())}
        if images:
            shown["images"] = [c.media_type for c in part.content if isinstance(c, Image)]
        if ids:
            shown["call_id"] = part.call_id
        if is_error:
            shown["is_error"] = part.is_error
        return shown
    return None


def _request_roundtrip(ctx: CaseContext) -> CheckVerdict:
    check = "roundtrip.request"
    ids = "call_ids" in ctx.adapter.capabilities
    is_error = "is_error_in_tool_results" in ctx.adapter.capabilities
    images = "images_in_tool_results" in ctx.adapter.capabilities
    traffic = ctx.adapter.traffic_format
    findings: list[Finding] = []
    for turn in ctx.outcome.turns:
        back = ctx.read_back(turn.turn)
        back = replace(back, tool_choice=turn.request.tool_choice if back.tool_choice is None else back.tool_choice)
        if ctx.client is not None:
            back = system_first(unwrapped_results(back))
        # tool results as the rule says the wire receives them (docs/mcp.md): translation.tool_result_content
        sent, _ = request_view(turn.request, carries=carried_kinds(traffic, ctx.adapter.capabilities), wire=traffic)
        findings += diff_findings(
            check,
            request_projection(sent, ids=ids, is_error=is_error, images=images),
            request_projection(back, ids=ids, is_error=is_error, images=images),
            prefix="$",
            turn=turn.turn,
            message="read back from the wire body (unified -> wire -> unified)",
        )
    return verdict(check, findings)


def _wire_roundtrip(ctx: CaseContext) -> CheckVerdict:
    check = "roundtrip.wire"
    findings: list[Finding] = []
    for turn in ctx.outcome.turns:
        back = ctx.read_back(turn.turn)
        again = ctx.adapter.request_to_wire(back)
        findings += diff_findings(
            check,
            turn.wire.body,
            again.body,
            prefix="$",
            turn=turn.turn,
            message="written again from its read-back (wire -> unified -> wire)",
        )
    return verdict(check, findings)


CALL_ID_KEYS: Mapping[str, str] = {"openai_responses": "call_id"}
"""The JSON key that carries a call id in a wire format's responses (default ``id``: OpenAI Chat
``tool_calls[].id``, Anthropic ``tool_use.id``); Responses items also have an ``id`` (``fc_...``)
that is not the call id (E12)."""


def _call_ids(ctx: CaseContext) -> CheckVerdict | None:
    check = "roundtrip.call_ids"
    if "call_ids" not in ctx.adapter.capabilities or len(ctx.outcome.turns) < 2:
        return None
    answered = [e for e in ctx.exchanges if e.status is not None and e.status < 400]
    given = {  # the scenario's own history (``history:``) holds ids no provider sent: not judged here
        i
        for m in getattr(ctx.scenario, "history", ())
        for p in m.parts
        for i in (getattr(p, "id", None), getattr(p, "call_id", None))
        if isinstance(i, str)
    }
    findings: list[Finding] = []
    ran = False
    for turn in ctx.outcome.turns[1:]:
        earlier = b"".join(e.response_body for e in answered[: turn.turn])
        back = ctx.read_back(turn.turn)
        for message in back.messages:
            for part in message.parts:
                sent = part.id if isinstance(part, ToolCall) else part.call_id if isinstance(part, ToolResult) else None
                if sent is None or sent in given:
                    continue
                ran = True
                key = CALL_ID_KEYS.get(ctx.adapter.wire_format, "id")
                if not re.search(rb'"%s"\s*:\s*"%s"' % (key.encode(), re.escape(sent.encode())), earlier):
                    findings.append(
                        Finding(
                            check=check,
                            message=f"{part.kind} id sent back was never sent by the provider as a call id (`{key}`)",
                            path=f"$.messages[*].{'id' if isinstance(part, ToolCall) else 'call_id'}",
                            actual=sent,
                            turn=turn.turn,
                        )
                    )
    return verdict(check, findings) if ran else None
