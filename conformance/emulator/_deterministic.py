"""Deterministic ids, timestamps, token counts and fragmentation for the emulator (pure).

Nothing here reads a clock or a random source: every id is cut from the SHA-256 of its keys
(scenario id, turn, what it names, index), so the same script played twice gives byte-identical
responses. The id *shapes* follow real traffic (``tests/realworld`` cassettes):

- OpenAI: ``chatcmpl-`` + 29 base62, ``call_`` + 24 base62, ``fp_`` + 10 hex (Chat);
  ``resp_``/``fc_``/``msg_``/``rs_`` + 50 hex (Responses), ``req_`` + 32 hex request ids;
- Anthropic: ``msg_01`` / ``toolu_01`` + 22 base62, ``req_011C`` + 20 base62;
- Gemini: a 23-character ``responseId``, 8-character ``functionCall.id`` (gemini-3.5-flash);
- Ollama: ``call_`` + 8 ``[a-z0-9]`` (``server/routes.go::toolCallId``).

Fragmentation imitates how providers cut text and argument JSON: roughly one token per piece,
split mid-word and mid-JSON (``{"`` · ``location`` · ``":"`` · ``New`` · `` York`` · ``"}``, as in the
recorded OpenAI streams), never inside a code point.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence

from conformance.scenarios.values import Reply, ScriptedCall

__all__ = [
    "CREATED",
    "CREATED_ISO",
    "base62",
    "call_object",
    "count_tokens",
    "digest",
    "fragments",
    "hex_id",
    "input_tokens",
    "iso_time",
    "lower_alnum",
    "output_tokens",
    "pad",
    "reasoning_tokens",
    "text_fragments",
    "tokens",
]

CREATED = 1735689600
"""The fixed ``created``/``created_at`` time of every response: 2025-01-01T00:00:00Z."""
CREATED_ISO = "2025-01-01T00:00:00Z"

_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_LOWER_ALNUM = "abcdefghijklmnopqrstuvwxyz0123456789"


def digest(*keys: object) -> bytes:
    """SHA-256 of the keys (their ``str``), joined by a unit separator."""
    return hashlib.sha256("\x1f".join(map(str, keys)).encode("utf-8", "surrogatepass")).digest()


def _alphabet_id(alphabet: str, length: int, keys: Sequence[object]) -> str:
    number = int.from_bytes(digest(*keys) + digest("more", *keys), "big")
    out = []
    for _ in range(length):
        number, rest = divmod(number, len(alphabet))
        out.append(alphabet[rest])
    return "".join(out)


def base62(length: int, *keys: object) -> str:
    """``length`` base62 characters derived from ``keys``."""
    return _alphabet_id(_BASE62, length, keys)


def lower_alnum(length: int, *keys: object) -> str:
    """``length`` characters of ``[a-z0-9]`` derived from ``keys``."""
    return _alphabet_id(_LOWER_ALNUM, length, keys)


def hex_id(length: int, *keys: object) -> str:
    """``length`` lower-case hex digits derived from ``keys`` (up to 128)."""
    return (digest(*keys) + digest("more", *keys)).hex()[:length]


def pad(limit: int, *keys: object) -> int:
    """A deterministic number in ``0..limit`` (e.g. how many spaces pad an Anthropic event)."""
    return digest(*keys)[0] % (limit + 1)


def iso_time(offset_ms: int = 0) -> str:
    """``CREATED`` plus ``offset_ms`` as an RFC 3339 time with microseconds (Ollama's ``created_at``)."""
    seconds, ms = divmod(offset_ms, 1000)
    minutes, seconds = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    micros = ms * 1000 + (offset_ms * 7) % 1000  # real stamps are not round
    return f"2025-01-01T{hours % 24:02d}:{minutes:02d}:{seconds:02d}.{micros:06d}Z"


# --------------------------------------------------------------------------------------------
# Tokens and fragments
# --------------------------------------------------------------------------------------------

_TOKEN = re.compile(r"\s*[A-Za-z0-9_]{1,8}|\s*[^A-Za-z0-9_\s]{1,2}|\s+")
"""A crude tokenizer: a word (at most 8 characters, so long words split mid-word) with its
leading spaces, or one or two punctuation characters, or a run of spaces."""


def tokens(text: str) -> list[str]:
    """``text`` cut into token-like pieces that concatenate back to it."""
    return _TOKEN.findall(text)


def fragments(text: str, per: int = 1) -> list[str]:
    """``text`` as fragments of ``per`` tokens each (an empty text gives no fragment)."""
    pieces = tokens(text)
    return ["".join(pieces[i : i + per]) for i in range(0, len(pieces), per)]


_WORD = re.compile(r"\s*\S+|\s+")


def text_fragments(text: str, per: int = 1) -> list[str]:
    """Visible text as fragments of ``per`` words each (with their leading spaces)."""
    words = _WORD.findall(text)
    return ["".join(words[i : i + per]) for i in range(0, len(words), per)]


def count_tokens(text: str) -> int:
    """A token count derived from the length (about four characters a token)."""
    return (len(text) + 3) // 4


def output_tokens(reply: Reply) -> int:
    """The completion tokens of a reply: its text, reasoning and calls (name + argument text)."""
    total = count_tokens(reply.text or "") + count_tokens(reply.reasoning or "")
    total += sum(count_tokens(call.name) + count_tokens(call.arguments_raw) + 5 for call in reply.tool_calls)
    return max(1, total)


def reasoning_tokens(reply: Reply) -> int:
    """The reasoning part of ``output_tokens``."""
    return count_tokens(reply.reasoning or "")


def input_tokens(turn: int) -> int:
    """Prompt tokens of a turn: they grow with the conversation (not with the request bytes, so
    a re-recorded cassette does not change when an adapter formats its request differently)."""
    return 40 + 30 * turn


def call_object(call: ScriptedCall) -> object:
    """What an object-valued wire (Anthropic ``input``, Gemini ``args``, Ollama ``arguments``) sends:
    the arguments object, else the raw text parsed when it is a JSON object, else the raw text
    itself as a JSON string (so malformed arguments reach the client verbatim). Empty text is no
    arguments (E3: some models send ``""``), which an object wire can only say as ``{}``."""
    if call.arguments is not None:
        return call.arguments
    if not call.arguments_raw.strip():
        return {}
    try:
        parsed = json.loads(call.arguments_raw)
    except ValueError:
        return call.arguments_raw
    return parsed if isinstance(parsed, dict) else call.arguments_raw
