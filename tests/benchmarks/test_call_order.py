"""``benchmarks/call_order.py`` builds the stream it says in each order (no timing is asserted:
benchmarks are not timed tests)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from conformance.adapters import openai_chat
from conformance.assembly import fold

ROOT = Path(__file__).resolve().parents[2]


def _module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("call_order", ROOT / "benchmarks" / "call_order.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_order_carries_the_same_arguments_in_its_calls() -> None:
    module = _module()
    texts = {}
    for order in module.ORDERS:
        response = fold(list(openai_chat.stream_from_wire([module.stream(order, 3, 4)])))
        calls = [p for p in response.parts if hasattr(p, "arguments")]
        assert all(c.arguments is not None and set(c.arguments) == {"t"} for c in calls), order
        texts[order] = sorted(c.arguments["t"] for c in calls)
        assert len(calls) == (1 if order == "single" else 3)
        assert response.finish_reason == "tool_calls"
    # the same fragments, whatever the order: the total argument text is the same length
    assert len({sum(len(t) for t in v) for k, v in texts.items() if k != "single"}) == 1


def test_measure_reports_each_order_against_single() -> None:
    result = _module().measure(calls=2, total_kb=2, rounds=1)
    assert [r["order"] for r in result["rows"]] == ["single", "one after another", "round robin"]
    assert result["rows"][0]["fast_vs_single"] == 1.0
    assert all(r["fast_s"] > 0 and r["general_s"] > 0 for r in result["rows"])
