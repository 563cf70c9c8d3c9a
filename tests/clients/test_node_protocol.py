"""examples/clients/node/protocol.mjs, the Node side of the client protocol (docs/protocol.md), run
under Node >= 22 by a Python fake suite over two pipes of the driver's own: the hello, a response,
events then ``end``, a throw mid-stream (the events written, then ``error`` with the class name),
``errorInfo`` throwing (``mapping_failed``), a turn past its timeout (``failed`` ``timeout``), an
answer past 16 MiB or no answer at all (``failed`` ``invalid``), a call of another version or one
the schema refuses (``fatal``, exit 2), end of the call pipe (exit 0, a hung library call
notwithstanding), and prints that never reach the protocol pipe. Every message the module writes
is checked against the shipped schema (conformance/clients/protocol.schema.json) with jsonschema.

The driver is a small test driver written to tmp_path that imports the real protocol.mjs by its
absolute path. Node comes from ``scripts/node_runtime.py path --no-install`` (the machine's Node >= 22
or the cached pinned one, never the network); without one the tests skip, saying how to get it.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from conformance.clients.protocol import SCHEMA_FILE

ROOT = Path(__file__).resolve().parents[2]
PROTOCOL = ROOT / "examples" / "clients" / "node" / "protocol.mjs"
WAIT = 60.0
"""Seconds to wait for one line or the exit: a safety net only (each answer takes milliseconds)."""

DRIVER = """\
import { serve } from %(protocol)s;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

class LibraryError extends Error {}

serve({
  name: "test-driver",
  version: "test 1.0.0",
  wires: { openai_chat: ["streaming", "parallel_tool_calls"] },
  duties: ["transport"],
  known_gaps: {},
  async complete(call) {
    console.log(JSON.stringify({ v: 1, type: "response", id: "1", response: {} }));  // a print, never a message
    process.stdout.write("printed to stdout\\n");
    console.error("printed to stderr");
    switch (call.model) {
      case "response":
        return { parts: [{ kind: "text", text: "It is 14:02." }], finish_reason: "stop",
                 usage: { input_tokens: 12, output_tokens: 6 } };
      case "stream":
      case "throw-mid-stream":
        return (async function* () {
          yield { type: "text_delta", text: "It is " };
          await sleep(1);
          yield { type: "text_delta", text: "14:02." };
          if (call.model === "throw-mid-stream") throw new LibraryError("connection reset mid-stream");
          yield { type: "finish", reason: "stop" };
        })();
      case "rate-limited":
        throw Object.assign(new LibraryError("429 slow down"), { status: 429 });
      case "unmappable":
        throw new TypeError("not a library error");
      case "hang":
        return new Promise(() => {});
      case "huge":
        return { parts: [{ kind: "text", text: "x".repeat(17 * 1024 * 1024) }], finish_reason: "stop" };
      case "number":
        return 42;
      default:
        throw new Error(`no such test model ${call.model}`);
    }
  },
  errorInfo(error) {
    if (error instanceof TypeError) throw new RangeError("no kind for a TypeError");
    if (error.status === 429) return { kind: "rate_limit", message: error.message, status: 429, retry_after: 2.0 };
    return null;
  },
});
"""


@pytest.fixture(scope="module")
def node() -> str:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "node_runtime.py"), "path", "--no-install"],
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"no Node >= 22 here: {done.stderr.strip()}")
    return done.stdout.strip()


@pytest.fixture(scope="module")
def validator() -> jsonschema.protocols.Validator:
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator(schema)


class Driver:
    """The test driver under Node, with the fake suite's ends of its two protocol pipes."""

    def __init__(self, node: str, script: Path, validator: jsonschema.protocols.Validator) -> None:
        calls_read, self.calls = os.pipe()
        self.answers, answers_write = os.pipe()
        env = {
            **os.environ,
            "CONFORMANCE_PROTOCOL_FDS": f"{calls_read},{answers_write}",
            "CONFORMANCE_PROTOCOL_SCHEMA": str(SCHEMA_FILE),
        }
        self.process = subprocess.Popen(
            [node, str(script)],
            pass_fds=(calls_read, answers_write),
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        os.close(calls_read)
        os.close(answers_write)
        self.validator = validator
        self.buffer = b""
        self.written: list[dict[str, Any]] = []

    def send(self, message: dict[str, Any]) -> None:
        os.write(self.calls, (json.dumps(message) + "\n").encode())

    def call(self, model: str, **fields: Any) -> None:
        call = {"wire": "openai_chat", "base_url": "http://127.0.0.1:9", "api_key": "sk-test", "model": model}
        self.send({"v": 1, "type": "call", "id": "7", "call": {**call, **fields}})

    def read(self) -> dict[str, Any] | None:
        """The next message the driver wrote (checked against the schema), or None at the pipe's end."""
        while b"\n" not in self.buffer:
            ready, _, _ = select.select([self.answers], [], [], WAIT)
            assert ready, f"the driver said nothing for {WAIT} s"
            chunk = os.read(self.answers, 1 << 20)
            if not chunk:
                assert self.buffer == b"", f"a partial line at the end: {self.buffer[:200]!r}"
                return None
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        message: dict[str, Any] = json.loads(line)
        self.validator.validate(message)
        self.written.append(message)
        return message

    def answer(self) -> list[dict[str, Any]]:
        """The messages answering one call: its events, then its ending."""
        messages = []
        while True:
            message = self.read()
            assert message is not None, "the pipe ended mid-answer"
            messages.append(message)
            if message["type"] != "event":
                return messages

    def release(self) -> None:
        """Close the fake suite's pipe ends still open (each once: a closed number may be reused)."""
        for fd in (self.calls, self.answers):
            if fd >= 0:
                os.close(fd)
        self.calls = self.answers = -1

    def close(self) -> tuple[int, str, str]:
        """Close the call pipe; the exit code, stdout and stderr once the driver ended."""
        os.close(self.calls)
        self.calls = -1
        assert self.read() is None
        out, err = self.process.communicate(timeout=WAIT)
        return self.process.returncode, out.decode(), err.decode()


@pytest.fixture
def driver(node: str, tmp_path: Path, validator: jsonschema.protocols.Validator) -> Iterator[Driver]:
    script = tmp_path / "test_driver.mjs"
    script.write_text(DRIVER % {"protocol": json.dumps(PROTOCOL.as_uri())}, encoding="utf-8")
    running = Driver(node, script, validator)
    try:
        yield running
    finally:
        if running.process.poll() is None:
            running.process.kill()
        running.process.wait(timeout=WAIT)
        for stream in (running.process.stdout, running.process.stderr):
            if stream is not None:
                stream.close()
        running.release()


def test_the_hello_comes_first_and_says_who_the_client_is(driver: Driver) -> None:
    hello = driver.read()
    assert hello is not None
    assert hello["v"] == 1
    assert hello["type"] == "hello"
    assert hello["name"] == "test-driver"
    assert hello["version"] == "test 1.0.0"
    assert hello["runtime"].startswith("node v")
    assert int(hello["runtime"].removeprefix("node v").split(".")[0]) >= 22
    assert hello["wires"] == {"openai_chat": ["streaming", "parallel_tool_calls"]}
    assert hello["duties"] == ["transport"]
    assert "schema_rewrites" not in hello  # left out, not null: optional fields come only when given
    assert driver.close()[0] == 0


def test_a_response(driver: Driver) -> None:
    driver.read()
    driver.call("response")
    assert driver.answer() == [
        {
            "v": 1,
            "type": "response",
            "id": "7",
            "response": {
                "parts": [{"kind": "text", "text": "It is 14:02."}],
                "finish_reason": "stop",
                "usage": {"input_tokens": 12, "output_tokens": 6},
            },
        }
    ]


def test_events_as_they_arrive_then_end(driver: Driver) -> None:
    driver.read()
    driver.call("stream", stream=True)
    answer = driver.answer()
    assert [m["type"] for m in answer] == ["event", "event", "event", "end"]
    assert [m["event"] for m in answer[:3]] == [
        {"type": "text_delta", "text": "It is "},
        {"type": "text_delta", "text": "14:02."},
        {"type": "finish", "reason": "stop"},
    ]
    assert all(m["id"] == "7" for m in answer)


def test_a_throw_mid_stream_keeps_the_events_then_names_the_class(driver: Driver) -> None:
    driver.read()
    driver.call("throw-mid-stream", stream=True)
    *events, error = driver.answer()
    assert [e["event"]["text"] for e in events] == ["It is ", "14:02."]
    assert error == {
        "v": 1,
        "type": "error",
        "id": "7",
        "exception": {"name": "LibraryError", "message": "connection reset mid-stream"},
        "error": None,
    }


def test_an_error_with_the_drivers_error_info(driver: Driver) -> None:
    driver.read()
    driver.call("rate-limited")
    (error,) = driver.answer()
    assert error["exception"] == {"name": "LibraryError", "message": "429 slow down"}
    assert error["error"] == {"kind": "rate_limit", "message": "429 slow down", "status": 429, "retry_after": 2.0}


def test_error_info_that_throws_is_mapping_failed(driver: Driver) -> None:
    driver.read()
    driver.call("unmappable")
    (error,) = driver.answer()
    assert error["exception"] == {"name": "TypeError", "message": "not a library error"}
    assert error["error"] is None
    assert error["mapping_failed"] == "errorInfo threw RangeError: no kind for a TypeError"


def test_a_turn_past_its_timeout_is_failed_timeout_and_the_next_call_is_answered(driver: Driver) -> None:
    driver.read()
    driver.call("hang", timeout=0.2)
    (failed,) = driver.answer()
    assert failed["type"] == "failed"
    assert failed["reason"] == "timeout"
    assert "0.2 s" in failed["message"]
    driver.call("response")
    assert driver.answer()[0]["type"] == "response"
    # the hung call still holds a promise: end of the call pipe ends the process all the same
    assert driver.close()[0] == 0


@pytest.mark.parametrize(
    ("model", "says"),
    [
        ("huge", "bytes, past the protocol's 16777216 (16 MiB)"),
        ("number", "complete() gave number: neither a response object nor an async iterable of events"),
    ],
)
def test_no_usable_answer_is_failed_invalid(driver: Driver, model: str, says: str) -> None:
    driver.read()
    driver.call(model)
    (failed,) = driver.answer()
    assert failed["type"] == "failed"
    assert failed["reason"] == "invalid"
    assert says in failed["message"]


def test_a_call_of_another_version_is_fatal(driver: Driver) -> None:
    driver.read()
    driver.send({"v": 2, "type": "call", "id": "7", "call": {}})
    fatal = driver.read()
    assert fatal is not None
    assert fatal["type"] == "fatal"
    assert "version 2" in fatal["message"]
    assert "speaks 1" in fatal["message"]
    assert driver.process.wait(timeout=WAIT) == 2


def test_a_call_the_schema_refuses_is_fatal_naming_the_field(driver: Driver) -> None:
    driver.read()
    driver.call("response", toolChoice="auto")
    fatal = driver.read()
    assert fatal is not None
    assert fatal["type"] == "fatal"
    assert '$.call: unknown field "toolChoice"' in fatal["message"]
    assert driver.process.wait(timeout=WAIT) == 2


def test_prints_never_reach_the_protocol_pipe(driver: Driver) -> None:
    driver.read()
    driver.call("response")
    driver.call("stream", stream=True)
    assert [m["type"] for m in driver.answer()] == ["response"]
    assert [m["type"] for m in driver.answer()] == ["event", "event", "event", "end"]
    code, out, err = driver.close()
    assert code == 0
    assert out.count("printed to stdout") == 2
    assert out.count('"type":"response"') == 2  # the driver's console.log of a message-like line
    assert err.count("printed to stderr") == 2
    assert [m["type"] for m in driver.written] == ["hello", "response", "event", "event", "event", "end"]


def test_a_client_without_complete_is_fatal_at_once(
    node: str, tmp_path: Path, validator: jsonschema.protocols.Validator
) -> None:
    script = tmp_path / "no_complete.mjs"
    script.write_text(
        f'import {{ serve }} from {json.dumps(PROTOCOL.as_uri())};\nserve({{ name: "x", wires: {{}} }});\n',
        encoding="utf-8",
    )
    running = Driver(node, script, validator)
    try:
        assert running.read() == {"v": 1, "type": "fatal", "message": "the client has no complete(call) function"}
        assert running.process.wait(timeout=WAIT) == 2
    finally:
        running.release()
        for stream in (running.process.stdout, running.process.stderr):
            if stream is not None:
                stream.close()
