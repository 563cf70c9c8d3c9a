"""``conformance record --live`` against loopback servers that answer like a real model that does
not follow the script (issue 16): text instead of a call, the call as JSON in ``content``, another
tool, a stream that never ends, no byte at all, a provider error.

Each pair gets one status (``recorded``, ``unchanged``, ``model deviated: ...``, ``failed: ...``); a
deviated or failed pair writes nothing and exits 1, unless ``--allow-deviation`` (deviated only). A
live cassette replays judged against what was recorded: PASS for the reference adapter, FAIL for a
mutant that drops text. The response bodies follow the Chat Completions wire (openai-python
``ChatCompletion`` / ``ChatCompletionChunk``)."""

from __future__ import annotations

import dataclasses
import json
import re
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from _hostile import run_bounded
from _loopback import LoopbackServer, Reply
from _raw_server import Peer, RawServer, chunk, gzip_bomb_answer, head

from conformance.adapters import get_adapter
from conformance.cli import main
from conformance.model import StreamEvent, TextDelta, Tool
from conformance.run.conversation import DEFAULT_MODELS
from conformance.run.runner import RunOptions, run_suite
from conformance.scenarios.loader import load_scenarios
from conformance.selftest._bugs import on_events
from conformance.traffic.safe_yaml import load_yaml

DATA = Path(__file__).resolve().parents[1] / "data" / "scenarios"
SERVED = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
CHAT = ("POST", "/v1/chat/completions")
JSON_HEADERS = [("content-type", "application/json")]
SSE_HEADERS = [("content-type", "text/event-stream")]


def _message(content: str | None, calls: list[dict[str, Any]] | None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = calls
    return message


def chat(content: str | None = None, calls: list[dict[str, Any]] | None = None) -> Reply:
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1764000000,
        "model": SERVED,
        "choices": [
            {"index": 0, "message": _message(content, calls), "finish_reason": "tool_calls" if calls else "stop"}
        ],
        "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25},
    }
    return Reply(headers=JSON_HEADERS, body=json.dumps(body).encode())


def _event(delta: dict[str, Any], finish: str | None) -> bytes:
    chunk = {
        "id": "chatcmpl-2",
        "object": "chat.completion.chunk",
        "created": 1764000000,
        "model": SERVED,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


def chat_stream(content: str | None = None, calls: list[dict[str, Any]] | None = None) -> Reply:
    pieces = [_event({"role": "assistant", "content": ""}, None)]
    if content:
        pieces.append(_event({"content": content}, None))
    for index, call in enumerate(calls or []):
        pieces.append(_event({"tool_calls": [{"index": index, **call}]}, None))
    pieces += [_event({}, "tool_calls" if calls else "stop"), b"data: [DONE]\n\n"]
    return Reply(headers=SSE_HEADERS, pieces=pieces)


GET_TIME = [{"id": "call_1", "type": "function", "function": {"name": "getTime", "arguments": '{"offset_ms":-1}'}}]
TEXT = "I am sorry, I cannot look up the time."
JSON_CALL = '{"name": "getTime", "arguments": {"offset_ms": -86400000}}'
GET_DATE = [{"id": "call_2", "type": "function", "function": {"name": "getDate", "arguments": "{}"}}]


def record(server_url: str, cassettes: Path, *more: str) -> int:
    argv = ["record", "--live", "--adapter", "openai_chat", "--scenarios-dir", str(DATA)]
    argv += ["--scenario", "basic/get_time", "--base-url", server_url, "--cassette-dir", str(cassettes), *more]
    return main(argv)


def cassette(cassettes: Path) -> Path:
    return cassettes / "openai_chat" / "basic" / "get_time.yaml"


def test_a_model_that_answers_in_text_deviates_and_nothing_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with LoopbackServer({CHAT: [chat(TEXT), chat_stream(TEXT)]}) as server:
        assert record(server.base_url, tmp_path) == 1
    err = capsys.readouterr().err
    assert (
        "basic/get_time: model deviated: turn 0 (non-stream): answered in text "
        f'("{TEXT}") where the scenario expects a call to getTime' in err
    )
    assert "0 recorded, 0 unchanged, 1 deviated, 0 unsupported, 0 failed" in err
    assert not cassette(tmp_path).exists()


def test_allow_deviation_writes_it_and_the_replay_judges_what_was_recorded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with LoopbackServer({CHAT: [chat(TEXT), chat_stream("No.")]}) as server:
        assert record(server.base_url, tmp_path, "--allow-deviation") == 0
        sent = [json.loads(r.body) for r in server.requests]
    assert "model deviated: turn 0 (non-stream): answered in text" in capsys.readouterr().err
    # the recording's knobs, in Chat Completions' own fields (openai-python completion_create_params)
    assert [(b["temperature"], b["seed"], b["max_tokens"], b.get("stream", False)) for b in sent] == [
        (0.0, 42, 256, False),
        (0.0, 42, 256, True),
    ]
    provenance = load_yaml(cassette(tmp_path).read_bytes())["provenance"]
    assert provenance["mode"] == "live"
    assert (provenance["model"], provenance["model_default"], provenance["served_model"]) == (
        DEFAULT_MODELS["openai_chat"],
        True,
        SERVED,
    )
    assert provenance["sampling"] == {"temperature": 0.0, "seed": 42, "max_tokens": 256}
    assert provenance["expected"] == {
        "non_stream": [{"turn": 0, "text": TEXT, "calls": [], "finish_reason": "stop"}],
        "stream": [{"turn": 0, "text": "No.", "calls": [], "finish_reason": "stop"}],
    }

    scenarios = [s for s in load_scenarios([DATA]).scenarios if s.id == "basic/get_time"]
    reference = get_adapter("openai_chat")
    result = run_suite(scenarios, [reference], RunOptions(cassette_dir=tmp_path, isolate=False))
    assert [(c.mode, c.status) for c in result.cases] == [("non_stream", "pass"), ("stream", "pass")], [
        (c.message, [f for v in c.checks for f in v.findings]) for c in result.cases
    ]
    checked = {v.check for c in result.cases for v in c.checks}
    assert {"roundtrip.text", "roundtrip.calls", "streaming.fold", "translation.recorded_request"} <= checked

    def no_text(events: list[StreamEvent], tools: tuple[Tool, ...]) -> list[StreamEvent]:
        return [e for e in events if not isinstance(e, TextDelta)]

    mutant = dataclasses.replace(reference, name="drops_text", **on_events(no_text)(reference))
    result = run_suite(scenarios, [mutant], RunOptions(cassette_dir=tmp_path, isolate=False))
    failed = {(c.mode, v.check) for c in result.cases for v in c.checks if v.status == "fail"}
    assert {("non_stream", "roundtrip.text"), ("stream", "roundtrip.text"), ("stream", "streaming.fold")} <= failed


def test_a_model_that_follows_the_scenario_is_recorded_then_unchanged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    replies = [chat(calls=GET_TIME), chat("Yesterday."), chat_stream(calls=GET_TIME), chat_stream("It was yesterday.")]
    with LoopbackServer({CHAT: replies}) as server:
        assert record(server.base_url, tmp_path, "--model", "qwen") == 0
    assert "basic/get_time: recorded (4 interactions)" in capsys.readouterr().err
    first = cassette(tmp_path).read_bytes()
    provenance = load_yaml(first)["provenance"]
    assert (provenance["model"], provenance["served_model"]) == ("qwen", SERVED)
    assert "model_default" not in provenance
    with LoopbackServer({CHAT: replies}) as server:
        assert record(server.base_url, tmp_path, "--model", "qwen") == 0
    assert "0 recorded, 1 unchanged" in capsys.readouterr().err
    assert cassette(tmp_path).read_bytes() == first
    scenarios = [s for s in load_scenarios([DATA]).scenarios if s.id == "basic/get_time"]
    result = run_suite(scenarios, [get_adapter("openai_chat")], RunOptions(cassette_dir=tmp_path, isolate=False))
    assert [c.status for c in result.cases] == ["pass", "pass"]


@pytest.mark.parametrize(
    ("replies", "said"),
    [
        (
            [chat(JSON_CALL), chat_stream(JSON_CALL)],
            "turn 0 (non-stream): wrote the call to getTime as JSON in the text",
        ),
        (
            [chat(calls=GET_DATE), chat("Done."), chat_stream(calls=GET_DATE), chat_stream("Done.")],
            "turn 0 (non-stream): called getDate where the scenario expects getTime",
        ),
    ],
    ids=["json-in-content", "another-tool"],
)
def test_what_the_model_did_instead_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], replies: list[Reply], said: str
) -> None:
    with LoopbackServer({CHAT: replies}) as server:
        assert record(server.base_url, tmp_path) == 1
    assert f"model deviated: {said}" in capsys.readouterr().err


def _old_cassette(cassettes: Path) -> bytes:
    path = cassette(cassettes)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"the old cassette\n")
    return path.read_bytes()


def test_no_byte_at_all_fails_at_the_deadline_and_the_old_cassette_stays(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = _old_cassette(tmp_path)
    silent = threading.Event()
    try:
        with LoopbackServer({CHAT: [Reply(hold=silent)]}) as server:
            started = time.monotonic()
            assert record(server.base_url, tmp_path, "--exchange-timeout", "1") == 1
            took = time.monotonic() - started
    finally:
        silent.set()
    err = capsys.readouterr().err
    assert "basic/get_time: failed: deadline: POST /v1/chat/completions did not end within 1 s" in err
    assert "nothing was written" in err
    assert took < 10
    assert cassette(tmp_path).read_bytes() == old


class _Endless(BaseHTTPRequestHandler):
    """Answers a non-streamed request like a model that calls getTime, then its text; a streamed one
    with an SSE stream that never ends (a ping comment every 50 ms)."""

    protocol_version = "HTTP/1.1"
    answered = 0

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        if not body.get("stream"):
            reply = chat(calls=GET_TIME) if _Endless.answered == 0 else chat("Yesterday.")
            _Endless.answered += 1
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(reply.body)))
            self.end_headers()
            self.wfile.write(reply.body)
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        try:
            for _ in range(400):  # 20 s at most
                self.wfile.write(b"%x\r\n%s\r\n" % (len(b": ping\n\n"), b": ping\n\n"))
                self.wfile.flush()
                time.sleep(0.05)
        except OSError:
            return  # the client hung up: as it should


@pytest.fixture
def endless() -> Iterator[str]:
    _Endless.answered = 0
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Endless)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_a_stream_that_never_ends_fails_at_the_deadline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], endless: str
) -> None:
    old = _old_cassette(tmp_path)
    started = time.monotonic()
    assert record(endless, tmp_path, "--exchange-timeout", "1") == 1
    assert time.monotonic() - started < 10
    err = capsys.readouterr().err
    assert "failed: deadline: POST /v1/chat/completions did not end within 1 s" in err
    assert cassette(tmp_path).read_bytes() == old


def test_a_provider_error_fails_the_pair(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    error = {"error": {"message": "the model crashed", "type": "server_error"}}
    with LoopbackServer({CHAT: [Reply(status=500, headers=JSON_HEADERS, body=json.dumps(error).encode())]}) as server:
        assert record(server.base_url, tmp_path) == 1
    err = capsys.readouterr().err
    assert "failed: turn 0 (non-stream): provider error server (HTTP 500): the model crashed" in err
    assert not cassette(tmp_path).exists()


def test_a_stale_live_cassette_is_re_recorded_live(tmp_path: Path) -> None:
    with LoopbackServer({CHAT: [chat(TEXT), chat_stream(TEXT)]}) as server:
        assert record(server.base_url, tmp_path, "--allow-deviation") == 0
    (scenario,) = [s for s in load_scenarios([DATA]).scenarios if s.id == "basic/get_time"]
    edited = dataclasses.replace(scenario, fingerprint="0" * 64)
    result = run_suite([edited], [get_adapter("openai_chat")], RunOptions(cassette_dir=tmp_path, isolate=False))
    (message,) = {c.message for c in result.cases}
    assert "re-record it with `conformance record --live --adapter openai_chat --scenario basic/get_time" in message
    assert "--base-url URL --api-key-env VAR`" in message


@pytest.mark.parametrize("option", [["--temperature", "0.5"], ["--seed", "1"], ["--allow-deviation"]])
def test_sampling_goes_with_live_only(tmp_path: Path, capsys: pytest.CaptureFixture[str], option: list[str]) -> None:
    argv = ["record", "--emulator", "--adapter", "openai_chat", "--scenario", "basic/get_time"]
    assert main([*argv, "--cassette-dir", str(tmp_path), *option]) == 2
    assert f"{option[0]} go with --live" in capsys.readouterr().err


def test_a_knob_given_none_is_left_out(tmp_path: Path) -> None:
    with LoopbackServer({CHAT: [chat(TEXT), chat_stream(TEXT)]}) as server:
        record(server.base_url, tmp_path, "--temperature", "none", "--seed", "none", "--max-tokens", "9")
        sent = json.loads(server.requests[0].body)
    assert ("temperature" in sent, "seed" in sent, sent["max_tokens"]) == (False, False, 9)


def test_a_stream_that_goes_silent_fails_at_the_deadline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    never = threading.Event()  # the stream sends its first event, then nothing
    first = Reply(headers=SSE_HEADERS, pieces=[_event({"role": "assistant", "content": ""}, None)])
    replies = [chat(calls=GET_TIME), chat("Yesterday."), first]
    try:
        with LoopbackServer({CHAT: replies}, gate=never) as server:
            started = time.monotonic()
            assert record(server.base_url, tmp_path, "--exchange-timeout", "1") == 1
            took = time.monotonic() - started
    finally:
        never.set()
    assert "failed: deadline: POST /v1/chat/completions did not end within 1 s" in capsys.readouterr().err
    assert took < 5
    assert not cassette(tmp_path).exists()


@pytest.mark.parametrize("wire", ["openai_chat", "openai_responses", "anthropic", "gemini", "ollama"])
def test_a_live_recording_on_every_wire_replays_pass_with_its_sampling_left_out(tmp_path: Path, wire: str) -> None:
    """The emulator stands in for a provider that follows the script: the cassette is recorded with
    the sampling fields in the wire's own names, and replays PASS for the reference adapter on every
    check, ``translation.recorded_request`` among them (the fields are the recorder's, not the adapter's)."""
    from conformance.emulator import Emulator, EmulatorScript

    (scenario,) = [s for s in load_scenarios([DATA]).scenarios if s.id == "basic/get_time"]
    with Emulator() as emulator:
        emulator.set_script(EmulatorScript.from_scenario(scenario))
        argv = ["record", "--live", "--adapter", wire, "--scenarios-dir", str(DATA), "--scenario", scenario.id]
        assert main([*argv, "--base-url", emulator.base_url, "--cassette-dir", str(tmp_path)]) == 0
    document = load_yaml((tmp_path / wire / "basic" / "get_time.yaml").read_bytes())
    sent = document["interactions"][0]["request"]["parsed_body"]
    knobs = {"gemini": sent.get("generationConfig"), "ollama": sent.get("options")}.get(wire, sent)
    assert knobs["temperature"] == 0.0
    assert ("seed" in knobs) == (wire in ("openai_chat", "gemini", "ollama"))
    result = run_suite([scenario], [get_adapter(wire)], RunOptions(cassette_dir=tmp_path, isolate=False))
    assert [c.status for c in result.cases] == ["pass", "pass"], [
        f for c in result.cases for v in c.checks for f in v.findings
    ]
    assert "translation.recorded_request" in {v.check for c in result.cases for v in c.checks}
    if wire == "openai_chat":  # leaving the recorder's fields out hides no adapter that sends its own
        from conformance.selftest._bugs import default_temperature_sent, on_request

        reference = get_adapter(wire)
        mutant = dataclasses.replace(reference, name="hot", **on_request(default_temperature_sent)(reference))
        result = run_suite([scenario], [mutant], RunOptions(cassette_dir=tmp_path, isolate=False))
        failed = {v.check for c in result.cases for v in c.checks if v.status == "fail"}
        assert "translation.recorded_request" in failed


def test_provenance_notes_are_written_into_the_live_cassette(tmp_path: Path) -> None:
    replies = [chat(calls=GET_TIME), chat("Yesterday."), chat_stream(calls=GET_TIME), chat_stream("It was yesterday.")]
    notes = ["--provenance", "model_sha256=1d96abc", "--provenance", "server_flags=--jinja -c 4096 --seed 42"]
    with LoopbackServer({CHAT: replies}) as server:
        assert record(server.base_url, tmp_path, *notes) == 0
    provenance = load_yaml(cassette(tmp_path).read_bytes())["provenance"]
    assert (provenance["model_sha256"], provenance["server_flags"]) == ("1d96abc", "--jinja -c 4096 --seed 42")


@pytest.mark.parametrize(
    ("note", "message"),
    [
        ("model", "the recorder writes model itself"),
        ("Model-SHA=1", "lower_snake_case KEY"),
        ("no_value", "give KEY=VALUE"),
    ],
)
def test_a_provenance_note_that_would_clash_or_is_malformed_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], note: str, message: str
) -> None:
    argv = ["record", "--live", "--adapter", "openai_chat", "--scenario", "basic/get_time"]
    argv += ["--base-url", "http://127.0.0.1:9", "--cassette-dir", str(tmp_path), "--provenance", note]
    if note == "model":
        argv[-1] = "model=other"
    assert main(argv) == 2
    assert message in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


def test_a_recorded_deviation_the_model_repeats_is_unchanged_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for _ in range(2):
        with LoopbackServer({CHAT: [chat(TEXT), chat_stream("No.")]}) as server:
            assert record(server.base_url, tmp_path, "--allow-deviation") == 0
    first, second = capsys.readouterr().err.split("1 deviated", 1)
    assert "basic/get_time: model deviated: turn 0 (non-stream): answered in text" in first
    assert "basic/get_time: unchanged (the model still deviates, as recorded: turn 0 (non-stream)" in second
    assert "0 recorded, 1 unchanged, 0 deviated" in second
    with LoopbackServer({CHAT: [chat(TEXT), chat_stream("No.")]}) as server:  # without the flag: still a deviation
        assert record(server.base_url, tmp_path) == 1
    assert "model deviated: " in capsys.readouterr().err


# --------------------------------------------------------------------------------------------
# Bounds (issue 27, point 4): hostile servers on 127.0.0.1
# --------------------------------------------------------------------------------------------


def _dribble(peer: Peer) -> None:
    """The status line and headers one byte every 0.4 s (httpx's read timeout restarts at each)."""
    for byte in head(headers=[("content-type", "application/json"), ("content-length", "2")]):
        if peer.stopped:
            return
        peer.send(bytes([byte]))
        peer.wait(0.4)
    peer.send(b"{}")


def test_headers_sent_a_byte_at_a_time_are_cut_at_the_exchange_deadline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before, each byte restarted the read timeout: the pair ran into its own --timeout (300 s by
    default; 20 s here, which the old code hit with "timed out")."""
    old = _old_cassette(tmp_path)
    with RawServer(_dribble) as server:
        code = record(server.base_url, tmp_path, "--exchange-timeout", "1", "--timeout", "20")
        hung_up = server.idle(20)
    err = capsys.readouterr().err
    assert code == 1
    assert "basic/get_time: failed: deadline: POST /v1/chat/completions did not end within 1 s" in err
    assert "(raise it with --exchange-timeout); nothing was written" in err
    assert "timed out" not in err
    assert hung_up and server.requests == 1  # one exchange, cut: the next mode is not tried
    assert cassette(tmp_path).read_bytes() == old


_gzip_bomb = gzip_bomb_answer(4 << 30)  # 4 MB inflating to 4 GiB


def _endless_deltas(peer: Peer) -> None:
    """An SSE stream of text deltas that never ends, as fast as the client reads (64 KiB writes)."""
    peer.send(head(headers=[("content-type", "text/event-stream"), ("transfer-encoding", "chunked")]))
    events = _event({"content": "la "}, None) * 300
    while not peer.stopped:
        peer.send(chunk(events))


_MEASURED = """
import resource, sys
from conformance.cli import main
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
code = main(sys.argv[1:])
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(f"peak {before} {after}", file=sys.stderr)
sys.exit(code)
"""


def _record_measured(server: str, cassettes: Path, *more: str) -> tuple[int, str, float]:
    """``record --live`` in a child under a 1 GiB address space; its exit code, its stderr and how
    much its peak RSS grew while recording (MiB)."""
    argv = ["record", "--live", "--adapter", "openai_chat", "--scenarios-dir", str(DATA), "--scenario"]
    argv += ["basic/get_time", "--base-url", server, "--cassette-dir", str(cassettes), *more]
    child = run_bounded(_MEASURED.replace("sys.argv[1:]", repr(argv)), timeout=120)
    found = re.search(r"peak (\d+) (\d+)", child.stderr)
    assert found, child.stderr[-3000:]
    return child.returncode, child.stderr, (int(found.group(2)) - int(found.group(1))) / 1024


def test_a_gzip_bomb_fails_the_pair_at_max_body_and_memory_stays_near_the_bound(tmp_path: Path) -> None:
    """Before, httpx inflated the whole body before any check: 4 MB of gzip reached 3 GB (here the
    child's 1 GiB address space ends it with a MemoryError)."""
    with RawServer(_gzip_bomb) as server:
        code, err, grew = _record_measured(server.base_url, tmp_path, "--max-body", "16M")
    assert code == 1, err[-3000:]
    said = "failed: POST /v1/chat/completions: the response body passed 16,777,216 bytes (decoded size"
    assert said in err and "(raise it with --max-body); nothing was written" in err
    assert "Traceback" not in err
    assert grew < 3 * 16, f"peak RSS grew by {grew:.0f} MiB for a 16 MiB bound"
    assert not cassette(tmp_path).exists()


def test_an_endless_stream_fails_at_max_body_and_costs_about_the_bound(tmp_path: Path) -> None:
    """Before, an endless stream was kept whole until the exchange deadline, 4-5 times the bytes
    received in memory (the chunks, their join, the adapter's events)."""
    with RawServer(_endless_deltas) as server:
        code, err, grew = _record_measured(server.base_url, tmp_path, "--max-body", "16M", "--exchange-timeout", "60")
    assert code == 1, err[-3000:]
    assert "failed: POST /v1/chat/completions: the response body passed 16,777,216 bytes" in err, err[-3000:]
    assert "deadline" not in err
    assert grew < 4 * 16, f"peak RSS grew by {grew:.0f} MiB for a 16 MiB bound"
