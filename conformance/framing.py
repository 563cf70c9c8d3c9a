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
from typing import NamedTuple

__all__ = ["JSONArrayDecoder", "NDJSONDecoder", "SSEDecoder", "SSEEvent"]

_LINE_SPLIT = re.compile(r"\r\n|\r|\n")


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


class SSEDecoder:
    """Incremental ``text/event-stream`` decoder: bytes in, ``SSEEvent`` out."""

    __slots__ = ("_data", "_event", "_last_id", "_pending", "_retry", "_skip_lf", "_started")

    def __init__(self) -> None:
        self._pending: list[bytes] = []
        self._skip_lf = False
        self._started = False
        self._data: list[str] = []
        self._event = ""
        self._last_id: str | None = None
        self._retry: int | None = None

    def decode(self, chunk: bytes) -> list[SSEEvent]:
        """Feed bytes; return the events completed by them."""
        if not chunk:
            return []
        if self._skip_lf:
            self._skip_lf = False
            if chunk[:1] == b"\n":
                chunk = chunk[1:]
                if not chunk:
                    return []
        cut = max(chunk.rfind(b"\n"), chunk.rfind(b"\r"))
        if cut < 0:
            self._pending.append(chunk)
            return []
        if self._pending:
            self._pending.append(chunk[: cut + 1])
            complete = b"".join(self._pending)
            self._pending.clear()
        else:
            complete = chunk[: cut + 1]
        if cut + 1 < len(chunk):
            self._pending.append(chunk[cut + 1 :])
        elif chunk[cut] == 0x0D:  # a CR at the very end: a following LF belongs to it
            self._skip_lf = True
        text = complete.decode("utf-8", errors="replace")
        if not self._started:
            self._started = True
            if text.startswith("\ufeff"):
                text = text[1:]
        lines = _LINE_SPLIT.split(text) if "\r" in text else text.split("\n")
        lines.pop()  # text ends with a terminator: the last item is always ""
        return self._lines(lines)

    def flush(self) -> list[SSEEvent]:
        """End of stream: read a last unterminated line and dispatch a pending event."""
        lines: list[str] = []
        if self._pending:
            text = b"".join(self._pending).decode("utf-8", errors="replace")
            self._pending.clear()
            if not self._started and text.startswith("\ufeff"):
                text = text[1:]
            self._started = True
            lines.append(text)
        lines.append("")
        return self._lines(lines)

    def _lines(self, lines: list[str]) -> list[SSEEvent]:
        events: list[SSEEvent] = []
        data = self._data
        for line in lines:
            if not line:
                if data:
                    events.append(SSEEvent(self._event, "\n".join(data), self._last_id, self._retry))
                    data.clear()
                self._event = ""
                self._retry = None
                continue
            if line.startswith("data:"):
                value = line[5:]
                data.append(value[1:] if value.startswith(" ") else value)
                continue
            if line[0] == ":":
                continue
            name, sep, value = line.partition(":")
            if sep and value.startswith(" "):
                value = value[1:]
            if name == "event":
                self._event = value
            elif name == "data":  # "data" with no colon: an empty data line
                data.append(value)
            elif name == "id":
                if "\0" not in value:
                    self._last_id = value
            elif name == "retry" and value.isascii() and value.isdigit():
                # ASCII digits only (WHATWG); str.isdigit alone accepts "²" (int() then raises) and "١٢".
                self._retry = int(value)
        return events


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
