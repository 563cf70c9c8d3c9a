"""Does the order of parallel calls change what a streamed event costs us?

OpenAI streams parallel tool calls one after another (every fragment of call 0, then call 1 ...);
the shared peer bench (``stream_normalize.py``) interleaves them round robin. This script builds
the same OpenAI Chat stream in three orders (``single``: the fragments of all calls as one call;
``one after another``; ``round robin``) and times ``openai_chat.stream_from_wire`` on each, rounds
interleaved in one process, CPU time, median; it reports each order's cost over ``single``'s (the
same bytes of arguments and the same number of events), and the same with the fast path off
(``runs=None``, the general path alone) as a reference. Ratios only: the machine is
shared and noisy.

    python benchmarks/call_order.py                    # 4 calls, 100 KB of arguments in all
    python benchmarks/call_order.py --calls 8 --kb 400 --json out.json
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["ORDERS", "main", "measure", "stream"]

_ENVELOPE = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4.1"}
_PIECES = ("ab", "cd ", "ef gh", "é", '\\"', "12", ", ", "中文")

ORDERS: dict[str, Callable[[int, int], list[tuple[int, int]]]] = {
    "single": lambda calls, n: [(j, 0) for j in range(calls * n)],
    "one after another": lambda calls, n: [(j, i) for i in range(calls) for j in range(n)],
    "round robin": lambda calls, n: [(j, i) for j in range(n) for i in range(calls)],
}
"""(fragment number, call index) in stream order."""


def _chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    body = {**_ENVELOPE, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}
    return b"data: " + json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode() + b"\n\n"


def stream(order: str, calls: int, total_kb: int, seed: int = 1) -> bytes:
    """An OpenAI Chat stream of ``calls`` calls (one for ``single``) in ``order``, about ``total_kb``
    KB of argument text in all, one pseudo-token per fragment."""
    rng = random.Random(seed)
    n = max(1, total_kb * 1024 // (4 * calls))  # fragments per call (about 4 bytes each)
    parts = [_chunk({"role": "assistant", "content": None})]
    started: set[int] = set()
    for j, i in ORDERS[order](calls, n):
        if i not in started:
            started.add(i)
            start = {"index": i, "id": f"call_{i}", "type": "function", "function": {"name": "f", "arguments": ""}}
            parts.append(_chunk({"tool_calls": [start]}))
        fragment = '{"t":"' if j == 0 else rng.choice(_PIECES)
        parts.append(_chunk({"tool_calls": [{"index": i, "function": {"arguments": fragment}}]}))
    parts += [_chunk({"tool_calls": [{"index": i, "function": {"arguments": '"}'}}]}) for i in sorted(started)]
    parts += [_chunk({}, "tool_calls"), b"data: [DONE]\n\n"]
    return b"".join(parts)


def measure(calls: int = 4, total_kb: int = 100, rounds: int = 9) -> dict[str, Any]:
    """CPU seconds (median of ``rounds``) per order, fast path on and off, and the ratios to ``single``."""
    from conformance.adapters import openai_chat
    from conformance.framing.runs import FAST

    data = {order: stream(order, calls, total_kb) for order in ORDERS}
    times: dict[tuple[str, bool], list[float]] = {(o, f): [] for o in ORDERS for f in (True, False)}
    for _ in range(rounds):
        for (order, fast), spent in times.items():
            gc.collect()
            t0 = time.process_time()
            events = list(openai_chat.stream_from_wire([data[order]], runs=FAST if fast else None))
            spent.append(time.process_time() - t0)
            del events
    median = {key: statistics.median(spent) for key, spent in times.items()}
    rows = [
        {
            "order": order,
            "fast_s": median[(order, True)],
            "general_s": median[(order, False)],
            "fast_vs_single": median[(order, True)] / median[("single", True)],
            "general_vs_single": median[(order, False)] / median[("single", False)],
            "fast_vs_general": median[(order, True)] / median[(order, False)],
        }
        for order in ORDERS
    ]
    return {"calls": calls, "total_kb": total_kb, "rounds": rounds, "rows": rows}


def render(result: dict[str, Any]) -> str:
    lines = [
        f"{result['calls']} calls, {result['total_kb']} KB of arguments, median of {result['rounds']} rounds:",
        "",
        "| order | fast path ÷ single | general path ÷ single | fast ÷ general |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| {r['order']} | {r['fast_vs_single']:.2f} | {r['general_vs_single']:.2f} | {r['fast_vs_general']:.2f} |"
        for r in result["rows"]
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=4)
    ap.add_argument("--kb", type=int, default=100, help="KB of argument text in all")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--json", type=Path, help="also write the raw result here")
    a = ap.parse_args(argv)
    result = measure(a.calls, a.kb, a.rounds)
    if a.json:
        a.json.write_text(json.dumps(result, indent=1))
    print(render(result), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
