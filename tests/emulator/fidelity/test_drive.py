"""The scripts the fidelity check plays, and what driving the emulator captures."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from conformance.emulator.fidelity import ADAPTERS
from conformance.emulator.fidelity.drive import MODELS, drive, drive_scripts, load_emulator
from conformance.scenarios.values import FAULT_KINDS, STREAM_FAULTS


def test_every_fault_kind_is_played_and_stream_faults_only_in_stream_mode() -> None:
    scripts = {s.name: s for s in drive_scripts()}
    for kind in FAULT_KINDS:
        script = scripts[f"fault_{kind}"]
        assert script.replies[0].fault is not None and script.replies[0].fault.kind == kind
        assert script.modes == (("stream",) if kind in STREAM_FAULTS else ("non_stream", "stream"))
    assert {"text", "one_call", "two_calls", "reasoning_call"} <= set(scripts)
    assert len(scripts["two_calls"].replies[0].tool_calls) == 2


def test_every_wire_adapter_has_a_model() -> None:
    assert sorted(MODELS) == sorted(ADAPTERS)


@pytest.fixture(scope="module")
def emulator() -> Iterator[Any]:
    try:
        module = load_emulator()
    except ImportError as exc:
        pytest.skip(f"emulator not available ({exc})")
    with module.Emulator(port=0) as emu:
        yield emu


def test_a_call_turn_is_answered_with_tool_results_one_of_them_failed(emulator: Any) -> None:
    exchanges = {label: rest for label, *rest in drive(emulator, "anthropic")}
    # two turns for a call script, in both modes; one exchange for a fault
    assert {"two_calls/non_stream#0", "two_calls/non_stream#1", "two_calls/stream#1"} <= set(exchanges)
    assert "fault_rate_limit/non_stream#1" not in exchanges
    url, request, status, _, streaming = exchanges["two_calls/non_stream#1"]
    assert url.endswith("/v1/messages") and status == 200 and not streaming
    # wire-formats §3b: results go back as tool_result blocks in a user message; is_error marks a failed call
    results = [
        block
        for message in json.loads(request)["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block["type"] == "tool_result"
    ]
    assert [r.get("is_error", False) for r in results] == [False, True]
    assert exchanges["fault_rate_limit/non_stream#0"][2] == 429


def test_a_broken_stream_keeps_what_arrived(emulator: Any) -> None:
    exchanges = {label: rest for label, *rest in drive(emulator, "openai_chat")}
    _, _, status, body, streaming = exchanges["fault_disconnect/stream#0"]
    assert status == 200 and streaming
    assert body.startswith(b"data: ") and b"[DONE]" not in body
    _, request, _, _, _ = exchanges["text/stream#0"]
    assert json.loads(request)["stream_options"] == {"include_usage": True}
