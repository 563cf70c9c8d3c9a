"""Volatile values of recorded traffic and their stable forms (pure: no I/O).

A live provider answers the same request with new ids, a new ``created`` time, new server
timings and new request-id headers every time. ``normalise_interactions`` replaces such values in a
cassette's interactions (the documents ``conformance.traffic.recorder`` renders) with stable forms
that keep their meaning, so that an unchanged provider re-records byte-identical and
``conformance drift`` compares what really changed. The rules (docs/recording.md, "Volatile
values"), and nothing else:

- **ids** (a string of at least ``MIN_ID_LENGTH`` characters under a key in ``ID_KEYS`` of a response
  body, a stream event or an error body; a response header in ``ID_HEADERS``): each distinct value
  gets the next number, in the order the cassette first shows it, written in the place of the
  value's random part (``call_fYM2rJklKIklxehEXIZQUVHa`` -> ``call_000000000000000000000001``: its
  letter prefix and its length are kept). The same replacement is made *everywhere* the exact value
  appears in the cassette, requests included, so a tool-call id the next request echoes still pairs
  with its call and ids repeated on purpose stay repeated. Empty and short values are kept.
- **timestamps** (``TIME_KEYS``): an integer becomes ``FIXED_TIME`` (in milliseconds when the value
  was), a float ``FIXED_TIME.0``, a date-time text gets the digits of 2025-01-01T00:00:00 in its own
  format (``2025-11-25T22:15:40.123Z`` -> ``2025-01-01T00:00:00.000Z``); the same in SSE comment
  lines (``: ping - 2025-11-25 22:15:40``).
- **timings** (every number inside a ``TIMING_OBJECTS`` object, such as llama.cpp's ``timings``;
  the numbers under ``TIMING_KEYS``, such as Ollama's ``eval_duration``): ``0`` or ``0.0``, its type
  kept, so the object keeps its shape. ``OPENAI_OBFUSCATION`` padding becomes ``FIXED_PADDING``.
- **headers** in ``COUNTER_HEADERS`` (processing times, rate-limit counters and resets): date-times
  as above, then every run of digits becomes ``0`` (``6ms`` -> ``0ms``).

Values under keys that hold user data (``OPAQUE_KEYS``: call arguments, tool input, schemas,
metadata) are never taken for volatile ones. Bodies are rewritten in place without reformatting:
a stream keeps its bytes, its whitespace and its chunk boundaries apart from the replaced values.

``normalise_interactions`` also returns the JSON path globs it normalised (the syntax of
``conformance.checks.recorded_request``: ``$.choices[*].delta.tool_calls[*].id``; a stream event's
payload is rooted at ``$``); the recorder writes them as the provenance ``volatile`` list. Echoes of
an id in a request are not listed: a replay sends the stable form back, so they compare exactly.
Normalising twice gives what normalising once gave.
"""

from __future__ import annotations

import copy
import itertools
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias

__all__ = [
    "COUNTER_HEADERS",
    "FIXED_PADDING",
    "FIXED_TIME",
    "ID_HEADERS",
    "ID_KEYS",
    "MIN_ID_LENGTH",
    "OPAQUE_KEYS",
    "TIME_KEYS",
    "TIMING_KEYS",
    "TIMING_OBJECTS",
    "glob_of",
    "normalise_interactions",
    "stable_ids",
]

ID_KEYS = frozenset(
    {"id", "call_id", "item_id", "response_id", "responseId", "system_fingerprint", "request_id", "requestId"}
    | {"signature", "thoughtSignature", "thought_signature", "encrypted_content"}
)
"""Keys whose string value a provider makes anew for every answer (ids, fingerprints, the opaque
signatures of reasoning that must travel back unchanged)."""
MIN_ID_LENGTH = 6
"""Shorter values are not taken for ids (too likely to equal some other value of the cassette)."""
TIME_KEYS = frozenset({"created", "created_at", "completed_at", "createTime", "create_time"})
TIMING_OBJECTS = frozenset({"timings"})
TIMING_KEYS = frozenset({"total_duration", "load_duration", "prompt_eval_duration", "eval_duration"})
OPENAI_OBFUSCATION = "obfuscation"
FIXED_PADDING = "0"
FIXED_TIME = 1735689600
"""2025-01-01T00:00:00Z, the emulator's fixed ``created`` too."""
_FIXED_DIGITS = "20250101000000" + "0" * 64
OPAQUE_KEYS = frozenset(
    {"input", "args", "arguments", "parameters", "parametersJsonSchema", "parameters_json_schema"}
    | {"input_schema", "schema", "responseSchema", "response_schema", "metadata", "properties", "format"}
)
_OPAQUE_PAIRS = frozenset({("functionResponse", "response"), ("function_response", "response")})
ID_HEADERS = frozenset({"x-request-id", "request-id", "cf-ray", "x-ms-client-request-id", "apim-request-id"})
COUNTER_HEADERS = re.compile(
    r"openai-processing-ms|x-envoy-upstream-service-time|server-timing|age|expires|last-modified"
    r"|x-ratelimit-(?:remaining|reset)-.*|anthropic-ratelimit-.*-(?:remaining|reset)"
)

_PREFIX = re.compile(r"(?:[A-Za-z]+[_-])+")
_DATETIME = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?")
_DIGITS = re.compile(r"\d+(?:\.\d+)?")
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_LITERALS = {"true": True, "false": False, "null": None}

Path: TypeAlias = tuple[str | int, ...]


def glob_of(path: Path) -> str:
    """The JSON path glob of a value's place, every array index as ``[*]`` (``$.a[*].b``)."""
    out = "$"
    for step in path:
        if isinstance(step, int):
            out += "[*]"
        elif re.fullmatch(r"[A-Za-z_$][A-Za-z0-9_$-]*", step):
            out += f".{step}"
        else:
            out += f'["{step}"]'
    return out


def normalise_interactions(interactions: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], tuple[str, ...]]:
    """The interactions with their volatile values in stable form, and the sorted globs normalised.

    ``interactions`` are vcrpy-shaped dicts (``request``/``response`` with ``headers``, and
    ``parsed_body``, ``body`` text or ``body.chunks``), left unchanged; see the module docstring.
    """
    out = copy.deepcopy(interactions)
    documents = [doc for interaction in out for doc in _documents(interaction)]
    state = _State()
    for doc in documents:  # ids first, in the order they first show, so that echoes in requests are known
        if doc.response:
            for leaf in doc.leaves:
                state.learn(leaf)
    for doc in documents:
        doc.apply(state)
    for interaction in out:
        state.headers(interaction.get("response"))
    return out, tuple(sorted(state.globs))


def stable_ids(interactions: list[dict[str, Any]]) -> dict[str, str]:
    """Each id ``normalise_interactions`` replaces in ``interactions`` -> its stable form: for what is
    derived from the raw traffic and written beside it (a decoding made at record time must name
    the calls by the ids the cassette holds)."""
    documents = [doc for interaction in copy.deepcopy(interactions) for doc in _documents(interaction)]
    state = _State()
    for doc in documents:
        if doc.response:
            for leaf in doc.leaves:
                state.learn(leaf)
    for interaction in interactions:
        state.headers(copy.deepcopy(interaction.get("response")))
    return {old: new for old, new in state.ids.items() if old != new}


# --------------------------------------------------------------------------------------------
# The rules
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Leaf:
    path: Path
    value: Any
    span: tuple[int, int] | None = None
    """Where its JSON token is in a text body (None: a parsed body)."""
    raw: bool = False
    """A date-time in an SSE comment line: replaced as text, not as a JSON token."""


@dataclass
class _State:
    ids: dict[str, str] = field(default_factory=dict)
    globs: set[str] = field(default_factory=set)
    count: int = 0

    def learn(self, leaf: _Leaf) -> None:
        if _is_id(leaf):
            self.globs.add(glob_of(leaf.path))
            self.stable_id(leaf.value)

    def stable_id(self, value: str) -> str:
        known = self.ids.get(value)
        if known is None:
            self.count += 1
            known = self.ids[value] = _numbered(value, self.count)
            self.ids[known] = known  # normalising twice gives the same
        return known

    def replacement(self, leaf: _Leaf, *, response: bool) -> tuple[bool, Any]:
        value = leaf.value
        if isinstance(value, str) and value in self.ids:
            return True, self.ids[value]
        if leaf.raw:
            return response, _fixed_datetimes(value)
        if not response or _opaque(leaf.path) or not leaf.path:
            return False, None
        key = leaf.path[-1]
        fixed: Any = _MISSING
        if key in TIME_KEYS:
            fixed = _fixed_time(value)
        elif key in TIMING_KEYS or any(k in TIMING_OBJECTS for k in leaf.path if isinstance(k, str)):
            fixed = _zero(value)
        elif key == OPENAI_OBFUSCATION and isinstance(value, str):
            fixed = FIXED_PADDING
        if fixed is _MISSING:
            return False, None
        self.globs.add(glob_of(leaf.path))
        return True, fixed

    def headers(self, side: Any) -> None:
        """Normalise a response's volatile header values in place."""
        if not isinstance(side, dict) or not isinstance(side.get("headers"), dict):
            return
        for name, values in side["headers"].items():
            if not isinstance(values, list):
                continue
            lowered = str(name).lower()
            for index, value in enumerate(values):
                if not isinstance(value, str):
                    continue
                if lowered in ID_HEADERS and len(value) >= MIN_ID_LENGTH:
                    values[index] = self.stable_id(value)
                elif COUNTER_HEADERS.fullmatch(lowered):
                    values[index] = _DIGITS.sub("0", _fixed_datetimes(value))


_MISSING = object()


def _opaque(path: Path) -> bool:
    keys = [k for k in path[:-1] if isinstance(k, str)]
    if any(k in OPAQUE_KEYS for k in keys):
        return True
    return any(pair in _OPAQUE_PAIRS for pair in itertools.pairwise(path[:-1]))


def _is_id(leaf: _Leaf) -> bool:
    return (
        bool(leaf.path)
        and leaf.path[-1] in ID_KEYS
        and isinstance(leaf.value, str)
        and len(leaf.value) >= MIN_ID_LENGTH
        and not _opaque(leaf.path)
    )


def _numbered(value: str, number: int) -> str:
    match = _PREFIX.match(value)
    prefix = match.group() if match and match.end() < len(value) else ""
    digits = str(number)
    return prefix + digits.rjust(len(value) - len(prefix), "0")


def _fixed_time(value: Any) -> Any:
    if isinstance(value, bool):
        return _MISSING
    if isinstance(value, int):
        return FIXED_TIME * 1000 if value > 10**11 else FIXED_TIME
    if isinstance(value, float):
        return float(FIXED_TIME)
    if isinstance(value, str) and _DATETIME.search(value):
        return _fixed_datetimes(value)
    return _MISSING


def _fixed_datetimes(text: str) -> str:
    def fixed(match: re.Match[str]) -> str:
        digits = iter(_FIXED_DIGITS)
        return "".join(next(digits) if ch.isdigit() else ch for ch in match.group())

    return _DATETIME.sub(fixed, text)


def _zero(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return _MISSING
    return 0.0 if isinstance(value, float) else 0


# --------------------------------------------------------------------------------------------
# Documents: the JSON values of one interaction side, parsed or as text with token spans
# --------------------------------------------------------------------------------------------


@dataclass
class _Document:
    """One JSON body (``holder[key]`` parsed) or the JSON payloads of a text body or stream."""

    response: bool
    holder: dict[str, Any]
    key: str
    leaves: list[_Leaf]
    pieces: list[str] | None = None
    """The text as stored (a stream's chunks; one piece for a text body), None for a parsed body."""

    def apply(self, state: _State) -> None:
        changes: list[tuple[_Leaf, Any]] = []
        for leaf in self.leaves:
            changed, new = state.replacement(leaf, response=self.response)
            if changed and (new != leaf.value or type(new) is not type(leaf.value)):
                changes.append((leaf, new))
        if not changes:
            return
        if self.pieces is None:
            for leaf, new in changes:
                _set(self.holder[self.key], leaf.path, new)
            return
        spans = [
            (leaf.span, new if leaf.raw else json.dumps(new, ensure_ascii=False))
            for leaf, new in changes
            if leaf.span is not None
        ]
        pieces = _respliced(self.pieces, spans)
        if isinstance(self.holder[self.key], list):
            self.holder[self.key] = pieces
        else:
            self.holder[self.key] = pieces[0]


def _set(value: Any, path: Path, new: Any) -> None:
    for step in path[:-1]:
        value = value[step]
    value[path[-1]] = new


def _documents(interaction: Mapping[str, Any]) -> Iterator[_Document]:
    for side_name in ("request", "response"):
        side = interaction.get(side_name)
        if not isinstance(side, dict):
            continue
        response = side_name == "response"
        if "parsed_body" in side:
            leaves: list[_Leaf] = []
            _parsed_leaves(side["parsed_body"], (), leaves)
            yield _Document(response, side, "parsed_body", leaves)
            continue
        body = side.get("body")
        holder, key = side, "body"
        if isinstance(body, dict):
            holder, key = body, "chunks" if "chunks" in body else "string"
            body = body.get(key)
        if isinstance(body, str):
            yield _Document(response, holder, key, _text_leaves(body), [body])
        elif isinstance(body, list) and all(isinstance(p, str) for p in body):
            yield _Document(response, holder, key, _text_leaves("".join(body)), list(body))


def _parsed_leaves(value: Any, path: Path, out: list[_Leaf]) -> None:
    if isinstance(value, dict):
        for name, item in value.items():
            _parsed_leaves(item, (*path, name), out)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _parsed_leaves(item, (*path, index), out)
    else:
        out.append(_Leaf(path, value))


def _text_leaves(text: str) -> list[_Leaf]:
    """The scalar leaves, with their spans, of the JSON payloads of an SSE stream (``data:`` lines),
    a JSON document or array (each element rooted at ``$``), or NDJSON lines; SSE comment lines'
    date-times as leaves of the path ``(":",)``."""
    out: list[_Leaf] = []
    stripped = text.lstrip("\ufeff \t\r\n")
    if stripped[:1] in ("{", "[") and _scan_payload(text, len(text) - len(stripped), len(text), out, array=True):
        return out
    out.clear()
    start = 0
    for line in text.splitlines(keepends=True):
        end = start + len(line.rstrip("\r\n"))
        if line.startswith("data:"):
            begin = start + 5 + (line[5:6] == " ")
            _scan_payload(text, begin, end, out, array=False)
        elif line.startswith(":"):
            out.extend(
                _Leaf((":",), m.group(), (start + m.start(), start + m.end()), raw=True)
                for m in _DATETIME.finditer(line[: end - start])
            )
        elif line[:1] in ("{", "["):
            _scan_payload(text, start, end, out, array=False)
        start += len(line)
    return out


def _scan_payload(text: str, begin: int, end: int, out: list[_Leaf], *, array: bool) -> bool:
    """Scan one JSON value filling ``text[begin:end]``; its leaves go to ``out`` (a top-level
    array's elements rooted at ``$`` when ``array``). False, adding nothing, when it is not JSON."""
    found: list[_Leaf] = []
    try:
        _, pos = _scan(text, begin, (), found)
    except (ValueError, IndexError, RecursionError):
        return False
    if _skip(text, pos) < end:
        return False
    if array and text[_skip(text, begin)] == "[":
        found = [_Leaf(leaf.path[1:], leaf.value, leaf.span) for leaf in found]
    out.extend(found)
    return True


def _string(text: str, pos: int) -> tuple[str, int]:
    """The JSON string starting at ``pos`` (its opening quote) and the position after it."""
    match = _STRING.match(text, pos)
    if match is None:
        raise ValueError("an unterminated string")
    value = json.loads(match.group())
    if not isinstance(value, str):  # pragma: no cover - the pattern matches strings only
        raise ValueError("a string is expected")
    return value, match.end()


def _skip(text: str, pos: int) -> int:
    """The position of the first character at or after ``pos`` that is not JSON whitespace."""
    while pos < len(text) and text[pos] in " \t\n\r":
        pos += 1
    return pos


def _scan(text: str, pos: int, path: Path, out: list[_Leaf]) -> tuple[Any, int]:
    """Parse the JSON value at ``pos`` (whitespace first), appending its scalars with their spans."""
    pos = _skip(text, pos)
    ch = text[pos]
    if ch == "{":
        obj: dict[str, Any] = {}
        pos = _skip(text, pos + 1)
        if text[pos] == "}":
            return obj, pos + 1
        while True:
            if text[pos] != '"':
                raise ValueError("a key is expected")
            key, pos = _string(text, pos)
            pos = _skip(text, pos)
            if text[pos] != ":":
                raise ValueError("':' is expected")
            obj[key], pos = _scan(text, pos + 1, (*path, key), out)
            pos = _skip(text, pos)
            if text[pos] == "}":
                return obj, pos + 1
            if text[pos] != ",":
                raise ValueError("',' is expected")
            pos = _skip(text, pos + 1)
    if ch == "[":
        items: list[Any] = []
        pos = _skip(text, pos + 1)
        if text[pos] == "]":
            return items, pos + 1
        while True:
            item, pos = _scan(text, pos, (*path, len(items)), out)
            items.append(item)
            pos = _skip(text, pos)
            if text[pos] == "]":
                return items, pos + 1
            if text[pos] != ",":
                raise ValueError("',' is expected")
            pos += 1
    if ch == '"':
        value, end = _string(text, pos)
        out.append(_Leaf(path, value, (pos, end)))
        return value, end
    for word, literal in _LITERALS.items():
        if text.startswith(word, pos):
            out.append(_Leaf(path, literal, (pos, pos + len(word))))
            return literal, pos + len(word)
    match = _NUMBER.match(text, pos)
    if match is None:
        raise ValueError("a JSON value is expected")
    token = match.group()
    number: Any = float(token) if any(c in token for c in ".eE") else int(token)
    out.append(_Leaf(path, number, match.span()))
    return number, match.end()


def _respliced(pieces: list[str], spans: list[tuple[tuple[int, int], str]]) -> list[str]:
    """``pieces`` joined, each span replaced by its text, and cut again as many pieces: a cut that
    fell inside a replaced span moves to its start (the new text goes whole to the later piece)."""
    joined = "".join(pieces)
    ordered = sorted(spans)
    text_parts: list[str] = []
    last = 0
    for (start, end), new in ordered:
        text_parts.append(joined[last:start])
        text_parts.append(new)
        last = end
    text_parts.append(joined[last:])
    cuts: list[int] = []
    offset = 0
    for piece in pieces[:-1]:
        offset += len(piece)
        shift = 0
        moved = offset
        for (start, end), new in ordered:
            if end <= offset:
                shift += len(new) - (end - start)
            elif start < offset:
                moved = start
                break
            else:
                break
        cuts.append(moved + shift)
    text = "".join(text_parts)
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]
