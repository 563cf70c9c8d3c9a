"""The bundled MCP server (``conformance mcp-server``): the scenarios' tools over stdio or Streamable HTTP.

Built on the mcp 2.x SDK's ``MCPServer`` (FastMCP's successor). Tools:

- ``getTime(offset_ms)``: epoch milliseconds as text; ``CONFORMANCE_FIXED_NOW_MS`` fixes "now".
- ``get_weather(city)``: structured weather for a few known cities; an unknown city is a tool
  error (``isError: true``) naming the known ones.
- ``search_codebase(pattern, fileType, caseSensitive, maxResults)`` and
  ``get_file_content(path, startLine, endLine)``: over a small built-in fake repository.
- ``explode()``: raises, so the SDK answers ``isError: true`` ("Error executing tool explode").
- ``slow_tool(seconds)``: sleeps (for timeouts and cancellation).
- ``render_chart(values)``: a small PNG bar chart (image content).
- ``mixed_content()``: text, an embedded text and blob resource, a resource link and audio.
- ``enable_bonus_tool()``: adds ``bonus_tool`` and sends ``notifications/tools/list_changed``.
- ``exit_server(code)``: the process exits at once (a server dying mid-call).
- ``noop_01`` .. ``noop_24``: padding, so ``tools/list`` takes several pages.

``MCPServer`` answers ``tools/list`` in one page and an unknown tool with an ``isError`` result.
A middleware (``_ToolsGate``) pages the list (``page_size`` tools per page, the cursor is an
opaque offset) and answers an unknown tool with the JSON-RPC protocol error ``-32602`` that the
spec shows (https://modelcontextprotocol.io/specification/2025-11-25/server/tools#error-handling).

Transports: ``serve_stdio`` (stdin/stdout) and ``serve_http`` (Streamable HTTP, the SDK's
``MCPServer.streamable_http_app`` served by uvicorn at ``HTTP_PATH`` on a loopback address only, with
sessions: the server answers ``initialize`` with an ``Mcp-Session-Id`` header and a ``DELETE``
ends the session; MCP 2025-11-25, basic/transports, "Session Management"). With port 0 the system
picks a free port; the URL is printed on stdout as ``LISTENING_PREFIX`` + URL (one line) and, with
``port_file``, written to that file, so a parent process can read it.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Callable
from typing import Annotated, Any, TypedDict

import anyio
from mcp import MCPError
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import Context, Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import (
    INVALID_PARAMS,
    AudioContent,
    BlobResourceContents,
    ContentBlock,
    EmbeddedResource,
    ResourceLink,
    TextContent,
    TextResourceContents,
    ToolAnnotations,
)
from pydantic import BaseModel, Field

from conformance import __version__
from conformance.mcp_bridge import (
    _fixtures,
    _fixtures_dynamic,
    _fixtures_progress,
    _fixtures_results,
    _fixtures_suite,
)

__all__ = [
    "DEFAULT_PAGE_SIZE",
    "FIXED_NOW_ENV",
    "HTTP_PATH",
    "LISTENING_PREFIX",
    "NOOP_TOOL_COUNT",
    "PROFILES",
    "SERVER_NAME",
    "WeatherReport",
    "build_server",
    "serve_http",
    "serve_stdio",
]

SERVER_NAME = "conformance-fixture"
DEFAULT_PAGE_SIZE = 10
"""Tools per ``tools/list`` page."""
NOOP_TOOL_COUNT = 24
"""How many ``noop_NN`` padding tools there are."""
PROFILES = ("default", _fixtures_suite.PROFILE)
"""``build_server``'s profiles (``conformance mcp-server --profile``): the scenarios' tools, or those and
the official MCP conformance suite's first (``conformance.mcp_bridge._fixtures_suite``)."""
FIXED_NOW_ENV = "CONFORMANCE_FIXED_NOW_MS"
"""Environment variable: an integer epoch-milliseconds value that ``getTime`` uses as "now"."""
HTTP_PATH = "/mcp"
"""The Streamable HTTP endpoint's path (the SDK's default)."""
LISTENING_PREFIX = "conformance mcp-server: listening on "
"""``serve_http`` prints this and the endpoint URL as one line on stdout once it accepts connections."""
_LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")

_READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
_DEFAULT_CHART = (3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0)


class WeatherReport(TypedDict):
    """``get_weather``'s structured result (its ``outputSchema``)."""

    city: str
    condition: str
    temperature_c: float
    humidity_pct: int


class _ToolsGate:
    """Middleware: pages ``tools/list`` and turns an unknown tool into a protocol error."""

    def __init__(self, page_size: int, known: set[str]) -> None:
        self.page_size = page_size
        self.known = known

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        params = ctx.params or {}
        if ctx.method == "tools/call":
            name = params.get("name")
            if isinstance(name, str) and name not in self.known:
                raise MCPError(INVALID_PARAMS, f"Unknown tool: {name}")
            return await call_next(ctx)
        if ctx.method != "tools/list":
            return await call_next(ctx)
        start = _cursor_offset(params.get("cursor"))
        result = await call_next(ctx)
        listing = (
            result.model_dump(by_alias=True, mode="json", exclude_none=True)
            if isinstance(result, BaseModel)
            else result
        )
        if not isinstance(listing, dict):
            return result
        tools = listing.get("tools", [])
        if start > len(tools):
            raise MCPError(INVALID_PARAMS, f"Invalid cursor: {params.get('cursor')!r} is past the end of the list")
        end = start + self.page_size
        page = {**listing, "tools": tools[start:end]}
        if end < len(tools):
            page["nextCursor"] = f"offset:{end}"
        return page


def _cursor_offset(cursor: object) -> int:
    if cursor is None:
        return 0
    if isinstance(cursor, str) and cursor.startswith("offset:") and cursor[7:].isdigit():
        return int(cursor[7:])
    raise MCPError(INVALID_PARAMS, f"Invalid cursor: {cursor!r} (pass the nextCursor of the previous page)")


def build_server(
    *, page_size: int = DEFAULT_PAGE_SIZE, now_ms: Callable[[], float] | None = None, profile: str = "default"
) -> MCPServer:
    """The bundled server, ready to ``run()`` (or to serve an in-process ``mcp.Client``). ``profile``
    ``"conformance-suite"`` adds, first in the list, the tools the official MCP conformance suite calls
    (``_fixtures_suite``); ``"default"`` (``PROFILES``) has the scenarios' tools only."""
    if page_size < 1:
        raise ValueError(f"page_size must be >= 1, got {page_size}")
    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {', '.join(PROFILES)}, got {profile!r}")
    clock = now_ms or (lambda: time.time() * 1000)
    known: set[str] = set()
    server: MCPServer = MCPServer(
        SERVER_NAME,
        version=__version__,
        instructions="Fixture tools for the conformance suite; every answer is deterministic.",
        middleware=[_ToolsGate(page_size, known)],
        log_level="INFO",
    )
    if profile == _fixtures_suite.PROFILE:  # first: the suite's client reads one page of tools/list
        _fixtures_suite.register(server)
        known.update(_fixtures_suite.TOOL_NAMES)

    def add(fn: Callable[..., Any], name: str, description: str, **options: Any) -> None:
        server.add_tool(fn, name=name, description=description, **options)
        known.add(name)

    def get_time(
        offset_ms: Annotated[float, Field(description="Milliseconds to add to now (negative: the past)")] = 0,
    ) -> str:
        return str(int(clock() + offset_ms))

    add(
        get_time,
        "getTime",
        "The current time as epoch milliseconds, shifted by offset_ms (-86400000 is this time yesterday).",
        title="Current time",
        annotations=_READ_ONLY,
        structured_output=False,
    )

    def get_weather(city: Annotated[str, Field(description="City name, e.g. Paris")]) -> WeatherReport:
        weather = _fixtures.WEATHER.get(city.strip().lower())
        if weather is None:
            known_cities = ", ".join(w.city for w in _fixtures.WEATHER.values())
            raise ToolError(f"unknown city: {city!r}; known cities: {known_cities}")
        return WeatherReport(
            city=weather.city,
            condition=weather.condition,
            temperature_c=weather.temperature_c,
            humidity_pct=weather.humidity_pct,
        )

    add(get_weather, "get_weather", "Current weather for a city.", title="Weather", annotations=_READ_ONLY)

    def search_codebase(
        pattern: Annotated[str, Field(description="Regular expression (Python syntax) to search for")],
        fileType: Annotated[str | None, Field(description="Only files with this extension, e.g. py or ts")] = None,
        caseSensitive: Annotated[bool, Field(description="Match case exactly")] = False,
        maxResults: Annotated[int, Field(ge=1, le=100, description="At most this many matches")] = 20,
    ) -> str:
        try:
            hits = _fixtures.search_files(
                pattern, file_type=fileType, case_sensitive=caseSensitive, max_results=maxResults
            )
        except Exception as exc:  # re.error: an invalid pattern is the caller's to fix
            raise ToolError(f"invalid pattern {pattern!r}: {exc}") from exc
        if not hits:
            return f"No matches for {pattern!r}."
        return "\n".join(f"{path}:{number}: {line}" for path, number, line in hits)

    add(
        search_codebase,
        "search_codebase",
        "Search the repository's files for lines matching a regular expression; one `path:line: text` per match.",
        annotations=_READ_ONLY,
        structured_output=False,
    )

    def get_file_content(
        path: Annotated[str, Field(description="Repository-relative path, e.g. src/weather_app/clock.py")],
        startLine: Annotated[int, Field(ge=1, description="First line to return (1-based)")] = 1,
        endLine: Annotated[int | None, Field(ge=1, description="Last line to return (inclusive)")] = None,
    ) -> str:
        try:
            lines = _fixtures.file_lines(path)
        except KeyError:
            raise ToolError(f"no such file: {path!r}; files: {', '.join(sorted(_fixtures.FAKE_FILES))}") from None
        last = len(lines) if endLine is None else endLine
        if startLine > len(lines) or last < startLine:
            raise ToolError(f"bad line range {startLine}-{last}: {path} has {len(lines)} lines")
        return "\n".join(lines[startLine - 1 : last])

    add(
        get_file_content,
        "get_file_content",
        "The text of a repository file, optionally only lines startLine..endLine.",
        annotations=_READ_ONLY,
        structured_output=False,
    )

    def explode() -> str:
        raise RuntimeError("explode: this tool always fails")

    add(explode, "explode", "Always fails with an unexpected exception.", structured_output=False)

    async def slow_tool(seconds: Annotated[float, Field(ge=0, le=600, description="How long to sleep")]) -> str:
        await anyio.sleep(seconds)
        return f"slept {seconds:g} s"

    add(slow_tool, "slow_tool", "Sleeps for the given number of seconds, then answers.", structured_output=False)

    def render_chart(
        values: Annotated[list[float], Field(max_length=64, description="Bar heights")] = list(_DEFAULT_CHART),  # noqa: B006
    ) -> Image:
        return Image(data=_fixtures.png_bar_chart(values), format="png")

    add(render_chart, "render_chart", "A bar chart of the values, as a PNG image.", annotations=_READ_ONLY)

    def mixed_content() -> list[ContentBlock]:
        import base64

        return [
            TextContent(type="text", text="Report for weather-app"),
            EmbeddedResource(
                type="resource",
                resource=TextResourceContents(
                    uri="file:///repo/README.md", mime_type="text/markdown", text="# weather-app\n"
                ),
            ),
            EmbeddedResource(
                type="resource",
                resource=BlobResourceContents(
                    uri="file:///repo/logo.bin",
                    mime_type="application/octet-stream",
                    blob=base64.b64encode(b"\x00\x01\x02").decode(),
                ),
            ),
            ResourceLink(
                type="resource_link",
                uri="file:///repo/src/weather_app/clock.py",
                name="clock.py",
                mime_type="text/x-python",
            ),
            AudioContent(type="audio", data=base64.b64encode(_fixtures.wav_silence()).decode(), mime_type="audio/wav"),
        ]

    add(
        mixed_content,
        "mixed_content",
        "One of each MCP content type: text, embedded resources, a resource link and audio.",
        annotations=_READ_ONLY,
        structured_output=False,
    )

    async def enable_bonus_tool(ctx: Context) -> str:
        if "bonus_tool" not in known:
            add(lambda: "bonus!", "bonus_tool", "Appears after enable_bonus_tool.", structured_output=False)
        await ctx.session.send_tool_list_changed()
        return "bonus_tool enabled"

    add(
        enable_bonus_tool,
        "enable_bonus_tool",
        "Adds the tool bonus_tool and notifies the client (notifications/tools/list_changed).",
        structured_output=False,
    )

    def exit_server(code: Annotated[int, Field(ge=0, le=255, description="Exit status")] = 3) -> str:
        sys.stderr.write(f"exit_server: exiting with status {code} as asked\n")
        sys.stderr.flush()
        os._exit(code)

    add(
        exit_server,
        "exit_server",
        "Ends the server process at once (a server dying mid-call).",
        structured_output=False,
    )

    _fixtures_progress.register(server)  # slow_progress (issue 31, progress)
    known.update(_fixtures_progress.TOOL_NAMES)
    _fixtures_results.register(server)  # one tool per result shape (issue 31, tool results)
    known.update(_fixtures_results.TOOL_NAMES)

    for i in range(1, NOOP_TOOL_COUNT + 1):
        name = f"noop_{i:02d}"
        add(
            _noop(name), name, "Does nothing (pads tools/list so that it needs several pages).", structured_output=False
        )
    _fixtures_dynamic.register(server, known)  # with CONFORMANCE_MCP_TOOLSET=dynamic only (issue 31, list changes)
    return server


def _noop(name: str) -> Callable[[], str]:
    def noop() -> str:
        return f"{name}: ok"

    return noop


def _clock_from_env() -> tuple[Callable[[], float] | None, str | None]:
    """``now_ms`` from ``$CONFORMANCE_FIXED_NOW_MS`` (None: the real clock), or the problem with it."""
    fixed = os.environ.get(FIXED_NOW_ENV)
    if fixed is None:
        return None, None
    try:
        value = int(fixed)
    except ValueError:
        return None, f"{FIXED_NOW_ENV} must be an integer (epoch milliseconds), got {fixed!r}"
    return (lambda: float(value)), None


def _log_to_stderr() -> None:
    # Plain log lines on stderr, set before the SDK's own set-up (which then changes nothing): with
    # rich installed, the SDK renders every failing tool's traceback with it, ~0.3 s per call.
    logging.basicConfig(level=logging.INFO, format="%(message)s", handlers=[logging.StreamHandler(sys.stderr)])


def serve_stdio(*, profile: str = "default") -> int:
    """Serve the bundled tools (``profile``: ``PROFILES``) on stdin/stdout until stdin closes; the exit code."""
    now_ms, problem = _clock_from_env()
    if problem is not None:
        print(f"conformance mcp-server: error: {problem}", file=sys.stderr)
        return 2
    _log_to_stderr()
    try:
        build_server(now_ms=now_ms, profile=profile).run("stdio")
    except KeyboardInterrupt:
        return 130
    return 0


def serve_http(
    *, host: str = "127.0.0.1", port: int = 0, port_file: str | None = None, profile: str = "default"
) -> int:
    """Serve the bundled tools over Streamable HTTP at ``http://host:port/mcp`` until interrupted
    (SIGINT/SIGTERM); the exit code. Only loopback hosts are served (the fixture server has no
    authentication). Port 0 picks a free port: the URL is printed on stdout (``LISTENING_PREFIX``)
    and written to ``port_file`` (the port number alone, then a newline) once the socket listens."""
    import socket

    import uvicorn

    if host not in _LOOPBACK_HOSTS:
        print(
            f"conformance mcp-server: error: --host must be a loopback address ({', '.join(_LOOPBACK_HOSTS)}),"
            f" got {host!r}: the fixture server has no authentication",
            file=sys.stderr,
        )
        return 2
    now_ms, problem = _clock_from_env()
    if problem is not None:
        print(f"conformance mcp-server: error: {problem}", file=sys.stderr)
        return 2
    _log_to_stderr()
    family = socket.AF_INET6 if host == "::1" else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1" if host == "localhost" else host, port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        print(f"conformance mcp-server: error: cannot listen on {host} port {port}: {exc}", file=sys.stderr)
        return 2
    bound = sock.getsockname()[1]
    shown_host = f"[{host}]" if ":" in host else host
    url = f"http://{shown_host}:{bound}{HTTP_PATH}"
    # The SDK's app turns on DNS-rebinding protection for a loopback host (Host and Origin checked).
    app = build_server(now_ms=now_ms, profile=profile).streamable_http_app(streamable_http_path=HTTP_PATH, host=host)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=2))
    if port_file is not None:  # written whole, then renamed: a reader never sees half of it
        with open(f"{port_file}.tmp", "w", encoding="ascii") as out:
            out.write(f"{bound}\n")
        os.replace(f"{port_file}.tmp", port_file)
    print(f"{LISTENING_PREFIX}{url}", flush=True)
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        return 130
    finally:
        sock.close()
    return 0
