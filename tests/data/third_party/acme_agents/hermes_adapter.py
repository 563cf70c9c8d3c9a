"""ACME's Hermes-format adapter, as a framework outside ``conformance`` would declare it.

It writes tools into the prompt in the Hermes ``<tool_call>`` format over the OpenAI Chat wire
(its translation functions are the reference ones; its name, declarations and its one bug are its
own). The bug: when a reply holds tool calls, the text before them is dropped (the same bug the
selftest mutant ``openai_responses~text_before_call_dropped`` carries). ACME declares it as a known
gap, so it is XFAIL where it shows, and STALE if it ever stops showing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from conformance.adapters import hermes
from conformance.adapters.base import Adapter
from conformance.model import Response, StreamEvent, TextDelta, Tool, ToolCallStart

__all__ = ["ACME_HERMES", "GAPS"]

_WHY = "ACME drops the text before a tool call (ACME-1234)"
GAPS = {
    "roundtrip.text@basic/text_before_call": _WHY,
    "roundtrip.text@recovery/tool_error_self_correct": _WHY,
    "roundtrip.text@streaming/text_then_call_events": _WHY,
    "streaming.events@streaming/text_then_call_events": _WHY,
    "roundtrip.text@streaming/trailing_empty_text": _WHY,
    # the dropped text is missing from the history sent back on the next turn
    "translation.recorded_request@recovery/tool_error_self_correct": _WHY,
}


def _response_from_wire(body: Any, /, *, tools: Sequence[Tool] = ()) -> Response:
    response = hermes.response_from_wire(body, tools=tools)
    if any(p.kind == "tool_call" for p in response.parts):
        return dataclasses.replace(response, parts=tuple(p for p in response.parts if p.kind != "text"))
    return response


def _stream_from_wire(chunks: Iterable[bytes], /, *, tools: Sequence[Tool] = ()) -> Iterator[StreamEvent]:
    events = list(hermes.stream_from_wire(chunks, tools=tools))
    if any(isinstance(e, ToolCallStart) for e in events):
        return iter([e for e in events if not isinstance(e, TextDelta)])
    return iter(events)


ACME_HERMES = Adapter(
    name="acme_hermes",
    wire_format="openai_chat",
    tools_in_prompt=True,
    prompt_format="hermes",
    known_gaps=GAPS,
    capabilities=hermes.ADAPTER.capabilities,
    tools_to_wire=hermes.tools_to_wire,
    request_to_wire=hermes.request_to_wire,
    request_from_wire=hermes.request_from_wire,
    response_from_wire=_response_from_wire,
    stream_from_wire=_stream_from_wire,
    error_from_wire=hermes.error_from_wire,
)
