"""Issue 16 against a real model server (``llama-server`` + Qwen2.5-Coder 0.5B on 127.0.0.1): ten
scenarios recorded live on the three wires it serves, twice in a row, then replayed.

What a live recording must do (issue 16, "Done means"): no pair fails, the key never reaches a
cassette or the console, each pair is reported ``recorded`` or ``model deviated: ...`` (recorded
anyway with ``--allow-deviation``; without it, a deviation writes nothing and exits 1), a second
recording right after reports ``unchanged`` for every pair and leaves the files byte-identical,
and the replay judges the reference adapters against what was recorded, so they pass.
"""

from __future__ import annotations

import json
from typing import Any

from tests.live_local._live import (
    ADAPTERS,
    DEVIATING,
    KEY,
    MAX_TOKENS,
    SCENARIOS,
    STRUCTURED_ALWAYS,
    STRUCTURED_SCENARIOS,
    Recording,
    Recordings,
    Replay,
    load_script,
)

PAIRS = [(adapter, scenario) for adapter in ADAPTERS for scenario in SCENARIOS]


def _status_word(text: str) -> str:
    for word in ("recorded", "written", "unchanged", "model deviated", "unsupported", "failed"):
        if text.startswith(word):
            return word
    return text


def _interactions(files: dict[str, bytes], adapter: str, scenario: str) -> list[dict[str, Any]]:
    cassette: dict[str, Any] = json.loads(files[f"{adapter}/{scenario}.yaml"])
    interactions: list[dict[str, Any]] = cassette["interactions"]
    return interactions


def test_every_pair_is_recorded_and_none_fails(recordings: Recordings) -> None:
    first = recordings.first
    assert sorted(first.statuses) == sorted(PAIRS), first.stderr
    failed = {pair: text for pair, text in first.statuses.items() if _status_word(text) == "failed"}
    assert failed == {}, first.stderr
    assert sorted(first.files) == sorted(f"{adapter}/{scenario}.yaml" for adapter, scenario in PAIRS)
    for adapter, scenario in PAIRS:  # each pair ran its scenario non-streamed and streamed, on 127.0.0.1
        interactions = _interactions(first.files, adapter, scenario)
        assert len(interactions) >= 2, (adapter, scenario)
        assert {i["response"]["status"]["code"] for i in interactions} == {200}, (adapter, scenario)


def test_the_key_never_reaches_a_cassette_or_the_console(recordings: Recordings) -> None:
    for run in (recordings.first, recordings.second):
        assert KEY not in run.stdout + run.stderr
        assert [name for name, data in run.files.items() if KEY.encode() in data] == []


def test_with_allow_deviation_the_exit_code_is_0_when_no_pair_failed(recordings: Recordings) -> None:
    for run in (recordings.first, recordings.second):
        words = {_status_word(text) for text in run.statuses.values()}
        assert run.code == (1 if "failed" in words else 0), run.stderr


def test_without_allow_deviation_a_deviation_is_exit_1_and_nothing_is_written(strict_recording: Recording) -> None:
    assert list(strict_recording.statuses) == [("openai_chat", DEVIATING[0])]
    status = strict_recording.statuses["openai_chat", DEVIATING[0]]
    assert status.startswith("model deviated: ") and "nothing was written" in status, status
    assert strict_recording.code == 1 and strict_recording.files == {}


def test_the_second_recording_writes_the_same_files(recordings: Recordings) -> None:
    assert sorted(recordings.second.files) == sorted(recordings.first.files)
    assert sorted(recordings.second.statuses) == sorted(PAIRS)


def test_each_pair_is_recorded_or_a_deviation_of_the_model(recordings: Recordings) -> None:
    words = {pair: _status_word(text) for pair, text in recordings.first.statuses.items()}
    assert set(words.values()) <= {"recorded", "model deviated"}, recordings.first.stderr


def test_a_call_answered_as_text_is_reported_as_a_deviation(recordings: Recordings) -> None:
    """In the default (content) mode the model writes its call as JSON text in the content: the
    scenarios that expect a call and got none are ``model deviated``, and the exit code is 1."""
    deviated = [
        pair
        for pair in PAIRS
        if not _has_structured_call(pair[0], _interactions(recordings.first.files, *pair))
        and pair[1] in {"basic/single_call", "schemas/enums", "arguments/typed_values"}
    ]
    assert deviated, "the model made every expected call: no deviation to check"
    for pair in deviated:
        assert recordings.first.statuses[pair].startswith("model deviated: "), recordings.first.statuses[pair]
        assert "recorded anyway" in recordings.first.statuses[pair]


def test_a_second_recording_reports_unchanged_for_every_pair(recordings: Recordings) -> None:
    words = {pair: _status_word(text) for pair, text in recordings.second.statuses.items()}
    assert set(words.values()) == {"unchanged"}, recordings.second.stderr


def test_a_second_recording_leaves_the_files_byte_identical(recordings: Recordings) -> None:
    changed = [name for name, data in recordings.second.files.items() if recordings.first.files.get(name) != data]
    assert changed == []


def test_every_request_carries_the_recording_knobs(recordings: Recordings) -> None:
    for adapter, scenario in PAIRS:
        for interaction in _interactions(recordings.first.files, adapter, scenario):
            body = interaction["request"]["parsed_body"]
            assert body.get("temperature") == 0, (adapter, scenario, body)
            limits = {body.get(k) for k in ("max_tokens", "max_completion_tokens", "max_output_tokens")} - {None}
            assert limits == {MAX_TOKENS}, (adapter, scenario, body)


def test_every_cassette_names_the_server_build_and_the_model_file(recordings: Recordings) -> None:
    script = load_script()
    for adapter, scenario in PAIRS:
        provenance = json.loads(recordings.first.files[f"{adapter}/{scenario}.yaml"])["provenance"]
        assert provenance["model_sha256"] == script.MODEL.sha256 and provenance["model_file"] == script.MODEL.name
        assert script.SOURCE.sha256 in provenance["server"] and provenance["server_binary_sha256"] != "unknown"
        assert "--jinja" in provenance["server_flags"] and provenance["mode"] == "live"


def test_the_replay_judges_every_recorded_case_without_an_error(replay: Replay) -> None:
    cases = {(c["adapter"], c["scenario"], c["mode"]): c["status"] for c in replay.report["cases"]}
    expected = {(a, s, m) for a, s in PAIRS for m in ("non_stream", "stream")}
    assert set(cases) == expected, replay.output
    assert {case: status for case, status in cases.items() if status == "error"} == {}, replay.output


def test_the_reference_adapters_pass_on_the_live_cassettes(replay: Replay) -> None:
    failing = {(c["adapter"], c["scenario"], c["mode"]): c["status"] for c in replay.report["cases"]}
    assert {case: s for case, s in failing.items() if s not in {"pass", "unsupported"}} == {}, replay.output
    assert replay.code == 0


def test_the_structured_mode_yields_structured_calls_on_every_wire(structured_recording: Recording) -> None:
    """With the structured template the same model's calls come back in each wire's own call shape,
    non-streamed and streamed, where the content mode returns them as text (docs/live.md). An answer
    that does not parse as a call is an HTTP 500 naming the parser (the mode's measured price)."""
    run = structured_recording
    failed = {pair: text for pair, text in run.statuses.items() if text.startswith("failed")}
    assert failed == {}, run.stderr
    for adapter in ADAPTERS:
        for scenario in STRUCTURED_SCENARIOS:
            for interaction in _interactions(run.files, adapter, scenario):
                response = interaction["response"]
                if response["status"]["code"] == 500 and scenario not in STRUCTURED_ALWAYS:
                    assert "does not match the expected peg-native format" in json.dumps(response), response
                else:
                    assert _has_structured_call(adapter, [interaction]), (adapter, scenario, response)


def _has_structured_call(adapter: str, interactions: list[dict[str, Any]]) -> bool:
    """Whether an answer holds a structured tool call in its wire's own shape: ``tool_calls`` (OpenAI
    chat), a ``function_call`` output item (Responses), a ``tool_use`` block (Anthropic)."""
    marker = {"openai_chat": '"tool_calls"', "openai_responses": '"function_call"', "anthropic": '"tool_use"'}[adapter]
    for interaction in interactions:
        response = interaction["response"]
        body = response.get("parsed_body")
        if body is not None:
            if adapter == "openai_chat" and any(c["message"].get("tool_calls") for c in body.get("choices", [])):
                return True
            if adapter == "openai_responses" and any(o.get("type") == "function_call" for o in body.get("output", [])):
                return True
            if adapter == "anthropic" and any(b.get("type") == "tool_use" for b in body.get("content", [])):
                return True
        elif any(marker in chunk for chunk in response.get("body", {}).get("chunks", [])):
            return True
    return False
