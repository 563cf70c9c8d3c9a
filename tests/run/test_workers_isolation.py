"""Adapters run in worker processes (even with ``--jobs 1``): an adapter that exits, crashes, hangs
where a timeout cannot stop it, leaves a thread running or allocates without bound costs only its
own pair's cases; the other adapter's cases pass, every report is written, and the run exits 1.

Each misbehaviour sits in one method of a copy of the anthropic reference adapter (the one the
``non_stream`` case calls), beside the untouched gemini adapter, on one scenario.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import resource
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.adapters import get_adapter
from conformance.adapters.base import Adapter
from conformance.cli import main
from conformance.errors import UsageError
from conformance.run import runner, workers
from conformance.run.runner import RunOptions, run_suite
from conformance.run.workers import MEMORY_ENV, can_fork, default_memory_limit, memory_limit, run_in_workers
from conformance.scenarios.loader import load_scenarios
from conformance.scenarios.values import Scenario
from conformance.verdicts import RunResult

pytestmark = pytest.mark.skipif(not can_fork(), reason="worker processes are forked")

ROOT = Path(__file__).resolve().parents[2]
CASSETTES = ROOT / "cassettes"
SCENARIO = "basic/get_time"

BAD_ADAPTERS = """
import ctypes, dataclasses, faulthandler, os, re, threading, time
from conformance.adapters import get_adapter

reference = get_adapter("anthropic")


def sabotaged(how):
    def response_from_wire(body, **kwargs):
        if how == "exit":
            os._exit(3)
        if how == "segfault":
            faulthandler.disable()  # a deliberate crash: no "Fatal Python error" stack on the run's output
            ctypes.string_at(0)
        if how == "thread":  # a non-daemon thread that never ends
            threading.Thread(target=time.sleep, args=(3600,), daemon=False).start()
        if how == "gil":  # one C call that holds the GIL for an hour, asleep (PyDLL keeps the GIL)
            ctypes.PyDLL(None).sleep(3600)
        return reference.response_from_wire(body, **kwargs)

    return dataclasses.replace(reference, name="bad_" + how, response_from_wire=response_from_wire)


EXIT, SEGFAULT, THREAD, GIL = (sabotaged(h) for h in ("exit", "segfault", "thread", "gil"))
"""


def _scenarios(*ids: str) -> list[Scenario]:
    found = {s.id: s for s in load_scenarios([ROOT / "scenarios"]).scenarios}
    return [found[i] for i in ids]


def _sabotaged(response_from_wire: Callable[..., Any]) -> Adapter:
    return dataclasses.replace(get_adapter("anthropic"), name="bad", response_from_wire=response_from_wire)


TIMEOUT = 2.5
"""The case timeout where a hang must be waited for: the good adapter's case runs under it too, and
a passing case takes up to half a second at a load of 10 on 2 cores (a few ms at rest)."""


def _run(bad: Adapter, jobs: int, **options: Any) -> RunResult:
    options = {"cassette_dir": CASSETTES, "jobs": jobs, "modes": ("non_stream",), "timeout": 10.0, **options}
    return run_suite(_scenarios(SCENARIO), [get_adapter("gemini"), bad], RunOptions(**options))


def _bad_case_message(result: RunResult) -> str:
    assert [(c.adapter, c.status) for c in result.cases] == [("gemini", "pass"), ("bad", "error")]
    return result.cases[1].message


@pytest.mark.parametrize("jobs", [1, 2])
def test_an_adapter_that_exits_costs_its_cases_with_one_job_too(jobs: int) -> None:
    def leave(body: Any, **_: Any) -> Any:
        os._exit(3)

    message = _bad_case_message(_run(_sabotaged(leave), jobs))
    assert f"the worker process running bad on {SCENARIO} died (exit code 3)" in message


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_hang_holding_the_gil_is_killed_by_the_watchdog(jobs: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "WATCHDOG_GRACE", 1.0)

    def hold(body: Any, **_: Any) -> Any:
        import ctypes

        ctypes.PyDLL(None).sleep(3600)  # one C call holding the GIL: the case's thread never lets its timeout act
        raise AssertionError("unreachable")

    started = time.monotonic()
    message = _bad_case_message(_run(_sabotaged(hold), jobs, timeout=TIMEOUT))
    assert time.monotonic() - started < 300  # killed: the call holds the GIL for an hour
    # (1 case + the cassette + an MCP server) x 2.5 s + the grace
    assert "the worker process running bad on basic/get_time gave no answer within 8.5 s and was killed" in message
    assert "--timeout changes the limit" in message


@pytest.mark.parametrize("jobs", [1, 2])
def test_an_allocation_past_the_memory_limit_is_the_cases_error(jobs: int) -> None:
    def allocate(body: Any, **_: Any) -> Any:
        return bytearray(8 << 30)

    message = _bad_case_message(_run(_sabotaged(allocate), jobs, worker_memory=2 << 30))
    assert message.startswith("the adapter raised MemoryError")
    assert f"each worker process may take 2 GiB; {MEMORY_ENV} changes the limit" in message


def test_ten_million_events_cost_their_case_a_timeout() -> None:
    reference = get_adapter("anthropic")

    def flood(chunks: Any, **kwargs: Any) -> Any:
        events = list(reference.stream_from_wire(chunks, **kwargs))
        for _ in range(10_000_000):
            yield from events[:1]

    bad = dataclasses.replace(reference, name="bad", stream_from_wire=flood)
    message = _bad_case_message(_run(bad, 1, modes=("stream",), timeout=TIMEOUT))
    assert f"timed out after {TIMEOUT:g} s" in message or "out of memory" in message


def test_the_adapter_runs_in_a_worker_never_in_the_parent(tmp_path: Path) -> None:
    seen = tmp_path / "pids"
    reference = get_adapter("anthropic")

    def note(body: Any, **kwargs: Any) -> Any:
        with seen.open("a") as out:
            out.write(f"{os.getpid()}\n")
        return reference.response_from_wire(body, **kwargs)

    result = _run(dataclasses.replace(reference, response_from_wire=note), 1)
    assert {c.status for c in result.cases} == {"pass"}
    pids = set(seen.read_text().split())
    assert pids and str(os.getpid()) not in pids


def test_a_cassette_that_reads_slowly_costs_its_pair_a_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    real = runner.load_cassette

    def slow(path: Path) -> Any:
        if "anthropic" in path.parts:
            time.sleep(3600)
        return real(path)

    monkeypatch.setattr(runner, "load_cassette", slow)
    result = _run(dataclasses.replace(get_adapter("anthropic"), name="bad"), 1, timeout=TIMEOUT)
    message = _bad_case_message(result)
    assert message.startswith(f"cannot read cassette {CASSETTES / 'anthropic' / SCENARIO}.yaml: reading it took")
    assert f"longer than {TIMEOUT:g} s" in message and "re-record it with `conformance record" in message


def _write_module(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "bad_adapters_mod.py").write_text(textwrap.dedent(BAD_ADAPTERS), encoding="utf-8")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp_path)])}


@pytest.mark.parametrize(
    ("name", "jobs", "shown"),
    [
        ("EXIT", "1", "died (exit code 3)"),
        ("SEGFAULT", "1", "died (killed by SIGSEGV)"),
        ("SEGFAULT", "2", "died (killed by SIGSEGV)"),
        ("THREAD", "1", None),
        ("THREAD", "2", None),
    ],
)
def test_the_command_ends_with_every_report_whatever_the_adapter_does(
    tmp_path: Path, name: str, jobs: str, shown: str | None
) -> None:
    env = _write_module(tmp_path)
    reports = tmp_path / "reports"
    argv = [sys.executable, "-m", "conformance", "run", "--adapter", "gemini", "--adapter", f"bad_adapters_mod:{name}"]
    argv += ["--scenarios", SCENARIO, "-k", "non_stream", "--timeout", "5", "--jobs", jobs, "--quiet"]
    argv += ["--cassette-dir", str(CASSETTES), "--report-dir", str(reports)]
    started = time.monotonic()
    done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert time.monotonic() - started < 300  # a leaked non-daemon thread (an hour's sleep) keeps no process alive
    assert sorted(p.name for p in reports.iterdir()) == ["junit.xml", "report.html", "report.json", "report.md"]
    cases = json.loads((reports / "report.json").read_text())["cases"]
    statuses = [(c["adapter"], c["status"]) for c in cases]
    if shown is None:  # the thread lives in a worker, which ends anyway
        assert done.returncode == 0, done.stderr
        assert statuses == [("gemini", "pass"), (f"bad_{name.lower()}", "pass")]
    else:
        assert done.returncode == 1, done.stderr
        assert statuses == [("gemini", "pass"), (f"bad_{name.lower()}", "error")]
        assert shown in cases[1]["message"]


def test_a_worker_that_leaves_a_non_daemon_thread_ends_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    @contextlib.contextmanager
    def worker() -> Iterator[Callable[[int], tuple[int, bool]]]:
        def run_one(index: int) -> tuple[int, bool]:
            threading.Thread(target=time.sleep, args=(3600,), daemon=False).start()
            return index, index == 0  # the first retires, the second stays until the end

        yield run_one

    monkeypatch.setattr(workers, "_STOP_GRACE", 600.0)
    started = time.monotonic()
    assert list(run_in_workers(2, jobs=1, worker=worker, crashed=lambda i, f: -1)) == [0, 1]
    assert time.monotonic() - started < 300  # the stop grace is 600 s here: neither worker needed it


def test_the_memory_limit_is_set_in_each_worker() -> None:
    @contextlib.contextmanager
    def worker() -> Iterator[Callable[[int], tuple[int, bool]]]:
        yield lambda index: (resource.getrlimit(resource.RLIMIT_DATA)[0], False)

    limits = list(run_in_workers(2, jobs=2, worker=worker, crashed=lambda i, f: -1, memory=3 << 29))
    assert limits == [3 << 29, 3 << 29]
    assert resource.getrlimit(resource.RLIMIT_DATA)[0] != 3 << 29  # the parent's own is untouched


def test_memory_limit_reads_sizes_and_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert memory_limit("2G") == 2 << 30
    assert memory_limit("1536M") == 1536 << 20
    assert memory_limit("1.5GiB") == 3 << 29
    assert memory_limit("0") is None
    with pytest.raises(UsageError, match=f"{MEMORY_ENV}='lots' is not a size: write e.g. 2G"):
        memory_limit("lots")
    monkeypatch.setenv(MEMORY_ENV, "768M")
    assert memory_limit() == 768 << 20
    assert RunOptions().worker_memory == 768 << 20
    monkeypatch.delenv(MEMORY_ENV)
    assert memory_limit() == default_memory_limit()
    assert 1 << 30 <= default_memory_limit() <= 4 << 30


def test_a_bad_memory_setting_warns_and_keeps_the_default(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(MEMORY_ENV, "lots")
    assert RunOptions().worker_memory == default_memory_limit()
    assert f"{MEMORY_ENV}='lots' is not a size" in capsys.readouterr().err


def test_main_runs_in_this_process_untouched_by_a_leaked_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write_module(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    before = {t.ident for t in threading.enumerate()}
    argv = ["run", "--adapter", "bad_adapters_mod:THREAD", "--scenarios", SCENARIO, "--jobs", "1", "--quiet"]
    assert main([*argv, "--cassette-dir", str(CASSETTES), "--report-dir", str(tmp_path / "r")]) == 0
    assert {t.ident for t in threading.enumerate()} == before


def test_a_hung_waiting_lane_is_killed_and_its_items_run_alone_so_the_hung_one_is_named() -> None:
    @contextlib.contextmanager
    def worker() -> Iterator[Callable[[int], tuple[str, bool]]]:
        def run_one(index: int) -> tuple[str, bool]:
            if index == 2:
                time.sleep(3600)  # the watchdog does not care why: the item gives no answer
            return f"ok {index}", False

        yield run_one

    def lane(chosen: Any) -> Iterator[str]:
        time.sleep(3600)
        yield "unreachable"

    def crashed(index: int, failure: Any) -> str:
        return f"{failure.how} {index} {failure.hung}"

    started = time.monotonic()
    found = list(
        run_in_workers(
            3, jobs=1, worker=worker, crashed=crashed, budget=lambda i: 0.5, waiting=[1, 2], run_waiting=lane
        )
    )
    assert found == ["ok 0", "ok 1", "no answer within 0.5 s 2 True"]
    assert time.monotonic() - started < 10


def test_without_isolation_the_cases_run_in_this_process(tmp_path: Path) -> None:
    seen: list[int] = []
    reference = get_adapter("anthropic")

    def note(body: Any, **kwargs: Any) -> Any:
        seen.append(os.getpid())
        return reference.response_from_wire(body, **kwargs)

    result = _run(dataclasses.replace(reference, response_from_wire=note), 1, isolate=False)
    assert {c.status for c in result.cases} == {"pass"}
    assert seen and set(seen) == {os.getpid()}


def test_a_thread_started_when_the_adapter_module_is_imported_does_not_keep_the_run_alive(tmp_path: Path) -> None:
    (tmp_path / "threading_adapter.py").write_text(
        textwrap.dedent(
            """
            import threading, time
            from conformance.adapters import get_adapter

            threading.Thread(target=time.sleep, args=(3600,), daemon=False).start()  # in the main process
            ADAPTER = get_adapter("gemini")
            """
        ),
        encoding="utf-8",
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp_path)])}
    argv = [sys.executable, "-m", "conformance", "run", "--adapter", "threading_adapter:ADAPTER", "--quiet"]
    argv += ["--scenarios", SCENARIO, "--cassette-dir", str(CASSETTES), "--report-dir", str(tmp_path / "r")]
    done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "2 cases: 2 pass" in done.stdout
    assert (tmp_path / "r" / "junit.xml").is_file()
