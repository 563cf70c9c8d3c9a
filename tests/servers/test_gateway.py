"""The gateway target (``conformance.servers.gateway``) against a tiny in-process gateway, so these
tests need no LiteLLM (the real proxy is the opt-in ``gateway`` tier, tests/servers/test_gateway_proxy.py).

``FakeGateway(upstream_port, upstream=WIRE)`` listens on 127.0.0.1 and answers OpenAI Chat
(``POST /v1/chat/completions``): it reads the request with the Chat reference adapter, writes it to
the upstream wire with that wire's reference adapter (the route's model becomes the wire's default
model, ``conformance.run.conversation.DEFAULT_MODELS``), POSTs it to the emulator on
``upstream_port``, decodes the upstream answer with the same adapter and answers in Chat's shape
(wire-formats.md §1c: a ``chat.completion`` object; §1d: ``chat.completion.chunk`` events, then
``data: [DONE]``). An upstream error is answered as Chat's error envelope (§1e) with the upstream
status and ``retry-after``. ``breaks`` makes it a gateway with a defect: ``"drop_call"`` drops the
last tool call of each answer; ``"overload_as_500"`` answers an upstream 529/503 as a 500.
"""

from __future__ import annotations

import dataclasses
import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace
from typing import Any

import httpx
import pytest

from conformance.adapters import for_format
from conformance.assembly import fold
from conformance.clients.harness import FAKE_API_KEY
from conformance.errors import WireFormatError
from conformance.model import ErrorInfo, Message, Reasoning, Response, Text, ToolCall, ToolResult, Usage
from conformance.run.conversation import DEFAULT_MODELS
from conformance.scenarios.loader import load_scenarios
from conformance.scenarios.values import Scenario
from conformance.servers.gateway import GatewayOptions, caller_wire_review, certify_gateway
from conformance.traffic.transport import auth_headers
from conformance.verdicts import CheckVerdict, Finding

_FINISH = {"stop": "stop", "tool_calls": "tool_calls", "length": "length", "content_filter": "content_filter"}


class FakeGateway:
    def __init__(self, upstream_port: int, *, upstream: str, breaks: str = "") -> None:
        self.upstream_port = upstream_port
        self.upstream = upstream
        self.breaks = breaks
        gateway = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                status, headers, payload = gateway.answer(self.path, body)
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> FakeGateway:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def answer(self, path: str, body: bytes) -> tuple[int, dict[str, str], bytes]:
        if path != "/v1/chat/completions":
            return 404, {"content-type": "application/json"}, b'{"error": {"message": "not found"}}'
        request = for_format("openai_chat").request_from_wire(json.loads(body))
        request = type(request)(**{**request.__dict__, "model": DEFAULT_MODELS[self.upstream]})
        if self.breaks == "plain_results":  # LiteLLM: the tool text as it came, no error flag read from it
            request = dataclasses.replace(request, messages=tuple(_plain(m) for m in request.messages))
        if self.breaks.startswith("rename"):  # names as some upstreams want them (LiteLLM toward Gemini)
            tools = tuple(dataclasses.replace(t, name=t.name.replace(".", "_")) for t in request.tools)
            request = dataclasses.replace(request, tools=tools)
        upstream = for_format(self.upstream)
        wire = upstream.request_to_wire(request)
        url = f"http://127.0.0.1:{self.upstream_port}{wire.path}"
        headers = {"content-type": "application/json", **wire.headers, **auth_headers(self.upstream, FAKE_API_KEY)}
        with httpx.Client(timeout=30, trust_env=False) as client:
            got = client.post(url, json=wire.body, headers=headers)
            for _ in range(2 if self.breaks == "retry" else 0):  # a documented retry policy
                if got.status_code in (429, 500, 503, 529):
                    got = client.post(url, json=wire.body, headers=headers)
        if got.status_code >= 400:
            info = upstream.error_from_wire(got.status_code, dict(got.headers), got.content).info
            return self._error(got.status_code, info)
        try:
            if wire.stream:
                response = fold(upstream.stream_from_wire(_pieces(got.content), tools=request.tools))
            else:
                response = upstream.response_from_wire(got.json(), tools=request.tools)
        except (WireFormatError, ValueError) as exc:  # the upstream's bytes are not its wire
            if self.breaks == "malformed_as_400":
                return self._error(400, ErrorInfo(kind="invalid_request", message=str(exc)))
            return self._error(502, ErrorInfo(kind="server", message=f"the upstream answer is not readable: {exc}"))
        if self.breaks == "rename_leak":  # the caller gets a name it did not give (a hashed one)
            response = dataclasses.replace(
                response,
                parts=tuple(
                    dataclasses.replace(p, name=f"{p.name}_4d5b4b1f") if isinstance(p, ToolCall) else p
                    for p in response.parts
                ),
            )
        if response.error is not None:
            return self._error(500, response.error)
        if self.breaks == "drop_call":
            calls = [p for p in response.parts if isinstance(p, ToolCall)]
            if calls:
                response = Response(
                    parts=tuple(p for p in response.parts if p is not calls[-1]),
                    finish_reason=response.finish_reason,
                    usage=response.usage,
                )
        model = request.model
        if wire.stream:
            return 200, {"content-type": "text/event-stream"}, _chat_stream(response, model)
        return 200, {"content-type": "application/json"}, json.dumps(_chat_completion(response, model)).encode()

    def _error(self, status: int, info: ErrorInfo) -> tuple[int, dict[str, str], bytes]:
        if self.breaks == "overload_as_500" and status in (503, 529):
            status, info = 500, ErrorInfo(kind="server", message=info.message)
        kinds = {
            "rate_limit": "rate_limit_exceeded",
            "overloaded": "overloaded",
            "server": "server_error",
            "invalid_request": "invalid_request_error",
        }
        code = kinds.get(info.kind)
        error = {"message": info.message, "type": code or "api_error", "param": None, "code": code}
        headers = {"content-type": "application/json"}
        if info.retry_after is not None:
            headers["retry-after"] = f"{info.retry_after:g}"
        return status, headers, json.dumps({"error": error}).encode()


def _plain(message: Message) -> Message:
    """The message with each error tool result as Chat carries it: an ``Error: `` text, no flag."""

    def plain(part: Any) -> Any:
        if not isinstance(part, ToolResult) or not part.is_error:
            return part
        text = "".join(c.text for c in part.content if isinstance(c, Text))
        return dataclasses.replace(part, is_error=False, content=(Text(text=f"Error: {text}"),))

    return dataclasses.replace(message, parts=tuple(plain(p) for p in message.parts))


def _pieces(body: bytes) -> Iterator[bytes]:
    yield body


def _calls(response: Response) -> list[dict[str, Any]]:
    return [
        {
            "id": p.id,
            "type": "function",
            "function": {"name": p.name, "arguments": p.arguments_raw or json.dumps(p.arguments or {})},
        }
        for p in response.parts
        if isinstance(p, ToolCall)
    ]


def _usage(response: Response) -> dict[str, Any]:
    """Chat's usage (openai-python ``CompletionUsage``; ``prompt_tokens_details.cached_tokens`` and
    ``cache_write_tokens``, ``completion_tokens_details.reasoning_tokens``)."""
    usage = response.usage
    prompt = (usage.input_tokens if usage else None) or 0
    completion = (usage.output_tokens if usage else None) or 0
    out: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": (usage.total_tokens if usage else None) or prompt + completion,
    }
    if usage is not None:
        details = {"cached_tokens": usage.cache_read_tokens, "cache_write_tokens": usage.cache_write_tokens}
        out["prompt_tokens_details"] = {k: v for k, v in details.items() if v is not None}
        if usage.reasoning_tokens is not None:
            out["completion_tokens_details"] = {"reasoning_tokens": usage.reasoning_tokens}
    return out


def _finish(response: Response) -> str:
    if _calls(response):
        return "tool_calls"
    return _FINISH.get(response.finish_reason or "stop", "stop")


def _reasoning(response: Response) -> str:
    """The answer's reasoning text, sent as ``reasoning_content`` (the field DeepSeek, llama.cpp and
    LiteLLM use on Chat; the Chat reference adapter reads it): its signature has no Chat field."""
    return "".join(p.text for p in response.parts if isinstance(p, Reasoning))


def _chat_completion(response: Response, model: str) -> dict[str, Any]:
    text = "".join(p.text for p in response.parts if isinstance(p, Text))
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if thought := _reasoning(response):
        message["reasoning_content"] = thought
    if calls := _calls(response):
        message["tool_calls"] = calls
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": _finish(response), "logprobs": None}],
        "usage": _usage(response),
    }


def _chat_stream(response: Response, model: str) -> bytes:
    base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1, "model": model}
    events: list[dict[str, Any]] = [{**base, "choices": [{"index": 0, "delta": {"role": "assistant"}}]}]
    if thought := _reasoning(response):
        events.append({**base, "choices": [{"index": 0, "delta": {"reasoning_content": thought}}]})
    text = "".join(p.text for p in response.parts if isinstance(p, Text))
    if text:
        events.append({**base, "choices": [{"index": 0, "delta": {"content": text}}]})
    for index, call in enumerate(_calls(response)):
        events.append({**base, "choices": [{"index": 0, "delta": {"tool_calls": [{"index": index, **call}]}}]})
    events.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": _finish(response)}]})
    events.append({**base, "choices": [], "usage": _usage(response)})
    lines = [f"data: {json.dumps(event)}\n\n" for event in events]
    return ("".join(lines) + "data: [DONE]\n\n").encode()


# --------------------------------------------------------------------------------------------
# The tests
# --------------------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def scenarios() -> dict[str, Scenario]:
    return {s.id: s for s in load_scenarios().scenarios}


def _certify(
    scenarios: dict[str, Scenario], ids: list[str], *, upstream: str = "anthropic", breaks: str = "", **extra: Any
) -> dict[tuple[str, str], Any]:
    port = _free_port()
    with FakeGateway(port, upstream=upstream, breaks=breaks) as gateway:
        options = GatewayOptions(
            base_url=gateway.base_url,
            wire="openai_chat",
            upstreams=(upstream,),
            upstream_port=port,
            name="fake",
            timeout=30,
            **extra,
        )
        result = certify_gateway([scenarios[i] for i in ids], options)
    return {(case.scenario, case.mode): case for case in result.cases}


def _failed(case: Any) -> set[str]:
    return {v.check for v in case.checks if v.status == "fail"}


@pytest.mark.parametrize("upstream", ["anthropic", "gemini", "ollama"])
def test_a_faithful_gateway_passes_the_basic_scenarios(scenarios: dict[str, Scenario], upstream: str) -> None:
    ids = ["basic/single_call", "basic/text_only_reply", "basic/parallel_calls", "multi_turn/call_result_answer"]
    cases = _certify(scenarios, ids, upstream=upstream)
    assert len(cases) == 8
    for (scenario, mode), case in cases.items():
        assert case.status == "pass", (scenario, mode, case.message, [v for v in case.checks if v.status != "pass"])
        assert case.adapter == f"fake@openai_chat/{upstream}"


def test_the_downstream_answers_are_judged_for_shape(scenarios: dict[str, Scenario]) -> None:
    cases = _certify(scenarios, ["basic/single_call"])
    for case in cases.values():
        assert any(v.check.startswith("server.") for v in case.checks), [v.check for v in case.checks]


def test_a_529_upstream_reaches_the_caller_as_an_overload_error(scenarios: dict[str, Scenario]) -> None:
    cases = _certify(scenarios, ["errors/overloaded"])
    for case in cases.values():
        assert "recovery.provider_error" not in _failed(case), case.checks


def test_a_gateway_that_drops_a_tool_call_fails_roundtrip_calls(scenarios: dict[str, Scenario]) -> None:
    cases = _certify(scenarios, ["basic/parallel_calls"], breaks="drop_call")
    for case in cases.values():
        assert case.status == "fail"
        assert _failed(case) == {"roundtrip.calls"}, _failed(case)
        finding = next(f for v in case.checks if v.check == "roundtrip.calls" for f in v.findings)
        assert (finding.expected, finding.actual) == (["get_weather", "get_weather"], ["get_weather"])


def test_a_gateway_that_turns_a_529_into_a_500_fails_recovery(scenarios: dict[str, Scenario]) -> None:
    cases = _certify(scenarios, ["errors/overloaded"], breaks="overload_as_500")
    for case in cases.values():
        assert case.status == "fail"
        assert "recovery.provider_error" in _failed(case)
        finding = next(f for v in case.checks if v.check == "recovery.provider_error" for f in v.findings)
        assert (finding.expected, finding.actual) == ("overloaded", "server")


def test_a_gateway_that_does_not_listen_is_an_error_naming_it(scenarios: dict[str, Scenario]) -> None:
    port, dead = _free_port(), _free_port()
    options = GatewayOptions(
        base_url=f"http://127.0.0.1:{dead}",
        wire="openai_chat",
        upstreams=("anthropic",),
        upstream_port=port,
        timeout=10,
    )
    result = certify_gateway([scenarios["basic/single_call"]], options)
    assert [c.status for c in result.cases] == ["error", "error"]
    for case in result.cases:
        assert f"the gateway at http://127.0.0.1:{dead} did not answer /v1/chat/completions" in case.message
        assert case.message.endswith("check that it runs and calls the emulator on the upstream port")


def test_a_gateway_that_never_answers_is_bounded(scenarios: dict[str, Scenario]) -> None:
    port = _free_port()
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        options = GatewayOptions(
            base_url=f"http://127.0.0.1:{silent.getsockname()[1]}",
            wire="openai_chat",
            upstreams=("anthropic",),
            upstream_port=port,
            timeout=20,
            exchange_timeout=1,
            modes=("non_stream",),
        )
        result = certify_gateway([scenarios["basic/single_call"]], options)
    assert [c.status for c in result.cases] == ["error"]
    assert "TransportTimeoutError" in result.cases[0].message


def test_options_that_cannot_run_are_refused() -> None:
    from conformance.errors import UsageError

    bad = GatewayOptions(base_url="127.0.0.1:4000", wire="soap", upstreams=("x",), upstream_port=0)
    with pytest.raises(UsageError) as raised:
        certify_gateway([], bad)
    for words in ("unknown downstream wire 'soap'", "unknown upstream wire x", "upstream port", "http://"):
        assert words in str(raised.value)


def test_a_gateway_that_redirects_is_not_followed(scenarios: dict[str, Scenario]) -> None:
    port = _free_port()

    class Redirect(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            self.send_response(307)
            self.send_header("location", "http://198.51.100.7/v1/chat/completions")
            self.send_header("content-length", "0")
            self.end_headers()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Redirect)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        options = GatewayOptions(
            base_url=f"http://127.0.0.1:{server.server_address[1]}",
            wire="openai_chat",
            upstreams=("anthropic",),
            upstream_port=port,
        )
        result = certify_gateway([scenarios["basic/single_call"]], options)
    finally:
        server.shutdown()
        server.server_close()
    assert [c.status for c in result.cases] == ["error", "error"]
    for case in result.cases:
        assert "it answered 307, a redirect to 'http://198.51.100.7/v1/chat/completions', not followed" in case.message


def test_an_answer_past_the_size_bound_is_cut_and_said(scenarios: dict[str, Scenario]) -> None:
    cases = _certify(scenarios, ["basic/single_call"], max_body=200)
    for case in cases.values():
        assert case.status == "error"
        assert "did not answer /v1/chat/completions in full: TransportError" in case.message
        assert "(max_body)" in case.message


# --------------------------------------------------------------------------------------------
# What the caller's wire cannot carry is not the gateway's defect (conformance.servers.gateway.WIRE_LIMITS)
# --------------------------------------------------------------------------------------------


def _notes(case: Any, check: str) -> list[Any]:
    return [f for v in case.checks if v.check == check for f in v.findings if f.kind == "note"]


@pytest.mark.parametrize("upstream", ["anthropic", "gemini", "ollama"])
def test_a_tool_results_error_flag_is_judged_as_the_callers_wire_carries_it(
    scenarios: dict[str, Scenario], upstream: str
) -> None:
    # Chat has no is_error on a tool message (openai-python ChatCompletionToolMessageParam): the caller
    # sends "Error: ..." and a faithful gateway forwards that text; roundtrip.request compares with the
    # request as Chat carries it (caller_request), the scenario's wire paths and the recording are notes
    # (the fake reads the prefix back as the flag, as the reference adapter does: no finding at all;
    # "plain_results" forwards the text as it came, as LiteLLM does: notes, no defect)
    for breaks in ("", "plain_results"):
        cases = _certify(scenarios, ["tool_results/is_error"], upstream=upstream, breaks=breaks)
        for case in cases.values():
            assert case.status == "pass", (breaks, [v for v in case.checks if v.status != "pass"])
        notes = _notes(cases[("tool_results/is_error", "non_stream")], "roundtrip.request")
        if not breaks:
            assert not notes
            continue
        if upstream == "ollama":  # Ollama's wire carries the flag as the same prefix: nothing differs
            continue
        assert notes and all("no error flag on a tool result" in f.message for f in notes)
        assert {(f.path, f.actual.startswith("Error:")) for f in notes} == {("$.parts[2].result", True)}


def test_a_finish_reason_the_callers_wire_cannot_name_is_a_note(scenarios: dict[str, Scenario]) -> None:
    # Anthropic's pause_turn is "other"; Chat's finish_reason Literal has no such value (openai-python
    # types/chat/chat_completion.py), so the faithful gateway answers "stop"
    cases = _certify(scenarios, ["wire_specific/anthropic_pause_turn"])
    for case in cases.values():
        assert case.status == "pass", [v for v in case.checks if v.status != "pass"]
        notes = _notes(case, "roundtrip.finish_reason")
        assert [(f.expected, f.actual) for f in notes] == [("other", "stop")]


@pytest.mark.parametrize("upstream", ["anthropic", "gemini"])
def test_reasoning_through_chat_is_judged_as_chat_carries_it(scenarios: dict[str, Scenario], upstream: str) -> None:
    # the faithful gateway sends the reasoning text as reasoning_content; its signature has no Chat
    # field, so the caller cannot send it back (CROSS_WIRE_LOSSES) and its source is the caller's wire
    cases = _certify(scenarios, ["reasoning/settings_effort", "streaming/reasoning_then_text"], upstream=upstream)
    assert len(cases) == 3
    for key, case in cases.items():
        assert case.status == "pass", (key, [v for v in case.checks if v.status != "pass"])
        sources = _notes(case, "roundtrip.reasoning")
        assert [(f.expected, f.actual) for f in sources] == [(upstream, "openai_chat")], key
    replay = _notes(cases[("reasoning/settings_effort", "non_stream")], "roundtrip.reasoning_replay")
    assert replay and all("cannot send it back through the gateway" in f.message for f in replay)


def test_broken_upstream_traffic_reported_as_a_server_error_is_a_note(scenarios: dict[str, Scenario]) -> None:
    # no wire's error body names malformed_response: a 502 is what a gateway can say
    cases = _certify(scenarios, ["errors/malformed_body"], upstream="gemini")
    for case in cases.values():
        assert "recovery.provider_error" not in _failed(case), case.checks
        notes = _notes(case, "recovery.provider_error")
        assert [(f.expected, f.actual) for f in notes] == [("malformed_response", "server")]


def test_broken_upstream_traffic_blamed_on_the_caller_still_fails(scenarios: dict[str, Scenario]) -> None:
    # LiteLLM answers a malformed Gemini body with a 422 invalid_request_error: the caller would fix its request
    cases = _certify(scenarios, ["errors/malformed_body"], upstream="gemini", breaks="malformed_as_400")
    case = cases[("errors/malformed_body", "non_stream")]
    assert "recovery.provider_error" in _failed(case)
    finding = next(f for v in case.checks if v.check == "recovery.provider_error" for f in v.findings)
    assert (finding.kind, finding.expected, finding.actual) == ("defect", "malformed_response", "invalid_request")


def test_a_gateways_retries_of_a_429_are_its_policy(scenarios: dict[str, Scenario]) -> None:
    cases = _certify(scenarios, ["errors/rate_limit"], breaks="retry", modes=("non_stream",))
    case = cases[("errors/rate_limit", "non_stream")]
    assert "client.one_request" not in _failed(case), case.checks
    notes = _notes(case, "client.one_request")
    assert [(f.expected, f.actual) for f in notes] == [(1, 3)]
    assert "documented policy" in notes[0].message


def test_tool_names_mapped_for_the_upstream_and_back_are_notes(scenarios: dict[str, Scenario]) -> None:
    cases = _certify(scenarios, ["names/dotted"], upstream="gemini", breaks="rename")
    for case in cases.values():
        assert case.status == "pass", [v for v in case.checks if v.status != "pass"]
        notes = _notes(case, "translation.tool_definitions")
        assert {(f.expected, f.actual) for f in notes} == {
            ("gmail.search", "gmail_search"),
            ("gmail.send", "gmail_send"),
        }


def test_a_caller_given_a_name_it_did_not_give_fails(scenarios: dict[str, Scenario]) -> None:
    cases = _certify(scenarios, ["names/dotted"], upstream="gemini", breaks="rename_leak")
    for case in cases.values():
        assert case.status == "fail"
        assert _failed(case) & {"roundtrip.calls", "roundtrip.tool_calls"}, _failed(case)


def _review(
    findings: tuple[Finding, ...],
    *,
    downstream: str,
    upstream: str,
    client: Any = (),
    fault: Any = None,
    outcome: Any = (),
) -> CheckVerdict:
    ctx: Any = SimpleNamespace(
        adapter=SimpleNamespace(wire_format=upstream),
        client=client,
        outcome=SimpleNamespace(turns=outcome),
        scenario=SimpleNamespace(turns=(SimpleNamespace(reply=SimpleNamespace(fault=fault)),), tools=()),
    )
    verdict = CheckVerdict(check=findings[0].check, status="fail", findings=findings)
    return caller_wire_review(ctx, (verdict,), downstream=downstream)[0]


def test_a_status_the_callers_wire_does_not_document_is_a_note_but_a_wrong_kind_fails() -> None:
    # Anthropic documents no 503 (wire-formats.md §3e): its overload is 529 overloaded_error
    status = Finding(check="recovery.provider_error", message="HTTP status differs", path="$.error.status")
    status = dataclasses.replace(status, expected=503, actual=529)
    kind = Finding(check="recovery.provider_error", message="error kind differs", path="$.error.kind")
    kind = dataclasses.replace(kind, expected="overloaded", actual="server")
    alone = _review((status,), downstream="anthropic", upstream="anthropic")
    assert alone.status == "pass" and [f.kind for f in alone.findings] == ["note"]
    both = _review((status, kind), downstream="anthropic", upstream="anthropic")
    assert both.status == "fail" and [f.kind for f in both.findings] == ["note", "defect"]
    # OpenAI Chat's errors carry any status: not explained there
    assert _review((status,), downstream="openai_chat", upstream="anthropic").status == "fail"


def test_only_retries_of_a_429_or_5xx_are_a_gateways_policy() -> None:
    finding = Finding(check="client.one_request", message="the client sent 2 requests", path="$", turn=0)
    finding = dataclasses.replace(finding, expected=1, actual=2)

    def turn(*statuses: int) -> Any:
        return (SimpleNamespace(turn=0, sent=tuple(SimpleNamespace(status=s) for s in statuses)),)

    retried = _review((finding,), downstream="openai_chat", upstream="gemini", client=turn(429, 200))
    assert retried.status == "pass" and retried.findings[0].kind == "note"
    resent = _review((finding,), downstream="openai_chat", upstream="gemini", client=turn(400, 200))
    assert resent.status == "fail" and resent.findings[0].kind == "defect"
    # a malformed answer (200) the emulator played on purpose is a failed call too
    broken = _review((finding,), downstream="openai_chat", upstream="gemini", client=turn(200, 200), fault="malformed")
    assert broken.status == "pass"
    assert _review((finding,), downstream="openai_chat", upstream="gemini", client=turn(200, 200)).status == "fail"


def test_reasoning_counted_in_chats_completion_tokens_is_a_note() -> None:
    # Gemini's candidatesTokenCount leaves the thoughts out; Chat's completion_tokens counts them
    # (openai-python CompletionUsage: completion_tokens_details.reasoning_tokens is a part of it)
    finding = Finding(
        check="roundtrip.usage", message="decoded usage output_tokens differs", path="$.usage.output_tokens"
    )
    finding = dataclasses.replace(finding, expected=13, actual=19)
    answer = Response(parts=(), usage=Usage(output_tokens=19, reasoning_tokens=6))
    outcome = (SimpleNamespace(turn=0, response=answer),)
    assert _review((finding,), downstream="openai_chat", upstream="gemini", outcome=outcome).status == "pass"
    other = dataclasses.replace(finding, actual=20)
    assert _review((other,), downstream="openai_chat", upstream="gemini", outcome=outcome).status == "fail"


def test_items_added_to_an_array_schema_toward_gemini_is_the_gateways_duty() -> None:
    # Gemini answers 400 "...parameters.properties[paths].items: missing field" to an array without items
    finding = Finding(
        check="translation.tool_definitions",
        message="adds items, which the caller did not give",
        path="$.tools[0].input_schema.properties.paths.items",
    )
    finding = dataclasses.replace(finding, expected=None, actual={"type": "object"})
    assert _review((finding,), downstream="openai_chat", upstream="gemini").status == "pass"
    assert _review((finding,), downstream="openai_chat", upstream="anthropic").status == "fail"  # Anthropic takes it
    leaf = dataclasses.replace(finding, check="client.recorded_request", path=f"{finding.path}.type", actual="object")
    assert _review((leaf,), downstream="openai_chat", upstream="gemini").status == "pass"
    dropped = dataclasses.replace(finding, expected={"type": "string"}, actual=None)
    assert _review((dropped,), downstream="openai_chat", upstream="gemini").status == "fail"
