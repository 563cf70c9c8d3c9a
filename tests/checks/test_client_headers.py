"""``client.request_headers`` on single requests: the headers each wire requires, where the API key goes,
and runtime placeholders as values. The requests are built from wire facts (the official SDKs' sources
and the providers' docs cited in ``conformance.checks.client_headers``); what a real client sends over
loopback is in tests/clients/test_harness.py and tests/clients/test_sdk_drivers.py."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from conformance.checks.client_headers import (
    ANTHROPIC_VERSIONS,
    CHECK,
    KEY_SHOWN,
    PLACEHOLDERS,
    WIRE_HEADERS,
    header_findings,
    placeholder,
)
from conformance.clients.evidence import SentRequest
from conformance.verdicts import Finding

KEY = "sk-test-0123456789abcdef"

PATHS = {
    "openai_chat": "/v1/chat/completions",
    "openai_responses": "/v1/responses",
    "anthropic": "/v1/messages",
    "gemini": "/v1beta/models/gemini-2.5-flash:generateContent",
    "ollama": "/api/chat",
}

# What the official SDKs send (their sources, cited in the check's module docstring)
SDK_HEADERS = {
    # openai-python: _base_client.py default_headers; lib/_client_auth.py syncauth_headers
    "openai_chat": {"accept": "application/json", "content-type": "application/json", "authorization": f"Bearer {KEY}"},
    "openai_responses": {"content-type": "application/json", "authorization": f"Bearer {KEY}"},
    # anthropic-sdk-python src/anthropic/_client.py: _api_key_auth {"X-Api-Key": api_key}, "anthropic-version"
    "anthropic": {"content-type": "application/json", "x-api-key": KEY, "anthropic-version": "2023-06-01"},
    # google-genai _api_client.py: {'Content-Type': 'application/json'}, x-goog-api-key
    "gemini": {"content-type": "application/json", "x-goog-api-key": KEY},
    # ollama-python _client.py: Content-Type, Accept; authorization only with OLLAMA_API_KEY
    "ollama": {"content-type": "application/json", "accept": "application/json"},
}


def request(
    wire: str, headers: dict[str, str], *, query: str = "", body: object = None, method: str = "POST", path: str = ""
) -> SentRequest:
    return SentRequest(
        method=method,
        path=(path or PATHS[wire]) + (f"?{query}" if query else ""),
        headers=tuple(headers.items()),
        body={"model": "m", "messages": []} if body is None else body,
        stream=False,
        status=200,
        answered_turn=0,
    )


def judge(wire: str, headers: dict[str, str], **options: object) -> list[Finding]:
    own = bool(options.pop("own", True))
    return header_findings(request(wire, headers, **options), WIRE_HEADERS[wire], api_key=KEY, turn=0, own=own)  # type: ignore[arg-type]


def where(findings: list[Finding]) -> list[str]:
    return [f.path for f in findings]


@pytest.mark.parametrize("wire", sorted(SDK_HEADERS))
def test_what_an_official_sdk_sends_passes(wire: str) -> None:
    assert judge(wire, SDK_HEADERS[wire]) == []


def test_every_wire_a_client_may_speak_has_its_rules() -> None:
    from conformance.clients.contract import CLIENT_WIRES

    assert set(WIRE_HEADERS) == set(CLIENT_WIRES)


# ---- 1. what the wire requires ---------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    ["application/json", "application/json; charset=utf-8", "Application/JSON", "application/json;charset=UTF-8"],
)
def test_the_content_type_is_application_json_with_or_without_parameters(value: str) -> None:
    assert judge("openai_chat", {**SDK_HEADERS["openai_chat"], "content-type": value}) == []


@pytest.mark.parametrize("wire", ["openai_chat", "openai_responses", "anthropic", "gemini"])
def test_a_request_without_a_json_content_type_is_a_finding(wire: str) -> None:
    headers = {k: v for k, v in SDK_HEADERS[wire].items() if k != "content-type"}
    [missing] = judge(wire, headers)
    assert (missing.check, missing.path, missing.expected, missing.actual) == (
        CHECK,
        'headers["content-type"]',
        "application/json",
        None,
    )
    [form] = judge(wire, {**headers, "content-type": "application/x-www-form-urlencoded"})
    assert form.actual == "application/x-www-form-urlencoded" and "application/json" in form.message


def test_ollama_takes_a_body_without_a_json_content_type() -> None:
    """Ollama's own examples post with ``curl -d`` (form-encoded): no content type is required."""
    assert judge("ollama", {"content-type": "application/x-www-form-urlencoded"}) == []
    assert judge("ollama", {}) == []


def test_anthropic_without_its_version_header_is_answered_400() -> None:
    headers = {k: v for k, v in SDK_HEADERS["anthropic"].items() if k != "anthropic-version"}
    [missing] = judge("anthropic", headers)
    assert missing.path == 'headers["anthropic-version"]'
    assert "400" in missing.message and "anthropic-version: header is required" in missing.message
    assert missing.expected in ANTHROPIC_VERSIONS


@pytest.mark.parametrize("version", sorted(ANTHROPIC_VERSIONS))
def test_every_documented_anthropic_version_passes(version: str) -> None:
    assert judge("anthropic", {**SDK_HEADERS["anthropic"], "anthropic-version": version}) == []


@pytest.mark.parametrize(
    "version",
    [
        "2024-10-22",  # a date Anthropic never published: 400 (sseshachala/conductai#2179)
        "2023-06-01, 2023-06-01",  # the header sent twice and joined: 400 (decolua/9router#2357)
        "latest",
        "2023-6-1",
    ],
)
def test_an_undocumented_anthropic_version_is_a_finding(version: str) -> None:
    [wrong] = judge("anthropic", {**SDK_HEADERS["anthropic"], "anthropic-version": version})
    assert (wrong.path, wrong.actual) == ('headers["anthropic-version"]', version)
    assert "not a valid version" in wrong.message
    assert ("not even a date" in wrong.message) == (version in ("latest", "2023-06-01, 2023-06-01", "2023-6-1"))


# ---- the key in the wire's header ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("wire", "header", "answer"),
    [
        ("openai_chat", "authorization", "401"),
        ("openai_responses", "authorization", "401"),
        ("anthropic", "x-api-key", "x-api-key header is required"),
        ("gemini", "x-goog-api-key", "PERMISSION_DENIED"),
    ],
)
def test_a_request_without_the_key_is_a_finding_naming_the_header_and_the_answer(
    wire: str, header: str, answer: str
) -> None:
    headers = {k: v for k, v in SDK_HEADERS[wire].items() if k != header}
    [missing] = judge(wire, headers)
    assert missing.path == f'headers["{header}"]'
    assert answer in missing.message
    assert missing.expected in (KEY_SHOWN, f"Bearer {KEY_SHOWN}")


def test_ollama_needs_no_key_but_one_sent_goes_in_authorization_bearer() -> None:
    assert judge("ollama", {"authorization": f"Bearer {KEY}"}) == []
    [wrong] = judge("ollama", {"x-api-key": KEY})
    assert wrong.path == 'headers["authorization"]'
    assert "the `x-api-key` header instead" in wrong.message


def test_the_anthropic_key_as_a_bearer_token_is_where_the_official_sdk_sends_it() -> None:
    """anthropic 2.14.0 ``_client.py:377-381`` (``_api_key_auth``) sends ``api_key`` as
    ``Authorization: Bearer`` with ``anthropic-version: 2026-10-21``: the provider's own client is the
    source that the API reads it there, so it is neither a missing ``x-api-key`` nor a leak."""
    headers = {"content-type": "application/json", "anthropic-version": "2026-10-21", "authorization": f"Bearer {KEY}"}
    assert judge("anthropic", headers) == []
    assert judge("anthropic", {**headers, "x-api-key": KEY}) == []
    wrong = judge("anthropic", {**headers, "authorization": "Bearer another-token"})
    assert [f.path for f in wrong] == ['headers["x-api-key"]']


@pytest.mark.parametrize(
    ("wire", "value", "said"),
    [
        ("openai_chat", KEY, "without the `Bearer` scheme"),
        ("openai_chat", f"Token {KEY}", "after the scheme `Token`"),
        ("openai_chat", f"bearer  {KEY}", None),  # RFC 9110: the scheme is case-insensitive, 1*SP
        ("anthropic", f"Bearer {KEY}", "reads the key alone"),
        ("gemini", f"Bearer {KEY}", "reads the key alone"),
    ],
)
def test_the_key_in_the_right_header_but_the_wrong_form(wire: str, value: str, said: str | None) -> None:
    header = WIRE_HEADERS[wire].key_header
    found = judge(wire, {**SDK_HEADERS[wire], header: value})
    if said is None:
        assert found == []
        return
    [wrong] = found
    assert wrong.path == f'headers["{header}"]' and said in wrong.message


def test_another_token_than_the_calls_key_is_described_by_its_length_never_shown() -> None:
    """A library that read a key from the environment instead of the caller's: that key is a secret too."""
    other = "sk-live-" + "x" * 40
    [wrong] = judge("openai_chat", {**SDK_HEADERS["openai_chat"], "authorization": f"Bearer {other}"})
    assert f"{len(other)} characters" in wrong.message
    assert wrong.actual == f"Bearer <{len(other)} characters>"
    assert other not in repr(wrong)


# ---- 2. the key nowhere else ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "path"),
    [
        ({"query": f"api_key={KEY}"}, "url?api_key"),
        ({"query": f"api_key={quote(KEY, safe='')}&x=1"}, "url?api_key"),
        ({"path": f"/v1/{KEY}/chat/completions"}, "url"),
        ({"body": {"model": "m", "messages": [], "metadata": {"key": KEY}}}, "$.metadata.key"),
        ({"body": {"model": "m", "messages": [{"role": "user", "content": f"use {KEY}"}]}}, "$.messages[0].content"),
    ],
)
def test_the_key_in_the_url_or_the_body_is_a_finding_that_never_shows_it(options: dict[str, object], path: str) -> None:
    [leak] = judge("openai_chat", SDK_HEADERS["openai_chat"], **options)
    assert leak.path == path
    assert "where the wire does not take it" in leak.message
    assert KEY not in repr(leak)


def test_the_key_in_another_header_is_a_finding() -> None:
    [leak] = judge("openai_chat", {**SDK_HEADERS["openai_chat"], "x-api-key": KEY})
    assert leak.path == 'headers["x-api-key"]' and "`authorization`" in leak.message
    assert KEY not in repr(leak)


@pytest.mark.parametrize(
    "headers",
    [
        {"content-type": "application/json"},  # the key in the `key` parameter alone
        {"content-type": "application/json", "x-goog-api-key": KEY},  # both, as Google documents each
    ],
)
def test_gemini_takes_the_key_in_its_documented_key_parameter(headers: dict[str, str]) -> None:
    assert judge("gemini", headers, query=f"key={KEY}") == []
    assert judge("gemini", headers, query=f"alt=sse&key={KEY}") == []


def test_the_key_in_another_query_parameter_of_gemini_is_a_finding() -> None:
    [leak] = judge("gemini", SDK_HEADERS["gemini"], query=f"api_key={KEY}")
    assert leak.path == "url?api_key"


def test_a_key_sent_in_several_wrong_places_instead_of_the_right_one_is_one_finding() -> None:
    headers = {"content-type": "application/json", "x-api-key": KEY}
    [finding] = judge("openai_chat", headers, query=f"key={KEY}")
    assert finding.path == 'headers["authorization"]'
    assert "the `x-api-key` header, the URL's `key` query parameter instead" in finding.message


# ---- 3. runtime placeholders ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("wire", "header", "value"),
    [
        ("anthropic", "x-api-key", "None"),  # Python: f"{None}"
        ("openai_chat", "authorization", "Bearer undefined"),  # JavaScript: `Bearer ${undefined}`
        ("openai_chat", "authorization", "Bearer None"),
        ("openai_chat", "authorization", "Bearer"),  # the scheme and an empty token, stripped
        ("openai_chat", "openai-organization", "null"),
        ("anthropic", "x-stainless-timeout", "NOT_GIVEN"),  # anthropic 2.14.0 _base_client.py:562-564
        ("gemini", "x-goog-api-key", "[object Object]"),
        ("gemini", "x-goog-user-project", "NaN"),
        ("ollama", "user-agent", "<nil>"),  # Go: fmt.Sprint(nil)
        ("openai_responses", "openai-project", ""),
    ],
)
def test_a_runtime_placeholder_as_a_header_value_is_one_finding(wire: str, header: str, value: str) -> None:
    headers = {**SDK_HEADERS[wire], header: value}
    found = judge(wire, headers)
    assert [(f.path, f.actual) for f in found] == [(f'headers["{header}"]', value)]
    assert "placeholder" in found[0].message
    if header == WIRE_HEADERS[wire].key_header:
        assert "the API key belongs there" in found[0].message


@pytest.mark.parametrize("value", ["none", "Null", "NULL", "Nonesuch", "Bearer None-of-it", "application/json", "0"])
def test_values_a_runtime_does_not_print_for_a_missing_value_are_not_placeholders(value: str) -> None:
    assert placeholder(value) is None
    assert placeholder(value, authorization=True) is None


def test_the_placeholders_are_what_the_runtimes_print() -> None:
    """Python's ``str(None)``, the SDKs' ``NotGiven.__repr__`` ("NOT_GIVEN"), JavaScript's ``String()`` of
    undefined, null, NaN and an object."""
    import openai

    assert {str(None), repr(openai.NOT_GIVEN), str(float("nan")).replace("nan", "NaN")} <= PLACEHOLDERS
    assert {"undefined", "null", "NaN", "[object Object]"} <= PLACEHOLDERS


# ---- side requests ----------------------------------------------------------------------------


def test_a_side_request_is_judged_on_the_key_and_placeholders_not_on_the_wires_body_headers() -> None:
    headers = {"authorization": f"Bearer {KEY}"}  # a GET with no body: no content type to ask for
    assert judge("ollama", headers, method="POST", path="/api/show", own=False) == []
    assert judge("openai_chat", headers, method="GET", path="/v1/models", own=False) == []
    [leak] = judge("openai_chat", headers, method="GET", path="/v1/models", query=f"k={KEY}", own=False)
    assert leak.path == "url?k" and "side request GET /v1/models" in leak.message
    [empty] = judge("openai_chat", {**headers, "x-trace": ""}, method="GET", path="/v1/models", own=False)
    assert empty.path == 'headers["x-trace"]'


def test_no_finding_shows_the_key_whatever_the_client_did() -> None:
    leaky = {
        "content-type": f"application/json; key={KEY}",
        "x-api-key": f"Bearer {KEY}",
        "anthropic-version": KEY,
        f"x-{KEY}": "1",
    }
    found = judge("anthropic", leaky, query=f"{KEY}={KEY}", path=f"/v1/{quote(KEY)}/messages", body={KEY: KEY})
    assert {f'headers["x-{KEY_SHOWN}"]', "url", f"url?{KEY_SHOWN}", f"$.{KEY_SHOWN}"} <= {f.path for f in found}
    assert KEY not in repr(found) and quote(KEY) not in repr(found)


def test_the_clients_doc_states_the_checks_rules() -> None:
    """docs/clients.md's row for the check names every placeholder and every wire's key header."""
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "clients.md").read_text(encoding="utf-8")
    [row] = [line for line in doc.splitlines() if line.startswith(f"| `{CHECK}` |")]
    for value in PLACEHOLDERS:
        assert f"`{value}`" in row, value
    for rules in WIRE_HEADERS.values():
        assert rules.key_header in row.lower() and rules.provider in row
        if rules.key_query:
            assert f"`{rules.key_query}` query parameter" in row
    assert "`anthropic-version`" in row and "application/json" in row
