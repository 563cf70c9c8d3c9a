"""Which commands a scenario may start: the trust model of ``tools: {mcp: {command: ...}}``.

A scenario that takes its tools from an MCP server names a command (``tools.mcp.command`` and
``args``, with ``env`` and ``cwd``) that ``run``, ``record``, ``certify`` and the pytest plugin
start as a child process: whoever wrote the scenario chooses a program that runs with your rights.
So:

- a **bundled** scenario (its file, symlinks resolved, is under ``conformance.scenarios.bundled``'s
  folder) is trusted: it ships with the suite and starts only ``{python} -m conformance mcp-server``;
- any **other** scenario (``--scenarios PATH``, ``--scenarios-dir``, ``$CONFORMANCE_SCENARIOS``, the
  pytest plugin's ``--conformance-scenarios-dir``, a ``Scenario`` built in Python) starts its
  command only when commands are allowed: ``--allow-commands`` on the command line,
  ``--conformance-allow-commands`` (or the ini option ``conformance_allow_commands``) in pytest, or
  ``CONFORMANCE_ALLOW_COMMANDS=1`` in the environment. Otherwise the scenario's cases are ERRORs
  raising ``McpCommandRefusedError``, which names the file, the command and the flag; nothing starts.

``server_command`` says what a scenario would start (``conformance validate`` lists it); the gate
(``refusal``) is asked by ``conformance.mcp_bridge.scenario_tools`` before any server starts.

**Which commands ran.** Inside ``command_policy`` every server start is noted (``note_started``) in a
file named by ``$CONFORMANCE_COMMAND_LOG``, so starts in worker processes count too;
``CommandLog.commands()`` reads them back for the run's report. The allowance is carried by the
environment for the same reason: a worker process (forked or spawned) decides as its parent would.
The MCP servers themselves never see either variable (``McpServerSpec`` passes them a safe subset).
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.errors import McpCommandRefusedError
from conformance.scenarios import bundled
from conformance.scenarios.values import PYTHON_PLACEHOLDER, McpTools, Scenario

__all__ = [
    "ALLOW_ENV",
    "ALLOW_FLAG",
    "LOG_ENV",
    "CommandLog",
    "ServerCommand",
    "command_policy",
    "commands_allowed",
    "is_bundled",
    "note_started",
    "refusal",
    "resolved_cwd",
    "resolved_words",
    "server_command",
]

ALLOW_ENV = "CONFORMANCE_ALLOW_COMMANDS"
"""Set to ``1`` (or ``true``/``yes``) to let scenarios outside the bundled set start their commands."""
ALLOW_FLAG = "--allow-commands"
"""The command-line flag of ``run``, ``record`` and ``certify`` that allows them."""
LOG_ENV = "CONFORMANCE_COMMAND_LOG"
"""The file every server start is noted in (set by ``command_policy``)."""
_TRUTHY = ("1", "true", "yes", "on")


@dataclass(frozen=True, kw_only=True)
class ServerCommand:
    """The process a scenario's ``tools.mcp`` starts, as it would be started."""

    scenario: str
    file: str
    argv: tuple[str, ...]
    """``command`` + ``args``, ``{python}`` replaced by the running interpreter."""
    cwd: str | None
    """The working directory (a relative ``cwd`` taken from the scenario file's folder); None: ours."""
    env_keys: tuple[str, ...]
    """The variables the scenario adds to the server's environment (their values are not shown)."""
    bundled: bool
    """A bundled scenario's command always runs; any other's only when commands are allowed."""

    def shown(self) -> str:
        """``argv`` as a shell line, with the ``cwd`` and the names of the ``env`` variables."""
        text = shlex.join(self.argv)
        if self.cwd is not None:
            text += f" (cwd {self.cwd})"
        if self.env_keys:
            text += f" (env {', '.join(self.env_keys)})"
        return text

    def to_json(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario,
            "file": self.file,
            "argv": list(self.argv),
            "cwd": self.cwd,
            "env_keys": list(self.env_keys),
            "bundled": self.bundled,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ServerCommand:
        return cls(
            scenario=str(data["scenario"]),
            file=str(data["file"]),
            argv=tuple(str(a) for a in data["argv"]),
            cwd=None if data.get("cwd") is None else str(data["cwd"]),
            env_keys=tuple(str(k) for k in data.get("env_keys", ())),
            bundled=bool(data.get("bundled")),
        )


def resolved_words(words: Sequence[str]) -> tuple[str, ...]:
    """``command``/``args`` with ``{python}`` replaced by the running interpreter."""
    python = sys.executable or "python3"
    return tuple(word.replace(PYTHON_PLACEHOLDER, python) for word in words)


def resolved_cwd(mcp: McpTools, base: Path | None) -> str | None:
    """``cwd``, a relative one taken from ``base`` (the scenario file's folder)."""
    cwd = mcp.cwd
    if cwd is not None and base is not None and not Path(cwd).is_absolute():
        cwd = str(base / cwd)
    return cwd


def is_bundled(scenario: Scenario) -> bool:
    """Is the scenario's file (symlinks resolved) one of the bundled scenarios?"""
    try:
        return scenario.path.resolve().is_relative_to(bundled.scenarios_dir().resolve())
    except (OSError, RuntimeError):  # a symlink loop: not one of ours
        return False


def server_command(scenario: Scenario) -> ServerCommand | None:
    """What the scenario would start (None when it takes no tools from an MCP server)."""
    mcp = scenario.mcp
    if mcp is None:
        return None
    return ServerCommand(
        scenario=scenario.id,
        file=str(scenario.path),
        argv=resolved_words(mcp.command) + resolved_words(mcp.args),
        cwd=resolved_cwd(mcp, scenario.path.parent),
        env_keys=tuple(sorted(mcp.env)),
        bundled=is_bundled(scenario),
    )


def commands_allowed() -> bool:
    """Are scenarios outside the bundled set allowed to start their commands (``$CONFORMANCE_ALLOW_COMMANDS``)?"""
    return os.environ.get(ALLOW_ENV, "").strip().lower() in _TRUTHY


def refusal(scenario: Scenario) -> McpCommandRefusedError | None:
    """The error to raise instead of starting the scenario's server, or None when it may start."""
    command = server_command(scenario)
    if command is None or command.bundled or commands_allowed():
        return None
    return McpCommandRefusedError(
        f"{scenario.path}: not started: this scenario is not one of the bundled ones and its tools.mcp names a "
        f"command, which runs only when you trust the scenario: pass {ALLOW_FLAG} (run, record, certify), "
        f"--conformance-allow-commands (pytest) or set {ALLOW_ENV}=1 (`conformance validate {scenario.path}` "
        "lists the commands a scenario would start)",
        command=command.shown(),
    )


def note_started(scenario: Scenario) -> None:
    """Note in ``$CONFORMANCE_COMMAND_LOG`` (when set) that the scenario's server runs for it."""
    path = os.environ.get(LOG_ENV)
    command = server_command(scenario)
    if not path or command is None:
        return
    line = json.dumps(command.to_json(), ensure_ascii=True) + "\n"
    try:
        with open(path, "a", encoding="ascii") as log:  # one short append per start: whole lines
            log.write(line)
    except OSError:  # the log is for the report; a start never fails for it
        return


class CommandLog:
    """The servers started while a ``command_policy`` block ran (read with ``commands``)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._closed: tuple[ServerCommand, ...] | None = None

    def commands(self) -> tuple[ServerCommand, ...]:
        """Each scenario's command that ran, once, sorted by scenario id (also after the block)."""
        if self._closed is not None:
            return self._closed
        try:
            lines = self.path.read_text(encoding="ascii").splitlines()
        except OSError:
            return ()
        found: dict[tuple[str, tuple[str, ...]], ServerCommand] = {}
        for line in lines:
            try:
                command = ServerCommand.from_json(json.loads(line))
            except (ValueError, KeyError, TypeError):  # a line cut by a killed worker
                continue
            found.setdefault((command.scenario, command.argv), command)
        return tuple(found[key] for key in sorted(found))

    def close(self) -> None:
        """Read the log for good (its file goes away with the block)."""
        if self._closed is None:
            self._closed = self.commands()


@contextmanager
def command_policy(*, allow: bool) -> Iterator[CommandLog]:
    """Inside the block: scenarios outside the bundled set may start their commands when ``allow``
    (an ``$CONFORMANCE_ALLOW_COMMANDS`` already set stays in force), and every start is noted in
    the yielded log. The environment is restored when the block ends."""
    saved = {name: os.environ.get(name) for name in (ALLOW_ENV, LOG_ENV)}
    with tempfile.TemporaryDirectory(prefix="conformance-commands-") as folder:
        path = Path(folder) / "started.jsonl"
        path.touch()
        os.environ[LOG_ENV] = str(path)
        if allow:
            os.environ[ALLOW_ENV] = "1"
        log = CommandLog(path)
        try:
            yield log
        finally:
            log.close()
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
