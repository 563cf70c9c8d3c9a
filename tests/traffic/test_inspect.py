"""Tests for ``conformance.traffic.inspect`` and ``conformance inspect``.

Two parts:

1. The plumbing, with a tiny fake adapter injected through ``monkeypatch`` (no reference adapter
   needed): JSON contract, problems instead of crashes, unsupported endpoints, exit codes, text.
2. The real-world harness: every interaction of the 44 cassettes in ``tests/realworld``
   decoded by the reference adapters and checked against ``MANIFEST.md`` (the issue's acceptance
   checks): no crashes, no problems except for endpoints no adapter serves, the adapter, the
   status, exactly the tool names in order with arguments matching the MANIFEST previews, streamed
   calls, chunk-invariant folds equal to a non-streamed parse where one exists, and error kinds.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

import conformance.traffic.inspect as inspect_module
from conformance.adapters import get_adapter
from conformance.adapters.base import Adapter, WireRequest, WireTools, error_kind_from_status, retry_after_from_headers
from conformance.assembly import fold
from conformance.cli import main
from conformance.errors import ProviderError, WireFormatError
from conformance.framing import JSONArrayDecoder, SSEDecoder
from conformance.model import (
    ErrorInfo,
    Finish,
    Message,
    Request,
    Response,
    StreamEvent,
    Text,
    TextDelta,
    Tool,
    ToolCall,
    ToolCallChunk,
    ToolCallEnd,
    ToolCallStart,
    ToolResult,
    Usage,
    UsageEvent,
)
from conformance.traffic.cassettes import Interaction, load_cassette
from conformance.traffic.inspect import (
    CassetteReport,
    InteractionReport,
    inspect_cassette,
    inspect_paths,
    render_json,
    render_text,
)

# --------------------------------------------------------------------------------------------
# a fake adapter and synthetic cassettes
# --------------------------------------------------------------------------------------------


def _request_from_wire(body: Mapping[str, Any], *, path: str = "", tools: Sequence[Tool] = ()) -> Request:
    if body.get("model") == "explode":
        raise KeyError("messages")
    if body.get("model") == "invalid":
        raise WireFormatError("messages[0]: not a message")
    return Request(
        model=body["model"],
        tools=tuple(Tool(name=n) for n in body.get("tool_names", [])),
        tool_choice=body.get("tool_choice"),
        stream=bool(body.get("stream")),
        messages=(
            Message(role="user", parts=(Text(text="time?"),)),
            Message(role="assistant", parts=(ToolCall(id="c0", name="getTime", arguments={}),)),
            Message(role="tool", parts=(ToolResult(call_id="c0", is_error=True),)),
        ),
    )


def _response_from_wire(body: Mapping[str, Any], *, tools: Sequence[Tool] = ()) -> Response:
    if "text" not in body:
        raise ValueError("no text in the body")
    call = ToolCall(id="c1", name="getTime", arguments={"tz": "UTC"}, arguments_raw='{"tz": "UTC"}')
    return Response(
        parts=(Text(text=body["text"]), call),
        finish_reason="tool_calls",
        usage=Usage(input_tokens=3, output_tokens=4),
        provider_details={"finish_reason": "tool_use"},
    )


def _stream_from_wire(chunks: Iterable[bytes], *, tools: Sequence[Tool] = ()) -> Iterator[StreamEvent]:
    data = b"".join(chunks)
    for line in data.splitlines():
        if line.startswith(b"data: "):
            yield TextDelta(line[len(b"data: ") :].decode())
    yield ToolCallStart("c1", "getTime", 0)
    yield ToolCallChunk("c1", '{"tz":')
    yield ToolCallChunk("c1", '"UTC"}')
    yield ToolCallEnd("c1", '{"tz":"UTC"}', {"tz": "UTC"})
    yield UsageEvent(Usage(input_tokens=1))
    yield Finish("tool_calls", "tool_use")


def _error_from_wire(
    status: int, headers: Mapping[str, str], body: bytes | str | Mapping[str, Any] | None
) -> ProviderError:
    info = ErrorInfo(
        kind=error_kind_from_status(status),
        status=status,
        message="slow down",
        retry_after=retry_after_from_headers(headers),
        code="rate_limit_error",
    )
    return ProviderError(info)


def _unused_tools_to_wire(tools: Sequence[Tool]) -> WireTools:
    raise NotImplementedError


def _unused_request_to_wire(request: Request) -> WireRequest:
    raise NotImplementedError


FAKE = Adapter(
    name="fake",
    wire_format="openai_chat",
    capabilities=frozenset(),
    tools_to_wire=_unused_tools_to_wire,
    request_to_wire=_unused_request_to_wire,
    request_from_wire=_request_from_wire,
    response_from_wire=_response_from_wire,
    stream_from_wire=_stream_from_wire,
    error_from_wire=_error_from_wire,
)


@pytest.fixture
def fake_adapter(monkeypatch: pytest.MonkeyPatch) -> Adapter:
    monkeypatch.setattr(inspect_module, "get_adapter", lambda name: FAKE)
    return FAKE


CHAT = "https://api.openai.com/v1/chat/completions"


def exchange(
    request_body: Mapping[str, Any] | None,
    response_body: str,
    *,
    status: int = 200,
    uri: str = CHAT,
    content_type: str = "application/json",
    headers: Mapping[str, list[str]] | None = None,
) -> dict[str, Any]:
    return {
        "request": {
            "method": "POST",
            "uri": uri,
            "headers": {},
            "body": json.dumps(request_body) if request_body is not None else None,
        },
        "response": {
            "status": {"code": status, "message": "x"},
            "headers": {"content-type": [content_type], **(headers or {})},
            "body": {"string": response_body},
        },
    }


def cassette_file(tmp_path: Path, *interactions: dict[str, Any], name: str = "c.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump({"version": 1, "interactions": list(interactions)}), encoding="utf-8")
    return path


GOOD = exchange({"model": "m", "tool_names": ["getTime"], "tool_choice": "auto"}, '{"text": "hello"}')
STREAM = exchange(
    {"model": "m", "stream": True, "tool_names": ["getTime"], "tool_choice": "getTime"},
    "data: Hel\n\ndata: lo\n\n",
    content_type="text/event-stream",
)
RATE_LIMITED = exchange({"model": "m"}, '{"error": {}}', status=429, headers={"retry-after": ["1"]})
UNSUPPORTED = exchange({}, '{"id": "conv_1"}', uri="https://api.openai.com/v1/conversations")

CONTRACT_KEYS = {"index", "adapter", "status", "streaming", "request", "response", "error", "problems"}


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# --------------------------------------------------------------------------------------------
# plumbing, with the fake adapter
# --------------------------------------------------------------------------------------------


def test_json_contract(tmp_path: Path, fake_adapter: Adapter, capsys: pytest.CaptureFixture[str]) -> None:
    path = cassette_file(tmp_path, GOOD, STREAM, RATE_LIMITED)
    code, out, _ = run_cli(capsys, "inspect", "--format", "json", str(path))
    assert code == 0
    data = json.loads(out)
    (cassette,) = data["cassettes"]
    assert cassette["path"] == str(path)
    good, stream, limited = cassette["interactions"]
    for item in (good, stream, limited):
        assert set(item) >= CONTRACT_KEYS
        assert item["problems"] == []

    assert good["index"] == 0 and good["adapter"] == "openai_chat" and good["status"] == 200
    assert good["streaming"] is False
    assert good["request"] == {
        "tools": ["getTime"],
        "tool_choice": "auto",
        "model": "m",
        "stream": False,
        "decoded": True,
    }
    response = good["response"]
    assert {"text", "tool_calls", "finish_reason"} <= set(response)
    assert response["text"] == "hello" and response["finish_reason"] == "tool_calls"
    (call,) = response["tool_calls"]
    assert {"id", "name", "arguments", "arguments_error"} <= set(call)
    assert (call["id"], call["name"], call["arguments"], call["arguments_error"]) == (
        "c1",
        "getTime",
        {"tz": "UTC"},
        None,
    )
    assert good["error"] is None
    assert good["usage"]["input_tokens"] == 3
    assert [m["role"] for m in good["messages"]] == ["user", "assistant", "tool"]
    assert good["messages"][2]["tool_results"] == [{"call_id": "c0", "is_error": True}]

    assert stream["streaming"] is True
    assert stream["request"]["tool_choice"] == {"name": "getTime"}
    assert stream["response"]["text"] == "Hello"
    assert stream["response"]["tool_calls"][0]["arguments"] == {"tz": "UTC"}
    assert [e["type"] for e in stream["events"]] == [
        "text_delta",
        "text_delta",
        "tool_call_start",
        "tool_call_chunk",
        "tool_call_chunk",
        "tool_call_end",
        "usage",
        "finish",
    ]
    assert stream["events"][2] == {
        "type": "tool_call_start",
        "tool_call_id": "c1",
        "tool_call_name": "getTime",
        "index": 0,
        "provider_details": {},
    }

    assert limited["response"] is None
    assert limited["error"] == {
        "kind": "rate_limit",
        "status": 429,
        "message": "slow down",
        "retry_after": 1.0,
        "code": "rate_limit_error",
    }
    assert data["summary"]["exit_code"] == 0


def test_an_unsupported_endpoint_gives_adapter_null_and_a_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = cassette_file(tmp_path, UNSUPPORTED)
    code, out, _ = run_cli(capsys, "inspect", "--format", "json", str(path))
    assert code == 1
    (item,) = json.loads(out)["cassettes"][0]["interactions"]
    assert item["adapter"] is None
    assert item["response"] is None and item["error"] is None
    (problem,) = item["problems"]
    assert str(path) in problem and "interaction 0" in problem and "/v1/conversations" in problem


def test_adapter_exceptions_become_problems(tmp_path: Path, fake_adapter: Adapter) -> None:
    broken_request = exchange({"model": "explode"}, '{"text": "x"}')
    broken_response = exchange({"model": "m"}, '{"no": "text"}')
    not_json = exchange({"model": "m"}, "<html>oops</html>", content_type="text/html")
    report = inspect_cassette(cassette_file(tmp_path, broken_request, broken_response, not_json, GOOD))
    first, second, third, fourth = report.interactions
    (p,) = first.problems
    assert "request_from_wire failed: KeyError: 'messages'" in p and "interaction 0" in p
    assert first.response is not None  # the response is still decoded
    item = inspect_module.report_to_json(inspect_module.InspectReport(cassettes=(report,)))
    assert item["cassettes"][0]["interactions"][0]["request"] == {
        "tools": [],
        "tool_choice": None,
        "model": None,
        "stream": None,
        "decoded": False,
    }
    (p,) = second.problems
    assert "response_from_wire failed: ValueError: no text in the body" in p
    assert "not a JSON object" in third.problems[0]
    assert fourth.problems == ()


def test_an_invalid_request_the_provider_rejected_is_a_note_not_a_problem(
    tmp_path: Path, fake_adapter: Adapter
) -> None:
    rejected = exchange({"model": "invalid"}, '{"error": {}}', status=400)
    accepted = exchange({"model": "invalid"}, '{"text": "x"}')
    first, second = inspect_cassette(cassette_file(tmp_path, rejected, accepted)).interactions
    assert first.problems == ()
    (note,) = first.notes
    assert "WireFormatError: messages[0]: not a message" in note and "rejected it too" in note
    assert first.error is not None and first.error.kind == "invalid_request"
    (problem,) = second.problems
    assert "request_from_wire failed: WireFormatError" in problem


def test_a_missing_adapter_module_is_a_problem_not_a_crash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(name: str) -> Adapter:
        raise ModuleNotFoundError(f"No module named 'conformance.adapters.{name}'")

    monkeypatch.setattr(inspect_module, "get_adapter", missing)
    (item,) = inspect_cassette(cassette_file(tmp_path, GOOD)).interactions
    assert item.adapter == "openai_chat"
    assert "cannot be loaded: ModuleNotFoundError" in item.problems[0]


def test_unreadable_files_are_reported_and_the_others_inspected(
    tmp_path: Path, fake_adapter: Adapter, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "a_bad.yaml"
    bad.write_text("interactions: [\n", encoding="utf-8")
    good = cassette_file(tmp_path, GOOD, name="b_good.yaml")
    code, out, _ = run_cli(capsys, "inspect", "--format", "json", str(tmp_path))
    assert code == 1
    data = json.loads(out)
    assert [c["path"] for c in data["cassettes"]] == [str(bad), str(good)]
    first, second = data["cassettes"]
    assert first["interactions"] == [] and "line" in first["problems"][0]
    assert second["problems"] == [] and second["interactions"][0]["problems"] == []
    assert data["summary"]["unreadable"] == 1


def test_a_missing_path_is_a_usage_error_naming_it(
    tmp_path: Path, fake_adapter: Adapter, capsys: pytest.CaptureFixture[str]
) -> None:
    cassette_file(tmp_path, GOOD, name="b_good.yaml")
    missing = tmp_path / "missing.yaml"
    code, out, err = run_cli(capsys, "inspect", str(tmp_path), str(missing))
    assert (code, out) == (2, "")
    assert f"{missing}: no such file or folder" in err


def test_malformed_interactions_are_reported(tmp_path: Path, fake_adapter: Adapter) -> None:
    no_response = dict(GOOD)
    del no_response["response"]
    report = inspect_cassette(cassette_file(tmp_path, no_response, GOOD))
    first, second = report.interactions
    assert first.status is None and first.response is None
    assert any("has no `response`" in p for p in first.problems)
    assert second.problems == ()


def test_exit_codes(tmp_path: Path, fake_adapter: Adapter, capsys: pytest.CaptureFixture[str]) -> None:
    clean = cassette_file(tmp_path, GOOD, name="clean.yaml")
    assert run_cli(capsys, "inspect", str(clean))[0] == 0
    with_problem = cassette_file(tmp_path, GOOD, UNSUPPORTED, name="problem.yaml")
    assert run_cli(capsys, "inspect", str(with_problem))[0] == 1
    empty = tmp_path / "empty"
    empty.mkdir()
    code, out, err = run_cli(capsys, "inspect", str(empty))
    assert code == 2 and out == "" and "no cassette files" in err
    code, _, err = run_cli(capsys, "inspect")
    assert code == 2 and "PATH" in err
    code, _, err = run_cli(capsys, "inspect", "--format", "xml", str(clean))
    assert code == 2 and "invalid choice" in err


def test_text_rendering_for_people(tmp_path: Path, fake_adapter: Adapter) -> None:
    long_text = "x" * 1000
    long_stream = exchange(
        {"model": "m", "stream": True},
        f"data: {long_text}\n\n",
        content_type="text/event-stream",
    )
    report = inspect_paths([cassette_file(tmp_path, GOOD, long_stream, RATE_LIMITED, UNSUPPORTED)])
    text = render_text(report)
    assert f"#0 POST {CHAT}" in text
    assert "adapter: openai_chat; status: 200; not streaming" in text
    assert "tools: getTime; tool_choice: auto" in text
    assert "messages: user: text; assistant: tool_call getTime; tool: tool_result c0 (error)" in text
    assert 'text: "hello"' in text
    assert 'tool call c1 getTime {"tz": "UTC"}' in text
    assert "finish: tool_calls (provider: tool_use)" in text
    assert "usage: input 3, output 4" in text
    assert 'tool_call_chunk c1 "{\\"tz\\":"' in text
    assert "tool_call_start #0 c1 getTime" in text
    assert long_text not in text  # long deltas are abbreviated
    assert "error: rate_limit [rate_limit_error] (HTTP 429): slow down; retry after 1 s" in text
    assert "problem: " in text and "no adapter serves POST /v1/conversations" in text
    assert text.rstrip().endswith("1 cassette(s), 0 unreadable; 4 interaction(s), 1 with problems")


def test_render_json_is_the_report_as_json(tmp_path: Path, fake_adapter: Adapter) -> None:
    report = inspect_paths([cassette_file(tmp_path, GOOD)])
    assert json.loads(render_json(report)) == inspect_module.report_to_json(report)


# --------------------------------------------------------------------------------------------
# the real-world harness (needs the five reference adapters)
# --------------------------------------------------------------------------------------------

ERROR_KINDS = {400: "invalid_request", 401: "auth", 403: "permission", 404: "not_found", 429: "rate_limit"}
"""The kind each HTTP status of these recordings maps to (wire-formats.md §1e/§3e/§4e/§5e)."""

STOP_REASONS = {"stop", "end_turn", "STOP", "completed"}
"""Provider stop reasons that mean a normal end when no tool call was made."""


@functools.cache
def _inspect(path: str) -> CassetteReport:
    return inspect_cassette(path)


@pytest.fixture
def inspected(realworld_dir: Path, realworld_cassette: str) -> CassetteReport:
    return _inspect(str(realworld_dir / "cassettes" / realworld_cassette))


def expected_adapter(entry: Any) -> str:
    provider = entry.path.split("/", 1)[0]
    if provider != "other":
        return provider
    return "openai_responses" if "Responses API" in entry.shows else "openai_chat"


def matches_preview(call: Mapping[str, Any], preview: str) -> bool:
    """The MANIFEST shows each call's arguments truncated; the text we decoded must start with it."""
    candidates = [call["arguments_raw"]]
    if call["arguments"] is not None:
        candidates += [json.dumps(call["arguments"]), json.dumps(call["arguments"], ensure_ascii=False)]
    if any(c.startswith(preview) for c in candidates):
        return True
    squeeze = functools.partial(re.sub, r"\s+", "")
    return any(squeeze(c).startswith(squeeze(preview)) for c in candidates)


def test_realworld_interactions_decode_as_the_manifest_says(
    realworld_cassette: str, realworld_manifest: dict[str, Any], inspected: CassetteReport
) -> None:
    entry = realworld_manifest[realworld_cassette]
    assert inspected.readable and not inspected.problems
    data = inspect_module.report_to_json(inspect_module.InspectReport(cassettes=(inspected,)))
    items = data["cassettes"][0]["interactions"]
    assert len(items) == len(entry.interactions)
    for item, line in zip(items, entry.interactions, strict=True):
        where = f"interaction {item['index']}: {line.line.strip()}"
        assert item["status"] == line.status, where
        assert item["streaming"] is line.stream, where
        if item["adapter"] is None:
            # Only traffic that is not an LLM call (the MANIFEST shows no model for it).
            assert not line.line.split("|", 1)[1].strip(), where
            assert len(item["problems"]) == 1 and "no adapter serves" in item["problems"][0], where
            continue
        assert item["adapter"] == expected_adapter(entry), where
        assert item["problems"] == [], where
        if line.status >= 400:
            check_error(item, line, where)
            continue
        response = item["response"]
        assert response is not None, where
        calls = response["tool_calls"]
        if line.tool_calls is not None:
            assert [c["name"] for c in calls] == [name for name, _ in line.tool_calls], where
            for call, (_, preview) in zip(calls, line.tool_calls, strict=True):
                assert call["arguments_error"] is None, where
                assert matches_preview(call, preview), f"{where}: {call['arguments_raw']!r} vs {preview!r}"
        elif line.streamed_tool_calls is not None:
            assert [c["name"] for c in calls] == line.streamed_tool_calls, where
            assert all(c["arguments_error"] is None for c in calls), where
        elif entry.expected_reading is None:
            assert calls == [], where
        if calls:
            assert response["finish_reason"] == "tool_calls", where
            assert all(c["id"] for c in calls), where
        elif line.stop in STOP_REASONS:
            assert response["finish_reason"] == "stop", where
        assert item["error"] is None, where


def check_error(item: Mapping[str, Any], line: Any, where: str) -> None:
    error = item["error"]
    assert error is not None, where
    assert item["response"] is None, where
    assert error["kind"] == ERROR_KINDS[line.status], where
    assert error["status"] == line.status, where
    assert error["message"], where
    preview = line.error or ""
    if preview.startswith('"'):  # Ollama: the error is a plain string
        assert error["message"] == json.loads(preview), where
    elif quoted := re.search(r'"message": "((?:[^"\\]|\\.)*)', preview):
        assert json.dumps(error["message"]).startswith('"' + quoted.group(1)), where


def test_legacy_function_call_is_one_tool_call(realworld_dir: Path, realworld_manifest: dict[str, Any]) -> None:
    """MANIFEST "Expected reading" of dd-trace-py's legacy ``function_call`` response."""
    name = "openai_chat/dd-trace-py__chat_completion_function_call.yaml"
    assert realworld_manifest[name].expected_reading is not None
    path = realworld_dir / "cassettes" / name
    (item,) = _inspect(str(path)).interactions
    assert item.problems == ()
    assert item.response is not None
    (call,) = item.response.tool_calls
    wire = load_cassette(path).interactions[0].response
    assert wire is not None
    function_call = wire.json["choices"][0]["message"]["function_call"]
    assert call.name == function_call["name"] == "extract_student_info"
    assert call.arguments == json.loads(function_call["arguments"])
    assert call.id  # synthetic: the legacy form has no id
    assert item.response.finish_reason == "tool_calls"


def streamed_interactions(cassette: Path) -> Iterator[tuple[Interaction, InteractionReport]]:
    report = _inspect(str(cassette))
    for interaction, item in zip(load_cassette(cassette).interactions, report.interactions, strict=True):
        if item.streaming and item.adapter is not None and item.status is not None and item.status < 400:
            yield interaction, item


def test_streams_fold_the_same_however_the_bytes_are_chunked(realworld_dir: Path, realworld_cassette: str) -> None:
    for interaction, item in streamed_interactions(realworld_dir / "cassettes" / realworld_cassette):
        assert item.adapter is not None and interaction.response is not None
        adapter = get_adapter(item.adapter)
        tools = item.request.tools if item.request is not None else ()
        body = interaction.response.body
        whole = list(adapter.stream_from_wire([body], tools=tools))
        by_byte = list(adapter.stream_from_wire((body[i : i + 1] for i in range(len(body))), tools=tools))
        by_seven = list(adapter.stream_from_wire([body[i : i + 7] for i in range(0, len(body), 7)], tools=tools))
        assert by_byte == whole, f"interaction {item.index}: 1-byte chunks give other events"
        assert by_seven == whole, f"interaction {item.index}: 7-byte chunks give other events"
        assert fold(by_byte) == fold(whole)


def calls_of(response: Response) -> list[tuple[str, Any]]:
    return [(c.name, c.arguments) for c in response.tool_calls]


def non_streamed_equivalents(adapter_name: str, body: bytes) -> list[Mapping[str, Any]]:
    """Complete non-streamed bodies a stream also carries: the Responses API's
    ``response.completed`` event holds the whole response; a one-chunk Gemini stream is one
    ``GenerateContentResponse`` (wire-formats.md §2d, §4d)."""
    if adapter_name == "openai_responses":
        decoder = SSEDecoder()
        events = decoder.decode(body) + decoder.flush()
        completed = [json.loads(e.data) for e in events if e.data.startswith("{")]
        return [e["response"] for e in completed if e.get("type") == "response.completed"]
    if adapter_name == "gemini":
        if body.lstrip().startswith(b"["):
            array = JSONArrayDecoder()
            chunks = [json.loads(element) for element in array.decode(body) + array.flush()]
        else:
            sse = SSEDecoder()
            chunks = [json.loads(e.data) for e in sse.decode(body) + sse.flush()]
        return chunks if len(chunks) == 1 else []
    return []


def test_streams_fold_to_the_calls_a_non_streamed_parse_gives(realworld_dir: Path, realworld_cassette: str) -> None:
    for interaction, item in streamed_interactions(realworld_dir / "cassettes" / realworld_cassette):
        assert item.adapter is not None and item.response is not None and interaction.response is not None
        adapter = get_adapter(item.adapter)
        tools = item.request.tools if item.request is not None else ()
        for body in non_streamed_equivalents(item.adapter, interaction.response.body):
            plain = adapter.response_from_wire(body, tools=tools)
            assert calls_of(plain) == calls_of(item.response), f"interaction {item.index}"
            assert plain.finish_reason == item.response.finish_reason, f"interaction {item.index}"


def test_the_realworld_json_output_keeps_the_contract(realworld_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = (
        realworld_dir
        / "cassettes"
        / "openai_responses"
        / ("pydantic-ai__test_openai_conversation_id_tool_call_continuation.yaml")
    )
    code, out, _ = run_cli(capsys, "inspect", "--format", "json", str(path))
    assert code == 1  # the /v1/conversations calls are problems
    items = json.loads(out)["cassettes"][0]["interactions"]
    assert [i["adapter"] for i in items] == [None, "openai_responses", "openai_responses", None]
    assert all(set(i) >= CONTRACT_KEYS for i in items)
    assert items[1]["response"]["tool_calls"][0]["name"] == "get_conversation_code"
    assert items[2]["request"]["tools"] == ["get_conversation_code"]
    assert [bool(i["problems"]) for i in items] == [True, False, False, True]


# --------------------------------------------------------------------------------------------
# malformed arguments and URIs (issue 14): a clear message, never a traceback
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "uri",
    ["http://[::1", "http://[::1/v1/chat/completions", "http://[zz]/v1/chat/completions", "https://[", "http://]["],
)
def test_a_request_uri_that_is_not_a_url_is_a_problem_of_its_interaction(
    tmp_path: Path, fake_adapter: Adapter, capsys: pytest.CaptureFixture[str], uri: str
) -> None:
    path = cassette_file(tmp_path, exchange({"model": "m"}, '{"text": "x"}', uri=uri), GOOD)
    code, out, err = run_cli(capsys, "inspect", str(path))
    assert code == 1 and err == ""
    assert f"{path}: interaction 0: the request URI {uri!r} is not a URL" in out
    assert "fix or re-record it" in out
    assert "2 interaction(s), 1 with problems" in out  # the other interaction is still decoded


@pytest.mark.parametrize(
    ("argument", "message"),
    [
        ("", "an empty PATH"),
        ("  ", "an empty PATH"),
        ("x" * 5000, "File name too long"),
    ],
)
def test_malformed_path_arguments_are_usage_errors(
    capsys: pytest.CaptureFixture[str], argument: str, message: str
) -> None:
    code, out, err = run_cli(capsys, "inspect", argument)
    assert code == 2 and out == ""
    assert err.startswith("conformance inspect: error: ") and message in err
    assert len(err) < 500  # a 5000-character name is shortened in the message


@pytest.mark.parametrize("argument", ["http://[::1", "a\x00b", "/dev/null", "-", "[", "file:///etc/passwd"])
def test_odd_path_arguments_are_unreadable_files_not_crashes(capsys: pytest.CaptureFixture[str], argument: str) -> None:
    code, out, err = run_cli(capsys, "inspect", argument)
    assert code in (1, 2), (code, out, err)
    assert "Traceback" not in out + err


def test_an_unexpected_failure_costs_only_its_interaction(
    tmp_path: Path, fake_adapter: Adapter, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def explode(uri: str, body: Any) -> str:
        if "explode" in uri:
            raise LookupError("a bug of ours")
        return "fake"

    monkeypatch.setattr(inspect_module, "detect_adapter", explode)
    path = cassette_file(tmp_path, exchange({"model": "m"}, "{}", uri=CHAT + "?explode"), GOOD)
    code, out, _ = run_cli(capsys, "inspect", str(path))
    assert code == 1
    assert "interaction 0: cannot be inspected: LookupError: a bug of ours" in out
    assert "2 interaction(s), 1 with problems" in out
