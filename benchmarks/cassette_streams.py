"""What our stream readers cost on the project's own workload: the bundled cassettes' streams.

For every adapter folder under ``cassettes/`` (a real server's under ``live/`` included), every
streamed response (status < 400) is decoded by that adapter's ``stream_from_wire`` (with the tools
of its request, as the checks do) and the script reports ratios of CPU time, never seconds (the
machine is shared and noisy):

- ``byte ÷ whole``: the body fed one byte at a time (what ``streaming.chunk_invariance`` does)
  over the body in one piece;
- ``fast ÷ general`` (``openai_chat`` and ``anthropic``, the adapters with a run reader): the
  default path over the general path alone (``runs=None``); above 1 the fast path loses.

``--base DIR`` also runs the code in ``DIR`` (a checkout of another commit, e.g. made with
``git archive <commit> | tar -x -C DIR``) in child processes, alternating with this checkout
round by round, so both columns come from one run::

    python benchmarks/cassette_streams.py
    python benchmarks/cassette_streams.py --base /tmp/base --rounds 5
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

__all__ = ["collect", "main", "measure"]

REPO_ROOT = Path(__file__).resolve().parent.parent
FAST_ADAPTERS = ("openai_chat", "anthropic")

Stream = tuple[bytes, Sequence[Any]]
"""A recorded body and the tools of its request."""


def collect(root: Path) -> dict[str, list[Stream]]:
    """Streamed bodies (status < 400) of every cassette under ``root/<adapter>/``, by adapter."""
    from conformance.adapters import get_adapter

    try:
        from conformance.traffic.cassettes import is_streaming, load_cassette
    except ImportError:  # a base checkout from before the package had traffic/ (e.g. 5190bc9)
        from conformance.cassettes import is_streaming, load_cassette  # type: ignore[no-redef]

    from conformance.adapters import adapter_names

    out: dict[str, list[Stream]] = {}
    # <adapter>/ (the emulator's recordings) and live/<server>/<set>/<adapter>/ (a real server's)
    names = set(adapter_names())
    for folder in sorted(p for p in root.rglob("*") if p.is_dir() and p.name in names):
        adapter = get_adapter(folder.name)
        streams = out.setdefault(folder.name, [])
        for path in sorted(folder.rglob("*.yaml")):
            for interaction in load_cassette(path).interactions:
                response = interaction.response
                if response is None or response.status >= 400 or not response.body or not is_streaming(interaction):
                    continue
                tools: Sequence[Any] = ()
                if isinstance(interaction.request.json, dict):
                    try:
                        tools = adapter.request_from_wire(interaction.request.json).tools
                    except Exception:
                        tools = ()
                streams.append((response.body, tools))
    return out


def _decoder(name: str, fast: bool | None) -> Callable[[list[bytes], Sequence[Any]], int]:
    """Decode pieces with ``name``'s ``stream_from_wire``; ``fast``: None for the default path."""
    from conformance.adapters import get_adapter

    stream_from_wire: Any = get_adapter(name).stream_from_wire
    if fast is None:
        return lambda pieces, tools: len(list(stream_from_wire(iter(pieces), tools=tools)))
    if "runs" in inspect.signature(stream_from_wire).parameters:
        from conformance.framing.runs import FAST

        runs = FAST if fast else None
        return lambda pieces, tools: len(list(stream_from_wire(iter(pieces), tools=tools, runs=runs)))
    from conformance.adapters import _hot  # type: ignore[attr-defined]  # the code before issue 11

    def old(pieces: list[bytes], tools: Sequence[Any]) -> int:
        enabled, _hot.ENABLED = _hot.ENABLED, fast
        try:
            return len(list(stream_from_wire(iter(pieces), tools=tools)))
        finally:
            _hot.ENABLED = enabled

    return old


def _cpu(decode: Callable[[list[bytes], Sequence[Any]], int], cases: list[tuple[list[bytes], Sequence[Any]]]) -> float:
    t0 = time.process_time()
    for pieces, tools in cases:
        decode(pieces, tools)
    return time.process_time() - t0


def measure(root: Path, repeat: int) -> dict[str, dict[str, float]]:
    """One round: per adapter, CPU seconds of the whole bodies (best of ``repeat``), of the bodies
    byte by byte (once), and, where there is a fast path, of the general path (best of ``repeat``)."""
    out: dict[str, dict[str, float]] = {}
    for name, streams in collect(root).items():
        if not streams:
            continue
        whole = [([body], tools) for body, tools in streams]
        single = [([body[i : i + 1] for i in range(len(body))], tools) for body, tools in streams]
        decode = _decoder(name, None)
        row = {"streams": float(len(streams)), "bytes": float(sum(len(b) for b, _ in streams))}
        row["whole"] = min(_cpu(decode, whole) for _ in range(repeat))
        row["single_bytes"] = _cpu(decode, single)
        if name in FAST_ADAPTERS:
            row["general"] = min(_cpu(_decoder(name, False), whole) for _ in range(repeat))
        out[name] = row
    return out


def _child(code: Path, root: Path, repeat: int) -> dict[str, dict[str, float]]:
    env = {**os.environ, "PYTHONPATH": str(code)}
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", "--root", str(root), "--repeat", str(repeat)]
    done = subprocess.run(cmd, env=env, cwd=code, capture_output=True, text=True, check=True)
    result: dict[str, dict[str, float]] = json.loads(done.stdout)
    return result


def _ratios(rounds: list[dict[str, dict[str, float]]]) -> dict[str, dict[str, float]]:
    """Median over rounds of byte ÷ whole and whole ÷ general, per adapter and over all."""
    out: dict[str, dict[str, float]] = {}
    names = sorted(rounds[0])
    for name in [*names, "all"]:
        rows = [r[name] for r in rounds] if name != "all" else [_total(r) for r in rounds]
        ratio = {"byte_over_whole": statistics.median(r["single_bytes"] / r["whole"] for r in rows)}
        if all("general" in r for r in rows):
            ratio["fast_over_general"] = statistics.median(r["whole"] / r["general"] for r in rows)
        ratio["streams"] = rows[0]["streams"]
        out[name] = ratio
    return out


def _total(rnd: dict[str, dict[str, float]]) -> dict[str, float]:
    keys = ("streams", "whole", "single_bytes")
    return {k: sum(row[k] for row in rnd.values()) for k in keys}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", type=Path, default=REPO_ROOT / "cassettes", help="the cassettes folder")
    ap.add_argument("--base", type=Path, help="another checkout to measure side by side (child processes)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=5, help="whole-body decodes per round (best taken)")
    ap.add_argument("--json", type=Path, help="write the raw rounds here")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        print(json.dumps(measure(a.root, a.repeat)))
        return 0
    codes = {"this": REPO_ROOT} | ({"base": a.base.resolve()} if a.base else {})
    rounds: dict[str, list[dict[str, dict[str, float]]]] = {label: [] for label in codes}
    for n in range(a.rounds):
        for label, code in codes.items() if n % 2 == 0 else reversed(codes.items()):
            rounds[label].append(_child(code, a.root.resolve(), a.repeat))
        print(f"# round {n + 1}/{a.rounds} done", file=sys.stderr, flush=True)
    if a.json:
        a.json.write_text(json.dumps(rounds, indent=1))
    ratios = {label: _ratios(r) for label, r in rounds.items()}
    labels = list(codes)
    head = ["adapter", "streams", *(f"byte ÷ whole ({lb})" for lb in labels)]
    head += [f"fast ÷ general ({lb})" for lb in labels]
    if a.base:
        head += ["whole: this ÷ base", "byte by byte: this ÷ base"]
    print("| " + " | ".join(head) + " |\n|" + "---|" * len(head))
    for name in ratios["this"]:
        cells = [name, f"{ratios['this'][name]['streams']:.0f}"]
        cells += [f"{ratios[lb][name]['byte_over_whole']:.1f}" for lb in labels]
        cells += [f"{v:.2f}" if (v := ratios[lb][name].get("fast_over_general")) else "" for lb in labels]
        if a.base:
            pairs = list(zip(rounds["this"], rounds["base"], strict=True))
            for key in ("whole", "single_bytes"):
                cells.append(f"{statistics.median(_row(t, name)[key] / _row(b, name)[key] for t, b in pairs):.2f}")
        print("| " + " | ".join(cells) + " |")
    return 0


def _row(rnd: dict[str, dict[str, float]], name: str) -> dict[str, float]:
    return _total(rnd) if name == "all" else rnd[name]


if __name__ == "__main__":
    sys.exit(main())
