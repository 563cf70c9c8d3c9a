"""The driver side of ``certify --python OTHER`` and the launcher of ``certify --command``: runs in
the driver's process, on the client protocol (docs/protocol.md, ``conformance.clients.protocol``).

``OTHER -m conformance.clients.child --fds R,W SPEC`` (the suite puts its own source on
``PYTHONPATH``; the other interpreter needs nothing the suite pins) loads the Python driver ``SPEC``
(``pkg.module:OBJECT`` or ``path/to/driver.py:OBJECT``), says hello, then answers each call with the
turn run by ``conformance.clients.invoke``: its events and the ending (``end``, ``response``,
``error`` with ``error_info`` of what the library raised, or ``failed``). Each call it reads is
checked by the protocol's rules (``read_call``). Only the standard library and the suite's pure
modules are imported here. Started by a suite's launcher instead (``CONFORMANCE_PROTOCOL_FDS`` set),
the same driver is a ``--command`` like any other.

``python -m conformance.clients.child --fds R,W --command -- ARGV...`` is the launcher: it makes the
sandbox below, then runs the program ``ARGV`` (a Node script, any language) in it on two pipes of its
own (``CONFORMANCE_PROTOCOL_FDS``), hands it the suite's calls (serving each call's port in the
namespace first) and relays its answers byte for byte: the suite reads and bounds them.

The protocol has pipes of its own, the descriptors ``R`` (calls) and ``W`` (answers) the suite
passed: never descriptor 0, 1 or 2, so that a driver's prints, a C library's writes, a subprocess's
output or a read of stdin cannot reach it (stdin is ``/dev/null``; descriptor 1 and ``sys.stdout``
point at stderr). A message larger than ``MAX_MESSAGE`` is never written: the turn is ``failed``
(``invalid``) with its size, the case's ERROR.

On Linux the child runs in a network namespace of its own whose only route is loopback, relayed to
the suite's server (``conformance.clients.sandbox``), where the system allows one; its first message
(``sandbox``) says which network holds (``namespace``, or ``guard: WHY``: the audit hook alone, which
reaches Python drivers only).

Every process the driver starts is ended with it (``end_tree``): the child is a session of its own
and a sub-reaper (Linux), so orphans of a double fork stay below it, and each process carries
``TOKEN_ENV`` in its environment, which a process that moved to another session still has.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import json
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TextIO

from conformance.clients.contract import Client, duties_to_json
from conformance.clients.invoke import EventLoop, invoke
from conformance.clients.protocol import (
    FDS_ENV,
    MAX_MESSAGE,
    SCHEMA_ENV,
    SCHEMA_FILE,
    VERSION,
    answer_messages,
    hello_message,
    read_call,
)
from conformance.clients.sandbox import NAMESPACE, NETWORK_ENV, ChildRelay, NamespaceBroken, enter_namespace
from conformance.errors import UsageError

__all__ = ["MAX_MESSAGE", "TOKEN_ENV", "end_tree", "load_object", "main", "tree_of"]

TOKEN_ENV = "CONFORMANCE_CHILD_TOKEN"
"""Carried in the environment of the child and every process it starts (``RUN.CHILD``): what
``end_tree`` finds a process by once it left the child's session."""


def load_object(spec: str) -> Any:
    """The object ``pkg.module:NAME`` or ``path/to/file.py:NAME`` names (``ImportError``/
    ``AttributeError`` say why not). A file's folder goes on ``sys.path`` so its siblings import."""
    target, colon, attribute = spec.rpartition(":")
    if not colon or not target or not attribute:
        raise ImportError(f"{spec!r} is not MODULE:OBJECT or FILE.py:OBJECT")
    if target.endswith(".py"):
        path = Path(target).resolve()
        if not path.is_file():
            raise ImportError(f"no driver file {path}")
        sys.path.insert(0, str(path.parent))
        name = f"conformance_driver_{path.stem}"
        loaded = importlib.util.spec_from_file_location(name, path)
        if loaded is None or loaded.loader is None:
            raise ImportError(f"cannot load {path} as a module")
        module = importlib.util.module_from_spec(loaded)
        sys.modules[name] = module
        loaded.loader.exec_module(module)
    else:
        module = importlib.import_module(target)
    obj: Any = module
    for part in attribute.split("."):
        obj = getattr(obj, part)
    return obj


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    try:
        network, relay = _isolate()  # first: no thread may exist yet, and the driver is not loaded
    except NamespaceBroken as exc:  # stuck in a namespace without loopback: the suite starts another child
        _send(
            _protocol(args)[1],
            {"v": VERSION, "type": "fatal", "message": f"no network namespace: {exc}", "network": f"guard: {exc}"},
        )
        return 2
    calls, out = _protocol(args)
    if args[:1] == ["--fds"]:
        args = args[2:]
    _reap_orphans()
    try:
        if args[:1] == ["--command"]:
            return _launch(args[1:], calls, out, network, relay)
        if len(args) != 1:
            _fatal(out, "usage: python -m conformance.clients.child [--fds R,W] MODULE:OBJECT | --command ARGV...")
            return 2
        return _drive(args[0], calls, out, network, relay)
    finally:  # the suite is done (or gone): so is everything the driver started
        token = os.environ.get(TOKEN_ENV)
        if token:
            end_tree(os.getpid(), token, spare=os.getpid(), reap=True)


def _drive(spec: str, calls: TextIO, out: TextIO, network: str, relay: ChildRelay | None) -> int:
    """Run the Python driver ``spec`` on the protocol: its hello, then one answer per call."""
    try:
        client: Client = load_object(spec)
        runtime = f"Python {sys.version.split()[0]} ({sys.executable})"
        hello = hello_message(client, runtime=runtime, duties=duties_to_json(getattr(client, "duties", None)))
    except BaseException as exc:  # any failure to load is reported to the suite, which exits 2
        _fatal(out, f"cannot load {spec} in {sys.executable}: {type(exc).__name__}: {exc}")
        return 2
    _send(out, {"v": VERSION, "type": "sandbox", "network": network})
    _send(out, hello)
    with EventLoop() as loop:
        for line in calls:
            if not line.strip():
                continue
            try:
                call_id, call = read_call(json.loads(line))
            except (ValueError, UsageError) as exc:
                _fatal(out, f"the suite sent a call that does not fit the protocol: {exc}")
                return 2
            if relay is not None:
                for problem in relay.serve(call.base_url):
                    print(problem, file=sys.stderr, flush=True)
            result = invoke(client, call, loop, timeout=call.timeout)
            for message in answer_messages(call_id, result):
                if not _send(out, message):
                    why = (
                        f"the driver's answer holds a message larger than {MAX_MESSAGE >> 20} MiB of JSON, the bound"
                        " on one message (docs/protocol.md)"
                    )
                    _send(out, {"v": VERSION, "type": "failed", "id": call_id, "reason": "invalid", "message": why})
                    break
    return 0


def _launch(argv: list[str], calls: TextIO, out: TextIO, network: str, relay: ChildRelay | None) -> int:
    """Run the driver command ``argv`` (any language) in this sandbox, on pipes of its own named by
    ``FDS_ENV``: the suite's calls go to it (the relay serving each call's port first), its answers
    come back byte for byte (the suite reads and bounds them). Its stdout and stderr are this
    process's output, which the suite drains. Exits as it exits (a signal as 128 + its number)."""
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if not argv:
        _fatal(out, "usage: python -m conformance.clients.child [--fds R,W] --command ARGV...")
        return 2
    call_read, call_write = os.pipe()
    answer_read, answer_write = os.pipe()
    env = dict(os.environ)
    env[FDS_ENV] = f"{call_read},{answer_write}"
    env[SCHEMA_ENV] = str(SCHEMA_FILE)
    try:
        process = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=2, stderr=2, pass_fds=(call_read, answer_write), env=env
        )
    except OSError as exc:
        _fatal(out, f"cannot start the driver command {shlex.join(argv)}: {exc}")
        return 2
    finally:
        os.close(call_read)
        os.close(answer_write)
    _send(out, {"v": VERSION, "type": "sandbox", "network": network})
    answers = threading.Thread(target=_copy, args=(answer_read, out.fileno()), name="answers", daemon=True)
    answers.start()
    threading.Thread(target=_forward_calls, args=(calls, call_write, relay), name="calls", daemon=True).start()
    code = process.wait()
    answers.join(5)  # what it wrote before it ended still reaches the suite
    if code < 0:
        with contextlib.suppress(ValueError):
            print(f"the driver command was killed by {signal.Signals(-code).name}", file=sys.stderr, flush=True)
        return 128 - code
    return code


def _copy(source: int, target: int) -> None:
    """Copy what ``source`` gives to ``target`` until it ends (bounded chunks; the reader bounds lines)."""
    while True:
        try:
            chunk = os.read(source, 1 << 16)
        except OSError:
            return
        if not chunk:
            return
        view = memoryview(chunk)
        while view:
            try:
                written = os.write(target, view)
            except OSError:
                return
            view = view[written:]


def _forward_calls(calls: TextIO, target: int, relay: ChildRelay | None) -> None:
    """Hand each call of the suite to the driver command, serving its base URL's port first; close
    the driver's pipe when the suite closes this one (the driver then ends)."""
    with os.fdopen(target, "wb") as pipe:
        for line in calls:
            if relay is not None:
                with contextlib.suppress(Exception):  # the suite's own message: it is a call
                    for problem in relay.serve(str(json.loads(line)["call"]["base_url"])):
                        print(problem, file=sys.stderr, flush=True)
            try:
                pipe.write(line.encode())
                pipe.flush()
            except OSError:  # it ended: the suite sees its pipe close
                return


def _fatal(out: TextIO, message: str) -> None:
    _send(out, {"v": VERSION, "type": "fatal", "message": message})


def _isolate() -> tuple[str, ChildRelay | None]:
    """The child's network (``conformance.clients.sandbox``): a namespace of its own with the relay
    to the suite's socket that ``NETWORK_ENV`` names, or the guard alone (``guard: WHY``)."""
    asked = os.environ.pop(NETWORK_ENV, "")
    if not asked:
        return "guard: no relay socket was given (run by hand)", None
    if asked.startswith("guard"):
        return asked, None
    network = enter_namespace()
    return network, (ChildRelay(asked) if network == NAMESPACE else None)


def _protocol(args: list[str]) -> tuple[TextIO, TextIO]:
    """The protocol's streams: the pipes ``--fds R,W`` names (closed to the processes the driver
    starts), or, run by hand, stdin and descriptor 1 as given, moved to a descriptor of its own.
    Descriptor 1 (and ``sys.stdout``) then point at stderr, and stdin at ``/dev/null``, so that
    nothing else the process or its children write (a driver's print, a C library's write, an
    ``echo`` from a subprocess) or read lands in the protocol."""
    sys.stdout.flush()
    if args[:1] == ["--fds"] and len(args) > 1:
        read_fd, write_fd = (int(n) for n in args[1].split(","))
    elif os.environ.get(FDS_ENV):  # started as a driver command (``certify --command``)
        read_fd, write_fd = (int(n) for n in os.environ.pop(FDS_ENV).split(","))
    else:
        read_fd, write_fd = os.dup(0), os.dup(1)
    for fd in (read_fd, write_fd):
        os.set_inheritable(fd, False)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115 - lives as long as the process
    calls = os.fdopen(read_fd, "r", encoding="utf-8")
    return calls, os.fdopen(write_fd, "w", encoding="utf-8", newline="\n")


def _reap_orphans() -> None:
    """Be the sub-reaper of what the driver starts (Linux): a process that double-forks away stays
    below this one, where ``end_tree`` finds it."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER


def _send(out: TextIO, message: dict[str, Any]) -> bool:
    """Write one protocol line; False (nothing written) for one larger than ``MAX_MESSAGE`` (encoded
    piece by piece: the whole is never built)."""
    pieces: list[str] = []
    size = 0
    for piece in json.JSONEncoder().iterencode(message):  # ASCII only: its length is its size in bytes
        size += len(piece)
        if size > MAX_MESSAGE:
            return False
        pieces.append(piece)
    out.write("".join(pieces) + "\n")
    out.flush()
    return True


# ---- the process tree ------------------------------------------------------------------------


def tree_of(root: int | None, token: str, *, prefix: bool = False) -> set[int]:
    """The live processes of a child's tree (Linux ``/proc``): ``root``, its descendants, the
    members of its session and process group, and every process whose environment carries
    ``TOKEN_ENV=token`` (``prefix``: a token starting with ``token``, a whole run's children).
    Zombies are left out: they are already dead."""
    table: dict[int, tuple[int, int, int]] = {}
    for entry in _proc_entries():
        stat = _stat(entry)
        if stat is not None:
            table[entry] = stat
    found: set[int] = set()
    needle = f"{TOKEN_ENV}={token}".encode()
    for pid, (_ppid, group, session) in table.items():
        if root is not None and root in (pid, group, session):
            found.add(pid)
        elif token and _carries(pid, needle, prefix=prefix):
            found.add(pid)
    grew = True
    while grew:  # the descendants of what was found
        more = {pid for pid, (ppid, _g, _s) in table.items() if ppid in found and pid not in found}
        found |= more
        grew = bool(more)
    return found


def end_tree(
    root: int | None, token: str, *, prefix: bool = False, spare: int | None = None, reap: bool = False
) -> int:
    """Kill (``SIGKILL``) every process of ``tree_of(root, token)`` but ``spare`` and this process,
    again until none is left (a process forking while it is killed); how many were killed. ``reap``:
    collect this process's dead children too (the child, a sub-reaper; never the suite, whose
    ``Popen`` objects wait for their own)."""
    killed: set[int] = set()
    for attempt in range(50):
        alive = tree_of(root, token, prefix=prefix) - {os.getpid(), spare}
        if not alive:
            break
        for pid in alive:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        killed |= {p for p in alive if p is not None}
        if reap:
            _reap()
        time.sleep(0.002 * (attempt + 1))
    return len(killed)


def _reap() -> None:
    """Collect this process's dead children (a sub-reaper adopts the orphans it must wait for)."""
    with contextlib.suppress(ChildProcessError, OSError):
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass


def _proc_entries() -> Iterable[int]:
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    return [int(n) for n in names if n.isdigit()]


def _stat(pid: int) -> tuple[int, int, int] | None:
    """(parent, process group, session) of a live process; None for a zombie or a gone one."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            text = f.read().decode("ascii", "replace")
    except OSError:
        return None
    fields = text[text.rfind(")") + 2 :].split()
    if len(fields) < 4 or fields[0] in ("Z", "X"):
        return None
    return int(fields[1]), int(fields[2]), int(fields[3])


def _carries(pid: int, needle: bytes, *, prefix: bool) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            environ = f.read(1 << 20)
    except OSError:
        return False
    return any(item == needle or (prefix and item.startswith(needle)) for item in environ.split(b"\0"))


if __name__ == "__main__":
    raise SystemExit(main())
