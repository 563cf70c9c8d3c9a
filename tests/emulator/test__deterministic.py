"""Deterministic ids, stamps, counts and fragments (pure)."""

from __future__ import annotations

import json
import re

from hypothesis import given
from hypothesis import strategies as st

from conformance.emulator._deterministic import (
    CREATED,
    CREATED_ISO,
    base62,
    call_object,
    count_tokens,
    fragments,
    hex_id,
    input_tokens,
    iso_time,
    lower_alnum,
    output_tokens,
    pad,
    text_fragments,
    tokens,
)
from conformance.scenarios.values import Reply, ScriptedCall


def test_ids_are_deterministic_and_have_the_asked_shape() -> None:
    assert base62(24, "s", 0, "call", 1) == base62(24, "s", 0, "call", 1)
    assert base62(24, "s", 0, "call", 1) != base62(24, "s", 0, "call", 2)
    assert re.fullmatch(r"[0-9A-Za-z]{29}", base62(29, "x"))
    assert re.fullmatch(r"[0-9a-f]{50}", hex_id(50, "x"))
    assert re.fullmatch(r"[a-z0-9]{8}", lower_alnum(8, "x"))
    assert 0 <= pad(15, "x") <= 15


def test_keys_are_separated_so_they_cannot_run_together() -> None:
    assert hex_id(32, "ab", "c") != hex_id(32, "a", "bc")


def test_the_fixed_time_is_2025_01_01() -> None:
    assert CREATED == 1735689600 and CREATED_ISO == "2025-01-01T00:00:00Z"
    assert iso_time(0) == "2025-01-01T00:00:00.000000Z"
    assert re.fullmatch(r"2025-01-01T00:00:01\.5\d{5}Z", iso_time(1500))
    assert iso_time(64) > iso_time(32) > iso_time(0)


@given(st.text())
def test_fragments_concatenate_back_to_the_text(text: str) -> None:
    for per in (1, 3):
        assert "".join(fragments(text, per)) == text
        assert "".join(text_fragments(text, per)) == text
    assert "".join(tokens(text)) == text
    assert all(fragments(text))  # never an empty fragment


def test_argument_json_is_cut_mid_token_like_openai_streams() -> None:
    assert fragments('{"location":"New York, NY"}') == ['{"', "location", '":', '"', "New", " York", ",", " NY", '"}']
    assert fragments("") == []


def test_long_words_are_split() -> None:
    assert all(len(piece) <= 9 for piece in fragments("supercalifragilistic"))


def test_token_counts_come_from_lengths() -> None:
    assert count_tokens("") == 0 and count_tokens("abcd") == 1 and count_tokens("abcde") == 2
    reply = Reply(text="abcdefgh", tool_calls=(ScriptedCall(name="f", arguments={}, arguments_raw="{}"),))
    assert output_tokens(reply) == 2 + (1 + 1 + 5)
    assert output_tokens(Reply()) == 1
    assert input_tokens(0) < input_tokens(1) < input_tokens(2)


def test_object_wires_get_the_object_or_the_raw_text() -> None:
    assert call_object(ScriptedCall(name="f", arguments={"a": 1}, arguments_raw='{"a": 1}')) == {"a": 1}
    assert call_object(ScriptedCall(name="f", arguments_raw='{"a": 1}')) == {"a": 1}
    assert call_object(ScriptedCall(name="f", arguments_raw='{"a": ')) == '{"a": '
    assert call_object(ScriptedCall(name="f", arguments_raw="[1]")) == "[1]"
    assert json.dumps(call_object(ScriptedCall(name="f", arguments_raw="null"))) == '"null"'
    assert call_object(ScriptedCall(name="f", arguments_raw="")) == {}  # E3: no arguments
    assert call_object(ScriptedCall(name="f", arguments_raw=" ")) == {}
