"""Reading Gemini's JSON exactly: a stream chunk parsed with orjson unless a call's ``args`` could
hold integers beyond 64 bits (then the exact path), orjson's own text of each ``args`` container
(the compact argument text without a second dump), usage counts that are counts, and
``RetryInfo`` delays. The exactness rules are their own concern, tested on their own
(``tests/adapters/test__gemini_json.py``); ``conformance.adapters.gemini`` holds the wire's
sections and cites the sources.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import orjson

from conformance.adapters.base import compact_text, load_json_body
from conformance.model import Usage

__all__ = ["args_texts", "parse_chunk", "read_usage", "retry_delay"]

_COUNT_TYPES = frozenset({int, type(None)})


def read_usage(raw: Mapping[str, Any]) -> Usage:
    get = raw.get
    counts: tuple[Any, ...] = (
        get("promptTokenCount"),
        get("candidatesTokenCount"),
        get("totalTokenCount"),  # includes thoughts (E19)
        get("cachedContentTokenCount"),
        get("thoughtsTokenCount"),
    )
    if not {type(v) for v in counts} <= _COUNT_TYPES:  # not a count (a bool, a string): unknown
        counts = tuple(v if type(v) is int else None for v in counts)
    prompt, candidates, total, cached, thoughts = counts
    return Usage(
        input_tokens=prompt,
        output_tokens=candidates,
        total_tokens=total,
        cache_read_tokens=cached,
        reasoning_tokens=thoughts,
    )


def parse_chunk(data: str | bytes) -> Any:
    """A stream chunk as JSON, None when it is not. Only ``args`` can hold integers beyond 64 bits,
    which orjson turns into floats: chunks with a call take the exact (slower) path of the base."""
    if ("functionCall" in data) if isinstance(data, str) else (b"functionCall" in data):
        return load_json_body(data)
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return None


def args_texts(chunk: dict[str, Any]) -> dict[int, str] | None:
    """The compact argument text (``dumps_compact(args, parsed=True)``) of every
    ``functionCall.args`` container of a chunk orjson parsed, keyed by ``id`` (for ``_part``), or
    None when a float orjson writes with ``e+`` (magnitude 1e16 and more) may be in the chunk: an
    integer beyond 64 bits may have become one, so the exact parse (``base._loads``) must read the
    chunk. Arguments are judged on their text (any ``+`` outside a string value: cautious), the rest
    of the chunk value by value."""
    texts: dict[int, str] = {}
    stack: list[Any] = [chunk]
    while stack:
        value = stack.pop()
        items = value.values() if type(value) is dict else value
        if type(value) is dict and type(call := value.get("functionCall")) is dict:
            args = call.get("args")
            if type(args) is dict or type(args) is list:
                text = _args_text(args)
                if text is None:
                    return None
                texts[id(args)] = text
        for item in items:
            kind = type(item)
            if kind is dict or kind is list:
                if id(item) not in texts:
                    stack.append(item)
            elif kind is float and abs(item) >= 1e16:
                return None
    return texts


def _args_text(args: dict[str, Any] | list[Any]) -> str | None:
    """``dumps_compact(args, parsed=True)``, or None when a ``+`` may be an integer orjson rounded.

    An object with a long string value (a file's content, code: what makes arguments long) is
    written value by value, so that only the other values' texts are searched for ``+`` and for the
    float spellings where orjson and ``json`` differ (``compact_text``): a string holds no number.
    Otherwise one dump of the whole is cheaper."""
    if isinstance(args, dict):
        for value in args.values():
            if type(value) is str and len(value) >= _LONG_STRING:
                return _object_text(args)
    text = orjson.dumps(args)
    return None if b"+" in text else compact_text(text, args)


def _object_text(args: dict[str, Any]) -> str | None:
    """``_args_text`` value by value (see there)."""
    dumps = orjson.dumps
    pieces = [b"{"]
    stdlib = False
    for key, value in args.items():
        piece = dumps(value)
        if type(value) is not str:
            if b"+" in piece:
                return None
            stdlib = stdlib or b"e-" in piece or b"0.0000" in piece
        pieces += (dumps(key), b":", piece, b",")
    if stdlib:
        return json.dumps(args, ensure_ascii=False, separators=(",", ":"))
    pieces[-1] = b"}"
    return b"".join(pieces).decode()


_LONG_STRING = 4096
"""Characters from which a string argument value is written apart (see ``_args_text``)."""


def retry_delay(details: Any) -> float | None:
    """``google.rpc.RetryInfo.retryDelay`` (a Duration: ``"34.4s"``) from ``error.details`` (§4e)."""
    for detail in details if isinstance(details, list) else ():
        if isinstance(detail, Mapping) and str(detail.get("@type", "")).endswith("google.rpc.RetryInfo"):
            delay = detail.get("retryDelay")
            if isinstance(delay, str) and delay.endswith("s"):
                try:
                    return float(delay[:-1])
                except ValueError:
                    return None
            if isinstance(delay, Mapping):
                return float(delay.get("seconds", 0)) + float(delay.get("nanos", 0)) / 1e9
    return None
