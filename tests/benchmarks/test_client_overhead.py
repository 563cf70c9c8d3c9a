"""``benchmarks/client_overhead.py`` measures what it says, on a few scenarios (no timing is
asserted: benchmarks are not timed tests). Per case: overhead + client time = wall, every part is
non-negative, and the breakdown adds up to the overhead."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = "basic/get_time,multi_turn/two_rounds,streaming/parallel_calls_stream"


def _module() -> ModuleType:
    name = "benchmarks_client_overhead"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / "client_overhead.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def figures(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    out = tmp_path_factory.mktemp("overhead") / "overhead.json"
    clients = "openai_chat,anthropic" + (",openai-sdk" if importlib.util.find_spec("openai") else "")
    code = _module().main(
        ["--rounds", "1", "--scenarios", SCENARIOS, "--clients", clients, "--extra-tools", "8", "--json", str(out)]
    )
    assert code == 0
    data: dict[str, object] = json.loads(out.read_text(encoding="utf-8"))
    return data


def test_rows_cover_each_client_and_workload(figures: dict[str, object]) -> None:
    rows = figures["rows"]
    assert isinstance(rows, list)
    pairs = {(r["client"], r["workload"]) for r in rows}
    expected = {"openai_chat", "anthropic"} | ({"openai-sdk"} if importlib.util.find_spec("openai") else set())
    assert {c for c, _ in pairs} == expected
    assert {w for _, w in pairs} == {"bundled", "synthetic+8tools"}
    for row in rows:
        scenarios = {c["scenario"] for c in row["case_figures"]}
        assert scenarios <= set(SCENARIOS.split(","))
        assert row["cases"] == len(row["case_figures"]) > 0
        assert row["overhead_median_ms"] > 0 and row["overhead_p90_ms"] >= row["overhead_median_ms"]
        assert row["client_median_ms"] > 0 and row["ratio_total"] > 0
        assert isinstance(row["target_met"], bool)


def test_each_case_adds_up(figures: dict[str, object]) -> None:
    rows = figures["rows"]
    assert isinstance(rows, list)
    for row in rows:
        for case in row["case_figures"]:
            assert case["status"] in ("pass", "fail", "xfail", "error", "stale")
            assert case["wall"] > 0 and case["client"] > 0 and case["overhead"] > 0
            assert case["serving"] > 0 and case["checks"] > 0 and case["bookkeeping"] >= 0
            assert case["overhead"] + case["client"] == pytest.approx(case["wall"], rel=1e-9, abs=1e-12)
            parts = case["serving"] + case["bookkeeping"] + case["tools"] + case["checks"]
            assert parts == pytest.approx(case["overhead"], rel=1e-9, abs=1e-12)


def test_timing_of_one_round_matches_its_own_definitions() -> None:
    module = _module()
    timing = module.CaseTiming(
        client="c",
        workload="w",
        scenario="s",
        mode="non_stream",
        status="pass",
        wall=0.050,
        inside_complete=0.030,
        serving=0.002,
        tools=0.001,
        converse=0.040,
        checks=0.010,
    )
    assert timing.client_time == pytest.approx(0.028)
    assert timing.overhead == pytest.approx(0.022)
    assert timing.bookkeeping == pytest.approx(0.009)
    assert timing.serving + timing.bookkeeping + timing.tools + timing.checks == pytest.approx(timing.overhead)


def test_synthetic_workload_keeps_the_bundled_tools_first() -> None:
    from conformance.scenarios.loader import load_scenarios

    scenario = next(s for s in load_scenarios([]).scenarios if s.id == "basic/get_time")
    longer = _module().with_extra_tools(scenario, 5)
    assert longer.id == scenario.id
    assert longer.tools[: len(scenario.tools)] == scenario.tools
    assert len(longer.tools) == len(scenario.tools) + 5
