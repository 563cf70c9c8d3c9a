"""Worker processes that run numbered items and give the results back in their order (the I/O edge
of ``conformance run`` and ``conformance certify``: ``conformance.run.runner`` and
``conformance.clients.harness`` say what an item is, a pair).

Adapters and clients are other people's code: they run here, never in the parent, so that their
crash, exit, hang, leaked thread or memory blow-up costs only their own cases, and the parent always
writes the reports and exits. Threads cannot share the CPU-bound work of decoding and checking (the
GIL): processes can. The results come back in the items' order, so the progress lines, the matrix
and the reports are those of one worker, and ``--fail-fast`` stops at the same case.

- **Fork after loading, before any thread.** Workers are forked (the ``fork`` start method) from a
  parent that has loaded the scenarios and adapters and has started no thread and no MCP server,
  so a user's adapter object (``--adapter pkg.module:object``, or one built in a test) and the
  ``-k`` selection reach them as they are: only pair numbers go out, and the cases (frozen
  dataclasses, pickled) come back. The parent stays single-threaded for the whole run, so it can
  fork a new worker at any time, and it runs no adapter or client code after loading.
- **N workers run one item at a time** (``--jobs N``; one with ``--jobs 1``), the next item in order
  as each finishes, ``WORKER_NICENESS`` levels below the waiting lane: the lane (its ``mcp``
  import, its servers booting, then its items) is a run's longest chain, and the workers take the
  CPU it leaves.
- **The waiting lane.** The ``waiting`` items (pairs whose scenario takes its tools from an MCP
  server) go, all at once, to one more process that runs them together (``run_waiting``: in
  threads, over one server per launch spec): their tool calls mostly wait (``mcp/slow_tool_timeout``
  waits 0.25 s for its timeout, twice per adapter), and those waits overlap each other and the
  workers' work. The ``mcp`` SDK is imported there only, off the parent's path.
- **A memory limit per process** (``memory_limit``: ``RLIMIT_DATA`` on Linux, ``RLIMIT_AS``
  elsewhere, set in the child after the fork; default ``default_memory_limit()``: a quarter of
  the RAM, at least 1 GiB and at most 4 GiB; ``CONFORMANCE_WORKER_MEMORY`` overrides it: ``2G``,
  ``512M``, ``0`` for none). An adapter that allocates past it gets ``MemoryError`` in its case (an
  ERROR), and the worker retires after the item.
- **A worker that dies** (``os._exit`` in an adapter, a segfault, the OOM killer) costs the item it
  was running: its result is ``crashed(item, failure)`` (one ERROR per case, saying so); a new
  worker takes the next item and the run goes on. When the lane dies, its unfinished items go back
  to the queue and run one at a time in workers, so that the item that kills its process is the one
  named.
- **The watchdog.** Every item has a budget (``budget(item)``, seconds: its cases' timeouts plus a
  grace); a worker that has not answered within it is killed (SIGKILL) and the item is
  ``crashed(item, failure)`` with ``failure.hung``: a loop holding the GIL or a call blocked in C
  cannot stall the run. The lane's budget runs from its last answer (its items run together, in
  order, so each answer comes within one item's budget of the one before).
- **Stopping.** Every case keeps its timeout (``conformance.run.runner``, in the worker); a worker
  whose case overran it, or ran out of memory, retires after answering (the case's thread cannot be
  stopped and would take CPU from every later case there), and a new worker takes the next item. A
  worker ends with ``os._exit`` once its own cleanup (MCP servers) is done, so a non-daemon thread
  an adapter left behind cannot keep it alive; one that does not exit after ``_STOP_GRACE`` seconds
  is killed. When the run ends early (``--fail-fast``, Ctrl-C, an error) the parent terminates the
  workers and waits for them. Workers ignore SIGINT (a terminal's Ctrl-C reaches the whole process
  group; the parent decides) and close their MCP servers on SIGTERM. A worker dies with its parent
  (PR_SET_PDEATHSIG on Linux; elsewhere it reads the end of its pipe and exits), and a server dies
  with the worker that started it (``conformance.mcp_bridge._spawn``), so a SIGKILLed run leaves
  nothing behind.
- **Items asked for one at a time** (``WorkerPool``: the pytest plugin, whose pairs run when their
  tests ask): the same workers, watchdog and memory limit, an item sent when it is asked for; an idle
  worker waits for the next with no deadline.
- **Without fork** (macOS, whose system libraries do not survive a fork, and Windows: ``can_fork()``
  is False) the callers run every item in their own process, in threads with timeouts: a crash or
  ``os._exit`` there ends the run, and a hang in C can stall it.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import re
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Generator, Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from types import FrameType
from typing import Generic, TypeVar

from conformance.errors import UsageError

__all__ = [
    "MEMORY_ENV",
    "WORKER_NICENESS",
    "WorkerFailure",
    "WorkerPool",
    "can_fork",
    "default_memory_limit",
    "exit_despite_threads",
    "exit_text",
    "limit_child_memory",
    "memory_limit",
    "memory_limit_from_env",
    "run_in_workers",
]

_STOP_GRACE = 5.0
"""Seconds a terminated or retiring worker has to close its MCP servers and exit before it is killed."""

T = TypeVar("T")


WORKER_NICENESS = 5
"""How much lower one-item workers run than the waiting lane (``os.nice``)."""

MEMORY_ENV = "CONFORMANCE_WORKER_MEMORY"
"""The environment variable that sets the memory limit of each worker (``2G``, ``512M``, ``0``: none)."""

_GIB = 1 << 30


@dataclass(frozen=True)
class WorkerFailure:
    """Why a worker gave no answer for an item."""

    how: str
    """``exit code 3``, ``killed by SIGSEGV``, or, when ``hung``, ``no answer within 14 s``."""
    hung: bool = False
    """The watchdog killed it: it overran the item's budget (a hang its case timeout could not stop)."""


def can_fork() -> bool:
    """Whether worker processes can be forked here: POSIX, but not macOS, whose system libraries
    do not survive a fork (Python's default there is ``spawn``)."""
    return "fork" in multiprocessing.get_all_start_methods() and sys.platform != "darwin"


def default_memory_limit() -> int:
    """A worker's memory limit when none is given: a quarter of the RAM, between 1 and 4 GiB."""
    try:
        ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 4 * _GIB
    return max(_GIB, min(4 * _GIB, ram // 4))


def memory_limit(value: str | None = None) -> int | None:
    """Bytes per worker (None: no limit) from ``value`` or ``$CONFORMANCE_WORKER_MEMORY`` (``2G``,
    ``1536M``, ``4000000000``, ``0``/``none``); ``default_memory_limit()`` when neither is set.
    ``UsageError`` for a value that is not a size."""
    text = (os.environ.get(MEMORY_ENV, "") if value is None else value).strip()
    if not text:
        return default_memory_limit()
    if text.lower() in ("0", "none", "off", "unlimited"):
        return None
    found = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?", text.lower())
    if found is None:
        raise UsageError(
            f"{MEMORY_ENV}={text!r} is not a size: write e.g. 2G, 1536M or 0 (no limit) for each worker's memory"
        )
    number, unit = found.groups()
    return int(float(number) * 1024 ** " kmgt".index(unit or " "))


def memory_limit_from_env() -> int | None:
    """``memory_limit()``, except that a value of ``$CONFORMANCE_WORKER_MEMORY`` that is not a size
    is reported on stderr (one line) and the default used: a run is not lost to a typo there."""
    try:
        return memory_limit()
    except UsageError as exc:
        limit = default_memory_limit()
        print(f"conformance: warning: {exc}; using {limit / _GIB:g} GiB", file=sys.stderr)
        return limit


def run_in_workers(
    count: int,
    *,
    jobs: int,
    worker: Callable[[], AbstractContextManager[Callable[[int], tuple[T, bool]]]],
    crashed: Callable[[int, WorkerFailure], T],
    budget: Callable[[int], float] | None = None,
    memory: int | None = None,
    waiting: Sequence[int] = (),
    run_waiting: Callable[[Sequence[int]], Iterable[T]] | None = None,
) -> Generator[T, None, None]:
    """The results of items ``0 .. count-1``, in that order, computed by up to ``jobs`` forked workers.

    In each worker, ``worker()`` is entered once and gives the function that runs one item (its
    result, and whether the worker should retire after it: a new worker takes the next item); the
    ``waiting`` items go together to one more process, which iterates ``run_waiting(waiting)`` (their
    results in that order). ``crashed(item, failure)`` is the result of an item whose process died
    or overran ``budget(item)`` seconds (None: no watchdog) and was killed. ``memory``: bytes each
    process may take (None: no limit). Closing the generator early stops every process. Call it from
    a process that runs no other thread (it forks).
    """
    run = _Run(count, jobs, worker, crashed, list(waiting), run_waiting, budget, memory)
    return run.results()


class WorkerPool(Generic[T]):
    """``run_in_workers`` for items asked for one at a time, when they are known only as they come (the
    pytest plugin: an item's pair runs when its test asks): ``run(index)`` sends the item to an idle
    worker, forked when there is none, and waits for its result; the worker then waits for the next
    item, with no watchdog while it waits. A worker that dies, overruns ``budget(index)`` or retires
    costs what ``run_in_workers`` says, and the next item gets a new worker. ``close()`` stops them.
    Workers are forked with what the parent has at that time: ``worker()``'s items must be known to
    them then (an index into a list the parent built before)."""

    def __init__(
        self,
        *,
        worker: Callable[[], AbstractContextManager[Callable[[int], tuple[T, bool]]]],
        crashed: Callable[[int, WorkerFailure], T],
        budget: Callable[[int], float] | None = None,
        memory: int | None = None,
    ) -> None:
        self._run: _Run[T] = _Run(0, 1, worker, crashed, [], None, budget, memory)

    def run(self, index: int) -> T:
        """The result of item ``index`` (``crashed(index, failure)`` if its worker died or hung)."""
        self._run.queue.append(index)
        try:
            self._run._feed()
            while index not in self._run.done:
                self._run._receive()
        except BaseException:  # interrupted (Ctrl-C): no worker is left running an item
            self.close(graceful=False)
            raise
        return self._run.done.pop(index)

    def close(self, *, graceful: bool = True) -> None:
        """Stop every worker: ``graceful`` lets each leave ``worker()`` (its MCP servers close)."""
        self._run.queue.clear()
        self._run._stop(graceful=graceful)


def exit_text(code: int | None) -> str:
    """How a process ended, from its exit code (negative: the signal that killed it)."""
    if code is not None and code < 0:
        with contextlib.suppress(ValueError):
            return f"killed by {signal.Signals(-code).name}"
    return f"exit code {code}"


@dataclass(eq=False)
class _Worker:
    """A worker process as the parent sees it."""

    process: BaseProcess
    conn: Connection
    lane: bool
    """The waiting lane rather than a one-item-at-a-time worker."""
    running: list[int] = field(default_factory=list)
    """The items sent and not answered yet."""
    retiring: bool = False
    """It said it exits after its last answer: it gets no more items."""
    deadline: float | None = None
    """When the watchdog kills it (``time.monotonic``): its item's budget, or its grace to exit."""
    allowed: float = 0.0
    """The seconds that deadline allowed (for the message)."""


class _Run(Generic[T]):
    def __init__(
        self,
        count: int,
        jobs: int,
        worker: Callable[[], AbstractContextManager[Callable[[int], tuple[T, bool]]]],
        crashed: Callable[[int, WorkerFailure], T],
        waiting: list[int],
        run_waiting: Callable[[Sequence[int]], Iterable[T]] | None,
        budget: Callable[[int], float] | None,
        memory: int | None,
    ) -> None:
        self.count = count
        self.jobs = max(1, jobs)
        self.worker = worker
        self.crashed = crashed
        self.run_waiting = run_waiting
        self.budget = budget
        self.memory = memory
        self.context = multiprocessing.get_context("fork")
        self.workers: list[_Worker] = []
        self.done: dict[int, T] = {}
        if run_waiting is None:
            waiting = []
        self.waiting = waiting
        chosen = set(waiting)
        self.queue: deque[int] = deque(i for i in range(count) if i not in chosen)

    def results(self) -> Generator[T, None, None]:
        finished = False
        try:
            if self.waiting:
                lane = self._start(lane=True)
                lane.running = list(self.waiting)
                lane.conn.send(lane.running)
                self._arm(lane)
            self._feed()
            for index in range(self.count):
                while index not in self.done:
                    self._receive()
                yield self.done.pop(index)
            finished = True
        finally:
            self._stop(graceful=finished)

    def _start(self, *, lane: bool) -> _Worker:
        parent_end, child_end = self.context.Pipe()
        # The child closes its copies of the parent's ends, so that it reads EOF when the parent dies.
        inherited = [parent_end, *(w.conn for w in self.workers)]
        target = _serve_lane if lane else _serve
        process = self.context.Process(
            target=target,
            args=(child_end, inherited, os.getpid(), self.memory, self.run_waiting if lane else self.worker),
            name="conformance-lane" if lane else "conformance-worker",
            daemon=True,
        )
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})  # a Ctrl-C mid-fork waits for the parent
        try:
            process.start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        child_end.close()
        worker = _Worker(process=process, conn=parent_end, lane=lane)
        self.workers.append(worker)
        return worker

    def _arm(self, worker: _Worker) -> None:
        """Set the watchdog's deadline for what ``worker`` runs now."""
        if worker.retiring and not worker.running:
            seconds: float | None = _STOP_GRACE
        elif self.budget is None or not worker.running:
            seconds = None
        elif worker.lane:  # from its last answer: each comes within one item's budget of the one before
            seconds = max(self.budget(i) for i in worker.running)
        else:
            seconds = sum(self.budget(i) for i in worker.running)
        worker.allowed = seconds or 0.0
        worker.deadline = None if seconds is None else time.monotonic() + seconds

    def _feed(self) -> None:
        """Give every idle one-item worker the next item; start workers up to ``jobs``."""
        for worker in list(self.workers):
            if not self.queue:
                return
            if not worker.lane and not worker.retiring and not worker.running:
                self._send(worker, self.queue.popleft())
        while self.queue and sum(not w.lane and not w.retiring for w in self.workers) < self.jobs:
            self._send(self._start(lane=False), self.queue.popleft())

    def _send(self, worker: _Worker, index: int) -> None:
        try:
            worker.conn.send(index)
        except OSError:  # it died between two items: this one was not started
            self.queue.appendleft(index)
            self._died(worker)
        else:
            worker.running.append(index)
            self._arm(worker)

    def _receive(self) -> None:
        deadlines = [w.deadline for w in self.workers if w.deadline is not None]
        timeout = max(0.0, min(deadlines) - time.monotonic()) if deadlines else None
        ready = wait([w.conn for w in self.workers], timeout)
        for worker in [w for w in self.workers if w.conn in ready]:
            try:
                index, result, retiring = worker.conn.recv()
            except (EOFError, OSError):
                self._died(worker)
                continue
            worker.retiring = worker.retiring or retiring
            worker.running.remove(index)
            self.done[index] = result
            self._arm(worker)
        now = time.monotonic()
        for worker in [w for w in self.workers if w.deadline is not None and w.deadline <= now]:
            worker.process.kill()  # hung: in C, or holding the GIL, or it will not exit
            self._died(worker, WorkerFailure(f"no answer within {worker.allowed:g} s", hung=True))
        self._feed()

    def _died(self, worker: _Worker, failure: WorkerFailure | None = None) -> None:
        worker.process.join(_STOP_GRACE)
        if worker.process.exitcode is None:
            worker.process.kill()
            worker.process.join()
        worker.conn.close()
        self.workers.remove(worker)
        if worker.lane and len(worker.running) > 1:  # which of its concurrent items did it is unknown: run each alone
            self.queue.extendleft(reversed(worker.running))
            return
        if failure is None:
            failure = WorkerFailure(exit_text(worker.process.exitcode))
        for index in worker.running:
            self.done[index] = self.crashed(index, failure)

    def _stop(self, *, graceful: bool) -> None:
        for worker in self.workers:
            with contextlib.suppress(OSError):
                if graceful:
                    worker.conn.send(None)  # finish: leave ``worker()`` (MCP servers close) and exit
                else:
                    worker.process.terminate()
        for worker in self.workers:
            worker.process.join(_STOP_GRACE)
            if worker.process.exitcode is None:
                worker.process.kill()
                worker.process.join()
            worker.conn.close()
        self.workers.clear()


def _detach(inherited: Sequence[Connection], parent: int, memory: int | None) -> None:
    for other in inherited:
        other.close()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole process group: the parent decides
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # blocked by the parent around the fork
    signal.signal(signal.SIGTERM, _exit_on_terminate)
    _die_with(parent)
    if memory is not None:
        _limit_memory(memory)


def _limit_memory(limit: int) -> None:
    """Cap this process's memory at ``limit`` bytes (an allocation past it raises ``MemoryError``).
    ``RLIMIT_DATA`` on Linux (the heap and private mappings: what the process really takes, not the
    address space its threads reserve), ``RLIMIT_AS`` elsewhere."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX
        return
    kind = resource.RLIMIT_DATA if sys.platform.startswith("linux") else resource.RLIMIT_AS
    with contextlib.suppress(ValueError, OSError):
        _, hard = resource.getrlimit(kind)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(kind, (limit, hard))


def limit_child_memory(pid: int, limit: int | None) -> None:
    """Cap the memory of the child process ``pid`` (one not forked from here: ``--python``'s driver)
    at ``limit`` bytes, as a worker's (Linux's ``prlimit``; nothing elsewhere, or for None)."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX
        return
    if limit is None or not hasattr(resource, "prlimit") or not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(ValueError, OSError):
        _, hard = resource.prlimit(pid, resource.RLIMIT_DATA)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.prlimit(pid, resource.RLIMIT_DATA, (limit, hard))


def exit_despite_threads(code: int) -> None:
    """End the program with ``code`` now if a thread that is not a daemon is still running (one an
    adapter or client module started when it was imported, or any thread where fork is not used):
    Python would wait for it forever after the reports are written. The output is flushed first;
    without such a thread this returns and the program ends as usual."""
    main = threading.main_thread()
    if not any(t is not main and not t.daemon and t.is_alive() for t in threading.enumerate()):
        return
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


def _die_with(parent: int) -> None:
    """Be killed when the parent dies (SIGKILLed, it cannot stop us), so that nothing outlives a run:
    our MCP servers die with us in turn (``conformance.mcp_bridge._spawn``). See prctl(2)."""
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)  # 1 = PR_SET_PDEATHSIG
    if os.getppid() != parent:  # it died before the signal was armed
        os._exit(0)


def _serve(
    conn: Connection,
    inherited: Sequence[Connection],
    parent: int,
    memory: int | None,
    worker: Callable[[], AbstractContextManager[Callable[[int], tuple[T, bool]]]],
) -> None:
    """A worker's loop: run the items the parent sends, one at a time; send back each result."""
    _detach(inherited, parent, memory)
    with contextlib.suppress(OSError, AttributeError):
        # The waiting lane (and the MCP servers it boots) is a run's longest chain: one-item workers
        # take the CPU it leaves (benchmarks/README.md, suite_speed.py).
        os.nice(WORKER_NICENESS)
    try:
        with worker() as run_one:
            while (index := conn.recv()) is not None:
                result, retire = run_one(index)
                conn.send((index, result, retire))
                if retire:
                    break  # the parent sends it nothing more and forks a new worker
    except (EOFError, BrokenPipeError, SystemExit):
        pass  # the parent is gone or stopped us
    _exit()


def _serve_lane(
    conn: Connection,
    inherited: Sequence[Connection],
    parent: int,
    memory: int | None,
    run_waiting: Callable[[Sequence[int]], Iterable[T]],
) -> None:
    """The waiting lane: run the items the parent sends together; send back each result."""
    _detach(inherited, parent, memory)
    try:
        chosen: list[int] = conn.recv()
        for index, result in zip(chosen, run_waiting(chosen), strict=True):
            conn.send((index, result, False))
        conn.recv()  # stay until the parent says the run is over
    except (EOFError, BrokenPipeError, SystemExit):
        pass
    _exit()


def _exit() -> None:
    """End the worker now: a thread an adapter left running (non-daemon, or stuck in a timed-out
    case) must not keep it alive, nor run the interpreter's exit handlers."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(0)


def _exit_on_terminate(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(0)
