"""Tests for ``conformance.traffic.cassettes``: reading the nine cassette dialects of the real-world
MANIFEST, and clear errors for broken files.

Expected values come from the MANIFEST (``tests/realworld/MANIFEST.md``: interaction counts,
statuses, URIs, SSE event / NDJSON line / JSON-array chunk counts, body storage) and from the YAML
and gzip specifications, never from this loader's own output.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import gzip
import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml
from _hostile import billion_laughs, cassette_yaml, deep_brackets, gzip_bomb, run_bounded

from conformance.errors import CassetteError, CassetteFormatError, CassetteNotFoundError
from conformance.framing import JSONArrayDecoder, NDJSONDecoder, SSEDecoder
from conformance.traffic.cassettes import (
    Cassette,
    Interaction,
    RecordedRequest,
    RecordedResponse,
    is_streaming,
    iter_cassette_files,
    load_cassette,
)

# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------


def real(realworld_dir: Path, name: str) -> Cassette:
    cassette = load_cassette(realworld_dir / "cassettes" / name)
    assert not cassette.problems
    assert all(not i.problems for i in cassette.interactions), [i.problems for i in cassette.interactions]
    return cassette


def response_of(interaction: Interaction) -> RecordedResponse:
    assert interaction.response is not None, interaction.problems
    return interaction.response


def write(tmp_path: Path, text: str, name: str = "c.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def dump(tmp_path: Path, document: Any, name: str = "c.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    return path


def plain_interaction(body: str = '{"ok": true}', status: int = 200, **request: Any) -> dict[str, Any]:
    return {
        "request": {
            "method": "POST",
            "uri": "https://api.openai.com/v1/chat/completions",
            "headers": {"Content-Type": ["application/json"]},
            "body": '{"model": "m", "messages": []}',
            **request,
        },
        "response": {
            "status": {"code": status, "message": "OK"},
            "headers": {"Content-Type": ["application/json"]},
            "body": {"string": body},
        },
    }


# --------------------------------------------------------------------------------------------
# every real cassette, against its MANIFEST entry
# --------------------------------------------------------------------------------------------


def test_every_real_cassette_loads_with_no_problems(
    realworld_dir: Path, realworld_cassette: str, realworld_manifest: dict[str, Any]
) -> None:
    entry = realworld_manifest[realworld_cassette]
    cassette = real(realworld_dir, realworld_cassette)
    assert len(cassette.interactions) == entry.interaction_count
    assert [response_of(i).status for i in cassette.interactions] == entry.statuses
    for interaction, line in zip(cassette.interactions, entry.interactions, strict=True):
        uri = urlsplit(interaction.request.uri)
        assert uri.netloc + uri.path + (f"#{uri.fragment}" if uri.fragment else "") == line.host_path
        assert interaction.request.method in {"GET", "POST", "DELETE"}
        if interaction.request.method == "POST":
            assert isinstance(interaction.request.json, dict), "every POST body here is a JSON object"


def test_streaming_is_detected_as_the_manifest_says(
    realworld_dir: Path, realworld_cassette: str, realworld_manifest: dict[str, Any]
) -> None:
    entry = realworld_manifest[realworld_cassette]
    cassette = real(realworld_dir, realworld_cassette)
    for interaction, line in zip(cassette.interactions, entry.interactions, strict=True):
        assert is_streaming(interaction) is line.stream, line.line


def test_stream_bodies_survive_yaml_scalar_styles(
    realworld_dir: Path, realworld_cassette: str, realworld_manifest: dict[str, Any]
) -> None:
    """Dialect 9: folded single-quoted, double-quoted and literal scalars must give back the exact
    SSE/NDJSON/JSON-array framing; the MANIFEST counts events, lines and chunks per interaction."""
    entry = realworld_manifest[realworld_cassette]
    cassette = real(realworld_dir, realworld_cassette)
    for interaction, line in zip(cassette.interactions, entry.interactions, strict=True):
        body = response_of(interaction).body
        if line.sse_events is not None:
            decoder = SSEDecoder()
            events = decoder.decode(body) + decoder.flush()
            assert len(events) == line.sse_events, line.line
            for event in events:
                if event.data != "[DONE]":
                    json.loads(event.data)  # every data payload is intact JSON
        if line.ndjson_lines is not None:
            ndjson = NDJSONDecoder()
            assert len(ndjson.decode(body) + ndjson.flush()) == line.ndjson_lines
        if line.json_array_chunks is not None:
            array = JSONArrayDecoder()
            assert len(array.decode(body) + array.flush()) == line.json_array_chunks


def test_the_fast_builder_gives_what_the_safe_loader_gives(realworld_dir: Path, realworld_cassette: str) -> None:
    """The event-level builder is an optimisation: PyYAML's own safe constructor (plus the istr tag,
    minus timestamps) is the reference."""
    from conformance.traffic import safe_yaml

    data = (realworld_dir / "cassettes" / realworld_cassette).read_bytes()
    assert safe_yaml.build_fast(data) == yaml.load(data, Loader=safe_yaml.CassetteLoader)


# --------------------------------------------------------------------------------------------
# one focused test per dialect, on a real file
# --------------------------------------------------------------------------------------------


def test_dialect_1_plain_vcrpy(realworld_dir: Path) -> None:
    (i,) = real(realworld_dir, "openai_chat/crewai__test_llm_call_with_error.yaml").interactions
    assert i.request.method == "POST"
    assert i.request.json["model"] == "non-existent-model"
    response = response_of(i)
    assert response.status == 404
    assert response.content_type == "application/json"
    assert response.json["error"]["code"] == "model_not_found"
    assert all(name == name.lower() for name in response.headers)


@pytest.mark.parametrize(
    ("name", "index", "check"),
    [
        ("anthropic/openllmetry__test_anthropic_tools_legacy.yaml", 0, "anthropic"),
        ("openai_responses/logfire__test_responses.yaml", 0, "responses"),
        ("gemini/logfire__test_instrument_google_genai.yaml", 0, "gemini"),
        ("gemini/llm-gemini__test_tools.yaml", 0, "gemini-array"),
    ],
)
def test_dialect_2_gzip_binary_bodies_are_gunzipped(realworld_dir: Path, name: str, index: int, check: str) -> None:
    raw = yaml.load((realworld_dir / "cassettes" / name).read_bytes(), Loader=yaml.CSafeLoader)
    stored = raw["interactions"][index]["response"]["body"]["string"]
    assert isinstance(stored, bytes) and stored[:2] == b"\x1f\x8b", "the file really stores gzip !!binary"
    response = response_of(real(realworld_dir, name).interactions[index])
    assert response.body == gzip.decompress(stored)
    data = response.json
    if check == "anthropic":  # MANIFEST: 2 parallel tool_use blocks (get_weather, get_time)
        assert [b["name"] for b in data["content"] if b["type"] == "tool_use"] == ["get_weather", "get_time"]
    elif check == "responses":  # MANIFEST: random_number + transfer_to_agent2 function_call items
        assert [o["name"] for o in data["output"] if o["type"] == "function_call"] == [
            "random_number",
            "transfer_to_agent2",
        ]
    elif check == "gemini":
        assert data["candidates"][0]["content"]["parts"][0]["functionCall"]["name"] == "get_current_weather"
    else:  # MANIFEST: a JSON-array stream of 2 chunks, content-type application/json
        assert response.content_type == "application/json"
        assert isinstance(data, list) and len(data) == 2


def test_dialect_3_parsed_body_is_rebuilt_with_json_dumps(realworld_dir: Path) -> None:
    name = "openai_chat/pydantic-ai__test_openai_tool_call_roundtrip_wire_stable[ag_ui].yaml"
    raw = yaml.safe_load((realworld_dir / "cassettes" / name).read_text(encoding="utf-8"))
    cassette = real(realworld_dir, name)
    for raw_interaction, interaction in zip(raw["interactions"], cassette.interactions, strict=True):
        for side, recorded in (("request", interaction.request), ("response", response_of(interaction))):
            parsed = raw_interaction[side]["parsed_body"]
            assert recorded.json == parsed
            assert recorded.body == json.dumps(parsed).encode()
            # pydantic-ai rewrites content-length to match json.dumps output (MANIFEST dialect 3)
            assert int(recorded.headers["content-length"]) == len(recorded.body)


def test_dialect_3_parsed_body_request_with_an_sse_string_response(realworld_dir: Path) -> None:
    name = "gemini/pydantic-ai__test_google_streaming_tool_call_thought_signature.yaml"
    first = real(realworld_dir, name).interactions[0]
    assert first.request.json["contents"][0]["role"] == "user"
    response = response_of(first)
    assert response.json is None
    assert response.body.startswith(b"data: {")
    assert is_streaming(first)


def test_dialect_3_mixed_json_string_and_parsed_body_in_one_file(realworld_dir: Path) -> None:
    name = "openai_responses/pydantic-ai__test_openai_conversation_id_tool_call_continuation.yaml"
    interactions = real(realworld_dir, name).interactions
    assert [i.request.method for i in interactions] == ["POST", "POST", "POST", "DELETE"]
    assert interactions[0].request.json == {}  # parsed_body: {}
    assert interactions[1].request.json["tools"][0]["name"] == "get_conversation_code"
    assert interactions[3].request.body == b""  # body: '' (a JSON-string body, empty)
    assert interactions[3].request.json is None
    assert response_of(interactions[3]).json["deleted"] is True


def test_dialect_4_otel_pretty_literal_bodies_parse_as_json(realworld_dir: Path) -> None:
    name = "openai_chat/otel-python-contrib__test_chat_completion_multiple_tools_streaming_with_content.yaml"
    (i,) = real(realworld_dir, name).interactions
    assert i.request.body is not None and i.request.body.startswith(b"{\n  ")  # json.dumps(indent=2)
    assert i.request.json["tools"][0]["function"]["name"] == "get_current_weather"
    assert i.request.json["stream"] is True
    assert response_of(i).body.rstrip().endswith(b"data: [DONE]")
    (error,) = real(
        realworld_dir, "anthropic/otel-python-contrib__test_sync_messages_create_api_error.yaml"
    ).interactions
    assert response_of(error).json["error"]["type"] == "not_found_error"


def test_dialect_5_legacy_httpx_stub(realworld_dir: Path) -> None:
    (i,) = real(realworld_dir, "openai_chat/dd-trace-py__chat_completion_function_call.yaml").interactions
    response = response_of(i)
    assert response.status == 200  # from `status_code: 200`
    message = response.json["choices"][0]["message"]
    assert message["function_call"]["name"] == "extract_student_info"
    assert response.json["choices"][0]["finish_reason"] == "function_call"
    # the stub keeps a stale `Content-Encoding: gzip` on a plain body: the body decides, not the header
    assert response.headers["content-encoding"] == "gzip"
    assert response.body.startswith(b"{")


def test_dialect_6_aiohttp_istr_header_keys(realworld_dir: Path) -> None:
    (i,) = real(realworld_dir, "anthropic/dd-trace-py__anthropic_v1_messages_post_a6302ed3.yaml").interactions
    headers = i.request.headers
    assert headers["accept"] == "application/json"
    assert headers["anthropic-version"] == "2023-06-01"
    assert headers["content-length"] == "192"  # a plain key in the same mapping
    assert headers["user-agent"] == "Anthropic/JS 0.33.0"
    assert i.request.json["stream"] is True
    assert response_of(i).status == 401


def test_dialect_7_stripped_headers(realworld_dir: Path) -> None:
    name = "gemini/openinference__test_streaming_reasoning_with_multiple_tool_calls.yaml"
    (i,) = real(realworld_dir, name).interactions
    response = response_of(i)
    assert i.request.headers == {} and response.headers == {}
    assert response.content_type is None
    assert is_streaming(i)


@pytest.mark.parametrize(
    "name",
    [
        "gemini/openinference__test_streaming_reasoning_with_multiple_tool_calls.yaml",  # SSE data:
        "anthropic/crewai__TestAnthropicToolCallStreaming.test_anthropic_streaming_emits_tool_call_events.yaml",
        "ollama/openllmetry__test_ollama_streaming_chat_legacy.yaml",  # NDJSON
    ],
)
def test_streaming_is_detected_from_the_body_alone(realworld_dir: Path, name: str) -> None:
    """With headers stripped and no request flag or URL marker, the body still tells (dialect 7)."""
    interaction = real(realworld_dir, name).interactions[0]
    request_json = dict(interaction.request.json)
    request_json.pop("stream", None)
    bare = dataclasses.replace(
        interaction,
        request=dataclasses.replace(interaction.request, uri="https://example.test/v1/x", json=request_json),
        response=dataclasses.replace(response_of(interaction), headers={}, content_type=None),
    )
    assert is_streaming(bare)
    plain_json = dataclasses.replace(
        bare, response=dataclasses.replace(response_of(bare), body=b'{"a": 1}', json={"a": 1})
    )
    assert not is_streaming(plain_json)


def test_dialect_8_placeholder_headers_are_kept(realworld_dir: Path) -> None:
    name = "openai_responses/crewai__test_openai_responses_api_cached_prompt_tokens_with_tools.yaml"
    first = real(realworld_dir, name).interactions[0]
    assert first.request.headers["authorization"] == "AUTHORIZATION-XXX"
    name = "anthropic/otel-python-contrib__test_sync_messages_create_api_error.yaml"
    assert real(realworld_dir, name).interactions[0].request.headers["x-api-key"] == "test_anthropic_api_key"


def test_dialect_9_folded_single_quoted_sse(realworld_dir: Path) -> None:
    """crewAI stores SSE as a folded single-quoted scalar: a blank line there means one newline."""
    (i,) = real(realworld_dir, "openai_chat/crewai__test_handle_streaming_tool_calls.yaml").interactions
    body = response_of(i).body
    assert body.startswith(b"data: {")
    assert b"\n\ndata: {" in body and b"\n\n\n" not in body


# --------------------------------------------------------------------------------------------
# synthetic cassettes: dialect details
# --------------------------------------------------------------------------------------------


def test_gzip_is_decided_per_interaction(tmp_path: Path) -> None:
    zipped = plain_interaction()
    zipped["response"]["body"] = {"string": gzip.compress(b'{"zipped": true}')}
    path = dump(tmp_path, {"version": 1, "interactions": [zipped, plain_interaction('{"zipped": false}')]})
    first, second = load_cassette(path).interactions
    assert response_of(first).json == {"zipped": True}
    assert response_of(second).json == {"zipped": False}


def test_a_corrupt_gzip_body_is_a_problem_and_keeps_the_bytes(tmp_path: Path) -> None:
    broken = plain_interaction()
    broken["response"]["body"] = {"string": b"\x1f\x8b\x08\x00garbage"}
    path = dump(tmp_path, {"version": 1, "interactions": [broken]})
    (i,) = load_cassette(path).interactions
    assert response_of(i).body == b"\x1f\x8b\x08\x00garbage"
    assert len(i.problems) == 1
    assert str(path) in i.problems[0] and "interaction 0" in i.problems[0] and "gzip" in i.problems[0]


def test_status_code_and_content_fields_of_the_legacy_stub(tmp_path: Path) -> None:
    text = """\
interactions:
- request:
    body: '{"model": "m"}'
    headers: {}
    method: POST
    uri: https://api.openai.com/v1/chat/completions
  response:
    content: '{"choices": []}'
    headers: {}
    http_version: HTTP/1.1
    status_code: 503
version: 1
"""
    (i,) = load_cassette(write(tmp_path, text)).interactions
    assert response_of(i).status == 503
    assert response_of(i).json == {"choices": []}


def test_istr_keys_and_repeated_headers(tmp_path: Path) -> None:
    text = """\
interactions:
- request:
    body: null
    headers:
      ? !!python/object/apply:multidict._multidict.istr
      - Accept
      : - application/json
      X-Multi:
      - one
      - two
      x-multi: three
    method: GET
    uri: https://api.example.test/v1/models
  response:
    body: {string: ''}
    headers: {Content-Type: text/event-stream; charset=utf-8}
    status: {code: 200, message: OK}
version: 1
"""
    (i,) = load_cassette(write(tmp_path, text)).interactions
    assert i.request.headers == {"accept": "application/json", "x-multi": "one, two, three"}
    assert i.request.body is None and i.request.json is None
    assert response_of(i).content_type == "text/event-stream"


def test_yaml_features_the_safe_loader_has(tmp_path: Path) -> None:
    """Anchors, aliases, merge keys and explicit tags are plain YAML 1.1; timestamps stay text."""
    text = """\
version: 1
interactions:
- request: &req
    method: POST
    uri: https://api.openai.com/v1/chat/completions
    headers: &h {accept: [application/json], date: [2024-01-02]}
    body: !!str '{"n": 1}'
  response:
    status: {code: !!int "200"}
    headers:
      <<: *h
      x-count: [0x10]
    body: {string: !!binary eyJvayI6IHRydWV9}
- request: *req
  response:
    status: {code: 201}
    body: {string: 'x'}
"""
    first, second = load_cassette(write(tmp_path, text)).interactions
    assert first.request.headers == {"accept": "application/json", "date": "2024-01-02"}
    assert first.request.json == {"n": 1}
    assert response_of(first).status == 200
    assert response_of(first).headers == {"accept": "application/json", "date": "2024-01-02", "x-count": "16"}
    assert response_of(first).json == {"ok": True}  # base64 of '{"ok": true}'
    assert second.request == first.request
    assert response_of(second).status == 201


# --------------------------------------------------------------------------------------------
# synthetic cassettes: broken files give clear messages
# --------------------------------------------------------------------------------------------


def test_bad_yaml_names_file_line_and_column(tmp_path: Path) -> None:
    path = write(tmp_path, "version: 1\ninteractions:\n- request:\n    method: POST\n    uri: a: b\n")
    with pytest.raises(CassetteFormatError) as caught:
        load_cassette(path)
    message = str(caught.value)
    assert message.startswith(str(path))
    assert "line 5, column 11" in message  # the second ':' of `uri: a: b`
    assert "re-record" in message


def test_python_tags_are_refused_and_never_executed(tmp_path: Path) -> None:
    marker = tmp_path / "executed"
    path = write(
        tmp_path,
        "version: 1\ninteractions:\n- request:\n    method: POST\n"
        f'    uri: !!python/object/apply:os.system ["touch {marker}"]\n',
    )
    with pytest.raises(CassetteFormatError) as caught:
        load_cassette(path)
    assert not marker.exists()
    message = str(caught.value)
    assert str(path) in message and "line 5" in message
    assert "!!python/object/apply:os.system is refused" in message


@pytest.mark.parametrize(
    "tag",
    ["!!python/object/apply:multidict._multidict_py.istr", "!!python/name:os.system", "!!python/object:os.PathLike"],
)
def test_only_the_one_istr_tag_is_accepted(tmp_path: Path, tag: str) -> None:
    path = write(
        tmp_path, f"version: 1\ninteractions:\n- request:\n    headers:\n      ? {tag}\n      - Accept\n      : x\n"
    )
    with pytest.raises(CassetteFormatError, match="is refused"):
        load_cassette(path)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("version: 1\n", "there is no `interactions` key"),
        ("- request: {}\n", "the top level is a list, not a mapping"),
        ("", "the file is empty"),
        ("# only a comment\n", "the file is empty"),
        ("interactions: {a: 1}\n", "`interactions` is a mapping, not a list"),
        ("a: 1\n---\nb: 2\n", "expected a single document"),
    ],
)
def test_files_that_are_not_cassettes(tmp_path: Path, text: str, expected: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(CassetteFormatError) as caught:
        load_cassette(path)
    assert str(caught.value).startswith(str(path))
    assert expected in str(caught.value)


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.yaml"
    with pytest.raises(CassetteNotFoundError) as caught:
        load_cassette(path)
    assert isinstance(caught.value, FileNotFoundError)
    assert str(path) in str(caught.value)


def test_a_directory_is_not_a_cassette(tmp_path: Path) -> None:
    with pytest.raises(CassetteError, match="is a directory"):
        load_cassette(tmp_path)


def test_malformed_interactions_are_recorded_and_the_rest_still_read(tmp_path: Path) -> None:
    no_response = plain_interaction()
    del no_response["response"]
    no_status = plain_interaction()
    no_status["response"]["status"] = {"message": "OK"}
    no_uri = plain_interaction()
    del no_uri["request"]["uri"]
    interactions = ["just a string", no_response, plain_interaction(), no_status, no_uri, {"response": None}]
    path = dump(tmp_path, {"version": 1, "interactions": interactions})
    cassette = load_cassette(path)
    assert len(cassette.interactions) == 6

    def only_problem(index: int) -> str:
        interaction = cassette.interactions[index]
        assert interaction.index == index
        assert len(interaction.problems) >= 1
        assert all(p.startswith(f"{path}: interaction {index}: ") for p in interaction.problems)
        return " | ".join(interaction.problems)

    assert "is a string, not a mapping" in only_problem(0)
    assert cassette.interactions[0].response is None
    assert "has no `response`" in only_problem(1)
    assert cassette.interactions[1].request.json == {"model": "m", "messages": []}
    assert cassette.interactions[2].problems == ()
    assert response_of(cassette.interactions[2]).json == {"ok": True}
    assert "no valid status code" in only_problem(3)
    assert "no `uri`" in only_problem(4)
    assert response_of(cassette.interactions[4]).status == 200
    assert "has no `request`" in only_problem(5) and "has no `response`" in only_problem(5)


def test_an_unknown_version_is_a_file_level_problem(tmp_path: Path) -> None:
    path = dump(tmp_path, {"version": 2, "interactions": [plain_interaction()]})
    cassette = load_cassette(path)
    assert len(cassette.problems) == 1 and "`version` is 2, expected 1" in cassette.problems[0]
    assert response_of(cassette.interactions[0]).json == {"ok": True}


def test_a_parsed_body_that_is_not_json_data_is_a_problem(tmp_path: Path) -> None:
    interaction = plain_interaction()
    del interaction["response"]["body"]
    interaction["response"]["parsed_body"] = {"blob": b"\x00"}
    path = dump(tmp_path, {"version": 1, "interactions": [interaction]})
    (i,) = load_cassette(path).interactions
    assert "parsed_body is not JSON data" in i.problems[0]


# --------------------------------------------------------------------------------------------
# files and streaming detection
# --------------------------------------------------------------------------------------------


def test_iter_cassette_files_expands_directories_recursively_and_sorted(tmp_path: Path) -> None:
    for rel in ("b/z.yaml", "b/a.yml", "a.yaml", "notes.txt", "c/d/e.yaml"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x", encoding="utf-8")
    (tmp_path / "dir.yaml").mkdir()
    single = tmp_path / "notes.txt"
    missing = tmp_path / "missing.yaml"
    found = list(iter_cassette_files([tmp_path, single, missing]))
    rel = [p.relative_to(tmp_path).as_posix() for p in found]
    assert rel == ["a.yaml", "b/a.yml", "b/z.yaml", "c/d/e.yaml", "notes.txt", "missing.yaml"]


def interaction(
    uri: str = "https://api.example.test/v1/chat",
    request_json: Any = None,
    body: bytes = b"",
    content_type: str | None = None,
) -> Interaction:
    parsed: Any = None
    with contextlib.suppress(ValueError):
        parsed = json.loads(body)
    return Interaction(
        index=0,
        request=RecordedRequest(method="POST", uri=uri, json=request_json),
        response=RecordedResponse(status=200, body=body, json=parsed, content_type=content_type),
    )


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        (interaction(request_json={"stream": True}, body=b'{"a": 1}'), True),
        (interaction(uri="https://g.test/v1beta/models/m:streamGenerateContent", body=b"[{}]"), True),
        (interaction(uri="https://g.test/v1beta/models/m:generateContent?alt=sse"), True),
        (interaction(uri="https://api.mistral.ai/v1/chat/completions#stream"), True),
        (interaction(content_type="text/event-stream"), True),
        (interaction(content_type="application/x-ndjson"), True),
        (interaction(body=b'event: ping\ndata: {"type": "ping"}\n\n'), True),
        (interaction(body=b"\n\ndata: [DONE]\n\n"), True),
        (interaction(body=b'{"a": 1}\n{"a": 2}\n'), True),
        (interaction(request_json={"stream": False}, body=b'{"a": 1}'), False),
        (interaction(body=b'{\n  "a": 1\n}\n'), False),
        (interaction(body=b"not json"), False),
        (interaction(uri="https://x.test/v1/streams", body=b""), False),
    ],
)
def test_is_streaming(case: Interaction, expected: bool) -> None:
    assert is_streaming(case) is expected


def test_is_streaming_without_a_response() -> None:
    bare = Interaction(index=0, request=RecordedRequest(method="POST", uri="https://x.test/"), response=None)
    assert is_streaming(bare) is False


def test_binary_request_bodies(tmp_path: Path) -> None:
    zipped = plain_interaction()
    zipped["request"]["body"] = gzip.compress(b'{"model": "zipped"}')
    raw = plain_interaction()
    raw["request"]["body"] = {"string": base64.b64decode("AAEC")}
    path = dump(tmp_path, {"version": 1, "interactions": [zipped, raw]})
    first, second = load_cassette(path).interactions
    assert first.request.json == {"model": "zipped"}
    assert second.request.body == b"\x00\x01\x02" and second.request.json is None


# --------------------------------------------------------------------------------------------
# untrusted files: the bounds of conformance.limits (issue 14)
# --------------------------------------------------------------------------------------------


def _bounded_load(path: Path, env: dict[str, str] | None = None) -> str:
    """Load ``path`` in a child under a 1 GiB ceiling and a timeout; its printed outcome."""

    code = (
        "import sys\nfrom conformance.traffic.cassettes import load_cassette\n"
        "from conformance.errors import InputLimitError\n"
        f"try:\n    load_cassette({str(path)!r})\nexcept InputLimitError as exc:\n"
        "    print('LIMIT', exc.limit, exc.value)\n    print(exc)\nelse:\n    print('LOADED')\n"
    )
    done = run_bounded(code, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_billion_laughs_is_refused_naming_file_line_and_limit(tmp_path: Path) -> None:

    path = tmp_path / "laughs.yaml"
    path.write_text("bombs:\n" + billion_laughs(indent="  ") + cassette_yaml("    parsed_body: *a9\n"))
    assert path.stat().st_size < 1000
    out = _bounded_load(path)  # unbounded, it takes minutes and gigabytes
    assert out.startswith("LIMIT yaml_nodes 1000000")
    assert str(path) in out and "at line" in out and "--limit yaml_nodes=N" in out


def test_alias_uses_are_bounded(tmp_path: Path) -> None:
    path = tmp_path / "aliases.yaml"

    path.write_text("a: &a x\nb: [" + ", ".join(["*a"] * 30) + "]\n" + cassette_yaml("    body: {string: ''}\n"))
    assert len(load_cassette(path).interactions) == 1  # the default is far above 30 uses
    from conformance.errors import InputLimitError
    from conformance.limits import parse
    from conformance.traffic.safe_yaml import load_yaml

    with pytest.raises(InputLimitError) as limited:
        load_yaml(path.read_bytes(), name=str(path), limits=parse(["yaml_aliases=20"]))
    assert limited.value.limit == "yaml_aliases" and "at line 2" in str(limited.value)


def test_expanded_text_is_bounded_through_aliases() -> None:
    from conformance.errors import InputLimitError
    from conformance.limits import parse
    from conformance.traffic.safe_yaml import load_yaml

    text = "a: &a " + "x" * 1000 + "\nb: [" + ", ".join(["*a"] * 20) + "]\n"
    with pytest.raises(InputLimitError, match="yaml_expanded_bytes=10000"):
        load_yaml(text, name="t.yaml", limits=parse(["yaml_expanded_bytes=10000"]))
    assert len(load_yaml(text, name="t.yaml")["b"]) == 20  # the defaults let it through


def test_the_full_loader_path_is_bounded_too() -> None:
    # a merge key sends the document to the full safe loader; the bounds are checked first

    from conformance.errors import InputLimitError
    from conformance.traffic.safe_yaml import load_yaml

    text = billion_laughs() + "m: {<<: {k: v}}\n"
    with pytest.raises(InputLimitError, match="yaml_nodes"):
        load_yaml(text, name="merge.yaml")


@pytest.mark.parametrize("json_file", [False, True])
def test_deep_nesting_of_the_document_is_refused(tmp_path: Path, json_file: bool) -> None:
    from conformance.errors import InputLimitError

    path = tmp_path / "deep.yaml"
    body = "[" * 300 + "]" * 300
    path.write_text(
        '{"version": 1, "interactions": ' + body + "}" if json_file else "version: 1\ninteractions: " + body
    )
    with pytest.raises(InputLimitError) as caught:
        load_cassette(path)
    assert caught.value.limit == "nesting_depth" and str(path) in str(caught.value)


def _json_levels(depth: int) -> dict[str, object]:
    """A JSON object ``depth`` levels deep: objects and arrays in turn, scalars and brackets inside
    strings beside them at every level, an empty array at the bottom (a level too)."""
    value: object = []
    for level in range(depth - 1, 0, -1):
        value = {"k": value, "n": 1, "s": "[[{"} if level % 2 else [1, value, "x", None]
    assert isinstance(value, dict)
    return value


@pytest.mark.parametrize("limit", [2, 3, 8, 100])
def test_json_document_nesting_is_judged_at_its_limit_exactly(limit: int) -> None:
    from conformance.errors import InputLimitError
    from conformance.limits import Limits
    from conformance.traffic.safe_yaml import load_yaml

    bounds = Limits(nesting_depth=limit)
    at_limit = json.dumps(_json_levels(limit))
    assert load_yaml(at_limit, name="ok.yaml", limits=bounds) == json.loads(at_limit)
    with pytest.raises(InputLimitError) as caught:
        load_yaml(json.dumps(_json_levels(limit + 1)), name="deep.yaml", limits=bounds)
    assert caught.value.limit == "nesting_depth" and "deep.yaml" in str(caught.value)


def test_deeply_nested_json_in_a_body_is_refused_naming_the_interaction(tmp_path: Path) -> None:

    from conformance.errors import InputLimitError

    path = tmp_path / "deep_body.yaml"
    path.write_text(cassette_yaml(f"    body: {{string: {json.dumps(deep_brackets(3000))}}}\n"))
    with pytest.raises(InputLimitError) as caught:
        load_cassette(path)
    assert caught.value.interaction == 0 and caught.value.limit == "nesting_depth"
    assert "response body nests JSON too deeply" in str(caught.value)


def test_brackets_inside_json_strings_do_not_count(tmp_path: Path) -> None:

    path = tmp_path / "strings.yaml"
    body = json.dumps({"text": "[" * 500})
    path.write_text(cassette_yaml(f"    body: {{string: {json.dumps(body)}}}\n"))
    (interaction,) = load_cassette(path).interactions
    assert interaction.response is not None and interaction.response.json == {"text": "[" * 500}


def test_gzip_bomb_is_refused_after_at_most_the_limit(tmp_path: Path) -> None:

    bomb = gzip_bomb(1100 * 1024 * 1024)  # 1.1 GiB inflated, about 1 MB stored
    text = base64.encodebytes(bomb).decode().replace("\n", "\n        ")
    path = tmp_path / "bomb.yaml"
    path.write_text(cassette_yaml(f"    body:\n      string: !!binary |\n        {text}\n"))
    out = _bounded_load(path)  # unbounded, the 1 GiB ceiling ends it in MemoryError
    assert out.startswith(f"LIMIT body_bytes {32 * 1024 * 1024}")
    assert str(path) in out and "interaction 0" in out and "--limit body_bytes=N" in out


def test_one_gzip_member_is_cut_in_the_stream(tmp_path: Path) -> None:

    from conformance.errors import InputLimitError

    one = base64.b64encode(gzip.compress(b"\0" * 100_000)).decode()
    path = tmp_path / "member.yaml"
    path.write_text(cassette_yaml(f"    body: {{string: !!binary {one}}}\n"))
    (interaction,) = load_cassette(path).interactions
    assert interaction.response is not None and interaction.response.body == b"\0" * 100_000
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CONFORMANCE_LIMITS", "body_bytes=1K")
        with pytest.raises(InputLimitError, match="body_bytes=1024"):
            load_cassette(path)


def test_truncated_gzip_is_still_an_interaction_problem(tmp_path: Path) -> None:

    cut = base64.b64encode(gzip.compress(b"hello world" * 100)[:-12]).decode()
    path = tmp_path / "cut.yaml"
    path.write_text(cassette_yaml(f"    body: {{string: !!binary {cut}}}\n"))
    (interaction,) = load_cassette(path).interactions
    assert any("does not decompress" in p for p in interaction.problems)


@pytest.mark.parametrize(
    ("data", "limit", "deeper"),
    [
        (b"[" * 100 + b"]" * 100, 100, False),
        (b"[" * 101 + b"]" * 101, 100, True),
        (b"{[]}" * 1000, 2, False),  # many pairs, two levels
        (b"{[]}" * 1000, 1, True),
        (b'{"a": "' + b"[" * 500 + b'"}', 100, False),  # inside a string
        (b'{"a": "\\"' + b"[" * 500 + b'"}', 100, False),  # after an escaped quote, still inside
        (b"[" * 101, 100, True),  # a cut body: unmatched openers are levels
        (b'data: {"x": [1]}\n\n' * 500, 100, False),  # a stream of shallow events
    ],
)
def test_nesting_is_measured_on_the_bytes(data: bytes, limit: int, deeper: bool) -> None:
    from conformance.traffic.safe_yaml import nests_deeper

    assert nests_deeper(data, limit) is deeper


@pytest.mark.parametrize(
    "escape",
    ["\\ud800", "\\udfff", "\\ud83d x", "\\\\ud800"],  # high alone, low alone, half a pair, one level deeper
)
def test_a_lone_surrogate_escape_in_a_body_refuses_the_file_naming_the_interaction(tmp_path: Path, escape: str) -> None:
    # a prompt adapter decoded `<tool_call>{"name": "Pa\ud800ris"}` and no report could be written
    body = json.dumps({"content": "Pa" + escape + "ris"}).replace("\\\\", "\\")
    if escape.startswith("\\\\"):
        body = json.dumps({"content": '{"city": "Pa' + escape[1:] + 'ris"}'})
    path = tmp_path / "surrogate.yaml"
    path.write_text(cassette_yaml(f"    body: {{string: {json.dumps(body)}}}\n"))
    with pytest.raises(CassetteFormatError) as caught:
        load_cassette(path)
    assert caught.value.interaction == 0 and caught.value.path == str(path)
    assert "lone surrogate escape" in str(caught.value)


@pytest.mark.parametrize("text", ["\U0001f600", "é", "\\ud83d\\ude00 as text"])
def test_whole_characters_and_escaped_pairs_are_no_problem(tmp_path: Path, text: str) -> None:
    path = tmp_path / "fine.yaml"
    body = json.dumps({"content": text})  # ensure_ascii: the emoji is written as an escaped pair
    path.write_text(cassette_yaml(f"    body: {{string: {json.dumps(body)}}}\n"))
    (interaction,) = load_cassette(path).interactions
    assert interaction.problems == ()
    assert interaction.response is not None and interaction.response.json == {"content": text}


def test_a_long_run_of_backslashes_is_searched_for_surrogates_in_linear_time(tmp_path: Path) -> None:
    """The fuzz tier's cassette 520: 200,000 backslashes before a surrogate-looking escape took the
    search quadratic time (over 20 s); it starts a match only at the first backslash of a run now."""
    import time

    from conformance.limits import current
    from conformance.traffic.cassettes import _check_surrogates, _Problems

    body = b'{"a": "' + b"\\" * 200_000 + b'x \\ud83d\\ude00"}'
    started = time.perf_counter()
    _check_surrogates(body, "response", _Problems("c.yaml", 0, current()))  # a whole pair: no error
    assert time.perf_counter() - started < 2.0
    with pytest.raises(CassetteFormatError, match="lone surrogate escape"):
        _check_surrogates(body.replace(b"\\ude00", b""), "response", _Problems("c.yaml", 0, current()))


@pytest.mark.parametrize("version", [True, 1.0, "1"])
def test_a_version_that_is_not_the_integer_1_is_a_problem(tmp_path: Path, version: Any) -> None:
    """``version: true`` was read as version 1 without a word (``True == 1`` in Python; issue 27, point 6)."""
    path = dump(tmp_path, {"version": version, "interactions": [plain_interaction()]})
    cassette = load_cassette(path)
    assert len(cassette.problems) == 1
    assert f"`version` is {version!r}, expected 1" in cassette.problems[0]
