"""How fast the main job is: the full default run, cassette loading against vcrpy, CLI start-up.

Three measurements, each side by side in one process run (the machine is shared and noisy):

1. ``conformance run`` with no arguments (every bundled scenario x the five native adapters, both
   modes, all four check families, all four reports), wall time of the subprocess, median of
   ``--runs``; the target is 15 s on the project's 2-core machine.
2. Cassette loading: ``conformance.traffic.cassettes.load_cassette`` (reads the file and builds the
   interactions) against vcrpy's default YAML loading of the same files
   (``vcr.serializers.yamlserializer.deserialize``: libyaml's safe loader, data only), CPU time of
   all bundled cassettes, rounds interleaved, ratio of medians; the target is >= 5x.
3. ``conformance --help`` start-up, wall time of the subprocess (median), beside ``python -c pass``;
   the target is <= 0.3 s.

    python benchmarks/suite_speed.py            # all three, prints a Markdown table
    python benchmarks/suite_speed.py --json out.json --runs 3
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

__all__ = ["main", "measure_help", "measure_loading", "measure_run"]

ROOT = Path(__file__).resolve().parents[1]


def _console() -> list[str]:
    script = shutil.which("conformance")
    return [script] if script else [sys.executable, "-m", "conformance"]


def _wall(argv: list[str], *, cwd: Path) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}: {done.stderr[-2000:]}")
    return elapsed


def measure_run(runs: int) -> dict[str, object]:
    """Median wall seconds of the full default run (reports written to a temporary folder)."""
    times = []
    summary = ""
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as reports:
            argv = [*_console(), "run", "--quiet", "--report-dir", reports]
            started = time.perf_counter()
            done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False)
            times.append(time.perf_counter() - started)
            summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-500:]
    return {"median_s": statistics.median(times), "runs": times, "summary": summary}


def _cpu(fn: Callable[[], object]) -> float:
    started = time.process_time()
    fn()
    return time.process_time() - started


def measure_loading(rounds: int) -> dict[str, object]:
    """CPU seconds to load every bundled cassette: ours and vcrpy's YAML loading, interleaved."""
    from vcr.serializers import yamlserializer

    from conformance.traffic.cassettes import load_cassette

    files = sorted((ROOT / "cassettes").rglob("*.yaml"))
    if not files:
        raise SystemExit("no cassettes under cassettes/: run `conformance record --emulator` first")
    texts = {p: p.read_text(encoding="utf-8") for p in files}

    def ours() -> None:
        for path in files:
            load_cassette(path)

    def vcrpy() -> None:
        for path in files:
            yamlserializer.deserialize(path.read_text(encoding="utf-8"))

    ours(), vcrpy()  # warm the page cache and the imports
    ours_times, vcrpy_times = [], []
    for _ in range(rounds):
        ours_times.append(_cpu(ours))
        vcrpy_times.append(_cpu(vcrpy))
    ours_s, vcrpy_s = statistics.median(ours_times), statistics.median(vcrpy_times)
    return {
        "files": len(files),
        "bytes": sum(len(t.encode()) for t in texts.values()),
        "ours_s": ours_s,
        "vcrpy_s": vcrpy_s,
        "speedup": vcrpy_s / ours_s if ours_s else float("inf"),
    }


def measure_help(runs: int) -> dict[str, object]:
    """Median wall seconds of ``conformance --help`` and of a bare interpreter start."""
    help_times = [_wall([*_console(), "--help"], cwd=ROOT) for _ in range(runs)]
    bare_times = [_wall([sys.executable, "-c", "pass"], cwd=ROOT) for _ in range(runs)]
    return {"help_s": statistics.median(help_times), "python_s": statistics.median(bare_times)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3, help="full runs to time (median; default 3)")
    parser.add_argument("--rounds", type=int, default=7, help="interleaved loading rounds (default 7)")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args(argv)
    results = {
        "cpus": os.cpu_count(),
        "python": sys.version.split()[0],
        "load_average": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
        "loading": measure_loading(args.rounds),
        "help": measure_help(max(5, args.runs * 3)),
        "run": measure_run(args.runs),
    }
    loading, helped, run = results["loading"], results["help"], results["run"]
    assert isinstance(loading, dict) and isinstance(helped, dict) and isinstance(run, dict)
    print("| measurement | result | target |")
    print("|---|---|---|")
    print(f"| full default `conformance run` (wall, median of {args.runs}) | {run['median_s']:.1f} s | <= 15 s |")
    print(
        f"| cassette loading, vcrpy YAML / ours ({loading['files']} files, {loading['bytes'] / 1e6:.1f} MB) "
        f"| {loading['speedup']:.1f}x | >= 5x |"
    )
    print(
        f"| `conformance --help` (wall; bare `python -c pass`: {helped['python_s']:.2f} s) | {helped['help_s']:.2f} s "
        "| <= 0.3 s |"
    )
    print(f"\nrun summary: {run['summary']}\nmachine: {results['cpus']} CPUs, load average {results['load_average']}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
