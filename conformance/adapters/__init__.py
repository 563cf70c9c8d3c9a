"""Reference adapters and the registry that finds them by name or by the traffic they serve.

Built-in adapters load lazily (importing one never imports the others), so the CLI starts fast.
Registries are plain dicts: an unknown name raises ``AdapterNotFoundError`` listing the valid ones.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from conformance.adapters.base import Adapter
from conformance.errors import AdapterNotFoundError

__all__ = [
    "BUILTIN",
    "Adapter",
    "adapter_names",
    "detect_adapter",
    "for_format",
    "get_adapter",
    "native_adapters",
    "prompt_adapters",
]

BUILTIN: Mapping[str, str] = {
    "openai_chat": "conformance.adapters.openai_chat",
    "openai_responses": "conformance.adapters.openai_responses",
    "anthropic": "conformance.adapters.anthropic",
    "gemini": "conformance.adapters.gemini",
    "ollama": "conformance.adapters.ollama",
    "qwen": "conformance.adapters.qwen",
    "hermes": "conformance.adapters.hermes",
    "function_call": "conformance.adapters.function_call",
}
"""Adapter name -> module holding its ``ADAPTER`` value."""


def adapter_names() -> list[str]:
    return sorted(BUILTIN)


def native_adapters() -> tuple[str, ...]:
    """The built-in adapters of providers' native tool APIs (their ``tools_in_prompt`` is false)."""
    return tuple(n for n in adapter_names() if not get_adapter(n).tools_in_prompt)


def prompt_adapters() -> tuple[str, ...]:
    """The built-in prompt-based adapters (``tools_in_prompt``: tools written into the prompt, calls
    parsed out of the reply text)."""
    return tuple(n for n in adapter_names() if get_adapter(n).tools_in_prompt)


def for_format(traffic_format: str) -> Adapter:
    """The reference adapter for a wire format or a prompt format (``Adapter.traffic_format``): how
    the emulator and ``conformance inspect`` read traffic of that format."""
    adapter = get_adapter(traffic_format) if traffic_format in BUILTIN else None
    if adapter is None or adapter.traffic_format != traffic_format:  # each bundled adapter bears its format's name
        raise AdapterNotFoundError(traffic_format, BUILTIN)
    return adapter


def get_adapter(name: str) -> Adapter:
    """The built-in adapter called ``name``."""
    module = BUILTIN.get(name)
    if module is None:
        raise AdapterNotFoundError(name, BUILTIN)
    adapter = importlib.import_module(module).ADAPTER
    assert isinstance(adapter, Adapter)
    return adapter


def detect_adapter(url: str, body: Mapping[str, Any] | None = None) -> str | None:
    """The wire format of a request, from its URL (and body where the URL is ambiguous).

    Returns an adapter name, or None when no adapter serves the endpoint (the caller reports it).
    OpenAI-compatible servers (Azure deployments, Mistral, Gemini's ``/openai/`` endpoint) speak
    ``openai_chat``; Bedrock "mantle" serves ``openai_responses`` at ``/openai/v1/responses``.
    """
    try:
        path = urlsplit(url).path.rstrip("/")
    except ValueError:  # not a URL (``http://[::1``): no adapter serves it
        return None
    if path.endswith("/chat/completions"):
        return "openai_chat"
    if path.endswith("/responses"):
        return "openai_responses"
    if path.endswith("/v1/messages"):
        return "anthropic"
    if path.endswith(":generateContent") or path.endswith(":streamGenerateContent"):
        return "gemini"
    if path.endswith("/api/chat"):
        return "ollama"
    return None
