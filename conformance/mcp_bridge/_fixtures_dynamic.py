"""The bundled server's toolset that changes between turns (issue 31 point 3): tools whose calls add a
tool, remove one, or change one's ``inputSchema``, each followed by ``notifications/tools/list_changed``.

Off unless the server starts with ``CONFORMANCE_MCP_TOOLSET=dynamic`` in its environment
(``TOOLSET_ENV``): then this toolset is the whole ``tools/list`` (the default tools are hidden and
answered as unknown), so the bundled scenarios that use it (``scenarios/mcp/tools_*.yaml``) offer a
few small tools without ``select``. Without it nothing here is registered and the server's list is the
default one, unchanged.

The state is per MCP session: keyed by the ``Mcp-Session-Id`` header over Streamable HTTP, one state
per process over stdio (one stdio process is one session). A conversation that changes the list
therefore changes no other conversation's, provided each conversation has its own session: the
scenarios say ``list_changes: true``, and the bridge opens a session of its own for each
conversation (``conformance.mcp_bridge.scenario_tools``).

Each session starts with ``INITIAL``: ``lookup_order``, ``enable_refunds`` (adds ``refund_order``),
``retire_legacy_search`` (removes ``legacy_search``), ``legacy_search``, ``set_currency_required``
(``price_quote``'s schema gains a required ``currency``) and ``price_quote``. A call that changes the
list sends ``notifications/tools/list_changed`` on the request's own channel, before its result
(MCP 2025-11-25 server/tools, "List Changed Notification": "When the list of available tools
changes, servers that declared the listChanged capability SHOULD send a notification"), so a
client reading in order knows of the change when the result arrives. A call to a tool the session
no longer lists is the protocol error ``-32602 Unknown tool: <name>`` (spec, "Error Handling"), and
arguments that fail the tool's current ``inputSchema`` are a tool error (``isError: true``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from jsonschema import Draft202012Validator
from mcp import MCPError
from mcp import types as mcp_types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.mcpserver import MCPServer
from mcp.types import INVALID_PARAMS

__all__ = [
    "CURRENCIES",
    "DYNAMIC",
    "INITIAL",
    "TOOLSET_ENV",
    "TOOL_NAMES",
    "ToolsetState",
    "definitions",
    "register",
]

TOOLSET_ENV = "CONFORMANCE_MCP_TOOLSET"
"""Environment variable: ``dynamic`` serves this module's toolset instead of the default tools."""
DYNAMIC = "dynamic"
CURRENCIES = ("EUR", "USD", "JPY")

_ORDER_ID = {"type": "string", "description": "The order's id, e.g. A-1001"}
_SKU = {"type": "string", "description": "The product's SKU, e.g. SKU-42"}
_CURRENCY = {"type": "string", "enum": list(CURRENCIES), "description": "The currency of the quote"}


def _schema(properties: Mapping[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": dict(properties)}
    if required:
        schema["required"] = list(required)
    return schema


_DEFINITIONS: Mapping[str, Mapping[str, Any]] = {
    "lookup_order": {
        "description": "The status of an order.",
        "inputSchema": _schema({"order_id": _ORDER_ID}, ("order_id",)),
    },
    "enable_refunds": {
        "description": "Turns refunds on: the tool refund_order appears (notifications/tools/list_changed).",
        "inputSchema": _schema({}),
    },
    "retire_legacy_search": {
        "description": "Retires legacy_search: it leaves the tool list (notifications/tools/list_changed).",
        "inputSchema": _schema({}),
    },
    "legacy_search": {
        "description": "Searches the order archive (being retired).",
        "inputSchema": _schema({"query": {"type": "string", "description": "Words to look for"}}, ("query",)),
    },
    "set_currency_required": {
        "description": "From now on price_quote needs a currency: its input schema changes"
        " (notifications/tools/list_changed).",
        "inputSchema": _schema({}),
    },
    "price_quote": {
        "description": "The price of a product.",
        "inputSchema": _schema({"sku": _SKU}, ("sku",)),
    },
    "refund_order": {
        "description": "Refunds an order.",
        "inputSchema": _schema(
            {"order_id": _ORDER_ID, "reason": {"type": "string", "description": "Why, for the record"}},
            ("order_id",),
        ),
    },
}
_PRICE_QUOTE_WITH_CURRENCY: Mapping[str, Any] = {
    "description": "The price of a product.",
    "inputSchema": _schema({"sku": _SKU, "currency": _CURRENCY}, ("sku", "currency")),
}

INITIAL = (
    "lookup_order",
    "enable_refunds",
    "retire_legacy_search",
    "legacy_search",
    "set_currency_required",
    "price_quote",
)
"""The tools a new session lists, in this order."""
TOOL_NAMES = frozenset(_DEFINITIONS)
"""Every tool this toolset may list (``refund_order`` only after ``enable_refunds``)."""
_PRICES = {"SKU-42": 19.5, "SKU-7": 4.25}
_RATES = {"EUR": 1.0, "USD": 1.08, "JPY": 162.0}


@dataclass
class ToolsetState:
    """One session's toolset: which tools it lists, in order, and whether ``price_quote`` needs a currency."""

    listed: list[str] = field(default_factory=lambda: list(INITIAL))
    currency_required: bool = False

    def definition(self, name: str) -> Mapping[str, Any]:
        if name == "price_quote" and self.currency_required:
            return _PRICE_QUOTE_WITH_CURRENCY
        return _DEFINITIONS[name]


def definitions(state: ToolsetState) -> list[dict[str, Any]]:
    """The session's ``tools/list`` entries (MCP spelling), in order."""
    return [{"name": name, **state.definition(name)} for name in state.listed]


def _call(state: ToolsetState, name: str, arguments: Mapping[str, Any]) -> tuple[str, bool]:
    """The text a call answers and whether it changed the list (arguments already valid)."""
    if name == "lookup_order":
        return f"order {arguments['order_id']}: shipped", False
    if name == "enable_refunds":
        if "refund_order" in state.listed:
            return "refund_order is already available", False
        state.listed.append("refund_order")
        return "refund_order is now available", True
    if name == "retire_legacy_search":
        if "legacy_search" not in state.listed:
            return "legacy_search is already retired", False
        state.listed.remove("legacy_search")
        return "legacy_search was removed", True
    if name == "legacy_search":
        return f"legacy archive: no orders match {arguments['query']!r}", False
    if name == "set_currency_required":
        changed = not state.currency_required
        state.currency_required = True
        return "price_quote now needs a currency", changed
    if name == "price_quote":
        price = _PRICES.get(str(arguments["sku"]), 10.0)
        currency = str(arguments.get("currency", "EUR"))
        return f"{arguments['sku']}: {price * _RATES[currency]:.2f} {currency}", False
    reason = arguments.get("reason")
    return f"order {arguments['order_id']} refunded" + (f" ({reason})" if reason else ""), False


class _DynamicTools:
    """Middleware: answers ``tools/list`` and ``tools/call`` from the session's ``ToolsetState``."""

    def __init__(self) -> None:
        self.states: dict[str | None, ToolsetState] = {}

    def state(self, ctx: ServerRequestContext[Any, Any]) -> ToolsetState:
        request = ctx.request
        headers = getattr(request, "headers", None)
        key = headers.get("mcp-session-id") if headers is not None else None  # stdio: one session, one state
        return self.states.setdefault(key, ToolsetState())

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method == "tools/list":  # the SDK's own result (its fields for the protocol version), our tools
            result = await call_next(ctx)
            tools = [mcp_types.Tool.model_validate(d) for d in definitions(self.state(ctx))]
            if isinstance(result, mcp_types.ListToolsResult):
                return result.model_copy(update={"tools": tools})
            return {**(result if isinstance(result, dict) else {}), "tools": [_dumped(t) for t in tools]}
        if ctx.method != "tools/call":
            return await call_next(ctx)
        params = ctx.params or {}
        name = params.get("name")
        state = self.state(ctx)
        if not isinstance(name, str) or name not in state.listed:
            raise MCPError(INVALID_PARAMS, f"Unknown tool: {name}")
        arguments = params.get("arguments") or {}
        errors = sorted(Draft202012Validator(state.definition(name)["inputSchema"]).iter_errors(arguments), key=str)
        if errors:
            where = "/".join(str(p) for p in errors[0].absolute_path) or "arguments"
            return _result(f"invalid arguments for {name}: {where}: {errors[0].message}", is_error=True)
        text, changed = _call(state, name, arguments)
        if changed:
            await ctx.session.send_notification(
                mcp_types.ToolListChangedNotification(), related_request_id=ctx.request_id
            )
        return _result(text)


def _result(text: str, *, is_error: bool = False) -> mcp_types.CallToolResult:
    return mcp_types.CallToolResult(content=[mcp_types.TextContent(type="text", text=text)], is_error=is_error)


def _dumped(tool: mcp_types.Tool) -> dict[str, Any]:
    return tool.model_dump(by_alias=True, mode="json", exclude_none=True)


def register(app: MCPServer, known: set[str], *, environ: Callable[[str], str | None] = os.environ.get) -> None:
    """Serve the dynamic toolset on ``app`` when ``TOOLSET_ENV`` is ``dynamic`` (else do nothing).

    ``known`` is the set of names the server's tools gate lets through to ``tools/call``; this
    toolset's names join it, and its middleware (inside the gate, which pages the list) answers
    both ``tools/list`` and ``tools/call`` from the session's state.
    """
    if environ(TOOLSET_ENV) != DYNAMIC:
        return
    known.update(TOOL_NAMES)
    app.middleware.append(_DynamicTools())
    _declare_list_changes(app)


def _declare_list_changes(app: MCPServer) -> None:
    """``initialize`` answers ``capabilities.tools.listChanged: true``: the spec ties the notification to it
    ("servers that declared the listChanged capability SHOULD send a notification"). ``MCPServer`` builds
    its initialization options with no ``NotificationOptions`` (so ``false``) and has no setting for it,
    so its low-level server's builder gets the option here."""
    low = app._lowlevel_server  # no public way to set the flag (mcp 2.x server/mcpserver/server.py)
    build = low.create_initialization_options

    def with_list_changes(notification_options: NotificationOptions | None = None, *args: Any, **kwargs: Any) -> Any:
        return build(notification_options or NotificationOptions(tools_changed=True), *args, **kwargs)

    setattr(low, "create_initialization_options", with_list_changes)  # noqa: B010 - a method replaced on one instance
