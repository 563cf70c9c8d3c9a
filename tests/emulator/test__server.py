"""The emulator's HTTP server over real loopback HTTP: routing, framing (Content-Length for
whole bodies, one HTTP chunk per event for streams), turn index, script errors, determinism,
robustness and shutdown. Wire facts come from docs/emulator-contract and wire-formats.md."""

from __future__ import annotations

import dataclasses
import io
import json
import os
import re
import select
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from _emulator_http import MODELS, TOOLS, WIRES, exchange, request_for, sse_blocks

from conformance.adapters import get_adapter
from conformance.emulator import DEFAULT_REPLY, Emulator, EmulatorScript
from conformance.model import Message, Text, ToolCall, ToolResult
from conformance.scenarios.values import Fault, Reply, ScriptedCall

WEATHER = ScriptedCall(name="get_weather", arguments={"city": "Paris"}, arguments_raw='{"city": "Paris"}')
ANSWER = Reply(text="It is 18C and sunny in Paris.")
CALL = Reply(text="Let me look.", tool_calls=(WEATHER,), finish="tool_calls")


def _history(wire_turns: int) -> list[Message]:
    """A conversation holding ``wire_turns`` assistant messages (call, then result)."""
    messages = [Message(role="user", parts=(Text(text="What is the weather in Paris?"),))]
    for n in range(wire_turns):
        call = ToolCall(id=f"call_{n}", name="get_weather", arguments={"city": "Paris"}, arguments_raw="{}")
        messages.append(Message(role="assistant", parts=(call,)))
        messages.append(Message(role="tool", parts=(ToolResult(call_id=f"call_{n}", content=(Text(text="18C"),)),)))
    return messages


# --------------------------------------------------------------------------------------------
# Default script, framing
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_without_a_script_every_wire_answers_the_default_reply(
    emu: Emulator, client: httpx.Client, wire: str, stream: bool
) -> None:
    outcome = exchange(client, wire, request_for(wire, stream=stream))
    assert outcome.status == 200
    assert outcome.error is None
    assert outcome.response is not None
    assert outcome.response.text == "Hello from the conformance emulator." == DEFAULT_REPLY.text
    assert outcome.response.finish_reason == "stop"


def test_the_default_reply_answers_any_turn(emu: Emulator, client: httpx.Client) -> None:
    outcome = exchange(client, "openai_chat", request_for("openai_chat", _history(5), stream=False))
    assert outcome.response is not None and outcome.response.text == DEFAULT_REPLY.text


@pytest.mark.parametrize("wire", WIRES)
def test_a_whole_body_has_a_content_length_and_no_chunking(emu: Emulator, client: httpx.Client, wire: str) -> None:
    emu.set_script(EmulatorScript(scenario_id="framing/whole", replies=(CALL,)))
    outcome = exchange(client, wire, request_for(wire, stream=False))
    assert outcome.status == 200
    assert int(outcome.headers["content-length"]) == len(outcome.body)
    assert "transfer-encoding" not in outcome.headers
    assert outcome.headers["content-type"].startswith("application/json")
    assert "date" not in outcome.headers  # no clock: the bytes of an answer never change


@pytest.mark.parametrize("wire", ["openai_chat", "openai_responses", "anthropic", "gemini"])
def test_every_sse_event_is_its_own_http_chunk(emu: Emulator, client: httpx.Client, wire: str) -> None:
    emu.set_script(EmulatorScript(scenario_id="framing/sse", replies=(CALL,)))
    outcome = exchange(client, wire, request_for(wire, stream=True))
    assert outcome.headers["transfer-encoding"] == "chunked"
    assert "content-length" not in outcome.headers
    assert outcome.headers["content-type"].startswith("text/event-stream")
    blocks = sse_blocks(outcome.body)
    assert len(blocks) >= 2
    assert outcome.chunks == blocks  # chunk i is exactly event i: real boundaries, nothing merged or split


def test_every_ndjson_line_is_its_own_http_chunk(emu: Emulator, client: httpx.Client) -> None:
    emu.set_script(EmulatorScript(scenario_id="framing/ndjson", replies=(CALL,)))
    outcome = exchange(client, "ollama", request_for("ollama", stream=True))
    assert outcome.headers["content-type"] == "application/x-ndjson"
    lines = outcome.body.splitlines(keepends=True)
    assert len(lines) >= 3
    assert outcome.chunks == lines
    assert all(json.loads(line) for line in lines)


def test_the_gemini_stream_without_alt_sse_is_one_json_array_an_element_per_chunk(
    emu: Emulator, client: httpx.Client
) -> None:
    emu.set_script(EmulatorScript(scenario_id="framing/array", replies=(CALL,)))
    body = get_adapter("gemini").request_to_wire(request_for("gemini", stream=True)).body
    with client.stream("POST", "/v1beta/models/gemini-2.5-flash:streamGenerateContent", json=body) as answer:
        chunks = list(answer.iter_raw())
    assert answer.headers["content-type"].startswith("application/json")
    elements = json.loads(b"".join(chunks))
    assert isinstance(elements, list) and len(elements) == len(chunks) >= 2
    assert elements[-1]["candidates"][0]["finishReason"] == "STOP"
    events = list(get_adapter("gemini").stream_from_wire(chunks, tools=TOOLS))
    assert [e.type for e in events if e.type == "finish"] == ["finish"]


# --------------------------------------------------------------------------------------------
# Turns
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("wire", WIRES)
def test_the_turn_is_the_number_of_assistant_messages(emu: Emulator, client: httpx.Client, wire: str) -> None:
    replies = (CALL, Reply(text="second turn"), Reply(text="third turn"))
    emu.set_script(EmulatorScript(scenario_id="turns/three", replies=replies))
    for turn, expected in enumerate(["Let me look.", "second turn", "third turn"]):
        outcome = exchange(client, wire, request_for(wire, _history(turn), stream=False))
        assert outcome.response is not None, outcome.error
        assert outcome.response.text == expected


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_a_turn_past_the_script_is_a_400_in_the_wire_shape_naming_scenario_and_turn(
    emu: Emulator, client: httpx.Client, wire: str, stream: bool
) -> None:
    emu.set_script(EmulatorScript(scenario_id="turns/one", replies=(CALL,)))
    outcome = exchange(client, wire, request_for(wire, _history(1), stream=stream))
    assert outcome.status == 400
    assert outcome.error is not None
    assert outcome.error.kind == "invalid_request"
    assert "turns/one" in outcome.error.message
    assert "turn 1" in outcome.error.message


def test_a_stateful_responses_client_continues_from_previous_response_id(emu: Emulator, client: httpx.Client) -> None:
    emu.set_script(EmulatorScript(scenario_id="turns/stateful", replies=(CALL, ANSWER)))
    first = client.post("/v1/responses", json={"model": "gpt-4.1-mini", "input": "Weather in Paris?"}).json()
    call_id = first["output"][-1]["call_id"]
    follow_up = {
        "model": "gpt-4.1-mini",
        "previous_response_id": first["id"],
        "input": [{"type": "function_call_output", "call_id": call_id, "output": "18C"}],
    }
    second = client.post("/v1/responses", json=follow_up).json()
    assert second["output"][0]["content"][0]["text"] == ANSWER.text
    assert second["previous_response_id"] == first["id"]


# --------------------------------------------------------------------------------------------
# Requests the emulator cannot answer
# --------------------------------------------------------------------------------------------

_PATHS = {
    "openai_chat": "/v1/chat/completions",
    "openai_responses": "/v1/responses",
    "anthropic": "/v1/messages",
    "gemini": "/v1beta/models/gemini-2.5-flash:generateContent",
    "ollama": "/api/chat",
}


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("body", [b"{not json", b"[1, 2]", b""], ids=["not-json", "not-object", "empty"])
def test_an_unreadable_body_is_a_400_in_the_wire_shape(
    emu: Emulator, client: httpx.Client, wire: str, body: bytes
) -> None:
    answer = client.post(_PATHS[wire], content=body, headers={"content-type": "application/json"})
    assert answer.status_code == 400
    error = get_adapter(wire).error_from_wire(answer.status_code, answer.headers, answer.content).info
    assert error.kind == "invalid_request"
    if wire == "ollama" and body == b"{not json":  # Go's decoder's words (docs/emulator.md)
        assert error.message == "invalid character 'n' looking for beginning of object key string"
    else:
        assert "JSON" in error.message
    assert client.post(
        _PATHS[wire], json=get_adapter(wire).request_to_wire(request_for(wire, stream=False)).body
    ).is_success


def test_a_body_that_is_not_the_wire_shape_is_a_400(emu: Emulator, client: httpx.Client) -> None:
    answer = client.post("/v1/messages", json={"model": "claude", "messages": "not a list"})
    assert answer.status_code == 400
    body = answer.json()
    assert body["type"] == "error" and body["error"]["type"] == "invalid_request_error"
    assert "anthropic" in body["error"]["message"]


def test_an_unknown_path_is_a_404_listing_the_served_paths(emu: Emulator, client: httpx.Client) -> None:
    answer = client.post("/v2/whatever", json={})
    assert answer.status_code == 404
    message = answer.json()["error"]["message"]
    assert "/v2/whatever" in message and "/v1/chat/completions" in message and "/api/chat" in message


def test_get_root_describes_the_emulator(emu: Emulator, client: httpx.Client) -> None:
    emu.set_script(EmulatorScript(scenario_id="basic/get_time", replies=(CALL, ANSWER)))
    index = client.get("/").json()
    assert index["scenario"] == "basic/get_time" and index["turns"] == 2
    assert set(index["endpoints"]) == set(WIRES)


def test_a_garbage_request_line_gets_a_json_400_and_the_server_keeps_serving(emu: Emulator) -> None:
    with socket.create_connection(("127.0.0.1", emu.port), timeout=5) as raw:
        raw.sendall(b"THIS IS NOT HTTP\r\n\r\n")
        data = b""
        while piece := raw.recv(65536):  # the server closes the connection after the error
            data += piece
    assert data.startswith(b"HTTP/1.1 400") or data.startswith(b"HTTP/1.0 400")
    assert b'"error"' in data
    assert httpx.get(emu.base_url + "/").status_code == 200


def test_a_chunked_request_body_is_read(emu: Emulator, client: httpx.Client) -> None:
    body = json.dumps(get_adapter("ollama").request_to_wire(request_for("ollama", stream=False)).body).encode()
    answer = client.post("/api/chat", content=iter([body[:10], body[10:]]))  # an iterator: sent chunked
    assert answer.status_code == 200
    assert emu.requests[-1].headers.get("transfer-encoding") == "chunked"
    assert emu.requests[-1].body == body


def test_a_client_leaving_mid_stream_does_not_stop_the_server(emu: Emulator, client: httpx.Client) -> None:
    long_text = " ".join(f"word{n}" for n in range(3000))
    emu.set_script(EmulatorScript(scenario_id="robust/leave", replies=(Reply(text=long_text),)))
    body = get_adapter("openai_chat").request_to_wire(request_for("openai_chat", stream=True)).body
    with client.stream("POST", "/v1/chat/completions", json=body) as answer:
        next(answer.iter_raw())
    emu.set_script(None)
    assert exchange(client, "openai_chat", request_for("openai_chat", stream=False)).response is not None


def test_requests_are_recorded(emu: Emulator, client: httpx.Client) -> None:
    before = len(emu.requests)
    sent = get_adapter("anthropic").request_to_wire(request_for("anthropic", stream=False))
    client.post(sent.path, json=sent.body, headers={**sent.headers, "x-api-key": "test-key"})
    seen = emu.requests[before:]
    assert len(seen) == 1
    assert (seen[0].method, seen[0].path) == ("POST", "/v1/messages")
    assert seen[0].headers["anthropic-version"] == "2023-06-01"
    assert json.loads(seen[0].body) == sent.body


def test_concurrent_requests_are_served(emu: Emulator) -> None:
    emu.set_script(EmulatorScript(scenario_id="robust/concurrent", replies=(ANSWER,)))
    texts: list[str] = []

    def one() -> None:
        with httpx.Client(base_url=emu.base_url, timeout=10) as http:
            outcome = exchange(http, "anthropic", request_for("anthropic", stream=True))
            assert outcome.response is not None
            texts.append(outcome.response.text)

    threads = [threading.Thread(target=one) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert texts == [ANSWER.text] * 8


# --------------------------------------------------------------------------------------------
# Quirks, determinism, lifecycle
# --------------------------------------------------------------------------------------------


def test_an_unknown_quirk_is_ignored_and_logged(emu: Emulator, client: httpx.Client) -> None:
    reply = Reply(text="hello", quirks=("ping", "no_such_quirk"))
    emu.set_script(EmulatorScript(scenario_id="quirks/unknown", replies=(reply,)))
    outcome = exchange(client, "openai_chat", request_for("openai_chat", stream=True))
    assert outcome.response is not None and outcome.response.text == "hello"
    note = emu.log[-1]
    assert "no_such_quirk" in note and "ping" in note and "openai_chat" in note and "quirks/unknown" in note


def test_a_stream_fault_on_a_whole_body_request_answers_whole_and_logs(emu: Emulator, client: httpx.Client) -> None:
    emu.set_script(
        EmulatorScript(scenario_id="faults/whole", replies=(Reply(text="hi", fault=Fault(kind="disconnect")),))
    )
    outcome = exchange(client, "openai_chat", request_for("openai_chat", stream=False))
    assert outcome.response is not None and outcome.response.text == "hi"
    assert "disconnect" in emu.log[-1]


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_the_same_script_gives_byte_identical_answers_on_two_emulators(wire: str, stream: bool) -> None:
    reply = Reply(reasoning="Think first.", text="Let me look.", tool_calls=(WEATHER, WEATHER), finish="tool_calls")
    script = EmulatorScript(scenario_id="determinism", replies=(reply,))
    answers = []
    for _ in range(2):
        with Emulator(port=0, script=script) as emu, httpx.Client(base_url=emu.base_url) as http:
            outcome = exchange(http, wire, request_for(wire, stream=stream))
            answers.append((outcome.status, sorted(outcome.headers.items()), outcome.body, outcome.chunks))
    assert answers[0] == answers[1]
    assert answers[0][0] == 200


def test_different_scenarios_and_turns_get_different_ids(emu: Emulator, client: httpx.Client) -> None:
    ids = set()
    for scenario in ("a", "b"):
        emu.set_script(EmulatorScript(scenario_id=scenario, replies=(CALL, CALL)))
        for turn in range(2):
            outcome = exchange(client, "openai_chat", request_for("openai_chat", _history(turn), stream=False))
            assert outcome.response is not None
            ids.add(outcome.response.tool_calls[0].id)
            ids.add(json.loads(outcome.body)["id"])
    assert len(ids) == 8


@pytest.mark.parametrize("wire", WIRES)
def test_the_model_is_echoed(emu: Emulator, client: httpx.Client, wire: str) -> None:
    outcome = exchange(client, wire, request_for(wire, stream=False))
    body = json.loads(outcome.body)
    echoed = body.get("model", body.get("modelVersion"))
    assert echoed == MODELS[wire]


# --------------------------------------------------------------------------------------------
# Lifecycle
# --------------------------------------------------------------------------------------------


def test_it_binds_127_0_0_1_and_frees_the_port_on_close() -> None:
    with Emulator(port=0) as emu:
        port = emu.port
        assert emu.base_url == f"http://127.0.0.1:{port}"
        assert httpx.get(emu.base_url + "/").status_code == 200
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"http://127.0.0.1:{port}/", timeout=2)
    with Emulator(port=port) as again:  # the port can be bound again at once
        assert again.port == port


def test_close_drops_idle_keep_alive_connections_and_is_idempotent() -> None:
    emu = Emulator(port=0).start()
    http = httpx.Client(base_url=emu.base_url)
    assert http.get("/").status_code == 200  # the connection stays open (keep-alive)
    emu.close()
    emu.close()
    with pytest.raises(httpx.TransportError):
        http.get("/", timeout=2)
    http.close()


def test_the_script_can_be_set_and_cleared(emu: Emulator) -> None:
    script = EmulatorScript(scenario_id="x", replies=(ANSWER,))
    emu.set_script(script)
    assert emu.script is script
    emu.set_script(None)
    assert emu.script is None


def test_a_script_from_a_scenario_plays_its_turns() -> None:
    from pathlib import Path

    from conformance.scenarios.values import Expectation, Scenario, Turn

    turns = (
        Turn(index=0, user=(Text(text="hi"),), reply=CALL, expect=Expectation()),
        Turn(index=1, reply=ANSWER, expect=Expectation()),
    )
    scenario = Scenario(id="basic/x", path=Path("x.yaml"), behavior="b", source="s", turns=turns)
    script = EmulatorScript.from_scenario(scenario)
    assert script == EmulatorScript(scenario_id="basic/x", replies=(CALL, ANSWER))


def test_a_failing_encoder_answers_500_and_the_server_keeps_serving(
    emu: Emulator, client: httpx.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    from conformance.emulator import _openai_chat

    def broken(*args: object) -> dict[str, object]:
        raise RuntimeError("encoder bug")

    monkeypatch.setattr(_openai_chat, "response_body", broken)
    answer = client.post("/v1/chat/completions", json={"model": "m", "messages": [{"role": "user", "content": "hi"}]})
    assert answer.status_code == 500 and "failed to answer" in answer.json()["error"]["message"]
    monkeypatch.undo()
    assert exchange(client, "openai_chat", request_for("openai_chat", stream=False)).response is not None


@pytest.mark.parametrize("kind", ["disconnect", "error_event", "no_terminator"])
def test_a_large_after_never_sends_the_terminator(emu: Emulator, client: httpx.Client, kind: str) -> None:
    reply = Reply(text="Some words here.", fault=Fault(kind=kind, after=1000))  # type: ignore[arg-type]
    emu.set_script(EmulatorScript(scenario_id="faults/after", replies=(reply,)))
    outcome = exchange(client, "anthropic", request_for("anthropic", stream=True))
    assert b"message_stop" not in outcome.body
    assert b"message_delta" in outcome.body  # everything before the terminator was sent
    assert outcome.error is not None
    assert outcome.error.kind == ("server" if kind == "error_event" else "stream_incomplete")


@pytest.mark.parametrize("wire", ["openai_chat", "openai_responses", "anthropic", "gemini", "ollama"])
def test_the_unterminated_last_event_quirk_drops_only_the_final_blank_line(
    emu: Emulator, client: httpx.Client, wire: str
) -> None:
    emu.set_script(EmulatorScript(scenario_id="framing/whole-last", replies=(CALL,)))
    whole = exchange(client, wire, request_for(wire, stream=True))
    quirked = dataclasses.replace(CALL, quirks=("unterminated_last_event",))
    emu.set_script(EmulatorScript(scenario_id="framing/whole-last", replies=(quirked,)))
    cut = exchange(client, wire, request_for(wire, stream=True))
    assert cut.chunks[:-1] == whole.chunks[:-1]
    last, complete = cut.chunks[-1], whole.chunks[-1]
    if wire == "ollama":  # NDJSON: the last line without its newline
        assert complete.endswith(b"\n") and last == complete[:-1]
    else:  # SSE: one line end left, the blank line that ends the event missing
        end = b"\r\n" if complete.endswith(b"\r\n\r\n") else b"\n"
        assert last == complete[: -len(end)] and last.endswith(end)
    assert not [line for line in emu.log if "unterminated_last_event" in line]  # every wire knows this quirk


# --------------------------------------------------------------------------------------------
# The request log is bounded (docs/emulator.md, "The request log")
# --------------------------------------------------------------------------------------------


def _chat(padding: int = 0) -> bytes:
    """An OpenAI Chat request body, its user text padded with ``padding`` characters."""
    text = "hi" + "x" * padding
    return json.dumps({"model": "m", "messages": [{"role": "user", "content": text}]}).encode()


def test_the_log_keeps_the_newest_requests_and_counts_them_all() -> None:
    bodies = [_chat(n) for n in range(5)]
    with Emulator(port=0, max_requests=3) as small, httpx.Client(base_url=small.base_url, timeout=10) as http:
        for body in bodies:
            assert http.post("/v1/chat/completions", content=body).status_code == 200
        assert [r.number for r in small.requests] == [2, 3, 4]
        assert [r.body for r in small.requests] == bodies[2:]
        assert small.received == 5
        assert [r.number for r in small.requests_since(3)] == [3, 4]
        assert small.requests_since(0) == small.requests  # the dropped ones are gone, not faked


def test_the_byte_bound_drops_the_oldest_and_cuts_a_longer_body() -> None:
    with Emulator(port=0, max_log_bytes=1000) as small, httpx.Client(base_url=small.base_url, timeout=10) as http:
        first, second = _chat(500), _chat(600)
        for body in (first, second):
            assert http.post("/v1/chat/completions", content=body).status_code == 200
        assert [r.body for r in small.requests] == [second]  # both together are over 1000 bytes
        assert not small.requests[0].truncated and small.requests[0].size == len(second)
        big = _chat(5000)
        answer = http.post("/v1/chat/completions", content=big)
        assert answer.status_code == 200 and answer.json()["choices"][0]["message"]["content"]  # answered in full
        (kept,) = small.requests
        assert (kept.number, kept.size, kept.body, kept.truncated) == (2, len(big), big[:1000], True)


def test_played_answers_leave_the_log_with_their_requests() -> None:
    from conformance.scenarios import bundled
    from conformance.traffic.cassettes import load_cassette

    cassette = load_cassette(bundled.cassettes_dir() / "openai_chat" / "basic" / "get_time.yaml")
    with Emulator(port=0, max_requests=2) as small, httpx.Client(base_url=small.base_url, timeout=10) as http:
        small.play_cassette(cassette)
        for interaction in cassette.interactions:
            assert http.post("/v1/chat/completions", json=interaction.request.json).status_code == 200
        numbers = list(range(len(cassette.interactions)))[-2:]
        assert [p.request for p in small.played] == [r.number for r in small.requests] == numbers
        small.play_cassette(cassette)  # a new cassette starts the numbers again
        assert (small.received, small.requests, small.played) == (0, [], [])


def test_a_negative_bound_is_a_usage_error() -> None:
    from conformance.emulator import serve_command
    from conformance.errors import UsageError

    with pytest.raises(UsageError, match="max_requests >= 0"):
        Emulator(port=0, max_requests=-1)
    err = io.StringIO()
    assert serve_command(max_log_bytes=-5, out=io.StringIO(), err=err) == 2
    assert "--max-log-bytes -5" in err.getvalue()


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS line")


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads RSS from /proc (Linux)")
def test_many_large_requests_leave_the_emulators_memory_flat() -> None:
    """30 requests of 4 MB kept whole would hold 120 MB; with a 2 MB log the RSS of a `conformance
    emulator` process grows by far less (what is left is the allocator's spare room for one request).
    Measured before the bound: 51 x 10 MB took it from 33 MB to 538 MB."""
    bound = 2 * 1024 * 1024
    command = [sys.executable, "-m", "conformance", "emulator", "--port", "0", "--max-log-bytes", str(bound)]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) as process:
        try:
            assert process.stdout is not None
            match = re.search(r"listening on (http://127\.0\.0\.1:\d+)", process.stdout.readline())
            assert match
            big = _chat(4 * 1024 * 1024)
            with httpx.Client(base_url=match.group(1), timeout=60) as http:
                assert http.post("/v1/chat/completions", content=big).status_code == 200  # warm: one request's room
                start = _rss_mb(process.pid)
                for _ in range(30):
                    assert http.post("/v1/chat/completions", content=big).status_code == 200
                grown = _rss_mb(process.pid) - start
        finally:
            process.kill()
    assert grown < 40, f"RSS grew by {grown:.0f} MB over 30 requests of 4 MB with a 2 MB log"


@pytest.mark.parametrize("wire", ["openai_chat", "openai_responses", "anthropic"])
def test_retry_after_ms_sends_the_exact_delay_and_rounds_retry_after_up(
    emu: Emulator, client: httpx.Client, wire: str
) -> None:
    fault = Fault(kind="rate_limit", retry_after=1.5)
    emu.set_script(EmulatorScript(scenario_id="t", replies=(Reply(fault=fault, quirks=("retry_after_ms",)),)))
    outcome = exchange(client, wire, request_for(wire, stream=False))
    assert outcome.status == 429
    assert (outcome.headers.get_list("retry-after"), outcome.headers.get("retry-after-ms")) == (["2"], "1500")
    assert outcome.error is not None and outcome.error.retry_after == 1.5


def test_retry_delay_in_body_leaves_only_retryinfo_on_gemini(emu: Emulator, client: httpx.Client) -> None:
    fault = Fault(kind="rate_limit", retry_after=3)
    emu.set_script(EmulatorScript(scenario_id="t", replies=(Reply(fault=fault, quirks=("retry_delay_in_body",)),)))
    outcome = exchange(client, "gemini", request_for("gemini", stream=False))
    assert outcome.status == 429 and "retry-after" not in outcome.headers
    details = json.loads(outcome.body)["error"]["details"]
    assert {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "3s"} in details
    assert outcome.error is not None and outcome.error.retry_after == 3


@pytest.mark.parametrize(("wire", "quirk"), [("gemini", "retry_after_ms"), ("ollama", "retry_delay_in_body")])
def test_a_retry_quirk_of_another_wire_changes_nothing_and_is_noted(
    emu: Emulator, client: httpx.Client, wire: str, quirk: str
) -> None:
    fault = Fault(kind="rate_limit", retry_after=2)
    emu.set_script(EmulatorScript(scenario_id="t", replies=(Reply(fault=fault, quirks=(quirk,)),)))
    outcome = exchange(client, wire, request_for(wire, stream=False))
    assert outcome.headers.get_list("retry-after") == ["2"] and "retry-after-ms" not in outcome.headers
    assert any(quirk in note and "unknown" in note for note in emu.log)


# --------------------------------------------------------------------------------------------
# Hostile load and bodies (issue 27, point 6: the backlog, a too-deep request)
# --------------------------------------------------------------------------------------------

_BURST = 200


def _somaxconn() -> int:
    try:
        return int(Path("/proc/sys/net/core/somaxconn").read_text())
    except (OSError, ValueError):
        return 0


@pytest.mark.skipif(_somaxconn() <= _BURST, reason="needs Linux with net.core.somaxconn above the burst")
def test_a_burst_of_200_connections_is_queued_by_the_kernel_and_every_one_answered() -> None:
    """The kernel completes the handshake of every connection of a burst before the server accepts
    any (the listen backlog holds them all; a backlog of 5 held 6 and dropped the rest's SYNs), and
    then every one gets its answer."""
    emulator = Emulator(port=0)  # bound and listening, not yet accepting
    sockets = [socket.socket() for _ in range(_BURST)]
    try:
        for sock in sockets:
            sock.setblocking(False)
            sock.connect_ex(("127.0.0.1", emulator.port))
        connecting = set(sockets)
        established = 0
        deadline = time.monotonic() + 10  # a safety net: loopback handshakes take microseconds
        while connecting and time.monotonic() < deadline:
            _, writable, _ = select.select([], list(connecting), [], 0.1)
            for sock in writable:
                connecting.discard(sock)
                established += sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0
        assert (established, len(connecting)) == (_BURST, 0)
        emulator.start()
        for sock in sockets:
            sock.setblocking(True)
            sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            sock.setblocking(False)
        answers = {sock: b"" for sock in sockets}
        reading = set(sockets)
        deadline = time.monotonic() + 120  # a safety net, never reached when the server keeps up
        while reading and time.monotonic() < deadline:
            readable, _, _ = select.select(list(reading), [], [], 0.5)
            for sock in readable:
                piece = sock.recv(65536)
                answers[sock] += piece
                if not piece:
                    reading.discard(sock)
        assert sum(answer.startswith(b"HTTP/1.1 200") for answer in answers.values()) == _BURST
    finally:
        for sock in sockets:
            sock.close()
        emulator.close()


_DEEP = 100_000


def _deep_body(kind: str) -> bytes:
    opening, closing = (b"[" * _DEEP, b"]" * _DEEP) if kind == "arrays" else (b'{"a":' * _DEEP, b"}" * _DEEP)
    return b'{"model": "m", "stream": false, "messages": ' + opening + closing + b"}"


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("kind", ["arrays", "objects"])
def test_a_request_nested_100000_deep_is_a_400_in_the_wire_shape(
    emu: Emulator, client: httpx.Client, wire: str, kind: str
) -> None:
    answer = client.post(_PATHS[wire], content=_deep_body(kind), headers={"content-type": "application/json"})
    assert answer.status_code == 400
    error = get_adapter(wire).error_from_wire(answer.status_code, answer.headers, answer.content).info
    assert error.kind == "invalid_request"
    assert "nesting_depth=100" in error.message and "CONFORMANCE_LIMITS" in error.message
    assert emu.requests[-1].size == len(_deep_body(kind))  # received and logged like any request
    assert client.post(
        _PATHS[wire], json=get_adapter(wire).request_to_wire(request_for(wire, stream=False)).body
    ).is_success


def test_a_body_at_the_depth_limit_is_read_and_the_limit_follows_the_environment(
    emu: Emulator, client: httpx.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = get_adapter("openai_chat").request_to_wire(request_for("openai_chat", stream=False)).body
    deep = {**body, "metadata_unused": json.loads("[" * 90 + "]" * 90)}  # 92 levels in all: under 100
    assert client.post("/v1/chat/completions", json=deep).status_code == 200
    monkeypatch.setenv("CONFORMANCE_LIMITS", "nesting_depth=50")
    refused = client.post("/v1/chat/completions", json=deep)
    assert refused.status_code == 400 and "nesting_depth=50" in refused.json()["error"]["message"]
