"""The emulator playing a cassette (``Emulator.play_cassette``, ``conformance.emulator._cassette``),
over real loopback HTTP: each request gets the recorded answer of its (wire, turn, stream mode),
the turn read from its history (never from arrival order), with the recorded chunk boundaries,
HTTP errors and broken streams. Expected values are read from the committed cassettes."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import anthropic
import httpx
import openai
import pytest
from google import genai
from google.genai import errors as genai_errors
from google.genai import types as genai_types

from conformance.emulator import Emulator
from conformance.emulator._cassette import CassettePlay, is_stream_request, request_turn, served_pieces
from conformance.traffic.cassettes import Cassette, Interaction, load_cassette
from conformance.traffic.network_guard import connect_log, is_loopback

REPO = Path(__file__).resolve().parents[2]
WIRES = ("openai_chat", "openai_responses", "anthropic", "gemini", "ollama")


def _cassette(relative: str) -> Cassette:
    return load_cassette(REPO / "cassettes" / relative)


@pytest.fixture
def emu(emulator: Emulator) -> Iterator[Emulator]:
    """The module's emulator, back in script mode after the test."""
    yield emulator
    emulator.play_cassette(None)


def _path(interaction: Interaction) -> str:
    url = urlsplit(interaction.request.uri)
    return url.path + (f"?{url.query}" if url.query else "")


def _body(interaction: Interaction) -> bytes:
    return json.dumps(interaction.request.json).encode()


@dataclass
class Raw:
    """An HTTP/1.1 answer as read from a raw socket, its chunked framing parsed by hand."""

    status: int
    headers: dict[str, str]
    body: bytes
    chunks: list[bytes] | None
    """The chunks of a chunked body (None: the body had a Content-Length)."""
    complete: bool
    """A chunked body ended by its ``0`` chunk (False: the connection closed before it)."""


def raw_post(base_url: str, path: str, body: bytes) -> Raw:
    url = urlsplit(base_url)
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {url.netloc}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode()
    data = b""
    with socket.create_connection((url.hostname, url.port), timeout=10) as sock:
        sock.sendall(head + body)
        while piece := sock.recv(65536):
            data += piece
    header_block, _, rest = data.partition(b"\r\n\r\n")
    lines = header_block.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    if "chunked" not in headers.get("transfer-encoding", ""):
        return Raw(status, headers, rest[: int(headers["content-length"])], None, True)
    chunks: list[bytes] = []
    while rest:
        size_line, sep, rest = rest.partition(b"\r\n")
        if not sep:
            break
        size = int(size_line, 16)
        if size == 0:
            return Raw(status, headers, b"".join(chunks), chunks, True)
        if len(rest) < size + 2:
            break
        chunks.append(rest[:size])
        rest = rest[size + 2 :]
    return Raw(status, headers, b"".join(chunks), chunks, False)


# --------------------------------------------------------------------------------------------
# The index (pure)
# --------------------------------------------------------------------------------------------


def test_a_cassette_indexes_itself_by_wire_turn_and_stream_mode() -> None:
    play = CassettePlay.of(_cassette("openai_chat/basic/get_time.yaml"))
    # recorded: turn 0 whole, turn 1 whole, turn 0 streamed, turn 1 streamed
    assert {key: i.index for key, i in play.answers.items()} == {
        ("openai_chat", 0, False): 0,
        ("openai_chat", 1, False): 1,
        ("openai_chat", 0, True): 2,
        ("openai_chat", 1, True): 3,
    }
    assert play.answer("openai_chat", 2, False) is None
    assert play.describe("openai_chat", True).endswith("holds streamed openai_chat turns [0, 1]")
    assert "holds non-streamed anthropic turns none" in play.describe("anthropic", False)


def test_a_responses_cassette_knows_the_turn_of_each_response_id_it_answers() -> None:
    play = CassettePlay.of(_cassette("openai_responses/basic/get_time.yaml"))
    # whole and streamed answers of a turn carry the same recorded id (body ``id``, ``response.created``)
    assert play.response_turns == {
        "resp_e901924fcff57d8820b1747f79ff6cc2be8001db439e332b0c": 0,
        "resp_ef592e2f15c89e0ab75173f76512de281f4bfc6ba942c47636": 1,
    }
    body = {"model": "m", "input": [{"role": "user", "content": "hi"}]}
    assert play.turn("openai_responses", "/v1/responses", body) == 0
    continued = {**body, "previous_response_id": "resp_e901924fcff57d8820b1747f79ff6cc2be8001db439e332b0c"}
    assert play.turn("openai_responses", "/v1/responses", continued) == 1
    unknown = {**body, "previous_response_id": "resp_not_in_the_cassette"}
    assert play.turn("openai_responses", "/v1/responses", unknown) == 0


def test_stream_mode_is_read_per_wire() -> None:
    assert is_stream_request("gemini", "/v1beta/models/x:streamGenerateContent?alt=sse", {})
    assert not is_stream_request("gemini", "/v1beta/models/x:generateContent", {"stream": True})
    assert is_stream_request("ollama", "/api/chat", {})  # Ollama streams unless told not to
    assert not is_stream_request("ollama", "/api/chat", {"stream": False})
    assert not is_stream_request("openai_chat", "/v1/chat/completions", {})
    assert is_stream_request("anthropic", "/v1/messages", {"stream": True})


def test_the_turn_is_the_number_of_assistant_messages_of_the_recorded_requests() -> None:
    cassette = _cassette("anthropic/basic/get_time.yaml")
    turns = [request_turn("anthropic", "/v1/messages", i.request.json) for i in cassette.interactions]
    assert turns == [0, 1, 0, 1]


def test_served_pieces_are_the_recorded_chunks_of_a_stream_and_the_body_otherwise() -> None:
    cassette = _cassette("openai_chat/basic/get_time.yaml")
    whole, streamed = cassette.interactions[0].response, cassette.interactions[2].response
    assert whole is not None and streamed is not None and streamed.chunks
    assert served_pieces(whole, stream=False) == [whole.body]
    assert served_pieces(streamed, stream=True) == list(streamed.chunks)
    assert len(streamed.chunks) == 10 and streamed.chunks[-1] == b"data: [DONE]\n\n"


# --------------------------------------------------------------------------------------------
# Playing over HTTP
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("wire", WIRES)
def test_every_recorded_request_gets_its_recorded_answer(emu: Emulator, wire: str) -> None:
    cassette = _cassette(f"{wire}/basic/get_time.yaml")
    emu.play_cassette(cassette)
    for interaction in reversed(cassette.interactions):  # arrival order does not matter
        recorded = interaction.response
        assert recorded is not None
        raw = raw_post(emu.base_url, _path(interaction), _body(interaction))
        assert raw.status == recorded.status == 200
        assert raw.complete
        if raw.chunks is None:
            assert raw.body == recorded.body
        else:
            assert raw.body == b"".join(served_pieces(recorded, stream=True))
            if recorded.chunks:
                assert raw.chunks == list(recorded.chunks)
    played = emu.played
    assert [p.interaction for p in played] == [i.index for i in reversed(cassette.interactions)]
    assert [p.turn for p in played] == [1, 0, 1, 0]
    assert all(p.wire == wire and p.status == 200 for p in played)


def test_stream_chunks_keep_the_recorded_boundaries(emu: Emulator) -> None:
    cassette = _cassette("openai_chat/basic/get_time.yaml")
    emu.play_cassette(cassette)
    streamed = cassette.interactions[2]
    recorded = streamed.response
    assert recorded is not None and recorded.chunks is not None
    raw = raw_post(emu.base_url, "/v1/chat/completions", _body(streamed))
    assert raw.headers["transfer-encoding"] == "chunked"
    assert raw.headers["content-type"] == "text/event-stream; charset=utf-8"  # the recorded header
    assert raw.headers["x-request-id"] == "req_ffe564019c23a539d3a8582d9f5f3096"
    assert "content-length" not in raw.headers
    assert raw.chunks == list(recorded.chunks)  # one HTTP chunk per recorded chunk, none merged or split
    assert emu.played[0].chunks == recorded.chunks


def test_a_retry_gets_the_same_answer_not_the_next_turns(emu: Emulator) -> None:
    cassette = _cassette("openai_chat/basic/get_time.yaml")
    emu.play_cassette(cassette)
    first = cassette.interactions[0]
    with httpx.Client(base_url=emu.base_url, timeout=10) as http:
        answers = [http.post("/v1/chat/completions", content=_body(first)) for _ in range(2)]
    assert [a.status_code for a in answers] == [200, 200]
    assert answers[0].content == answers[1].content == first.response.body  # type: ignore[union-attr]
    call = answers[1].json()["choices"][0]["message"]["tool_calls"][0]
    assert call["id"] == "call_HnSSMfO6h1wlNGv2RKymKnTz" and call["function"]["name"] == "getTime"
    assert [(p.turn, p.interaction) for p in emu.played] == [(0, 0), (0, 0)]


def test_the_openai_sdk_gets_each_turn_and_a_retry_the_same(emu: Emulator) -> None:
    cassette = _cassette("openai_chat/basic/get_time.yaml")
    emu.play_cassette(cassette)
    body = cassette.interactions[0].request.json
    with openai.OpenAI(base_url=emu.base_url + "/v1", api_key="sk-fake", max_retries=0) as sdk:
        first = sdk.chat.completions.create(model=body["model"], messages=body["messages"], tools=body["tools"])
        again = sdk.chat.completions.create(model=body["model"], messages=body["messages"], tools=body["tools"])
        calls = first.choices[0].message.tool_calls
        assert calls is not None and calls[0].id == "call_HnSSMfO6h1wlNGv2RKymKnTz"
        assert calls[0].function.arguments == '{"offset_ms":-86400000}'
        assert again.id == first.id == "chatcmpl-4JBYynLR5dqDiaUY7M4KYMrEmtanb"
        history = [
            *body["messages"],
            first.choices[0].message.model_dump(exclude_none=True),
            {"role": "tool", "tool_call_id": calls[0].id, "content": "1684713600000"},
        ]
        second = sdk.chat.completions.create(model=body["model"], messages=history, tools=body["tools"])
        assert second.choices[0].message.content == "昨天是2023年5月22日。"
        stream = sdk.chat.completions.create(model=body["model"], messages=history, tools=body["tools"], stream=True)
        with stream:
            text = "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)
        assert text == "昨天是2023年5月22日。"
    assert [(p.turn, p.stream, p.interaction) for p in emu.played] == [
        (0, False, 0),
        (0, False, 0),
        (1, False, 1),
        (1, True, 3),
    ]


@pytest.mark.parametrize(
    ("api_version", "model"),
    [("v1beta", "gemini-2.5-flash"), ("v1", "gemini-2.5-flash"), ("v1beta", "some-other-model"), ("v1", "x")],
)
def test_gemini_paths_with_any_model_and_version_get_the_answer(emu: Emulator, api_version: str, model: str) -> None:
    cassette = _cassette("gemini/basic/get_time.yaml")
    emu.play_cassette(cassette)
    first = cassette.interactions[0]
    recorded = first.response
    assert recorded is not None
    raw = raw_post(emu.base_url, f"/{api_version}/models/{model}:generateContent", _body(first))
    assert raw.status == 200 and raw.body == recorded.body
    options = genai_types.HttpOptions(base_url=emu.base_url, api_version=api_version)
    sdk = genai.Client(api_key="fake-key", http_options=options)
    try:
        answer = sdk.models.generate_content(
            model=model,
            contents=first.request.json["contents"],
            config=genai_types.GenerateContentConfig(tools=first.request.json["tools"]),
        )
    finally:
        sdk.close()
    calls = answer.function_calls
    assert calls is not None and calls[0].name == "getTime"
    assert calls[0].args == recorded.json["candidates"][0]["content"]["parts"][0]["functionCall"]["args"]
    assert all(p.interaction == 0 for p in emu.played)


@pytest.mark.parametrize("wire", WIRES)
def test_a_stream_recorded_broken_breaks_again(emu: Emulator, wire: str) -> None:
    cassette = _cassette(f"{wire}/errors/stream_disconnect.yaml")
    emu.play_cassette(cassette)
    broken = next(i for i in cassette.interactions if i.response is not None and i.response.interrupted)
    recorded = broken.response
    assert recorded is not None and "incomplete chunked read" in (recorded.interrupted or "")
    raw = raw_post(emu.base_url, _path(broken), _body(broken))
    assert raw.status == 200
    assert raw.chunks is not None and not raw.complete  # no terminating 0 chunk: the body is incomplete
    assert raw.body == b"".join(served_pieces(recorded, stream=True))
    if recorded.chunks:
        assert raw.chunks == list(recorded.chunks)
    with (
        httpx.Client(base_url=emu.base_url, timeout=10) as http,
        http.stream("POST", _path(broken), content=_body(broken)) as answer,
        pytest.raises(httpx.RemoteProtocolError, match="incomplete chunked read"),
    ):
        for _ in answer.iter_raw():
            pass


def test_the_openai_sdk_sees_the_recorded_break(emu: Emulator) -> None:
    cassette = _cassette("openai_chat/errors/stream_disconnect.yaml")
    emu.play_cassette(cassette)
    body = cassette.interactions[0].request.json
    with openai.OpenAI(base_url=emu.base_url + "/v1", api_key="sk-fake", max_retries=0) as sdk:
        stream = sdk.chat.completions.create(**body)
        with stream, pytest.raises(openai.APIConnectionError) as caught:
            for _ in stream:
                pass
    assert "incomplete chunked read" in str(caught.value.__cause__)  # the SDK's transport saw the cut body


@pytest.mark.parametrize("wire", WIRES)
def test_a_recorded_http_error_is_replayed_with_its_status_and_headers(emu: Emulator, wire: str) -> None:
    cassette = _cassette(f"{wire}/errors/rate_limit.yaml")
    emu.play_cassette(cassette)
    for interaction in cassette.interactions:
        recorded = interaction.response
        assert recorded is not None and recorded.status == 429
        raw = raw_post(emu.base_url, _path(interaction), _body(interaction))
        assert raw.status == 429
        assert raw.chunks is None  # an error answers whole, even to a stream request
        assert raw.body == recorded.body
        assert raw.headers["retry-after"] == recorded.headers["retry-after"] == "2"
        assert raw.headers["content-type"] == recorded.headers["content-type"]
    assert [p.interaction for p in emu.played] == [i.index for i in cassette.interactions]


def test_sdks_read_the_replayed_rate_limit(emu: Emulator) -> None:
    chat = _cassette("openai_chat/errors/rate_limit.yaml")
    emu.play_cassette(chat)
    with openai.OpenAI(base_url=emu.base_url + "/v1", api_key="sk-fake", max_retries=0) as sdk:
        with pytest.raises(openai.RateLimitError) as caught:
            sdk.chat.completions.create(**chat.interactions[0].request.json)
        assert caught.value.status_code == 429
        assert caught.value.response.headers["retry-after"] == "2"
    messages = _cassette("anthropic/errors/rate_limit.yaml")
    emu.play_cassette(messages)
    with anthropic.Anthropic(base_url=emu.base_url, api_key="sk-ant-fake", max_retries=0) as sdk:
        with pytest.raises(anthropic.RateLimitError) as limited:
            sdk.messages.create(**{**messages.interactions[0].request.json, "model": "claude-emulated"})
        assert limited.value.status_code == 429
        assert limited.value.response.headers["retry-after"] == "2"
        assert limited.value.body["error"]["type"] == "rate_limit_error"  # type: ignore[index]


def test_gemini_sdk_reads_the_replayed_quota_error(emu: Emulator) -> None:
    cassette = _cassette("gemini/errors/rate_limit.yaml")
    emu.play_cassette(cassette)
    body = cassette.interactions[0].request.json
    sdk = genai.Client(api_key="fake-key", http_options=genai_types.HttpOptions(base_url=emu.base_url))
    try:
        with pytest.raises(genai_errors.ClientError) as caught:
            sdk.models.generate_content(model="gemini-2.5-flash", contents=body["contents"])
    finally:
        sdk.close()
    assert caught.value.code == 429


def _history_past_the_cassette() -> dict[str, object]:
    call = {"id": "c", "type": "function", "function": {"name": "getTime", "arguments": "{}"}}
    messages: list[dict[str, object]] = [{"role": "user", "content": "hi"}]
    for _ in range(3):
        messages += [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c", "content": "1"},
        ]
    return {"model": "gpt-4.1-mini", "messages": messages}


def test_a_turn_the_cassette_lacks_gets_a_400_naming_the_cassette_and_its_turns(emu: Emulator) -> None:
    cassette = _cassette("openai_chat/basic/get_time.yaml")
    emu.play_cassette(cassette)
    raw = raw_post(emu.base_url, "/v1/chat/completions", json.dumps(_history_past_the_cassette()).encode())
    assert raw.status == 400
    error = json.loads(raw.body)["error"]  # OpenAI's error envelope
    assert error["type"] == "invalid_request_error"
    assert "turn 3" in error["message"]
    assert cassette.path in error["message"]
    assert "holds non-streamed openai_chat turns [0, 1]" in error["message"]
    (played,) = emu.played
    assert (played.turn, played.interaction, played.status) == (3, None, 400)


def test_a_missing_turn_is_answered_in_the_wires_error_shape(emu: Emulator) -> None:
    cassette = _cassette("anthropic/basic/get_time.yaml")
    emu.play_cassette(cassette)
    use = {"type": "tool_use", "id": "toolu_1", "name": "getTime", "input": {}}
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "1"}
    body = {
        "model": "claude-emulated",
        "max_tokens": 64,
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [use]},
            {"role": "user", "content": [result]},
            {"role": "assistant", "content": [use]},
            {"role": "user", "content": [result]},
        ],
    }
    with (
        anthropic.Anthropic(base_url=emu.base_url, api_key="sk-ant-fake", max_retries=0) as sdk,
        pytest.raises(anthropic.BadRequestError) as caught,
    ):
        sdk.messages.create(**body)  # type: ignore[call-overload]
    assert caught.value.status_code == 400
    answer = caught.value.body
    assert isinstance(answer, dict) and answer["type"] == "error"
    assert answer["error"]["type"] == "invalid_request_error"
    assert "holds non-streamed anthropic turns [0, 1]" in answer["error"]["message"]


def test_a_wire_the_cassette_does_not_hold_names_none(emu: Emulator) -> None:
    emu.play_cassette(_cassette("openai_chat/basic/get_time.yaml"))
    body = {"model": "llama3.1", "stream": False, "messages": [{"role": "user", "content": "hi"}]}
    raw = raw_post(emu.base_url, "/api/chat", json.dumps(body).encode())
    assert raw.status == 400
    assert "holds non-streamed ollama turns none" in raw.body.decode()


@pytest.mark.parametrize("body", [b"{not json", b"[1, 2]", b""], ids=["not-json", "array", "empty"])
def test_a_body_that_is_not_a_json_request_gets_a_400(emu: Emulator, body: bytes) -> None:
    emu.play_cassette(_cassette("openai_chat/basic/get_time.yaml"))
    raw = raw_post(emu.base_url, "/v1/chat/completions", body)
    assert raw.status == 400
    assert "cannot read the request as openai_chat" in json.loads(raw.body)["error"]["message"]
    (played,) = emu.played
    assert (played.turn, played.interaction, played.status) == (None, None, 400)


def test_play_cassette_clears_the_records_and_none_returns_to_the_script(emu: Emulator) -> None:
    cassette = _cassette("openai_chat/basic/get_time.yaml")
    emu.play_cassette(cassette)
    raw_post(emu.base_url, "/v1/chat/completions", _body(cassette.interactions[0]))
    assert len(emu.played) == 1 and len(emu.requests) == 1
    emu.play_cassette(cassette)
    assert emu.played == [] and emu.requests == []
    emu.play_cassette(None)
    raw = raw_post(emu.base_url, "/v1/chat/completions", _body(cassette.interactions[0]))
    assert raw.status == 200
    assert json.loads(raw.body)["choices"][0]["message"]["content"] == "Hello from the conformance emulator."
    assert emu.played == []  # script mode records no played answers
    assert len(emu.requests) == 1


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_a_stateful_responses_request_continues_from_the_recorded_response(emu: Emulator, stream: bool) -> None:
    """A Responses client using ``previous_response_id`` sends only the new items: it continues
    from the turn of the response it names, as in script mode (docs/emulator.md, Turn index)."""
    cassette = _cassette("openai_responses/basic/get_time.yaml")
    emu.play_cassette(cassette)
    first = cassette.interactions[2 if stream else 0]
    recorded = first.request.json
    with openai.OpenAI(base_url=emu.base_url + "/v1", api_key="sk-fake", max_retries=0) as sdk:
        if stream:
            with sdk.responses.create(
                model=recorded["model"], input=recorded["input"], tools=recorded["tools"], stream=True
            ) as events:
                response = next(e.response for e in events if e.type == "response.completed")
        else:
            response = sdk.responses.create(model=recorded["model"], input=recorded["input"], tools=recorded["tools"])
        (call,) = [item for item in response.output if item.type == "function_call"]
        assert call.call_id == "call_HnSSMfO6h1wlNGv2RKymKnTz"
        output = {"type": "function_call_output", "call_id": call.call_id, "output": "1684713600000"}
        followed = sdk.responses.create(
            model=recorded["model"], previous_response_id=response.id, input=[output], tools=recorded["tools"]
        )
    assert followed.output_text == "昨天是2023年5月22日。"
    assert [(p.turn, p.interaction) for p in emu.played] == [(0, first.index), (1, 1)]


@pytest.mark.parametrize("api_version", ["v1beta", "v1"])
def test_the_gemini_sdk_streams_the_recorded_turns_under_any_model(emu: Emulator, api_version: str) -> None:
    cassette = _cassette("gemini/basic/get_time.yaml")
    emu.play_cassette(cassette)
    recorded = cassette.interactions[2].request.json
    options = genai_types.HttpOptions(base_url=emu.base_url, api_version=api_version)
    config = genai_types.GenerateContentConfig(tools=recorded["tools"])
    sdk = genai.Client(api_key="fake-key", http_options=options)
    try:
        chunks = list(
            sdk.models.generate_content_stream(model="any-model", contents=recorded["contents"], config=config)
        )
        again = list(sdk.models.generate_content_stream(model="other", contents=recorded["contents"], config=config))
    finally:
        sdk.close()
    calls = [call for chunk in chunks for call in chunk.function_calls or []]
    assert [(c.name, c.args) for c in calls] == [("getTime", {"offset_ms": -86400000})]
    assert [c.model_dump() for c in again] == [c.model_dump() for c in chunks]  # a retry: the same answer
    assert [(p.turn, p.stream, p.interaction) for p in emu.played] == [(0, True, 2), (0, True, 2)]
    assert all(urlsplit(r.path).path.startswith(f"/{api_version}/models/") for r in emu.requests)


# --------------------------------------------------------------------------------------------
# A cassette never sends a client off loopback; a too-deep request (issue 27, point 6)
# --------------------------------------------------------------------------------------------


def _redirecting_cassette(tmp_path: Path, location: str) -> Cassette:
    """The committed get_time cassette with its first answer turned into a 307 to ``location``."""
    document = json.loads((REPO / "cassettes/openai_chat/basic/get_time.yaml").read_text())
    document["interactions"][0]["response"] = {
        "status": {"code": 307, "message": "Temporary Redirect"},
        "headers": {"location": [location], "content-type": ["text/plain"]},
        "body": {"string": ""},
    }
    path = tmp_path / "redirect.yaml"
    path.write_text(json.dumps(document))
    return load_cassette(path)


@pytest.mark.parametrize(
    "location",
    [
        "http://203.0.113.7/v1/chat/completions",
        "https://api.openai.com/v1/chat/completions",
        "//203.0.113.7:80/v1/chat/completions",
        "http://127.0.0.1:1/v1/chat/completions",
        "http://localhost.evil.example/v1/chat/completions",
    ],
    ids=["ip", "provider", "scheme-relative", "other-loopback-port", "lookalike-name"],
)
def test_a_recorded_redirect_off_the_server_is_refused_and_never_followed(
    emu: Emulator, tmp_path: Path, location: str
) -> None:
    cassette = _redirecting_cassette(tmp_path, location)
    emu.play_cassette(cassette)
    with connect_log() as connects, httpx.Client(follow_redirects=True, timeout=10) as http:
        answer = http.post(emu.base_url + "/v1/chat/completions", json=cassette.interactions[0].request.json)
    assert answer.status_code == 502 and not answer.history  # nothing was followed
    assert all(is_loopback(address[0]) and address[1] == emu.port for address in connects)
    message = answer.json()["error"]["message"]  # the wire's error envelope
    assert f"{cassette.path}, interaction 0" in message
    assert repr(location) in message and "off this loopback server" in message
    (played,) = emu.played
    assert played.refused == message and (played.interaction, played.status) == (0, 502)
    assert message in emu.log


def test_a_redirect_to_the_server_itself_is_served(emu: Emulator, tmp_path: Path) -> None:
    for location in ("/v1/chat/completions?again=1", f"http://127.0.0.1:{emu.port}/v1/chat/completions"):
        cassette = _redirecting_cassette(tmp_path, location)
        emu.play_cassette(cassette)
        raw = raw_post(emu.base_url, "/v1/chat/completions", _body(cassette.interactions[0]))
        assert (raw.status, raw.headers["location"]) == (307, location)
        (played,) = emu.played
        assert played.refused is None


def test_a_request_nested_100000_deep_gets_a_400_naming_the_limit_while_a_cassette_plays(emu: Emulator) -> None:
    emu.play_cassette(_cassette("openai_chat/basic/get_time.yaml"))
    body = b'{"model": "m", "messages": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    raw = raw_post(emu.base_url, "/v1/chat/completions", body)
    assert raw.status == 400
    assert "nesting_depth=100" in json.loads(raw.body)["error"]["message"]
    (played,) = emu.played
    assert (played.turn, played.interaction, played.status) == (None, None, 400)
