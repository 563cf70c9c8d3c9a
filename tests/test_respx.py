"""conformance.respx: a scenario's recorded answers as a respx router, for a user's own httpx code.

A user-style client (plain httpx calling OpenAI Chat) holds the bundled basic/get_time conversation
against the router, streamed and not; every wire's recorded requests get their recorded answers;
what respx keeps of the recorded chunk boundaries is measured; each error names the scenario, the
turn and what to do; and docs/pytest.md's example runs as written."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx
import yaml

from conformance.adapters import for_format
from conformance.emulator._cassette import served_pieces
from conformance.errors import CassetteNotFoundError, ReplayMissError, UsageError, WireFormatError
from conformance.respx import ENDPOINTS, router
from conformance.scenarios import bundled
from conformance.traffic.cassettes import Interaction, is_streaming, load_cassette

REPO = Path(__file__).resolve().parents[1]
BASE = "https://api.openai.com"
QUESTION = "请告诉我昨天的日期是什么时候?"
ANSWER = "昨天是2023年5月22日。"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "getTime",
            "parameters": {"type": "object", "properties": {"offset_ms": {"type": "number"}}},
        },
    }
]


# ---- a user's own client: a few lines of plain httpx -------------------------------------------


def chat(client: httpx.Client, messages: list[dict[str, Any]], *, stream: bool = False) -> dict[str, Any]:
    """One OpenAI Chat turn; a stream is folded into the message a whole body carries."""
    body: dict[str, Any] = {"model": "gpt-5.4-mini", "messages": messages, "tools": TOOLS}
    if not stream:
        response = client.post("/v1/chat/completions", json=body)
        response.raise_for_status()
        message: dict[str, Any] = response.json()["choices"][0]["message"]
        return message
    folded: dict[str, Any] = {"role": "assistant", "content": None}
    calls: list[dict[str, Any]] = []
    with client.stream("POST", "/v1/chat/completions", json={**body, "stream": True}) as response:
        response.raise_for_status()
        for line in response.iter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            delta = json.loads(line[6:])["choices"][0]["delta"]
            if delta.get("content"):
                folded["content"] = (folded["content"] or "") + delta["content"]
            for part in delta.get("tool_calls") or []:
                if "id" in part:
                    calls.append({"id": part["id"], "type": "function", "function": {"name": "", "arguments": ""}})
                function = calls[part["index"]]["function"]
                function["name"] += part["function"].get("name") or ""
                function["arguments"] += part["function"].get("arguments") or ""
    if calls:
        folded["tool_calls"] = calls
    return folded


def converse(client: httpx.Client, *, stream: bool) -> list[dict[str, Any]]:
    """The get_time conversation: the tool call, its result sent back, the final answer."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": QUESTION}]
    first = chat(client, messages, stream=stream)
    [call] = first["tool_calls"]
    assert call["function"]["name"] == "getTime"
    assert json.loads(call["function"]["arguments"]) == {"offset_ms": -86400000}
    messages += [first, {"role": "tool", "tool_call_id": call["id"], "content": "1684713600000"}]
    final = chat(client, messages, stream=stream)
    assert final["content"] == ANSWER
    return [*messages, final]


@pytest.mark.parametrize("mode", ["non_stream", "stream"])
def test_a_users_httpx_client_holds_the_conversation(mode: Any) -> None:
    with router("basic/get_time", "openai_chat", mode=mode) as mock, httpx.Client(base_url=BASE) as client:
        converse(client, stream=mode == "stream")
        sent = [json.loads(call.request.content) for call in mock.calls]
        assert [call.request.url.path for call in mock.calls] == ["/v1/chat/completions"] * 2
    assert [len(body["messages"]) for body in sent] == [1, 3]
    assert sent[1]["messages"][2] == {
        "role": "tool",
        "tool_call_id": "call_HnSSMfO6h1wlNGv2RKymKnTz",
        "content": "1684713600000",
    }
    read = for_format("openai_chat").request_from_wire(sent[1], path="/v1/chat/completions")
    assert read.stream is (mode == "stream")
    assert [m.role for m in read.messages] == ["user", "assistant", "tool"]


def test_the_answers_are_the_recorded_status_headers_and_body() -> None:
    cassette = load_cassette(bundled.cassettes_dir() / "openai_chat" / "basic" / "get_time.yaml")
    recorded = cassette.interactions[0].response
    assert recorded is not None
    with router("basic/get_time", "openai_chat"), httpx.Client(base_url=BASE) as client:
        response = client.post("/v1/chat/completions", json={"messages": [{"role": "user", "content": "hi"}]})
    assert response.status_code == recorded.status
    assert response.content == recorded.body
    assert response.headers["x-request-id"] == recorded.headers["x-request-id"]
    assert response.headers["content-length"] == str(len(recorded.body))  # httpx's, not the recorded one


def test_a_retry_gets_the_same_answer_and_the_turn_is_read_from_the_request() -> None:
    body = {"messages": [{"role": "user", "content": "hi"}]}
    with router("basic/get_time", "openai_chat") as mock, httpx.Client(base_url=BASE) as client:
        first, again = (client.post("/v1/chat/completions", json=body).content for _ in range(2))
        assert len(mock.calls) == 2
    assert first == again


def test_a_base_url_with_a_path_prefix() -> None:
    base = "http://gateway.test/openai"
    with router("basic/get_time", "openai_chat", base_url=base) as mock, httpx.Client(base_url=base) as client:
        converse(client, stream=False)
        assert str(mock.calls.last.request.url) == f"{base}/v1/chat/completions"


def test_an_async_client_streams_the_recorded_chunks() -> None:
    cassette = load_cassette(bundled.cassettes_dir() / "openai_chat" / "basic" / "get_time.yaml")
    [recorded] = [i for i in cassette.interactions if is_streaming(i) and len(i.request.json["messages"]) == 1]
    assert recorded.response is not None

    async def main() -> list[bytes]:
        async with httpx.AsyncClient(base_url=BASE) as client:
            body = {"messages": [{"role": "user", "content": "hi"}], "stream": True}
            async with client.stream("POST", "/v1/chat/completions", json=body) as response:
                return [piece async for piece in response.aiter_raw()]

    with router("basic/get_time", "openai_chat", mode="stream"):
        pieces = asyncio.run(main())
    assert pieces == list(recorded.response.chunks or ())


# ---- every wire plays its recorded requests ----------------------------------------------------


def _recorded(wire: str, scenario: str) -> list[Interaction]:
    return list(load_cassette(bundled.cassettes_dir() / wire / f"{scenario}.yaml").interactions)


@pytest.mark.parametrize("wire", sorted(ENDPOINTS))
@pytest.mark.parametrize("mode", ["non_stream", "stream"])
def test_every_wire_answers_its_recorded_requests_turn_by_turn(wire: str, mode: Any) -> None:
    """The recorded requests of basic/get_time, sent as a client would, get the recorded answers:
    the same status and body, and a stream in the recorded pieces (``iter_raw``)."""
    stream = mode == "stream"
    mine = [i for i in _recorded(wire, "basic/get_time") if is_streaming(i) == stream and i.response is not None]
    assert len(mine) == 2
    with router("basic/get_time", wire, mode=mode) as mock, httpx.Client() as client:
        for interaction in mine:
            assert interaction.response is not None
            target = _provider_url(wire, httpx.URL(interaction.request.uri))
            with client.stream("POST", target, content=interaction.request.body) as response:
                pieces = list(response.iter_raw())
            assert response.status_code == interaction.response.status
            assert pieces == served_pieces(interaction.response, stream=stream)
        assert len(mock.calls) == 2


def _provider_url(wire: str, recorded: httpx.URL) -> httpx.URL:
    """The recorded request's path and query at the provider's real address (the router's default)."""
    from conformance.clients.intercept import PROVIDER_URLS

    return httpx.URL(PROVIDER_URLS[wire]).copy_with(raw_path=recorded.raw_path)


# ---- chunk boundaries: what respx and httpx keep -----------------------------------------------


def _edited_copy(tmp_path: Path, edit: Any) -> Path:
    """A cassette dir holding openai_chat basic/get_time with ``edit(interactions)`` applied (the
    bundled cassettes are JSON-shaped YAML); written as YAML, where a bytes chunk is ``!!binary``."""
    source = bundled.cassettes_dir() / "openai_chat" / "basic" / "get_time.yaml"
    data = json.loads(source.read_text(encoding="utf-8"))
    data["interactions"] = edit(data["interactions"])
    target = tmp_path / "openai_chat" / "basic" / "get_time.yaml"
    target.parent.mkdir(parents=True)
    target.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return tmp_path


def _streamed(interaction: dict[str, Any]) -> bool:
    return bool(interaction["request"]["parsed_body"].get("stream"))


def _turn(interaction: dict[str, Any]) -> int:
    return len(interaction["request"]["parsed_body"]["messages"]) // 2


def _cassette_with_chunks(tmp_path: Path, chunks: list[str] | list[bytes]) -> Path:
    """basic/get_time whose streamed first turn has ``chunks`` (bytes can cut a character in two)."""

    def edit(interactions: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for interaction in interactions:
            if _streamed(interaction) and _turn(interaction) == 0:
                interaction["response"]["body"] = {"chunks": chunks}
        return interactions

    return _edited_copy(tmp_path, edit)


def _first_turn(cassette_dir: Path | None, how: str) -> list[Any]:
    body = {"messages": [{"role": "user", "content": "hi"}], "stream": True}
    with (
        router("basic/get_time", "openai_chat", mode="stream", cassette_dir=cassette_dir),
        httpx.Client(base_url=BASE) as client,
        client.stream("POST", "/v1/chat/completions", json=body) as response,
    ):
        return list(getattr(response, how)())


@pytest.mark.parametrize("how", ["iter_raw", "iter_bytes"])
def test_iter_raw_and_iter_bytes_see_the_recorded_chunk_boundaries(tmp_path: Path, how: str) -> None:
    """Cut anywhere, even inside an SSE line, the pieces arrive as recorded."""
    events = "data: {}\n\n" * 3
    chunks = [events[:3], events[3:14], events[14:15], events[15:], "data: [DONE]\n\n"]
    assert _first_turn(_cassette_with_chunks(tmp_path, chunks), how) == [c.encode() for c in chunks]


def test_an_empty_recorded_chunk_never_arrives(tmp_path: Path) -> None:
    """httpx's ByteChunker yields nothing for b"" (the one boundary respx cannot keep)."""
    chunks = ["data: {}\n\n", "", "data: [DONE]\n\n"]
    got = _first_turn(_cassette_with_chunks(tmp_path, chunks), "iter_raw")
    assert got == [b"data: {}\n\n", b"data: [DONE]\n\n"]


def test_iter_text_moves_a_boundary_cut_inside_a_utf8_character(tmp_path: Path) -> None:
    """A chunk ending inside a character (possible in a cassette with ``!!binary`` chunks; our
    recorder stores such a stream whole): iter_raw sees the cut, iter_text hands the character's
    first bytes on with the next piece (httpx's incremental decoder)."""
    raw = 'data: {"content": "昨天"}\n\n'.encode()
    cut = raw.index("天".encode()) + 1
    chunks = [raw[:cut], raw[cut:]]
    folder = _cassette_with_chunks(tmp_path, chunks)
    assert _first_turn(folder, "iter_raw") == chunks
    assert _first_turn(folder, "iter_text") == [raw[: cut - 1].decode(), raw[cut - 1 :].decode()]


# ---- a stream that broke when recorded breaks again --------------------------------------------


def test_a_stream_that_broke_when_recorded_breaks_again() -> None:
    [broken] = [
        i for i in _recorded("openai_chat", "errors/stream_disconnect") if i.response and i.response.interrupted
    ]
    assert broken.response is not None
    got: list[bytes] = []
    with (
        router("errors/stream_disconnect", "openai_chat", mode="stream"),
        httpx.Client() as client,
        client.stream("POST", f"{BASE}/v1/chat/completions", content=broken.request.body) as response,
        pytest.raises(httpx.RemoteProtocolError, match="replayed interruption"),
    ):
        got.extend(response.iter_raw())
    assert got == list(broken.response.chunks or ())


# ---- errors: each names the scenario, the turn and what to do ----------------------------------

FIRST = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


def _send(body: dict[str, Any], *, mode: Any = "non_stream", path: str = "/v1/chat/completions", **options: Any) -> Any:
    """Send one request to a fresh router; returns (the error raised in the client's call, the calls)."""
    with router("basic/get_time", "openai_chat", mode=mode, **options) as mock, httpx.Client(base_url=BASE) as client:
        with pytest.raises(Exception) as raised:
            client.post(path, json=body)
        calls = list(mock.calls)
    return raised.value, calls


def test_a_request_past_the_recorded_turns() -> None:
    history = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "one"},
        {"role": "user", "content": "again"},
        {"role": "assistant", "content": "two"},
        {"role": "user", "content": "and again"},
    ]
    error, calls = _send({"model": "m", "messages": history})
    assert isinstance(error, UsageError)
    message = str(error)
    assert "scenario basic/get_time (openai_chat, mode=non_stream)" in message
    assert "turn 2" in message and "turns 0-1" in message and "stop the client after the last answer" in message
    assert len(calls) == 1 and not calls[0].has_response  # what it sent is kept


def test_an_extra_request_after_the_conversation_with_a_real_client() -> None:
    with router("basic/get_time", "openai_chat") as mock, httpx.Client(base_url=BASE) as client:
        messages = converse(client, stream=False)
        with pytest.raises(UsageError, match=r"turn 2 \(2 assistant messages"):
            chat(client, [*messages, {"role": "user", "content": "thanks"}])
        assert len(mock.calls) == 3


def test_another_path() -> None:
    error, _ = _send(FIRST, path="/v1/embeddings")
    assert isinstance(error, UsageError)
    assert "answers POST https://api.openai.com/v1/chat/completions" in str(error)
    assert "the client sent POST https://api.openai.com/v1/embeddings" in str(error)
    assert "scenario basic/get_time" in str(error)


def test_another_method() -> None:
    with router("basic/get_time", "openai_chat") as mock, httpx.Client(base_url=BASE) as client:
        with pytest.raises(UsageError, match="the client sent GET"):
            client.get("/v1/chat/completions")
        assert mock.calls.called


@pytest.mark.parametrize(
    ("mode", "stream", "words"),
    [
        (
            "non_stream",
            True,
            "a stream on turn 0, and this router plays the non-streamed answers: build it with mode='stream'",
        ),
        (
            "stream",
            False,
            "a whole body on turn 0, and this router plays the streamed answers: build it with mode='non_stream'",
        ),
    ],
)
def test_a_stream_non_stream_mismatch(mode: Any, stream: bool, words: str) -> None:
    error, _ = _send({**FIRST, "stream": stream}, mode=mode)
    assert isinstance(error, UsageError)
    assert words in str(error)


@pytest.mark.parametrize("content", [b"not json", b'{"messages": "hi"}'])
def test_a_body_that_is_not_the_wires_request(content: bytes) -> None:
    with router("basic/get_time", "openai_chat") as mock, httpx.Client(base_url=BASE) as client:
        with pytest.raises(WireFormatError) as raised:
            client.post("/v1/chat/completions", content=content)
        assert mock.calls.last.request.content == content
    assert "cannot read the client's request to /v1/chat/completions as openai_chat" in str(raised.value)
    assert "scenario basic/get_time" in str(raised.value)


def test_a_turn_the_cassette_lacks_names_the_record_command(tmp_path: Path) -> None:
    folder = _edited_copy(tmp_path, lambda found: [i for i in found if _streamed(i) or _turn(i) == 0])
    history = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "x"},
        {"role": "user", "content": "y"},
    ]
    error, _ = _send({"model": "m", "messages": history}, cassette_dir=folder)
    assert isinstance(error, ReplayMissError)
    assert "(non-streamed, turn 1) of scenario basic/get_time" in str(error)
    assert "holds non-streamed openai_chat turns [0]" in str(error)
    assert "conformance record --emulator --adapter openai_chat --scenario basic/get_time" in str(error)


def test_a_cassette_without_answers_in_the_mode_fails_when_the_router_is_built(tmp_path: Path) -> None:
    folder = _edited_copy(tmp_path, lambda found: [i for i in found if not _streamed(i)])
    with pytest.raises(ReplayMissError, match=r"any streamed request of scenario basic/get_time .*turns none"):
        router("basic/get_time", "openai_chat", mode="stream", cassette_dir=folder)


def test_more_than_max_requests() -> None:
    with router("basic/get_time", "openai_chat", max_requests=3) as mock, httpx.Client(base_url=BASE) as client:
        for _ in range(3):
            client.post("/v1/chat/completions", json=FIRST)
        with pytest.raises(UsageError, match=r"more than 3 requests \(max_requests\); a retry loop\?"):
            client.post("/v1/chat/completions", json=FIRST)
        assert len(mock.calls) == 4


def test_another_host_is_respx_not_mocked_and_no_network() -> None:
    with router("basic/get_time", "openai_chat") as mock, httpx.Client() as client:
        with pytest.raises(respx.models.AllMockedAssertionError, match="not mocked"):
            client.post("https://api.anthropic.com/v1/messages", json=FIRST)
        client.post(f"{BASE}/v1/chat/completions", json=FIRST)
        assert len(mock.calls) == 1


def test_a_missing_cassette_names_the_nearest_scenarios_and_the_record_command() -> None:
    with pytest.raises(CassetteNotFoundError) as raised:
        router("basic/get_tme", "openai_chat")
    assert "nearest: basic/get_time" in str(raised.value)
    assert "record it with `conformance record --emulator --adapter openai_chat --scenario basic/get_tme`" in str(
        raised.value
    )


def test_an_unknown_wire_or_mode_lists_the_valid_ones() -> None:
    with pytest.raises(UsageError, match="choose one of openai_chat, openai_responses, anthropic, gemini, ollama"):
        router("basic/get_time", "hermes")
    with pytest.raises(UsageError, match="choose 'non_stream' or 'stream'"):
        router("basic/get_time", "openai_chat", mode="streamed")  # type: ignore[arg-type]


def test_without_respx_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "respx", None)
    with pytest.raises(UsageError, match=re.escape("pip install 'conformance[respx]'")):
        router("basic/get_time", "openai_chat")


# ---- docs/pytest.md ----------------------------------------------------------------------------


def test_the_docs_example_runs_as_written() -> None:
    doc = (REPO / "docs" / "pytest.md").read_text(encoding="utf-8")
    start = doc.index("## Your own httpx client, with respx")
    section = doc[start : doc.index("\n## ", start)]
    [code] = re.findall(r"```python\n(.*?)```", section, re.S)
    namespace: dict[str, Any] = {"__name__": "docs_pytest_respx"}
    exec(compile(code, "docs/pytest.md", "exec"), namespace)
    tests = [value for name, value in namespace.items() if name.startswith("test_") and callable(value)]
    assert len(tests) == 1
    for test in tests:
        test()
