"""The tool names each wire accepts (wire-formats.md §1a, §2a, §3a, §4a, §5a; E14): what
``translation.tool_names`` judges, and what a client that maps names may choose from."""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = ["NAME_RULES"]

_OPENAI_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
NAME_RULES: Mapping[str, re.Pattern[str]] = {
    "openai_chat": _OPENAI_NAME,
    "openai_responses": _OPENAI_NAME,
    "anthropic": re.compile(r"^[a-zA-Z0-9_-]{1,128}$"),  # the API's 400 names the pattern (wire-formats.md §3a)
    "ollama": _OPENAI_NAME,
    "gemini": re.compile(r"^[a-zA-Z_][a-zA-Z0-9_.:-]{0,127}$"),
}
