"""Running a suite's (adapter, scenario) pairs in worker processes, with the results of a serial run.

``conformance run --jobs N`` (``RunOptions.jobs``) hands the pairs to worker processes; threads
cannot share the CPU-bound work of decoding and checking (the GIL). The results come back in the
serial order, so the progress lines, the matrix and the reports are those of ``--jobs 1``, and
``--fail-fast`` stops at the same case.

- **Fork after loading, before any thread.** Workers are forked (the ``fork`` start method) from a
  parent that has loaded the scenarios and adapters and has started no thread and no MCP server,
  so a user's adapter object (``--adapter pkg.module:object``, or one built in a test) and the
  ``-k`` selection reach them as they are: only pair numbers go out, and the cases (frozen
  dataclasses, pickled) come back. The parent stays single-threaded for the whole run, so it can
  fork a new worker at any time.
- **N workers run one pair at a time**, the next pair in serial order as each finishes.
- **The waiting lane.** Pairs whose scenario takes its tools from an MCP server go, all at once, to
  one more process that runs them in threads (``conformance.run.runner.run_pairs``) over one
  server per launch spec: their tool calls mostly wait (``mcp/slow_tool_timeout`` waits 0.25 s for
  its timeout, twice per adapter), and those waits overlap each other and the workers' work. The
  ``mcp`` SDK is imported there only, off the parent's path.
- **A worker that dies** (``os._exit`` in an adapter, a segfault, the OOM killer) costs the pair it
  was running one ERROR per case, saying so; a new worker takes the next pair and the run goes on.
  When the lane dies, its unfinished pairs go back to the queue and run one at a time in workers,
  so that the pair that kills its process is the one named.
- **Stopping.** Every case keeps its timeout (``conformance.run.runner``, in the worker). When the
  run ends early (``--fail-fast``, Ctrl-C, an error) the parent terminates the workers and waits
  for them. Workers ignore SIGINT (a terminal's Ctrl-C reaches the whole process group; the parent
  decides) and close their MCP servers on SIGTERM; a server also dies with the process that started
  it (``conformance.mcp_bridge._spawn``: PR_SET_PDEATHSIG), and a worker whose parent is gone reads
  the end of its pipe and exits.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import signal
import traceback
from collections import deque
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from types import FrameType
from typing import Any

from conformance.adapters.base import Adapter
from conformance.mcp_bridge.scenario_tools import McpPool
from conformance.run.runner import PairResult, RunOptions, pair_modes, run_pair, run_pairs, waits_on_mcp
from conformance.scenarios.values import Scenario
from conformance.verdicts import CaseResult

__all__ = ["can_fork", "run_in_workers"]

_STOP_GRACE = 5.0
"""Seconds a terminated worker has to close its MCP servers before it is killed."""

Pair = tuple[Adapter, Scenario]


def can_fork() -> bool:
    """Whether worker processes can be forked here (POSIX)."""
    return "fork" in multiprocessing.get_all_start_methods()


def run_in_workers(pairs: Sequence[Pair], options: RunOptions) -> Generator[PairResult, None, None]:
    """The results of ``pairs`` in their order, run by ``options.jobs`` worker processes (and the
    waiting lane for MCP pairs). Falls back to this process where ``fork`` is not available.
    Closing the iterator early stops every worker."""
    if not can_fork():
        return run_pairs(pairs, options)
    return _Run(pairs, options).results()


@dataclass(eq=False)
class _Worker:
    """A worker process as the parent sees it."""

    process: BaseProcess
    conn: Connection
    lane: bool
    """The waiting lane (MCP pairs, run concurrently) rather than a one-pair-at-a-time worker."""
    running: list[int] = field(default_factory=list)
    """The pairs sent and not answered yet."""


class _Run:
    def __init__(self, pairs: Sequence[Pair], options: RunOptions) -> None:
        self.pairs = pairs
        self.options = options
        self.context = multiprocessing.get_context("fork")
        self.workers: list[_Worker] = []
        self.done: dict[int, PairResult] = {}
        waiting = [i for i, (adapter, scenario) in enumerate(pairs) if waits_on_mcp(adapter, scenario, options)]
        self.lane_pairs = waiting
        self.queue: deque[int] = deque(i for i in range(len(pairs)) if i not in set(waiting))

    def results(self) -> Generator[PairResult, None, None]:
        finished = False
        try:
            if self.lane_pairs:
                lane = self._start(lane=True)
                lane.running = list(self.lane_pairs)
                lane.conn.send(lane.running)
            self._feed()
            for index in range(len(self.pairs)):
                while index not in self.done:
                    self._receive()
                yield self.done.pop(index)
            finished = True
        finally:
            self._stop(graceful=finished)

    def _start(self, *, lane: bool) -> _Worker:
        parent_end, child_end = self.context.Pipe()
        # The child closes its copies of the parents' ends, so that it reads EOF when the parent dies.
        inherited = [parent_end, *(w.conn for w in self.workers)]
        process = self.context.Process(
            target=_serve,
            args=(child_end, inherited, self.pairs, self.options, lane),
            name="conformance-lane" if lane else "conformance-worker",
            daemon=True,
        )
        process.start()
        child_end.close()
        worker = _Worker(process=process, conn=parent_end, lane=lane)
        self.workers.append(worker)
        return worker

    def _feed(self) -> None:
        """Give every idle one-pair worker the next pair; start workers up to ``jobs``."""
        for worker in list(self.workers):
            if not self.queue:
                return
            if not worker.lane and not worker.running:
                self._send(worker, self.queue.popleft())
        while self.queue and sum(not w.lane for w in self.workers) < self.options.jobs:
            self._send(self._start(lane=False), self.queue.popleft())

    def _send(self, worker: _Worker, index: int) -> None:
        try:
            worker.conn.send(index)
        except OSError:  # it died between two pairs: the pair was not started
            self.queue.appendleft(index)
            self._died(worker)
        else:
            worker.running.append(index)

    def _receive(self) -> None:
        ready = wait([w.conn for w in self.workers])
        for worker in [w for w in self.workers if w.conn in ready]:
            try:
                index, result = worker.conn.recv()
            except (EOFError, OSError):
                self._died(worker)
                continue
            worker.running.remove(index)
            self.done[index] = result
        self._feed()

    def _died(self, worker: _Worker) -> None:
        worker.process.join(_STOP_GRACE)
        worker.conn.close()
        self.workers.remove(worker)
        if worker.lane:  # which of its concurrent pairs crashed it is unknown: run each alone
            self.queue.extendleft(reversed(worker.running))
            return
        how = _exit_text(worker.process.exitcode)
        for index in worker.running:
            adapter, scenario = self.pairs[index]
            message = (
                f"the worker process running {adapter.name} on {scenario.id} died ({how}) before this case "
                "finished: the adapter or a check crashed the interpreter (os._exit, a segfault, out of memory); "
                "the run went on in a new worker"
            )
            cases = [
                CaseResult(adapter=adapter.name, scenario=scenario.id, mode=mode, status="error", message=message)
                for mode in pair_modes(scenario, adapter, self.options)
            ]
            self.done[index] = (cases, {})

    def _stop(self, *, graceful: bool) -> None:
        for worker in self.workers:
            with contextlib.suppress(OSError):
                if graceful:
                    worker.conn.send(None)  # finish: close the MCP servers and exit
                else:
                    worker.process.terminate()
        for worker in self.workers:
            worker.process.join(_STOP_GRACE)
            if worker.process.exitcode is None:
                worker.process.kill()
                worker.process.join()
            worker.conn.close()
        self.workers.clear()


def _exit_text(code: int | None) -> str:
    if code is not None and code < 0:
        with contextlib.suppress(ValueError):
            return f"killed by {signal.Signals(-code).name}"
    return f"exit code {code}"


def _serve(
    conn: Connection, inherited: Sequence[Connection], pairs: Sequence[Pair], options: RunOptions, lane: bool
) -> None:
    """A worker's loop: run the pairs the parent sends, send back each pair's result."""
    for other in inherited:
        other.close()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _exit_on_terminate)
    try:
        if lane:
            chosen: list[int] = conn.recv()
            for index, result in zip(chosen, run_pairs([pairs[i] for i in chosen], options), strict=True):
                conn.send((index, result))
            conn.recv()
            return
        pool = McpPool(start_timeout=options.timeout)  # for a pair the lane could not run
        try:
            while (index := conn.recv()) is not None:
                conn.send((index, _run_alone(pairs[index], options, pool)))
        finally:
            pool.close()
    except (EOFError, BrokenPipeError, SystemExit):
        pass  # the parent is gone or stopped us


def _run_alone(pair: Pair, options: RunOptions, pool: McpPool) -> PairResult:
    adapter, scenario = pair
    provenance: dict[str, Mapping[str, Any]] = {}
    try:
        return run_pair(scenario, adapter, options, provenance=provenance, pool=pool), provenance
    except Exception as exc:  # a bug of ours: the pair's ERROR, not a dead worker
        message = f"internal error in the runner ({type(exc).__name__}: {exc}); please report it"
        trace = traceback.format_exc()
        cases = [
            CaseResult(
                adapter=adapter.name, scenario=scenario.id, mode=mode, status="error", message=message, traceback=trace
            )
            for mode in pair_modes(scenario, adapter, options)
        ]
        return cases, {}


def _exit_on_terminate(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(0)
