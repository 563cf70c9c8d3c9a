"""``certify --command``: a driver in any language on the client protocol (docs/protocol.md), through
``RemoteClient.of_command``. The drivers here are small stdlib-only Python programs that speak the raw
protocol on the descriptors ``$CONFORMANCE_PROTOCOL_FDS`` names, importing nothing of the suite (as a
Node or Go driver would): a good one is answered; each bad input of issue 30 ("prints to stdout,
writes invalid JSON, a message of a gigabyte, a message of an unknown version, an answer for a call
it was not given, exits, hangs or forks") gives its turn a ``crashed`` result naming what broke, and
the next turn a new process; a command that cannot start is a ``UsageError`` naming it. And the
self-consistency the issue asks for: a reference adapter wrapped as a client and run as a command
gets the statuses it gets in-process."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.clients import protocol
from conformance.clients.contract import Call
from conformance.clients.invoke import EventLoop, TurnResult, invoke
from conformance.clients.remote import RemoteClient
from conformance.errors import UsageError
from conformance.model import Finish, Response, Text, TextDelta

SAFETY = 120.0
"""Seconds past which a bad turn has not been bounded (a safety net; each ends in seconds)."""

DRIVER = r'''
"""A driver in "another language": the raw protocol, the standard library only."""
import json
import os
import subprocess
import sys
import time

read_fd, write_fd = (int(n) for n in os.environ["CONFORMANCE_PROTOCOL_FDS"].split(","))
calls = os.fdopen(read_fd, "rb")
out = os.fdopen(write_fd, "wb", buffering=0)
FIRST = sys.argv[1] if len(sys.argv) > 1 else "hello"


def send(message):
    out.write(json.dumps({"v": 1, **message}).encode() + b"\n")


if FIRST == "fatal":
    send({"type": "fatal", "message": "cannot load the library: no node_modules here"})
    sys.exit(2)
if FIRST == "end":
    send({"type": "end", "id": "1"})
    calls.read()
    sys.exit(0)
send({"type": "hello", "name": "raw", "version": "raw 1.0", "runtime": "python (stdlib only)",
      "wires": {"openai_chat": ["streaming"]}, "duties": ["transport"]})

for line in calls:
    message = json.loads(line)
    call_id, call = message["id"], message["call"]
    what = call["scenario"]
    text = f"pid {os.getpid()} turn {call['turn']}"
    if what == "events":
        send({"type": "event", "id": call_id, "event": {"type": "text_delta", "text": text}})
        send({"type": "event", "id": call_id, "event": {"type": "finish", "reason": "stop"}})
        send({"type": "end", "id": call_id})
        continue
    if what == "prints":
        for n in range(2000):
            print(f"the library says hello {n}", flush=True)
        print("the last words on stdout", flush=True)
    elif what == "invalid_json":
        out.write(b'{"v": 1, "type": "response", "id": ' + call_id.encode() + b", oops\n")
        calls.read()
    elif what == "gigabyte":
        chunk = b"z" * (1 << 20)
        for _ in range(1024):  # 1 GiB without an end of line: the suite stops reading at 16 MiB
            out.write(chunk)
    elif what == "version":
        send({"v": 2, "type": "response", "id": call_id, "response": {"parts": []}})
        calls.read()
    elif what == "other_call":
        send({"type": "response", "id": call_id + "0", "response": {"parts": []}})
        calls.read()
    elif what == "exits":
        send({"type": "event", "id": call_id, "event": {"type": "text_delta", "text": "half"}})
        print("the library gave up", flush=True)
        os._exit(3)
    elif what == "hangs":
        time.sleep(3600)
    elif what == "floods":  # a stream without end
        while True:
            send({"type": "event", "id": call_id, "event": {"type": "text_delta", "text": "more "}})
    elif what == "two_endings":
        send({"type": "end", "id": call_id})
    elif what == "forks":
        stay = subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(3600)"], start_new_session=True,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        text = f"pid {os.getpid()} turn {call['turn']} left {stay.pid}"
    send({"type": "response", "id": call_id,
          "response": {"parts": [{"kind": "text", "text": text}], "finish_reason": "stop"}})
'''


def _write(tmp_path: Path, source: str = DRIVER) -> Path:
    script = tmp_path / "driver.py"
    script.write_text(source, encoding="utf-8")
    return script


def _command(script: Path, *args: str) -> str:
    return shlex.join([sys.executable, str(script), *args])


def _call(scenario: str, turn: int = 0, timeout: float = 30.0, *, stream: bool = False) -> Call:
    return Call(
        wire="openai_chat",
        base_url="http://127.0.0.1:1",
        api_key="k",
        model="m",
        stream=stream,
        timeout=timeout,
        turn=turn,
        scenario=scenario,
    )


@pytest.fixture
def driver(tmp_path: Path) -> Iterator[RemoteClient]:
    with RemoteClient.of_command(_command(_write(tmp_path)), start_timeout=60) as remote:
        yield remote


@pytest.fixture
def loop() -> Iterator[EventLoop]:
    with EventLoop() as running:
        yield running


def _pid(result: TurnResult) -> int:
    assert result.returned == "response" and result.response is not None, result
    part = result.response.parts[0]
    assert isinstance(part, Text)
    return int(part.text.split()[1])


def test_a_good_driver_says_hello_and_answers_with_a_response_or_events(driver: RemoteClient) -> None:
    assert driver.name == "raw" and driver.version == "raw 1.0" and driver.interpreter == "python (stdlib only)"
    assert driver.wires == {"openai_chat": frozenset({"streaming"})}
    assert driver.label.startswith("--command ") and str(sys.executable) in driver.label
    answer = driver.complete(_call("basic/get_time", turn=0))
    assert isinstance(answer, Response)
    pid = int(answer.parts[0].text.split()[1])  # type: ignore[union-attr]
    assert answer == Response(parts=(Text(text=f"pid {pid} turn 0"),), finish_reason="stop")
    events = driver.complete(_call("events", turn=1, stream=True))
    assert not isinstance(events, Response)
    assert list(events) == [TextDelta(text=f"pid {pid} turn 1"), Finish(reason="stop")]


def test_what_a_driver_prints_is_harmless_and_shows_only_when_a_turn_fails(
    driver: RemoteClient, loop: EventLoop
) -> None:
    printed = invoke(driver, _call("prints"), loop, timeout=30)
    assert printed.returned == "response" and printed.exception is None, printed
    pid = _pid(printed)
    died = invoke(driver, _call("exits", turn=1), loop, timeout=30)
    assert died.returned == "crashed", died
    assert "died: it exited with code 3" in (died.exception or "")
    assert "the library gave up" in (died.exception or "")  # the end of what it printed names the cause
    after = invoke(driver, _call("basic/get_time", turn=2), loop, timeout=30)
    assert _pid(after) != pid  # a new process


@pytest.mark.parametrize(
    ("scenario", "timeout", "said"),
    [
        ("invalid_json", 30.0, "a line that is not JSON"),
        ("gigabyte", 30.0, "larger than 16 MiB"),
        ("version", 30.0, "a message of version 2; this suite speaks version 1"),
        ("other_call", 30.0, "which it was not given"),
        ("exits", 30.0, "died: it exited with code 3"),
        ("hangs", 1.0, "gave no answer in 11 s (it hung) and was killed"),
    ],
)
def test_a_bad_turn_is_crashed_naming_what_broke_and_the_next_turn_gets_a_new_process(
    driver: RemoteClient, loop: EventLoop, scenario: str, timeout: float, said: str
) -> None:
    """Issue 30, "Bad input": the same bounds and verdicts as a Python driver. The turn is ``crashed``
    (the case's ERROR, never the library's FAIL), its text names what broke; the driver is killed
    and the next turn is served by a new one."""
    first = _pid(invoke(driver, _call("basic/get_time"), loop, timeout=30))
    started = time.monotonic()
    bad = invoke(driver, _call(scenario, turn=1, timeout=timeout), loop, timeout=SAFETY)
    assert time.monotonic() - started < SAFETY  # a safety net: bounded by the 16 MiB and timeout + 10 s rules
    assert bad.returned == "crashed", bad
    assert said in (bad.exception or ""), bad.exception
    assert len(bad.exception or "") < 10_000  # clipped: a gigabyte is never quoted whole
    assert _pid(invoke(driver, _call("basic/get_time", turn=2), loop, timeout=30)) != first


MEASURE = """
import json, resource, sys
from conformance.clients import protocol
from conformance.clients.contract import Call
from conformance.clients.remote import RemoteClient

remote = RemoteClient.of_command(sys.argv[1], start_timeout=60)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
call = Call(wire="openai_chat", base_url="http://127.0.0.1:1", api_key="k", model="m", scenario="gigabyte")
try:
    answer = remote.complete(call)
    said = "answered " + type(answer).__name__
except Exception as exc:
    said = f"{type(exc).__name__}: {exc}"[:400]
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
remote.close()
print(json.dumps({"grew_kib": after - before, "said": said}))
"""


def test_a_gigabyte_message_costs_the_suite_no_more_than_the_bound(tmp_path: Path) -> None:
    """A driver writing 1 GiB without an end of line: the suite's process reads no more than the
    16 MiB bound (and a chunk) of it, in a process of its own to measure its peak memory."""
    env = {**os.environ, "CONFORMANCE_WORKER_MEMORY": "4G"}
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, _command(_write(tmp_path))],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    measured = json.loads(done.stdout.strip().splitlines()[-1])
    assert measured["said"].startswith("ClientCrashed") and "larger than 16 MiB" in measured["said"], measured
    assert measured["grew_kib"] < 100 << 10, measured  # 1 GiB read whole would be 1,048,576 KiB and more


def test_a_stream_without_end_breaks_the_turns_bound(
    driver: RemoteClient, loop: EventLoop, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/protocol.md: more than 100,000 messages for one turn break the protocol (lowered here to
    1,000 so the test reads 1,001)."""
    monkeypatch.setattr(protocol, "MAX_TURN_MESSAGES", 1000)
    first = _pid(invoke(driver, _call("basic/get_time"), loop, timeout=30))
    flood = invoke(driver, _call("floods", turn=1, stream=True), loop, timeout=SAFETY)
    assert flood.returned == "crashed" and "past 1,000 messages" in (flood.exception or ""), flood.exception
    assert _pid(invoke(driver, _call("basic/get_time", turn=2), loop, timeout=30)) != first


def test_a_second_ending_is_never_the_next_turns_answer(driver: RemoteClient, loop: EventLoop) -> None:
    """The turn ends at its first ending (``end``: its events, none); the second ending, written for
    a call already answered, is read by the next turn as an answer for a call it was not given: that
    turn is crashed, and the one after gets a new process."""
    first = invoke(driver, _call("two_endings"), loop, timeout=30)
    assert first == TurnResult(returned="events", seconds=first.seconds)
    stale = invoke(driver, _call("basic/get_time", turn=1), loop, timeout=30)
    assert stale.returned == "crashed", stale
    assert "an answer for call 1, which it was not given (it was asked call 2)" in (stale.exception or "")
    after = invoke(driver, _call("basic/get_time", turn=2), loop, timeout=30)
    assert after.returned == "response" and _pid(after)


def _alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie is dead: it only waits to be collected)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read().decode("ascii", "replace")
    except OSError:
        return False
    return stat[stat.rfind(")") + 2 :].split()[0] not in ("Z", "X")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_process_the_driver_started_in_a_session_of_its_own_is_killed_with_the_client(tmp_path: Path) -> None:
    with RemoteClient.of_command(_command(_write(tmp_path)), start_timeout=60) as remote:
        answer = remote.complete(_call("forks"))
        assert isinstance(answer, Response)
        left = int(answer.parts[0].text.split()[-1])  # type: ignore[union-attr]
        assert _alive(left)  # it outlives the turn
    deadline = time.monotonic() + 10
    while _alive(left) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(left), f"process {left} outlived its client"


# ---- a command that cannot start ---------------------------------------------------------------


def test_a_command_that_does_not_exist_is_a_usage_error_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-driver"
    with pytest.raises(UsageError) as caught:
        RemoteClient.of_command(f"{missing} --flag", start_timeout=60)
    said = str(caught.value)
    assert f"--command {missing} --flag" in said and "cannot start the driver command" in said


def test_a_driver_that_says_fatal_is_a_usage_error_with_its_message(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="cannot load the library: no node_modules here") as caught:
        RemoteClient.of_command(_command(_write(tmp_path), "fatal"), start_timeout=60)
    assert "--command " in str(caught.value)


def test_a_driver_whose_first_message_is_not_a_hello_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="did not start: its first message is not a hello") as caught:
        RemoteClient.of_command(_command(_write(tmp_path), "end"), start_timeout=60)
    assert str(tmp_path / "driver.py") in str(caught.value)


def test_an_empty_or_unbalanced_command_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="no command given"):
        RemoteClient.of_command("   ")
    with pytest.raises(UsageError, match="No closing quotation"):
        RemoteClient.of_command('node "drivers/x.mjs')


# ---- self-consistency (issue 30, "Done means") ----------------------------------------------------

WRAPPED = """
from conformance.adapters import for_format
from conformance.clients.translator import TranslatorClient

CLIENT = TranslatorClient(for_format("openai_chat"))
"""


def test_a_reference_adapter_wrapped_as_a_command_gets_the_statuses_it_gets_in_process(tmp_path: Path) -> None:
    """The reference adapter of openai_chat, wrapped as a client (``TranslatorClient``) and run as a
    command (``python -m conformance.clients.child FILE:CLIENT``, the Python driver side of the
    protocol, behind the launcher), gets every case's status it gets in-process."""
    from conformance.adapters import for_format
    from conformance.clients.harness import CertifyOptions, certify
    from conformance.clients.translator import TranslatorClient
    from tests.clients.test_harness import CASSETTES, scenarios

    every = scenarios()
    options = CertifyOptions(cassette_dir=CASSETTES, jobs=2)
    here = certify(every, TranslatorClient(for_format("openai_chat")), options)  # type: ignore[arg-type]
    driver = tmp_path / "wrapped.py"
    driver.write_text(WRAPPED, encoding="utf-8")
    command = shlex.join([sys.executable, "-m", "conformance.clients.child", f"{driver}:CLIENT"])
    with RemoteClient.of_command(command, start_timeout=60) as remote:
        assert (
            remote.name == "openai_chat-as-client" and remote.wires == TranslatorClient(for_format("openai_chat")).wires
        )
        there = certify(every, remote, options)
    statuses_here = {(c.scenario, c.mode): c.status for c in here.cases}
    statuses_there = {(c.scenario, c.mode): c.status for c in there.cases}
    assert len(statuses_here) > 200 and sum(s == "pass" for s in statuses_here.values()) > 100
    differ = {k: (v, statuses_there.get(k)) for k, v in statuses_here.items() if statuses_there.get(k) != v}
    assert statuses_there.keys() == statuses_here.keys() and not differ, differ
    assert "error" not in statuses_there.values()
    assert os.environ.get("CONFORMANCE_PROTOCOL_FDS") is None  # the suite's own process never speaks it
