"""``server.*``: real answers pass every check; each check fails on a minimal mutation of one.

Positives are recorded traffic (``_server_traffic``): real OpenAI, Anthropic, Gemini and Ollama
answers, the emulator's answers and a real llama.cpp server's Chat answers. Negatives change one
thing in a real answer, the thing the wire's sources forbid, and expect that check, at that path.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from conformance.checks import _server_shape
from conformance.checks.server import ANSWER_CHECKS, SERVER_CHECKS, ServerExchange, answer_verdicts
from conformance.run.fingerprint import CHECK_IDS
from conformance.verdicts import CheckVerdict, signature
from tests.checks._server_traffic import (
    EMULATOR,
    REALWORLD,
    WIRES,
    edit_body,
    edit_lines,
    edit_stream,
    exchanges,
    one,
)


def _failing(verdicts: tuple[CheckVerdict, ...]) -> dict[str, list[str]]:
    return {v.check: [f"{f.path}: {f.message}" for f in v.findings] for v in verdicts if v.status != "pass"}


def _paths(verdicts: tuple[CheckVerdict, ...], check: str) -> list[str]:
    return [f.path for v in verdicts if v.check == check for f in v.findings]


def _only(verdicts: tuple[CheckVerdict, ...], check: str) -> list[str]:
    """The paths of ``check``'s findings, asserting no other check failed."""
    failing = _failing(verdicts)
    assert set(failing) == {check}, failing
    return _paths(verdicts, check)


def test_the_family_is_listed_with_its_ids() -> None:
    assert CHECK_IDS["server"] == SERVER_CHECKS
    assert SERVER_CHECKS[:7] == ANSWER_CHECKS


# --------------------------------------------------------------------------------------------
# Positives: real answers
# --------------------------------------------------------------------------------------------

REAL = [(wire, p) for wire in WIRES for p in sorted((REALWORLD / wire).glob("*.yaml"))]


@pytest.mark.parametrize(("wire", "path"), REAL, ids=[p.stem[:60] for _w, p in REAL])
def test_real_provider_answers_pass_every_check(wire: str, path: Path) -> None:
    answers = list(exchanges(path, wire))
    if not answers:
        pytest.skip("no 200 answer on the wire's endpoint (an error recording: see test_server_errors)")
    verdicts = answer_verdicts(answers)
    assert _failing(verdicts) == {}
    assert {v.check for v in verdicts} == set(ANSWER_CHECKS)  # every check judged something


def test_the_real_answers_cover_each_wire_whole_and_streamed() -> None:
    kinds = {(e.wire, e.stream) for wire, path in REAL for e in exchanges(path, wire)}
    assert kinds == {(wire, stream) for wire in WIRES for stream in (False, True)}


FAULTS: dict[str, set[str]] = {
    # the emulator's scripted faults, on every wire: what each breaks
    "arguments/malformed_json": {"server.arguments"},
    "arguments/truncated_by_length": {"server.arguments"},
    "errors/malformed_body": {"server.framing", "server.shape"},
    "errors/stream_disconnect": {"server.framing"},
    "errors/stream_disconnect_before_content": {"server.framing"},
    "errors/stream_error_event": {"server.status"},  # the error event ends the stream: no terminator after it
    "errors/stream_no_terminator": {"server.framing"},
}
"""Each scripted fault and the check it must fail (at least): a stream cut short has no terminator
(framing), an error event inside a 200 is a status defect."""

QUIRKS: dict[str, dict[str, set[str]]] = {
    # provider quirks the emulator plays on every wire, a defect only where the wire's rule is broken
    "arguments/empty_string": {"openai_chat": {"server.arguments"}, "openai_responses": {"server.arguments"}},
    "streaming/empty_args_string": {
        "openai_chat": {"server.arguments"},
        "openai_responses": {"server.arguments"},
        "ollama": {"server.arguments", "server.shape"},  # Ollama's arguments are an object (§5c)
    },  # Anthropic: "" means {} (wire-formats.md §3d); Gemini: args an object or absent
    "streaming/done_without_finish_reason": {"openai_chat": {"server.finish"}},
    "streaming/unterminated_last_event": {  # NDJSON: ollama-python's iter_lines reads a last line without \\n
        wire: {"server.framing"} for wire in ("openai_chat", "openai_responses", "anthropic", "gemini")
    },
    "streaming/index_offset": {"openai_chat": {"server.ids"}},
    "streaming/name_repeated": {"openai_chat": {"server.ids"}},
}

EMULATED = [(wire, p) for wire in WIRES for p in sorted((EMULATOR / wire).rglob("*.yaml"))]


def _scenario(wire: str, path: Path) -> str:
    return path.relative_to(EMULATOR / wire).with_suffix("").as_posix()


def _expected(wire: str, scenario: str) -> set[str]:
    if scenario in QUIRKS:
        return QUIRKS[scenario].get(wire, set())
    fault = set(FAULTS.get(scenario, set()))
    if wire == "gemini" and scenario == "errors/stream_no_terminator":
        return {"server.finish"}  # Gemini has no terminator event: its last chunk lacks the finishReason
    if scenario in ("arguments/malformed_json", "arguments/truncated_by_length") and not wire.startswith("openai"):
        fault.add("server.shape")  # the SDK types arguments as an object on these wires
    if scenario == "arguments/truncated_by_length" and wire.startswith("openai"):
        return set()  # cut by the limit (Chat length, Responses incomplete): the arguments are not judged
    return fault


@pytest.mark.parametrize("wire", WIRES)
def test_the_emulators_answers_pass_and_its_scripted_faults_fail_their_check(wire: str) -> None:
    passed = 0
    for w, path in EMULATED:
        answers = list(exchanges(path, wire)) if w == wire else []
        if not answers:
            continue
        failing = set(_failing(answer_verdicts(answers)))
        expected = _expected(wire, _scenario(wire, path))
        if not expected:
            assert failing == set(), (path, _failing(answer_verdicts(answers)))
            passed += 1
        else:
            assert expected <= failing, (path, _failing(answer_verdicts(answers)))
    assert passed > 50


LIVE = sorted((EMULATOR / "live").rglob("openai_chat/**/*.yaml"))


@pytest.mark.parametrize("path", LIVE, ids=[f"{p.parts[-4]}/{p.parts[-2]}/{p.stem}" for p in LIVE])
def test_a_real_llama_cpp_servers_chat_answers_pass(path: Path) -> None:
    assert _failing(answer_verdicts(list(exchanges(path, "openai_chat")))) == {}


def test_a_real_llama_cpp_servers_responses_answers_lack_fields_the_sdk_requires() -> None:
    """llama.cpp's /v1/responses (the pinned build) leaves out what openai-python's types require:
    ``sequence_number`` on every event, ``output_index``, ``tools``...: the shape check says so in one
    finding per answer (one defect of the server's, as its maintainer would file it), naming every field
    once and, type by type, which events lack what."""
    path = (
        EMULATOR / "live" / "llama.cpp-qwen2.5-coder-0.5b" / "content" / "openai_responses" / "basic" / "get_time.yaml"
    )
    verdicts = answer_verdicts(list(exchanges(path, "openai_responses")))
    shape = next(v for v in verdicts if v.check == "server.shape")
    assert shape.status == "fail"
    by_path = {f.path: f.message for f in shape.findings}
    # the whole answer (one type: at its first missing field), the stream (nine event types): one finding each
    assert sorted(by_path) == ["$.parallel_tool_calls", "stream[*].data"]
    stream = by_path["stream[*].data"]
    assert stream.startswith("leaves out ") and stream.count("sequence_number") >= 2
    assert "ResponseTextDeltaEvent: content_index, logprobs, output_index, sequence_number" in stream
    assert by_path["$.parallel_tool_calls"] == (
        "leaves out parallel_tool_calls, tool_choice, tools, usage.output_tokens_details, "
        "which openai.types.responses.Response requires"
    )


LLAMA = EMULATOR / "live" / "llama.cpp-qwen2.5-coder-0.5b" / "structured"


def test_a_real_llama_cpp_anthropic_stream_leaves_the_tool_use_input_out_of_its_block_start() -> None:
    """anthropic ``RawContentBlockStartEvent.content_block`` is a ``ToolUseBlock`` whose ``input`` is
    required (Anthropic sends ``input: {}`` there, wire-formats.md §3d); llama.cpp's stream omits it."""
    verdicts = answer_verdicts(list(exchanges(LLAMA / "anthropic" / "basic" / "single_call.yaml", "anthropic")))
    assert _only(verdicts, "server.shape") == ["stream[1].data.content_block.input"]


def test_a_real_llama_cpp_responses_answer_cut_by_max_output_tokens_says_completed() -> None:
    """48 output tokens of the 48 allowed, the call's arguments cut mid-object, and status completed:
    the arguments check names the call (a cut answer says incomplete, and is then not judged)."""
    path = LLAMA / "openai_responses" / "schemas" / "enums.yaml"
    verdicts = answer_verdicts(list(exchanges(path, "openai_responses")))
    assert _paths(verdicts, "server.arguments") == ["$.output[1].arguments", "stream[35].data.item.arguments"]


# --------------------------------------------------------------------------------------------
# OpenAI Chat
# --------------------------------------------------------------------------------------------

CHAT_STREAM = REALWORLD / "openai_chat" / "crewai__test_handle_streaming_tool_calls.yaml"
CHAT_WHOLE = (
    REALWORLD
    / "openai_chat"
    / "crewai__TestMaxUsageCountWithNativeToolCalling.test_max_usage_count_limit_enforced_in_native_tool_calling.yaml"
)


def _chat_stream() -> ServerExchange:
    return one(CHAT_STREAM, "openai_chat")


def test_a_chat_stream_without_done_fails_framing() -> None:
    answer = edit_stream(_chat_stream(), lambda ev: [e for e in ev if e[1] != "[DONE]"])
    paths = _only(answer_verdicts([answer]), "server.framing")
    assert len(paths) == 1 and paths[0].startswith("stream[")


def test_an_event_after_done_fails_framing() -> None:
    answer = edit_stream(_chat_stream(), lambda ev: [*ev, ev[1]])
    assert _only(answer_verdicts([answer]), "server.framing") == [f"stream[{len(sse(answer)) - 1}]"]


def sse(answer: ServerExchange) -> list[Any]:
    from tests.checks._server_traffic import sse_events

    return sse_events(answer.body)


def test_a_chunk_whose_id_changes_fails_ids() -> None:
    def edit(events: list[Any]) -> list[Any]:
        events[2][1]["id"] = "chatcmpl-other"
        return events

    verdicts = answer_verdicts([edit_stream(_chat_stream(), edit)])
    assert _only(verdicts, "server.ids") == ["stream[2].data.id"]
    [finding] = next(v for v in verdicts if v.check == "server.ids").findings
    assert finding.actual == "chatcmpl-other" and finding.expected.startswith("chatcmpl-")


def _first_call_fragment(events: list[Any]) -> tuple[int, dict[str, Any]]:
    for i, (_name, data) in enumerate(events):
        if isinstance(data, dict):
            for choice in data.get("choices", []):
                for fragment in choice.get("delta", {}).get("tool_calls") or []:
                    return i, fragment
    raise AssertionError("no tool call fragment")


def test_argument_fragments_that_do_not_parse_fail_arguments() -> None:
    def edit(events: list[Any]) -> list[Any]:
        _i, fragment = _first_call_fragment(events)
        fragment["function"]["arguments"] = "{'city': " + fragment["function"].get("arguments", "")
        return events

    paths = _only(answer_verdicts([edit_stream(_chat_stream(), edit)]), "server.arguments")
    assert paths == [
        f"stream[{_first_call_fragment(sse_json(_chat_stream()))[0]}].data.choices[0].delta.tool_calls[0].function.arguments"
    ]


def sse_json(answer: ServerExchange) -> list[Any]:
    return [(n, d if d == "[DONE]" else json.loads(d)) for n, d in sse(answer)]


def test_a_later_fragment_that_repeats_the_id_fails_ids() -> None:
    """openai-python's accumulator appends every string of a later fragment (lib/streaming/_deltas.py)."""

    def edit(events: list[Any]) -> list[Any]:
        i, fragment = _first_call_fragment(events)
        later = next(
            j
            for j in range(i + 1, len(events))
            if isinstance(events[j][1], dict)
            and events[j][1]["choices"]
            and (events[j][1]["choices"][0].get("delta") or {}).get("tool_calls")
        )
        events[later][1]["choices"][0]["delta"]["tool_calls"][0]["id"] = fragment["id"]
        return events

    paths = _only(answer_verdicts([edit_stream(_chat_stream(), edit)]), "server.ids")
    assert len(paths) == 1 and paths[0].endswith(".delta.tool_calls[0].id")


def test_finish_stop_with_tool_calls_fails_finish_unless_the_call_was_forced() -> None:
    answer = one(CHAT_WHOLE, "openai_chat")
    stopped = edit_body(answer, lambda b: b["choices"][0].update(finish_reason="stop"))
    assert _only(answer_verdicts([stopped]), "server.finish") == ["$.choices[0].finish_reason"]
    assert _failing(answer_verdicts([replace(stopped, forced="get_weather")])) == {}  # wire-formats.md §1c
    request = json.loads(answer.request)
    request["tool_choice"] = {"type": "function", "function": {"name": "x"}}
    assert _failing(answer_verdicts([replace(stopped, request=json.dumps(request).encode())])) == {}


def test_finish_tool_calls_without_calls_fails_finish() -> None:
    answer = one(CHAT_WHOLE, "openai_chat", 4)  # the last turn: text
    mutated = edit_body(answer, lambda b: b["choices"][0].update(finish_reason="tool_calls"))
    assert _only(answer_verdicts([mutated]), "server.finish") == ["$.choices[0].finish_reason"]


def test_usage_that_does_not_add_up_fails_usage() -> None:
    mutated = edit_body(one(CHAT_WHOLE, "openai_chat"), lambda b: b["usage"].update(total_tokens=1))
    verdicts = answer_verdicts([mutated])
    assert _only(verdicts, "server.usage") == ["$.usage.total_tokens"]


def test_a_missing_required_field_fails_shape_citing_the_sdk_type() -> None:
    mutated = edit_body(one(CHAT_WHOLE, "openai_chat"), lambda b: b.pop("created"))
    verdicts = answer_verdicts([mutated])
    assert _only(verdicts, "server.shape") == ["$.created"]
    [finding] = next(v for v in verdicts if v.check == "server.shape").findings
    assert finding.message == "leaves out created, which openai.types.chat.ChatCompletion requires"


def test_a_value_outside_its_literal_fails_shape() -> None:
    mutated = edit_body(one(CHAT_WHOLE, "openai_chat"), lambda b: b.update(object="chat.completions"))
    verdicts = answer_verdicts([mutated])
    assert _only(verdicts, "server.shape") == ["$.object"]


def test_an_answer_in_another_wire_says_which() -> None:
    chat = one(CHAT_WHOLE, "openai_chat")
    verdicts = answer_verdicts([replace(chat, wire="anthropic")])
    shape = next(v for v in verdicts if v.check == "server.shape")
    assert shape.status == "fail" and any("openai_chat wire's" in f.message for f in shape.findings)


def test_a_stream_asked_for_and_answered_whole_fails_framing() -> None:
    whole = one(CHAT_WHOLE, "openai_chat")
    verdicts = answer_verdicts([replace(whole, stream=True, headers={"content-type": "application/json"})])
    assert _only(verdicts, "server.framing") == ['$.headers["content-type"]']


def test_include_usage_asks_for_a_usage_chunk() -> None:
    answer = _chat_stream()
    request = json.loads(answer.request)
    asked = replace(answer, request=json.dumps({**request, "stream_options": {"include_usage": True}}).encode())
    without = edit_stream(asked, lambda ev: [(n, d) for n, d in ev if not (isinstance(d, dict) and d.get("usage"))])
    assert _only(answer_verdicts([without]), "server.usage") == [f"stream[{len(sse(without)) - 1}]"]


# --------------------------------------------------------------------------------------------
# status
# --------------------------------------------------------------------------------------------


def test_a_500_to_a_valid_request_fails_status_with_its_body_quoted() -> None:
    answer = replace(one(CHAT_WHOLE, "openai_chat"), status=500, body=b'{"error":{"message":"boom"}}')
    verdicts = answer_verdicts([answer])
    assert [v.check for v in verdicts] == ["server.status"]  # nothing else to judge
    [finding] = verdicts[0].findings
    assert finding.actual == 500 and '"boom"' in finding.message and finding.turn == answer.turn


@pytest.mark.parametrize(
    ("kw", "words"),
    [
        ({"status": 0, "error": "timeout after 120 s"}, "timeout after 120 s"),
        ({"truncated": True}, "the size bound"),
        ({"error": "the server closed the connection mid-body"}, "(HTTP 200) broke off: the server closed"),
    ],
)
def test_no_answer_or_a_cut_one_fails_status_saying_what_happened(kw: dict[str, Any], words: str) -> None:
    [verdict] = answer_verdicts([replace(_chat_stream(), **kw)])
    assert verdict.check == "server.status" and verdict.status == "fail" and words in verdict.findings[0].message


def test_an_error_event_inside_a_200_stream_fails_status() -> None:
    answer = edit_stream(_chat_stream(), lambda ev: [*ev[:3], (None, {"error": {"message": "overloaded"}})])
    verdicts = answer_verdicts([answer])
    assert _paths(verdicts, "server.status") == ["stream[3].data"]
    # the error event ends the stream (openai-python's Stream raises APIError on it): the missing
    # [DONE], finish_reason and usage after it are not further defects of the same event
    assert [v.check for v in verdicts if v.status == "fail"] == ["server.status"]


# --------------------------------------------------------------------------------------------
# Signatures and bounds
# --------------------------------------------------------------------------------------------


def test_one_defect_repeated_in_an_answer_is_one_finding_and_across_answers_one_signature() -> None:
    def drop_ids(events: list[Any]) -> list[Any]:
        for _n, data in events:
            if isinstance(data, dict):
                data.pop("id", None)
        return events

    first = edit_stream(_chat_stream(), drop_ids)
    second = replace(first, turn=3)
    verdicts = answer_verdicts([first, second])
    ids = [f for v in verdicts if v.check == "server.ids" for f in v.findings]
    assert len(ids) == 2 and "times in this answer" in ids[0].message
    assert len({signature(f) for f in ids}) == 1 and [f.turn for f in ids] == [0, 3]


def test_a_stream_of_a_hundred_thousand_bad_events_gives_a_small_verdict() -> None:
    body = b"data: {not json}\n\n" * 100_000
    answer = ServerExchange(
        wire="openai_chat",
        stream=True,
        request=b"{}",
        status=200,
        headers={"content-type": "text/event-stream"},
        body=body,
    )
    verdicts = answer_verdicts([answer])
    assert sum(len(v.findings) for v in verdicts) < 10
    assert "100000 times" in next(v for v in verdicts if v.check == "server.framing").findings[0].message


def test_without_the_wires_sdk_shape_is_unsupported_and_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(wire: str) -> None:
        raise _server_shape.Missing(f"the {wire} shapes come from an SDK that is not installed: {_server_shape.EXTRA}")

    monkeypatch.setattr(_server_shape, "_load", missing)
    _server_shape._whole.cache_clear()
    _server_shape._events.cache_clear()
    try:
        verdicts = answer_verdicts([_chat_stream()])
    finally:
        _server_shape._whole.cache_clear()
        _server_shape._events.cache_clear()
    shape = next(v for v in verdicts if v.check == "server.shape")
    assert shape.status == "unsupported" and "pip install 'conformance[server]'" in shape.message
    assert {v.check: v.status for v in verdicts if v.check != "server.shape"} == dict.fromkeys(
        ["server.status", "server.framing", "server.ids", "server.arguments", "server.finish", "server.usage"], "pass"
    )


# --------------------------------------------------------------------------------------------
# Ollama
# --------------------------------------------------------------------------------------------

OLLAMA_STREAM = REALWORLD / "ollama" / "openllmetry__test_ollama_streaming_chat_legacy.yaml"
OLLAMA_WHOLE = REALWORLD / "ollama" / "openinference__test_chat_with_tool_call.yaml"


def test_an_ollama_stream_without_its_done_line_fails_framing() -> None:
    answer = edit_lines(one(OLLAMA_STREAM, "ollama"), lambda lines: lines[:-1])
    verdicts = answer_verdicts([answer])
    assert "server.framing" in _failing(verdicts)


def test_an_ollama_answer_without_done_reason_fails_finish() -> None:
    answer = edit_body(one(OLLAMA_WHOLE, "ollama"), lambda b: b.pop("done_reason"))
    assert _only(answer_verdicts([answer]), "server.finish") == ["$.done_reason"]


def test_ollama_arguments_as_text_fail_arguments_and_shape() -> None:
    def edit(body: dict[str, Any]) -> None:
        call = body["message"]["tool_calls"][0]["function"]
        call["arguments"] = json.dumps(call["arguments"])

    failing = _failing(answer_verdicts([edit_body(one(OLLAMA_WHOLE, "ollama"), edit)]))
    assert set(failing) == {"server.arguments", "server.shape"}


# --------------------------------------------------------------------------------------------
# Hostile answers: a verdict each, never an exception
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("stream", "body", "check"),
    [
        (False, b"[" * 100_000, "server.shape"),  # JSON nested past the interpreter's depth
        (True, b"data: " + b"[" * 100_000 + b"\n\n", "server.framing"),
        (False, b"\xff\xfe\x00garbage", "server.shape"),
        (True, b"", "server.framing"),
        (True, b"\x00" * 10_000, "server.framing"),
    ],
)
def test_a_hostile_body_gets_a_verdict_naming_the_place(stream: bool, body: bytes, check: str) -> None:
    content_type = "text/event-stream" if stream else "application/json"
    answer = ServerExchange(
        wire="anthropic", stream=stream, request=b"{", status=200, headers={"content-type": content_type}, body=body
    )
    verdicts = answer_verdicts([answer])
    assert check in _failing(verdicts) and "server.internal" not in {v.check for v in verdicts}


def test_another_wires_stream_fails_with_the_wire_it_looks_like() -> None:
    anthropic = (
        REALWORLD
        / "anthropic"
        / "crewai__TestAnthropicToolCallStreaming.test_anthropic_streaming_emits_tool_call_events.yaml"
    )
    answer = replace(one(anthropic, "anthropic"), wire="openai_chat")
    failing = _failing(answer_verdicts([answer]))
    assert {"server.framing", "server.shape"} <= set(failing)
    assert any("anthropic wire's" in line for line in failing["server.shape"])


def test_a_check_that_breaks_on_an_answer_is_an_internal_error_and_the_others_are_judged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from conformance.checks import server

    def broken(*_args: Any) -> None:
        raise KeyError("surprise")

    monkeypatch.setattr(server, "chat_whole", broken)
    whole, stream = one(CHAT_WHOLE, "openai_chat"), _chat_stream()
    verdicts = answer_verdicts([whole, stream])
    internal = next(v for v in verdicts if v.check == "server.internal")
    assert internal.status == "error" and "KeyError: 'surprise'" in internal.message
    assert _failing(verdicts).keys() == {"server.internal"}  # the stream was judged and passed


def test_length_below_the_requests_limit_is_noted_not_failed() -> None:
    """openai-python's ``ChatCompletion.finish_reason``: length when the request's maximum was reached;
    a server's own cap (llama.cpp ``-n``) or a full context window ends an answer too."""
    answer = one(CHAT_WHOLE, "openai_chat", 4)
    request = {**json.loads(answer.request), "max_tokens": 1000}
    cut = edit_body(
        replace(answer, request=json.dumps(request).encode()), lambda b: b["choices"][0].update(finish_reason="length")
    )
    finish = next(v for v in answer_verdicts([cut]) if v.check == "server.finish")
    assert finish.status == "pass" and [f.kind for f in finish.findings] == ["note"]
    assert finish.findings[0].expected == "length at 1000 tokens"


def test_a_whole_chat_answer_without_a_choice_fails_finish() -> None:
    mutated = edit_body(one(CHAT_WHOLE, "openai_chat"), lambda b: b.update(choices=[]))
    assert _only(answer_verdicts([mutated]), "server.finish") == ["$.choices"]
