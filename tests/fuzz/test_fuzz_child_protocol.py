"""The fuzz tier's target for the client protocol (docs/protocol.md, version 1), as ``certify
--python`` and ``certify --command`` speak it: what a hostile or broken driver writes reaches the
suite's side (``conformance.clients.protocol``, ``conformance.clients.remote``), and it crashes
nothing and hangs nothing.

Two kinds of input, both seeded (``CONFORMANCE_FUZZ_SEED``, default ``0``) and reproduced the same
way:

- **lines**: a valid hello, or the messages of a turn's answer (``answer_messages``) one of them
  mutated (a node of its JSON replaced by a value of another type or kind, an unknown field or
  ``kind``/``type``, another version or none, an answer for another call, deep nesting, a number out
  of range, bytes flipped, cut short, not UTF-8), read by ``parse_line`` and ``check`` (the hello) or
  ``TurnReader`` (the answer): each gives a turn result whose every value fits the model, or
  ``ProtocolBroken`` saying why; anything else is a crash;
- **children**: a fake driver that plays a script on the protocol's pipes, half of them as a fake
  interpreter (``--python``), half as a driver command (``--command``, behind the suite's launcher):
  a hello, then answers to the calls (with the call's own ``id``), mutated as above, or cut short,
  oversized (past the 16 MiB bound, with no end of line), silent (a hang), a print on its stdout,
  an exit or a ``SIGKILL`` mid-answer.
  ``RemoteClient`` either refuses to start with a ``UsageError`` or answers each turn with a result,
  or a ``ClientCrashed``/``RemoteRaised``/``TimeoutError``/``InvalidCompletion`` (what the harness
  reports); anything else is a crash, a turn that does not end within its bound a hang, and no fake
  child may outlive its client.

The default run takes a seeded sample (every ``SAMPLE_EVERY``-th input); the whole is the
``fuzz_corpus`` tier (``pytest -m fuzz_corpus``). A finding is listed with its input's key; none
stops the run.
"""

from __future__ import annotations

import copy
import json
import os
import random
import stat
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conformance.clients.codec import misfit
from conformance.clients.contract import Call
from conformance.clients.invoke import ClientCrashed, InvalidCompletion, TurnResult
from conformance.clients.protocol import (
    MAX_MESSAGE,
    VERSION,
    ProtocolBroken,
    TurnReader,
    answer_messages,
    check,
    parse_line,
)
from conformance.clients.remote import RemoteClient, RemoteRaised
from conformance.errors import UsageError
from conformance.model import (
    ErrorInfo,
    Finish,
    Response,
    Text,
    TextDelta,
    ToolCall,
    ToolCallChunk,
    ToolCallEnd,
    ToolCallStart,
    Usage,
)

pytestmark = pytest.mark.fuzz

SEED = int(os.environ.get("CONFORMANCE_FUZZ_SEED", "0"))
LINES = 4000
"""Mutated lines in the whole corpus."""
CHILDREN = 120
"""Fake children in the whole corpus."""
SAMPLE_EVERY = 20
"""The default run's sample: inputs 0, 20, 40, ... (the same inputs, reproduced the same way)."""
TURN_CAP = 1.0
"""Seconds the suite waits for a fake child's answer (``FuzzRemote``): a silent child is a hang the
suite must end, not one the fuzz run waits out."""
SAFETY = 120.0
"""Seconds past which an input that has not returned is a hang (a safety net: the bounds above end
every input in a few seconds)."""

ARGS = {"city": "Paris", "days": [1, 2], "nested": {"$ref": "#/x", "n": None}}
ANSWERS: tuple[TurnResult, ...] = (
    TurnResult(
        returned="response",
        response=Response(
            parts=(Text(text="hi"), ToolCall(id="c1", name="get", arguments=ARGS, arguments_raw=json.dumps(ARGS))),
            finish_reason="tool_calls",
            usage=Usage(input_tokens=3, output_tokens=4),
        ),
    ),
    TurnResult(
        returned="events",
        events=(
            TextDelta(text="he"),
            ToolCallStart(tool_call_id="c1", tool_call_name="get", index=0),
            ToolCallChunk(tool_call_id="c1", tool_call_arguments_chunk='{"a"'),
            ToolCallEnd(tool_call_id="c1", tool_call_arguments_complete='{"a": 1}', arguments={"a": 1}),
            Finish(reason="tool_calls"),
        ),
    ),
    TurnResult(
        returned="raised",
        events=(TextDelta(text="partial"),),
        exception="lib.RateLimitError: slow down",
        error_info=ErrorInfo(kind="rate_limit", message="slow down", status=429, retry_after=2.0),
    ),
    TurnResult(returned="timeout", exception="the turn did not finish within 1 s"),
    TurnResult(returned="raised", exception="lib.Oops: no", error_info_failed="KeyError: 'status'"),
    TurnResult(returned="crashed", events=(TextDelta(text="a"),), exception="the library gave up"),
)
ID = "@ID@"
"""Where a fake child writes the id of the call it read (a mutation may break it: an answer for
another call)."""
HELLO: dict[str, Any] = {
    "v": VERSION,
    "type": "hello",
    "name": "fake",
    "version": "fake 1.0",
    "runtime": "fake 0",
    "wires": {"openai_chat": ["streaming"]},
    "known_gaps": {},
    "schema_rewrites": {},
    "request_differences": {},
    "duties": ["transport"],
}
ODD_VALUES: tuple[Any, ...] = (
    None,
    True,
    False,
    0,
    -1,
    1.5,
    10**30,
    "",
    "x" * 300,
    "\ud800",
    [],
    {},
    [None, [1, {"a": []}]],
    {"$": "Nope"},
    {"$": 7},
    {"$": "Text"},
    {"$": "Text", "text": 5},
    {"$": "TurnResult", "returned": "response"},
    {"$": "TurnResult", "returned": "sideways"},
    {"$": "Response", "parts": "abc"},
    {"$": "Response", "parts": [{"$": "TextDelta", "text": "x"}]},
    {"$": "$map"},
    {"$": "$map", "value": [1]},
    {"$": "Call", "wire": "x"},
    {"$": "ErrorInfo", "kind": "nope", "message": "m"},
    {"kind": "nope"},
    {"kind": 7},
    {"kind": "text"},
    {"kind": "text", "text": 5},
    {"kind": "text", "text": "x", "toolCallId": "c"},
    {"kind": "tool_call", "id": "c", "name": "n", "arguments": [1]},
    {"type": "finish"},
    {"type": "finish", "reason": "nope"},
    {"type": "text_delta", "text": 5},
    {"type": "end", "id": "1"},
    {"parts": "abc"},
    {"parts": [{"type": "text_delta", "text": "x"}]},
    {"kind": "rate_limit", "message": "m", "status": True},
    {"v": 2, "type": "end", "id": ID},
    {"v": 1, "type": "fatal", "message": "gave up"},
)
RAW_TAILS: tuple[bytes, ...] = (
    b"NaN",
    b"Infinity",
    b"1e999",
    b"-0",
    b'"\\ud800"',
    b"[" * 100_000 + b"]" * 100_000,
    b'{"a": ' * 5000 + b"1" + b"}" * 5000,
    b'"\xff\xfe"',
)


# ---- inputs ----------------------------------------------------------------------------------


def _nodes(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(value, dict):
        for key, member in value.items():
            yield from _nodes(member, (*path, key))
    elif isinstance(value, list):
        for index, member in enumerate(value):
            yield from _nodes(member, (*path, index))


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    out = copy.copy(value)
    out[path[0]] = _replace(value[path[0]], path[1:], new)
    return out


def mutate(message: dict[str, Any], rng: random.Random) -> bytes:
    """One hostile line made from a valid ``message``."""
    how = rng.randrange(10)
    if how == 8:  # another version, or none (docs/protocol.md: refused with what both sides speak)
        return json.dumps({**message, "v": rng.choice([0, 2, "1", 1.0, True, None, [1]])}).encode()
    if how == 9:  # an answer for a call it was not given, an ending for another, a field renamed
        if "id" in message and rng.random() < 0.5:
            return json.dumps({**message, "id": rng.choice(["0", "2", "", 1, None, ID + ID])}).encode()
        renamed = {("callId" if k == "id" else k.title().replace("_", "")): v for k, v in message.items()}
        return json.dumps({**message, **renamed} if rng.random() < 0.5 else renamed).encode()
    if how <= 2:  # a node replaced by a value of another kind (once or a few times)
        data: Any = message
        for _ in range(1 + how):
            path = rng.choice(list(_nodes(data)))
            data = _replace(data, path, copy.deepcopy(rng.choice(ODD_VALUES)))
        return json.dumps(data).encode("utf-8", "surrogatepass")
    text = json.dumps(message).encode()
    if how == 3:  # cut short
        return text[: rng.randrange(len(text))]
    if how == 4:  # bytes flipped
        flipped = bytearray(text)
        for _ in range(rng.randint(1, 6)):
            flipped[rng.randrange(len(flipped))] = rng.randrange(256)
        return bytes(flipped).replace(b"\n", b" ")
    if how == 5:  # a node's text replaced by a raw JSON literal Python's json reads oddly
        path = rng.choice([p for p in _nodes(message) if p] or [("x",)])
        marker = "\u0000MARK\u0000"
        return (
            json.dumps(_replace(message, path, marker))
            .encode()
            .replace(json.dumps(marker).encode(), rng.choice(RAW_TAILS))
        )
    if how == 6:  # a key the protocol does not know, or the message under another name
        name = rng.choice(["hello", "result", "fatal", "call", "sandbox", "end", "event", "nope", "$"])
        if rng.random() < 0.5:  # the old protocol's shape: a key naming the message
            return json.dumps({name: rng.choice(ODD_VALUES)}).encode()
        return json.dumps({"v": VERSION, "type": name, "id": ID, name: rng.choice(ODD_VALUES)}).encode()
    return rng.choice([b"", b"   ", b"null", b"[]", b'"result"', b"\xef\xbb\xbf{}", b"\x00" * 10, text * 2])


def _answer(rng: random.Random) -> list[dict[str, Any]]:
    """The messages of a valid answer to call ``ID``: its events, then its ending."""
    return list(answer_messages(ID, rng.choice(ANSWERS)))


def _lines(messages: list[dict[str, Any]], rng: random.Random, *, hostile: bool) -> bytes:
    """An answer's lines, one message of it mutated (``hostile``)."""
    pick = rng.randrange(len(messages)) if hostile else -1
    out = [mutate(m, rng) if i == pick else json.dumps(m).encode() for i, m in enumerate(messages)]
    return b"".join(line + b"\n" for line in out)


def line_input(index: int) -> tuple[bool, list[bytes]]:
    """(a hello?, the lines) of hostile line input ``index``."""
    rng = random.Random(f"{SEED}:line:{index}")
    if rng.random() < 0.2:
        return True, [mutate(HELLO, rng)]
    return False, _lines(_answer(rng), rng, hostile=True).split(b"\n")[:-1]


def child_script(index: int) -> list[list[Any]]:
    """The steps of fake child ``index``: ``["write", hex]``, ``["fill", bytes]`` (no end of line),
    ``["read"]`` (a call), ``["exit", code]``, ``["kill"]``, ``["hang"]``, ``["close"]``."""
    rng = random.Random(f"{SEED}:child:{index}")
    hello = json.dumps(HELLO).encode() + b"\n"
    if rng.random() < 0.25:
        hello = mutate(HELLO, rng) + b"\n"
    steps: list[list[Any]] = [["write", hello.hex()]]
    for _ in range(rng.randint(1, 3)):
        steps.append(["read"])
        roll = rng.random()
        if rng.random() < 0.1:  # what the driver or its library prints: harmless
            steps.append(["print", rng.choice(["hello on stdout", json.dumps(HELLO), "{not json"])])
        if roll < 0.45:
            steps.append(["write", _lines(_answer(rng), rng, hostile=True).hex()])
        elif roll < 0.6:
            steps.append(["write", _lines(_answer(rng), rng, hostile=False).hex()])
        elif roll < 0.68:  # a good answer in pieces, and a stray blank line
            whole = _lines(_answer(rng), rng, hostile=False).rstrip(b"\n")
            cut = rng.randrange(1, len(whole))
            steps += [["write", b"\n".hex()], ["write", whole[:cut].hex()], ["write", (whole[cut:] + b"\n").hex()]]
        elif roll < 0.73:
            steps.append(["fill", MAX_MESSAGE + rng.randrange(1 << 20)])
        elif roll < 0.78:
            steps.append(["write", _lines(_answer(rng), rng, hostile=False)[: rng.randrange(80)].hex()])
            steps.append(rng.choice([["exit", rng.randrange(256)], ["kill"], ["close"]]))
        elif roll < 0.83:
            steps.append(["hang"])
        elif roll < 0.9:
            steps.append(["exit", rng.randrange(256)])
        elif roll < 0.95:
            steps.append(["kill"])
        else:  # two answers for one call: the second is never read as the next call's
            steps.append(["write", (_lines(_answer(rng), rng, hostile=False) + b"\n").hex() * 2])
    return steps


FAKE = r"""#!{python} -S
import json, os, signal, sys, time

if "--fds" in sys.argv:  # a fake interpreter (--python)
    fds = sys.argv[sys.argv.index("--fds") + 1].split(",")
else:  # a driver command (--command), behind the suite's launcher
    fds = os.environ["CONFORMANCE_PROTOCOL_FDS"].split(",")
calls = os.fdopen(int(fds[0]), "rb")
out = int(fds[1])
with open(os.environ["FUZZ_CHILD_SCRIPT"]) as f:
    steps = json.load(f)
call_id = b"none"
for step in steps:
    kind = step[0]
    if kind == "write":
        os.write(out, bytes.fromhex(step[1]).replace(b"@ID@", call_id))
    elif kind == "print":
        print(step[1], flush=True)
    elif kind == "fill":
        left = step[1]
        while left > 0:
            left -= os.write(out, b"z" * min(left, 1 << 20))
    elif kind == "read":
        try:
            call_id = json.loads(calls.readline())["id"].encode()
        except Exception:
            call_id = b"none"
    elif kind == "exit":
        os._exit(step[1])
    elif kind == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    elif kind == "hang":
        time.sleep(3600)
    elif kind == "close":
        os.close(out)
calls.read()
"""


class FuzzRemote(RemoteClient):
    """A ``RemoteClient`` that waits ``TURN_CAP`` seconds for a fake child (not a turn's timeout + 10)."""

    def _read_line(self, timeout: float, *, budget: float | None = None) -> bytes:
        return super()._read_line(min(timeout, TURN_CAP), budget=budget)


# ---- running them ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    key: str
    what: str
    detail: str

    def describe(self) -> str:
        return f"{self.key}: {self.what}: {self.detail}"


def run_line(index: int) -> Finding | None:
    hello, lines = line_input(index)
    reader = TurnReader(ID)
    result: TurnResult | None = None
    try:
        for line in lines:
            message = parse_line(line)
            if hello:
                check(message)
                return None
            result = reader.take(message, len(line) + 1)
            if result is not None:
                break
    except ProtocolBroken:
        return None
    except Exception as exc:
        return Finding(f"line:{index}", "crash", f"{type(exc).__name__}: {exc}"[:300])
    return _unfit(f"line:{index}", result)


def _unfit(key: str, value: Any) -> Finding | None:
    """A finding when a value that came back does not fit the model (the checks would meet it)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if hasattr(item, "__dataclass_fields__"):
            wrong = misfit(item)
            if wrong is not None:
                return Finding(key, "unfit value", f"{type(item).__name__}: {wrong}")
            stack += [getattr(item, name) for name in item.__dataclass_fields__]
        elif isinstance(item, tuple):
            stack += list(item)
    return None


EXPECTED = (ClientCrashed, RemoteRaised, TimeoutError, InvalidCompletion)


def run_child(index: int, folder: Path, python: str) -> Finding | None:
    key = f"child:{index}"
    script = folder / f"script-{index}.json"
    script.write_text(json.dumps(child_script(index)), encoding="utf-8")
    os.environ["FUZZ_CHILD_SCRIPT"] = str(script)
    box: dict[str, Finding | None] = {}

    def drive() -> None:
        try:
            box["found"] = _drive_child(key, folder, python)
        except AssertionError as exc:
            box["found"] = Finding(key, "process left", str(exc))

    worker = threading.Thread(target=drive, daemon=True)
    worker.start()
    worker.join(SAFETY)
    if worker.is_alive():
        return Finding(key, "hang", f"no outcome within {SAFETY:g} s")
    return box.get("found")


def _drive_child(key: str, folder: Path, python: str) -> Finding | None:
    try:
        if index_of(key) % 2:  # a driver command, behind the launcher
            remote = FuzzRemote(key, sys.executable, command=(python,), start_timeout=5 * TURN_CAP)
        else:
            remote = FuzzRemote(f"{folder / 'driver.py'}:client", python, start_timeout=TURN_CAP)
    except UsageError:
        return None
    except Exception as exc:
        return Finding(key, "crash", f"starting: {type(exc).__name__}: {exc}"[:300])
    try:
        for turn in range(3):
            call = Call(wire="openai_chat", base_url="http://127.0.0.1:1", api_key="k", model="m", turn=turn)
            try:
                answer = remote.complete(call)
                values = (answer,) if isinstance(answer, Response) else tuple(answer)
            except EXPECTED:
                continue
            except Exception as exc:
                return Finding(key, "crash", f"turn {turn}: {type(exc).__name__}: {exc}"[:300])
            unfit = _unfit(key, values)
            if unfit is not None:
                return unfit
        return None
    finally:
        token = remote._run_token
        remote.close()
        from conformance.clients.child import tree_of

        left = tree_of(None, token + ".", prefix=True)
        if left:  # a fake child outlived its client
            raise AssertionError(f"processes {sorted(left)} outlived the client")


def index_of(key: str) -> int:
    """The input's number, in blocks of ``SAMPLE_EVERY``: the sample alternates ``--python`` and ``--command``."""
    return int(key.rpartition(":")[2]) // SAMPLE_EVERY


def _summary(what: str, ran: int, findings: list[Finding]) -> str:
    kinds = {k: sum(f.what == k for f in findings) for k in ("crash", "hang", "unfit value", "process left")}
    return f"fuzz child protocol {what} (seed {SEED}): {ran} inputs; " + ", ".join(f"{n} {k}" for k, n in kinds.items())


def _check(
    what: str, keys: list[int], run: Callable[[int], Finding | None], capsys: pytest.CaptureFixture[str]
) -> None:
    findings = [found for index in keys if (found := run(index)) is not None]
    with capsys.disabled():
        print("\n" + _summary(what, len(keys), findings))
    assert not findings, "\n".join(f.describe() for f in findings)


@pytest.fixture
def fake_python(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, str]]:
    python = tmp_path / "fake-python"
    python.write_text(FAKE.replace("{python}", sys.executable), encoding="utf-8")
    python.chmod(python.stat().st_mode | stat.S_IXUSR)
    (tmp_path / "driver.py").write_text("client = None\n", encoding="utf-8")
    monkeypatch.setenv("FUZZ_CHILD_SCRIPT", "")
    yield tmp_path, str(python)


def test_a_seeded_sample_of_hostile_lines_crashes_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    _check("lines", list(range(0, LINES, SAMPLE_EVERY)), run_line, capsys)


def test_a_seeded_sample_of_hostile_children_crashes_nothing_hangs_nothing_and_leaves_nothing(
    fake_python: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    folder, python = fake_python
    _check("children", list(range(0, CHILDREN, SAMPLE_EVERY)), lambda i: run_child(i, folder, python), capsys)


@pytest.mark.fuzz_corpus
def test_every_hostile_line_crashes_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    _check("lines", list(range(LINES)), run_line, capsys)


@pytest.mark.fuzz_corpus
def test_every_hostile_child_crashes_nothing_hangs_nothing_and_leaves_nothing(
    fake_python: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    folder, python = fake_python
    _check("children", list(range(CHILDREN)), lambda i: run_child(i, folder, python), capsys)
