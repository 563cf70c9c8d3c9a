"""The adapter contract as ``docs/adapters.md`` states it: ``Adapter`` carries ``tools_in_prompt``,
``prompt_format`` and ``known_gaps`` as fields, and a wrong declaration is an
``AdapterContractError`` (a ``UsageError``: exit 2 on the command line) naming the field and
listing the valid values."""

from __future__ import annotations

import dataclasses
import pickle
from typing import Any

import pytest

from conformance.adapters import BUILTIN, get_adapter, native_adapters, prompt_adapters
from conformance.adapters.base import CAPABILITIES, PROMPT_FORMATS, WIRE_FORMATS, Adapter, contract_problems
from conformance.errors import AdapterContractError, UsageError

HERMES = get_adapter("hermes")


def fields(**changes: Any) -> dict[str, Any]:
    base = {f.name: getattr(HERMES, f.name) for f in dataclasses.fields(HERMES)}
    return {**base, **changes}


def test_the_documented_prompt_adapter_declaration_works() -> None:
    gaps = {"roundtrip.text@basic/*": "drops text (ACME-1)"}
    adapter = Adapter(**fields(name="acme", tools_in_prompt=True, prompt_format="hermes", known_gaps=gaps))
    assert adapter.tools_in_prompt and adapter.prompt_format == "hermes"
    assert adapter.known_gaps == gaps
    assert adapter.traffic_format == "hermes"
    gaps["roundtrip.calls"] = "added later"
    assert "roundtrip.calls" not in adapter.known_gaps  # the value keeps what it was built with


def test_a_native_adapter_is_certified_against_its_wire_format() -> None:
    assert get_adapter("gemini").traffic_format == "gemini"
    assert not get_adapter("gemini").tools_in_prompt and get_adapter("gemini").known_gaps == {}


def test_the_builtin_partition_is_derived_from_the_field() -> None:
    assert prompt_adapters() == ("function_call", "hermes", "qwen")
    assert native_adapters() == ("anthropic", "gemini", "ollama", "openai_chat", "openai_responses")
    assert set(prompt_adapters()) | set(native_adapters()) == set(BUILTIN)
    for name in prompt_adapters():
        assert get_adapter(name).prompt_format == name and get_adapter(name).wire_format == "openai_chat"


@pytest.mark.parametrize(
    ("changes", "needle", "valid"),
    [
        ({"wire_format": "hermes-like"}, "unknown wire_format 'hermes-like'", WIRE_FORMATS),
        ({"wire_format": "openai-chat"}, "unknown wire_format 'openai-chat'", WIRE_FORMATS),
        (
            {"capabilities": frozenset({"streaming", "parallel_tools"})},
            "unknown capability parallel_tools",
            CAPABILITIES,
        ),
        ({"tools_in_prompt": True, "prompt_format": None}, "names its prompt_format", PROMPT_FORMATS),
        ({"tools_in_prompt": True, "prompt_format": "chatml"}, "not 'chatml'", PROMPT_FORMATS),
        ({"tools_in_prompt": False, "prompt_format": "hermes"}, "set tools_in_prompt=True", ()),
        ({"known_gaps": {"roundtrip.text": ""}}, "needs a reason", ()),
        ({"known_gaps": {"@basic/*": "why"}}, "is not a check id", ()),
        ({"name": ""}, "name must be a non-empty string", ()),
    ],
)
def test_a_wrong_declaration_names_the_field_and_the_valid_values(
    changes: dict[str, Any], needle: str, valid: tuple[str, ...]
) -> None:
    with pytest.raises(AdapterContractError) as info:
        Adapter(**fields(**changes))
    assert isinstance(info.value, UsageError)
    assert needle in str(info.value)
    for value in valid:
        assert value in str(info.value)


def test_replace_checks_the_new_value_too() -> None:
    with pytest.raises(AdapterContractError, match="unknown wire_format"):
        dataclasses.replace(HERMES, wire_format="anthropic-v2")


def test_any_object_is_checked_the_same_way() -> None:
    class Duck:
        name = "duck"
        wire_format = "anthropic"
        capabilities = frozenset({"streaming"})

    problems = contract_problems(Duck())
    assert any("lacks stream_from_wire" in p for p in problems)
    assert not any("wire_format" in p for p in problems)


def test_an_adapter_value_pickles_by_reference() -> None:
    """Adapter values reach worker processes: module-level functions and a plain dict of gaps."""
    adapter = dataclasses.replace(get_adapter("anthropic"), known_gaps={"roundtrip.text": "why"})
    assert pickle.loads(pickle.dumps(adapter)) == adapter
