"""``conformance.adapters.gemini`` non-streamed responses and errors.

Expected values come from the documented wire shapes: wire-formats.md §4c and §4e (google-genai
``types.py`` ``FinishReason``; the Vertex ``Candidate.FinishReason`` numbers of the generated
aiplatform_v1 ``types/content.py``; the Google RPC error envelope with ``ErrorInfo`` and
``RetryInfo`` details), never from the adapter's own output.

Edge cases of wire-formats.md §10 covered in this file:
- E3  ``args`` absent -> ``{}``: test_function_call_parts_become_calls
- E7  (Gemini's form) ``STOP`` with calls -> ``tool_calls``: test_function_call_parts_become_calls,
      test_vertex_integer_stop_with_a_call_is_tool_calls
- E10 thought text as reasoning, the signed trailing empty text part: test_thought_parts_*,
      test_a_signed_trailing_empty_text_part_keeps_its_signature_for_replay
- E19 usage, ``totalTokenCount`` with thoughts: test_usage_fields
- E31 ids used when sent, synthesized (stable) when absent: test_ids_sent_*, test_synthetic_ids_*
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from conformance.adapters import gemini as adapter
from conformance.errors import WireFormatError
from conformance.model import (
    Message,
    Reasoning,
    Request,
    Text,
)


def _body(request: Request) -> dict[str, Any]:
    return adapter.request_to_wire(request).body


def _reply(*parts: dict[str, Any], finish: Any = "STOP", **extra: Any) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": list(parts)}}
    if finish is not None:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], **extra}


# --------------------------------------------------------------------------------------------
# Responses
# --------------------------------------------------------------------------------------------


def test_function_call_parts_become_calls() -> None:
    reply = _reply(
        {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}, "thoughtSignature": "S1"},
        {"functionCall": {"name": "get_time"}},  # E3: args absent
        usageMetadata={"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
        responseId="r1",
        modelVersion="gemini-2.5-flash",
    )
    response = adapter.response_from_wire(reply)
    first, second = response.tool_calls
    assert (first.name, first.arguments, first.arguments_raw) == ("get_weather", {"city": "Paris"}, '{"city":"Paris"}')
    assert first.provider_details == {"thoughtSignature": "S1", "synthetic_id": True}
    assert (second.name, second.arguments, second.arguments_raw, second.arguments_error) == ("get_time", {}, "", None)
    assert first.id != second.id
    assert response.finish_reason == "tool_calls"  # STOP + calls (§4c)
    assert response.provider_details == {
        "responseId": "r1",
        "modelVersion": "gemini-2.5-flash",
        "finish_reason": "STOP",
    }


def test_ids_sent_by_the_model_are_used() -> None:
    # E31: gemini-3.5-flash sends 8-char ids
    (call,) = adapter.response_from_wire(
        _reply({"functionCall": {"name": "t", "args": {}, "id": "dv8szvqe"}})
    ).tool_calls
    assert call.id == "dv8szvqe" and "synthetic_id" not in call.provider_details


def test_synthetic_ids_depend_on_the_response_bytes_only() -> None:
    reply = _reply({"functionCall": {"name": "t", "args": {"a": 1}}}, responseId="r1")
    ids = [c.id for c in adapter.response_from_wire(reply).tool_calls]
    assert ids == [c.id for c in adapter.response_from_wire(reply).tool_calls]
    other = _reply({"functionCall": {"name": "t", "args": {"a": 1}}}, responseId="r2")
    assert ids != [c.id for c in adapter.response_from_wire(other).tool_calls]


@pytest.mark.parametrize("args", ['{"city": "Par', "[1, 2]", 7, [1]])
def test_arguments_that_are_not_an_object_are_an_error_never_empty(args: Any) -> None:
    (call,) = adapter.response_from_wire(_reply({"functionCall": {"name": "t", "args": args}})).tool_calls
    assert call.arguments is None and call.arguments_error
    assert call.arguments_raw == (args if isinstance(args, str) else str(args).replace(" ", ""))


def test_a_call_without_a_name_is_a_malformed_response() -> None:
    response = adapter.response_from_wire(_reply({"functionCall": {"args": {}}}))
    assert response.tool_calls == () and response.finish_reason == "error"
    assert response.error is not None and response.error.kind == "malformed_response"


def test_thought_parts_become_reasoning_and_text_stays_text() -> None:
    reply = _reply(
        {"text": "**Planning**", "thought": True},
        {"text": "Paris is sunny."},
        {"text": ""},  # the trailing empty text part (§4d) is not a text part
    )
    response = adapter.response_from_wire(reply)
    assert response.parts == (Reasoning(text="**Planning**", source="gemini"), Text(text="Paris is sunny."))
    assert response.finish_reason == "stop"


def test_a_signed_trailing_empty_text_part_keeps_its_signature_for_replay() -> None:
    reply = _reply({"text": "Paris is sunny."}, {"text": "", "thoughtSignature": "S"})
    response = adapter.response_from_wire(reply)
    assert response.parts == (
        Text(text="Paris is sunny."),
        Reasoning(text="", signature="S", source="gemini", provider_details={"thought": False}),
    )
    # replayed as the model sent it
    parts = _body(Request(messages=(Message(role="assistant", parts=response.parts),)))["contents"][0]["parts"]
    assert parts == reply["candidates"][0]["content"]["parts"]


def test_usage_fields() -> None:
    # §4c: totalTokenCount includes thoughts (29 + 15 + 45 = 89); cachedContentTokenCount -> cache reads
    usage = {
        "promptTokenCount": 29,
        "candidatesTokenCount": 15,
        "thoughtsTokenCount": 45,
        "totalTokenCount": 89,
        "cachedContentTokenCount": 8,
    }
    got = adapter.response_from_wire(_reply({"text": "x"}, usageMetadata=usage)).usage
    assert got is not None
    assert (got.input_tokens, got.output_tokens, got.reasoning_tokens, got.total_tokens, got.cache_read_tokens) == (
        29,
        15,
        45,
        89,
        8,
    )


@pytest.mark.parametrize(
    ("finish", "reason"),
    [
        ("STOP", "stop"),
        ("MAX_TOKENS", "length"),
        ("SAFETY", "content_filter"),
        ("RECITATION", "content_filter"),
        ("BLOCKLIST", "content_filter"),
        ("PROHIBITED_CONTENT", "content_filter"),
        ("SPII", "content_filter"),
        ("MALFORMED_FUNCTION_CALL", "malformed_tool_call"),
        ("UNEXPECTED_TOOL_CALL", "other"),
        ("TOO_MANY_TOOL_CALLS", "other"),
        ("OTHER", "other"),
        ("SOMETHING_NEW", "other"),
        # Vertex ?$alt=json;enum-encoding=int (aiplatform_v1 Candidate.FinishReason numbers)
        (1, "stop"),
        (2, "length"),
        (3, "content_filter"),
        (9, "malformed_tool_call"),
        (15, "other"),
    ],
)
def test_finish_reason_table(finish: Any, reason: str) -> None:
    response = adapter.response_from_wire(_reply({"text": "x"}, finish=finish))
    assert response.finish_reason == reason
    names = {1: "STOP", 2: "MAX_TOKENS", 3: "SAFETY", 9: "MALFORMED_FUNCTION_CALL", 15: "UNEXPECTED_TOOL_CALL"}
    assert response.provider_details["finish_reason"] == names.get(finish, finish)


def test_vertex_integer_stop_with_a_call_is_tool_calls() -> None:
    # recorded Vertex replies send finishReason 1 with functionCall parts (§4c)
    assert adapter.response_from_wire(_reply({"functionCall": {"name": "t"}}, finish=1)).finish_reason == "tool_calls"


def test_a_malformed_function_call_is_kept_distinct_with_its_message() -> None:
    reply = _reply(finish="MALFORMED_FUNCTION_CALL")
    reply["candidates"][0]["finishMessage"] = "Malformed function call: print(default_api.t(x=))"
    response = adapter.response_from_wire(reply)
    assert response.finish_reason == "malformed_tool_call" and response.tool_calls == ()
    assert response.provider_details["finishMessage"].startswith("Malformed function call")


def test_a_blocked_prompt_is_a_content_filter_finish() -> None:
    response = adapter.response_from_wire({"promptFeedback": {"blockReason": "SAFETY"}})
    assert (response.finish_reason, response.provider_details["finish_reason"]) == ("content_filter", "SAFETY")


def test_only_the_first_candidate_counts() -> None:
    body = {
        "candidates": [
            {"content": {"parts": [{"text": "one"}]}, "finishReason": "STOP", "index": 0},
            {"content": {"parts": [{"text": "two"}]}, "finishReason": "STOP", "index": 1},
        ]
    }
    assert adapter.response_from_wire(body).text == "one"


def test_a_body_without_a_finish_reason_is_not_a_broken_stream() -> None:
    response = adapter.response_from_wire({"candidates": [{"content": {"parts": [{"text": "x"}]}}]})
    assert (response.finish_reason, response.error) == ("other", None)


def test_an_error_body_becomes_an_error_response() -> None:
    response = adapter.response_from_wire({"error": {"code": 503, "message": "busy", "status": "UNAVAILABLE"}})
    assert response.finish_reason == "error" and response.error is not None and response.error.kind == "overloaded"


def test_a_response_that_is_not_an_object_raises() -> None:
    with pytest.raises(WireFormatError):
        adapter.response_from_wire([{"candidates": []}])  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------


def _error(status: int, code: str, message: str = "m", details: list[Any] | None = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": status, "message": message, "status": code}
    if details is not None:
        error["details"] = details
    return {"error": error}


@pytest.mark.parametrize(
    ("status", "code", "kind"),
    [
        (400, "INVALID_ARGUMENT", "invalid_request"),
        (400, "FAILED_PRECONDITION", "invalid_request"),
        (401, "UNAUTHENTICATED", "auth"),
        (403, "PERMISSION_DENIED", "permission"),
        (404, "NOT_FOUND", "not_found"),
        (429, "RESOURCE_EXHAUSTED", "rate_limit"),
        (500, "INTERNAL", "server"),
        (503, "UNAVAILABLE", "overloaded"),
        (504, "DEADLINE_EXCEEDED", "server"),
    ],
)
def test_error_statuses_map_to_kinds(status: int, code: str, kind: str) -> None:
    error = adapter.error_from_wire(status, {}, _error(status, code))
    assert (error.kind, error.status, error.info.code, error.message) == (kind, status, code, "m")


def test_an_invalid_api_key_is_an_auth_error_despite_invalid_argument() -> None:
    # §4e: bad key -> 400 INVALID_ARGUMENT with ErrorInfo{reason: API_KEY_INVALID}
    details = [
        {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": "API_KEY_INVALID",
            "domain": "googleapis.com",
            "metadata": {"service": "generativelanguage.googleapis.com"},
        }
    ]
    body = _error(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.", details)
    error = adapter.error_from_wire(400, {}, body)
    assert (error.kind, error.info.code) == ("auth", "INVALID_ARGUMENT")
    assert error.info.provider_details == {"details": details}


def test_a_too_long_prompt_is_a_context_length_error() -> None:
    # google-gemini/gemini-cli#4231: 400 INVALID_ARGUMENT with this message
    message = "The input token count (3475108) exceeds the maximum number of tokens allowed (1048576)."
    assert adapter.error_from_wire(400, {}, _error(400, "INVALID_ARGUMENT", message)).kind == "context_length"


def test_retry_info_in_the_body_gives_retry_after() -> None:
    # §4e: google.rpc.RetryInfo{"retryDelay": "34.4s"} (VFX google-429-retry-info.json)
    details = [
        {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []},
        {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "34.4s"},
    ]
    body = _error(429, "RESOURCE_EXHAUSTED", "quota", details)
    assert adapter.error_from_wire(429, {}, body).retry_after == 34.4
    assert adapter.error_from_wire(429, {}, json.dumps(body).encode()).retry_after == 34.4


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after": "7"}, 7.0),
        ({"Retry-After": "7"}, 7.0),
        ({"retry-after-ms": "1500"}, 1.5),
        ({}, None),
    ],
)
def test_retry_after_comes_from_the_headers(headers: dict[str, str], seconds: float | None) -> None:
    assert adapter.error_from_wire(429, headers, _error(429, "RESOURCE_EXHAUSTED")).retry_after == seconds


def test_a_one_element_array_body_is_read() -> None:
    # a pre-stream error on :streamGenerateContent without alt=sse (google-gemini/gemini-cli#6678)
    body = b'[{"error": {"code": 400, "message": "bad", "status": "INVALID_ARGUMENT"}}]'
    assert adapter.error_from_wire(400, {}, body).kind == "invalid_request"


@pytest.mark.parametrize(
    ("status", "body", "kind"),
    [
        (502, b"<html>Bad Gateway</html>", "server"),
        (404, b"", "not_found"),
        (429, None, "rate_limit"),
        (400, _error(400, "SOMETHING_NEW"), "invalid_request"),
    ],
)
def test_a_body_that_is_not_the_envelope_falls_back_to_the_status(status: int, body: Any, kind: str) -> None:
    error = adapter.error_from_wire(status, {}, body)
    assert (error.kind, error.status) == (kind, status)
    assert error.message
