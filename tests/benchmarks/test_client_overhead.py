"""``benchmarks/client_overhead.py`` measures what it says, on a few scenarios (no timing is
asserted: benchmarks are not timed tests). Per case: overhead + client time = wall, every part is
non-negative, and the breakdown adds up to the overhead."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

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


# ---- --protocol: the client protocol against the in-process path (issue 30) ------------------------


@pytest.fixture(scope="module")
def protocol_figures(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    if importlib.util.find_spec("openai") is None:
        pytest.skip("the minimal driver (examples/clients/minimal_openai_driver.py) needs openai")
    out = tmp_path_factory.mktemp("protocol") / "protocol.json"
    code = _module().main(
        ["--protocol", "--rounds", "1", "--scenarios", "basic/get_time", "--micro-batch", "3", "--json", str(out)]
    )
    assert code == 0
    data: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return data


def test_protocol_variants_certify_the_same_driver_side_by_side(protocol_figures: dict[str, Any]) -> None:
    rows = {r["variant"]: r for r in protocol_figures["rows"]}
    assert {"in-process", "python", "command-python"} <= set(rows)
    assert set(rows) | set(protocol_figures["skipped"]) == set(_module().VARIANTS)
    base = rows["in-process"]
    assert base["ratio_median"] == 1.0 and base["ratio_total"] == 1.0 and base["extra_median_ms"] == 0.0
    for name in ("python", "command-python"):  # the same driver on the protocol: the same verdicts
        row = rows[name]
        assert row["cases"] == base["cases"] > 0 and row["statuses"] == base["statuses"]
        assert row["same_statuses"] is True
        assert row["ratio_median"] > 0 and row["start_seconds"] > 0 and row["certify_wall_median_s"] > 0
    for variant, why in protocol_figures["skipped"].items():
        assert variant == "command-node" and why  # only the Node driver may be missing, and it says why
    cases = protocol_figures["cases"]
    assert {c["scenario"] for c in cases} == {"basic/get_time"}
    assert all(c["status"] != "unsupported" and c["seconds"] > 0 for c in cases)


def test_protocol_alone_covers_every_message_a_driver_writes(protocol_figures: dict[str, Any]) -> None:
    micro = {m["message"]: m for m in protocol_figures["micro"]}
    events = {"text_delta", "tool_call_start", "tool_call_chunk", "tool_call_end", "finish", "usage"}
    assert {f"event {e}" for e in events} | {"response (text + tool call)", "end", "error (typed)"} <= set(micro)
    for name, m in micro.items():
        assert m["bytes"] > 0 and m["check_us"] > 0, name
        if m["parse_and_take_us"] is not None:
            assert m["parse_line_us"] > 0 and m["parse_and_take_us"] > 0
        else:
            assert m["write_us"] > 0 and m["read_call_us"] > 0


def test_sample_messages_fit_the_protocol() -> None:
    """What the micro-benchmark times is what a driver writes: each message passes the schema and
    reads back (``TurnReader``) as the values it was made of."""
    from conformance.clients.protocol import TurnReader, check, parse_line

    for label, message in _module()._sample_messages():
        assert check(message) is None, label
        line = json.dumps(message).encode()
        reader = TurnReader("1")
        result = reader.take(parse_line(line), len(line) + 1)
        assert (result is None) == (message["type"] == "event"), label


def test_find_node_refuses_an_old_node(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Node older than 22 is no runtime for the drivers (docs/protocol.md): named, not used."""
    fake = tmp_path / "node"
    fake.write_text("#!/bin/sh\necho v20.11.1\n", encoding="utf-8")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(_module(), "NODE_CACHE", tmp_path / "absent" / "node")
    node, why = _module().find_node()
    assert node is None and "v20.11.1" in why and ">= 22" in why
