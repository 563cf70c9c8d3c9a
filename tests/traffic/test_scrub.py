"""Tests for ``conformance.traffic.scrub``: the header names and query parameters of toolchain.md §2, and
key shapes of the providers' documented key formats (OpenAI ``sk-``/``sk-proj-``, Anthropic
``sk-ant-``, Google ``AIza``), never over-matching ordinary words; secrets split across stream chunks
at every offset of each wire's framing, and across repeated header values; percent-encoded,
JSON-escaped, non-UTF-8, gzip and cut-off spellings (the secrets of tests/_secrets.py)."""

from __future__ import annotations

import gzip
from urllib.parse import quote, quote_plus

import pytest
from _secrets import SECRETS, WIRES, Secret, Wire, leaks, split_at
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.errors import CassetteWriteError
from conformance.traffic import scrub
from conformance.traffic.scrub import REDACTED, Scrubber, is_secret_header


@pytest.mark.parametrize(
    "name",
    [
        "authorization",
        "Authorization",
        "x-api-key",
        "x-goog-api-key",
        "api-key",
        "cookie",
        "set-cookie",
        "openai-organization",
        "openai-project",
        "anthropic-organization-id",
        "x-stainless-api-key",
        "x-auth-token",
        "x-session-id",
    ],
)
def test_secret_headers(name: str) -> None:
    assert is_secret_header(name)


@pytest.mark.parametrize(
    "name", ["content-type", "retry-after", "anthropic-version", "x-request-id", "openai-processing-ms"]
)
def test_ordinary_headers_are_kept(name: str) -> None:
    assert not is_secret_header(name)
    assert Scrubber().header(name, "application/json") == "application/json"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("key sk-proj-abc123DEF456", f"key {REDACTED}"),
        ("sk-ant-api03-abcdef_123-x", REDACTED),
        ("AIzaSyA1234567890abcdef", REDACTED),
        ("Authorization: Bearer eyJhbGciOi.J9-x_y", f"Authorization: Bearer {REDACTED}"),
        ("org-AbCdEf0123456789", REDACTED),
        ("task-abcdefgh and desk-123456 stay", "task-abcdefgh and desk-123456 stay"),
        ("sk-short", "sk-short"),
        ("请告诉我 sk-abcdef12", f"请告诉我 {REDACTED}"),
        ('{"t": "line\\nsk-proj-abc123DEF456"}', f'{{"t": "line\\n{REDACTED}"}}'),  # after a JSON escape
        ("\\u0020AIzaSyA1234567890abcdef", f"\\u0020{REDACTED}"),
        ("q=key%20sk-abcdef12&x=1", f"q=key%20{REDACTED}&x=1"),  # after a percent-encoded byte
        ("xsk-abcdef12 and 0%2sk-abcdef12", "xsk-abcdef12 and 0%2sk-abcdef12"),
    ],
)
def test_key_shaped_strings(text: str, expected: str) -> None:
    assert Scrubber().text(text) == expected


def test_named_secrets_are_removed_anywhere() -> None:
    scrubber = Scrubber(["plain-secret-value", "abc"])  # under 4 characters: not a secret, never replaced
    assert scrubber.text("x plain-secret-value y abc") == f"x {REDACTED} y abc"
    assert scrubber.data(b"\xff plain-secret-value") == b"\xff " + REDACTED.encode()
    assert scrubber.json({"plain-secret-value": ["plain-secret-value", 1, None]}) == {REDACTED: [REDACTED, 1, None]}
    assert scrubber.leaked("still plain-secret-value") == ["plain-secret-value"]


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (
            "https://g.example/v1beta/models/m:streamGenerateContent?alt=sse&key=AIzaSyA1234567890abcdef",
            "https://g.example/v1beta/models/m:streamGenerateContent?alt=sse&key=REDACTED",
        ),
        (
            "https://h.example/x?api_key=abc&api-version=2024-10-21",
            "https://h.example/x?api_key=REDACTED&api-version=2024-10-21",
        ),
        ("https://user:pw@h.example/x", "https://h.example/x"),
        ("https://h.example/x?$alt=json;enum-encoding=int", "https://h.example/x?$alt=json;enum-encoding=int"),
    ],
)
def test_urls(url: str, expected: str) -> None:
    assert Scrubber().url(url) == expected


# --------------------------------------------------------------------------------------------
# Pieces: a secret split across stream chunks or header values (tests/_secrets.py)
# --------------------------------------------------------------------------------------------


def named(secret: Secret) -> list[str]:
    """What the recorder names for ``secret``: the values the client sent or the server set."""
    return [secret.value] if secret.request_headers or secret.response_headers else []


@pytest.mark.parametrize("wire", WIRES, ids=lambda w: w.name)
def test_a_secret_split_at_every_offset_leaves_no_part_in_any_chunk(wire: Wire) -> None:
    """Every wire's framing x every secret kind x every split offset of the streamed body."""
    for secret in SECRETS:
        scrubber = Scrubber(named(secret))
        events = [e.decode() for e in wire.events(secret.echo.format(secret.value))]
        body = "".join(events)
        start = body.index(secret.value)
        end = start + len(secret.value)
        for offset in range(1, len(body)):
            chunks = [c.decode() for c in split_at([e.encode() for e in events], offset)]
            scrubbed = scrubber.pieces(chunks)
            assert len(scrubbed) == len(chunks), (secret.kind, offset)
            assert "".join(scrubbed) == scrubber.text(body), (secret.kind, offset)
            assert not any(leaks(piece, secret.value) for piece in scrubbed), (secret.kind, offset)
            # chunks that do not touch the secret keep their cut and their text
            cut = 0
            for before, after in zip(chunks, scrubbed, strict=True):
                if cut + len(before) <= start or cut >= end:
                    assert before == after, (secret.kind, offset)
                cut += len(before)


def test_the_old_per_chunk_scrubbing_leaked_a_split_key() -> None:
    """What issue 14 found: each chunk scrubbed on its own kept a key's tail."""
    key = SECRETS[2].value  # sk-ant-api03-...
    chunks = [f"data: bad key {key[:20]}", f"{key[20:]}\n\n"]
    per_chunk = [Scrubber().text(c) for c in chunks]
    assert leaks("".join(per_chunk), key)
    assert not leaks("".join(Scrubber().pieces(chunks)), key)


@pytest.mark.parametrize(
    ("pieces", "expected"),
    [
        (["a sk-proj-", "abc123def456 b"], ["a REDACTED", " b"]),  # the replacement stays where the key began
        (["x sk-ant-api0", "3-abc", "def_ghi-jk", "lm y"], ["x REDACTED", "", "", " y"]),  # a chunk inside: empty
        (["data: {}\n\n", "da", "ta: 1\n\n"], ["data: {}\n\n", "da", "ta: 1\n\n"]),  # nothing to scrub: as is
        ([], []),
        (["Bear", "er tok.en-12345 ok"], ["Bear", "er REDACTED ok"]),
        (["named-secret-", "value!", " next"], ["REDACTED", "", " next"]),
    ],
)
def test_pieces_keep_their_number_and_order(pieces: list[str], expected: list[str]) -> None:
    assert Scrubber(["named-secret-value!"]).pieces(pieces) == expected


@given(st.lists(st.text(alphabet="sk-prjantAIzaBeer 0123456789_.\n", max_size=30), max_size=8))
@settings(max_examples=300, deadline=None)
def test_pieces_join_to_the_joined_text_scrubbed(pieces: list[str]) -> None:
    scrubber = Scrubber(["AIza0123"])
    scrubbed = scrubber.pieces(pieces)
    assert len(scrubbed) == len(pieces)
    assert "".join(scrubbed) == scrubber.text("".join(pieces))


@pytest.mark.parametrize("secret", SECRETS, ids=lambda s: s.kind)
def test_a_secret_split_across_repeated_header_values(secret: Secret) -> None:
    scrubber = Scrubber(named(secret))
    echo = secret.echo.format(secret.value)
    for cut in range(1, len(echo)):
        values = scrubber.header_values("x-echo", [echo[:cut], echo[cut:], "; plain"])
        assert len(values) == 3 and values[2] == "; plain"
        assert not leaks(" ".join(values), secret.value), cut
    assert scrubber.header_values("set-cookie", ["a=1", "b=2"]) == [REDACTED, REDACTED]


@pytest.mark.parametrize("secret", SECRETS, ids=lambda s: s.kind)
def test_secrets_in_urls_percent_encoded_or_not(secret: Secret) -> None:
    scrubber = Scrubber(named(secret))
    echo = secret.echo.format(secret.value)
    every_byte = "".join(f"%{b:02X}" for b in echo.encode())
    for url in (
        f"https://h.example/v1/x?q={quote(echo)}&alt=sse",
        f"https://h.example/v1/x?q={quote_plus(echo)}",
        f"https://h.example/v1/x?e={every_byte}",
        f"https://h.example/v1/{quote(echo, safe='')}/y",
        f"https://h.example/v1/x#{quote(echo)}",
        f"https://h.example/v1/x?token={quote(secret.value)}",
    ):
        scrubbed = scrubber.url(url)
        assert not leaks(scrubbed, secret.value), url
        assert scrubbed.startswith("https://h.example/v1/")
    assert scrubber.header("location", f"https://h.example/x?key={secret.value}") == "https://h.example/x?key=REDACTED"


def test_a_url_without_secrets_is_kept_byte_for_byte() -> None:
    url = "https://h.example/v1/models/gemini%2D2.5:streamGenerateContent?alt=sse&q=a%20b+c&x=%E4%BD%A0"
    assert Scrubber(["sk-proj-unused-0123"]).url(url) == url


@pytest.mark.parametrize("secret", SECRETS, ids=lambda s: s.kind)
def test_bytes_that_are_not_utf8_and_gzip_bodies(secret: Secret) -> None:
    scrubber = Scrubber(named(secret))
    echo = secret.echo.format(secret.value).encode()
    raw = b"\xff\xfe" + echo + b"\x80"
    scrubbed = scrubber.data(raw)
    assert scrubbed.startswith(b"\xff\xfe") and scrubbed.endswith(b"\x80")
    assert not leaks(scrubbed.decode("utf-8", "replace"), secret.value)
    packed = scrubber.data(gzip.compress(b"[" + echo + b"]", mtime=0))
    assert packed[:2] == b"\x1f\x8b"  # still gzip, as the cassette reader expects
    inflated = gzip.decompress(packed)
    assert inflated.startswith(b"[") and not leaks(inflated.decode(), secret.value)
    plain = gzip.compress(b"nothing secret", mtime=0)
    assert scrubber.data(plain) is plain  # unchanged bodies are not recompressed


def test_a_gzip_body_too_large_to_check_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scrub, "GZIP_SCRUB_LIMIT", 1000)
    with pytest.raises(CassetteWriteError, match="too large to check for secrets"):
        Scrubber().data(gzip.compress(b"x" * 5000))
    broken = gzip.compress(b"sk-proj-abcdef0123456789")[:-12]  # truncated: not whole gzip, kept as bytes
    assert Scrubber().data(broken) == broken


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("authorization: bearer abc.def-123", f"authorization: bearer {REDACTED}"),
        ("BEARER abc.def-123", f"BEARER {REDACTED}"),
        ("Bearer REDACTED", "Bearer REDACTED"),
        ("cut off: named-secret-v", f"cut off: {REDACTED}"),  # the stream broke mid-secret
        ("cut off: named-s", "cut off: named-s"),  # under 8 characters of it: kept
        ('json: "named-secret-value\\"x"', f'json: "{REDACTED}"'),  # JSON-escaped spelling
        ("pct: named-secret-value%22x", f"pct: {REDACTED}"),  # percent-encoded spelling
    ],
)
def test_other_spellings(text: str, expected: str) -> None:
    assert Scrubber(['named-secret-value"x']).text(text) == expected


@given(st.text(alphabet="ab", max_size=40), st.sampled_from(["abab", "aabaa", "abba", "aaaab"]))
@settings(max_examples=300, deadline=None)
def test_overlapping_occurrences_of_a_named_secret_all_go(text: str, secret: str) -> None:
    scrubber = Scrubber([secret])
    assert secret not in scrubber.text(text)
    pieces = [text[:7], text[7:19], text[19:]]
    assert secret not in "".join(scrubber.pieces(pieces))
