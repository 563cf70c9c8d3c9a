"""A hostile server echoes the key it was given, in every form (issue 27, attack 1; "What must hold" 1).

``conformance record --live`` gets its key from ``--api-key-env``: a local server's token with no key
shape (``hunter2-local-token-1234``) or a provider key (``gsk_...``). The loopback server below answers
like a model that repeats its prompt: the key token by token across the text deltas of each wire's
stream (OpenAI Chat ``delta.content``, Anthropic ``text_delta``, Gemini parts, Ollama NDJSON
``message.content``) and across tool-call argument deltas; ``\\u``-escaped in a JSON string;
base64 and base64url at each alignment inside a longer run; hex in either case; percent-encoded;
split across two header names; split across a JSON key and its value.

Each recording either writes a cassette that holds no 8 characters of the key in a row, read any
way (``tests/_secret_forms.py``), whose provenance ``expected`` is what a replay decodes (the
reference adapter replays it PASS), or fails the pair naming it with nothing written. The console of
``record``, ``run`` and ``inspect``, and the four reports, never hold the key either.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from _loopback import LoopbackServer, Reply
from _secret_forms import leaks_anywhere

from conformance.cli import main
from conformance.run.conversation import DEFAULT_MODELS
from conformance.traffic.safe_yaml import load_yaml

DATA = Path(__file__).resolve().parents[1] / "data" / "scenarios"
LOCAL = "hunter2-local-token-1234"
"""A local server's token: no key shape, known to the suite only because it was given."""
GROQ = "gsk_" + "Q7wErT9yUiOp3aSdF5gHjK2lZxCvBnM8qW4eRtY6uIoP1aS3dF7gHjKl"
SSE = [("content-type", "text/event-stream")]
JSON_HEADERS = [("content-type", "application/json")]


def tokens(text: str, key: str) -> list[str]:
    """``text`` as a model streams it, the key cut into pieces of 3 characters."""
    head, _, tail = text.partition(key)
    return [head, *(key[i : i + 3] for i in range(0, len(key), 3)), tail]


# -- each wire's answers ------------------------------------------------------------------------------------


def _sse(payload: dict[str, Any], event: str | None = None, end: str = "\n\n") -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(payload)}{end}".encode()


def openai_chat(pieces: list[str], *, stream: bool, raw: str | None = None) -> Reply:
    if not stream:
        text = "".join(pieces)
        body = {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1764000000,
            "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        }
        data = json.dumps(body)
        if raw is not None:  # the content spelled by hand (escapes) in the JSON text
            data = data.replace(json.dumps(text), raw)
        return Reply(headers=JSON_HEADERS, body=data.encode())

    def chunk(delta: dict[str, Any], finish: str | None) -> bytes:
        payload = {
            "id": "chatcmpl-2",
            "object": "chat.completion.chunk",
            "created": 1764000000,
            "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        return _sse(payload)

    events = [chunk({"role": "assistant", "content": ""}, None)]
    events += [chunk({"content": piece}, None) for piece in pieces]
    return Reply(headers=SSE, pieces=[*events, chunk({}, "stop"), b"data: [DONE]\n\n"])


def anthropic(pieces: list[str], *, stream: bool) -> Reply:
    usage = {"input_tokens": 5, "output_tokens": 5}
    if not stream:
        body = {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "m",
            "content": [{"type": "text", "text": "".join(pieces)}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": usage,
        }
        return Reply(headers=JSON_HEADERS, body=json.dumps(body).encode())
    message = {"id": "msg_2", "type": "message", "role": "assistant", "model": "m", "content": [], "usage": usage}
    events = [
        _sse({"type": "message_start", "message": message}, "message_start"),
        _sse(
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            "content_block_start",
        ),
    ]
    for piece in pieces:
        delta = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}}
        events.append(_sse(delta, "content_block_delta"))
    events += [
        _sse({"type": "content_block_stop", "index": 0}, "content_block_stop"),
        _sse({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": usage}, "message_delta"),
        _sse({"type": "message_stop"}, "message_stop"),
    ]
    return Reply(headers=SSE, pieces=events)


def gemini(pieces: list[str], *, stream: bool) -> Reply:
    def candidate(parts: list[dict[str, str]], finish: bool) -> dict[str, Any]:
        done = {"finishReason": "STOP"} if finish else {}
        return {"candidates": [{"content": {"role": "model", "parts": parts}, "index": 0, **done}], "modelVersion": "m"}

    if not stream:  # the key split across two parts of one answer too
        return Reply(headers=JSON_HEADERS, body=json.dumps(candidate([{"text": p} for p in pieces], True)).encode())
    events = [_sse(candidate([{"text": p}], False), end="\r\n\r\n") for p in pieces]
    return Reply(headers=SSE, pieces=[*events, _sse(candidate([{"text": ""}], True), end="\r\n\r\n")])


def ollama(pieces: list[str], *, stream: bool) -> Reply:
    def line(content: str, done: bool) -> dict[str, Any]:
        end = {"done_reason": "stop"} if done else {}
        return {"model": "m", "message": {"role": "assistant", "content": content}, "done": done, **end}

    if not stream:
        return Reply(headers=JSON_HEADERS, body=json.dumps(line("".join(pieces), True)).encode())
    lines = [json.dumps(line(p, False)).encode() + b"\n" for p in pieces]
    return Reply(
        headers=[("content-type", "application/x-ndjson")], pieces=[*lines, json.dumps(line("", True)).encode() + b"\n"]
    )


_TEMPLATE = Path(__file__).resolve().parents[2] / "cassettes" / "openai_responses" / "basic" / "system_prompt.yaml"
"""A recorded Responses text answer, its text replaced below (the wire has a dozen event types)."""


def openai_responses(pieces: list[str], *, stream: bool) -> Reply:
    document = json.loads(_TEMPLATE.read_text(encoding="utf-8"))
    old = "It's 22\u00b0C and clear in Lisbon."
    text = "".join(pieces)
    if not stream:
        body = json.dumps(document["interactions"][1]["response"]["parsed_body"], ensure_ascii=False)
        return Reply(headers=JSON_HEADERS, body=body.replace(old, json.dumps(text)[1:-1]).encode())
    events: list[bytes] = []
    for chunk in document["interactions"][3]["response"]["body"]["chunks"]:
        if chunk.startswith("event: response.output_text.delta"):
            if not any(b"output_text.delta" in e for e in events):
                payload = json.loads(chunk.split("data: ", 1)[1])
                events += [_sse({**payload, "delta": piece}, "response.output_text.delta") for piece in pieces]
            continue
        events.append(chunk.replace(old, json.dumps(text)[1:-1]).encode())
    return Reply(headers=SSE, pieces=events)


WIRES = {
    "openai_chat": openai_chat,
    "openai_responses": openai_responses,
    "anthropic": anthropic,
    "gemini": gemini,
    "ollama": ollama,
}


def routes(wire: str, non_stream: Reply, stream: Reply) -> dict[tuple[str, str], list[Reply]]:
    model = DEFAULT_MODELS[wire]
    if wire == "gemini":
        return {
            ("POST", f"/v1beta/models/{model}:generateContent"): [non_stream],
            ("POST", f"/v1beta/models/{model}:streamGenerateContent"): [stream],
        }
    paths = {"openai_chat": "/v1/chat/completions", "openai_responses": "/v1/responses"}
    path = {**paths, "anthropic": "/v1/messages", "ollama": "/api/chat"}[wire]
    return {("POST", path): [non_stream, stream]}


# -- running the commands -------------------------------------------------------------------------------------


def record(
    tmp_path: Path, wire: str, table: dict[tuple[str, str], list[Reply]], key: str, monkeypatch: pytest.MonkeyPatch
) -> tuple[int, str, Path]:
    monkeypatch.setenv("CONFORMANCE_TEST_SERVER_TOKEN", key)
    cassettes = tmp_path / "cassettes"
    argv = ["record", "--live", "--adapter", wire, "--scenarios-dir", str(DATA), "--scenario", "basic/get_time"]
    argv += ["--api-key-env", "CONFORMANCE_TEST_SERVER_TOKEN", "--allow-deviation", "--cassette-dir", str(cassettes)]
    with LoopbackServer(table) as server:
        code = main([*argv, "--base-url", server.base_url])
    return code, str(cassettes), cassettes / wire / "basic" / "get_time.yaml"


def check_everything(
    tmp_path: Path, wire: str, key: str, code: int, cassette: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The recording either holds no form of the key and replays PASS, or failed with nothing written;
    nothing printed or reported holds the key."""
    out, err = capsys.readouterr()
    assert not leaks_anywhere(out + err, key), out + err
    if code != 0:
        assert "failed:" in err and "nothing was written" in err, err
        assert not cassette.exists()
        return
    text = cassette.read_text(encoding="utf-8")
    assert not leaks_anywhere(text, key), text
    assert "REDACTED" in text
    reports = tmp_path / "reports"
    run = ["run", "--adapter", wire, "--scenarios-dir", str(DATA), "--scenarios", "basic/get_time"]
    assert main([*run, "--cassette-dir", str(cassette.parents[2]), "--report-dir", str(reports)]) == 0
    inspected = main(["inspect", str(cassette)])
    out, err = capsys.readouterr()
    assert inspected == 0, out + err
    assert not leaks_anywhere(out + err, key), out + err
    for name in ("report.json", "report.md", "report.html", "junit.xml"):
        assert not leaks_anywhere((reports / name).read_text(encoding="utf-8"), key), name


@pytest.mark.parametrize("key", [LOCAL, GROQ], ids=["local-token", "groq-key"])
@pytest.mark.parametrize("wire", sorted(WIRES))
def test_a_key_echoed_token_by_token_across_deltas_never_reaches_the_cassette(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], wire: str, key: str
) -> None:
    build = WIRES[wire]
    pieces = tokens(f"You said {key} to me.", key)
    table = routes(wire, build(pieces, stream=False), build(pieces, stream=True))
    code, _, cassette = record(tmp_path, wire, table, key, monkeypatch)
    assert code == 0  # redacting the deltas keeps the stream decodable: it is written
    document = load_yaml(cassette.read_bytes())
    for mode, turns in document["provenance"]["expected"].items():
        assert turns[0]["text"] == "You said REDACTED to me.", mode
    check_everything(tmp_path, wire, key, code, cassette, capsys)


def _b64(prefix: bytes, key: str, alphabet: str) -> str:
    encoded = base64.b64encode(prefix + f"auth:{key}:end".encode()).decode()
    return encoded.replace("+", "-").replace("/", "_") if alphabet == "url" else encoded


FORMS = {
    "json-unicode-escapes": lambda key: None,  # written by hand below
    "base64-0": lambda key: _b64(b"", key, "std"),
    "base64-1": lambda key: _b64(b"x", key, "std"),
    "base64-2": lambda key: _b64(b"xy", key, "std"),
    "base64url-1": lambda key: _b64(b"?", key, "url"),
    "base64url-2": lambda key: _b64(b"??", key, "url"),
    "hex-lower": lambda key: key.encode().hex(),
    "hex-upper": lambda key: key.encode().hex().upper(),
    "percent-encoded": lambda key: "".join(f"%{b:02X}" for b in key.encode()),
    "percent-encoded-lower": lambda key: "".join(f"%{b:02x}" for b in key.encode()),
}


@pytest.mark.parametrize("form", sorted(FORMS))
def test_a_key_echoed_encoded_never_reaches_the_cassette(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], form: str
) -> None:
    key = LOCAL
    if form == "json-unicode-escapes":
        spelled = "".join(f"\\u{ord(c):04x}" for c in key)
        non_stream = openai_chat([f"key {key} end"], stream=False, raw=f'"key {spelled} end"')
        stream = openai_chat([f"key {key} end"], stream=True)
        stream.pieces = [p.replace(key.encode(), spelled.encode()) for p in stream.pieces or []]
    else:
        shown = f"token {FORMS[form](key)} seen"
        non_stream, stream = (
            openai_chat([shown], stream=False),
            openai_chat(tokens(shown, FORMS[form](key)[:9]), stream=True),
        )
    code, _, cassette = record(tmp_path, "openai_chat", routes("openai_chat", non_stream, stream), key, monkeypatch)
    check_everything(tmp_path, "openai_chat", key, code, cassette, capsys)


def test_a_key_split_across_two_header_names_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    key = LOCAL
    split = [("x-echo-part-1", key[:10]), ("x-echo-part-2", key[10:])]
    non_stream = openai_chat(["fine"], stream=False)
    non_stream.headers = [split[1], *non_stream.headers, split[0]]  # apart, the second half first
    stream = openai_chat(["fine"], stream=True)
    stream.headers = [*stream.headers, *split]
    code, _, cassette = record(tmp_path, "openai_chat", routes("openai_chat", non_stream, stream), key, monkeypatch)
    assert code == 0
    check_everything(tmp_path, "openai_chat", key, code, cassette, capsys)


def test_a_key_split_across_a_json_key_and_its_value_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    key = LOCAL
    non_stream = openai_chat(["fine"], stream=False)
    body = json.loads(non_stream.body)
    body["metadata"] = {key[:11]: key[11:]}
    non_stream.body = json.dumps(body).encode()
    stream = openai_chat(["fine"], stream=True)
    assert stream.pieces is not None
    stream.pieces[0] = stream.pieces[0].replace(b'"model": "m"', f'"model": "m", "{key[:7]}": "{key[7:]}"'.encode())
    code, _, cassette = record(tmp_path, "openai_chat", routes("openai_chat", non_stream, stream), key, monkeypatch)
    assert code == 0
    check_everything(tmp_path, "openai_chat", key, code, cassette, capsys)


def test_a_key_split_across_tool_call_argument_deltas_is_redacted_in_the_call_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    key = LOCAL
    arguments = json.dumps({"offset_ms": -86400000, "note": key})
    pieces = tokens(arguments, key)

    def call_stream() -> Reply:
        def chunk(delta: dict[str, Any], finish: str | None) -> bytes:
            choice = {"index": 0, "delta": delta, "finish_reason": finish}
            return _sse({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [choice]})

        first = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "getTime", "arguments": ""}}
        events = [chunk({"role": "assistant", "tool_calls": [first]}, None)]
        events += [chunk({"tool_calls": [{"index": 0, "function": {"arguments": p}}]}, None) for p in pieces]
        return Reply(headers=SSE, pieces=[*events, chunk({}, "tool_calls"), b"data: [DONE]\n\n"])

    call = {"id": "call_1", "type": "function", "function": {"name": "getTime", "arguments": arguments}}
    whole = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": None, "tool_calls": [call]},
                "finish_reason": "tool_calls",
            }
        ],
    }
    replies = [
        Reply(headers=JSON_HEADERS, body=json.dumps(whole).encode()),
        openai_chat(["Yesterday."], stream=False),
        call_stream(),
        openai_chat(["Yesterday."], stream=True),
    ]
    code, _, cassette = record(tmp_path, "openai_chat", {("POST", "/v1/chat/completions"): replies}, key, monkeypatch)
    assert code == 0
    expected = load_yaml(cassette.read_bytes())["provenance"]["expected"]
    for turns in expected.values():
        assert turns[0]["calls"][0]["arguments"] == {"offset_ms": -86400000, "note": "REDACTED"}
    check_everything(tmp_path, "openai_chat", key, code, cassette, capsys)


def test_a_stream_that_cannot_be_redacted_as_its_decoding_is_fails_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A key-shaped delta (``sk-...``, a key the server made up) right after a delta ending in a
    letter: the stream's event is redacted, but the decoded text (``task-...``) holds no key there.
    The cassette would replay another text than its provenance says: the pair fails, naming the turn."""
    made_up = "sk-" + "Zx9Qw2Er7Ty4Ui1Op6As"
    pieces = ["ta", made_up, " done"]
    table = routes("openai_chat", openai_chat(pieces, stream=False), openai_chat(pieces, stream=True))
    code, _, cassette = record(tmp_path, "openai_chat", table, LOCAL, monkeypatch)
    err = capsys.readouterr().err
    assert code == 1
    assert "turn 0 (stream): the answer holds a secret that cannot be redacted without changing what the adapter" in err
    assert "nothing was written" in err
    assert not cassette.exists()


def test_run_inspect_and_every_report_redact_the_process_secrets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A cassette from elsewhere that holds the key (written by another tool): the reference adapter
    decodes the key and the checks quote it; ``run``'s console, its four reports and ``inspect`` show
    it redacted, known by value from the variable ``--api-key-env`` names (``*_TOKEN``)."""
    key = LOCAL
    pieces = tokens(f"You said {key} to me.", key)
    table = routes("openai_chat", openai_chat(pieces, stream=False), openai_chat(pieces, stream=True))
    code, cassettes, cassette = record(tmp_path, "openai_chat", table, key, monkeypatch)
    assert code == 0
    document = json.loads(cassette.read_text(encoding="utf-8"))
    for interaction in document["interactions"]:  # the answers as another recorder would have kept them
        response = interaction["response"]
        if "parsed_body" in response:
            response["parsed_body"]["choices"][0]["message"]["content"] = f"You said {key} to me."
        else:
            chunks = response["body"]["chunks"]
            response["body"]["chunks"] = [c.replace('"REDACTED"', json.dumps(key)) for c in chunks]
    cassette.write_text(json.dumps(document, indent=2), encoding="utf-8")
    capsys.readouterr()
    reports = tmp_path / "reports"
    run = ["run", "--adapter", "openai_chat", "--scenarios-dir", str(DATA), "--scenarios", "basic/get_time"]
    assert main([*run, "--cassette-dir", cassettes, "--report-dir", str(reports), "-v"]) == 1  # the text differs
    out, err = capsys.readouterr()
    assert "REDACTED" in out
    assert not leaks_anywhere(out + err, key), out + err
    for name in ("report.json", "report.md", "report.html", "junit.xml"):
        written = (reports / name).read_text(encoding="utf-8")
        assert "REDACTED" in written, name
        assert not leaks_anywhere(written, key), name
    for form in ("text", "json"):
        main(["inspect", "--format", form, str(cassette)])
        out, err = capsys.readouterr()
        assert "REDACTED" in out
        assert not leaks_anywhere(out + err, key), out + err


@pytest.mark.parametrize("form", ["text", "json"])
def test_drift_against_a_server_that_echoes_the_key_never_prints_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], form: str
) -> None:
    """``drift`` records into a scratch folder and prints what changed: the changed text (the key
    whole, in base64, and token by token) is the redacted one, in text and JSON output alike."""
    key = LOCAL
    calm = routes("openai_chat", openai_chat(["All fine."], stream=False), openai_chat(["All fine."], stream=True))
    code, cassettes, _ = record(tmp_path, "openai_chat", calm, key, monkeypatch)
    assert code == 0
    said = f"You said {key}, or {_b64(b'x', key, 'std')}, to me."
    pieces = tokens(said, key)
    echo = routes("openai_chat", openai_chat([said], stream=False), openai_chat(pieces, stream=True))
    argv = ["drift", "--adapters", "openai_chat", "--scenarios-dir", str(DATA), "--scenarios", "basic/get_time"]
    argv += ["--api-key-env", "CONFORMANCE_TEST_SERVER_TOKEN", "--cassette-dir", cassettes, "--format", form]
    capsys.readouterr()
    with LoopbackServer(echo) as server:
        assert main([*argv, "--base-url", server.base_url]) == 1  # the text drifted
    out, err = capsys.readouterr()
    assert "drifted" in out and "REDACTED" in out
    assert not leaks_anywhere(out + err, key), out + err
