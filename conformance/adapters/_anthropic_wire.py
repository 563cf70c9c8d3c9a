"""Reading values of the Anthropic Messages wire: stop reasons, usage, tool_use ids, error kinds.
Private helper of ``conformance.adapters.anthropic`` (see its docstring for the sources; kept
apart to keep modules small).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from conformance.adapters.base import error_kind_from_status, retry_after_from_headers, synthetic_call_id
from conformance.model import ErrorInfo, ErrorKind, Finish, FinishReason, JSONObject, Usage

__all__ = [
    "COMPLETE_STOPS",
    "CONTEXT_LENGTH",
    "ERROR_KINDS",
    "FINISH_REASONS",
    "call_id_of",
    "cut_message",
    "error_info",
    "finish_event",
    "usage_from_wire",
]

FINISH_REASONS: dict[str, FinishReason] = {
    # ANT-SDK types/stop_reason.py; anything else (``terminated``, E22) is "other"
    "end_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "stop_sequence": "stop",
    "refusal": "content_filter",
    "pause_turn": "other",  # a server-tool turn paused; the client resends to continue
    "model_context_window_exceeded": "length",
}

COMPLETE_STOPS = frozenset({"end_turn", "tool_use", "stop_sequence", "pause_turn"})
"""Stop reasons after which the last tool_use block is known to be whole."""

ERROR_KINDS: dict[str, ErrorKind] = {
    # error.type (API errors page; wire-formats.md §3e)
    "invalid_request_error": "invalid_request",
    "authentication_error": "auth",
    "billing_error": "permission",  # 402: the key may not use the API until billing is fixed; not retryable
    "permission_error": "permission",
    "not_found_error": "not_found",
    "request_too_large": "invalid_request",  # 413, from Cloudflare before the API
    "rate_limit_error": "rate_limit",
    "api_error": "server",
    "timeout_error": "server",  # 504
    "overloaded_error": "overloaded",  # 529
}

CONTEXT_LENGTH = "prompt is too long"
"""``invalid_request_error`` message prefix for an over-long prompt ("prompt is too long: 203284
tokens > 200000 maximum", anthropics/claude-code#59696)."""


def usage_from_wire(raw: Mapping[str, Any]) -> Usage:
    """Usage with ``input_tokens`` = input + cache creation + cache read (SDK docstring, E19)."""
    base = raw.get("input_tokens")
    write = raw.get("cache_creation_input_tokens")
    read = raw.get("cache_read_input_tokens")
    output = raw.get("output_tokens")
    total_input = None if base is None else base + (write or 0) + (read or 0)
    return Usage(
        input_tokens=total_input,
        output_tokens=output,
        total_tokens=None if total_input is None or output is None else total_input + output,
        cache_read_tokens=read,
        cache_write_tokens=write,
    )


def finish_event(raw_reason: str | None, completed_calls: bool) -> Finish:
    reason = FINISH_REASONS.get(raw_reason or "", "other")
    if completed_calls and reason == "stop":
        reason = "tool_calls"  # complete calls under end_turn (like E7)
    return Finish(reason, raw_reason)


def cut_message(raw_reason: str | None) -> str | None:
    """None when the stop reason says the last tool_use block is whole, else why it is not."""
    if raw_reason in COMPLETE_STOPS:
        return None
    return f"the response stopped ({raw_reason or 'no stop reason'}) while the call's input may be incomplete"


def call_id_of(block: Mapping[str, Any], message_id: Any, index: Any) -> tuple[str, JSONObject | None]:
    """The tool_use id; a deterministic one, flagged ``synthetic_id``, when a proxy sent none."""
    if block.get("id"):
        return str(block["id"]), None
    return synthetic_call_id("anthropic", message_id, index), {"synthetic_id": True}


def error_info(
    error: Mapping[str, Any], status: int | None, headers: Mapping[str, str], request_id: Any = None
) -> ErrorInfo:
    etype = error.get("type")
    message = str(error.get("message") or "")
    kind: ErrorKind | None = ERROR_KINDS.get(str(etype)) if etype else None
    if kind == "invalid_request" and message.startswith(CONTEXT_LENGTH):
        kind = "context_length"
    if kind is None:
        kind = error_kind_from_status(status) if status is not None and status >= 400 else "unknown"
    return ErrorInfo(
        kind=kind,
        message=message,
        status=status,
        retry_after=retry_after_from_headers(headers),
        code=str(etype) if etype else None,
        provider_details={"request_id": request_id} if request_id else {},
    )
