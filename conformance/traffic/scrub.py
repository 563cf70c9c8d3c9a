"""Secret scrubbing for the recorder, the reports and the console (pure): headers, query parameters,
key-shaped strings and named secrets, in every spelling.

Applied to every value before anything is written (toolchain.md §2): secret headers get the value
``REDACTED`` on both sides; ``key=``/``api_key=`` style query parameters get ``REDACTED``; strings
shaped like provider keys (``sk-...``, ``sk-proj-...``, ``sk-ant-...``, ``AIza...``, Groq ``gsk_``,
xAI ``xai-``, Hugging Face ``hf_``, Perplexity ``pplx-``, NVIDIA ``nvapi-``, Replicate ``r8_``, a token
after ``Bearer``/``bearer``) and every secret the caller names are replaced wherever they occur
(URLs, header values, bodies, parsed JSON keys and values), whether the client sent them or a server
made them up. A key counts where it starts a word, also right after a JSON escape (``\\n``) or a
percent-encoded byte (``%20``), as raw stream text and echoed URLs hold them. A named secret is a
secret by value, whatever it looks like (a local server's token), and is also found
percent-encoded (as ``quote`` does, or every byte), percent-decoded, JSON-escaped, in hex (either
case) and in base64 or base64url at any of its three alignments inside a longer encoded text (the
stable core of each alignment is encoded once and searched for, ``_base64_cores``), and where a text
ends in its first 8 or more characters (a body cut off mid-secret). URL parts are scrubbed
percent-decoded too; bytes that are not UTF-8 are scrubbed around the undecodable ones; a gzip body
is scrubbed inside.

Text is also read as the JSON it holds (``Scrubber.pieces``): each JSON string literal with an
escape is searched decoded (a key written ``\\u0068\\u0075...``); and in each JSON document of a text
(the whole text, or each line, after ``data:`` for SSE) the string values of one field (same path,
array positions aside, same top-level ``type`` and ``index``/``output_index``/``content_index``/
``item_id`` on the way) are joined in order, which is the text a stream decodes to (``delta.content``
of OpenAI Chat, ``delta`` of a Responses ``output_text.delta``, Anthropic ``text_delta`` and
``partial_json``, Gemini parts, Ollama ``message.content``, tool-call ``arguments``), and each key is
joined to its string value. A secret found there is redacted like one split across chunks (below),
in the decoded strings, which are written again JSON-encoded: the stream then decodes to its text
with the secret redacted, as the recorder's replay check verifies.

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

import base64
import functools
import gzip
import json
import re
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Final
from urllib.parse import quote, quote_plus, unquote, unquote_plus, urlsplit, urlunsplit

from conformance.errors import CassetteWriteError

__all__ = [
    "GZIP_SCRUB_LIMIT",
    "KEY_VARIABLES",
    "REDACTED",
    "SECRET_HEADERS",
    "SECRET_QUERY",
    "URL_HEADERS",
    "Scrubber",
    "environment_secrets",
    "is_secret_header",
    "known_scrubber",
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
        # The other OpenAI-compatible providers, each prefix as its provider documents it, with at
        # least 20 key characters after it so that words (``hf_mirror``, ``xai-grok``) never match:
        r"gsk_[A-Za-z0-9]{20,}",  # Groq: "gsk_" + 52 (codeslick.dev/learn/groq-api-key-format)
        r"xai-[A-Za-z0-9]{20,}",  # xAI: "starts with xai-" (console.x.ai; skills.sh/adaptationio/skrillz/xai-auth)
        r"hf_[A-Za-z0-9]{20,}",  # Hugging Face user access tokens (huggingface.co/docs/hub/security-tokens: hf_...)
        r"pplx-[A-Za-z0-9]{20,}",  # Perplexity: "Authorization: Bearer pplx-..." (apimap.dev/apis/perplexity)
        r"nvapi-[A-Za-z0-9_\-]{20,}",  # NVIDIA NIM: NVIDIA_API_KEY='nvapi-...' (build.nvidia.com)
        r"r8_[A-Za-z0-9]{20,}",  # Replicate: "40-character strings that always start with r8_"
        # (replicate.com/docs/topics/security/api-tokens); OpenRouter's sk-or-v1- is an sk- above
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


KEY_VARIABLES = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GROQ_API_KEY",
    "XAI_API_KEY",
    "HF_TOKEN",
    "HUGGING_FACE_HUB_TOKEN",
    "OPENROUTER_API_KEY",
    "PERPLEXITY_API_KEY",
    "NVIDIA_API_KEY",
    "REPLICATE_API_TOKEN",
    "MISTRAL_API_KEY",
    "DEEPSEEK_API_KEY",
    "TOGETHER_API_KEY",
    "FIREWORKS_API_KEY",
    "CEREBRAS_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "OLLAMA_API_KEY",
)
"""The environment variables whose values are secrets of the process (``environment_secrets``),
besides any variable named like a key (``_KEY_VARIABLE``)."""

_KEY_VARIABLE = re.compile(r"(?:API_?KEY|_TOKEN|_SECRET|_SECRET_KEY|_ACCESS_KEY|_PASSWORD)$")
"""A variable named like a key: ``*_API_KEY``, ``*APIKEY``, ``*_TOKEN``, ``*_SECRET``, ``*_SECRET_KEY``,
``*_ACCESS_KEY``, ``*_PASSWORD`` (upper case)."""

_SECRET_VALUE_MIN = 8
"""The shortest variable value taken for a secret (``1``, ``true`` or ``unused`` would be replaced everywhere)."""


def environment_secrets(environ: Mapping[str, str]) -> tuple[str, ...]:
    """The values of ``KEY_VARIABLES`` and of every variable named like a key in ``environ`` (one
    ``--api-key-env`` most likely names), of 8 or more characters without whitespace: what ``run``,
    ``inspect`` and every report scrub besides the key shapes."""
    found = []
    for name, value in environ.items():
        upper = name.upper()
        named = upper in KEY_VARIABLES or _KEY_VARIABLE.search(upper)
        plain = not any(c.isspace() for c in value) and not value.startswith(("/", "./"))
        if named and plain and len(value) >= _SECRET_VALUE_MIN:
            found.append(value)
    return tuple(sorted(set(found)))


@functools.lru_cache(maxsize=8)
def known_scrubber(secrets: tuple[str, ...]) -> Scrubber:
    """One ``Scrubber`` per set of secrets (building one encodes every form of each secret)."""
    return Scrubber(secrets)


def is_secret_header(name: str) -> bool:
    """Whether a header's value is a secret (listed, or named like ``x-foo-api-key``/``...-token``)."""
    lowered = name.lower()
    return lowered in SECRET_HEADERS or bool(_SECRET_HEADER_PARTS.search(lowered))


def _forms(secret: str) -> set[str]:
    """How ``secret`` may be spelled on the wire: as is, percent-encoded or decoded, JSON-escaped, hex
    (either case), and the stable cores of its base64 and base64url encodings (``_base64_cores``)."""
    encoded = quote(secret, safe="")
    escaped = json.dumps(secret)[1:-1]
    raw = secret.encode("utf-8", "surrogatepass")
    forms = {
        raw.hex(),
        raw.hex().upper(),
        "".join(f"%{b:02X}" for b in raw),  # every byte percent-encoded, letters too
        "".join(f"%{b:02x}" for b in raw),
        *_base64_cores(raw),
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


_BASE64_CORE = 8
"""The fewest characters a base64 core of a secret must have to be searched for (shorter ones would
match by chance)."""


def _base64_cores(raw: bytes) -> set[str]:
    """The parts of ``raw``'s base64 and base64url encodings that are the same whatever surrounds it,
    for each of the three alignments it may have inside a longer encoded text: the whole 3-byte
    groups of ``raw`` from its first, second or third byte. Each core is encoded once; the 1 or 2
    characters at either edge that also depend on the neighbouring bytes are not part of it (they
    carry under 2 bytes of the secret)."""
    cores: set[str] = set()
    for skip in range(3):
        whole = (len(raw) - skip) // 3 * 3
        if whole <= 0:
            continue
        core = base64.b64encode(raw[skip : skip + whole]).decode("ascii")
        if len(core) >= _BASE64_CORE:
            cores |= {core, core.replace("+", "-").replace("/", "_")}
    return cores


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


def _edited(pieces: Sequence[str], joined: str, edits: Sequence[tuple[int, int, str]]) -> list[str]:
    """``pieces`` (which join to ``joined``) with ``edits`` (sorted, disjoint ``(start, end, new)``
    regions of ``joined``) made: ``new`` goes in the piece where its region starts, and the pieces it
    reaches into lose their part of it."""
    out: list[str] = []
    k = 0
    begin = 0
    for piece in pieces:
        end = begin + len(piece)
        parts: list[str] = []
        position = begin
        while k < len(edits) and edits[k][0] < end:
            start, stop, new = edits[k]
            if start >= begin:
                parts += [joined[position:start], new]
            position = min(max(stop, position), end)
            if stop > end:
                break
            k += 1
        parts.append(joined[position:end])
        out.append("".join(parts))
        begin = end
    return out


def _cut(pieces: Sequence[str], joined: str, spans: Sequence[tuple[int, int]]) -> list[str]:
    """``pieces`` with the regions ``spans`` of their join redacted (``_edited``)."""
    return _edited(pieces, joined, [(start, end, REDACTED) for start, end in spans])


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

    def across(self, first: str, second: str) -> tuple[str, str] | None:
        """``first`` and ``second`` with each named secret redacted that only their join holds (it
        starts in ``first`` and ends in ``second``: a key split across two header names); None when
        there is none. Key shapes are left to ``pieces``: joined without a separator, a shape would
        run on into the next value."""
        joined = first + second
        cut = len(first)
        spans: list[tuple[int, int]] = []
        for needle, period in self._needles:
            start = joined.find(needle, max(0, cut - len(needle) + 1))
            while start != -1 and start < cut:
                if start + len(needle) > cut:
                    spans.append((start, start + len(needle)))
                start = joined.find(needle, start + period)
        if not spans:
            return None
        head, tail = _cut([first, second], joined, _merged(spans))
        return head, tail

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
        """``value`` with its secrets replaced (``pieces`` of one piece: the JSON strings it holds are
        searched decoded too)."""
        return self._scrubbed([value])[0]

    def pieces(self, pieces: Sequence[str]) -> list[str]:
        """``pieces`` (stream chunks, one header's values) scrubbed as their joined text.

        The result has as many pieces, in order, and joins to ``text("".join(pieces))``. A secret
        that crosses a boundary is replaced in the piece where it starts; the following pieces lose
        the rest of it (a piece wholly inside a secret becomes ``""``).

        Four passes, each on the joined text the one before left: the text as it is (``spans``);
        each JSON string literal that holds an escape, decoded (``\\u0073k-...``); each run of
        percent-encoded bytes and unreserved characters, decoded (``_percent_edits``); and each JSON
        document the text holds (the whole text, or one per line, after ``data:`` in SSE), read as
        JSON: the string values of one field, joined across the document's events (the deltas a
        stream decodes to, ``_channels``), and each key joined to its string value. A JSON string
        that holds a secret in the last two passes is written again, JSON-encoded, with the secret
        redacted in its decoded text.
        """
        return self._scrubbed(pieces)

    def _scrubbed(self, pieces: Sequence[str]) -> list[str]:
        out = list(pieces)
        joined = "".join(out)
        spans = self.spans(joined)
        if spans:
            out = _cut(out, joined, spans)
            joined = "".join(out)
        for edits_of in (self._escaped_edits, self._percent_edits, self._document_edits):
            edits = edits_of(joined)
            if edits:
                out = _edited(out, joined, edits)
                joined = "".join(out)
        return out

    def _spans_each(self, texts: Sequence[str]) -> list[list[tuple[int, int]]]:
        """``spans`` of each of ``texts``, found in one search of them joined by NUL (no secret or key
        holds one, so none is found across two texts)."""
        joined = "\x00".join(texts)
        found: list[list[tuple[int, int]]] = [[] for _ in texts]
        if not joined:
            return found
        index = 0
        begin = 0
        for start, end in self.spans(joined):
            while begin + len(texts[index]) < start:
                begin += len(texts[index]) + 1
                index += 1
            found[index].append((start - begin, min(end, begin + len(texts[index])) - begin))
        return found

    def _escaped_edits(self, text: str) -> list[tuple[int, int, str]]:
        """JSON string literals holding an escape whose decoded text holds a secret: each written again."""
        if "\\" not in text:
            return []
        tokens: list[tuple[int, int, str]] = []
        for match in _ESCAPED_STRING.finditer(text):
            decoded = _decoded_string(match.group())
            if decoded is not None:
                tokens.append((match.start(), match.end(), decoded))
        edits: list[tuple[int, int, str]] = []
        for (start, end, decoded), spans in zip(tokens, self._spans_each([t[2] for t in tokens]), strict=True):
            if spans:
                edits.append((start, end, _encoded(_redacted(decoded, spans), text[start:end])))
        return edits

    def _percent_edits(self, text: str) -> list[tuple[int, int, str]]:
        """Runs of unreserved characters and percent-encoded bytes (``%68u%6Eter2``, some characters
        encoded and some not) whose decoded text holds a secret: each run written again, encoded as
        ``quote`` encodes it. Each ``%XX`` starts at most one run, and a run is walked once."""
        if "%" not in text:
            return []
        runs: list[tuple[int, int]] = []
        for match in _PERCENT_BYTE.finditer(text):
            if runs and match.start() < runs[-1][1]:
                continue
            start = match.start()
            floor = runs[-1][1] if runs else 0
            while start > floor and text[start - 1] in _UNRESERVED:
                start -= 1
            end = match.end()
            while end < len(text):
                if text[end] in _UNRESERVED:
                    end += 1
                elif text[end] == "%" and _PERCENT_BYTE.match(text, end):
                    end += 3
                else:
                    break
            runs.append((start, end))
        decoded = [unquote(text[start:end]) for start, end in runs]
        edits: list[tuple[int, int, str]] = []
        for (start, end), plain, spans in zip(runs, decoded, self._spans_each(decoded), strict=True):
            if spans:
                edits.append((start, end, quote(_redacted(plain, spans), safe="")))
        return edits

    def _document_edits(self, text: str) -> list[tuple[int, int, str]]:
        """Secrets split across the string values of one delta field (a stream's deltas) or across a
        key and its value, in the JSON documents ``text`` holds: each string that holds part of one,
        written again. The documents are read one at a time and the key-value pairs checked in
        batches, so that what is kept is about one string per event (the deltas)."""
        if '"' not in text:
            return []
        ranges: list[tuple[int, int]] = []
        deltas: list[_Slot] = []
        pairs: list[tuple[_Slot, _Slot]] = []
        changed: dict[tuple[int, int], str] = {}
        for start, end, value in _documents(text):
            _walk(value, (), (), len(ranges), 0, deltas, pairs)
            ranges.append((start, end))
            if len(pairs) >= _PAIR_BATCH:
                self._redact_groups([[k, v] for k, v in pairs], changed)
                pairs.clear()
        self._redact_groups([[k, v] for k, v in pairs], changed)
        channels: dict[Any, list[_Slot]] = {}
        for slot in deltas:
            channels.setdefault(slot[_CHANNEL], []).append(slot)
        self._redact_groups([members for members in channels.values() if len(members) > 1], changed)
        return _token_edits(text, ranges, changed) if changed else []

    def _redact_groups(self, groups: list[list[_Slot]], changed: dict[tuple[int, int], str]) -> None:
        """Each group's strings (as ``changed`` already has them) scrubbed as one joined text; what
        changes goes into ``changed`` by (document, place)."""
        values = [[changed.get((slot[_DOCUMENT], slot[_ORDINAL]), slot[_VALUE]) for slot in group] for group in groups]
        texts = ["".join(v) for v in values]
        for group, pieces, joined, spans in zip(groups, values, texts, self._spans_each(texts), strict=True):
            if spans:
                for slot, old, new in zip(group, pieces, _cut(pieces, joined, spans), strict=True):
                    if new != old:
                        changed[slot[_DOCUMENT], slot[_ORDINAL]] = new

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
        """A JSON value scrubbed as its JSON text is (``text``: a secret split across a key and its
        value, or across the values of one field, is found too); each string on its own when the
        scrubbed text would not read back."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict | list):
            try:
                dumped = json.dumps(value, ensure_ascii=False)
            except (TypeError, ValueError):
                return self._each(value)
            scrubbed = self.text(dumped)
            if scrubbed == dumped:
                return value
            try:
                return json.loads(scrubbed)
            except ValueError:
                return self._each(value)
        return value

    def _each(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(k) if isinstance(k, str) else k: self._each(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self._each(v) for v in value]
        return value

    # -- checking ----------------------------------------------------------------------------------

    def leaked(self, text: str) -> list[str]:
        """The named secrets that still appear in ``text``, in any of their spellings, also in the text
        its JSON strings decode to, joined across the deltas of one field and each key joined to its
        value (for the final check before writing)."""
        views = [text]
        views += [d for m in _ESCAPED_STRING.finditer(text) if (d := _decoded_string(m.group())) is not None]
        if '"' in text:
            deltas: list[_Slot] = []
            pairs: list[tuple[_Slot, _Slot]] = []
            channels: dict[Any, list[str]] = {}
            for number, (_, _, value) in enumerate(_documents(text)):
                _walk(value, (), (), number, 0, deltas, pairs)
                views += [key[_VALUE] + member[_VALUE] for key, member in pairs]
                pairs.clear()
            for slot in deltas:
                channels.setdefault(slot[_CHANNEL], []).append(slot[_VALUE])
            views += ["".join(values) for values in channels.values()]
        seen = "\x00".join(views)
        return [s for s in self.secrets if any(form in seen for form in _forms(s))]


# -- JSON inside text ----------------------------------------------------------------------------------

_STRING = re.compile(r'"(?:[^"\\\r\n]|\\.)*"')
"""A JSON string literal (in a JSON text, every ``"`` outside strings starts one)."""
_ESCAPED_STRING = re.compile(r'"[^"\\\r\n]*(?:\\.[^"\\\r\n]*)+"')
"""A JSON string literal that holds at least one escape."""
_SPACE = re.compile(r"\s*")
_PERCENT_BYTE = re.compile(r"%[0-9A-Fa-f]{2}")
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_MARKS = ("index", "output_index", "content_index", "item_id")
"""Fields that tell apart the streams of one field (a choice, a content block, an output item)."""


_Slot = tuple[int, int, str, Any]
"""One JSON string of a text's documents: its document, its place among that document's strings
(keys and values, in document order), its value, and for a delta its field (``_CHANNEL``: the path
without array positions, the top-level ``type``, the ``_MARKS`` on its way)."""
_DOCUMENT: Final = 0
_ORDINAL: Final = 1
_VALUE: Final = 2
_CHANNEL: Final = 3

_DELTA_FIELDS = frozenset(
    {"content", "text", "delta", "partial_json", "arguments", "thinking", "reasoning", "reasoning_content", "refusal"}
)
"""The fields whose string values a stream's events add up into the text it decodes to (OpenAI Chat
``delta.content`` and tool-call ``arguments``, Responses ``delta``, Anthropic ``text`` and
``partial_json``, Gemini parts' ``text``, Ollama ``message.content``, reasoning)."""
_PAIR_BATCH = 20_000
"""Key-value pairs checked at a time (``Scrubber._document_edits``)."""


class _Pairs(list[tuple[str, Any]]):
    """A JSON object as its members in order (duplicates kept)."""


def _documents(text: str) -> Iterator[tuple[int, int, Any]]:
    """The JSON documents ``text`` holds, as ``(start, end, value)``, one at a time: the whole text
    when it is one, else one per line (after an SSE ``data:``, without a JSON-array stream's ``[``,
    ``,`` and ``]``)."""
    start = _SPACE.match(text).end()  # type: ignore[union-attr]  # \s* always matches
    if text[start : start + 1] in ("{", "["):
        end = len(text.rstrip())
        value = _loaded(text[start:end])
        if value is not None:
            yield (start, end, value)
            return
    begin = 0
    while begin <= len(text):
        end = text.find("\n", begin)
        end = len(text) if end == -1 else end
        line = text[begin:end] if text.startswith(("data:", "{", "[", ",", " "), begin) else ""
        offset = 5 if line.startswith("data:") else 0
        while offset < len(line) and line[offset] in " \t\r[,":
            offset += 1
        if offset < len(line) and line[offset] in "{[" and '"' in line:
            tail = len(line)
            while tail > offset and line[tail - 1] in " \t\r,]":
                tail -= 1
            for stop in dict.fromkeys((tail, *(i + 1 for i in range(tail, len(line)) if line[i] == "]"))):
                value = _loaded(line[offset:stop])
                if value is not None:
                    yield (begin + offset, begin + stop, value)
                    break
        begin = end + 1


def _loaded(text: str) -> Any:
    try:
        return json.loads(text, object_pairs_hook=_Pairs)
    except (ValueError, RecursionError):
        return None


def _walk(
    value: Any,
    path: tuple[Any, ...],
    marks: tuple[Any, ...],
    document: int,
    ordinal: int,
    deltas: list[_Slot],
    pairs: list[tuple[_Slot, _Slot]],
) -> int:
    """Walk ``value``'s strings in document order from place ``ordinal``: the values of delta fields
    go to ``deltas``, each key with a string value to ``pairs``; the next place is returned."""
    if isinstance(value, _Pairs):
        more = [
            (key, member)
            for key, member in value
            if (key in _MARKS and isinstance(member, int | str))
            or (key == "type" and not path and isinstance(member, str))
        ]
        if more:
            marks = (*marks, *more)
        for key, member in value:
            if isinstance(member, str):
                slot = (document, ordinal + 1, member, (path, key, marks))
                pairs.append(((document, ordinal, key, None), slot))
                if key in _DELTA_FIELDS:
                    deltas.append(slot)
                ordinal += 2
            else:
                ordinal = _walk(member, (*path, key), marks, document, ordinal + 1, deltas, pairs)
    elif isinstance(value, list):
        for member in value:
            if isinstance(member, str):
                ordinal += 1
            else:
                ordinal = _walk(member, (*path, "[]"), marks, document, ordinal, deltas, pairs)
    elif isinstance(value, str):
        ordinal += 1
    return ordinal


def _token_edits(
    text: str, ranges: list[tuple[int, int]], changed: dict[tuple[int, int], str]
) -> list[tuple[int, int, str]]:
    """Where the strings ``changed`` ((document, place) -> new value) stand in ``text``, and their new
    JSON spelling."""
    wanted: dict[int, dict[int, str]] = {}
    for (document, ordinal), value in changed.items():
        wanted.setdefault(document, {})[ordinal] = value
    edits: list[tuple[int, int, str]] = []
    for document, news in sorted(wanted.items()):
        start, end = ranges[document]
        for ordinal, match in enumerate(_STRING.finditer(text, start, end)):
            if ordinal in news:
                edits.append((match.start(), match.end(), _encoded(news[ordinal], match.group())))
    return edits


def _decoded_string(token: str) -> str | None:
    try:
        value = json.loads(token)
    except ValueError:
        return None
    return value if isinstance(value, str) else None


def _encoded(value: str, token: str) -> str:
    """``value`` as a JSON string literal, escaped to ASCII when ``token`` (the one it replaces) was."""
    return json.dumps(value, ensure_ascii=token.isascii())


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
