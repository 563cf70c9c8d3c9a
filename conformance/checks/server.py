"""The ``server.*`` checks: what a model server or a gateway answered, judged on its wire alone.

Pure functions of ``ServerExchange`` values (what was sent and what came back, as bytes; the I/O is
``conformance.servers.probe``'s). Each check id gives one verdict for a case (every exchange of it):

``server.status``     a valid request answered 200 (a 4xx or a 5xx is a defect, its body quoted; no
                      HTTP answer at all, an answer cut at the size bound, an error event inside a
                      200 stream: each a defect naming what happened).
``server.shape``      the body, and each stream event, against the official SDK's pydantic type for
                      the wire (``_server_shape``); ``unsupported`` when that SDK is not installed.
``server.framing``    the Content-Type; SSE events closed by blank lines, ``data:`` that parses as
                      JSON; the wire's terminator last and nothing after it; event order.
``server.ids``        response ids present and stable across chunks; tool call ids present and unique;
                      fragments, items and blocks referenced consistently.
``server.arguments``  argument text that parses as a JSON object (streamed: the fragments joined).
``server.finish``     a finish reason that matches the content.
``server.usage``      usage present and adding up.
``server.errors``     a deliberately invalid request gets a 4xx with the wire's documented error body
                      (``error_verdict``, ``error_body_problems``).
``server.modes``, ``server.model``  judged by the server target (``conformance.servers``): the same
                      request streamed and not decodes alike; the model did what the scenario asks
                      (else ``deviated``, never a server defect).

The wires' rules, each with its source, are in ``_server_chat``, ``_server_responses`` and
``_server_others`` (Anthropic, Gemini, Ollama). A finding names the turn, a JSON path into the answer
(``$.choices[0].message.tool_calls[1].id``; streamed, ``stream[7].data.choices[0]...``, where
``stream[7]`` is the eighth event), what was expected and what came, and what to fix; a defect
repeated across an answer's chunks is one finding (its message counts them), and indices in paths
generalise in ``conformance.verdicts.signature``, so the same defect in a hundred cases is one.
"""

from __future__ import annotations

import json
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from conformance.checks._common import verdict
from conformance.checks._server_chat import chat_stream, chat_whole
from conformance.checks._server_others import (
    anthropic_stream,
    anthropic_whole,
    gemini_stream,
    gemini_whole,
    ollama_stream,
    ollama_whole,
)
from conformance.checks._server_read import (
    Collector,
    Frame,
    media_type,
    quote,
    read_json_array,
    read_ndjson,
    read_sse,
    stream_error,
)
from conformance.checks._server_responses import responses_stream, responses_whole
from conformance.checks._server_shape import Missing, shape_answer, shape_event
from conformance.verdicts import CheckVerdict, Finding

__all__ = [
    "ANSWER_CHECKS",
    "SERVER_CHECKS",
    "SERVER_WIRES",
    "ServerExchange",
    "answer_verdicts",
    "error_body_notes",
    "error_body_problems",
    "error_verdict",
]

SERVER_WIRES = ("openai_chat", "openai_responses", "anthropic", "gemini", "ollama")

SERVER_CHECKS: tuple[str, ...] = (
    "server.status",
    "server.shape",
    "server.framing",
    "server.ids",
    "server.arguments",
    "server.finish",
    "server.usage",
    "server.errors",
    "server.modes",
    "server.model",
)
"""Every check id of the family (``server.modes`` and ``server.model`` are the server target's)."""

ANSWER_CHECKS: tuple[str, ...] = SERVER_CHECKS[:7]
"""The checks ``answer_verdicts`` gives, in report order."""


@dataclass(frozen=True, kw_only=True)
class ServerExchange:
    """One request sent to the server under test, and what came back."""

    wire: str
    """``openai_chat``, ``openai_responses``, ``anthropic``, ``gemini`` or ``ollama``."""
    stream: bool
    """The request asked for a stream."""
    request: bytes
    """The body sent (maybe deliberately not JSON, for a probe)."""
    status: int
    """The HTTP status; 0: no HTTP answer (``error`` says why)."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """Lower-case names."""
    body: bytes = b""
    """The whole body as received (cut at the bound: ``truncated``)."""
    chunks: tuple[bytes, ...] = ()
    """The body as it arrived, for streams."""
    turn: int = 0
    error: str = ""
    """A transport failure: timeout, too big, redirect refused, connection reset."""
    truncated: bool = False
    tools: tuple[str, ...] = ()
    """The tool names the request offered."""
    forced: str | None = None
    """The tool the request's ``tool_choice`` named (OpenAI Chat may then say ``stop``)."""


_WHOLE: Mapping[str, Callable[..., None]] = {
    "openai_responses": responses_whole,
    "anthropic": anthropic_whole,
    "gemini": gemini_whole,
    "ollama": ollama_whole,
}
_STREAM: Mapping[str, Callable[..., None]] = {
    "openai_responses": responses_stream,
    "anthropic": anthropic_stream,
    "gemini": gemini_stream,
    "ollama": ollama_stream,
}
_STREAM_TYPE = {"ollama": "application/x-ndjson"}
_FIX_STATUS = "answer a valid request of the wire with 200 and its answer"


def answer_verdicts(exchanges: Sequence[ServerExchange]) -> tuple[CheckVerdict, ...]:
    """The ``server.status`` ... ``server.usage`` verdicts of a case's answers to valid requests.

    ``server.status`` is always given; a check that had nothing to look at (every answer an error)
    is left out. ``server.shape`` is ``unsupported`` when the wire's SDK is not installed. Never
    raises: an answer that breaks a check's own code gives ``server.internal`` (``error``, with the
    traceback), and the other answers are judged."""
    found: dict[str, list[Finding]] = {check: [] for check in ANSWER_CHECKS}
    judged: set[str] = {"server.status"}
    missing = ""
    broken: list[str] = []
    for exchange in exchanges:
        out = Collector(exchange.turn, ANSWER_CHECKS)
        try:
            _judge(exchange, out)
        except Missing as exc:
            missing = str(exc)
            out.judged.discard("server.shape")
        except Exception as exc:  # a bug of ours on an answer nobody foresaw: said, never raised
            broken.append(f"turn {exchange.turn}: {type(exc).__name__}: {exc}\n{traceback.format_exc()}")
        for check in ANSWER_CHECKS:
            found[check] += out.findings(check)
        judged |= out.judged
    verdicts: list[CheckVerdict] = []
    for check in ANSWER_CHECKS:
        if check == "server.shape" and missing and not found[check]:
            verdicts.append(CheckVerdict(check=check, status="unsupported", message=missing))
        elif check in judged:
            verdicts.append(verdict(check, found[check]))
    if broken:
        verdicts.append(CheckVerdict(check="server.internal", status="error", message="\n".join(broken)))
    return tuple(verdicts)


def _judge(exchange: ServerExchange, out: Collector) -> None:
    if not _status(exchange, out):
        return
    try:
        request = json.loads(exchange.request)
    except (ValueError, RecursionError):  # RecursionError: JSON nested past the interpreter's depth
        request = {}
    request = request if isinstance(request, Mapping) else {}
    if exchange.stream:
        _judge_stream(exchange, request, out)
    else:
        _judge_whole(exchange, request, out)


def _status(exchange: ServerExchange, out: Collector) -> bool:
    """``server.status``; whether there is an answer to judge further."""
    out.judge("server.status")
    if exchange.truncated:
        out.add(
            "server.status",
            "$",
            f"the answer was cut at {len(exchange.body)} bytes, the size bound: ...{quote(exchange.body[-200:])}",
            expected="a bounded answer",
            remedy="a reply to a short tool-calling request is far below this bound; check the server's max tokens",
        )
        return False
    if exchange.error or exchange.status == 0:
        what = "no HTTP answer" if exchange.status == 0 else f"the answer (HTTP {exchange.status}) broke off"
        out.add(
            "server.status",
            "$",
            f"{what}: {exchange.error or 'the connection gave none'}",
            expected=200,
            actual=exchange.status or None,
            remedy="the server must answer within the timeout, at the URL given, within the size bound",
        )
        return False
    if exchange.status != 200:
        words = "a server error" if exchange.status >= 500 else "a refusal"
        out.add(
            "server.status",
            "$",
            f"{words} ({exchange.status}) to a valid {exchange.wire} request: {quote(exchange.body) or '(empty body)'}",
            expected=200,
            actual=exchange.status,
            remedy=_FIX_STATUS,
        )
        return False
    return True


def _content_type(exchange: ServerExchange, out: Collector, want: str) -> None:
    out.judge("server.framing")
    got = media_type(exchange.headers)
    if got != want:
        out.add(
            "server.framing",
            '$.headers["content-type"]',
            f"Content-Type {got or '(none)'} where the wire's clients expect {want}",
            expected=want,
            actual=got,
            remedy=f"send Content-Type: {want}",
        )


def _judge_whole(exchange: ServerExchange, request: Mapping[str, Any], out: Collector) -> None:
    _content_type(exchange, out, "application/json")
    try:
        value = json.loads(exchange.body)
    except (ValueError, RecursionError):  # RecursionError: JSON nested past the interpreter's depth
        out.add(
            "server.shape",
            "$",
            f"the body is not JSON: {quote(exchange.body) or '(empty)'}",
            expected="a JSON object",
            remedy="answer a request without stream with one JSON object",
        )
        return
    if isinstance(value, Mapping):
        if exchange.wire == "openai_chat":
            chat_whole(value, request, out, exchange.forced)
        else:
            _WHOLE[exchange.wire](value, request, out)
    shape_answer(exchange.wire, value, out)  # last: a missing SDK (``Missing``) leaves the others judged


def _judge_stream(exchange: ServerExchange, request: Mapping[str, Any], out: Collector) -> None:
    wire = exchange.wire
    body = exchange.body
    if wire == "ollama":
        frames, problems = read_ndjson(body)
        _content_type(exchange, out, "application/x-ndjson")
    elif wire == "gemini" and body.lstrip().startswith(b"["):
        frames, problems = read_json_array(body)
        _content_type(exchange, out, "application/json")
    else:
        if media_type(exchange.headers) == "application/json" and body.lstrip().startswith(b"{"):
            out.add(
                "server.framing",
                '$.headers["content-type"]',
                f"a stream was asked, and the answer is one JSON body: {quote(body, 200)}",
                expected="text/event-stream",
                actual="application/json",
                remedy="answer a request with stream: true with an event stream",
            )
            return
        frames, problems = read_sse(body)
        _content_type(exchange, out, _STREAM_TYPE.get(wire, "text/event-stream"))
    for path, words in problems:
        out.add("server.framing", path, words, expected="a well-formed stream")
    judged: list[Frame] = []
    errored = False
    for frame in frames:
        if not frame.ok:
            out.add(
                "server.framing",
                frame.path,
                f"data that is not JSON: {quote(frame.data, 120)}",
                expected="JSON",
                actual=quote(frame.data, 120),
                remedy="send one JSON value per event",
            )
        elif stream_error(wire, frame):
            errored = True
            out.add(
                "server.status",
                frame.path,
                f"an error inside a 200 stream: {quote(frame.data)}",
                expected="the answer",
                actual=quote(frame.data, 120),
                remedy=_FIX_STATUS,
            )
        elif frame.data != "[DONE]" and not (wire == "anthropic" and _ping(frame)):
            judged.append(frame)
    if not frames:
        empty = quote(body) or "(empty body)"
        out.add("server.framing", "stream[0]", f"a stream without events: {empty}", expected="events")
        return
    if errored:
        pass  # the error event ends the stream (openai-python raises on it): no terminator, finish or usage follow
    elif wire == "openai_chat":
        chat_stream(frames, request, out, exchange.forced)
    else:
        _STREAM[wire](frames, request, out)
    for frame in judged:  # last: a missing SDK (``Missing``) leaves every other check judged
        shape_event(wire, frame.value, frame.path, out)


def _ping(frame: Frame) -> bool:
    return frame.event == "ping" or (isinstance(frame.value, Mapping) and frame.value.get("type") == "ping")


# --------------------------------------------------------------------------------------------
# server.errors
# --------------------------------------------------------------------------------------------


def error_body_problems(wire: str, body: bytes) -> list[str]:
    """What keeps ``body`` from being ``wire``'s documented error body (empty: it is one).

    - OpenAI Chat and Responses: ``{"error": {"message": str, ...}}``. The OpenAPI ``Error`` lists
      ``message``, ``type``, ``param`` and ``code`` (every recorded OpenAI 4xx has the four,
      wire-formats.md §1e), but openai-python needs only the ``error`` object: it reads
      ``body["error"]`` (``_client.py`` ``_make_status_error``) and each of ``code``, ``param`` and
      ``type`` with ``body.get`` (``_exceptions.py`` ``APIError.__init__``: absent is None, a numeric
      ``code`` becomes a string). So a missing ``message`` (what a caller shows) is a problem; a
      missing ``type``, ``param`` or ``code`` is a note (``error_body_notes``), never a failure.
    - Anthropic: ``{"type": "error", "error": {"type": str, "message": str}}`` (§3e; anthropic
      ``types/shared/error_response.py``).
    - Gemini: ``{"error": {"code": int, "message": str, "status": str}}`` (the Google RPC envelope,
      §4e; google-genai ``errors.py`` ``APIError`` reads the three).
    - Ollama: ``{"error": str}`` (§5e; ollama-python ``ResponseError``).
    """
    try:
        value = json.loads(body)
    except (ValueError, RecursionError):  # RecursionError: JSON nested past the interpreter's depth
        return [f"the error body is not JSON: {quote(body, 120) or '(empty)'}"]
    if not isinstance(value, Mapping):
        return [f"the error body is not a JSON object: {quote(body, 120)}"]
    error = value.get("error")
    problems: list[str] = []
    if wire == "ollama":
        if not isinstance(error, str) or not error:
            problems.append(f'error is not a message string ({{"error": "..."}}): {quote(body, 120)}')
        return problems
    if not isinstance(error, Mapping):
        return [f"no error object ({_ERROR_SHAPES[wire]}): {quote(body, 120)}"]
    wanted = _ERROR_FIELDS[wire]
    for key, types in wanted.items():
        if key not in error:
            problems.append(f"error.{key} missing ({_ERROR_SHAPES[wire]})")
        elif not isinstance(error.get(key), types) or isinstance(error.get(key), bool):
            names = " or ".join("null" if t is type(None) else t.__name__ for t in types)
            problems.append(f"error.{key} is not {names} ({_ERROR_SHAPES[wire]})")
    if wire == "anthropic" and value.get("type") != "error":
        problems.append(f'type is {value.get("type")!r}, not "error" ({_ERROR_SHAPES[wire]})')
    return problems


_OPENAI_ERROR: Mapping[str, tuple[type, ...]] = {"message": (str,)}
_OPENAI_LISTED: Mapping[str, tuple[type, ...]] = {
    "type": (str,),
    "param": (str, type(None)),
    "code": (str, int, type(None)),
}
"""The keys the OpenAPI ``Error`` lists beside ``message`` that openai-python reads with ``body.get``
(``_exceptions.py`` ``APIError.__init__``): one missing changes nothing a caller of the SDK gets."""


def error_body_notes(wire: str, body: bytes) -> list[str]:
    """The keys the wire's documented error body lists that ``body`` leaves out although its SDK reads
    them as absent-is-None (OpenAI's ``type``, ``param``, ``code``): notes, never a failure."""
    if wire not in ("openai_chat", "openai_responses"):
        return []
    try:
        value = json.loads(body)
    except (ValueError, RecursionError):
        return []
    error = value.get("error") if isinstance(value, Mapping) else None
    if not isinstance(error, Mapping):
        return []
    return [
        f"error.{key} missing: the OpenAPI Error lists it ({_ERROR_SHAPES[wire]}); openai-python reads it as None"
        for key in _OPENAI_LISTED
        if key not in error
    ]


_ERROR_FIELDS: Mapping[str, Mapping[str, tuple[type, ...]]] = {
    "openai_chat": _OPENAI_ERROR,
    "openai_responses": _OPENAI_ERROR,
    "anthropic": {"type": (str,), "message": (str,)},
    "gemini": {"code": (int,), "message": (str,), "status": (str,)},
}
_ERROR_SHAPES = {
    "openai_chat": '{"error": {"message", "type", "param", "code"}}',
    "openai_responses": '{"error": {"message", "type", "param", "code"}}',
    "anthropic": '{"type": "error", "error": {"type", "message"}}',
    "gemini": '{"error": {"code", "message", "status"}}',
    "ollama": '{"error": "..."}',
}


def error_verdict(probe: str, exchange: ServerExchange, *, documented: bool) -> CheckVerdict:
    """``server.errors`` of one deliberately invalid request (``probe`` names it: ``unknown_tool_choice``,
    ``schema_not_object``, ``result_without_call``, ``body_not_json``): a 4xx with the wire's
    documented error body passes; a 200 (the server accepted what its wire refuses), a 5xx (a crash
    on bad input) or another body fails. ``documented=False``: the wire documents no error for this
    probe, so nothing is judged (``unsupported``)."""
    check = "server.errors"
    if not documented:
        return CheckVerdict(
            check=check,
            status="unsupported",
            message=f"the {exchange.wire} wire documents no error for {probe}: not judged",
        )
    status = exchange.status
    findings: list[Finding] = []
    if exchange.error or status == 0:
        findings.append(
            Finding(
                check=check,
                turn=exchange.turn,
                path=f"{probe}.status",
                message=f"no HTTP answer to the invalid request ({probe}): {exchange.error or 'none'}",
                expected="a 4xx",
                remedy="refuse an invalid request at once with a 4xx and the wire's error body",
            )
        )
    elif 200 <= status < 300:
        findings.append(
            Finding(
                check=check,
                turn=exchange.turn,
                path=f"{probe}.status",
                message=f"the invalid request ({probe}) was accepted with {status}: {quote(exchange.body, 200)}",
                expected="a 4xx",
                actual=status,
                remedy=f"refuse it with 400 and {_ERROR_SHAPES.get(exchange.wire, 'the error body')}",
            )
        )
    elif status >= 500:
        findings.append(
            Finding(
                check=check,
                turn=exchange.turn,
                path=f"{probe}.status",
                message=f"a server error ({status}) for a client's mistake ({probe}): {quote(exchange.body, 200)}",
                expected="a 4xx",
                actual=status,
                remedy="validate the request and answer 400 with the wire's error body, not a 5xx",
            )
        )
    elif not 400 <= status < 500:
        message = f"status {status} for {probe}"
        findings.append(
            Finding(
                check=check,
                turn=exchange.turn,
                path=f"{probe}.status",
                message=message,
                expected="a 4xx",
                actual=status,
            )
        )
    else:
        for problem in error_body_problems(exchange.wire, exchange.body):
            findings.append(
                Finding(
                    check=check,
                    turn=exchange.turn,
                    path=f"{probe}.body",
                    message=f"the {status} for {probe} has no documented error body: {problem}",
                    expected=_ERROR_SHAPES.get(exchange.wire),
                    actual=quote(exchange.body, 200),
                    remedy="answer errors in the wire's error shape: its SDK reads the message from there",
                )
            )
        for note in error_body_notes(exchange.wire, exchange.body):
            findings.append(
                Finding(
                    check=check,
                    turn=exchange.turn,
                    path=f"{probe}.body.error",
                    message=f"the {status} for {probe}: {note}",
                    kind="note",
                )
            )
    return verdict(check, findings)
