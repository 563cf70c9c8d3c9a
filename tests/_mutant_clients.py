"""Clients with one bug each, for the tests that read what the suite says of a bug (the plain words, the
terminal's defect block, the pytest plugin's failure): a reference adapter's translation whose request
bodies one function changes, or a client that retries behind the caller's back."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Iterator
from typing import Any

from conformance.adapters import for_format
from conformance.adapters.base import Adapter, WireRequest
from conformance.clients.contract import Call
from conformance.clients.translator import TranslatorClient
from conformance.model import ErrorInfo, Request, Response, StreamEvent

__all__ = ["DROPPED", "REVERSED", "Retrying", "drop_first_call_id", "reverse_results", "rewriting"]


def rewriting(wire: str, rewrite: Callable[[dict[str, Any]], dict[str, Any]]) -> Adapter:
    """The reference adapter of ``wire``, its request bodies passed through ``rewrite`` before they go out."""
    adapter = for_format(wire)

    def request_to_wire(request: Request) -> WireRequest:
        sent = adapter.request_to_wire(request)
        return dataclasses.replace(sent, body=rewrite(copy.deepcopy(dict(sent.body))))

    return dataclasses.replace(adapter, request_to_wire=request_to_wire)


def reverse_results(body: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI Chat body with each run of tool results in reverse order."""
    messages: list[Any] = []
    run: list[Any] = []
    for message in [*body["messages"], None]:
        if message is not None and message.get("role") == "tool":
            run.append(message)
            continue
        messages += run[::-1]
        run = []
        messages += [message] if message is not None else []
    return {**body, "messages": messages}


def drop_first_call_id(body: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI Chat body whose first tool result lost its ``tool_call_id``."""
    for message in body["messages"]:
        if message.get("role") == "tool":
            message.pop("tool_call_id")
            break
    return body


REVERSED = TranslatorClient(rewriting("openai_chat", reverse_results), name="reversed")
DROPPED = TranslatorClient(rewriting("openai_chat", drop_first_call_id), name="dropped-id")


@dataclasses.dataclass(frozen=True)
class Retrying:
    """Sends every turn twice (a hidden retry) and keeps the second answer."""

    inner: TranslatorClient
    name: str = "retrying"
    known_gaps: dict[str, str] = dataclasses.field(default_factory=dict)

    @property
    def wires(self) -> dict[str, frozenset[str]]:
        return dict(self.inner.wires)

    def complete(self, call: Call) -> Response | Iterator[StreamEvent]:
        first = self.inner.complete(call)
        if not isinstance(first, Response):
            list(first)
        return self.inner.complete(call)

    def error_info(self, exc: BaseException) -> ErrorInfo | None:
        return self.inner.error_info(exc)
