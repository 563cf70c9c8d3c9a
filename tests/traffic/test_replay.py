"""Tests for ``conformance.traffic.replay``: serve recorded cassettes back to a ``Transport`` (and to vcrpy)
with no socket opened; match on method, path and stream mode; name the missing recording."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from _loopback import LoopbackServer, Reply
from _traffic import ASK, CHAT_BODY, CHAT_STREAM, JSON, SSE, chunk, record_chat

from conformance.adapters import get_adapter
from conformance.adapters.base import WireRequest
from conformance.errors import ReplayMissError, StreamInterruptedError
from conformance.traffic.network_guard import connect_log
from conformance.traffic.recorder import Provenance, record_cassette, record_command
from conformance.traffic.replay import replay_transport, split_stream_body
from conformance.traffic.transport import Transport


def test_replay_with_the_server_gone_opens_no_socket(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    record_chat(path)  # the server is shut down when this returns
    adapter = get_adapter("openai_chat")
    with connect_log() as connects, replay_transport(path, wire="openai_chat") as transport:
        plain = transport.send(adapter.request_to_wire(ASK))
        with transport.stream(adapter.request_to_wire(replace(ASK, stream=True))) as s:
            pieces = list(s.chunks())
    assert connects == []
    assert plain.status == 200 and json.loads(plain.body) == CHAT_BODY
    assert pieces == CHAT_STREAM  # served one SSE event per chunk, as the server sent them
    response = adapter.response_from_wire(json.loads(plain.body))
    assert [p.name for p in response.parts if hasattr(p, "name")] == ["getTime"]


def test_replay_plays_matching_interactions_in_order_and_once(tmp_path: Path) -> None:
    first = Reply(headers=JSON, body=b'{"turn": 1}')
    second = Reply(headers=JSON, body=b'{"turn": 2}')
    routes = {("POST", "/api/chat"): [first, second]}
    request = WireRequest(path="/api/chat", body={"model": "m", "stream": False})
    path = tmp_path / "c.yaml"
    with LoopbackServer(routes) as server:
        record_cassette(
            path,
            lambda t: [t.send(request) for _ in range(2)] and None,
            adapter="ollama",
            base_url=server.base_url,
            provenance=Provenance(mode="live", model="m"),
        )
    with replay_transport(path, wire="ollama", command=record_command("ollama", "multi/two")) as transport:
        assert [transport.send(request).body for _ in range(2)] == [b'{"turn": 1}', b'{"turn": 2}']
        with pytest.raises(ReplayMissError) as caught:
            transport.send(request)
    message = str(caught.value)
    assert str(path) in message
    assert "POST /api/chat (not streamed)" in message
    assert "conformance record --emulator --adapter ollama --scenario multi/two" in message


def test_replay_matches_the_stream_mode(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    record_chat(path)
    adapter = get_adapter("openai_chat")
    with replay_transport(path, wire="openai_chat") as transport:
        transport.send(adapter.request_to_wire(ASK))
        with pytest.raises(ReplayMissError, match=r"POST /v1/chat/completions \(not streamed\)"):
            transport.send(adapter.request_to_wire(ASK))  # only the streamed interaction is left


@pytest.mark.parametrize(
    ("body", "pieces"),
    [
        (b"data: 1\r\n\r\ndata: 2\r\n\r\n", [b"data: 1\r\n\r\n", b"data: 2\r\n\r\n"]),
        (b'{"a":1}\n{"b":2}\n', [b'{"a":1}\n', b'{"b":2}\n']),
        (b"event: x\ndata: 1\n\n", [b"event: x\ndata: 1\n\n"]),
    ],
)
def test_split_stream_body(body: bytes, pieces: list[bytes]) -> None:
    assert split_stream_body(body) == pieces


def test_vcrpy_replays_the_written_cassette(tmp_path: Path) -> None:
    import httpx
    import vcr

    from conformance.traffic.replay import VcrSerializer

    path = tmp_path / "c.yaml"
    record_chat(path)
    recorder = vcr.VCR(record_mode="none")
    recorder.register_serializer("conformance", VcrSerializer())
    body = get_adapter("openai_chat").request_to_wire(ASK).body
    with connect_log() as connects, recorder.use_cassette(str(path), serializer="conformance"):
        response = httpx.post("http://127.0.0.1/v1/chat/completions", json=body)
    assert connects == []
    assert response.status_code == 200
    assert response.json() == CHAT_BODY


def test_a_stream_broken_while_recording_breaks_again_on_replay(tmp_path: Path) -> None:

    first = chunk({"role": "assistant", "content": "Hel"})
    routes = {("POST", "/v1/chat/completions"): [Reply(headers=SSE, pieces=[first], cut=True)]}
    request = get_adapter("openai_chat").request_to_wire(replace(ASK, stream=True))
    path = tmp_path / "c.yaml"

    def run(transport: Transport) -> None:
        with transport.stream(request) as response, pytest.raises(StreamInterruptedError):
            response.read()

    with LoopbackServer(routes) as server:
        record_cassette(
            path, run, adapter="openai_chat", base_url=server.base_url, provenance=Provenance(mode="emulator")
        )
    text = path.read_text(encoding="utf-8")
    assert '"interrupted": "StreamInterruptedError: the response broke off' in text
    assert "(http://127.0.0.1/v1/chat/completions)" in text  # no loopback port: re-recording stays stable
    with replay_transport(path, wire="openai_chat") as transport, transport.stream(request) as response:
        chunks = response.chunks()
        assert next(chunks) == first
        with pytest.raises(StreamInterruptedError, match="replayed interruption"):
            list(chunks)  # what arrived before the break ("short", the cut chunk's start), then the break
    assert transport.exchanges[0].response_body == first + b"short"


def test_a_recorded_uri_that_is_not_a_url_matches_no_request() -> None:
    # found by the fuzz tier: urlsplit("http://[::1") raises ValueError, which escaped the replay
    from conformance.traffic.cassettes import Cassette, Interaction, RecordedRequest, RecordedResponse

    bad = Interaction(
        index=0,
        request=RecordedRequest(method="POST", uri="http://[::1"),
        response=RecordedResponse(status=200, body=b"{}"),
    )
    good = replace(bad, index=1, request=RecordedRequest(method="POST", uri="http://127.0.0.1/api/chat"))
    cassette = Cassette(path="bad.yaml", interactions=(bad, good))
    request = WireRequest(path="/api/chat", body={"model": "m", "stream": False})
    with replay_transport(cassette, wire="ollama") as transport:
        assert transport.send(request).body == b"{}"
        with pytest.raises(ReplayMissError, match=r"bad\.yaml: no recorded interaction matches POST /api/chat"):
            transport.send(request)


@pytest.mark.parametrize("value", ["caf\u00e9", "\u2028", "\U0001f980", "\ufeffx", "a\ud800b"])
def test_a_recorded_header_outside_ascii_is_replayed(value: str) -> None:
    # found by the fuzz tier: httpx encodes a str header as ASCII, and its UnicodeEncodeError escaped
    from conformance.traffic.cassettes import Cassette, Interaction, RecordedRequest, RecordedResponse

    recorded = Interaction(
        index=0,
        request=RecordedRequest(method="POST", uri="http://127.0.0.1/api/chat"),
        response=RecordedResponse(status=200, headers={"x-odd": value, "content-type": "application/json"}, body=b"{}"),
    )
    request = WireRequest(path="/api/chat", body={"model": "m", "stream": False})
    with replay_transport(Cassette(path="odd.yaml", interactions=(recorded,)), wire="ollama") as transport:
        response = transport.send(request)
    assert response.body == b"{}"
    assert response.headers["content-type"] == "application/json"
