"""Plain words for the common defects (``conformance.reporting._words``), each from a real mutant.

Every test runs a real bug, an adapter from ``conformance.selftest`` or a client that changes what the
reference adapter sends, on the bundled scenarios and cassettes, then reads the defect the report
gives. Expected values come from the cassettes (the ids the provider sent, in its order) and the
wire facts (OpenAI Chat has no error flag on a tool result, wire-formats.md §1b).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

from conformance.adapters import for_format, get_adapter
from conformance.adapters.base import Adapter, WireRequest
from conformance.clients.contract import Call
from conformance.clients.harness import CertifyOptions, certify
from conformance.clients.translator import TranslatorClient
from conformance.errors import ProviderError
from conformance.model import ErrorInfo, Request, Response, StreamEvent
from conformance.reporting import DefectData, build_report
from conformance.run.runner import RunOptions, run_suite
from conformance.scenarios.loader import load_scenarios
from conformance.selftest._mutants import MUTANTS
from conformance.verdicts import RunResult
from tests._mutant_clients import DROPPED, REVERSED, Retrying, rewriting

REPO = Path(__file__).resolve().parents[2]
CASSETTES = REPO / "cassettes"


def scenarios(*ids: str) -> list[Any]:
    chosen = [s for s in load_scenarios([]).scenarios if s.id in ids]
    assert len(chosen) == len(ids)
    return chosen


def adapter_defects(adapter: Adapter, *ids: str) -> list[DefectData]:
    run = run_suite(scenarios(*ids), [adapter], RunOptions(cassette_dir=CASSETTES))
    return build_report(run)["defects"]


def client_defects(client: Any, *ids: str, modes: tuple[str, ...] = ("non_stream", "stream")) -> list[DefectData]:
    options = CertifyOptions(cassette_dir=CASSETTES, modes=modes, isolate=False)  # type: ignore[arg-type]
    run: RunResult = certify(scenarios(*ids), client, options)
    return build_report(run)["defects"]


def only(defects: list[DefectData]) -> DefectData:
    failing = [d for d in defects if d["kind"] == "defect"]
    assert len(failing) == 1, [(d["signature"], d["sentence"]) for d in failing]
    return failing[0]


def recorded_call_ids(wire: str, scenario: str) -> list[str]:
    """The tool call ids of the cassette's first non-streamed answer holding calls, in the provider's order."""
    cassette = json.loads((CASSETTES / wire / f"{scenario}.yaml").read_text(encoding="utf-8"))
    for interaction in cassette["interactions"]:
        body = interaction["response"].get("parsed_body")
        if isinstance(body, dict) and body["choices"][0]["message"].get("tool_calls"):
            return [call["id"] for call in body["choices"][0]["message"]["tool_calls"]]
    raise AssertionError(f"{wire}/{scenario}: no answer with tool calls")


# -- the order of results ------------------------------------------------------------------------------------


def test_results_sent_in_another_order_say_order_and_show_both_orders() -> None:
    client = REVERSED
    defect = only(client_defects(client, "multi_turn/parallel_results"))
    assert "order" in defect["sentence"] and defect["severity"] == "changes_meaning"
    assert defect["remedy"] == "send results in the order of the calls they answer"
    calls = recorded_call_ids("openai_chat", "multi_turn/parallel_results")
    said, sent = defect["evidence"]["shown"]
    assert said.startswith("the calls:") and sent.startswith("the results sent:")
    # the calls in the provider's order, the results in the order sent (ids cut to 24 characters)
    assert [x.strip().rstrip("…") for x in said.partition(":")[2].split(",")] == [c[:23] for c in calls]
    assert [x.strip().rstrip("…") for x in sent.partition(":")[2].split(",")] == [c[:23] for c in calls[::-1]]
    # the checks that restate it are listed under it, not as defects of their own
    assert {r["check"] for r in defect["restated"]} >= {"roundtrip.request", "client.recorded_request"}


# -- call ids ------------------------------------------------------------------------------------------------


def test_a_dropped_call_id_names_the_call_and_what_was_sent_instead() -> None:
    defect = only(client_defects(DROPPED, "basic/get_time"))
    [given] = recorded_call_ids("openai_chat", "basic/get_time")
    assert defect["check"] == "client.call_ids" and defect["severity"] == "loses_data"
    assert defect["sentence"].startswith("Drops the call id from the result of the first call")
    assert f'the provider gave "{given}", the request carries none' in defect["sentence"]
    assert "OpenAI Chat would reject the request ('tool_call_id' is a required property)" in defect["sentence"]
    assert defect["remedy"] == "send back each call's id exactly as the provider sent it"
    restating = {r["check"] for r in defect["restated"]}
    assert {"translation.request_shape", "client.recorded_request"} <= restating
    assert len(defect["cases"]) == 2 and defect["evidence"]["cassette"] is not None


def test_a_replaced_call_id_shows_the_id_sent_instead() -> None:
    def replace_id(body: dict[str, Any]) -> dict[str, Any]:
        for message in body["messages"]:
            if message.get("role") == "tool":
                message["tool_call_id"] = "call_made_up"
        return body

    made_up = TranslatorClient(rewriting("openai_chat", replace_id), name="made-up-id")
    defect = only(client_defects(made_up, "basic/get_time"))
    [given] = recorded_call_ids("openai_chat", "basic/get_time")
    assert defect["sentence"].startswith("Replaces the call id of the result of the first call")
    assert f'the provider gave "{given}", the request carries "call_made_up"' in defect["sentence"]
    assert defect["severity"] == "changes_meaning"


# -- fields lost -----------------------------------------------------------------------------------------------


def test_a_field_lost_on_the_way_to_the_provider() -> None:
    defect = only(adapter_defects(MUTANTS["anthropic~input_schema_dropped"].adapter(), "basic/get_time"))
    # the tool's schema (its properties, from the scenario) never reaches the provider
    assert defect["sentence"].startswith('Drops properties ({"offset_ms": ')
    assert defect["sentence"].endswith("from the request to the provider.") and defect["severity"] == "loses_data"


def test_is_error_dropped_where_the_wire_has_the_flag() -> None:
    defect = only(adapter_defects(MUTANTS["anthropic~is_error_dropped"].adapter(), "tool_results/is_error"))
    assert defect["sentence"] == "Drops is_error from a failed tool's result: the provider reads it as a success."
    assert "is_error: true" in defect["remedy"] and defect["severity"] == "loses_data"


def test_is_error_on_a_wire_without_the_flag_says_to_write_the_failure_into_the_text() -> None:
    reference = get_adapter("openai_chat")

    def request_to_wire(request: Request) -> WireRequest:  # the failure sent as a plain result
        sent = reference.request_to_wire(request)
        body = copy.deepcopy(dict(sent.body))
        for message in body["messages"]:
            if message.get("role") == "tool" and str(message.get("content", "")).startswith("Error: "):
                message["content"] = message["content"].removeprefix("Error: ")
        return replace(sent, body=body)

    bug = replace(reference, name="no_error_text", request_to_wire=request_to_wire)
    defect = only(adapter_defects(bug, "tool_results/is_error"))
    assert defect["sentence"] == "Loses that a tool failed: the result reaches OpenAI Chat as a success."
    assert defect["remedy"] == "on this wire (OpenAI Chat has no error flag) write the failure into the result text"


# -- answers ---------------------------------------------------------------------------------------------------


def test_a_finish_reason_mapped_to_another_names_both_and_what_the_providers_means() -> None:
    defect = only(adapter_defects(MUTANTS["openai_chat~length_as_stop"].adapter(), "basic/max_tokens_length"))
    assert defect["sentence"] == ('Maps the finish reason "length" (the answer was cut by the token limit) to "stop".')
    assert defect["remedy"] == 'map the provider\'s reason to "length"'


def test_a_stream_cut_taken_as_a_normal_end() -> None:
    from conformance.model import ErrorEvent

    reference = get_adapter("openai_chat")

    def no_errors(chunks: Any, *, tools: Any = ()) -> Iterator[StreamEvent]:
        return (e for e in reference.stream_from_wire(chunks, tools=tools) if not isinstance(e, ErrorEvent))

    bug = replace(reference, name="cut_is_an_end", stream_from_wire=no_errors)
    defect = only(adapter_defects(bug, "errors/stream_disconnect", "errors/stream_no_terminator"))
    assert defect["sentence"] == (
        "Takes a stream that was cut off as a normal end: the caller gets a partial answer and no error."
    )
    assert "stream_incomplete" in defect["remedy"] and defect["modes"] == ["stream"]
    assert defect["severity"] == "changes_meaning"  # a cut answer looks whole, whatever the restating checks say


def test_an_error_where_the_provider_sent_a_whole_answer() -> None:
    mutant = MUTANTS["openai_chat~done_without_finish_incomplete"].adapter()
    defect = only(adapter_defects(mutant, "streaming/done_without_finish_reason"))
    assert defect["sentence"].startswith('Reports an error of kind "stream_incomplete" where the provider sent')


def test_calls_dropped_from_non_streamed_answers() -> None:
    from conformance.model import ToolCall

    reference = get_adapter("openai_chat")

    def no_calls(body: Any, *, tools: Any = ()) -> Response:
        response = reference.response_from_wire(body, tools=tools)
        return replace(response, parts=tuple(p for p in response.parts if not isinstance(p, ToolCall)))

    bug = replace(reference, name="chat_whole_bug", response_from_wire=no_calls)
    defect = only(adapter_defects(bug, "basic/get_time", "basic/parallel_calls"))
    assert defect["sentence"].startswith("Drops tool calls from non-streamed answers: the model called getTime")
    assert defect["sentence"].endswith("the caller got no call.")
    assert defect["wrong_mode"] == "non_stream" and [r["check"] for r in defect["restated"]] == ["streaming.fold"]
    assert len(defect["cases"]) == 4 and defect["modes"] == ["non_stream", "stream"]


# -- clients: retries and errors --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Untyped:
    """Turns every provider error into a bare RuntimeError that its error_info cannot read."""

    inner: TranslatorClient
    name: str = "untyped"
    known_gaps: dict[str, str] = field(default_factory=dict)

    @property
    def wires(self) -> dict[str, frozenset[str]]:
        return dict(self.inner.wires)

    def complete(self, call: Call) -> Response | Iterator[StreamEvent]:
        try:
            answer = self.inner.complete(call)
            return answer if isinstance(answer, Response) else iter(list(answer))
        except ProviderError as exc:
            raise RuntimeError("request failed") from exc

    def error_info(self, exc: BaseException) -> ErrorInfo | None:
        return None


def test_a_retry_the_caller_did_not_ask_for() -> None:
    defect = only(client_defects(Retrying(TranslatorClient(for_format("anthropic"))), "basic/get_time"))
    assert defect["sentence"] == "Sends 2 requests for one turn: a retry the caller did not ask for."
    assert defect["remedy"] == "retry only when the caller asks for it"


def test_an_untyped_error() -> None:
    defects = client_defects(Untyped(TranslatorClient(for_format("openai_chat"))), "errors/rate_limit")
    defect = only(defects)
    assert defect["sentence"].startswith("Raises an untyped error (builtins.RuntimeError) where the provider")
    assert 'an error of kind "rate_limit"' in defect["sentence"]
    assert "typed error" in defect["remedy"]


@pytest.mark.parametrize("width", [80])
def test_every_sentence_is_one_sentence_without_python_reprs(width: int) -> None:
    client = REVERSED
    for defect in client_defects(client, "multi_turn/parallel_results", "basic/get_time"):
        assert "None" not in defect["sentence"] and defect["sentence"].endswith(".")


# -- reasoning and the cache prefix (issue 28) ---------------------------------------------------------------


def test_a_signature_not_sent_back_is_a_request_the_provider_rejects() -> None:
    # Gemini 3 answers 400 when a call's thoughtSignature does not come back on its part (wire facts §2c)
    defect = only(adapter_defects(MUTANTS["gemini~thought_signature_moved"].adapter(), "reasoning/call_after_thinking"))
    assert defect["check"] == "roundtrip.reasoning_replay" and defect["severity"] == "rejected"
    assert defect["sentence"].startswith("Does not send back the reasoning Gemini produced as its replay rule says:")
    assert "thoughtSignature" in defect["sentence"] and "unmodified" in defect["remedy"]


def test_reasoning_sent_to_another_wire_says_which_wire_made_it() -> None:
    mutant = MUTANTS["anthropic~foreign_reasoning_sent"].adapter()
    defect = only(adapter_defects(mutant, "reasoning/cross_wire_history_to_anthropic"))
    assert defect["sentence"].startswith("Sends reasoning another provider produced to Anthropic:")
    assert "produced by gemini" in defect["sentence"] and defect["severity"] == "rejected"
    assert defect["remedy"].startswith("leave out reasoning another wire produced")


def test_tools_reordered_between_turns_move_the_cache_prefix_at_the_first_tool() -> None:
    defect = only(
        adapter_defects(MUTANTS["openai_chat~tools_reordered_between_turns"].adapter(), "multi_turn/two_rounds")
    )
    assert defect["check"] == "roundtrip.cache_prefix"
    assert defect["sentence"].startswith("Moves the cacheable prefix between requests (request 0 -> 1:")
    assert "$.tools[0]" in defect["sentence"] and "cannot reuse its prompt cache" in defect["sentence"]


def test_a_servers_defect_is_said_as_its_check_says_it() -> None:
    # real server.* verdicts (conformance.checks.server) of a server that answers arguments that are not JSON
    # and accepts an invalid request with a 200: the server translates nothing, so no "Changes ..." sentence
    from conformance.checks.server import ServerExchange, answer_verdicts, error_verdict
    from conformance.verdicts import AdapterInfo, CaseResult, ScenarioInfo

    call = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": '}}
    answer = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [call],
                },
            }
        ],
        "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8},
    }
    body = json.dumps(answer).encode()
    exchange = ServerExchange(
        wire="openai_chat",
        stream=False,
        request=b"{}",
        status=200,
        headers={"content-type": "application/json"},
        body=body,
        tools=("get_weather",),
    )
    verdicts = answer_verdicts([exchange])
    probe = error_verdict("unknown_tool_choice", exchange, documented=True)  # its own case, as the probes are
    failing = [v for v in (*verdicts, probe) if v.status == "fail"]
    assert [v.check for v in failing] == ["server.arguments", "server.errors"]
    column = "llama/openai_chat"
    run = RunResult(
        suite_version="0",
        adapters=(AdapterInfo(name=column, wire_format="openai_chat"),),
        scenarios=(ScenarioInfo(id="s", behavior="", source=""),),
        cases=(
            CaseResult(adapter=column, scenario="s", mode="non_stream", status="fail", checks=verdicts),
            CaseResult(
                adapter=column,
                scenario="server/invalid/unknown_tool_choice",
                mode="non_stream",
                status="fail",
                checks=(probe,),
            ),
        ),
    )
    sentences = {d["check"]: d["sentence"] for d in build_report(run)["defects"]}
    [arguments] = failing[0].findings
    assert sentences["server.arguments"] == arguments.message[:1].upper() + arguments.message[1:] + "."
    assert sentences["server.arguments"].startswith("The arguments are not JSON")
    assert sentences["server.errors"].startswith("The invalid request (unknown_tool_choice) was accepted with 200: ")


def test_a_stale_tool_list_is_told_as_the_old_list_kept_with_the_tool_the_server_added() -> None:
    defects = adapter_defects(MUTANTS["anthropic~stale_tool_list"].adapter(), "mcp/tools_added")
    failing = [d for d in defects if d["kind"] == "defect"]
    assert failing and failing[0]["check"] == "translation.tool_list"  # it names the joined defect
    assert failing[0]["sentence"].startswith(
        "Keeps offering an old tool list after the MCP server changed it: does not offer 'refund_order', which the"
        " MCP server lists (added by the MCP server after turn 0: notifications/tools/list_changed)"
    )
    assert failing[0]["severity"] == "changes_meaning"
    assert "notifications/tools/list_changed" in failing[0]["remedy"]
