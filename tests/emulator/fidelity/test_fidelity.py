"""The fidelity profiler and comparison on hand-made traffic, the real-world profile, the
allow-list in docs/emulator-fidelity.md, and the emulator fidelity test itself (issue 4).

Hand-made bodies follow ../shared/docs/wire-formats.md; the live test drives
``conformance.emulator.Emulator`` over loopback HTTP and compares its traffic with
tests/realworld, failing on every difference the allow-list does not explain and on every
allow-list entry that explains nothing.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.emulator.fidelity import (
    DEFAULT_ALLOW_LIST,
    AllowEntry,
    Difference,
    Profile,
    RawExchange,
    check,
    compare,
    load_allow_list,
    main,
    parse_allow_list,
    profile_cassettes,
    profile_exchanges,
    real_profile,
)
from conformance.emulator.fidelity.drive import emulator_profile, load_emulator
from conformance.errors import UsageError

ADAPTERS = ("anthropic", "gemini", "ollama", "openai_chat", "openai_responses")
CHAT = "http://127.0.0.1:1/v1/chat/completions"


def ex(body: Any, *, status: int = 200, url: str = CHAT, request: Any = None, stream: bool = False) -> RawExchange:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    req = None if request is None else json.dumps(request).encode()
    return RawExchange(url, req, status, raw, stream)


def chat_response(message: dict[str, Any], **extra: Any) -> dict[str, Any]:
    # wire-formats §1c
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": "stop"}],
        **extra,
    }


def keys(differences: list[Difference]) -> set[str]:
    return {d.key for d in differences}


# --------------------------------------------------------------------------------------------
# Profiles
# --------------------------------------------------------------------------------------------


def test_exchanges_are_split_into_request_response_error_and_stream_kinds() -> None:
    chunk = {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "a"}}]}
    sse = f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode()
    profile = profile_exchanges(
        [
            ex(chat_response({"content": "hi"}), request={"model": "m", "messages": []}),
            ex(sse, stream=True),
            # wire-formats §1e: {"error":{"message","type","param","code"}}
            ex({"error": {"message": "slow down", "type": "requests", "param": None, "code": None}}, status=429),
            ex(b"", status=204),
            ex(b"", status=302),
        ]
    )
    assert profile.adapters() == ["openai_chat"]
    assert profile.kinds("openai_chat") == [
        "error:429",
        "request",
        "response",
        "stream_event:[DONE]",
        "stream_event:chat.completion.chunk",
    ]
    error = profile.shape("openai_chat", "error:429")
    assert error is not None and ("$.error.param", "null") in error.fields
    assert [line.split(": ", 1)[1] for line in profile.skipped] == [
        "status 204 has an empty body; not profiled",
        "status 302 is neither a body nor an error; not profiled",
    ]


def test_exchanges_on_unknown_endpoints_are_skipped_with_a_reason() -> None:
    profile = profile_exchanges([ex({}, url="http://127.0.0.1:1/v1/conversations")])
    assert profile.shapes == {}
    assert "no adapter serves this endpoint" in profile.skipped[0]


def test_fields_count_the_samples_that_hold_them_and_remember_where() -> None:
    profile = profile_exchanges(
        [
            RawExchange(CHAT, None, 200, json.dumps(chat_response({"content": "a"})).encode(), False, "first"),
            RawExchange(CHAT, None, 200, json.dumps(chat_response({"content": None})).encode(), False, "second"),
        ]
    )
    shape = profile.shape("openai_chat", "response")
    assert shape is not None and shape.samples == 2
    assert shape.fields[("$.choices[].message.content", "string")] == 1
    assert shape.sources[("$.choices[].message.content", "null")] == ("second",)
    assert shape.fields[("$.id", "string")] == 2


def test_a_cassette_file_is_profiled(tmp_path: Path) -> None:
    request = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    cassette = {
        "version": 1,
        "interactions": [
            {
                "request": {
                    "method": "POST",
                    "uri": "https://api.openai.com/v1/chat/completions",
                    "body": json.dumps(request),
                },
                "response": {
                    "status": {"code": 200, "message": "OK"},
                    "headers": {},
                    "body": {"string": json.dumps(chat_response({"content": "x"}))},
                },
            },
            {
                "request": {"method": "DELETE", "uri": "https://api.openai.com/v1/conversations/c", "body": None},
                "response": {"status": {"code": 200, "message": "OK"}, "headers": {}, "body": {"string": "{}"}},
            },
        ],
    }
    path = tmp_path / "one.yaml"
    path.write_text(json.dumps(cassette))  # JSON is YAML
    profile = profile_cassettes([tmp_path])
    assert profile.kinds("openai_chat") == ["request", "response"]
    shape = profile.shape("openai_chat", "request")
    assert shape is not None and shape.sources[("$.messages[].role", "string")] == ("one.yaml#0",)
    assert profile.skipped and profile.skipped[0].startswith("one.yaml#1: DELETE")


# --------------------------------------------------------------------------------------------
# compare
# --------------------------------------------------------------------------------------------


def test_a_field_only_the_emulator_sends_is_a_difference() -> None:
    real = profile_exchanges([ex(chat_response({"content": "a"}))])
    emulated = profile_exchanges([ex(chat_response({"content": "a"}, made_up=1))])
    [difference] = compare(real, emulated)
    assert difference.key == "openai_chat response emulator_only $.made_up integer"
    assert difference.in_every_sample


def test_a_missing_subtree_is_one_difference_with_its_nested_fields_counted() -> None:
    # wire-formats §1c: usage {prompt_tokens, ..., prompt_tokens_details{cached_tokens}}
    usage = {"prompt_tokens": 1, "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0}}
    real = profile_exchanges([ex(chat_response({"content": "a"}, usage=usage))])
    emulated = profile_exchanges([ex(chat_response({"content": "a"}, usage={"prompt_tokens": 1}))])
    [difference] = compare(real, emulated)
    assert difference.key == "openai_chat response real_only $.usage.prompt_tokens_details object"
    assert difference.hidden == 2
    assert "(+2 nested)" in difference.describe()


def test_nullable_fields_take_the_union_of_types() -> None:
    real = profile_exchanges([ex(chat_response({"content": None})), ex(chat_response({"content": "a"}))])
    sends_text = profile_exchanges([ex(chat_response({"content": "a"}))])
    assert compare(real, sends_text) == []  # one of the real types is enough
    sends_null = profile_exchanges([ex(chat_response({"content": None}))])
    assert keys(compare(real, sends_null)) == {"openai_chat response real_only $.choices[].message.content string"}
    never_null = profile_exchanges([ex(chat_response({"content": "a"}))])
    assert keys(compare(never_null, sends_null)) == {
        "openai_chat response real_only $.choices[].message.content string",
        "openai_chat response emulator_only $.choices[].message.content null",
    }


def test_an_integer_is_a_number_but_not_the_reverse() -> None:
    real = profile_exchanges([ex(chat_response({"content": "a"}, score=0.5))])
    assert compare(real, profile_exchanges([ex(chat_response({"content": "a"}, score=0))])) == []
    real_int = profile_exchanges([ex(chat_response({"content": "a"}, score=1))])
    assert keys(compare(real_int, profile_exchanges([ex(chat_response({"content": "a"}, score=0.5))]))) == {
        "openai_chat response emulator_only $.score number",
        "openai_chat response real_only $.score integer",
    }


def test_kinds_on_one_side_only_are_differences() -> None:
    chunk = {"object": "chat.completion.chunk", "choices": []}
    real = profile_exchanges([ex(f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode(), stream=True)])
    emulated = profile_exchanges([ex(f"data: {json.dumps(chunk)}\n\n".encode(), stream=True), ex({"choices": []})])
    assert keys(compare(real, emulated)) == {
        "openai_chat stream_event:[DONE] real_only - -",
        "openai_chat response emulator_only - -",
    }


def test_error_statuses_are_compared_for_presence_and_their_fields_pooled() -> None:
    def error(**extra: Any) -> dict[str, Any]:
        return {"error": {"message": "m", "type": "t", "param": None, "code": "c", **extra}}

    real = profile_exchanges([ex(error(), status=401), ex(error(), status=404)])
    emulated = profile_exchanges([ex(error(), status=404), ex(error(retry_in=1), status=429)])
    assert keys(compare(real, emulated)) == {
        "openai_chat error:401 real_only - -",
        "openai_chat error:429 emulator_only - -",
        "openai_chat error:* emulator_only $.error.retry_in integer",
    }


def test_a_body_that_is_not_json_is_a_text_shape() -> None:
    real = profile_exchanges([ex(chat_response({"content": "a"}))])
    emulated = profile_exchanges([ex(b"{this is not json")])
    assert "openai_chat response emulator_only $ text" in keys(compare(real, emulated))


def test_only_the_adapters_of_the_emulated_profile_are_compared() -> None:
    real = profile_exchanges(
        [ex(chat_response({"content": "a"})), ex({"error": "x"}, status=404, url="http://h/api/chat")]
    )
    emulated = profile_exchanges([ex(chat_response({"content": "a"}))])
    assert compare(real, emulated) == []


# --------------------------------------------------------------------------------------------
# The allow-list
# --------------------------------------------------------------------------------------------


def test_allow_patterns_glob_and_may_leave_out_the_type() -> None:
    real = profile_exchanges([ex(chat_response({"content": "a"}, usage={"x": {"y": 1}}, fingerprint="f"))])
    emulated = profile_exchanges([ex(chat_response({"content": "a"}))])
    assert len(compare(real, emulated)) == 2
    allow = {"openai_chat response real_only $.usage": "no usage", "openai_chat resp* real_only $.finger* string": "r"}
    assert compare(real, emulated, allow) == []


def test_check_splits_explained_unexplained_and_stale() -> None:
    real = profile_exchanges([ex(chat_response({"content": "a"}, fingerprint="f", tier="t"))])
    emulated = profile_exchanges([ex(chat_response({"content": "a"}))])
    allow = [
        AllowEntry(pattern="openai_chat response real_only $.fingerprint string", reason="not emulated"),
        AllowEntry(pattern="openai_chat response real_only $.gone", reason="was fixed"),
        AllowEntry(pattern="anthropic response real_only $.x", reason="another adapter: not judged here"),
    ]
    result = check(real, emulated, allow)
    assert [d.key for d in result.unexplained] == ["openai_chat response real_only $.tier string"]
    assert [(d.path, e.reason) for d, e in result.explained] == [("$.fingerprint", "not emulated")]
    assert [e.pattern for e in result.stale] == ["openai_chat response real_only $.gone"]
    assert not result.ok


@pytest.mark.parametrize(
    ("pattern", "reason", "message"),
    [
        ("openai_chat response real_only", "r", "4 or 5 fields"),
        ("nope response real_only $.a", "r", "unknown adapter 'nope'"),
        ("openai_chat response both $.a", "r", "side must be one of"),
        ("openai_chat response real_only a.b", "r", r"must start with `\$`"),
        ("openai_chat response real_only $..b", "r", "not a path segment"),
        ("openai_chat response real_only $.a float", "r", "unknown type 'float'"),
        ("openai_chat response real_only $.a", "", "give the reason"),
    ],
)
def test_malformed_allow_entries_are_refused_with_the_entry_named(pattern: str, reason: str, message: str) -> None:
    with pytest.raises(UsageError, match=message) as info:
        parse_allow_list({pattern: reason}, source="allow.md")
    assert "allow.md" in str(info.value) and pattern in str(info.value)


def test_the_allow_list_is_read_from_its_fenced_block(tmp_path: Path) -> None:
    doc = tmp_path / "f.md"
    doc.write_text(
        textwrap.dedent(
            """\
            # Title
            ```yaml
            not: this one
            ```
            ```yaml fidelity-allow
            "anthropic response real_only $.usage.cache_read_input_tokens": prompt caching is not emulated
            ```
            """
        )
    )
    [entry] = load_allow_list(doc)
    assert entry == AllowEntry(
        pattern="anthropic response real_only $.usage.cache_read_input_tokens", reason="prompt caching is not emulated"
    )
    doc.write_text('# T\n\n```yaml fidelity-allow\n"anthropic response real_only $.a": see `x: y`\n```\n')
    with pytest.raises(UsageError, match=r"f\.md, line 4: not valid YAML"):
        load_allow_list(doc)
    doc.write_text("no block here\n")
    with pytest.raises(UsageError, match="exactly one ```yaml fidelity-allow block, found 0"):
        load_allow_list(doc)
    with pytest.raises(UsageError, match="cannot read"):
        load_allow_list(tmp_path / "missing.md")


def test_the_shipped_allow_list_parses_and_every_entry_has_a_reason() -> None:
    entries = load_allow_list(DEFAULT_ALLOW_LIST)
    assert entries, "docs/emulator-fidelity.md lists the accepted differences"
    assert all(len(e.reason) >= 10 for e in entries)
    assert len({e.pattern for e in entries}) == len(entries)


# --------------------------------------------------------------------------------------------
# Real traffic
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def real(realworld_dir: Path) -> Profile:
    return real_profile(realworld_dir, ADAPTERS)


def test_the_real_profile_has_the_kinds_the_manifest_describes(real: Profile) -> None:
    # MANIFEST "Wire-format quirks": Anthropic SSE message_start, content_block_start tool_use with input {},
    # input_json_delta partial_json, message_stop, ping; OpenAI chat ends in [DONE]; Ollama NDJSON's last line
    # has done:true; Gemini's recorded 429; Ollama's 404 {"error": "..."}
    kinds = {(a, k) for a, k in real.shapes}
    for expected in [
        ("anthropic", "stream_event:message_start"),
        ("anthropic", "stream_event:content_block_start/tool_use"),
        ("anthropic", "stream_event:content_block_delta/input_json_delta"),
        ("anthropic", "stream_event:ping"),
        ("anthropic", "stream_event:message_stop"),
        ("openai_chat", "stream_event:[DONE]"),
        ("openai_responses", "stream_event:response.output_item.added/function_call"),
        ("openai_responses", "stream_event:response.completed"),
        ("ollama", "chunk:final"),
        ("ollama", "error:404"),
        ("gemini", "error:429"),
    ]:
        assert expected in kinds
    tool_use = real.shape("anthropic", "stream_event:content_block_start/tool_use")
    assert tool_use is not None and ("$.content_block.input", "object") in tool_use.fields
    delta = real.shape("anthropic", "stream_event:content_block_delta/input_json_delta")
    assert delta is not None and ("$.delta.partial_json", "string") in delta.fields
    ollama = real.shape("ollama", "response")
    # wire-formats §5c: arguments are an object, ids optional, no ``type`` key on the call
    assert ollama is not None and ("$.message.tool_calls[].function.arguments", "object") in ollama.fields
    assert not any(path == "$.message.tool_calls[].type" for path, _ in ollama.fields)
    gemini = real.shape("gemini", "response")
    assert gemini is not None and ("$.candidates[].content.parts[].functionCall.args", "object") in gemini.fields


# --------------------------------------------------------------------------------------------
# The emulator fidelity test
# --------------------------------------------------------------------------------------------


def _emulator_module() -> Any:
    try:
        return load_emulator()
    except ImportError as exc:
        pytest.skip(f"emulator not available ({exc})")


@pytest.fixture(scope="module")
def emulator(real: Profile) -> Iterator[Any]:
    module = _emulator_module()
    with module.Emulator(port=0) as emu:
        yield emu


@pytest.fixture(scope="module")
def allow_list() -> list[AllowEntry]:
    return load_allow_list(DEFAULT_ALLOW_LIST)


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_emulator_traffic_has_the_shape_of_real_traffic(
    adapter: str, real: Profile, emulator: Any, allow_list: list[AllowEntry]
) -> None:
    emulated = emulator_profile(emulator, adapter)
    assert emulated.adapters() == [adapter]
    result = check(real, emulated, allow_list)
    lines = [f"{len(result.unexplained)} unexplained difference(s), {len(result.stale)} stale allow-list entries:"]
    lines += [f"  {d.describe()}\n    {json.dumps(d.key)}: <reason>" for d in result.unexplained]
    lines += [f"  stale (matches nothing any more): {e.pattern!r}" for e in result.stale]
    lines.append("fix the emulator, or explain the difference in docs/emulator-fidelity.md")
    assert result.ok, "\n".join(lines)


def test_the_command_line_says_when_there_are_no_real_cassettes(tmp_path: Path, capsys: Any) -> None:
    assert main(["--realworld", str(tmp_path), "--adapter", "ollama"]) == 2
    assert "no real cassettes" in capsys.readouterr().err


def test_the_command_line_prints_each_adapter(realworld_dir: Path, capsys: Any) -> None:
    _emulator_module()
    code = main(["--realworld", str(realworld_dir), "--adapter", "ollama", "--all"])
    out = capsys.readouterr().out
    assert out.startswith("ollama: ")
    assert code in (0, 1)
