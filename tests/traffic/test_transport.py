"""Tests for ``conformance.traffic.transport`` against a real loopback HTTP server (tests/_loopback.py).

Key placement follows the wire facts: OpenAI and Ollama take ``Authorization: Bearer KEY``;
Anthropic ``x-api-key`` plus ``anthropic-version`` (ANT-SDK ``_client.py`` ``auth_headers``/
``default_headers``); Gemini ``x-goog-api-key`` (google-genai ``_api_client.py``).
"""

from __future__ import annotations

import gzip
import json
import socket
import threading
import tracemalloc
import zlib
from collections.abc import Callable

import httpx
import pytest
from _loopback import LoopbackServer, Reply
from _raw_server import Peer, RawServer, deflate_bomb, head

from conformance.adapters import get_adapter
from conformance.adapters.base import WireRequest
from conformance.errors import (
    StreamInterruptedError,
    TransportConnectError,
    TransportError,
    TransportTimeoutError,
    UsageError,
)
from conformance.model import Message, Request, Text
from conformance.traffic.transport import Transport, auth_headers

KEY = "test-key-0123456789"
HELLO = Request(model="m", messages=(Message(role="user", parts=(Text(text="hi"),)),))
JSON = [("content-type", "application/json")]


@pytest.mark.parametrize(
    ("wire", "expected"),
    [
        ("openai_chat", {"authorization": f"Bearer {KEY}"}),
        ("openai_responses", {"authorization": f"Bearer {KEY}"}),
        ("ollama", {"authorization": f"Bearer {KEY}"}),
        ("anthropic", {"x-api-key": KEY}),
        ("gemini", {"x-goog-api-key": KEY}),
    ],
)
def test_auth_headers_place_the_key_per_wire(wire: str, expected: dict[str, str]) -> None:
    assert auth_headers(wire, KEY) == expected
    assert auth_headers(wire, None) == {}


def test_auth_headers_unknown_wire_lists_the_valid_ones() -> None:
    with pytest.raises(UsageError, match=r"unknown wire format 'bedrock'.*anthropic, gemini, ollama"):
        auth_headers("bedrock", KEY)


@pytest.mark.parametrize(
    ("wire", "key_header", "key_value"),
    [
        ("openai_chat", "authorization", f"Bearer {KEY}"),
        ("anthropic", "x-api-key", KEY),
        ("gemini", "x-goog-api-key", KEY),
        ("ollama", "authorization", f"Bearer {KEY}"),
    ],
)
def test_send_puts_the_key_and_the_wire_headers_on_the_request(wire: str, key_header: str, key_value: str) -> None:
    wire_request = get_adapter(wire).request_to_wire(HELLO)
    path = wire_request.path.split("?", 1)[0]
    routes = {("POST", path): [Reply(headers=JSON, body=b'{"ok": true}')]}
    with LoopbackServer(routes) as server, Transport(server.base_url, wire=wire, api_key=KEY) as transport:
        response = transport.send(wire_request)
    assert (response.status, response.body, response.headers["content-type"]) == (
        200,
        b'{"ok": true}',
        "application/json",
    )
    seen = server.requests[0]
    assert seen.headers[key_header] == key_value
    assert seen.path == wire_request.path
    for name, value in wire_request.headers.items():
        assert seen.headers[name] == value
    if wire == "anthropic":
        assert seen.headers["anthropic-version"] == "2023-06-01"
    import json

    assert json.loads(seen.body) == wire_request.body


def test_every_exchange_is_logged_with_the_wire_bytes() -> None:
    routes = {("POST", "/v1/chat/completions"): [Reply(status=429, headers=[*JSON, ("retry-after", "7")], body=b"{}")]}
    request = WireRequest(path="/v1/chat/completions", body={"model": "m", "messages": []})
    with LoopbackServer(routes) as server, Transport(server.base_url + "/", wire="openai_chat", api_key=KEY) as t:
        response = t.send(request)
    assert response.status == 429  # an error status is returned, not raised: the adapter decodes it
    [exchange] = t.exchanges
    assert exchange.method == "POST"
    assert exchange.url == f"{server.base_url}/v1/chat/completions"
    assert ("authorization", f"Bearer {KEY}") in exchange.request_headers
    assert exchange.request_json == {"model": "m", "messages": []}
    assert exchange.status == 429
    assert ("retry-after", "7") in exchange.response_headers
    assert (exchange.response_body, exchange.stream, exchange.error) == (b"{}", False, None)


def test_stream_yields_chunks_as_they_arrive() -> None:
    gate = threading.Event()
    pieces = [b'data: {"a": 1}\n\n', b'data: {"a": 2}\n\n', b"data: [DONE]\n\n"]
    reply = Reply(headers=[("content-type", "text/event-stream")], pieces=pieces)
    routes = {("POST", "/v1/chat/completions"): [reply]}
    request = WireRequest(path="/v1/chat/completions", body={"stream": True}, stream=True)
    with (
        LoopbackServer(routes, gate=gate) as server,
        Transport(server.base_url, wire="openai_chat") as t,
        t.stream(request) as response,
    ):
        assert response.status == 200
        chunks = response.chunks()
        first = next(chunks)  # the server holds the rest back until the gate opens
        assert first == pieces[0]
        gate.set()
        rest = list(chunks)
    assert first + b"".join(rest) == b"".join(pieces)
    [exchange] = t.exchanges
    assert exchange.stream is True
    assert exchange.chunks[0] == pieces[0]
    assert exchange.response_body == b"".join(pieces)
    assert dict(exchange.request_headers)["accept"] == "text/event-stream"


def test_a_stream_cut_mid_body_raises_and_keeps_what_arrived() -> None:
    pieces = [b'data: {"a": 1}\n\n']
    routes = {
        ("POST", "/v1/messages"): [Reply(headers=[("content-type", "text/event-stream")], pieces=pieces, cut=True)]
    }
    request = WireRequest(path="/v1/messages", body={"stream": True}, stream=True)
    with (
        LoopbackServer(routes) as server,
        Transport(server.base_url, wire="anthropic") as t,
        t.stream(request) as response,
        pytest.raises(StreamInterruptedError, match="broke off") as caught,
    ):
        list(response.chunks())
    assert caught.value.url == f"{server.base_url}/v1/messages"
    [exchange] = t.exchanges
    assert exchange.response_body.startswith(pieces[0])
    assert exchange.error is not None and exchange.error.startswith("StreamInterruptedError")


def test_nothing_listening_is_a_connect_error() -> None:
    with socket.socket() as probe:  # a port that was free a moment ago, now closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with Transport(f"http://127.0.0.1:{port}", wire="ollama") as t, pytest.raises(TransportConnectError) as caught:
        t.send(WireRequest(path="/api/chat", body={}))
    assert isinstance(caught.value, ConnectionError)
    assert isinstance(caught.value, TransportError)
    assert t.exchanges[0].status is None and t.exchanges[0].error is not None


def test_a_silent_server_is_a_timeout() -> None:
    release = threading.Event()
    routes = {("POST", "/api/chat"): [Reply(hold=release)]}
    try:
        with LoopbackServer(routes) as server, Transport(server.base_url, wire="ollama", timeout=0.2) as t:
            with pytest.raises(TransportTimeoutError, match="timed out"):
                t.send(WireRequest(path="/api/chat", body={}))
            release.set()
    finally:
        release.set()


def test_a_set_cookie_is_not_sent_back() -> None:
    routes = {("POST", "/v1/responses"): [Reply(headers=[*JSON, ("set-cookie", "session=abc; Path=/")], body=b"{}")]}
    with LoopbackServer(routes) as server, Transport(server.base_url, wire="openai_responses") as t:
        t.send(WireRequest(path="/v1/responses", body={}))
        t.send(WireRequest(path="/v1/responses", body={}))
    assert "cookie" not in server.requests[1].headers


def test_extra_headers_are_sent_and_the_key_wins_over_them() -> None:
    routes = {("POST", "/v1/chat/completions"): [Reply(headers=JSON, body=b"{}")]}
    extra = {"openai-organization": "org-x", "authorization": "Bearer other"}
    with (
        LoopbackServer(routes) as server,
        Transport(server.base_url, wire="openai_chat", api_key=KEY, headers=extra) as t,
    ):
        t.send(WireRequest(path="v1/chat/completions", body={}))
    assert server.requests[0].headers["openai-organization"] == "org-x"
    assert server.requests[0].headers["authorization"] == f"Bearer {KEY}"


# --------------------------------------------------------------------------------------------
# Bounded bodies (issue 27, point 4): decoded here, counted as they inflate
# --------------------------------------------------------------------------------------------

MIB = 1024 * 1024
CHAT = WireRequest(path="/v1/chat/completions", body={"model": "m", "messages": []})
CHAT_STREAM = WireRequest(path="/v1/chat/completions", body={"stream": True}, stream=True)


def _bomb_answer(bomb: bytes) -> Callable[[Peer], None]:
    def answer(peer: Peer) -> None:
        headers = [("content-type", "application/json"), ("content-encoding", "gzip")]
        peer.send(head(headers=[*headers, ("content-length", str(len(bomb)))]) + bomb)

    return answer


@pytest.mark.parametrize("streamed", [False, True], ids=["send", "stream"])
def test_a_gzip_bomb_is_cut_at_max_body_as_it_inflates(streamed: bool) -> None:
    """4 MB of gzip that inflates to 4 GiB: the body stops at the bound, a few MiB of memory (traced
    here; the process's peak is measured in tests/cli/test_record_live.py)."""
    bomb = deflate_bomb(4 << 30)
    tracemalloc.start()
    try:
        with (
            RawServer(_bomb_answer(bomb)) as server,
            Transport(server.base_url, wire="openai_chat", max_body=MIB) as t,
            pytest.raises(TransportError, match=r"the response body passed 1,048,576 bytes \(decoded size") as caught,
        ):
            if streamed:
                with t.stream(CHAT_STREAM) as response:
                    for _ in response.chunks():
                        pass
            else:
                t.send(CHAT)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert not isinstance(caught.value, StreamInterruptedError | TransportTimeoutError)
    assert peak < 16 * MIB, f"{peak / MIB:.0f} MiB traced for a 1 MiB bound"
    assert t.too_large == "POST /v1/chat/completions: " + str(caught.value).rsplit(" (", 1)[0]
    [exchange] = t.exchanges
    assert (exchange.status, exchange.response_body, exchange.chunks) == (200, b"", ())
    assert exchange.error is not None and "passed 1,048,576 bytes" in exchange.error


def test_a_body_within_max_body_is_whole_and_the_bound_is_not_set() -> None:
    body = json.dumps({"text": "x" * 5000}).encode()

    def answer(peer: Peer) -> None:
        packed = gzip.compress(body)
        headers = [("content-encoding", "gzip"), ("content-length", str(len(packed)))]
        peer.send(head(headers=headers) + packed)

    with RawServer(answer) as server, Transport(server.base_url, wire="openai_chat", max_body=len(body)) as t:
        assert t.send(CHAT).body == body
    assert t.too_large is None


def _zlib(data: bytes, wbits: int) -> bytes:
    compressor = zlib.compressobj(6, zlib.DEFLATED, wbits)
    return compressor.compress(data) + compressor.flush()


BODY = b'{"choices": [{"message": {"content": "' + b"ok " * 30000 + b'"}}]}'


@pytest.mark.parametrize(
    ("encoding", "raw"),
    [
        ("gzip", gzip.compress(BODY)),
        ("x-gzip", gzip.compress(BODY)),  # not decoded by httpx either: passed through
        ("deflate", _zlib(BODY, 15)),
        ("deflate", _zlib(BODY, -15)),  # raw deflate, as some servers send it: httpx falls back to it too
        ("gzip, deflate", _zlib(gzip.compress(BODY), 15)),  # two layers, the last applied decoded first
        ("identity", BODY),
        ("br", b"not really brotli"),  # an encoding not asked for is passed through, as httpx does
        ("gzip", gzip.compress(BODY) + b"trailing bytes after the member"),
        ("gzip", gzip.compress(BODY)[:-9]),  # truncated: what inflated, as httpx gives it
    ],
    ids=["gzip", "x-gzip", "zlib", "raw-deflate", "two-layers", "identity", "br", "trailing", "truncated"],
)
@pytest.mark.parametrize("streamed", [False, True], ids=["send", "stream"])
def test_bodies_are_decoded_as_httpx_decodes_them(encoding: str, raw: bytes, streamed: bool) -> None:
    expected = httpx.Response(200, headers={"content-encoding": encoding}, content=raw).content

    def answer(peer: Peer) -> None:
        peer.send(head(headers=[("content-encoding", encoding), ("content-length", str(len(raw)))]) + raw)

    with RawServer(answer) as server, Transport(server.base_url, wire="openai_chat", max_body=10 * MIB) as t:
        if streamed:
            with t.stream(CHAT_STREAM) as response:
                body = b"".join(response.chunks())
        else:
            body = t.send(CHAT).body
    assert body == expected
    assert t.exchanges[0].response_body == expected


def test_a_corrupt_gzip_body_is_a_broken_response() -> None:
    def answer(peer: Peer) -> None:
        raw = b"\x1f\x8b\x08\x00garbage that is not deflate at all"
        peer.send(head(headers=[("content-encoding", "gzip"), ("content-length", str(len(raw)))]) + raw)

    with (
        RawServer(answer) as server,
        Transport(server.base_url, wire="openai_chat", max_body=MIB) as t,
        pytest.raises(StreamInterruptedError, match="DecodingError: content-encoding gzip"),
    ):
        t.send(CHAT)


def test_only_the_encodings_decoded_here_are_asked_for() -> None:
    routes = {("POST", "/v1/chat/completions"): [Reply(headers=JSON, body=b"{}")]}
    with LoopbackServer(routes) as server, Transport(server.base_url, wire="openai_chat") as t:
        t.send(CHAT)
    assert server.requests[0].headers["accept-encoding"] == "gzip, deflate"
