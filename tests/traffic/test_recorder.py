"""Tests for ``conformance.traffic.recorder``: record real loopback traffic (tests/_traffic.py), write the
cassette, read it back with ``load_cassette``, decode it with ``conformance inspect``, scrub
planted secrets, re-record byte-identically, and survive a SIGKILL mid-write; secrets a server echoes
(tests/_secrets.py) split across stream chunks, through ``write_cassette`` and through the whole
``conformance record`` command against a loopback server."""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import unquote

import pytest
from _loopback import LoopbackServer, Reply
from _secrets import CHANNELS, SECRETS, WIRES, Wire, exchanges, leaks, leaks_in_file, split_at, written
from _traffic import ANTHROPIC_BODY, ASK, CHAT_BODY, CHAT_STREAM, GEMINI_CHUNK, JSON, SSE, big_exchange, record_chat
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance import cli
from conformance.adapters import get_adapter
from conformance.adapters.base import WireRequest
from conformance.errors import CassetteWriteError
from conformance.traffic.cassettes import Cassette, is_streaming, load_cassette
from conformance.traffic.recorder import (
    DROPPED_RESPONSE_HEADERS,
    Provenance,
    _headers,
    normalise_url,
    record_cassette,
    write_cassette,
)
from conformance.traffic.replay import replay_transport
from conformance.traffic.scrub import Scrubber
from conformance.traffic.transport import Exchange, Transport

# --------------------------------------------------------------------------------------------
# Writing and reading back
# --------------------------------------------------------------------------------------------


def test_recorded_cassette_loads_and_holds_what_was_sent(tmp_path: Path) -> None:
    path = tmp_path / "openai_chat" / "basic" / "get_time.yaml"
    result = record_chat(path)
    assert (result.status, result.path, result.interactions) == ("written", path, 2)
    cassette = load_cassette(path)
    assert cassette.problems == ()
    first, second = cassette.interactions
    assert first.problems == second.problems == ()
    assert first.request.uri == "http://127.0.0.1/v1/chat/completions"  # the loopback port is normalised away
    assert first.request.json == get_adapter("openai_chat").request_to_wire(ASK).body
    assert first.response is not None and first.response.json == CHAT_BODY
    assert second.response is not None and second.response.body == b"".join(CHAT_STREAM)
    assert not is_streaming(first) and is_streaming(second)
    assert second.response.chunks == tuple(CHAT_STREAM)  # the pieces as they arrived
    text = path.read_text(encoding="utf-8")
    assert text.startswith('{\n  "provenance": {\n')  # pretty JSON, provenance first
    assert "请告诉我昨天的日期是什么时候?" in text  # Unicode kept readable, not \u-escaped
    assert '        "parsed_body": {\n' in text  # JSON bodies as structure (the pydantic-ai dialect)
    assert '          "chunks": [\n            "data: {' in text  # one stream piece per line


def test_a_recorded_cassette_is_yaml_too(tmp_path: Path) -> None:
    """JSON is YAML: vcrpy's own loader (libyaml's safe loader) reads the file to the same data."""
    import json

    from vcr.serializers import yamlserializer

    path = tmp_path / "c.yaml"
    record_chat(path)
    text = path.read_text(encoding="utf-8")
    assert yamlserializer.deserialize(text) == json.loads(text)


@given(st.text())
@settings(max_examples=300, deadline=None)
def test_any_text_renders_to_json_that_yaml_reads_the_same(value: str) -> None:
    import json

    import yaml

    from conformance.traffic.recorder import render_cassette

    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return  # lone surrogates never come out of a decoded body
    text = render_cassette({"scenario": value}, [{"request": {"body": value}}])
    assert json.loads(text)["provenance"]["scenario"] == value
    assert yaml.safe_load(text)["interactions"][0]["request"]["body"] == value


def test_provenance_block(tmp_path: Path) -> None:
    import yaml

    path = tmp_path / "c.yaml"
    record_chat(path, now=datetime(2026, 11, 25, 1, 2, 3, tzinfo=UTC))
    block = yaml.safe_load(path.read_text(encoding="utf-8"))["provenance"]
    assert block["adapter"] == "openai_chat"
    assert block["mode"] == "emulator"
    assert block["base_url"] == "http://127.0.0.1"
    assert block["model"] == "gpt-4o"
    assert block["scenario"] == "basic/get_time"
    assert block["recorded"] == "2026-11-25T01:02:03Z"
    assert block["suite"].startswith("conformance ")
    assert set(block["clients"]) == {"python", "httpx"}


def test_inspect_decodes_the_written_cassette(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "c.yaml"
    record_chat(path)
    assert cli.main(["inspect", "--format", "json", str(path)]) == 0
    report = json.loads(capsys.readouterr().out)
    first, second = report["cassettes"][0]["interactions"]
    for item in (first, second):
        assert item["adapter"] == "openai_chat"
        assert item["problems"] == []
        [call] = item["response"]["tool_calls"]
        assert (call["name"], call["arguments"]) == ("getTime", {"offset_ms": -86400000})
        assert item["response"]["finish_reason"] == "tool_calls"
    assert second["streaming"] is True
    assert first["request"]["tools"] == ["getTime"]


TESTS = Path(__file__).resolve().parents[1]


# --------------------------------------------------------------------------------------------
# Stable re-recording
# --------------------------------------------------------------------------------------------


def test_rerecording_unchanged_traffic_leaves_the_file_byte_identical(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    record_chat(path, now=datetime(2026, 1, 1, tzinfo=UTC))
    before = path.read_bytes()
    inode = path.stat().st_ino
    result = record_chat(path, now=datetime(2026, 6, 1, tzinfo=UTC))  # another server, another port
    assert result.status == "unchanged"
    assert path.read_bytes() == before
    assert path.stat().st_ino == inode  # not even rewritten
    assert b"2026-01-01T00:00:00Z" in before


@pytest.mark.parametrize("version", ["true", "1.0"])
def test_an_old_file_whose_version_is_not_the_integer_1_is_rewritten(tmp_path: Path, version: str) -> None:
    """``version: true`` equals 1 in Python; the loader refuses it, so the same traffic over it is
    written again with ``version: 1`` rather than left as "unchanged"."""
    path = tmp_path / "c.yaml"
    record_chat(path, now=datetime(2026, 1, 1, tzinfo=UTC))
    text = path.read_text()
    assert text.count('"version": 1\n') == 1  # the cassette is written as JSON (render_cassette)
    path.write_text(text.replace('"version": 1\n', f'"version": {version}\n'))
    result = record_chat(path, now=datetime(2026, 6, 1, tzinfo=UTC))
    assert result.status == "written"
    assert '"version": 1\n' in path.read_text()


def test_changed_traffic_is_rewritten_with_a_new_date(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    record_chat(path, now=datetime(2026, 1, 1, tzinfo=UTC))
    changed = {("POST", "/v1/chat/completions"): [Reply(headers=JSON, body=b'{"id": "other"}')]}
    with LoopbackServer(changed) as server:
        result = record_cassette(
            path,
            lambda t: t.send(WireRequest(path="/v1/chat/completions", body={})) and None,
            adapter="openai_chat",
            base_url=server.base_url,
            provenance=Provenance(mode="emulator", model="gpt-4o", scenario="basic/get_time"),
            now=lambda: datetime(2026, 6, 1, tzinfo=UTC),
        )
    assert result.status == "written"
    text = path.read_text(encoding="utf-8")
    assert "2026-06-01T00:00:00Z" in text and "2026-01-01" not in text
    assert [i.response.json for i in load_cassette(path).interactions if i.response] == [{"id": "other"}]


def live_turns(call_id: str, created: int, request_id: str, prompt_ms: float) -> list[Exchange]:
    """A live provider's two turns (llama.cpp-like: ``timings``): a tool call, then the request
    echoing its id; only the volatile values differ between two recordings."""
    answer = {
        "id": "chatcmpl-" + call_id[::-1],
        "created": created,
        "choices": [{"message": {"role": "assistant", "tool_calls": [{"id": call_id, "type": "function"}]}}],
        "timings": {"prompt_n": 9, "prompt_ms": prompt_ms},
    }
    echo = {
        "messages": [{"role": "assistant", "tool_calls": [{"id": call_id}]}, {"role": "tool", "tool_call_id": call_id}]
    }
    headers = (("content-type", "application/json"), ("x-request-id", request_id), ("openai-processing-ms", "87"))
    url = "http://127.0.0.1:8080/v1/chat/completions"
    return [
        Exchange(
            method="POST",
            url=url,
            request_headers=JSON,
            request_body=b'{"messages": []}',
            stream=False,
            status=200,
            response_headers=headers,
            response_body=json.dumps(answer).encode(),
        ),
        Exchange(
            method="POST",
            url=url,
            request_headers=JSON,
            request_body=json.dumps(echo).encode(),
            stream=False,
            status=200,
            response_headers=headers,
            response_body=b'{"choices": []}',
        ),
    ]


def test_a_live_rerecording_that_differs_only_in_volatile_values_is_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "live.yaml"
    live = Provenance(mode="live", model="qwen", scenario="basic/get_time")
    first = write_cassette(
        path,
        live_turns("call_Xq7v9Lr2Zx0b", 1764100000, "req_a1b2c3d4", 31.5),
        adapter="openai_chat",
        base_url="http://127.0.0.1:8080",
        provenance=live,
    )
    before = path.read_bytes()
    second = write_cassette(
        path,
        live_turns("call_Pm4k2Hs8Wq1c", 1764100042, "req_e5f6a7b8", 9.25),
        adapter="openai_chat",
        base_url="http://127.0.0.1:8080",
        provenance=live,
        now=lambda: datetime(2030, 1, 1, tzinfo=UTC),
    )
    assert (first.status, second.status) == ("written", "unchanged")
    assert path.read_bytes() == before
    document = json.loads(before)
    assert document["provenance"]["volatile"] == [
        "$.choices[*].message.tool_calls[*].id",
        "$.created",
        "$.id",
        "$.timings.prompt_ms",
        "$.timings.prompt_n",
    ]
    answer, echo = (i for i in document["interactions"])
    call = answer["response"]["parsed_body"]["choices"][0]["message"]["tool_calls"][0]["id"]
    assert call == "call_000000000002"  # the stream id came first
    assert echo["request"]["parsed_body"]["messages"][1]["tool_call_id"] == call  # the echo still pairs
    assert answer["response"]["headers"]["openai-processing-ms"] == ["0"]
    assert b"Xq7v9Lr2Zx0b" not in before and b"req_a1b2c3d4" not in before


def test_an_emulator_recording_keeps_its_values_and_lists_nothing(tmp_path: Path) -> None:
    path = tmp_path / "emulated.yaml"
    write_cassette(
        path,
        live_turns("call_Xq7v9Lr2Zx0b", 1764100000, "req_a1b2c3d4", 31.5),
        adapter="openai_chat",
        base_url="http://127.0.0.1:8080",
        provenance=Provenance(mode="emulator", model="qwen"),
    )
    document = json.loads(path.read_bytes())
    assert "volatile" not in document["provenance"]
    assert document["interactions"][0]["response"]["parsed_body"]["created"] == 1764100000
    assert b"call_Xq7v9Lr2Zx0b" in path.read_bytes()


# --------------------------------------------------------------------------------------------
# Secrets
# --------------------------------------------------------------------------------------------

FAKE = {
    "openai_key": "sk-proj-FAKEopenaiKEY0123456789",
    "anthropic_key": "sk-ant-api03-FAKEanthropicKEY0123456789",
    "gemini_key": "AIzaSyFAKEgeminiKEY0123456789abcd",
    "query_key": "AIzaSyFAKEqueryKEY0123456789abcdef",
    "query_api_key": "FAKEqueryApiKey-7f3a9c",
    "azure_key": "FAKEazureApiKey-55c1d0e2",
    "cookie": "FAKEsessionCookie-c0ffee",
    "set_cookie": "FAKEsetCookie-beefcafe",
    "org": "org-FAKEorganisationID0123",
    "project": "proj_FAKEprojectIDabc123",
    "anthropic_org": "FAKEanthropicOrg-4e1d2c3b",
    "body_openai": "sk-FAKEbodyOPENAIkey987654",
    "body_anthropic": "sk-ant-FAKEbodyANTHROPIC987654",
    "body_gemini": "AIzaFAKEbodyGEMINIkey987654",
    "bearer": "FAKEbearerTOKEN.abc-123_xyz",
}


def secret_request_body() -> dict[str, object]:
    text = f"keys {FAKE['body_openai']} {FAKE['body_anthropic']} {FAKE['body_gemini']} Bearer {FAKE['bearer']}"
    return {"contents": [{"role": "user", "parts": [{"text": text}]}], FAKE["body_openai"]: "as a key"}


def secret_routes(path: str) -> dict[tuple[str, str], list[Reply]]:
    echo = {"error": {"message": f"Incorrect API key provided: {FAKE['openai_key']} / {FAKE['gemini_key']}"}}
    headers = [
        *JSON,
        ("set-cookie", f"session={FAKE['set_cookie']}; Path=/"),
        ("openai-organization", FAKE["org"]),
        ("openai-project", FAKE["project"]),
        ("anthropic-organization-id", FAKE["anthropic_org"]),
        ("x-api-key", FAKE["anthropic_key"]),
    ]
    stream = [f'data: {{"note": "{FAKE["body_gemini"]} Bearer {FAKE["bearer"]}"}}\r\n\r\n'.encode()]
    return {
        ("POST", path): [
            Reply(status=401, headers=headers, body=json.dumps(echo).encode()),
            Reply(headers=SSE, pieces=stream),
        ]
    }


@pytest.mark.parametrize(
    ("wire", "key"), [("openai_chat", "openai_key"), ("anthropic", "anthropic_key"), ("gemini", "gemini_key")]
)
def test_no_planted_secret_reaches_the_cassette(tmp_path: Path, wire: str, key: str) -> None:
    path = "/v1beta/models/m:generateContent"
    query = f"?key={FAKE['query_key']}&api_key={FAKE['query_api_key']}&alt=sse"
    extra = {
        "api-key": FAKE["azure_key"],
        "cookie": f"session={FAKE['cookie']}",
        "openai-organization": FAKE["org"],
        "openai-project": FAKE["project"],
        "anthropic-organization-id": FAKE["anthropic_org"],
        "x-goog-api-key": FAKE["gemini_key"],
        "x-api-key": FAKE["anthropic_key"],
    }
    request = WireRequest(
        path=path + query, body=secret_request_body(), headers={"authorization": f"Bearer {FAKE['bearer']}"}
    )

    def run(transport: Transport) -> None:
        transport.send(request)
        with transport.stream(WireRequest(path=path + query, body=secret_request_body(), stream=True)) as s:
            s.read()

    cassette = tmp_path / "secrets.yaml"
    with LoopbackServer(secret_routes(path)) as server:
        record_cassette(
            cassette,
            run,
            adapter=wire,
            base_url=server.base_url,
            provenance=Provenance(mode="live", model="m"),
            api_key=FAKE[key],
            headers=extra,
        )
    # the server did receive them (the plant worked) ...
    assert FAKE[key] in " ".join(server.requests[0].headers.values())
    assert FAKE["query_key"] in server.requests[0].path
    # ... and the file holds none of them, nor any distinctive part of them
    text = cassette.read_text(encoding="utf-8")
    for name, secret in FAKE.items():
        assert secret not in text, name
        assert secret[-10:] not in text, name
    loaded = load_cassette(cassette)
    for interaction in loaded.interactions:
        assert interaction.response is not None
        dumped = repr(interaction)
        assert not any(secret in dumped for secret in FAKE.values())
    assert "key=REDACTED" in text and "api_key=REDACTED" in text


# --------------------------------------------------------------------------------------------
# Atomic writes
# --------------------------------------------------------------------------------------------


KILLED_WRITER = textwrap.dedent(
    """
    import os, sys, time
    sys.path.insert(0, sys.argv[3])
    from conformance.traffic import atomic
    from conformance.traffic.recorder import Provenance, RecordResult, write_cassette
    from _traffic import big_exchange

    original, calls = atomic._write_chunk, []

    def slow(fd, data):
        calls.append(1)
        written = original(fd, data)
        if len(calls) == 3:  # part of the new content is written: signal, then hang until killed
            open(sys.argv[2], "w").close()
            time.sleep(600)
        return written

    atomic._write_chunk = slow
    write_cassette(sys.argv[1], [big_exchange("new")], adapter="openai_chat", base_url="http://127.0.0.1:1",
                   provenance=Provenance(mode="emulator"))
    """
)


def test_a_recorder_killed_mid_write_leaves_the_old_cassette(tmp_path: Path) -> None:
    directory = tmp_path / "cassettes"
    path = directory / "c.yaml"
    write_cassette(
        path,
        [big_exchange("old")],
        adapter="openai_chat",
        base_url="http://127.0.0.1:1",
        provenance=Provenance(mode="emulator"),
    )
    before = path.read_bytes()
    assert len(before) > 3 * 65536  # the new write needs more than the three chunks the child writes
    marker = tmp_path / "writing"
    child = subprocess.Popen([sys.executable, "-c", KILLED_WRITER, str(path), str(marker), str(TESTS)])
    try:
        wait_for(lambda: marker.exists() or child.poll() is not None)
        assert child.poll() is None, "the writer exited before it was killed"
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.kill()
        child.wait()
    assert child.returncode == -signal.SIGKILL
    assert path.read_bytes() == before
    assert sorted(p.name for p in directory.iterdir()) == ["c.yaml"]  # no partial or temporary file
    assert b'"marker": "old"' in load_cassette(path).interactions[0].request.body  # type: ignore[operator]


def wait_for(condition: Callable[[], bool]) -> None:
    """Poll until ``condition`` holds (a deadline against a hung child, not a timing assertion)."""
    import time

    deadline = time.monotonic() + 120
    while not condition():
        assert time.monotonic() < deadline, "gave up waiting for the child writer"
        time.sleep(0.02)


@pytest.mark.parametrize(
    ("wire", "stream", "reply"),
    [
        ("anthropic", False, Reply(headers=JSON, body=json.dumps(ANTHROPIC_BODY).encode())),
        ("gemini", False, Reply(headers=JSON, body=json.dumps(GEMINI_CHUNK).encode())),
        ("gemini", True, Reply(headers=SSE, pieces=[b"data: " + json.dumps(GEMINI_CHUNK).encode() + b"\r\n\r\n"])),
    ],
)
def test_other_wires_record_and_decode(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], wire: str, stream: bool, reply: Reply
) -> None:
    adapter = get_adapter(wire)
    request = adapter.request_to_wire(replace(ASK, model="m", stream=stream))
    path = tmp_path / "c.yaml"

    def run(transport: Transport) -> None:
        if stream:
            with transport.stream(request) as response:
                response.read()
        else:
            transport.send(request)

    with LoopbackServer({("POST", request.path.split("?")[0]): [reply]}) as server:
        result = record_cassette(
            path, run, adapter=wire, base_url=server.base_url, provenance=Provenance(mode="emulator"), api_key="k-1234"
        )
    assert result.status == "written"
    assert cli.main(["inspect", "--format", "json", str(path)]) == 0
    [item] = json.loads(capsys.readouterr().out)["cassettes"][0]["interactions"]
    assert (item["adapter"], item["streaming"]) == (wire, stream)
    assert [(c["name"], c["arguments"]) for c in item["response"]["tool_calls"]] == [
        ("getTime", {"offset_ms": -86400000})
    ]
    with replay_transport(path, wire=wire) as transport:
        if stream:
            with transport.stream(request) as response:
                assert response.read() == b"".join(reply.pieces or [])
        else:
            assert json.loads(transport.send(request).body) == json.loads(reply.body)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://127.0.0.1:54321/v1/chat/completions", "http://127.0.0.1/v1/chat/completions"),
        ("http://localhost:11434/api/chat", "http://localhost/api/chat"),
        ("http://[::1]:8080/v1/messages?beta=true", "http://[::1]/v1/messages?beta=true"),
        ("https://api.openai.com:443/v1/responses", "https://api.openai.com:443/v1/responses"),
    ],
)
def test_normalise_url_drops_only_loopback_ports(url: str, expected: str) -> None:
    assert normalise_url(url) == expected


# --------------------------------------------------------------------------------------------
# Secrets a server echoes, split across stream chunks (tests/_secrets.py)
# --------------------------------------------------------------------------------------------


def near_the_secret(body: bytes, secret: str) -> list[int]:
    """Split offsets where a cut can hurt: every offset within 10 bytes of the secret's ends, every
    seventh one inside it (``tests/traffic/test_scrub.py`` and ``scripts/secret_leaks.py`` take every
    offset of the body)."""
    start = body.index(secret.encode())
    end = start + len(secret)
    edges = {*range(start - 10, start + 11), *range(end - 10, end + 11), *range(start, end, 7)}
    return sorted(o for o in edges if 0 < o < len(body))


@pytest.mark.parametrize("wire", WIRES, ids=lambda w: w.name)
def test_a_secret_split_in_a_stream_never_reaches_the_cassette(tmp_path: Path, wire: Wire) -> None:
    """write_cassette (the recorder's writing path) for every secret kind, split near and inside the
    secret, cut into one-character chunks, and in a body that is not UTF-8; also echoed in headers
    and the URL. The file and what it reads back as hold no 8 characters of any secret."""
    for secret in SECRETS:
        made = dict(exchanges(wire, secret))
        body = made["offset 1"].response_body
        labels = [f"offset {o}" for o in near_the_secret(body, secret.value)]
        for part, chosen in (("text", [*labels, "every character a chunk"]), ("binary", ["not UTF-8"])):
            path = tmp_path / f"{secret.kind}-{part}.yaml"
            result = write_cassette(
                path,
                [made[label] for label in chosen],
                adapter="gemini" if wire.name == "gemini_array" else wire.name,
                base_url="http://127.0.0.1:8080",
                provenance=Provenance(mode="live"),
            )
            assert result.interactions == len(chosen)
            text, views = written(path)
            assert not leaks(text, secret.value), (secret.kind, part)
            for label, view in zip(chosen, views, strict=True):
                assert not any(leaks(view[c], secret.value) for c in CHANNELS), (secret.kind, label)
            if part == "text":  # the chunks were kept: as many as arrived, and the join replays
                loaded = load_cassette(path).interactions
                for label, interaction in zip(chosen, loaded, strict=True):
                    assert interaction.response is not None and interaction.response.chunks is not None
                    assert len(interaction.response.chunks) == len(made[label].chunks), label


NON_STREAMED: dict[str, Callable[[str], dict[str, object]]] = {
    "openai_chat": lambda text: {
        "id": "c1",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
    },
    "openai_responses": lambda text: {
        "id": "resp_1",
        "object": "response",
        "status": "completed",
        "output": [
            {"type": "message", "id": "m1", "role": "assistant", "content": [{"type": "output_text", "text": text}]}
        ],
    },
    "anthropic": lambda text: {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
    },
    "gemini": lambda text: {
        "candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP"}]
    },
    "ollama": lambda text: {"model": "m", "message": {"role": "assistant", "content": text}, "done": True},
}


@pytest.mark.parametrize("wire", [w for w in WIRES if w.name in NON_STREAMED], ids=lambda w: w.name)
def test_the_record_command_leaks_no_echoed_secret(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], wire: Wire
) -> None:
    """The whole path: ``conformance record --live`` against a loopback server that echoes the API key
    (a bearer token or ``x-api-key``/``x-goog-api-key``), keys of every provider's shape it made up, a
    ``Bearer`` token and its own ``set-cookie`` value, in the JSON answer, in a stream cut inside
    every secret (at its second byte, its middle and its last byte), and in headers. No file under
    the folder and nothing on stdout or stderr holds 8 characters of any of them."""
    api_key = next(s for s in SECRETS if s.kind == "bearer_sent")
    echoed = [s for s in SECRETS if s.kind != "cookie"]  # the command sends no cookie
    text = " | ".join(s.echo.format(s.value) for s in echoed)
    events = wire.events(text)
    body = b"".join(events)
    cuts = sorted({body.index(s.value.encode()) + d for s in echoed for d in (1, len(s.value) // 2, len(s.value) - 1)})
    pieces = events
    for cut in cuts:
        pieces = split_at(pieces, cut)
    set_cookie = next(s for s in SECRETS if s.kind == "set_cookie").response_headers
    anthropic = next(s for s in SECRETS if s.kind == "anthropic").value
    headers = [
        ("x-echo", text),
        ("x-echo-split", anthropic[:20]),
        ("x-echo-split", anthropic[20:]),
        *set_cookie,
    ]
    answer = json.dumps(NON_STREAMED[wire.name](text)).encode()
    stream_path = wire.path.split("?")[0]
    if wire.name == "gemini":
        routes = {
            ("POST", "/v1beta/models/m:generateContent"): [Reply(headers=[*JSON, *headers], body=answer)],
            ("POST", stream_path): [Reply(headers=[*SSE, *headers], pieces=pieces)],
        }
    else:
        routes = {
            ("POST", stream_path): [
                Reply(headers=[*JSON, *headers], body=answer),
                Reply(headers=[("content-type", wire.content_type), *headers], pieces=pieces),
            ]
        }
    monkeypatch.setenv("CONFORMANCE_ECHO_KEY", api_key.value)
    cassettes = tmp_path / "cassettes"
    with LoopbackServer(routes) as server:
        code = cli.main(
            [
                "record",
                "--live",
                "--adapter",
                wire.name,
                "--scenario",
                "basic/get_time",
                "--model",
                "m",
                "--base-url",
                server.base_url,
                "--api-key-env",
                "CONFORMANCE_ECHO_KEY",
                "--cassette-dir",
                str(cassettes),
                "--allow-deviation",  # the plant answers in text where basic/get_time expects a call
            ]
        )
    out, err = capsys.readouterr()
    assert code == 0, err
    assert len(server.requests) == 2  # one answer, one stream: the plant was served
    assert any(api_key.value in " ".join(r.headers.values()) for r in server.requests)
    [cassette] = cassettes.rglob("*.yaml")
    streamed = load_cassette(cassette).interactions[-1].response
    assert streamed is not None and streamed.chunks is not None and len(streamed.chunks) > 1
    written_files = [p for p in tmp_path.rglob("*") if p.is_file()]
    for secret in [*echoed, api_key]:
        assert not leaks(out + err, secret.value), secret.kind
        for path in written_files:
            assert not leaks_in_file(path, secret.value), (secret.kind, path.name)


def test_a_stream_cut_off_inside_a_named_secret_keeps_no_head_of_it(tmp_path: Path) -> None:
    """A stream that broke after the first 20 characters of the bearer token the client sent: what
    arrived ends in the token's head, which goes too (the cut-off rule of ``Scrubber``)."""
    secret = next(s for s in SECRETS if s.kind == "bearer_sent")
    arrived = [b'data: {"delta": "token ', secret.value[:12].encode(), secret.value[12:20].encode()]
    exchange = Exchange(
        method="POST",
        url="http://127.0.0.1:8080/v1/chat/completions",
        request_headers=secret.request_headers,
        request_body=b"{}",
        stream=True,
        status=200,
        response_headers=tuple(SSE),
        response_body=b"".join(arrived),
        chunks=tuple(arrived),
        error="StreamInterruptedError: the response broke off",
    )
    path = tmp_path / "c.yaml"
    write_cassette(
        path, [exchange], adapter="openai_chat", base_url="http://127.0.0.1:8080", provenance=Provenance(mode="live")
    )
    assert not leaks_in_file(path, secret.value)
    [interaction] = load_cassette(path).interactions
    assert interaction.response is not None and interaction.response.chunks == (
        b'data: {"delta": "token ',
        b"REDACTED",
        b"",
    )


def test_credentials_sent_are_scrubbed_where_the_server_echoes_them(tmp_path: Path) -> None:
    """A ``Basic`` authorization (its base64 and its password), a ``Token`` scheme, and a cookie value
    sent percent-encoded: echoed back in the body (decoded, for the password and the cookie)."""
    password = "pa55-w0rd-FAKE-9c2e"
    basic = base64.b64encode(f"user:{password}".encode()).decode()
    token = "FAKEtokenSCHEME-4b7d1e"
    cookie = "FAKE%2Fcookie%3Dvalue-77"
    echo = f"seen {basic} / {password} / {token} / {unquote(cookie)}"
    exchange = Exchange(
        method="POST",
        url="http://127.0.0.1:8080/v1/chat/completions",
        request_headers=(
            ("authorization", f"Basic {basic}"),
            ("proxy-authorization", f"Token {token}"),
            ("cookie", f"sid={cookie}"),
        ),
        request_body=b"{}",
        stream=False,
        status=400,
        response_headers=tuple(JSON),
        response_body=json.dumps({"error": {"message": echo}}).encode(),
    )
    path = tmp_path / "c.yaml"
    write_cassette(
        path, [exchange], adapter="openai_chat", base_url="http://127.0.0.1:8080", provenance=Provenance(mode="live")
    )
    text = path.read_text(encoding="utf-8")
    for secret in (basic, password, token, unquote(cookie)):
        assert not leaks(text, secret), secret
    assert json.loads(text)["interactions"][0]["response"]["parsed_body"] == {
        "error": {"message": "seen REDACTED / REDACTED / REDACTED / REDACTED"}
    }


def test_a_check_that_refuses_the_new_cassette_keeps_the_old_one(tmp_path: Path) -> None:
    """``write_cassette(check=...)`` sees the new cassette read back before it replaces the old file
    (a live recording's replay through the reference adapter, issue 27): when it refuses, the old file
    stays byte for byte and the error names the file."""
    path = tmp_path / "c.yaml"
    live = Provenance(mode="live", model="qwen", scenario="basic/get_time")
    turns = live_turns("call_Xq7v9Lr2Zx0b", 1764100000, "req_a1b2c3d4", 31.5)
    write_cassette(path, turns, adapter="openai_chat", base_url="http://127.0.0.1:8080", provenance=live)
    before = path.read_bytes()
    seen: list[int] = []

    def refuse(cassette: Cassette) -> None:
        seen.append(len(cassette.interactions))
        raise CassetteWriteError("turn 0 (stream): the answer decodes otherwise; nothing was written")

    changed = Provenance(mode="live", model="other", scenario="basic/get_time")
    with pytest.raises(CassetteWriteError, match=r"c\.yaml: turn 0 \(stream\): the answer decodes otherwise"):
        write_cassette(
            path, turns, adapter="openai_chat", base_url="http://127.0.0.1:8080", provenance=changed, check=refuse
        )
    assert seen == [len(turns)]
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.yaml"]  # no temporary left


def test_a_key_split_across_two_header_names_leaves_no_half() -> None:
    key = "hunter2-local-token-1234"
    exchange = Exchange(
        method="POST",
        url="http://127.0.0.1:1/v1/chat/completions",
        request_headers=(("content-type", "application/json"),),
        request_body=b"{}",
        stream=False,
        status=200,
        response_headers=(("x-key-part-1", key[:10]), ("content-type", "application/json"), ("x-key-part-2", key[10:])),
        response_body=b'{"choices": []}',
    )
    scrubber = Scrubber([key])
    for order in (exchange.response_headers, exchange.response_headers[::-1]):  # another header between them
        scrubbed = _headers(order, DROPPED_RESPONSE_HEADERS, scrubber)
        assert not leaks(json.dumps(scrubbed), key), scrubbed
        assert scrubbed["content-type"] == ["application/json"]
