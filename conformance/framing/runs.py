"""Fast reading of runs of same-shape SSE events: the argument fragments of streamed tool calls.

Used by the ``openai_chat`` and ``anthropic`` adapters when their ``stream_from_wire`` is given a
``RunPolicy`` (the default ``FAST``; ``runs=None`` reads every event the general way): their
``SSEDecoder`` counts the bytes of the stream and, once ``RunPolicy.warmup`` of them have come in,
has the adapter make the stream's ``RunReader`` (``SSEDecoder(start=..., after=warmup)``).

Nearly every event of a long streamed tool call is one argument fragment for a call that is
already open (``choices[0].delta.tool_calls[0].function.arguments``; Anthropic
``input_json_delta``), and such events differ only in the fragment, the call's wire index and, for
some servers, padding at the end. ``RunReader.learn`` splits the payload of such an event, read
by the general path, into

    HEAD | index digits | MID | the fragment as a JSON string | TAIL

and checks the split by parsing probes built from it (other indexes; strings with escapes, an
emoji, nothing) against the parsed payload with those values put in: a payload shape it does not
understand gets no template. The decoder then hands over runs of events ``prefix + piece +
suffix`` (``framing.Run``). ``RunReader.read_run`` turns each piece whose index digits and TAIL
were seen before and whose string parses (``orjson.loads``) into what the general path would have
made of it: by the JSON grammar, its payload is the learned one with those two values replaced.
The adapter (``RunSink``) records the fragments on their calls and builds the ``ToolCallChunk``s
with their constructor, or says that the general path must decide; anything else goes to the
general path as its exact payload.

Learning pays only on long runs of one shape (``benchmarks/README.md`` has the measurements): a
stream shorter than ``warmup`` bytes makes no reader (until then the decoder only counts bytes, and
the adapter does what it does without a policy); the shape is looked for only once two fragment
events in a row agree on every field around the call, so a stream whose events differ by a nonce
(OpenAI's ``obfuscation`` field) makes no template and stops looking after ``tries`` such events in
a row.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import repeat
from operator import itemgetter
from typing import Any, Protocol

import orjson

from conformance.framing import Run
from conformance.model import StreamEvent

__all__ = ["FAST", "RunPolicy", "RunReader", "RunSink", "Split"]


@dataclass(frozen=True, kw_only=True)
class RunPolicy:
    """When a stream's ``RunReader`` tries to read runs of fragments fast."""

    warmup: int = 16384
    """Bytes of the stream read the general way before its ``RunReader`` is made: a shorter stream
    makes none, and until then the decoder only counts the bytes of each chunk (the rest of the work
    is the general path's)."""
    tries: int = 2
    """Failed learns in a row (no piece read in between) after which the stream stays general: an
    event whose fields around the call differ from the previous one's (a nonce in every event), or
    whose shape is not found."""
    budget: int = 32
    """Learns one stream may make (new calls, tails, heads) at most."""
    batch: int = 512
    """Pieces read by one ``map`` pass (a piece that does not read costs at most one batch)."""


FAST = RunPolicy()
"""The policy the adapters use unless told otherwise."""

_MAX_TAILS = 8
_STRUCTURAL = frozenset(b"{}[],: \t")


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


class RunSink(Protocol):
    """The adapter's stream state, as ``RunReader.read_run`` uses it."""

    @property
    def done(self) -> bool:
        """The stream ended (an error): nothing more is read."""

    def run_chunks(self, wires: int | list[int], texts: list[str]) -> Sequence[StreamEvent] | None:
        """The events of non-empty fragments ``texts`` of the open calls at wire index ``wires``
        (one index for all, or one per text), recorded on those calls; None, with nothing recorded,
        when the general path must decide (a call not open, or not one that takes plain chunks)."""

    def run_general(self, event: str, data: bytes) -> list[StreamEvent]:
        """The general path: one SSE event's name and data."""


class RunReader:
    """What one stream learned about its argument-fragment events (see the module docstring),
    and the reading of runs of them. The decoder cuts runs with ``template``.

    ``index_path``/``text_path`` locate the call's wire index and the fragment in a parsed payload;
    ``keys`` are their JSON keys (``b'"index":'``, ``b'"arguments":'``). The index of the call being
    streamed goes into the template's prefix (one template per call, relearned when the next call
    starts) while the stream sends its calls one after another, as OpenAI does; once an index comes
    back after another one (interleaved calls), pieces carry their index digits instead.
    ``per_index`` keeps one template per call however the events come (on Anthropic's wire they
    never interleave).
    """

    __slots__ = (
        "budget",
        "event",
        "frame",
        "head",
        "idle",
        "index_path",
        "indexes",
        "interleaved",
        "keys",
        "last",
        "learning",
        "mid",
        "off",
        "per_index",
        "policy",
        "tails",
        "template",
        "text_path",
    )

    def __init__(
        self,
        policy: RunPolicy,
        index_path: Sequence[str | int],
        text_path: Sequence[str | int],
        keys: tuple[bytes, bytes],
        *,
        per_index: bool,
    ) -> None:
        self.policy = policy
        self.index_path = index_path
        self.text_path = text_path
        self.keys = keys
        self.per_index = per_index
        self.learning = True
        """Not given up: the adapter calls ``learn`` for plain fragments."""
        self.off = False
        self.frame: list[Any] | None = None
        """``_frame`` of the last payload learned from (the rest is set at that first look: most
        streams are short and never look)."""
        self.template: Split | None = None
        """How the decoder cuts runs (``framing.RunTemplate``), once there is one."""

    def _begin(self) -> None:
        self.budget = self.policy.budget
        self.idle = 0
        """Failed learns since a piece was last read fast."""
        self.event = ""
        self.head = b""
        self.mid = b""
        self.indexes: dict[bytes, int] = {}
        self.tails: list[bytes] = []
        self.last = b""
        self.interleaved = False
        """An index came back after another one: calls interleave, pieces carry their index."""

    def arrived(self, size: int) -> bool:
        """``size`` more bytes of the stream came in (``framing.RunSource``, asked by the decoder
        for each chunk once the reader is made): whether to watch them for runs (not given up)."""
        return self.learning or self.template is not None

    def learn(self, event: str, payload: bytes, parsed: Any) -> None:
        """Learn from an event the general path read as one fragment of an open call and nothing
        else; ``template`` changes when that taught something new."""
        if self.off or self._known(payload):
            return
        frame = self._frame(parsed)
        if frame != self.frame:  # the first look, or fields besides the call differ (a nonce?)
            if self.frame is None:
                self._begin()
            else:
                self._tried()
            self.frame = frame
            return
        self.budget -= 1
        found = _split(payload, parsed, self.index_path, self.text_path, self.keys) if self.budget >= 0 else None
        if found is None:
            self._tried()
            return
        head, digits, mid, tail = found
        if (head, mid, event) != (self.head, self.mid, self.event):
            self.head, self.mid, self.event = head, mid, event
            self.indexes.clear()
            self.tails.clear()
            self.interleaved = False
            self.template = None
        if (
            self.template is not None
            and digits in self.indexes
            and tail in self.tails
            and (digits == self.last or not self._per_call())
        ):
            return  # nothing new: the decoder split that event apart for another reason
        if digits != self.last and digits in self.indexes:
            self.interleaved = True
        self.indexes[digits] = int(digits)
        if tail not in self.tails:
            if len(self.tails) >= _MAX_TAILS:
                self.tails.pop()
            self.tails.insert(0, tail)
        self.last = digits
        self.template = self._make_split()

    def _frame(self, parsed: Any) -> list[Any]:
        """The values of the payload's top-level fields but the ones holding the fragment and the
        index: the same in every event of a run (cheaper to compare than finding the shape)."""
        skip = (self.text_path[0], self.index_path[0])
        return [v for k, v in parsed.items() if k not in skip] if type(parsed) is dict else []

    def _tried(self) -> None:
        """One more failed learn without a piece read since the last one: past ``tries`` (or the
        budget), the stream stays on the general path."""
        self.idle += 1
        if self.idle > self.policy.tries or self.budget < 0:
            self.off = True
            self.learning = False
            self.template = None

    def _per_call(self) -> bool:
        """One template per call (its index in the prefix), rather than index digits in every piece."""
        return self.per_index or not self.interleaved

    def _known(self, payload: bytes) -> bool:
        """The current template reads this payload already (the decoder handed it over on its own,
        as the first event of a read, or the general path had to decide for its call)."""
        split = self.template
        if split is None or not payload.startswith(split.data_head):
            return False
        rest = payload[len(split.data_head) :]
        if split.wire is None:
            digits, found, rest = rest.partition(split.mid)
            if not found or digits not in split.indexes:
                return False
        return rest.endswith(split.suffix) if split.suffix else split.tail_len(rest) >= 0

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

    def read_run(self, sink: RunSink, run: Run) -> list[StreamEvent]:
        """The events of a run of argument-fragment events (``SSEDecoder.decode_raw``): the pieces
        this reader can vouch for read fast, each other piece through the general path."""
        split = run.template
        assert isinstance(split, Split)  # the only template this reader gives its decoder
        pieces = run.pieces
        out: list[StreamEvent] = []
        end = len(pieces)
        i = self._read(split, pieces, 0, sink, out)
        while i < end:
            out += sink.run_general(split.event, split.payload(pieces[i]))
            if sink.done:
                break
            learned = self.template
            if learned is not None and learned.prefix == split.prefix and learned.suffix == split.suffix:
                split = learned  # learned from that piece (a new call's index): it reads the rest of the run
            i = self._read(split, pieces, i + 1, sink, out)
        return out

    def _read(self, split: Split, pieces: list[bytes], start: int, sink: RunSink, out: list[StreamEvent]) -> int:
        """Read ``pieces[start:]`` into ``out`` up to the first piece it cannot vouch for; return
        that piece's position (``len(pieces)`` when all were read). Pieces are read ``batch`` at a
        time with ``map`` when every piece of the batch reads; otherwise piece by piece."""
        end = len(pieces)
        batch = self.policy.batch
        begin = start
        while start < end:
            stop = min(end, start + batch)
            if split.tails or not _read_batch(split, pieces[start:stop], sink, out):
                i = _read_pieces(split, pieces, start, stop, sink, out)
                if i < stop:
                    start = i
                    break
            start = stop
        if start > begin:
            self.idle = 0
        return start


def _read_pieces(split: Split, pieces: list[bytes], start: int, end: int, sink: RunSink, out: list[StreamEvent]) -> int:
    """``RunReader._read`` of ``pieces[start:end]`` one piece at a time."""
    loads = orjson.loads
    wire, mid, indexes, tails = split.wire, split.mid, split.indexes, split.tails
    for i in range(start, end):
        piece = pieces[i]
        if wire is None:
            digits, found, piece = piece.partition(mid)
            index = indexes.get(digits) if found else None
            if index is None:
                return i
        else:
            index = wire
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
            events = sink.run_chunks(index, [text])
            if events is None:
                return i
            out += events
    return end


_TOKEN = itemgetter(2)
_DIGITS = itemgetter(0)
_MID = itemgetter(1)


def _read_batch(split: Split, batch: list[bytes], sink: RunSink, out: list[StreamEvent]) -> bool:
    """All of ``batch`` with ``map`` when every piece reads (then True); else nothing (False)."""
    loads = orjson.loads
    wires: int | list[int]
    try:
        if split.wire is not None:  # every piece is a string token of the call at this index
            wires = split.wire
            texts = list(map(loads, batch))
        else:  # [index digits, MID, string token] each
            parts = list(map(bytes.partition, batch, repeat(split.mid)))
            if not all(map(bytes.__len__, map(_MID, parts))):
                return False
            texts = list(map(loads, map(_TOKEN, parts)))
            digits = list(map(_DIGITS, parts))
            if not split.indexes.keys() >= set(digits):
                return False
            wires = list(map(split.indexes.__getitem__, digits))
    except orjson.JSONDecodeError:
        return False
    if set(map(type, texts)) != {str} or "" in texts:  # not all strings; empty ones make no event
        return False
    events = sink.run_chunks(wires, texts)
    if events is None:
        return False
    out += events
    return True


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
    index0, text0 = _get(parsed, index_path), _get(parsed, text_path)
    for index, text in _PROBES:
        try:
            got = orjson.loads(head + str(index).encode() + mid + orjson.dumps(text) + tail)
        except orjson.JSONDecodeError:
            return False
        got_index, got_text = _get(got, index_path), _get(got, text_path)
        if got_text.__class__ is not str or got_text != text or got_index.__class__ is not int or got_index != index:
            return False
        _put(got, index_path, index0)  # the rest must be the payload's own
        _put(got, text_path, text0)
        if got != parsed:
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
