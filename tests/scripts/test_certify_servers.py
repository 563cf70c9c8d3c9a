"""``scripts/certify_servers.py`` (issue 29, point 3): the control passes every case, the committed
certifications in docs/certified/servers are the script's own output, and the index says what they hold.

The control is run here in full (the emulator playing every scenario a server is asked, on all five
wires, about 20 s): the issue's "the emulator as a server passes every case". The real servers' runs
are the ``live_local`` tier's (llama.cpp) and the ``gateway`` tier's (LiteLLM's proxy); here their
committed reports are read: each is well formed, names what was certified, and the index is rendered
from them exactly.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests._scripts import load_script

REPO = Path(__file__).resolve().parents[2]
COMMITTED = REPO / "docs" / "certified" / "servers"


def _script() -> ModuleType:
    return load_script("certify_servers")


def _report(folder: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    return data


@pytest.fixture(scope="module")
def control(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    script = _script()
    out = tmp_path_factory.mktemp("servers")
    target = next(t for t in script.TARGETS if t.name == "emulator")
    assert script.certify_target(target, out) == 0
    return _report(out / "emulator")


def test_the_emulator_as_a_server_passes_every_case_on_all_five_wires(control: dict[str, Any]) -> None:
    statuses = {case["status"] for case in control["cases"]}
    assert statuses <= {"pass", "unsupported"}, [
        c for c in control["cases"] if c["status"] not in ("pass", "unsupported")
    ]
    assert {case["adapter"] for case in control["cases"]} == {f"emulator/{w}" for w in _script().FIVE_WIRES}
    assert [d["signature"] for d in control["defects"] if d["kind"] != "note"] == [] and control["deviations"] == []
    # an UNSUPPORTED case is one the wire cannot carry (the reference adapter's capabilities), or a probe
    # the wire documents no error for: never a case the server failed
    for case in control["cases"]:
        if case["status"] == "unsupported":
            messages = " ".join(v.get("message", "") for v in case["checks"]) + case.get("message", "")
            said = ("documents no error", "does not carry", "runs only on")
            assert any(words in messages for words in said), case


def test_the_committed_control_is_this_run(control: dict[str, Any]) -> None:
    committed = _report(COMMITTED / "emulator")

    def statuses(report: dict[str, Any]) -> dict[tuple[str, str, str], str]:
        return {(c["adapter"], c["scenario"], c["mode"]): c["status"] for c in report["cases"]}

    assert statuses(committed) == statuses(control)
    assert committed["suite"]["fingerprint"] == control["suite"]["fingerprint"]


@pytest.mark.parametrize(
    "target", ["llama.cpp-content", "llama.cpp-structured", "litellm-proxy", "litellm-proxy-messages"]
)
def test_each_committed_certification_names_what_was_certified(target: str) -> None:
    report = _report(COMMITTED / target)
    note = report["selection"]["note"] or ""
    if target.startswith("llama"):
        script = _script()
        assert "server_binary_sha256" in note and "model_sha256" in note and "server_flags" in note
        assert {c["adapter"] for c in report["cases"]} == {f"llama.cpp/{w}" for w in script.LLAMA_WIRES}
    else:
        assert "LiteLLM proxy 1.110.2" in note and "gateway_routes" in note
    assert not any(c["status"] == "error" for c in report["cases"]), "a committed certification has no erring case"
    assert _script().KEY not in json.dumps(report)


def test_the_index_is_rendered_from_the_committed_reports() -> None:
    assert (COMMITTED / "README.md").read_text(encoding="utf-8") == _script().index_page(COMMITTED)
