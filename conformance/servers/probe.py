"""The I/O edge of a server certification: bounded HTTP to the one URL given, one case at a time.

Every request of a case goes through one ``ProbeTransport`` (a ``conformance.traffic.transport.
Transport`` to ``base_url`` only: redirects are never followed, a 3xx is an answer to judge; no
cookie jar; no proxy from the environment) over one ``conformance.run.recording.Fence``, the
bounded transport ``conformance record --live`` uses: each exchange must end within
``exchange_timeout`` seconds from its request to the last byte of its body (a watchdog shuts its
socket down there: a server that never answers, or answers forever), and each body may hold
``max_body`` bytes once decoded (past them the exchange is cut, what arrived dropped).

``run_case`` runs a case's work in a daemon thread given ``timeout`` seconds: one still running
then is fenced off (``Fence.cancel``: its exchange in flight is cut, its next request raises), and
the caller goes on to the next case. ``ProbeTransport.send_bytes`` sends a body exactly as given
(an invalid-request probe's, which may not be JSON).
"""

from __future__ import annotations

import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass

import httpx

from conformance.adapters.base import WireRequest
from conformance.run.recording import Fence
from conformance.traffic.transport import HTTPResponse, Transport

__all__ = ["CaseRun", "ProbeTransport", "open_transport", "run_case"]


class ProbeTransport(Transport):
    """A ``Transport`` that can also send a body byte for byte (``send_bytes``)."""

    _raw: bytes | None = None

    def __enter__(self) -> ProbeTransport:
        return self

    def send_bytes(self, request: WireRequest, body: bytes) -> HTTPResponse:
        """Send ``request`` with ``body`` as its exact bytes (not the JSON of ``request.body``).
        Raises as ``send`` does (``TransportError`` when no answer comes or it is too big)."""
        self._raw = body
        try:
            return self.send(request)
        finally:
            self._raw = None

    def _build(self, request: WireRequest, *, stream: bool) -> httpx.Request:
        built = super()._build(request, stream=stream)
        if self._raw is None:
            return built
        headers = {k: v for k, v in built.headers.items() if k.lower() != "content-length"}
        return self._client.build_request(
            built.method, built.url, content=self._raw, headers=headers, extensions=built.extensions
        )


def open_transport(
    base_url: str, *, wire: str, api_key: str | None, exchange_timeout: float, max_body: int | None, fence: Fence
) -> ProbeTransport:
    """The transport of one case: to ``base_url`` only, over ``fence``, bodies bounded by ``max_body``."""
    return ProbeTransport(
        base_url, wire=wire, api_key=api_key, timeout=exchange_timeout, backend=fence, max_body=max_body
    )


@dataclass(frozen=True, kw_only=True)
class CaseRun:
    """How a case's work ended."""

    timed_out: bool = False
    """It was still running after ``timeout`` seconds (its exchange in flight was cut)."""
    error: BaseException | None = None
    """What it raised (None: it returned)."""
    trace: str | None = None


def run_case(work: Callable[[], None], *, timeout: float, fence: Fence, name: str) -> CaseRun:
    """Run ``work`` in a daemon thread for at most ``timeout`` seconds; past them ``fence`` is
    cancelled (the late thread can neither keep downloading nor send again) and the caller moves on."""
    ended: list[CaseRun] = []

    def target() -> None:
        try:
            work()
        except BaseException as exc:  # a case that raises costs itself only
            ended.append(CaseRun(error=exc, trace=traceback.format_exc()))
        else:
            ended.append(CaseRun())

    thread = threading.Thread(target=target, name=name, daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        fence.cancel()
        return CaseRun(timed_out=True)
    return ended[0]
