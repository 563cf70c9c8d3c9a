"""Shared framing of the encoders, and every encoder module satisfying the same interface."""

from __future__ import annotations

import inspect

import pytest

from conformance.emulator import ENCODERS
from conformance.emulator._wire import WireContext, WireEncoder, retry_after, retry_after_header, sse
from conformance.scenarios.values import Fault, Reply


def test_sse_events_end_with_a_blank_line() -> None:
    assert sse('{"a":1}') == b'data: {"a":1}\n\n'
    assert sse("{}", "ping") == b"event: ping\ndata: {}\n\n"
    assert sse("{}", crlf=True) == b"data: {}\r\n\r\n"  # Gemini (§4d)


def test_a_rate_limit_always_announces_a_wait() -> None:
    assert retry_after(Fault(kind="rate_limit")) == 1.0
    assert retry_after(Fault(kind="rate_limit", retry_after=2.5)) == 2.5
    assert retry_after(Fault(kind="overloaded")) is None
    assert retry_after(Fault(kind="unavailable", retry_after=3)) == 3
    assert retry_after_header(2.0) == "2" and retry_after_header(2.5) == "2.5"


_NAMES = [name for name in WireEncoder.__dict__ if not name.startswith("_")] + ["WIRE", "KNOWN_QUIRKS"]


@pytest.mark.parametrize("wire", sorted(ENCODERS))
def test_every_encoder_has_the_same_functions_and_names_its_wire(wire: str) -> None:
    encoder = ENCODERS[wire]
    assert wire == encoder.WIRE
    for name in _NAMES:
        assert hasattr(encoder, name), f"{wire} lacks {name}"
    protocol = inspect.signature(WireEncoder.stream_error_event)
    assert list(inspect.signature(encoder.stream_error_event).parameters) == list(protocol.parameters)[1:]


@pytest.mark.parametrize("wire", sorted(ENCODERS))
def test_stream_faults_are_not_http_errors(wire: str) -> None:
    ctx = WireContext(wire=wire, scenario_id="s", turn=0, model="m", stream=True)
    with pytest.raises(ValueError, match="not answered with an HTTP error"):
        ENCODERS[wire].error_response(Fault(kind="disconnect"), ctx)


@pytest.mark.parametrize("wire", sorted(ENCODERS))
def test_every_stream_has_its_terminal_events_and_no_empty_event(wire: str) -> None:
    # OpenAI chat: the finish_reason chunk and `data: [DONE]` (the SDK accepts a stream without
    # [DONE], so both are withheld by a breaking fault); every other wire: one terminal event.
    ctx = WireContext(wire=wire, scenario_id="s", turn=0, model="m", stream=True)
    for reply in (Reply(), Reply(text="hi"), Reply(reasoning="r")):
        events = ENCODERS[wire].stream_events(reply, ctx)
        assert events and all(events)
        assert ENCODERS[wire].terminal_event_count(reply, ctx) == (2 if wire == "openai_chat" else 1)
