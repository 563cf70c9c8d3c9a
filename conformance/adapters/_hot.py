"""The hot path of streamed tool calls: argument fragments read straight from the SSE bytes.
Private helper of the ``openai_chat`` and ``anthropic`` adapters.

Nearly every event of a streamed tool call is one argument fragment for a call that is already
open (``choices[0].delta.tool_calls[0].function.arguments``; Anthropic ``input_json_delta``), and
such events differ only in the fragment, the call's wire index and, for some servers, padding at
the end. Once the general path has handled one of them, ``Learner.learn`` splits its payload into

    HEAD | index digits | MID | the fragment as a JSON string | TAIL

and checks the split by parsing probes built from it (other indexes; strings with escapes, an
emoji, nothing) against the parsed payload with those values put in: a payload shape it does not
understand gets no template. The SSE decoder is then given a ``Split`` (``SSEDecoder.template``)
and hands over runs of events ``prefix + piece + suffix``. ``read`` turns each piece whose index
digits and TAIL were seen before and whose string parses (``orjson.loads``) into what the general
path would have made of it: by the JSON grammar, its payload is the learned one with those two
values replaced, and the adapter's ``entry_for`` says the call is open. Anything else stops
``read``; the adapter then feeds that piece's payload (``Split.payload``) to its general path.

``ENABLED`` switches learning off (the tests compare both paths on the same bytes).
"""

from __future__ import annotations

import copy
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from itertools import repeat
from operator import itemgetter
from typing import Any, Protocol, TypeAlias

import orjson

from conformance.framing import Run
from conformance.model import StreamEvent, ToolCallChunk

__all__ = ["BATCH", "ENABLED", "MAX_LEARNED", "Entry", "Learner", "Reader", "Split", "read", "read_run"]

ENABLED = True
"""Learn templates (the tests switch it off to compare with the general path alone)."""

MAX_LEARNED = 32
"""Payloads one stream may learn from (new indexes, tails, heads); past that only what was learned
is used (a server that puts a nonce in every event gets the general path)."""

_MAX_TAILS = 8
_STRUCTURAL = frozenset(b"{}[],: \t")

Entry: TypeAlias = tuple[str, list[str]]
"""An open call as ``CallTracker.buffers`` holds it: (call id, argument fragments so far)."""

_new = object.__new__
"""``_new(ToolCallChunk)`` then its three slots through their descriptors: a ``ToolCallChunk`` equal to
one from its constructor at half the cost (the frozen dataclass's ``__init__`` sets them with
``object.__setattr__``)."""
_SET_ID = vars(ToolCallChunk)["tool_call_id"].__set__
_SET_TEXT = vars(ToolCallChunk)["tool_call_arguments_chunk"].__set__
_SET_TYPE = vars(ToolCallChunk)["type"].__set__
_CHUNK = "tool_call_chunk"


class Split:
    """How the decoder cuts the stream (``prefix``/``suffix``: ``framing.RunTemplate``) and how a
    piece reads: ``[digits MID] string [tail]``."""

    __slots__ = ("canon", "data_head", "event", "indexes", "mid", "prefix", "suffix", "tails", "wire")

    def __init__(
        self, event: str, data_head: bytes, suffix: bytes, wire: int | None, mid: bytes, indexes: dict[bytes, int]
    ) -> None:
        self.event = event
        self.data_head = data_head
        """Payload bytes before a piece."""
        self.prefix = (b"event: " + event.encode("utf-8") + b"\n" if event else b"") + b"data: " + data_head
        self.suffix = suffix
        """Payload bytes after a piece: the tail when the stream has one tail, else nothing."""
        self.wire = wire
        """The wire index of every piece (its digits are in the prefix), or None: pieces start with
        their index digits and ``mid``."""
        self.mid = mid
        self.indexes = indexes
        """Index digits -> wire index (when ``wire`` is None)."""
        self.tails: tuple[bytes, ...] = ()
        """Tails a piece may end with (when ``suffix`` is empty)."""
        self.canon: bytes | None = None
        """The tails without spaces and tabs, when they are all structural (``}`` padded with spaces):
        any such tail reads the same (JSON whitespace)."""

    def payload(self, piece: bytes) -> bytes:
        """The data of a piece's event."""
        return self.data_head + piece + self.suffix

    def tail_len(self, piece: bytes) -> int:
        """The length of the tail ending ``piece`` (``tails``), or -1."""
        for tail in self.tails:
            if piece.endswith(tail):
                return len(tail)
        if self.canon is not None:
            start = piece.rfind(b'"') + 1
            if start and piece[start:].translate(None, b" \t") == self.canon:
                return len(piece) - start
        return -1


class Learner:
    """What one stream learned about its argument-fragment events (see the module docstring).

    ``index_path``/``text_path`` locate the call's wire index and the fragment in a parsed payload;
    ``keys`` are their JSON keys (``b'"index":'``, ``b'"arguments":'``). The index of the call being
    streamed goes into the decoder's prefix (one template per call, relearned when the next call
    starts) while the stream sends its calls one after another, as OpenAI does; once an index comes
    back after another one (interleaved calls), pieces carry their index digits instead.
    ``per_index`` keeps one template per call however the events come (on Anthropic's wire they
    never interleave).
    """

    __slots__ = (
        "budget",
        "event",
        "head",
        "index_path",
        "indexes",
        "interleaved",
        "keys",
        "last",
        "mid",
        "off",
        "per_index",
        "split",
        "tails",
        "text_path",
    )

    def __init__(
        self,
        index_path: Sequence[str | int],
        text_path: Sequence[str | int],
        keys: tuple[bytes, bytes],
        *,
        per_index: bool,
    ) -> None:
        self.index_path = index_path
        self.text_path = text_path
        self.keys = keys
        self.per_index = per_index
        self.budget = MAX_LEARNED
        self.off = not ENABLED
        self.event = ""
        self.head = b""
        self.mid = b""
        self.indexes: dict[bytes, int] = {}
        self.tails: list[bytes] = []
        self.last = b""
        self.interleaved = False
        """An index came back after another one: calls interleave, pieces carry their index."""
        self.split: Split | None = None
        """The decoder's template, once there is one."""

    def learn(self, event: str, payload: bytes, parsed: Any) -> Split | None:
        """Learn from an event the general path read as one fragment of an open call; return the
        new ``Split`` when it changed (the caller gives it to the decoder), else None."""
        if self.off or self.budget <= 0 or self._known(payload):
            return None
        self.budget -= 1
        found = _split(payload, parsed, self.index_path, self.text_path, self.keys)
        if found is None:
            return None
        head, digits, mid, tail = found
        if (head, mid, event) != (self.head, self.mid, self.event):
            self.head, self.mid, self.event = head, mid, event
            self.indexes.clear()
            self.tails.clear()
            self.interleaved = False
            self.split = None
        if (
            self.split is not None
            and digits in self.indexes
            and tail in self.tails
            and (digits == self.last or not self._per_call())
        ):
            return None  # nothing new: the decoder split that event apart for another reason
        if digits != self.last and digits in self.indexes:
            self.interleaved = True
        self.indexes[digits] = int(digits)
        if tail not in self.tails:
            if len(self.tails) >= _MAX_TAILS:
                self.tails.pop()
            self.tails.insert(0, tail)
        self.last = digits
        self.split = self._make_split()
        return self.split

    def _known(self, payload: bytes) -> bool:
        """The current split reads this payload already (the decoder handed it over on its own, as
        the first event of a read, or the general path had to decide for its call)."""
        split = self.split
        if split is None or not payload.startswith(split.data_head):
            return False
        rest = payload[len(split.data_head) :]
        if split.wire is None:
            digits, found, rest = rest.partition(split.mid)
            if not found or digits not in split.indexes:
                return False
        return rest.endswith(split.suffix) if split.suffix else split.tail_len(rest) >= 0

    def _per_call(self) -> bool:
        """One template per call (its index in the prefix), rather than index digits in every piece."""
        return self.per_index or not self.interleaved

    def _make_split(self) -> Split:
        one_tail = len(self.tails) == 1
        suffix = self.tails[0] if one_tail else b""
        if self._per_call():
            digits = self.last
            split = Split(self.event, self.head + digits + self.mid, suffix, self.indexes[digits], b"", {})
        else:
            split = Split(self.event, self.head, suffix, None, self.mid, dict(self.indexes))
        if not one_tail:
            split.tails = tuple(self.tails)
            if all(_STRUCTURAL.issuperset(t) and t.strip() for t in self.tails):
                split.canon = self.tails[0].translate(None, b" \t")
                if any(t.translate(None, b" \t") != split.canon for t in self.tails):
                    split.canon = None
        return split


class Reader(Protocol):
    """A stream state ``read_run`` works for."""

    done: bool
    learner: Learner | None

    def hot_entry(self, wire: int) -> Entry | None:
        """The open call at a wire index when a fragment for it is only a chunk; else None."""

    def hot_feed(self, data: bytes, event: str) -> list[StreamEvent]:
        """The general path: one SSE event's data and name."""


def read_run(reader: Reader, run: Run) -> list[StreamEvent]:
    """The events of a run of argument-fragment events (``SSEDecoder.decode_raw``): ``read``, and
    the general path for each piece it cannot vouch for."""
    split = run.template
    assert isinstance(split, Split)  # the only template a reader gives its decoder
    pieces = run.pieces
    out: list[StreamEvent] = []
    end = len(pieces)
    i = read(split, pieces, 0, reader.hot_entry, out)
    while i < end:
        out += reader.hot_feed(split.payload(pieces[i]), split.event)
        if reader.done:
            break
        learned = reader.learner.split if reader.learner is not None else None
        if learned is not None and learned.prefix == split.prefix and learned.suffix == split.suffix:
            split = learned  # learned from that piece (a new call's index): it reads the rest of the run
        i = read(split, pieces, i + 1, reader.hot_entry, out)
    return out


def read(
    split: Split,
    pieces: list[bytes],
    start: int,
    entry_for: Callable[[int], Entry | None],
    out: list[StreamEvent],
) -> int:
    """Read ``pieces[start:]`` into ``out`` (a ``ToolCallChunk`` per non-empty fragment, which is
    also appended to its call's buffer) up to the first piece it cannot vouch for; return that
    piece's position (``len(pieces)`` when all were read). ``entry_for(wire index)`` gives the open
    call at that index, or None when the general path must decide.

    Pieces are read ``BATCH`` at a time with ``map`` (C loops, no Python code per piece) when every
    piece of the batch reads; otherwise piece by piece up to the one that does not (so a piece that
    does not read costs at most one batch, however long the run)."""
    end = len(pieces)
    while start < end:
        stop = min(end, start + BATCH)
        if split.tails or not _read_batch(split, pieces[start:stop], entry_for, out):
            i = _read_pieces(split, pieces, start, stop, entry_for, out)
            if i < stop:
                return i
        start = stop
    return end


BATCH = 512
"""Pieces ``read`` hands to one ``map`` pass."""


def _read_pieces(
    split: Split,
    pieces: list[bytes],
    start: int,
    end: int,
    entry_for: Callable[[int], Entry | None],
    out: list[StreamEvent],
) -> int:
    """``read`` of ``pieces[start:end]`` one piece at a time."""
    loads = orjson.loads
    wire, mid, indexes, tails = split.wire, split.mid, split.indexes, split.tails
    entries: dict[bytes, Entry] = {}
    for i in range(start, end):
        piece = pieces[i]
        if wire is None:
            digits, found, piece = piece.partition(mid)
            index = indexes.get(digits) if found else None
        else:
            digits, index = b"", wire
        entry = entries.get(digits)
        if entry is None:
            if index is None or (entry := entry_for(index)) is None:
                return i
            entries[digits] = entry
        if tails:
            n = split.tail_len(piece)
            if n < 0:
                return i
            piece = piece[: len(piece) - n]
        try:
            text = loads(piece)
        except orjson.JSONDecodeError:
            return i
        if text.__class__ is not str:
            return i
        if text:
            entry[1].append(text)
            event: ToolCallChunk = _new(ToolCallChunk)
            _SET_ID(event, entry[0])
            _SET_TEXT(event, text)
            _SET_TYPE(event, _CHUNK)
            out.append(event)
    return end


_TOKEN = itemgetter(2)
_DIGITS = itemgetter(0)


def _read_batch(
    split: Split, batch: list[bytes], entry_for: Callable[[int], Entry | None], out: list[StreamEvent]
) -> bool:
    """All of ``batch`` with ``map`` when every piece reads (then True); else nothing (False)."""
    loads = orjson.loads
    entry: Entry | None = None
    digits: list[bytes] | None = None
    try:
        if split.wire is not None:  # every piece is a string token of the call at this index
            entry = entry_for(split.wire)
            if entry is None:
                return False
            texts = list(map(loads, batch))
        else:  # [index digits, MID, string token] each
            parts = list(map(bytes.partition, batch, repeat(split.mid)))
            digits = list(map(_DIGITS, parts))
            texts = list(map(loads, map(_TOKEN, parts)))
            if not all(map(bytes.__len__, map(_MID, parts))):
                return False
    except orjson.JSONDecodeError:
        return False
    if set(map(type, texts)) != {str} or "" in texts:  # not all strings; empty ones make no event
        return False
    n = len(texts)
    ids: Iterator[str]
    if entry is not None:
        call_id, buffer = entry
        buffer += texts
        ids = repeat(call_id, n)
    else:
        assert digits is not None
        calls: dict[bytes, Entry] = {}
        for key in set(digits):
            index = split.indexes.get(key)
            found = entry_for(index) if index is not None else None
            if found is None:
                return False
            calls[key] = found
        deque(map(list.append, map(_BUFFER, map(calls.__getitem__, digits)), texts), 0)
        ids = map(_CALL_ID, map(calls.__getitem__, digits))
    events: list[ToolCallChunk] = list(map(_new, repeat(ToolCallChunk, n)))
    deque(map(_SET_ID, events, ids), 0)
    deque(map(_SET_TEXT, events, texts), 0)
    deque(map(_SET_TYPE, events, repeat(_CHUNK, n)), 0)
    out += events
    return True


_MID = itemgetter(1)
_CALL_ID = itemgetter(0)
_BUFFER = itemgetter(1)


def _split(
    payload: bytes,
    parsed: Any,
    index_path: Sequence[str | int],
    text_path: Sequence[str | int],
    keys: tuple[bytes, bytes],
) -> tuple[bytes, bytes, bytes, bytes] | None:
    """``(HEAD, digits, MID, TAIL)`` of ``payload``, checked by probes; None when not found."""
    if b"\n" in payload or b"\r" in payload:  # one data line only: a template cannot span lines
        return None
    index = _get(parsed, index_path)
    text = _get(parsed, text_path)
    if type(index) is not int or index < 0 or type(text) is not str:
        return None
    index_key, text_key = keys
    digits = str(index).encode()
    t = payload.find(text_key)
    while t >= 0:
        start = _skip_spaces(payload, t + len(text_key))
        end = _string_end(payload, start)
        if end is not None:
            i = payload.rfind(index_key, 0, t)
            while i >= 0:
                a = _skip_spaces(payload, i + len(index_key))
                b = a + len(digits)
                if payload[a:b] == digits and not payload[b : b + 1].isdigit():
                    head, mid, tail = payload[:a], payload[b:start], payload[end:]
                    if _probes_agree(head, mid, tail, parsed, index_path, text_path):
                        return head, digits, mid, tail
                i = payload.rfind(index_key, 0, i)
        t = payload.find(text_key, t + 1)
    return None


def _skip_spaces(payload: bytes, at: int) -> int:
    while payload[at : at + 1] == b" ":  # separators=(", ", ": ") and the like
        at += 1
    return at


def _string_end(payload: bytes, start: int) -> int | None:
    """The end of the JSON string token starting at ``start`` (after its closing quote)."""
    if payload[start : start + 1] != b'"':
        return None
    q = start
    while True:
        q = payload.find(b'"', q + 1)
        if q < 0:
            return None
        k = q - 1
        while payload[k] == 0x5C:  # backslashes before the quote: an odd count escapes it
            k -= 1
        if (q - 1 - k) % 2 == 0:
            return q + 1


_PROBES = ((7, 'é"\\\n\u2028x'), (12, ""), (0, "\U0001f600 {"), (305, "}"))


def _probes_agree(
    head: bytes,
    mid: bytes,
    tail: bytes,
    parsed: Any,
    index_path: Sequence[str | int],
    text_path: Sequence[str | int],
) -> bool:
    """Other indexes and strings put in the split payload parse as ``parsed`` with them put in."""
    for index, text in _PROBES:
        want = copy.deepcopy(parsed)
        _put(want, index_path, index)
        _put(want, text_path, text)
        try:
            got = orjson.loads(head + str(index).encode() + mid + orjson.dumps(text) + tail)
        except orjson.JSONDecodeError:
            return False
        if got != want or _get(got, text_path).__class__ is not str or _get(got, index_path).__class__ is not int:
            return False
    return True


def _get(value: Any, path: Sequence[str | int]) -> Any:
    for step in path:
        if isinstance(step, int):
            if type(value) is not list or len(value) <= step:
                return None
        elif type(value) is not dict or step not in value:
            return None
        value = value[step]
    return value


def _put(value: Any, path: Sequence[str | int], new: Any) -> None:
    for step in path[:-1]:
        value = value[step]
    value[path[-1]] = new
