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

**Remote servers.** A scenario whose ``tools.mcp.url`` (Streamable HTTP) is not a loopback address
(127.0.0.0/8, ::1, ``localhost``) sends its tool calls, and the headers it names from your
environment, to another machine. It runs only when remote MCP servers are allowed:
``--allow-remote-mcp`` (run, record, drift, certify), ``--conformance-allow-remote-mcp`` (pytest) or
``CONFORMANCE_ALLOW_REMOTE_MCP=1``; otherwise its cases are ERRORs raising ``McpRemoteRefusedError``
(an ``McpCommandRefusedError``) naming the file, the URL and the flag; nothing is contacted. This
holds for bundled scenarios too (none names a remote URL).

**The transport of the bundled server.** ``run --mcp-transport http`` (``$CONFORMANCE_MCP_TRANSPORT``,
set by ``command_policy``) serves every scenario whose server is the bundled one
(``{python} -m conformance mcp-server`` and no ``url``) over Streamable HTTP instead: ``effective_mcp``
adds ``--transport http --port {port}`` and the URL ``http://127.0.0.1:{port}/mcp``. Other servers
run as written.

``server_command`` says what a scenario would start or contact (``conformance validate`` lists it);
the gate (``refusal``) is asked by ``conformance.mcp_bridge.scenario_tools`` before any server starts.

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
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from conformance.errors import McpCommandRefusedError, McpRemoteRefusedError
from conformance.scenarios import bundled
from conformance.scenarios.values import PYTHON_PLACEHOLDER, McpTools, Scenario

__all__ = [
    "ALLOW_ENV",
    "ALLOW_FLAG",
    "ALLOW_REMOTE_ENV",
    "ALLOW_REMOTE_FLAG",
    "BUNDLED_SERVER_COMMAND",
    "LOG_ENV",
    "MCP_TRANSPORTS",
    "TRANSPORT_ENV",
    "CommandLog",
    "ServerCommand",
    "command_policy",
    "commands_allowed",
    "effective_mcp",
    "is_bundled",
    "is_loopback_url",
    "mcp_transport",
    "note_started",
    "refusal",
    "remote_allowed",
    "resolved_cwd",
    "resolved_words",
    "server_command",
    "transport_note",
]

ALLOW_ENV = "CONFORMANCE_ALLOW_COMMANDS"
"""Set to ``1`` (or ``true``/``yes``) to let scenarios outside the bundled set start their commands."""
ALLOW_FLAG = "--allow-commands"
"""The command-line flag of ``run``, ``record`` and ``certify`` that allows them."""
LOG_ENV = "CONFORMANCE_COMMAND_LOG"
"""The file every server start is noted in (set by ``command_policy``)."""
ALLOW_REMOTE_ENV = "CONFORMANCE_ALLOW_REMOTE_MCP"
"""Set to ``1`` to let scenarios reach MCP servers at URLs that are not loopback addresses."""
ALLOW_REMOTE_FLAG = "--allow-remote-mcp"
"""The command-line flag of ``run``, ``record``, ``drift`` and ``certify`` that allows them."""
TRANSPORT_ENV = "CONFORMANCE_MCP_TRANSPORT"
"""``stdio`` (default) or ``http``: the transport the bundled server is run with (``--mcp-transport``)."""
MCP_TRANSPORTS = ("stdio", "http")
"""The values of ``--mcp-transport``."""
BUNDLED_SERVER_COMMAND = (PYTHON_PLACEHOLDER, "-m", "conformance", "mcp-server")
"""``tools.mcp.command`` of a scenario served by the bundled server."""
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
    url: str | None = None
    """The Streamable HTTP endpoint (as written: ``{port}`` unresolved; userinfo and query left out)."""
    header_keys: tuple[str, ...] = ()
    """The HTTP headers the session sends (their values are never shown)."""

    @property
    def transport(self) -> str:
        """``http`` (Streamable HTTP, ``url``) or ``stdio``."""
        return "stdio" if self.url is None else "http"

    def shown(self) -> str:
        """``argv`` as a shell line, with the ``cwd`` and the names of the ``env`` variables; for
        HTTP the URL first (and the names of the headers)."""
        text = shlex.join(self.argv)
        if self.cwd is not None:
            text += f" (cwd {self.cwd})"
        if self.env_keys:
            text += f" (env {', '.join(self.env_keys)})"
        if self.url is not None:
            served = f"{self.url}" + (f" (headers {', '.join(self.header_keys)})" if self.header_keys else "")
            text = f"{served} (started by: {text})" if self.argv else served
        return text

    def to_json(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario,
            "file": self.file,
            "argv": list(self.argv),
            "cwd": self.cwd,
            "env_keys": list(self.env_keys),
            "bundled": self.bundled,
            "transport": self.transport,
            "url": self.url,
            "header_keys": list(self.header_keys),
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
            url=None if data.get("url") is None else str(data["url"]),
            header_keys=tuple(str(k) for k in data.get("header_keys", ())),
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


def mcp_transport() -> str:
    """The transport the bundled server runs with (``$CONFORMANCE_MCP_TRANSPORT``; default ``stdio``)."""
    value = os.environ.get(TRANSPORT_ENV, "").strip().lower()
    return value if value in MCP_TRANSPORTS else "stdio"


def effective_mcp(mcp: McpTools, transport: str | None = None) -> McpTools:
    """``mcp`` as this run serves it: the bundled server (``BUNDLED_SERVER_COMMAND``, no ``url``, no
    ``--transport`` of its own) over Streamable HTTP when ``transport`` (default: ``mcp_transport()``)
    is ``http``; anything else as written."""
    chosen = mcp_transport() if transport is None else transport
    if chosen != "http" or mcp.url is not None or tuple(mcp.command) != BUNDLED_SERVER_COMMAND:
        return mcp
    if "--transport" in mcp.args:
        return mcp
    return replace(mcp, args=(*mcp.args, "--transport", "http", "--port", "{port}"), url="http://127.0.0.1:{port}/mcp")


def transport_note(scenarios: Sequence[Scenario], transport: str) -> str | None:
    """One console line for ``--mcp-transport``: how many scenarios' bundled server runs over it, and
    which MCP scenarios run as written (another server, or a url of their own); None without MCP scenarios."""
    mcp = [s for s in scenarios if s.mcp is not None]
    if not mcp:
        return None
    moved = [s for s in mcp if s.mcp is not None and effective_mcp(s.mcp, transport) is not s.mcp]
    kept = sorted(s.id for s in mcp if s not in moved)
    line = f"--mcp-transport {transport}: {len(moved)} scenario(s) run the bundled MCP server over {transport}"
    if kept:
        line += f"; {len(kept)} with another MCP server run as written: {', '.join(kept)}"
    return line


def is_loopback_url(url: str) -> bool:
    """Is ``url``'s host loopback (127.0.0.0/8, ::1, ``localhost``)? ``{port}`` may stand for the port."""
    from conformance.mcp_bridge._http import is_loopback  # the SDK-free half of the HTTP edge

    return is_loopback(url.replace("{port}", "1"))


def server_command(scenario: Scenario) -> ServerCommand | None:
    """What the scenario would start or contact (None when it takes no tools from an MCP server)."""
    mcp = scenario.mcp
    if mcp is None:
        return None
    mcp = effective_mcp(mcp)
    return ServerCommand(
        scenario=scenario.id,
        file=str(scenario.path),
        argv=resolved_words(mcp.command) + resolved_words(mcp.args),
        cwd=resolved_cwd(mcp, scenario.path.parent),
        env_keys=tuple(sorted(mcp.env)),
        bundled=is_bundled(scenario),
        url=None if mcp.url is None else _shown_url(mcp.url),
        header_keys=tuple(sorted(mcp.headers)),
    )


def _shown_url(url: str) -> str:
    from conformance.mcp_bridge._http import shown_url

    return shown_url(url)


def commands_allowed() -> bool:
    """Are scenarios outside the bundled set allowed to start their commands (``$CONFORMANCE_ALLOW_COMMANDS``)?"""
    return os.environ.get(ALLOW_ENV, "").strip().lower() in _TRUTHY


def remote_allowed() -> bool:
    """May scenarios reach MCP servers at URLs that are not loopback (``$CONFORMANCE_ALLOW_REMOTE_MCP``)?"""
    return os.environ.get(ALLOW_REMOTE_ENV, "").strip().lower() in _TRUTHY


def refusal(scenario: Scenario) -> McpCommandRefusedError | None:
    """The error to raise instead of starting (or contacting) the scenario's server, or None when it may."""
    command = server_command(scenario)
    if command is None:
        return None
    if command.url is not None and not is_loopback_url(command.url) and not remote_allowed():
        return McpRemoteRefusedError(
            f"{scenario.path}: not contacted: this scenario's tools.mcp.url {command.url} is not a loopback address,"
            " so its tool calls (and the headers it names) would go to another machine: pass "
            f"{ALLOW_REMOTE_FLAG} (run, record, drift, certify), --conformance-allow-remote-mcp (pytest) or set "
            f"{ALLOW_REMOTE_ENV}=1 (`conformance validate {scenario.path}` lists the servers a scenario uses)",
            command=command.shown(),
        )
    if not command.argv or command.bundled or commands_allowed():
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
def command_policy(*, allow: bool, allow_remote: bool = False, transport: str | None = None) -> Iterator[CommandLog]:
    """Inside the block: scenarios outside the bundled set may start their commands when ``allow``
    (an ``$CONFORMANCE_ALLOW_COMMANDS`` already set stays in force), scenarios may reach remote MCP
    URLs when ``allow_remote`` (likewise ``$CONFORMANCE_ALLOW_REMOTE_MCP``), the bundled server runs
    over ``transport`` (None: ``$CONFORMANCE_MCP_TRANSPORT`` as set, else stdio), and every start is
    noted in the yielded log. The environment is restored when the block ends (it carries all of it
    to worker processes)."""
    if transport is not None and transport not in MCP_TRANSPORTS:
        raise ValueError(f"transport must be one of {MCP_TRANSPORTS}, got {transport!r}")
    saved = {name: os.environ.get(name) for name in (ALLOW_ENV, LOG_ENV, ALLOW_REMOTE_ENV, TRANSPORT_ENV)}
    with tempfile.TemporaryDirectory(prefix="conformance-commands-") as folder:
        path = Path(folder) / "started.jsonl"
        path.touch()
        os.environ[LOG_ENV] = str(path)
        if allow:
            os.environ[ALLOW_ENV] = "1"
        if allow_remote:
            os.environ[ALLOW_REMOTE_ENV] = "1"
        if transport is not None:
            os.environ[TRANSPORT_ENV] = transport
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
