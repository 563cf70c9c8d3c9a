"""Certify a third-party prompt-based adapter defined outside the package (docs/adapters.md).

``tests/data/third_party/acme_agents/hermes_adapter.py`` declares ``Adapter(name="acme_hermes",
wire_format="openai_chat", tools_in_prompt=True, prompt_format="hermes", known_gaps={...})``. Its
cases must replay the Hermes prompt cassettes (chosen by what it declares, never by its name),
give the bundled ``hermes`` adapter's verdicts everywhere but at its declared gap, and turn the
gap into XFAIL."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.adapters import get_adapter
from conformance.adapters.base import Adapter
from conformance.cli import main
from conformance.run.runner import RunOptions, run_suite
from conformance.scenarios.loader import load_scenarios

ROOT = Path(__file__).resolve().parents[2]
THIRD_PARTY = ROOT / "tests" / "data" / "third_party"


@pytest.fixture
def acme(monkeypatch: pytest.MonkeyPatch) -> Iterator[Adapter]:
    monkeypatch.syspath_prepend(str(THIRD_PARTY))
    from acme_agents.hermes_adapter import ACME_HERMES

    yield ACME_HERMES


def test_a_third_party_prompt_adapter_is_certified_against_the_prompt_cassettes(acme: Adapter) -> None:
    scenarios = load_scenarios().scenarios
    options = RunOptions(cassette_dir=ROOT / "cassettes")
    theirs = run_suite(scenarios, [acme], options)
    ours = run_suite(scenarios, [get_adapter("hermes")], options)
    assert len(theirs.cases) == len(ours.cases) > 100
    assert {c.cassette for c in theirs.cases if c.cassette} <= {
        str(ROOT / "cassettes" / "hermes" / f"{s.id}.yaml") for s in scenarios
    }
    reference = {(c.scenario, c.mode): c.status for c in ours.cases}
    assert set(reference.values()) <= {"pass", "unsupported"}  # the bundled adapter passes its own cassettes
    differing = {(c.scenario, c.mode): c.status for c in theirs.cases if reference[(c.scenario, c.mode)] != c.status}
    assert differing == {
        ("basic/text_before_call", "non_stream"): "xfail",
        ("basic/text_before_call", "stream"): "xfail",
        ("recovery/tool_error_self_correct", "non_stream"): "xfail",
        ("recovery/tool_error_self_correct", "stream"): "xfail",
        ("streaming/text_then_call_events", "stream"): "xfail",
        ("streaming/trailing_empty_text", "non_stream"): "xfail",
        ("streaming/trailing_empty_text", "stream"): "xfail",
    }
    gap = [v for c in theirs.cases if c.status == "xfail" for v in c.checks if v.status == "xfail"]
    assert {v.check for v in gap} == {"roundtrip.text", "streaming.events", "translation.recorded_request"}
    assert all("ACME-1234" in v.message for v in gap)
    assert {a.name: a.known_gaps for a in theirs.adapters} == {"acme_hermes": dict(acme.known_gaps)}


def test_the_declared_prompt_format_chooses_the_cassettes(acme: Adapter) -> None:
    """Declared as Qwen, the same adapter replays the Qwen cassettes (and fails there): the name
    plays no part, and nothing falls back to the native openai_chat cassettes."""
    scenarios = [s for s in load_scenarios().scenarios if s.id == "basic/get_time"]
    as_qwen = dataclasses.replace(acme, prompt_format="qwen", known_gaps={})
    result = run_suite(scenarios, [as_qwen], RunOptions(cassette_dir=ROOT / "cassettes"))
    assert {c.cassette for c in result.cases} == {str(ROOT / "cassettes" / "qwen" / "basic/get_time.yaml")}
    assert {c.status for c in result.cases} == {"fail"}


def test_conformance_run_takes_it_by_object_path(
    acme: Adapter, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = "acme_agents.hermes_adapter:ACME_HERMES"
    code = main(["run", "--adapter", spec, "-k", "text_before_call or get_time", "--report-dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out  # a known gap is XFAIL: the run passes
    assert "acme_hermes" in out and "x" in out
    assert "cassettes/hermes/basic/get_time.yaml" in (tmp_path / "report.json").read_text(encoding="utf-8")
