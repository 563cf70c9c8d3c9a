"""Helpers shared by the self-test tests."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from conformance.verdicts import CaseResult

NATIVE = ("openai_chat", "openai_responses", "anthropic", "gemini", "ollama")

References = Callable[[str], tuple[Mapping[tuple[str, str], CaseResult], list[CaseResult]]]
"""The ``references`` fixture: base adapter -> (its cases by (scenario, mode), its failing cases)."""
