"""The runner: scenarios x adapters x {non-streaming, streaming}, replayed offline from cassettes.

For each (adapter, scenario) pair it finds the cassette by the traffic the adapter declares
(``<cassette-dir>/<traffic format>/<id>.yaml``: its prompt format when it is prompt-based, else its
wire format; never by its name), loads it once, and for each mode drives the conversation
(``conformance.run.conversation``) over a replaying ``Transport`` that opens no socket, then runs
the check families on the outcome.

Adapters are other people's code. Where processes can be forked (``can_fork``), every pair runs in
a worker process (``conformance.run.workers``; ``jobs`` of them, one with ``jobs=1``) with a
memory limit and a watchdog: an adapter that exits, crashes the interpreter, hangs in C, leaves a
thread running or runs out of memory costs its own pair's cases an ERROR saying so, a new worker
takes the next pair, and the run always ends with every case. The cases, their order and the
reports are the same for every ``jobs``. Pairs with MCP tools run concurrently, in threads of one
more process, so that their tool calls' waits (a slow tool timing out) overlap with other work
instead of following one another. Without fork (macOS, Windows) the pairs run in this process.

Inside a worker, every case runs in a thread with a timeout: an adapter that raises costs its case
one ERROR verdict with the traceback; one that hangs costs an ERROR after ``timeout`` seconds (the
thread is abandoned and its worker retires after the pair). Reading the cassette has the same
timeout, so a slow or huge file costs only its pair. A missing or corrupt cassette is an ERROR
naming the file and the ``conformance record`` line that makes it (``--live`` for a live cassette,
which is judged against the decoding it recorded, not the scenario's script: ``conformance.run.live``);
a cassette recorded from another version of its scenario (``stale_message``) is STALE, with no check
run, naming the file and the line that re-records it.
A scenario requiring a capability the adapter does not declare is UNSUPPORTED. An adapter may declare known gaps
(``Adapter.known_gaps``: check id, or ``check@scenario-glob``, -> reason): a failing check there is
XFAIL, a passing one STALE. A scenario taking its tools from an MCP server (``tools: {mcp: ...}``)
uses the run's shared server for its launch spec
(``conformance.mcp_bridge.scenario_tools.McpPool``), stopped when the run ends; a server that fails
to start or dies is an ERROR naming its command and the tail of its stderr.
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
import queue
import shlex
import threading
import time
import traceback
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from conformance.adapters.base import Adapter
from conformance.checks import FAMILIES, CaseContext, chosen, run_checks
from conformance.checks.equivalences import EquivalenceTable
from conformance.checks.mutation import watched
from conformance.errors import CassetteError, ConformanceError, McpCommandRefusedError, McpServerError, ScenarioError
from conformance.mcp_bridge.progress import progress_notes
from conformance.mcp_bridge.scenario_tools import McpExecutor, McpPool, open_scenario_tools
from conformance.run.conversation import DEFAULT_MODELS, ConversationOutcome, run_conversation
from conformance.run.fingerprint import suite_info, suite_version
from conformance.run.live import expected_scenario, for_replay, live_command, recorded_decodings
from conformance.run.shard import Shard, shard_pairs
from conformance.run.workers import MEMORY_ENV, WorkerFailure, can_fork, memory_limit_from_env, run_in_workers
from conformance.scenarios import bundled
from conformance.scenarios.values import MODES, Mode, Scenario
from conformance.traffic.cassettes import Cassette, load_cassette
from conformance.traffic.recorder import record_command
from conformance.traffic.replay import ReplayBackend
from conformance.traffic.transport import Exchange, Transport
from conformance.verdicts import AdapterInfo, CaseResult, CheckVerdict, RunResult, ScenarioInfo, Status, worst

__all__ = [
    "WAITING_THREADS",
    "WATCHDOG_GRACE",
    "PairResult",
    "RunOptions",
    "adapter_info",
    "apply_gaps",
    "case_result",
    "cassette_for",
    "chosen_pairs",
    "collect",
    "exchange_view",
    "find_cassette",
    "pair_budget",
    "pair_modes",
    "read_cassette",
    "run_pair",
    "run_pairs",
    "run_result",
    "run_suite",
    "stale_message",
    "strained",
    "suite_version",
    "waits_on_mcp",
]

WAITING_THREADS = 16
"""Pairs with MCP tools run at once (their cases mostly wait for a server's answer)."""

WATCHDOG_GRACE = 5.0
"""Seconds a worker may take beyond its pair's timeouts before the watchdog kills it
(``pair_budget``); the timeout itself is added again, so a slow machine is not taken for a hang."""

PairResult = tuple[list[CaseResult], dict[str, Mapping[str, Any]]]
"""The cases of one (adapter, scenario) pair, and the provenance of the cassette they read."""


@dataclass(frozen=True, kw_only=True)
class RunOptions:
    cassette_dir: Path = field(default_factory=bundled.cassettes_dir)
    """The bundled cassettes by absolute path, the installed package's or the checkout's, so the API
    works from any folder (a relative path given here is read from the current folder)."""
    user_cassette_dirs: tuple[Path, ...] = ()
    """``--cassette-dir``: searched first, in order; a cassette there wins over ``cassette_dir``'s."""
    record_args: tuple[str, ...] = ()
    """Appended to every ``conformance record`` line the run prints (``--scenarios-dir``/``--cassette-dir``)."""
    families: tuple[str, ...] = tuple(FAMILIES)
    """The check families run on every case (``--checks``)."""
    checks: frozenset[str] | None = None
    """``--checks`` naming check ids: of the families' verdicts, only these are kept (a family's
    internal error too), and a case is judged by them alone; None: every verdict."""
    modes: tuple[Mode, ...] = MODES
    timeout: float = 30.0
    """Seconds per case (conversation and checks)."""
    fail_fast: bool = False
    exhaustive: bool = False
    seed: int = 0
    select: Callable[[str, str, str], bool] | None = None
    """``-k``: (adapter, scenario id, mode) -> run this case?"""
    jobs: int = 1
    """Worker processes (``conformance.run.workers``) that run the pairs one at a time."""
    shard: Shard | None = None
    """``--shard K/N``: run only this shard's pairs (``conformance.run.shard``)."""
    isolate: bool = True
    """Run the adapters in worker processes where fork is available (even with ``jobs=1``); False
    runs every case in this process (threads with timeouts), as is done where fork is not."""
    worker_memory: int | None = field(default_factory=memory_limit_from_env)
    """Bytes each worker process may take (None: no limit); ``$CONFORMANCE_WORKER_MEMORY`` or
    ``conformance.run.workers.default_memory_limit()`` by default."""


def adapter_info(adapter: Adapter, model: str | None = None) -> AdapterInfo:
    """The adapter as the report names it, with the model asked for on its wire (``model``, else
    the wire's default: ``conformance.run.conversation.DEFAULT_MODELS``)."""
    return AdapterInfo(
        name=adapter.name,
        wire_format=adapter.wire_format,
        capabilities=tuple(sorted(adapter.capabilities)),
        known_gaps=dict(adapter.known_gaps),
        model=model or DEFAULT_MODELS.get(adapter.wire_format),
    )


def cassette_for(cassette_dir: Path, adapter: Adapter, scenario: Scenario) -> Path:
    """Where the pair's cassette is: chosen by the traffic the adapter declares (its prompt format,
    else its wire format), never by its name."""
    return cassette_dir / adapter.traffic_format / f"{scenario.id}.yaml"


def find_cassette(dirs: Sequence[Path], traffic_format: str, scenario_id: str) -> Path:
    """The pair's cassette in the first of ``dirs`` that holds it, else where the first would hold it."""
    paths = [d / traffic_format / f"{scenario_id}.yaml" for d in dirs]
    return next((p for p in paths if p.is_file()), paths[0])


def stale_message(cassette: Cassette, scenario: Scenario, path: Path, command: str) -> str | None:
    """Why the cassette is stale (recorded from another version of the scenario), or None. A
    cassette without a fingerprint, or a scenario not read from a file, is never judged stale."""
    recorded = (cassette.provenance or {}).get("scenario_sha256")
    if not recorded or not scenario.fingerprint or recorded == scenario.fingerprint:
        return None
    return (
        f"stale cassette {path}: recorded from another version of {scenario.path} (scenario sha256 "
        f"{str(recorded)[:12]}, now {scenario.fingerprint[:12]}); re-record it with `{command}`"
    )


def run_suite(
    scenarios: Sequence[Scenario],
    adapters: Sequence[Adapter],
    options: RunOptions,
    *,
    progress: Callable[[CaseResult], None] | None = None,
    problems: Sequence[str] = (),
) -> RunResult:
    """Run every chosen case; one failing case never stops the others (unless ``fail_fast``)."""
    cases: list[CaseResult] = []
    provenance: dict[str, Mapping[str, Any]] = {}
    pairs = chosen_pairs(adapters, scenarios, options)
    results = _in_workers(pairs, options) if options.isolate and can_fork() else run_pairs(pairs, options)
    with contextlib.closing(results):  # fail-fast: stop the threads or workers still running
        for cases_of_pair, found in results:
            provenance.update(found)
            if collect(cases_of_pair, cases, progress, fail_fast=options.fail_fast):
                break
    return run_result(adapters, scenarios, cases, provenance=provenance, problems=problems)


def chosen_pairs(
    adapters: Sequence[Adapter], scenarios: Sequence[Scenario], options: RunOptions
) -> list[tuple[Adapter, Scenario]]:
    """The (adapter, scenario) pairs the run goes through, in order: every one, or ``options.shard``'s."""
    return shard_pairs(
        [(adapter, scenario) for adapter in adapters for scenario in scenarios],
        options.shard,
        key=lambda pair: (pair[0].name, pair[1].id),
        selected=lambda pair: bool(pair_modes(pair[1], pair[0], options)),
    )


def collect(
    found: Iterable[CaseResult],
    cases: list[CaseResult],
    progress: Callable[[CaseResult], None] | None,
    *,
    fail_fast: bool,
) -> bool:
    """Append ``found`` to ``cases``, reporting each to ``progress``; True when the run must stop
    (``fail_fast`` and a case failed, errored or went stale)."""
    for case in found:
        cases.append(case)
        if progress is not None:
            progress(case)
        if fail_fast and case.status in ("fail", "error", "stale"):
            return True
    return False


def run_result(
    adapters: Sequence[Adapter],
    scenarios: Sequence[Scenario],
    cases: Sequence[CaseResult],
    *,
    provenance: Mapping[str, Mapping[str, Any]] | None = None,
    problems: Sequence[str] = (),
    model: str | None = None,
    equivalences: EquivalenceTable | None = None,
) -> RunResult:
    """The run's result: its adapters (or clients' columns, each with the ``model`` asked for, else
    its wire's default), scenarios and cases, and the suite that judged them (``equivalences``: the
    table used, None: the suite's)."""
    return RunResult(
        suite_version=suite_version(),
        suite=suite_info(scenarios, equivalences),
        adapters=tuple(adapter_info(a, model) for a in adapters),
        scenarios=tuple(
            ScenarioInfo(
                id=s.id,
                behavior=s.behavior,
                source=s.source,
                requires=tuple(sorted(s.requires)),
                file=None if s.path.resolve().is_relative_to(bundled.scenarios_dir().resolve()) else str(s.path),
            )
            for s in scenarios
        ),
        cases=tuple(cases),
        provenance=dict(provenance or {}),
        problems=tuple(problems),
    )


def run_pairs(
    pairs: Sequence[tuple[Adapter, Scenario]],
    options: RunOptions,
) -> Generator[PairResult, None, None]:
    """The results of ``pairs``, in their order, run in this process.

    Pairs whose scenario takes its tools from an MCP server start at once in up to
    ``WAITING_THREADS`` threads (their waits overlap); the others run one after another in the
    calling thread. Closing the iterator early cancels the waiting pairs not started yet, waits
    for those running, and stops the MCP servers.
    """
    pool = McpPool(start_timeout=options.timeout)
    waiting = [i for i, (adapter, scenario) in enumerate(pairs) if waits_on_mcp(adapter, scenario, options)]
    pool.prestart(list({id(pairs[i][1]): pairs[i][1] for i in waiting}.values()))
    threads = ThreadPoolExecutor(min(len(waiting), WAITING_THREADS) or 1, thread_name_prefix="conformance-pair")
    started: dict[int, Future[PairResult]] = {}
    try:
        for i in waiting:
            started[i] = threads.submit(_run_one, *pairs[i], options, pool)
        for i, (adapter, scenario) in enumerate(pairs):
            yield started.pop(i).result() if i in started else _run_one(adapter, scenario, options, pool)
    finally:
        threads.shutdown(wait=True, cancel_futures=True)
        pool.close()


def pair_modes(scenario: Scenario, adapter: Adapter, options: RunOptions) -> list[Mode]:
    """The modes of the pair's cases: those the scenario and the run allow, and ``-k`` selects."""
    modes = [m for m in scenario.modes if m in options.modes]
    if options.select is not None:
        modes = [m for m in modes if options.select(adapter.name, scenario.id, m)]
    return modes


def waits_on_mcp(adapter: Adapter, scenario: Scenario, options: RunOptions) -> bool:
    """Does the pair run cases against an MCP server that mostly wait (to run beside the others)?

    Not with ``exhaustive``: decoding every 2-way cut of every stream makes its streamed cases
    CPU-bound, and a dozen of them sharing one interpreter (one core, the GIL) would overrun their
    timeouts; they run one at a time like the other pairs.
    """
    return (
        scenario.mcp is not None
        and not options.exhaustive
        and not (scenario.requires - adapter.capabilities)
        and scenario.wire_excluded(adapter.name, adapter.wire_format) is None
        and bool(pair_modes(scenario, adapter, options))
    )


def _run_one(adapter: Adapter, scenario: Scenario, options: RunOptions, pool: McpPool) -> PairResult:
    provenance: dict[str, Mapping[str, Any]] = {}
    return run_pair(scenario, adapter, options, provenance=provenance, pool=pool), provenance


def pair_budget(cases: int, timeout: float) -> float:
    """Seconds the watchdog gives a worker for a pair of ``cases`` cases: each case's ``timeout``,
    one more for reading the cassette, one more for an MCP server to start, and ``WATCHDOG_GRACE``."""
    return (cases + 2) * timeout + WATCHDOG_GRACE


def _in_workers(pairs: Sequence[tuple[Adapter, Scenario]], options: RunOptions) -> Generator[PairResult, None, None]:
    """``run_pairs``, with the pairs run by ``options.jobs`` worker processes (``conformance.run.workers``)."""

    @contextlib.contextmanager
    def worker() -> Iterator[Callable[[int], tuple[PairResult, bool]]]:
        pool = McpPool(start_timeout=options.timeout)  # for an MCP pair the waiting lane could not run

        def run_alone(index: int) -> tuple[PairResult, bool]:
            """The pair's result, and whether this process should retire: a case that overran its
            timeout left its thread running (it would take CPU from every later case here), or one
            ran out of memory."""
            adapter, scenario = pairs[index]
            try:
                result = _run_one(adapter, scenario, options, pool)
            except MemoryError:  # what the adapter gave filled the worker: not a bug of ours
                _out_of_memory.append(True)
                message = f"the pair ran out of memory outside its cases' threads ({_memory_note(options)})"
                modes = pair_modes(scenario, adapter, options)
                result = ([case_result(adapter, scenario, m, "error", message=message) for m in modes], {})
            except Exception as exc:  # a bug of ours: the pair's ERROR, not a dead worker
                message = f"internal error in the runner ({type(exc).__name__}: {exc}); please report it"
                trace = traceback.format_exc()
                modes = pair_modes(scenario, adapter, options)
                result = (
                    [case_result(adapter, scenario, m, "error", message=message, traceback=trace) for m in modes],
                    {},
                )
            return result, strained()

        try:
            yield run_alone
        finally:
            pool.close()

    def crashed(index: int, failure: WorkerFailure) -> PairResult:
        adapter, scenario = pairs[index]
        if failure.hung:
            message = (
                f"the worker process running {adapter.name} on {scenario.id} gave {failure.how} and was killed:"
                " the adapter or a check hung where the case's timeout cannot stop it (a loop holding the GIL,"
                f" a call blocked in C); --timeout changes the limit ({options.timeout:g} s per case);"
                " the run went on in a new worker"
            )
        else:
            message = (
                f"the worker process running {adapter.name} on {scenario.id} died ({failure.how}) before this case"
                " finished: the adapter or a check crashed the interpreter (os._exit, a segfault, out of memory);"
                " the run went on in a new worker"
            )
        modes = pair_modes(scenario, adapter, options)
        return [case_result(adapter, scenario, m, "error", message=message) for m in modes], {}

    return run_in_workers(
        len(pairs),
        jobs=options.jobs,
        worker=worker,
        crashed=crashed,
        budget=lambda index: pair_budget(len(pair_modes(pairs[index][1], pairs[index][0], options)), options.timeout),
        memory=options.worker_memory,
        waiting=[i for i, (adapter, scenario) in enumerate(pairs) if waits_on_mcp(adapter, scenario, options)],
        run_waiting=lambda chosen: run_pairs([pairs[i] for i in chosen], options),
    )


def read_cassette(path: Path, timeout: float) -> Cassette | str:
    """The cassette at ``path``, read within ``timeout`` seconds (in a case thread, like a case), or
    why it cannot be read: a slow, huge or hostile file costs only the pair that reads it."""
    box: dict[str, Cassette] = {}

    def work() -> None:
        box["cassette"] = load_cassette(path)

    error, _, timed_out = _with_timeout(work, timeout)
    if timed_out:
        return f"reading it took longer than {timeout:g} s (a huge or hostile file?); --timeout changes the limit"
    if isinstance(error, CassetteError):
        return str(error)
    if error is not None:
        return f"{type(error).__name__}: {error}"
    return box["cassette"]


def run_pair(
    scenario: Scenario,
    adapter: Adapter,
    options: RunOptions,
    *,
    provenance: dict[str, Mapping[str, Any]] | None = None,
    pool: McpPool | None = None,
) -> list[CaseResult]:
    """The cases of one (adapter, scenario) pair: one per mode the scenario and the run allow."""
    modes = pair_modes(scenario, adapter, options)
    if not modes:
        return []
    excluded = scenario.wire_excluded(adapter.name, adapter.wire_format)
    if excluded is not None:
        return [case_result(adapter, scenario, mode, "unsupported", message=excluded) for mode in modes]
    missing = sorted(scenario.requires - adapter.capabilities)
    if missing:
        message = f"requires {', '.join(missing)}, which {adapter.name} does not declare"
        return [case_result(adapter, scenario, mode, "unsupported", message=message) for mode in modes]
    command = shlex.join(  # bundled adapters bear their format's name
        [*shlex.split(record_command(adapter.traffic_format, scenario.id)), *options.record_args]
    )
    path = find_cassette((*options.user_cassette_dirs, options.cassette_dir), adapter.traffic_format, scenario.id)
    if not path.is_file():
        message = f"missing cassette {path}: record it with `{command}`"
        return [case_result(adapter, scenario, mode, "error", message=message) for mode in modes]
    cassette = read_cassette(path, options.timeout)
    if isinstance(cassette, str):
        message = f"cannot read cassette {path}: {cassette}; re-record it with `{command}`"
        return [case_result(adapter, scenario, mode, "error", message=message, cassette=str(path)) for mode in modes]
    live = live_command(cassette.provenance, adapter.traffic_format, scenario.id)
    if live is not None:  # a live cassette is re-recorded live
        command = shlex.join([*shlex.split(live), *options.record_args])
    cassette = for_replay(cassette)  # a live one's requests without the sampling fields its recorder added
    if cassette.problems:
        message = f"cassette {path}: {'; '.join(cassette.problems)}; re-record it with `{command}`"
        return [case_result(adapter, scenario, mode, "error", message=message, cassette=str(path)) for mode in modes]
    if provenance is not None and cassette.provenance:
        provenance[str(path)] = cassette.provenance
    stale = stale_message(cassette, scenario, path, command)
    if stale is not None:  # the adapter is not at fault: the recording is out of date (STALE, not ERROR)
        return [case_result(adapter, scenario, mode, "stale", message=stale, cassette=str(path)) for mode in modes]
    if scenario.mcp is not None:  # the run's shared server, or one for the pair's cases
        try:
            if pool is not None:
                ready, executor = pool.open(scenario)
                return _run_modes(ready, adapter, modes, cassette, path, command, options, executor)
            with open_scenario_tools(scenario, start_timeout=options.timeout) as (ready, executor):
                return _run_modes(ready, adapter, modes, cassette, path, command, options, executor)
        except (McpServerError, ScenarioError) as exc:
            what = "server failed" if isinstance(exc, McpServerError) else "tools cannot be offered"
            message = str(exc) if isinstance(exc, McpCommandRefusedError) else f"the scenario's MCP {what}: {exc}"
            return [
                case_result(adapter, scenario, mode, "error", message=message, cassette=str(path)) for mode in modes
            ]
    return _run_modes(scenario, adapter, modes, cassette, path, command, options, None)


def _run_modes(
    scenario: Scenario,
    adapter: Adapter,
    modes: Sequence[Mode],
    cassette: Cassette,
    path: Path,
    command: str,
    options: RunOptions,
    executor: McpExecutor | None,
) -> list[CaseResult]:
    results: list[CaseResult] = []
    non_stream: ConversationOutcome | None = None
    if "stream" in modes and "non_stream" not in modes and "non_stream" in scenario.modes:
        # a streamed case run alone (-k ...::stream, the rerun command of a failing case) still has its
        # fold compared with the non-streamed decoding, as in a full run: decoded here, not reported
        _, non_stream = _run_case(scenario, adapter, "non_stream", cassette, path, command, options, None, executor)
    for mode in modes:
        judged = expected_scenario(scenario, cassette.provenance, mode)  # a live cassette: what was recorded
        case, outcome = _run_case(judged, adapter, mode, cassette, path, command, options, non_stream, executor)
        if mode == "non_stream":
            non_stream = outcome
        results.append(case)
    return results


def _run_case(
    scenario: Scenario,
    adapter: Adapter,
    mode: Mode,
    cassette: Cassette,
    path: Path,
    command: str,
    options: RunOptions,
    non_stream: ConversationOutcome | None,
    executor: McpExecutor | None = None,
) -> tuple[CaseResult, ConversationOutcome | None]:
    box: dict[str, Any] = {}
    exchanges: list[Exchange] = []

    def work() -> None:
        backend = ReplayBackend(cassette, command=command)
        transport = Transport("http://127.0.0.1", wire=adapter.wire_format, backend=backend)
        guarded, watch = watched(adapter) if "translation" in options.families else (adapter, None)
        try:
            outcome = run_conversation(scenario, guarded, transport, mode=mode, executor=executor)
        finally:
            exchanges.extend(transport.exchanges)
            transport.close()
        if executor is not None and executor.failure is not None:
            raise executor.failure  # the MCP server died: ERROR, not a conversation that merely stopped
        box["outcome"] = outcome
        ctx = CaseContext(
            scenario=scenario,
            adapter=guarded,
            mode=mode,
            outcome=outcome,
            exchanges=tuple(exchanges),
            non_stream=non_stream,
            exhaustive=options.exhaustive,
            seed=options.seed,
            recorded=tuple(cassette.interactions[index].request for index in backend.played),
            provenance=cassette.provenance,
            recorded_decoding=recorded_decodings(cassette.provenance, mode),
        )
        verdicts = run_checks(ctx, options.families, only=options.checks)
        if watch is not None:  # every call watched
            verdicts = (*verdicts, *chosen([watch.verdict()], options.checks))
        box["verdicts"] = verdicts

    started = time.perf_counter()
    error, trace, timed_out = _with_timeout(work, options.timeout)
    duration = time.perf_counter() - started
    outcome: ConversationOutcome | None = box.get("outcome")
    common: dict[str, Any] = {"cassette": str(path), "duration": duration}
    if timed_out:
        message = (
            f"timed out after {options.timeout:g} s (the adapter hung or a check never finished);"
            " --timeout changes the limit"
        )
        return case_result(adapter, scenario, mode, "error", message=message, exchanges=exchanges, **common), outcome
    if error is not None:
        where = "replay" if isinstance(error, ConformanceError) else "the adapter"
        message = f"{where} raised {type(error).__name__}: {error}"
        if isinstance(error, McpServerError):  # raised again from the executor: the server died mid-run
            message = f"the scenario's MCP server failed: {error}"
        if isinstance(error, MemoryError):
            message = f"{where} raised MemoryError{f': {error}' if str(error) else ''} ({_memory_note(options)})"
        case = case_result(
            adapter, scenario, mode, "error", message=message, traceback=trace, exchanges=exchanges, **common
        )
        return case, outcome
    verdicts = apply_gaps(box["verdicts"], adapter, scenario)
    status = worst([v.status for v in verdicts])
    message = ""
    if outcome is not None and outcome.stopped and status == "pass":
        message = f"conversation stopped early: {outcome.stopped}"
    if outcome is not None and executor is not None and status == "pass":  # what MCP calls reported on the way
        message = "; ".join([m for m in (message, *progress_notes(outcome.history)) if m])
    case = case_result(
        adapter,
        scenario,
        mode,
        status,
        checks=verdicts,
        message=message,
        exchanges=exchanges if status in ("fail", "error", "stale") else [],
        **common,
    )
    return case, outcome


class _Worker:
    """A daemon thread that runs cases one after the other (a thread per case costs a GIL hand-off
    on every start). A case that overruns its timeout keeps the thread: it is abandoned, and the
    next case gets a new worker."""

    def __init__(self) -> None:
        self.jobs: queue.SimpleQueue[tuple[Callable[[], None], dict[str, Any], threading.Event] | None] = (
            queue.SimpleQueue()
        )
        self.thread = threading.Thread(target=self._loop, name="conformance-case", daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while (job := self.jobs.get()) is not None:
            work, box, done = job
            try:
                work()
            except BaseException as exc:  # reported as the case's ERROR
                box["error"] = exc
                box["trace"] = traceback.format_exc()
            finally:
                done.set()


_workers = threading.local()
"""Each thread that runs cases has its own case worker (``run_pairs`` runs MCP pairs in threads)."""
_abandoned: list[threading.Thread] = []
"""Case threads left running past their timeout (a worker process with one alive retires)."""
_out_of_memory: list[bool] = []
"""Set when a case ran out of memory (a worker process where one did retires)."""


def _forget_workers() -> None:
    global _workers
    _workers = threading.local()  # a forked child has none of its parent's threads
    _abandoned.clear()
    _out_of_memory.clear()


os.register_at_fork(after_in_child=_forget_workers)


def strained() -> bool:
    """Whether this process should not run more cases: a case's thread still runs past its timeout,
    or a case ran out of memory (the heap may be left fragmented or near its limit)."""
    return bool(_out_of_memory) or any(thread.is_alive() for thread in _abandoned)


def _with_timeout(work: Callable[[], None], timeout: float) -> tuple[BaseException | None, str | None, bool]:
    worker: _Worker | None = getattr(_workers, "worker", None)
    if worker is None:
        worker = _workers.worker = _Worker()
    box: dict[str, Any] = {}
    done = threading.Event()
    worker.jobs.put((work, box, done))
    if not done.wait(timeout):
        _workers.worker = None  # abandoned with its hung case; the next case starts a new worker
        _abandoned[:] = [thread for thread in (*_abandoned, worker.thread) if thread.is_alive()]
        return None, None, True
    if isinstance(box.get("error"), MemoryError):
        _out_of_memory.append(True)
    return box.get("error"), box.get("trace"), False


def _memory_note(options: RunOptions) -> str:
    """What to say of a case that ran out of memory: the limit it ran under, and how to change it."""
    if options.worker_memory is None or not (options.isolate and can_fork()):
        return "out of memory"
    return (
        f"out of memory: each worker process may take {options.worker_memory / 2**30:.3g} GiB;"
        f" {MEMORY_ENV} changes the limit (e.g. {MEMORY_ENV}=8G, 0 for none)"
    )


def apply_gaps(verdicts: Sequence[CheckVerdict], adapter: Adapter, scenario: Scenario) -> tuple[CheckVerdict, ...]:
    """The verdicts with the adapter's known gaps applied: a failing check there is XFAIL, a passing one STALE."""
    gaps = adapter.known_gaps
    if not gaps:
        return tuple(verdicts)
    out: list[CheckVerdict] = []
    for v in verdicts:
        reason = _gap_reason(gaps, v.check, scenario.id)
        if reason is None or v.status not in ("pass", "fail"):
            out.append(v)
        elif v.status == "fail":
            out.append(replace(v, status="xfail", message=f"known gap: {reason}"))
        else:
            out.append(replace(v, status="stale", message=f"declared as a known gap ({reason}) but passes now"))
    return tuple(out)


def _gap_reason(gaps: Mapping[str, str], check: str, scenario_id: str) -> str | None:
    for key, reason in gaps.items():
        gap_check, _, pattern = key.partition("@")
        if gap_check == check and (not pattern or fnmatch.fnmatchcase(scenario_id, pattern)):
            return reason
    return None


def case_result(adapter: Adapter, scenario: Scenario, mode: Mode, status: Status, **fields: Any) -> CaseResult:
    """A case's result; ``exchanges`` (``Exchange`` values) are kept as their report view."""
    exchanges = fields.pop("exchanges", None) or []
    return CaseResult(
        adapter=adapter.name,
        scenario=scenario.id,
        mode=mode,
        status=status,
        exchanges=tuple(exchange_view(e) for e in exchanges),
        **fields,
    )


def exchange_view(exchange: Exchange) -> Mapping[str, Any]:
    """What a report shows of an exchange (no headers: they carry the keys)."""
    body = exchange.response_body
    text = body.decode("utf-8", "replace")
    return {
        "method": exchange.method,
        "url": exchange.url,
        "request": exchange.request_json,
        "status": exchange.status,
        "stream": exchange.stream,
        "response": text if len(text) <= 20_000 else text[:20_000] + f"... ({len(text)} characters)",
        "error": exchange.error,
    }
