"""The I/O edge of a server certification (``conformance.servers.probe``): exact bytes, one URL,
and a case's work fenced off once its time is up."""

from __future__ import annotations

import threading

from conformance.adapters.base import WireRequest
from conformance.run.recording import Fence
from conformance.servers.probe import open_transport, run_case
from tests._loopback import LoopbackServer, Reply


def test_send_bytes_sends_the_body_exactly_and_send_goes_on_sending_json() -> None:
    routes = {("POST", "/v1/chat/completions"): [Reply(status=400, body=b'{"error": {}}')]}
    with LoopbackServer(routes) as server:
        fence = Fence(5.0)
        with open_transport(
            server.base_url, wire="openai_chat", api_key="k" * 8, exchange_timeout=5.0, max_body=1024, fence=fence
        ) as transport:
            request = WireRequest(path="/v1/chat/completions", body={"model": "m"})
            answer = transport.send_bytes(request, b'{"model": "m", "mess')
            assert answer.status == 400
            transport.send(request)
    first, second = server.requests
    assert first.body == b'{"model": "m", "mess'
    assert first.headers["content-length"] == str(len(first.body))
    assert first.headers["authorization"] == "Bearer " + "k" * 8
    assert second.body == b'{"model":"m"}'


def test_run_case_returns_what_the_work_raised() -> None:
    def work() -> None:
        raise ValueError("broken")

    ran = run_case(work, timeout=5.0, fence=Fence(1.0), name="t")
    assert not ran.timed_out and isinstance(ran.error, ValueError) and "broken" in (ran.trace or "")


def test_a_case_past_its_time_is_left_and_its_fence_refuses_every_later_request() -> None:
    release = threading.Event()
    fence = Fence(None)

    def work() -> None:
        release.wait(30)

    ran = run_case(work, timeout=0.05, fence=fence, name="t")
    release.set()
    assert ran.timed_out and fence.cancelled.is_set()
