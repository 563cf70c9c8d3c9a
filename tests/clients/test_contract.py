"""The Client contract: ``client_problems`` names what a client-like object declares wrong, and a
``SimpleClient`` built from functions keeps it."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from conformance.adapters.base import CAPABILITIES
from conformance.clients import CLIENT_WIRES, Call, Client, SimpleClient, client_problems
from conformance.model import ErrorInfo, Message, Response, Text


def _complete(call: Call) -> Response:
    return Response(parts=(Text(text="hi"),), finish_reason="stop")


def _error_info(exc: BaseException) -> ErrorInfo | None:
    return None


def _good(**overrides: Any) -> SimpleNamespace:
    fields: dict[str, Any] = {
        "name": "demo",
        "wires": {"openai_chat": frozenset({"streaming"})},
        "known_gaps": {},
        "complete": _complete,
        "error_info": _error_info,
    }
    fields.update(overrides)
    return SimpleNamespace(**fields)


def test_a_good_simple_client_has_no_problems_and_is_a_client() -> None:
    client = SimpleClient(
        name="demo",
        wires={wire: frozenset(CAPABILITIES) for wire in CLIENT_WIRES},
        complete=_complete,
        error_info=_error_info,
        known_gaps={"client.typed_errors": "maps nothing"},
    )
    assert client_problems(client) == []
    assert isinstance(client, Client)
    assert client.complete(Call(wire="openai_chat", base_url="http://127.0.0.1:1", api_key="k", model="m")).text == "hi"


def test_the_client_wires_are_the_native_wire_formats() -> None:
    assert CLIENT_WIRES == ("openai_chat", "openai_responses", "anthropic", "gemini", "ollama")


def test_known_gaps_default_to_none() -> None:
    client = SimpleClient(name="d", wires={"ollama": frozenset()}, complete=_complete, error_info=_error_info)
    assert client.known_gaps == {}
    assert client_problems(client) == []


def test_a_call_defaults_to_one_whole_turn() -> None:
    call = Call(wire="gemini", base_url="http://127.0.0.1:9", api_key="fake", model="gemini-2.5-flash")
    assert (call.stream, call.turn, call.messages, call.tools, call.timeout) == (False, 0, (), (), 30.0)
    assert call.system is None and call.tool_choice is None and call.scenario == ""
    with pytest.raises(TypeError):
        Call("gemini", "http://x", "k", "m")  # type: ignore[misc]  # keyword-only


@pytest.mark.parametrize("name", [None, "", 3])
def test_a_missing_name_is_named(name: object) -> None:
    assert client_problems(_good(name=name)) == ["name must be a non-empty string"]


def test_no_name_attribute_at_all_is_named() -> None:
    client = _good()
    del client.name
    assert client_problems(client) == ["name must be a non-empty string"]


@pytest.mark.parametrize("wires", [None, {}, ["openai_chat"]])
def test_wires_that_map_nothing_are_named_with_the_valid_list(wires: object) -> None:
    (problem,) = client_problems(_good(wires=wires))
    assert problem.startswith("wires must map at least one wire")
    assert all(wire in problem for wire in CLIENT_WIRES)


def test_an_unknown_wire_is_named_with_the_valid_list() -> None:
    (problem,) = client_problems(_good(wires={"mistral": frozenset()}))
    assert problem == f"unknown wire 'mistral' (valid: {', '.join(CLIENT_WIRES)})"


def test_a_prompt_format_is_no_client_wire() -> None:
    (problem,) = client_problems(_good(wires={"hermes": frozenset()}))
    assert "unknown wire 'hermes'" in problem


def test_capabilities_must_be_a_set() -> None:
    (problem,) = client_problems(_good(wires={"anthropic": ["streaming"]}))
    assert problem == "wires['anthropic'] must be a set of capability names"


def test_an_unknown_capability_is_named_with_the_valid_ones() -> None:
    (problem,) = client_problems(_good(wires={"gemini": frozenset({"streaming", "telepathy", "async"})}))
    assert problem.startswith("unknown capability async, telepathy for gemini (valid: ")
    assert "streaming" not in problem.split("(valid:")[0]
    assert all(c in problem for c in CAPABILITIES)


@pytest.mark.parametrize("gaps", [["x"], {"check": 1}, {2: "reason"}, "check"])
def test_gaps_that_are_not_a_mapping_of_strings_are_named(gaps: object) -> None:
    assert client_problems(_good(known_gaps=gaps)) == [
        "known_gaps must map check ids (or check@scenario-glob) to reasons"
    ]


def test_missing_methods_are_named() -> None:
    client = _good(complete="not callable")
    del client.error_info
    assert client_problems(client) == ["complete must be a method", "error_info must be a method"]


def test_every_problem_is_named_at_once() -> None:
    problems = client_problems(object())
    assert problems == [
        "name must be a non-empty string",
        f"wires must map at least one wire ({', '.join(CLIENT_WIRES)}) to its capabilities",
        "complete must be a method",
        "error_info must be a method",
    ]


def test_several_wires_each_get_their_own_problem() -> None:
    wires = {"openai_chat": frozenset({"bogus"}), "nope": frozenset(), "ollama": {"streaming"}}
    problems = client_problems(_good(wires=wires))
    assert len(problems) == 2
    assert problems[0].startswith("unknown capability bogus for openai_chat")
    assert problems[1].startswith("unknown wire 'nope'")


def test_a_message_history_is_carried_as_given() -> None:
    history = (Message(role="user", parts=(Text(text="hi"),)),)
    call = Call(wire="ollama", base_url="http://127.0.0.1:1", api_key="k", model="m", messages=history, turn=1)
    assert call.messages == history and call.turn == 1
