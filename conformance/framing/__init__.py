"""Incremental stream framing: Server-Sent Events, NDJSON and streamed JSON arrays.

Each decoder is a small object with ``decode(chunk) -> list`` and ``flush() -> list``
(after ``httpx/_decoders.py``). Chunks may be cut anywhere, including inside a UTF-8 code point
or between the ``\\r`` and ``\\n`` of a CRLF: bytes are decoded only once a whole line is in, and a
line terminator is always ASCII, so a code point is never split. Cost is linear in the input:
a partial line is kept as a list of pieces and joined once, when its terminator arrives.

SSE follows the WHATWG ``text/event-stream`` parsing rules (LF, CR and CRLF line ends; ``event``,
``data``, ``id`` and ``retry`` fields; ``:`` comments; multi-line data joined with ``\\n``; a
leading BOM dropped) with one deliberate leniency: ``flush()`` dispatches a final event that
lacks its closing blank line instead of discarding it, so a body whose last event was not
terminated is still read (real recordings end that way; whether its JSON is complete is for the
adapter to judge).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from typing import NamedTuple, Protocol, TypeAlias, cast

__all__ = [
    "JSONArrayDecoder",
    "NDJSONDecoder",
    "RawEvent",
    "Run",
    "RunSource",
    "RunStart",
    "RunTemplate",
    "SSEDecoder",
    "SSEEvent",
    "line_pieces",
]

_BOM = b"\xef\xbb\xbf"
_LINE_SPLIT = re.compile(rb"\r\n|\r|\n")
_WINDOW = 1 << 17
"""Bytes ``decode_raw`` reads at once when a chunk is large (cut at a blank line), so that events
leave early and the working set stays small."""

RawEvent: TypeAlias = "tuple[str, bytes, str | None, int | None]"
"""An event as ``SSEDecoder.decode_raw`` gives it: ``(event, data, id, retry)`` with ``data`` as bytes."""


class SSEEvent(NamedTuple):
    """One dispatched server-sent event."""

    event: str
    """The ``event:`` name, or ``""`` when the event had none (the spec's ``message``)."""
    data: str
    """The ``data:`` lines joined with ``\\n``."""
    id: str | None = None
    """The last event id seen so far (it persists across events, as the spec says)."""
    retry: int | None = None
    """A ``retry:`` reconnection time in ms, when this event carried one."""


class RunTemplate(Protocol):
    """The shape of a frequent event, given by an adapter (see ``SSEDecoder``)."""

    @property
    def prefix(self) -> bytes:
        """``event: NAME\\n`` or nothing, then ``data: `` (with its space), then a payload head."""

    @property
    def suffix(self) -> bytes:
        """The payload's fixed end (no line break), or ``b""``."""


class RunSource(Protocol):
    """Gives the decoder its current template (``framing.runs.RunReader``, per stream)."""

    @property
    def template(self) -> RunTemplate | None:
        """The shape to gather runs of, or None."""

    def arrived(self, size: int) -> bool:
        """``size`` more bytes came in: whether a template may be set while they are read (else
        the decoder reads them as if it had no source)."""


class RunStart(Protocol):
    """Makes a stream's ``RunSource`` once the decoder has read its warm-up (``SSEDecoder(start=...)``):
    a stream that stays shorter makes none."""

    def start_runs(self) -> RunSource:
        """The source of templates for the rest of the stream (called once)."""


class Run(NamedTuple):
    """Consecutive events ``template.prefix + piece + template.suffix`` then a blank line, each
    ``piece`` free of line breaks: each is the event ``(NAME or "", payload head + piece + suffix)``."""

    template: RunTemplate
    pieces: list[bytes]


class SSEDecoder:
    """Incremental ``text/event-stream`` decoder: bytes in, ``SSEEvent`` out.

    It works on bytes, one block (the lines between two blank lines) at a time: a block that is one
    ``data:`` line, or an ``event:`` line then a ``data:`` line, is sliced without a per-line loop;
    anything else (comments, ``id``/``retry``, multi-line data, lone CRs, an event still open at the
    end of a chunk) goes line by line. CRLF becomes LF first. ``decode`` decodes the data to text;
    ``decode_raw`` (for adapters) leaves it as bytes, e.g. for ``orjson.loads``.

    ``start`` (``decode_raw`` only): what makes, once ``after`` bytes have come in, the stream's
    source of templates (``RunSource``; ``framing.runs.RunReader``), from the chunk that reaches it
    on; until then the decoder only counts the bytes of each chunk, and a shorter stream makes no
    source at all (``framing.runs.RunPolicy.warmup``). The source gives the shape of a frequent
    event, as a prefix and a suffix (``RunTemplate``), when it has one. ``decode_raw`` then splits
    the text at every ``suffix``, blank line, ``prefix`` and hands over each run of consecutive
    events of that shape as one ``Run`` of the pieces between, without looking at them one by one;
    the caller reads each piece or, when it cannot vouch for one, rebuilds its payload. A template
    that changes while the items of a chunk are read applies from the next run on.
    """

    __slots__ = (
        "_data",
        "_event",
        "_last_id",
        "_pending",
        "_retry",
        "_runs",
        "_skip_lf",
        "_splitter",
        "_start",
        "_started",
        "_wait",
    )

    def __init__(self, *, start: RunStart | None = None, after: int = 0) -> None:
        self._pending: list[bytes] = []
        self._skip_lf = False
        self._started = False
        self._data: list[bytes] = []
        self._event = ""
        self._last_id: str | None = None
        self._retry: int | None = None
        self._runs: RunSource | None = None
        self._start = start
        self._wait = after
        self._splitter: tuple[RunTemplate | None, Callable[[bytes], list[bytes]]] = (None, _unsplit)

    def decode(self, chunk: bytes) -> list[SSEEvent]:
        """Feed bytes; return the events completed by them."""
        events = cast("Iterator[RawEvent]", self._decode(chunk, None))  # no runs without a source
        return [SSEEvent(e, d.decode("utf-8", "replace"), i, r) for e, d, i, r in events]

    def flush(self) -> list[SSEEvent]:
        """End of stream: read a last unterminated line and dispatch a pending event."""
        return [SSEEvent(e, d.decode("utf-8", "replace"), i, r) for e, d, i, r in self.flush_raw()]

    def decode_raw(self, chunk: bytes) -> Iterator[RawEvent | Run]:
        """``decode`` for adapters: lazy, ``data`` as bytes, runs of template events as ``Run``."""
        if self._start is not None:
            self._wait -= len(chunk)
            if self._wait <= 0:
                self._runs = self._start.start_runs()
                self._start = None
        return self._decode(chunk, self._runs)

    def flush_raw(self) -> list[RawEvent]:
        """``flush`` with ``data`` as bytes."""
        lines: list[bytes] = []
        if self._pending:
            rest = b"".join(self._pending)
            self._pending.clear()
            if not self._started and rest.startswith(_BOM):
                rest = rest[3:]
            self._started = True
            lines.append(rest)
        lines.append(b"")
        return self._lines(lines)

    def _decode(self, chunk: bytes, runs: RunSource | None) -> Iterator[RawEvent | Run]:
        if not chunk:
            return
        if runs is not None and not runs.arrived(len(chunk)):
            runs = None
        if self._skip_lf:
            self._skip_lf = False
            if chunk[:1] == b"\n":
                chunk = chunk[1:]
                if not chunk:
                    return
        cut = max(chunk.rfind(b"\n"), chunk.rfind(b"\r"))
        if cut < 0:
            self._pending.append(chunk)
            return
        if self._pending:
            self._pending.append(chunk[: cut + 1])
            text = b"".join(self._pending)
            self._pending.clear()
        else:
            text = chunk[: cut + 1]
        if cut + 1 < len(chunk):
            self._pending.append(chunk[cut + 1 :])
        elif chunk[cut] == 0x0D:  # a CR at the very end: a following LF belongs to it
            self._skip_lf = True
        if not self._started:
            self._started = True
            if text.startswith(_BOM):
                text = text[3:]
        if b"\r" in text:
            if not (self._data or self._event or self._retry is not None):
                events = self._crlf_data_lines(text)
                if events is not None:
                    yield from events
                    return
            lf = text.replace(b"\r\n", b"\n")
            if b"\r" in lf:  # lone CRs (or a CR whose LF is still to come): line by line
                lines = _LINE_SPLIT.split(text)
                lines.pop()  # text ends with a terminator: the last item is always b""
                yield from self._lines(lines)
                return
            text = lf
        if self._data or self._event or self._retry is not None:  # an event is open: finish it line by line
            if text[0] == 0x0A:
                end = 1
            else:
                end = text.find(b"\n\n") + 2
                if end == 1:  # no blank line: every line belongs to the open event
                    lines = text.split(b"\n")
                    lines.pop()
                    yield from self._lines(lines)
                    return
            lines = text[:end].split(b"\n")
            lines.pop()
            yield from self._lines(lines)
            if end == len(text):
                return
            text = text[end:]
        # text: LF line ends, no event open at its start, a line end at its end
        size = len(text)
        pos = 0
        while size - pos > _WINDOW:
            stop = text.find(b"\n\n", pos + _WINDOW) + 2
            if stop == 1:
                break
            yield from self._blocks(text[pos:stop], runs)
            pos = stop
        yield from self._blocks(text[pos:] if pos else text, runs)

    def _blocks(
        self, text: bytes, runs: RunSource | None, current: RunTemplate | None = None
    ) -> Iterator[RawEvent | Run]:
        """``text``: LF line ends, starting where no event is open, ending with a line end. With
        ``runs``, a template other than ``current`` (set before or while it is read) takes over."""
        if runs is not None and (template := runs.template) is not None and template is not current:
            yield from self._read_runs(text, runs, template)
            return
        blocks = text.split(b"\n\n")
        rest = blocks.pop()  # after the last blank line: lines of an event still open, or b""
        pos = 0
        for block in blocks:
            if runs is not None and runs.template is not current:  # learned from an event of this text
                if (template := runs.template) is not None:
                    yield from self._read_runs(text[pos:], runs, template)
                    return
                current = None
            pos += len(block) + 2
            if block[:5] == b"data:" and b"\n" not in block:
                yield ("", block[6:] if block[5:6] == b" " else block[5:], self._last_id, None)
            elif block[:6] == b"event:" and _event_data(block):
                nl = block.index(b"\n")
                name = block[7:nl] if block[6:7] == b" " else block[6:nl]
                data = block[nl + 7 :] if block[nl + 6 : nl + 7] == b" " else block[nl + 6 :]
                yield (name.decode("utf-8", "replace"), data, self._last_id, None)
            elif block:
                lines = block.split(b"\n")
                lines.append(b"")
                yield from self._lines(lines)
            # an empty block is a second blank line in a row: nothing to dispatch
        if rest:
            lines = rest.split(b"\n")
            lines.pop()
            yield from self._lines(lines)

    def _read_runs(self, text: bytes, runs: RunSource, template: RunTemplate) -> Iterator[RawEvent | Run]:
        """``_blocks`` with the events ``prefix + piece + suffix`` gathered into runs. When the
        template changes meanwhile, the rest of ``text`` is split again with the new one."""
        prefix, suffix = template.prefix, template.suffix
        end = suffix + b"\n\n"
        if self._splitter[0] is not template:
            # A compiled literal: re searches with a table made once; bytes.split would prepare
            # its (long) needle again for every piece.
            self._splitter = (template, re.compile(re.escape(end + prefix)).split)
        pieces = self._splitter[1](text)
        seps = len(pieces) - 1
        if not seps:
            yield from self._blocks(text, runs, template)
            return
        first, last = pieces[0], pieces[-1]
        cursor = 0  # where the events not yet handed over start
        if first.startswith(prefix):  # the text opens with such an event
            pieces[0] = first[len(prefix) :]
        else:
            del pieces[0]
            yield from self._blocks(first + end, runs, template)
            cursor = len(first) + len(end)
            if runs.template is not template:
                yield from self._blocks(text[cursor:], runs)
                return
        closes = last.endswith(end) and b"\n" not in last[: -len(end)]  # and closes with one
        if closes:
            pieces[-1] = last[: -len(end)]
        else:
            del pieces[-1]
        fixed = len(prefix) + len(end)  # the bytes of an event besides its piece
        if b"\n" not in b"".join(pieces):  # each piece is one event
            if pieces:
                yield Run(template, pieces)
                cursor += sum(map(len, pieces)) + fixed * len(pieces)
                if runs.template is not template:
                    yield from self._blocks(text[cursor:], runs)
                    return
            pieces = []
        run: list[bytes] = []
        for piece in pieces:
            if b"\n" not in piece:
                run.append(piece)
                cursor += len(piece) + fixed
                continue
            if run:
                yield Run(template, run)
                run = []
                if runs.template is not template:
                    yield from self._blocks(text[cursor:], runs)
                    return
            yield from self._blocks(prefix + piece + end, runs, template)  # more than one event: the general way
            cursor += len(piece) + fixed
            if runs.template is not template:
                yield from self._blocks(text[cursor:], runs)
                return
        if run:
            yield Run(template, run)
            if runs.template is not template:
                yield from self._blocks(text[cursor:], runs)
                return
        if not closes:
            yield from self._blocks(text[cursor:], runs, template)

    def _crlf_data_lines(self, text: bytes) -> list[RawEvent] | None:
        """The events of a text made only of ``data:`` lines each followed by a blank line, every
        line ended by CRLF (Gemini's framing, often one long line a chunk), read in place; None for
        any other text."""
        events: list[RawEvent] = []
        pos, size = 0, len(text)
        while pos < size:
            cr = text.find(b"\r", pos)
            if cr < 0 or text[cr : cr + 4] != b"\r\n\r\n" or text.find(b"\n", pos, cr) >= 0:
                return None
            if not text.startswith(b"data:", pos):
                return None
            start = pos + 6 if text[pos + 5 : pos + 6] == b" " else pos + 5
            events.append(("", text[start:cr], self._last_id, None))
            pos = cr + 4
        return events

    def _lines(self, lines: list[bytes]) -> list[RawEvent]:
        events: list[RawEvent] = []
        data = self._data
        for line in lines:
            if not line:
                if data:
                    events.append((self._event, b"\n".join(data), self._last_id, self._retry))
                    data.clear()
                self._event = ""
                self._retry = None
                continue
            if line.startswith(b"data:"):
                value = line[5:]
                data.append(value[1:] if value[:1] == b" " else value)
                continue
            if line[0] == 0x3A:  # ":" a comment
                continue
            name, sep, value = line.partition(b":")
            if sep and value[:1] == b" ":
                value = value[1:]
            if name == b"event":
                self._event = value.decode("utf-8", "replace")
            elif name == b"data":  # "data" with no colon: an empty data line
                data.append(value)
            elif name == b"id":
                if b"\0" not in value:
                    self._last_id = value.decode("utf-8", "replace")
            elif name == b"retry" and value.isdigit():
                # ASCII digits only (WHATWG); bytes.isdigit knows no other digits ("²", "١٢").
                self._retry = int(value)
        return events


_LINE_ENDS = frozenset((b"\n", b"\r"))


_HOLD = 4096
"""Pieces ``line_pieces`` holds before it joins them: one-byte pieces of a line with no end took
~40 bytes of memory per byte of the line (750 MB for an 8 MB stream, found by the fuzz tier)."""


def line_pieces(chunks: Iterable[bytes], *, sse: bool = False) -> Iterator[bytes]:
    """The same bytes re-cut so that every piece but the last holds a line end (``\\n`` or
    ``\\r``): chunks without one are only kept, then joined to the next piece. An NDJSON line is
    complete only at a line end, and an SSE event only at a blank line (``sse``: a one-byte line
    end right after a byte that is not one is kept too), so a decoder fed these pieces gives the
    same events, each as soon as with the chunks themselves, without a call per chunk that
    completes nothing (a stream read in small pieces; the chunk-invariance check feeds one byte at
    a time)."""
    held: list[bytes] = []
    spilled = bytearray()  # held pieces joined every _HOLD of them: a long line read byte by byte
    after_end = False  # the last byte so far is a line end
    for chunk in chunks:
        if len(chunk) == 1:  # a set lookup: ``b"\n" in chunk`` costs ~150 ns on one byte, this ~30
            if chunk not in _LINE_ENDS:
                held.append(chunk)
                after_end = False
                if len(held) >= _HOLD:
                    spilled += b"".join(held)
                    held.clear()
                continue
            if sse and not after_end:
                held.append(chunk)
                after_end = True
                continue
            after_end = True
        elif chunk[-1:] in _LINE_ENDS or b"\n" in chunk or b"\r" in chunk:  # the end first: a body ends with one
            after_end = chunk[-1] in (0x0A, 0x0D)
        else:
            if chunk:
                held.append(chunk)
                after_end = False
                if len(held) >= _HOLD:
                    spilled += b"".join(held)
                    held.clear()
            continue
        if held or spilled:
            held.append(chunk)
            chunk = b"".join(held)
            held.clear()
            if spilled:
                chunk = bytes(spilled + chunk)
                spilled.clear()
        yield chunk
    if held or spilled:
        yield bytes(spilled) + b"".join(held)


def _unsplit(text: bytes) -> list[bytes]:
    return [text]


def _event_data(block: bytes) -> bool:
    """``event:...`` then ``data:...``, nothing else."""
    nl = block.find(b"\n")
    return block[nl + 1 : nl + 6] == b"data:" and block.find(b"\n", nl + 1) < 0


class NDJSONDecoder:
    """Incremental newline-delimited JSON framing: bytes in, one ``bytes`` line per JSON value.

    Blank lines are skipped and a trailing ``\\r`` is removed; parsing is the caller's job.
    """

    __slots__ = ("_pending",)

    def __init__(self) -> None:
        self._pending: list[bytes] = []

    def decode(self, chunk: bytes) -> list[bytes]:
        cut = chunk.rfind(b"\n")
        if cut < 0:
            if chunk:
                self._pending.append(chunk)
            return []
        if self._pending:
            self._pending.append(chunk[:cut])
            complete = b"".join(self._pending)
            self._pending.clear()
        else:
            complete = chunk[:cut]
        if cut + 1 < len(chunk):
            self._pending.append(chunk[cut + 1 :])
        return [s for line in complete.split(b"\n") if (s := line.strip())]

    def flush(self) -> list[bytes]:
        rest = b"".join(self._pending).strip()
        self._pending.clear()
        return [rest] if rest else []


_ARRAY_TOKENS = re.compile(rb'[{}\[\]"\\,]')


class JSONArrayDecoder:
    """Incremental reader of one streamed top-level JSON array (``[{...}\\r\\n,\\r\\n{...}]``,
    Gemini ``:streamGenerateContent`` without ``alt=sse``): bytes in, one ``bytes`` per element.

    It tracks nesting and strings only; elements are returned unparsed. ``flush()`` returns an
    unfinished element as it stands, so the caller can report it as truncated.
    """

    __slots__ = ("_depth", "_escape", "_in_string", "_opened", "_pending", "_start")

    def __init__(self) -> None:
        self._pending = bytearray()
        self._depth = 0
        self._in_string = False
        self._escape = False
        self._opened = False
        self._start = -1

    def decode(self, chunk: bytes) -> list[bytes]:
        out: list[bytes] = []
        base = len(self._pending)
        self._pending += chunk
        buf = self._pending
        pos = base
        while pos < len(buf):
            if self._in_string:
                if self._escape:  # the byte after a backslash that ended the previous chunk
                    self._escape = False
                    pos += 1
                    continue
                m = _STRING_END.search(buf, pos)
                if m is None:
                    pos = len(buf)
                    break
                if m.group() == b"\\":
                    pos = m.end() + 1
                    if pos > len(buf):
                        self._escape = True
                    continue
                self._in_string = False
                pos = m.end()
                continue
            m = _ARRAY_TOKENS.search(buf, pos)
            if m is None:
                break
            c = m.group()
            pos = m.end()
            if c == b'"':
                self._in_string = True
            elif c in (b"{", b"["):
                if not self._opened and c == b"[":
                    self._opened = True
                    continue
                if self._depth == 0:
                    self._start = m.start()
                self._depth += 1
            elif c in (b"}", b"]"):
                if self._depth == 0:
                    continue  # the closing ] of the top-level array
                self._depth -= 1
                if self._depth == 0 and self._start >= 0:
                    out.append(bytes(buf[self._start : pos]))
                    self._start = -1
        # drop what is no longer needed
        if self._start >= 0:
            del buf[: self._start]
            self._start = 0
        else:
            buf.clear()
        return out

    def flush(self) -> list[bytes]:
        rest = bytes(self._pending).strip() if self._start >= 0 else b""
        self._pending.clear()
        return [rest] if rest else []


_STRING_END = re.compile(rb'["\\]')
