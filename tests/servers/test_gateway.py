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

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from conformance.adapters import for_format
from conformance.assembly import fold
from conformance.clients.harness import FAKE_API_KEY
from conformance.model import ErrorInfo, Response, Text, ToolCall
from conformance.run.conversation import DEFAULT_MODELS
from conformance.scenarios.loader import load_scenarios
from conformance.scenarios.values import Scenario
from conformance.servers.gateway import GatewayOptions, certify_gateway
from conformance.traffic.transport import auth_headers

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
        upstream = for_format(self.upstream)
        wire = upstream.request_to_wire(request)
        url = f"http://127.0.0.1:{self.upstream_port}{wire.path}"
        headers = {"content-type": "application/json", **wire.headers, **auth_headers(self.upstream, FAKE_API_KEY)}
        with httpx.Client(timeout=30, trust_env=False) as client:
            got = client.post(url, json=wire.body, headers=headers)
        if got.status_code >= 400:
            info = upstream.error_from_wire(got.status_code, dict(got.headers), got.content).info
            return self._error(got.status_code, info)
        if wire.stream:
            response = fold(upstream.stream_from_wire(_pieces(got.content), tools=request.tools))
        else:
            response = upstream.response_from_wire(got.json(), tools=request.tools)
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
        kinds = {"rate_limit": "rate_limit_exceeded", "overloaded": "overloaded", "server": "server_error"}
        code = kinds.get(info.kind)
        error = {"message": info.message, "type": code or "api_error", "param": None, "code": code}
        headers = {"content-type": "application/json"}
        if info.retry_after is not None:
            headers["retry-after"] = f"{info.retry_after:g}"
        return status, headers, json.dumps({"error": error}).encode()


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
        "total_tokens": prompt + completion,
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


def _chat_completion(response: Response, model: str) -> dict[str, Any]:
    text = "".join(p.text for p in response.parts if isinstance(p, Text))
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
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
