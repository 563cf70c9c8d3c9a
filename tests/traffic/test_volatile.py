"""Tests for ``conformance.traffic.volatile``: real provider traffic (tests/realworld) keeps its
meaning after normalisation (a tool-call id the next request echoes still pairs with its call), two
recordings that differ only in volatile values normalise to the same document, stream bytes and
chunk boundaries survive apart from the replaced values, user data is never taken for an id, and
normalising twice gives what normalising once gave."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

from conformance.checks.recorded_request import glob_matches
from conformance.traffic.safe_yaml import load_yaml
from conformance.traffic.volatile import FIXED_TIME, glob_of, normalise_interactions, stable_ids

ROUNDTRIP = "openai_chat/pydantic-ai__test_openai_tool_call_roundtrip_wire_stable[ag_ui].yaml"
STREAM = "openai_chat/crewai__test_handle_streaming_tool_calls.yaml"


def interactions_of(realworld_dir: Path, name: str) -> list[dict[str, Any]]:
    document = load_yaml((realworld_dir / "cassettes" / name).read_bytes())
    return list(document["interactions"])


def sse(*events: dict[str, Any], spaced: bool = False) -> str:
    separators = (", ", ": ") if spaced else (",", ":")
    return "".join(f"data: {json.dumps(e, separators=separators)}\n\n" for e in events) + "data: [DONE]\n\n"


def streamed(chunks: list[str], request: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "request": {"method": "POST", "uri": "http://127.0.0.1/v1/chat/completions", "parsed_body": request or {}},
        "response": {"status": {"code": 200, "message": "OK"}, "headers": {}, "body": {"chunks": chunks}},
    }


def test_a_real_round_trip_keeps_its_call_id_paired(realworld_dir: Path) -> None:
    original = interactions_of(realworld_dir, ROUNDTRIP)
    call_id = original[0]["response"]["parsed_body"]["choices"][0]["message"]["tool_calls"][0]["id"]
    assert original[1]["request"]["parsed_body"]["messages"][2]["tool_call_id"] == call_id  # the echo, as sent

    normalised, globs = normalise_interactions(original)

    answer = normalised[0]["response"]["parsed_body"]
    stable = answer["choices"][0]["message"]["tool_calls"][0]["id"]
    echoed = normalised[1]["request"]["parsed_body"]["messages"]
    assert stable != call_id and stable.startswith("call_") and len(stable) == len(call_id)
    assert echoed[1]["tool_calls"][0]["id"] == echoed[2]["tool_call_id"] == stable  # still paired
    assert call_id not in json.dumps(normalised)  # replaced everywhere, requests included
    assert answer["created"] == FIXED_TIME
    assert answer["choices"][0]["message"]["tool_calls"][0]["function"] == {  # the call itself is kept
        "arguments": '{"city":"Paris"}',
        "name": "get_weather",
    }
    assert [i["response"]["headers"]["openai-processing-ms"] for i in normalised] == [["0"]] * len(normalised)
    assert {"$.id", "$.created", "$.choices[*].message.tool_calls[*].id"} <= set(globs)
    assert not glob_matches("$.messages[2].tool_call_id", globs)  # echoes compare exactly
    assert original == interactions_of(realworld_dir, ROUNDTRIP)  # the input is not mutated
    assert stable_ids(original)[call_id] == stable  # what a decoding made from the raw traffic maps by


def test_two_recordings_differing_in_volatile_values_normalise_alike(realworld_dir: Path) -> None:
    first = interactions_of(realworld_dir, STREAM)
    text = first[0]["response"]["body"]["string"]
    ids = sorted(set(re.findall(r'"(?:chatcmpl-|call_|fp_)[A-Za-z0-9]+"', text)))
    assert len(ids) >= 3  # the stream's id, its call's id, its fingerprint
    second_text = text.replace('"created":1744814716', '"created":1744899999')
    for number, value in enumerate(ids):
        fresh = value[:-6] + f"{number:04d}Z" + '"'  # the same length, other characters
        second_text = second_text.replace(value, fresh)
    second = copy.deepcopy(first)
    second[0]["response"]["body"]["string"] = second_text
    assert second_text != text

    one, globs_one = normalise_interactions(first)
    two, globs_two = normalise_interactions(second)

    assert one == two and globs_one == globs_two
    assert {"$.id", "$.created", "$.system_fingerprint", "$.choices[*].delta.tool_calls[*].id"} <= set(globs_one)
    normal = one[0]["response"]["body"]["string"]
    assert normal.count("data: ") == text.count("data: ")  # same events
    assert '"arguments":"{\\"' in normal  # argument fragments untouched
    assert normalise_interactions(one) == (one, globs_one)  # twice is once


def test_stream_bytes_and_chunk_boundaries_are_kept() -> None:
    events = [
        {
            "id": "chatcmpl-AAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
            "created": 1764100000,
            "choices": [{"delta": {"content": "Hi"}}],
        },
        {
            "id": "chatcmpl-AAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
            "created": 1764100000,
            "choices": [{"delta": {"content": "!"}}],
        },
    ]
    text = sse(*events, spaced=True)
    cut_inside_the_id = text.index("AAAA") + 3
    chunks = [text[:cut_inside_the_id], text[cut_inside_the_id:-14], text[-14:]]

    (normalised,), _ = normalise_interactions([streamed(chunks)])

    pieces = normalised["response"]["body"]["chunks"]
    assert len(pieces) == 3
    joined = "".join(pieces)
    stable = "chatcmpl-" + "1".rjust(29, "0")  # the prefix and the length kept
    assert joined == text.replace("chatcmpl-" + "A" * 29, stable).replace("1764100000", str(FIXED_TIME))
    assert '"created": 1735689600, "choices": [{"delta": {"content": "Hi"}}]' in joined  # spacing kept
    assert pieces[2] == chunks[2]  # the terminator's chunk is untouched
    assert not pieces[0].endswith("AAA") and pieces[1].startswith('"chatcmpl-')  # the cut moved before the id


def test_timings_keep_their_shape_and_user_data_is_not_an_id() -> None:
    """llama.cpp's ``timings`` (tools/server README: prompt_n, prompt_ms, ..., predicted_per_second)
    and an Anthropic ``tool_use`` (its id from the Messages API docs' example) whose input has an ``id``
    argument."""
    timings = {"prompt_n": 12, "prompt_ms": 31.5, "predicted_n": 7, "predicted_per_second": 88.25}
    chat = {"id": "chatcmpl-Xq7v9Lr2", "created": 1764100000, "timings": timings, "system_fingerprint": "b7100-ab12cd3"}
    anthropic = {
        "id": "msg_01Fq7v9Lr2Zx",
        "content": [
            {
                "type": "tool_use",
                "id": "toolu_01A09q90qw90lq917835lq9",
                "name": "lookup",
                "input": {"id": "order-991823"},
            },
            {"type": "tool_use", "id": "t1", "name": "lookup", "input": {}},
        ],
    }
    interactions = [
        {"request": {"parsed_body": {}}, "response": {"parsed_body": chat}},
        {"request": {"parsed_body": {}}, "response": {"parsed_body": anthropic}},
    ]

    normalised, globs = normalise_interactions(interactions)

    chat_after = normalised[0]["response"]["parsed_body"]
    assert chat_after["timings"] == {"prompt_n": 0, "prompt_ms": 0.0, "predicted_n": 0, "predicted_per_second": 0.0}
    assert chat_after["system_fingerprint"] != "b7100-ab12cd3" and len(chat_after["system_fingerprint"]) == 13
    block = normalised[1]["response"]["parsed_body"]["content"][0]
    assert block["input"] == {"id": "order-991823"}  # the call's argument is user data
    assert block["id"] == "toolu_" + "4".rjust(23, "0")  # the fourth id of the cassette
    assert normalised[1]["response"]["parsed_body"]["content"][1]["id"] == "t1"  # too short to be taken for one
    assert "$.timings.prompt_ms" in globs and "$.content[*].input.id" not in globs


def test_sse_ping_comments_get_a_fixed_time() -> None:
    chunks = [": ping - 2025-11-25 22:15:40.123456+00:00\n\n", sse({"choices": []})]

    (normalised,), globs = normalise_interactions([streamed(chunks)])

    assert normalised["response"]["body"]["chunks"] == [": ping - 2025-01-01 00:00:00.000000+00:00\n\n", chunks[1]]
    assert globs == ()


def test_glob_of_uses_the_recorded_request_syntax() -> None:
    path = ("choices", 0, "delta", "tool_calls", 3, "id")
    assert glob_of(path) == "$.choices[*].delta.tool_calls[*].id"
    assert glob_matches("$.choices[0].delta.tool_calls[3].id", [glob_of(path)])
    assert glob_of(("headers", "x-request-id")) == "$.headers.x-request-id"
    assert glob_of(("a b",)) == '$["a b"]'


def test_every_bundled_cassette_of_one_wire_normalises_idempotently() -> None:
    folder = Path(__file__).resolve().parents[2] / "cassettes" / "anthropic" / "multi_turn"
    files = sorted(folder.glob("*.yaml"))
    assert files
    for path in files:
        once, globs = normalise_interactions(load_yaml(path.read_bytes())["interactions"])
        assert normalise_interactions(once) == (once, globs), path


def decoded(path: Path, ids: dict[str, str] | None = None) -> Any:
    """What ``conformance inspect`` decodes from a cassette, its values mapped by ``ids``; left out:
    the file's path, the raw provider details (timestamps) and call ids, which an adapter
    synthesises from the content when the provider sends none."""
    from conformance.traffic.inspect import inspect_paths, render_json

    def comparable(value: Any) -> Any:
        if isinstance(value, dict):
            return {
                k: comparable(v)
                for k, v in value.items()
                if k not in ("path", "provider_details") and not k.endswith("id")
            }
        if isinstance(value, list):
            return [comparable(v) for v in value]
        if not isinstance(value, str):
            return value
        return (ids or {}).get(value, value).replace(str(path), "CASSETTE")

    return comparable(json.loads(render_json(inspect_paths([str(path)]))))


def test_real_traffic_decodes_the_same_once_normalised(
    realworld_dir: Path, realworld_cassette: str, tmp_path: Path
) -> None:
    """Every real cassette: the same calls, arguments, texts, finish reasons and events are decoded
    from its normalised form, and normalising it again changes nothing."""
    import yaml

    source = realworld_dir / "cassettes" / realworld_cassette
    document = load_yaml(source.read_bytes())
    normalised, globs = normalise_interactions(document["interactions"])
    assert normalise_interactions(normalised) == (normalised, globs)
    copy_path = tmp_path / source.name
    copy_path.write_text(yaml.safe_dump({**document, "interactions": normalised}, allow_unicode=True), "utf-8")
    assert decoded(copy_path) == decoded(source, stable_ids(document["interactions"]))
