"""``benchmarks/pipeline_walk.py``: the walk of one tiny ``conformance run`` through the package
(issue 29, "One pipeline"). Counts, not times: the pipeline, not the command line, is what the runner
calls back, and the command line is entered once, at the top."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]


def _walk_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "benchmarks_pipeline_walk", REPO_ROOT / "benchmarks" / "pipeline_walk.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_runner_calls_the_pipeline_back_never_the_command_line(tmp_path: Path) -> None:
    if sys.gettrace() is not None:  # coverage or a debugger owns the tracer: the walk would replace it
        pytest.skip("another tracer is installed")
    walk = _walk_module()
    traced, code = walk.walk([*walk.TINY_RUN, "--jobs", "1", "--report-dir", str(tmp_path)])
    assert code == 0
    assert (tmp_path / "report.json").is_file()
    assert traced.climbs_into_cli == 0, traced.climbs
    assert ("conformance.run.runner", "conformance.pipeline.run") in traced.climbs  # the progress: Finished
    assert {"conformance.cli.run", "conformance.pipeline.run", "conformance.pipeline.targets"} <= set(traced.rooms)
    assert traced.rooms[0] == "conformance.cli.run"
