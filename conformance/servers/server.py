"""The server target: certify a model server (llama.cpp, vLLM, Ollama, LM Studio ...) on its wires.

``certify_server`` makes one column per wire (``f"{name}/{wire}"``, the reference adapter's
capabilities) and runs, one case at a time (a local model server answers one request at a time):

- each scenario a live server can be asked (``server_scenarios``: no scripted HTTP or stream
  fault, no provider quirk or tolerated deviation, no expected error, no scripted arguments that
  are not JSON: the model cannot be asked for those; no tools from an MCP server), streamed and
  not: the reference adapter's requests for the scenario, with the live
  recorder's sampling knobs (``conformance.run.live.Sampling``: temperature 0, seed 42, a small
  ``max_tokens``), sent to ``base_url`` and decoded by the same adapter, turn by turn
  (``conformance.run.conversation``). Every answer is judged by ``conformance.checks.server.
  answer_verdicts`` from the bytes as they arrived (status, shape, framing, ids, arguments,
  finish, usage). ``server.model``: what the model chose against the scenario's loose
  expectations (``conformance.run.live.deviations``): a model that answered in text where a call
  is expected, or called another tool, makes the check ``deviated``, never a server defect.
  ``server.modes`` (in the streamed case): the streamed and the non-streamed answers decode to
  the same text, calls and arguments at temperature 0; when they differ the non-streamed request
  is asked once more: an answer that differs from the first says the server is not deterministic
  (UNSUPPORTED, with the two answers), else the difference is a defect.
- the invalid-request probes (``conformance.servers.invalid``), as cases
  ``name/wire::server/invalid/<probe>::non_stream``, judged by ``conformance.checks.server.
  error_verdict``; a probe the wire documents no error for is UNSUPPORTED.

Bounds (``conformance.servers.probe``): only ``base_url`` is ever connected to (a 3xx is an answer,
judged, never followed); each exchange ends within ``exchange_timeout`` seconds and each body at
``max_body`` bytes, each case within ``timeout`` seconds; whatever breaks is a verdict of that
case and the run goes on. The API key goes in the wire's header only and is scrubbed from every
message, finding and exchange kept in the result. The result is a ``RunResult`` like the
runner's (``conformance.run.runner.run_result``), so reports, baselines and defects work
unchanged; its provenance names the server (URL, wires, the model asked for and the one the
answers named, the sampling sent).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import httpx

from conformance.adapters import get_adapter
from conformance.adapters.base import Adapter, WireRequest
from conformance.checks.server import SERVER_WIRES, ServerExchange, answer_verdicts, error_verdict
from conformance.checks.streaming import response_projection
from conformance.errors import TransportError, UsageError
from conformance.run.conversation import DEFAULT_MODELS, ConversationOutcome, run_conversation
from conformance.run.live import Sampling, deviations, served_model, with_sampling
from conformance.run.recording import DEFAULT_MAX_BODY, Fence
from conformance.run.runner import exchange_view, run_result
from conformance.run.shard import Shard, shard_pairs
from conformance.scenarios.values import MODES, Mode, Scenario
from conformance.servers.invalid import (
    PROBE_BEHAVIOR,
    PROBES,
    basic_scenario,
    forced_tool,
    offered_tools,
    probe_id,
    probe_request,
)
from conformance.servers.probe import ProbeTransport, open_transport, run_case
from conformance.traffic.scrub import Scrubber
from conformance.traffic.transport import Exchange
from conformance.verdicts import CaseResult, CheckVerdict, Finding, RunResult, ScenarioInfo, Selection, worst

__all__ = [
    "SERVER_WIRES",
    "ServerOptions",
    "certify_server",
    "server_case_count",
    "server_columns",
    "server_exchanges",
    "server_result",
    "server_scenarios",
]

_UNASKABLE_TAGS = ("quirk", "deviation")
"""Scenario tags of a provider's quirk or a tolerated deviation (``deviation:<wire>`` too): the
emulator plays them on purpose; a conforming server is not asked to reproduce them."""


@dataclass(frozen=True, kw_only=True)
class ServerOptions:
    """What ``certify_server`` runs and its bounds (``conformance certify --server``)."""

    base_url: str
    """The only URL ever connected to (redirects are not followed)."""
    wires: tuple[str, ...]
    name: str = "server"
    """Columns are ``f"{name}/{wire}"``."""
    model: str | None = None
    """The model asked for (None: each wire's default, ``conformance.run.conversation.DEFAULT_MODELS``)."""
    api_key: str | None = None
    """From ``--api-key-env``: sent in the wire's header, never printed, scrubbed from results."""
    families: tuple[str, ...] = ("server",)
    checks: frozenset[str] | None = None
    """Check ids to keep (``--checks`` naming ids); None: every ``server.*`` verdict."""
    select: Callable[[str, str, str], bool] | None = None
    """``-k`` over (column, scenario id, mode)."""
    modes: tuple[Mode, ...] = MODES
    timeout: float = 300.0
    """Seconds per case (every turn, and the repeat ``server.modes`` may ask)."""
    exchange_timeout: float = 120.0
    """Seconds per HTTP exchange, request to last byte."""
    max_body: int = DEFAULT_MAX_BODY
    """Bytes one response body may hold once decoded."""
    max_tokens: int = 64
    """``max_tokens`` sent when the scenario sets none (a runaway answer ends soon)."""
    probes: bool = True
    """Run the invalid-request cases."""
    fail_fast: bool = False
    shard: Shard | None = None

    @property
    def sampling(self) -> Sampling:
        """The request knobs sent: temperature 0, seed 42, ``max_tokens``."""
        return Sampling(max_tokens=self.max_tokens)


def server_scenarios(scenarios: Sequence[Scenario]) -> list[Scenario]:
    """The scenarios a live server can be asked (the emulator's ``--play-scenarios`` plays the same
    ones, ``conformance.emulator._scenario_book.server_playable``): not those whose script plays an
    HTTP or stream fault, nor those tagged ``quirk``/``deviation`` (``deviation:<wire>``: one
    provider's shape, not the wire's), nor those expecting an error, nor those whose script plays
    call arguments that are not a JSON object (``arguments/malformed_json``, ``arguments/empty_string``,
    a call cut by the length limit: a provider's defect adapters must survive, which a conforming
    server never sends). Nor those taking their tools from an MCP server: their requests offer
    ordinary tools, as the others do (what differs is on the client's side), and each would start
    a tool server per case."""
    return [s for s in scenarios if _askable(s)]


def _askable(scenario: Scenario) -> bool:
    if scenario.mcp is not None:
        return False
    if any(tag in _UNASKABLE_TAGS or tag.startswith("deviation:") for tag in scenario.tags):
        return False
    return not any(
        turn.reply.fault is not None
        or turn.expect.error is not None
        or any(not _object_text(call.arguments_raw) for call in turn.reply.tool_calls)
        for turn in scenario.turns
    )


def _object_text(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False


def server_columns(options: ServerOptions) -> list[Adapter]:
    """One column per wire, named ``name/wire``: the wire's reference adapter (its capabilities),
    without the adapter's own known gaps (the server is judged, not the adapter). ``UsageError``
    for a wire that is not one of ``SERVER_WIRES`` or is given twice."""
    unknown = [w for w in options.wires if w not in SERVER_WIRES]
    if unknown or not options.wires:
        raise UsageError(
            f"unknown wire {', '.join(unknown) or '(none given)'} for a server; valid ones: {', '.join(SERVER_WIRES)}"
        )
    if len(set(options.wires)) != len(options.wires):
        raise UsageError(f"a wire is given twice in {', '.join(options.wires)}")
    return [
        replace(get_adapter(wire), name=f"{options.name}/{wire}", known_gaps={}, request_differences={})
        for wire in options.wires
    ]


_Item = Scenario | str
"""A column's work item: a scenario, or an invalid-request probe's name."""


def _item_id(item: _Item) -> str:
    return probe_id(item) if isinstance(item, str) else item.id


def _modes(column: Adapter, item: _Item, options: ServerOptions) -> list[Mode]:
    if isinstance(item, str):
        modes: list[Mode] = ["non_stream"] if "non_stream" in options.modes else []
    else:
        modes = [m for m in item.modes if m in options.modes]
    if options.select is not None:
        modes = [m for m in modes if options.select(column.name, _item_id(item), m)]
    return modes


def _pairs(scenarios: Sequence[Scenario], options: ServerOptions) -> list[tuple[Adapter, _Item]]:
    items: list[_Item] = [*server_scenarios(scenarios), *(PROBES if options.probes else ())]
    pairs = [(column, item) for column in server_columns(options) for item in items]
    return shard_pairs(
        pairs,
        options.shard,
        key=lambda pair: (pair[0].name, _item_id(pair[1])),
        selected=lambda pair: bool(_modes(pair[0], pair[1], options)),
    )


def server_case_count(scenarios: Sequence[Scenario], options: ServerOptions) -> int:
    """How many cases ``certify_server`` runs for ``scenarios`` and ``options`` (for progress)."""
    return sum(len(_modes(column, item, options)) for column, item in _pairs(scenarios, options))


def certify_server(
    scenarios: Sequence[Scenario],
    options: ServerOptions,
    *,
    progress: Callable[[CaseResult], None] | None = None,
    problems: Sequence[str] = (),
) -> RunResult:
    """Certify the server at ``options.base_url`` on ``options.wires`` (see the module docstring).
    Every case ends with a verdict, whatever the server does; ``progress(case)`` after each."""
    basic = basic_scenario(list(scenarios))
    scrubber = Scrubber([options.api_key] if options.api_key else [])
    key = _provenance_key(options)
    cases: list[CaseResult] = []
    answered: list[Exchange] = []
    stop = False
    for column, item in _pairs(scenarios, options):
        if stop:
            break
        modes = _modes(column, item, options)
        if not modes:
            continue
        found = (
            _probe_cases(column, item, basic, options, answered)
            if isinstance(item, str)
            else _scenario_cases(column, item, modes, options, answered)
        )
        for case in found:
            case = _scrubbed(replace(case, cassette=key), scrubber)
            cases.append(case)
            if progress is not None:
                progress(case)
            if options.fail_fast and case.status in ("fail", "error", "stale"):
                stop = True
                break
    return server_result(scenarios, options, cases, problems=problems, served=served_model(answered))


def server_result(
    scenarios: Sequence[Scenario],
    options: ServerOptions,
    cases: Sequence[CaseResult],
    *,
    problems: Sequence[str] = (),
    served: str | None = None,
) -> RunResult:
    """The ``RunResult`` of a server certification with ``cases`` (all of them, or those finished
    when a run stopped early): the columns, the scenarios asked and the probes run, and the server's
    facts (provenance ``server URL``: URL, wires, the model asked for, ``served`` (the model the
    answers named), the sampling; the note ``server URL, answering as MODEL``), the API key scrubbed."""
    scrubber = Scrubber([options.api_key] if options.api_key else [])
    provenance = {
        _provenance_key(options): scrubber.json(
            {
                "mode": "server",
                "base_url": options.base_url,
                "wires": list(options.wires),
                "model": options.model,
                "served_model": served,
                "sampling": options.sampling.as_provenance(),
            }
        )
    }
    columns = server_columns(options)
    chosen = server_scenarios(scenarios)
    result = run_result(columns, chosen, cases, provenance=provenance, problems=problems, model=options.model)
    probe_rows = tuple(
        ScenarioInfo(id=probe_id(p), behavior=PROBE_BEHAVIOR[p], source="suite")
        for p in PROBES
        if any(c.scenario == probe_id(p) for c in cases)
    )
    note = scrubber.text(f"server {options.base_url}" + (f", answering as {served}" if served else ""))
    return replace(
        result,
        scenarios=(*result.scenarios, *probe_rows),
        selection=Selection(command="certify", wires=tuple(options.wires), model=options.model, note=note),
    )


def _provenance_key(options: ServerOptions) -> str:
    return f"server {options.base_url}"


# --------------------------------------------------------------------------------------------
# Scenario cases
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class _Ran:
    """What one scenario case's work left behind."""

    scenario: Scenario
    outcome: ConversationOutcome | None
    exchanges: tuple[Exchange, ...]
    """The case's own exchanges (not the silent non-streamed run, nor the repeat)."""
    first: ConversationOutcome | None = None
    """The non-streamed answer the streamed case is compared with."""
    repeat: ConversationOutcome | None = None
    """The non-streamed request asked once more, when the modes differed."""
    fence: Fence
    too_large: str | None = None
    crash: BaseException | None = None
    """What the reference adapter raised decoding an answer (None: nothing)."""


def _scenario_cases(
    column: Adapter, scenario: Scenario, modes: Sequence[Mode], options: ServerOptions, answered: list[Exchange]
) -> list[CaseResult]:
    excluded = scenario.wire_excluded(column.name, column.wire_format)
    missing = sorted(scenario.requires - column.capabilities)
    if excluded is not None or missing:
        why = excluded or f"requires {', '.join(missing)}, which the {column.wire_format} wire does not carry"
        return [_case(column, scenario.id, mode, "unsupported", message=why) for mode in modes]
    cases: list[CaseResult] = []
    non_stream: ConversationOutcome | None = None
    asked = False  # the non-streamed case ran (its outcome, if any, is the one to compare with)
    for mode in modes:
        case, outcome = _scenario_case(column, scenario, mode, options, non_stream, answered, asked=asked)
        if mode == "non_stream":
            non_stream, asked = outcome, True
        cases.append(case)
    return cases


def _scenario_case(
    column: Adapter,
    scenario: Scenario,
    mode: Mode,
    options: ServerOptions,
    non_stream: ConversationOutcome | None,
    answered: list[Exchange],
    *,
    asked: bool,
) -> tuple[CaseResult, ConversationOutcome | None]:
    """One scenario case. The streamed one is compared with ``non_stream``, the outcome of the
    non-streamed case; when that case was not run (``asked`` false: ``-k`` chose the stream alone)
    the non-streamed request is asked here first, unreported, as the runner does; when it ran and
    has no outcome (it broke), there is nothing to compare."""
    fence = Fence(options.exchange_timeout)
    box: dict[str, _Ran] = {}
    model = options.model or DEFAULT_MODELS.get(column.wire_format, "model")

    def work() -> None:
        with open_transport(
            options.base_url,
            wire=column.wire_format,
            api_key=options.api_key,
            exchange_timeout=options.exchange_timeout,
            max_body=options.max_body,
            fence=fence,
        ) as transport:
            adapter, sent = with_sampling(column, scenario, options.sampling)

            def converse(run_mode: Mode) -> ConversationOutcome:
                return run_conversation(sent, adapter, transport, mode=run_mode, model=model)

            ran = _Ran(scenario=scenario, outcome=None, exchanges=(), fence=fence)
            try:
                ran = replace(ran, outcome=converse(mode))
            except Exception as exc:  # the reference adapter could not decode an answer: judged below
                ran = replace(ran, crash=exc)
            ran = replace(ran, exchanges=tuple(transport.exchanges), too_large=transport.too_large)
            box["ran"] = ran
            outcome = ran.outcome
            if mode != "stream" or outcome is None or fence.overran or transport.too_large:
                return
            try:
                first = non_stream if asked else converse("non_stream")
                if first is None:
                    return
                ran = replace(ran, first=first)
                box["ran"] = ran
                whole, streamed = _answers(first), _answers(outcome)
                if whole is not None and streamed is not None and whole != streamed:
                    box["ran"] = replace(ran, repeat=converse("non_stream"))
            except Exception:  # a non-streamed answer the adapter cannot decode: judged in its own case
                return

    run = run_case(work, timeout=options.timeout, fence=fence, name=f"certify {column.name} {scenario.id} {mode}")
    ran = box.get("ran")
    if ran is not None:
        answered.extend(ran.exchanges)
    if run.timed_out:
        message = (
            f"the case did not end within {options.timeout:g} s (raise it with --timeout); its exchange in flight "
            "was cut and the run went on"
        )
        return _case(column, scenario.id, mode, "error", message=message, exchanges=ran.exchanges if ran else ()), None
    if ran is None or (run.error is not None and not isinstance(run.error, TransportError)):
        message = f"the case raised {type(run.error).__name__}: {run.error}"
        exchanges = ran.exchanges if ran else ()
        return _case(
            column, scenario.id, mode, "error", message=message, traceback=run.trace, exchanges=exchanges
        ), None
    verdicts = _judge(column, mode, ran, options)
    status = worst([v.status for v in verdicts])
    message = _message(ran.fence, ran.too_large, ran.exchanges, ran.outcome, verdicts, options, ran.crash)
    kept = ran.exchanges if status in ("fail", "error", "deviated") else ()
    case = _case(column, scenario.id, mode, status, checks=verdicts, message=message, exchanges=kept)
    return case, ran.outcome


def _judge(column: Adapter, mode: Mode, ran: _Ran, options: ServerOptions) -> tuple[CheckVerdict, ...]:
    exchanges = server_exchanges(ran.exchanges, wire=column.wire_format, base_url=options.base_url, outcome=ran.outcome)
    verdicts: list[CheckVerdict] = list(answer_verdicts(exchanges))
    if ran.crash is not None and not any(v.status == "fail" for v in verdicts):
        verdicts.append(
            CheckVerdict(
                check="server.shape",
                status="error",
                message=f"the {column.wire_format} reference adapter raised {type(ran.crash).__name__}: "
                f"{ran.crash} decoding an answer the shape checks pass (a defect of the suite: report it)",
            )
        )
    if ran.outcome is not None:
        verdicts.append(_model_verdict(ran.scenario, ran.outcome))
    if mode == "stream" and ran.first is not None and ran.outcome is not None:
        judged = _modes_verdict(ran.first, ran.outcome, ran.repeat)
        if judged is not None:
            verdicts.append(judged)
    if options.checks is not None:
        verdicts = [v for v in verdicts if v.check in options.checks]
    return tuple(verdicts)


def server_exchanges(
    exchanges: Sequence[Exchange], *, wire: str, base_url: str, outcome: ConversationOutcome | None = None
) -> tuple[ServerExchange, ...]:
    """The exchanges as ``conformance.checks.server`` judges them: what was sent, what arrived (the
    raw chunks of a stream), the turn, the tools the request offered and the one it forced. A 3xx
    is a refused redirect (the suite connects to ``base_url`` only); a body cut at the bound is
    ``truncated``; an exchange without an answer has status 0 and ``error`` says why."""
    turns = [t.turn for t in outcome.turns] if outcome is not None else []
    out: list[ServerExchange] = []
    for index, exchange in enumerate(exchanges):
        headers: dict[str, str] = {}
        for name, value in exchange.response_headers:
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
        status = exchange.status or 0
        error = exchange.error or ""
        if 300 <= status < 400:
            location = headers.get("location", "no location header")
            error = (
                f"redirect refused: HTTP {status} to {location}; the suite connects only to {base_url} and follows "
                "no redirect (give the URL the server answers at)"
            )
        body = exchange.request_json
        out.append(
            ServerExchange(
                wire=wire,
                stream=exchange.stream,
                request=exchange.request_body,
                status=status,
                headers=headers,
                body=exchange.response_body,
                chunks=exchange.chunks,
                turn=turns[index] if index < len(turns) else index,
                error=error,
                truncated="the response body passed" in error,
                tools=offered_tools(wire, body),
                forced=forced_tool(wire, body),
            )
        )
    return tuple(out)


def _model_verdict(scenario: Scenario, outcome: ConversationOutcome) -> CheckVerdict:
    """``server.model``: what the model chose, against the scenario's loose expectations."""
    found = deviations(scenario, [outcome])
    if not found:
        return CheckVerdict(check="server.model", status="pass")
    return CheckVerdict(
        check="server.model",
        status="deviated",
        message="model deviated: " + "; ".join(found),
    )


def _answers(outcome: ConversationOutcome) -> list[dict[str, Any]] | None:
    """Each turn's decoded answer (text, calls and their arguments; ids and the finish reason left
    out), or None when a turn has no answer to compare (an error, a broken exchange)."""
    answers: list[dict[str, Any]] = []
    for turn in outcome.turns:
        if turn.error is not None or turn.response is None or turn.transport_error is not None:
            return None
        projection = response_projection(turn.response)
        answers.append({"turn": turn.turn, "text": projection["text"], "calls": projection["calls"]})
    return answers


def _modes_verdict(
    first: ConversationOutcome, streamed: ConversationOutcome, repeat: ConversationOutcome | None
) -> CheckVerdict | None:
    """``server.modes``: the streamed answer against the non-streamed one (None: nothing to compare)."""
    whole, stream = _answers(first), _answers(streamed)
    if whole is None or stream is None:
        return None
    if whole == stream:
        return CheckVerdict(check="server.modes", status="pass")
    again = _answers(repeat) if repeat is not None else None
    if again is None or again != whole:
        shown = "no answer" if again is None else _shown(again)
        return CheckVerdict(
            check="server.modes",
            status="unsupported",
            message=(
                "the server is not deterministic at temperature 0 with a seed: the same non-streamed request "
                f"answered {_shown(whole)}, then {shown}; streamed and non-streamed answers cannot be compared"
            ),
        )
    findings = [
        Finding(
            check="server.modes",
            path=f"turn {a['turn']}",
            turn=a["turn"],
            expected={"text": a["text"], "calls": a["calls"]},
            actual={"text": b["text"], "calls": b["calls"]},
            wrong_mode="stream",
            message=(
                f"turn {a['turn']}: the streamed answer decodes to {_shown([b])} where the same request non-streamed "
                f"decodes to {_shown([a])} (asked twice, the same both times): the stream and the whole answer differ"
            ),
        )
        for a, b in zip(whole, stream, strict=False)
        if a != b
    ]
    if not findings:  # one has more turns than the other
        findings = [
            Finding(
                check="server.modes",
                path="turns",
                expected=len(whole),
                actual=len(stream),
                wrong_mode="stream",
                message=f"the streamed conversation has {len(stream)} answered turns, the non-streamed {len(whole)}",
            )
        ]
    return CheckVerdict(check="server.modes", status="fail", findings=tuple(findings))


def _shown(answers: Sequence[Mapping[str, Any]], limit: int = 300) -> str:
    text = json.dumps([{k: v for k, v in a.items() if k != "turn"} for a in answers], ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _message(
    fence: Fence,
    too_large: str | None,
    exchanges: Sequence[Exchange],
    outcome: ConversationOutcome | None,
    verdicts: Sequence[CheckVerdict],
    options: ServerOptions,
    crash: BaseException | None = None,
) -> str:
    """The case's one line: what cut it (and the option that moves the bound), else why it stopped."""
    if fence.overran is not None:
        return f"deadline: {fence.overran} (raise it with --exchange-timeout)"
    if too_large is not None:
        return f"{too_large} (raise it with --max-body)"
    for exchange in exchanges:
        path = httpx.URL(exchange.url).path
        if exchange.status is not None and 300 <= exchange.status < 400:
            where = f"{exchange.method} {path}: HTTP {exchange.status}"
            return f"{where}, a redirect, refused: only {options.base_url} is connected to"
        if exchange.status is None:
            return f"{exchange.method} {path}: no answer ({exchange.error or 'none'})"
    if crash is not None:
        return f"the reference adapter could not decode the answer: {type(crash).__name__}: {crash}"
    deviated = next((v.message for v in verdicts if v.status == "deviated"), "")
    if deviated and worst([v.status for v in verdicts]) == "deviated":
        return deviated
    if outcome is not None and outcome.stopped:
        return f"conversation stopped early: {outcome.stopped}"
    return ""


# --------------------------------------------------------------------------------------------
# Invalid-request probes
# --------------------------------------------------------------------------------------------


def _probe_cases(
    column: Adapter, probe: str, basic: Scenario | None, options: ServerOptions, answered: list[Exchange]
) -> list[CaseResult]:
    case_id = probe_id(probe)
    wire = column.wire_format
    model = options.model or DEFAULT_MODELS.get(wire, "model")
    built = probe_request(probe, column, basic, model=model) if basic is not None else None
    if built is None:
        if basic is None:
            why = "no scenario with one tool and a user message to build the request from (basic/single_call)"
            return [_case(column, case_id, "non_stream", "unsupported", message=why)]
        unsent = ServerExchange(wire=wire, stream=False, request=b"", status=0)
        verdict = error_verdict(probe, unsent, documented=False)
        return [_case(column, case_id, "non_stream", "unsupported", checks=(verdict,), message=verdict.message)]
    fence = Fence(options.exchange_timeout)
    box: dict[str, Any] = {}

    def work() -> None:
        with open_transport(
            options.base_url,
            wire=wire,
            api_key=options.api_key,
            exchange_timeout=options.exchange_timeout,
            max_body=options.max_body,
            fence=fence,
        ) as transport:
            try:
                _send(transport, built.method, built.path, built.headers, built.body)
            except TransportError:
                pass  # logged in the exchange: judged below
            finally:
                box["exchanges"] = tuple(transport.exchanges)
                box["too_large"] = transport.too_large

    run = run_case(work, timeout=options.timeout, fence=fence, name=f"certify {column.name} {case_id}")
    exchanges: tuple[Exchange, ...] = box.get("exchanges", ())
    if run.timed_out or not exchanges:
        message = (
            f"the case did not end within {options.timeout:g} s (raise it with --timeout)"
            if run.timed_out
            else f"the case raised {type(run.error).__name__}: {run.error}"
        )
        return [_case(column, case_id, "non_stream", "error", message=message, traceback=run.trace)]
    answered.extend(e for e in exchanges if e.status is not None and e.status < 300)
    sent = replace(
        server_exchanges(exchanges, wire=wire, base_url=options.base_url)[0],
        request=built.body,
        tools=built.tools,
        forced=built.forced,
    )
    verdict = error_verdict(probe, sent, documented=True)
    if verdict.status in ("pass", "fail"):
        verdict = replace(verdict, message=f"{verdict.message}{'; ' if verdict.message else ''}rule: {built.rule}")
    verdicts = (verdict,) if options.checks is None or verdict.check in options.checks else ()
    status = worst([v.status for v in verdicts])
    message = _message(fence, box.get("too_large"), exchanges, None, verdicts, options)
    kept = exchanges if status in ("fail", "error") else ()
    return [_case(column, case_id, "non_stream", status, checks=verdicts, message=message, exchanges=kept)]


def _send(transport: ProbeTransport, method: str, path: str, headers: Mapping[str, str], body: bytes) -> None:
    transport.send_bytes(WireRequest(method=method, path=path, body={}, headers=headers), body)


# --------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------


def _case(column: Adapter, scenario_id: str, mode: Mode, status: Any, **fields: Any) -> CaseResult:
    exchanges = fields.pop("exchanges", None) or ()
    return CaseResult(
        adapter=column.name,
        scenario=scenario_id,
        mode=mode,
        status=status,
        exchanges=tuple(exchange_view(e) for e in exchanges),
        **fields,
    )


def _scrubbed(case: CaseResult, scrubber: Scrubber) -> CaseResult:
    """``case`` with the API key (and any key-shaped string) taken out of every message, finding
    and exchange it keeps: a server may echo the key in an error."""
    checks = tuple(
        replace(
            v,
            message=scrubber.text(v.message),
            findings=tuple(
                replace(
                    f,
                    message=scrubber.text(f.message),
                    expected=scrubber.json(f.expected),
                    actual=scrubber.json(f.actual),
                )
                for f in v.findings
            ),
        )
        for v in case.checks
    )
    return replace(
        case,
        message=scrubber.text(case.message),
        traceback=scrubber.text(case.traceback) if case.traceback else case.traceback,
        checks=checks,
        exchanges=tuple(scrubber.json(dict(e)) for e in case.exchanges),
    )
