"""The runner against the bundled scenarios and cassettes, and what bad input gets."""

from __future__ import annotations

import dataclasses
import re
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.adapters import get_adapter
from conformance.cli import main
from conformance.run.runner import RunOptions, run_suite
from conformance.scenarios.loader import load_scenarios
from conformance.scenarios.values import Scenario

ROOT = Path(__file__).resolve().parents[2]
CASSETTES = ROOT / "cassettes"


def _scenarios(*ids: str) -> list[Scenario]:
    loaded = load_scenarios([ROOT / "scenarios"])
    found = {s.id: s for s in loaded.scenarios}
    return [found[i] for i in ids]


def _cassettes(tmp_path: Path, *pairs: tuple[str, str]) -> Path:
    for adapter, scenario in pairs:
        target = tmp_path / adapter / f"{scenario}.yaml"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(CASSETTES / adapter / f"{scenario}.yaml", target)
    return tmp_path


def test_reference_adapter_passes_the_get_time_scenario_in_both_modes() -> None:
    result = run_suite(_scenarios("basic/get_time"), [get_adapter("anthropic")], RunOptions(cassette_dir=CASSETTES))
    assert [(c.mode, c.status) for c in result.cases] == [("non_stream", "pass"), ("stream", "pass")]
    checks = {v.check for c in result.cases for v in c.checks}
    assert {
        "translation.tool_names",
        "roundtrip.calls",
        "streaming.chunk_invariance",
        "recovery.provider_error",
    } <= checks


def test_a_missing_cassette_is_an_error_naming_the_record_command_and_the_run_goes_on(tmp_path: Path) -> None:
    cassette_dir = _cassettes(tmp_path, ("gemini", "basic/single_call"))
    scenarios = _scenarios("basic/get_time", "basic/single_call")
    result = run_suite(scenarios, [get_adapter("gemini")], RunOptions(cassette_dir=cassette_dir))
    by_id = {(c.scenario, c.mode): c for c in result.cases}
    missing = by_id[("basic/get_time", "non_stream")]
    assert missing.status == "error"
    assert str(tmp_path / "gemini" / "basic" / "get_time.yaml") in missing.message
    assert "conformance record --emulator --adapter gemini --scenario basic/get_time" in missing.message
    assert by_id[("basic/single_call", "stream")].status == "pass"


def test_a_corrupt_cassette_is_an_error_naming_the_file(tmp_path: Path) -> None:
    cassette_dir = _cassettes(tmp_path, ("ollama", "basic/get_time"))
    (cassette_dir / "ollama" / "basic" / "get_time.yaml").write_text("interactions: [\n  - {request: ", "utf-8")
    result = run_suite(_scenarios("basic/get_time"), [get_adapter("ollama")], RunOptions(cassette_dir=cassette_dir))
    assert {c.status for c in result.cases} == {"error"}
    message = result.cases[0].message
    assert "get_time.yaml" in message and "re-record it with `conformance record --emulator --adapter ollama" in message


def test_an_adapter_that_raises_costs_one_case_with_its_traceback() -> None:
    def broken(body: Any, **_: Any) -> Any:
        raise KeyError("choices")

    adapter = dataclasses.replace(get_adapter("openai_responses"), response_from_wire=broken)
    result = run_suite(_scenarios("basic/single_call"), [adapter], RunOptions(cassette_dir=CASSETTES))
    by_mode = {c.mode: c for c in result.cases}
    assert by_mode["non_stream"].status == "error"
    assert "the adapter raised KeyError" in by_mode["non_stream"].message
    assert by_mode["non_stream"].traceback is not None and "def broken" not in by_mode["non_stream"].message
    assert "broken" in by_mode["non_stream"].traceback
    assert by_mode["stream"].status == "pass"  # streaming does not use response_from_wire


def test_an_adapter_that_hangs_costs_one_case_after_the_timeout() -> None:
    release = threading.Event()
    reference = get_adapter("anthropic")

    def hanging(chunks: Any, **kwargs: Any) -> Iterator[Any]:
        release.wait(3600)  # until the test ends
        yield from reference.stream_from_wire(chunks, **kwargs)

    adapter = dataclasses.replace(reference, stream_from_wire=hanging)
    started = time.monotonic()
    try:
        # 2.5 s: the passing cases run under the same timeout, and take up to half a second at a load of 10
        result = run_suite(
            _scenarios("basic/single_call", "basic/text_only_reply"),
            [adapter],
            RunOptions(cassette_dir=CASSETTES, timeout=2.5),
        )
    finally:
        release.set()
    assert time.monotonic() - started < 300  # ended by the timeout, not by the hour-long hang
    statuses = {(c.scenario, c.mode): c.status for c in result.cases}
    assert statuses[("basic/single_call", "stream")] == "error"
    assert statuses[("basic/single_call", "non_stream")] == "pass"
    assert statuses[("basic/text_only_reply", "non_stream")] == "pass"
    hung = next(c for c in result.cases if c.status == "error")
    assert "timed out after 2.5 s" in hung.message and "--timeout" in hung.message


def test_a_scenario_requiring_an_undeclared_capability_is_unsupported() -> None:
    result = run_suite(_scenarios("tool_choice/required"), [get_adapter("ollama")], RunOptions(cassette_dir=CASSETTES))
    assert {c.status for c in result.cases} == {"unsupported"}
    assert "tool_choice_required" in result.cases[0].message


def test_a_scenario_limited_to_other_wires_is_unsupported_with_the_reason_and_runs_on_its_own() -> None:
    scenario = _scenarios("wire_specific/client_tool_search")  # wires: [openai_responses]
    adapters = [get_adapter("qwen"), get_adapter("openai_responses")]
    result = run_suite(scenario, adapters, RunOptions(cassette_dir=CASSETTES))
    by_adapter = {(c.adapter, c.mode): (c.status, c.message) for c in result.cases}
    assert {k: v[0] for k, v in by_adapter.items()} == {
        ("qwen", "non_stream"): "unsupported",
        ("qwen", "stream"): "unsupported",
        ("openai_responses", "non_stream"): "pass",
        ("openai_responses", "stream"): "pass",
    }
    assert "runs only on the openai_responses wire" in by_adapter[("qwen", "stream")][1]
    assert "qwen speaks openai_chat" in by_adapter[("qwen", "stream")][1]


def test_known_gaps_turn_a_failure_into_xfail_and_a_pass_into_stale() -> None:
    reference = get_adapter("openai_responses")

    def no_text(body: Any, **kwargs: Any) -> Any:
        response = reference.response_from_wire(body, **kwargs)
        return dataclasses.replace(response, parts=tuple(p for p in response.parts if p.kind != "text"))

    gaps = {"roundtrip.text": "drops text", "roundtrip.calls@basic/*": "none"}
    adapter = dataclasses.replace(reference, response_from_wire=no_text, known_gaps=gaps)
    result = run_suite(_scenarios("basic/text_only_reply"), [adapter], RunOptions(cassette_dir=CASSETTES))
    by_mode = {c.mode: c for c in result.cases}
    text = {v.check: v for v in by_mode["non_stream"].checks}["roundtrip.text"]
    assert text.status == "xfail" and "drops text" in text.message
    streamed = {v.check: v for v in by_mode["stream"].checks}["roundtrip.text"]
    assert streamed.status == "stale"  # streaming does not use response_from_wire: the declared gap passes


def test_run_command_writes_four_reports_and_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "-k", "get_time", "--report-dir", str(tmp_path), "--cassette-dir", str(CASSETTES)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["junit.xml", "report.html", "report.json", "report.md"]
    assert "16 cases: 16 pass" in out  # basic/get_time x the 8 bundled adapters x 2 modes
    assert re.search(r"^openai_chat +2 +2$", out, re.M)  # a line of counts per adapter (no all-pass matrix row)


def test_a_malformed_scenario_is_reported_and_the_others_still_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "scenarios" / "basic"
    folder.mkdir(parents=True)
    shutil.copyfile(ROOT / "scenarios" / "basic" / "get_time.yaml", folder / "get_time.yaml")
    (folder / "broken.yaml").write_text("schema_version: 1\nbehavior: x\nsource: y\ntools: []\nturns: 3\n", "utf-8")
    code = main(
        ["run", "--scenarios", str(tmp_path / "scenarios"), "--adapters", "gemini", "--report-dir", str(tmp_path / "r")]
    )
    captured = capsys.readouterr()
    assert code == 1
    assert "broken.yaml:5:8" in captured.err and "/turns" in captured.err
    assert "2 cases: 2 pass" in captured.out


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["run", "--adapters", "nope"], "unknown adapter 'nope'"),
        (["run", "--checks", "speed"], "unknown check 'speed'"),
        (["run", "--format", "pdf"], "unknown report format pdf"),
        (["run", "--scenarios", "no/such/*"], "no scenario id matches"),
        (["run", "-k", "a and ("], "not a valid expression"),
    ],
)
def test_usage_errors_exit_2(argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert needle in capsys.readouterr().err


def test_list_shows_scenarios_adapters_with_capabilities_and_check_ids(capsys: pytest.CaptureFixture[str]) -> None:
    from conformance.adapters import BUILTIN
    from conformance.pipeline.selection import CHECK_IDS

    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "basic/get_time:" in out
    for name in BUILTIN:
        assert f"  {name} (wire " in out
    assert "tool_choice_required" in out  # capabilities are listed
    for ids in CHECK_IDS.values():
        assert all(i in out for i in ids)


def test_fail_fast_stops_at_the_first_failing_case() -> None:
    def broken(body: Any, **_: Any) -> Any:
        raise ValueError("boom")

    adapter = dataclasses.replace(get_adapter("anthropic"), response_from_wire=broken)
    scenarios = _scenarios("basic/single_call", "basic/text_only_reply")
    result = run_suite(scenarios, [adapter], RunOptions(cassette_dir=CASSETTES, fail_fast=True))
    assert [(c.scenario, c.mode, c.status) for c in result.cases] == [("basic/single_call", "non_stream", "error")]


def test_checks_selects_the_families_run() -> None:
    options = RunOptions(cassette_dir=CASSETTES, families=("recovery",))
    result = run_suite(_scenarios("errors/rate_limit"), [get_adapter("gemini")], options)
    assert {v.check.split(".")[0] for c in result.cases for v in c.checks} == {"recovery"}
    assert {c.status for c in result.cases} == {"pass"}


def test_check_ids_keep_only_their_verdicts_and_judge_the_case_by_them_alone() -> None:
    """An adapter that drops the text of a reply fails roundtrip.text; chosen alone, roundtrip.calls
    passes the case (the family still runs: its other verdicts are left out)."""
    from conformance.model import Text

    base = get_adapter("anthropic")

    def textless(body: Any, **kwargs: Any) -> Any:
        response = base.response_from_wire(body, **kwargs)
        return dataclasses.replace(response, parts=tuple(p for p in response.parts if not isinstance(p, Text)))

    adapter = dataclasses.replace(base, response_from_wire=textless)
    scenarios = _scenarios("basic/text_before_call")
    whole = run_suite(
        scenarios, [adapter], RunOptions(cassette_dir=CASSETTES, families=("roundtrip",), modes=("non_stream",))
    )
    (case,) = whole.cases
    assert case.status == "fail" and "roundtrip.text" in {v.check for v in case.checks if v.status == "fail"}
    only = RunOptions(
        cassette_dir=CASSETTES, families=("roundtrip",), checks=frozenset({"roundtrip.calls"}), modes=("non_stream",)
    )
    (case,) = run_suite(scenarios, [adapter], only).cases
    assert [(v.check, v.status) for v in case.checks] == [("roundtrip.calls", "pass")]
    assert case.status == "pass"
    # the translation family's mutation watch (translation.no_mutation) is a verdict like the others
    names = RunOptions(cassette_dir=CASSETTES, families=("translation",), checks=frozenset({"translation.tool_names"}))
    assert {v.check for c in run_suite(scenarios, [adapter], names).cases for v in c.checks} == {
        "translation.tool_names"
    }


def test_mcp_pairs_wait_beside_the_others_except_when_exhaustive_makes_them_cpu_bound() -> None:
    from conformance.run.runner import waits_on_mcp

    slow, plain = _scenarios("mcp/slow_tool_timeout", "basic/get_time")
    adapter = get_adapter("gemini")
    assert waits_on_mcp(adapter, slow, RunOptions())
    assert not waits_on_mcp(adapter, plain, RunOptions())
    assert not waits_on_mcp(adapter, slow, RunOptions(exhaustive=True))
    assert not waits_on_mcp(adapter, slow, RunOptions(select=lambda *_: False))  # no case selected
