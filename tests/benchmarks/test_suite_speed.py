"""``benchmarks/suite_speed.py`` measures what it says (no timing is asserted: benchmarks are not
timed tests). Loading compares the same files: both sides read every bundled cassette."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("suite_speed", ROOT / "benchmarks" / "suite_speed.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_loading_measures_every_bundled_cassette() -> None:
    result = _module().measure_loading(1)
    assert result["files"] == len(list((ROOT / "cassettes").rglob("*.yaml")))
    assert result["ours_s"] > 0 and result["vcrpy_s"] > 0


def test_help_measurement_runs_the_console() -> None:
    result = _module().measure_help(1)
    assert result["help_s"] > 0 and result["python_s"] > 0


def _in_git_checkout() -> bool:
    done = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, check=False)
    return shutil.which("git") is not None and done.returncode == 0


@pytest.mark.skipif(not _in_git_checkout(), reason="needs the git checkout (a worktree of HEAD)")
def test_run_against_a_baseline_worktree_compares_results_and_removes_the_worktree() -> None:
    module = _module()
    with module.worktree("HEAD") as tree:
        assert (tree / "conformance" / "cli" / "__init__.py").is_file()
        result = module.measure_run(1, baseline=tree, args=("--scenarios", "basic/get_time", "--adapters", "gemini"))
        startup = module.measure_startup(1, baseline=tree)
    assert not tree.exists()
    assert result["same_results"] is True and result["ratio"] > 0
    assert "2 cases: 2 pass" in result["current"]["summary"]
    assert startup["current_s"] > 0 and startup["baseline_s"] > 0


def test_scenario_ids_are_the_bundled_scenarios() -> None:
    from conformance.scenarios import bundled
    from conformance.scenarios.loader import load_scenarios

    loaded = load_scenarios([bundled.scenarios_dir()])
    assert _module().scenario_ids(ROOT) == sorted(s.id for s in loaded.scenarios)


def test_results_are_compared_on_the_cases_both_trees_ran() -> None:
    compare = _module().compare
    before = [("gemini", "basic/a", "stream", "pass", (("c", "pass"),))]
    grown = [*before, ("gemini", "basic/new", "stream", "fail", ())]
    assert compare(before, grown) == {
        "common_cases": 1,
        "only_current": 1,
        "only_baseline": 0,
        "same_statuses": True,
        "same_results": True,
    }
    more_checks = [("gemini", "basic/a", "stream", "pass", (("c", "pass"), ("d", "pass")))]
    assert compare(before, more_checks)["same_statuses"] is True
    assert compare(before, more_checks)["same_results"] is False
    worse = [("gemini", "basic/a", "stream", "fail", (("c", "fail"),))]
    assert compare(before, worse)["same_statuses"] is False
    assert compare(before, [])["same_results"] is False  # a case the baseline ran is missing here
