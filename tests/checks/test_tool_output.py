"""``translation.tool_result_content`` (``conformance.checks.tool_output``) on spec-shaped results: the MCP
2025-11-25 ``tools/call`` results (server/tools, "Tool Result"), converted by the bridge, sent by a reference
adapter as it is and as the bugs of issue 31 send them (structured content dropped, the text fallback
dropped, audio sent as text without a note)."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from conformance.adapters import get_adapter
from conformance.adapters._tool_output import placeholder_text, structured_text
from conformance.adapters.base import WireRequest
from conformance.checks._common import CaseContext
from conformance.checks.tool_output import CHECK, check_tool_result_content, client_findings, result_findings
from conformance.mcp_bridge._convert import tool_result_from_wire
from conformance.model import Audio, Image, Message, Request, Resource, Text, Tool, ToolCall, ToolResult
from conformance.run.conversation import ConversationOutcome, TurnOutcome
from conformance.scenarios.values import Expectation, Reply, Scenario, Turn
from conformance.verdicts import Finding

WEATHER = {"temperature": 22.5, "conditions": "Partly cloudy", "humidity": 65}
WAV = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA="
TOOLS = (Tool(name="get_weather", description="Weather", input_schema={"type": "object", "properties": {}}),)


def _result(wire: dict[str, Any]) -> ToolResult:
    return tool_result_from_wire(wire, call_id="call_1", name="get_weather")


def _request(result: ToolResult) -> Request:
    call = ToolCall(id="call_1", name="get_weather", arguments={}, arguments_raw="{}")
    return Request(
        model="m",
        tools=TOOLS,
        messages=(
            Message(role="user", parts=(Text(text="Weather?"),)),
            Message(role="assistant", parts=(call,)),
            Message(role="tool", parts=(result,)),
        ),
    )


def _ctx(wire_format: str, result: ToolResult, sent: WireRequest | None = None) -> CaseContext:
    """A one-turn case whose request fed ``result`` back; ``sent``: what the adapter sent instead of
    what the reference adapter sends."""
    adapter = get_adapter(wire_format)
    request = _request(result)
    wire = sent or adapter.request_to_wire(request)
    turn = TurnOutcome(turn=0, request=request, wire=wire, status=200)
    scenario = Scenario(
        id="s",
        behavior="",
        source="",
        path="s.yaml",  # type: ignore[arg-type]
        turns=(Turn(index=0, reply=Reply(), expect=Expectation()),),
        tools=TOOLS,
    )
    outcome = ConversationOutcome(scenario="s", adapter=wire_format, mode="non_stream", turns=(turn,))
    return CaseContext(scenario=scenario, adapter=adapter, mode="non_stream", outcome=outcome)


STRUCTURED_ONLY = {"content": [], "structuredContent": WEATHER}
STRUCTURED_AND_TEXT = {"content": [{"type": "text", "text": json.dumps(WEATHER)}], "structuredContent": WEATHER}
TEXT_AND_AUDIO = {
    "content": [{"type": "text", "text": "a sound"}, {"type": "audio", "data": WAV, "mimeType": "audio/wav"}]
}
LINK = {
    "content": [
        {"type": "resource_link", "uri": "file:///project/src/main.rs", "name": "main.rs", "mimeType": "text/x-rust"}
    ]
}


@pytest.mark.parametrize("wire", ["openai_chat", "openai_responses", "anthropic", "gemini", "ollama"])
@pytest.mark.parametrize(
    "result", [STRUCTURED_ONLY, STRUCTURED_AND_TEXT, TEXT_AND_AUDIO, LINK], ids=["so", "st", "ta", "l"]
)
def test_the_reference_adapters_pass(wire: str, result: dict[str, Any]) -> None:
    verdict = check_tool_result_content(_ctx(wire, _result(result)))
    assert verdict is not None and verdict.check == CHECK
    assert verdict.status == "pass", verdict.findings


def _defects(findings: list[Finding]) -> list[Finding]:
    """The findings that fail the check (a placeholder's note is kept as a ``note`` finding)."""
    return [f for f in findings if f.kind == "defect"]


def test_no_verdict_without_tool_results() -> None:
    request = Request(model="m", messages=(Message(role="user", parts=(Text(text="hi"),)),))
    ctx = _ctx("openai_chat", _result(STRUCTURED_ONLY))
    turn = replace(ctx.outcome.turns[0], request=request, wire=get_adapter("openai_chat").request_to_wire(request))
    assert check_tool_result_content(replace(ctx, outcome=replace(ctx.outcome, turns=(turn,)))) is None


def test_structured_content_alone_sent_without_its_json_fails() -> None:
    # the bug of mastra#20168 / xagent#1378: structuredContent ignored, the model gets an empty result
    result = _result(STRUCTURED_ONLY)
    sent = get_adapter("openai_chat").request_to_wire(_request(replace(result, provider_details={})))
    verdict = check_tool_result_content(_ctx("openai_chat", result, sent))
    assert verdict is not None and verdict.status == "fail"
    [finding] = verdict.findings
    assert (
        finding.message
        == "tool result call_1: its structuredContent (no text block beside it) was sent without its JSON"
    )
    assert finding.expected == structured_text(WEATHER)
    assert finding.path == "$.messages[2].parts[0].content"


def test_the_text_fallback_dropped_fails() -> None:
    # a client that sends structuredContent as JSON and drops the text block beside it: a server's
    # own text (here a summary, not the JSON) never reaches the model
    summary = {"content": [{"type": "text", "text": "22.5 °C, partly cloudy"}], "structuredContent": WEATHER}
    result = _result(summary)
    sent = get_adapter("anthropic").request_to_wire(_request(replace(result, content=())))
    verdict = check_tool_result_content(_ctx("anthropic", result, sent))
    assert verdict is not None and verdict.status == "fail"
    assert [f.message for f in verdict.findings] == [
        "tool result call_1: the text of content[0] was dropped (the text fallback of its structuredContent)"
    ]


def test_a_text_fallback_that_is_the_json_may_be_compacted() -> None:
    result = _result(STRUCTURED_AND_TEXT)
    only_json = replace(result, content=(Text(text=structured_text(WEATHER)),))
    assert _defects(result_findings(result, only_json, carries={"text"}, wire="anthropic", notes=())) == []


def test_audio_sent_as_text_without_a_note_fails() -> None:
    result = _result(TEXT_AND_AUDIO)
    sent = get_adapter("openai_chat").request_to_wire(_request(result))
    silent = replace(sent, notes=())
    verdict = check_tool_result_content(_ctx("openai_chat", result, silent))
    assert verdict is not None and verdict.status == "fail"
    [finding] = verdict.findings
    assert finding.message == "audio in result call_1 sent as text without a note"
    assert finding.path == "$.messages[2].parts[0].content[1]"


def test_audio_dropped_silently_fails() -> None:
    result = _result(TEXT_AND_AUDIO)
    dropped = get_adapter("openai_chat").request_to_wire(_request(replace(result, content=result.content[:1])))
    verdict = check_tool_result_content(_ctx("openai_chat", result, dropped))
    assert verdict is not None and verdict.status == "fail"
    messages = [f.message for f in verdict.findings]
    assert messages[0] == "tool result call_1: the text sent is not the rule's view of the result (docs/mcp.md)"
    assert "audio in result call_1 sent as text without a note" in messages


def test_a_placeholder_in_the_adapters_own_words_passes_with_its_note() -> None:
    result = _result(TEXT_AND_AUDIO)
    own = ToolResult(call_id="call_1", content=(Text(text="a sound"), Text(text="[audio omitted]")))
    note = "audio in tool result call_1 content[1] left out"
    assert _defects(result_findings(result, own, carries={"text"}, wire="openai_chat", notes=(note,))) == []
    assert placeholder_text(result.content[1]) != "[audio omitted]"


def test_audio_sent_where_the_slot_carries_none_is_judged_by_the_view() -> None:
    result = _result(TEXT_AND_AUDIO)
    as_is = ToolResult(call_id="call_1", content=(Text(text="a sound"), Audio(media_type="audio/wav", data=WAV)))
    findings = result_findings(result, as_is, carries={"text"}, wire="openai_chat", notes=())
    assert {f.message for f in findings} >= {
        "tool result call_1: the media sent differ from the result's (a block the wire carries must reach it)"
    }


def test_a_resource_link_not_given_fails() -> None:
    result = _result(LINK)
    sent = ToolResult(call_id="call_1", content=())
    [finding] = result_findings(result, sent, carries={"text"}, wire="ollama", notes=())
    assert (
        finding.message
        == "tool result call_1: the resource link content[0] (file:///project/src/main.rs) was not given to the model"
    )


def test_an_image_the_wire_carries_must_reach_it() -> None:
    png = {"content": [{"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}]}
    result = _result(png)
    [finding] = result_findings(
        result, ToolResult(call_id="call_1"), carries={"text", "image"}, wire="anthropic", notes=()
    )
    assert finding.expected == [("image", "image/png")] and finding.actual == []


def test_a_black_box_clients_notes_are_not_judged() -> None:
    result = _result(TEXT_AND_AUDIO)
    own = ToolResult(call_id="call_1", content=(Text(text="a sound"), Text(text="(audio)")))
    assert _defects(result_findings(result, own, carries={"text"}, wire="openai_chat", notes=None)) == []


def test_results_are_matched_by_position_where_the_wire_keeps_no_ids() -> None:
    result = _result(STRUCTURED_ONLY)
    verdict = check_tool_result_content(_ctx("hermes", result))
    assert verdict is not None and verdict.status == "pass"
    sent = get_adapter("hermes").request_to_wire(_request(replace(result, provider_details={})))
    verdict = check_tool_result_content(_ctx("hermes", result, sent))
    assert verdict is not None and verdict.status == "fail"


def test_an_embedded_blob_placeholder_needs_its_note() -> None:
    blob = {"content": [{"type": "resource", "resource": {"uri": "file:///a.bin", "blob": "AAEC"}}]}
    result = _result(blob)
    sent = get_adapter("gemini").request_to_wire(_request(result))
    assert sent.notes and "an embedded binary resource" in sent.notes[0]
    verdict = check_tool_result_content(_ctx("gemini", result, replace(sent, notes=())))
    assert verdict is not None
    assert [f.message for f in verdict.findings] == [
        "an embedded binary resource in result call_1 sent as text without a note"
    ]
    assert isinstance(result.content[0], Resource)


def test_the_adapters_note_is_shown_with_the_case() -> None:
    result = _result(TEXT_AND_AUDIO)
    sent = get_adapter("ollama").request_to_wire(_request(result))
    verdict = check_tool_result_content(_ctx("ollama", result, sent))
    assert verdict is not None and verdict.status == "pass"
    [note] = verdict.findings
    assert note.kind == "note" and note.message == sent.notes[0]
    assert note.path == "$.messages[2].parts[0].content[1]"


# A black-box client is held to losses only (client_findings): the spec's content, in any spelling.


def _client_case(sent: ToolResult, *more: Message) -> tuple[ToolResult, Request]:
    return sent, Request(messages=(Message(role="tool", parts=(sent,)), *more))


def test_a_client_that_writes_the_blocks_its_own_way_loses_nothing() -> None:
    result = ToolResult(
        call_id="call_1",
        content=(Text(text='He said "hi"'), Resource(uri="file:///r/notes.txt", media_type="text/plain")),
    )
    as_json = json.dumps(
        [{"type": "text", "text": 'He said "hi"'}, {"type": "resource_link", "uri": "file:///r/notes.txt"}]
    )
    sent, request = _client_case(ToolResult(call_id="call_1", content=(Text(text=as_json),)))
    assert client_findings(result, sent, request) == []


def test_a_resource_text_escaped_twice_still_reached_the_model() -> None:
    """The AI SDK's MCP client writes an embedded resource as its JSON (``mcpToModelOutput``) and its OpenAI
    Chat provider the result's parts as a JSON list (``@ai-sdk/openai/dist/index.js:1649-1650``): the text is
    there, escaped twice; a client that sends another text has dropped it."""
    readme = "# weather-app\n\nRun it with `python -m weather_app Paris`.\n"
    result = ToolResult(
        call_id="call_1",
        content=(Resource(uri="file:///repo/README.md", media_type="text/markdown", text=readme),),
    )
    block = {
        "type": "resource",
        "resource": {"uri": "file:///repo/README.md", "mimeType": "text/markdown", "text": readme},
    }
    twice = json.dumps([{"type": "text", "text": json.dumps(block)}], separators=(",", ":"))
    sent, request = _client_case(ToolResult(call_id="call_1", content=(Text(text=twice),)))
    assert client_findings(result, sent, request) == []
    other, request = _client_case(
        ToolResult(call_id="call_1", content=(Text(text=json.dumps([{"type": "text", "text": "hi"}])),))
    )
    [finding] = client_findings(result, other, request)
    assert "the text of content[0] was dropped" in finding.message


def test_a_client_that_sends_nothing_of_a_structured_only_result_fails() -> None:
    result = ToolResult(
        call_id="call_1", content=(), provider_details={"mcp": {"structured_content": {"aqi": 42, "city": "Paris"}}}
    )
    reordered, request = _client_case(
        ToolResult(call_id="call_1", content=(Text(text='{"city": "Paris", "aqi": 42}'),))
    )
    assert client_findings(result, reordered, request) == []
    empty, request = _client_case(ToolResult(call_id="call_1", content=(Text(text=""),)))
    [finding] = client_findings(result, empty, request)
    assert "structuredContent" in finding.message and finding.kind == "defect"


def test_a_client_that_drops_audio_silently_fails_and_one_that_moves_an_image_passes() -> None:
    audio = Audio(media_type="audio/wav", data="UklGRg==")
    image = Image(media_type="image/png", data="iVBORw0KGgo=")
    result = ToolResult(call_id="call_1", content=(Text(text="spoken"), audio, image))
    moved, request = _client_case(
        ToolResult(call_id="call_1", content=(Text(text="spoken"),)), Message(role="user", parts=(image,))
    )
    [finding] = client_findings(result, moved, request)
    assert "audio block content[1]" in finding.message and "dropped silently" in finding.message


def test_an_image_sent_in_base64url_reached_the_model() -> None:
    """google-genai serializes bytes in base64url (``_`` and ``-``), which the Gemini API reads as the same
    bytes (proto3 JSON mapping of ``bytes``): pydantic-ai's Gemini request for mcp/render_chart carries the
    MCP image ``...QOA/wyAS...`` as ``...QOA_wyAS...`` in ``functionResponse.parts``."""
    image = Image(media_type="image/png", data="mP4jwQMQOA/wyASgnAGk+xA==")
    result = ToolResult(call_id="call_1", content=(image,))
    urlsafe = Image(media_type="image/png", data="mP4jwQMQOA_wyASgnAGk-xA")
    sent, request = _client_case(ToolResult(call_id="call_1", content=(Text(text="{}"), urlsafe)))
    assert client_findings(result, sent, request) == []
    other = Image(media_type="image/png", data="mP4jwQMQOA_wyASgnAGk-xB")
    sent, request = _client_case(ToolResult(call_id="call_1", content=(Text(text="{}"), other)))
    [finding] = client_findings(result, sent, request)
    assert "image block content[0]" in finding.message


def test_audio_kept_verbatim_in_a_later_user_content_reached_the_model() -> None:
    """pydantic-ai sends a tool's audio to Gemini as an ``inlineData`` part of a user content after the results
    (``pydantic_ai/models/google.py:1503-1554``), which the Gemini reader keeps verbatim (``raw_parts``)."""
    audio = Audio(media_type="audio/wav", data="UklGRg==")
    result = ToolResult(call_id="call_1", content=(audio,))
    kept = Message(
        role="user",
        parts=(Text(text="<pyai:tool_result>"),),
        provider_details={"raw_parts": [[1, {"inlineData": {"data": "UklGRg", "mime_type": "audio/wav"}}]]},
    )
    sent, request = _client_case(ToolResult(call_id="call_1", content=(Text(text="See file 64f511."),)), kept)
    assert client_findings(result, sent, request) == []
    sent, request = _client_case(ToolResult(call_id="call_1", content=(Text(text="See file 64f511."),)))
    [finding] = client_findings(result, sent, request)
    assert "audio block content[0]" in finding.message


def test_audio_and_a_blob_in_openai_chat_user_parts_reached_the_model() -> None:
    audio = Audio(media_type="audio/wav", data="UklGRg==")
    blob = Resource(uri="file:///a.gz", media_type="application/gzip", blob="H4sI")
    result = ToolResult(call_id="call_1", content=(audio, blob))
    kept = Message(
        role="user",
        parts=(),
        provider_details={
            "raw_parts": [
                [0, {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}}],
                [1, {"type": "file", "file": {"file_data": "data:application/gzip;base64,H4sI", "filename": "a"}}],
            ]
        },
    )
    sent, request = _client_case(ToolResult(call_id="call_1", content=(Text(text="See file 1."),)), kept)
    assert client_findings(result, sent, request) == []


def test_a_client_placeholder_that_names_the_blocks_type_says_it() -> None:
    audio = Audio(media_type="audio/wav", data="UklGRg==")
    result = ToolResult(call_id="call_1", content=(audio,))
    said, request = _client_case(ToolResult(call_id="call_1", content=(Text(text="[an audio/wav clip was left out]"),)))
    assert client_findings(result, said, request) == []
