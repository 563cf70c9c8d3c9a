"""Certify a black-box client: serve each scenario's recorded answers over loopback, drive the
client turn by turn, capture what it really sent, and judge it with the suite's checks.

For each wire the client speaks and each scenario and mode, the emulator plays the scenario's
cassette for that wire (``Emulator.play_cassette``: the answer is picked by the request's turn and
stream mode, with the recorded chunk boundaries; fault scenarios are their recorded faults). Each
turn, the client gets a ``Call`` (the scenario's system prompt, tools and the history so far, with
the ids the client itself decoded; the tools its MCP server lists at that turn when the scenario's
calls change the list, ``tools.mcp.list_changes``) and returns a ``Response`` or stream events, or raises
(``conformance.clients.invoke``). Every request the server received during the turn is kept
(``ClientTurn``); the last one is the turn's wire request, read back with the reference adapter's
``request_from_wire`` so the translation and round-trip checks judge the client's own body. Checks
that judge our own decoder or encoder spelling step aside (``CaseContext.client``) and the
``client.*`` checks run. Verdicts, check ids and reports are those of ``conformance run``; a client
on several wires shows as one column per wire (``name/wire``).

Every case has its own per-turn timeout; one failing case never stops the run. An in-process
client is other people's code: where fork is available the pairs run in ``jobs`` worker processes
(``conformance.run.workers``: each with its own loopback server, event loop and MCP servers), one
pair at a time each, with a memory limit and a watchdog, so that a client that exits, crashes the
interpreter, hangs in C, leaves a thread running or runs out of memory costs its own pair's cases
an ERROR saying so, and the run goes on in a new worker (a worker retires after a turn that
overran its timeout). With ``jobs`` above 1, the pairs whose scenario takes its tools from an MCP
server run one after another in one more process (the lane): their servers start once, not once
per worker, and their waits overlap the workers' work. The cases come back in the pairs' order,
so the output is the same for every ``jobs``. A ``--python`` client (``conformance.clients.remote``)
already runs in a child process of its own, restarted after a crash or a hang: with ``jobs=1`` its
pairs run here; with more, each worker (and the lane) starts a child of its own
(``RemoteClient.again``) after the fork, and stops it when it ends, so no two processes share one
pipe. ``shard``: only that shard's pairs run (``conformance.run.shard``).

Wherever the client runs, its network reaches loopback alone (``conformance.traffic.network_guard``,
in this process, the workers and their Python children): each address it tried beyond loopback
during a turn is refused and a finding of the case (``client.one_request``). Every process it starts
carries the run's token in its environment and is ended when the worker (or the run) ends, a
double-forked one included (``conformance.clients.child.end_tree``). A ``--python`` child that dies,
hangs or breaks its protocol makes the turn ``crashed``: the case's ERROR naming what happened.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shlex
import time
import traceback
import uuid
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from conformance.adapters import detect_adapter, for_format
from conformance.adapters.base import Adapter, SchemaChange, WireRequest
from conformance.adapters.openai_responses import resolve_item_references
from conformance.assembly import fold
from conformance.checks import FAMILIES, CaseContext, run_checks, verdict
from conformance.checks.client_request import request_differences
from conformance.checks.duties import left_to_caller
from conformance.checks.equivalences import EquivalenceTable
from conformance.clients.child import TOKEN_ENV, end_tree
from conformance.clients.contract import Call, Client, client_duties
from conformance.clients.evidence import ClientTurn, SentRequest
from conformance.clients.intercept import CHUNKS_NOTE, PROVIDER_URLS, breaks_streams, intercepting
from conformance.clients.invoke import EventLoop, TurnResult, invoke, strained
from conformance.clients.remote import RemoteClient
from conformance.emulator import Emulator
from conformance.errors import McpCommandRefusedError, McpServerError, ScenarioError, UsageError
from conformance.mcp_bridge.scenario_tools import McpExecutor, McpPool
from conformance.model import ErrorEvent, ErrorInfo, Finish, Message, Request, Response, StreamEvent
from conformance.run import runner
from conformance.run.conversation import (
    DEFAULT_MODELS,
    ConversationOutcome,
    ToolListChange,
    TurnOutcome,
    build_request,
    conversation_tools,
    follow_turn,
    next_tools,
)
from conformance.run.runner import (
    WATCHDOG_GRACE,
    apply_gaps,
    case_result,
    collect,
    find_cassette,
    read_cassette,
    run_result,
    stale_message,
)
from conformance.run.shard import Shard, shard_pairs
from conformance.run.workers import MEMORY_ENV, WorkerFailure, can_fork, memory_limit_from_env, run_in_workers
from conformance.scenarios import bundled
from conformance.scenarios.values import MODES, Mode, Scenario
from conformance.traffic.cassettes import Cassette, RecordedRequest
from conformance.traffic.network_guard import guard_children, network_guard, refusal_mark, refused_since
from conformance.traffic.transport import Exchange
from conformance.verdicts import CaseResult, CheckVerdict, Finding, RunResult, worst

__all__ = [
    "FAKE_API_KEY",
    "OBJECT_ARGUMENTS",
    "CertifyOptions",
    "Harness",
    "case_modes",
    "certify",
    "chosen_pairs",
    "client_adapter",
]

FAKE_API_KEY = "sk-conformance-0000000000000000"
"""The key every call carries: the loopback server ignores it, and no report may show it."""


@dataclass(frozen=True, kw_only=True)
class CertifyOptions:
    cassette_dir: Path = field(default_factory=bundled.cassettes_dir)
    """The bundled cassettes by absolute path, the installed package's or the checkout's, so the API
    works from any folder (a relative path given here is read from the current folder)."""
    user_cassette_dirs: tuple[Path, ...] = ()
    """``--cassette-dir``: searched first, in order; a cassette there wins over ``cassette_dir``'s."""
    record_args: tuple[str, ...] = ()
    """Appended to every ``conformance record`` line (``--scenarios-dir``/``--cassette-dir``)."""
    wires: tuple[str, ...] | None = None
    """The wires to certify (None: every wire the client declares)."""
    families: tuple[str, ...] = tuple(FAMILIES)
    """The check families run on every case (``--checks``)."""
    checks: frozenset[str] | None = None
    """``--checks`` naming check ids: of the families' verdicts, only these are kept, and a case is
    judged by them alone; None: every verdict."""
    modes: tuple[Mode, ...] = MODES
    timeout: float = 30.0
    """Seconds per turn."""
    select: Callable[[str, str, str], bool] | None = None
    """``-k``: (client/wire, scenario id, mode) -> run this case?"""
    fail_fast: bool = False
    model: str | None = None
    equivalences: EquivalenceTable | None = None
    """The accepted equivalences (``docs/equivalences.md`` with ``--equivalences`` files); None: the suite's."""
    intercept: bool = False
    """Answer in-process with vcrpy at the provider's real address (``conformance.clients.intercept``)
    instead of over loopback: for clients that cannot take a base URL."""
    isolate: bool = True
    """Run an in-process client in worker processes where fork is available; False runs it here."""
    jobs: int = 1
    """Worker processes that run the pairs, one pair at a time each (``--jobs``)."""
    shard: Shard | None = None
    """``--shard K/N``: run only this shard's pairs (``conformance.run.shard``)."""
    worker_memory: int | None = field(default_factory=memory_limit_from_env)
    """Bytes each worker process may take (None: no limit); ``$CONFORMANCE_WORKER_MEMORY`` or
    ``conformance.run.workers.default_memory_limit()`` by default."""
    port: int = 0
    """The port the emulator listens on (0: a free one). A fixed port (a gateway configured to call
    it, ``conformance.servers.gateway``) runs every case in this process, one at a time."""
    case_verdicts: Callable[[CaseContext], Sequence[CheckVerdict]] | None = None
    """More verdicts for each judged case, after the families' (a gateway's downstream answers judged
    by ``conformance.checks.server``)."""
    review: Callable[[CaseContext, tuple[CheckVerdict, ...]], tuple[CheckVerdict, ...]] | None = None
    """The last word on a judged case's verdicts, before the duties (a gateway: findings on what
    the caller's wire cannot carry become notes, ``conformance.servers.gateway.caller_wire_review``)."""


def client_adapter(client: Client, wire: str) -> Adapter:
    """The column a client on ``wire`` is reported as: the reference adapter of the wire (its
    ``request_from_wire`` reads the client's bodies back) under the client's name, capabilities,
    known gaps (``wire:check[@glob]`` keys only on that wire) and request differences (``wire:glob``
    keys only on that wire)."""
    reference = for_format(wire)
    gaps: dict[str, str] = {}
    for key, reason in client.known_gaps.items():
        prefix, colon, rest = key.partition(":")
        if not colon or "@" in prefix:
            gaps[key] = reason
        elif prefix == wire:
            gaps[rest] = reason
    return dataclasses.replace(
        reference,
        name=f"{client.name}/{wire}",
        capabilities=frozenset(client.wires[wire]),
        known_gaps=gaps,
        request_differences=request_differences(client, wire),
    )


def certify(
    scenarios: Sequence[Scenario],
    client: Client,
    options: CertifyOptions,
    *,
    progress: Callable[[CaseResult], None] | None = None,
    problems: Sequence[str] = (),
) -> RunResult:
    """Run every chosen (wire, scenario, mode) case of ``client``; the run's ``RunResult``."""
    wires = [w for w in client.wires if options.wires is None or w in options.wires]
    if options.wires is not None and (missing := [w for w in options.wires if w not in client.wires]):
        raise UsageError(f"{client.name} does not speak {', '.join(missing)} (it declares {', '.join(client.wires)})")
    adapters = [client_adapter(client, wire) for wire in wires]
    pairs = chosen_pairs(adapters, scenarios, options)
    cases: list[CaseResult] = []
    remote = isinstance(client, RemoteClient)
    here = not options.isolate or not can_fork() or (remote and options.jobs <= 1) or options.port != 0
    run = uuid.uuid4().hex
    results = _in_process(pairs, client, options, run) if here else _in_workers(pairs, client, options, run)
    try:
        with contextlib.closing(results):  # fail-fast: stop the workers still running
            for found in results:
                if collect(found, cases, progress, fail_fast=options.fail_fast):
                    break
    finally:  # what the client started in a worker the watchdog killed, too
        end_tree(None, f"{run}.", prefix=True)
    return run_result(
        adapters, scenarios, cases, problems=problems, model=options.model, equivalences=options.equivalences
    )


def _in_process(
    pairs: Sequence[tuple[Adapter, Scenario]], client: Client, options: CertifyOptions, run: str
) -> Generator[list[CaseResult], None, None]:
    """The cases of each pair, run in this process."""
    with (
        _guarded(f"{run}.main"),
        Emulator(port=options.port) as server,
        EventLoop() as loop,
        McpPool(start_timeout=options.timeout) as pool,
    ):
        driver = Harness(client=client, server=server, loop=loop, pool=pool, options=options)
        for adapter, scenario in pairs:
            yield driver.pair(adapter, scenario)


def _pair_budget(adapter: Adapter, scenario: Scenario, options: CertifyOptions) -> float:
    """Seconds the watchdog gives a worker for a pair: a timeout per turn and one for the checks, in
    each mode; one to read the cassette, one for an MCP server to start; ``WATCHDOG_GRACE``."""
    modes = len(case_modes(adapter, scenario, options))
    return (modes * (len(scenario.turns) + 1) + 2) * options.timeout + WATCHDOG_GRACE


def _in_workers(
    pairs: Sequence[tuple[Adapter, Scenario]], client: Client, options: CertifyOptions, run: str
) -> Generator[list[CaseResult], None, None]:
    """The cases of each pair, run by ``options.jobs`` worker processes, one pair at a time each
    (``conformance.run.workers``); a ``RemoteClient`` gets a child of its own in each worker."""

    @contextlib.contextmanager
    def driving() -> Iterator[Harness]:
        with (
            _guarded(f"{run}.{os.getpid()}"),
            _own(client) as mine,
            Emulator() as server,
            EventLoop() as loop,
            McpPool(start_timeout=options.timeout) as pool,
        ):
            yield Harness(client=mine, server=server, loop=loop, pool=pool, options=options)

    def guarded(driver: Harness, index: int) -> list[CaseResult]:
        """The pair's cases; a bug of ours is the pair's ERROR, not a dead worker."""
        adapter, scenario = pairs[index]
        try:
            return driver.pair(adapter, scenario)
        except Exception as exc:
            message = f"internal error in the harness ({type(exc).__name__}: {exc}); please report it"
            trace = traceback.format_exc()
            return [
                case_result(adapter, scenario, m, "error", message=message, traceback=trace)
                for m in case_modes(adapter, scenario, options)
            ]

    @contextlib.contextmanager
    def worker() -> Iterator[Callable[[int], tuple[list[CaseResult], bool]]]:
        with driving() as driver:

            def run_alone(index: int) -> tuple[list[CaseResult], bool]:
                """The pair's cases, and whether this process should retire (a turn overran its timeout
                and may still run, or something ran out of memory)."""
                return guarded(driver, index), strained() or runner.strained() or driver.out_of_memory

            yield run_alone

    def run_waiting(chosen: Sequence[int]) -> Iterator[list[CaseResult]]:
        """The pairs whose scenario takes its tools from an MCP server, one after another in one
        process (the lane): their servers start once there, not once in every worker, and their
        waits (a slow tool timing out) overlap the workers' work."""
        with driving() as driver:
            for index in chosen:
                yield guarded(driver, index)

    def crashed(index: int, failure: WorkerFailure) -> list[CaseResult]:
        adapter, scenario = pairs[index]
        where = f"the worker process running {adapter.name} on {scenario.id}"
        if failure.hung:
            message = (
                f"{where} gave {failure.how} and was killed: the client or a check hung where the turn's"
                " timeout cannot stop it (a loop holding the GIL, a call blocked in C); --timeout changes"
                f" the limit ({options.timeout:g} s per turn); the run went on in a new worker"
            )
        else:
            message = (
                f"{where} died ({failure.how}) before this case finished: the client or a check crashed the"
                " interpreter (os._exit, a segfault, out of memory); the run went on in a new worker"
            )
        return [
            case_result(adapter, scenario, m, "error", message=message) for m in case_modes(adapter, scenario, options)
        ]

    starting = client.start_timeout if isinstance(client, RemoteClient) else 0.0  # its child starts in the worker
    return run_in_workers(
        len(pairs),
        jobs=options.jobs,
        worker=worker,
        crashed=crashed,
        # --jobs 1 is one process at a time, as it says; with more, the MCP pairs take the lane
        waiting=[i for i, pair in enumerate(pairs) if options.jobs > 1 and _waits_on_mcp(*pair, options)],
        run_waiting=run_waiting,
        budget=lambda index: _pair_budget(*pairs[index], options) + starting,
        memory=options.worker_memory,
    )


OBJECT_ARGUMENTS: Mapping[tuple[str, Mode], str] = {
    ("anthropic", "non_stream"): "a whole Anthropic answer carries tool_use.input as an object (wire-formats.md §3c)",
    ("gemini", "non_stream"): "Gemini carries functionCall.args as a JSON object (wire-formats.md §4c)",
    ("gemini", "stream"): "Gemini carries functionCall.args as a JSON object (wire-formats.md §4c)",
    ("ollama", "non_stream"): "Ollama carries a call's arguments as a JSON object (wire-formats.md §5c)",
    ("ollama", "stream"): "Ollama carries a call's arguments as a JSON object (wire-formats.md §5c)",
}
"""(wire, mode) where a provider sends arguments as an object: no provider sends malformed argument text
there, which the scenarios tagged ``needs-string-arguments`` play (the emulator can only imitate it)."""


def _impossible_answer(scenario: Scenario, wire: str, mode: Mode) -> str | None:
    """Why a client is not judged on this case: an answer no provider of the wire sends (None: judged)."""
    why = OBJECT_ARGUMENTS.get((wire, mode))
    if why is None or "needs-string-arguments" not in scenario.tags:
        return None
    return (
        f"{why}: no provider sends the malformed argument text this scenario plays, so a client is not judged"
        " on it (the emulator can only imitate it; scenarios/README.md)"
    )


def _waits_on_mcp(adapter: Adapter, scenario: Scenario, options: CertifyOptions) -> bool:
    """Does the pair run cases against an MCP server (to run in the lane)?"""
    return (
        scenario.mcp is not None
        and not (scenario.requires - adapter.capabilities)
        and scenario.wire_excluded(adapter.name, adapter.wire_format) is None
        and bool(case_modes(adapter, scenario, options))
    )


@contextlib.contextmanager
def _guarded(token: str) -> Iterator[None]:
    """The network guard, in this process and its Python children (``network_guard``,
    ``guard_children``): every address beyond loopback is refused, and each refusal is a finding.
    Every process the client starts meanwhile carries ``token`` in its environment and is ended
    with the block (``conformance.clients.child.end_tree``), a double-forked one included."""
    saved = os.environ.get(TOKEN_ENV)
    os.environ[TOKEN_ENV] = token
    try:
        with network_guard(), guard_children():
            yield
    finally:
        if saved is None:
            os.environ.pop(TOKEN_ENV, None)
        else:
            os.environ[TOKEN_ENV] = saved
        end_tree(None, token)


@contextlib.contextmanager
def _own(client: Client) -> Iterator[Client]:
    """The client a worker drives: ``client`` itself, or for a ``RemoteClient`` (whose pipe belongs to
    the parent) a new child started here, stopped when the worker ends: at once (killed) when the
    worker was told to stop (Ctrl-C, ``--fail-fast``), so that nothing outlives the run."""
    if not isinstance(client, RemoteClient):
        yield client
        return
    mine = client.again()
    try:
        yield mine
    except BaseException:
        mine.close(kill=True)
        raise
    mine.close()


def chosen_pairs(
    columns: Sequence[Adapter], scenarios: Sequence[Scenario], options: CertifyOptions
) -> list[tuple[Adapter, Scenario]]:
    """The (wire column, scenario) pairs the certification goes through, in order: every one, or
    ``options.shard``'s."""
    return shard_pairs(
        [(column, scenario) for column in columns for scenario in scenarios],
        options.shard,
        key=lambda pair: (pair[0].name, pair[1].id),
        selected=lambda pair: bool(case_modes(*pair, options)),
    )


def case_modes(adapter: Adapter, scenario: Scenario, options: CertifyOptions) -> list[Mode]:
    """The modes of the pair's cases: those the scenario and the run allow, and ``-k`` selects."""
    modes = [m for m in scenario.modes if m in options.modes]
    if options.select is not None:
        modes = [m for m in modes if options.select(adapter.name, scenario.id, m)]
    return modes


@dataclass
class Harness:
    """The run's server, event loop and MCP servers, driving one client: ``pair`` gives the cases of
    one (wire, scenario) pair, ``case`` one case, ``converse`` the conversation alone (what the client
    did, before any check: ``benchmarks/client_overhead.py`` times the parts)."""

    client: Client
    server: Emulator
    loop: EventLoop
    pool: McpPool
    options: CertifyOptions
    out_of_memory: bool = False
    """A case ran out of memory here (a worker process where one did retires)."""
    refused: list[tuple[int, str]] = field(default_factory=list)
    """The case's refused network attempts so far: (turn, the address and how)."""

    def pair(self, adapter: Adapter, scenario: Scenario) -> list[CaseResult]:
        options = self.options
        modes = case_modes(adapter, scenario, options)
        if not modes:
            return []
        excluded = scenario.wire_excluded(adapter.name, adapter.wire_format)
        if excluded is not None:
            return [case_result(adapter, scenario, m, "unsupported", message=excluded) for m in modes]
        missing = sorted(scenario.requires - adapter.capabilities)
        if missing:
            message = f"requires {', '.join(missing)}, which {adapter.name} does not declare"
            return [case_result(adapter, scenario, m, "unsupported", message=message) for m in modes]
        impossible = {m: why for m in modes if (why := _impossible_answer(scenario, adapter.wire_format, m))}
        played = iter(self._played(adapter, scenario, [m for m in modes if m not in impossible]))
        return [
            case_result(adapter, scenario, m, "unsupported", message=impossible[m]) if m in impossible else next(played)
            for m in modes
        ]

    def _played(self, adapter: Adapter, scenario: Scenario, modes: list[Mode]) -> list[CaseResult]:
        """The cases of ``modes``, played from the pair's cassette."""
        if not modes:
            return []
        options = self.options
        path = find_cassette((*options.user_cassette_dirs, options.cassette_dir), adapter.wire_format, scenario.id)
        command = shlex.join(
            [
                *("conformance", "record", "--emulator", "--adapter", adapter.wire_format),
                *("--scenario", scenario.id, *options.record_args),
            ]
        )
        cassette = read_cassette(path, options.timeout)  # within the timeout: a huge file costs only its pair
        if isinstance(cassette, str):
            message = f"cannot read cassette {path}: {cassette}; record it with `{command}`"
            return [case_result(adapter, scenario, m, "error", message=message) for m in modes]
        if cassette.problems:
            message = f"cassette {path}: {'; '.join(cassette.problems)}; re-record it with `{command}`"
            return [case_result(adapter, scenario, m, "error", message=message) for m in modes]
        stale = stale_message(cassette, scenario, path, command)
        if stale is not None:
            return [case_result(adapter, scenario, m, "stale", message=stale, cassette=str(path)) for m in modes]
        executor: McpExecutor | None = None
        if scenario.mcp is not None:
            try:
                scenario, executor = self.pool.open(scenario)
            except (McpServerError, ScenarioError) as exc:
                refused = isinstance(exc, McpCommandRefusedError)
                message = str(exc) if refused else f"the scenario's MCP server failed: {exc}"
                return [case_result(adapter, scenario, m, "error", message=message) for m in modes]
        results: list[CaseResult] = []
        non_stream: ConversationOutcome | None = None
        for mode in modes:
            if mode == "stream" and "streaming" not in adapter.capabilities:
                message = f"{adapter.name} does not declare streaming"
                results.append(case_result(adapter, scenario, mode, "unsupported", message=message))
                continue
            if mode == "stream" and options.intercept and breaks_streams(cassette):
                message = "vcrpy interception cannot break a stream as recorded; certify over loopback to play it"
                results.append(case_result(adapter, scenario, mode, "unsupported", message=message))
                continue
            case, outcome = self.case(adapter, scenario, mode, cassette, str(path), non_stream, executor)
            if mode == "non_stream":
                non_stream = outcome
            results.append(case)
        return results

    def case(
        self,
        adapter: Adapter,
        scenario: Scenario,
        mode: Mode,
        cassette: Cassette,
        path: str,
        non_stream: ConversationOutcome | None,
        executor: McpExecutor | None,
    ) -> tuple[CaseResult, ConversationOutcome | None]:
        started = time.perf_counter()
        common: dict[str, Any] = {"cassette": path}
        self.refused = []
        try:
            outcome, turns, exchanges, broke = self.converse(adapter, scenario, mode, cassette, executor)
        except MemoryError:  # what the client gave (or left running) filled the worker: not a bug of ours
            self.out_of_memory = True
            message = f"the case ran out of memory while the client was driven ({self._memory_note()})"
            return case_result(adapter, scenario, mode, "error", message=message, **common), None
        except Exception as exc:  # a bug of ours: the case's ERROR, never the run's end
            message = f"internal error in the harness ({type(exc).__name__}: {exc}); please report it"
            trace = traceback.format_exc()
            return case_result(adapter, scenario, mode, "error", message=message, traceback=trace, **common), None
        if broke is not None:
            duration = time.perf_counter() - started
            if self.refused:
                broke += "; " + _refusals_message(self.refused)
            return (
                case_result(adapter, scenario, mode, "error", message=broke, exchanges=exchanges, duration=duration),
                outcome,
            )
        ctx = CaseContext(
            scenario=scenario,
            adapter=adapter,
            mode=mode,
            outcome=outcome,
            exchanges=tuple(exchanges),
            non_stream=non_stream,
            client=tuple(turns),
            provenance=cassette.provenance,
            equivalences=self.options.equivalences,
        )
        duties = client_duties(self.client, adapter.wire_format)
        verdicts = run_checks(ctx, self.options.families, only=self.options.checks)
        if self.options.case_verdicts is not None:
            more = self.options.case_verdicts(ctx)
            verdicts = (*verdicts, *(v for v in more if self.options.checks is None or v.check in self.options.checks))
        if self.options.review is not None:
            verdicts = self.options.review(ctx, tuple(verdicts))
        verdicts = _with_refusals(verdicts, self.refused)
        verdicts = apply_gaps(left_to_caller(verdicts, ctx, duties), adapter, scenario)
        status = worst([v.status for v in verdicts])
        message = f"conversation stopped early: {outcome.stopped}" if outcome.stopped and status == "pass" else ""
        if self.options.intercept and mode == "stream":
            message = "; ".join(m for m in (message, CHUNKS_NOTE) if m)
        kept = exchanges if status in ("fail", "error", "stale") else []
        duration = time.perf_counter() - started
        return (
            case_result(
                adapter,
                scenario,
                mode,
                status,
                checks=verdicts,
                message=message,
                exchanges=kept,
                duration=duration,
                **common,
            ),
            outcome,
        )

    def converse(
        self, adapter: Adapter, scenario: Scenario, mode: Mode, cassette: Cassette, executor: McpExecutor | None
    ) -> tuple[ConversationOutcome, list[ClientTurn], list[Exchange], str | None]:
        """Drive every turn; the outcome, what the client did, the exchanges, and why the case is
        an ERROR (a turn that timed out or returned something that is not a result), if it is."""
        with contextlib.ExitStack() as stack:
            if self.options.intercept:
                capture: _Capture = stack.enter_context(intercepting(cassette))
                base_url = PROVIDER_URLS[adapter.wire_format]
            else:
                self.server.play_cassette(cassette)
                capture, base_url = _Served(self.server), self.server.base_url
            # tools from an MCP server whose list may change: the conversation's own session, its first list
            scenario = stack.enter_context(conversation_tools(scenario, executor))
            return self._turns(adapter, scenario, mode, capture, base_url, executor, cassette)

    def _turns(
        self,
        adapter: Adapter,
        scenario: Scenario,
        mode: Mode,
        capture: _Capture,
        base_url: str,
        executor: McpExecutor | None,
        cassette: Cassette,
    ) -> tuple[ConversationOutcome, list[ClientTurn], list[Exchange], str | None]:
        # the wire's default model, the one the cassettes were recorded asking for (``--model`` overrides
        # it; conversation.MODEL_CHOICES names the page that shows each served). A library whose
        # behaviour depends on the model name (litellm 1.110 echoes Gemini call ids only for model names
        # it classes as Gemini 3+) is judged on the provider's current default family, and on another
        # model with --model (scripts/certify_libraries.py's variants)
        model = self.options.model or DEFAULT_MODELS[adapter.wire_format]
        history: list[Message] = []
        outcomes: list[TurnOutcome] = []
        turns: list[ClientTurn] = []
        exchanges: list[Exchange] = []
        stopped: str | None = None
        broke: str | None = None
        changes: tuple[SchemaChange, ...] | None = None
        tool_changes: list[ToolListChange] = []
        for turn in scenario.turns:
            if turn.user:
                history.append(Message(role="user", parts=turn.user))
            request = build_request(scenario, history, model=model, stream=mode == "stream")
            call = Call.of(
                request,
                wire=adapter.wire_format,
                base_url=base_url,
                api_key=FAKE_API_KEY,
                timeout=self.options.timeout,
                turn=turn.index,
                scenario=scenario.id,
            )
            # what the caller gave, as the client could know it (a gateway: the request as its
            # downstream wire carries it, ``Client.caller_request``); the checks compare with this
            caller = getattr(self.client, "caller_request", None)
            given: Request = caller(call) if callable(caller) else request
            before = capture.count()
            slack = float(getattr(self.client, "turn_slack", 0.0))  # a client timing its own turns (--python)
            mark = refusal_mark()
            result = invoke(self.client, call, self.loop, timeout=self.options.timeout + slack)
            self.refused += [(turn.index, address) for address in refused_since(mark)]
            everything = capture.sent_since(before)
            sent = [s for s in everything if detect_adapter(s.path) == adapter.wire_format]
            side = tuple(s for s in everything if detect_adapter(s.path) != adapter.wire_format)
            turns.append(
                ClientTurn(
                    turn=turn.index,
                    asked_stream=request.stream,
                    sent=tuple(sent),
                    side=side,
                    result=result,
                    recorded=_recorded(cassette, sent),
                    api_key=call.api_key,
                )
            )
            exchanges += [_exchange(s, base_url) for s in sent]
            refused = capture.refusal(before) if isinstance(capture, _Served) else None
            if refused is not None:  # the cassette's problem, not the client's (docs/emulator.md)
                broke = f"turn {turn.index}: {refused}"
                break
            if result.returned == "timeout":
                broke = f"turn {turn.index}: {result.exception} (the client hung); --timeout changes the limit"
                break
            if result.returned == "invalid":
                broke = f"turn {turn.index}: {result.exception} (see docs/clients.md)"
                break
            if result.returned == "crashed":  # a --python child is restarted; a gateway's message says all
                again = "; the next case starts a new one" if isinstance(self.client, RemoteClient) else ""
                broke = f"turn {turn.index}: {result.exception}{again}"
                break
            if result.returned == "raised" and (result.exception or "").startswith("builtins.MemoryError"):
                self.out_of_memory = True
                broke = f"turn {turn.index}: the client raised MemoryError ({self._memory_note()})"
                break
            if not sent:
                stopped = f"turn {turn.index}: the client sent no request" + (
                    f" (it raised {result.exception})" if result.exception else ""
                )
                break
            if changes is None:  # the wire's and the client's rewrites, once for each tool list
                changes = _schema_changes(self.client, adapter, given)
            # a Responses item the client sends by reference (store defaults to true) is the item an
            # earlier answer of this case gave (openai_responses.resolve_item_references)
            served = [s.response_body for t in turns[:-1] for s in t.sent] + [s.response_body for s in sent[:-1]]
            answered = _turn_outcome(turn.index, given, sent[-1], result, changes, served)
            outcomes.append(answered)
            goes_on, stopped = follow_turn(scenario, turn, answered, history, executor)
            if not goes_on:
                break
            change = next_tools(scenario, turn, executor)
            if change is not None:  # the server's list changed: the next Call gives the client the new one
                tool_changes.append(change)
                scenario = dataclasses.replace(scenario, tools=change.tools)
                changes = None  # the schema rewrites of the new tools
        outcome = ConversationOutcome(
            scenario=scenario.id,
            adapter=adapter.name,
            mode=mode,
            turns=tuple(outcomes),
            stopped=stopped,
            history=tuple(history),
            tool_changes=tuple(tool_changes),
        )
        return outcome, turns, exchanges, broke

    def _memory_note(self) -> str:
        """What to say of a turn that ran out of memory: the limit it ran under, and how to change it."""
        limit = self.options.worker_memory
        if limit is None or not (self.options.isolate and can_fork()) or isinstance(self.client, RemoteClient):
            return "out of memory"
        return (
            f"out of memory: each worker process may take {limit / 2**30:.3g} GiB;"
            f" {MEMORY_ENV} changes the limit (e.g. {MEMORY_ENV}=8G, 0 for none)"
        )


NETWORK_CHECK = "client.one_request"
"""The check a refused network attempt is a finding of: the turn's requests went somewhere besides
the loopback server it was given."""


def _refusals_message(refused: Sequence[tuple[int, str]]) -> str:
    shown = ", ".join(f"{address} on turn {turn}" for turn, address in refused[:5])
    more = f" and {len(refused) - 5} more" if len(refused) > 5 else ""
    return f"the client tried to reach {shown}{more} outside loopback: refused (docs/clients.md, 'The network')"


def _with_refusals(verdicts: Sequence[CheckVerdict], refused: Sequence[tuple[int, str]]) -> tuple[CheckVerdict, ...]:
    """``verdicts`` with a finding of ``NETWORK_CHECK`` for each refused network attempt (20 at most,
    then one saying how many more): a library's traffic beyond the loopback server (telemetry, a
    redirect followed to another host, an address of its own) is refused and never silent."""
    if not refused:
        return tuple(verdicts)
    findings = [
        Finding(
            check=NETWORK_CHECK,
            message=(
                f"the client tried to reach {address} outside the loopback server it was given (Call.base_url):"
                " refused, as every address beyond loopback is while a client is certified"
            ),
            path="$",
            expected="loopback",
            actual=address,
            turn=turn,
        )
        for turn, address in refused[:20]
    ]
    if len(refused) > 20:
        turn = refused[20][0]
        message = f"and {len(refused) - 20} more attempts to reach addresses outside loopback, each refused"
        findings.append(Finding(check=NETWORK_CHECK, message=message, path="$", expected="loopback", turn=turn))
    kept = [v for v in verdicts if v.check != NETWORK_CHECK]
    before = next((v for v in verdicts if v.check == NETWORK_CHECK), None)
    merged = verdict(NETWORK_CHECK, [*(before.findings if before is not None else ()), *findings])
    return (*kept, merged)


class _Capture(Protocol):
    """Where a turn's requests are seen: the loopback server, or the in-process interception."""

    def count(self) -> int: ...

    def sent_since(self, before: int) -> list[SentRequest]: ...


@dataclass(frozen=True)
class _Served:
    """The requests the loopback server received and what it answered them."""

    server: Emulator

    def count(self) -> int:
        return self.server.received

    def refusal(self, before: int) -> str | None:
        """Why the server refused to play a recorded answer since request ``before`` (a redirect
        that would send the client off loopback, ``PlayedAnswer.refused``), if it did."""
        return next((p.refused for p in self.server.played if p.request >= before and p.refused), None)

    def sent_since(self, before: int) -> list[SentRequest]:
        requests = self.server.requests_since(before)  # numbered past the log's bound
        played = {p.request: p for p in self.server.played}
        sent: list[SentRequest] = []
        for received in requests:
            answer = played.get(received.number)
            try:
                body = json.loads(received.body) if received.body else None
            except (ValueError, RecursionError):  # a body nested past the stack: answered with a 400
                body = None
            sent.append(
                SentRequest(
                    method=received.method,
                    path=received.path,
                    headers=tuple(received.headers.items()),
                    body=body,
                    stream=answer.stream if answer is not None else False,
                    status=answer.status if answer is not None else None,
                    response_body=answer.body if answer is not None else b"",
                    answered_turn=answer.turn if answer is not None else None,
                    interaction=answer.interaction if answer is not None else None,
                )
            )
        return sent


def _recorded(cassette: Cassette, sent: Sequence[SentRequest]) -> RecordedRequest | None:
    """The recorded request whose answer the turn's request (the last sent) got, if one did."""
    index = sent[-1].interaction if sent else None
    if index is None or not 0 <= index < len(cassette.interactions):
        return None
    return cassette.interactions[index].request


def _schema_changes(client: Client, adapter: Adapter, request: Request) -> tuple[SchemaChange, ...]:
    """The schema rewrites the wire requires (Gemini E15: those the reference adapter makes) and
    those the client declares (``Client.schema_rewrites``): ``translation.tool_definitions``
    compares those tools by name only, as for the reference adapter."""
    changes = adapter.tools_to_wire(request.tools).changes
    declared = dict(getattr(client, "schema_rewrites", {}) or {}).get(adapter.wire_format)
    if declared:
        changes += tuple(
            SchemaChange(tool=t.name, pointer="", action="changed", detail=f"declared by the client: {declared}")
            for t in request.tools
        )
    return changes


def _turn_outcome(
    index: int,
    request: Request,
    sent: SentRequest,
    result: TurnResult,
    changes: tuple[SchemaChange, ...],
    served: Sequence[bytes] = (),
) -> TurnOutcome:
    """The turn as the checks see it: the client's request (with the schema ``changes`` to accept;
    a Responses ``item_reference`` as the item one of the answers ``served`` earlier gave) and what the
    client decoded or raised."""
    body = sent.body if isinstance(sent.body, dict) else {}
    if detect_adapter(sent.path) == "openai_responses":
        body = dict(resolve_item_references(body, served))
    wire = WireRequest(method=sent.method, path=sent.path, body=body, stream=sent.stream, schema_changes=changes)
    base: dict[str, Any] = {"turn": index, "request": request, "wire": wire, "status": sent.status}
    if result.returned == "response" and result.response is not None:
        return TurnOutcome(**base, response=result.response, error=result.response.error)
    events: tuple[StreamEvent, ...] = result.events
    if result.returned == "raised":
        info = result.error_info or ErrorInfo(kind="unknown", message=f"untyped exception {result.exception}")
        if not sent.stream or (sent.status is not None and sent.status >= 400):
            return TurnOutcome(**base, error=info)
        # raised while streaming: read as a stream that ended in that error (error, then finish: error),
        # the events a translator gives for a broken stream
        events = (*events, ErrorEvent(error=info), Finish(reason="error"))
    response: Response = fold(events)
    stream_error = next((e.error for e in events if isinstance(e, ErrorEvent)), None)
    return TurnOutcome(**base, response=response, events=events, error=stream_error or response.error)


def _exchange(sent: SentRequest, base_url: str) -> Exchange:
    body = json.dumps(sent.body).encode() if sent.body is not None else b""
    return Exchange(
        method=sent.method,
        url=base_url + sent.path,
        request_headers=(),
        request_body=body,
        stream=sent.stream,
        status=sent.status,
        response_body=sent.response_body,
    )
