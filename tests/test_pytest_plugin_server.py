"""The pytest plugin's ``server=`` (``@pytest.mark.conformance(server=URL, wires=[...])``): a model
server certified as pytest items, in inner sessions with ``pytester`` against the emulator playing
the scenarios (the control) and against the emulator playing nothing (the model deviates)."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import pytest

from conformance import pytest_plugin
from conformance.emulator import Emulator
from conformance.scenarios.loader import load_scenarios
from conformance.servers import server_scenarios
from conformance.servers.invalid import PROBES, probe_id

pytest_plugins = ["pytester"]

INSTALLED = bool(metadata.entry_points(group="pytest11", name="conformance"))


def run(pytester: pytest.Pytester, body: str, *args: str) -> pytest.RunResult:
    pytester.makepyfile(test_inner_server_marker=textwrap.dedent(body))
    quiet = ("-W", "ignore::pytest.PytestAssertRewriteWarning")
    return pytester.runpytest("-p", "no:cacheprovider", *quiet, *args, plugins=[] if INSTALLED else [pytest_plugin])


@pytest.fixture
def control() -> Iterator[Emulator]:
    with Emulator() as emulator:
        emulator.play_scenarios(server_scenarios(load_scenarios().scenarios))
        yield emulator


def test_one_item_per_wire_scenario_and_mode_and_per_probe(pytester: pytest.Pytester, control: Emulator) -> None:
    body = f"""
    import pytest

    @pytest.mark.conformance(server="{control.base_url}", wires=["openai_chat", "ollama"],
                             scenarios=["basic/single_call", "server/invalid/*"])
    def test_server(conformance_case):
        conformance_case.check()
    """
    result = run(pytester, body, "--collect-only", "-q")
    ids = {line.split("[", 1)[1].rstrip("]") for line in result.outlines if "::test_server[" in line}
    wires = ("openai_chat", "ollama")
    assert ids == {
        *(f"{wire}-basic/single_call-{mode}" for wire in wires for mode in ("non_stream", "stream")),
        *(f"{wire}-{probe_id(probe)}-non_stream" for wire in wires for probe in PROBES),
    }


def test_the_control_passes_and_the_report_names_the_server(
    pytester: pytest.Pytester, control: Emulator, tmp_path: Path
) -> None:
    body = f"""
    import pytest

    @pytest.mark.conformance(server="{control.base_url}", wires=["anthropic"],
                             scenarios=["basic/single_call", "server/invalid/*"], name="emu")
    def test_server(conformance_case):
        conformance_case.check()
    """
    result = run(pytester, body, f"--conformance-report-dir={tmp_path}")
    result.assert_outcomes(passed=6)
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert {a["name"] for a in report["adapters"]} == {"emu/anthropic"}
    assert control.base_url in json.dumps(report["provenance"])
    assert "server/invalid/body_not_json" in {s["id"] for s in report["scenarios"]}


def test_a_deviated_case_skips_saying_what_the_model_did(pytester: pytest.Pytester) -> None:
    with Emulator() as emulator:  # plays nothing: a text reply where the scenario expects a call
        body = f"""
        import pytest

        @pytest.mark.conformance(server="{emulator.base_url}", wires=["openai_chat"], scenarios=["basic/single_call"])
        def test_server(conformance_case):
            conformance_case.check()
        """
        result = run(pytester, body, "-rs")
    result.assert_outcomes(skipped=2)
    assert "model deviated" in result.stdout.str() and "answered in text" in result.stdout.str()


def test_a_wrong_marker_is_a_usage_error(pytester: pytest.Pytester) -> None:
    body = """
    import pytest

    @pytest.mark.conformance(server="http://127.0.0.1:9", wires=["qwen"])
    def test_server(conformance_case):
        conformance_case.check()
    """
    result = run(pytester, body)
    assert "a server is certified on" in result.stdout.str() and "not qwen" in result.stdout.str()
