"""Every adapter against real recorded traffic: the tests that are the same for all of them.

Parametrised over the adapters' ``RealWorld`` declarations (``tests/adapters/_realworld.py``), each
built in ``test_<adapter>_realworld.py`` from MANIFEST tables; the adapter-specific tests stay
there. Expected values come from ``tests/realworld/MANIFEST.md``, from the recorded bytes read with
a naive parser independent of the adapter, and from the wire; never from our own output.
"""

from __future__ import annotations

from typing import Any

import pytest
from deepdiff import DeepDiff
from hypothesis import given, settings
from hypothesis import strategies as st
from test_anthropic_realworld import SPEC as ANTHROPIC
from test_gemini_realworld import SPEC as GEMINI
from test_ollama_realworld import SPEC as OLLAMA
from test_openai_chat_realworld import SPEC as OPENAI_CHAT
from test_openai_responses_realworld import SPEC as OPENAI_RESPONSES

from conformance.assembly import fold, lifecycle_problems
from conformance.errors import WireFormatError
from conformance.model import Finish
from conformance.traffic.cassettes import Interaction, is_streaming
from tests.adapters._realworld import (
    RealWorld,
    cut,
    interaction_id,
    interaction_params,
    utf8_inside,
)

pytestmark = pytest.mark.realworld

SPECS = [ANTHROPIC, GEMINI, OLLAMA, OPENAI_CHAT, OPENAI_RESPONSES]


def _by_file(table: str) -> list[Any]:
    """``(spec, file)`` for every file of one of the specs' tables (``non_stream_calls``, ...)."""
    return [pytest.param(s, name, id=f"{s}:{name}") for s in SPECS for name in sorted(getattr(s, table))]


# --------------------------------------------------------------------------------------------
# Every interaction
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("spec", SPECS, ids=str)
def test_the_recordings_are_all_found(spec: RealWorld) -> None:
    paths = spec.paths()
    own = [p for p in paths if p.parent.name == spec.name]
    other = [p for p in paths if p.parent.name == "other"]
    # MANIFEST "Counts": the files of the adapter's own section; the other/ URLs that are its own
    assert (len(own), len(other)) == spec.files
    assert len(paths) == len(own) + len(other)


@pytest.mark.parametrize(("spec", "interaction"), interaction_params(SPECS))
def test_every_interaction_decodes_and_the_request_round_trips(spec: RealWorld, interaction: Interaction) -> None:
    adapter = spec.adapter
    response = interaction.response
    assert response is not None
    body = interaction.request.json
    path = {"path": interaction.request.uri} if spec.pass_path else {}
    if spec.rejects(body):
        # a recorded body the API rejected as malformed: documented to raise rather than round-trip
        with pytest.raises(WireFormatError):
            adapter.request_from_wire(body, **path)
    else:
        wire = adapter.request_to_wire(adapter.request_from_wire(body, **path))
        # no documented normalisation applies to a recorded body: the diff is empty
        assert DeepDiff(body, wire.body) == {}
        spec.check_wire(interaction, wire)
    if response.status >= 400:
        error = adapter.error_from_wire(response.status, response.headers, response.body)
        assert error.status == response.status
    elif is_streaming(interaction):
        events = spec.events(response.body)
        assert lifecycle_problems(events) == []
        assert fold(events).error is None
    else:
        assert adapter.response_from_wire(response.json).finish_reason in ("stop", "tool_calls")


# --------------------------------------------------------------------------------------------
# Non-streamed replies (MANIFEST names and argument previews)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("spec", "name"), _by_file("non_stream_calls"))
def test_non_streamed_calls_match_the_manifest(spec: RealWorld, name: str) -> None:
    interactions = spec.cassette(name)
    table = spec.non_stream_calls[name]
    assert len(interactions) == len(table)
    for interaction, (calls, stop) in zip(interactions, table, strict=True):
        assert interaction.response is not None and interaction.response.status == 200
        raw = interaction.response.json
        response = spec.adapter.response_from_wire(raw)
        assert [c.name for c in response.tool_calls] == [n for n, _ in calls]
        for call, (_, preview) in zip(response.tool_calls, calls, strict=True):
            assert call.arguments_error is None
            assert spec.preview_of(call).startswith(preview)  # the preview is a prefix
            spec.check_call(call)
        assert response.provider_details["finish_reason"] == stop
        assert response.finish_reason == spec.finish_of(stop, bool(calls))
        spec.check_reply(response, raw)


# --------------------------------------------------------------------------------------------
# Streams: MANIFEST counts, and the fold equals a naive whole-body reading
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("spec", "name"), _by_file("streams"))
def test_streams_match_the_manifest_and_the_naive_parse(spec: RealWorld, name: str) -> None:
    assert spec.naive_reading is not None
    for interaction, expected in zip(spec.cassette(name), spec.streams[name], strict=True):
        assert interaction.response is not None
        body = interaction.response.body
        chunks = spec.naive_chunks(body)
        assert len(chunks) == expected.chunks
        naive = spec.naive_reading(chunks)
        assert naive.deltas == expected.deltas
        events = spec.events(body)
        assert lifecycle_problems(events) == []
        folded = fold(events)
        assert [c.name for c in folded.tool_calls] == expected.names == [c.name for c in naive.calls]
        for call, wire_call in zip(folded.tool_calls, naive.calls, strict=True):
            assert call.arguments == wire_call.arguments
            assert call.arguments_error is None
            if wire_call.raw is not None:
                assert call.arguments_raw == wire_call.raw
            if wire_call.id is not None:
                assert call.id == wire_call.id and "synthetic_id" not in call.provider_details
        assert folded.text == naive.text
        finish = spec.finish_of(expected.stop, bool(expected.names))
        assert events[-1] == Finish(finish, expected.stop)
        assert (folded.finish_reason, folded.provider_details["finish_reason"]) == (finish, expected.stop)
        assert folded.usage is not None
        assert {k: getattr(folded.usage, k) for k in naive.usage} == naive.usage


# --------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("spec", "name"), _by_file("errors"))
def test_errors_map_to_the_right_kind(spec: RealWorld, name: str) -> None:
    expected = spec.errors[name]
    (interaction,) = [i for i in spec.cassette(name) if spec.owns(i)]
    response = interaction.response
    assert response is not None and response.status == expected.status
    error = spec.adapter.error_from_wire(response.status, response.headers, response.body)
    assert (error.status, error.kind, error.info.code) == (expected.status, expected.kind, expected.code)
    if spec.error_message_is_prefix:
        assert error.message.startswith(expected.message)
    else:
        assert error.message == expected.message
    assert error.retry_after is None  # none of the recorded errors had retry-after or RetryInfo


# --------------------------------------------------------------------------------------------
# Chunk invariance (E1)
# --------------------------------------------------------------------------------------------


def _stream_bodies() -> list[Any]:
    """Every recorded stream routed to an adapter (error replies to stream requests included), and
    the hand-made ones an adapter adds."""
    recorded = [
        pytest.param(spec, interaction.response.body, id=interaction_id(spec, path, interaction))
        for spec in SPECS
        for path, interaction in spec.interactions()
        if interaction.response is not None and is_streaming(interaction)
    ]
    return recorded + [pytest.param(s, body, id=f"{s}:{key}") for s in SPECS for key, body in s.extra_streams.items()]


@pytest.mark.parametrize(("spec", "body"), _stream_bodies())
def test_random_cuts_give_the_one_piece_events(spec: RealWorld, body: bytes) -> None:
    expected = spec.events(body)
    assert lifecycle_problems(expected) == []

    @settings(max_examples=40, deadline=None)
    @given(st.lists(st.integers(min_value=1, max_value=len(body) - 1), max_size=40))
    def check(cuts: list[int]) -> None:
        assert spec.events(body, cut(body, cuts)) == expected

    check()


@pytest.mark.parametrize(("spec", "body"), _stream_bodies())
def test_single_byte_chunks_give_the_one_piece_events(spec: RealWorld, body: bytes) -> None:
    assert spec.events(body, [body[i : i + 1] for i in range(len(body))]) == spec.events(body)


@pytest.mark.parametrize("spec", [s for s in SPECS if s.utf8_stream is not None], ids=str)
def test_cuts_inside_utf8_code_points_give_the_one_piece_events(spec: RealWorld) -> None:
    assert spec.utf8_stream is not None
    body = spec.utf8_stream()
    inside = utf8_inside(body)
    assert len(inside) >= spec.utf8_min
    expected = spec.events(body)
    for i in inside:
        assert spec.events(body, [body[:i], body[i:]]) == expected
    assert spec.events(body, cut(body, inside)) == expected
    spec.check_utf8_fold(fold(expected))
