"""Read recorded HTTP traffic (vcrpy-style YAML cassettes) into plain, frozen values.

This is the only module that reads cassette files. It reads every serialization dialect listed in
``tests/realworld/MANIFEST.md`` ("Cassette serialization dialects seen"):

1. plain vcrpy: ``body: {string: ...}``, ``status: {code, message}``, headers as name -> list;
2. gzip ``!!binary`` bodies, gunzipped when they start with the gzip magic ``1f 8b`` (decided per
   interaction: recordings mix gzip and plain bodies, and the legacy stub keeps a stale
   ``Content-Encoding: gzip`` header on a plain body, so the header is not trusted);
3. pydantic-ai ``parsed_body`` (a structured mapping instead of ``body``), rebuilt with
   ``json.dumps`` as the MANIFEST says, on either side and mixed per interaction;
4. opentelemetry's pretty-printed JSON literal blocks (parsed as JSON, never byte-compared);
5. the legacy vcrpy httpx stub (``content:``, ``status_code:``, ``http_version:``);
6. aiohttp header keys tagged ``!!python/object/apply:multidict._multidict.istr``: that one tag is
   read as the plain string it wraps; every other ``python/`` tag is refused with an error and
   never executed (cassettes are untrusted input, as vcrpy's own safe loader says);
7. stripped headers (``headers: {}``): ``is_streaming`` then looks at the request and the body;
8. placeholder-redacted headers (kept as they are);
9. folded/quoted/literal YAML scalars, left to libyaml.

Loading is fast: libyaml (``CSafeLoader``) parses, and a small builder (the private helper
``safe_yaml``) turns its events into dicts, lists and strings without PyYAML's generic
constructor machinery; cassettes written as JSON (``conformance record``) are read by orjson. Anything the builder does
not handle itself (explicit tags other than ``!!str``/``!!binary``/the ``istr`` tag, merge keys,
several documents, errors) falls back to a full ``yaml.load`` with the same safe loader, so the
result and the error messages are those of the safe loader.

A file that cannot be read raises ``CassetteNotFoundError`` or ``CassetteFormatError`` (file,
line, column and what to do). A malformed interaction does not stop the others: its problems are
recorded on that ``Interaction``. Cassettes are untrusted: a file past a bound of
``conformance.limits`` (YAML alias expansion, nodes, nesting; a gzip body that inflates past
``body_bytes``, decompressed in a stream that stops there; a body nesting JSON past
``nesting_depth``) raises ``InputLimitError`` naming the file, the interaction and the limit; a
whole (not streamed) body holding a JSON escape of a lone surrogate (``\\ud800``, which no UTF-8
text can carry) raises ``CassetteFormatError`` naming the interaction.
"""

from __future__ import annotations

import json
import os
import re
import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from conformance.errors import CassetteError, CassetteFormatError, CassetteNotFoundError, InputLimitError
from conformance.limits import Limits, current
from conformance.traffic.safe_yaml import nests_deeper, parse_yaml

__all__ = [
    "Cassette",
    "Interaction",
    "RecordedRequest",
    "RecordedResponse",
    "is_streaming",
    "iter_cassette_files",
    "load_cassette",
]

# --------------------------------------------------------------------------------------------
# Values
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class RecordedRequest:
    """A recorded request."""

    method: str
    """HTTP method as recorded (``POST``); ``""`` when the interaction has none."""
    uri: str
    """The full URI, fragment included (Mistral's ``#stream``)."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """Lower-cased names; the values of a repeated header joined with ``", "``."""
    body: bytes | None = None
    """The body bytes (gunzipped; rebuilt with ``json.dumps`` from ``parsed_body``); None when absent."""
    json: Any | None = None
    """The body parsed as JSON, or None when it is absent or not JSON."""


@dataclass(frozen=True, kw_only=True)
class RecordedResponse:
    """A recorded response."""

    status: int
    """HTTP status code (from ``status.code`` or the legacy ``status_code``)."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """Lower-cased names; values joined with ``", "``. Empty when the recorder stripped them."""
    body: bytes = b""
    """The body bytes: gunzipped when they were gzip, rebuilt with ``json.dumps`` from ``parsed_body``."""
    json: Any | None = None
    """The body parsed as one JSON document, or None (SSE, NDJSON, empty or not JSON)."""
    content_type: str | None = None
    """The media type of ``content-type`` (lower-cased, parameters dropped), None when absent."""
    chunks: tuple[bytes, ...] | None = None
    """The body's pieces as they arrived, where the recorder kept them (``body: {chunks: [...]}``)."""
    interrupted: str | None = None
    """What broke the body while it was recorded (``conformance record`` writes ``interrupted``)."""


_NO_REQUEST = RecordedRequest(method="", uri="")


@dataclass(frozen=True, kw_only=True)
class Interaction:
    """One request/response pair of a cassette."""

    index: int
    """Position in the cassette's ``interactions`` list, from 0."""
    request: RecordedRequest
    response: RecordedResponse | None
    """None when the interaction has no usable response (see ``problems``)."""
    problems: tuple[str, ...] = ()
    """What is malformed, one line each: file, interaction index, what is wrong, what to do."""


@dataclass(frozen=True, kw_only=True)
class Cassette:
    """A cassette file, read."""

    path: str
    interactions: tuple[Interaction, ...]
    problems: tuple[str, ...] = ()
    """File-level problems that did not stop the reading (e.g. an unknown ``version``)."""
    provenance: Mapping[str, Any] | None = None
    """The ``provenance`` block ``conformance record`` writes first (None for other cassettes)."""


# --------------------------------------------------------------------------------------------
# Files
# --------------------------------------------------------------------------------------------

_SUFFIXES = (".yaml", ".yml")


def iter_cassette_files(paths: Iterable[str | os.PathLike[str]]) -> Iterator[Path]:
    """The cassette files under ``paths``: a directory gives its ``*.yaml``/``*.yml`` files,
    recursively, sorted; any other path is given back as it is (a missing one included, so the
    caller's ``load_cassette`` reports it)."""
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = [p for p in path.rglob("*") if p.suffix in _SUFFIXES and p.is_file()]
            yield from sorted(found)
        else:
            yield path


def load_cassette(path: str | os.PathLike[str]) -> Cassette:
    """Read one cassette file.

    Raises ``CassetteNotFoundError`` when the file does not exist, ``CassetteFormatError`` when it
    is not YAML or not a cassette at all (the message names the file, line and column, and what to
    do), ``CassetteError`` when it cannot be read. Problems of single interactions are recorded in
    their ``problems`` and the others are still read.
    """
    name = os.fspath(path)
    try:
        data = Path(name).read_bytes()
    except FileNotFoundError:
        raise CassetteNotFoundError(
            f"{name}: no such cassette file (check the path; `conformance record` writes cassettes)"
        ) from None
    except IsADirectoryError:
        raise CassetteFormatError(
            name, "is a directory", hint="pass a .yaml file, or expand with iter_cassette_files"
        ) from None
    except OSError as exc:
        raise CassetteError(f"{name}: cannot be read: {exc.strerror or exc}") from exc
    document = parse_yaml(name, data)
    return _read_cassette(name, document, current())


# --------------------------------------------------------------------------------------------
# From YAML data to values
# --------------------------------------------------------------------------------------------

_SHAPE_HINT = "a vcrpy cassette is a mapping with `version: 1` and an `interactions` list of {request, response}"


def _read_cassette(name: str, document: Any, limits: Limits) -> Cassette:
    if document is None:
        raise CassetteFormatError(name, "the file is empty", hint=_SHAPE_HINT)
    if not isinstance(document, dict):
        raise CassetteFormatError(name, f"the top level is a {_kind(document)}, not a mapping", hint=_SHAPE_HINT)
    if "interactions" not in document:
        raise CassetteFormatError(name, "there is no `interactions` key", hint=_SHAPE_HINT)
    raw_interactions = document["interactions"]
    if raw_interactions is None:
        raw_interactions = []
    if not isinstance(raw_interactions, list):
        raise CassetteFormatError(name, f"`interactions` is a {_kind(raw_interactions)}, not a list", hint=_SHAPE_HINT)
    version = document.get("version")
    known = type(version) is int and version == 1  # ``true`` and ``1.0`` are no version (yet ``== 1`` in Python)
    problems = [] if known else [_line(name, f"`version` is {version!r}, expected 1", "read as version 1")]
    interactions = tuple(_read_interaction(name, i, raw, limits) for i, raw in enumerate(raw_interactions))
    provenance = document.get("provenance")
    return Cassette(
        path=name,
        interactions=interactions,
        problems=tuple(problems),
        provenance=provenance if isinstance(provenance, dict) else None,
    )


def _line(name: str, problem: str, hint: str, index: int | None = None) -> str:
    """A problem line, worded as ``CassetteFormatError`` words its message."""
    return str(CassetteFormatError(name, problem, interaction=index, hint=hint))


class _Problems:
    """Collects the problems of one interaction."""

    __slots__ = ("index", "limits", "lines", "name")

    def __init__(self, name: str, index: int, limits: Limits) -> None:
        self.name, self.index, self.limits = name, index, limits
        self.lines: list[str] = []

    def add(self, problem: str, hint: str) -> None:
        self.lines.append(_line(self.name, problem, hint, self.index))


def _read_interaction(name: str, index: int, raw: Any, limits: Limits) -> Interaction:
    problems = _Problems(name, index, limits)
    if not isinstance(raw, dict):
        problems.add(f"is a {_kind(raw)}, not a mapping with `request` and `response`", "fix or re-record it")
        return Interaction(index=index, request=_NO_REQUEST, response=None, problems=tuple(problems.lines))
    raw_request = raw.get("request")
    if isinstance(raw_request, dict):
        request = _read_request(raw_request, problems)
    else:
        what = "has no `request`" if raw_request is None else f"`request` is a {_kind(raw_request)}, not a mapping"
        problems.add(what, "fix or re-record it")
        request = _NO_REQUEST
    raw_response = raw.get("response")
    response: RecordedResponse | None = None
    if isinstance(raw_response, dict):
        response = _read_response(raw_response, problems)
    else:
        what = "has no `response`" if raw_response is None else f"`response` is a {_kind(raw_response)}, not a mapping"
        problems.add(what, "re-record it; a cassette needs the response to replay")
    return Interaction(index=index, request=request, response=response, problems=tuple(problems.lines))


def _read_request(raw: dict[str, Any], problems: _Problems) -> RecordedRequest:
    method = raw.get("method")
    if not isinstance(method, str) or not method:
        problems.add("the request has no `method`", "add it (e.g. `method: POST`) or re-record")
        method = ""
    uri = raw.get("uri")
    if not isinstance(uri, str) or not uri:
        problems.add("the request has no `uri`", "add the full URL or re-record")
        uri = ""
    headers = _read_headers(raw.get("headers"), "request", problems)
    if "parsed_body" in raw:
        body, parsed = _from_parsed_body(raw["parsed_body"], "request", problems)
        return RecordedRequest(method=method, uri=uri, headers=headers, body=body, json=parsed)
    value = raw.get("body")
    if isinstance(value, dict):
        value = value.get("string")
    body = _to_bytes(value, "request", problems)
    return RecordedRequest(
        method=method, uri=uri, headers=headers, body=body, json=_parse_json(body, "request", problems)
    )


def _read_response(raw: dict[str, Any], problems: _Problems) -> RecordedResponse | None:
    status_value = raw.get("status")
    if isinstance(status_value, dict):
        status_value = status_value.get("code")
    elif status_value is None:
        status_value = raw.get("status_code")  # the legacy vcrpy httpx stub (dialect 5)
    status = _to_status(status_value)
    if status is None:
        problems.add(
            f"the response has no valid status code (found {status_value!r})",
            "expected `status: {code: 200, message: OK}` or `status_code: 200`",
        )
        return None
    headers = _read_headers(raw.get("headers"), "response", problems)
    content_type = _media_type(headers.get("content-type"))
    if "parsed_body" in raw:
        body, parsed = _from_parsed_body(raw["parsed_body"], "response", problems)
        return RecordedResponse(
            status=status, headers=headers, body=body or b"", json=parsed, content_type=content_type
        )
    chunks: tuple[bytes, ...] | None = None
    if "body" in raw:
        value = raw["body"]
        if isinstance(value, dict) and "string" not in value and isinstance(value.get("chunks"), list):
            pieces = [_to_bytes(c, "response", problems) or b"" for c in value["chunks"]]
            chunks = tuple(pieces)
            value = b"".join(pieces)
        elif isinstance(value, dict):
            if "string" not in value:
                problems.add("the response body has no `string`", "expected `body: {string: ...}`")
            value = value.get("string")
    elif "content" in raw:
        value = raw["content"]  # the legacy vcrpy httpx stub (dialect 5)
    else:
        problems.add("the response has no body", "expected `body: {string: ...}`, `parsed_body:` or `content:`")
        value = None
    body = _to_bytes(value, "response", problems) or b""
    parsed = _parse_json(body, "response", problems, stream=content_type in _STREAM_TYPES)
    interrupted = raw.get("interrupted")
    return RecordedResponse(
        status=status,
        headers=headers,
        body=body,
        json=parsed,
        content_type=content_type,
        chunks=chunks,
        interrupted=interrupted if isinstance(interrupted, str) else None,
    )


def _read_headers(raw: Any, side: str, problems: _Problems) -> dict[str, str]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        problems.add(f"the {side} headers are a {_kind(raw)}, not a mapping", "expected name: [values]")
        return {}
    headers: dict[str, str] = {}
    for key, value in raw.items():
        name = str(key).lower()
        text = ", ".join(map(_header_text, value)) if isinstance(value, list) else _header_text(value)
        headers[name] = f"{headers[name]}, {text}" if name in headers else text
    return headers


def _media_type(value: str | None) -> str | None:
    if value is None:
        return None
    media = value.split(";", 1)[0].strip().lower()
    return media or None


def _header_text(value: Any) -> str:
    if isinstance(value, bool):  # an unquoted YAML 1.1 true/yes
        return "true" if value else "false"
    return "" if value is None else str(value)


def _to_status(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return None


_GZIP_MAGIC = b"\x1f\x8b"


def _to_bytes(value: Any, side: str, problems: _Problems) -> bytes | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")
    if isinstance(value, bytes):
        if value[:2] == _GZIP_MAGIC:
            try:
                return _gunzip(value, side, problems)
            except (OSError, EOFError, zlib.error) as exc:
                problems.add(
                    f"the {side} body starts with the gzip magic but does not decompress: {exc}",
                    "re-record it; the raw bytes are kept",
                )
        return value
    problems.add(f"the {side} body is a {_kind(value)}, not text or bytes", "expected a string or !!binary")
    return None


def _gunzip(data: bytes, side: str, problems: _Problems) -> bytes:
    """``gzip.decompress`` in a stream that stops past ``body_bytes`` (a gzip bomb inflates a
    thousandfold): never more than the limit plus one byte is held."""
    limit = problems.limits.body_bytes
    pieces: list[bytes] = []
    total = 0
    while data:
        stream = zlib.decompressobj(wbits=31)  # one gzip member
        piece = stream.decompress(data, limit + 1 - total)
        total += len(piece)
        if total > limit:
            raise InputLimitError(
                problems.name,
                f"the {side} body (gzip) inflates too much",
                limit="body_bytes",
                value=limit,
                interaction=problems.index,
            )
        pieces.append(piece)
        if not stream.eof:
            raise EOFError("the gzip stream ends before its end-of-stream marker")
        data = stream.unused_data
        if data[:2] != _GZIP_MAGIC:
            if data.strip(b"\0"):
                raise OSError("trailing data after the gzip stream")
            break
    return pieces[0] if len(pieces) == 1 else b"".join(pieces)


def _from_parsed_body(value: Any, side: str, problems: _Problems) -> tuple[bytes | None, Any]:
    # pydantic-ai stores JSON bodies as YAML structures (MANIFEST dialect 3); the MANIFEST says
    # to rebuild the wire body with ``json.dumps`` (recent recordings set content-length to match).
    try:
        body = json.dumps(value).encode()
    except (TypeError, ValueError) as exc:
        problems.add(f"the {side} parsed_body is not JSON data: {exc}", "re-record it")
        return None, None
    _check_surrogates(body, side, problems)
    return body, value


_JSON_START = re.compile(rb"[ \t\r\n]*[\[{]").match


def _parse_json(body: bytes | None, side: str, problems: _Problems, *, stream: bool = False) -> Any:
    """The body parsed as one JSON document (None for a stream, or a body that is not JSON); a body
    whose brackets nest past ``nesting_depth`` (JSON, or the JSON events of a stream) raises."""
    if not body:
        return None
    if _maybe_surrogate(body) and not stream and not _SSE_START(body) and not _looks_like_ndjson(body):
        # a stream's partial JSON (tool arguments) cuts escapes anywhere, even between the backslash
        # and the digits of one: a whole body is checked, a stream is left to the adapters
        _check_surrogates(body, side, problems)
    limit = problems.limits.nesting_depth
    if nests_deeper(body, limit):
        raise InputLimitError(
            problems.name,
            f"the {side} body nests JSON too deeply",
            limit="nesting_depth",
            value=limit,
            interaction=problems.index,
        )
    if stream or not _JSON_START(body):
        return None
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        return None


_SURROGATE_ESCAPE = re.compile(rb"(?<!\\)(\\+)u[dD][89a-fA-F][0-9a-fA-F]{2}")
"""A JSON escape of a UTF-16 surrogate, at any level of escaping (``\\ud83d``, ``\\\\ud83d``, ...). A
match starts only at the first backslash of a run: starting inside a long run of backslashes again
and again would take time quadratic in its length (the fuzz tier's cassette 520)."""


def _maybe_surrogate(body: bytes) -> bool:
    """Whether ``body`` holds an escape in the surrogate range at all (the usual answer is no)."""
    return b"\\ud" in body or b"\\uD" in body


def _check_surrogates(body: bytes, side: str, problems: _Problems) -> None:
    """In a whole (not streamed) JSON body, a JSON escape of a lone surrogate (a high half not
    followed by its low half at the same level of escaping, or a low half alone) decodes to text
    UTF-8 cannot encode: no provider sends one (RFC 8259 §8.2), and once an adapter decoded it the
    reports could not be written. The file is refused (``CassetteFormatError`` naming the
    interaction), so its cases are errors."""
    if not _maybe_surrogate(body):
        return
    pending: re.Match[bytes] | None = None
    for found in _SURROGATE_ESCAPE.finditer(body):
        high = found.group()[-3:-2].lower() in b"89ab"
        if pending is not None:
            if not high and found.start() == pending.end() and found.group(1) == pending.group(1):
                pending = None  # a whole pair
                continue
            break
        if not high:
            pending = found
            break
        pending = found
    if pending is not None:
        shown = pending.group().decode("ascii")
        raise CassetteFormatError(
            problems.name,
            f"the {side} body holds a lone surrogate escape {shown} (at byte {pending.start()}), which no UTF-8 "
            "text can carry",
            interaction=problems.index,
            hint="re-record it, or write the character itself (or both halves of its surrogate pair)",
        )


_KIND_NAMES: dict[type, str] = {type(None): "null", dict: "mapping", list: "list", str: "string", bytes: "bytes"}


def _kind(value: Any) -> str:
    return _KIND_NAMES.get(type(value), type(value).__name__)


# --------------------------------------------------------------------------------------------
# Streaming
# --------------------------------------------------------------------------------------------

_STREAM_TYPES = frozenset({"text/event-stream", "application/x-ndjson", "application/ndjson", "application/jsonl"})
_STREAM_URI = re.compile(r":streamGenerateContent|[?&]alt=sse\b|#stream\b")
_SSE_START = re.compile(rb"(?:\xef\xbb\xbf)?[ \t\r\n]*(?:data|event):").match


def is_streaming(interaction: Interaction) -> bool:
    """Whether the response is a stream (SSE, NDJSON or Gemini's streamed JSON array).

    Any of these says so: the request JSON has ``stream: true``; the URI is Gemini's
    ``:streamGenerateContent``, has ``alt=sse`` or Mistral's ``#stream`` fragment; the response
    content type is ``text/event-stream`` or NDJSON; the body starts with an SSE ``data:`` or
    ``event:`` field, or is several JSON objects one per line. Headers may have been stripped
    (MANIFEST dialect 7), so the body decides when nothing else does.
    """
    request = interaction.request
    if isinstance(request.json, dict) and request.json.get("stream") is True:
        return True
    if _STREAM_URI.search(request.uri):
        return True
    response = interaction.response
    if response is None:
        return False
    if response.content_type in _STREAM_TYPES:
        return True
    if response.json is not None:
        return False
    body = response.body
    if _SSE_START(body):
        return True
    return _looks_like_ndjson(body)


def _looks_like_ndjson(body: bytes) -> bool:
    lines = [line.strip() for line in body.splitlines() if line.strip()]
    return len(lines) >= 2 and all(line[:1] == b"{" and line[-1:] == b"}" for line in lines)
