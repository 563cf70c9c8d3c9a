"""How fast the main job is: the full default run (side by side with a previous commit), cassette
loading against vcrpy, start-up, and the ``--exhaustive`` run.

Every measurement is taken side by side in one process run (the machine is shared and noisy):

1. ``conformance run`` with no arguments (every bundled scenario x the eight bundled adapters, both
   modes, all four check families, all four reports), wall time of the subprocess, median of
   ``--runs``; the target is 15 s on the project's 2-core machine. With ``--baseline REV`` the
   same command also runs in a temporary ``git worktree`` of REV (``PYTHONPATH`` and the working
   directory pointing at it), the runs interleaved (baseline, current, baseline, current, ...),
   and the script prints the ratio of the medians (the target of issue 11: >= 3) and whether both
   trees gave the same case statuses and check verdicts (``report.json``).
2. Start-up: ``conformance --help``, and a one-case ``conformance run``, wall time (median),
   beside ``python -c pass`` (and the baseline's one-case run with ``--baseline``).
3. Cassette loading: ``conformance.traffic.cassettes.load_cassette`` (reads the file and builds the
   interactions) against vcrpy's default YAML loading of the same files
   (``vcr.serializers.yamlserializer.deserialize``: libyaml's safe loader, data only), CPU time of
   all bundled cassettes, rounds interleaved, ratio of medians; the target is >= 5x.
4. With ``--exhaustive``: one ``conformance run --exhaustive`` of the full suite, wall time; the
   target is 10 minutes.

Every run is a subprocess of ``python -m conformance`` with ``PYTHONPATH`` set to the tree it
measures, so an editable install elsewhere does not leak in.

    python benchmarks/suite_speed.py                          # a Markdown table
    python benchmarks/suite_speed.py --baseline 5190bc9 --runs 5 --json out.json
    python benchmarks/suite_speed.py --baseline 5190bc9 --exhaustive
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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = [
    "compare",
    "main",
    "measure_exhaustive",
    "measure_help",
    "measure_loading",
    "measure_run",
    "measure_startup",
    "scenario_ids",
    "worktree",
]

ROOT = Path(__file__).resolve().parents[1]
ONE_CASE = ["--scenarios", "basic/get_time", "--adapters", "gemini", "-k", "non_stream"]


def _command(tree: Path, *args: str) -> tuple[list[str], dict[str, str]]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return [sys.executable, "-m", "conformance", *args], env


def _wall(tree: Path, *args: str) -> tuple[float, subprocess.CompletedProcess[str]]:
    argv, env = _command(tree, *args)
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=tree, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} (in {tree}) exited {done.returncode}: {done.stderr[-2000:]}")
    return elapsed, done


def _load_average() -> float | None:
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else None


@contextmanager
def worktree(rev: str) -> Iterator[Path]:
    """A temporary detached ``git worktree`` of ``rev`` (removed afterwards)."""
    folder = Path(tempfile.mkdtemp(prefix="suite-speed-baseline-"))
    tree = folder / "tree"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(tree), rev], check=True)
    try:
        yield tree
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False)
        shutil.rmtree(folder, ignore_errors=True)


def _verdicts(report: Path) -> list[tuple[object, ...]]:
    data = json.loads(report.read_text(encoding="utf-8"))
    return [
        (c["adapter"], c["scenario"], c["mode"], c["status"], tuple((v["check"], v["status"]) for v in c["checks"]))
        for c in data["cases"]
    ]


def scenario_ids(tree: Path) -> list[str]:
    """The ids of the bundled scenarios of a checkout (``scenarios/<id>.yaml``)."""
    folder = tree / "scenarios"
    return sorted(p.relative_to(folder).with_suffix("").as_posix() for p in folder.rglob("*.yaml"))


def measure_run(
    runs: int, *, baseline: Path | None = None, args: tuple[str, ...] = (), same_work: bool = False
) -> dict[str, object]:
    """Median wall seconds of the full default run (reports to a temporary folder); with
    ``baseline`` (a tree), the same run there too, interleaved, and their ratio. ``same_work``:
    this tree runs only the baseline's scenarios (the suite has grown since), so both trees run
    the same cases. Results are compared on the cases both ran."""
    trees = {"current": ROOT} if baseline is None else {"baseline": baseline, "current": ROOT}
    selection = {name: args for name in trees}
    if baseline is not None and same_work:
        selection["current"] = (*args, *(a for i in scenario_ids(baseline) for a in ("--scenarios", i)))
    times: dict[str, list[float]] = {name: [] for name in trees}
    summaries: dict[str, str] = {}
    verdicts: dict[str, list[tuple[object, ...]]] = {}
    load = [_load_average()]
    for _ in range(runs):
        for name, tree in trees.items():
            with tempfile.TemporaryDirectory() as reports:
                elapsed, done = _wall(tree, "run", "--quiet", "--report-dir", reports, *selection[name])
                times[name].append(elapsed)
                lines = done.stdout.strip().splitlines()
                summaries[name] = lines[-1] if lines else done.stderr[-500:]
                verdicts[name] = _verdicts(Path(reports) / "report.json")
    load.append(_load_average())
    result: dict[str, object] = {
        name: {"median_s": statistics.median(t), "runs": t, "summary": summaries[name]} for name, t in times.items()
    }
    result["load_average"] = load
    result["same_work"] = baseline is not None and same_work
    if baseline is not None:
        result["ratio"] = statistics.median(times["baseline"]) / statistics.median(times["current"])
        result.update(compare(verdicts["baseline"], verdicts["current"]))
    return result


def compare(before: list[tuple[object, ...]], now: list[tuple[object, ...]]) -> dict[str, object]:
    """Two runs' cases (``_verdicts``: adapter, scenario, mode, status, verdicts) compared on the
    cases both ran; the cases only one of them ran are counted."""
    old = {v[:3]: v for v in before}
    new = {v[:3]: v for v in now}
    common = old.keys() & new.keys()
    return {
        "common_cases": len(common),
        "only_current": len(new.keys() - old.keys()),
        "only_baseline": len(old.keys() - new.keys()),
        "same_statuses": all(old[k][3] == new[k][3] for k in common),
        "same_results": all(old[k] == new[k] for k in common) and old.keys() <= new.keys(),
    }


def measure_startup(runs: int, *, baseline: Path | None = None) -> dict[str, object]:
    """Median wall seconds of a one-case run (here and in ``baseline``) and of a bare interpreter."""
    trees = {"current": ROOT} if baseline is None else {"baseline": baseline, "current": ROOT}
    times: dict[str, list[float]] = {name: [] for name in trees}
    bare: list[float] = []
    for _ in range(runs):
        for name, tree in trees.items():
            with tempfile.TemporaryDirectory() as reports:
                times[name].append(_wall(tree, "run", "--quiet", "--report-dir", reports, *ONE_CASE)[0])
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        bare.append(time.perf_counter() - started)
    return {**{f"{name}_s": statistics.median(t) for name, t in times.items()}, "python_s": statistics.median(bare)}


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
    help_times = [_wall(ROOT, "--help")[0] for _ in range(runs)]
    bare_times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        bare_times.append(time.perf_counter() - started)
    return {"help_s": statistics.median(help_times), "python_s": statistics.median(bare_times)}


def measure_exhaustive() -> dict[str, object]:
    """Wall seconds of one ``conformance run --exhaustive`` of the full suite, and its summary."""
    load = [_load_average()]
    with tempfile.TemporaryDirectory() as reports:
        elapsed, done = _wall(ROOT, "run", "--exhaustive", "--quiet", "--report-dir", reports)
    lines = done.stdout.strip().splitlines()
    load.append(_load_average())
    return {"wall_s": elapsed, "summary": lines[-1] if lines else done.stderr[-500:], "load_average": load}


def _print_table(results: dict[str, object], runs: int, baseline: str | None) -> None:
    loading, helped, run, startup = (results[k] for k in ("loading", "help", "run", "startup"))
    assert isinstance(loading, dict) and isinstance(helped, dict) and isinstance(run, dict)
    assert isinstance(startup, dict)
    current = run["current"]
    assert isinstance(current, dict)
    print("| measurement | result | target |")
    print("|---|---|---|")
    label = "full default `conformance run`"
    if run.get("same_work"):
        label = "`conformance run` on the baseline's scenarios"
    print(f"| {label} (wall, median of {runs}) | {current['median_s']:.1f} s | <= 15 s |")
    if baseline is not None:
        before = run["baseline"]
        assert isinstance(before, dict)
        what = f"this tree on {baseline}'s scenarios" if run.get("same_work") else "this tree"
        print(
            f"| the same on {baseline} (interleaved, median of {runs}) / {what} "
            f"| {before['median_s']:.1f} s / {current['median_s']:.1f} s = {run['ratio']:.2f}x | >= 3x |"
        )
    print(
        f"| cassette loading, vcrpy YAML / ours ({loading['files']} files, {loading['bytes'] / 1e6:.1f} MB) "
        f"| {loading['speedup']:.1f}x | >= 5x |"
    )
    print(
        f"| `conformance --help` (wall; bare `python -c pass`: {helped['python_s']:.2f} s) | {helped['help_s']:.2f} s "
        "| <= 0.3 s |"
    )
    one = f"{startup['current_s']:.2f} s"
    if baseline is not None:
        one += f" ({baseline}: {startup['baseline_s']:.2f} s)"
    print(f"| one-case `conformance run` (wall, start-up and reports) | {one} | |")
    exhaustive = results.get("exhaustive")
    if isinstance(exhaustive, dict):
        print(f"| `conformance run --exhaustive`, full suite (wall) | {exhaustive['wall_s']:.0f} s | <= 600 s |")
    print(f"\nrun summary: {current['summary']}")
    if baseline is not None:
        print(
            f"on the {run['common_cases']} cases both trees ran: same statuses as {baseline}: {run['same_statuses']};"
            f" same check verdicts: {run['same_results']} ({run['only_current']} cases only here,"
            f" {run['only_baseline']} only there)"
        )
    if isinstance(exhaustive, dict):
        print(f"exhaustive summary: {exhaustive['summary']}")
    print(f"machine: {results['cpus']} CPUs, load average {results['load_average']} (runs: {run['load_average']})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3, help="full runs to time per tree (median; default 3)")
    parser.add_argument("--rounds", type=int, default=7, help="interleaved loading rounds (default 7)")
    parser.add_argument("--baseline", metavar="REV", help="also time the run on this commit (a temporary worktree)")
    parser.add_argument(
        "--same-work", action="store_true", help="with --baseline: run this tree on the baseline's scenarios only"
    )
    parser.add_argument("--exhaustive", action="store_true", help="also time one `run --exhaustive` (minutes)")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args(argv)
    results: dict[str, object] = {
        "cpus": os.cpu_count(),
        "python": sys.version.split()[0],
        "load_average": _load_average(),
        "loading": measure_loading(args.rounds),
        "help": measure_help(max(5, args.runs * 3)),
    }
    if args.baseline:
        with worktree(args.baseline) as tree:
            results["startup"] = measure_startup(max(5, args.runs * 2), baseline=tree)
            results["run"] = measure_run(args.runs, baseline=tree, same_work=args.same_work)
    else:
        results["startup"] = measure_startup(max(5, args.runs * 2))
        results["run"] = measure_run(args.runs)
    if args.exhaustive:
        results["exhaustive"] = measure_exhaustive()
    _print_table(results, args.runs, args.baseline)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
