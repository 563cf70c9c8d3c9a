"""Usage read independently from recorded bodies (``conformance.checks.usage``), and the reference
adapters' decoded usage agreeing with it on the real cassettes of ``tests/realworld``."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from conformance.adapters import get_adapter
from conformance.assembly import fold
from conformance.checks._common import CaseContext
from conformance.checks.usage import USAGE_WIRES, check_usage, recorded_usage, stream_payloads, usage_verdict
from conformance.errors import ConformanceError
from conformance.model import Usage
from conformance.run.conversation import ConversationOutcome, TurnOutcome
from conformance.traffic.cassettes import is_streaming, load_cassette
from conformance.traffic.transport import Exchange

REALWORLD = Path(__file__).resolve().parents[1] / "realworld" / "cassettes"
FIELDS = (
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
)


def _sse(*events: object) -> bytes:
    return b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events)


def test_streamed_anthropic_usage_is_message_start_updated_by_the_cumulative_delta() -> None:
    body = _sse(
        {
            "type": "message_start",
            "message": {"usage": {"input_tokens": 10, "output_tokens": 1, "cache_read_input_tokens": 4}},
        },
        {"type": "message_delta", "usage": {"output_tokens": 7}},
        {"type": "message_delta", "usage": {"output_tokens": 9, "cache_read_input_tokens": None}},
    )
    got = recorded_usage("anthropic", stream_payloads(body), stream=True)
    # the input is input_tokens plus the cache counts (anthropic-sdk-python types/usage.py, E19)
    assert got == Usage(input_tokens=14, output_tokens=9, cache_read_tokens=4)


def test_streamed_gemini_usage_is_the_last_chunks_not_a_sum() -> None:
    body = _sse(
        {"usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 2}},
        {"usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 6, "thoughtsTokenCount": 3}},
    )
    got = recorded_usage("gemini", stream_payloads(body), stream=True)
    assert got == Usage(input_tokens=5, output_tokens=6, reasoning_tokens=3)


def test_streamed_openai_chat_usage_comes_only_from_the_chunk_that_carries_it() -> None:
    body = (
        _sse(
            {"choices": [], "usage": None},
            {
                "choices": [],
                "usage": {"prompt_tokens": 3, "completion_tokens": 2, "prompt_tokens_details": {"cached_tokens": 1}},
            },
        )
        + b"data: [DONE]\n\n"
    )
    assert recorded_usage("openai_chat", stream_payloads(body), stream=True) == Usage(
        input_tokens=3, output_tokens=2, cache_read_tokens=1
    )
    assert recorded_usage("openai_chat", stream_payloads(_sse({"choices": []})), stream=True) is None


def test_responses_stream_usage_is_read_from_response_completed() -> None:
    usage = {
        "input_tokens": 8,
        "output_tokens": 4,
        "total_tokens": 12,
        "output_tokens_details": {"reasoning_tokens": 2},
    }
    body = _sse(
        {"type": "response.created", "response": {"usage": None}},
        {"type": "response.completed", "response": {"usage": usage}},
    )
    assert recorded_usage("openai_responses", stream_payloads(body), stream=True) == Usage(
        input_tokens=8, output_tokens=4, total_tokens=12, reasoning_tokens=2
    )


def test_ollama_usage_is_the_done_chunks_counts() -> None:
    body = b'{"done": false}\n{"done": true, "prompt_eval_count": 11, "eval_count": 5}\n'
    assert recorded_usage("ollama", stream_payloads(body), stream=True) == Usage(input_tokens=11, output_tokens=5)


@pytest.mark.realworld
def test_reference_adapters_decode_the_usage_real_bodies_report() -> None:
    compared = 0
    mismatches: list[str] = []
    for wire in USAGE_WIRES:
        adapter = get_adapter(wire)
        for path in sorted((REALWORLD / wire).glob("*.yaml")):
            for interaction in load_cassette(path).interactions:
                response = interaction.response
                if response is None or response.status != 200:
                    continue
                stream = is_streaming(interaction)
                try:
                    if stream:
                        want = recorded_usage(wire, stream_payloads(response.body), stream=True)
                        got = fold(adapter.stream_from_wire([response.body])).usage
                    elif isinstance(response.json, dict):
                        want = recorded_usage(wire, [response.json], stream=False)
                        got = adapter.response_from_wire(response.json).usage
                    else:
                        continue
                except ConformanceError:
                    continue
                if want is None:
                    continue
                compared += 1
                wrong = [
                    f
                    for f in FIELDS
                    if getattr(want, f) is not None and (got is None or getattr(got, f) != getattr(want, f))
                ]
                if wrong:
                    mismatches.append(
                        f"{path.name}#{interaction.index} ({wire}, stream={stream}): {wrong}: {want} vs {got}"
                    )
    assert compared >= 30
    assert mismatches == []


def test_check_usage_names_each_field_that_differs_and_passes_an_equal_decode() -> None:
    body = json.dumps({"usage": {"input_tokens": 9, "output_tokens": 3, "cache_read_input_tokens": 2}}).encode()
    right = Usage(input_tokens=11, output_tokens=3, cache_read_tokens=2)
    assert check_usage("anthropic", body, right, stream=False, turn=0) == []
    findings = check_usage("anthropic", body, Usage(input_tokens=11, output_tokens=3), stream=False, turn=1)
    assert [(f.path, f.expected, f.actual, f.turn) for f in findings] == [("$.usage.cache_read_tokens", 2, None, 1)]
    assert len(check_usage("anthropic", body, None, stream=False, turn=0)) == 3


def _responses_body(input_details: dict[str, int]) -> dict[str, object]:
    """A Responses body of one text message, its usage shaped as openai-python's ``ResponseUsage``."""
    return {
        "id": "resp_1",
        "object": "response",
        "status": "completed",
        "output": [
            {
                "type": "message",
                "id": "msg_1",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": "hi", "annotations": []}],
            }
        ],
        "usage": {
            "input_tokens": 40,
            "input_tokens_details": input_details,
            "output_tokens": 5,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 45,
        },
    }


@pytest.mark.parametrize("stream", [False, True])
def test_responses_cache_write_tokens_are_read_and_decoded(stream: bool) -> None:
    """openai-python ``types/responses/response_usage.py``: ``input_tokens_details`` carries
    ``cache_write_tokens`` beside ``cached_tokens`` (real: pydantic-ai's Responses cassettes)."""
    adapter = get_adapter("openai_responses")
    body = _responses_body({"cached_tokens": 3, "cache_write_tokens": 7})
    if stream:
        raw = _sse(
            {"type": "response.created", "response": {**body, "status": "in_progress", "output": [], "usage": None}},
            {"type": "response.completed", "response": body},
        )
        got = fold(adapter.stream_from_wire([raw])).usage
    else:
        raw = json.dumps(body).encode()
        got = adapter.response_from_wire(body).usage
    want = recorded_usage("openai_responses", stream_payloads(raw) if stream else [body], stream=stream)
    assert want is not None and (want.cache_read_tokens, want.cache_write_tokens) == (3, 7)
    assert got is not None and (got.cache_read_tokens, got.cache_write_tokens) == (3, 7)
    assert check_usage("openai_responses", raw, got, stream=stream, turn=0) == []
    dropped = check_usage("openai_responses", raw, replace(got, cache_write_tokens=None), stream=stream, turn=0)
    assert [(f.path, f.expected, f.actual) for f in dropped] == [("$.usage.cache_write_tokens", 7, None)]


def test_responses_without_cache_write_tokens_decode_none_not_an_invented_zero() -> None:
    """Older replies have no ``cache_write_tokens`` (wire-formats.md §2c): absent, not 0."""
    body = _responses_body({"cached_tokens": 0})
    assert recorded_usage("openai_responses", [body], stream=False) == Usage(
        input_tokens=40, output_tokens=5, total_tokens=45, cache_read_tokens=0, reasoning_tokens=0
    )
    got = get_adapter("openai_responses").response_from_wire(body).usage
    assert got is not None and got.cache_write_tokens is None


# ---- usage_verdict: which answer a turn's usage is compared with ------------------------------------

_ANSWER = json.dumps({"usage": {"input_tokens": 9, "output_tokens": 3}}).encode()
_LIMITED = json.dumps({"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}).encode()


def _turn(number: int, usage: Usage | None, *, error: bool = False) -> TurnOutcome:
    from conformance.adapters.base import WireRequest
    from conformance.model import ErrorInfo, Request, Response

    response = Response(parts=(), finish_reason="stop", usage=usage)
    info = ErrorInfo(kind="server_error", message="cut", status=None) if error else None
    return TurnOutcome(
        turn=number,
        request=Request(),
        wire=WireRequest(method="POST", path="/v1/messages", body={}),
        status=200,
        response=response,
        error=info,
    )


def _context(turns: list[TurnOutcome], **more: Any) -> CaseContext:
    from conformance.scenarios.values import Scenario

    outcome = ConversationOutcome(scenario="s", adapter="anthropic", mode="non_stream", turns=tuple(turns))
    scenario = Scenario(id="s", behavior="", source="", turns=(), path="s.yaml")
    return CaseContext(scenario=scenario, adapter=get_adapter("anthropic"), mode="non_stream", outcome=outcome, **more)


def _exchange(status: int, body: bytes) -> Exchange:
    return Exchange(
        method="POST",
        url="http://x/v1/messages",
        request_headers=(),
        request_body=b"{}",
        stream=False,
        status=status,
        response_body=body,
    )


def test_a_retried_turn_is_judged_on_the_answer_that_finally_succeeded() -> None:
    retried = [_exchange(429, _LIMITED), _exchange(200, _ANSWER)]  # one turn, two exchanges
    right = usage_verdict(_context([_turn(0, Usage(input_tokens=9, output_tokens=3))], exchanges=tuple(retried)))
    assert right is not None and right.status == "pass"
    wrong = usage_verdict(_context([_turn(0, Usage(input_tokens=9, output_tokens=1))], exchanges=tuple(retried)))
    assert wrong is not None and [(f.path, f.expected, f.actual) for f in wrong.findings] == [
        ("$.usage.output_tokens", 3, 1)
    ]


def test_a_turn_that_ended_in_an_error_leaves_the_others_judged() -> None:
    turns = [_turn(0, Usage(input_tokens=9, output_tokens=2)), _turn(1, None, error=True)]
    found = usage_verdict(_context(turns, exchanges=(_exchange(200, _ANSWER), _exchange(200, b"data: cut"))))
    assert found is not None and [(f.path, f.turn) for f in found.findings] == [("$.usage.output_tokens", 0)]


def test_a_black_box_client_is_judged_on_its_own_last_successful_request_when_it_reports_usage() -> None:
    from conformance.clients.evidence import ClientTurn, SentRequest
    from conformance.clients.invoke import TurnResult

    def sent(status: int, body: bytes) -> SentRequest:
        return SentRequest(
            method="POST",
            path="/v1/messages",
            body={},
            stream=False,
            status=status,
            response_body=body,
            answered_turn=0,
        )

    client = (
        ClientTurn(
            turn=0,
            asked_stream=False,
            sent=(sent(429, _LIMITED), sent(200, _ANSWER)),
            result=TurnResult(returned="response"),
        ),
    )
    wrong = usage_verdict(_context([_turn(0, Usage(input_tokens=1, output_tokens=3))], client=client))
    assert wrong is not None and [(f.path, f.expected, f.actual) for f in wrong.findings] == [
        ("$.usage.input_tokens", 9, 1)
    ]
    assert usage_verdict(_context([_turn(0, None)], client=client)) is None  # the driver maps no usage


def test_reasoning_and_cache_tokens_are_read_on_every_wire_that_reports_them() -> None:
    """Anthropic ``output_tokens_details.thinking_tokens`` (anthropic-sdk-python
    ``types/output_tokens_details.py:9``) and both cache counts; DeepSeek's ``prompt_cache_hit_tokens``
    where Chat has no ``cached_tokens``; Chat ``prompt_tokens_details.cache_write_tokens``
    (openai-python ``types/completion_usage.py:46``)."""
    anthropic = {
        "usage": {
            "input_tokens": 5,
            "output_tokens": 40,
            "cache_read_input_tokens": 100,
            "cache_creation_input_tokens": 7,
            "output_tokens_details": {"thinking_tokens": 31},
        }
    }
    assert recorded_usage("anthropic", [anthropic], stream=False) == Usage(
        input_tokens=112, output_tokens=40, cache_read_tokens=100, cache_write_tokens=7, reasoning_tokens=31
    )
    streamed = [
        {"type": "message_start", "message": {"usage": {"input_tokens": 5, "output_tokens": 1}}},
        {"type": "message_delta", "usage": {"output_tokens": 40, "output_tokens_details": {"thinking_tokens": 31}}},
    ]
    assert recorded_usage("anthropic", streamed, stream=True) == Usage(
        input_tokens=5, output_tokens=40, reasoning_tokens=31
    )
    deepseek = {
        "usage": {
            "prompt_tokens": 50,
            "completion_tokens": 9,
            "total_tokens": 59,
            "prompt_cache_hit_tokens": 32,
            "prompt_cache_miss_tokens": 18,
            "completion_tokens_details": {"reasoning_tokens": 6},
        }
    }
    assert recorded_usage("openai_chat", [deepseek], stream=False) == Usage(
        input_tokens=50, output_tokens=9, total_tokens=59, cache_read_tokens=32, reasoning_tokens=6
    )
    openrouter = {
        "usage": {
            "prompt_tokens": 50,
            "completion_tokens": 9,
            "total_tokens": 59,
            "prompt_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 48},
        }
    }
    assert recorded_usage("openai_chat", [openrouter], stream=False) == Usage(
        input_tokens=50, output_tokens=9, total_tokens=59, cache_read_tokens=0, cache_write_tokens=48
    )
