"""Tests for ``conformance.assembly``: the one fold and the event-lifecycle validator.

Expected values follow the stream-event rules of design.md ("Invariants hold for every stream")
and wire-formats.md §9 (accumulation), not the fold's own output.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from conformance.assembly import fold, lifecycle_problems
from conformance.model import (
    ErrorEvent,
    ErrorInfo,
    Finish,
    Reasoning,
    ReasoningDelta,
    StreamEvent,
    Text,
    TextDelta,
    ToolCall,
    ToolCallChunk,
    ToolCallEnd,
    ToolCallStart,
    Usage,
    UsageEvent,
)


def call(call_id: str, name: str, index: int, *chunks: str) -> list[StreamEvent]:
    """A complete, valid call: start, chunks, end with the chunks parsed as JSON."""
    raw = "".join(chunks)
    events: list[StreamEvent] = [ToolCallStart(call_id, name, index)]
    events += [ToolCallChunk(call_id, c) for c in chunks]
    events.append(ToolCallEnd(call_id, raw, json.loads(raw) if raw else {}))
    return events


# --------------------------------------------------------------------------------------------
# fold
# --------------------------------------------------------------------------------------------


def test_text_deltas_make_one_text_part() -> None:
    r = fold([TextDelta("Hel"), TextDelta("lo, "), TextDelta("wörld 中"), Finish("stop", "end_turn")])
    assert r.parts == (Text(text="Hello, wörld 中"),)
    assert r.text == "Hello, wörld 中"
    assert r.finish_reason == "stop"
    assert r.provider_details["finish_reason"] == "end_turn"


def test_text_call_text_keep_their_order() -> None:
    events: list[StreamEvent] = [
        TextDelta("Let me "),
        TextDelta("check."),
        *call("c1", "get_weather", 0, '{"city":', '"Paris"}'),
        TextDelta("Done"),
        TextDelta("."),
        Finish("tool_calls"),
    ]
    r = fold(events)
    assert r.parts == (
        Text(text="Let me check."),
        ToolCall(id="c1", name="get_weather", arguments={"city": "Paris"}, arguments_raw='{"city":"Paris"}'),
        Text(text="Done."),
    )


def test_parallel_interleaved_calls_keep_start_order() -> None:
    # OpenAI Chat interleaves parallel calls by index; Anthropic closes blocks in any order.
    events: list[StreamEvent] = [
        ToolCallStart("a", "first", 0),
        ToolCallStart("b", "second", 1),
        ToolCallChunk("b", '{"y":'),
        ToolCallChunk("a", '{"x":'),
        ToolCallChunk("b", "2}"),
        ToolCallEnd("b", '{"y":2}', {"y": 2}),
        ToolCallChunk("a", "1}"),
        ToolCallEnd("a", '{"x":1}', {"x": 1}),
        Finish("tool_calls"),
    ]
    r = fold(events)
    assert [(c.id, c.name, c.arguments, c.arguments_raw) for c in r.tool_calls] == [
        ("a", "first", {"x": 1}, '{"x":1}'),
        ("b", "second", {"y": 2}, '{"y":2}'),
    ]


def test_call_arguments_raw_error_and_details_are_carried() -> None:
    events: list[StreamEvent] = [
        ToolCallStart("c", "f", 0, {"thoughtSignature": "sig=="}),
        ToolCallChunk("c", '{"a": '),
        ToolCallEnd("c", '{"a": ', None, "invalid JSON in arguments"),
        Finish("length"),
    ]
    (tc,) = fold(events).tool_calls
    assert tc == ToolCall(
        id="c",
        name="f",
        arguments=None,
        arguments_raw='{"a": ',
        arguments_error="invalid JSON in arguments",
        provider_details={"thoughtSignature": "sig=="},
    )


def test_reasoning_with_signature_and_redacted_blocks() -> None:
    # Anthropic: thinking deltas then a signature_delta close a block; redacted_thinking is whole.
    events: list[StreamEvent] = [
        ReasoningDelta("I should "),
        ReasoningDelta("call f."),
        ReasoningDelta("", signature="EqQBCkgI"),
        ReasoningDelta(redacted="EmwKAhgBEgy3va"),
        *call("c", "f", 0, "{}"),
        ReasoningDelta("then answer"),
        TextDelta("Answer"),
        Finish("stop"),
    ]
    r = fold(events)
    assert r.parts == (
        Reasoning(text="I should call f.", signature="EqQBCkgI"),
        Reasoning(redacted="EmwKAhgBEgy3va"),
        ToolCall(id="c", name="f", arguments={}, arguments_raw="{}"),
        Reasoning(text="then answer"),
        Text(text="Answer"),
    )
    assert r.text == "Answer"  # reasoning is not text


def test_reasoning_provider_details_close_the_block_and_ride_on_the_part() -> None:
    # The OpenAI Responses `reasoning` item is replayed whole (encrypted_content, id).
    details = {"id": "rs_1", "encrypted_content": "gAAA"}
    r = fold([ReasoningDelta("a"), ReasoningDelta("b", provider_details=details), ReasoningDelta("c"), Finish("stop")])
    assert r.parts == (Reasoning(text="ab", provider_details=details), Reasoning(text="c"))


def test_text_closes_before_reasoning_starts() -> None:
    r = fold([TextDelta("a"), ReasoningDelta("r"), TextDelta("b"), Finish("stop")])
    assert r.parts == (Text(text="a"), Reasoning(text="r"), Text(text="b"))


def test_usage_last_wins() -> None:
    # Gemini repeats usage on every chunk and the last may revise it (E19).
    events: list[StreamEvent] = [
        UsageEvent(Usage(input_tokens=10, output_tokens=1)),
        TextDelta("x"),
        UsageEvent(Usage(input_tokens=10, output_tokens=7, total_tokens=17)),
        Finish("stop"),
    ]
    assert fold(events).usage == Usage(input_tokens=10, output_tokens=7, total_tokens=17)


def test_no_usage_is_none() -> None:
    assert fold([Finish("stop")]).usage is None


def test_error_without_finish_gives_finish_reason_error() -> None:
    info = ErrorInfo(kind="overloaded", message="Overloaded")
    r = fold([TextDelta("partial"), ErrorEvent(info)])
    assert r.finish_reason == "error"
    assert r.error == info
    assert r.text == "partial"


def test_error_with_an_explicit_finish_keeps_that_finish() -> None:
    info = ErrorInfo(kind="stream_incomplete", message="cut")
    r = fold([ErrorEvent(info), Finish("error")])
    assert (r.finish_reason, r.error) == ("error", info)


def test_no_events_give_an_empty_response() -> None:
    r = fold([])
    assert (r.parts, r.finish_reason, r.usage, r.error) == ((), None, None, None)


def test_a_call_that_never_ended_is_kept_with_an_arguments_error() -> None:
    events: list[StreamEvent] = [
        ToolCallStart("c", "f", 0, {"k": "v"}),
        ToolCallChunk("c", '{"a"'),
        ToolCallChunk("c", ": 1"),
        TextDelta("after"),
    ]
    r = fold(events)
    (tc,) = r.tool_calls
    assert tc.arguments is None
    assert tc.arguments_error
    assert tc.arguments_raw == '{"a": 1'
    assert tc.provider_details == {"k": "v"}
    assert r.parts[0] == tc  # it keeps its place before the later text
    assert r.parts[1] == Text(text="after")


def test_empty_text_deltas_are_ignored() -> None:
    r = fold([TextDelta(""), ReasoningDelta("a"), TextDelta(""), ReasoningDelta("b", signature="s"), Finish("stop")])
    assert r.parts == (Reasoning(text="ab", signature="s"),)
    assert fold([TextDelta(""), Finish("stop")]).parts == ()


def test_chunks_and_ends_for_unknown_calls_are_ignored() -> None:
    r = fold([ToolCallChunk("ghost", "{}"), ToolCallEnd("ghost", "{}", {}), Finish("stop")])
    assert r.parts == ()


def test_provider_details_are_passed_through_and_not_overwritten() -> None:
    r = fold([Finish("stop", "STOP")], provider_details={"id": "resp_1", "finish_reason": "given"})
    assert r.provider_details == {"id": "resp_1", "finish_reason": "given"}
    assert fold([Finish("stop")]).provider_details == {}


def test_fold_reads_a_generator_once() -> None:
    def events() -> Iterator[StreamEvent]:
        yield TextDelta("a")
        yield from call("c", "f", 0, '{"q":', "1}")
        yield Finish("tool_calls")

    r = fold(events())
    assert r.text == "a"
    assert r.tool_calls[0].arguments == {"q": 1}


# --------------------------------------------------------------------------------------------
# lifecycle_problems
# --------------------------------------------------------------------------------------------

VALID: list[StreamEvent] = [
    UsageEvent(Usage(input_tokens=1)),
    ReasoningDelta("think", signature="s"),
    TextDelta("hi"),
    *call("a", "f", 0, '{"x":', "1}"),
    *call("b", "g", 1),
    ErrorEvent(ErrorInfo(kind="server", message="late")),
    Finish("tool_calls"),
]


def test_a_valid_stream_has_no_problems() -> None:
    assert lifecycle_problems(VALID) == []
    assert lifecycle_problems([Finish("stop")]) == []


def test_interleaved_calls_are_valid() -> None:
    events: list[StreamEvent] = [
        ToolCallStart("a", "f", 0),
        ToolCallStart("b", "g", 1),
        ToolCallChunk("b", "{}"),
        ToolCallChunk("a", "{}"),
        ToolCallEnd("a", "{}", {}),
        ToolCallEnd("b", "{}", {}),
        Finish("tool_calls"),
    ]
    assert lifecycle_problems(events) == []


@pytest.mark.parametrize(
    ("events", "expected"),
    [
        pytest.param(
            [ToolCallChunk("a", "{}"), *call("a", "f", 0, "{}"), Finish("tool_calls")],
            "not open",
            id="chunk-before-start",
        ),
        pytest.param(
            [ToolCallEnd("a", "", {}), Finish("stop")],
            "not open",
            id="end-without-start",
        ),
        pytest.param(
            [*call("a", "f", 0), *call("a", "f", 1), Finish("tool_calls")],
            "started twice",
            id="duplicate-start",
        ),
        pytest.param(
            [
                ToolCallStart("a", "f", 0),
                ToolCallChunk("a", '{"x":'),
                ToolCallEnd("a", '{"x":2}', {"x": 2}),
                Finish("tool_calls"),
            ],
            "do not concatenate",
            id="chunks-not-concatenating",
        ),
        pytest.param(
            [ToolCallStart("a", "f", 0), ToolCallEnd("a", "", {}, "bad"), Finish("tool_calls")],
            "exactly one of arguments / arguments_error",
            id="both-arguments-and-error",
        ),
        pytest.param(
            [ToolCallStart("a", "f", 0), ToolCallEnd("a", "", None, None), Finish("tool_calls")],
            "exactly one of arguments / arguments_error",
            id="neither-arguments-nor-error",
        ),
        pytest.param(
            [Finish("stop"), TextDelta("late")],
            "after finish",
            id="event-after-finish",
        ),
        pytest.param(
            [Finish("stop"), Finish("stop")],
            "after finish",
            id="two-finishes",
        ),
        pytest.param(
            [TextDelta("no end")],
            "no finish",
            id="no-finish",
        ),
        pytest.param(
            [ToolCallStart("a", "f", 0), ToolCallChunk("a", "{"), Finish("length")],
            "still open",
            id="call-open-at-finish",
        ),
        pytest.param(
            [ToolCallStart("a", "f", 0)],
            "never ended",
            id="call-never-ended",
        ),
        pytest.param(
            [*call("a", "f", 1), Finish("tool_calls")],
            "index 1, expected 0",
            id="index-not-from-zero",
        ),
        pytest.param(
            [*call("a", "f", 0), *call("b", "g", 0), Finish("tool_calls")],
            "index 0, expected 1",
            id="index-repeated",
        ),
        pytest.param(
            [TextDelta("a"), TextDelta(""), Finish("stop")],
            "empty text delta",
            id="empty-text-delta",
        ),
        pytest.param(
            [*call("", "f", 0), Finish("tool_calls")],
            "empty tool_call_id",
            id="empty-id",
        ),
        pytest.param(
            [*call("a", "", 0), Finish("tool_calls")],
            "empty tool_call_name",
            id="empty-name",
        ),
    ],
)
def test_each_violation_is_reported(events: list[StreamEvent], expected: str) -> None:
    problems = lifecycle_problems(events)
    assert any(expected in p for p in problems), problems


def test_problems_name_the_event_position() -> None:
    (problem,) = lifecycle_problems([TextDelta("a"), TextDelta(""), Finish("stop")])
    assert problem.startswith("event 1 (text_delta)")


def test_every_problem_is_reported_not_only_the_first() -> None:
    events: list[StreamEvent] = [TextDelta(""), ToolCallChunk("x", "{"), ToolCallStart("a", "f", 3)]
    problems = lifecycle_problems(events)
    assert len(problems) == 5, problems  # empty delta, chunk not open, index, never ended, no finish
