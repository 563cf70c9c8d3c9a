"""A driver in another interpreter (``RemoteClient`` speaking JSON lines with
``conformance.clients.child``): its declaration, a turn's Response and events, what the library
raised with its ``error_info``, a driver that does not load, a turn that hangs, a child that dies,
and a bare virtualenv holding nothing the suite pins."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.clients.contract import Call
from conformance.clients.invoke import ClientCrashed, EventLoop, invoke
from conformance.clients.remote import RemoteClient, RemoteRaised
from conformance.emulator import Emulator
from conformance.errors import UsageError
from conformance.model import ErrorInfo, Finish, Message, Response, Text, TextDelta, Tool, ToolCall, ToolResult
from conformance.traffic.cassettes import load_cassette

REPO = Path(__file__).resolve().parents[2]

CANNED = """
import os
import sys
import time

from conformance.clients.contract import SimpleClient
from conformance.model import ErrorInfo, Finish, Response, Text, TextDelta


class Limited(Exception):
    pass


def complete(call):
    print("a driver's own print", call.scenario)  # goes to stderr, never into the protocol
    if call.scenario == "raise":
        return broken_stream()
    if call.scenario == "untyped":
        raise KeyError("nope")
    if call.scenario == "hang":
        time.sleep(60)
    if call.scenario == "freeze":
        import re
        re.match(r"(a+)+$", "a" * 64 + "b")  # holds the GIL: the whole interpreter stops answering
    if call.scenario == "die":
        print("about to die", file=sys.stderr, flush=True)
        os._exit(3)
    if call.scenario == "allocate":
        bytearray(8 << 30)
    if call.scenario == "pid":
        return Response(parts=(Text(text=str(os.getpid())),))
    if call.stream:
        return iter([TextDelta(text="hel"), TextDelta(text="lo " + call.model), Finish(reason="stop")])
    return Response(parts=(Text(text=f"turn {call.turn} of {len(call.messages)} messages"),), finish_reason="stop")


def broken_stream():
    yield TextDelta(text="partial")
    raise Limited("slow down")


def error_info(exc):
    if isinstance(exc, Limited):
        return ErrorInfo(kind="rate_limit", message=str(exc), status=429, retry_after=2.0)
    if isinstance(exc, KeyError):
        raise ValueError("cannot map a KeyError")
    return None


client = SimpleClient(
    name="canned",
    wires={"openai_chat": frozenset({"streaming"}), "ollama": frozenset()},
    complete=complete,
    error_info=error_info,
    known_gaps={"client.typed_errors@errors/*": "maps only rate limits"},
    request_differences={"ollama:$.max_tokens": "sends its own default"},
)
"""

URLLIB = '''
"""A stdlib-only driver: its own HTTP with urllib, OpenAI Chat Completions."""

import json
import urllib.error
import urllib.request

from conformance.model import Finish, Response, Text, TextDelta, ToolCall


def _messages(call):
    out = []
    for message in call.messages:
        for part in message.parts:
            if message.role == "tool":
                text = "".join(item.text for item in part.content)
                out.append({"role": "tool", "tool_call_id": part.call_id, "content": text})
            elif getattr(part, "kind", "") == "tool_call":
                function = {"name": part.name, "arguments": part.arguments_raw}
                out.append({"role": "assistant", "content": None,
                            "tool_calls": [{"id": part.id, "type": "function", "function": function}]})
            else:
                out.append({"role": message.role, "content": part.text})
    return out


def _tools(call):
    return [{"type": "function", "function": {"name": t.name, "description": t.description,
                                              "parameters": dict(t.input_schema)}} for t in call.tools]


class UrllibClient:
    name = "urllib-chat"
    wires = {"openai_chat": frozenset({"streaming"})}
    known_gaps = {}

    def complete(self, call):
        body = {"model": call.model, "messages": _messages(call), "tools": _tools(call)}
        if call.stream:
            body["stream"] = True
        request = urllib.request.Request(
            call.base_url + "/v1/chat/completions",
            data=json.dumps(body).encode(),
            headers={"content-type": "application/json", "authorization": "Bearer " + call.api_key},
        )
        with urllib.request.urlopen(request, timeout=call.timeout) as answer:
            if call.stream:
                return list(self._events(answer))
            data = json.load(answer)
        message = data["choices"][0]["message"]
        parts = [Text(text=message["content"])] if message.get("content") else []
        for tc in message.get("tool_calls") or []:
            raw = tc["function"]["arguments"]
            name = tc["function"]["name"]
            parts.append(ToolCall(id=tc["id"], name=name, arguments=json.loads(raw), arguments_raw=raw))
        return Response(parts=tuple(parts), finish_reason=data["choices"][0]["finish_reason"])

    def _events(self, answer):
        for line in answer:
            line = line.decode().strip()
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            choice = json.loads(line[6:])["choices"][0]
            if choice["delta"].get("content"):
                yield TextDelta(text=choice["delta"]["content"])
            if choice.get("finish_reason"):
                yield Finish(reason=choice["finish_reason"])

    def error_info(self, exc):
        return None


client = UrllibClient()
'''


def _driver(tmp_path: Path, source: str, name: str = "driver") -> str:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return f"{path}:client"


def _call(scenario: str = "", *, stream: bool = False, timeout: float = 10.0, **more: object) -> Call:
    return Call(
        wire="openai_chat",
        base_url="http://127.0.0.1:1",
        api_key="fake",
        model="m1",
        scenario=scenario,
        stream=stream,
        timeout=timeout,
        **more,  # type: ignore[arg-type]
    )


@pytest.fixture
def canned(tmp_path: Path) -> Iterator[RemoteClient]:
    with RemoteClient(_driver(tmp_path, CANNED), sys.executable, start_timeout=30) as remote:
        yield remote


class QuickRemote(RemoteClient):
    """A RemoteClient that gives up on a silent child after ``cap`` seconds (not ``timeout + 10``; its
    message still names the turn's budget, ``timeout + 10``)."""

    cap = 60.0

    def _read_line(self, timeout: float, *, budget: float | None = None) -> bytes:
        return super()._read_line(min(timeout, self.cap), budget=budget)


# --------------------------------------------------------------------------------------------
# Declaration and turns
# --------------------------------------------------------------------------------------------


def test_the_hello_carries_the_declaration(canned: RemoteClient) -> None:
    assert canned.name == "canned"
    assert canned.wires == {"openai_chat": frozenset({"streaming"}), "ollama": frozenset()}
    assert canned.known_gaps == {"client.typed_errors@errors/*": "maps only rate limits"}
    assert canned.request_differences == {"ollama:$.max_tokens": "sends its own default"}
    assert canned.interpreter == f"Python {sys.version.split()[0]} ({sys.executable})"  # its hello's runtime


def test_a_turns_response_comes_back_equal(canned: RemoteClient) -> None:
    history = (Message(role="user", parts=(Text(text="hi"),)), Message(role="assistant", parts=(Text(text="yo"),)))
    answer = canned.complete(_call(turn=1, messages=history))
    assert answer == Response(parts=(Text(text="turn 1 of 2 messages"),), finish_reason="stop")


def test_a_turns_events_come_back_equal(canned: RemoteClient) -> None:
    events = canned.complete(_call(stream=True))
    assert not isinstance(events, Response)
    assert list(events) == [TextDelta(text="hel"), TextDelta(text="lo m1"), Finish(reason="stop")]


def test_the_drivers_prints_do_not_break_the_protocol(canned: RemoteClient) -> None:
    for _ in range(3):
        assert isinstance(canned.complete(_call("printing")), Response)
    assert "a driver's own print printing" in canned._stderr_tail()


def test_a_raised_exception_comes_back_with_its_error_info_after_the_events(canned: RemoteClient) -> None:
    events = canned.complete(_call("raise", stream=True))
    assert not isinstance(events, Response)
    received = []
    with pytest.raises(RemoteRaised) as caught:
        for event in events:
            received.append(event)
    assert received == [TextDelta(text="partial")]
    assert caught.value.described.endswith("Limited: slow down")
    limited = ErrorInfo(kind="rate_limit", message="slow down", status=429, retry_after=2.0)
    assert caught.value.info == limited
    assert canned.error_info(caught.value) == limited
    assert canned.error_info(ValueError("not from the child")) is None


def test_through_invoke_a_remote_error_is_a_typed_raise(canned: RemoteClient) -> None:
    with EventLoop() as loop:
        result = invoke(canned, _call("raise", stream=True), loop, timeout=10)
        untyped = invoke(canned, _call("untyped"), loop, timeout=10)
        fine = invoke(canned, _call(), loop, timeout=10)
    assert result.returned == "raised"
    assert result.events == (TextDelta(text="partial"),)
    assert result.error_info == ErrorInfo(kind="rate_limit", message="slow down", status=429, retry_after=2.0)
    assert result.exception is not None and result.exception.endswith("Limited: slow down")
    # error_info failing in the child is reported as such here too
    assert untyped.returned == "raised" and untyped.error_info is None
    assert untyped.error_info_failed == "RuntimeError: ValueError: cannot map a KeyError"
    assert untyped.exception == "builtins.KeyError: 'nope'"
    assert fine.returned == "response"


# --------------------------------------------------------------------------------------------
# Drivers that do not load
# --------------------------------------------------------------------------------------------


def test_a_driver_that_fails_to_import_is_a_usage_error_naming_the_cause(tmp_path: Path) -> None:
    spec = _driver(tmp_path, "import a_library_that_is_not_installed_xyz\nclient = None\n", "broken")
    with pytest.raises(UsageError) as caught:
        RemoteClient(spec, sys.executable, start_timeout=30)
    message = str(caught.value)
    assert "ModuleNotFoundError" in message and "a_library_that_is_not_installed_xyz" in message
    assert spec in message


def test_a_missing_driver_file_or_object_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no driver file"):
        RemoteClient(f"{tmp_path / 'absent.py'}:client", sys.executable, start_timeout=30)
    spec = _driver(tmp_path, "x = 1\n")
    with pytest.raises(UsageError, match="AttributeError"):
        RemoteClient(spec.replace(":client", ":nothing"), sys.executable, start_timeout=30)
    with pytest.raises(UsageError, match="is not MODULE:OBJECT"):
        RemoteClient("no_colon_here", sys.executable, start_timeout=30)


def test_a_driver_declaring_an_unknown_wire_is_a_usage_error(tmp_path: Path) -> None:
    source = CANNED.replace('"ollama": frozenset()', '"mistral": frozenset()')
    with pytest.raises(UsageError, match="unknown wire 'mistral'"):
        RemoteClient(_driver(tmp_path, source), sys.executable, start_timeout=30)


def test_a_driver_declaring_a_request_difference_on_a_wire_it_does_not_speak_is_a_usage_error(
    tmp_path: Path,
) -> None:
    source = CANNED.replace('"ollama:$.max_tokens"', '"gemini:$.max_tokens"')
    with pytest.raises(UsageError, match="names the wire 'gemini', which the client does not declare"):
        RemoteClient(_driver(tmp_path, source), sys.executable, start_timeout=30)


def test_an_interpreter_that_does_not_exist_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such interpreter"):
        RemoteClient(_driver(tmp_path, CANNED), str(tmp_path / "bin" / "python"))


# --------------------------------------------------------------------------------------------
# Hangs and deaths
# --------------------------------------------------------------------------------------------


def test_a_turn_that_hangs_in_the_driver_times_out_and_the_next_works(canned: RemoteClient) -> None:
    pid = canned.complete(_call("pid"))
    started = time.perf_counter()
    with pytest.raises(TimeoutError, match=r"did not finish within 0\.3 s"):
        canned.complete(_call("hang", timeout=0.3))
    assert time.perf_counter() - started < 0.3 + 20  # ended by the timeout: the hang lasts 60 s
    assert canned.complete(_call("pid")) == pid  # the child timed the turn out itself: it is kept
    assert isinstance(canned.complete(_call()), Response)


def test_after_invoke_gives_up_on_a_turn_the_next_turn_gets_its_own_answer(canned: RemoteClient) -> None:
    """As the harness drives it: the same timeout here and in the child, so ``invoke`` gives up
    just before the child answers ``timeout``; that late answer must not reach the next turn."""
    with EventLoop() as loop:
        for _ in range(5):
            hung = invoke(canned, _call("hang", timeout=0.3), loop, timeout=0.3)
            assert hung.returned == "timeout"
            after = invoke(canned, _call(), loop, timeout=30)
            assert after.returned == "response", after.exception
            assert after.response == Response(parts=(Text(text="turn 0 of 0 messages"),), finish_reason="stop")


def test_a_child_that_stops_answering_is_killed_and_the_next_turn_works(tmp_path: Path) -> None:
    with QuickRemote(_driver(tmp_path, CANNED), sys.executable, start_timeout=30) as remote:
        remote.cap = 1.0
        first = remote._process
        assert first is not None
        with pytest.raises(ClientCrashed, match=r"gave no answer in 10.2 s \(it hung\) and was killed"):
            remote.complete(_call("freeze", timeout=0.2))
        assert first.poll() is not None  # killed, not left running
        remote.cap = 30.0
        assert remote.complete(_call()) == Response(parts=(Text(text="turn 0 of 0 messages"),), finish_reason="stop")
        assert remote._process is not None and remote._process.pid != first.pid


def test_a_child_that_dies_is_restarted(canned: RemoteClient) -> None:
    before = canned.complete(_call("pid"))
    with pytest.raises(ClientCrashed, match="died: it exited with code 3") as caught:
        canned.complete(_call("die"))
    assert "about to die" in str(caught.value)  # the tail of its output names the cause
    after = canned.complete(_call("pid"))
    assert isinstance(before, Response) and isinstance(after, Response)
    assert before.text != after.text  # a new process
    assert list(canned.complete(_call(stream=True)))[-1] == Finish(reason="stop")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the child's limit is set with prlimit")
def test_the_childs_memory_is_limited_like_a_workers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONFORMANCE_WORKER_MEMORY", "1G")
    with RemoteClient(_driver(tmp_path, CANNED), sys.executable, start_timeout=30) as remote:
        events = remote.complete(_call("allocate"))  # what the library raised comes after its events
        assert not isinstance(events, Response)
        with pytest.raises(RemoteRaised, match=r"^builtins\.MemoryError"):
            list(events)
        assert isinstance(remote.complete(_call("pid")), Response)  # the same child goes on


# --------------------------------------------------------------------------------------------
# A driver doing its own HTTP against the emulator playing a cassette
# --------------------------------------------------------------------------------------------


def _two_turns(remote: RemoteClient, emu: Emulator, *, stream: bool) -> None:
    cassette = load_cassette(REPO / "cassettes" / "openai_chat" / "basic" / "get_time.yaml")
    emu.play_cassette(cassette)
    recorded = cassette.interactions[0].request.json
    question = Message(role="user", parts=(Text(text=recorded["messages"][0]["content"]),))
    function = recorded["tools"][0]["function"]
    tool = Tool(name=function["name"], description=function["description"], input_schema=function["parameters"])
    base = Call(wire="openai_chat", base_url=emu.base_url, api_key="fake", model="gpt-4.1-mini", tools=(tool,))
    first = remote.complete(dataclasses.replace(base, messages=(question,)))
    assert isinstance(first, Response)
    (call,) = first.tool_calls
    assert call == ToolCall(
        id="call_HnSSMfO6h1wlNGv2RKymKnTz",
        name="getTime",
        arguments={"offset_ms": -86400000},
        arguments_raw='{"offset_ms":-86400000}',
    )
    assert first.finish_reason == "tool_calls"
    history = (
        question,
        Message(role="assistant", parts=(call,)),
        Message(role="tool", parts=(ToolResult(call_id=call.id, content=(Text(text="1684713600000"),)),)),
    )
    second = remote.complete(dataclasses.replace(base, messages=history, turn=1, stream=stream))
    expected = "昨天是2023年5月22日。"
    if stream:
        assert not isinstance(second, Response)
        assert list(second) == [TextDelta(text=expected), Finish(reason="stop")]
    else:
        assert second == Response(parts=(Text(text=expected),), finish_reason="stop")
    assert [(p.turn, p.stream, p.interaction) for p in emu.played] == [(0, False, 0), (1, stream, 3 if stream else 1)]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_a_urllib_driver_plays_a_cassettes_turns(tmp_path: Path, stream: bool) -> None:
    with Emulator(port=0) as emu, RemoteClient(_driver(tmp_path, URLLIB), sys.executable, start_timeout=30) as remote:
        assert remote.name == "urllib-chat"
        _two_turns(remote, emu, stream=stream)


def test_a_bare_virtualenv_runs_a_stdlib_only_driver(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")
    # nothing the suite pins is there
    missing = subprocess.run([str(python), "-c", "import httpx"], capture_output=True, timeout=60)
    assert missing.returncode != 0 and b"ModuleNotFoundError" in missing.stderr
    with Emulator(port=0) as emu, RemoteClient(_driver(tmp_path, URLLIB), str(python), start_timeout=60) as remote:
        assert remote.interpreter.startswith("Python ") and f"({venv}" in remote.interpreter
        _two_turns(remote, emu, stream=True)


SEES = """
import importlib.util

from conformance.clients.contract import SimpleClient
from conformance.model import Response, Text

SAW = "saw-the-suite-sdk" if importlib.util.find_spec("suite_only_sdk") else "clean"
client = SimpleClient(
    name=SAW,
    wires={"openai_chat": frozenset()},
    complete=lambda call: Response(parts=(Text(text="x"),)),
    error_info=lambda exc: None,
)
"""


def test_the_drivers_interpreter_is_given_the_suites_package_and_nothing_else_of_its_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Installed from a wheel, the package sits in this environment's site-packages beside its SDKs: the
    child must not see them, or they would come before the library's own pins."""
    import conformance
    from conformance.clients import remote

    site = tmp_path / "site-packages"  # a wheel install's layout: the package beside another SDK
    site.mkdir()
    (site / "conformance").symlink_to(Path(conformance.__file__).parent, target_is_directory=True)
    (site / "suite_only_sdk.py").write_text("VERSION = 'the suite environment'\n", encoding="utf-8")
    monkeypatch.setattr(remote, "PACKAGE_DIR", site / "conformance")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    with RemoteClient(_driver(tmp_path, SEES), str(venv / "bin" / "python"), start_timeout=60) as child:
        assert child.name == "clean"


STRAY = """
import os
import subprocess

from conformance.clients.contract import SimpleClient
from conformance.model import Response, Text


def complete(call):
    subprocess.run(["echo", '{"stray": "a subprocess wrote to descriptor 1"}'], check=True)  # its stdout is fd 1
    os.write(1, b"raw bytes on descriptor 1\\n")  # what a C library's printf does
    return Response(parts=(Text(text=f"answer to {call.scenario}"),))


client = SimpleClient(name="stray", wires={"openai_chat": frozenset()}, complete=complete, error_info=lambda exc: None)
"""


def test_a_stray_line_on_descriptor_1_does_not_reach_the_protocol(tmp_path: Path) -> None:
    """A subprocess's echo or a C library's write on fd 1 goes to stderr: each turn gets its own answer."""
    with RemoteClient(_driver(tmp_path, STRAY), sys.executable, start_timeout=30) as remote:
        for scenario in ("first", "second", "third"):
            answer = remote.complete(_call(scenario))
            assert isinstance(answer, Response) and answer.text == f"answer to {scenario}"
        tail = remote._stderr_tail()
        assert "a subprocess wrote to descriptor 1" in tail and "raw bytes on descriptor 1" in tail


# --------------------------------------------------------------------------------------------
# Hostile drivers (issue 27, point 2): the protocol, deaths, the process tree, sizes, the network
# --------------------------------------------------------------------------------------------

DOUBLE_FORK = r"""
import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        with open(sys.argv[1], "a") as f:
            f.write(f"{os.getpid()}\n")
        time.sleep(600)
    os._exit(0)
os.wait()
"""

HOSTILE = r"""
import ctypes
import faulthandler
import os
import signal
import subprocess
import sys
import threading
import time

from conformance.clients.contract import SimpleClient
from conformance.model import Response, Text

PIDS = __PIDS__
DOUBLE_FORK = __DOUBLE_FORK__


def complete(call):
    what = call.scenario
    if what == "daemonise":  # what daemonising code does: 0, 1 and 2 to /dev/null
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
    if what == "exit":
        print("leaving now", file=sys.stderr, flush=True)
        os._exit(3)
    if what == "segfault":
        faulthandler.disable()
        ctypes.string_at(0)
    if what == "sigkill":
        os.kill(os.getpid(), signal.SIGKILL)
    if what == "spawn":
        threading.Thread(target=time.sleep, args=(600,), daemon=True).start()
        sleeper = subprocess.Popen(["sleep", "600"])
        with open(PIDS, "a") as f:
            f.write(f"{sleeper.pid}\n")
        subprocess.run([sys.executable, "-c", DOUBLE_FORK, PIDS], check=True)
    if what == "big":
        return Response(parts=(Text(text="x" * (600 << 20)),))
    if what == "raw":  # past the driver's side: straight onto the protocol's pipe, never a newline
        fd = int(sys.argv[sys.argv.index("--fds") + 1].split(",")[1])
        chunk = b"y" * (1 << 20)
        for _ in range(600):
            os.write(fd, chunk)
    return Response(parts=(Text(text=str(os.getpid())),))


client = SimpleClient(name="hostile", wires={"openai_chat": frozenset()}, complete=complete, error_info=lambda e: None)
"""


def _hostile(tmp_path: Path) -> tuple[str, Path]:
    pids = tmp_path / "pids"
    source = HOSTILE.replace("__PIDS__", repr(str(pids))).replace("__DOUBLE_FORK__", repr(DOUBLE_FORK))
    return _driver(tmp_path, source, "hostile"), pids


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for a parent to collect it does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] not in "ZX"


def test_a_driver_pointing_0_1_and_2_at_dev_null_keeps_the_protocol(tmp_path: Path) -> None:
    """The protocol has pipes of its own: daemonising code (stdin, stdout and stderr to /dev/null)
    cannot cut it, and the same child answers every turn."""
    spec, _ = _hostile(tmp_path)
    with QuickRemote(spec, sys.executable, start_timeout=30) as remote:
        remote.cap = 20.0
        first = remote.complete(_call("pid"))
        remote.complete(_call("daemonise"))
        for _ in range(3):
            assert remote.complete(_call("pid")) == first


@pytest.mark.parametrize(
    ("what", "said"),
    [
        ("exit", "died: it exited with code 3"),
        ("segfault", "died: killed by SIGSEGV"),
        ("sigkill", "died: killed by SIGKILL"),
    ],
)
def test_a_child_that_dies_is_a_crash_naming_how_and_the_next_turn_gets_a_new_one(
    tmp_path: Path, what: str, said: str
) -> None:
    spec, _ = _hostile(tmp_path)
    with QuickRemote(spec, sys.executable, start_timeout=30) as remote:
        remote.cap = 20.0
        before = remote.complete(_call("pid"))
        with EventLoop() as loop:
            result = invoke(remote, _call(what), loop, timeout=30)
        assert result.returned == "crashed"  # the case's ERROR, not what the library raised
        assert result.exception is not None and said in result.exception
        if what == "exit":
            assert "leaving now" in result.exception  # the end of its output
        after = remote.complete(_call("pid"))
        assert isinstance(before, Response) and isinstance(after, Response) and before.text != after.text


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="the process tree is read from /proc")
def test_every_process_a_driver_starts_ends_with_it(tmp_path: Path) -> None:
    """A daemon thread, a ``Popen`` child and a double-forked process in a session of its own: when the
    child dies they are ended with it, and when the client is closed too."""
    spec, pids = _hostile(tmp_path)
    with QuickRemote(spec, sys.executable, start_timeout=30) as remote:
        remote.cap = 30.0
        remote.complete(_call("spawn"))
        started = [int(p) for p in pids.read_text().split()]
        assert len(started) == 2 and all(_alive(p) for p in started)
        with pytest.raises(ClientCrashed):
            remote.complete(_call("sigkill"))
        assert not [p for p in started if _alive(p)]
        pids.unlink()
        remote.complete(_call("spawn"))  # a new child, and a new tree
        again = [int(p) for p in pids.read_text().split()]
        assert len(again) == 2 and all(_alive(p) for p in again)
    assert not [p for p in again if _alive(p)]


_MEASURE = """
import json, resource, sys
from conformance.clients.remote import RemoteClient
from conformance.clients.contract import Call

remote = RemoteClient(sys.argv[1], sys.executable, start_timeout=60)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
base = "http://127.0.0.1:1"
call = Call(wire="openai_chat", base_url=base, api_key="k", model="m", scenario=sys.argv[2], timeout=120)
try:
    answer = remote.complete(call)
    said = "answered " + type(answer).__name__
except Exception as exc:
    said = f"{type(exc).__name__}: {exc}"[:400]
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
remote.close()
print(json.dumps({"grew_kib": after - before, "said": said, "peak_kib": after}))
"""


@pytest.mark.parametrize("what", ["big", "raw"])
def test_an_answer_past_the_bound_is_an_error_and_the_suites_memory_stays_bounded(tmp_path: Path, what: str) -> None:
    """600 MB of text as a result (or written raw onto the protocol's pipe): the suite's process
    reads no more than the 16 MiB bound (and a chunk) of it; its peak memory grows by far less."""
    spec, _ = _hostile(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(REPO), "CONFORMANCE_WORKER_MEMORY": "4G"}
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, spec, what], capture_output=True, text=True, env=env, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    measured = json.loads(done.stdout.strip().splitlines()[-1])
    assert "16 MiB" in measured["said"], measured
    assert measured["said"].startswith(("InvalidCompletion", "ClientCrashed")), measured
    assert measured["grew_kib"] < 100 << 10, measured  # 600 MB read whole would be 600,000 KiB and more


NETWORK = """
import _socket
import socket
import subprocess
import sys

from conformance.clients.contract import SimpleClient
from conformance.model import Response, Text

CONNECT = "import socket; socket.create_connection(('192.0.2.1', 9), timeout=1)"


def complete(call):
    said = []
    raw = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)  # the C-level class, past socket.socket
    raw.settimeout(1)
    try:
        raw.connect(("192.0.2.1", 9))
        said.append("tcp went out")
    except Exception as exc:
        said.append(type(exc).__name__)
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        udp.sendto(b"x", ("192.0.2.1", 9))
        said.append("udp went out")
    except Exception as exc:
        said.append(type(exc).__name__)
    child = subprocess.run([sys.executable, "-c", CONNECT], capture_output=True, text=True)
    said.append("NetworkBlockedError" if "NetworkBlockedError" in child.stderr else f"child {child.returncode}")
    return Response(parts=(Text(text=" ".join(said)),))


client = SimpleClient(name="network", wires={"openai_chat": frozenset()}, complete=complete, error_info=lambda e: None)
"""


def test_the_driver_its_raw_sockets_datagrams_and_python_children_reach_only_loopback(tmp_path: Path) -> None:
    """Refused in the child (``_socket`` directly, UDP ``sendto``, a Python subprocess) and each
    attempt logged where the suite reads it (``refused_since``), naming the address."""
    from conformance.traffic.network_guard import refusal_mark, refused_since

    with RemoteClient(_driver(tmp_path, NETWORK, "network"), sys.executable, start_timeout=30) as remote:
        mark = refusal_mark()
        answer = remote.complete(_call("reach"))
        assert isinstance(answer, Response)
        assert answer.text == "NetworkBlockedError NetworkBlockedError NetworkBlockedError"
        refused = refused_since(mark)
    assert len(refused) == 3, refused
    shown = [r.partition(", pid")[0] for r in refused]
    assert shown == ["192.0.2.1:9 (connect", "192.0.2.1:9 (sendto", "192.0.2.1 (name lookup"], refused
