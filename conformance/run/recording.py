"""Recording: run scenarios x adapters against the emulator or a live provider and write cassettes.

For each chosen (adapter, scenario) pair, one cassette ``CASSETTE_DIR/<adapter>/<scenario-id>.yaml``
holds the conversation run non-streaming, then streaming (the scenario's ``modes``), as
consecutive interactions; replay matches each request by method, path and stream mode, in order.
With the emulator (``conformance record --emulator``) each pair's scenario scripts its replies
through ``set_script``; live (``--live``) the same requests go, through the same code
(``conformance.run.conversation``), to the provider's base URL with its key.

A pair whose scenario requires a capability the adapter does not declare is skipped (the runner
reports it UNSUPPORTED without a cassette). One pair that fails never stops the others; the exit
code is 1 when any failed. A scenario with ``tools: {mcp: ...}`` gets its tools from one MCP
server per pair, and its ``tool_results: mcp`` turns are answered by that server's ``tools/call``
(``conformance.mcp_bridge.scenario_tools``); a server that fails to start or dies fails the pair.

Each pair has ``timeout`` seconds (``conformance record --timeout``, default ``DEFAULT_PAIR_TIMEOUT``):
it runs in a daemon thread, and one that has not finished by then fails ("timed out") and the
next pair starts. A thread cannot be stopped from outside, so the late one is fenced off: its
next HTTP request raises, and it writes no cassette (the check runs after its conversations,
before the write); the emulator's script is set and cleared by the caller's thread only.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import httpx

from conformance.adapters.base import Adapter
from conformance.errors import ConformanceError, McpServerError, ScenarioError, TransportTimeoutError
from conformance.mcp_bridge.scenario_tools import McpExecutor, open_scenario_tools
from conformance.run.conversation import DEFAULT_MODELS, ConversationOutcome, run_conversation
from conformance.scenarios.values import Scenario
from conformance.traffic.recorder import Provenance, RecordResult, record_cassette
from conformance.traffic.scrub import Scrubber
from conformance.traffic.transport import Transport

__all__ = ["DEFAULT_PAIR_TIMEOUT", "PairResult", "cassette_path", "record_pairs", "select_scenarios"]

DEFAULT_PAIR_TIMEOUT = 300.0
"""Seconds one (adapter, scenario) pair may take, both modes, every turn (``record --timeout``)."""


@dataclass(frozen=True, kw_only=True)
class PairResult:
    adapter: str
    scenario: str
    status: str
    """``written``, ``unchanged``, ``unsupported`` or ``failed``."""
    detail: str = ""


def cassette_path(cassette_dir: Path, traffic_format: str, scenario_id: str) -> Path:
    """Where a cassette of ``traffic_format`` (``Adapter.traffic_format``) for the scenario lives."""
    return cassette_dir / traffic_format / f"{scenario_id}.yaml"


def select_scenarios(scenarios: Sequence[Scenario], patterns: Sequence[str] | None) -> list[Scenario]:
    """The scenarios whose id equals or matches (``fnmatch``) one of ``patterns`` (all when none)."""
    if not patterns:
        return list(scenarios)
    return [s for s in scenarios if any(s.id == p or fnmatch.fnmatchcase(s.id, p) for p in patterns)]


def record_pairs(
    scenarios: Sequence[Scenario],
    adapters: Sequence[Adapter],
    *,
    cassette_dir: Path,
    base_url: str,
    mode: str,
    set_script: Callable[[Scenario | None], None] | None = None,
    api_key: str | None = None,
    model: str | None = None,
    progress: TextIO | None = None,
    timeout: float | None = DEFAULT_PAIR_TIMEOUT,
) -> list[PairResult]:
    """Record every (adapter, scenario) pair; ``set_script`` scripts the emulator per scenario.
    A pair still running after ``timeout`` seconds fails (None: no limit; see the module docstring)."""
    pairs = [(adapter, scenario) for adapter in adapters for scenario in scenarios]
    scrub = Scrubber([api_key] if api_key else []).text  # details are printed: a provider may echo the key
    results: list[PairResult] = []
    for number, (adapter, scenario) in enumerate(pairs, 1):
        result = _timed(
            adapter,
            scenario,
            timeout,
            cassette_dir=cassette_dir,
            base_url=base_url,
            mode=mode,
            set_script=set_script,
            api_key=api_key,
            model=model,
        )
        result = dataclasses.replace(result, detail=scrub(result.detail))
        results.append(result)
        if progress is not None:
            detail = f" ({result.detail})" if result.detail else ""
            print(f"[{number}/{len(pairs)}] {adapter.name} {scenario.id}: {result.status}{detail}", file=progress)
    return results


class _Fence(httpx.BaseTransport):
    """The HTTP transport of one pair: once ``cancelled`` is set (the pair timed out), every request
    raises instead of reaching the server."""

    def __init__(self, cancelled: threading.Event) -> None:
        self.cancelled = cancelled
        self.inner = httpx.HTTPTransport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if self.cancelled.is_set():
            raise httpx.TimeoutException("the pair timed out", request=request)
        return self.inner.handle_request(request)

    def close(self) -> None:
        self.inner.close()


def _timed(
    adapter: Adapter,
    scenario: Scenario,
    timeout: float | None,
    *,
    set_script: Callable[[Scenario | None], None] | None,
    **kw: Any,
) -> PairResult:
    """``_record_one`` in a daemon thread, given ``timeout`` seconds; the emulator script is set
    and cleared here, in the caller's thread, so a late pair never clears the next one's."""
    cancelled = threading.Event()
    outcome: list[PairResult] = []

    def work() -> None:
        try:
            outcome.append(_record_one(adapter, scenario, cancelled=cancelled, **kw))
        except BaseException as exc:  # an adapter that raises anything costs this pair only
            outcome.append(
                PairResult(
                    adapter=adapter.name, scenario=scenario.id, status="failed", detail=f"{type(exc).__name__}: {exc}"
                )
            )

    if set_script is not None:
        set_script(scenario)
    try:
        thread = threading.Thread(target=work, name=f"record {adapter.name} {scenario.id}", daemon=True)
        thread.start()
        thread.join(timeout)
        if thread.is_alive():
            cancelled.set()
            return PairResult(
                adapter=adapter.name,
                scenario=scenario.id,
                status="failed",
                detail=f"timed out after {timeout:g} s (raise it with --timeout); nothing was written",
            )
    finally:
        if set_script is not None:
            set_script(None)
    return outcome[0]


def _record_one(
    adapter: Adapter,
    scenario: Scenario,
    *,
    cassette_dir: Path,
    base_url: str,
    mode: str,
    api_key: str | None,
    model: str | None,
    cancelled: threading.Event,
) -> PairResult:
    excluded = scenario.wire_excluded(adapter.name, adapter.wire_format)
    if excluded is not None:
        return PairResult(adapter=adapter.name, scenario=scenario.id, status="unsupported", detail=excluded)
    missing = sorted(scenario.requires - adapter.capabilities)
    if missing:
        return PairResult(
            adapter=adapter.name, scenario=scenario.id, status="unsupported", detail="requires " + ", ".join(missing)
        )
    if scenario.mcp is None:
        return _record_pair(adapter, scenario, None, cassette_dir, base_url, mode, cancelled, api_key, model)
    try:  # one MCP server for the pair, stopped after it
        with open_scenario_tools(scenario) as (ready, executor):
            return _record_pair(adapter, ready, executor, cassette_dir, base_url, mode, cancelled, api_key, model)
    except (McpServerError, ScenarioError) as exc:
        return PairResult(adapter=adapter.name, scenario=scenario.id, status="failed", detail=f"MCP tools: {exc}")


def _record_pair(
    adapter: Adapter,
    scenario: Scenario,
    executor: McpExecutor | None,
    cassette_dir: Path,
    base_url: str,
    mode: str,
    cancelled: threading.Event,
    api_key: str | None,
    model: str | None,
) -> PairResult:
    chosen_model = model or DEFAULT_MODELS.get(adapter.wire_format, "model")
    outcomes: list[ConversationOutcome] = []

    def run(transport: Transport) -> None:
        for run_mode in scenario.modes:
            outcomes.append(
                run_conversation(scenario, adapter, transport, mode=run_mode, model=chosen_model, executor=executor)
            )
            if executor is not None and executor.failure is not None:
                raise executor.failure  # the MCP server died: nothing is written
        if cancelled.is_set():  # timed out while this ran: the caller has moved on, nothing is written
            raise TransportTimeoutError(f"{adapter.name} {scenario.id}: the pair timed out")

    try:
        result: RecordResult = record_cassette(
            cassette_path(cassette_dir, adapter.traffic_format, scenario.id),
            run,
            adapter=adapter.wire_format,
            base_url=base_url,
            provenance=Provenance(
                mode="live" if mode == "live" else "emulator",
                model=chosen_model,
                scenario=scenario.id,
                scenario_sha256=scenario.fingerprint or None,
            ),
            api_key=api_key,
            backend=_Fence(cancelled),
        )
    except ConformanceError as exc:
        return PairResult(adapter=adapter.name, scenario=scenario.id, status="failed", detail=str(exc))
    except Exception as exc:  # an adapter that raises costs this pair only
        return PairResult(
            adapter=adapter.name, scenario=scenario.id, status="failed", detail=f"{type(exc).__name__}: {exc}"
        )
    notes = [f"{result.interactions} interactions"]
    notes += [f"{o.mode}: {o.stopped}" for o in outcomes if o.stopped]
    return PairResult(adapter=adapter.name, scenario=scenario.id, status=result.status, detail="; ".join(notes))
