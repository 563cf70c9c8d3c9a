"""Certify the other side of the wire: model servers (issue 29).

``conformance.servers.server`` is the server target (``certify_server``: every scenario a live
server can be asked, streamed and not, and the invalid-request probes, judged by
``conformance.checks.server``); ``conformance.servers.invalid`` builds the probes (pure);
``conformance.servers.probe`` is the I/O edge (bounded HTTP to the one URL given).
``docs/servers.md`` describes them.
"""

from __future__ import annotations

from conformance.servers.server import (
    SERVER_WIRES,
    ServerOptions,
    certify_server,
    server_case_count,
    server_columns,
    server_result,
    server_scenarios,
)

__all__ = [
    "SERVER_WIRES",
    "ServerOptions",
    "certify_server",
    "server_case_count",
    "server_columns",
    "server_result",
    "server_scenarios",
]
