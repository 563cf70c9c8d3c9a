"""``docs/certified/`` shows the defects that exist in the pinned libraries as FAIL with a finding
naming the field (the committed reports); the opt-in ``libraries`` tier re-certifies them from the
per-library venvs, which CI does not build (about 3 minutes of installs: see the skip reason)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
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


def statuses(data: dict[str, Any], adapter: str, scenario: str) -> dict[str, dict[str, str]]:
    """mode -> check -> status of one scenario of ``data``."""
    out: dict[str, dict[str, str]] = {}
    for case in data["cases"]:
        if (case["adapter"], case["scenario"]) == (adapter, scenario):
            out[case["mode"]] = {v["check"]: v["status"] for v in case["checks"]}
    assert out, (adapter, scenario)
    return out


def test_every_fail_in_the_committed_reports_is_explained_with_its_source(script: ModuleType) -> None:
    """A FAIL nobody can point at in the library's source is not a certification: each signature is
    explained in DEFECTS (the library's page shows it with its reason), or the check, the driver or the table
    of equivalences is wrong."""
    missing = [line for lib in script.LIBRARIES for line in script.unexplained(lib)]
    assert not missing, "unexplained FAILs (explain them in scripts/certify_libraries.py DEFECTS):\n" + "\n".join(
        missing
    )
    for lib in script.LIBRARIES:
        for defect in lib.defects:
            assert script.cites_source(defect.reason), (lib.name, defect.signature, "names no source line or doc")


def test_every_explanation_still_explains_a_fail(script: ModuleType) -> None:
    """No stale reason: each DEFECTS entry matches a FAIL of the committed reports."""
    for lib in script.LIBRARIES:
        used = script.used_patterns(lib)
        assert [d.signature for d in lib.defects if d.signature not in used] == [], lib.name


def test_the_known_defects_of_the_pins_are_fails() -> None:
    """The issue's list: each defect of these pinned versions still fails, on the case that shows it."""
    litellm, pydantic_ai, ollama = report("litellm"), report("pydantic-ai"), report("ollama")
    gemini_error = failing(litellm, "litellm/gemini", "tool_results/is_error", "non_stream", "translation.wire_paths")
    assert {f["path"] for f in gemini_error} == {"$.contents[2].parts[0].functionResponse.response.error"}
    overloaded = failing(litellm, "litellm/anthropic", "errors/overloaded", "non_stream", "recovery.provider_error")
    assert [(f["expected"], f["actual"]) for f in overloaded if f["path"] == "$.error.kind"] == [
        ("overloaded", "server")
    ]
    stop = failing(pydantic_ai, "pydantic-ai/gemini", "basic/get_time", "non_stream", "roundtrip.finish_reason")
    assert [(f["expected"], f["actual"]) for f in stop] == [("tool_calls", "stop")]
    ids = failing(ollama, "ollama-python 0.6.3/ollama", "basic/get_time", "non_stream", "client.recorded_request")
    assert {f["path"] for f in ids} == {"$.messages[1].parts[0].id", "$.messages[2].parts[0].call_id"}
    nested = failing(
        ollama,
        "ollama-python 0.6.3/ollama",
        "arguments/nested_objects_arrays",
        "non_stream",
        "translation.tool_definitions",
    )
    assert any(f["path"].endswith(".location.properties") for f in nested)
    retry = failing(ollama, "ollama-python 0.6.3/ollama", "errors/rate_limit", "non_stream", "recovery.provider_error")
    assert [(f["path"], f["expected"], f["actual"]) for f in retry] == [("$.error.retry_after", 2.0, None)]


def test_none_of_the_false_fails_the_issue_names_remains() -> None:
    """is_error on OpenAI Chat (a wire without the flag), pydantic-ai's documented placeholder
    thoughtSignature and its explicit defaults, and the official SDKs' names/* are not FAILs."""
    for name, adapter in (
        ("langchain-openai", "langchain-openai/openai_chat"),
        ("pydantic-ai", "pydantic-ai/openai_chat"),
    ):
        for checks in statuses(report(name), adapter, "tool_results/is_error").values():
            assert checks["translation.wire_paths"] != "fail" and checks["client.recorded_request"] != "fail", name
    signatures = {
        f["signature"]
        for case in report("pydantic-ai")["cases"]
        for v in case["checks"]
        if v["status"] == "fail"
        for f in v["findings"]
        if f.get("kind", "defect") == "defect"
    }
    for harmless in ("thoughtSignature", "include_usage", "responseModalities", "strict"):
        assert not [s for s in signatures if harmless in s], harmless
    for checks in statuses(report("openai"), "openai-python 3.57.0/openai_chat", "names/dotted").values():
        assert "fail" not in checks.values()
        assert checks["translation.tool_names"] == "left"


def test_every_report_names_the_model_asked_for_on_each_wire() -> None:
    for path in sorted(CERTIFIED.rglob("report.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        models = {a["name"]: a.get("model") for a in data["adapters"]}
        assert models and all(models.values()), (path, models)


def test_the_index_names_every_library_at_its_pin(script: ModuleType) -> None:
    index = (CERTIFIED / "README.md").read_text(encoding="utf-8")
    for pin in ("litellm 1.110.2", "pydantic-ai 2.68.0", "langchain-openai 1.7.4", "langchain-anthropic 1.7.10"):
        assert f"**{pin}**" in index
    for lib in script.LIBRARIES:
        assert f"**{lib.name} {script.pinned_version(lib)}**" in index, lib.name


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
