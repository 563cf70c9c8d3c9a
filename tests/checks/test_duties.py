"""Duties: what a client does not take on is left to the caller (shown, counted, never FAIL, never
PASS), with what the caller must do and what the provider answers otherwise; what a client changes
of the caller's data fails whatever it declares. Judged on the official SDKs, which pass the
caller's tools through as given."""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from conformance.adapters import for_format
from conformance.adapters.base import WireRequest
from conformance.checks._common import verdict
from conformance.checks.duties import CUT_CALL_REMEDY, REMEDIES, TOOL_RESULT_CHECK, duty_of, left_to_caller
from conformance.cli import main
from conformance.clients.child import load_object
from conformance.clients.contract import SimpleClient, client_duties, client_problems
from conformance.clients.harness import CertifyOptions, certify
from conformance.clients.translator import TranslatorClient
from conformance.model import Audio, Message, Request, Text, ToolResult
from conformance.scenarios.loader import load_scenarios
from conformance.verdicts import CaseResult, Finding

REPO = Path(__file__).resolve().parents[2]
CASSETTES = REPO / "cassettes"
DRIVERS = REPO / "examples" / "clients"


def _sdk(name: str, duties: Any) -> Any:
    client = load_object(f"{DRIVERS / name}:CLIENT")
    return dataclasses.replace(client, duties=duties)


def _case(client: Any, scenario: str, wire: str | None = None) -> CaseResult:
    chosen = [s for s in load_scenarios([]).scenarios if s.id == scenario]
    options = CertifyOptions(
        cassette_dir=CASSETTES, modes=("non_stream",), isolate=False, wires=(wire,) if wire else None
    )
    [case] = certify(chosen, client, options).cases
    return case


def test_an_sdk_passing_dotted_names_through_leaves_the_mapping_to_the_caller() -> None:
    pytest.importorskip("openai")
    case = _case(_sdk("openai_driver.py", frozenset({"transport"})), "names/dotted", "openai_chat")
    assert case.status == "left"
    left = [f for v in case.checks for f in v.findings if f.kind == "left"]
    assert {f.check for f in left} == {"translation.tool_names", "translation.request_shape"}
    assert all(f.remedy == REMEDIES[("tool_names", "openai_chat")] for f in left)
    assert "the API answers 400" in left[0].remedy and "map them" in left[0].remedy
    assert not [v for v in case.checks if v.status == "fail"]


def test_a_library_that_takes_on_names_fails_when_it_sends_them_unmapped() -> None:
    pytest.importorskip("openai")
    case = _case(_sdk("openai_driver.py", None), "names/dotted", "openai_chat")  # None: every duty
    assert case.status == "fail"
    failing = {v.check for v in case.checks if v.status == "fail"}
    assert failing == {"translation.tool_names", "translation.request_shape"}


def test_an_sdk_passing_a_schema_without_type_leaves_it_to_the_caller_with_anthropics_answer() -> None:
    pytest.importorskip("anthropic")
    case = _case(_sdk("anthropic_driver.py", frozenset({"transport"})), "schemas/empty_schema")
    # (anthropic 2.14.0 also fails client.request_headers in every case: x-stainless-timeout: NOT_GIVEN)
    assert {v.check: v.status for v in case.checks}["translation.request_shape"] == "left"
    [finding] = [f for v in case.checks for f in v.findings if f.kind == "left"]
    assert finding.check == "translation.request_shape" and finding.path == "$.tools[0].input_schema"
    assert finding.remedy == REMEDIES[("tool_schemas", "anthropic")]
    taken = _case(_sdk("anthropic_driver.py", frozenset({"transport", "tool_schemas"})), "schemas/empty_schema")
    assert {v.check: v.status for v in taken.checks}["translation.request_shape"] == "fail"


def _renaming(wire: str, new: str) -> TranslatorClient:
    """The reference adapter, its first tool renamed to ``new`` on the wire (a client that changes
    what the caller gave)."""
    adapter = for_format(wire)
    real = adapter.request_to_wire

    def request_to_wire(request: Request) -> WireRequest:
        sent = real(request)
        body = copy.deepcopy(dict(sent.body))
        body["tools"][0]["function"]["name"] = new
        return dataclasses.replace(sent, body=body)

    return TranslatorClient(dataclasses.replace(adapter, request_to_wire=request_to_wire))


def test_a_name_the_client_changed_fails_whatever_it_declares() -> None:
    inner = _renaming("openai_chat", "gmail search")
    transport_only = SimpleClient(
        name="renamer",
        wires=inner.wires,
        complete=inner.complete,
        error_info=inner.error_info,
        duties=frozenset({"transport"}),
    )
    case = _case(transport_only, "names/dotted")
    assert case.status == "fail"
    [names] = [v for v in case.checks if v.check == "translation.tool_names"]
    assert names.status == "fail" and {f.kind for f in names.findings} == {"defect"}


@pytest.mark.parametrize(
    ("duties", "problem"),
    [
        (frozenset({"transport", "names"}), "unknown duty 'names' for every wire (valid: transport, tool_names"),
        (frozenset({"tool_names"}), "duties for every wire must include 'transport'"),
        ({"gemini": frozenset({"transport"})}, "duties names the wire 'gemini', which the client does not declare"),
        ("transport", "duties must be a set of duty names"),
    ],
)
def test_bad_duties_are_contract_problems(duties: Any, problem: str) -> None:
    client = SimpleClient(name="x", wires={"openai_chat": frozenset()}, complete=print, error_info=print, duties=duties)
    assert any(problem in p for p in client_problems(client)), client_problems(client)


def test_duties_default_to_every_duty_and_may_differ_per_wire() -> None:
    plain = SimpleClient(name="x", wires={"openai_chat": frozenset()}, complete=print, error_info=print)
    assert client_duties(plain, "openai_chat") == {"transport", "tool_names", "tool_schemas", "tool_results", "quirks"}
    mixed = dataclasses.replace(plain, duties={"openai_chat": frozenset({"transport"})})
    assert client_duties(mixed, "openai_chat") == {"transport"}


def test_certify_refuses_an_unknown_duty_with_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    driver = tmp_path / "drv.py"
    driver.write_text(
        "import dataclasses\n"
        "from conformance.adapters import for_format\n"
        "from conformance.clients.contract import SimpleClient\n"
        "from conformance.clients.translator import TranslatorClient\n"
        "_inner = TranslatorClient(for_format('openai_chat'))\n"
        "CLIENT = SimpleClient(name='acme', wires=_inner.wires, complete=_inner.complete,"
        " error_info=_inner.error_info, duties={'openai_chat': frozenset({'transport', 'schemas'})})\n"
    )
    code = main(["certify", "--client", f"{driver}:CLIENT", "--report-dir", str(tmp_path / "r")])
    assert code == 2
    err = capsys.readouterr().err
    valid = "transport, tool_names, tool_schemas, tool_results, quirks"
    assert f"unknown duty 'schemas' for openai_chat (valid: {valid})" in err


def test_an_sdk_handing_on_a_provider_quirk_leaves_it_to_the_caller_with_what_the_provider_sent() -> None:
    # streaming/done_without_finish_reason: [DONE] after complete calls, every finish_reason null;
    # openai-python's raw stream hands the chunks on as they came (no finish reason to read)
    pytest.importorskip("openai")
    chosen = [s for s in load_scenarios([]).scenarios if s.id == "streaming/done_without_finish_reason"]
    options = CertifyOptions(cassette_dir=CASSETTES, modes=("stream",), isolate=False, wires=("openai_chat",))
    [case] = certify(chosen, _sdk("openai_driver.py", frozenset({"transport"})), options).cases
    assert case.status == "left"
    left = [f for v in case.checks for f in v.findings if f.kind == "left"]
    assert "roundtrip.finish_reason" in {f.check for f in left}
    assert all(f.remedy.startswith("a provider quirk reaches you as the provider sent it") for f in left)
    assert chosen[0].behavior.rstrip(".")[:40] in left[0].remedy
    [taken] = certify(chosen, _sdk("openai_driver.py", frozenset({"transport", "quirks"})), options).cases
    assert taken.status == "fail"
    assert "roundtrip.finish_reason" in {v.check for v in taken.checks if v.status == "fail"}


def test_an_anthropic_call_cut_by_the_limit_is_left_to_the_caller_who_must_check_the_finish_reason() -> None:
    # the SDK's stream helper parses the cut input as far as it got, as Anthropic's own whole answer holds it
    pytest.importorskip("anthropic")
    chosen = [s for s in load_scenarios([]).scenarios if s.id == "arguments/truncated_by_length"]
    options = CertifyOptions(cassette_dir=CASSETTES, isolate=False, wires=("anthropic",))
    cases = {c.mode: c for c in certify(chosen, _sdk("anthropic_driver.py", frozenset({"transport"})), options).cases}
    checks = {v.check: v for v in cases["stream"].checks}
    assert checks["recovery.arguments_error"].status == "left"
    [finding] = checks["recovery.arguments_error"].findings
    assert finding.remedy == CUT_CALL_REMEDY and isinstance(finding.actual, dict)
    assert checks["roundtrip.finish_reason"].status == "pass"  # length reached the caller
    # a whole Anthropic answer carries the input as an object: no provider sends the malformed text
    assert cases["non_stream"].status == "unsupported"
    assert "tool_use.input as an object" in cases["non_stream"].message


def test_malformed_argument_text_is_not_played_to_a_client_where_the_wire_carries_objects() -> None:
    pytest.importorskip("ollama")
    chosen = [s for s in load_scenarios([]).scenarios if s.id == "arguments/malformed_json"]
    options = CertifyOptions(cassette_dir=CASSETTES, isolate=False, wires=("ollama",))
    cases = certify(chosen, _sdk("ollama_driver.py", frozenset({"transport"})), options).cases
    assert [(c.mode, c.status) for c in cases] == [("non_stream", "unsupported"), ("stream", "unsupported")]
    assert all("no provider sends the malformed argument text" in c.message for c in cases)


def test_a_name_the_wire_refuses_may_be_mapped_to_a_valid_name_of_the_clients_choosing() -> None:
    # LiteLLM sends files.read as files_read_2 beside the caller's valid files_read; the reference
    # adapter would pick another valid name: the tool is still the caller's, named as the wire accepts
    case = _case(_renaming("openai_chat", "files_read_2"), "names/sanitized_collision")
    named = [
        f
        for v in case.checks
        if v.check in ("translation.tool_definitions", "roundtrip.request", "client.recorded_request")
        for f in v.findings
        if f.kind == "defect" and ".tools[" in f.path and f.path.endswith("name")
    ]
    assert named == []
    assert {v.check: v.status for v in case.checks}["translation.tool_names"] == "pass"
    # a name the wire accepts, sent under another, is a change the caller did not ask for
    renamed = _case(_renaming("openai_chat", "weather_tool"), "basic/get_time")
    assert {v.check: v.status for v in renamed.checks}["translation.tool_definitions"] == "fail"


def _result_ctx(wire: str, *, tags: tuple[str, ...] = ("mcp", "tool_results")) -> Any:
    """The little of a client case that the duty of a tool-result finding reads (pure functions)."""
    return SimpleNamespace(
        client=(), adapter=SimpleNamespace(wire_format=wire), scenario=SimpleNamespace(tags=tags, tools=())
    )


def _dropped_audio() -> Finding:
    # what translation.tool_result_content says when a Chat tool message lost an audio block silently
    return Finding(
        check=TOOL_RESULT_CHECK,
        path="$.messages[2].parts[0].content[1]",
        expected={"kind": "text", "text": "[audio audio/wav left out]"},
        actual=None,
        message="tool result call_1: the audio block (audio/wav) was dropped without a note",
    )


@pytest.mark.parametrize("wire", ["openai_chat", "openai_responses", "anthropic", "gemini", "ollama"])
def test_a_tool_result_the_caller_wrote_is_left_to_the_caller_with_what_the_wire_slot_takes(wire: str) -> None:
    ctx = _result_ctx(wire)
    assert duty_of(_dropped_audio(), ctx) == "tool_results"
    [out] = left_to_caller([verdict(TOOL_RESULT_CHECK, [_dropped_audio()])], ctx, {"transport"})
    assert out.status == "left"
    [finding] = out.findings
    assert finding.kind == "left" and finding.remedy == REMEDIES[("tool_results", wire)]
    # the remedy names the spec's rule for structured content and the SDK type of the wire's slot
    assert "SHOULD also return the serialized JSON in a TextContent block" in finding.remedy
    assert finding.remedy.endswith('(docs/mcp.md, "What the model receives")')


def test_a_library_that_converts_tool_results_fails_when_it_drops_a_block() -> None:
    ctx = _result_ctx("openai_chat")
    [out] = left_to_caller(
        [verdict(TOOL_RESULT_CHECK, [_dropped_audio()])], ctx, {"transport", "tool_schemas", "tool_results"}
    )
    assert out.status == "fail" and [f.kind for f in out.findings] == ["defect"]


def test_the_tool_results_duty_is_a_contract_duty_a_driver_may_declare() -> None:
    client = SimpleClient(
        name="x",
        wires={"openai_chat": frozenset()},
        complete=print,
        error_info=print,
        duties={"openai_chat": frozenset({"transport", "tool_results"})},
    )
    assert client_problems(client) == []
    assert client_duties(client, "openai_chat") == {"transport", "tool_results"}


def _sent_ctx(wire: str, body: dict[str, Any], result: Any) -> Any:
    """A client case whose one turn gave ``result`` and sent ``body`` (read back as the caller gave it)."""
    request = Request(model="m", messages=(Message(role="tool", parts=(result,)),))
    turn = SimpleNamespace(request=request, wire=SimpleNamespace(body=body))
    return SimpleNamespace(
        client=(),
        adapter=SimpleNamespace(wire_format=wire),
        scenario=SimpleNamespace(tags=("mcp",), tools=()),
        outcome=SimpleNamespace(turns=(turn,)),
        read_back=lambda _turn: request,
    )


def _differs(check: str, path: str) -> Finding:
    return Finding(check=check, path=path, turn=0, expected="a", actual="b", message="differs")


def test_any_check_on_the_content_of_an_mcp_result_the_caller_wrote_is_about_tool_results() -> None:
    audio = ToolResult(call_id="c1", content=(Text(text="hi"), Audio(media_type="audio/wav", data="AAAA")))
    body = {"messages": [{"role": "tool", "tool_call_id": "c1", "content": "hi"}]}
    ctx = _sent_ctx("openai_chat", body, audio)
    assert duty_of(_differs("client.recorded_request", "$.messages[0].parts[0].content[1]"), ctx) == "tool_results"
    assert duty_of(_differs("translation.wire_paths", "$.messages[0].content"), ctx) == "tool_results"
    # not a tool result's content: transport
    assert duty_of(_differs("client.recorded_request", "$.messages[0].parts[0].is_error"), ctx) is None
    assert duty_of(_differs("translation.wire_paths", "$.messages[1].content"), ctx) is None
    # a result of text alone needs no rule: a change to it is the client's
    plain = ToolResult(call_id="c1", content=(Text(text="hi"),))
    assert (
        duty_of(
            _differs("client.recorded_request", "$.messages[0].parts[0].content[0]"),
            _sent_ctx("openai_chat", body, plain),
        )
        is None
    )
    # client.recorded_request compares a result's text as ``text``; roundtrip.request its projection's ``result``
    ctx = _sent_ctx("openai_chat", body, audio)
    assert duty_of(_differs("client.recorded_request", "$.messages[0].parts[0].text"), ctx) == "tool_results"
    assert duty_of(_differs("roundtrip.request", "$.parts[0].result"), ctx) == "tool_results"
    assert duty_of(_differs("roundtrip.request", "$.parts[1].result"), ctx) is None
    structured = ToolResult(call_id="c1", content=(), provider_details={"mcp": {"structured_content": {"a": 1}}})
    gemini = {"contents": [{"role": "user", "parts": [{"functionResponse": {"name": "t", "response": {}}}]}]}
    ctx = _sent_ctx("gemini", gemini, structured)
    assert duty_of(_differs("translation.wire_paths", "$.contents[0].parts[0].functionResponse.response"), ctx) == (
        "tool_results"
    )
    # E32 (wire-formats.md): Gemini takes snake_case fields, which LiteLLM sends (``function_response``)
    snake = {"contents": [{"role": "user", "parts": [{"function_response": {"name": "t", "response": {}}}]}]}
    ctx = _sent_ctx("gemini", snake, structured)
    assert duty_of(_differs("translation.wire_paths", "$.contents[0].parts[0].functionResponse.response"), ctx) == (
        "tool_results"
    )


def test_a_library_that_converts_tool_results_is_judged_on_their_content_by_one_check() -> None:
    # the other checks' findings on a rich result's content compare spellings: dropped, and the content
    # is judged by translation.tool_result_content alone; the is_error flag stays the other checks'
    audio = ToolResult(call_id="c1", content=(Text(text="hi"), Audio(media_type="audio/wav", data="AAAA")))
    body = {"messages": [{"role": "tool", "tool_call_id": "c1", "content": "hi"}]}
    ctx = _sent_ctx("openai_chat", body, audio)
    duties = {"transport", "tool_results"}
    spelling = _differs("client.recorded_request", "$.messages[0].parts[0].text")
    flag = _differs("client.recorded_request", "$.messages[0].parts[0].is_error")
    [recorded] = left_to_caller([verdict("client.recorded_request", [spelling, flag])], ctx, duties)
    assert recorded.status == "fail" and [f.path for f in recorded.findings] == [flag.path]
    [only] = left_to_caller(
        [verdict("roundtrip.request", [_differs("roundtrip.request", "$.parts[0].result")])], ctx, duties
    )
    assert only.status == "pass" and only.findings == ()
    [content] = left_to_caller(
        [verdict(TOOL_RESULT_CHECK, [_differs(TOOL_RESULT_CHECK, "$.messages[0].parts[0].content")])], ctx, duties
    )
    assert content.status == "fail"
