"""Tests for ``conformance.traffic.cassette_diff``: a cassette compared with itself has no change; each kind
of provider change (a field added, removed or retyped, an event kind gone, a value, a header, an
interaction) is named with its place and path; volatile values alone are no change."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from conformance.traffic.cassette_diff import MAX_VALUES, Change, compare_cassettes
from conformance.traffic.safe_yaml import load_yaml

ROOT = Path(__file__).resolve().parents[2]


def cassette(name: str) -> dict[str, Any]:
    document = load_yaml((ROOT / "cassettes" / name).read_bytes())
    assert isinstance(document, dict)
    return document


def chunks_of(document: dict[str, Any], index: int) -> list[str]:
    chunks = document["interactions"][index]["response"]["body"]["chunks"]
    assert isinstance(chunks, list)
    return chunks


def described(changes: tuple[Change, ...]) -> list[str]:
    return [c.describe() for c in changes]


def test_a_cassette_has_no_change_against_itself() -> None:
    stored = cassette("anthropic/basic/get_time.yaml")
    assert compare_cassettes(stored, copy.deepcopy(stored)) == ()


def test_volatile_values_alone_are_no_change() -> None:
    stored = cassette("openai_chat/basic/get_time.yaml")
    call = stored["interactions"][0]["response"]["parsed_body"]["choices"][0]["message"]["tool_calls"][0]
    other = "call_" + "Z" * (len(call["id"]) - 5)  # another recording's id, wherever the old one was
    fresh = json.loads(json.dumps(stored).replace(call["id"], other))
    fresh["interactions"][0]["response"]["parsed_body"]["created"] += 42
    fresh["provenance"]["recorded"] = "2030-01-01T00:00:00Z"
    assert compare_cassettes(stored, fresh) == ()


def test_shape_changes_are_named_by_kind_and_path() -> None:
    stored = cassette("openai_chat/basic/get_time.yaml")
    fresh = copy.deepcopy(stored)
    body = fresh["interactions"][0]["response"]["parsed_body"]
    body["usage"]["prompt_tokens"] = str(body["usage"]["prompt_tokens"])  # integer -> string
    body["annotations"] = {"nested": [1]}  # one line for the added subtree
    stream = chunks_of(fresh, 2)
    fresh["interactions"][2]["response"]["body"]["chunks"] = [
        c.replace('"service_tier":"default",', "") for c in stream
    ]

    lines = described(compare_cassettes(stored, fresh))

    assert lines == [
        "interactions[0].response response: added $.annotations (object)",
        "interactions[0].response response: type changed $.usage.prompt_tokens (integer -> string)",
        "interactions[2].response stream_event:chat.completion.chunk: removed $.service_tier (string)",
    ]


def test_values_events_headers_and_interactions() -> None:
    stored = cassette("anthropic/basic/get_time.yaml")
    fresh = copy.deepcopy(stored)
    body = fresh["interactions"][0]["response"]["parsed_body"]
    body["stop_reason"] = "end_turn"
    fresh["interactions"][0]["response"]["headers"]["x-new-header"] = ["1"]
    stream = chunks_of(fresh, 2)
    fresh["interactions"][2]["response"]["body"]["chunks"] = [c for c in stream if "event: ping" not in c]
    fresh["provenance"]["model"] = "claude-other"
    del fresh["interactions"][3]
    assert any("event: ping" in c for c in stream)  # the stored stream has Anthropic's ping event

    changes = compare_cassettes(stored, fresh)
    lines = described(changes)

    assert 'provenance provenance: value changed model ("' in lines[0] and '-> "claude-other")' in lines[0]
    assert "cassette interactions: value changed (4 interaction(s) -> 3 interaction(s))" in lines
    assert 'interactions[0].response response: value changed $.stop_reason ("tool_use" -> "end_turn")' in lines
    assert 'interactions[0].response headers: added x-new-header (["1"])' in lines
    assert "interactions[2].response stream_event:ping: removed (1 body/event(s))" in lines
    (events,) = [c for c in changes if c.kind == "events"]
    assert events.stored.startswith("stream_event:ping") and "ping" not in events.fresh


def test_value_changes_are_capped_and_counted() -> None:
    stored = cassette("openai_chat/basic/text_only_reply.yaml")
    fresh = copy.deepcopy(stored)
    stream = chunks_of(fresh, 1)
    texts = [c for c in stream if '"content":"' in c]
    assert len(texts) > MAX_VALUES  # a reply streamed in many pieces
    fresh["interactions"][1]["response"]["body"]["chunks"] = [
        c.replace('"content":"', '"content":"~') if c in texts else c for c in stream
    ]

    changes = compare_cassettes(stored, fresh)

    assert [c.kind for c in changes[:MAX_VALUES]] == ["stream_event:chat.completion.chunk"] * MAX_VALUES
    assert (
        changes[-1].describe()
        == f"interactions[1].response values: value changed (… -> {len(texts) - MAX_VALUES} more)"
    )
    assert changes[0].where.startswith("interactions[1].response.events[")
    assert json.loads(changes[0].fresh).startswith("~")
