"""``benchmarks/suite_speed.py`` measures what it says (no timing is asserted: benchmarks are not
timed tests). Loading compares the same files: both sides read every bundled cassette."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

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
