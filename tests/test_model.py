"""Tests for ``conformance.model``: pure, frozen values (style.md §4) and their closed vocabularies."""

from __future__ import annotations

import copy
import dataclasses
import pickle
import typing
from typing import Any, Literal, get_args

import pytest

from conformance import model
from conformance.model import (
    ERROR_KINDS,
    FINISH_REASONS,
    Audio,
    ErrorEvent,
    ErrorInfo,
    ErrorKind,
    Finish,
    FinishReason,
    Image,
    Message,
    Reasoning,
    ReasoningDelta,
    Request,
    Resource,
    Response,
    StreamEvent,
    Text,
    TextDelta,
    Tool,
    ToolCall,
    ToolCallChunk,
    ToolCallEnd,
    ToolCallStart,
    ToolResult,
    Usage,
    UsageEvent,
)

# One instance of every value type, built with the fewest arguments each needs.
VALUES: list[Any] = [
    Tool(name="t"),
    Text(text="x"),
    Image(media_type="image/png", data="AA=="),
    Audio(media_type="audio/wav", data="AA=="),
    Resource(uri="file:///a"),
    ToolCall(id="c", name="t", arguments={}),
    ToolResult(call_id="c"),
    Reasoning(text="r"),
    Message(role="user", parts=(Text(text="hi"),)),
    Request(model="m"),
    Usage(input_tokens=1),
    ErrorInfo(kind="server", message="boom"),
    Response(),
]
EVENTS: list[Any] = [
    TextDelta("x"),
    ReasoningDelta("r"),
    ToolCallStart("c", "t", 0),
    ToolCallChunk("c", "{"),
    ToolCallEnd("c", "{}", {}),
    Finish("stop"),
    UsageEvent(Usage()),
    ErrorEvent(ErrorInfo(kind="server", message="boom")),
]
KW_ONLY = [type(v) for v in VALUES]


@pytest.mark.parametrize("value", VALUES + EVENTS, ids=lambda v: type(v).__name__)
def test_values_are_frozen(value: Any) -> None:
    first = dataclasses.fields(value)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(value, first, getattr(value, first))


@pytest.mark.parametrize("cls", KW_ONLY, ids=lambda c: c.__name__)
def test_value_types_are_keyword_only(cls: type) -> None:
    assert all(f.kw_only for f in dataclasses.fields(cls)), cls
    with pytest.raises(TypeError):
        cls("positional")


def test_stream_events_take_positional_arguments() -> None:
    # Adapters build events positionally (base.CallTracker does: ToolCallStart(id, name, index, details)).
    assert ToolCallStart("c", "t", 0, {"k": 1}).provider_details == {"k": 1}
    assert ToolCallEnd("c", "", None, "bad").arguments_error == "bad"
    assert Finish("stop", "end_turn").provider_reason == "end_turn"


@pytest.mark.parametrize("event", EVENTS, ids=lambda v: type(v).__name__)
def test_stream_events_have_slots_and_no_dict(event: Any) -> None:
    assert not hasattr(event, "__dict__")


@pytest.mark.parametrize("value", [v for v in VALUES if not isinstance(v, ErrorInfo)], ids=lambda v: type(v).__name__)
def test_each_value_has_a_literal_kind_matching_its_default(value: Any) -> None:
    hints = typing.get_type_hints(type(value))
    (only,) = get_args(hints["kind"])
    assert value.kind == only


@pytest.mark.parametrize("event", EVENTS, ids=lambda v: type(v).__name__)
def test_each_event_has_a_literal_type_matching_its_default(event: Any) -> None:
    hints = typing.get_type_hints(type(event))
    (only,) = get_args(hints["type"])
    assert event.type == only


def test_error_info_kind_is_the_error_kind() -> None:
    # ErrorInfo's ``kind`` is the error's kind (the closed ErrorKind vocabulary), not a type tag.
    assert typing.get_type_hints(ErrorInfo)["kind"] == ErrorKind
    assert ErrorInfo(kind="rate_limit", message="m").kind in ERROR_KINDS


def test_stream_event_union_holds_every_event_type() -> None:
    assert set(get_args(StreamEvent)) == {type(e) for e in EVENTS}


def test_event_type_names_are_distinct() -> None:
    assert len({e.type for e in EVENTS}) == len(EVENTS)


def test_closed_vocabularies_match_their_literals() -> None:
    assert get_args(FinishReason) == FINISH_REASONS
    assert get_args(ErrorKind) == ERROR_KINDS


def test_mutable_defaults_are_not_shared() -> None:
    a, b = Tool(name="a"), Tool(name="b")
    assert a.input_schema == {"type": "object"}
    assert a.input_schema is not b.input_schema
    assert Text(text="x").provider_details is not Text(text="y").provider_details


def test_values_compare_and_hash_by_value() -> None:
    assert Text(text="x") == Text(text="x")
    assert Text(text="x") != Text(text="y")
    assert hash(TextDelta("x")) == hash(TextDelta("x"))
    assert ToolCall(id="c", name="t", arguments={"a": 1}) == ToolCall(id="c", name="t", arguments={"a": 1})


def test_response_text_joins_only_text_parts() -> None:
    r = Response(
        parts=(
            Reasoning(text="thinking"),
            Text(text="Hello"),
            ToolCall(id="c1", name="f", arguments={}),
            Text(text=", world"),
        )
    )
    assert r.text == "Hello, world"
    assert Response().text == ""


def test_response_tool_calls_in_order() -> None:
    c1 = ToolCall(id="c1", name="f", arguments={"a": 1})
    c2 = ToolCall(id="c2", name="g", arguments=None, arguments_error="bad")
    r = Response(parts=(c1, Text(text="between"), c2))
    assert r.tool_calls == (c1, c2)
    assert Response(parts=(Text(text="x"),)).tool_calls == ()


def test_replace_makes_a_new_value() -> None:
    t = Tool(name="a", description="d")
    u = dataclasses.replace(t, name="b")
    assert (t.name, u.name, u.description) == ("a", "b", "d")


def test_json_object_alias_is_a_str_keyed_dict() -> None:
    assert typing.get_origin(model.JSONObject) is dict
    assert get_args(model.JSONObject)[0] is str


@dataclasses.dataclass(frozen=True, slots=True)
class _GeneratedChunk:
    """``ToolCallChunk`` as ``dataclass`` writes it whole (its ``__init__`` included)."""

    tool_call_id: str
    tool_call_arguments_chunk: str
    type: Literal["tool_call_chunk"] = "tool_call_chunk"


def test_tool_call_chunk_is_the_generated_dataclass_but_for_its_init() -> None:
    # ToolCallChunk writes its own __init__ (slot setters: cheaper per fragment); all else must be
    # what dataclass(frozen=True, slots=True) gives.
    def shape(f: dataclasses.Field[Any]) -> tuple[Any, ...]:
        return (f.name, f.type, f.default, f.default_factory, f.init, f.repr, f.hash, f.compare, f.kw_only)

    assert [shape(f) for f in dataclasses.fields(ToolCallChunk)] == [
        shape(f) for f in dataclasses.fields(_GeneratedChunk)
    ]
    params = ToolCallChunk.__dataclass_params__  # type: ignore[attr-defined]
    assert params.frozen and params.eq and not params.init
    assert ToolCallChunk.__slots__ == _GeneratedChunk.__slots__
    assert ToolCallChunk.__match_args__ == _GeneratedChunk.__match_args__
    calls: list[tuple[Any, Any]] = [
        (("c", "{"), {}),
        ((), {"tool_call_id": "c", "tool_call_arguments_chunk": "{"}),
        (("c", ""), {"type": "tool_call_chunk"}),
    ]
    for args, kwargs in calls:
        ours, generated = ToolCallChunk(*args, **kwargs), _GeneratedChunk(*args, **kwargs)
        assert dataclasses.astuple(ours) == dataclasses.astuple(generated)
        assert dataclasses.asdict(ours) == dataclasses.asdict(generated)
        assert repr(ours) == repr(generated).replace("_GeneratedChunk", "ToolCallChunk")
        assert hash(ours) == hash(generated)
        assert ours == ToolCallChunk(*args, **kwargs) and ours != ToolCallChunk("other", "{")
        assert ours != generated  # type: ignore[comparison-overlap]  # eq compares the class too
    chunk = ToolCallChunk("c", "{", "tool_call_chunk")
    with pytest.raises(dataclasses.FrozenInstanceError):
        chunk.tool_call_arguments_chunk = "}"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del chunk.tool_call_id
    with pytest.raises(TypeError):
        ToolCallChunk("c")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        ToolCallChunk("c", "{", "tool_call_chunk", "extra")  # type: ignore[call-arg]
    assert dataclasses.replace(chunk, tool_call_arguments_chunk="}") == ToolCallChunk("c", "}")
    assert pickle.loads(pickle.dumps(chunk)) == chunk
    assert copy.copy(chunk) == chunk and copy.deepcopy(chunk) == chunk
