"""A synchronous MCP client session over stdio or Streamable HTTP: the I/O edge of the MCP bridge.

``McpSession`` runs the SDK's async ``stdio_client`` (or ``streamable_http_client`` when the spec has
a ``url``) + ``ClientSession`` on a private event loop in a daemon thread (an anyio blocking portal),
so a synchronous runner can use it::

    spec = McpServerSpec(command=[sys.executable, "-m", "conformance", "mcp-server"])
    with McpSession(spec, timeout=120.0) as session:
        tools = session.list_tools()                      # every page, following nextCursor
        result = session.call_tool("getTime", {"offset_ms": 0}, call_id="call_1")

Failures are typed (``conformance.errors``): a server that cannot start, exits, or answers outside
the protocol raises ``McpServerError`` with the last lines of its stderr; a request without an
answer in time raises ``McpTimeoutError`` (the request is cancelled on the server with
``notifications/cancelled`` and the session stays usable). A tool's own failure (``isError``)
and a JSON-RPC error answering ``tools/call`` (unknown tool ...) are *results*, kept apart by
``conformance.mcp_bridge._convert.error_channel``.

stdout is the protocol's: a server MUST NOT write anything else there (MCP 2025-11-25, transports,
stdio). The lines that are not JSON-RPC (logs, a banner, binary, read with U+FFFD for bytes that
are not UTF-8) are taken out of the session's stream and summarised, never one traceback each (the
SDK's own log of each is dropped): the first ``JUNK_SHOWN`` are logged as warnings naming the
server's command and quoted in the error of the next failure, then only counted, and the count is
logged when the session closes. A server that writes more than ``JUNK_LIMIT`` such lines is broken
beyond a stray log line: the session stops reading it and every request fails with
``McpServerError`` saying so.

Lifetime: closing the session (or leaving the ``with`` block, by return, exception or
KeyboardInterrupt) closes the server's stdin, waits, then terminates its process group (the SDK's
shutdown). If our process is killed, the server dies with it (``_spawn``: PR_SET_PDEATHSIG on
Linux). Sessions still open at interpreter exit are closed by an ``atexit`` hook.

Streamable HTTP (MCP 2025-11-25, basic/transports): with ``url`` the session connects there (the
server's ``Mcp-Session-Id`` is kept and sent by the SDK; closing sends ``DELETE`` to end the
session). ``headers`` are sent on every request, ``${VAR}`` read from the environment at ``open``
(values never reach a message). ``{port}`` in ``command``/``args``/``url`` is one free loopback
port. With a ``command`` too, the command is started first (``_http.HttpServerProcess``: the same
guard, its own process group, output to the stderr log), the session waits until the URL accepts
connections (within the timeout), and closing stops it (SIGTERM, then SIGKILL). Every response is
cut past ``_http.MAX_RESPONSE_BYTES``; a server that ends the session (HTTP 404 for its
``Mcp-Session-Id``) or resets the connection raises ``McpServerError`` naming the URL; a request
without an answer raises ``McpTimeoutError`` as over stdio.
"""

from __future__ import annotations

import atexit
import concurrent.futures
import contextlib
import logging
import shlex
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractContextManager, asynccontextmanager
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Literal, TextIO, TypeVar, cast
from urllib.parse import urlsplit

import anyio
import httpx2
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client
from mcp import types as mcp_types
from mcp.client.stdio import get_default_environment
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from conformance import __version__
from conformance.errors import McpServerError, McpTimeoutError, UsageError, WireFormatError
from conformance.mcp_bridge import _convert, _http, progress
from conformance.mcp_bridge._spawn import StderrLog, guarded_argv
from conformance.model import JSONObject, Tool, ToolResult

__all__ = ["DEFAULT_TIMEOUT", "JUNK_LIMIT", "JUNK_SHOWN", "McpServerSpec", "McpSession"]

logger = logging.getLogger("conformance.mcp_bridge")

DEFAULT_TIMEOUT = 120.0
"""Seconds to wait for the server's answer to one request (and for start-up)."""

JUNK_SHOWN = 5
"""Lines a server wrote to stdout that are not JSON-RPC, logged and quoted one by one; the rest are counted."""
JUNK_LIMIT = 1000
"""Lines a server may write to stdout that are not JSON-RPC before the session stops reading it."""

_STDERR_LINES = 20
_MAX_PAGES = 1000
_JUNK_LINE_CHARS = 200
_SDK_PARSE_FAILURE = "Failed to parse JSONRPC message from server"
# Extra seconds the calling thread waits beyond the request timeout before giving up on the
# event-loop thread itself (a backstop: the timeout proper is enforced inside the loop).
_WATCHDOG_GRACE = 15.0
_T = TypeVar("_T")


@dataclass(frozen=True, kw_only=True)
class McpServerSpec:
    """How to reach an MCP server: over stdio, ``command + args`` with ``env`` and ``cwd``; over
    Streamable HTTP, ``url`` (with ``headers``), and with a ``command`` too, the server to start first.

    The server's environment is the SDK's safe subset of ours (``HOME``, ``LOGNAME``, ``PATH``,
    ``SHELL``, ``TERM``, ``USER``) plus ``env``; nothing else leaks to it.
    """

    command: Sequence[str] = ()
    """The program and its leading arguments (a string is one program name; empty: ``url`` only)."""
    args: Sequence[str] = ()
    """More arguments, appended to ``command``."""
    env: Mapping[str, str] = field(default_factory=dict)
    """Variables added to the server's environment."""
    cwd: str | None = None
    """Working directory of the server (default: ours)."""
    url: str | None = None
    """The Streamable HTTP endpoint (None: stdio); ``{port}`` is a free loopback port."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """HTTP headers for ``url``; ``${VAR}`` is read from the environment when the session opens."""

    def __post_init__(self) -> None:
        command = (self.command,) if isinstance(self.command, str) else tuple(self.command)
        args = (self.args,) if isinstance(self.args, str) else tuple(self.args)
        if self.url is None and (not command or not command[0]):
            raise UsageError(
                "an MCP server needs a command (stdio), e.g. command: [npx, -y, some-mcp-server], or a url"
                " (Streamable HTTP)"
            )
        if command and not command[0]:
            raise UsageError("an MCP server command cannot start with an empty word")
        for value in (
            *command,
            *args,
            *self.env.keys(),
            *self.env.values(),
            *self.headers.keys(),
            *self.headers.values(),
        ):
            if not isinstance(value, str):
                raise UsageError(f"MCP server command, args, env and headers must be strings, got {value!r}")
        if self.url is not None and urlsplit(self.url).scheme not in ("http", "https"):
            raise UsageError(f"an MCP server url must be http:// or https://, got {_http.shown_url(self.url)!r}")
        object.__setattr__(self, "command", command)
        object.__setattr__(self, "args", args)
        object.__setattr__(self, "env", dict(self.env))
        object.__setattr__(self, "headers", dict(self.headers))

    @property
    def argv(self) -> tuple[str, ...]:
        """The full command line (empty for a ``url`` alone)."""
        return (*self.command, *self.args)

    @property
    def transport(self) -> Literal["stdio", "http"]:
        """``http`` (Streamable HTTP) when there is a ``url``, else ``stdio``."""
        return "stdio" if self.url is None else "http"

    def describe(self) -> str:
        """The command line as a shell would show it; for HTTP the URL (without userinfo or query),
        then the command that serves it. Header values are never part of it."""
        if self.url is None:
            return shlex.join(self.argv)
        shown = _http.shown_url(self.url)
        return f"{shown} (started by: {shlex.join(self.argv)})" if self.argv else shown


_Outcome = tuple[Literal["result"], JSONObject] | tuple[Literal["protocol"], MCPError] | tuple[Literal["client"], str]


class McpSession(AbstractContextManager["McpSession"]):
    """One running MCP server and an initialized client session to it (synchronous facade)."""

    def __init__(self, spec: McpServerSpec, *, timeout: float = DEFAULT_TIMEOUT, stderr_lines: int = _STDERR_LINES):
        if timeout <= 0:
            raise UsageError(f"the MCP timeout must be positive, got {timeout}")
        self.spec = spec
        self.timeout = timeout
        self.stderr_lines = stderr_lines
        self.server_info: Mapping[str, Any] = {}
        """The server's ``serverInfo`` (name, version ...) from ``initialize``."""
        self.protocol_version: str | None = None
        self.instructions: str | None = None
        self.list_changed_count = 0
        """How many ``notifications/tools/list_changed`` arrived."""
        self._stderr: StderrLog | None = None
        self._portal_cm: AbstractContextManager[BlockingPortal] | None = None
        self._portal: BlockingPortal | None = None
        self._connection: AbstractContextManager[ClientSession] | None = None
        self._session: ClientSession | None = None
        self._tools: tuple[Tool, ...] | None = None
        self._tools_stale = True
        self._closed = False
        self._stdout_junk: list[str] = []
        """The first ``JUNK_SHOWN`` lines the server wrote to stdout that are not JSON-RPC (quoted)."""
        self._junk_count = 0
        self._junk_cut = False
        self.url: str | None = spec.url
        """The Streamable HTTP endpoint, ``{port}`` resolved at ``open`` (None: stdio)."""
        self.argv: tuple[str, ...] = spec.argv
        """The server's command line, ``{port}`` resolved at ``open``."""
        self._headers: dict[str, str] = {}
        self._process: _http.HttpServerProcess | None = None
        self._bounded: _http.BoundedTransport | None = None

    # ---------------------------------------------------------------- lifecycle

    def __enter__(self) -> McpSession:
        self.open()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def open(self) -> None:
        """Start the server and initialize the session (``McpServerError`` when it cannot)."""
        if self._session is not None or self._closed:
            raise UsageError("an McpSession opens once; make a new one")
        self._stderr = StderrLog()
        try:
            self._portal_cm = start_blocking_portal(name=f"mcp-session:{(*self.spec.argv, self.spec.url or '')[0]}")
            self._portal = self._portal_cm.__enter__()
            self._start_http_server()
            self._connection = self._portal.wrap_async_context_manager(self._connect())
            self._session = self._connection.__enter__()
        except BaseException:
            self._connection = None
            self.close()
            raise
        _OPEN.add(self)

    def close(self) -> None:
        """Stop the server (stdin closed, then its process group terminated) and the loop thread."""
        if self._closed:
            return
        self._closed = True
        _OPEN.discard(self)
        try:
            if self._connection is not None:
                connection, self._connection = self._connection, None
                with contextlib.suppress(Exception):  # a server that already died has nothing left to stop
                    connection.__exit__(None, None, None)
        finally:
            self._session = None
            if self._junk_count > len(self._stdout_junk) and not self._junk_cut:
                logger.warning(
                    "MCP server %s: and %d more lines on stdout that were not JSON-RPC",
                    self._shown_command(),
                    self._junk_count - len(self._stdout_junk),
                )
            if self._portal is not None:
                # Cancel what is left: a call whose future we never got (Ctrl-C inside start_task_soon)
                # would otherwise keep the loop thread, and this close, waiting.
                with contextlib.suppress(RuntimeError):  # the portal already stopped
                    self._portal.call(self._portal.stop, True)
            if self._portal_cm is not None:
                portal_cm, self._portal_cm = self._portal_cm, None
                portal_cm.__exit__(None, None, None)
            if self._process is not None:
                process, self._process = self._process, None
                process.stop()
            if self._stderr is not None:
                self._stderr.close()

    def describe(self) -> str:
        """The server as errors name it: its command line, or its URL (and the command serving it),
        ``{port}`` resolved; never a header value."""
        if self.url is None:
            return shlex.join(self.argv)
        shown = _http.shown_url(self.url)
        return f"{shown} (started by: {shlex.join(self.argv)})" if self.argv else shown

    def _start_http_server(self) -> None:
        """For HTTP: resolve ``{port}`` and the headers, start the command (if any) and wait for the URL."""
        if self.spec.url is None:
            return
        words = (*self.spec.argv, self.spec.url)
        port = _http.free_port() if any(_http.PORT_PLACEHOLDER in word for word in words) else None
        if port is not None:
            self.argv = _http.with_port(self.spec.argv, port)
            self.url = self.spec.url.replace(_http.PORT_PLACEHOLDER, str(port))
        try:
            self._headers = _http.resolve_headers(self.spec.headers)
        except _http.MissingVariableError as missing:
            raise self._error(
                f"the header {missing.header!r} names ${{{missing.variable}}}, which is not set in the environment:"
                f" set {missing.variable} (the value is sent to the server, never shown) or drop the header"
            ) from None
        if not self.argv:
            return
        assert self._stderr is not None and self.url is not None
        env = {**get_default_environment(), **self.spec.env}
        argv, cwd, stderr = self.argv, self.spec.cwd, self._stderr
        assert self._portal is not None
        try:
            # Started from the event-loop thread, which lives as long as the session: the guard's
            # PR_SET_PDEATHSIG fires when the *thread* that started the server ends (prctl(2)), and
            # the thread calling open (a pool's start thread) may end first.
            self._process = self._portal.call(lambda: _http.HttpServerProcess(argv, env=env, cwd=cwd, stderr=stderr))
        except OSError as exc:
            raise self._error(f"could not start the MCP server: {exc}") from exc
        problem = self._process.wait_ready(self.url, timeout=self.timeout)
        if problem is not None:
            raise self._error(f"start-up: {problem}")

    @property
    def closed(self) -> bool:
        return self._closed

    def stderr_tail(self, lines: int | None = None) -> str:
        """The last lines the server wrote to stderr."""
        return self._stderr.tail(self.stderr_lines if lines is None else lines) if self._stderr else ""

    # ---------------------------------------------------------------- tools

    @property
    def tools(self) -> tuple[Tool, ...]:
        """The server's tools; listed again after ``notifications/tools/list_changed``."""
        if self._tools is None or self._tools_stale:
            return self.list_tools()
        return self._tools

    def list_tools(self) -> tuple[Tool, ...]:
        """Every tool, following ``nextCursor`` through every page."""
        pages = self._run(self._list_pages, timeout=self.timeout, what="tools/list")
        tools: list[Tool] = []
        seen: set[str] = set()
        for number, page in enumerate(pages):
            try:
                page_tools, _ = _convert.tools_page_from_wire(page, page=number)
            except WireFormatError as exc:
                raise self._error(f"the MCP server sent an invalid tools/list page: {exc}") from exc
            for tool in page_tools:
                if tool.name in seen:
                    raise self._error(f"the MCP server listed the tool {tool.name!r} twice (tools/list page {number})")
                seen.add(tool.name)
                tools.append(tool)
        self._tools = tuple(tools)
        return self._tools

    def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        call_id: str = "",
        timeout: float | None = None,
        reset_timeout_on_progress: bool = False,
        max_total_timeout: float | None = None,
        log: progress.ProgressLog | None = None,
    ) -> ToolResult:
        """Call a tool; its result, a tool error (``isError``) or a protocol error, as a ``ToolResult``.

        The request carries a ``progressToken`` (MCP basic/utilities/progress; the SDK uses the
        request id): the ``notifications/progress`` that arrive for it are kept in ``log`` (a new one
        when None) and with the result, ``provider_details["mcp"]["progress"]`` (a list of
        ``{progress, total?, message?}``; ``progress_count`` beside it when more arrived than
        ``progress.PROGRESS_KEPT``).

        Raises ``McpTimeoutError`` after ``timeout`` seconds (default: the session's) without an
        answer; with ``reset_timeout_on_progress`` each progress notification restarts that clock,
        and ``max_total_timeout`` (default ``progress.DEFAULT_MAX_TOTAL_FACTOR`` x ``timeout``)
        bounds the call in all (``progress.CallDeadline``; ``log.expired`` says which bound ran
        out). The timed-out request is cancelled on the server with ``notifications/cancelled``
        (the SDK sends it when the call is abandoned) and a late answer is dropped (the SDK no
        longer waits for its id). Raises ``McpServerError`` when the server is gone.
        """
        policy = progress.ProgressPolicy(
            timeout=self.timeout if timeout is None else timeout,
            reset_on_progress=reset_timeout_on_progress,
            max_total=max_total_timeout,
        )
        log = progress.ProgressLog() if log is None else log
        outcome = self._run(
            self._call, name, dict(arguments or {}), policy, log, timeout=policy.total_limit, what=f"tools/call {name}"
        )
        if outcome[0] == "protocol":
            error = outcome[1]
            result = _convert.protocol_error_result(
                code=error.code, message=error.message, data=error.data, call_id=call_id, name=name
            )
        elif outcome[0] == "client":
            result = _convert.client_error_result(reason=outcome[1], call_id=call_id, name=name)
        else:
            try:
                result = _convert.tool_result_from_wire(outcome[1], call_id=call_id, name=name)
            except WireFormatError as exc:
                raise self._error(f"the MCP server sent an invalid tools/call result: {exc}") from exc
        return log.attach(result)

    # ---------------------------------------------------------------- the async side (event-loop thread)

    @asynccontextmanager
    async def _streams(self) -> AsyncIterator[tuple[Any, Any]]:
        """The transport's read and write streams: stdio (junk lines taken out) or Streamable HTTP."""
        assert self._stderr is not None
        if self.url is not None:
            self._bounded = _http.BoundedTransport()
            timeout = httpx2.Timeout(min(self.timeout, 30.0), read=300.0)  # the SDK's read timeout for streams
            client = httpx2.AsyncClient(
                headers=self._headers, timeout=timeout, transport=self._bounded, trust_env=False
            )
            async with client, streamable_http_client(self.url, http_client=client) as (read, write):
                yield read, write
            return
        argv = guarded_argv(self.argv)
        params = StdioServerParameters(
            command=argv[0],
            args=argv[1:],
            env=dict(self.spec.env),
            cwd=self.spec.cwd,
            encoding_error_handler="replace",  # binary on stdout is junk lines, not the reader's end
        )
        async with stdio_client(params, errlog=cast(TextIO, self._stderr.file)) as (read, write):
            yield _JsonRpcOnly(read, self._on_junk), write

    @asynccontextmanager
    async def _connect(self) -> AsyncIterator[ClientSession]:
        try:
            async with (
                self._streams() as (read, write),
                ClientSession(
                    read,
                    write,
                    message_handler=self._on_message,
                    client_info=mcp_types.Implementation(name="conformance", version=__version__),
                ) as session,
            ):
                with anyio.fail_after(self.timeout):
                    init = await session.initialize()
                self.protocol_version = init.protocol_version
                self.server_info = init.server_info.model_dump(mode="json", exclude_none=True)
                self.instructions = init.instructions
                yield session
        except McpServerError:
            raise
        except BaseException as exc:
            mapped = self._map(exc, "start-up (spawn and initialize)" if self.url is None else "start-up (initialize)")
            if mapped is None:
                raise
            raise mapped from exc

    async def _list_pages(self) -> list[JSONObject]:
        session = self._require()
        pages: list[JSONObject] = []
        cursor: str | None = None
        seen: set[str] = set()
        self._tools_stale = False  # a list_changed arriving from here on marks the new list stale again
        try:
            with anyio.fail_after(self.timeout):
                while True:
                    params = mcp_types.PaginatedRequestParams(cursor=cursor) if cursor is not None else None
                    result = await session.list_tools(params=params)
                    pages.append(result.model_dump(by_alias=True, mode="json", exclude_none=True))
                    cursor = result.next_cursor
                    if cursor is None:
                        return pages
                    if cursor in seen or len(pages) >= _MAX_PAGES:
                        raise self._error(f"tools/list pagination does not end: the cursor {cursor!r} came back")
                    seen.add(cursor)
        except McpServerError:
            raise
        except BaseException as exc:
            mapped = self._map(exc, "tools/list")
            if mapped is None:
                raise
            raise mapped from exc

    async def _call(
        self, name: str, arguments: JSONObject, policy: progress.ProgressPolicy, log: progress.ProgressLog
    ) -> _Outcome:
        session = self._require()
        clock = progress.CallDeadline(policy=policy, started=anyio.current_time())
        scope = anyio.CancelScope(deadline=clock.deadline)
        update = progress.ProgressUpdate

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            # The SDK's ProgressFnT, spawned by its dispatcher for each notifications/progress naming
            # this request's progressToken (mcp/shared/jsonrpc_dispatcher.py, notify), on this loop.
            nonlocal clock
            log.add(update(progress=progress, total=total, message=message))
            clock = clock.after_progress(anyio.current_time())
            scope.deadline = clock.deadline

        try:
            with scope:
                result = await session.call_tool(name, arguments, progress_callback=on_progress)
        except MCPError as exc:
            failure = self._http_failure(exc, f"tools/call {name}")  # a dropped session is no tool result
            if failure is not None:
                raise failure from exc
            if exc.code not in (mcp_types.CONNECTION_CLOSED, mcp_types.REQUEST_TIMEOUT):
                return ("protocol", exc)
            raise self._map(exc, f"tools/call {name}", policy.timeout) or exc from exc
        except RuntimeError as exc:
            # The SDK refused the result: structuredContent failing the tool's outputSchema, or a
            # result shape it cannot use (mcp.client.session.ClientSession.validate_tool_result).
            return ("client", str(exc))
        except BaseException as exc:
            mapped = self._map(exc, f"tools/call {name}", policy.timeout)
            if mapped is None:
                raise
            raise mapped from exc
        if scope.cancelled_caught:
            # Abandoned at the deadline: the SDK wrote notifications/cancelled for the request id
            # (reason "caller cancelled") and dropped its pending entry, so a late answer is ignored
            # (mcp/shared/jsonrpc_dispatcher.py, send_raw_request).
            log.expired = clock.expiry(max(anyio.current_time(), clock.deadline))
            reason = log.expired.describe() if log.expired is not None else "no answer in time"
            raise self._error(f"tools/call {name}: {reason}", McpTimeoutError)
        return ("result", result.model_dump(by_alias=True, mode="json", exclude_none=True))

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, mcp_types.ToolListChangedNotification):
            self._tools_stale = True
            self.list_changed_count += 1

    def _on_junk(self, failure: Exception) -> bool:
        """A stdout line the transport could not read as JSON-RPC (``failure``, its parse error): the
        usual cause is a server that logs to stdout, which MCP stdio reserves for JSON-RPC. Logged
        while it is one of the first ``JUNK_SHOWN``, counted; False past ``JUNK_LIMIT`` (stop reading)."""
        self._junk_count += 1
        if len(self._stdout_junk) < JUNK_SHOWN:
            errors = failure.errors() if isinstance(failure, ValidationError) else []
            line = errors[0].get("input") if errors else None
            shown = repr(line) if isinstance(line, str) else str(failure).split("\n")[0]
            shown = shown if len(shown) <= _JUNK_LINE_CHARS else shown[:_JUNK_LINE_CHARS] + "..."
            self._stdout_junk.append(shown)
            logger.warning(
                "MCP server %s wrote a line to stdout that is not JSON-RPC (an MCP stdio server must log to"
                " stderr): %s",
                self._shown_command(),
                shown,
            )
        if self._junk_count <= JUNK_LIMIT:
            return True
        self._junk_cut = True
        logger.warning(
            "MCP server %s: more than %d lines on stdout that are not JSON-RPC; the session stops reading it",
            self._shown_command(),
            JUNK_LIMIT,
        )
        return False

    def _shown_command(self) -> str:
        command = self.describe()
        return command if len(command) <= _JUNK_LINE_CHARS else command[:_JUNK_LINE_CHARS] + "..."

    # ---------------------------------------------------------------- plumbing

    def _require(self) -> ClientSession:
        if self._session is None:
            raise UsageError("the MCP session is not open (use `with McpSession(spec) as session:`)")
        return self._session

    def _run(self, fn: Callable[..., Awaitable[_T]], *args: Any, timeout: float, what: str) -> _T:
        """Run ``fn(*args)`` on the event-loop thread and wait for it (KeyboardInterrupt cancels it)."""
        if self._closed:
            raise UsageError("the MCP session is closed; open a new McpSession")
        if self._portal is None:
            raise UsageError("the MCP session is not open (use `with McpSession(spec) as session:`)")
        future: concurrent.futures.Future[_T] = self._portal.start_task_soon(fn, *args)
        try:
            return future.result(timeout=timeout + _WATCHDOG_GRACE)
        except concurrent.futures.TimeoutError:
            if future.done():  # the task's own (McpTimeoutError is a TimeoutError too)
                raise
            future.cancel()
            raise self._error(
                f"{what}: the MCP client's event loop did not answer within {timeout + _WATCHDOG_GRACE:g} s",
                McpTimeoutError,
            ) from None
        except BaseException:
            future.cancel()
            raise

    def _error(self, message: str, error: type[McpServerError] = McpServerError) -> McpServerError:
        if self._stdout_junk:
            more = self._junk_count - len(self._stdout_junk)
            message += (
                "; the server wrote lines to stdout that are not JSON-RPC (an MCP stdio server must log to "
                f"stderr): {', '.join(self._stdout_junk)}" + (f" and {more} more" if more else "")
            )
        return error(message, command=self.describe(), stderr_tail=self.stderr_tail())

    def _map(self, exc: BaseException, what: str, limit: float | None = None) -> McpServerError | None:
        """The ``McpServerError`` for an SDK/transport failure during ``what``; None to re-raise as is."""
        exc = _single(exc)
        if isinstance(exc, McpServerError):
            return exc
        http = self._http_failure(exc, what)
        if http is not None:
            return http
        seconds = self.timeout if limit is None else limit
        if isinstance(exc, TimeoutError) or (isinstance(exc, MCPError) and exc.code == mcp_types.REQUEST_TIMEOUT):
            return self._error(f"{what}: no answer from the MCP server within {seconds:g} s", McpTimeoutError)
        if self._junk_cut and (
            isinstance(exc, anyio.ClosedResourceError | anyio.BrokenResourceError | anyio.EndOfStream)
            or (isinstance(exc, MCPError) and exc.code == mcp_types.CONNECTION_CLOSED)
        ):
            return self._error(
                f"{what}: the MCP server wrote more than {JUNK_LIMIT} lines to stdout that are not JSON-RPC,"
                " so the session stopped reading it (MCP stdio: a server must not write anything else there)"
            )
        if isinstance(exc, MCPError) and exc.code == mcp_types.CONNECTION_CLOSED:
            return self._error(f"{what}: the MCP server closed the connection (did it exit?)")
        if isinstance(exc, MCPError):
            return self._error(f"{what}: the MCP server answered with JSON-RPC error {exc.code}: {exc.message}")
        if isinstance(exc, anyio.ClosedResourceError | anyio.BrokenResourceError | anyio.EndOfStream):
            return self._error(f"{what}: the connection to the MCP server is closed (did it exit?)")
        if isinstance(exc, OSError):
            return self._error(f"{what}: could not start the MCP server: {exc}")
        if isinstance(exc, ValidationError):
            return self._error(f"{what}: the MCP server answered outside the protocol: {exc}")
        return None

    def _http_failure(self, exc: BaseException, what: str) -> McpServerError | None:
        """The ``McpServerError`` for what only Streamable HTTP does (a response past the byte bound, a
        session the server ended, a connection refused or reset, a redirect elsewhere); None otherwise
        (and always over stdio). Read from the SDK's errors (mcp/client/streamable_http.py)."""
        if self.url is None:
            return None
        exc = _single(exc)
        url = _http.shown_url(self.url)
        # A cut response reaches the session as the SDK's parse error (a JSON body) or a closed stream
        # (SSE); an answer the server did give (unknown tool ...) stays a result.
        cut = not isinstance(exc, MCPError) or exc.code in (mcp_types.PARSE_ERROR, mcp_types.CONNECTION_CLOSED)
        if cut and self._bounded is not None and self._bounded.overflow is not None:
            return self._error(
                f"{what}: {self._bounded.overflow} (the bound on one response from an MCP server is"
                f" {self._bounded.max_bytes:,} bytes: conformance.mcp_bridge._http.MAX_RESPONSE_BYTES);"
                " the server streams more than any tool result needs: fix the server"
            )
        if isinstance(exc, MCPError):
            if exc.code == mcp_types.INVALID_REQUEST and exc.message == "Session terminated":
                return self._error(
                    f"{what}: {url} ended the MCP session (HTTP 404 for its Mcp-Session-Id): the server dropped"
                    " or expired it; a new session starts with the next run (check the server's session timeout)"
                )
            if exc.code == mcp_types.INVALID_REQUEST and exc.message.startswith("Redirect to "):
                return self._error(f"{what}: {exc.message}")
            if exc.code == mcp_types.INVALID_REQUEST and exc.message.startswith("Unexpected content type"):
                return self._error(
                    f"{what}: {url} answered with {exc.message.partition(': ')[2] or 'no content type'}, neither JSON"
                    " nor an SSE stream: is it an MCP Streamable HTTP endpoint (check the path, often /mcp)?"
                )
            if exc.code == mcp_types.METHOD_NOT_FOUND and exc.message == "Not Found":
                return self._error(
                    f"{what}: {url} answered HTTP 404 before any session: nothing serves MCP at that path"
                    " (check the URL's path, often /mcp)"
                )
            if exc.code == mcp_types.CONNECTION_CLOSED:
                return self._error(f"{what}: {url} closed the stream before answering ({exc.message})")
            return None
        if isinstance(exc, httpx2.ConnectError | httpx2.ConnectTimeout):
            return self._error(f"{what}: cannot connect to {url}: is the MCP server running there? ({exc})")
        if isinstance(exc, httpx2.TransportError):
            return self._error(f"{what}: the connection to {url} failed: {type(exc).__name__}: {exc}")
        if isinstance(exc, httpx2.HTTPStatusError):
            return self._error(f"{what}: {url} answered HTTP {exc.response.status_code}")
        return None


class _JsonRpcOnly:
    """The transport's read stream without what it could not read as JSON-RPC: each such item (the
    parse error of one stdout line) goes to ``on_junk`` instead of the session, and the stream ends
    (the session sees the connection close) when ``on_junk`` returns False."""

    def __init__(self, inner: Any, on_junk: Callable[[Exception], bool]) -> None:
        self._inner = inner
        self._on_junk = on_junk

    async def receive(self) -> SessionMessage:
        while True:
            item = await self._inner.receive()
            if not isinstance(item, Exception):
                return cast(SessionMessage, item)
            if not self._on_junk(item):
                raise anyio.EndOfStream

    def __aiter__(self) -> _JsonRpcOnly:
        return self

    async def __anext__(self) -> SessionMessage:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _JsonRpcOnly:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


class _DropParseTracebacks(logging.Filter):
    """Drops the SDK's traceback for each stdout line it cannot parse: ``McpSession`` summarises
    those lines itself (the module docstring), where a flood of them printed one traceback each."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.msg != _SDK_PARSE_FAILURE


if not any(isinstance(f, _DropParseTracebacks) for f in logging.getLogger("mcp.client.stdio").filters):
    logging.getLogger("mcp.client.stdio").addFilter(_DropParseTracebacks())


def _single(exc: BaseException) -> BaseException:
    """The one exception inside (nested) single-member exception groups."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


_OPEN: weakref.WeakSet[McpSession] = weakref.WeakSet()


@atexit.register
def _close_open_sessions() -> None:
    for session in list(_OPEN):
        session.close()
