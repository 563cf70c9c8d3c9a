"""A process that opens an MCP session on the bundled server, says READY, then waits.

Used by test_client.py to kill or interrupt a client and check that its server does not outlive
it. ``wait`` sleeps outside any call; ``block`` sits inside a 60-second ``tools/call``. Run it as
``python -m tests.mcp_bridge._session_child MODE`` from the repository root.
"""

from __future__ import annotations

import faulthandler
import signal
import sys
import time

from conformance.mcp_bridge.client import McpServerSpec, McpSession

__all__: list[str] = []

if __name__ == "__main__":
    faulthandler.register(signal.SIGUSR1, all_threads=True)  # a stack dump when a test sees a hang
    # Ctrl-C must raise KeyboardInterrupt even when our parent runs with SIGINT ignored (a shell's
    # background job), which Python would otherwise inherit.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    spec = McpServerSpec(command=[sys.executable, "-m", "conformance", "mcp-server"])
    with McpSession(spec, timeout=120.0) as session:
        print("READY", flush=True)
        if sys.argv[1:] == ["block"]:
            session.call_tool("slow_tool", {"seconds": 60})
        else:
            time.sleep(60)
