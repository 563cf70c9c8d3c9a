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

pytestmark = pytest.mark.skipif(not can_fork(), reason="worker processes are forked")

ROOT = Path(__file__).resolve().parents[2]
CASSETTES = ROOT / "cassettes"
BAD, GOOD = "basic/single_call", "basic/get_time"

DRIVER = """
import ctypes, dataclasses, itertools, os, re, threading, time
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
                ctypes.string_at(0)
            if self.how == "thread":
                threading.Thread(target=time.sleep, args=(3600,), daemon=False).start()
            if self.how == "gil":
                re.match(r"(a+)+$", "a" * 40 + "b")
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


def _certify(client: Any, **options: Any) -> RunResult:
    options = {"cassette_dir": CASSETTES, "modes": ("non_stream",), "timeout": 2.0, **options}
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
    result = _certify(_client(tmp_path, "GIL"), timeout=1.0)
    assert time.monotonic() - started < 30
    assert _statuses(result) == [(BAD, "error"), (GOOD, "pass")]
    # one mode of a one-turn scenario: a turn and the checks, the cassette, an MCP server, the grace
    assert "gave no answer within 5 s and was killed: the client or a check hung" in result.cases[0].message


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
    result = _certify(flooding, modes=("stream",), timeout=1.0)
    assert _statuses(result) == [(BAD, "error"), (GOOD, "pass")]
    assert "did not finish within 1 s" in result.cases[0].message


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
    done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert time.monotonic() - started < 30  # a non-daemon thread left by the client keeps nothing alive
    assert done.returncode == code, done.stderr
    assert sorted(p.name for p in reports.iterdir()) == ["junit.xml", "report.html", "report.json", "report.md"]
    cases = json.loads((reports / "report.json").read_text())["cases"]
    assert {c["scenario"]: c["status"] for c in cases} == {BAD: "error" if code else "pass", GOOD: "pass"}
