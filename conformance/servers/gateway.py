"""Certify a gateway: a server that takes one wire downstream and calls a provider on another.

A gateway (LiteLLM's proxy, an OpenRouter-style router, an Anthropic-to-OpenAI bridge) is a
black-box client of its upstream wire, so it is certified the way a client is
(``conformance.clients.harness.certify``): the emulator plays each scenario's cassette for the
upstream wire on ``upstream_port`` (the port the gateway is configured to call), captures what the
gateway sent there, and the translation, round-trip and ``client.*`` checks judge it. The client
under certification is a ``GatewayClient``: each turn it encodes the call's request with the
downstream wire's reference adapter (the model is the gateway's route for that upstream), POSTs it
to the gateway and decodes the answer with the same adapter (``response_from_wire``,
``stream_from_wire``; an error status through ``error_from_wire``, raised as the
``ProviderError`` whose info ``error_info`` returns). So a 529 the emulator plays upstream must
reach the caller as the downstream wire's overload error with its retry-after, which the recovery
checks judge. Each downstream answer's bytes are also judged for shape by
``conformance.checks.server.answer_verdicts`` (``ServerExchange``), added to the case's verdicts.

Columns are ``name@downstream/upstream`` (``litellm-proxy@openai_chat/anthropic``). The emulator
has one fixed port, so the cases run one at a time in this process.

Bounded as ``record --live`` is: the suite connects to ``base_url`` alone (redirects are not
followed, no proxy from the environment), each exchange has ``exchange_timeout`` seconds in all
(and as much per read), a body past ``max_body`` bytes is cut; a gateway that does not answer, answers
forever or sends too much makes that case an ERROR naming the URL and what to do, and the run goes
on. The gateway's key (``api_key``, from ``--api-key-env``) goes in the downstream wire's auth header
(``conformance.traffic.transport.auth_headers``) and never into a report.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from conformance.adapters import for_format
from conformance.adapters.base import Adapter, WireRequest, load_json_body
from conformance.checks import FAMILIES, CaseContext
from conformance.checks._common import verdict
from conformance.checks.server import ServerExchange, answer_verdicts
from conformance.clients.contract import CLIENT_WIRES, Call, Completion
from conformance.clients.harness import CertifyOptions, certify
from conformance.clients.invoke import ClientCrashed
from conformance.errors import ProviderError, TransportError, TransportTimeoutError, UsageError, WireFormatError
from conformance.model import ErrorInfo, Request
from conformance.run.shard import Shard
from conformance.scenarios.values import MODES, Mode, Scenario
from conformance.traffic.transport import Transport
from conformance.verdicts import CaseResult, CheckVerdict, Finding, RunResult

__all__ = [
    "BROKEN_TRAFFIC_KINDS",
    "CROSS_WIRE_LOSSES",
    "DEFAULT_MAX_BODY",
    "DOCUMENTED_STATUSES",
    "DOWNSTREAM_DIFFERENCES",
    "GATEWAY_DUTIES",
    "NAMEABLE_FINISH",
    "RETRYABLE_STATUSES",
    "SERVER_SIDE_KINDS",
    "WIRE_LIMITS",
    "GatewayClient",
    "GatewayOptions",
    "WireLimit",
    "caller_wire_review",
    "certify_gateway",
    "certify_options",
    "gateway_capabilities",
    "shape_judged",
]

DEFAULT_MAX_BODY = 16 * 1024 * 1024
"""Bytes one downstream answer may have (decoded) before it is cut: a scenario's answer is a few KB."""

GATEWAY_DUTIES: frozenset[str] = frozenset({"transport", "tool_names", "tool_schemas", "tool_results"})
"""What a translating gateway takes on (``conformance.clients.contract.DUTIES``): it carries the
conversation, and maps the caller's tool names, schemas and tool results to what the upstream accepts
(the caller wrote them for the downstream wire). Reading providers' quirks is not asked of it."""


DOWNSTREAM_DIFFERENCES: Mapping[str, Mapping[str, str]] = {
    "anthropic": {
        "$.max_tokens": "the Anthropic wire requires max_tokens (wire-formats.md §3a), so a caller of a gateway's"
        " Anthropic endpoint always sends one (the reference adapter 1024 when the scenario sets none) and the"
        " gateway rightly forwards it"
    },
}
"""Downstream wire -> what every request through it carries beyond the scenario (the read-back path
glob -> why), so ``client.recorded_request`` does not hold it against the gateway."""


@dataclass(frozen=True, kw_only=True)
class GatewayOptions:
    """What ``certify_gateway`` needs: the gateway, its wires, and the run's choices."""

    base_url: str
    """The gateway (``http://127.0.0.1:4000``): the only URL the suite connects to."""
    wire: str
    """The downstream wire the suite speaks to the gateway."""
    upstreams: tuple[str, ...]
    """The wires the gateway calls the emulator with, one column each."""
    upstream_port: int
    """The emulator listens here: the gateway is configured to call ``http://127.0.0.1:PORT``."""
    model: str = "emulator-{upstream}"
    """The gateway's route name; ``{upstream}`` is replaced by each upstream wire."""
    api_key: str | None = None
    """The gateway's key (``--api-key-env``): sent in the downstream wire's auth header, never printed."""
    name: str = "gateway"
    families: tuple[str, ...] = tuple(FAMILIES)
    checks: frozenset[str] | None = None
    select: Callable[[str, str, str], bool] | None = None
    """``-k``: (column, scenario id, mode) -> run this case?"""
    modes: tuple[Mode, ...] = MODES
    timeout: float = 120.0
    """Seconds per turn (the gateway's own retries and timeouts count in it)."""
    exchange_timeout: float = 60.0
    """Seconds one downstream exchange may take in all, and per read."""
    max_body: int = DEFAULT_MAX_BODY
    fail_fast: bool = False
    shard: Shard | None = None
    known_gaps: Mapping[str, str] = field(default_factory=dict)
    """Check id (or ``check@glob``, ``wire:check``) -> why the gateway is known to fail it: XFAIL."""


CROSS_WIRE_LOSSES: frozenset[str] = frozenset({"reasoning_replay"})
"""What no gateway can carry from one wire to another: a provider's signed or encrypted reasoning
(an Anthropic ``thinking`` block's ``signature``, a Gemini ``thoughtSignature``, a Responses
``encrypted_content``) has no field on another wire's request, so the caller cannot send it back
through the gateway (wire-formats.md §1b-§5b)."""


def gateway_capabilities(downstream: str, upstream: str) -> frozenset[str]:
    """What a gateway from ``downstream`` to ``upstream`` can be asked: what both wires' reference
    adapters carry, less ``CROSS_WIRE_LOSSES`` between two different wires (a scenario needing more
    is UNSUPPORTED on that column)."""
    both = for_format(downstream).capabilities & for_format(upstream).capabilities
    return both if downstream == upstream else both - CROSS_WIRE_LOSSES


NAMEABLE_FINISH: Mapping[str, frozenset[str]] = {
    # openai-python types/chat/chat_completion.py: finish_reason Literal["stop", "length", "tool_calls",
    # "content_filter", "function_call"] (read as conformance.adapters.openai_chat._FINISH_REASONS does)
    "openai_chat": frozenset({"stop", "length", "tool_calls", "content_filter"}),
    # anthropic-python types/stop_reason.py: end_turn, max_tokens, stop_sequence, tool_use, pause_turn,
    # refusal, model_context_window_exceeded. The unified "other" is pause_turn there, which tells the caller
    # to send the turn back to continue it: another provider's unnamed ending (Gemini's OTHER) has no name
    # on this wire (across wires only: Anthropic to Anthropic carries pause_turn as it is)
    "anthropic": frozenset({"stop", "length", "tool_calls", "content_filter"}),
    # ollama-python ChatResponse.done_reason: stop or length (wire-formats.md §5)
    "ollama": frozenset({"stop", "length", "tool_calls"}),
}
"""Downstream wire -> the finish reasons (``conformance.model.FinishReason``) its answer can name; a
scenario's reason outside them reaches the caller as some other name, whatever the gateway does."""

DOCUMENTED_STATUSES: Mapping[str, frozenset[int]] = {
    # wire-formats.md §3e (Anthropic's errors page): 400, 401, 402, 403, 404, 413, 429, 500, 504, 529
    "anthropic": frozenset({400, 401, 402, 403, 404, 413, 429, 500, 504, 529}),
}
"""Downstream wire -> the error statuses it documents; an upstream status outside them (a 503 toward
Anthropic's wire) reaches the caller under another status, whatever the gateway does (the error's
kind is still judged)."""

BROKEN_TRAFFIC_KINDS: frozenset[str] = frozenset({"stream_incomplete", "malformed_response"})
"""Error kinds no wire's error body names: the caller's decoder gives them to broken traffic
(``conformance.model.ErrorKind``), so a gateway that got broken traffic upstream can only report an
error of its own: a server error (5xx, or an error the caller's wire does not name) is right, a
4xx blaming the caller is not."""

SERVER_SIDE_KINDS: frozenset[str] = frozenset({"server", "unknown"})
"""The kinds of a gateway's own error for a failure upstream (an HTTP 5xx, or an unnamed error)."""

RETRYABLE_STATUSES: frozenset[int] = frozenset({408, 429, 500, 502, 503, 504, 529})
"""Upstream answers a gateway may retry as its policy (LiteLLM's proxy retries them ``num_retries``
times by default: https://docs.litellm.ai/docs/proxy/reliability, router_rust/core.py:721-722 of
litellm 1.110.2); a retry of anything else is still a defect."""

_TOOL_RESULT_PATHS = re.compile(r"\.(is_error|error)$")
_REASONING_PATHS = re.compile(r"thoughtSignature|signature|encrypted_content|reasoning|thinking")


@dataclass(frozen=True, kw_only=True)
class WireLimit:
    """Something the caller's (downstream) wire cannot carry, and the findings it explains: on a
    gateway those findings are notes (what a gateway can deliver is what both wires carry)."""

    name: str
    downstream: frozenset[str] | None
    """The downstream wires without it (None: every wire)."""
    checks: frozenset[str]
    applies: Callable[[Finding, CaseContext, str], bool]
    """(finding, the case, the downstream wire) -> is the finding about this limit?"""
    why: str
    """Why it is not the gateway's defect, with the source that shows it."""
    cross_wire: bool = False
    """Only where the upstream wire differs from the downstream one."""


def _error_prefixed(finding: Finding, ctx: CaseContext, downstream: str) -> bool:
    """Is the finding a tool result's error flag, or its text with the ``Error: `` prefix the
    caller's wire carries the flag as (conformance.adapters.openai_chat/ollama)?"""
    if _TOOL_RESULT_PATHS.search(finding.path):  # Anthropic's is_error, Gemini's response.error
        return finding.path.endswith(".is_error") or "functionResponse" in finding.path
    if "functionResponse" in finding.path and isinstance(finding.actual, str):  # the text as a result, not an error
        return finding.actual.startswith("Error: ")
    if not isinstance(finding.expected, str) or not isinstance(finding.actual, str):
        return False
    squeeze = "".join
    return squeeze(finding.actual.split()) == "Error:" + squeeze(finding.expected.split())


def _reasoning_source(finding: Finding, ctx: CaseContext, downstream: str) -> bool:
    return finding.path.endswith(".source") and finding.actual == downstream


def _reasoning_not_replayed(finding: Finding, ctx: CaseContext, downstream: str) -> bool:
    """Reasoning (or its signature) not sent back; a foreign provider's reasoning sent upstream is
    still a defect."""
    if finding.check == "client.recorded_request":
        return finding.actual is None and _REASONING_PATHS.search(finding.path) is not None
    return not finding.message.startswith("reasoning produced by")


def _unnameable_finish(finding: Finding, ctx: CaseContext, downstream: str) -> bool:
    nameable = NAMEABLE_FINISH.get(downstream)
    return finding.path == "$.finish_reason" and nameable is not None and finding.expected not in nameable


def _broken_traffic_kind(finding: Finding, ctx: CaseContext, downstream: str) -> bool:
    return (
        finding.path == "$.error.kind"
        and finding.expected in BROKEN_TRAFFIC_KINDS
        and finding.actual in SERVER_SIDE_KINDS
    )


def _undocumented_status(finding: Finding, ctx: CaseContext, downstream: str) -> bool:
    documented = DOCUMENTED_STATUSES.get(downstream)
    return finding.path == "$.error.status" and documented is not None and finding.expected not in documented


def _reasoning_counted_as_output(finding: Finding, ctx: CaseContext, downstream: str) -> bool:
    """Output tokens that are the upstream's plus the answer's reasoning tokens: the caller's wire
    counts reasoning in its output (OpenAI Chat's ``completion_tokens``, with
    ``completion_tokens_details.reasoning_tokens`` a part of it), Gemini's ``candidatesTokenCount``
    does not."""
    if finding.path != "$.usage.output_tokens":
        return False
    try:
        expected, actual = int(finding.expected), int(finding.actual)
    except (TypeError, ValueError):
        return False
    for turn in ctx.outcome.turns:
        usage = turn.response.usage if turn.response is not None else None
        if finding.turn not in (None, turn.turn) or usage is None or not usage.reasoning_tokens:
            continue
        if actual == expected + usage.reasoning_tokens:
            return True
    return False


def _policy_retries(finding: Finding, ctx: CaseContext, downstream: str) -> bool:
    """Hidden retries of answers a gateway may retry: the upstream failed (every request of the turn
    but the last got one of ``RETRYABLE_STATUSES``, or the emulator played a fault there: a cut or
    malformed answer is a failed call to the gateway as to any client)."""
    if not isinstance(finding.actual, int) or finding.actual < 2:
        return False
    turn = next((t for t in ctx.client or () if t.turn == finding.turn), None)
    if turn is None:
        return False
    turns = ctx.scenario.turns
    if finding.turn is not None and 0 <= finding.turn < len(turns) and turns[finding.turn].reply.fault is not None:
        return True
    return all(s.status in RETRYABLE_STATUSES for s in turn.sent[:-1])


def _mapped_tool_name(finding: Finding, ctx: CaseContext, downstream: str) -> bool:
    """A caller's tool name the gateway changed for the upstream (``gmail.search`` ->
    ``gmail_search``, a long name hashed): its duty ``tool_names``; whether the answer's calls
    carry the caller's names again is judged on the answer (``roundtrip.*``)."""
    names = {t.name for t in ctx.scenario.tools}
    return (
        re.search(r"\.(name|call)$", finding.path) is not None
        and finding.expected in names
        and isinstance(finding.actual, str)
        and finding.actual not in names
    )


def _gemini_array_items(finding: Finding, ctx: CaseContext, downstream: str) -> bool:
    """An ``items`` schema the gateway added to an array schema that had none, toward Gemini, which
    refuses such a schema: its duty ``tool_schemas``."""
    return (  # the items schema added (translation), or a key of it (client.recorded_request compares leaves)
        ctx.adapter.wire_format == "gemini"
        and re.search(r"\.items(\.|$)", finding.path) is not None
        and finding.expected is None
        and finding.actual is not None
    )


WIRE_LIMITS: tuple[WireLimit, ...] = (
    WireLimit(
        name="tool_result_error",
        downstream=frozenset({"openai_chat", "ollama"}),
        checks=frozenset({"translation.wire_paths", "client.recorded_request", "roundtrip.request"}),
        applies=_error_prefixed,
        why="the caller's wire has no error flag on a tool result (openai-python"
        " ChatCompletionToolMessageParam: role, content, tool_call_id; ollama-python Message: role, content,"
        " tool_name), so the caller sends it as an 'Error: ' prefix on the text and the gateway cannot know more",
    ),
    WireLimit(
        name="reasoning_source",
        downstream=None,
        checks=frozenset({"roundtrip.reasoning"}),
        applies=_reasoning_source,
        why="the caller decodes the gateway's answer on its own wire, which has no field naming the provider"
        " that produced the reasoning",
        cross_wire=True,
    ),
    WireLimit(
        name="reasoning_replay",
        downstream=None,
        checks=frozenset({"roundtrip.reasoning_replay", "client.recorded_request"}),
        applies=_reasoning_not_replayed,
        why="the upstream's signed or encrypted reasoning has no field on the caller's wire, so the caller"
        " cannot send it back through the gateway (CROSS_WIRE_LOSSES; wire-formats.md §1b-§5b)",
        cross_wire=True,
    ),
    WireLimit(
        name="finish_reason",
        downstream=None,
        checks=frozenset({"roundtrip.finish_reason"}),
        applies=_unnameable_finish,
        why="the caller's wire has no name for this finish reason (NAMEABLE_FINISH, from the official SDK's"
        " finish reason type), so the gateway must answer another one",
        cross_wire=True,
    ),
    WireLimit(
        name="broken_traffic_kind",
        downstream=None,
        checks=frozenset({"recovery.provider_error"}),
        applies=_broken_traffic_kind,
        why="no wire's error body names broken upstream traffic (BROKEN_TRAFFIC_KINDS); the gateway reported"
        " it as a server-side error, which is what it can say",
    ),
    WireLimit(
        name="reasoning_tokens",
        downstream=frozenset({"openai_chat"}),
        checks=frozenset({"roundtrip.usage"}),
        applies=_reasoning_counted_as_output,
        why="OpenAI Chat counts reasoning in completion_tokens (openai-python CompletionUsage:"
        " completion_tokens_details.reasoning_tokens); the upstream's output count did not",
        cross_wire=True,
    ),
    WireLimit(
        name="error_status",
        downstream=frozenset(DOCUMENTED_STATUSES),
        checks=frozenset({"recovery.provider_error"}),
        applies=_undocumented_status,
        why="the caller's wire documents no such status (DOCUMENTED_STATUSES, wire-formats.md §3e: Anthropic's"
        " overload is 529 overloaded_error); the error's kind is judged on its own",
    ),
    WireLimit(
        name="policy_retries",
        downstream=None,
        checks=frozenset({"client.one_request"}),
        applies=_policy_retries,
        why="a gateway's retries of an upstream 429/5xx or broken answer are its documented policy, not a hidden"
        " defect"
        " (LiteLLM: num_retries, https://docs.litellm.ai/docs/proxy/reliability)",
    ),
    WireLimit(
        name="tool_names",
        downstream=None,
        checks=frozenset(
            {"translation.tool_definitions", "translation.tool_names", "roundtrip.request", "client.recorded_request"}
        ),
        applies=_mapped_tool_name,
        why="the caller's wire (Chat: ^[a-zA-Z0-9_-]{1,64}$, wire-formats.md §10 E14) or the gateway maps the"
        " tool names to what the upstream accepts (its duty tool_names); the answer's calls are judged against"
        " the caller's names (roundtrip.calls)",
    ),
    WireLimit(
        name="gemini_array_items",
        downstream=None,
        checks=frozenset({"translation.tool_definitions", "roundtrip.request", "client.recorded_request"}),
        applies=_gemini_array_items,
        why="Gemini refuses an array schema without items (400 'GenerateContentRequest.tools[0]."
        "function_declarations[N].parameters.properties[x].items: missing field', reported in crmne/ruby_llm#480"
        " and NousResearch/hermes-agent#69924), so a gateway adding items meets the upstream's rule (its duty"
        " tool_schemas)",
    ),
)
"""What a gateway cannot deliver because the caller's wire cannot carry it, written down once:
``caller_wire_review`` turns the findings each explains into notes. Everything else still fails
(a retry-after dropped, an overload turned into a 500, broken traffic blamed on the caller with a
4xx, a cut stream passed off as complete, ids changed, a call crashing the gateway ...)."""


def caller_wire_review(
    ctx: CaseContext, verdicts: tuple[CheckVerdict, ...], *, downstream: str
) -> tuple[CheckVerdict, ...]:
    """``verdicts`` with each defect finding a ``WIRE_LIMITS`` entry explains made a ``note`` that
    says why (a verdict left without defects passes)."""
    upstream = ctx.adapter.wire_format
    limits = [
        limit
        for limit in WIRE_LIMITS
        if (limit.downstream is None or downstream in limit.downstream)
        and not (limit.cross_wire and upstream == downstream)
    ]
    out: list[CheckVerdict] = []
    for v in verdicts:
        if v.status != "fail":
            out.append(v)
            continue
        findings: list[Finding] = []
        for f in v.findings:
            limit = next(
                (x for x in limits if f.kind == "defect" and v.check in x.checks and x.applies(f, ctx, downstream)),
                None,
            )
            if limit is not None:
                f = dataclasses.replace(f, kind="note", message=f"{f.message}; not a gateway defect: {limit.why}")
            findings.append(f)
        out.append(dataclasses.replace(verdict(v.check, findings), message=v.message))
    return tuple(out)


class GatewayClient:
    """The gateway as a ``conformance.clients.contract.Client``: its wires are the upstreams, each
    turn goes to the gateway on the downstream wire. The raw downstream exchanges of the case in
    progress are kept (``take_exchanges``) for the shape checks."""

    def __init__(self, options: GatewayOptions) -> None:
        self.options = options
        self.name = f"{options.name}@{options.wire}"
        self.wires: Mapping[str, frozenset[str]] = {
            upstream: gateway_capabilities(options.wire, upstream) for upstream in options.upstreams
        }
        self.known_gaps: Mapping[str, str] = dict(options.known_gaps)
        self.duties: frozenset[str] = GATEWAY_DUTIES
        self.request_differences: Mapping[str, str] = dict(DOWNSTREAM_DIFFERENCES.get(options.wire, {}))
        self.adapter: Adapter = for_format(options.wire)
        self._lock = threading.Lock()
        self._case: tuple[str, str, bool] | None = None
        self._exchanges: list[ServerExchange] = []

    def route(self, upstream: str) -> str:
        """The gateway's model name for ``upstream``."""
        return self.options.model.replace("{upstream}", upstream)

    def caller_request(self, call: Call) -> Request:
        """The call's request as the downstream wire carries it (``request_from_wire`` of the
        downstream reference adapter's ``request_to_wire``): what the gateway could know of what
        the caller gave (a tool result's error flag is an ``Error: `` prefix on OpenAI Chat, replayed
        reasoning has no field there), so the request checks compare the upstream request with it."""
        request = call.request()
        try:
            wire = self.adapter.request_to_wire(dataclasses.replace(request, model=self.route(call.wire)))
            seen = self.adapter.request_from_wire(wire.body, path=wire.path, tools=call.tools)
        except Exception:  # the downstream adapter cannot carry it at all: judged against the scenario's
            return request
        return dataclasses.replace(seen, model=request.model, stream=request.stream)

    def complete(self, call: Call) -> Completion:
        request = dataclasses.replace(call.request(), model=self.route(call.wire))
        wire = self.adapter.request_to_wire(request)
        tools = tuple(t.name for t in call.tools)
        named = call.tool_choice if call.tool_choice not in (None, "auto", "none", "required") else None
        with Transport(
            self.options.base_url,
            wire=self.options.wire,
            api_key=self.options.api_key,
            timeout=self.options.exchange_timeout,
            max_body=self.options.max_body,
        ) as transport:
            status, headers, chunks, error = self._exchange(transport, wire)
        body = b"".join(chunks)
        self._keep(
            call,
            ServerExchange(
                wire=self.options.wire,
                stream=wire.stream,
                request=json.dumps(wire.body).encode(),
                status=status,
                headers=headers,
                body=body,
                chunks=tuple(chunks) if wire.stream else (),
                turn=call.turn,
                error=error or "",
                truncated=error is not None and "max_body" in error,
                tools=tools,
                forced=named,
            ),
        )
        if error is not None:
            raise ClientCrashed(
                f"the gateway at {self.options.base_url} did not answer {wire.path} in full: {error}; check that it"
                " runs and calls the emulator on the upstream port"
            )
        if status >= 400:
            raise self.adapter.error_from_wire(status, headers, body)
        try:
            if wire.stream:
                return list(self.adapter.stream_from_wire(chunks, tools=call.tools))
            parsed = load_json_body(body)
            if not isinstance(parsed, dict):
                raise WireFormatError(f"the answer is not a JSON object: {body[:200]!r}")
            return self.adapter.response_from_wire(parsed, tools=call.tools)
        except WireFormatError as exc:
            raise ProviderError(
                ErrorInfo(kind="malformed_response", message=f"the gateway's answer is not {self.options.wire}: {exc}")
            ) from exc

    def _exchange(
        self, transport: Transport, wire: WireRequest
    ) -> tuple[int, Mapping[str, str], list[bytes], str | None]:
        """(status, headers, the body as it arrived, what broke the exchange) of one POST, within
        ``exchange_timeout`` seconds in all and ``max_body`` bytes."""
        deadline = time.monotonic() + self.options.exchange_timeout
        chunks: list[bytes] = []
        try:
            if not wire.stream:
                answer = transport.send(wire)
                return answer.status, answer.headers, [answer.body], _redirect(answer.status, answer.headers)
            with transport.stream(wire) as response:
                if (moved := _redirect(response.status, response.headers)) is not None:
                    return response.status, response.headers, [], moved
                for piece in response.chunks():
                    chunks.append(piece)
                    if time.monotonic() > deadline:
                        raise TransportTimeoutError(
                            f"the stream went on past {self.options.exchange_timeout:g} s", url=transport.url(wire)
                        )
                return response.status, response.headers, chunks, None
        except TransportError as exc:
            cut = " (max_body)" if transport.too_large else ""
            return 0, {}, chunks, f"{type(exc).__name__}: {exc}{cut}"

    def error_info(self, exc: BaseException) -> ErrorInfo | None:
        return exc.info if isinstance(exc, ProviderError) else None

    def _keep(self, call: Call, exchange: ServerExchange) -> None:
        with self._lock:
            case = (call.scenario, call.wire, call.stream)
            if case != self._case:
                self._case, self._exchanges = case, []
            self._exchanges.append(exchange)

    def take_exchanges(self, scenario: str, upstream: str, stream: bool) -> list[ServerExchange]:
        """The downstream exchanges of that case (then forgotten)."""
        with self._lock:
            kept = self._exchanges if self._case == (scenario, upstream, stream) else []
            self._case, self._exchanges = None, []
            return kept

    def case_verdicts(self, ctx: CaseContext) -> Sequence[CheckVerdict]:
        """The ``server.*`` verdicts of the case's downstream answers, on the turns where the
        emulator played an answer a provider sends as it is (``shape_judged``)."""
        exchanges = self.take_exchanges(ctx.scenario.id, ctx.adapter.wire_format, ctx.mode == "stream")
        judged = [e for e in exchanges if shape_judged(ctx.scenario, e.turn)]
        return answer_verdicts(judged) if judged else ()


def shape_judged(scenario: Scenario, turn: int) -> bool:
    """Is the gateway's downstream answer to this turn judged by the ``server.*`` checks? Not where
    the emulator played something broken on purpose or scripted beyond the wire's rules: a fault
    (an error status, a broken stream: the scenario expects the error, and ``recovery.*`` judges how
    it reached the caller), malformed argument text (``recovery.arguments_error`` judges it), a
    provider quirk, or a cut at ``length`` (the emulator's cut is at its own token count, not at the
    request's limit). A gateway that relays those as they came is doing its job; the shape checks
    would blame it for the upstream's answer."""
    if not 0 <= turn < len(scenario.turns):
        return True
    spec = scenario.turns[turn]
    reply, expect = spec.reply, spec.expect
    if reply.fault is not None or reply.quirks or expect.error is not None or reply.finish == "length":
        return False
    return not any(call.arguments_error for call in expect.tool_calls or ())


def _redirect(status: int, headers: Mapping[str, str]) -> str | None:
    """What to say of a redirect (never followed: the suite connects to the URL given alone)."""
    if not 300 <= status < 400:
        return None
    return f"it answered {status}, a redirect to {headers.get('location', '(no location)')!r}, not followed"


def _problems(options: GatewayOptions) -> list[str]:
    problems: list[str] = []
    if options.wire not in CLIENT_WIRES:
        problems.append(f"unknown downstream wire {options.wire!r} (valid: {', '.join(CLIENT_WIRES)})")
    if not options.upstreams:
        problems.append("name at least one upstream wire")
    if unknown := [u for u in options.upstreams if u not in CLIENT_WIRES]:
        problems.append(f"unknown upstream wire {', '.join(unknown)} (valid: {', '.join(CLIENT_WIRES)})")
    if not 0 < options.upstream_port < 65536:
        problems.append(f"the upstream port must be the one the gateway calls (1-65535), not {options.upstream_port}")
    if not options.base_url.startswith(("http://", "https://")):
        problems.append(f"the gateway URL must start with http:// or https:// (got {options.base_url!r})")
    return problems


def certify_gateway(
    scenarios: Sequence[Scenario],
    options: GatewayOptions,
    *,
    progress: Callable[[CaseResult], None] | None = None,
    problems: Sequence[str] = (),
) -> RunResult:
    """Every chosen (upstream, scenario, mode) case of the gateway; the run's ``RunResult``.
    ``UsageError`` for options that cannot be run (an unknown wire, no upstream, no port)."""
    wrong = _problems(options)
    if wrong:
        raise UsageError("; ".join(wrong))
    client = GatewayClient(options)
    return certify(scenarios, client, certify_options(options, client), progress=progress, problems=problems)


def certify_options(options: GatewayOptions, client: GatewayClient) -> CertifyOptions:
    """The client harness's options for a gateway: its cases one at a time in this process (the
    emulator listens on the one port the gateway calls), the downstream answers' shape verdicts
    added to each case, and the findings the caller's wire explains made notes."""
    return CertifyOptions(
        families=options.families,
        checks=options.checks,
        modes=options.modes,
        timeout=options.timeout,
        select=options.select,
        fail_fast=options.fail_fast,
        isolate=False,
        jobs=1,
        shard=options.shard,
        port=options.upstream_port,
        case_verdicts=client.case_verdicts,
        review=functools.partial(caller_wire_review, downstream=options.wire),
    )
