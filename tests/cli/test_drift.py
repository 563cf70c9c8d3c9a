"""``conformance drift`` and live re-recording against a provider whose answers churn.

``Provider`` stands in for a live provider on 127.0.0.1: it forwards to the loopback emulator and,
as a real server does, gives every recording fresh ids (consistent within it, so tool-call ids
still pair up), ``created`` times, llama.cpp-style ``timings``, request-id headers and SSE ping
comments; a planted change adds or removes a response field. Recording twice must leave the
cassette byte-identical, ``drift`` must report ``unchanged`` for it and the planted change with its
field path, and never touch the stored cassettes."""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from _raw_server import Peer, RawServer, gzip_bomb_answer, head

from conformance.cli import main
from conformance.emulator import Emulator, EmulatorScript
from conformance.scenarios.loader import load_scenarios

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = "basic/get_time"  # two turns: the second request echoes the call's id
KEY_ENV = "CONFORMANCE_DRIFT_TEST_KEY"
_IDS = re.compile(r"\b(?:chatcmpl-|call_|fp_)[A-Za-z0-9]{8,}")


class Provider:
    """A live provider stand-in (see the module docstring); ``session`` seeds its fresh values."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.session = 1
        self.add_field: str | None = None
        self.drop_field: str | None = None
        self.calls = 0
        self.received: list[dict[str, Any]] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                owner.serve(self)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> Provider:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def fresh(self, value: str) -> str:
        """The id this recording's provider gives where the emulator gave ``value``."""
        prefix = re.match(r"[a-z]+[-_]", value)
        head = prefix.group() if prefix else ""
        digest = hashlib.sha256(f"{self.session}:{value}".encode()).hexdigest()
        return head + digest[: len(value) - len(head)]

    def payload(self, data: dict[str, Any]) -> dict[str, Any]:
        self.calls += 1
        if isinstance(data.get("created"), int):
            data["created"] = 1764100000 + 60 * self.session + self.calls
        data["timings"] = {"prompt_n": 12, "prompt_ms": 10.5 + self.session * 3.25, "predicted_per_second": 80.0}
        if self.add_field:
            data[self.add_field] = "planted"
        if self.drop_field:
            data.pop(self.drop_field, None)
        return data

    def serve(self, handler: BaseHTTPRequestHandler) -> None:
        body = handler.rfile.read(int(handler.headers.get("content-length") or 0))
        self.received.append(json.loads(body))
        upstream = httpx.post(
            self.upstream + handler.path, content=body, headers={"content-type": "application/json"}, timeout=30
        )
        text = _IDS.sub(lambda m: self.fresh(m.group()), upstream.text)
        streamed = upstream.headers.get("content-type", "").startswith("text/event-stream")
        handler.send_response(upstream.status_code)
        handler.send_header("content-type", upstream.headers.get("content-type", "application/json"))
        handler.send_header("x-request-id", "req_" + hashlib.sha256(f"{self.session}{self.calls}".encode()).hexdigest())
        handler.send_header("openai-processing-ms", str(40 + self.session))
        if not streamed:
            data = json.loads(text)
            out = json.dumps(self.payload(data) if upstream.status_code == 200 else data).encode()
            handler.send_header("content-length", str(len(out)))
            handler.end_headers()
            handler.wfile.write(out)
            return
        handler.send_header("transfer-encoding", "chunked")
        handler.end_headers()
        events = [f": ping - 2026-11-25 22:{self.session:02d}:07.{self.session:06d}\n\n"]
        for event in text.split("\n\n"):
            if not event:
                continue
            if event.startswith("data: {"):
                event = "data: " + json.dumps(self.payload(json.loads(event[6:])), separators=(",", ":"))
            events.append(event + "\n\n")
        for event in events:
            data = event.encode()
            handler.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        handler.wfile.write(b"0\r\n\r\n")


@pytest.fixture
def provider(monkeypatch: pytest.MonkeyPatch) -> Iterator[Provider]:
    monkeypatch.setenv(KEY_ENV, "sk-drift-test-0123456789abcdefghijkl")
    scenario = next(s for s in load_scenarios([ROOT / "scenarios"]).scenarios if s.id == SCENARIO)
    with Emulator() as emulator, Provider(emulator.base_url) as stand_in:
        emulator.set_script(EmulatorScript(scenario_id=scenario.id, replies=tuple(t.reply for t in scenario.turns)))
        yield stand_in


def live(command: str, provider: Provider, cassettes: Path, *more: str) -> list[str]:
    return [
        command,
        *(["--live"] if command == "record" else []),
        "--adapter",
        "openai_chat",
        "--scenario",
        SCENARIO,
        "--base-url",
        provider.base_url,
        "--api-key-env",
        KEY_ENV,
        "--cassette-dir",
        str(cassettes),
        *more,
    ]


def snapshot(folder: Path) -> dict[Path, bytes]:
    return {f: f.read_bytes() for f in sorted(folder.rglob("*")) if f.is_file()}


def test_the_stand_in_churns_like_a_live_provider(provider: Provider) -> None:
    """Without normalisation two recordings would differ: each session answers with other values."""
    request = {"model": "m", "messages": [{"role": "user", "content": "What time is it?"}], "stream": False}
    answers = []
    for session in (1, 2):
        provider.session = session
        response = httpx.post(provider.base_url + "/v1/chat/completions", json=request, timeout=30)
        answers.append((response.headers["x-request-id"], response.json()))
    (one_header, one), (two_header, two) = answers
    assert one_header != two_header
    assert one["id"] != two["id"] and one["created"] != two["created"] and one["timings"] != two["timings"]
    assert one["choices"][0]["message"]["tool_calls"][0]["id"] != two["choices"][0]["message"]["tool_calls"][0]["id"]


def test_an_unchanged_live_provider_rerecords_byte_identical_and_drifts_nothing(
    tmp_path: Path, provider: Provider, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(live("record", provider, tmp_path)) == 0
    cassette = tmp_path / "openai_chat" / f"{SCENARIO}.yaml"
    first = cassette.read_bytes()
    provider.session = 2  # the provider's next answers: other ids, times, timings, request ids
    assert main(live("record", provider, tmp_path)) == 0
    assert "0 recorded, 1 unchanged" in capsys.readouterr().err
    assert cassette.read_bytes() == first

    document = json.loads(first)
    assert b": ping - 2025-01-01 00:00:00.000000" in first  # the SSE ping's time, fixed
    assert {"$.id", "$.created", "$.choices[*].delta.tool_calls[*].id", "$.timings.prompt_ms"} <= set(
        document["provenance"]["volatile"]
    )
    calls = [
        i["response"]["parsed_body"]["choices"][0]["message"]["tool_calls"][0]["id"]
        for i in document["interactions"]
        if "tool_calls" in json.dumps(i["response"].get("parsed_body", {}))
    ]
    echoed = [
        m["tool_call_id"]
        for i in document["interactions"]
        for m in i["request"]["parsed_body"]["messages"]
        if m.get("role") == "tool"
    ]
    assert calls and set(calls) <= set(echoed)  # the stable call id and its echo still pair up

    provider.session = 3
    stored = snapshot(tmp_path)
    assert main(live("drift", provider, tmp_path)) == 0
    out = capsys.readouterr().out
    assert f"openai_chat {SCENARIO}: unchanged" in out and "1 unchanged, 0 drifted" in out
    assert snapshot(tmp_path) == stored  # drift records elsewhere


def test_drift_sends_the_live_recordings_sampling_knobs(
    tmp_path: Path, provider: Provider, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(live("record", provider, tmp_path)) == 0
    recorded = [{k: body.get(k) for k in ("temperature", "seed")} for body in provider.received]
    assert recorded and all(r == {"temperature": 0, "seed": 42} for r in recorded)  # record --live's defaults
    provider.received.clear()
    assert main(live("drift", provider, tmp_path)) == 0  # the same knobs: no request difference
    assert [{k: body.get(k) for k in ("temperature", "seed")} for body in provider.received] == recorded
    provider.received.clear()
    assert main(live("drift", provider, tmp_path, "--temperature", "0.5", "--seed", "none")) == 1
    assert all(body.get("temperature") == 0.5 and "seed" not in body for body in provider.received)
    out = capsys.readouterr().out
    assert "temperature" in out  # the request that changed is shown


def test_a_planted_response_field_is_reported_with_its_path(
    tmp_path: Path, provider: Provider, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(live("record", provider, tmp_path)) == 0
    stored = snapshot(tmp_path)
    provider.session, provider.add_field = 2, "x_planted"
    assert main(live("drift", provider, tmp_path)) == 1
    out = capsys.readouterr().out
    assert f"openai_chat {SCENARIO}: drifted" in out
    assert "interactions[0].response response: added $.x_planted (string)" in out
    assert "interactions[2].response stream_event:chat.completion.chunk: added $.x_planted (string)" in out

    provider.add_field, provider.drop_field = None, "system_fingerprint"
    assert main(live("drift", provider, tmp_path, "--format", "json")) == 1
    document = json.loads(capsys.readouterr().out)
    (pair,) = document["pairs"]
    assert pair["status"] == "drifted" and document["exit_code"] == 1
    removed = {(c["kind"], c["path"], c["stored"]) for c in pair["changes"] if c["change"] == "removed"}
    assert ("response", "$.system_fingerprint", "string") in removed
    assert ("stream_event:chat.completion.chunk", "$.system_fingerprint", "string") in removed
    assert snapshot(tmp_path) == stored


def test_an_unchanged_emulator_drifts_nothing_and_leaves_the_bundled_cassettes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    bundled = ROOT / "cassettes"
    before = snapshot(bundled / "anthropic" / "basic") | snapshot(bundled / "openai_responses" / "basic")
    argv = ["drift", "--emulator", "--adapter", "anthropic,openai_responses", "--scenario", "basic/*"]
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    pairs = [line for line in lines if line.startswith(("anthropic ", "openai_responses "))]
    assert len(pairs) == 2 * len(list((ROOT / "scenarios" / "basic").glob("*.yaml")))
    assert all(line.endswith(": unchanged") for line in pairs), pairs
    assert snapshot(bundled / "anthropic" / "basic") | snapshot(bundled / "openai_responses" / "basic") == before


def test_a_pair_without_a_stored_cassette_is_missing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["drift", "--emulator", "--adapter", "gemini", "--scenario", SCENARIO, "--cassette-dir", str(tmp_path)]
    assert main([*argv, "--format", "json"]) == 1
    (pair,) = json.loads(capsys.readouterr().out)["pairs"]
    assert pair["status"] == "missing" and str(tmp_path / "gemini" / "basic" / "get_time.yaml") in pair["detail"]
    assert list(tmp_path.iterdir()) == []


def test_a_users_mcp_command_starts_only_with_allow_commands(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the bundled fixed_clock scenario copied byte for byte into a user's folder: the same id and
    # fingerprint, so the bundled cassette is what the fresh recording is compared with
    mine = tmp_path / "scenarios" / "mcp" / "fixed_clock.yaml"
    mine.parent.mkdir(parents=True)
    mine.write_bytes((ROOT / "scenarios" / "mcp" / "fixed_clock.yaml").read_bytes())
    argv = ["drift", "--emulator", "--adapter", "openai_chat", "--scenarios-dir", str(tmp_path / "scenarios")]
    argv += ["--scenario", "mcp/fixed_clock", "--format", "json"]
    assert main(argv) == 1
    captured = capsys.readouterr()
    (pair,) = json.loads(captured.out)["pairs"]
    assert pair["status"] == "failed" and "--allow-commands" in pair["detail"] and "started for" not in captured.err

    assert main([*argv, "--allow-commands"]) == 0
    captured = capsys.readouterr()
    (pair,) = json.loads(captured.out)["pairs"]
    assert pair["status"] == "unchanged"
    assert "started for mcp/fixed_clock: " in captured.err and "mcp-server" in captured.err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--adapter", "openai_chat"], "either --base-url URL"),
        (["--emulator", "--base-url", "http://127.0.0.1:9"], "either --base-url URL"),
        (["--base-url", "http://127.0.0.1:9"], "--adapters NAME is required"),
        (["--emulator", "--adapter", "nope"], "unknown adapter nope"),
        (["--emulator", "--api-key-env", "X"], "--api-key-env goes with --base-url"),
        (
            ["--base-url", "http://127.0.0.1:9", "--adapter", "openai_chat", "--api-key-env", "NO_SUCH_VAR_D16"],
            "NO_SUCH",
        ),
        (["--emulator", "--scenario", "no/such/*"], "no scenario matches"),
        (["--emulator", "--cassette-dir", "/nonexistent/d16"], "no such folder"),
        (["--emulator", "--scenarios-dir", "/nonexistent/d16"], "/nonexistent/d16"),
        (["--emulator", "--adapters", "openai_chta"], "did you mean"),
    ],
)
def test_usage_errors_exit_2(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["drift", *argv]) == 2
    assert message in capsys.readouterr().err


_gzip_bomb = gzip_bomb_answer(1 << 30)  # 1 MB inflating to 1 GiB


def _dribble(peer: Peer) -> None:
    for byte in head(headers=[("content-type", "application/json"), ("content-length", "2")]):
        if peer.stopped:
            return
        peer.send(bytes([byte]))
        peer.wait(0.4)


@pytest.mark.parametrize(
    ("answer", "more", "said"),
    [
        (
            _gzip_bomb,
            ["--max-body", "1M"],
            "POST /v1/chat/completions: the response body passed 1,048,576 bytes (decoded size; the bound on one "
            "body) (raise it with --max-body); nothing was written",
        ),
        (
            _dribble,
            ["--exchange-timeout", "1", "--timeout", "20"],
            "deadline: POST /v1/chat/completions did not end within 1 s (raise it with --exchange-timeout)",
        ),
    ],
    ids=["gzip-bomb", "headers-a-byte-at-a-time"],
)
def test_drift_keeps_the_live_bounds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], answer: Callable[[Peer], None], more: list[str], said: str
) -> None:
    """Issue 27, point 4: drift records as `record --live` does, bounds included (before: the bomb
    was inflated whole, and the dribbling headers ran into the pair's --timeout)."""
    argv = ["drift", "--adapter", "openai_chat", "--scenario", SCENARIO, "--cassette-dir", str(tmp_path)]
    with RawServer(answer) as server:
        code = main([*argv, "--base-url", server.base_url, "--format", "json", *more])
    document = json.loads(capsys.readouterr().out)
    assert code == 1
    (pair,) = document["pairs"]
    assert pair["status"] == "failed"
    assert said in pair["detail"]
