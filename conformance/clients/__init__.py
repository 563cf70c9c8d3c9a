"""Black-box clients: the Client contract and the harness that certifies one over loopback HTTP.

``conformance.clients.contract`` is the public contract (``Call``, ``Client``, ``SimpleClient``); it
and ``codec`` and ``invoke`` are stdlib-only, so a driver can run in another interpreter
(``conformance.clients.child``). The harness (``conformance.clients.harness``) serves a scenario's
recorded answers from the emulator, drives the client turn by turn, captures every request it
sent and judges them with the same checks, verdicts and reports as ``conformance run``.
"""

from __future__ import annotations

from conformance.clients.contract import CLIENT_WIRES, Call, Client, Completion, SimpleClient, client_problems

__all__ = ["CLIENT_WIRES", "Call", "Client", "Completion", "SimpleClient", "client_problems"]
