"""The request headers of black-box clients: what each wire requires, where the API key goes, and no
language runtime's placeholder as a value (``conformance certify`` only).

``client.request_headers``  every request the client sent (the turn's own, and the side requests to
                            other endpoints: ``/api/show``, model lists) is judged on its headers as
                            the server received them, its request target and its body:

1. **What the wire requires is there and well-formed** (``WIRE_HEADERS``, table below): the content
   type (``application/json``, with or without parameters such as ``charset``), the API key in the
   wire's header and form, and Anthropic's ``anthropic-version``, one of the versions Anthropic
   documents (``ANTHROPIC_VERSIONS``). Judged on the turn's own requests only (a side request's
   endpoint may take another body).
2. **The key only where the wire puts it**: not in another header, not in the URL (its path or a query
   parameter; Gemini's documented ``key`` parameter excepted), not in the body. A key sent in the
   wrong place instead of the right one is one finding, on the header the wire reads it from.
3. **No runtime placeholder as a value** (``PLACEHOLDERS``): ``NOT_GIVEN`` (openai-python and
   anthropic-sdk-python ``_types.py``: ``NotGiven.__repr__``), Python's ``None``, JavaScript's
   ``undefined``, ``null``, ``NaN`` and ``[object Object]`` (``String()`` of those values), Go's
   ``<nil>`` (``fmt.Sprint(nil)``), as those runtimes print them (case-sensitive), alone or after a
   scheme word (``Bearer None``, ``Bearer undefined``), and an empty value (an authorization header
   holding only its scheme, ``Bearer``, is one too). A library formatted a missing value into a
   header: the provider receives the literal text.

Findings are defects: they name the header (``headers["x-api-key"]``), the URL (``url``, or
``url?<parameter>``) or the body path (``$.metadata.user``), say what is wrong and what the provider
answers. **They never show the key**: they say where it went (a token that is not the key is
described by its length), and a request path is shown with the key replaced.

================  =====================  ========================================  =====================================
wire              content type           API key                                   otherwise the provider answers
================  =====================  ========================================  =====================================
openai_chat,      ``application/json``   ``Authorization: Bearer <key>`` [2]       401 "You didn't provide an API key";
openai_responses  [1]                                                              another key: 401 invalid_api_key [3];
                                                                                   another content type: 400
                                                                                   unsupported_content_type [4]
anthropic         ``application/json``   ``x-api-key: <key>`` [5], or              401 "x-api-key header is required",
                  [5]                    ``Authorization: Bearer <key>`` with      another key: 401 "invalid x-api-key"
                                         version 2026-10-21 [16]; and              [7]; no version: 400
                                         ``anthropic-version``: a version          "anthropic-version: header is
                                         Anthropic documents (a date) [6]          required" [9]; another: 400 "... is
                                                                                   not a valid version" [10]
gemini            ``application/json``   ``x-goog-api-key: <key>`` [11], or the    403 PERMISSION_DENIED "Method
                  [11]                   ``key`` query parameter [12]              doesn't allow unregistered callers";
                                                                                   another key: 400 API_KEY_INVALID [13]
ollama            not required: its own  none needed locally; a key, when sent,    (ollama.com: 401)
                  examples send none     as ``Authorization: Bearer <key>`` [15]
                  [14]
================  =====================  ========================================  =====================================

[1] https://platform.openai.com/docs/api-reference/chat/create (every example sends
``-H "Content-Type: application/json"``); openai-python 3.57.0 ``openai/_base_client.py:808``.
[2] https://platform.openai.com/docs/api-reference/authentication ("API keys should be provided via
HTTP Bearer authentication"); openai-python 3.57.0 ``openai/lib/_client_auth.py:360``.
[3] the API's 401 as quoted in yihong0618/bilingual_book_maker#137 ("You need to provide your API key
in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY)"); another key:
continuedev/continue#9634 ("401 Incorrect API key provided", code ``invalid_api_key``).
[4] the API's 400 as quoted in httpie/cli#1559 ("This API method only accepts 'application/json'
requests").
[5] https://platform.claude.com/docs/en/api/overview, "Authentication" ("All requests to the Claude
API must include an x-api-key header with your API key") and "Content types" ("content-type:
application/json").
[6] https://platform.claude.com/docs/en/api/versioning ("you must send an anthropic-version request
header"; the version history lists 2026-10-21, 2023-06-01 and 2023-01-01).
[7] the API's 401 as quoted in karthink/gptel#354 and n8n-io/n8n#37930; another key:
abi/screenshot-to-code#430 ("invalid x-api-key").
[8] (before API version 2026-10-21) a bearer token was answered 401 "OAuth authentication is currently
not supported" (anthropics/anthropic-sdk-python#988, 2026-03-04): see [16] for what holds now.
[9] the API's 400 as quoted in envoyproxy/ai-gateway#1909 and PipedreamHQ/pipedream#9697.
[10] the API's 400 as quoted in decolua/9router#2357 (``"2023-06-01, 2023-06-01" is not a valid
version``); sseshachala/conductai#2179 (an undocumented date answered 400).
[11] https://ai.google.dev/api, "Authentication" ("All requests to the Gemini API must include an
x-goog-api-key header with your API key"; the example sends ``Content-Type: application/json``);
google-genai 3.6.1 ``google/genai/_api_client.py:1333-1337``.
[12] https://ai.google.dev/gemini-api/docs/api-key (``...:generateContent?key=YOUR_API_KEY``);
https://cloud.google.com/docs/authentication/api-keys-use (a key in the ``key`` parameter or the
``x-goog-api-key`` header).
[13] the API's 403 as quoted in google-gemini/deprecated-generative-ai-js#238 and googleapis/js-genai#898;
another key: 400 ``INVALID_ARGUMENT``, ``ErrorInfo.reason`` ``API_KEY_INVALID`` (real traffic,
wire-formats.md §4e).
[14] https://docs.ollama.com/api/chat (``curl http://localhost:11434/api/chat -d '{...}'``: curl then
says ``application/x-www-form-urlencoded``, and Ollama answers).
[16] the official SDK, anthropic 2.14.0, sends ``api_key`` as ``Authorization: Bearer <key>``
(``anthropic/_client.py:377-381``, ``_api_key_auth``) with ``anthropic-version: 2026-10-21``
(``anthropic/_constants.py:7``): the provider's own client is the source that the API reads it there.
[15] https://docs.ollama.com/api/authentication ("No authentication is required when accessing
Ollama's API locally"; ollama.com: "Authorization: Bearer $OLLAMA_API_KEY"); ollama-python 0.6.3
``ollama/_client.py:112-114``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol
from urllib.parse import parse_qsl, unquote

from conformance.checks._common import CaseContext, verdict
from conformance.checks.recorded_request import step
from conformance.clients.evidence import SentRequest
from conformance.verdicts import CheckVerdict, Finding

__all__ = [
    "ANTHROPIC_VERSIONS",
    "CHECK",
    "KEY_SHOWN",
    "PLACEHOLDERS",
    "WIRE_HEADERS",
    "WireHeaders",
    "client_request_headers",
    "header_findings",
    "placeholder",
]

CHECK = "client.request_headers"

PLACEHOLDERS = frozenset({"NOT_GIVEN", "None", "undefined", "null", "NaN", "[object Object]", "<nil>"})
"""Values a language runtime prints for a missing value (module docstring, 3), as it prints them."""

ANTHROPIC_VERSIONS = frozenset({"2023-01-01", "2023-06-01", "2026-10-21"})
"""The ``anthropic-version`` values Anthropic documents (https://platform.claude.com/docs/en/api/versioning):
a version published later belongs here, with that page as its source."""

KEY_SHOWN = "<the call's API key>"
"""What a finding shows instead of the key."""

_AUTH_SCHEMES = frozenset({"bearer", "basic", "token"})
"""Scheme words that, alone in an authorization header, leave its credentials empty."""
_SCHEMED = re.compile(r"(\S+) +(.*)", re.DOTALL)
_SCHEME_WORD = re.compile(r"[A-Za-z][A-Za-z0-9-]{0,19}")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


@dataclass(frozen=True, kw_only=True)
class WireHeaders:
    """What one wire requires of a request's headers, and what its provider answers otherwise."""

    provider: str
    """The provider's name, as findings say it."""
    content_type: bool
    """The request must say ``content-type: application/json`` (parameters such as a charset allowed)."""
    key_header: str
    """The header the provider reads the API key from (lower-case)."""
    bearer: bool
    """The key goes after the ``Bearer`` scheme (``Authorization: Bearer <key>``), not alone."""
    key_required: bool
    """The provider needs the key (Ollama serves locally without one: a key left out is no finding)."""
    key_query: str = ""
    """A query parameter the provider reads the key from as well (Gemini's ``key``)."""
    key_bearer_too: bool = False
    """The provider reads the key from ``Authorization: Bearer <key>`` as well (Anthropic: its official
    SDK sends it there, [16])."""
    without_key: str = ""
    """What the provider answers a request whose key is not where it reads it (status and quoted message)."""
    bad_key: str = ""
    """What it answers a key header holding something else than a key it issued."""
    key_elsewhere: Mapping[str, str] = field(default_factory=dict)
    """Another header the key may be sent in by mistake -> what the provider answers then (instead of
    ``without_key``)."""
    without_content_type: str = ""
    """What the provider answers another content type (empty: documented as required, answer unquoted)."""
    version_header: str = ""
    """A version header the wire requires (Anthropic's ``anthropic-version``)."""
    versions: frozenset[str] = frozenset()
    """The values of ``version_header`` the provider documents."""
    without_version: str = ""
    """What the provider answers a request without ``version_header``."""
    bad_version: str = ""
    """What it answers a value it does not document."""


_OPENAI = WireHeaders(
    provider="OpenAI",
    content_type=True,
    key_header="authorization",
    bearer=True,
    key_required=True,
    without_key='401 ("You didn\'t provide an API key")',
    bad_key='401 invalid_api_key ("Incorrect API key provided")',
    without_content_type="400 unsupported_content_type",
)

WIRE_HEADERS: Mapping[str, WireHeaders] = {
    "openai_chat": _OPENAI,
    "openai_responses": _OPENAI,
    "anthropic": WireHeaders(
        provider="Anthropic",
        content_type=True,
        key_header="x-api-key",
        bearer=False,
        key_required=True,
        key_bearer_too=True,
        without_key='401 ("x-api-key header is required")',
        bad_key='401 ("invalid x-api-key")',
        version_header="anthropic-version",
        versions=ANTHROPIC_VERSIONS,
        without_version='400 ("anthropic-version: header is required")',
        bad_version='400 ("... is not a valid version")',
    ),
    "gemini": WireHeaders(
        provider="Gemini",
        content_type=True,
        key_header="x-goog-api-key",
        bearer=False,
        key_required=True,
        key_query="key",
        without_key='403 PERMISSION_DENIED ("Method doesn\'t allow unregistered callers")',
        bad_key="400 INVALID_ARGUMENT (API_KEY_INVALID)",
    ),
    "ollama": WireHeaders(
        provider="Ollama",
        content_type=False,
        key_header="authorization",
        bearer=True,
        key_required=False,
        without_key="401 (ollama.com; a local server needs no key)",
        bad_key="401 (ollama.com)",
    ),
}
"""Wire format -> what its requests' headers must hold (the module docstring's table and sources)."""


def client_request_headers(ctx: CaseContext) -> CheckVerdict | None:
    """The ``client.request_headers`` verdict of a black-box case (None: it sent nothing)."""
    if ctx.client is None:
        return None
    rules = WIRE_HEADERS.get(ctx.adapter.wire_format)
    findings: list[Finding] = []
    ran = False
    for turn in ctx.client:
        seen: set[tuple[str, str]] = set()
        requests = [(sent, True) for sent in turn.sent] + [(sent, False) for sent in turn.side]
        for sent, own in requests:
            ran = True
            for finding in header_findings(sent, rules, api_key=turn.api_key, turn=turn.turn, own=own):
                if (finding.path, finding.message) not in seen:  # a retry repeats its request's findings
                    seen.add((finding.path, finding.message))
                    findings.append(finding)
    return verdict(CHECK, findings) if ran else None


def header_findings(
    sent: SentRequest, rules: WireHeaders | None, *, api_key: str, turn: int | None = None, own: bool = True
) -> list[Finding]:
    """The findings of one request (the module docstring's 1-3): ``rules`` the wire's (None: only the
    placeholders and the key's places are judged), ``own`` False for a side request (what the wire
    requires of its own endpoint is not asked of it)."""
    values: dict[str, str] = {}
    for name, value in sent.headers:
        values[name.lower()] = value.strip()  # RFC 9110 §5.5: surrounding whitespace is not the value
    where = "" if own else f" (side request {sent.method} {_scrubbed(sent.path.partition('?')[0], api_key)})"
    findings: list[Finding] = []

    def add(path: str, message: str, expected: Any = None, actual: Any = None) -> None:
        # the one way out of this module: whatever a client put where, the key itself never leaves
        shown = actual.replace(api_key, KEY_SHOWN) if api_key and isinstance(actual, str) else actual
        findings.append(
            Finding(
                check=CHECK,
                message=_scrubbed(message + where, api_key),
                path=_scrubbed(path, api_key),
                expected=expected,
                actual=shown,
                turn=turn,
            )
        )

    key_header = rules.key_header if rules is not None else ""
    flagged: set[str] = set()
    for name, value in values.items():
        what = placeholder(value, authorization=name in ("authorization", "proxy-authorization", key_header))
        if what is None:
            continue
        flagged.add(name)
        if rules is not None and name == key_header:
            consequence = f"the API key belongs there: {rules.provider} answers {rules.without_key}"
        else:
            consequence = "the provider receives that text as the header's value"
        add(
            _header(name),
            f"`{name}` carries {what}: a runtime's placeholder, what a library writes when it formats a missing"
            f" value into a header; {consequence}",
            actual=value,
        )
    if rules is not None and own:
        _required(values, flagged, rules, add)
    if api_key:
        _key_places(sent, values, flagged, rules, api_key, add)
    return findings


def placeholder(value: str, *, authorization: bool = False) -> str | None:
    """What makes ``value`` (a header's value, stripped) a runtime's placeholder, in words, or None:
    empty, one of ``PLACEHOLDERS`` alone or after a scheme word, or (``authorization``) a scheme alone."""
    if value == "":
        return "an empty value"
    if value in PLACEHOLDERS:
        return f"`{value}`"
    schemed = _SCHEMED.fullmatch(value)
    if schemed is not None and schemed.group(2).strip() in PLACEHOLDERS:
        return f"`{value}` (the placeholder after the scheme `{schemed.group(1)}`)"
    if authorization and value.lower() in _AUTH_SCHEMES:
        return f"`{value}` (a scheme with nothing after it)"
    return None


class _Add(Protocol):
    """``add`` of ``header_findings``: one finding, the key scrubbed from what it shows."""

    def __call__(self, path: str, message: str, expected: Any = None, actual: Any = None) -> None: ...


def _required(values: Mapping[str, str], flagged: set[str], rules: WireHeaders, add: _Add) -> None:
    """Module docstring, 1: the content type and the version header (the key: ``_key_places``)."""
    if rules.content_type and "content-type" not in flagged:
        found = values.get("content-type")
        answer = f": {rules.provider} answers {rules.without_content_type}" if rules.without_content_type else ""
        if found is None:
            add(
                _header("content-type"),
                f"no `content-type` header: {rules.provider} requires `application/json`{answer}",
                expected="application/json",
            )
        elif found.partition(";")[0].strip().lower() != "application/json":  # RFC 9110 §8.3.1: case-insensitive
            add(
                _header("content-type"),
                f"`content-type: {found}` is not `application/json`, which {rules.provider} requires{answer}",
                expected="application/json",
                actual=found,
            )
    name = rules.version_header
    if name and name not in flagged:
        found = values.get(name)
        documented = ", ".join(sorted(rules.versions, reverse=True))
        if found is None:
            add(
                _header(name),
                f"no `{name}` header (documented versions: {documented}):"
                f" {rules.provider} answers {rules.without_version}",
                expected=sorted(rules.versions, reverse=True)[0],
            )
        elif found not in rules.versions:
            shape = "a date" if _DATE.fullmatch(found) else "not even a date YYYY-MM-DD"
            add(
                _header(name),
                f"`{name}: {found}` is {shape} {rules.provider} does not document as a version"
                f" ({documented}): {rules.provider} answers {rules.bad_version}",
                expected=sorted(rules.versions, reverse=True)[0],
                actual=found,
            )


@dataclass(frozen=True)
class _Place:
    """Where in a request the key was found."""

    kind: Literal["header", "url", "query", "body"]
    name: str = ""
    """The header's or query parameter's name, or the body's JSON path."""

    @property
    def path(self) -> str:
        """As a finding's path: ``headers["x-api-key"]``, ``url``, ``url?api_key``, ``$.metadata.user``."""
        return {"header": _header(self.name), "url": "url", "query": f"url?{self.name}", "body": self.name}[self.kind]

    @property
    def words(self) -> str:
        return {
            "header": f"the `{self.name}` header",
            "url": "the URL's path",
            "query": f"the URL's `{self.name}` query parameter",
            "body": f"the body at {self.name}",
        }[self.kind]


def _key_places(
    sent: SentRequest,
    values: Mapping[str, str],
    flagged: set[str],
    rules: WireHeaders | None,
    key: str,
    add: _Add,
) -> None:
    """Module docstring, 1 (the key in the wire's header) and 2 (nowhere else)."""
    name = rules.key_header if rules is not None else ""
    right = name in values and _carries(values[name], key, bearer=rules is not None and rules.bearer)
    bearer_too = rules is not None and rules.key_bearer_too
    if bearer_too and _carries(values.get("authorization", ""), key, bearer=True):  # its other place: not a leak
        right = right or name not in values
        values = {k: v for k, v in values.items() if k != "authorization"}
    path, _, query = sent.path.partition("?")
    params = parse_qsl(query, keep_blank_values=True)
    in_query = rules is not None and bool(rules.key_query) and (rules.key_query, key) in params
    own_header, own_query = _Place("header", name), _Place("query", rules.key_query if rules is not None else "")
    wrong = [
        place
        for place in _places(values, path, params, sent.body, key)
        if not (place == own_header and right) and not (place == own_query and in_query)
    ]
    if rules is not None and not right and not in_query and name not in flagged:
        form = "Bearer <key>" if rules.bearer else "<key>"
        also = f" (or the `{rules.key_query}` query parameter)" if rules.key_query else ""
        elsewhere = [p for p in wrong if p != own_header]
        if name in values:
            what = _mismatch(values[name], key, bearer=rules.bearer, provider=rules.provider)
            add(
                own_header.path,
                f"`{name}` carries {what}, where {rules.provider} reads `{name}: {form}`{also}:"
                f" {rules.provider} answers {rules.bad_key}",
                expected=form.replace("<key>", KEY_SHOWN),
                actual=_described(values[name], key),
            )
            wrong = elsewhere
        elif rules.key_required or elsewhere:
            instead = f"; the call's API key was sent in {', '.join(p.words for p in elsewhere)} instead"
            instead = instead if elsewhere else ""
            answers = [
                rules.key_elsewhere[p.name] for p in elsewhere if p.kind == "header" and p.name in rules.key_elsewhere
            ]
            add(
                own_header.path,
                f"no `{name}` header{also}, where {rules.provider} reads the API key as `{name}: {form}`"
                f"{instead}: {rules.provider} answers {answers[0] if answers else rules.without_key}",
                expected=form.replace("<key>", KEY_SHOWN),
            )
            wrong = []  # said in this finding
    for place in wrong:
        add(place.path, _leak_message(place, rules), actual=KEY_SHOWN)


def _places(
    values: Mapping[str, str], path: str, params: Sequence[tuple[str, str]], body: Any, key: str
) -> Iterator[_Place]:
    """Every place of a request that holds ``key``: headers, the URL's path and query, the body."""
    for name, value in values.items():
        if key in name or key in value:
            yield _Place("header", name)
    if key in unquote(path):
        yield _Place("url")
    for name, value in params:
        if key in name or key in value:
            yield _Place("query", name)
    yield from (_Place("body", where) for where in _in_body(body, key, "$"))


def _in_body(value: Any, key: str, path: str) -> Iterator[str]:
    """The JSON paths of the body's strings (and object keys) that hold ``key``."""
    if isinstance(value, str):
        if key in value:
            yield path
    elif isinstance(value, Mapping):
        for name, inner in value.items():
            where = step(path, name)
            if key in str(name):
                yield where
            else:
                yield from _in_body(inner, key, where)
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield from _in_body(inner, key, f"{path}[{index}]")


def _carries(value: str, key: str, *, bearer: bool) -> bool:
    """Does a header value hold exactly the key, after ``Bearer`` and one or more spaces when
    ``bearer`` (RFC 9110 §11.1: the scheme is case-insensitive)?"""
    if not bearer:
        return value == key
    scheme = _scheme(value)
    return scheme is not None and scheme[0].lower() == "bearer" and scheme[1] == key


def _mismatch(value: str, key: str, *, bearer: bool, provider: str) -> str:
    """What a key header that does not carry the key as the wire wants holds, in words (never the value)."""
    scheme = _scheme(value)
    if bearer:
        if value == key:
            return "the API key without the `Bearer` scheme"
        if scheme is not None and scheme[1] == key:
            return f"the API key after the scheme `{scheme[0]}`"
        if scheme is not None and scheme[0].lower() == "bearer":
            return f"a bearer token that is not the call's API key ({_length(scheme[1])})"
        return f"a value that is not the call's API key ({_length(value)})"
    if scheme is not None and scheme[1] == key:
        return f"the API key after the scheme `{scheme[0]}` ({provider} reads the key alone)"
    return f"a value that is not the call's API key ({_length(value)})"


def _described(value: str, key: str) -> str:
    """A key header's value as a finding may show it: the key replaced, any other token by its length
    (a library may have read a real key from the environment: that is a secret too)."""
    if value == key:
        return KEY_SHOWN
    scheme = _scheme(value)
    if scheme is not None:
        return f"{scheme[0]} {KEY_SHOWN if scheme[1] == key else '<' + _length(scheme[1]) + '>'}"
    return f"<{_length(value)}>"


def _scheme(value: str) -> tuple[str, str] | None:
    """(scheme word, the rest) of an authorization value ``Word token``; None when its first word does
    not look like a scheme (a finding shows the scheme word: never a token that might be a secret)."""
    found = _SCHEMED.fullmatch(value)
    if found is None or not _SCHEME_WORD.fullmatch(found.group(1)):
        return None
    return found.group(1), found.group(2)


def _length(token: str) -> str:
    return f"{len(token)} characters"


def _leak_message(place: _Place, rules: WireHeaders | None) -> str:
    """Why the key in ``place`` is a defect, and where the wire takes it."""
    takes = ""
    if rules is not None:
        query = f" or the `{rules.key_query}` query parameter" if rules.key_query else ""
        takes = f"; {rules.provider} takes it from `{rules.key_header}`{query} only"
    why = {
        "header": "whatever logs or forwards request headers (proxies, tracing) now holds it",
        "url": "URLs are written to access logs, proxy logs and tracebacks",
        "query": "URLs are written to access logs, proxy logs and tracebacks",
        "body": "the body is sent and kept as the request's content",
    }[place.kind]
    return f"the call's API key is sent in {place.words}, where the wire does not take it: {why}{takes}"


def _header(name: str) -> str:
    return f'headers["{name}"]'


def _scrubbed(text: str, key: str) -> str:
    """``text`` with the key (as is, or percent-encoded) replaced by ``KEY_SHOWN``."""
    if not key or (key not in text and key not in unquote(text)):
        return text
    return unquote(text).replace(key, KEY_SHOWN)
