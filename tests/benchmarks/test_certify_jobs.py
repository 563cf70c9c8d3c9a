"""``benchmarks/certify_jobs.py`` runs both job counts on a tiny selection and reports what it says
(no timing is asserted: benchmarks are not timed tests)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(importlib.util.find_spec("openai") is None, reason="the openai driver needs openai")


def _module() -> ModuleType:
    name = "benchmarks_certify_jobs"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / "certify_jobs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_both_job_counts_run_the_same_cases_and_the_ratio_is_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "figures.json"
    assert _module().main(["--rounds", "1", "--scenarios", "basic/get_time", "--json", str(out)]) == 0
    figures = json.loads(out.read_text(encoding="utf-8"))
    assert figures["cases"] > 0 and figures["same_verdicts"] is True
    assert set(figures["seconds"]) == {"1", "2"} and all(len(v) == 1 for v in figures["seconds"].values())
    assert figures["speedup"] > 0 and isinstance(figures["target_met"], bool) and figures["target"] == 1.7
    printed = capsys.readouterr().out
    assert "--jobs 1" in printed and "--jobs 2" in printed and "speedup" in printed
