"""A Translator wrapped as a black-box Client, with its own HTTP transport (self-consistency).

``TranslatorClient(adapter)`` does what a library does: it writes the call with the adapter's
``request_to_wire``, sends it with ``conformance.traffic.transport`` to the loopback server, and
decodes the answer with ``response_from_wire`` or ``stream_from_wire``; an HTTP error is raised as
the ``ProviderError`` of ``error_from_wire``. Certified with ``conformance certify``, a reference
adapter wrapped this way must pass every case it passes with ``conformance run``: the harness
and the runner judge alike.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from conformance.adapters.base import Adapter, WireRequest, load_json_body
from conformance.clients.contract import Call
from conformance.errors import ProviderError, StreamInterruptedError, TransportError
from conformance.model import ErrorInfo, Response, StreamEvent
from conformance.traffic.transport import Transport

__all__ = ["TranslatorClient"]


@dataclass(frozen=True)
class TranslatorClient:
    """A client whose translation is ``adapter`` and whose HTTP is the suite's own transport."""

    adapter: Adapter
    name: str = ""
    wires: Mapping[str, frozenset[str]] = field(default_factory=dict)
    known_gaps: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "name", self.name or f"{self.adapter.name}-as-client")
        object.__setattr__(self, "wires", {self.adapter.wire_format: self.adapter.capabilities})
        object.__setattr__(self, "known_gaps", dict(self.adapter.known_gaps))

    def complete(self, call: Call) -> Response | Iterator[StreamEvent]:
        wire = self.adapter.request_to_wire(call.request())
        transport = Transport(call.base_url, wire=self.adapter.wire_format, api_key=call.api_key, timeout=call.timeout)
        if not wire.stream:
            with transport:
                answer = transport.send(wire)
            if answer.status >= 400:
                raise ProviderError(self.adapter.error_from_wire(answer.status, answer.headers, answer.body).info)
            body = load_json_body(answer.body)
            if not isinstance(body, Mapping):
                info = ErrorInfo(
                    kind="malformed_response", message="the body is not a JSON object", status=answer.status
                )
                raise ProviderError(info)
            return self.adapter.response_from_wire(body, tools=call.tools)
        return self._stream(transport, wire, call)

    def _stream(self, transport: Transport, wire: WireRequest, call: Call) -> Iterator[StreamEvent]:
        with transport, transport.stream(wire) as streamed:
            if streamed.status >= 400:
                body = streamed.read()
                raise ProviderError(self.adapter.error_from_wire(streamed.status, streamed.headers, body).info)
            yield from self.adapter.stream_from_wire(_until_broken(streamed.chunks()), tools=call.tools)

    def error_info(self, exc: BaseException) -> ErrorInfo | None:
        if isinstance(exc, ProviderError):
            return exc.info
        if isinstance(exc, TransportError):
            return ErrorInfo(kind="unknown", message=f"{type(exc).__name__}: {exc}")
        return None


def _until_broken(chunks: Iterator[bytes]) -> Iterator[bytes]:
    """The chunks until the transport breaks; the adapter then sees the stream end early (its own
    ``error`` event says so), as ``conformance.run.conversation`` feeds it."""
    try:
        yield from chunks
    except (StreamInterruptedError, TransportError):
        return
