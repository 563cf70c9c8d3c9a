"""Secret scrubbing for the recorder (pure): headers, query parameters, and key-shaped strings.

Applied to every value before anything is written (toolchain.md §2): secret headers get the value
``REDACTED`` on both sides; ``key=``/``api_key=`` style query parameters get ``REDACTED``; strings
shaped like provider keys (``sk-...``, ``sk-ant-...``, ``AIza...``, ``Bearer <token>``) and every
secret the caller names are replaced wherever they occur (URLs, header values, bodies, parsed JSON
keys and values). ``leaked`` is the final guard: the recorder refuses to write text in which a
named secret still appears.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

__all__ = [
    "REDACTED",
    "SECRET_HEADERS",
    "SECRET_QUERY",
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

_KEY_SHAPED = re.compile(
    r"(?<![A-Za-z0-9_\-])(?:"
    r"sk-ant-[A-Za-z0-9_\-]{6,}"
    r"|sk-[A-Za-z0-9_\-]{6,}"
    r"|AIza[0-9A-Za-z_\-]{10,}"
    r"|(?<=Bearer )[A-Za-z0-9._~+/\-]{6,}=*"
    r"|(?:org|proj)-[A-Za-z0-9]{12,}"
    r")"
)


def is_secret_header(name: str) -> bool:
    """Whether a header's value is a secret (listed, or named like ``x-foo-api-key``/``...-token``)."""
    lowered = name.lower()
    return lowered in SECRET_HEADERS or bool(_SECRET_HEADER_PARTS.search(lowered))


class Scrubber:
    """Replaces secrets in strings, bytes, URLs, headers and JSON values.

    ``secrets`` are literal values to remove wherever they appear (the API key in use, fake
    secrets of a test); key-shaped strings are removed whether named or not.
    """

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self.secrets = tuple(sorted({s for s in secrets if s and len(s) >= 4}, key=len, reverse=True))

    def text(self, value: str) -> str:
        for secret in self.secrets:
            value = value.replace(secret, REDACTED)
        return _KEY_SHAPED.sub(REDACTED, value)

    def data(self, value: bytes) -> bytes:
        try:
            return self.text(value.decode("utf-8")).encode("utf-8")
        except UnicodeDecodeError:
            for secret in self.secrets:
                value = value.replace(secret.encode(), REDACTED.encode())
            return value

    def url(self, url: str) -> str:
        parts = urlsplit(url)
        netloc = parts.netloc.rsplit("@", 1)[-1]  # user:password@ never survives
        query = parts.query
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(k.lower() in SECRET_QUERY for k, _ in pairs):  # re-encoded only when a parameter is a secret
            query = urlencode([(k, REDACTED if k.lower() in SECRET_QUERY else v) for k, v in pairs], safe=":/,$;")
        return self.text(urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment)))

    def header(self, name: str, value: str) -> str:
        return REDACTED if is_secret_header(name) else self.text(value)

    def json(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(k) if isinstance(k, str) else k: self.json(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.json(v) for v in value]
        return value

    def leaked(self, text: str) -> list[str]:
        """The named secrets that still appear in ``text`` (for the final check before writing)."""
        return [s for s in self.secrets if s in text]
