"""``docs/certified/`` shows the defects that exist in the pinned libraries as FAIL with a finding
naming the field (the committed reports); the opt-in ``libraries`` tier re-certifies them from the
per-library venvs, which CI does not build (about 3 minutes of installs: see the skip reason)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
CERTIFIED = ROOT / "docs" / "certified"
VENVS = ROOT / ".venvs"
BUILD = "python scripts/certify_libraries.py --no-certify"


def report(name: str) -> dict[str, Any]:
    """The committed report of ``name`` (``litellm/gemini-2.5-flash``: a variant's)."""
    data: dict[str, Any] = json.loads((CERTIFIED / name / "report.json").read_text(encoding="utf-8"))
    return data


def failing(data: dict[str, Any], adapter: str, scenario: str, mode: str, check: str) -> list[dict[str, Any]]:
    """The findings of ``check`` in that case, which must have FAILed there."""
    [case] = [c for c in data["cases"] if (c["adapter"], c["scenario"], c["mode"]) == (adapter, scenario, mode)]
    [verdict] = [v for v in case["checks"] if v["check"] == check]
    assert verdict["status"] == "fail", (adapter, scenario, mode, check, verdict)
    findings: list[dict[str, Any]] = verdict["findings"]
    return findings


def test_litellm_drops_is_error_from_anthropic_tool_results() -> None:
    for mode in ("non_stream", "stream"):
        findings = failing(
            report("litellm"), "litellm/anthropic", "tool_results/is_error", mode, "translation.wire_paths"
        )
        assert [(f["path"], f["expected"], f["actual"]) for f in findings] == [
            ("$.messages[2].content[0].is_error", True, None)
        ]


def test_litellm_drops_gemini_function_call_ids_from_the_history_on_a_model_it_deems_old() -> None:
    """On gemini-2.5-flash (served by Google, and accepting echoed ids in recorded traffic) litellm
    drops the ids the provider sent; on the default gemini-3.5-flash it sends them back."""
    findings = failing(
        report("litellm/gemini-2.5-flash"),
        "litellm/gemini",
        "multi_turn/call_id_sent_back",
        "non_stream",
        "client.call_ids",
    )
    paths = {f["path"].split(" ")[0] for f in findings}
    assert paths == {"$.contents[*].parts[*].functionCall.id", "$.contents[*].parts[*].functionResponse.id"}
    [case] = [
        c
        for c in report("litellm")["cases"]
        if (c["adapter"], c["scenario"], c["mode"]) == ("litellm/gemini", "multi_turn/call_id_sent_back", "non_stream")
    ]
    assert {v["check"]: v["status"] for v in case["checks"]}["client.call_ids"] == "pass"


def test_pydantic_ai_streams_from_anthropic_when_a_whole_answer_was_asked_for() -> None:
    findings = failing(
        report("pydantic-ai"), "pydantic-ai/anthropic", "basic/get_time", "non_stream", "client.stream_mode"
    )
    assert {(f["path"], f["expected"], f["actual"]) for f in findings} == {("$.stream", False, True)}


def test_the_index_names_every_library_at_its_pin() -> None:
    index = (CERTIFIED / "README.md").read_text(encoding="utf-8")
    for pin in ("litellm", "1.110.2", "pydantic-ai-slim", "2.68.0", "langchain-openai", "1.7.4", "1.7.10"):
        assert pin in index


@pytest.mark.libraries
@pytest.mark.parametrize("name", ["litellm", "pydantic-ai"])
def test_the_defects_show_again_from_the_pinned_venvs(name: str, tmp_path: Path) -> None:
    python = VENVS / name / "bin" / "python"
    if not python.exists():
        pytest.skip(f"opt-in tier: the per-library venvs are not built ({BUILD}, about 3 minutes)")
    driver = {"litellm": "litellm_driver.py", "pydantic-ai": "pydantic_ai_driver.py"}[name]
    scenarios = ["tool_results/is_error", "multi_turn/call_id_sent_back", "basic/get_time"]
    command = [sys.executable, "-m", "conformance", "certify", "--client", f"examples/clients/{driver}:CLIENT"]
    command += ["--python", str(python), "--report-dir", str(tmp_path), "--format", "json", "--quiet"]
    for scenario in scenarios:
        command += ["--scenarios", scenario]
    subprocess.run(command, cwd=ROOT, check=False, capture_output=True, timeout=600)
    fresh = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    if name == "litellm":
        failing(fresh, "litellm/anthropic", "tool_results/is_error", "non_stream", "translation.wire_paths")
        older = [*command[: command.index("--report-dir")], "--report-dir", str(tmp_path / "older")]
        older += ["--format", "json", "--quiet", "--wires", "gemini", "--model", "gemini-2.5-flash"]
        older += ["--scenarios", "multi_turn/call_id_sent_back"]
        subprocess.run(older, cwd=ROOT, check=False, capture_output=True, timeout=600)
        again = json.loads((tmp_path / "older" / "report.json").read_text(encoding="utf-8"))
        failing(again, "litellm/gemini", "multi_turn/call_id_sent_back", "non_stream", "client.call_ids")
    else:
        failing(fresh, "pydantic-ai/anthropic", "basic/get_time", "non_stream", "client.stream_mode")
