"""``benchmarks/stream_normalize.py:normalize_folded`` (the folding consumer) gives the calls the
keeping consumer ``normalize`` gives, on the peer bench's generated streams (the opt-in ``bench``
tier: tests/benchmarks/conftest.py). No timing: benchmarks are not timed tests."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _module(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


pytestmark = pytest.mark.bench


@pytest.mark.parametrize("provider", ["openai", "anthropic", "gemini"])
@pytest.mark.parametrize("scenario", ["single", "parallel4"])
def test_folding_consumer_carries_the_bench_calls(peer_bench: ModuleType, provider: str, scenario: str) -> None:
    sn = _module("stream_normalize_for_fold", ROOT / "benchmarks" / "stream_normalize.py")
    case = peer_bench.build_case(provider, scenario, 4096, 0 if provider == "gemini" else 1)
    assert peer_bench.verify(case, sn.normalize_folded(case.data, provider), True) == "ok"
    pieces = [case.data[i : i + 997] for i in range(0, len(case.data), 997)]
    assert peer_bench.verify(case, sn.normalize_folded(iter(pieces), provider), True) == "ok"


@pytest.mark.parametrize("provider", ["openai", "anthropic", "gemini"])
def test_naive_in_our_slot_is_the_bench_naive_parse_as_events(peer_bench: ModuleType, provider: str) -> None:
    # the control timed where ours is: the bench's naive-orjson parse, its calls as the bench's events
    sn = _module("stream_normalize_for_slot", ROOT / "benchmarks" / "stream_normalize.py")
    case = peer_bench.build_case(provider, "parallel4", 4096, 0 if provider == "gemini" else 1)
    events = sn.naive_in_slot(case.data, provider)
    assert peer_bench.verify(case, events, True) == "ok"
    assert [e["arguments"] for e in events if e["type"] == "tool_call_end"] == [
        args for _, _, args in peer_bench.naive_parse(case.data, provider)
    ]
    assert sn.naive_in_slot_after is sn.naive_in_slot
