"""Reading tool calls out of model text: the small tag state machines of the prompt adapters.

A prompt adapter's model writes its calls as text (``<tool_call>{json}</tool_call>``, ``✿FUNCTION✿:
name`` / ``✿ARGS✿: {json}``). A parser here turns that text, fed in pieces of any size, into the
unified stream events:

- text outside the markers leaves at once as ``text_delta``; only a suffix that may be the start of
  a marker (``<tool_c``, ``✿FUN``, a newline before a tag) is held back until the next piece;
- text inside ``<think>...</think>`` stays text and is never parsed for calls (wire-formats.md E10;
  Qwen-Agent ``nous_fncall_prompt.py`` splits the thought off before looking for ``<tool_call>``);
- a call is captured whole and leaves as ``tool_call_start`` / ``tool_call_chunk`` /
  ``tool_call_end`` once its end marker (or the end of the reply) arrives, because its id is
  derived from its content (``synthetic_call_id(adapter, ordinal, name, arguments)``): the same call
  replayed in a later request's history gets the same id back from ``request_from_wire``;
- a call that is malformed or was never closed ends with an ``arguments_error`` and keeps its raw
  argument text (``arguments_text``: for a tag format the value after ``"arguments":``, the whole
  block kept in ``provider_details["call_text"]`` for replay); a block whose tool name cannot be
  recovered stays text (nothing is dropped).

The machine's states: ``text`` (outside any marker), ``think`` (inside ``<think>``), and the
capturing states of a format (``call`` between a tag pair; ``name`` and ``args`` after
``✿FUNCTION✿:`` / ``✿ARGS✿:``). In each state only that state's markers are looked for; the
earliest complete one wins. Decisions depend only on the characters seen, never on how they were
split, so every chunking of a reply gives the same events once adjacent text deltas are joined.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from conformance.adapters.base import CallTracker, parse_arguments, synthetic_call_id
from conformance.model import JSONObject, StreamEvent, TextDelta

__all__ = [
    "CALL_TEXT",
    "FN_ARGS",
    "FN_EXIT",
    "FN_NAME",
    "FN_RESULT",
    "THINK_CLOSE",
    "THINK_OPEN",
    "ParserFactory",
    "QwenParser",
    "ReplyParser",
    "TagParser",
    "arguments_text",
    "json_text",
    "parse_call_body",
    "parse_lenient",
]

CALL_TEXT = "call_text"
"""``ToolCall.provider_details`` key of a tag-format call that is not usable (malformed, never
closed): the text between its tags as the model wrote it, replayed verbatim in later requests
(``arguments_raw`` holds only the arguments' text)."""

THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"

FN_NAME = "✿FUNCTION✿"
FN_ARGS = "✿ARGS✿"
FN_RESULT = "✿RESULT✿"
FN_EXIT = "✿RETURN✿"


class ReplyParser(Protocol):
    """What the stream plumbing (``_prompt.py``) needs from a parser."""

    @property
    def calls(self) -> int:
        """How many calls were emitted so far."""
        ...

    def feed(self, text: str) -> list[StreamEvent]: ...

    def close(self, error: str | None = None) -> list[StreamEvent]:
        """End of the reply; ``error`` ends an open call with that arguments error."""
        ...


# --------------------------------------------------------------------------------------------
# Lenient argument parsing
# --------------------------------------------------------------------------------------------


def parse_lenient(raw: str) -> tuple[JSONObject | None, str | None]:
    """Arguments text -> ``(object, None)`` or ``(None, why)``; never raises.

    JSON first (``base.parse_arguments``), then what models commonly write instead: Python-literal
    pseudo-JSON with single quotes and ``True``/``None`` (E21; NousResearch Hermes-Function-Calling
    falls back to ``ast.literal_eval``), an object encoded once more as a JSON string, one stray
    ``}`` too many, and a trailing comment after the object (Qwen-Agent
    ``remove_trailing_comment_of_fn_args``: keep up to the last ``}``).
    """
    parsed, why = parse_arguments(raw)
    if parsed is not None:
        return parsed, None
    text = raw.strip()
    candidates = [text]
    if text.startswith("{") and (end := text.rfind("}")) > 0 and end < len(text) - 1:
        candidates.append(text[: end + 1])
    for candidate in candidates:
        value = _lenient_value(candidate)
        if isinstance(value, str):  # {"arguments": "{\"a\": 1}"}: an object sent as a JSON string
            value, _ = parse_arguments(value)
        if isinstance(value, dict):
            return value, None
    return None, why


def _lenient_value(text: str) -> Any:
    try:
        value, end = _DECODER.raw_decode(text)
    except ValueError:
        return _python_literal(text)
    rest = text[end:].strip()
    if rest and set(rest) != {"}"}:  # one object, then only stray closing braces: accepted
        return None
    return value


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")) or value != value:
        raise ValueError(text)
    return value


def _no_constant(name: str) -> Any:
    raise ValueError(name)


_DECODER = json.JSONDecoder(parse_float=_finite, parse_constant=_no_constant)
_NAMES = {"true": True, "True": True, "false": False, "False": False, "null": None, "None": None}
_MAX_LITERAL = 1_000_000


def _python_literal(text: str) -> Any:
    """A Python-literal dict/list/str/number as JSON data, or None. Parsed with ``ast`` (never
    evaluated); ``true``/``false``/``null`` are accepted next to their Python spellings."""
    if not text or len(text) > _MAX_LITERAL:
        return None
    try:
        tree = ast.parse(text, mode="eval")
        return _literal(tree.body)
    except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError):
        return None


def _literal(node: ast.AST) -> Any:
    if isinstance(node, ast.Constant) and isinstance(node.value, str | int | float | bool | type(None)):
        if isinstance(node.value, float):
            _finite(repr(node.value))
        return node.value
    if isinstance(node, ast.Name) and node.id in _NAMES:
        return _NAMES[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = _literal(node.operand)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError("a sign before a non-number")
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.Dict):
        out: dict[str, Any] = {}
        for key, value in zip(node.keys, node.values, strict=True):
            k = _literal(key) if key is not None else None
            if not isinstance(k, str):
                raise ValueError("object keys must be strings")
            out[k] = _literal(value)
        return out
    if isinstance(node, ast.List | ast.Tuple):
        return [_literal(item) for item in node.elts]
    raise ValueError(f"not a literal: {type(node).__name__}")


_NAME_RE = re.compile(r"""["']name["']\s*:\s*["']([^"'\\\n]+)["']""")


def parse_call_body(text: str) -> tuple[str, JSONObject | None, str | None]:
    """A ``{"name": ..., "arguments": {...}}`` call body -> ``(name, arguments, why)``.

    ``name`` is ``""`` when none can be recovered; ``arguments`` is None exactly when ``why`` is
    set. ``parameters`` is accepted for ``arguments`` and a missing key means no arguments; the
    arguments may be an object or an object encoded as a JSON string (what some templates send).
    """
    text = text.strip()
    parsed = _lenient_value(text) if text else None
    if not isinstance(parsed, dict):
        match = _NAME_RE.search(text)
        if parsed is not None:
            kind = "array" if isinstance(parsed, list) else type(parsed).__name__
            why = f"the call is a JSON {kind}, not an object"
        else:
            why = parse_arguments(text)[1] or "the call is not a JSON object" if text else "the call is empty"
        return (match.group(1).strip() if match else ""), None, f"malformed call: {why}"
    name = parsed.get("name")
    if not isinstance(name, str) or not name.strip():
        return "", None, "malformed call: no tool name"
    value = parsed.get("arguments", parsed.get("parameters", {}))
    if isinstance(value, str):
        return name, *parse_lenient(value)
    if isinstance(value, dict):
        return name, value, None
    kind = "array" if isinstance(value, list) else type(value).__name__
    return name, None, f"arguments are a JSON {kind}, not an object"


_ARGUMENTS_KEY = re.compile(r"""["'](?:arguments|parameters)["']\s*:\s*""")


def arguments_text(body: str) -> str:
    """The argument text of a call body whose arguments could not be read: an arguments value
    that is a string, as is; else the text after the ``"arguments":`` key without the call
    object's own closing ``}`` (the one the arguments leave unmatched); else the whole body. So
    ``{"name": "f", "arguments": {"unit": celsius}}`` keeps ``{"unit": celsius}`` and a body cut
    mid-arguments keeps the arguments as cut, as a native wire would."""
    text = body.strip()
    parsed = _lenient_value(text) if text else None
    if isinstance(parsed, dict):
        value = parsed.get("arguments", parsed.get("parameters"))
        if value is not None:
            return value if isinstance(value, str) else json_text(value)
        return text
    match = _ARGUMENTS_KEY.search(text)
    if match is None:
        return text
    rest = text[match.end() :]
    if rest.endswith("}") and _unmatched_closes(rest) > 0:
        rest = rest[:-1].rstrip()
    return rest


def _unmatched_closes(text: str) -> int:
    """``}`` minus ``{`` outside JSON strings."""
    depth = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char == "{":
            depth -= 1
        elif char == "}":
            depth += 1
    return depth


def json_text(value: Any) -> str:
    """JSON as chat templates write it (``tojson`` / ``json.dumps`` defaults, non-ASCII kept)."""
    return json.dumps(value, ensure_ascii=False)


# --------------------------------------------------------------------------------------------
# The marker machine
# --------------------------------------------------------------------------------------------


def _earliest(buffer: str, markers: Sequence[str]) -> tuple[int, str | None]:
    """The first complete marker in ``buffer`` (the longer one when two start together)."""
    best, found = len(buffer) + 1, None
    for marker in markers:
        at = buffer.find(marker)
        if at != -1 and (at < best or (at == best and found is not None and len(marker) > len(found))):
            best, found = at, marker
    return best, found


def _held(buffer: str, markers: Sequence[str]) -> int:
    """Length of the longest suffix of ``buffer`` that may still grow into a marker."""
    longest = min(len(buffer), max(len(m) for m in markers) - 1)
    for size in range(longest, 0, -1):
        tail = buffer[-size:]
        if any(m.startswith(tail) for m in markers):
            return size
    return 0


class _Machine:
    """States ``text`` / ``think`` plus the capturing states of a format; subclasses name the
    markers of each state and what a marker does."""

    def __init__(self, adapter: str) -> None:
        self._adapter = adapter
        self._buffer = ""
        self._state = "text"
        self._tracker = CallTracker()
        self._closed = False
        self._skip_newline = False  # one "\n" after a closing tag belongs to the tag

    @property
    def calls(self) -> int:
        return self._tracker.count

    def feed(self, text: str) -> list[StreamEvent]:
        if self._closed or not text:
            return []
        self._buffer += text
        events: list[StreamEvent] = []
        self._scan(events, final=False)
        return events

    def close(self, error: str | None = None) -> list[StreamEvent]:
        if self._closed:
            return []
        events: list[StreamEvent] = []
        self._scan(events, final=True)
        self._closed = True
        self._finish(events, error)
        return events

    # -- to override ---------------------------------------------------------------------

    def _markers(self) -> Sequence[str]:
        raise NotImplementedError

    def _capture(self, text: str) -> None:
        raise NotImplementedError

    def _on_marker(self, marker: str, events: list[StreamEvent]) -> None:
        raise NotImplementedError

    def _finish(self, events: list[StreamEvent], error: str | None) -> None:
        raise NotImplementedError

    def _ready(self, final: bool) -> bool:
        """False to wait for more text before scanning (Qwen's leading ``: ``)."""
        return True

    # -- shared ------------------------------------------------------------------------------

    def _scan(self, events: list[StreamEvent], *, final: bool) -> None:
        while self._buffer:
            if not self._ready(final):
                return
            if self._skip_newline:
                self._skip_newline = False
                if self._buffer.startswith("\n"):
                    self._buffer = self._buffer[1:]
                    continue
            markers = self._markers()
            at, marker = _earliest(self._buffer, markers)
            if marker is not None:
                self._content(self._buffer[:at], events)
                self._buffer = self._buffer[at + len(marker) :]
                self._on_marker(marker, events)
                continue
            cut = len(self._buffer) - (0 if final else _held(self._buffer, markers))
            self._content(self._buffer[:cut], events)
            self._buffer = self._buffer[cut:]
            return

    def _content(self, text: str, events: list[StreamEvent]) -> None:
        if not text:
            return
        if self._state in ("text", "think"):
            events.append(TextDelta(text))
        else:
            self._capture(text)

    def _think(self, marker: str, events: list[StreamEvent]) -> bool:
        """``<think>`` / ``</think>`` stay text and switch the state; True when handled."""
        if marker == THINK_OPEN and self._state == "text":
            self._state = "think"
        elif marker == THINK_CLOSE and self._state == "think":
            self._state = "text"
        else:
            return False
        events.append(TextDelta(marker))
        return True

    def _emit_call(
        self,
        events: list[StreamEvent],
        name: str,
        raw: str,
        arguments: JSONObject | None,
        why: str | None,
        details: JSONObject | None = None,
    ) -> None:
        ordinal = self._tracker.count
        call_id = synthetic_call_id(self._adapter, ordinal, name, raw)
        events.append(self._tracker.start(ordinal, call_id, name, details))
        if (chunk := self._tracker.chunk(ordinal, raw)) is not None:
            events.append(chunk)
        end = (
            self._tracker.end(ordinal, error=why)
            if why is not None
            else self._tracker.end(ordinal, arguments=arguments)
        )
        assert end is not None
        events.append(end)


class TagParser(_Machine):
    """``<open>{"name": ..., "arguments": {...}}</close>`` calls (Hermes / Qwen2.5 ``<tool_call>``,
    the generic ``<function_call>``). A newline right before an opening tag and right after a
    closing tag belongs to the tag (the templates put them there between blocks)."""

    def __init__(self, adapter: str, open_tag: str, close_tag: str) -> None:
        super().__init__(adapter)
        self._open, self._close = open_tag, close_tag
        self._text_markers = ("\n" + open_tag, open_tag, THINK_OPEN)
        self._opener = ""
        self._body: list[str] = []

    def _markers(self) -> Sequence[str]:
        if self._state == "text":
            return self._text_markers
        return (THINK_CLOSE,) if self._state == "think" else (self._close,)

    def _capture(self, text: str) -> None:
        self._body.append(text)

    def _on_marker(self, marker: str, events: list[StreamEvent]) -> None:
        if self._think(marker, events):
            return
        if self._state == "text":  # an opening tag
            self._state, self._opener, self._body = "call", marker, []
            return
        emitted = self._end_call(events, closed=True, error=None)  # the closing tag
        self._state, self._skip_newline = "text", emitted

    def _finish(self, events: list[StreamEvent], error: str | None) -> None:
        if self._state == "call":
            self._end_call(events, closed=False, error=error)
            self._state = "text"

    def _end_call(self, events: list[StreamEvent], *, closed: bool, error: str | None) -> bool:
        """Emit the captured call; False when it stayed text."""
        body = "".join(self._body)
        name, arguments, why = parse_call_body(body)
        if not name:  # not recognisable as a call: the block stays text, tags and all
            events.append(TextDelta(self._opener + body + (self._close if closed else "")))
            return False
        if error is None and not closed:
            error = f"the call was never closed (no {self._close})"
        raw = json_text(arguments) if arguments is not None else arguments_text(body)
        if error is not None:
            arguments, why = None, error
        details: JSONObject | None = {CALL_TEXT: body.strip()} if arguments is None else None
        self._emit_call(events, name, raw, arguments, why, details)
        return True


_QWEN_CALL_MARKERS = tuple(
    variant for marker in (FN_ARGS + ":", FN_NAME + ":", FN_RESULT, FN_EXIT) for variant in ("\n" + marker, marker)
)
_QWEN_TEXT_MARKERS = ("\n" + FN_NAME + ":", FN_NAME + ":", THINK_OPEN)


class QwenParser(_Machine):
    """Qwen-Agent's ``✿FUNCTION✿: name`` / ``✿ARGS✿: args`` calls (``qwen_fncall_prompt.py``
    ``postprocess_fncall_messages``): several ``✿ARGS✿:`` after one ``✿FUNCTION✿:`` are several
    calls of that tool; a call's arguments end at the next marker or at the end of the reply (the
    request stops generation at ``✿RESULT✿`` / ``✿RETURN✿``). A ``✿RESULT✿`` or ``✿RETURN✿`` the
    model wrote anyway ends the calls and, like the rest of the reply, stays text.

    ``reply=True`` (a response, not history) drops a leading ``: `` or ``:``, the end of the
    ``✿RETURN✿:`` marker the model completes when a request ended on it (Qwen-Agent does the same).
    """

    def __init__(self, adapter: str, *, reply: bool) -> None:
        super().__init__(adapter)
        self._at_start = reply
        self._name = ""
        self._parts: list[str] = []  # the name or the arguments being captured
        self._source: list[str] = []  # the raw text of the current ✿FUNCTION✿ block

    def _ready(self, final: bool) -> bool:
        if not self._at_start:
            return True
        if not final and len(self._buffer) < 2 and ": ".startswith(self._buffer):
            return False
        self._at_start = False
        self._buffer = (
            self._buffer.removeprefix(":").removeprefix(" ") if self._buffer.startswith(":") else self._buffer
        )
        return True

    def _markers(self) -> Sequence[str]:
        if self._state == "text":
            return _QWEN_TEXT_MARKERS
        return (THINK_CLOSE,) if self._state == "think" else _QWEN_CALL_MARKERS

    def _capture(self, text: str) -> None:
        self._parts.append(text)
        self._source.append(text)

    def _on_marker(self, marker: str, events: list[StreamEvent]) -> None:
        if self._think(marker, events):
            return
        bare = marker.lstrip("\n")
        if self._state == "text":  # ✿FUNCTION✿:
            self._state, self._parts, self._source = "name", [], [marker]
            return
        if self._state == "name":
            self._name = "".join(self._parts).strip()
            if bare == FN_ARGS + ":":
                if not self._name:  # no tool name: the block is text
                    events.append(TextDelta("".join(self._source) + marker))
                    self._state = "text"
                    return
                self._state, self._parts = "args", []
                self._source.append(marker)
                return
            self._end_call(events, error=f"the call has no {FN_ARGS} line")
        else:
            self._end_call(events, error=None)
        if bare == FN_ARGS + ":":  # another call of the same tool
            self._state, self._parts = "args", []
        elif bare == FN_NAME + ":":
            self._state, self._parts, self._source = "name", [], [marker]
        else:  # ✿RESULT✿ / ✿RETURN✿ written by the model: the rest is text
            self._state = "text"
            events.append(TextDelta(marker))

    def _finish(self, events: list[StreamEvent], error: str | None) -> None:
        if self._state == "name":
            self._name = "".join(self._parts).strip()
            self._end_call(events, error=error or f"the call has no {FN_ARGS} line")
        elif self._state == "args":
            self._end_call(events, error=error)
        self._state = "text"

    def _end_call(self, events: list[StreamEvent], *, error: str | None) -> None:
        if not self._name:
            events.append(TextDelta("".join(self._source)))
            return
        raw = "".join(self._parts).strip() if self._state == "args" else ""
        arguments, why = (None, error) if error is not None else parse_lenient(raw)
        self._emit_call(events, self._name, raw, arguments, why)


ParserFactory = Callable[[], ReplyParser]
