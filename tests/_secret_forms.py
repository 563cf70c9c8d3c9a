"""Whether a text still holds a secret in any form the suite promises to remove (issue 27, point 1).

``leaks_anywhere(text, secret)`` looks for any 8 characters of ``secret`` in a row in ``text`` read
every way a hostile server may have spelled it: as is; percent-decoded; with its JSON strings
decoded, once and twice (a cassette holds SSE text as a JSON string whose events hold JSON strings);
each JSON field's string values joined in order (``"content"`` of every delta: the text a stream
decodes to); hex runs decoded; base64 and base64url runs decoded at each of the 4 alignments. It is
written apart from ``conformance.traffic.scrub`` on purpose: a second reading, not the same code.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
import re
from urllib.parse import unquote

__all__ = ["NGRAM", "leaks_anywhere", "views"]

NGRAM = 8

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_FIELD = re.compile(r'"([A-Za-z_]+)"\s*:\s*("(?:[^"\\]|\\.)*")')
_HEX = re.compile(r"[0-9A-Fa-f]{16,}")
_BASE64 = re.compile(r"[A-Za-z0-9+/\-_]{12,}")


def _strings(text: str) -> list[str]:
    out = []
    for token in _STRING.findall(text):
        try:
            value = json.loads(token)
        except ValueError:
            continue
        if isinstance(value, str):
            out.append(value)
    return out


def _fields(text: str) -> list[str]:
    joined: dict[str, list[str]] = {}
    for name, token in _FIELD.findall(text):
        try:
            value = json.loads(token)
        except ValueError:
            continue
        joined.setdefault(name, []).append(value)
    return ["".join(values) for values in joined.values()]


def _decoded_runs(text: str) -> list[str]:
    out = []
    for run in _HEX.findall(text):
        for start in (0, 1):
            piece = run[start:]
            piece = piece[: len(piece) // 2 * 2]
            with contextlib.suppress(ValueError):
                out.append(bytes.fromhex(piece).decode("latin-1"))
    for run in _BASE64.findall(text):
        standard = run.replace("-", "+").replace("_", "/")
        for start in range(4):
            piece = standard[start:]
            piece = piece[: len(piece) // 4 * 4]
            with contextlib.suppress(binascii.Error, ValueError):
                out.append(base64.b64decode(piece, validate=True).decode("latin-1"))
    return out


def views(text: str) -> list[str]:
    """Every reading of ``text`` that ``leaks_anywhere`` searches."""
    once = _strings(text)
    twice = [s for value in once for s in _strings(value)]
    found = [text, unquote(text), *once, *twice, *_fields(text)]
    found += [f for value in once for f in _fields(value)]
    found += _fields("\n".join(once))
    found += _fields("\n".join(twice))
    found += [decoded for view in list(found) for decoded in _decoded_runs(view)]
    found += [unquote(view) for view in list(found)]
    return found


def leaks_anywhere(text: str, secret: str) -> bool:
    """Whether ``text`` holds any ``NGRAM`` characters of ``secret`` in a row, read any of the ways above."""
    grams = {secret[i : i + NGRAM] for i in range(len(secret) - NGRAM + 1)}
    return any(gram in view for view in views(text) for gram in grams)
