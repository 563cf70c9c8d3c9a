"""Tests for ``conformance.adapters._gemini_json``: exact chunk parsing, usage counts, RetryInfo.

Shapes from wire-formats.md §4d/§4e (``GenerateContentResponse`` chunks with whole ``functionCall``
parts and ``usageMetadata``; ``google.rpc.RetryInfo.retryDelay`` as a protobuf Duration string);
JSON numbers have no size limit (RFC 8259 §6), so an integer beyond 64 bits must keep every digit.
"""

from __future__ import annotations

import json

import orjson

from conformance.adapters._gemini_json import args_texts, parse_chunk, read_usage, retry_delay
from conformance.model import Usage

BIG = 123456789012345678901234567890


def _call_chunk(args: object, **extra: object) -> dict[str, object]:
    part = {"functionCall": {"name": "f", "args": args}}
    return {"candidates": [{"content": {"parts": [part]}, "index": 0}], **extra}


def test_args_texts_are_orjson_texts_of_each_call_arguments() -> None:
    chunk = _call_chunk({"city": "Paris", "n": [1, 2.5]})
    chunk["candidates"][0]["content"]["parts"].append({"functionCall": {"name": "g", "args": [True]}})  # type: ignore[index]
    texts = args_texts(chunk)
    parts = chunk["candidates"][0]["content"]["parts"]  # type: ignore[index]
    assert texts == {id(p["functionCall"]["args"]): orjson.dumps(p["functionCall"]["args"]) for p in parts}


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
