"""Tests for ``conformance.adapters._gemini_json``: exact chunk parsing, usage counts, RetryInfo.

Shapes from wire-formats.md §4d/§4e (``GenerateContentResponse`` chunks with whole ``functionCall``
parts and ``usageMetadata``; ``google.rpc.RetryInfo.retryDelay`` as a protobuf Duration string);
JSON numbers have no size limit (RFC 8259 §6), so an integer beyond 64 bits must keep every digit.
"""

from __future__ import annotations

import json

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.adapters._gemini_json import args_texts, parse_chunk, read_usage, retry_delay
from conformance.model import Usage

BIG = 123456789012345678901234567890


def _call_chunk(args: object, **extra: object) -> dict[str, object]:
    part = {"functionCall": {"name": "f", "args": args}}
    return {"candidates": [{"content": {"parts": [part]}, "index": 0}], **extra}


def _stdlib(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def test_args_texts_are_the_compact_texts_of_each_call_arguments() -> None:
    chunk = _call_chunk({"city": "Paris", "n": [1, 2.5]})
    chunk["candidates"][0]["content"]["parts"].append({"functionCall": {"name": "g", "args": [True]}})  # type: ignore[index]
    texts = args_texts(chunk)
    parts = chunk["candidates"][0]["content"]["parts"]  # type: ignore[index]
    assert texts == {id(p["functionCall"]["args"]): _stdlib(p["functionCall"]["args"]) for p in parts}


LONG = 'He said "café 😀" \\ path C:\\tmp\n\t中文' * 200  # > 4096 characters, every escape kind


@pytest.mark.parametrize(
    "args",
    [
        {"title": "t", "body": LONG, "rows": [[1, 123.4567, "item-1-中", True, None]], "meta": {"ratio": 0.5}},
        {"body": LONG, "tiny": [2.5e-07, 1e-05, -3.2e-09], "n": 0.0001},  # orjson spells these differently
        {"body": LONG, "e": "1e-07 0.00001 a+b"},  # float spellings and a plus inside strings
        {"a": LONG, "b": LONG + "x", "c": {}},
        {"only": LONG},
    ],
)
def test_args_with_a_long_string_are_written_value_by_value_as_the_stdlib_writes_them(args: dict[str, object]) -> None:
    chunk = orjson.loads(json.dumps(_call_chunk(args), ensure_ascii=False))
    texts = args_texts(chunk)
    assert texts is not None
    parsed = chunk["candidates"][0]["content"]["parts"][0]["functionCall"]["args"]
    assert texts == {id(parsed): _stdlib(args)}


def test_args_with_a_long_string_still_refuse_a_rounded_integer_outside_it() -> None:
    rounded = orjson.loads(json.dumps(_call_chunk({"body": LONG, "n": [BIG]})))
    assert args_texts(rounded) is None
    assert args_texts(_call_chunk({"body": LONG + "a+b"})) is not None  # a plus inside the long string is text


def test_args_texts_refuse_a_chunk_where_orjson_may_have_rounded_an_integer() -> None:
    # orjson reads 123456789012345678901234567890 as 1.2345678901234568e+29: any float it writes
    # with an exponent e+ (1e16 and more) may have been such an integer
    rounded = orjson.loads(json.dumps(_call_chunk({"n": BIG})))
    assert args_texts(rounded) is None
    assert args_texts(orjson.loads(json.dumps(_call_chunk({}, usageMetadata={"promptTokenCount": 2**70})))) is None
    assert args_texts(_call_chunk({"x": 1e15, "s": "1e99"})) is not None  # below 1e16; a string
    assert args_texts(_call_chunk({"s": "a+b"})) is None  # arguments are judged on their text: cautious


def test_parse_chunk_keeps_big_integers_of_call_chunks_and_rejects_bad_json() -> None:
    text = json.dumps(_call_chunk({"n": BIG}))
    assert parse_chunk(text) == _call_chunk({"n": BIG})
    assert parse_chunk(text.encode()) == _call_chunk({"n": BIG})
    assert parse_chunk('{"candidates": [') is None
    assert parse_chunk(b"not json") is None


def test_read_usage_counts_and_non_counts() -> None:
    raw = {"promptTokenCount": 10, "candidatesTokenCount": 4, "totalTokenCount": 20, "thoughtsTokenCount": 6}
    assert read_usage(raw) == Usage(input_tokens=10, output_tokens=4, total_tokens=20, reasoning_tokens=6)
    assert read_usage({"promptTokenCount": True, "totalTokenCount": "3"}) == Usage()  # not counts: unknown


def test_retry_delay_from_retry_info() -> None:
    info = "type.googleapis.com/google.rpc.RetryInfo"
    assert retry_delay([{"@type": "x.ErrorInfo"}, {"@type": info, "retryDelay": "34.4s"}]) == 34.4
    assert retry_delay([{"@type": info, "retryDelay": {"seconds": 2, "nanos": 500_000_000}}]) == 2.5
    assert retry_delay([{"@type": info, "retryDelay": "soon"}]) is None
    assert retry_delay(None) is None


_LEAVES = (
    st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.builds(lambda m, e: m * 10.0**e, st.floats(1, 10), st.integers(-12, 20))
    | st.text(max_size=8)
    | st.booleans()
    | st.none()
)
_VALUES = st.recursive(
    _LEAVES, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4)
)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.text(max_size=4), _VALUES, max_size=5), st.text(min_size=1, max_size=3), st.integers(0, 5))
def test_value_by_value_texts_are_the_stdlib_text(args: dict[str, object], key: str, at: int) -> None:
    items = list(args.items())
    items.insert(min(at, len(items)), (key, LONG))
    value = dict(items)
    chunk = orjson.loads(orjson.dumps(_call_chunk(value)))
    texts = args_texts(chunk)
    if texts is not None:  # None: a float orjson writes with e+ (1e16 and more), read again exactly
        assert list(texts.values()) == [_stdlib(chunk["candidates"][0]["content"]["parts"][0]["functionCall"]["args"])]
