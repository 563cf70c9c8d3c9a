"""``conformance certify --python OTHER`` and ``--command``: a client whose driver runs in a process
of its own, on the client protocol (docs/protocol.md).

Provider SDK pins clash between libraries, so a library is certified from its own virtualenv, and a
library in another language from its own runtime: ``RemoteClient`` starts ``OTHER -m
conformance.clients.child --fds R,W SPEC`` (a Python driver), or this interpreter's launcher
``-m conformance.clients.child --fds R,W --command -- ARGV`` (any program, ``RemoteClient.of_command``),
with the suite's package (and nothing else of this environment: its SDKs would shadow the library's
pins) on ``PYTHONPATH``, and speaks the protocol with it over two pipes of the protocol's own (never
the child's stdin, stdout or stderr), while serving and checking stay in this process. Every message
the driver writes is checked against the protocol's schema and read into the model
(``conformance.clients.protocol.TurnReader``). It keeps the ``Client`` contract: ``complete``
returns the turn's ``Response`` or events, or raises ``RemoteRaised`` carrying the driver's
``ErrorInfo`` of what the library raised.

The child is other people's code, bounded like a worker:

- what it prints (stdout and stderr, its subprocesses' too) goes to a pipe this process drains while
  it waits for an answer, keeping the last ``STDERR_TAIL`` bytes (nothing is written to disk, and a
  driver printing without end costs no more); they name the cause when it fails;
- a child that dies (an exit, a signal), stops answering (``turn_slack`` past the turn's timeout) or
  breaks the protocol (a line that is not JSON, a message the schema refuses or of another version,
  an answer for a call it was not given, a line larger than ``MAX_MESSAGE``: read in bounded
  chunks, never more; a turn past ``MAX_TURN_MESSAGES`` or ``MAX_TURN_BYTES``) is the turn's
  ``crashed`` result naming what happened and quoting the message, the case's ERROR; the child and
  its whole tree are killed and the next turn starts a new one;
- it runs in a session of its own, and every process it starts is ended with it
  (``conformance.clients.child.end_tree``: its session, its descendants, and any process carrying
  its token in the environment), when it fails, when it is closed, and for the whole run when the
  first client of the run is closed;
- on Linux it has a worker's memory limit (``conformance.run.workers``:
  ``$CONFORMANCE_WORKER_MEMORY``);
- on Linux it runs in a network namespace of its own whose only route is loopback
  (``conformance.clients.sandbox``): the ports of the base URLs this process sends are relayed
  to the suite's server through a Unix socket in the child's private folder, and any other address
  is unreachable, for the processes it starts too, Python or not; ``network`` says whether that
  holds (``namespace``) or why not (``guard: WHY``), and ``$CONFORMANCE_CHILD_NETWORK=guard`` asks
  for the guard alone;
- its network is guarded as well (``conformance.traffic.network_guard``: a ``sitecustomize``
  installs the audit hook in it and in its Python subprocesses); each refused address is logged to a
  file this process watches, so the harness reports it as a finding of the turn.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO, Any

import conformance
from conformance.clients.child import TOKEN_ENV, end_tree
from conformance.clients.contract import Call, client_problems, duties_from_json
from conformance.clients.invoke import ClientCrashed, InvalidCompletion, TurnResult
from conformance.clients.protocol import (
    MAX_MESSAGE,
    ProtocolBroken,
    TurnReader,
    call_message,
    check,
    clip,
    parse_line,
)
from conformance.clients.sandbox import NETWORK_ENV, RelayServer
from conformance.errors import UsageError
from conformance.model import ErrorInfo, Response, StreamEvent
from conformance.run.workers import limit_child_memory, memory_limit_from_env
from conformance.traffic.network_guard import LOG_ENV, prepare_guard_folder, unwatch_log

__all__ = [
    "MAX_MESSAGE",
    "PACKAGE_DIR",
    "START_TIMEOUT",
    "STDERR_TAIL",
    "ProtocolBroken",
    "RemoteClient",
    "RemoteRaised",
]

PACKAGE_DIR = Path(conformance.__file__).resolve().parent
"""This package's folder, the only part of this environment the child's interpreter is given."""

START_TIMEOUT = 60.0
"""Seconds for the other interpreter to import the driver and its library."""

STDERR_TAIL = 4096
"""Bytes of the end of the child's output read back to name the cause of a failure."""

_CHUNK = 1 << 16
_DRAIN_CHUNKS = 16
"""Reads of the child's output per drain (1 MiB): the rest waits in the pipe for the next one."""


class RemoteRaised(Exception):
    """What the library raised in the other interpreter (``described``: its class and message)."""

    def __init__(self, described: str, info: ErrorInfo | None, failed: str | None) -> None:
        super().__init__(described)
        self.described = described
        self.info = info
        self.failed = failed


class RemoteClient:
    """A ``Client`` whose driver ``spec`` runs under ``python`` (``OTHER/bin/python``)."""

    turn_slack = 15.0
    """Seconds the harness waits beyond a turn's timeout: the child times the turn itself (and says
    so), the slack covers the pipe and a restart."""

    def __init__(
        self,
        spec: str,
        python: str,
        *,
        command: tuple[str, ...] | None = None,
        start_timeout: float = START_TIMEOUT,
        run_token: str | None = None,
    ) -> None:
        self.spec = spec
        self.python = python
        self.command = command
        """The driver command's words (``certify --command``: any language), run by the launcher
        ``python -m conformance.clients.child --command`` under ``python`` (this interpreter); None:
        the Python driver ``spec`` under ``python``."""
        self._calls_made = 0
        self.start_timeout = start_timeout
        self._run_token = run_token or uuid.uuid4().hex
        """Shared by every client ``again`` makes: closing the first ends every child of the run."""
        self._first = run_token is None
        self._process: subprocess.Popen[bytes] | None = None
        self._calls: IO[bytes] | None = None
        self._answers: int | None = None
        self._buffer = bytearray()
        self._token = ""
        self._output: int | None = None
        self._tail = bytearray()
        self._relay: RelayServer | None = None
        self._relay_problem = ""
        self._shim: tempfile.TemporaryDirectory[str] | None = None
        self._turn_lock = threading.Lock()
        """One turn at a time on the pipe: a turn ``invoke`` gave up on still reads its own answer."""
        try:
            hello = self._start()
        except BaseException:
            self.close()
            raise
        self.name: str = str(hello.get("name", ""))
        wires = hello.get("wires")
        wires = wires if isinstance(wires, dict) else {}
        self.wires: Mapping[str, frozenset[str]] = {
            str(w): frozenset(str(c) for c in caps) for w, caps in wires.items() if isinstance(caps, list)
        }
        self.known_gaps: Mapping[str, str] = _strings(hello.get("known_gaps"))
        self.schema_rewrites: Mapping[str, str] = _strings(hello.get("schema_rewrites"))
        self.request_differences: Mapping[str, str] = _strings(hello.get("request_differences"))
        try:
            self.duties: Any = duties_from_json(hello.get("duties"))
        except Exception as exc:
            self.close()
            raise UsageError(f"{self.label}: its duties do not fit: {exc}") from exc
        self.version = str(hello.get("version") or "")
        """The library versions the driver names (its hello's ``version``)."""
        self.interpreter = str(hello.get("runtime") or python)
        self.network = self._network or "guard: the driver's launcher did not say"
        """``namespace`` (a network namespace whose only route is loopback, relayed to the suite's
        server) or ``guard: WHY`` (the audit hook alone)."""
        problems = client_problems(self)
        if problems:
            self.close()
            raise UsageError(f"{self.label}: " + "; ".join(problems) + " (see docs/clients.md)")

    def again(self) -> RemoteClient:
        """Another client of the same driver under the same interpreter, with a child of its own:
        what each worker process of ``certify --jobs N`` drives (a pipe is never shared between
        processes)."""
        return RemoteClient(
            self.spec, self.python, command=self.command, start_timeout=self.start_timeout, run_token=self._run_token
        )

    @classmethod
    def of_command(cls, command: str, **options: Any) -> RemoteClient:
        """The client whose driver is the program ``command`` (shell words: ``node drivers/x.mjs``)."""
        try:
            words = tuple(shlex.split(command))
        except ValueError as exc:
            raise UsageError(f"--command {command!r}: {exc}") from None
        if not words:
            raise UsageError("--command: no command given")
        return cls(command, sys.executable, command=words, **options)

    @property
    def label(self) -> str:
        """How messages name this driver: ``--command CMD`` or ``--client SPEC (under PYTHON)``."""
        if self.command is not None:
            return f"--command {self.spec}"
        return f"--client {self.spec} (under {self.python})"

    # ---- the Client contract ---------------------------------------------------------------

    def complete(self, call: Call) -> Response | Iterator[StreamEvent]:
        result = self._ask(call)
        if result.returned == "response" and result.response is not None:
            return result.response
        if result.returned == "timeout":
            raise TimeoutError(result.exception or "the turn timed out in the driver's interpreter")
        if result.returned == "invalid":
            raise InvalidCompletion(result.exception or "the driver returned no result")
        if result.returned == "crashed":
            raise ClientCrashed(result.exception or "the driver's interpreter failed")
        return self._replay(result)

    def error_info(self, exc: BaseException) -> ErrorInfo | None:
        if isinstance(exc, RemoteRaised):
            if exc.failed is not None:
                raise RuntimeError(exc.failed)
            return exc.info
        return None

    # ---- the child process -----------------------------------------------------------------

    def _package_path(self) -> str:
        """A folder holding only ``conformance`` (a link to this package) and the network guard's
        ``sitecustomize``, for the child's ``PYTHONPATH``. Not the folder the package sits in:
        installed from a wheel, that is this environment's site-packages, whose SDKs would come
        before the library's own pins in the other interpreter."""
        if self._shim is None:
            self._shim = tempfile.TemporaryDirectory(prefix="conformance-child-")
            prepare_guard_folder(Path(self._shim.name), package=PACKAGE_DIR)
            if os.environ.get(NETWORK_ENV, "").startswith("guard"):
                self._relay_problem = f"guard: ${NETWORK_ENV} asked for the guard alone"
            else:
                try:
                    self._relay = RelayServer(Path(self._shim.name))
                except OSError as exc:
                    self._relay_problem = f"guard: the relay's Unix socket could not be made ({exc})"
        return self._shim.name

    def close(self, *, kill: bool = False) -> None:
        """Stop the child: let it finish (5 s at most), or ``kill`` it at once (it hung); then end
        every process it started. The first client of a run ends the whole run's children."""
        self._stop(kill=kill)
        if self._first:
            end_tree(None, self._run_token + ".", prefix=True)
        if self._relay is not None:
            self._relay.close()
            self._relay = None
        if self._shim is not None:
            unwatch_log(Path(self._shim.name) / "refused.log")
            self._shim.cleanup()
            self._shim = None

    def _stop(self, *, kill: bool) -> None:
        process, self._process = self._process, None
        if process is not None:
            if kill:
                with contextlib.suppress(OSError):
                    os.killpg(process.pid, signal.SIGKILL)
            if self._calls is not None:
                with contextlib.suppress(OSError):
                    self._calls.close()
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(OSError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()
            end_tree(process.pid, self._token)
        self._calls = None
        if self._answers is not None:
            with contextlib.suppress(OSError):
                os.close(self._answers)
            self._answers = None
        self._buffer.clear()
        if self._output is not None:
            with contextlib.suppress(OSError):
                os.close(self._output)
            self._output = None

    def __enter__(self) -> RemoteClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _start(self) -> dict[str, Any]:
        if not Path(self.python).exists():
            raise UsageError(f"--python {self.python}: no such interpreter")
        shim = self._package_path()
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (shim, os.getcwd(), env.get("PYTHONPATH", "")) if p)
        env[LOG_ENV] = str(Path(shim) / "refused.log")
        self._token = f"{self._run_token}.{uuid.uuid4().hex}"
        env[TOKEN_ENV] = self._token
        env[NETWORK_ENV] = self._relay.path if self._relay is not None else self._relay_problem
        output_read, output_write = os.pipe()
        os.set_blocking(output_read, False)
        self._output = output_read
        self._tail.clear()
        self._network = ""
        call_read, call_write = os.pipe()
        answer_read, answer_write = os.pipe()
        try:
            launcher = [self.python, "-m", "conformance.clients.child", "--fds", f"{call_read},{answer_write}"]
            driver = ["--command", "--", *self.command] if self.command is not None else [self.spec]
            self._process = subprocess.Popen(
                [*launcher, *driver],
                stdin=subprocess.DEVNULL,
                stdout=output_write,
                stderr=output_write,
                pass_fds=(call_read, answer_write),
                start_new_session=True,
                env=env,
            )
        except OSError as exc:
            for fd in (call_read, call_write, answer_read, answer_write):
                os.close(fd)
            raise UsageError(f"--python {self.python}: cannot start it: {exc}") from exc
        finally:
            for fd in (call_read, answer_write, output_write):
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._calls = os.fdopen(call_write, "wb")
        self._answers = answer_read
        os.set_blocking(answer_read, False)
        limit_child_memory(self._process.pid, memory_limit_from_env())
        deadline = time.monotonic() + self.start_timeout
        try:
            message = self._read_message(self.start_timeout)
            for _ in range(2):  # the launcher's network, then the driver's hello (a Python driver run as a
                # --command says its own too: the launcher's comes first and holds)
                if message.get("type") != "sandbox" or not isinstance(message.get("network"), str):
                    break
                self._network = self._network or message["network"][:500]
                message = self._read_message(max(0.0, deadline - time.monotonic()))
        except ProtocolBroken as exc:
            why = str(exc)
            self._stop(kill=True)
            raise UsageError(f"{self.label} did not start: {why}") from None
        if message.get("type") == "fatal" and isinstance(message.get("network"), str) and self._relay is not None:
            self._stop(kill=True)  # its namespace could not be made usable: the guard alone, then
            self._relay.close()
            self._relay, self._relay_problem = None, message["network"][:500]
            return self._start()
        if message.get("type") == "fatal":
            self._stop(kill=True)
            raise UsageError(f"{self.label}: {clip(message.get('message'), 2000)}")
        problem = check(message) if message.get("type") == "hello" else "its first message is not a hello"
        if problem is not None:
            self._stop(kill=True)
            raise UsageError(f"{self.label} did not start: {problem} ({clip(message)})")
        return message

    def _ask(self, call: Call) -> TurnResult:
        with self._turn_lock:
            try:
                return self._ask_locked(call)
            except ProtocolBroken as exc:
                why = str(exc)
                self._stop(kill=True)  # dead, hung or lying: the next turn starts a new one
                return TurnResult(returned="crashed", exception=why)

    def _ask_locked(self, call: Call) -> TurnResult:
        if self._process is None or self._process.poll() is not None:
            self._stop(kill=True)
            try:
                self._start()
            except UsageError as exc:
                raise ProtocolBroken(f"the driver could not be started again: {exc}") from None
        assert self._calls is not None
        if self._relay is not None:
            self._relay.allow(call.base_url)
        self._calls_made += 1
        reader = TurnReader(str(self._calls_made))
        try:
            self._calls.write(json.dumps(call_message(call, reader.call_id)).encode() + b"\n")
            self._calls.flush()
        except OSError:
            pass  # it died: the read below says so
        deadline = time.monotonic() + call.timeout + 10
        while True:
            line = self._read_line(max(0.0, deadline - time.monotonic()), budget=call.timeout + 10)
            try:
                result = reader.take(parse_line(line), len(line) + 1)
            except ProtocolBroken as exc:
                raise ProtocolBroken(f"the driver broke the protocol: {exc}; {self._output_tail()}") from None
            if result is not None:
                return result

    def _read_message(self, timeout: float) -> dict[str, Any]:
        """The child's next protocol message, read in bounded chunks (``MAX_MESSAGE`` at most);
        ``ProtocolBroken`` says why there is none (dead, silent, too large, not JSON)."""
        line = self._read_line(timeout)
        try:
            return parse_line(line)
        except ProtocolBroken as exc:
            raise ProtocolBroken(f"{exc}; {self._output_tail()}") from None

    def _read_line(self, timeout: float, *, budget: float | None = None) -> bytes:
        """The next non-blank line of the answers' pipe, read in chunks of 64 KiB: ``MAX_MESSAGE``
        bytes without an end of line break the protocol (nothing more is read)."""
        process, fd = self._process, self._answers
        assert process is not None and fd is not None
        deadline = time.monotonic() + timeout
        scanned = 0
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            if self._output is not None:
                selector.register(self._output, selectors.EVENT_READ)
            while True:
                end = self._buffer.find(b"\n", scanned)
                if end >= 0:
                    line = bytes(self._buffer[:end])
                    del self._buffer[: end + 1]
                    scanned = 0
                    if len(line) > MAX_MESSAGE:
                        raise ProtocolBroken(self._too_large())
                    if line.strip():
                        return line
                    continue
                scanned = len(self._buffer)
                if scanned > MAX_MESSAGE:
                    raise ProtocolBroken(self._too_large())
                left = deadline - time.monotonic()
                ready = selector.select(left) if left > 0 else []
                if not ready:
                    raise ProtocolBroken(
                        f"the driver gave no answer in {budget or timeout:g} s (it hung) and was killed;"
                        f" {self._output_tail()}"
                    )
                output = self._output
                if output is not None and any(key.fd == output for key, _ in ready) and not self._drain():
                    selector.unregister(output)  # every writer closed it: nothing more to drain
                if not any(key.fd == fd for key, _ in ready):
                    continue
                try:
                    chunk = os.read(fd, _CHUNK)
                except BlockingIOError:
                    continue
                if not chunk:
                    raise ProtocolBroken(f"the driver {self._death()}; {self._output_tail()}")
                self._buffer += chunk

    @staticmethod
    def _too_large() -> str:
        return (
            f"the driver sent a message larger than {MAX_MESSAGE >> 20} MiB, the bound on one message"
            " (docs/protocol.md), and was killed"
        )

    def _death(self) -> str:
        """How the child ended (its pipe closed): an exit code or a signal's name."""
        process = self._process
        assert process is not None
        try:
            code = process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            return "closed the protocol's pipe but kept running, and was killed"
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            return f"died: killed by {name}"
        return f"died: it exited with code {code}"

    def _drain(self) -> bool:
        """Read what the child printed so far (without waiting), keeping the last ``STDERR_TAIL``
        bytes; False once every writer closed the pipe."""
        if self._output is None:
            return False
        for _ in range(_DRAIN_CHUNKS):  # a child printing as fast as it is read cannot hold this loop
            try:
                chunk = os.read(self._output, _CHUNK)
            except BlockingIOError:
                return True
            except OSError:
                return False
            if not chunk:
                return False
            self._tail += chunk
            if len(self._tail) > STDERR_TAIL:
                del self._tail[:-STDERR_TAIL]
        return True

    def _output_tail(self) -> str:
        """The last lines the child printed (``STDERR_TAIL`` bytes at most)."""
        if self._output is None:
            return "its output: (none kept)"
        self._drain()
        text = bytes(self._tail).decode("utf-8", "replace")
        lines = [line for line in text.strip().splitlines() if line.strip()][-5:]
        return "its output ends: " + (" | ".join(lines) or "(nothing)")

    def _stderr_tail(self) -> str:
        """The last lines the child printed (kept for the tests and callers of the old name)."""
        return self._output_tail().removeprefix("its output ends: ")

    @staticmethod
    def _replay(result: TurnResult) -> Iterator[StreamEvent]:
        yield from result.events
        if result.returned == "raised":
            raise RemoteRaised(result.exception or "an exception", result.error_info, result.error_info_failed)


def _strings(value: Any) -> dict[str, str]:
    """A declared mapping of the hello, as strings (anything else: empty)."""
    if not isinstance(value, dict):
        return {}
    return {str(k): str(v) for k, v in value.items()}
