"""Tests for ``conformance.framing``.

SSE expectations come from the WHATWG event-stream interpretation rules
(https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation),
transliterated below into a small whole-input reference parser that the incremental decoder must
agree with; provider framings come from wire-formats.md §9/§10 and from the real cassettes in
``tests/realworld``.
"""

from __future__ import annotations

import gzip
import itertools
import json
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, NamedTuple, Protocol, TypeVar

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance import framing
from conformance.framing import JSONArrayDecoder, NDJSONDecoder, Run, SSEDecoder, SSEEvent, line_pieces

REPO_ROOT = Path(__file__).resolve().parents[1]
REALWORLD = REPO_ROOT / "tests" / "realworld"
CASSETTES = REALWORLD / "cassettes"

T = TypeVar("T")
FAST = settings(max_examples=60, deadline=None)


class _Decoder(Protocol[T]):
    def decode(self, chunk: bytes) -> list[T]: ...
    def flush(self) -> list[T]: ...


def run(decoder: _Decoder[T], chunks: Iterable[bytes]) -> list[T]:
    out: list[T] = []
    for chunk in chunks:
        out.extend(decoder.decode(chunk))
    out.extend(decoder.flush())
    return out


def sse(data: bytes, chunks: Iterable[bytes] | None = None) -> list[SSEEvent]:
    return run(SSEDecoder(), [data] if chunks is None else chunks)


def split_at(data: bytes, cuts: Iterable[int]) -> list[bytes]:
    points = sorted({min(max(c, 0), len(data)) for c in cuts})
    bounds = [0, *points, len(data)]
    return [data[a:b] for a, b in itertools.pairwise(bounds)]


def every_two_way_split(data: bytes) -> Iterable[list[bytes]]:
    for i in range(len(data) + 1):
        yield [data[:i], data[i:]]


def response_bodies(path: Path) -> list[bytes]:
    """The response bodies of a vcrpy cassette as wire bytes (gzip ``!!binary`` bodies gunzipped)."""
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    bodies: list[bytes] = []
    for interaction in doc["interactions"]:
        body = interaction["response"]["body"]["string"]
        raw = body.encode("utf-8") if isinstance(body, str) else bytes(body)
        bodies.append(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
    return bodies


# --------------------------------------------------------------------------------------------
# A whole-input reference parser, written from the WHATWG steps (not from the decoder)
# --------------------------------------------------------------------------------------------


def reference_sse(stream: bytes) -> list[SSEEvent]:
    """WHATWG event-stream interpretation over a whole input, plus the decoder's documented
    leniencies: a final unterminated event is dispatched, and ``retry`` rides on the event that
    carried it (reset at every blank line)."""
    text = stream.decode("utf-8", errors="replace")  # "UTF-8 decode" strips one leading BOM
    if text.startswith("\ufeff"):
        text = text[1:]
    events: list[SSEEvent] = []
    data_buffer = ""
    event_type = ""
    last_id: str | None = None
    retry: int | None = None
    for line in [*re.split(r"\r\n|\r|\n", text), ""]:
        if line == "":
            if data_buffer == "":
                event_type = ""
                retry = None
                continue
            if data_buffer.endswith("\n"):
                data_buffer = data_buffer[:-1]
            events.append(SSEEvent(event_type, data_buffer, last_id, retry))
            data_buffer = ""
            event_type = ""
            retry = None
            continue
        if line.startswith(":"):
            continue
        if ":" in line:
            name, value = line.split(":", 1)
            if value.startswith(" "):
                value = value[1:]
        else:
            name, value = line, ""
        if name == "event":
            event_type = value
        elif name == "data":
            data_buffer += value + "\n"
        elif name == "id":
            if "\0" not in value:
                last_id = value
        elif name == "retry" and value and all(c in "0123456789" for c in value):
            retry = int(value)
    return events


# --------------------------------------------------------------------------------------------
# SSE: the spec rules one by one
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("end", ["\n", "\r", "\r\n"], ids=["LF", "CR", "CRLF"])
def test_sse_line_ends(end: str) -> None:
    stream = f"event: a{end}data: 1{end}{end}data: 2{end}data: 3{end}{end}".encode()
    assert sse(stream) == [SSEEvent("a", "1"), SSEEvent("", "2\n3")]


def test_sse_mixed_line_ends() -> None:
    stream = b"data: 1\rdata: 2\r\ndata: 3\n\r\ndata: 4\r\r"
    assert sse(stream) == [SSEEvent("", "1\n2\n3"), SSEEvent("", "4")]


def test_sse_cr_then_lf_is_one_terminator_not_a_blank_line() -> None:
    # "data: a\r\n" followed by "data: b\n\n": if CR and LF were two terminators the first
    # line would be followed by a blank line and dispatch alone.
    assert sse(b"data: a\r\ndata: b\n\n") == [SSEEvent("", "a\nb")]


def test_sse_fields() -> None:
    stream = b"event: tool\ndata: {}\nid: 7\nretry: 1500\n\n"
    assert sse(stream) == [SSEEvent("tool", "{}", "7", 1500)]


def test_sse_data_without_colon_is_an_empty_data_line() -> None:
    assert sse(b"data\n\n") == [SSEEvent("", "")]
    assert sse(b"data\ndata\n\n") == [SSEEvent("", "\n")]
    assert sse(b"data: a\ndata\n\n") == [SSEEvent("", "a\n")]


def test_sse_field_without_colon_has_an_empty_value() -> None:
    assert sse(b"event: x\nevent\ndata: a\n\n") == [SSEEvent("", "a")]


def test_sse_only_one_space_after_the_colon_is_removed() -> None:
    assert sse(b"data:  two\n\n") == [SSEEvent("", " two")]
    assert sse(b"data:none\n\n") == [SSEEvent("", "none")]
    assert sse(b"event:  x\ndata: a\n\n") == [SSEEvent(" x", "a")]
    assert sse(b"data:\t tab\n\n") == [SSEEvent("", "\t tab")]


def test_sse_comments_are_ignored() -> None:
    stream = b": hello\ndata: a\n:\n: data: b\n\n"
    assert sse(stream) == [SSEEvent("", "a")]


def test_sse_comment_only_block_dispatches_nothing() -> None:
    assert sse(b": keep-alive\n\n: ping\n\n") == []


def test_sse_multiline_data_joined_with_lf() -> None:
    assert sse(b"data: a\ndata: b\ndata: c\n\n") == [SSEEvent("", "a\nb\nc")]


def test_sse_event_without_data_is_not_dispatched_and_its_type_is_reset() -> None:
    stream = b"event: ping\n\ndata: x\n\n"
    assert sse(stream) == [SSEEvent("", "x")]


def test_sse_unknown_fields_are_ignored() -> None:
    assert sse(b"foo: bar\ndata: x\nDATA: y\n\n") == [SSEEvent("", "x")]


def test_sse_id_persists_across_events() -> None:
    stream = b"id: 1\ndata: a\n\ndata: b\n\nid: 2\ndata: c\n\n"
    assert [e.id for e in sse(stream)] == ["1", "1", "2"]


def test_sse_id_set_by_an_event_without_data_persists() -> None:
    assert sse(b"id: 5\n\ndata: a\n\n") == [SSEEvent("", "a", "5")]


def test_sse_empty_id_resets_the_last_id() -> None:
    assert [e.id for e in sse(b"id: 1\ndata: a\n\nid\ndata: b\n\n")] == ["1", ""]


def test_sse_id_containing_nul_is_ignored() -> None:
    stream = b"id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\n"
    assert [e.id for e in sse(stream)] == ["1", "1"]


@pytest.mark.parametrize("value", ["1.5", "-1", "10s", " 10", "", "²", "١٢", "１２"])
def test_sse_retry_with_anything_but_ascii_digits_is_ignored(value: str) -> None:
    # "If the field value consists of only ASCII digits ... Otherwise, ignore the field."
    stream = f"retry: {value}\ndata: a\n\n".encode()
    assert sse(stream) == [SSEEvent("", "a", None, None)]


def test_sse_retry_rides_on_its_event_only() -> None:
    events = sse(b"retry: 3000\ndata: a\n\ndata: b\n\n")
    assert [e.retry for e in events] == [3000, None]


def test_sse_leading_bom_is_dropped_only_at_stream_start() -> None:
    assert sse(b"\xef\xbb\xbfdata: a\n\n") == [SSEEvent("", "a")]
    # Only one BOM: a second one makes the first field name "\ufeffdata", which is unknown.
    assert sse(b"\xef\xbb\xbf\xef\xbb\xbfdata: a\n\n") == []
    # A BOM at the start of a later line is part of that line's field name.
    assert sse(b"data: a\n\n\xef\xbb\xbfdata: b\n\n") == [SSEEvent("", "a")]
    # In a value it is data.
    assert sse(b"data: \xef\xbb\xbfx\n\n") == [SSEEvent("", "\ufeffx")]


def test_sse_bom_at_the_start_of_a_later_chunk_is_not_dropped() -> None:
    dec = SSEDecoder()
    assert dec.decode(b"data: a\n\n") == [SSEEvent("", "a")]
    assert dec.decode(b"\xef\xbb\xbfdata: b\n\n") == []  # field "\ufeffdata" is unknown
    assert dec.decode(b"data: c\n\n") == [SSEEvent("", "c")]
    dec = SSEDecoder()
    assert dec.decode(b"data: a\n\n") == [SSEEvent("", "a")]
    assert dec.decode(b"\xef\xbb\xbfdata: b") == []
    assert dec.flush() == []


def test_sse_bom_split_across_chunks_is_still_dropped() -> None:
    stream = b"\xef\xbb\xbfdata: a\n\n"
    for chunks in every_two_way_split(stream):
        assert sse(stream, chunks) == [SSEEvent("", "a")], chunks
    assert sse(stream, [stream[i : i + 1] for i in range(len(stream))]) == [SSEEvent("", "a")]


def test_sse_invalid_utf8_becomes_replacement_characters() -> None:
    assert sse(b"data: a\xffb\n\n") == [SSEEvent("", "a\ufffdb")]


def test_sse_gemini_crlf_blocks() -> None:
    # Gemini alt=sse: `data: {...}\r\n\r\n`, no event names, no terminator (wire-formats.md §8).
    stream = b'data: {"candidates": [{"index": 0}]}\r\n\r\ndata: {"usageMetadata": {}}\r\n\r\n'
    assert sse(stream) == [
        SSEEvent("", '{"candidates": [{"index": 0}]}'),
        SSEEvent("", '{"usageMetadata": {}}'),
    ]


def test_sse_anthropic_event_before_data() -> None:
    stream = (
        b'event: message_start\ndata: {"type":"message_start"}\n\n'
        b'event: ping\ndata: {"type": "ping"}\n\n'
        b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
    )
    assert [(e.event, json.loads(e.data)["type"]) for e in sse(stream)] == [
        ("message_start", "message_start"),
        ("ping", "ping"),
        ("message_stop", "message_stop"),
    ]


def test_sse_bedrock_data_before_event() -> None:
    # E29: Bedrock "mantle" Responses writes `data: {...}\nevent: response.…`.
    stream = (
        b'data: {"type":"response.created"}\nevent: response.created\n\n'
        b'data: {"type":"response.completed"}\nevent: response.completed\n\n'
    )
    assert sse(stream) == [
        SSEEvent("response.created", '{"type":"response.created"}'),
        SSEEvent("response.completed", '{"type":"response.completed"}'),
    ]


def test_sse_flush_dispatches_a_final_unterminated_event() -> None:
    # Documented leniency: the spec would discard it; real recordings end this way.
    assert sse(b"data: a\n\ndata: b") == [SSEEvent("", "a"), SSEEvent("", "b")]
    assert sse(b"data: a\n\ndata: b\n") == [SSEEvent("", "a"), SSEEvent("", "b")]
    assert sse(b"data: a\n\ndata: b\r") == [SSEEvent("", "a"), SSEEvent("", "b")]


def test_sse_decode_returns_events_as_soon_as_they_are_complete() -> None:
    dec = SSEDecoder()
    assert dec.decode(b"data: a\n") == []
    assert dec.decode(b"\n") == [SSEEvent("", "a")]
    assert dec.decode(b"data: b\r") == []
    assert dec.decode(b"\r") == [SSEEvent("", "b")]
    assert dec.decode(b"") == []
    assert dec.flush() == []


def test_sse_cr_at_chunk_end_then_lf_is_one_terminator() -> None:
    dec = SSEDecoder()
    assert dec.decode(b"data: a\r") == []
    assert dec.decode(b"") == []
    assert dec.decode(b"\n") == []  # the LF of the CRLF, not a blank line
    assert dec.decode(b"data: b\r\n\r\n") == [SSEEvent("", "a\nb")]


# --------------------------------------------------------------------------------------------
# SSE: real recordings
# --------------------------------------------------------------------------------------------


@pytest.mark.realworld
def test_sse_real_anthropic_stream() -> None:
    (body,) = response_bodies(CASSETTES / "anthropic" / "openllmetry__test_anthropic_tools_streaming_legacy.yaml")
    events = sse(body)
    assert len(events) == 35  # MANIFEST: "35 SSE events"
    assert all(e.event == json.loads(e.data)["type"] for e in events)
    assert events[0].event == "message_start"
    assert events[-1].event == "message_stop"


@pytest.mark.realworld
def test_sse_real_bedrock_data_before_event() -> None:
    bodies = response_bodies(CASSETTES / "other" / "pydantic-ai__test_reused_tool_call_ids[stream].yaml")
    assert [len(sse(b)) for b in bodies] == [7, 9, 26]  # MANIFEST: 7, 9 and 26 SSE events
    for body in bodies:
        assert body.startswith(b"data: ")
        for e in sse(body):
            assert e.event == json.loads(e.data)["type"]


@pytest.mark.realworld
def test_sse_real_gemini_crlf() -> None:
    bodies = response_bodies(
        CASSETTES / "gemini" / "pydantic-ai__test_google_streaming_tool_call_thought_signature.yaml"
    )
    assert all(b"\r\n\r\n" in b for b in bodies)
    assert [len(sse(b)) for b in bodies] == [2, 3]  # MANIFEST: 2 and 3 SSE events
    first = [json.loads(e.data) for e in sse(bodies[0])]
    part = first[0]["candidates"][0]["content"]["parts"][0]
    assert part["functionCall"]["name"] == "get_country"
    assert part["thoughtSignature"]


@pytest.mark.realworld
@pytest.mark.parametrize(
    "path",
    [
        "anthropic/openllmetry__test_anthropic_tools_streaming_legacy.yaml",
        "other/pydantic-ai__test_reused_tool_call_ids[stream].yaml",
        "gemini/pydantic-ai__test_google_streaming_tool_call_thought_signature.yaml",
    ],
)
def test_sse_real_streams_are_chunk_invariant(path: str) -> None:
    for body in response_bodies(CASSETTES / path):
        whole = sse(body)
        assert sse(body, [body[i : i + 1] for i in range(len(body))]) == whole
        assert sse(body, [body[i : i + 7] for i in range(0, len(body), 7)]) == whole


# --------------------------------------------------------------------------------------------
# SSE: generated streams (reference agreement and chunk invariance)
# --------------------------------------------------------------------------------------------

_VALUE_CHARS = st.one_of(
    st.sampled_from(list('ab :\0é中😀{}"\\x\t\ufeff²١')),
    st.characters(exclude_categories=("Cs",), exclude_characters="\r\n"),
)
_VALUES = st.text(_VALUE_CHARS, max_size=8)
_NAMES = st.sampled_from(["data", "data", "data", "event", "id", "retry", "", "dat", "Data", "x", "\ufeffdata"])
_FIELD_LINES = st.builds(lambda n, sep, v: n + sep + v, _NAMES, st.sampled_from([":", ": ", ":  ", ""]), _VALUES)
_RETRY_LINES = st.builds(lambda v: "retry: " + v, st.from_regex(r"[0-9]{1,5}", fullmatch=True))
_LINES = st.one_of(_FIELD_LINES, _RETRY_LINES, st.just(""), st.just(""))
_ENDS = st.sampled_from(["\n", "\r", "\r\n"])


@st.composite
def sse_streams(draw: st.DrawFn) -> bytes:
    lines = draw(st.lists(st.tuples(_LINES, _ENDS), max_size=14))
    text = "".join(line + end for line, end in lines)
    if draw(st.booleans()) and lines:
        text = text[: -len(lines[-1][1])]  # no final terminator
    if draw(st.integers(0, 4)) == 0:
        text = "\ufeff" + text
    return text.encode("utf-8")


@FAST
@given(sse_streams())
def test_sse_agrees_with_the_reference_parser(stream: bytes) -> None:
    assert sse(stream) == reference_sse(stream)


@FAST
@given(sse_streams(), st.lists(st.integers(0, 400), max_size=12))
def test_sse_random_chunking_is_invariant(stream: bytes, cuts: list[int]) -> None:
    assert sse(stream, split_at(stream, cuts)) == sse(stream)


@FAST
@given(sse_streams())
def test_sse_single_byte_chunks_and_every_split_point(stream: bytes) -> None:
    whole = sse(stream)
    assert sse(stream, [stream[i : i + 1] for i in range(len(stream))]) == whole
    # Every two-way split, so the cut lands inside every UTF-8 code point and between every
    # CR and LF of the input.
    for chunks in every_two_way_split(stream):
        assert sse(stream, chunks) == whole


_SSE_PIECES = [b"data:", b"data: ", b"event: ", b"id: ", b"retry: 12", b":", b"x", b" ", b"\n", b"\r", b"\r\n", b"\n\n"]
_UTF8_PIECES = [b"\xe4\xb8", b"\xad", b"\xf0\x9f\x98", b"\x80", b"\xff", b"\xef\xbb\xbf", b"\xc3\xa9", b"\x00"]
_BYTE_PIECES = st.sampled_from(_SSE_PIECES + _UTF8_PIECES)


@FAST
@given(st.lists(_BYTE_PIECES, max_size=30).map(b"".join), st.lists(st.integers(0, 120), max_size=8))
def test_sse_arbitrary_bytes_agree_with_the_reference_whatever_the_chunking(stream: bytes, cuts: list[int]) -> None:
    # Invalid and truncated UTF-8 included: replacement characters come out the same as a
    # whole-input decode, wherever the chunks were cut (E1).
    expected = reference_sse(stream)
    assert sse(stream) == expected
    assert sse(stream, split_at(stream, cuts)) == expected
    assert sse(stream, [stream[i : i + 1] for i in range(len(stream))]) == expected


def _events_per_chunk(decoder: _Decoder[Any], chunks: list[bytes]) -> list[int]:
    """How many events each chunk completes."""
    return [len(decoder.decode(c)) for c in chunks]


@FAST
@given(
    st.lists(_BYTE_PIECES | st.sampled_from([b'{"a":1}', b"\r\n\r\n"]), max_size=30).map(b"".join),
    st.lists(st.integers(0, 120), max_size=8),
    st.booleans(),
    st.booleans(),
)
def test_line_pieces_give_the_same_events_as_early(stream: bytes, cuts: list[int], single: bool, is_sse: bool) -> None:
    # Re-cut pieces hold a line end (but the last); fed to a decoder they give every event at the
    # same chunk of the input as the chunks themselves.
    chunks = [stream[i : i + 1] for i in range(len(stream))] if single else split_at(stream, cuts)
    new: Callable[[], _Decoder[Any]] = SSEDecoder if is_sse else NDJSONDecoder
    direct_decoder = new()
    direct = _events_per_chunk(direct_decoder, chunks)
    consumed = 0

    def source() -> Iterator[bytes]:
        nonlocal consumed
        for chunk in chunks:
            consumed += 1
            yield chunk

    decoder = new()
    pieces: list[bytes] = []
    given_at: dict[int, int] = {}  # chunks consumed when a piece came out -> events it completed
    for piece in line_pieces(source(), sse=is_sse):
        pieces.append(piece)
        given_at[consumed] = given_at.get(consumed, 0) + len(decoder.decode(piece))
    assert b"".join(pieces) == stream
    assert all(b"\n" in p or b"\r" in p for p in pieces[:-1])
    assert {n + 1: k for n, k in enumerate(direct) if k} == {n: k for n, k in given_at.items() if k}
    assert decoder.flush() == direct_decoder.flush()


def test_sse_split_inside_code_points_and_crlf() -> None:
    stream = "data: é中😀\r\nevent: ü\r\n\r\ndata: 中\r\r\n".encode()
    expected = [SSEEvent("ü", "é中😀"), SSEEvent("", "中")]
    assert sse(stream) == expected
    for chunks in every_two_way_split(stream):
        assert sse(stream, chunks) == expected
    for i in range(len(stream)):
        for j in range(i, len(stream)):
            assert sse(stream, split_at(stream, [i, j])) == expected


# --------------------------------------------------------------------------------------------
# SSE: decode_raw and run templates (adapters read runs of one event shape without a per-event loop)
# --------------------------------------------------------------------------------------------


class _Template(NamedTuple):
    prefix: bytes
    suffix: bytes
    event: str
    head: bytes
    """The payload head in ``prefix`` (after ``data: ``)."""


class _Source:
    """A ``RunSource`` whose template the test sets."""

    def __init__(self, template: _Template | None = None) -> None:
        self.template = template

    def arrived(self, size: int) -> bool:
        return True  # always watched: the template may change after any item

    def start_runs(self) -> _Source:
        return self  # ``SSEDecoder(start=source)``: the source from the first chunk on (no warm-up)


def raw_events(stream: bytes, chunks: Iterable[bytes], templates: list[_Template | None]) -> list[tuple[str, str]]:
    """(event, data) of ``decode_raw`` with runs expanded as ``SSEDecoder`` documents them: a piece
    is the event ``(template event, head + piece + suffix)``. After each item the decoder's source
    gives the next template of ``templates`` (cycling), as a reader learning mid-chunk would."""
    source = _Source()
    dec = SSEDecoder(start=source)
    out: list[tuple[str, bytes]] = []
    n = 0
    for chunk in chunks:
        for item in dec.decode_raw(chunk):
            if isinstance(item, Run):
                tpl = item.template
                assert isinstance(tpl, _Template)
                assert item.pieces and all(b"\n" not in p for p in item.pieces)
                out += [(tpl.event, tpl.head + p + tpl.suffix) for p in item.pieces]
            else:
                out.append((item[0], item[1]))
            source.template = templates[n % len(templates)] if templates else None
            n += 1
    out += [(e[0], e[1]) for e in dec.flush_raw()]
    return [(e, d.decode("utf-8", "replace")) for e, d in out]


def _template(event: str, head: bytes, suffix: bytes) -> _Template:
    prefix = (f"event: {event}\n".encode() if event else b"") + b"data: " + head
    return _Template(prefix, suffix, event, head)


_TEMPLATES = st.builds(
    _template,
    st.sampled_from(["", "x", "content_block_delta"]),
    st.sampled_from([b"", b"{", b'{"a":', b" {"]),
    st.sampled_from([b"", b"}", b"}}", b'"}', b"} }"]),
)


@st.composite
def template_streams(draw: st.DrawFn) -> tuple[bytes, list[_Template | None]]:
    """Streams where events of some templates' shape are frequent, among other SSE bytes."""
    templates = draw(st.lists(_TEMPLATES, min_size=1, max_size=3))
    parts: list[bytes] = []
    for _ in range(draw(st.integers(0, 16))):
        if draw(st.booleans()):
            tpl = draw(st.sampled_from(templates))
            body = draw(st.sampled_from([b"", b"a", b'"x"', b"{}", b" b ", b"\xff", b"\xe4\xb8", b":"]))
            end = draw(st.sampled_from([b"\n\n", b"\n\n", b"\n", b"\r\n\r\n", b"\n\n\n", b"\r"]))
            parts.append(tpl.prefix + body + draw(st.sampled_from([tpl.suffix, tpl.suffix, b"", b"}"])) + end)
        else:
            parts.append(draw(_BYTE_PIECES))
    return b"".join(parts), [*templates, *draw(st.lists(st.none(), max_size=1))]


@settings(max_examples=300, deadline=None)
@given(template_streams(), st.lists(st.integers(0, 400), max_size=6))
def test_sse_runs_expand_to_the_events_decode_gives(
    case: tuple[bytes, list[_Template | None]], cuts: list[int]
) -> None:
    stream, templates = case
    expected = [(e.event, e.data) for e in sse(stream)]
    assert raw_events(stream, [stream], templates) == expected
    assert raw_events(stream, split_at(stream, cuts), templates) == expected
    assert raw_events(stream, split_at(stream, cuts), templates[:1]) == expected


@settings(max_examples=100, deadline=None)
@given(case=template_streams(), cuts=st.lists(st.integers(0, 400), max_size=6))
def test_sse_runs_are_read_in_small_windows_too(case: tuple[bytes, list[_Template | None]], cuts: list[int]) -> None:
    stream, templates = case
    window = framing._WINDOW
    framing._WINDOW = 24  # many windows, cut at blank lines
    try:
        assert raw_events(stream, split_at(stream, cuts), templates) == [(e.event, e.data) for e in sse(stream)]
    finally:
        framing._WINDOW = window


def test_sse_runs_of_a_template() -> None:
    # The decoder splits at suffix + blank line + prefix: a run holds each event that is followed
    # by another of the template; the last one of a run, followed by another event, reads alone.
    tpl = _template("content_block_delta", b'{"i":', b"}")
    one, two, three = (tpl.prefix + p + b"}\n\n" for p in (b"1", b"2", b"3"))
    dec = SSEDecoder(start=_Source(tpl))
    items = list(dec.decode_raw(one + two + three + b"data: other\n\n" + one + two))
    assert items == [
        Run(tpl, [b"1", b"2"]),
        ("content_block_delta", b'{"i":3}', None, None),
        ("", b"other", None, None),
        ("content_block_delta", b'{"i":1}', None, None),
        Run(tpl, [b"2"]),
    ]
    assert list(dec.decode_raw(one + two)) == [Run(tpl, [b"1", b"2"])]  # a text that closes with one


def test_sse_gemini_crlf_lines_are_read_in_place() -> None:
    # wire-formats.md §8: alt=sse sends `data: {...}\r\n\r\n`; a long line needs no copy per line
    payload = b'{"candidates": [{"content": {"parts": [{"text": "' + b"x" * 100_000 + b'"}]}}]}'
    stream = b"data: " + payload + b"\r\n\r\ndata:" + b"{}" + b"\r\n\r\n"
    dec = SSEDecoder()
    assert list(dec.decode_raw(stream)) == [("", payload, None, None), ("", b"{}", None, None)]
    assert dec.decode(b"data: a\r\nid: 1\r\n\r\n") == [SSEEvent("", "a", "1")]  # other fields: line by line


# --------------------------------------------------------------------------------------------
# Linearity (structural: count joins / bytes scanned, never wall time)
# --------------------------------------------------------------------------------------------


class _CountingList(list[bytes]):
    """A ``_pending`` stand-in that counts how often the pieces were joined and cleared."""

    clears = 0

    def clear(self) -> None:
        self.clears += 1
        super().clear()


def test_sse_long_line_in_small_chunks_is_joined_once() -> None:
    dec = SSEDecoder()
    pending = _CountingList()
    dec._pending = pending
    payload = b"x" * (1 << 20)
    assert dec.decode(b"data: ") == []
    n = 0
    for i in range(0, len(payload), 16):
        assert dec.decode(payload[i : i + 16]) == []
        n += 1
    # The pieces are kept as they came: nothing was re-joined per chunk.
    assert len(pending) == n + 1
    assert pending.clears == 0
    (event,) = dec.decode(b"\n\n")
    assert len(event.data) == len(payload)
    assert pending.clears == 1


def test_ndjson_long_line_in_small_chunks_is_joined_once() -> None:
    dec = NDJSONDecoder()
    pending = _CountingList()
    dec._pending = pending
    payload = b'"' + b"x" * (1 << 20) + b'"'
    n = 0
    for i in range(0, len(payload), 16):
        assert dec.decode(payload[i : i + 16]) == []
        n += 1
    assert len(pending) == n
    assert pending.clears == 0
    assert dec.decode(b"\n") == [payload]
    assert pending.clears == 1


class _ScanCounter:
    """Wraps a compiled pattern and counts the bytes its ``search`` calls examined."""

    def __init__(self, pattern: re.Pattern[bytes]) -> None:
        self.pattern = pattern
        self.scanned = 0

    def search(self, buf: bytes | bytearray, pos: int = 0) -> re.Match[bytes] | None:
        m = self.pattern.search(buf, pos)
        self.scanned += (m.end() if m else len(buf)) - pos
        return m


def test_json_array_long_element_in_small_chunks_is_scanned_once(monkeypatch: pytest.MonkeyPatch) -> None:
    counters = [_ScanCounter(framing._STRING_END), _ScanCounter(framing._ARRAY_TOKENS)]
    monkeypatch.setattr(framing, "_STRING_END", counters[0])
    monkeypatch.setattr(framing, "_ARRAY_TOKENS", counters[1])
    body = b'[{"text": "' + 'é\\"x'.encode() * (1 << 18) + b'"}]'
    dec = JSONArrayDecoder()
    out = run(dec, [body[i : i + 16] for i in range(0, len(body), 16)])
    assert len(out) == 1
    assert json.loads(out[0])["text"] == 'é"x' * (1 << 18)
    assert sum(c.scanned for c in counters) <= 2 * len(body)


# --------------------------------------------------------------------------------------------
# NDJSON
# --------------------------------------------------------------------------------------------


def ndjson(data: bytes, chunks: Iterable[bytes] | None = None) -> list[bytes]:
    return run(NDJSONDecoder(), [data] if chunks is None else chunks)


def test_ndjson_lines() -> None:
    assert ndjson(b'{"a":1}\n{"b":2}\n') == [b'{"a":1}', b'{"b":2}']


def test_ndjson_blank_lines_are_skipped() -> None:
    assert ndjson(b'\n{"a":1}\n\n  \n{"b":2}\n\n') == [b'{"a":1}', b'{"b":2}']


def test_ndjson_crlf() -> None:
    assert ndjson(b'{"a":1}\r\n{"b":2}\r\n') == [b'{"a":1}', b'{"b":2}']


def test_ndjson_final_line_without_newline_comes_from_flush() -> None:
    dec = NDJSONDecoder()
    assert dec.decode(b'{"a":1}\n{"done":') == [b'{"a":1}']
    assert dec.decode(b"true}") == []
    assert dec.flush() == [b'{"done":true}']
    assert dec.flush() == []


def test_ndjson_ollama_shape() -> None:
    # Ollama /api/chat streams one JSON object per line, the last with "done": true (wire-formats.md §8).
    body = (
        b'{"model":"m","message":{"role":"assistant","content":"Hi"},"done":false}\n'
        b'{"model":"m","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop"}\n'
    )
    lines = ndjson(body)
    assert [json.loads(line)["done"] for line in lines] == [False, True]


_JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(st.sampled_from(list('a{}[]",\\\n\ré中😀 ')) | st.characters(exclude_categories=("Cs",)), max_size=8),
)
_JSON_VALUES = st.recursive(
    _JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=8,
)


@st.composite
def ndjson_streams(draw: st.DrawFn) -> tuple[bytes, list[Any]]:
    values = draw(st.lists(_JSON_VALUES, max_size=6))
    out = ""
    for value in values:
        out += draw(st.sampled_from(["", "", "\n", "\r\n"]))  # blank lines
        out += json.dumps(value, ensure_ascii=draw(st.booleans())) + draw(_NDJSON_ENDS)
    if values and draw(st.booleans()):
        out = out.rstrip("\r\n")  # final line without newline
    return out.encode("utf-8"), values


_NDJSON_ENDS = st.sampled_from(["\n", "\r\n"])


@FAST
@given(ndjson_streams(), st.lists(st.integers(0, 300), max_size=10))
def test_ndjson_lines_parse_back_and_chunking_is_invariant(case: tuple[bytes, list[Any]], cuts: list[int]) -> None:
    data, values = case
    whole = ndjson(data)
    assert [json.loads(line) for line in whole] == values
    assert ndjson(data, split_at(data, cuts)) == whole
    assert ndjson(data, [data[i : i + 1] for i in range(len(data))]) == whole


# --------------------------------------------------------------------------------------------
# JSON arrays (Gemini :streamGenerateContent without alt=sse)
# --------------------------------------------------------------------------------------------


def jarray(data: bytes, chunks: Iterable[bytes] | None = None) -> list[bytes]:
    return run(JSONArrayDecoder(), [data] if chunks is None else chunks)


def test_json_array_gemini_form() -> None:
    body = b'[{\n  "a": 1\n}\r\n,\r\n{\n  "b": [2, {"c": 3}]\n}\n]'
    assert [json.loads(e) for e in jarray(body)] == [{"a": 1}, {"b": [2, {"c": 3}]}]
    assert jarray(body)[0] == b'{\n  "a": 1\n}'


def test_json_array_elements_leave_as_soon_as_they_close() -> None:
    dec = JSONArrayDecoder()
    assert dec.decode(b'[{"a": ') == []
    assert dec.decode(b'1}\r\n,\r\n{"b"') == [b'{"a": 1}']
    assert dec.decode(b": 2}\n]") == [b'{"b": 2}']
    assert dec.flush() == []


STRINGY = rb'[{"s": "}{][,", "q": "say \"hi\" {", "b": "\\", "bq": "\\\"", "u": "\u00e9\"}"}, {"k": "]"}]'


def test_json_array_strings_with_braces_brackets_quotes_and_backslashes() -> None:
    assert [json.loads(e) for e in jarray(STRINGY)] == json.loads(STRINGY)


def test_json_array_escapes_split_across_chunks() -> None:
    expected = jarray(STRINGY)
    for chunks in every_two_way_split(STRINGY):
        assert jarray(STRINGY, chunks) == expected, chunks
    assert jarray(STRINGY, [STRINGY[i : i + 1] for i in range(len(STRINGY))]) == expected


def test_json_array_truncated_flush_returns_the_partial_element() -> None:
    dec = JSONArrayDecoder()
    assert dec.decode(b'[{"a": 1},\r\n{"b": "unfinis') == [b'{"a": 1}']
    assert dec.flush() == [b'{"b": "unfinis']


def test_json_array_truncated_between_elements_flushes_nothing() -> None:
    dec = JSONArrayDecoder()
    assert dec.decode(b'[{"a": 1}\r\n,\r\n') == [b'{"a": 1}']
    assert dec.flush() == []


def test_json_array_empty() -> None:
    assert jarray(b"[]") == []
    assert jarray(b"[\n]") == []


@pytest.mark.realworld
def test_json_array_real_gemini_cassette() -> None:
    bodies = response_bodies(CASSETTES / "gemini" / "llm-gemini__test_tools.yaml")
    assert b"}\n,\r\n{" in bodies[0]  # the separator as recorded
    elements = [[json.loads(e) for e in jarray(b)] for b in bodies]
    assert [len(e) for e in elements] == [2, 1, 2]  # MANIFEST: 2, 1 and 2 chunks
    first_call = elements[0][1]["candidates"][0]["content"]["parts"][0]
    assert first_call["functionCall"] == {"name": "pelican_name_generator", "args": {}}
    assert first_call["thoughtSignature"]
    assert [e["candidates"][0].get("finishReason") for e in elements[2]] == [None, "STOP"]
    for body in bodies:
        # Each element is the whole JSON value between the array's separators.
        assert json.loads(body) == [json.loads(e) for e in jarray(body)]
        assert jarray(body, [body[i : i + 1] for i in range(len(body))]) == jarray(body)


def _array_separators() -> st.SearchStrategy[str]:
    return st.sampled_from([",", ", ", "\r\n,\r\n", "\n,\n", ",\n"])


@st.composite
def json_arrays(draw: st.DrawFn) -> tuple[bytes, list[dict[str, Any]]]:
    objects = draw(st.lists(st.dictionaries(st.text(max_size=5), _JSON_VALUES, max_size=4), max_size=5))
    indent = draw(st.sampled_from([None, 2]))
    ensure_ascii = draw(st.booleans())
    text = "["
    for i, obj in enumerate(objects):
        if i:
            text += draw(_array_separators())
        text += json.dumps(obj, indent=indent, ensure_ascii=ensure_ascii)
    text += draw(st.sampled_from(["]", "\n]", "\r\n]"]))
    return text.encode("utf-8"), objects


@FAST
@given(json_arrays(), st.lists(st.integers(0, 600), max_size=12))
def test_json_array_elements_parse_back_and_chunking_is_invariant(
    case: tuple[bytes, list[dict[str, Any]]], cuts: list[int]
) -> None:
    data, objects = case
    whole = jarray(data)
    assert [json.loads(e) for e in whole] == objects
    assert jarray(data, split_at(data, cuts)) == whole
    assert jarray(data, [data[i : i + 1] for i in range(len(data))]) == whole


@FAST
@given(json_arrays(), st.data())
def test_json_array_truncated_anywhere_flushes_a_prefix_of_an_element(
    case: tuple[bytes, list[dict[str, Any]]], data: st.DataObject
) -> None:
    body, _ = case
    cut = data.draw(st.integers(0, len(body)))
    out = jarray(body[:cut])
    whole = jarray(body)
    if out:
        assert out[:-1] == whole[: len(out) - 1]
        # The last item is a whole element or the unfinished one as it stood: a prefix of it.
        assert whole[len(out) - 1].startswith(out[-1])
    else:
        assert b"{" not in body[:cut]  # no element had begun


# --------------------------------------------------------------------------------------------
# Shape
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("factory", [SSEDecoder, NDJSONDecoder, JSONArrayDecoder])
def test_decoders_accept_empty_chunks_and_empty_input(factory: Callable[[], _Decoder[Any]]) -> None:
    assert run(factory(), [b"", b""]) == []
    assert run(factory(), []) == []


def test_sse_event_defaults() -> None:
    e = SSEEvent("x", "y")
    assert (e.event, e.data, e.id, e.retry) == ("x", "y", None, None)


def test_line_pieces_holds_a_long_line_read_byte_by_byte_in_memory_near_its_size() -> None:
    # found by the fuzz tier: one-byte pieces of an 8 MB line without an end were held as 8 million
    # bytes objects (~40 bytes each) until the line ended
    import tracemalloc

    line = bytes(range(32, 127)) * 11_000  # ~1 MB, no line end
    tracemalloc.start()
    try:
        pieces = list(line_pieces((line[i : i + 1] for i in range(len(line))), sse=True))
        pieces += list(line_pieces(iter([line[:5000], line[5000:], b"\n"])))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert pieces == [line, line + b"\n"]
    assert peak < 6 * len(line), peak  # held one by one: ~40 times its size
