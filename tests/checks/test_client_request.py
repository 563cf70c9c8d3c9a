"""``client.recorded_request``: a black-box client's request read back against the recorded request's
read-back, so that spelling is not a finding and a change of meaning is, with its path."""

from __future__ import annotations

import base64
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conformance.adapters import for_format
from conformance.checks.client_request import CHECK, meaning
from conformance.clients.contract import SimpleClient, client_problems
from conformance.clients.harness import CertifyOptions, certify
from conformance.clients.translator import TranslatorClient
from conformance.model import Image, Message, Request, Text, ToolCall, ToolResult
from conformance.scenarios.loader import load_scenarios
from conformance.verdicts import CheckVerdict, RunResult
from tests._mutant_clients import rewriting

REPO = Path(__file__).resolve().parents[2]
CASSETTES = REPO / "cassettes"


def _certify(client: Any, scenario: str, mode: str = "non_stream") -> RunResult:
    chosen = [s for s in load_scenarios([]).scenarios if s.id == scenario]
    options = CertifyOptions(cassette_dir=CASSETTES, modes=(mode,), isolate=False)  # type: ignore[arg-type]
    return certify(chosen, client, options)


def _verdict(run: RunResult) -> CheckVerdict:
    [case] = run.cases
    found = [v for v in case.checks if v.check == CHECK]
    assert found, f"{CHECK} gave no verdict: {case.status} {case.message} {case.checks}"
    return found[0]


@pytest.mark.parametrize(
    ("wire", "scenario", "mode"),
    [
        ("openai_chat", "multi_turn/two_rounds", "non_stream"),
        ("openai_responses", "multi_turn/parallel_results", "stream"),
        ("anthropic", "tool_results/multiple_text_items", "non_stream"),
        ("gemini", "basic/system_prompt", "stream"),
        ("ollama", "multi_turn/call_id_sent_back", "non_stream"),
    ],
)
def test_a_reference_adapter_as_a_client_sends_what_was_recorded(wire: str, scenario: str, mode: str) -> None:
    result = _verdict(_certify(TranslatorClient(for_format(wire)), scenario, mode))
    assert result.status == "pass", result.findings


def test_spelling_differences_between_libraries_are_not_findings() -> None:
    def respell(body: dict[str, Any]) -> dict[str, Any]:
        for message in body["messages"]:  # a string content as one text block; null content left out
            if isinstance(message.get("content"), str):
                message["content"] = [{"type": "text", "text": message["content"]}]
            if message.get("content") is None:
                message.pop("content", None)
        body["stream"] = False  # the default, said out loud
        return dict(reversed(list(body.items())))  # another key order

    client = TranslatorClient(rewriting("openai_chat", respell))
    result = _verdict(_certify(client, "multi_turn/two_rounds"))
    assert result.status == "pass", result.findings


def test_a_dropped_tool_description_fails_with_its_path_and_values() -> None:
    def drop(body: dict[str, Any]) -> dict[str, Any]:
        del body["tools"][0]["function"]["description"]
        return body

    result = _verdict(_certify(TranslatorClient(rewriting("openai_chat", drop)), "basic/get_time"))
    assert result.status == "fail"
    [finding] = [f for f in result.findings if f.turn == 0]
    assert finding.path == "$.tools[0].description"
    assert isinstance(finding.expected, str) and finding.expected  # the recorded description
    assert finding.actual is None


def test_a_temperature_sent_unasked_on_later_turns_is_shown_with_what_it_changes_and_does_not_fail() -> None:
    def warmer(body: dict[str, Any]) -> dict[str, Any]:
        if len(body["messages"]) > 1:
            body["temperature"] = 0.9
        return body

    result = _verdict(_certify(TranslatorClient(rewriting("openai_chat", warmer)), "multi_turn/two_rounds"))
    assert result.status == "pass"
    assert {(f.path, f.expected, f.actual, f.kind) for f in result.findings} == {
        ("$.provider_details.extra.temperature", None, 0.9, "unasked")
    }
    assert {f.turn for f in result.findings} == {1, 2}
    assert all("random" in f.remedy for f in result.findings)  # docs/equivalences.md says what it changes


def test_a_changed_parameter_the_caller_gave_fails_with_its_path_and_turn() -> None:
    def shorter(body: dict[str, Any]) -> dict[str, Any]:
        if len(body["messages"]) > 1:
            body["max_tokens"] = body.get("max_tokens", 0) + 1
        return body

    left_open = _verdict(_certify(TranslatorClient(rewriting("anthropic", shorter)), "multi_turn/two_rounds"))
    assert left_open.status == "pass", left_open.findings  # left open by the call: the library chooses

    def longer(body: dict[str, Any]) -> dict[str, Any]:
        return {**body, "max_tokens": 4096}

    asked = _verdict(_certify(TranslatorClient(rewriting("anthropic", longer)), "basic/max_tokens_length"))
    assert asked.status == "fail"  # the scenario asks for max_tokens 32
    [finding] = asked.findings
    assert (finding.path, finding.expected, finding.actual, finding.kind) == ("$.max_tokens", 32, 4096, "defect")


def test_a_changed_tool_result_fails_and_whitespace_in_it_does_not() -> None:
    def result_text(change: Callable[[str], str]) -> Callable[[dict[str, Any]], dict[str, Any]]:
        def rewrite(body: dict[str, Any]) -> dict[str, Any]:
            for item in body["contents"]:
                for part in item["parts"]:
                    response = part.get("functionResponse", {}).get("response")
                    if isinstance(response, dict) and isinstance(response.get("result"), str):
                        response["result"] = change(response["result"])
            return body

        return rewrite

    spaced = _verdict(
        _certify(TranslatorClient(rewriting("gemini", result_text(lambda t: f" {t}\n"))), "basic/get_time")
    )
    assert spaced.status == "pass", spaced.findings
    changed = _verdict(
        _certify(TranslatorClient(rewriting("gemini", result_text(lambda t: t + "0"))), "basic/get_time")
    )
    assert changed.status == "fail"
    assert [f.path for f in changed.findings] == ["$.messages[2].parts[0].text"]


def _declaring(client: TranslatorClient, differences: Any) -> SimpleClient:
    return SimpleClient(
        name=client.name,
        wires=client.wires,
        complete=client.complete,
        error_info=client.error_info,
        request_differences=differences,
    )


def test_a_difference_the_client_declares_is_not_compared_on_its_wire_only() -> None:
    def warmer(body: dict[str, Any]) -> dict[str, Any]:
        return {**body, "temperature": 0.9}

    inner = TranslatorClient(rewriting("openai_chat", warmer))
    declared = _declaring(inner, {"openai_chat:$.provider_details.extra.temperature": "we always send 0.9"})
    assert client_problems(declared) == []
    assert _verdict(_certify(declared, "basic/get_time")).status == "pass"
    assert _verdict(_certify(declared, "basic/get_time")).findings == ()
    elsewhere = _declaring(inner, {"$.provider_details.extra.top_p": "another field"})
    unasked = _verdict(_certify(elsewhere, "basic/get_time")).findings
    assert {(f.path, f.kind) for f in unasked} == {("$.provider_details.extra.temperature", "unasked")}


@pytest.mark.parametrize(
    ("differences", "problem"),
    [
        ({"max_tokens": "why"}, "request_differences key 'max_tokens' is not a JSON path glob"),
        ({"$.max_tokens": " "}, "request difference '$.max_tokens' needs a reason"),
        ({"gemini:$.max_tokens": "why"}, "names the wire 'gemini', which the client does not declare"),
        (["$.max_tokens"], "request_differences must map JSON path globs"),
    ],
)
def test_request_differences_are_validated_when_the_client_is_loaded(differences: Any, problem: str) -> None:
    client = _declaring(TranslatorClient(for_format("openai_chat")), differences)
    assert any(problem in p for p in client_problems(client)), client_problems(client)


def test_call_ids_the_provider_never_sent_are_compared_by_place() -> None:
    def request(first: str, second: str, *, swapped: bool = False) -> Request:
        calls = Message(
            role="assistant",
            parts=(ToolCall(id=first, name="a", arguments={}), ToolCall(id=second, name="b", arguments={})),
        )
        results = Message(
            role="user",
            parts=(
                ToolResult(call_id=second if swapped else first, content=(Text(text="1"),)),
                ToolResult(call_id=first if swapped else second, content=()),
            ),
        )
        return Request(messages=(calls, results))

    served = b'{"calls": [{"id": "call_sent"}]}'
    assert meaning(request("x1", "x2"), served) == meaning(request("y7", "y8"), served)
    assert meaning(request("x1", "x2"), served) != meaning(request("x1", "x2", swapped=True), served)  # pairs
    assert meaning(request("call_sent", "x2"), served) != meaning(request("y1", "x2"), served)  # a real id


def test_image_bytes_compare_as_bytes_whatever_the_base64_alphabet() -> None:
    raw = bytes(range(250, 256)) * 3

    def with_image(data: str) -> Request:
        result = ToolResult(call_id="c", content=(Image(media_type="image/png", data=data),))
        return Request(messages=(Message(role="user", parts=(result,)),))

    standard, urlsafe = base64.b64encode(raw).decode(), base64.urlsafe_b64encode(raw).decode()
    assert standard != urlsafe
    assert meaning(with_image(standard)) == meaning(with_image(urlsafe))
    assert meaning(with_image(standard)) != meaning(with_image(base64.b64encode(raw[:-1]).decode()))


def test_the_check_id_is_listed_so_a_known_gap_may_name_it() -> None:
    from conformance.pipeline.selection import CHECK_IDS

    assert CHECK in CHECK_IDS["client"]


@pytest.mark.parametrize(("scenario", "status"), [("basic/get_time", "pass"), ("basic/max_tokens_length", "fail")])
def test_max_tokens_is_the_librarys_choice_only_where_the_wire_needs_one_and_the_call_left_it_open(
    scenario: str, status: str
) -> None:
    def own_default(body: dict[str, Any]) -> dict[str, Any]:
        return {**body, "max_tokens": 64000}  # litellm's default for Claude models

    result = _verdict(_certify(TranslatorClient(rewriting("anthropic", own_default)), scenario))
    assert result.status == status, result.findings
    assert all(f.path == "$.max_tokens" and f.actual == 64000 for f in result.findings)


def test_a_system_message_with_empty_fields_is_still_the_system_prompt() -> None:
    """litellm sends Ollama's system message with ``"images": []`` (docs/certified): the reader keeps
    that message as it is to write it again, and the check reads it as the system prompt."""
    ollama = for_format("ollama")

    def body(system: dict[str, Any]) -> dict[str, Any]:
        return {"model": "m", "stream": False, "messages": [system, {"role": "user", "content": "hi", "images": []}]}

    plain = ollama.request_from_wire(body({"role": "system", "content": "Be brief."}), path="/api/chat")
    spelled = ollama.request_from_wire(body({"role": "system", "content": "Be brief.", "images": []}), path="/api/chat")
    assert plain.system == "Be brief." and spelled.system is None  # the reader keeps the spelling
    assert meaning(plain) == meaning(spelled)
    other = ollama.request_from_wire(body({"role": "system", "content": "Be long."}), path="/api/chat")
    assert meaning(other) != meaning(spelled)


def test_tool_choice_auto_with_tools_offered_is_the_default_and_another_choice_is_not() -> None:
    def said(choice: Any) -> Callable[[dict[str, Any]], dict[str, Any]]:
        def rewrite(body: dict[str, Any]) -> dict[str, Any]:
            return {**body, "tool_choice": choice}

        return rewrite

    auto = _verdict(_certify(TranslatorClient(rewriting("anthropic", said({"type": "auto"}))), "basic/get_time"))
    assert auto.status == "pass", auto.findings
    forced = _verdict(_certify(TranslatorClient(rewriting("anthropic", said({"type": "any"}))), "basic/get_time"))
    assert forced.status == "fail"
    assert {(f.path, f.expected, f.actual) for f in forced.findings} == {("$.tool_choice", None, "required")}


def test_values_the_cassette_marks_volatile_are_compared_for_presence_only(tmp_path: Path) -> None:
    """A cassette's provenance ``volatile`` globs are wire paths: there the client's value stands
    for the recorded one, so only its presence counts."""
    import json

    source = CASSETTES / "openai_chat" / "basic" / "get_time.yaml"
    cassette = json.loads(source.read_text(encoding="utf-8"))
    cassette["provenance"]["volatile"] = ["$.messages[0].content"]
    (tmp_path / "openai_chat" / "basic").mkdir(parents=True)
    (tmp_path / "openai_chat" / "basic" / "get_time.yaml").write_text(json.dumps(cassette), encoding="utf-8")

    def reworded(body: dict[str, Any]) -> dict[str, Any]:
        body["messages"][0]["content"] = "What was yesterday's date?"
        return body

    def unsaid(body: dict[str, Any]) -> dict[str, Any]:
        del body["messages"][0]["content"]
        return body

    def run(rewrite: Callable[[dict[str, Any]], dict[str, Any]], where: Path) -> CheckVerdict:
        chosen = [s for s in load_scenarios([]).scenarios if s.id == "basic/get_time"]
        options = CertifyOptions(
            cassette_dir=CASSETTES, user_cassette_dirs=(where,), modes=("non_stream",), isolate=False
        )
        return _verdict(certify(chosen, TranslatorClient(rewriting("openai_chat", rewrite)), options))

    assert run(reworded, tmp_path).status == "pass"
    assert run(reworded, tmp_path / "nowhere").status == "fail"  # the bundled cassette marks nothing
    assert run(unsaid, tmp_path).status == "fail"


def test_a_declared_schema_rewrite_covers_the_schema_and_its_strict_flag() -> None:
    def strict(body: dict[str, Any]) -> dict[str, Any]:
        for tool in body["tools"]:
            tool["function"]["strict"] = True
            tool["function"]["parameters"] = {**tool["function"]["parameters"], "additionalProperties": False}
        return body

    inner = TranslatorClient(rewriting("openai_chat", strict))
    declared = SimpleClient(
        name=inner.name,
        wires=inner.wires,
        complete=inner.complete,
        error_info=inner.error_info,
        schema_rewrites={"openai_chat": "tools are made strict (strict: true, additionalProperties: false)"},
    )
    assert _verdict(_certify(declared, "basic/get_time")).findings == ()
    # a tool the MCP server adds mid-run is first sent in a later turn: the rewrite covers it there too
    assert _verdict(_certify(declared, "mcp/tools_added")).findings == ()
    undeclared = _verdict(_certify(inner, "basic/get_time"))
    assert undeclared.status == "fail"  # the schema changed, and no rewrite was declared
    assert {f.path for f in undeclared.findings if f.kind == "unasked"} == {
        "$.tools[0].provider_details.function.strict"
    }


def test_responses_content_as_a_list_of_input_text_blocks_is_spelling() -> None:
    """EasyInputMessageParam.content and FunctionCallOutput.output take a string or a list of
    ``input_text`` parts (openai/types/responses/easy_input_message_param.py:22,
    response_input_item_param.py:171); the AI SDK sends the list. A part's own keys still count."""

    def as_blocks(body: dict[str, Any]) -> dict[str, Any]:
        for item in body["input"]:
            if isinstance(item.get("content"), str) and item.get("role") == "user":
                item["content"] = [{"type": "input_text", "text": item["content"]}]
            if item.get("type") == "function_call_output" and isinstance(item["output"], str):
                item["output"] = [{"type": "input_text", "text": item["output"]}]
        return body

    result = _verdict(_certify(TranslatorClient(rewriting("openai_responses", as_blocks)), "multi_turn/two_rounds"))
    assert (result.status, result.findings) == ("pass", ())

    responses = for_format("openai_responses")

    def user(*parts: dict[str, Any]) -> Request:
        body = {"model": "m", "input": [{"role": "user", "content": list(parts)}]}
        return responses.request_from_wire(body, path="/v1/responses")

    image = "data:image/png;base64,iVBORw0KGgo="
    plain = {"type": "input_image", "image_url": image}
    assert meaning(user(plain)) != meaning(user({**plain, "detail": "high"}))  # a detail is meaning


def _own_part_signature(body: dict[str, Any], *, onto_call: bool) -> dict[str, Any]:
    """A Gemini body whose model turn ends in a signed empty part (reasoning/signature_own_part, as the
    cassette's answer gave it): that part removed, its signature put on the turn's first call
    (``onto_call``) or nowhere."""
    for content in body["contents"]:
        parts = content.get("parts", [])
        own = [p for p in parts if p.get("text") == "" and "thoughtSignature" in p]
        calls = [p for p in parts if "functionCall" in p]
        if content.get("role") == "model" and own and calls:
            parts.remove(own[0])
            if onto_call:
                calls[0]["thoughtSignature"] = own[0]["thoughtSignature"]
    return body


def test_a_gemini_signature_of_its_own_part_may_go_back_on_the_turns_first_call() -> None:
    """Where a signature that came on a part of its own goes back is not documented: on the turn's first
    call it means the same as the part sent back as it came (the scenario accepts both); dropped, it is
    a finding."""
    moved = TranslatorClient(rewriting("gemini", lambda body: _own_part_signature(body, onto_call=True)))
    assert _verdict(_certify(moved, "reasoning/signature_own_part")).status == "pass"
    as_came = TranslatorClient(rewriting("gemini", lambda body: body))
    assert _verdict(_certify(as_came, "reasoning/signature_own_part")).status == "pass"
    dropped = TranslatorClient(rewriting("gemini", lambda body: _own_part_signature(body, onto_call=False)))
    assert _verdict(_certify(dropped, "reasoning/signature_own_part")).status == "fail"
