"""Issue 29 against the real llama.cpp server: ``conformance certify --server`` end to end, in both
chat-template modes, on the three wires it serves, as ``scripts/certify_servers.py`` makes the
committed certifications in ``docs/certified/servers/`` (the tier runs the same script into a scratch
folder and compares).

What must hold: the script certifies both modes (no target that could not start, no case that
erred: every case is a verdict), each report states the server's build, flags and model with their
sha256 as the cache has them, the made-up key never reaches a report, the server's defects are apart
from the model's deviations, and the run reproduces the committed certification: the same defects
(by signature) and the same deviations, so what docs/certified/servers says is what this build does.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests import _scripts
from tests.live_local._live import REPO, load_script

MODES = ("content", "structured")
COMMITTED = REPO / "docs" / "certified" / "servers"


def _servers_script() -> ModuleType:
    return _scripts.load_script("certify_servers")


@pytest.fixture(scope="session")
def certified(scratch: Path) -> tuple[subprocess.CompletedProcess[str], Path]:
    script = load_script()
    absent = script.missing(script.Cache.default())
    if absent:
        pytest.skip("live_local: " + "; ".join(f"{path} is missing (make it with `{cmd}`)" for path, cmd in absent))
    out = scratch / "servers"
    argv = [sys.executable, str(REPO / "scripts" / "certify_servers.py"), "--out", str(out)]
    argv += [word for mode in MODES for word in ("--only", f"llama.cpp-{mode}")]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=3 * 3600, cwd=REPO, check=False)
    return done, out


def _report(folder: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    return data


def test_both_modes_are_certified_and_every_case_is_a_verdict(
    certified: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    done, out = certified
    assert done.returncode == 0, done.stdout + done.stderr
    servers = _servers_script()
    for mode in MODES:
        report = _report(out / f"llama.cpp-{mode}")
        columns = {case["adapter"] for case in report["cases"]}
        assert columns == {f"llama.cpp/{wire}" for wire in servers.LLAMA_WIRES}
        errored = [
            f"{c['adapter']}::{c['scenario']}::{c['mode']}: {c['message']}"
            for c in report["cases"]
            if c["status"] == "error"
        ]
        assert errored == []
        scenarios = {case["scenario"] for case in report["cases"]}
        assert set(servers.LLAMA_SCENARIOS) <= scenarios
        assert {"server/invalid/body_not_json", "server/invalid/unknown_tool_choice"} <= scenarios


def test_each_report_states_the_build_flags_and_model_with_their_sha256(
    certified: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    _, out = certified
    script = load_script()
    cache = script.Cache.default()
    facts = json.loads(cache.build_facts.read_text(encoding="utf-8"))
    for mode in MODES:
        note = _report(out / f"llama.cpp-{mode}")["selection"]["note"]
        assert facts["binary_sha256"] in note
        assert script.MODEL.sha256 in note and script.SOURCE.sha256 in note
        assert f"server_mode: {mode}" in note and "--seed 42" in note


def test_the_key_never_reaches_a_report(certified: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    done, out = certified
    key = _servers_script().KEY
    assert key not in done.stdout + done.stderr
    assert [p.name for p in out.rglob("*") if p.is_file() and key.encode() in p.read_bytes()] == []


def test_defects_are_apart_from_the_models_deviations(certified: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    _, out = certified
    for mode in MODES:
        report = _report(out / f"llama.cpp-{mode}")
        deviated = {(d["adapter"], d["scenario"], d["mode"]) for d in report["deviations"]}
        assert deviated == {
            (c["adapter"], c["scenario"], c["mode"]) for c in report["cases"] if c["status"] == "deviated"
        } | {
            (c["adapter"], c["scenario"], c["mode"])
            for c in report["cases"]
            if any(v["check"] == "server.model" and v["status"] == "deviated" for v in c["checks"])
        }
        assert all(d["check"] != "server.model" for d in report["defects"])


def test_the_run_reproduces_the_committed_certification(
    certified: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    _, out = certified
    for mode in MODES:
        committed = COMMITTED / f"llama.cpp-{mode}" / "report.json"
        if not committed.is_file():
            pytest.fail(f"{committed} is missing: run `python scripts/certify_servers.py --only llama.cpp-{mode}`")
        before, now = _report(committed.parent), _report(out / f"llama.cpp-{mode}")
        assert sorted(d["signature"] for d in now["defects"]) == sorted(d["signature"] for d in before["defects"])
        statuses = {(c["adapter"], c["scenario"], c["mode"]): c["status"] for c in now["cases"]}
        assert statuses == {(c["adapter"], c["scenario"], c["mode"]): c["status"] for c in before["cases"]}
