"""What a server answered, read for the ``server.*`` checks: its frames, and the findings collector.

Pure and linear in the body. A stream body is cut into frames by the wire's framing: SSE (the
WHATWG ``text/event-stream`` rules: an event is the lines up to a blank line; ``event:`` names it,
``data:`` lines join with ``\\n``; ``:`` lines are comments), NDJSON (one JSON value per line,
Ollama, wire-formats.md §5d) or one JSON array (Gemini without ``alt=sse``, §4d). The project's
``conformance.framing`` decoders are lenient by design (their ``flush`` dispatches an event that
lacks its blank line, so recorded bodies still decode); a server is judged by what the official SDKs
read, and openai-python's and anthropic-sdk-python's ``SSEDecoder.decode`` dispatch an event only at
a blank line (``openai/_streaming.py``, ``anthropic/_streaming.py``): an event left open at the end is
lost to them. So the reading here is its own, strict one, and says where the bytes break the rule.

``Collector`` gathers findings per check for one answer; a defect repeated in one answer (the same
signature, e.g. on every chunk) is kept once, its message saying how many times it was seen, and a
check keeps at most ``MAX_FINDINGS`` of them: a stream of a million bad chunks stays a small verdict.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from conformance.verdicts import Finding, FindingKind, signature

__all__ = [
    "MAX_FINDINGS",
    "Collector",
    "Frame",
    "dict_of",
    "int_of",
    "is_text",
    "judge_arguments",
    "judge_call_id",
    "list_of",
    "media_type",
    "object_problem",
    "quote",
    "read_json_array",
    "read_ndjson",
    "read_sse",
    "stream_error",
]

MAX_FINDINGS = 40
"""Distinct findings one check keeps for one answer (the rest are counted in the last one's message)."""

_QUOTE = 300
_LINES = re.compile(rb"\r\n|\r|\n")


def quote(data: bytes | str, limit: int = _QUOTE) -> str:
    """``data`` as text for a message, cut to ``limit`` characters (the cut said)."""
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    text = text.strip()
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters in all)"


def media_type(headers: Mapping[str, str]) -> str | None:
    """The ``content-type``'s media type, lower-cased, parameters dropped (None when absent)."""
    value = headers.get("content-type")
    if value is None:
        return None
    return value.split(";", 1)[0].strip().lower()


@dataclass(frozen=True, slots=True)
class Frame:
    """One event of a stream, in order."""

    index: int
    event: str | None
    """The SSE ``event:`` name (None: the event had no ``event:`` line, or not SSE)."""
    data: str
    """The ``data:`` text (an NDJSON line, an array element)."""
    value: Any
    """The data parsed as JSON (``None`` when it is not JSON: see ``ok``)."""
    ok: bool
    """The data parsed as JSON."""

    @property
    def path(self) -> str:
        return f"stream[{self.index}].data"


def _parse(text: str) -> tuple[Any, bool]:
    try:
        return json.loads(text), True
    except (ValueError, RecursionError):  # RecursionError: JSON nested past the interpreter's depth
        return None, False


def read_sse(body: bytes) -> tuple[list[Frame], list[tuple[str, str]]]:
    """The events of an SSE body, and its framing problems (``(path, words)``): an event still open
    at the end (no blank line after it), bytes that are no SSE field."""
    problems: list[tuple[str, str]] = []
    if body.startswith(b"\xef\xbb\xbf"):
        body = body[3:]
    frames: list[Frame] = []
    event: str | None = None
    data: list[str] = []
    has_data = False
    open_block = False
    lines = _LINES.split(body)
    tail = lines.pop()  # after the last line end: a line still open (b"" when the body ends with one)
    if tail:
        lines.append(tail)
    for line in lines:
        if not line:
            if has_data:
                text = "\n".join(data)
                value, ok = (None, True) if text == "[DONE]" else _parse(text)
                frames.append(Frame(index=len(frames), event=event, data=text, value=value, ok=ok))
            event, data, has_data, open_block = None, [], False, False
            continue
        open_block = True
        text = line.decode("utf-8", "replace")
        if text.startswith(":"):
            continue
        name, _, rest = text.partition(":")
        rest = rest.removeprefix(" ")
        if name == "data":
            data.append(rest)
            has_data = True
        elif name == "event":
            event = rest
        elif name not in ("id", "retry") and len(problems) < MAX_FINDINGS:
            problems.append(
                (f"stream[{len(frames)}]", f"a line that is no SSE field ({quote(text, 80)}): the SDKs ignore it")
            )
    if open_block:
        where = f"stream[{len(frames)}]"
        if has_data:
            text = "\n".join(data)
            value, ok = (None, True) if text == "[DONE]" else _parse(text)
            frames.append(Frame(index=len(frames), event=event, data=text, value=value, ok=ok))
        problems.append(
            (
                where,
                "the last event is not closed by a blank line: an SSE client dispatches an event only at"
                " a blank line (openai/_streaming.py and anthropic/_streaming.py SSEDecoder.decode), so"
                " the SDKs never see it",
            )
        )
    return frames, problems


def read_ndjson(body: bytes) -> tuple[list[Frame], list[tuple[str, str]]]:
    """The lines of an NDJSON body (blank lines skipped), and its framing problems (a last line
    without its newline is read: ollama-python reads ``iter_lines``, which gives it)."""
    frames: list[Frame] = []
    for line in body.split(b"\n"):
        text = line.strip().decode("utf-8", "replace")
        if text:
            value, ok = _parse(text)
            frames.append(Frame(index=len(frames), event=None, data=text, value=value, ok=ok))
    return frames, []


def read_json_array(body: bytes) -> tuple[list[Frame], list[tuple[str, str]]]:
    """The elements of a body that is one JSON array (Gemini's stream without ``alt=sse``)."""
    value, ok = _parse(body.decode("utf-8", "replace"))
    if not ok or not isinstance(value, list):
        return [], [("$", f"a stream body that starts as a JSON array but is not one: {quote(body)}")]
    return [Frame(index=i, event=None, data=json.dumps(item), value=item, ok=True) for i, item in enumerate(value)], []


class Collector:
    """The findings of one answer, per check id, each repeated defect kept once (``MAX_FINDINGS``)."""

    def __init__(self, turn: int, checks: tuple[str, ...]) -> None:
        self.turn = turn
        self._found: dict[str, dict[str, tuple[Finding, int]]] = {check: {} for check in checks}
        self.judged: set[str] = set()
        """The checks that looked at this answer (a check with nothing to judge stays out)."""
        self._lacking: dict[str, tuple[str, tuple[str, ...]]] = {}
        """SDK type -> (the first path where a value of it lacked fields, the fields it lacked there)."""

    def judge(self, *checks: str) -> None:
        self.judged.update(checks)

    def add(
        self,
        check: str,
        path: str,
        message: str,
        *,
        expected: Any = None,
        actual: Any = None,
        remedy: str = "",
        kind: FindingKind = "defect",
    ) -> None:
        self.judged.add(check)
        finding = Finding(
            check=check,
            message=message,
            path=path,
            expected=expected,
            actual=actual,
            turn=self.turn,
            remedy=remedy,
            kind=kind,
        )
        kept = self._found.setdefault(check, {})
        key = signature(finding)
        if key in kept:
            first, count = kept[key]
            kept[key] = (first, count + 1)
        elif len(kept) < MAX_FINDINGS:
            kept[key] = (finding, 1)

    def lack(self, type_name: str, path: str, fields: Sequence[str]) -> None:
        """``server.shape``: a value of ``type_name`` at ``path`` leaves out ``fields``, which the SDK type
        requires. An answer's missing fields are one finding (``findings``), whatever types and events
        lack them: one defect of the server's, listed type by type, not one per field or event."""
        self.judged.add("server.shape")
        self._lacking.setdefault(type_name, (path, tuple(fields)))

    def findings(self, check: str) -> list[Finding]:
        out = []
        if check == "server.shape" and self._lacking:
            out.append(self._lacking_finding())
        for finding, count in self._found.get(check, {}).values():
            if count > 1:
                finding = replace(finding, message=f"{finding.message} ({count} times in this answer)")
            out.append(finding)
        return out

    def _lacking_finding(self) -> Finding:
        fields = dict.fromkeys(field for _, lacked in self._lacking.values() for field in lacked)
        module = next(iter(self._lacking)).rpartition(".")[0]
        types = ", ".join(name.rpartition(".")[2] for name in self._lacking)
        first = next(iter(self._lacking.values()))[0]
        if len(self._lacking) == 1:  # one type: its fields, at the first one's path
            [(type_name, (where, lacked))] = self._lacking.items()
            message = f"leaves out {', '.join(lacked)}, which {type_name} requires"
        else:  # several: every field once, then type by type
            where = "$" if first.startswith("$") else "stream[*].data"
            message = f"leaves out {', '.join(fields)}, which {module} {types} require" + "".join(
                f"; {name.rpartition('.')[2]}: {', '.join(lacked)}" for name, (_, lacked) in self._lacking.items()
            )
        return Finding(
            check="server.shape",
            message=message,
            path=where,
            expected="required",
            actual=None,
            turn=self.turn,
            remedy="send every field the SDK type declares required: the official SDK is what most clients of "
            "this wire read with",
        )


def object_problem(text: Any) -> str | None:
    """Why argument text is not a JSON object (None: it is one)."""
    if not isinstance(text, str):
        return f"arguments are {type(text).__name__}, not JSON text"
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return f"the arguments are not JSON ({exc.msg} at character {exc.pos}): {quote(text, 120)}"
    except (ValueError, RecursionError):  # RecursionError: JSON nested past the interpreter's depth
        return f"the arguments are not JSON: {quote(text, 120)}"
    if not isinstance(value, dict):
        return f"the arguments are JSON but not an object: {quote(text, 120)}"
    return None


def stream_error(wire: str, frame: Frame) -> bool:
    """Whether a stream event is the wire's in-stream error (the HTTP status was already 200):
    Chat, Gemini and Ollama a payload with an ``error`` key (wire-formats.md §1d, §4d, §5d), Responses
    and Anthropic an event of type ``error`` (§2d, §3d). On Responses a Chat-style ``{"error": {...}}``
    payload is one too: openai-python's ``Stream.__stream__`` raises ``APIError`` on any event whose
    data has an ``error`` key (``_streaming.py``, the ``legacy`` branch), on both OpenAI wires."""
    value = frame.value
    if not isinstance(value, Mapping):
        return False
    if wire == "anthropic":
        return value.get("type") == "error" or frame.event == "error"
    if wire == "openai_responses":
        return value.get("type") == "error" or frame.event == "error" or isinstance(value.get("error"), Mapping)
    return bool(value.get("error"))


def dict_of(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def list_of(value: Any) -> Sequence[Any]:
    return value if isinstance(value, list) else []


def is_text(value: Any) -> bool:
    return isinstance(value, str) and value != ""


def int_of(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def judge_call_id(out: Collector, path: str, call_id: Any, seen: dict[str, str]) -> None:
    out.judge("server.ids")
    if not is_text(call_id):
        out.add(
            "server.ids",
            path,
            "a tool call without an id: the caller sends its result back under that id",
            expected="an id",
            actual=call_id,
            remedy="give every tool call a unique id",
        )
    elif call_id in seen:
        out.add(
            "server.ids",
            path,
            f"tool call id {call_id!r} already used at {seen[call_id]}: results could not be told apart",
            expected="a unique id",
            actual=call_id,
            remedy="give every tool call of an answer its own id",
        )
    else:
        seen[call_id] = path


def judge_arguments(out: Collector, path: str, text: Any) -> None:
    out.judge("server.arguments")
    problem = object_problem(text)
    if problem is not None:
        out.add(
            "server.arguments",
            path,
            problem,
            expected="a JSON object",
            actual=quote(text, 120) if isinstance(text, str) else text,
            remedy="send the arguments as JSON object text (an argument-less call: {})",
        )
