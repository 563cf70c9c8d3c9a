"""OpenAI's error envelope, shared by the Chat Completions and Responses APIs (one mapping).

Both APIs answer an error with ``{"error": {"message", "type", "param", "code"}}`` (wire-formats.md
§1e, §2e; openai-python ``_exceptions.py`` and ``types/shared/error_object.py``), and Responses
streams carry the same object in ``error`` and ``response.failed`` events. The kind comes from
``error.code`` first, then the HTTP status, then ``error.type``; ``retry-after-ms``/``retry-after``
give ``retry_after``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from conformance.adapters.base import error_kind_from_status, load_json_body, retry_after_from_headers
from conformance.errors import ProviderError
from conformance.model import ErrorInfo, ErrorKind

__all__ = ["ERROR_KINDS", "error_from_wire", "error_info"]

ERROR_KINDS: dict[str, ErrorKind] = {
    # error.code first, then error.type (OAI-SPEC Error; SDK ResponseError.code; recorded 401/404 bodies)
    "rate_limit_exceeded": "rate_limit",
    "insufficient_quota": "rate_limit",
    "invalid_api_key": "auth",
    "authentication_error": "auth",
    "permission_denied": "permission",
    "model_not_found": "not_found",  # a 400 on Responses (§2e), still "no such model"
    "not_found_error": "not_found",
    "context_length_exceeded": "context_length",
    "server_error": "server",
    "vector_store_timeout": "server",  # Responses (SDK ResponseError.code)
    "overloaded": "overloaded",
    "invalid_prompt": "invalid_request",  # Responses (SDK ResponseError.code)
    "invalid_image": "invalid_request",  # Responses (SDK ResponseError.code)
    "invalid_request_error": "invalid_request",
}


def error_info(error: Any, status: int | None = None, headers: Mapping[str, str] | None = None) -> ErrorInfo:
    """An OpenAI error object (or any value standing for one) -> the unified error."""
    if isinstance(error, Mapping):
        code = error.get("code")
        etype = error.get("type")
        message = str(error.get("message") or "")
    else:
        code, etype, message = None, None, str(error)
    kind: ErrorKind | None = ERROR_KINDS.get(str(code)) if code else None
    if kind is None and status is not None and status >= 400:
        kind = error_kind_from_status(status)
    if kind is None:
        kind = ERROR_KINDS.get(str(etype), "unknown")
    return ErrorInfo(
        kind=kind,
        message=message,
        status=status,
        retry_after=retry_after_from_headers(headers or {}),
        code=str(code or etype) if (code or etype) else None,
    )


def error_from_wire(
    status: int, headers: Mapping[str, str], body: bytes | str | Mapping[str, Any] | None
) -> ProviderError:
    """An HTTP error response -> typed provider error (§1e, §2e; a 400 on a stream request is JSON, E23).
    A body that is not the envelope keeps its text as the message."""
    parsed = load_json_body(body)
    error = parsed.get("error") if isinstance(parsed, Mapping) else None
    if error is None:
        text = body.decode("utf-8", "replace") if isinstance(body, bytes) else str(body or "")
        error = {"message": text.strip() or f"HTTP {status}"}
    return ProviderError(error_info(error, status, headers))
