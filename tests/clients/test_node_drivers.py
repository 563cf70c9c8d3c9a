"""The JavaScript tier (``pytest -m javascript``): the Node drivers of ``examples/clients/node``
certified over the client protocol (docs/protocol.md) on Node >= 22 with the packages
``package-lock.json`` pins (``python scripts/node_runtime.py install``).

- Self-consistency across languages: ``minimal_fetch.mjs`` is ``minimal_openai_driver.py``'s logic
  over plain ``fetch``; certified through the protocol it gets, case by case, the verdict and the
  failing checks the Python driver gets in-process.
- Each JavaScript library certifies again as its committed report in ``docs/certified/`` says, case by
  case: the reports are what the pinned packages do.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests._scripts import load_script

pytestmark = pytest.mark.javascript

ROOT = Path(__file__).resolve().parents[2]
NODE_DRIVERS = ROOT / "examples" / "clients" / "node"
CERTIFIED = ROOT / "docs" / "certified"
INSTALL = "python scripts/node_runtime.py install"


SCRIPT = load_script("certify_libraries")
JAVASCRIPT = [lib for lib in SCRIPT.LIBRARIES if lib.language == "javascript"]


@pytest.fixture(scope="module")
def node_env() -> dict[str, str]:
    """The environment with a Node >= 22 first on PATH, the packages installed (or the tier skips, saying why)."""
    done = subprocess.run(
        [sys.executable, "scripts/node_runtime.py", "path"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    if done.returncode != 0 or not lines:
        why = (done.stderr.strip().splitlines() or ["no reason given"])[-1]
        pytest.skip(f"no Node >= 22 ({INSTALL}): {why}")
    if not (NODE_DRIVERS / "node_modules").is_dir():
        pytest.skip(f"the drivers' packages are not installed ({INSTALL})")
    return {**os.environ, "PATH": os.pathsep.join([str(Path(lines[-1]).parent), os.environ.get("PATH", "")])}


def certify(target: list[str], folder: Path, env: dict[str, str] | None = None) -> dict[str, Any]:
    """``conformance certify`` of ``target`` over every scenario: its report."""
    command = [sys.executable, "-m", "conformance", "certify", *target, "--report-dir", str(folder)]
    command += ["--format", "json", "--quiet"]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode in (0, 1), done.stderr[-3000:]
    report: dict[str, Any] = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    return report


def outcomes(report: dict[str, Any], *, by_wire: bool = False) -> dict[tuple[str, str, str], tuple[str, list[str]]]:
    """(column, scenario, mode) -> (status, the checks that failed) of every case (the column by its
    wire alone with ``by_wire``: two clients of one wire compared)."""
    out = {}
    for case in report["cases"]:
        column = str(case["adapter"]).rpartition("/")[2] if by_wire else case["adapter"]
        failed = sorted(v["check"] for v in case["checks"] if v["status"] == "fail")
        out[(column, case["scenario"], case["mode"])] = (case["status"], failed)
    return out


def test_the_minimal_fetch_driver_gets_the_python_drivers_verdicts(node_env: dict[str, str], tmp_path: Path) -> None:
    python = certify(["--client", "examples/clients/minimal_openai_driver.py:CLIENT"], tmp_path / "python")
    node = certify(["--command", "node examples/clients/node/minimal_fetch.mjs"], tmp_path / "node", node_env)
    theirs, ours = outcomes(python, by_wire=True), outcomes(node, by_wire=True)
    assert len(ours) == len(theirs) > 200
    assert {k: v for k, v in ours.items() if theirs.get(k) != v} == {}


@pytest.mark.parametrize("name", [lib.name for lib in JAVASCRIPT])
def test_each_javascript_library_certifies_as_committed(name: str, node_env: dict[str, str], tmp_path: Path) -> None:
    [lib] = [lib for lib in JAVASCRIPT if lib.name == name]
    committed = json.loads((CERTIFIED / name / "report.json").read_text(encoding="utf-8"))
    fresh = certify(["--command", f"node examples/clients/{lib.driver}"], tmp_path, node_env)
    before, now = outcomes(committed), outcomes(fresh)
    assert set(now) == set(before)
    assert {k: (before[k], v) for k, v in now.items() if before[k] != v} == {}
