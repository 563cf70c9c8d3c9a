"""``certify`` runs an in-process client in worker processes: a client that exits, crashes, hangs
where the turn's timeout cannot stop it, leaves a thread running or allocates without bound costs
only its own pair's cases (an ERROR saying what happened); the next pair passes in a new worker,
every report is written and the command exits 1.

Each misbehaviour is a wrapped reference client sabotaged on one scenario only
(``basic/single_call``); ``basic/get_time`` runs after it and must pass.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from conformance.adapters import for_format
from conformance.clients.harness import CertifyOptions, certify
from conformance.clients.translator import TranslatorClient
from conformance.run.workers import MEMORY_ENV, can_fork
from conformance.scenarios.loader import load_scenarios
from conformance.scenarios.values import Scenario
from conformance.verdicts import RunResult
from tests._processes import alive

pytestmark = pytest.mark.skipif(not can_fork(), reason="worker processes are forked")

ROOT = Path(__file__).resolve().parents[2]
CASSETTES = ROOT / "cassettes"
BAD, GOOD = "basic/single_call", "basic/get_time"

DRIVER = """
import ctypes, dataclasses, faulthandler, itertools, os, re, threading, time
from conformance.adapters import for_format
from conformance.clients.translator import TranslatorClient

inner = TranslatorClient(for_format("anthropic"))


@dataclasses.dataclass(frozen=True)
class Sabotaged:
    how: str
    name: str = "bad"
    known_gaps = {}

    @property
    def wires(self):
        return dict(inner.wires)

    def error_info(self, exc):
        return inner.error_info(exc)

    def complete(self, call):
        if call.scenario == "basic/single_call":
            if self.how == "exit":
                os._exit(3)
            if self.how == "segfault":
                faulthandler.disable()  # the worker is forked from pytest, whose handler would print its stack
                ctypes.string_at(0)
            if self.how == "thread":
                threading.Thread(target=time.sleep, args=(3600,), daemon=False).start()
            if self.how == "gil":  # one C call that holds the GIL for an hour, asleep (PyDLL keeps the GIL)
                ctypes.PyDLL(None).sleep(3600)
            if self.how == "allocate":
                bytearray(8 << 30)
            if self.how == "events" and call.stream:  # events without end
                return itertools.repeat(next(iter(inner.complete(call))))
        return inner.complete(call)


EXIT, SEGFAULT, THREAD, GIL, ALLOCATE = (Sabotaged(h) for h in ("exit", "segfault", "thread", "gil", "allocate"))
"""


def _scenarios() -> list[Scenario]:
    found = {s.id: s for s in load_scenarios([ROOT / "scenarios"]).scenarios}
    return [found[BAD], found[GOOD]]


def _client(tmp_path: Path, name: str) -> Any:
    namespace: dict[str, Any] = {}
    exec(compile(textwrap.dedent(DRIVER), str(tmp_path / "driver.py"), "exec"), namespace)
    return namespace[name]


TIMEOUT = 2.5
"""The turn's timeout where a hang must be waited for: a passing turn takes up to half a second at a
load of 10 on 2 cores (15 ms at rest), and the good scenario's turn runs under the same timeout."""


def _certify(client: Any, **options: Any) -> RunResult:
    options = {"cassette_dir": CASSETTES, "modes": ("non_stream",), "timeout": 10.0, **options}
    return certify(_scenarios(), client, CertifyOptions(**options))


def _statuses(result: RunResult) -> list[tuple[str, str]]:
    return [(c.scenario, c.status) for c in result.cases]


@pytest.mark.parametrize(("name", "shown"), [("EXIT", "died (exit code 3)"), ("SEGFAULT", "died (killed by SIGSEGV)")])
def test_a_client_that_kills_its_process_costs_its_pair(tmp_path: Path, name: str, shown: str) -> None:
    result = _certify(_client(tmp_path, name))
    assert _statuses(result) == [(BAD, "error"), (GOOD, "pass")]
    assert f"the worker process running bad/anthropic on {BAD} {shown}" in result.cases[0].message


def test_a_client_holding_the_gil_is_killed_by_the_watchdog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from conformance.clients import harness

    monkeypatch.setattr(harness, "WATCHDOG_GRACE", 1.0)
    started = time.monotonic()
    result = _certify(_client(tmp_path, "GIL"), timeout=TIMEOUT)
    assert time.monotonic() - started < 300  # killed: the client holds the GIL for an hour
    assert _statuses(result) == [(BAD, "error"), (GOOD, "pass")]
    # one mode of a one-turn scenario: a turn and the checks, the cassette, an MCP server (4 x 2.5 s), the grace
    assert "gave no answer within 11 s and was killed: the client or a check hung" in result.cases[0].message


def test_a_client_allocating_past_the_limit_errs_on_its_turn(tmp_path: Path) -> None:
    result = _certify(_client(tmp_path, "ALLOCATE"), worker_memory=2 << 30)
    assert _statuses(result) == [(BAD, "error"), (GOOD, "pass")]
    message = result.cases[0].message
    assert message.startswith(
        "turn 0: the client raised MemoryError (out of memory: each worker process may take 2 GiB"
    )
    assert f"{MEMORY_ENV} changes the limit" in message


def test_an_endless_stream_of_events_costs_its_case_a_timeout(tmp_path: Path) -> None:
    client = _client(tmp_path, "EXIT")
    flooding = type(client)("events")
    # the events pile up: the timeout or the worker's memory limit ends the case, whichever comes first
    result = _certify(flooding, modes=("stream",), timeout=TIMEOUT)
    assert _statuses(result) == [(BAD, "error"), (GOOD, "pass")]
    message = result.cases[0].message
    assert f"did not finish within {TIMEOUT:g} s" in message or "ran out of memory" in message, message


def test_a_client_runs_in_a_worker_never_in_the_parent() -> None:
    pids: list[int] = []
    inner = TranslatorClient(for_format("gemini"))

    class Noting:
        name, wires, known_gaps = "noting", inner.wires, {}

        def error_info(self, exc: BaseException) -> Any:
            return inner.error_info(exc)

        def complete(self, call: Any) -> Any:
            pids.append(os.getpid())  # in the worker's copy of this list
            if os.getpid() == parent:
                raise AssertionError("ran in the parent")
            return inner.complete(call)

    parent = os.getpid()
    result = _certify(Noting())
    assert {c.status for c in result.cases} == {"pass"} and pids == []


@pytest.mark.parametrize(("name", "code"), [("EXIT", 1), ("THREAD", 0)])
def test_the_command_ends_with_every_report_whatever_the_client_does(tmp_path: Path, name: str, code: int) -> None:
    (tmp_path / "driver.py").write_text(textwrap.dedent(DRIVER), encoding="utf-8")
    reports = tmp_path / "reports"
    argv = [sys.executable, "-m", "conformance", "certify", "--client", f"driver.py:{name}", "--scenarios", BAD]
    argv += ["--scenarios", GOOD, "-k", "non_stream", "--timeout", "5", "--quiet"]
    argv += ["--cassette-dir", str(CASSETTES), "--report-dir", str(reports)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    started = time.monotonic()
    done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert time.monotonic() - started < 300  # the client's non-daemon thread (asleep an hour) keeps nothing alive
    assert done.returncode == code, done.stderr
    assert sorted(p.name for p in reports.iterdir()) == ["junit.xml", "report.html", "report.json", "report.md"]
    cases = json.loads((reports / "report.json").read_text())["cases"]
    assert {c["scenario"]: c["status"] for c in cases} == {BAD: "error" if code else "pass", GOOD: "pass"}


# -- --jobs N (issue 24, point 7) -----------------------------------------------------------------------


def _many(*more: str) -> list[Scenario]:
    found = {s.id: s for s in load_scenarios([ROOT / "scenarios"]).scenarios}
    return [s for sid, s in sorted(found.items()) if sid.startswith(("basic/", "tool_results/", "errors/", *more))]


def _verdicts(result: RunResult) -> list[tuple[str, str, str, str, list[str]]]:
    from conformance.verdicts import signature

    return [
        (c.adapter, c.scenario, c.mode, c.status, [signature(f) for v in c.checks for f in v.findings])
        for c in result.cases
    ]


def test_two_workers_give_the_cases_of_one_in_the_same_order() -> None:
    """With MCP scenarios too: with two jobs their pairs run in the lane, in order."""
    client = TranslatorClient(for_format("openai_chat"), name="acme")
    options: dict[str, Any] = {"cassette_dir": CASSETTES, "timeout": 10.0}
    one = certify(_many("mcp/"), client, CertifyOptions(**options, jobs=1))
    two = certify(_many("mcp/"), client, CertifyOptions(**options, jobs=2))
    assert len(one.cases) > 20
    assert _verdicts(two) == _verdicts(one)
    assert [c.message for c in two.cases] == [c.message for c in one.cases]


def test_a_worker_that_dies_with_jobs_2_costs_its_pair_and_the_run_goes_on(tmp_path: Path) -> None:
    result = _certify(_client(tmp_path, "EXIT"), jobs=2)
    assert _statuses(result) == [(BAD, "error"), (GOOD, "pass")]
    assert f"the worker process running bad/anthropic on {BAD} died (exit code 3)" in result.cases[0].message


REMOTE_DRIVER = """
import os
from conformance.adapters import for_format
from conformance.clients.translator import TranslatorClient

inner = TranslatorClient(for_format("anthropic"))


class Noting:
    name = "noting"
    known_gaps = {}
    wires = dict(inner.wires)

    def error_info(self, exc):
        return inner.error_info(exc)

    def complete(self, call):
        with open(os.environ["CONFORMANCE_TEST_PIDS"], "a") as out:
            out.write(f"{os.getpid()} {os.getppid()}\\n")
        return inner.complete(call)


CLIENT = Noting()
"""


def test_with_python_and_jobs_2_each_worker_drives_a_child_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from conformance.clients.remote import RemoteClient

    (tmp_path / "noting_driver.py").write_text(textwrap.dedent(REMOTE_DRIVER), encoding="utf-8")
    log = tmp_path / "pids.log"
    monkeypatch.setenv("CONFORMANCE_TEST_PIDS", str(log))
    options: dict[str, Any] = {"cassette_dir": CASSETTES, "timeout": 10.0}
    with RemoteClient(f"{tmp_path / 'noting_driver.py'}:CLIENT", sys.executable) as client:
        parent_child = client._process.pid if client._process else None
        two = certify(_many(), client, CertifyOptions(**options, jobs=2))
        lines = log.read_text().splitlines()
        log.unlink()
        one = certify(_many(), client, CertifyOptions(**options, jobs=1))
    assert _verdicts(two) == _verdicts(one)
    children = {tuple(map(int, line.split())) for line in lines}
    drivers = {pid for pid, _ in children}
    workers = {ppid for _, ppid in children}
    assert len(drivers) == len(workers) == 2  # one child per worker, started in that worker
    assert parent_child not in drivers and os.getpid() not in workers
    for pid in drivers | workers:  # every worker and its child are gone when the run ends
        assert not alive(pid)


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads /proc")
def test_ctrl_c_with_jobs_2_and_python_writes_partial_reports_and_leaves_no_process_behind(tmp_path: Path) -> None:
    import signal

    marker = tmp_path / "marker_driver.py"  # its path names every process of this run
    marker.write_text(textwrap.dedent(REMOTE_DRIVER), encoding="utf-8")
    reports = tmp_path / "reports"
    argv = [sys.executable, "-m", "conformance", "certify", "--client", f"{marker}:CLIENT", "--python", sys.executable]
    argv += ["--jobs", "2", "--cassette-dir", str(CASSETTES), "--report-dir", str(reports)]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CONFORMANCE_TEST_PIDS": str(tmp_path / "pids.log")}
    run = subprocess.Popen(
        argv, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )
    assert run.stdout is not None
    try:
        seen = b""
        while sum(chr(b) in ".FEuxS" for b in seen.rpartition(b"  ")[2]) < 10:  # ten cases shown as finished
            chunk = os.read(run.stdout.fileno(), 1)
            assert chunk, f"the run ended before 10 cases: {seen!r}"
            seen += chunk
        ours = _processes_naming(str(marker))
        assert len(ours) >= 5, ours  # the command, two workers, a child each (and the parent's own child)
        os.killpg(run.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
        _, err = run.communicate(timeout=60)
        for _ in range(100):
            left = {pid: cmd for pid, cmd in _processes_naming(str(marker)).items() if alive(pid)}
            if not left:
                break
            time.sleep(0.1)
        assert left == {}, err
        assert run.returncode == 130, err
        assert err.decode().startswith("conformance certify: interrupted (Ctrl-C) after "), err
        data = json.loads((reports / "report.json").read_text(encoding="utf-8"))
        assert data["incomplete"].startswith("interrupted (Ctrl-C) after")
        assert len(data["cases"]) >= 10 and {c["status"] for c in data["cases"]} <= {"pass", "unsupported", "left"}
    finally:
        if run.poll() is None:
            run.kill()
        run.communicate()


def _processes_naming(text: str) -> dict[int, str]:
    """Every live process whose command line holds ``text``."""
    found: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if text in command:
                found[int(entry.name)] = command
    return found
