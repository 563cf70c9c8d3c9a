"""Secret scrubbing for the recorder (pure): headers, query parameters, and key-shaped strings.

Applied to every value before anything is written (toolchain.md §2): secret headers get the value
``REDACTED`` on both sides; ``key=``/``api_key=`` style query parameters get ``REDACTED``; strings
shaped like provider keys (``sk-...``, ``sk-proj-...``, ``sk-ant-...``, ``AIza...``, a token after
``Bearer``/``bearer``) and every secret the caller names are replaced wherever they occur (URLs,
header values, bodies, parsed JSON keys and values), whether the client sent them or a server made
them up. A key counts where it starts a word, also right after a JSON escape (``\\n``) or a
percent-encoded byte (``%20``), as raw stream text and echoed URLs hold them. A named secret is also
found in its percent-encoded, percent-decoded and JSON-escaped forms, and where a text ends in its
first 8 or more characters (a body cut off mid-secret). URL parts are scrubbed percent-decoded too;
bytes that are not UTF-8 are scrubbed around the undecodable ones; a gzip body is scrubbed inside.

Text that arrives in pieces is scrubbed joined (``Scrubber.pieces``): a secret split across two
stream chunks, or across two values of one header, is found in the joined text and the redaction
is mapped back onto the pieces. The pieces keep their number and order, and the joined result is
exactly the joined text scrubbed. A boundary inside a redacted region moves to the region's end:
``REDACTED`` stands in the piece where the secret began, the pieces it reached into lose their part
of it, and a piece wholly inside a secret becomes empty; no part of the secret is left in any piece.
Boundaries outside secrets (between SSE events, NDJSON lines, JSON-array elements) are untouched.
(For header values, joined with nothing between them, a value that starts with key characters right
after a value ending in a key is taken as the key's continuation: redacted too, on the safe side.)

``leaked`` is the final guard: the recorder refuses to write text in which a named secret still
appears.
"""

from __future__ import annotations

import gzip
import json
import re
import zlib
from collections.abc import Iterable, Sequence
from typing import Any
from urllib.parse import quote, quote_plus, unquote, unquote_plus, urlsplit, urlunsplit

from conformance.errors import CassetteWriteError

__all__ = [
    "GZIP_SCRUB_LIMIT",
    "REDACTED",
    "SECRET_HEADERS",
    "SECRET_QUERY",
    "URL_HEADERS",
    "Scrubber",
    "is_secret_header",
]

REDACTED = "REDACTED"

SECRET_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "x-goog-api-key",
        "api-key",
        "cookie",
        "set-cookie",
        "openai-organization",
        "openai-project",
        "anthropic-organization-id",
        "x-goog-user-project",
        "x-organization-id",
        "x-project-id",
    }
)
"""Header names whose values are replaced by ``REDACTED`` (requests and responses)."""

_SECRET_HEADER_PARTS = re.compile(r"(?:^|-)(?:api-?key|token|secret|session|organi[sz]ation(?:-id)?|project-id)(?:-|$)")

SECRET_QUERY = frozenset({"key", "api_key", "api-key", "apikey", "access_token", "token"})
"""Query parameters whose values are replaced by ``REDACTED``."""

URL_HEADERS = frozenset({"location", "content-location"})
"""Header names whose values are URLs (scrubbed like a request URL: secret query parameters too)."""

GZIP_SCRUB_LIMIT = 64 * 1024 * 1024
"""The most bytes a gzip body may inflate to for its secrets to be checked (beyond it: not written)."""

_KEY_SHAPED = tuple(
    re.compile(pattern)
    for pattern in (
        r"sk-[A-Za-z0-9_\-]{6,}",  # OpenAI sk-, sk-proj-, sk-svcacct-; Anthropic sk-ant-api03-
        r"AIza[0-9A-Za-z_\-]{10,}",  # Google
        r"org-[A-Za-z0-9]{12,}",
        r"proj-[A-Za-z0-9]{12,}",
    )
)
"""Provider keys; one counts only where it starts a word (``_starts_a_word``). One pattern per
literal prefix: ``re`` scans for a literal fast, for an alternation slowly (5x on 10 MB)."""

_BEARER = tuple(
    re.compile(word + r"(?: |%20|\+)((?!REDACTED(?![A-Za-z0-9._~+/\-]))[A-Za-z0-9._~+/\-]{6,}=*)")
    for word in ("Bearer", "bearer", "BEARER")
)
"""A bearer token (group 1), after ``Bearer`` and a space, ``%20`` or ``+``."""

_KEY_CHARACTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_HEX = frozenset("0123456789ABCDEFabcdef")


def _starts_a_word(text: str, start: int) -> bool:
    """Whether a key may start at ``start``: after a character that cannot be part of it (``task-...``
    is no key), or after a JSON escape (``\\n``, ``\\u0020``) or a percent-encoded byte (``%20``), as
    raw stream text and echoed URLs hold them."""
    before = text[max(0, start - 6) : start]
    if not before or before[-1] not in _KEY_CHARACTERS:
        return True
    if before[-2:-1] == "\\" and before[-1] in "nrtbf":
        return True
    if before[-3:-2] == "%" and before[-1] in _HEX and before[-2] in _HEX:
        return True
    return len(before) == 6 and before[:2] == "\\u" and all(c in _HEX for c in before[2:])


_CUT_HEAD = 8
"""A text ending in this many or more first characters of a named secret has that end redacted."""

_PATH_SAFE = "/:@!$&'()*+,;=-._~"
_QUERY_SAFE = ":/@!$'()*,;-._~"


def is_secret_header(name: str) -> bool:
    """Whether a header's value is a secret (listed, or named like ``x-foo-api-key``/``...-token``)."""
    lowered = name.lower()
    return lowered in SECRET_HEADERS or bool(_SECRET_HEADER_PARTS.search(lowered))


def _forms(secret: str) -> set[str]:
    """How ``secret`` may be spelled on the wire: as is, percent-encoded or decoded, JSON-escaped."""
    encoded = quote(secret, safe="")
    escaped = json.dumps(secret)[1:-1]
    forms = {
        secret,
        encoded,
        re.sub(r"%[0-9A-F]{2}", lambda m: m.group().lower(), encoded),
        quote_plus(secret, safe=""),
        escaped,
        escaped.replace("/", "\\/"),
        json.dumps(secret, ensure_ascii=False)[1:-1],
        unquote(secret),  # a cookie value sent percent-encoded, echoed decoded
        unquote_plus(secret),
    }
    return {f for f in forms if len(f) >= 4}


def _period(text: str) -> int:
    """The smallest shift that maps ``text`` onto itself: two occurrences start at least this far
    apart (a random key's period is its length; ``abab``'s is 2)."""
    border = [0] * len(text)  # the prefix function (Knuth-Morris-Pratt)
    k = 0
    for i in range(1, len(text)):
        while k and text[i] != text[k]:
            k = border[k - 1]
        if text[i] == text[k]:
            k += 1
        border[i] = k
    return len(text) - border[-1]


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` sorted, with overlapping or touching ones joined."""
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            if end > out[-1][1]:
                out[-1] = (out[-1][0], end)
        else:
            out.append((start, end))
    return out


def _redacted(text: str, spans: Sequence[tuple[int, int]]) -> str:
    parts: list[str] = []
    position = 0
    for start, end in spans:
        parts += [text[position:start], REDACTED]
        position = end
    parts.append(text[position:])
    return "".join(parts)


class Scrubber:
    """Replaces secrets in strings, bytes, URLs, headers and JSON values.

    ``secrets`` are literal values to remove wherever they appear (the API key in use, fake
    secrets of a test); key-shaped strings are removed whether named or not.
    """

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self.secrets = tuple(sorted({s for s in secrets if s and len(s) >= 4}, key=len, reverse=True))
        forms = sorted({f for s in self.secrets for f in _forms(s)}, key=len, reverse=True)
        self._needles = tuple((form, _period(form)) for form in forms)
        self._heads = tuple(s for s in self.secrets if len(s) > _CUT_HEAD)

    # -- finding -----------------------------------------------------------------------------------

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Where ``text`` holds secrets: sorted, disjoint ``(start, end)`` regions (linear in ``text``)."""
        found: list[tuple[int, int]] = []
        for needle, period in self._needles:
            start = text.find(needle)
            while start != -1:
                found.append((start, start + len(needle)))
                start = text.find(needle, start + period)  # the next occurrence, overlapping or not
        for pattern in _KEY_SHAPED:
            found.extend(m.span() for m in pattern.finditer(text) if _starts_a_word(text, m.start()))
        for pattern in _BEARER:
            found.extend(m.span(1) for m in pattern.finditer(text))
        found.extend(self._cut_heads(text))
        return _merged(found)

    def _cut_heads(self, text: str) -> Iterable[tuple[int, int]]:
        """A named secret's first 8+ characters at the very end of ``text`` (cut off there)."""
        for secret in self._heads:
            tail = text[-(len(secret) - 1) :]
            start = tail.find(secret[:_CUT_HEAD])
            while start != -1:
                if secret.startswith(tail[start:]):
                    yield (len(text) - len(tail) + start, len(text))
                    break
                start = tail.find(secret[:_CUT_HEAD], start + 1)

    # -- replacing ---------------------------------------------------------------------------------

    def text(self, value: str) -> str:
        spans = self.spans(value)
        return _redacted(value, spans) if spans else value

    def pieces(self, pieces: Sequence[str]) -> list[str]:
        """``pieces`` (stream chunks, one header's values) scrubbed as their joined text.

        The result has as many pieces, in order, and joins to ``text("".join(pieces))``. A secret
        that crosses a boundary is replaced in the piece where it starts; the following pieces lose
        the rest of it (a piece wholly inside a secret becomes ``""``).
        """
        joined = "".join(pieces)
        spans = self.spans(joined)
        if not spans:
            return list(pieces)
        out: list[str] = []
        k = 0
        begin = 0
        for piece in pieces:
            end = begin + len(piece)
            parts: list[str] = []
            position = begin
            while k < len(spans) and spans[k][0] < end:
                start, stop = spans[k]
                if start >= begin:
                    parts += [joined[position:start], REDACTED]
                position = min(stop, end)
                if stop > end:
                    break
                k += 1
            parts.append(joined[position:end])
            out.append("".join(parts))
            begin = end
        return out

    def data(self, value: bytes) -> bytes:
        """Bytes scrubbed: text or not (undecodable bytes are kept as they are around a secret);
        a gzip body is inflated, scrubbed and deflated again (only when it held a secret).

        Raises ``CassetteWriteError`` for a gzip body that inflates past ``GZIP_SCRUB_LIMIT``.
        """
        if value[:2] == b"\x1f\x8b":
            inflated = _gunzip(value)
            if inflated is not None:
                scrubbed = self._bytes(inflated)
                return value if scrubbed == inflated else gzip.compress(scrubbed, mtime=0)
        return self._bytes(value)

    def _bytes(self, value: bytes) -> bytes:
        text = value.decode("utf-8", "surrogateescape")
        scrubbed_text = self.text(text)
        return value if scrubbed_text == text else scrubbed_text.encode("utf-8", "surrogateescape")

    def url(self, url: str) -> str:
        """``url`` without user info, secret query parameters or secrets in any part, percent-encoded or not."""
        parts = urlsplit(url)
        netloc = parts.netloc.rsplit("@", 1)[-1]  # user:password@ never survives
        query = "&".join(self._query_field(f) for f in parts.query.split("&")) if parts.query else ""
        path = self._decoded(parts.path, plus=False, safe=_PATH_SAFE)
        fragment = self._decoded(parts.fragment, plus=False, safe=_PATH_SAFE + "?")
        return self.text(urlunsplit((parts.scheme, netloc, path, query, fragment)))

    def _query_field(self, field: str) -> str:
        name, equals, value = field.partition("=")
        if equals and unquote_plus(name).lower() in SECRET_QUERY:
            return f"{name}={REDACTED}"
        return (
            self._decoded(name, plus=True, safe=_QUERY_SAFE)
            + equals
            + self._decoded(value, plus=True, safe=_QUERY_SAFE)
        )

    def _decoded(self, raw: str, *, plus: bool, safe: str) -> str:
        """``raw`` (a percent-encoded URL part) re-encoded from its scrubbed decoded form when that held a secret."""
        decoded = unquote_plus(raw) if plus else unquote(raw)
        if decoded == raw:
            return raw
        spans = self.spans(decoded)
        if not spans:
            return raw
        return (quote_plus if plus else quote)(_redacted(decoded, spans), safe=safe)

    def header(self, name: str, value: str) -> str:
        if is_secret_header(name):
            return REDACTED
        return self.url(value) if name.lower() in URL_HEADERS else self.text(value)

    def header_values(self, name: str, values: Sequence[str]) -> list[str]:
        """The values of one header (repeated in a message), scrubbed together like stream pieces."""
        if is_secret_header(name):
            return [REDACTED for _ in values]
        if name.lower() in URL_HEADERS:
            return [self.url(v) for v in values]
        return self.pieces(values)

    def json(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(k) if isinstance(k, str) else k: self.json(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.json(v) for v in value]
        return value

    # -- checking ----------------------------------------------------------------------------------

    def leaked(self, text: str) -> list[str]:
        """The named secrets that still appear in ``text``, in any of their spellings (for the final check
        before writing)."""
        return [s for s in self.secrets if any(form in text for form in _forms(s))]


def _gunzip(value: bytes) -> bytes | None:
    """``value`` inflated (every gzip member); None when it is not whole gzip.

    Raises ``CassetteWriteError`` past ``GZIP_SCRUB_LIMIT``.
    """
    out: list[bytes] = []
    total = 0
    rest = value
    while rest:
        inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
        try:
            piece = inflater.decompress(rest, GZIP_SCRUB_LIMIT - total + 1)
        except zlib.error:
            return None
        total += len(piece)
        if total > GZIP_SCRUB_LIMIT:
            raise CassetteWriteError(
                f"a gzip body inflates past {GZIP_SCRUB_LIMIT} bytes, too large to check for secrets; "
                "nothing was written (record that exchange without gzip)"
            )
        if not inflater.eof:
            return None
        out.append(piece)
        rest = inflater.unused_data
        if not rest.strip(b"\x00"):
            break
    return b"".join(out)
