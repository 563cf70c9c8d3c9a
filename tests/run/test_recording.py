"""``conformance.run.recording``: the per-pair timeout of ``conformance record`` (issue 14), and
what a pair that passes it leaves behind: nothing downloading (issue 27).

A pair that does not finish in time fails with "timed out", the next pair runs and is written,
and the late pair neither reaches the server again nor writes its cassette. The slow adapter is a
reference adapter whose request builder waits on an event the test controls (no timing guesses:
the test releases it after the pair has been given up)."""

from __future__ import annotations

import dataclasses
import json
import threading
from pathlib import Path

import pytest
from _loopback import LoopbackServer, Reply
from _raw_server import Peer, RawServer, chunk, head
from _secrets import SECRETS, leaks

from conformance import cli
from conformance.adapters import get_adapter
from conformance.adapters.base import WireRequest
from conformance.emulator import Emulator, EmulatorScript
from conformance.model import Request
from conformance.run.recording import cassette_path, record_pairs
from conformance.scenarios.loader import load_scenarios
from conformance.scenarios.values import Scenario

DATA = Path(__file__).resolve().parents[1] / "data" / "scenarios"


def test_a_pair_past_its_timeout_fails_and_the_others_go_on(tmp_path: Path) -> None:
    (scenario,) = [s for s in load_scenarios([DATA]).scenarios if s.id == "basic/get_time"]
    fast = get_adapter("openai_chat")
    release = threading.Event()
    entered = threading.Event()
    wire_requests: list[str] = []

    def stuck(request: Request) -> WireRequest:
        entered.set()
        release.wait(3600)  # as a $ref inlining that runs for minutes would (released below)
        return fast.request_to_wire(request)

    slow = dataclasses.replace(fast, name="slow_chat", request_to_wire=stuck)
    with Emulator() as emulator:

        def set_script(chosen: Scenario | None) -> None:
            wire_requests.append("set" if chosen else "clear")
            emulator.set_script(None if chosen is None else EmulatorScript.from_scenario(chosen))

        results = record_pairs(
            [scenario],
            [slow, fast],
            cassette_dir=tmp_path,
            base_url=emulator.base_url,
            mode="emulator",
            set_script=set_script,
            timeout=5.0,  # the fast pair records under it too: room for a machine at a load of 10
        )
        assert entered.is_set()
        written = cassette_path(tmp_path, fast.traffic_format, scenario.id)
        before = (written.read_bytes(), written.stat().st_mtime_ns)
        release.set()  # the late pair wakes up after it was given up: it must not write
        (late,) = [t for t in threading.enumerate() if t.name.startswith("record slow_chat")]
        late.join(30)
        assert not late.is_alive()
        assert (written.read_bytes(), written.stat().st_mtime_ns) == before
    slow_result, fast_result = results
    assert slow_result.status == "failed" and "timed out after 5 s" in slow_result.detail
    assert "--timeout" in slow_result.detail
    assert fast_result.status == "recorded"
    assert cassette_path(tmp_path, fast.traffic_format, scenario.id).is_file()
    # both adapters speak openai_chat: the one cassette there is the fast pair's, written once
    assert sorted(p.name for p in tmp_path.rglob("*.yaml")) == ["get_time.yaml"]
    assert wire_requests == ["set", "clear", "set", "clear"]  # scripts set and cleared by the caller only


def test_a_provider_error_that_echoes_the_key_is_printed_scrubbed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    key = next(s for s in SECRETS if s.kind == "bearer_sent").value  # no key shape: known only by name
    error = json.dumps({"error": {"message": f"bad key {key}", "type": "invalid_request_error"}}).encode()
    routes = {
        ("POST", "/v1/chat/completions"): [
            Reply(status=401, headers=[("content-type", "application/json")], body=error)
        ]
    }
    monkeypatch.setenv("CONFORMANCE_ECHO_KEY", key)
    with LoopbackServer(routes) as server:
        cli.main(
            [
                "record",
                "--live",
                "--adapter",
                "openai_chat",
                "--scenario",
                "basic/get_time",
                "--base-url",
                server.base_url,
                "--api-key-env",
                "CONFORMANCE_ECHO_KEY",
                "--cassette-dir",
                str(tmp_path),
            ]
        )
    out, err = capsys.readouterr()
    assert "bad key REDACTED" in err  # the provider's message is shown, without the key
    assert not leaks(out + err, key)


def _slow_forever(peer: Peer) -> None:
    """A chunked body that never ends: 1 KiB every 20 ms (for 60 s at most), streamed or not."""
    peer.send(head(headers=[("content-type", "text/event-stream"), ("transfer-encoding", "chunked")]))
    for _ in range(3000):
        if peer.stopped:
            return
        peer.send(chunk(b": " + b"p" * 1020 + b"\n\n"))
        peer.wait(0.02)


def test_a_pair_past_its_timeout_stops_downloading_at_once(tmp_path: Path) -> None:
    """Issue 27, point 4: the late pair's exchange in flight is cut when the pair times out. Before,
    it went on reading until its exchange deadline (120 s by default): three pairs like this one
    downloaded 4.6 GB in the background. The server counts what it could send after the pair ended."""
    (scenario,) = [s for s in load_scenarios([DATA]).scenarios if s.id == "basic/get_time"]
    with RawServer(_slow_forever) as server:
        results = record_pairs(
            [scenario],
            [get_adapter("openai_chat")],
            cassette_dir=tmp_path,
            base_url=server.base_url,
            mode="live",
            timeout=3.0,
            exchange_timeout=120.0,
        )
        ended = server.sent
        hung_up = server.idle(20)  # a safety net: the server's answer ends when the client hangs up
        after = server.sent - ended
    assert results[0].status == "failed" and "timed out after 3 s" in results[0].detail
    assert server.requests == 1 and ended > 0  # the exchange was under way when the pair ended
    assert hung_up, f"the server still streams to the late pair ({after:,} bytes since the pair ended)"
    assert after <= 64 * 1024, f"{after:,} bytes sent after the pair ended"  # before: ~50 KB/s for 120 s
    assert not any(tmp_path.rglob("*.yaml"))
    assert not server.errors
