"""``server.*`` on the Responses, Anthropic and Gemini wires: one minimal mutation of a real recorded
answer per rule, each failing its check at its path (the Chat and Ollama ones are in test_server.py)."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.checks.server import ServerExchange, answer_verdicts
from conformance.verdicts import CheckVerdict
from tests.checks._server_traffic import REALWORLD, edit_body, edit_stream, one

Events = list[tuple[str | None, Any]]


def _only(verdicts: tuple[CheckVerdict, ...], check: str) -> list[str]:
    failing = {v.check: [f"{f.path}: {f.message}" for f in v.findings] for v in verdicts if v.status != "pass"}
    assert set(failing) == {check}, failing
    return [f.path for v in verdicts if v.check == check for f in v.findings]


def _where(events: Events, kind: str) -> int:
    return next(i for i, (_n, d) in enumerate(events) if isinstance(d, dict) and d.get("type") == kind)


# --------------------------------------------------------------------------------------------
# Responses
# --------------------------------------------------------------------------------------------

RESPONSES_STREAM = REALWORLD / "openai_responses" / "pydantic-ai__test_openai_responses_streaming_usage.yaml"
RESPONSES_WHOLE = REALWORLD / "openai_responses" / "logfire__test_responses.yaml"


def _responses() -> ServerExchange:
    return one(RESPONSES_STREAM, "openai_responses")


def _mutated(edit: Any) -> tuple[CheckVerdict, ...]:
    return answer_verdicts([edit_stream(_responses(), edit)])


def test_a_responses_stream_without_its_terminal_event_fails_framing() -> None:
    paths = _only(_mutated(lambda ev: [e for e in ev if e[1]["type"] != "response.completed"]), "server.framing")
    assert len(paths) == 1 and paths[0].startswith("stream[")


def test_a_chat_style_error_payload_ends_a_responses_stream_as_its_error() -> None:
    """llama.cpp's /v1/responses sends ``data: {"error": {...}}`` (no event name, no type) when its
    parser fails; openai-python raises ``APIError`` on any event whose data has an ``error`` key
    (``_streaming.py``), so it is the stream's error: one ``server.status`` finding, not also a missing
    terminal event."""
    error = {"error": {"code": 500, "message": "does not match the expected format", "type": "server_error"}}
    verdicts = _mutated(lambda ev: [*ev[:4], (None, error)])
    assert _only(verdicts, "server.status") == ["stream[4].data"]
    assert [v.check for v in verdicts if v.status == "fail"] == ["server.status"]


def test_a_delta_for_an_item_never_added_fails_ids() -> None:
    def edit(events: Events) -> Events:
        events[_where(events, "response.function_call_arguments.delta")][1]["item_id"] = "fc_nowhere"
        return events

    verdicts = _mutated(edit)
    paths = [f.path for v in verdicts if v.check == "server.ids" for f in v.findings]
    assert paths == [f"stream[{_where(_events(), 'response.function_call_arguments.delta')}].data.item_id"]


def _events() -> Events:
    import json

    from tests.checks._server_traffic import sse_events

    return [(n, json.loads(d)) for n, d in sse_events(_responses().body)]


def test_done_arguments_that_differ_from_the_deltas_fail_arguments() -> None:
    def edit(events: Events) -> Events:
        events[_where(events, "response.function_call_arguments.done")][1]["arguments"] = '{"other": 1}'
        return events

    paths = _only(_mutated(edit), "server.arguments")
    assert paths == [f"stream[{_where(_events(), 'response.function_call_arguments.done')}].data.arguments"]


def test_a_sequence_number_that_goes_back_fails_framing() -> None:
    def edit(events: Events) -> Events:
        events[3][1]["sequence_number"] = 0
        return events

    assert _only(_mutated(edit), "server.framing") == ["stream[3].data.sequence_number"]


def test_an_event_name_that_is_not_the_datas_type_fails_framing() -> None:
    def edit(events: Events) -> Events:
        events[2] = ("response.in_progress", events[2][1])
        return events

    if _events()[2][1]["type"] == "response.in_progress":
        pytest.skip("the third event is in_progress already")
    assert _only(_mutated(edit), "server.framing") == ["stream[2].event"]


def test_a_response_id_that_changes_fails_ids() -> None:
    def edit(events: Events) -> Events:
        events[_where(events, "response.completed")][1]["response"]["id"] = "resp_other"
        return events

    assert _only(_mutated(edit), "server.ids") == [
        f"stream[{_where(_events(), 'response.completed')}].data.response.id"
    ]


def test_a_completed_response_with_incomplete_details_fails_finish() -> None:
    answer = one(RESPONSES_WHOLE, "openai_responses")
    mutated = edit_body(answer, lambda b: b.update(incomplete_details={"reason": "max_output_tokens"}))
    assert _only(answer_verdicts([mutated]), "server.finish") == ["$.incomplete_details"]


def test_responses_usage_that_does_not_add_up_fails_usage() -> None:
    mutated = edit_body(one(RESPONSES_WHOLE, "openai_responses"), lambda b: b["usage"].update(total_tokens=2))
    assert _only(answer_verdicts([mutated]), "server.usage") == ["$.usage.total_tokens"]


def test_two_calls_with_one_call_id_fail_ids() -> None:
    def edit(body: dict[str, Any]) -> None:
        call = next(item for item in body["output"] if item["type"] == "function_call")
        body["output"].append({**call, "id": "fc_second"})

    mutated = edit_body(one(RESPONSES_WHOLE, "openai_responses"), edit)
    paths = _only(answer_verdicts([mutated]), "server.ids")
    assert len(paths) == 1 and paths[0].endswith(".call_id")


# --------------------------------------------------------------------------------------------
# Anthropic
# --------------------------------------------------------------------------------------------

ANTHROPIC_STREAM = (
    REALWORLD
    / "anthropic"
    / "crewai__TestAnthropicToolCallStreaming.test_anthropic_streaming_emits_tool_call_events.yaml"
)
ANTHROPIC_WHOLE = REALWORLD / "anthropic" / "pydantic-ai__test_multiple_parallel_tool_calls.yaml"


def _anthropic(edit: Any) -> tuple[CheckVerdict, ...]:
    return answer_verdicts([edit_stream(one(ANTHROPIC_STREAM, "anthropic"), edit)])


def test_an_anthropic_event_without_its_event_line_fails_framing() -> None:
    def edit(events: Events) -> Events:
        events[1] = (None, events[1][1])
        return events

    assert _only(_anthropic(edit), "server.framing") == ["stream[1].event"]


def test_an_anthropic_stream_without_message_stop_fails_framing() -> None:
    paths = _only(_anthropic(lambda ev: [e for e in ev if e[1]["type"] != "message_stop"]), "server.framing")
    assert len(paths) == 1


def test_block_indices_that_do_not_start_at_zero_fail_ids() -> None:
    def edit(events: Events) -> Events:
        for _n, data in events:
            if "index" in data:
                data["index"] += 1
        return events

    paths = _only(_anthropic(edit), "server.ids")
    assert len(paths) == 1 and paths[0].endswith(".index")  # one defect, however many blocks repeat it


def test_end_turn_with_a_tool_use_block_fails_finish() -> None:
    def edit(events: Events) -> Events:
        events[_where(events, "message_delta")][1]["delta"]["stop_reason"] = "end_turn"
        return events

    events = edit_stream(one(ANTHROPIC_STREAM, "anthropic"), lambda ev: ev)
    assert _only(_anthropic(edit), "server.finish") == [
        f"stream[{_where(_anthropic_events(events), 'message_delta')}].data.delta.stop_reason"
    ]


def _anthropic_events(answer: ServerExchange) -> Events:
    import json

    from tests.checks._server_traffic import sse_events

    return [(n, json.loads(d)) for n, d in sse_events(answer.body)]


def test_partial_json_that_does_not_parse_fails_arguments() -> None:
    def edit(events: Events) -> Events:
        for _n, data in events:
            if data.get("delta", {}).get("type") == "input_json_delta":
                data["delta"]["partial_json"] = "{'city"
                break
        return events

    paths = _only(_anthropic(edit), "server.arguments")
    assert len(paths) == 1 and paths[0].endswith(".partial_json")


def test_a_delta_after_its_block_stopped_fails_framing() -> None:
    def edit(events: Events) -> Events:
        stop = _where(events, "content_block_stop")
        delta = next(
            e for e in events if e[1]["type"] == "content_block_delta" and e[1]["index"] == events[stop][1]["index"]
        )
        return [*events[: stop + 1], (delta[0], {**delta[1], "delta": {**delta[1]["delta"]}}), *events[stop + 1 :]]

    verdicts = _anthropic(edit)
    assert "server.framing" in {v.check for v in verdicts if v.status == "fail"}


def test_a_whole_anthropic_answer_with_two_tool_uses_of_one_id_fails_ids() -> None:
    def edit(body: dict[str, Any]) -> None:
        uses = [b for b in body["content"] if b["type"] == "tool_use"]
        uses[1]["id"] = uses[0]["id"]

    paths = _only(answer_verdicts([edit_body(one(ANTHROPIC_WHOLE, "anthropic"), edit)]), "server.ids")
    assert len(paths) == 1 and paths[0].endswith(".id")


def test_a_whole_anthropic_answer_without_stop_reason_fails_finish() -> None:
    mutated = edit_body(one(ANTHROPIC_WHOLE, "anthropic"), lambda b: b.update(stop_reason=None))
    assert _only(answer_verdicts([mutated]), "server.finish") == ["$.stop_reason"]


# --------------------------------------------------------------------------------------------
# Gemini
# --------------------------------------------------------------------------------------------

GEMINI_STREAM = REALWORLD / "gemini" / "pydantic-ai__test_google_streaming_tool_call_thought_signature.yaml"
GEMINI_WHOLE = REALWORLD / "gemini" / "openinference__test_response_with_multiple_tool_calls[False].yaml"


def _gemini(edit: Any) -> tuple[CheckVerdict, ...]:
    return answer_verdicts([edit_stream(one(GEMINI_STREAM, "gemini"), edit)])


def test_a_gemini_stream_whose_last_chunk_has_no_finish_reason_fails_finish() -> None:
    def edit(events: Events) -> Events:
        for candidate in events[-1][1]["candidates"]:
            candidate.pop("finishReason", None)
        return events

    paths = _only(_gemini(edit), "server.finish")
    assert len(paths) == 1 and paths[0].endswith(".candidates[0].finishReason")


def test_a_gemini_total_that_does_not_add_up_fails_usage() -> None:
    def edit(events: Events) -> Events:
        events[-1][1]["usageMetadata"]["totalTokenCount"] += 7
        return events

    paths = _only(_gemini(edit), "server.usage")
    assert len(paths) == 1 and paths[0].endswith(".usageMetadata.totalTokenCount")


def test_a_gemini_response_id_that_changes_fails_ids() -> None:
    def edit(events: Events) -> Events:
        events[-1][1]["responseId"] = "other"
        return events

    assert _only(_gemini(edit), "server.ids") == [f"stream[{len(_gemini_events()) - 1}].data.responseId"]


def _gemini_events() -> Events:
    import json

    from tests.checks._server_traffic import sse_events

    return [(n, json.loads(d)) for n, d in sse_events(one(GEMINI_STREAM, "gemini").body)]


def test_gemini_function_call_ids_are_optional_but_unique() -> None:
    answer = one(GEMINI_WHOLE, "gemini")
    calls = [
        p["functionCall"]
        for p in __import__("json").loads(answer.body)["candidates"][0]["content"]["parts"]
        if "functionCall" in p
    ]
    assert len(calls) >= 2 and all("id" not in c for c in calls)  # absent: fine (wire-formats.md §4c)

    def edit(body: dict[str, Any]) -> None:
        for part in body["candidates"][0]["content"]["parts"]:
            if "functionCall" in part:
                part["functionCall"]["id"] = "call-1"

    paths = _only(answer_verdicts([edit_body(answer, edit)]), "server.ids")
    assert len(paths) == 1 and paths[0].endswith(".functionCall.id")


def test_a_gemini_stream_with_done_fails_framing() -> None:
    assert _only(_gemini(lambda ev: [*ev, (None, "[DONE]")]), "server.framing") == [f"stream[{len(_gemini_events())}]"]
