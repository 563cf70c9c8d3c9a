"""A hand-written stdio MCP server that answers a call only after the client cancels it (tests only).

JSON-RPC over stdin/stdout, one message a line (MCP 2025-11-25, transports "stdio"), without the SDK
so its answers are exactly these:

- ``initialize``: protocol version ``2025-11-25``, the ``tools`` capability;
- ``tools/list``: ``late`` and ``echo``;
- ``tools/call late``: one ``notifications/progress`` (``progress`` 1, ``total`` 2, ``message``
  ``"half way"``) for the request's ``_meta.progressToken`` when it has one, then nothing until a
  ``notifications/cancelled`` names the request (basic/utilities/cancellation): the server then
  writes ``CANCELLED held=<id> requestId=<id> reason=<reason>`` to stderr and sends the late result
  ``late answer`` anyway (the spec's race: "the sender [...] SHOULD ignore any response that
  arrives afterward");
- ``tools/call echo``: at once, ``echo <text>``.

Deterministic: nothing here waits on time.
"""

from __future__ import annotations

import json
import sys
from typing import Any

__all__: list[str] = []


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def text_result(request_id: Any, text: str) -> None:
    send({"jsonrpc": "2.0", "id": request_id, "result": {"content": [{"type": "text", "text": text}]}})


def main() -> None:
    held: Any = None
    for line in sys.stdin:
        message = json.loads(line)
        method = message.get("method")
        params = message.get("params") or {}
        if method == "initialize":
            send(
                {
                    "jsonrpc": "2.0",
                    "id": message["id"],
                    "result": {
                        "protocolVersion": "2025-11-25",
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "late-server", "version": "1"},
                    },
                }
            )
        elif method == "tools/list":
            tools = [
                {"name": name, "inputSchema": {"type": "object"}, "description": f"{name} tool"}
                for name in ("late", "echo")
            ]
            send({"jsonrpc": "2.0", "id": message["id"], "result": {"tools": tools}})
        elif method == "tools/call" and params.get("name") == "late":
            held = message["id"]
            token = (params.get("_meta") or {}).get("progressToken")
            if token is not None:
                progress = {"progressToken": token, "progress": 1, "total": 2, "message": "half way"}
                send({"jsonrpc": "2.0", "method": "notifications/progress", "params": progress})
        elif method == "tools/call":
            text_result(message["id"], f"echo {(params.get('arguments') or {}).get('text', '')}")
        elif method == "notifications/cancelled" and held is not None and params.get("requestId") == held:
            cancelled, reason = params.get("requestId"), params.get("reason")
            sys.stderr.write(f"CANCELLED held={held} requestId={cancelled} reason={reason}\n")
            sys.stderr.flush()
            text_result(held, "late answer")
            held = None
        elif "id" in message and method is not None:
            send({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": f"no {method}"}})


if __name__ == "__main__":
    main()
