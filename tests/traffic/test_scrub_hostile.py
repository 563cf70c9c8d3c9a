"""``conformance.traffic.scrub`` against a server that echoes a named secret in pieces or encoded
(issue 27, attack 1): across the deltas of every wire's stream (text and tool-call arguments), in
``\\u`` escapes, base64/base64url at each alignment, hex, split across a JSON key and its value; the
key shapes of the other OpenAI-compatible providers, never over-matching words; the process's secrets
from the environment. The scrubbed stream must still decode: each event reads as JSON and its deltas
join to the text with the secret redacted.
"""

from __future__ import annotations

import base64
import json
from typing import Any
from urllib.parse import quote

import pytest
from _secret_forms import leaks_anywhere

from conformance.traffic.scrub import REDACTED, Scrubber, environment_secrets

KEY = "hunter2-local-token-1234"


def pieces_of(text: str, size: int = 3) -> list[str]:
    head, _, tail = text.partition(KEY)
    return [head, *(KEY[i : i + size] for i in range(0, len(KEY), size)), tail]


def sse(payload: dict[str, Any], event: str | None = None, end: str = "\n\n") -> str:
    return (f"event: {event}\n" if event else "") + f"data: {json.dumps(payload)}{end}"


STREAMS = {
    "openai_chat": lambda p: sse({"choices": [{"index": 0, "delta": {"content": p}}]}),
    "openai_chat_arguments": lambda p: sse(
        {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": p}}]}}]}
    ),
    "openai_responses": lambda p: sse(
        {"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0, "delta": p},
        "response.output_text.delta",
    ),
    "openai_responses_arguments": lambda p: sse(
        {"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 1, "delta": p},
        "response.function_call_arguments.delta",
    ),
    "anthropic": lambda p: sse(
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": p}}, "content_block_delta"
    ),
    "anthropic_partial_json": lambda p: sse(
        {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": p}},
        "content_block_delta",
    ),
    "gemini": lambda p: sse({"candidates": [{"content": {"parts": [{"text": p}]}, "index": 0}]}, end="\r\n\r\n"),
    "ollama": lambda p: (
        json.dumps({"model": "m", "message": {"role": "assistant", "content": p}, "done": False}) + "\n"
    ),
}


def deltas(chunks: list[str]) -> str:
    """The text the stream decodes to: every string under a delta field, in order."""
    out = []
    for chunk in chunks:
        for line in chunk.splitlines():
            line = line.removeprefix("data: ").strip().strip(",[]")
            if line.startswith("{"):
                out.append(_delta(json.loads(line)))
    return "".join(out)


def _delta(value: Any) -> str:
    if isinstance(value, dict):
        found = [v for k, v in value.items() if k in ("content", "text", "delta", "partial_json", "arguments")]
        strings = [v for v in found if isinstance(v, str)]
        return "".join(strings) + "".join(_delta(v) for v in value.values() if not isinstance(v, str))
    if isinstance(value, list):
        return "".join(_delta(v) for v in value)
    return ""


@pytest.mark.parametrize("size", [1, 2, 3, 7])
@pytest.mark.parametrize("wire", sorted(STREAMS))
def test_a_key_streamed_in_pieces_is_redacted_in_the_text_the_stream_decodes_to(wire: str, size: int) -> None:
    text = f"Your key {KEY} works"
    chunks = [STREAMS[wire](p) for p in pieces_of(text, size)]
    scrubbed = Scrubber([KEY]).pieces(chunks)
    assert len(scrubbed) == len(chunks)
    assert deltas(scrubbed) == f"Your key {REDACTED} works"  # each event still reads as JSON
    assert not leaks_anywhere("".join(scrubbed), KEY)


def test_the_gemini_json_array_stream_is_read_element_by_element() -> None:
    elements = [json.dumps({"candidates": [{"content": {"parts": [{"text": p}]}, "index": 0}]}) for p in pieces_of(KEY)]
    chunks = ["[" + elements[0], *(",\r\n" + e for e in elements[1:]), "]"]
    scrubbed = Scrubber([KEY]).pieces(chunks)
    assert json.loads("".join(scrubbed))  # still one JSON array
    assert deltas(["".join(scrubbed)]) == REDACTED


def test_streams_of_two_choices_are_not_joined() -> None:
    """Pieces of two different streams (choice 0 and choice 1) never make a key together."""
    half = len(KEY) // 2
    chunks = [
        sse({"choices": [{"index": 0, "delta": {"content": KEY[:half]}}]}),
        sse({"choices": [{"index": 1, "delta": {"content": KEY[half:]}}]}),
    ]
    assert Scrubber([KEY]).pieces(chunks) == chunks


@pytest.mark.parametrize("every", [True, False])
def test_a_key_in_unicode_escapes_is_found(every: bool) -> None:
    spelled = "".join(f"\\u{ord(c):04x}" if every or n % 2 else c for n, c in enumerate(KEY))
    text = '{"message": "bad key ' + spelled + '!"}'
    scrubbed = Scrubber([KEY]).text(text)
    assert json.loads(scrubbed) == {"message": f"bad key {REDACTED}!"}


@pytest.mark.parametrize("prefix", [b"", b"a", b"ab", b"abc"])
@pytest.mark.parametrize("url", [False, True])
def test_a_key_in_base64_at_any_alignment_is_found(prefix: bytes, url: bool) -> None:
    encode = base64.urlsafe_b64encode if url else base64.b64encode
    encoded = encode(prefix + b"Basic user:" + KEY.encode() + b" and more").decode()
    scrubbed = Scrubber([KEY]).text(f"token={encoded};")
    assert REDACTED in scrubbed
    assert not leaks_anywhere(scrubbed, KEY)


def test_a_key_in_hex_is_found() -> None:
    scrubbed = Scrubber([KEY]).text(f"{KEY.encode().hex()} {KEY.encode().hex().upper()}")
    assert scrubbed == f"{REDACTED} {REDACTED}"


def test_a_key_split_across_a_json_key_and_its_value_is_found() -> None:
    scrubber = Scrubber([KEY])
    assert scrubber.json({"x": {KEY[:6]: KEY[6:]}}) == {"x": {REDACTED: ""}}
    raw = 'data: {"' + KEY[:9] + '": "' + KEY[9:] + '", "n": 1}\n\n'
    assert json.loads(scrubber.text(raw).removeprefix("data: ")) == {REDACTED: "", "n": 1}


def test_a_key_split_across_two_headers_is_found_when_scrubbed_together() -> None:
    assert Scrubber([KEY]).pieces([KEY[:10], KEY[10:]]) == [REDACTED, ""]


@pytest.mark.parametrize(
    "key",
    [
        "gsk_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0u1V2w3X4y5Z6",
        "xai-" + "Zq8w7Xk3vT9pRb7mLc2nYh5sJd1fG4Hk6Lm9Np2Qr5St8Uv1Wx4Yz7",
        "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz012345",
        "pplx-" + "0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f",
        "nvapi-" + "Xy7_Qw-3Rt9Lm2Np8Kb5Vc1Zx4As6Df0GhJk8Lp2Mn7Bv4Cx1",
        "r8_" + "Qk3Lm9Np2Rs5Tv8Wx1Yz4Ab7Cd0Ef3Gh6Ij9",
        "sk-or-v1-" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    ],
)
def test_the_key_shapes_of_other_openai_compatible_providers_are_found(key: str) -> None:
    assert Scrubber().text(f"key: {key}.") == f"key: {REDACTED}."


@pytest.mark.parametrize(
    "words",
    ["hf_mirror and hf_hub_download", "xai-grok-2 model", "gsk_test", "pplx-api docs", "r8_short", "nvapi-key"],
)
def test_words_with_a_provider_prefix_stay(words: str) -> None:
    assert Scrubber().text(words) == words


def test_the_process_secrets_are_the_key_variables_and_any_named_like_one() -> None:
    environ = {
        "OPENAI_API_KEY": "sk-abcdefghijkl",
        "HF_TOKEN": "hf_abcdefghijklmnop",
        "MY_LOCAL_TOKEN": KEY,
        "SERVICE_SECRET": "s3cr3t-value",
        "SHORT_TOKEN": "unused",  # too short: would be replaced everywhere
        "PATH_TOKEN": "/usr/local/bin",
        "HOME": "/root",
        "GPG_KEY": "A035C8C19219BA821ECEA86B64E628F8D684696D",  # not named like an API key
    }
    assert set(environment_secrets(environ)) == {"sk-abcdefghijkl", "hf_abcdefghijklmnop", KEY, "s3cr3t-value"}


def test_scrubbing_a_large_stream_stays_linear() -> None:
    """A 4 MiB stream with the key split at its end: one pass of bounded work per byte (CPU time
    checked against a stream a quarter the size, not a wall-clock figure)."""
    import time

    def cost(events: int) -> float:
        chunks = [STREAMS["openai_chat"]("some text\nmore ") for _ in range(events)]
        chunks += [STREAMS["openai_chat"](p) for p in pieces_of(KEY)]
        scrubber = Scrubber([KEY])
        start = time.process_time()
        scrubbed = scrubber.pieces(chunks)
        spent = time.process_time() - start
        assert deltas(scrubbed[-10:]).endswith(REDACTED)
        return spent

    small, large = cost(6_000), cost(24_000)
    assert large < 8 * small + 0.5  # 4x the bytes: about 4x the time, never quadratic


@pytest.mark.parametrize("every", [2, 3, 5])
def test_a_key_percent_encoded_in_part_is_found(every: int) -> None:
    """Some characters percent-encoded and some not, as a URL echoed by hand may spell it."""
    spelled = "".join(f"%{ord(c):02X}" if n % every == 0 else c for n, c in enumerate(KEY))
    scrubbed = Scrubber([KEY]).text(f"GET /echo?k=x{spelled}&next=1")
    assert scrubbed == f"GET /echo?k={quote('x' + REDACTED)}&next=1"
    assert not leaks_anywhere(scrubbed, KEY)


def test_runs_of_percent_bytes_are_each_walked_once() -> None:
    """A long run of ``%41`` with no secret: scrubbing stays linear (the same CPU per byte at two sizes)."""
    import time

    def cost(size: int) -> float:
        text = "%41" * size + "x" * size
        start = time.process_time()
        assert Scrubber([KEY]).text(text) == text
        return time.process_time() - start

    small, large = cost(100_000), cost(400_000)
    assert large < 8 * small + 0.5
