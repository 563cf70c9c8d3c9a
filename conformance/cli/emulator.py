"""``conformance emulator`` and ``conformance mcp-server``: the servers the suite serves on their own.

``emulator`` serves the loopback provider emulator (``conformance.emulator.serve_command``) until
interrupted; ``mcp-server`` runs the bundled MCP server over stdio or Streamable HTTP
(``conformance.mcp_bridge.server.serve_stdio`` / ``serve_http``).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from typing import Any

from conformance.cli.options import number, size

__all__ = ["add_commands"]

_INTERRUPTED = 130


def add_commands(commands: Any, *, servers: str) -> None:
    """The ``emulator`` subcommand (``servers="emulator"``) or the ``mcp-server`` one (``"mcp-server"``),
    in the order the command line lists them."""
    if servers == "emulator":
        _add_emulator(commands)
    else:
        _add_mcp_server(commands)


def _add_emulator(commands: Any) -> None:
    emulator = commands.add_parser(
        "emulator",
        help="serve the provider emulator on 127.0.0.1",
        description=(
            "Serve the loopback provider emulator (openai_chat, openai_responses, anthropic, gemini and ollama wire) "
            "on 127.0.0.1 until interrupted. With --scenario it plays that scenario's replies turn by turn."
        ),
    )
    emulator.add_argument(
        "--port",
        type=number("--port", int, low=0, high=65535, what="a TCP port (0-65535; 0 picks a free one)"),
        default=0,
        help="TCP port (default: an ephemeral port, printed)",
    )
    emulator.add_argument(
        "--scenarios", "--scenario", dest="scenario", metavar="ID", help="scenario id whose replies the emulator plays"
    )
    emulator.add_argument(
        "--scenarios-dir",
        action="append",
        metavar="DIR",
        help="your scenarios, added to the bundled ones (same id: yours wins; repeatable)",
    )
    emulator.add_argument(
        "--play-scenarios",
        action="store_true",
        help="answer each request from the scenario it belongs to, read from the request (docs/emulator.md)",
    )
    emulator.add_argument(
        "--max-requests",
        type=number("--max-requests", int, low=0, what="0 or more (0 keeps nothing in the request log)"),
        default=1000,
        metavar="N",
        help="requests (and answers) the request log keeps, the newest (default: %(default)s; docs/emulator.md)",
    )
    emulator.add_argument(
        "--max-log-bytes",
        type=number("--max-log-bytes", size, low=0, what="0 or more bytes (K, M, G allowed)"),
        default=64 * 1024 * 1024,
        metavar="BYTES",
        help="body bytes the request log keeps in all; longer bodies are kept cut (default: %(default)s)",
    )
    emulator.set_defaults(handler=_emulator)


def _add_mcp_server(commands: Any) -> None:
    mcp_server = commands.add_parser(
        "mcp-server",
        help="run the bundled MCP server (stdio or Streamable HTTP) holding the scenarios' tools",
        description="Run the bundled MCP server over stdio (default) or Streamable HTTP on a loopback address "
        "(http://127.0.0.1:PORT/mcp, with sessions): getTime, get_weather, search_codebase, get_file_content, "
        "a failing tool, a slow tool, an image tool, and enough tools to need pagination.",
    )
    mcp_server.add_argument(
        "--transport",
        choices=("stdio", "http"),
        default="stdio",
        help="stdio: JSON-RPC on stdin/stdout; http: Streamable HTTP at /mcp (default: %(default)s)",
    )
    mcp_server.add_argument(
        "--port",
        type=number("--port", int, low=0, high=65535, what="a TCP port (0-65535; 0 picks a free one)"),
        default=0,
        help="with --transport http: TCP port (default: a free one; the URL is printed on stdout)",
    )
    mcp_server.add_argument(
        "--host",
        choices=("127.0.0.1", "localhost", "::1"),
        default="127.0.0.1",
        help="with --transport http: the loopback address to listen on (default: %(default)s)",
    )
    mcp_server.add_argument(
        "--port-file",
        metavar="FILE",
        help="with --transport http: write the port number to FILE once the server listens",
    )
    mcp_server.add_argument(
        "--profile",
        choices=("default", "conformance-suite"),
        default="default",
        help="default: the scenarios' tools; conformance-suite: also, first, the tools the official MCP "
        "conformance suite calls (scripts/mcp_conformance_suite.py; default: %(default)s)",
    )
    mcp_server.set_defaults(handler=_mcp_server)


def _emulator(args: argparse.Namespace) -> int:
    from conformance.emulator import serve_command

    return serve_command(
        port=args.port,
        scenario=args.scenario,
        scenarios_dir=args.scenarios_dir,
        max_requests=args.max_requests,
        max_log_bytes=args.max_log_bytes,
        play_scenarios=args.play_scenarios,
    )


def _mcp_server(args: argparse.Namespace) -> int:
    from conformance.mcp_bridge.server import serve_http, serve_stdio

    if args.transport == "http":
        code = serve_http(host=args.host, port=args.port, port_file=args.port_file, profile=args.profile)
    else:
        code = serve_stdio(profile=args.profile)
    if code == _INTERRUPTED:  # the server's own Ctrl-C handling is silent
        with contextlib.suppress(OSError, ValueError):
            print("conformance mcp-server: interrupted (Ctrl-C)", file=sys.stderr, flush=True)
    return code
