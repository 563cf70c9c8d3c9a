"""Worker processes (``--jobs``): the results of a serial run, crashes, fail-fast, overlapping waits.

No assertion here is on our own speed: overlap is counted with events (how many conversations
were waiting for their MCP tool at once), never with wall times.
"""

from __future__ import annotations

import dataclasses
import faulthandler
import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from conformance.adapters import get_adapter
from conformance.adapters.base import Adapter
from conformance.cli import main
from conformance.run.runner import RunOptions, run_suite
from conformance.run.workers import can_fork
from conformance.scenarios.loader import load_scenarios
from conformance.scenarios.values import Scenario
from conformance.verdicts import CaseResult
from tests._processes import alive

pytestmark = pytest.mark.skipif(not can_fork(), reason="worker processes are forked")

ROOT = Path(__file__).resolve().parents[2]
CASSETTES = ROOT / "cassettes"
SLOW = "mcp/slow_tool_timeout"


def _scenarios(*ids: str) -> list[Scenario]:
    found = {s.id: s for s in load_scenarios([ROOT / "scenarios"]).scenarios}
    return [found[i] for i in ids]


def _comparable(cases: tuple[CaseResult, ...]) -> list[CaseResult]:
    return [dataclasses.replace(c, duration=0.0) for c in cases]


def test_parallel_results_equal_serial_results() -> None:
    scenarios = _scenarios(
        "basic/get_time",
        "basic/parallel_calls",
        "errors/stream_disconnect",
        "multi_turn/two_rounds",
        "streaming/multibyte_text",
        "tool_choice/required",  # unsupported by some adapters
        "mcp/fixed_clock",
        SLOW,
    )
    adapters = [get_adapter(n) for n in ("openai_chat", "anthropic", "gemini", "ollama", "hermes")]
    serial = run_suite(scenarios, adapters, RunOptions(cassette_dir=CASSETTES))
    parallel = run_suite(scenarios, adapters, RunOptions(cassette_dir=CASSETTES, jobs=2))
    assert len(parallel.cases) == len(serial.cases) == 70
    assert _comparable(parallel.cases) == _comparable(serial.cases)
    assert parallel.provenance == serial.provenance
    assert list(parallel.provenance) == list(serial.provenance)
    assert {c.status for c in parallel.cases} == {"pass", "unsupported"}


def _crashing(how: str) -> Adapter:
    """An adapter that kills the process reading a response."""

    def crash(body: Any, **kwargs: Any) -> Any:
        if how == "exit":
            os._exit(3)
        faulthandler.disable()  # pytest's handler would print the worker's stack
        os.kill(os.getpid(), signal.SIGSEGV)
        raise AssertionError("unreachable")

    return dataclasses.replace(get_adapter("anthropic"), response_from_wire=crash)


@pytest.mark.parametrize(("how", "shown"), [("exit", "exit code 3"), ("segfault", "killed by SIGSEGV")])
def test_a_worker_that_dies_costs_its_pair_an_error_and_the_run_goes_on(how: str, shown: str) -> None:
    crashing = _crashing(how)
    scenarios = _scenarios("basic/get_time", "basic/single_call", "basic/text_only_reply")
    result = run_suite(
        scenarios, [get_adapter("gemini"), crashing], RunOptions(cassette_dir=CASSETTES, jobs=2, modes=("non_stream",))
    )
    statuses = [(c.adapter, c.scenario, c.status) for c in result.cases]
    assert statuses == [
        ("gemini", "basic/get_time", "pass"),
        ("gemini", "basic/single_call", "pass"),
        ("gemini", "basic/text_only_reply", "pass"),
        ("anthropic", "basic/get_time", "error"),
        ("anthropic", "basic/single_call", "error"),
        ("anthropic", "basic/text_only_reply", "error"),
    ]
    message = result.cases[3].message
    assert f"the worker process running anthropic on basic/get_time died ({shown})" in message
    assert "crashed the interpreter" in message


def test_a_dead_worker_in_an_mcp_pair_names_only_that_pair() -> None:
    reference = get_adapter("openai_chat")

    def crash_on_slow_tool(body: Any, **kwargs: Any) -> Any:
        if "slow_tool" in repr(body):
            os._exit(5)
        return reference.response_from_wire(body, **kwargs)

    crashing = dataclasses.replace(reference, response_from_wire=crash_on_slow_tool)
    result = run_suite(
        _scenarios("mcp/fixed_clock", SLOW),
        [crashing],
        RunOptions(cassette_dir=CASSETTES, jobs=2, modes=("non_stream",)),
    )
    by_scenario = {c.scenario: c for c in result.cases}
    assert by_scenario["mcp/fixed_clock"].status == "pass"  # ran again alone after the waiting lane died
    assert by_scenario[SLOW].status == "error"
    assert "died (exit code 5)" in by_scenario[SLOW].message


def test_fail_fast_stops_at_the_first_failing_case_in_serial_order() -> None:
    def broken(body: Any, **_: Any) -> Any:
        raise ValueError("boom")

    adapter = dataclasses.replace(get_adapter("anthropic"), response_from_wire=broken)
    scenarios = _scenarios("basic/get_time", "basic/single_call", "basic/text_only_reply", SLOW)
    options = RunOptions(cassette_dir=CASSETTES, fail_fast=True, jobs=2)
    result = run_suite(scenarios, [get_adapter("gemini"), adapter], options)
    assert [(c.adapter, c.scenario, c.mode, c.status) for c in result.cases] == [
        ("gemini", "basic/get_time", "non_stream", "pass"),
        ("gemini", "basic/get_time", "stream", "pass"),
        ("gemini", "basic/single_call", "non_stream", "pass"),
        ("gemini", "basic/single_call", "stream", "pass"),
        ("gemini", "basic/text_only_reply", "non_stream", "pass"),
        ("gemini", "basic/text_only_reply", "stream", "pass"),
        ("gemini", SLOW, "non_stream", "pass"),
        ("gemini", SLOW, "stream", "pass"),
        ("anthropic", "basic/get_time", "non_stream", "error"),
    ]
    assert multiprocessing.active_children() == []  # the workers were stopped and reaped


class _Waiting:
    """Counts the conversations waiting for their MCP tool at once (across forked workers too):
    from the response that asks for the slow tool to the answer after its result."""

    def __init__(self) -> None:
        context = multiprocessing.get_context("fork")
        self.now = context.Value("i", 0)
        self.peak = context.Value("i", 0)

    def wrap(self, reference: Adapter) -> Adapter:
        def response_from_wire(body: Any, **kwargs: Any) -> Any:
            response = reference.response_from_wire(body, **kwargs)
            with self.now.get_lock():
                self.now.value += 1 if response.tool_calls else -1
                self.peak.value = max(self.peak.value, self.now.value)
            return response

        return dataclasses.replace(reference, response_from_wire=response_from_wire)


@pytest.mark.parametrize("jobs", [1, 2])
def test_cases_waiting_for_a_slow_mcp_tool_wait_at_the_same_time(jobs: int) -> None:
    waiting = _Waiting()
    adapters = [waiting.wrap(get_adapter(n)) for n in ("openai_chat", "anthropic", "gemini", "ollama")]
    options = RunOptions(cassette_dir=CASSETTES, jobs=jobs, modes=("non_stream",))
    result = run_suite(_scenarios("basic/get_time", SLOW), adapters, options)
    assert {c.status for c in result.cases} == {"pass"}
    assert waiting.now.value == 0
    assert waiting.peak.value >= 2  # one after another, it would be 1


def test_a_users_adapter_module_works_in_the_workers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "my_adapter_pkg.py").write_text(
        textwrap.dedent(
            """
            import dataclasses
            from conformance.adapters import get_adapter

            ADAPTER = dataclasses.replace(get_adapter("gemini"), name="my_gemini")
            """
        ),
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    argv = ["run", "--adapter", "my_adapter_pkg:ADAPTER", "--scenarios", "basic/*", "--jobs", "2"]
    code = main([*argv, "--cassette-dir", str(CASSETTES), "--report-dir", str(tmp_path / "r"), "--quiet"])
    assert code == 0
    assert (tmp_path / "r" / "report.json").is_file()


def _modules_after(code: str) -> set[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    probe = f"import sys\n{code}\nprint(' '.join(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    return set(done.stdout.splitlines()[-1].split())


def test_help_and_a_run_without_mcp_scenarios_do_not_import_mcp(tmp_path: Path) -> None:
    helped = _modules_after("from conformance.cli import main\nassert main(['--help']) == 0")
    assert "mcp" not in helped
    for jobs in ("1", "2"):
        argv = ["run", "--scenarios", "basic/*", "--adapters", "gemini", "--jobs", jobs, "--quiet"]
        argv += ["--report-dir", str(tmp_path / jobs)]
        ran = _modules_after(f"from conformance.cli import main\nmain({argv!r})")
        assert "mcp" not in ran and "conformance.run.runner" in ran


def test_with_workers_the_parent_leaves_mcp_to_the_waiting_lane(tmp_path: Path) -> None:
    argv = ["run", "--scenarios", "basic/get_time", "--scenarios", SLOW, "--adapters", "gemini", "--jobs", "2"]
    argv += ["--quiet", "--report-dir", str(tmp_path)]
    ran = _modules_after(f"from conformance.cli import main\nassert main({argv!r}) == 0")
    assert "mcp" not in ran and "conformance.run.workers" in ran


def _descendants(pid: int) -> dict[int, str]:
    """Every process below ``pid`` (Linux /proc), with its command line."""
    found: dict[int, str] = {}
    todo = [pid]
    while todo:
        parent = todo.pop()
        for task in Path(f"/proc/{parent}/task").glob("*"):
            try:
                children = (task / "children").read_text().split()
            except OSError:
                continue
            for child in map(int, children):
                try:
                    found[child] = Path(f"/proc/{child}/cmdline").read_bytes().replace(b"\0", b" ").decode()
                except OSError:
                    continue
                todo.append(child)
    return found


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads /proc")
def test_ctrl_c_leaves_no_worker_or_mcp_server_behind(tmp_path: Path) -> None:
    argv = [sys.executable, "-m", "conformance", "run", "--jobs", "2", "--report-dir", str(tmp_path)]
    argv += ["--cassette-dir", str(CASSETTES), "--scenarios", SLOW, "--scenarios", "streaming/*"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.Popen(
        argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        seen: dict[int, str] = {}
        for _ in range(600):  # until the MCP server runs (at most a minute)
            seen.update(_descendants(run.pid))
            if any("mcp-server" in command for command in seen.values()) or run.poll() is not None:
                break
            time.sleep(0.1)
        assert any("mcp-server" in command for command in seen.values()), seen
        assert sum("conformance" in command for command in seen.values()) >= 3  # workers, lane, server
        os.killpg(run.pid, signal.SIGINT)  # what a terminal's Ctrl-C does (the MCP server has its own group)
        _, err = run.communicate(timeout=60)
        for _ in range(100):
            left = {pid: command for pid, command in seen.items() if alive(pid)}
            if not left:
                break
            time.sleep(0.1)
        assert left == {}, err
        assert err.startswith("conformance run: interrupted (Ctrl-C)") and "Traceback" not in err, err
        assert run.returncode in (130, -signal.SIGINT)
    finally:
        if run.poll() is None:
            run.kill()
        run.communicate()


def test_a_worker_whose_case_overran_its_timeout_retires_with_the_abandoned_thread(tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    reference = get_adapter("anthropic")

    def response_from_wire(body: Any, **kwargs: Any) -> Any:
        try:
            (tmp_path / "hung").open("x").close()  # the first call of the run, in whichever worker
        except FileExistsError:
            hang = False
        else:
            hang = True
        with log.open("a") as out:
            out.write(f"{os.getpid()} {'hang' if hang else 'call'}\n")
        # The hung case is abandoned after the timeout: its worker must not run later cases beside it.
        # The other cases last long enough that there are cases left when the timeout comes.
        time.sleep(3600 if hang else 0.3)
        return reference.response_from_wire(body, **kwargs)

    adapter = dataclasses.replace(reference, response_from_wire=response_from_wire)
    scenarios = _scenarios("basic/get_time", "basic/single_call", "basic/text_only_reply", "basic/parallel_calls")
    # 3 s: each passing case (0.3 s asleep) takes up to a second at a load of 10 on 2 cores
    options = RunOptions(cassette_dir=CASSETTES, jobs=2, timeout=3.0, modes=("non_stream",))
    result = run_suite(scenarios, [adapter, adapter, adapter], options)
    statuses = [c.status for c in result.cases]
    assert statuses.count("error") == 1 and statuses.count("pass") == 11
    assert "timed out after 3 s" in next(c.message for c in result.cases if c.status == "error")
    lines = log.read_text().split("\n")
    hung = next(i for i, line in enumerate(lines) if line.endswith("hang"))
    pid = lines[hung].split()[0]
    assert not [line for line in lines[hung + 1 :] if line.startswith(f"{pid} ")]


def test_one_item_workers_yield_the_cpu_to_the_waiting_lane() -> None:
    """The lane (MCP pairs, their servers) is a run's longest chain; workers run ``WORKER_NICENESS``
    lower, the lane at the parent's niceness."""
    import contextlib
    from collections.abc import Callable, Iterator, Sequence

    from conformance.run.workers import WORKER_NICENESS, run_in_workers

    @contextlib.contextmanager
    def worker() -> Iterator[Callable[[int], tuple[int, bool]]]:
        yield lambda index: (os.nice(0), False)

    def lane(chosen: Sequence[int]) -> Iterator[int]:
        return iter([os.nice(0) for _ in chosen])

    mine = os.nice(0)
    niceness = list(run_in_workers(3, jobs=2, worker=worker, crashed=lambda i, how: -1, waiting=[1], run_waiting=lane))
    assert niceness == [min(mine + WORKER_NICENESS, 19), mine, min(mine + WORKER_NICENESS, 19)]
