"""The MCP bridge: tools from real MCP servers (``tools/list``) and their results (``tools/call``).

Every import of the ``mcp`` SDK lives in this package. ``_convert`` holds the pure conversions
between MCP wire shapes and the unified model; ``client`` is the synchronous session over stdio
(the I/O edge); ``server`` is the bundled fixture server (``conformance mcp-server``).
The SDK is imported lazily: importing this package does not load it.
"""

from __future__ import annotations

__all__: list[str] = []
