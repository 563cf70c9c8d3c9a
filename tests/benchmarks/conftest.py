"""The ``bench`` tier: tests that run the peer bench, ``../shared/bench/peer_stream_bench.py``, which is
shared with other projects and stays beside the repository, not in it (benchmarks/README.md).

The tier is opt-in (``python -m pytest -m bench``): without ``-m bench`` its tests skip saying so; with it,
a missing bench fails. Its tests are marked ``bench`` and take the ``peer_bench`` fixture.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[2].parent / "shared" / "bench" / "peer_stream_bench.py"
BENCH_TIER = "peer bench tier: run it with `python -m pytest -m bench` (needs ../shared/bench beside the repo)"


@pytest.fixture(scope="session")
def peer_bench(request: pytest.FixtureRequest) -> ModuleType:
    """The peer bench as a module, loaded only when ``-m`` names the ``bench`` tier (an ``-m`` that
    excludes it has deselected the test before it gets here)."""
    if "bench" not in (request.config.getoption("markexpr", "") or ""):
        pytest.skip(BENCH_TIER)
    if not BENCH.is_file():
        pytest.fail(f"-m bench needs the peer bench at {BENCH}: put the shared bench folder beside the repository")
    spec = importlib.util.spec_from_file_location("peer_stream_bench", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["peer_stream_bench"] = module  # its dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module
