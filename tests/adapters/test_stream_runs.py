"""Tests for ``conformance.framing.runs``: the fast reading of argument-fragment events.

The fast path must give exactly the events of the general path on the same bytes, whatever the
bytes: both are run here on the real recordings in ``tests/realworld``, on the bundled cassettes,
on long generated streams shaped as the wires document them (wire-formats.md §1d
``chat.completion.chunk`` SSE, §3d Anthropic ``content_block_delta`` / ``input_json_delta``;
Anthropic pads its data JSON with spaces, the real cassettes show it), and on
hypothesis-generated streams with escapes, unicode, padding, interleaved indexes, reused indexes,
invalid UTF-8, CRLF and malformed JSON, cut at random places. The general path is what the rest of
the adapter tests hold to wire facts.

The path is chosen with the adapters' ``runs`` parameter: ``None`` (the general path), ``FAST`` (the
default policy, which leaves streams under 16 KiB and streams with a nonce to the general path) and
``EAGER`` (no warm-up: the fast path on short streams too, so that the generated streams exercise it).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.adapters import anthropic, detect_adapter, openai_chat
from conformance.framing import SSEDecoder
from conformance.framing import runs as framing_runs
from conformance.framing.runs import FAST, RunPolicy, RunReader
from conformance.model import StreamEvent, ToolCallChunk, ToolCallStart
from conformance.traffic.cassettes import is_streaming, load_cassette

REPO = Path(__file__).resolve().parents[2]
REALWORLD = REPO / "tests" / "realworld" / "cassettes"
BUNDLED = REPO / "cassettes"
StreamFn = Callable[..., Iterator[StreamEvent]]
ADAPTERS: dict[str, StreamFn] = {"openai_chat": openai_chat.stream_from_wire, "anthropic": anthropic.stream_from_wire}


EAGER = RunPolicy(warmup=0, tries=8)
"""Learns from the first fragment on: the fast path on short streams too (the tests want it taken)."""


def events(stream_from_wire: StreamFn, chunks: Iterable[bytes], runs: RunPolicy | None) -> list[StreamEvent]:
    return list(stream_from_wire(chunks, runs=runs))


def cut(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)] or [b""]


def split_at(data: bytes, cuts: Iterable[int]) -> list[bytes]:
    points = sorted({min(max(c, 0), len(data)) for c in cuts})
    bounds = [0, *points, len(data)]
    return [data[a:b] for a, b in itertools.pairwise(bounds)]


def assert_same(
    stream_from_wire: StreamFn, data: bytes, chunkings: Iterable[list[bytes]], policies: Iterable[RunPolicy] = (FAST,)
) -> None:
    general = events(stream_from_wire, [data], None)
    for chunks in chunkings:
        for policy in policies:
            assert events(stream_from_wire, chunks, policy) == general, (policy, [len(c) for c in chunks][:10])


def recorded_streams(root: Path) -> list[tuple[str, str, bytes]]:
    """(adapter, file, body) of every streamed response of our two wires under ``root``."""
    out = []
    for path in sorted(root.rglob("*.yaml")):
        for interaction in load_cassette(path).interactions:
            response = interaction.response
            if response is None or not is_streaming(interaction) or not response.body:
                continue
            name = detect_adapter(interaction.request.uri, interaction.request.json)
            if name in ADAPTERS:
                out.append((name, path.name, response.body))
    return out


# --------------------------------------------------------------------------------------------
# Recorded traffic
# --------------------------------------------------------------------------------------------


@pytest.mark.realworld
def test_fast_and_general_paths_agree_on_real_traffic() -> None:
    streams = recorded_streams(REALWORLD)
    assert {name for name, _, _ in streams} == {"openai_chat", "anthropic"}
    for name, _, body in streams:
        assert_same(ADAPTERS[name], body, [[body], cut(body, 1), cut(body, 7), cut(body, 64)], (FAST, EAGER))


def test_fast_and_general_paths_agree_on_the_bundled_cassettes() -> None:
    streams = recorded_streams(BUNDLED)
    assert len(streams) > 20
    for name, _, body in streams:
        assert_same(ADAPTERS[name], body, [[body], cut(body, 5), cut(body, 100)], (FAST, EAGER))


# --------------------------------------------------------------------------------------------
# Long streams as the wires send them: the fast path must be taken, and agree
# --------------------------------------------------------------------------------------------

_FRAGMENTS = ['{"', "city", '":"', "Paris", '","', "note", '":"', 'a \\"b\\" \\\\ c\\n', "中文", "😀", '"}', "", " "]


def openai_stream(
    calls: int,
    n: int,
    *,
    interleave: bool = True,
    head: dict[str, Any] | None = None,
    order: list[tuple[int, int]] | None = None,
) -> bytes:
    """A ``chat.completion.chunk`` stream (§1d) of ``calls`` parallel calls, ``n`` fragments each:
    round robin (``interleave``), one call after another, or ``order`` ((fragment, call) pairs)."""
    env = head or {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m"}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        body = {**env, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}
        return b"data: " + json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode() + b"\n\n"

    parts = [chunk({"role": "assistant", "content": None})]
    if order is None:
        order = (
            [(j, i) for j in range(n) for i in range(calls)]
            if interleave
            else [(j, i) for i in range(calls) for j in range(n)]
        )
    for j, i in order:
        if j == 0:
            start = {"index": i, "id": f"call_{i}", "type": "function", "function": {"name": "f", "arguments": ""}}
            parts.append(chunk({"tool_calls": [start]}))
        fragment = _FRAGMENTS[(i + j) % len(_FRAGMENTS)]
        parts.append(chunk({"tool_calls": [{"index": i, "function": {"arguments": fragment}}]}))
    parts += [chunk({}, "tool_calls"), b"data: [DONE]\n\n"]
    return b"".join(parts)


def anthropic_stream(calls: int, n: int, *, pad: Callable[[int], str] = lambda k: "") -> bytes:
    """A Messages stream (§3d); ``pad(k)`` spaces go before the closing brace of event ``k``."""
    parts: list[str] = []
    k = 0

    def event(name: str, data: dict[str, Any]) -> None:
        nonlocal k
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        parts.append(f"event: {name}\ndata: {text[:-1]}{pad(k)}}}\n\n")
        k += 1

    event("message_start", {"type": "message_start", "message": {"id": "msg_1", "usage": {"input_tokens": 3}}})
    for i in range(calls):
        block = {"type": "tool_use", "id": f"toolu_{i}", "name": "f", "input": {}}
        event("content_block_start", {"type": "content_block_start", "index": i, "content_block": block})
        event("ping", {"type": "ping"})
        for j in range(n):
            delta = {"type": "input_json_delta", "partial_json": _FRAGMENTS[(i + j) % len(_FRAGMENTS)]}
            event("content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta})
        event("content_block_stop", {"type": "content_block_stop", "index": i})
    event(
        "message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}}
    )
    event("message_stop", {"type": "message_stop"})
    return "".join(parts).encode()


def count_fast_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Pieces read fast by ``RunReader._read`` (counted as the run goes)."""
    pieces: list[int] = []
    real = RunReader._read

    def read(self: RunReader, split: framing_runs.Split, run: list[bytes], start: int, *args: Any) -> int:
        end = real(self, split, run, start, *args)
        pieces.append(end - start)
        return end

    monkeypatch.setattr(RunReader, "_read", read)
    return pieces


def count_learns(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """Payloads whose shape a reader tried to find (the costly part of learning)."""
    payloads: list[bytes] = []
    real = framing_runs._split

    def split(payload: bytes, *args: Any) -> tuple[bytes, bytes, bytes, bytes] | None:
        payloads.append(payload)
        return real(payload, *args)

    monkeypatch.setattr(framing_runs, "_split", split)
    return payloads


@pytest.mark.parametrize("interleave", [True, False])
@pytest.mark.parametrize("calls", [1, 4])
def test_openai_fragments_take_the_fast_path(calls: int, interleave: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    data = openai_stream(calls, 300, interleave=interleave)
    pieces = count_fast_reads(monkeypatch)
    assert_same(openai_chat.stream_from_wire, data, [[data], cut(data, 16384), cut(data, 997)])
    assert sum(pieces) > 0.85 * 3 * calls * 300  # most fragments read fast (past 16 KiB read in 997-byte reads)


@pytest.mark.parametrize("padded", [False, True])
@pytest.mark.parametrize("calls", [1, 4])
def test_anthropic_fragments_take_the_fast_path(calls: int, padded: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    pad: Callable[[int], str] = (lambda k: " " * (k % 5)) if padded else (lambda k: "")
    data = anthropic_stream(calls, 300, pad=pad)
    pieces = count_fast_reads(monkeypatch)
    assert_same(anthropic.stream_from_wire, data, [[data], cut(data, 16384), cut(data, 997)])
    assert sum(pieces) > 0.75 * 3 * calls * 300  # past the warm-up, the event cut by each read goes the general way


def _late_joiners(n: int) -> list[tuple[int, int]]:
    """Calls 0 and 1 interleaved for half the fragments, then calls 2 and 3 join the round robin."""
    first = [(j, i) for j in range(n // 2) for i in (0, 1)]
    return first + [(j if i < 2 else j - n // 2, i) for j in range(n // 2, n) for i in range(4)]


@pytest.mark.parametrize("shape", ["one after another", "late joiners"])
def test_a_new_call_does_not_send_the_rest_of_the_run_the_general_way(
    shape: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # OpenAI streams parallel calls one after another. A new call's index is learned from its first
    # fragment; the rest of the run it arrived in must take the fast path with what was learned
    # (it once went the general way fragment by fragment, retrying the whole run each time).
    n = 400
    order = _late_joiners(n) if shape == "late joiners" else None
    data = openai_stream(4, n, interleave=False, order=order)
    fed: list[bytes] = []
    general = openai_chat._Stream.run_general

    def run_general(self: Any, event: str, payload: bytes) -> list[StreamEvent]:
        fed.append(payload)
        return general(self, event, payload)

    monkeypatch.setattr(openai_chat._Stream, "run_general", run_general)
    assert_same(openai_chat.stream_from_wire, data, [[data]])
    fed.clear()
    events(openai_chat.stream_from_wire, [data], FAST)
    assert len(fed) <= 4 * 2, len(fed)  # at most the first fragments of each call


def test_openai_stream_with_a_nonce_in_every_event_stays_general(monkeypatch: pytest.MonkeyPatch) -> None:
    # OpenAI's "obfuscation" field (the real cassettes have it) differs in every event: no shape to
    # learn past a few tries, and the general path reads it all the same.
    chunks = openai_stream(1, 200).split(b"\n\n")
    data = b"\n\n".join(
        c[:-1] + b',"obfuscation":"' + str(i).encode() * 3 + b'"}' if c.endswith(b"}") else c
        for i, c in enumerate(chunks)
    )
    pieces = count_fast_reads(monkeypatch)
    learns = count_learns(monkeypatch)
    assert_same(openai_chat.stream_from_wire, data, [[data], cut(data, 333)])
    assert sum(pieces) < 50
    assert len(learns) <= 2 * (FAST.tries + 1)  # two chunkings: a few tries each, then the general path


def test_short_streams_never_learn(monkeypatch: pytest.MonkeyPatch) -> None:
    learns = count_learns(monkeypatch)
    for data, fn in (
        (openai_stream(2, 10), openai_chat.stream_from_wire),
        (anthropic_stream(2, 10), anthropic.stream_from_wire),
    ):
        assert_same(fn, data, [[data], cut(data, 100)])
    assert learns == []


# --------------------------------------------------------------------------------------------
# Generated streams: anything, cut anywhere
# --------------------------------------------------------------------------------------------

_TEXTS = st.text(
    st.characters(codec="utf-8") | st.sampled_from(['"', "\\", "\n", "\x00", "\u2028", "😀", "é"]), max_size=6
)
_RAW = st.sampled_from(
    [b"\xff", b"\xe4\xb8", b"\\ud83d", b"\r\n", b"\r", b"\n", b"}", b'"', b"\\", b" ", b"data: ", b""]
)


def _damage(draw: st.DrawFn, line: bytes) -> bytes:
    if draw(st.integers(0, 14)):
        return line
    at = draw(st.integers(0, len(line)))  # invalid UTF-8, a broken escape, a line break, a cut ...
    return line[:at] + draw(_RAW) + line[at:]


@st.composite
def openai_streams(draw: st.DrawFn) -> bytes:
    """Calls opened as the wire opens them (id and name first), then fragments of random calls."""
    calls = draw(st.integers(1, 3))
    head = {"id": "chatcmpl-x", "object": "chat.completion.chunk", "model": "m"}
    separators = draw(st.sampled_from([(",", ":"), (", ", ": ")]))

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
        body = {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}
        line = json.dumps(body, ensure_ascii=draw(st.booleans()), separators=separators).encode()
        return b"data: " + _damage(draw, line) + draw(st.sampled_from([b"\n\n", b"\n\n", b"\n\n", b"\r\n\r\n"]))

    parts = []
    for i in range(calls):
        start = {"index": i, "id": f"call_{i}", "type": "function", "function": {"name": "f", "arguments": ""}}
        parts.append(chunk({"tool_calls": [start]}))
    for _ in range(draw(st.integers(0, 8))):  # runs of fragments of one call (or round robin)
        indexes = draw(st.lists(st.integers(0, calls), min_size=1, max_size=3))
        for n in range(draw(st.integers(1, 12))):
            fragment: dict[str, Any] = {"index": indexes[n % len(indexes)], "function": {"arguments": draw(_TEXTS)}}
            if draw(st.integers(0, 14)) == 0:
                fragment["id"] = draw(st.sampled_from([None, "", "call_0", "call_9"]))  # E4 repeats, a reused index
            if draw(st.integers(0, 19)) == 0:
                fragment["function"]["arguments"] = draw(st.sampled_from([None, 7, {"a": 1}]))
            odd = draw(st.integers(0, 19)) == 0
            extra = {"x": draw(st.sampled_from(["pad", None, 123456789012345678901234567890]))} if odd else {}
            parts.append(chunk({"tool_calls": [fragment]}, **extra))
    parts.append(chunk({}, "tool_calls") + b"data: [DONE]\n\n")
    return b"".join(parts)


@st.composite
def anthropic_streams(draw: st.DrawFn) -> bytes:
    """Tool-use blocks started as the wire starts them, fragments for random blocks, padded data."""
    calls = draw(st.integers(1, 3))

    def event(name: bytes, data: dict[str, Any]) -> bytes:
        line = json.dumps(data, ensure_ascii=draw(st.booleans()), separators=(",", ":"))
        raw = (line[:-1] + " " * draw(st.sampled_from([0, 0, 1, 3])) + "}").encode()
        return (
            b"event: "
            + name
            + b"\ndata: "
            + _damage(draw, raw)
            + draw(st.sampled_from([b"\n\n", b"\n\n", b"\r\n\r\n"]))
        )

    parts = [event(b"message_start", {"type": "message_start", "message": {"id": "msg_1"}})]
    for i in range(calls):
        block = {
            "type": "tool_use",
            "id": f"toolu_{i}",
            "name": "f",
            "input": draw(st.sampled_from([{}, {}, {"a": 1}])),
        }
        parts.append(event(b"content_block_start", {"type": "content_block_start", "index": i, "content_block": block}))
    for _ in range(draw(st.integers(0, 8))):  # runs of fragments of one block
        index = draw(st.integers(0, calls))
        name = draw(st.sampled_from([b"content_block_delta", b"content_block_delta", b"other"]))
        for _ in range(draw(st.integers(1, 12))):
            delta: dict[str, Any] = {"type": "input_json_delta", "partial_json": draw(_TEXTS)}
            if draw(st.integers(0, 19)) == 0:
                delta = draw(st.sampled_from([{"type": "text_delta", "text": "x"}, {"type": "input_json_delta"}]))
            if draw(st.integers(0, 29)) == 0:
                parts.append(event(b"content_block_stop", {"type": "content_block_stop", "index": index}))
            kind = draw(st.sampled_from(["content_block_delta"] * 5 + ["ping"]))
            parts.append(event(name, {"type": kind, "index": index, "delta": delta}))
    for i in range(calls):
        parts.append(event(b"content_block_stop", {"type": "content_block_stop", "index": i}))
    parts.append(event(b"message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use"}}))
    parts.append(event(b"message_stop", {"type": "message_stop"}))
    return b"".join(parts)


@settings(max_examples=150, deadline=None)
@given(openai_streams(), st.lists(st.integers(0, 4000), max_size=8))
def test_fast_and_general_paths_agree_on_generated_openai_streams(data: bytes, cuts: list[int]) -> None:
    assert_same(openai_chat.stream_from_wire, data, [[data], split_at(data, cuts), cut(data, 61)], (EAGER,))


@settings(max_examples=150, deadline=None)
@given(anthropic_streams(), st.lists(st.integers(0, 4000), max_size=8))
def test_fast_and_general_paths_agree_on_generated_anthropic_streams(data: bytes, cuts: list[int]) -> None:
    assert_same(anthropic.stream_from_wire, data, [[data], split_at(data, cuts), cut(data, 61)], (EAGER,))


# --------------------------------------------------------------------------------------------
# RunReader: what it accepts as a shape
# --------------------------------------------------------------------------------------------

_OPENAI_PATHS = (
    ("choices", 0, "delta", "tool_calls", 0, "index"),
    ("choices", 0, "delta", "tool_calls", 0, "function", "arguments"),
)


def reader(policy: RunPolicy = EAGER) -> RunReader:
    return RunReader(policy, *_OPENAI_PATHS, (b'"index":', b'"arguments":'), per_index=False)


def payload(fragment: str, index: int = 0, **extra: Any) -> bytes:
    call = {"index": index, "function": {"arguments": fragment}}
    body = {"id": "c", "choices": [{"index": 0, "delta": {"tool_calls": [call]}}], **extra}
    return json.dumps(body, separators=(",", ":")).encode()


def learned(rdr: RunReader, data: bytes) -> framing_runs.Split | None:
    """The template ``rdr`` holds after learning from ``data``, when that changed it (a reader's
    first look at a stream only notes the fields around the call: it is shown ``data`` twice)."""
    before = rdr.template
    if rdr.frame is None:
        rdr.learn("", data, json.loads(data))
    rdr.learn("", data, json.loads(data))
    return rdr.template if rdr.template is not before else None


def test_reader_splits_a_payload_around_index_and_string() -> None:
    split = learned(reader(), payload('a"b', 3))
    assert split is not None
    assert (
        split.prefix
        == b'data: {"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":3,"function":{"arguments":'
    )
    assert split.suffix == b"}}]}}]}" and split.wire == 3
    assert split.payload(b'"x"') == payload("x", 3)


def test_reader_refuses_what_it_cannot_split_safely() -> None:
    after = json.dumps(
        {"id": "c", "choices": [{"delta": {"tool_calls": [{"function": {"arguments": "x"}, "index": 0}]}}]}
    )
    for data in (
        payload("x").replace(b"}}]", b"}}\n]"),  # two lines
        after.replace(" ", "").encode(),  # the index after the string: no HEAD | digits | MID | string split
    ):
        assert learned(reader(), data) is None, data
    parsed = json.loads(payload("x"))
    parsed["choices"][0]["delta"]["tool_calls"][0]["index"] = True  # not an int
    rdr = reader()
    rdr.learn("", payload("x"), parsed)
    rdr.learn("", payload("x"), parsed)
    assert rdr.template is None


def test_reader_splits_spaced_json() -> None:
    data = json.dumps(json.loads(payload("x", 2))).encode()  # separators ", " and ": "
    split = learned(reader(), data)
    assert split is not None and split.payload(b'"y"') == json.dumps(json.loads(payload("y", 2))).encode()


def test_reader_gives_a_new_split_only_for_something_new() -> None:
    rdr = reader()
    assert learned(rdr, payload("a", 0)) is not None
    assert learned(rdr, payload("b", 0)) is None  # same shape
    second = learned(rdr, payload("c", 1))  # the next call, after the first
    assert second is not None and second.wire == 1  # calls one after another: one template per call
    assert learned(rdr, payload("d", 1)) is None
    both = learned(rdr, payload("e", 0))  # the first call again: interleaved
    assert both is not None and both.wire is None and both.indexes == {b"0": 0, b"1": 1}
    assert learned(rdr, payload("f", 1)) is None  # pieces carry their index


class _Starter:
    """A ``framing.RunStart`` that counts the readers it made."""

    def __init__(self) -> None:
        self.made: list[RunReader] = []

    def start_runs(self) -> RunReader:
        self.made.append(reader(RunPolicy(warmup=100)))
        return self.made[-1]


def test_the_decoder_makes_the_reader_once_past_the_warmup() -> None:
    starter = _Starter()
    decoder = SSEDecoder(start=starter, after=100)
    assert list(decoder.decode_raw(b"data: 1\n\n" * 6)) and not starter.made  # 60 bytes: no reader yet
    assert list(decoder.decode_raw(b"data: 2\n\n" * 6)) and len(starter.made) == 1  # 120: made, and only once
    assert list(decoder.decode_raw(b"data: 3\n\n" * 60)) and len(starter.made) == 1


@pytest.mark.parametrize("stream_from_wire", ADAPTERS.values(), ids=ADAPTERS)
def test_a_stream_shorter_than_the_warmup_makes_no_reader(
    stream_from_wire: StreamFn, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[RunReader] = []
    real = RunReader.__init__

    def init(self: RunReader, *args: Any, **kwargs: Any) -> None:
        made.append(self)
        real(self, *args, **kwargs)

    monkeypatch.setattr(RunReader, "__init__", init)
    data = (anthropic_stream if stream_from_wire is anthropic.stream_from_wire else openai_stream)(1, 20)
    assert len(data) < FAST.warmup
    events(stream_from_wire, [data], FAST)
    assert not made
    events(stream_from_wire, [data], RunPolicy(warmup=len(data) // 2))
    assert len(made) == 1


def test_reader_gives_up_on_a_nonce() -> None:
    rdr = reader(RunPolicy(tries=2))
    assert rdr.arrived(60) and rdr.learning
    for n in range(4):  # a new nonce each time (the first look only notes it), nothing read in between
        rdr.learn("", payload("x", obfuscation=str(n) * 4), json.loads(payload("x", obfuscation=str(n) * 4)))
    assert rdr.off and rdr.template is None and not rdr.learning and not rdr.arrived(10)


def test_fast_chunks_equal_constructed_ones() -> None:
    data = anthropic_stream(1, 20)
    fast = events(anthropic.stream_from_wire, [data], EAGER)
    chunks = [e for e in fast if isinstance(e, ToolCallChunk)]
    assert chunks and all(type(e) is ToolCallChunk for e in chunks)
    assert [ToolCallChunk(e.tool_call_id, e.tool_call_arguments_chunk) for e in chunks] == chunks
    assert {hash(e) for e in chunks} == {
        hash(ToolCallChunk(e.tool_call_id, e.tool_call_arguments_chunk)) for e in chunks
    }
    with pytest.raises(AttributeError):
        chunks[0].tool_call_id = "x"  # type: ignore[misc]  # still frozen


def test_calls_held_for_their_name_start_in_the_order_they_came_on_both_paths() -> None:
    """Found by the generated streams: a new id at an index in use holds a new call until its name
    comes; a later fragment of it read by the general path must not move it behind a call held after it
    (the run reader's fragments never do)."""

    def line(call: dict[str, Any]) -> bytes:
        delta = {"tool_calls": [call]}
        chunk = {"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta}]}
        return b"data: " + json.dumps(chunk).encode() + b"\n\n"

    def fragment(index: int, text: str = "", **extra: Any) -> bytes:
        return line({"index": index, "function": {"arguments": text}, **extra})

    first = [line({"index": i, "id": f"call_{i}", "function": {"name": "f", "arguments": ""}}) for i in (0, 1)]
    learned = [fragment(0, "0"), fragment(0, "0", id=None), fragment(1, "0"), fragment(0, "x>")]
    held = [fragment(0, id="call_9"), fragment(3, id=None), fragment(0), fragment(1)]
    end = b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}\n\ndata: [DONE]\n\n'
    data = b"".join([*first, *learned, *held, end])
    assert_same(openai_chat.stream_from_wire, data, [[data]], (EAGER,))
    starts = [e for e in events(openai_chat.stream_from_wire, [data], None) if isinstance(e, ToolCallStart)]
    assert [s.tool_call_id for s in starts][2] == "call_9"  # held first, started first
