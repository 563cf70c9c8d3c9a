"""Drive the official-SDK drivers over every bundled scenario, the emulator playing its cassette.

A stand-in for ``conformance certify`` until that harness lands: for each driver, wire, scenario
and mode it builds each turn's ``Call`` (the history grows with what the driver decoded and the
scenario's tool results, as ``conformance.run.conversation`` does), runs ``complete`` (awaited on
one long-lived event loop when it is a coroutine; a stream's events collected, sync or async), maps
a raise with ``error_info`` and prints what was decoded and how it compares with the scenario's
``expect`` (tool calls, text, finish reason, event order, error kind/status/retry_after), plus the
requests the library sent per turn (more than one: a hidden retry).

    PYTHONPATH=. python examples/clients/smoke.py [--driver openai] [--wire gemini] [-k errors/] [-v]

A turn that raises mid-stream keeps the events decoded so far, then an ``error`` and a
``finish(error)`` event (what a harness records for a library that raises instead of emitting an
error event). ``mcp/*`` scenarios (real MCP servers) and scenarios needing a capability the driver
does not declare are skipped.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import inspect
import sys
import time
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.assembly import fold
from conformance.clients.contract import Call
from conformance.emulator import Emulator
from conformance.model import ErrorEvent, ErrorInfo, Finish, Message, Response, StreamEvent, ToolCall
from conformance.run.conversation import DEFAULT_MODELS, tool_result_message
from conformance.scenarios.loader import load_scenarios
from conformance.scenarios.values import Expectation, ExpectedCall, Mode, Scenario
from conformance.traffic.cassettes import load_cassette

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
DRIVERS = ("openai", "anthropic", "google_genai", "ollama")


def load_driver(name: str) -> Any:
    path = HERE / f"{name}_driver.py"
    spec = importlib.util.spec_from_file_location(f"_driver_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.CLIENT


@dataclass
class TurnResult:
    turn: int
    requests: int = 0
    response: Response | None = None
    events: list[StreamEvent] = field(default_factory=list)
    error: ErrorInfo | None = None
    raised: str | None = None
    problems: list[str] = field(default_factory=list)


async def _collect_async(stream: AsyncIterator[StreamEvent], into: list[StreamEvent]) -> None:
    async for event in stream:
        into.append(event)


def run_turn(client: Any, call: Call, loop: asyncio.AbstractEventLoop, result: TurnResult) -> None:
    events = result.events
    try:
        answer: Any = client.complete(call)
        if inspect.isawaitable(answer):
            answer = loop.run_until_complete(answer)
        if isinstance(answer, Response):
            result.response = answer
            result.error = answer.error
            return
        if hasattr(answer, "__anext__"):
            loop.run_until_complete(_collect_async(answer, events))
        else:
            events.extend(answer)
    except Exception as exc:  # the library's raise: what error_info makes of it
        result.raised = f"{type(exc).__module__}.{type(exc).__name__}: {str(exc)[:120]}"
        info = client.error_info(exc)
        result.error = info or ErrorInfo(kind="unknown", message=f"untyped: {result.raised}")
        if info is None:
            result.problems.append(f"error_info gave None for {result.raised}")
        if call.stream and result.response is None:
            events.extend([ErrorEvent(result.error), Finish("error")])
    if call.stream and events:
        result.response = fold(events)
        result.error = result.error or next((e.error for e in events if isinstance(e, ErrorEvent)), None)


def _call_matches(want: ExpectedCall, got: ToolCall) -> str | None:
    if want.name != got.name:
        return f"name {got.name!r} != {want.name!r}"
    if want.arguments_error:
        return None if got.arguments_error else f"arguments {got.arguments!r} decoded, an arguments_error expected"
    if got.arguments_error:
        return f"arguments_error {got.arguments_error!r} (raw {got.arguments_raw!r})"
    if want.arguments is None or want.match == "schema":
        return None
    args = got.arguments or {}
    if want.match == "subset":
        bad = {k: v for k, v in want.arguments.items() if args.get(k) != v}
        return f"arguments {args!r} lack {bad!r}" if bad else None
    return None if args == want.arguments else f"arguments {args!r} != {want.arguments!r}"


def judge(expect: Expectation, result: TurnResult, stream: bool) -> list[str]:
    problems = list(result.problems)
    want_error = expect.error
    if want_error is not None:
        got = result.error
        if got is None:
            problems.append(f"no error (expected {want_error.kind})")
        else:
            if got.kind != want_error.kind:
                problems.append(f"error kind {got.kind} != {want_error.kind}")
            if want_error.status is not None and got.status != want_error.status:
                problems.append(f"status {got.status} != {want_error.status}")
            if want_error.retry_after is not None and got.retry_after != want_error.retry_after:
                problems.append(f"retry_after {got.retry_after} != {want_error.retry_after}")
    elif result.error is not None:
        problems.append(f"unexpected error {result.error.kind}: {result.error.message[:100]}")
    response = result.response
    if response is None:
        if want_error is None or expect.tool_calls or expect.text:
            problems.append("no response") if want_error is None else None
        return problems
    if expect.tool_calls is not None:
        calls = response.tool_calls
        if len(calls) != len(expect.tool_calls):
            problems.append(f"{len(calls)} calls {[c.name for c in calls]} != {len(expect.tool_calls)}")
        for want_call, got_call in zip(expect.tool_calls, calls, strict=False):
            if (why := _call_matches(want_call, got_call)) is not None:
                problems.append(why)
    if expect.text is not None:
        text = response.text
        ok = expect.text.value in text if expect.text.mode == "contains" else text == expect.text.value
        if not ok:
            problems.append(f"text {text!r} !{expect.text.mode} {expect.text.value!r}")
    if expect.finish_reason is not None and response.finish_reason != expect.finish_reason:
        problems.append(f"finish {response.finish_reason} != {expect.finish_reason}")
    if stream and expect.events is not None:
        types: list[str] = [e.type for e in result.events]
        position = 0
        for want_event in expect.events:
            try:
                position = types.index(want_event, position) + 1
            except ValueError:
                problems.append(f"event {want_event!r} missing in order ({' '.join(types[-6:])})")
                break
    return problems


def describe(result: TurnResult) -> str:
    bits: list[str] = []
    if result.response is not None:
        r = result.response
        if r.text:
            bits.append(f"text={r.text[:40]!r}")
        for c in r.tool_calls:
            bits.append(f"call {c.name}({c.arguments_raw[:50]}){'!' if c.arguments_error else ''}")
        bits.append(f"finish={r.finish_reason}")
    if result.error is not None:
        e = result.error
        bits.append(f"error={e.kind}/{e.status}/ra={e.retry_after}")
    if result.requests != 1:
        bits.append(f"requests={result.requests}")
    return " ".join(bits)


def run_scenario(
    client: Any, wire: str, scenario: Scenario, mode: Mode, emu: Emulator, loop: asyncio.AbstractEventLoop
) -> tuple[list[str], str]:
    emu.play_cassette(load_cassette(ROOT / "cassettes" / wire / f"{scenario.id}.yaml"))
    history: list[Message] = []
    problems: list[str] = []
    decoded: list[str] = []
    for turn in scenario.turns:
        if turn.user:
            history.append(Message(role="user", parts=turn.user))
        call = Call(
            wire=wire,
            base_url=emu.base_url,
            api_key="sk-conformance-smoke-not-a-key",
            model=DEFAULT_MODELS[wire],
            system=scenario.system,
            messages=tuple(history),
            tools=scenario.tools,
            tool_choice=scenario.tool_choice,
            parallel_tool_calls=scenario.parallel_tool_calls,
            max_tokens=scenario.max_tokens,
            stream=mode == "stream",
            timeout=10.0,
            turn=turn.index,
            scenario=scenario.id,
        )
        before = len(emu.requests)
        result = TurnResult(turn=turn.index)
        run_turn(client, call, loop, result)
        result.requests = len(emu.requests) - before
        if result.requests > 1:
            result.problems.append(f"{result.requests} requests for one turn (hidden retry)")
        decoded.append(f"t{turn.index}: {describe(result)}")
        problems += [f"t{turn.index}: {p}" for p in judge(turn.expect, result, mode == "stream")]
        if result.error is not None or result.response is None:
            break
        history.append(Message(role="assistant", parts=result.response.parts))
        if turn.tool_results:
            message, problem = tool_result_message(turn, result.response.tool_calls)
            if message is None:
                problems.append(f"t{turn.index}: {problem}")
                break
            history.append(message)
    return problems, " | ".join(decoded)


def selected(load: Iterable[Scenario], pattern: str | None) -> list[Scenario]:
    return [s for s in load if pattern is None or pattern in s.id]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--driver", action="append", choices=DRIVERS)
    parser.add_argument("--wire", action="append")
    parser.add_argument("-k", dest="pattern")
    parser.add_argument("-v", dest="verbose", action="store_true", help="print what was decoded for passing cases")
    args = parser.parse_args(argv)
    scenarios = selected(load_scenarios([ROOT / "scenarios"], root=ROOT / "scenarios").scenarios, args.pattern)
    loop = asyncio.new_event_loop()
    totals: dict[str, list[int]] = {}
    with Emulator() as emu:
        for name in args.driver or DRIVERS:
            client = load_driver(name)
            for wire, capabilities in client.wires.items():
                if args.wire and wire not in args.wire:
                    continue
                counts = totals.setdefault(f"{name}:{wire}", [0, 0, 0])
                for scenario in scenarios:
                    cassette = ROOT / "cassettes" / wire / f"{scenario.id}.yaml"
                    if scenario.mcp is not None or any(t.mcp_results for t in scenario.turns):
                        continue
                    if not cassette.exists() or not scenario.requires <= capabilities:
                        counts[2] += len(scenario.modes)
                        continue
                    for mode in scenario.modes:
                        started = time.monotonic()
                        problems, decoded = run_scenario(client, wire, scenario, mode, emu, loop)
                        took = time.monotonic() - started
                        verdict = "ok  " if not problems else "FAIL"
                        counts[0 if not problems else 1] += 1
                        if problems or args.verbose:
                            print(f"{verdict} {name:<12} {wire:<16} {scenario.id:<42} {mode:<10} {took:5.2f}s")
                            print(f"     decoded: {decoded}")
                            for problem in problems:
                                print(f"     - {problem}")
    loop.close()
    print()
    print(f"{'driver:wire':<32} {'ok':>4} {'fail':>5} {'skipped':>8}")
    for key, (ok, failed, skipped) in totals.items():
        print(f"{key:<32} {ok:>4} {failed:>5} {skipped:>8}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
