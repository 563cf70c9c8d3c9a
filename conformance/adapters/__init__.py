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

__all__ = ["BUILTIN", "NATIVE", "PROMPT_BASED", "Adapter", "adapter_names", "detect_adapter", "get_adapter"]

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

NATIVE: tuple[str, ...] = ("anthropic", "gemini", "ollama", "openai_chat", "openai_responses")
"""The adapters of providers' native tool APIs (the others are prompt-based, riding ``openai_chat``)."""

PROMPT_BASED: tuple[str, ...] = ("function_call", "hermes", "qwen")
"""Adapters that write the tools into the prompt and parse calls out of the text (no tool fields on
the wire). A user's adapter says the same with a true ``tools_in_prompt`` attribute."""


def adapter_names() -> list[str]:
    return sorted(BUILTIN)


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
    path = urlsplit(url).path.rstrip("/")
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
