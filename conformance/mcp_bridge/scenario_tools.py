"""A scenario's tools from its MCP server: the edge that joins scenarios and the MCP bridge.

A scenario with ``tools: {mcp: ...}`` (``Scenario.mcp``) has no tools until its server runs.
``open_scenario_tools`` starts the server (``conformance.mcp_bridge.client.McpSession``), lists
its tools through every ``tools/list`` page, keeps the ``select``-ed ones in that order, and
yields the scenario with those tools and an executor for the turns with ``tool_results: mcp``::

    with open_scenario_tools(scenario) as (ready, executor):
        outcome = run_conversation(ready, adapter, transport, mode="stream", executor=executor)

The executor sends each decoded call (its MCP name and arguments) to ``tools/call`` and returns
the real result, the call's id attached. A tool's own failure (``isError``), a JSON-RPC error
(an unknown tool) and a result the client refused are results (``conformance.mcp_bridge``'s
error channels). A call that takes longer than ``tools.mcp.timeout`` seconds is a result too: the
``client`` channel, with the text ``MCP tool call timed out after N s`` (``timeout_result``); the
request is cancelled on the server and the session goes on. Only a server that fails to start or
dies raises ``McpServerError`` (with its command and the tail of its stderr); the executor then
keeps it in ``failure`` and raises it again on every later call.

``{python}`` in ``command``/``args`` becomes the running interpreter; a relative ``cwd`` is taken
from the scenario file's folder. The ``mcp`` SDK is imported only when a server starts.

Every start asks the trust gate first (``conformance.mcp_bridge.trust``): a scenario outside the
bundled set starts its command only when commands are allowed, else ``McpCommandRefusedError`` (an
``McpServerError``) is raised and nothing starts; each scenario served is noted for the report.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from conformance.errors import McpServerError, McpTimeoutError, ScenarioError, UsageError
from conformance.mcp_bridge import trust
from conformance.mcp_bridge.progress import ProgressLog
from conformance.model import Text, Tool, ToolCall, ToolResult
from conformance.scenarios.problems import ScenarioProblem, closest
from conformance.scenarios.values import McpTools, Scenario

if TYPE_CHECKING:
    from conformance.mcp_bridge.client import McpServerSpec, McpSession

__all__ = [
    "DEFAULT_START_TIMEOUT",
    "McpExecutor",
    "McpPool",
    "not_offered_result",
    "open_scenario_tools",
    "select_tools",
    "server_spec",
    "timeout_result",
    "unparsed_arguments_result",
]

DEFAULT_START_TIMEOUT = 120.0
"""Seconds the server has to start, answer ``initialize`` and list its tools."""

_MCP_KEY = "mcp"  # conformance.mcp_bridge._convert.MCP_KEY, without importing the SDK-side package


def server_spec(mcp: McpTools, *, base: Path | None = None, transport: str | None = None) -> McpServerSpec:
    """How to start (or reach) the server of ``tools.mcp``: ``{python}`` resolved, ``cwd`` relative to
    ``base``, ``url`` and ``headers`` as written (``{port}`` and ``${VAR}`` are resolved when the session
    opens); the bundled server over Streamable HTTP when ``transport`` (default: the run's
    ``--mcp-transport``) is ``http`` (``trust.effective_mcp``)."""
    from conformance.mcp_bridge.client import McpServerSpec

    mcp = trust.effective_mcp(mcp, transport)
    return McpServerSpec(
        command=trust.resolved_words(mcp.command),
        args=trust.resolved_words(mcp.args),
        env=dict(mcp.env),
        cwd=trust.resolved_cwd(mcp, base),
        url=mcp.url,
        headers=dict(mcp.headers),
    )


def _permit(scenario: Scenario) -> None:
    """Raise ``McpCommandRefusedError`` when the scenario may not start its command (the trust gate)."""
    refused = trust.refusal(scenario)
    if refused is not None:
        raise refused


def select_tools(listed: Sequence[Tool], select: Sequence[str] | None, scenario: Scenario) -> tuple[Tool, ...]:
    """The tools ``select`` names, in its order (every listed tool when None).

    A name the server does not offer raises ``ScenarioError`` naming it, the closest offered
    name, and the file.
    """
    if select is None:
        return tuple(listed)
    by_name = {tool.name: tool for tool in listed}
    problems = [
        ScenarioProblem(
            path=scenario.path,
            pointer=f"/tools/mcp/select/{i}",
            message=f"select names {name!r}, which the MCP server does not offer",
            expected="one of: " + (", ".join(by_name) or "(the server lists no tools)"),
            hint=closest(name, by_name) or "fix the name, or remove it from select",
        )
        for i, name in enumerate(select)
        if name not in by_name
    ]
    if problems:
        raise ScenarioError(problems)
    return tuple(by_name[name] for name in select)


def timeout_result(call: ToolCall, seconds: float) -> ToolResult:
    """What the model sees when ``tools/call`` takes longer than ``seconds``: an error result."""
    return _client_error(call, f"MCP tool call timed out after {seconds:g} s", timeout=seconds)


def not_offered_result(call: ToolCall) -> ToolResult:
    """A call to a tool the MCP server's current list lacks (removed after ``notifications/tools/list_changed``,
    or never offered): not sent; the model reads why. A client calls the tools the server lists (MCP
    2025-11-25 server/tools: a client lists tools again on ``list_changed``)."""
    return _client_error(call, f"the tool was not called: {call.name!r} is not in the MCP server's current tool list")


def unparsed_arguments_result(call: ToolCall) -> ToolResult:
    """A call whose arguments are not a JSON object is not sent; the model reads why."""
    reason = call.arguments_error or "the arguments are not a JSON object"
    return _client_error(call, f"the tool was not called: its arguments could not be read ({reason})")


def _client_error(call: ToolCall, text: str, **error: object) -> ToolResult:
    """An error result on the ``client`` channel answering ``call`` with ``text`` (``error``: more details)."""
    return ToolResult(
        call_id=call.id,
        name=call.name,
        content=(Text(text=text),),
        is_error=True,
        provider_details={_MCP_KEY: {"error_channel": "client", "error": {"message": text, **error}}},
    )


class McpExecutor:
    """Answers a ``ToolCall`` with the server's ``tools/call`` result (``run_conversation``'s executor)."""

    def __init__(
        self,
        session: McpSession,
        *,
        timeout: float,
        reset_timeout_on_progress: bool = False,
        max_total_timeout: float | None = None,
    ) -> None:
        self.session = session
        self.timeout = timeout
        """Seconds per call (without an answer, and without progress with ``reset_timeout_on_progress``)."""
        self.reset_timeout_on_progress = reset_timeout_on_progress
        """Each ``notifications/progress`` for a call restarts its ``timeout`` (``reset_timeout_on_progress``)."""
        self.max_total_timeout = max_total_timeout
        """Seconds a call may take in all (None: ``conformance.mcp_bridge.progress``'s default bound)."""
        self.failure: McpServerError | None = None
        """The error of a server that died or broke the protocol; every later call raises it."""
        self.calls = 0
        """How many calls reached the server."""
        self.on_failure: Callable[[], None] | None = None
        """Called once when the server fails (a pool drops the session)."""

    @classmethod
    def for_tools(cls, session: McpSession, mcp: McpTools) -> McpExecutor:
        """The executor of a scenario's ``tools.mcp``: its ``timeout`` and progress options."""
        return cls(
            session,
            timeout=mcp.timeout,
            reset_timeout_on_progress=mcp.reset_timeout_on_progress,
            max_total_timeout=mcp.max_total_timeout,
        )

    def __call__(self, call: ToolCall) -> ToolResult:
        if self.failure is not None:
            raise self.failure
        if call.arguments is None:
            return unparsed_arguments_result(call)
        if self._offered is not None and call.name not in self._offered:
            return not_offered_result(call)  # a tool the server's current list lacks is not called
        self.calls += 1
        log = ProgressLog()
        try:
            return self.session.call_tool(
                call.name,
                call.arguments,
                call_id=call.id,
                timeout=self.timeout,
                reset_timeout_on_progress=self.reset_timeout_on_progress,
                max_total_timeout=self.max_total_timeout,
                log=log,
            )
        except McpTimeoutError:
            seconds = log.expired.seconds if log.expired is not None else self.timeout
            return log.attach(timeout_result(call, seconds))  # what arrived before it timed out
        except McpServerError as exc:
            self.failure = exc
            if self.on_failure is not None:
                self.on_failure()
            raise

    # ------------------------------------------------ tool lists that change (``tools.mcp.list_changes``)

    _opener: Callable[[], McpSession] | None = None
    _scenario: Scenario | None = None
    _unused = False
    _seen_changes = 0
    _offered: frozenset[str] | None = None

    def follow_list_changes(self, scenario: Scenario, opener: Callable[[], McpSession]) -> None:
        """Own the sessions from now on: one for each conversation (``conversation``), the current one
        unused yet, each next one opened by ``opener``; the tools followed through
        ``notifications/tools/list_changed`` (``changed_tools``)."""
        self._opener = opener
        self._scenario = scenario
        self._unused = True
        self._seen_changes = self.session.list_changed_count

    @property
    def follows_list_changes(self) -> bool:
        return self._opener is not None

    @contextmanager
    def conversation(self) -> Iterator[tuple[Tool, ...] | None]:
        """One conversation: with ``follow_list_changes``, on a session of its own (a new one unless
        the current one has served none), closed when the conversation ends; yields the tools it
        starts with (select applied). Without, the shared session as it is, and None (the
        scenario's tools)."""
        if self._opener is None or self._scenario is None:
            yield None
            return
        if not self._unused:
            self.session = self._opener()
        self._unused = False
        try:
            self._seen_changes = self.session.list_changed_count
            mcp = self._scenario.mcp
            tools = select_tools(self.session.list_tools(), mcp.select if mcp else None, self._scenario)
            self._offered = frozenset(tool.name for tool in tools)
            yield tools
        finally:
            self.session.close()

    def changed_tools(self) -> tuple[Tool, ...] | None:
        """After a turn's calls: the tools the next request offers when the server announced a new list
        (``notifications/tools/list_changed`` since the last listing), else None. ``select`` filters the
        new list in its order, leaving out what the server no longer lists. Only an executor that
        follows list changes answers (a shared session's list is every conversation's)."""
        if self._opener is None or self.failure is not None:
            return None
        count = self.session.list_changed_count
        if count == self._seen_changes:
            return None
        listed = self.session.list_tools()
        self._seen_changes = count
        mcp = self._scenario.mcp if self._scenario is not None else None
        by_name = {tool.name: tool for tool in listed}
        tools = listed if mcp is None or mcp.select is None else tuple(by_name[n] for n in mcp.select if n in by_name)
        self._offered = frozenset(tool.name for tool in tools)
        return tools


@contextmanager
def open_scenario_tools(
    scenario: Scenario, *, start_timeout: float = DEFAULT_START_TIMEOUT
) -> Iterator[tuple[Scenario, McpExecutor]]:
    """Start ``scenario``'s MCP server; yield the scenario with its tools, and the executor.

    The server is stopped when the block ends, however it ends. Raises ``McpServerError`` (with
    the command and the server's stderr tail) when the server cannot start, list its tools within
    ``start_timeout`` seconds, or dies; ``ScenarioError`` when ``select`` names a tool it does not
    offer; ``UsageError`` when the scenario takes no tools from an MCP server.
    """
    if scenario.mcp is None:
        raise UsageError(f"scenario {scenario.id} takes no tools from an MCP server (no tools: {{mcp: ...}})")
    _permit(scenario)
    from conformance.mcp_bridge.client import McpSession

    spec = server_spec(scenario.mcp, base=scenario.path.parent)
    with McpSession(spec, timeout=start_timeout) as session:
        trust.note_started(scenario)
        tools = select_tools(session.list_tools(), scenario.mcp.select, scenario)
        executor = McpExecutor.for_tools(session, scenario.mcp)
        if scenario.mcp.list_changes:  # a session per conversation, each closed when it ends
            executor.follow_list_changes(scenario, lambda: _opened(spec, start_timeout))
        yield replace(scenario, tools=tools), executor


def _opened(spec: McpServerSpec, start_timeout: float) -> McpSession:
    """A new session to the server of ``spec``, open (``McpServerError`` when it cannot start)."""
    from conformance.mcp_bridge.client import McpSession

    session = McpSession(spec, timeout=start_timeout)
    session.open()
    return session


class McpPool:
    """MCP servers shared across the pairs of one run: one server per distinct launch spec, started
    on first use (or ahead of time by ``prestart``, in the background) and stopped by ``close`` (a
    context manager). The bundled server is stateless for the calls scenarios make, so sharing it
    changes no result; it saves a start (about 1.5 s) per (adapter, scenario) pair. A server that
    failed is dropped and started again on next use."""

    def __init__(self, *, start_timeout: float = DEFAULT_START_TIMEOUT) -> None:
        self.start_timeout = start_timeout
        self._lock = threading.Lock()
        self._starts: dict[object, Future[tuple[McpSession, tuple[Tool, ...]]]] = {}
        self._owned: list[McpExecutor] = []
        """Executors with sessions of their own (``list_changes``): their last session is closed with the pool."""

    def prestart(self, scenarios: Sequence[Scenario]) -> None:
        """Start, in background threads, the servers ``scenarios`` will need (those the trust gate lets start)."""
        for scenario in scenarios:
            if scenario.mcp is not None and not scenario.mcp.list_changes and trust.refusal(scenario) is None:
                self._start(server_spec(scenario.mcp, base=scenario.path.parent))

    def _start(self, spec: McpServerSpec) -> tuple[object, Future[tuple[McpSession, tuple[Tool, ...]]]]:
        key = (
            spec.command,
            spec.args,
            tuple(sorted(spec.env.items())),
            spec.cwd,
            spec.url,
            tuple(sorted(spec.headers.items())),
        )
        with self._lock:
            future = self._starts.get(key)
            if future is None:
                future = Future()
                self._starts[key] = future
                threading.Thread(target=self._launch, args=(spec, future), name="mcp-start", daemon=True).start()
        return key, future

    def _launch(self, spec: McpServerSpec, future: Future[tuple[McpSession, tuple[Tool, ...]]]) -> None:
        from conformance.mcp_bridge.client import McpSession

        try:
            session = McpSession(spec, timeout=self.start_timeout)
            session.__enter__()
            try:
                tools = tuple(session.list_tools())
            except BaseException:
                session.__exit__(None, None, None)
                raise
        except BaseException as exc:  # handed to whoever opens this server
            future.set_exception(exc)
        else:
            future.set_result((session, tools))

    def open(self, scenario: Scenario) -> tuple[Scenario, McpExecutor]:
        """The scenario with its MCP tools, and an executor on the shared session."""
        if scenario.mcp is None:
            raise UsageError(f"scenario {scenario.id} takes no tools from an MCP server (no tools: {{mcp: ...}})")
        _permit(scenario)
        if scenario.mcp.list_changes:  # never the shared session: one of its own per conversation
            return self._own(scenario, scenario.mcp)
        key, future = self._start(server_spec(scenario.mcp, base=scenario.path.parent))
        try:
            session, tools = future.result(timeout=self.start_timeout + 5)
        except BaseException:
            with self._lock:
                if self._starts.get(key) is future:
                    del self._starts[key]  # the next pair tries again
            raise
        trust.note_started(scenario)
        executor = McpExecutor.for_tools(session, scenario.mcp)
        executor.on_failure = lambda: self._drop(key)
        return replace(scenario, tools=select_tools(tools, scenario.mcp.select, scenario)), executor

    def _own(self, scenario: Scenario, mcp: McpTools) -> tuple[Scenario, McpExecutor]:
        """A scenario whose calls change the server's tool list: its first session opened here (it lists
        the tools the scenario starts with and serves the first conversation), then one per conversation."""
        spec = server_spec(mcp, base=scenario.path.parent)
        session = _opened(spec, self.start_timeout)
        try:
            tools = select_tools(session.list_tools(), mcp.select, scenario)
        except BaseException:
            session.close()
            raise
        trust.note_started(scenario)
        executor = McpExecutor.for_tools(session, mcp)
        executor.follow_list_changes(scenario, lambda: _opened(spec, self.start_timeout))
        with self._lock:
            self._owned.append(executor)
        return replace(scenario, tools=tools), executor

    def _drop(self, key: object) -> None:
        with self._lock:
            future = self._starts.pop(key, None)
        if future is not None and future.done() and future.exception() is None:
            future.result()[0].__exit__(None, None, None)

    def close(self) -> None:
        with self._lock:
            keys = list(self._starts)
            owned, self._owned = self._owned, []
        for executor in owned:  # a session no conversation used (its pair's cases ended before one ran)
            executor.session.close()
        for key in keys:
            with self._lock:
                future = self._starts.get(key)
            if future is not None:
                with contextlib.suppress(BaseException):  # a start in flight finishes first
                    future.result(timeout=self.start_timeout + 5)
            self._drop(key)

    def __enter__(self) -> McpPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
