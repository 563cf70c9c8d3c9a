"""``conformance certify --python OTHER``: a client whose driver runs in another interpreter.

Provider SDK pins clash between libraries, so a library is certified from its own virtualenv:
``RemoteClient`` starts ``OTHER -m conformance.clients.child SPEC`` with the suite's package (and
nothing else of this environment: its SDKs would shadow the library's pins) on ``PYTHONPATH`` and
speaks JSON lines with it (``conformance.clients.codec``), while serving and
checking stay in this process. It keeps the ``Client`` contract: ``complete`` returns the turn's
``Response`` or events, or raises ``RemoteRaised`` carrying the child's ``error_info`` of what the
library raised. A child that dies or overruns a turn is restarted for the next one, and its
stderr's tail names the cause. On Linux the child has a worker's memory limit
(``conformance.run.workers``: ``$CONFORMANCE_WORKER_MEMORY``), so a library that allocates without
bound raises ``MemoryError`` there (or dies, and is restarted) instead of taking the machine.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO, Any

import conformance
from conformance.clients.codec import from_json, to_json
from conformance.clients.contract import Call, client_problems, duties_from_json
from conformance.clients.invoke import InvalidCompletion, TurnResult
from conformance.errors import UsageError
from conformance.model import ErrorInfo, Response, StreamEvent
from conformance.run.workers import limit_child_memory, memory_limit_from_env

__all__ = ["PACKAGE_DIR", "START_TIMEOUT", "RemoteClient", "RemoteRaised"]

PACKAGE_DIR = Path(conformance.__file__).resolve().parent
"""This package's folder, the only part of this environment the child's interpreter is given."""

START_TIMEOUT = 60.0
"""Seconds for the other interpreter to import the driver and its library."""


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

    def __init__(self, spec: str, python: str, *, start_timeout: float = START_TIMEOUT) -> None:
        self.spec = spec
        self.python = python
        self.start_timeout = start_timeout
        self._process: subprocess.Popen[str] | None = None
        self._stderr: IO[str] | None = None
        self._shim: tempfile.TemporaryDirectory[str] | None = None
        self._turn_lock = threading.Lock()
        """One turn at a time on the pipe: a turn ``invoke`` gave up on still reads its own answer."""
        hello = self._start()
        self.name: str = hello.get("name", "")
        self.wires: Mapping[str, frozenset[str]] = {
            str(w): frozenset(c) for w, c in (hello.get("wires") or {}).items() if isinstance(c, list)
        }
        self.known_gaps: Mapping[str, str] = dict(hello.get("known_gaps") or {})
        self.schema_rewrites: Mapping[str, str] = dict(hello.get("schema_rewrites") or {})
        self.request_differences: Mapping[str, str] = dict(hello.get("request_differences") or {})
        self.duties: Any = duties_from_json(hello.get("duties"))
        self.interpreter = f"{hello.get('executable', python)} (Python {hello.get('python', '?')})"
        problems = client_problems(self)
        if problems:
            self.close()
            raise UsageError(f"--client {spec} (under {python}): " + "; ".join(problems) + " (see docs/clients.md)")

    def again(self) -> RemoteClient:
        """Another client of the same driver under the same interpreter, with a child of its own:
        what each worker process of ``certify --jobs N`` drives (a pipe is never shared between
        processes)."""
        return RemoteClient(self.spec, self.python, start_timeout=self.start_timeout)

    # ---- the Client contract ---------------------------------------------------------------

    def complete(self, call: Call) -> Response | Iterator[StreamEvent]:
        result = self._ask(call)
        if result.returned == "response" and result.response is not None:
            return result.response
        if result.returned == "timeout":
            raise TimeoutError(result.exception or "the turn timed out in the driver's interpreter")
        if result.returned == "invalid":
            raise InvalidCompletion(result.exception or "the driver returned no result")
        return self._replay(result)

    def error_info(self, exc: BaseException) -> ErrorInfo | None:
        if isinstance(exc, RemoteRaised):
            if exc.failed is not None:
                raise RuntimeError(exc.failed)
            return exc.info
        return None

    # ---- the child process -----------------------------------------------------------------

    def _package_path(self) -> str:
        """A folder holding only ``conformance`` (a link to this package), for the child's ``PYTHONPATH``.
        Not the folder the package sits in: installed from a wheel, that is this environment's
        site-packages, whose SDKs would come before the library's own pins in the other interpreter."""
        if self._shim is None:
            self._shim = tempfile.TemporaryDirectory(prefix="conformance-child-")
            os.symlink(PACKAGE_DIR, Path(self._shim.name) / "conformance", target_is_directory=True)
        return self._shim.name

    def close(self, *, kill: bool = False) -> None:
        """Stop the child: let it finish (5 s at most), or ``kill`` it at once (it hung)."""
        process, self._process = self._process, None
        if process is not None:
            if kill:
                process.kill()
            if process.stdin is not None:
                with contextlib.suppress(OSError):
                    process.stdin.close()
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            if process.stdout is not None:
                process.stdout.close()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None
        if self._shim is not None and self._process is None:
            self._shim.cleanup()
            self._shim = None

    def __enter__(self) -> RemoteClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _start(self) -> dict[str, Any]:
        if not Path(self.python).exists():
            raise UsageError(f"--python {self.python}: no such interpreter")
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (self._package_path(), os.getcwd(), env.get("PYTHONPATH", "")) if p
        )
        self._stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115
        self._process = subprocess.Popen(
            [self.python, "-m", "conformance.clients.child", self.spec],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            encoding="utf-8",
            env=env,
        )
        limit_child_memory(self._process.pid, memory_limit_from_env())
        line = self._read_line(self.start_timeout)
        if line is None:
            tail = self._stderr_tail()
            self.close()
            raise UsageError(f"--client {self.spec} under {self.python} did not start: {tail}")
        message = json.loads(line)
        if "fatal" in message:
            self.close()
            raise UsageError(f"--client {self.spec}: {message['fatal']}")
        hello: dict[str, Any] = message["hello"]
        return hello

    def _ask(self, call: Call) -> TurnResult:
        with self._turn_lock:
            return self._ask_locked(call)

    def _ask_locked(self, call: Call) -> TurnResult:
        if self._process is None or self._process.poll() is not None:
            self.close()
            self._start()
        process = self._process
        assert process is not None and process.stdin is not None
        try:
            process.stdin.write(json.dumps({"call": to_json(call)}) + "\n")
            process.stdin.flush()
        except OSError:
            pass  # it died: the read below says so
        line = self._read_line(call.timeout + 10)
        if line is None:
            tail = self._stderr_tail()
            self.close(kill=True)  # hung or dead: the next turn starts a new one
            raise RemoteRaised(f"the driver's interpreter died or hung on this turn: {tail}", None, None)
        result = from_json(json.loads(line)["result"])
        if not isinstance(result, TurnResult):
            raise RemoteRaised("the driver's interpreter answered something that is not a turn result", None, None)
        return result

    def _read_line(self, timeout: float) -> str | None:
        process = self._process
        assert process is not None and process.stdout is not None
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as selector:
            selector.register(process.stdout, selectors.EVENT_READ)
            while True:
                left = deadline - time.monotonic()
                if left <= 0 or not selector.select(left):
                    return None
                line = process.stdout.readline()
                if not line:
                    return None
                if line.strip():
                    return line

    def _stderr_tail(self) -> str:
        if self._stderr is None:
            return "(no stderr)"
        self._stderr.seek(0)
        lines = self._stderr.read().strip().splitlines()
        return " | ".join(lines[-5:]) or "(nothing on stderr)"

    @staticmethod
    def _replay(result: TurnResult) -> Iterator[StreamEvent]:
        yield from result.events
        if result.returned == "raised":
            raise RemoteRaised(result.exception or "an exception", result.error_info, result.error_info_failed)
