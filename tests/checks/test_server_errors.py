"""``server.errors``: a deliberately invalid request gets a 4xx with the wire's documented error body.

The documented bodies are real ones: every 4xx recorded from OpenAI, Anthropic, Gemini and Ollama
under ``tests/realworld`` has none of ``error_body_problems``; each wire's body sent on another wire
has some, and a 200, a 5xx or no answer to an invalid request fails.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from conformance.checks.server import ServerExchange, error_body_notes, error_body_problems, error_verdict
from tests.checks._server_traffic import REALWORLD, WIRES, exchanges

ERRORS = [
    e
    for wire in WIRES
    for path in sorted((REALWORLD / wire).glob("*.yaml"))
    for e in exchanges(path, wire, statuses=tuple(range(400, 500)))
]


def test_every_wire_has_a_real_4xx() -> None:
    assert {e.wire for e in ERRORS} == set(WIRES)


@pytest.mark.parametrize("answer", ERRORS, ids=[f"{e.wire}-{e.status}-{i}" for i, e in enumerate(ERRORS)])
def test_real_4xx_bodies_are_the_documented_ones(answer: ServerExchange) -> None:
    assert error_body_problems(answer.wire, answer.body) == []
    verdict = error_verdict("unknown_tool_choice", answer, documented=True)
    assert verdict.status == "pass" and verdict.check == "server.errors"


def _real(wire: str) -> ServerExchange:
    return next(e for e in ERRORS if e.wire == wire)


@pytest.mark.parametrize("wire", WIRES)
def test_another_wires_error_body_is_not_the_documented_one(wire: str) -> None:
    for other in WIRES:
        if {other, wire} <= {"openai_chat", "openai_responses"} or other == wire:
            continue  # the two OpenAI wires share one body
        body = _real(other).body
        # an Anthropic or Gemini body on an OpenAI wire has the error object and the message openai-python reads:
        # what it lacks (param, code) is named as a note
        readable = wire.startswith("openai_") and other in ("anthropic", "gemini")
        assert (error_body_notes if readable else error_body_problems)(wire, body), (wire, other, body)
        verdict = error_verdict("schema_not_object", replace(_real(wire), body=body), documented=True)
        if readable:
            assert verdict.status == "pass" and {f.kind for f in verdict.findings} == {"note"}
        else:
            assert verdict.status == "fail" and verdict.findings[0].path == "schema_not_object.body"


@pytest.mark.parametrize(
    ("status", "body", "words"),
    [
        (200, b'{"id": "chatcmpl-1", "choices": []}', "was accepted with 200"),
        (500, b'{"error": {"message": "Internal error", "type": "server_error"}}', "a server error (500)"),
        (302, b"", "status 302"),
    ],
)
def test_an_invalid_request_answered_200_or_5xx_fails(status: int, body: bytes, words: str) -> None:
    answer = replace(_real("openai_chat"), status=status, body=body)
    verdict = error_verdict("unknown_tool_choice", answer, documented=True)
    assert verdict.status == "fail"
    [finding] = verdict.findings
    assert words in finding.message and "unknown_tool_choice" in finding.message and finding.expected == "a 4xx"


def test_no_answer_to_an_invalid_request_fails_naming_what_happened() -> None:
    answer = replace(_real("anthropic"), status=0, body=b"", error="read timeout after 120 s")
    verdict = error_verdict("body_not_json", answer, documented=True)
    assert verdict.status == "fail" and "read timeout after 120 s" in verdict.findings[0].message


def test_an_undocumented_probe_is_unsupported_whatever_came_back() -> None:
    for status in (200, 400, 500):
        answer = replace(_real("gemini"), status=status)
        verdict = error_verdict("result_without_call", answer, documented=False)
        assert verdict.status == "unsupported" and "documents no error" in verdict.message


@pytest.mark.parametrize(
    ("wire", "body", "problem"),
    [
        ("openai_chat", b'{"error": "bad"}', "no error object"),
        ("openai_chat", b'{"error": {"type": "invalid_request_error"}}', "error.message"),
        ("openai_responses", b"not json", "not JSON"),
        ("anthropic", b'{"error": {"type": "invalid_request_error", "message": "x"}}', 'not "error"'),
        ("gemini", b'{"error": {"code": "400", "message": "x", "status": "INVALID_ARGUMENT"}}', "error.code"),
        ("ollama", b'{"error": {"message": "x"}}', "not a message string"),
    ],
)
def test_each_missing_part_of_a_documented_body_is_named(wire: str, body: bytes, problem: str) -> None:
    problems = error_body_problems(wire, body)
    assert any(problem in p for p in problems), problems


def test_a_numeric_openai_code_is_what_the_sdk_reads_and_a_missing_param_is_a_note() -> None:
    """llama.cpp-style ``{"error": {"code": 400, "message", "type"}}``: openai-python makes ``code`` a
    string and reads ``param`` with ``body.get`` (``_exceptions.py`` ``APIError.__init__``), so the
    OpenAPI ``Error``'s ``param`` missing changes nothing a caller gets: a note, not a failure."""
    body = b'{"error": {"code": 400, "message": "tool_choice names no tool", "type": "invalid_request_error"}}'
    assert error_body_problems("openai_chat", body) == []
    assert [n.split(":")[0] for n in error_body_notes("openai_chat", body)] == ["error.param missing"]
    with_param = body.replace(b'"type"', b'"param": null, "type"')
    assert error_body_notes("openai_chat", with_param) == []
    answer = ServerExchange(wire="openai_chat", stream=False, request=b"{", status=400, headers={}, body=body)
    judged = error_verdict("body_not_json", answer, documented=True)
    assert judged.status == "pass"
    assert [(f.kind, f.path) for f in judged.findings] == [("note", "body_not_json.body.error")]
    no_message = b'{"error": {"code": 400, "type": "invalid_request_error", "param": null}}'
    assert error_body_problems("openai_chat", no_message) == [
        'error.message missing ({"error": {"message", "type", "param", "code"}})'
    ]
