"""``conformance.pipeline.targets``: what an adapter and a client give the pipeline."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.adapters import for_format, get_adapter
from conformance.clients.translator import TranslatorClient
from conformance.errors import UsageError
from conformance.pipeline.plan import Plan
from conformance.pipeline.selection import compile_keyword
from conformance.pipeline.targets import (
    AdapterTarget,
    ClientTarget,
    GatewayTarget,
    ServerTarget,
    client_rerun_words,
    load_client,
)
from conformance.run.shard import parse_shard
from conformance.scenarios.loader import load_scenarios
from conformance.verdicts import CaseResult

SCENARIOS = tuple(s for s in load_scenarios([]).scenarios if s.id.startswith("basic/"))


def test_an_adapter_target_counts_the_cases_the_runner_runs_and_names_itself_in_a_rerun() -> None:
    target = AdapterTarget(adapters=(get_adapter("gemini"), get_adapter("anthropic")), specs={"gemini": "my:GEMINI"})
    plan = Plan(scenarios=SCENARIOS)
    every = sum(len(s.modes) for s in SCENARIOS) * 2
    assert target.case_count(plan) == every
    assert target.case_count(Plan(scenarios=SCENARIOS, select=compile_keyword("gemini and not non_stream"))) == sum(
        "stream" in s.modes for s in SCENARIOS
    )
    halves = [target.case_count(Plan(scenarios=SCENARIOS, shard=parse_shard(f"{k}/2"))) for k in (1, 2)]
    assert sum(halves) == every and all(halves)
    assert target.options(Plan(families=("roundtrip", "server"))).families == ("roundtrip",)  # none on an adapter
    case = CaseResult(adapter="gemini", scenario="basic/get_time", mode="stream", status="fail")
    assert target.rerun_words(case) == ["run", "--adapter", "my:GEMINI"]
    assert target.label == "" and target.noun == "adapters"


def test_a_client_target_has_a_column_per_wire_and_reruns_through_its_driver() -> None:
    client = TranslatorClient(for_format("anthropic"), name="acme")
    target = ClientTarget(client=client, spec="d.py:CLIENT", python="/v/bin/python", wires=("anthropic",))
    assert [c.name for c in target.columns] == ["acme/anthropic"]
    assert target.label == "acme: " and "acme declares the wires anthropic" in target.known
    assert target.case_count(Plan(scenarios=SCENARIOS)) == sum(len(s.modes) for s in SCENARIOS)
    case = CaseResult(adapter="acme/anthropic", scenario="basic/get_time", mode="stream", status="fail")
    assert target.rerun_words(case) == client_rerun_words("d.py:CLIENT", "acme/anthropic", python="/v/bin/python")
    assert target.rerun_words(case) == [
        "certify",
        "--client",
        "d.py:CLIENT",
        "--python",
        "/v/bin/python",
        "--wires",
        "anthropic",
    ]
    target.close()  # an in-process client holds nothing


def test_a_client_that_cannot_be_loaded_is_a_usage_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"--client no_such_module_x:CLIENT: .* \(is it on PYTHONPATH\?\)"):
        load_client("no_such_module_x:CLIENT")
    broken = tmp_path / "broken_driver.py"
    broken.write_text("raise RuntimeError('boom')\n", encoding="utf-8")
    with pytest.raises(UsageError, match="importing it failed: RuntimeError: boom"):
        load_client(f"{broken}:CLIENT")


def test_a_server_target_counts_the_cases_it_runs_and_reruns_naming_the_server() -> None:
    from conformance.emulator import Emulator
    from conformance.servers.server import ServerOptions, server_scenarios

    with Emulator() as emulator:
        emulator.play_scenarios(server_scenarios(SCENARIOS))
        options = ServerOptions(base_url=emulator.base_url, wires=("openai_chat", "ollama"), name="ctl")
        target = ServerTarget(options=options, words=("--server", emulator.base_url, "--name", "ctl"))
        plan = Plan(scenarios=SCENARIOS, select=compile_keyword("get_time or body_not_json"), timeout=60.0)
        cases: list[CaseResult] = []
        result = target.run(plan, cases.append)
    assert target.case_count(plan) == len(result.cases) == len(cases) > 0
    assert {c.adapter for c in result.cases} == {"ctl/openai_chat", "ctl/ollama"} == {c.name for c in target.columns}
    assert {c.status for c in result.cases} == {"pass"}
    assert target.partial(plan, cases[:1]).cases == tuple(cases[:1])
    assert target.rerun_words(cases[0])[:3] == ["certify", "--server", emulator.base_url]
    assert target.rerun_words(cases[0])[-2:] == ["--wires", cases[0].adapter.rpartition("/")[2]]
    assert target.label == "ctl: " and target.noun == "wires"


def test_a_gateway_target_has_a_column_per_upstream_and_counts_as_its_harness_runs() -> None:
    from conformance.servers.gateway import GatewayOptions

    options = GatewayOptions(
        base_url="http://127.0.0.1:9", wire="openai_chat", upstreams=("anthropic", "gemini"), upstream_port=9, name="gw"
    )
    target = GatewayTarget(options=options, words=("--gateway", "http://127.0.0.1:9", "--wire", "openai_chat"))
    assert [c.name for c in target.columns] == ["gw@openai_chat/anthropic", "gw@openai_chat/gemini"]
    plan = Plan(scenarios=SCENARIOS)
    every = sum(len(s.modes) for s in SCENARIOS if not s.wires or "anthropic" in s.wires)
    assert target.case_count(Plan(scenarios=SCENARIOS, select=compile_keyword("anthropic"))) <= every
    assert target.case_count(plan) > 0
    case = CaseResult(adapter="gw@openai_chat/gemini", scenario="basic/get_time", mode="stream", status="fail")
    assert target.rerun_words(case)[-2:] == ["--upstream", "gemini"]
