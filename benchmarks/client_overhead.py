"""The suite's own overhead per black-box case (``conformance certify``), against the client's time.

For every bundled scenario x mode, each client is certified the way ``conformance certify`` does it
(``conformance.clients.harness.Harness``: the cassette served over loopback by the emulator, the
client driven turn by turn, its requests captured and read back, the checks run), with the case
cut into the harness's own pieces so each one is timed:

- **case wall**: ``Harness.converse`` (the conversation) then ``run_checks`` on the
  ``CaseContext`` that ``Harness.case`` builds, plus ``apply_gaps`` and the case result;
- **client time**: the sum over the turns of the time inside the client's ``complete``
  (``TurnResult.seconds``) minus the server's own time on the requests it sent meanwhile
  (``PlayedAnswer.seconds``: reading the request, choosing the answer; serving is the suite's cost);
- **suite overhead** = case wall - client time, broken down into
  **serving** (the ``PlayedAnswer.seconds``), **bookkeeping** (``converse`` outside ``complete``:
  building the calls, reading the captured requests back, the turn outcomes, the tool results;
  MCP tool calls are shown apart as **tools**) and **checks** (``run_checks`` and the verdicts).

Per client it reports the median and p90 over the cases of the overhead (ms; each case's figure is
its median over ``--rounds``), and the ratio overhead / client time (of the totals, and the median
of the per-case ratios); the target is a median overhead under 20 ms per case on the project's
2-core machine (the p90 is shown beside it). Clients, measured side by side in one run, rounds
interleaved (one round = every client on every case; a first round warms up and is dropped):

1. ``openai-sdk``: the official ``openai`` SDK (``openai.OpenAI(base_url=..., max_retries=0)``,
   ``chat.completions.create``, non-stream and stream), the unified ``Call`` converted by hand in
   ``OpenAIClient`` below (skipped when ``openai`` is not installed);
2. ``TranslatorClient`` of each of the five native reference adapters (our adapter's translation,
   our httpx transport).

A synthetic workload (``--synthetic``, on by default) repeats the scenarios of
``SYNTHETIC_SCENARIOS`` with ``--extra-tools`` more tools offered (each with a nested schema), so
every request, every read-back and the tool-definition checks carry a large tool list: the
overhead there is not only our own small cassettes'.

    python benchmarks/client_overhead.py                       # table, all clients, 3 rounds
    python benchmarks/client_overhead.py --rounds 5 --json /tmp/overhead.json
    python benchmarks/client_overhead.py --clients openai-sdk,openai_chat --scenarios 'basic/*'
    python benchmarks/client_overhead.py --profile openai_chat  # cProfile of the suite's side
"""

from __future__ import annotations

import argparse
import cProfile
import dataclasses
import fnmatch
import io
import json
import os
import pstats
import statistics
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from conformance.adapters import for_format, native_adapters
from conformance.adapters.base import Adapter
from conformance.checks import CaseContext, run_checks
from conformance.clients.contract import Call, Client
from conformance.clients.harness import CertifyOptions, Harness, client_adapter
from conformance.clients.invoke import EventLoop
from conformance.clients.translator import TranslatorClient
from conformance.emulator import Emulator
from conformance.mcp_bridge.scenario_tools import McpPool
from conformance.model import (
    ErrorInfo,
    Finish,
    Response,
    StreamEvent,
    Text,
    TextDelta,
    Tool,
    ToolCall,
    ToolCallChunk,
    ToolCallEnd,
    ToolCallStart,
    ToolResult,
    Usage,
    UsageEvent,
)
from conformance.run.conversation import ConversationOutcome
from conformance.run.runner import apply_gaps
from conformance.scenarios.loader import load_scenarios
from conformance.scenarios.values import Scenario
from conformance.traffic.cassettes import load_cassette
from conformance.verdicts import worst

__all__ = [
    "SYNTHETIC_SCENARIOS",
    "TARGET_MS",
    "CaseTiming",
    "OpenAIClient",
    "main",
    "measure",
    "summarize",
    "with_extra_tools",
]

ROOT = Path(__file__).resolve().parents[1]
TARGET_MS = 20.0
SYNTHETIC_SCENARIOS = ("basic/get_time", "multi_turn/two_rounds", "basic/parallel_calls")
"""The scenarios the synthetic workload repeats with a long tool list (those bundled are kept)."""


# ---- the official OpenAI SDK as a black-box client ----------------------------------------------


def _openai_messages(call: Call) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "system", "content": call.system}] if call.system else []
    for message in call.messages:
        texts = "".join(p.text for p in message.parts if isinstance(p, Text))
        if message.role == "user":
            out.append({"role": "user", "content": texts})
        elif message.role == "assistant":
            calls = [
                {
                    "id": p.id,
                    "type": "function",
                    "function": {"name": p.name, "arguments": p.arguments_raw or json.dumps(p.arguments or {})},
                }
                for p in message.parts
                if isinstance(p, ToolCall)
            ]
            entry: dict[str, Any] = {"role": "assistant", "content": texts or None}
            if calls:
                entry["tool_calls"] = calls
            out.append(entry)
        else:
            for part in message.parts:
                if isinstance(part, ToolResult):
                    content = "".join(getattr(c, "text", "") or "" for c in part.content)
                    out.append({"role": "tool", "tool_call_id": part.call_id, "content": content})
    return out


def _openai_tools(tools: Sequence[Tool]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": t.name,
                **({"description": t.description} if t.description else {}),
                "parameters": dict(t.input_schema),
            },
        }
        for t in tools
    ]


def _parsed(text: str) -> tuple[dict[str, Any] | None, str | None]:
    try:
        value = json.loads(text) if text else {}
    except ValueError as exc:
        return None, str(exc)
    return (value, None) if isinstance(value, dict) else (None, "the arguments are not a JSON object")


_FINISH = {"stop": "stop", "tool_calls": "tool_calls", "length": "length", "content_filter": "content_filter"}


@dataclass
class OpenAIClient:
    """The official ``openai`` SDK behind the Client contract (chat completions, sync), converting
    the unified ``Call`` minimally. One ``openai.OpenAI`` per base URL, as an application keeps it."""

    name: str = "openai-sdk"
    wires: Mapping[str, frozenset[str]] = field(
        default_factory=lambda: {"openai_chat": for_format("openai_chat").capabilities}
    )
    known_gaps: Mapping[str, str] = field(default_factory=dict)
    _clients: dict[str, Any] = field(default_factory=dict, repr=False)

    def _sdk(self, call: Call) -> Any:
        import openai

        key = f"{call.base_url} {call.timeout}"
        if key not in self._clients:
            self._clients[key] = openai.OpenAI(
                base_url=call.base_url + "/v1", api_key=call.api_key, max_retries=0, timeout=call.timeout
            )
        return self._clients[key]

    def complete(self, call: Call) -> Response | Iterator[StreamEvent]:
        kwargs: dict[str, Any] = {"model": call.model, "messages": _openai_messages(call)}
        if call.tools:
            kwargs["tools"] = _openai_tools(call.tools)
        if call.tool_choice is not None:
            choice = call.tool_choice
            named = choice not in ("auto", "none", "required")
            kwargs["tool_choice"] = {"type": "function", "function": {"name": choice}} if named else choice
        if call.parallel_tool_calls is not None and call.tools:
            kwargs["parallel_tool_calls"] = call.parallel_tool_calls
        if call.max_tokens is not None:
            kwargs["max_tokens"] = call.max_tokens
        sdk = self._sdk(call)
        if not call.stream:
            completion = sdk.chat.completions.create(**kwargs)
            choice0 = completion.choices[0]
            parts: list[Any] = [Text(text=choice0.message.content)] if choice0.message.content else []
            for tc in choice0.message.tool_calls or ():
                arguments, error = _parsed(tc.function.arguments)
                parts.append(
                    ToolCall(
                        id=tc.id,
                        name=tc.function.name,
                        arguments=arguments,
                        arguments_raw=tc.function.arguments,
                        arguments_error=error,
                    )
                )
            usage = completion.usage
            return Response(
                parts=tuple(parts),
                finish_reason=_FINISH.get(choice0.finish_reason or "", "other"),  # type: ignore[arg-type]
                usage=Usage(input_tokens=usage.prompt_tokens, output_tokens=usage.completion_tokens) if usage else None,
            )
        return self._stream(sdk, kwargs)

    def _stream(self, sdk: Any, kwargs: dict[str, Any]) -> Iterator[StreamEvent]:
        calls: dict[int, list[str]] = {}  # index -> [id, arguments so far]
        finish: str | None = None
        for chunk in sdk.chat.completions.create(**kwargs, stream=True, stream_options={"include_usage": True}):
            if chunk.usage is not None:
                yield UsageEvent(
                    usage=Usage(input_tokens=chunk.usage.prompt_tokens, output_tokens=chunk.usage.completion_tokens)
                )
            for choice in chunk.choices:
                delta = choice.delta
                if delta.content:
                    yield TextDelta(text=delta.content)
                for tc in delta.tool_calls or ():
                    if tc.index not in calls:
                        calls[tc.index] = [tc.id or f"call_{tc.index}", ""]
                        name = tc.function.name if tc.function else ""
                        yield ToolCallStart(tool_call_id=calls[tc.index][0], tool_call_name=name or "", index=tc.index)
                    if tc.function and tc.function.arguments:
                        calls[tc.index][1] += tc.function.arguments
                        yield ToolCallChunk(
                            tool_call_id=calls[tc.index][0], tool_call_arguments_chunk=tc.function.arguments
                        )
                if choice.finish_reason:
                    finish = choice.finish_reason
        for call_id, text in calls.values():
            arguments, error = _parsed(text)
            yield ToolCallEnd(
                tool_call_id=call_id, tool_call_arguments_complete=text, arguments=arguments, arguments_error=error
            )
        if finish is not None:
            reason = "tool_calls" if calls else _FINISH.get(finish, "other")
            yield Finish(reason=reason, provider_reason=finish)  # type: ignore[arg-type]

    def error_info(self, exc: BaseException) -> ErrorInfo | None:
        import openai

        kinds = [
            (openai.RateLimitError, "rate_limit"),
            (openai.AuthenticationError, "auth"),
            (openai.PermissionDeniedError, "permission"),
            (openai.NotFoundError, "not_found"),
            (openai.BadRequestError, "invalid_request"),
            (openai.InternalServerError, "server"),
        ]
        for cls, kind in kinds:
            if isinstance(exc, cls):
                return ErrorInfo(kind=kind, message=str(exc), status=getattr(exc, "status_code", None))  # type: ignore[arg-type]
        if isinstance(exc, openai.APIStatusError):
            return ErrorInfo(kind="unknown", message=str(exc), status=exc.status_code)
        return None


# ---- the synthetic workload -----------------------------------------------------------------------


def with_extra_tools(scenario: Scenario, count: int) -> Scenario:
    """``scenario`` offering ``count`` more tools (a nested object schema each), the bundled ones
    first, under the same id (its cassette still answers: answers are chosen by turn and mode)."""
    extra = tuple(
        Tool(
            name=f"synthetic_tool_{i:03d}",
            description=f"Synthetic tool number {i}: looks things up in a catalogue and returns a summary.",
            input_schema={
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "What to look for."},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 100},
                    "filters": {
                        "type": "object",
                        "properties": {
                            "tags": {"type": "array", "items": {"type": "string"}},
                            "since": {"type": "string", "format": "date"},
                            "kind": {"type": "string", "enum": ["a", "b", "c"]},
                        },
                    },
                },
                "required": ["query"],
            },
        )
        for i in range(count)
    )
    return dataclasses.replace(scenario, tools=scenario.tools + extra)


# ---- measuring ------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class CaseTiming:
    """One case, one round (seconds)."""

    client: str
    workload: str
    scenario: str
    mode: str
    status: str
    wall: float
    inside_complete: float
    serving: float
    tools: float
    converse: float
    checks: float

    @property
    def client_time(self) -> float:
        return self.inside_complete - self.serving

    @property
    def overhead(self) -> float:
        return self.wall - self.client_time

    @property
    def bookkeeping(self) -> float:
        return self.converse - self.inside_complete - self.tools

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.client, self.workload, self.scenario, self.mode)


class _TimedExecutor:
    """An MCP executor that adds the time of its tool calls to ``spent``."""

    def __init__(self, executor: Any) -> None:
        self.executor = executor
        self.spent = 0.0

    def __call__(self, call: Any) -> Any:
        started = time.perf_counter()
        try:
            return self.executor(call)
        finally:
            self.spent += time.perf_counter() - started

    def __getattr__(self, name: str) -> Any:
        return getattr(self.executor, name)


def _time_pair(
    harness: Harness, client: Client, adapter: Adapter, scenario: Scenario, workload: str
) -> list[CaseTiming]:
    """Every mode of one (wire, scenario) pair, as ``Harness.pair``/``Harness.case`` run them, timed."""
    options = harness.options
    modes = [m for m in scenario.modes if m in options.modes]
    if scenario.requires - adapter.capabilities or not modes:
        return []
    path = options.cassette_dir / adapter.wire_format / f"{scenario.id}.yaml"
    cassette = load_cassette(path)
    if cassette.problems:
        return []
    executor: Any = None
    if scenario.mcp is not None:
        scenario, executor = harness.pool.open(scenario)
        executor = _TimedExecutor(executor)
    out: list[CaseTiming] = []
    non_stream: ConversationOutcome | None = None
    for mode in modes:
        if mode == "stream" and "streaming" not in adapter.capabilities:
            continue
        if executor is not None:
            executor.spent = 0.0
        started = time.perf_counter()
        outcome, turns, exchanges, broke = harness.converse(adapter, scenario, mode, cassette, executor)
        conversed = time.perf_counter()
        status = "error"
        if broke is None:
            ctx = CaseContext(
                scenario=scenario,
                adapter=adapter,
                mode=mode,
                outcome=outcome,
                exchanges=tuple(exchanges),
                non_stream=non_stream,
                client=tuple(turns),
            )
            verdicts = apply_gaps(run_checks(ctx, options.families), adapter, scenario)
            status = worst([v.status for v in verdicts])
        ended = time.perf_counter()
        if mode == "non_stream":
            non_stream = outcome
        out.append(
            CaseTiming(
                client=client.name if len(client.wires) == 1 else f"{client.name}/{adapter.wire_format}",
                workload=workload,
                scenario=scenario.id,
                mode=mode,
                status=status,
                wall=ended - started,
                inside_complete=sum(t.result.seconds for t in turns),
                serving=sum(p.seconds for p in harness.server.played),
                tools=executor.spent if executor is not None else 0.0,
                converse=conversed - started,
                checks=ended - conversed,
            )
        )
    return out


def make_clients(names: Sequence[str] | None = None) -> list[Client]:
    """``openai-sdk`` (when ``openai`` is installed) and a ``TranslatorClient`` per native adapter."""
    clients: list[Client] = []
    try:
        import openai  # noqa: F401

        clients.append(OpenAIClient())
    except ImportError:
        print("openai is not installed: the openai-sdk client is skipped", file=sys.stderr)
    clients += [cast(Client, TranslatorClient(for_format(wire), name=wire)) for wire in native_adapters()]
    if names is not None:
        clients = [c for c in clients if c.name in names]
    return clients


def measure(
    scenarios: Sequence[Scenario],
    clients: Sequence[Client],
    *,
    rounds: int = 3,
    synthetic: Sequence[Scenario] = (),
    extra_tools: int = 64,
    cassette_dir: Path = ROOT / "cassettes",
) -> list[CaseTiming]:
    """Every round's timings (the warm-up round dropped), clients interleaved within each round."""
    workloads = [("bundled", s) for s in scenarios] + [
        (f"synthetic+{extra_tools}tools", with_extra_tools(s, extra_tools)) for s in synthetic
    ]
    options = CertifyOptions(cassette_dir=cassette_dir)
    timings: list[CaseTiming] = []
    with Emulator() as server, EventLoop() as loop, McpPool(start_timeout=options.timeout) as pool:
        harnesses = [Harness(client=c, server=server, loop=loop, pool=pool, options=options) for c in clients]
        for number in range(rounds + 1):
            for harness in harnesses:
                for wire in harness.client.wires:
                    adapter = client_adapter(harness.client, wire)
                    for workload, scenario in workloads:
                        cases = _time_pair(harness, harness.client, adapter, scenario, workload)
                        if number:
                            timings += cases
    return timings


def _p90(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]


def summarize(timings: Sequence[CaseTiming]) -> list[dict[str, Any]]:
    """Per (client, workload): each case's medians over the rounds, then the median and p90 over the
    cases of the overhead (ms), the ratios, and the breakdown (medians, ms)."""
    by_case: dict[tuple[str, str, str, str], list[CaseTiming]] = {}
    for t in timings:
        by_case.setdefault(t.key, []).append(t)
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for (client, workload, scenario, mode), runs in by_case.items():

        def med(attr: str, runs: list[CaseTiming] = runs) -> float:
            return float(statistics.median(getattr(r, attr) for r in runs))

        case = {
            "scenario": scenario,
            "mode": mode,
            "status": runs[-1].status,
            "wall": med("wall"),
            "client": med("client_time"),
            "overhead": med("overhead"),
            "serving": med("serving"),
            "bookkeeping": med("bookkeeping"),
            "tools": med("tools"),
            "checks": med("checks"),
        }
        groups.setdefault((client, workload), []).append(case)
    rows: list[dict[str, Any]] = []
    for (client, workload), cases in groups.items():
        overheads = [c["overhead"] * 1e3 for c in cases]
        client_total = sum(c["client"] for c in cases)
        ratios = [c["overhead"] / c["client"] for c in cases if c["client"] > 0]
        statuses: dict[str, int] = {}
        for c in cases:
            statuses[c["status"]] = statuses.get(c["status"], 0) + 1
        rows.append(
            {
                "client": client,
                "workload": workload,
                "cases": len(cases),
                "statuses": statuses,
                "overhead_median_ms": statistics.median(overheads),
                "overhead_p90_ms": _p90(overheads),
                "client_median_ms": statistics.median(c["client"] * 1e3 for c in cases),
                "wall_median_ms": statistics.median(c["wall"] * 1e3 for c in cases),
                "ratio_total": sum(c["overhead"] for c in cases) / client_total if client_total > 0 else None,
                "ratio_total_without_tools": sum(c["overhead"] - c["tools"] for c in cases) / client_total
                if client_total > 0
                else None,
                "ratio_median": statistics.median(ratios) if ratios else None,
                "serving_median_ms": statistics.median(c["serving"] * 1e3 for c in cases),
                "bookkeeping_median_ms": statistics.median(c["bookkeeping"] * 1e3 for c in cases),
                "tools_median_ms": statistics.median(c["tools"] * 1e3 for c in cases),
                "checks_median_ms": statistics.median(c["checks"] * 1e3 for c in cases),
                "target_met": statistics.median(overheads) < TARGET_MS,
                "case_figures": cases,
            }
        )
    return rows


def _print_table(rows: Sequence[dict[str, Any]], meta: Mapping[str, Any]) -> None:
    print(
        "| client | workload | cases | overhead median / p90 (ms) | client median (ms) "
        "| overhead / client (total; total without MCP tool calls; median of cases) "
        "| serving / bookkeeping / tools / checks, median (ms) "
        f"| < {TARGET_MS:g} ms |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        total = f"{r['ratio_total']:.2f}" if r["ratio_total"] is not None else "-"
        median = f"{r['ratio_median']:.2f}" if r["ratio_median"] is not None else "-"
        bare = r["ratio_total_without_tools"]
        total += f"; {bare:.2f}" if bare is not None else "; -"
        print(
            f"| {r['client']} | {r['workload']} | {r['cases']} | {r['overhead_median_ms']:.1f} / "
            f"{r['overhead_p90_ms']:.1f} | {r['client_median_ms']:.1f} | {total}; {median} "
            f"| {r['serving_median_ms']:.2f} / {r['bookkeeping_median_ms']:.2f} / {r['tools_median_ms']:.2f} / "
            f"{r['checks_median_ms']:.2f} | {'yes' if r['target_met'] else 'NO'} |"
        )
    held = all(r["target_met"] for r in rows)
    print(
        f"\ntarget (median suite overhead < {TARGET_MS:g} ms per case, every client and workload): "
        f"{'holds' if held else 'NOT met'}"
    )
    worst_p90 = max((r["overhead_p90_ms"] for r in rows), default=0.0)
    print(f"worst p90: {worst_p90:.1f} ms")
    print(
        f"machine: {meta['cpus']} CPUs, Python {meta['python']}, load average {meta['load_average']}; "
        f"{meta['rounds']} rounds (+1 warm-up), {meta['seconds']:.0f} s"
    )


def _profile(
    scenarios: Sequence[Scenario], clients: Sequence[Client], top: int, synthetic: Sequence[Scenario], extra_tools: int
) -> str:
    """cProfile of one round (after a warm-up) in this thread (the client's turns run in worker
    threads, the server in its own: they are not in it), the suite's functions by cumulative time."""
    measure(scenarios, clients, rounds=0, synthetic=synthetic, extra_tools=extra_tools)
    profiler = cProfile.Profile()
    profiler.enable()
    measure(scenarios, clients, rounds=0, synthetic=synthetic, extra_tools=extra_tools)
    profiler.disable()
    text = io.StringIO()
    pstats.Stats(profiler, stream=text).sort_stats("cumulative").print_stats("conformance", top)
    return text.getvalue()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3, help="measured rounds (median per case; default 3)")
    parser.add_argument("--clients", help="comma-separated: openai-sdk and/or native wire names (default: all)")
    parser.add_argument("--scenarios", help="comma-separated id globs (default: every bundled scenario)")
    parser.add_argument("--extra-tools", type=int, default=64, help="tools added in the synthetic workload")
    parser.add_argument("--no-synthetic", action="store_true", help="skip the synthetic workload")
    parser.add_argument("--json", metavar="FILE", help="also write the figures (every case) as JSON")
    parser.add_argument("--profile", metavar="CLIENT", help="cProfile one round of this client instead")
    args = parser.parse_args(argv)
    loaded = load_scenarios([])
    scenarios = list(loaded.scenarios)
    if args.scenarios:
        globs = args.scenarios.split(",")
        scenarios = [s for s in scenarios if any(fnmatch.fnmatchcase(s.id, g) for g in globs)]
    names = args.clients.split(",") if args.clients else None
    synthetic = [] if args.no_synthetic else [s for s in scenarios if s.id in SYNTHETIC_SCENARIOS]
    if args.profile:
        print(_profile(scenarios, make_clients([args.profile]), 45, synthetic, args.extra_tools))
        return 0
    clients = make_clients(names)
    load = [os.getloadavg()[0] if hasattr(os, "getloadavg") else None]
    started = time.perf_counter()
    timings = measure(scenarios, clients, rounds=args.rounds, synthetic=synthetic, extra_tools=args.extra_tools)
    load.append(os.getloadavg()[0] if hasattr(os, "getloadavg") else None)
    meta = {
        "cpus": os.cpu_count(),
        "python": sys.version.split()[0],
        "load_average": load,
        "rounds": args.rounds,
        "seconds": time.perf_counter() - started,
        "target_ms": TARGET_MS,
    }
    rows = summarize(timings)
    _print_table(rows, meta)
    if args.json:
        Path(args.json).write_text(json.dumps({**meta, "rows": rows}, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
