"""The real-traffic scaffold shared by the adapters: where the cassettes are, which interactions an
adapter owns, naive readers of recorded bodies, and what each adapter declares for the generic
tests of ``test_realworld.py``.

Each ``test_<adapter>_realworld.py`` builds one ``RealWorld`` from its MANIFEST tables (tool names,
argument previews, stop reasons, event counts, error payloads) and keeps only the tests that are
genuinely its own. The cassettes are the repository's copy of the upstream files in
``tests/realworld`` (tests/realworld/README.md).

The naive readers below parse a whole recorded body with nothing but ``str.split`` and ``json``, so
they are independent of the adapters' incremental stream code (the reference the streams fold to).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from conformance.adapters import detect_adapter
from conformance.adapters.base import WireRequest
from conformance.model import Response, StreamEvent, ToolCall
from conformance.traffic.cassettes import Interaction, is_streaming, load_cassette

CASSETTES = Path(__file__).resolve().parents[1] / "realworld" / "cassettes"


# --------------------------------------------------------------------------------------------
# Naive readers of a whole recorded body (independent of the adapters)
# --------------------------------------------------------------------------------------------


def naive_sse(body: bytes) -> list[dict[str, Any]]:
    """The JSON of every SSE ``data:`` line (``data: [DONE]`` left out). The body is split on ``\\n``
    only (a trailing ``\\r`` is JSON whitespace): ``str.splitlines`` would also cut at U+2028 and
    friends, which JSON strings may hold unescaped."""
    payloads = [line[len("data:") :] for line in body.decode().split("\n") if line.startswith("data:")]
    return [json.loads(p) for p in payloads if p.strip() != "[DONE]"]


def sse_done(body: bytes) -> bool:
    """Whether the last SSE ``data:`` line of a whole body is ``[DONE]`` (OpenAI Chat ends so)."""
    payloads = [line[len("data:") :] for line in body.decode().split("\n") if line.startswith("data:")]
    return bool(payloads) and payloads[-1].strip() == "[DONE]"


def naive_ndjson(body: bytes) -> list[dict[str, Any]]:
    """One JSON object per non-blank line."""
    return [json.loads(line) for line in body.decode().split("\n") if line.strip()]


def naive_json_array_or_sse(body: bytes) -> list[dict[str, Any]]:
    """Gemini's two stream framings: one JSON array parsed whole, or SSE."""
    text = body.decode()
    if text.lstrip().startswith("["):
        chunks: list[dict[str, Any]] = json.loads(text)
        return chunks
    return naive_sse(body)


def cut(body: bytes, cuts: list[int]) -> list[bytes]:
    """``body`` cut at the given offsets (duplicates ignored)."""
    bounds = [0, *sorted(set(cuts)), len(body)]
    return [body[a:b] for a, b in itertools.pairwise(bounds)]


def utf8_inside(body: bytes) -> list[int]:
    """The offsets of UTF-8 continuation bytes: a cut there splits a code point."""
    return [i for i in range(1, len(body)) if body[i] & 0xC0 == 0x80]


# --------------------------------------------------------------------------------------------
# What an adapter declares
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Stream:
    """One streamed interaction as MANIFEST lists it."""

    names: list[str]
    """The streamed tool calls, in order."""
    chunks: int
    """SSE events, NDJSON lines or JSON-array chunks, as the adapter's naive reader counts them."""
    deltas: int | None
    """Argument delta events, where the format has them."""
    stop: str
    """The provider's stop reason."""


@dataclass(frozen=True)
class NaiveCall:
    """A tool call read from the recorded chunks: what the fold must give."""

    name: str
    arguments: Any
    raw: str | None = None
    """The concatenated argument fragments, where the wire streams them as text."""
    id: str | None = None
    """The id sent on the wire, if any (else the adapter makes one up)."""


@dataclass(frozen=True)
class NaiveReading:
    """A recorded stream read whole by a naive parser."""

    calls: list[NaiveCall]
    text: str
    usage: Mapping[str, int]
    """``Usage`` attribute -> value the last usage report gives."""
    deltas: int | None = None


@dataclass(frozen=True)
class Error:
    """A recorded error reply (MANIFEST error payload; code None where the wire has none)."""

    status: int
    kind: str
    code: str | None
    message: str


def _nothing(*_: Any) -> None:
    return None


@dataclass(frozen=True)
class RealWorld:
    """One adapter's share of the real-traffic tests: its MANIFEST tables and a few hooks."""

    name: str
    """The adapter's name: ``detect_adapter`` routes interactions to it, and ``cassettes/<name>/``."""
    adapter: ModuleType
    files: tuple[int, int]
    """MANIFEST: files in ``<name>/``, and files of ``other/`` whose URL routes here."""
    wire_path: Callable[[Interaction], str]
    """The path (and query) ``request_to_wire`` must give for a recorded request."""
    wire_headers: Mapping[str, str] = field(default_factory=dict)
    pass_path: bool = False
    """Whether ``request_from_wire`` is given the recorded URI (its path carries the model or query)."""
    rejects: Callable[[Any], bool] = lambda body: False
    """The recorded bodies documented to raise ``WireFormatError`` instead of round-tripping."""
    finish: Mapping[str, str] = field(default_factory=dict)
    """The provider's stop reason -> our finish reason."""
    calls_finish: bool = False
    """A reply holding calls finishes ``tool_calls`` whatever the stop reason says."""
    non_stream_calls: Mapping[str, list[tuple[list[tuple[str, str]], str]]] = field(default_factory=dict)
    """File -> per interaction, ([(tool, argument preview)], stop reason)."""
    preview_of: Callable[[ToolCall], str] = lambda call: json.dumps(call.arguments, ensure_ascii=False)
    """What a MANIFEST argument preview is a prefix of: the arguments as JSON, or the raw wire string
    where the format sends arguments as text (MANIFEST copies it, compact or not)."""
    check_call: Callable[[ToolCall], None] = _nothing
    """Adapter facts about every non-streamed call (id shape, synthetic ids)."""
    check_reply: Callable[[Response, Any], None] = _nothing
    """Adapter facts about a non-streamed reply, given the recorded JSON."""
    streams: Mapping[str, list[Stream]] = field(default_factory=dict)
    """File -> its streamed interactions."""
    naive_chunks: Callable[[bytes], list[dict[str, Any]]] = naive_sse
    naive_reading: Callable[[list[dict[str, Any]]], NaiveReading] | None = None
    errors: Mapping[str, Error] = field(default_factory=dict)
    error_message_is_prefix: bool = False
    """The MANIFEST preview of the message is truncated: compare as a prefix."""
    extra_streams: Mapping[str, bytes] = field(default_factory=dict)
    """Hand-made stream bodies for chunk invariance, by id (where the recordings lack a case)."""
    utf8_stream: Callable[[], bytes] | None = None
    """A stream body holding multi-byte code points."""
    utf8_min: int = 1
    """How many continuation bytes that body has at least."""
    check_utf8_fold: Callable[[Response], None] = _nothing

    def __str__(self) -> str:
        return self.name

    # -- reading ----------------------------------------------------------------------------

    def owns(self, interaction: Interaction) -> bool:
        return detect_adapter(interaction.request.uri, interaction.request.json) == self.name

    def paths(self) -> list[Path]:
        """The files holding at least one interaction routed here: ``<name>/`` then ``other/``."""
        candidates = sorted((CASSETTES / self.name).glob("*.yaml")) + sorted((CASSETTES / "other").glob("*.yaml"))
        return [p for p in candidates if any(self.owns(i) for i in _load(p))]

    def interactions(self) -> list[tuple[Path, Interaction]]:
        return [(p, i) for p in self.paths() for i in _load(p) if self.owns(i)]

    def cassette(self, name: str) -> list[Interaction]:
        """Every interaction of ``<name>/<file>`` (or ``other/<file>`` given as such)."""
        path = CASSETTES / (name if "/" in name else f"{self.name}/{name}")
        return list(load_cassette(path).interactions)

    def events(self, body: bytes, chunks: list[bytes] | None = None) -> list[StreamEvent]:
        return list(self.adapter.stream_from_wire(chunks if chunks is not None else [body]))

    def finish_of(self, stop: str, has_calls: bool) -> str:
        return "tool_calls" if self.calls_finish and has_calls else self.finish[stop]

    def check_wire(self, interaction: Interaction, wire: WireRequest) -> None:
        assert wire.path == self.wire_path(interaction)
        assert dict(wire.headers) == dict(self.wire_headers)
        assert wire.stream is is_streaming(interaction)


@cache
def _load(path: Path) -> tuple[Interaction, ...]:
    return tuple(load_cassette(path).interactions)


def interaction_id(spec: RealWorld, path: Path, interaction: Interaction) -> str:
    return f"{spec}:{path.parent.name}/{path.name}#{interaction.index}"


def interaction_params(specs: list[RealWorld], streams_only: bool = False) -> list[Any]:
    """``(spec, interaction)`` for every interaction routed to each adapter (only the streamed ones
    with ``streams_only``)."""
    return [
        pytest.param(spec, i, id=interaction_id(spec, p, i))
        for spec in specs
        for p, i in spec.interactions()
        if not streams_only or (i.response is not None and is_streaming(i))
    ]
