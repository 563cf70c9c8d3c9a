"""``conformance certify --server URL`` and ``--gateway URL``: their options, read into a target.

``--server URL --wires W1,W2 [--model M] [--api-key-env VAR] [--name N]``: a model server answering
the reference adapters' requests itself (``conformance.servers.server``). ``--gateway URL --wire W
--upstream U1,U2 --upstream-port N [--model ROUTE] [--api-key-env VAR] [--name N]``: a gateway the
suite speaks ``W`` to, configured to call the loopback emulator on port ``N`` with each upstream
wire (``conformance.servers.gateway``). The only URL ever connected to is the one given; a
gateway's upstream is always the emulator. The key is read from the environment variable named,
never from the command line, and never printed.
"""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING, Any

from conformance.cli.options import number, seconds, size

if TYPE_CHECKING:
    from conformance.pipeline.targets import GatewayTarget, ServerTarget

__all__ = [
    "CLIENT_TIMEOUT",
    "GATEWAY_TIMEOUT",
    "SERVER_TIMEOUT",
    "add_server_arguments",
    "gateway_target",
    "server_target",
]

CLIENT_TIMEOUT = 30.0
"""Seconds per turn of a client by default (``CertifyOptions().timeout``)."""
SERVER_TIMEOUT = 300.0
"""Seconds per case of a server by default (every turn, and the repeat ``server.modes`` may ask: a
small model on two cores takes 5-30 s per answer)."""
GATEWAY_TIMEOUT = 120.0
"""Seconds per turn of a gateway by default (its own retries and timeouts count in it)."""


def add_server_arguments(parser: argparse.ArgumentParser, target: Any) -> None:
    """``--server`` and ``--gateway`` in the mutually exclusive group ``target``, and their options."""
    target.add_argument(
        "--server",
        metavar="URL",
        help="a model server to certify (http://127.0.0.1:8080): each scenario's reference-adapter request on each "
        "--wires, streamed and not, and four invalid requests per wire, judged by server.* (docs/servers.md)",
    )
    target.add_argument(
        "--gateway",
        metavar="URL",
        help="a gateway to certify (http://127.0.0.1:4000): requests in --wire, the emulator upstream on "
        "--upstream-port playing each --upstream wire; both sides judged (docs/servers.md)",
    )
    group = parser.add_argument_group("servers and gateways (--server, --gateway; docs/servers.md)")
    group.add_argument("--wire", metavar="W", help="--gateway: the wire the suite speaks to the gateway")
    group.add_argument("--upstream", metavar="U1,U2", help="--gateway: the wires it calls the emulator with")
    group.add_argument(
        "--upstream-port",
        type=number("--upstream-port", int, low=1, what="a TCP port (1-65535)"),
        metavar="N",
        help="--gateway: the port the gateway is configured to call the emulator on",
    )
    group.add_argument(
        "--api-key-env",
        metavar="VAR",
        help="the environment variable holding the server's or gateway's key (never given on the command line; "
        "sent in the wire's auth header, scrubbed from every report)",
    )
    group.add_argument("--name", metavar="NAME", help="the column prefix (default: server or gateway)")
    group.add_argument(
        "--exchange-timeout",
        type=seconds("--exchange-timeout"),
        default=None,
        metavar="S",
        help="seconds one HTTP exchange may take, request to last byte (default: 120 for a server, 60 for a gateway)",
    )
    group.add_argument(
        "--max-body",
        type=number("--max-body", size, low=1, what="positive (a size in bytes; K, M, G allowed)"),
        default=None,
        metavar="BYTES",
        help="bytes one answer may have once decoded; a larger one is cut and judged (default: 16M)",
    )
    group.add_argument(
        "--max-tokens",
        type=number("--max-tokens", int, low=1, what="at least 1"),
        default=64,
        metavar="N",
        help="--server: max_tokens sent when a scenario sets none (default: %(default)s)",
    )


def _key(args: argparse.Namespace) -> str | None:
    from conformance.errors import UsageError

    if not args.api_key_env:
        return None
    key = os.environ.get(args.api_key_env)
    if not key:
        raise UsageError(f"--api-key-env {args.api_key_env}: that environment variable is not set (or empty)")
    return key


def _url(flag: str, url: str) -> str:
    from conformance.errors import UsageError

    if not url.startswith(("http://", "https://")):
        raise UsageError(f"{flag} {url}: give the server's root URL, e.g. http://127.0.0.1:8080")
    return url.rstrip("/")


def _words(args: argparse.Namespace, *flags: str) -> tuple[str, ...]:
    """The words of the command line that name the target (for rerun commands); never the key itself."""
    words: list[str] = []
    for flag in flags:
        value = getattr(args, flag.lstrip("-").replace("-", "_"), None)
        if value is not None:
            words += [flag, str(value)]
    return tuple(words)


def server_target(args: argparse.Namespace) -> ServerTarget:
    """The server target ``args`` ask for (``UsageError`` naming what is wrong)."""
    from conformance.errors import UsageError
    from conformance.pipeline.selection import split_list
    from conformance.pipeline.targets import ServerTarget
    from conformance.servers.server import SERVER_WIRES, ServerOptions

    for flag in ("wire", "upstream", "upstream_port"):
        if getattr(args, flag) is not None:
            raise UsageError(f"--{flag.replace('_', '-')} is for --gateway; a --server is certified on --wires")
    wires = tuple(split_list([args.wires])) if args.wires else ()
    if not wires:
        raise UsageError(f"--server needs --wires (the wires it serves, of {', '.join(SERVER_WIRES)})")
    if unknown := [w for w in wires if w not in SERVER_WIRES]:
        raise UsageError(f"--wires {', '.join(unknown)}: not a wire (the wires: {', '.join(SERVER_WIRES)})")
    fields: dict[str, Any] = {}
    if args.exchange_timeout is not None:
        fields["exchange_timeout"] = args.exchange_timeout
    if args.max_body is not None:
        fields["max_body"] = args.max_body
    options = ServerOptions(
        base_url=_url("--server", args.server),
        wires=wires,
        name=args.name or "server",
        model=args.model,
        api_key=_key(args),
        max_tokens=args.max_tokens,
        **fields,
    )
    return ServerTarget(options=options, words=_words(args, "--server", "--name", "--model", "--api-key-env"))


def gateway_target(args: argparse.Namespace) -> GatewayTarget:
    """The gateway target ``args`` ask for (``UsageError`` naming what is wrong)."""
    from conformance.clients.contract import CLIENT_WIRES
    from conformance.errors import UsageError
    from conformance.pipeline.selection import split_list
    from conformance.pipeline.targets import GatewayTarget
    from conformance.servers.gateway import GatewayOptions

    if args.wires is not None:
        raise UsageError("--wires is for --server and --client; a --gateway takes --wire and --upstream")
    if not args.wire or not args.upstream or args.upstream_port is None:
        raise UsageError(
            "--gateway needs --wire (what the suite speaks to it), --upstream (the wires it calls) and "
            "--upstream-port (the port it is configured to call the emulator on)"
        )
    upstreams = tuple(split_list([args.upstream]))
    if unknown := [w for w in (args.wire, *upstreams) if w not in CLIENT_WIRES]:
        raise UsageError(f"{', '.join(unknown)}: not a wire (the wires: {', '.join(CLIENT_WIRES)})")
    fields: dict[str, Any] = {}
    if args.exchange_timeout is not None:
        fields["exchange_timeout"] = args.exchange_timeout
    if args.max_body is not None:
        fields["max_body"] = args.max_body
    if args.model:
        fields["model"] = args.model
    options = GatewayOptions(
        base_url=_url("--gateway", args.gateway),
        wire=args.wire,
        upstreams=upstreams,
        upstream_port=args.upstream_port,
        api_key=_key(args),
        name=args.name or "gateway",
        **fields,
    )
    words = _words(args, "--gateway", "--wire", "--upstream-port", "--name", "--model", "--api-key-env")
    return GatewayTarget(options=options, words=words)
