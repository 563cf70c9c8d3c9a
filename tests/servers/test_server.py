"""``certify_server`` against loopback servers: the emulator as the control, mutant emulators that
break one rule each, and hostile servers (issue 29, "Done means" and "Bad input").

Bounds in these tests are sizes, counts and small deadlines (``exchange_timeout``, ``max_body``,
``timeout``); no test asserts how long anything took.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.emulator import Emulator
from conformance.errors import UsageError
from conformance.reporting import build_report, render_json, render_markdown
from conformance.scenarios.loader import load_scenarios
from conformance.servers import (
    ServerOptions,
    certify_server,
    server_case_count,
    server_columns,
    server_result,
    server_scenarios,
)
from conformance.servers.invalid import PROBES, probe_id
from conformance.verdicts import CaseResult, RunResult
from tests._raw_server import Peer, RawServer, head
from tests.servers._mutants import MUTATIONS, MutantProxy

WIRES = ("openai_chat", "openai_responses", "anthropic", "gemini", "ollama")
ALL = load_scenarios().scenarios
ASKED = server_scenarios(ALL)
BY_ID = {s.id: s for s in ALL}


CONTROL = [
    BY_ID[i]
    for i in (
        "basic/single_call",
        "basic/no_tools",
        "basic/parallel_calls",
        "basic/text_before_call",
        "basic/system_prompt",
        "arguments/typed_values",
        "multi_turn/two_rounds",
        "multi_turn/parallel_results",
        "names/dotted",
        "schemas/enums",
        "streaming/parallel_calls_stream",
        "tool_choice/required",
        "tool_choice/none",
        "tool_results/is_error",
        "reasoning/call_after_thinking",
    )
]
"""The control's scenarios here: each kind of answer (text, one call, parallel calls, several
turns, results, reasoning) on every wire; the whole set runs in ``conformance certify --server``
against ``conformance emulator --play-scenarios`` (docs/servers.md gives its figures)."""


@contextlib.contextmanager
def _control() -> Iterator[Emulator]:
    with Emulator() as emulator:
        emulator.play_scenarios(ASKED)
        yield emulator


def _failing(result: RunResult) -> list[str]:
    return [
        f"{c.adapter}::{c.scenario}::{c.mode} {c.status}: {c.message} "
        + "; ".join(f"{v.check}: {[f.message for f in v.findings][:2]}" for v in c.checks if v.status == c.status)
        for c in result.cases
        if c.status not in ("pass", "unsupported")
    ]


def test_the_docs_example_certifies_the_control(capsys: pytest.CaptureFixture[str]) -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "servers.md").read_text(encoding="utf-8")
    block = re.search(r"```python\n(from conformance.scenarios.loader import load_scenarios\n.*?)```", doc, re.S)
    assert block is not None
    with _control() as emulator:
        code = block.group(1).replace("http://127.0.0.1:8080", emulator.base_url)
        exec(compile(code, "docs/servers.md", "exec"), {})
    counts = eval(capsys.readouterr().out)  # the dict result.counts() printed
    assert counts["pass"] > 0 and counts["error"] == counts["deviated"] == 0  # every scenario ran and was played


def test_server_scenarios_leave_out_what_a_model_cannot_be_asked() -> None:
    ids = {s.id for s in ASKED}
    assert "basic/single_call" in ids and "multi_turn/two_rounds" in ids
    for left_out in (
        "errors/rate_limit",  # an HTTP fault
        "errors/stream_no_terminator",  # a stream fault
        "streaming/name_repeated",  # a provider quirk (tag deviation)
        "arguments/malformed_json",  # scripted arguments that are not JSON
        "mcp/fixed_clock",  # tools from an MCP server
    ):
        assert left_out not in ids, left_out


def test_the_emulator_as_a_server_passes_every_case_on_all_five_wires() -> None:
    seen: list[CaseResult] = []
    with _control() as emulator:
        options = ServerOptions(base_url=emulator.base_url, wires=WIRES, timeout=60, exchange_timeout=30)
        result = certify_server(CONTROL, options, progress=seen.append)
    assert _failing(result) == []
    assert len(result.cases) == server_case_count(CONTROL, options) == len(seen)
    assert {c.adapter for c in result.cases} == {f"server/{w}" for w in WIRES}
    passed = {(c.adapter, c.scenario) for c in result.cases if c.status == "pass"}
    assert ("server/anthropic", "basic/single_call") in passed
    for probe in PROBES:  # every probe passes where its wire documents the error
        assert ("server/openai_chat", probe_id(probe)) in passed
    ollama = {c.scenario: c.status for c in result.cases if c.adapter == "server/ollama"}
    assert ollama[probe_id("body_not_json")] == "pass"
    assert ollama[probe_id("unknown_tool_choice")] == "unsupported"  # Ollama has no tool_choice
    streamed = next(c for c in result.cases if c.scenario == "basic/single_call" and c.mode == "stream")
    assert {v.check: v.status for v in streamed.checks}["server.modes"] == "pass"
    assert {v.check: v.status for v in streamed.checks}["server.model"] == "pass"


def test_the_report_names_the_server_and_the_model_its_answers_named() -> None:
    with _control() as emulator:
        options = ServerOptions(base_url=emulator.base_url, wires=("anthropic",), model="claude-x", probes=False)
        result = certify_server([BY_ID["basic/single_call"]], options)
    facts = result.provenance[f"server {emulator.base_url}"]
    assert facts["served_model"] == "claude-x"  # the emulator answers with the model asked for
    assert facts["wires"] == ["anthropic"]
    assert facts["sampling"] == {"temperature": 0.0, "seed": 42, "max_tokens": 64}
    markdown = render_markdown(build_report(result))
    assert emulator.base_url in markdown and "claude-x" in markdown
    assert {s.id for s in result.scenarios} == {"basic/single_call"}


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_a_mutant_emulator_fails_with_the_right_check(mutation: str) -> None:
    mutate, check = MUTATIONS[mutation]
    scenarios = [BY_ID["basic/single_call"]]
    with _control() as emulator, MutantProxy(emulator.base_url, mutate) as proxy:
        options = ServerOptions(base_url=proxy.base_url, wires=("openai_chat",), timeout=60, exchange_timeout=30)
        result = certify_server(scenarios, options)
    failed = {v.check for c in result.cases for v in c.checks if v.status == "fail"}
    assert check in failed, _failing(result)
    assert len(result.cases) == server_case_count(scenarios, options)


def test_the_model_choosing_text_is_deviated_never_a_server_defect() -> None:
    with Emulator() as emulator:  # no scenario played: every request gets the default text reply
        options = ServerOptions(base_url=emulator.base_url, wires=("openai_chat", "gemini"), probes=False)
        result = certify_server([BY_ID["basic/single_call"]], options)
    assert {c.status for c in result.cases} == {"deviated"}
    for case in result.cases:
        verdicts = {v.check: v for v in case.checks}
        assert verdicts["server.model"].status == "deviated"
        assert "answered in text" in verdicts["server.model"].message
        assert verdicts["server.status"].status == "pass"
        assert case.message.startswith("model deviated: turn 0")


def test_a_run_stopped_early_is_reported_with_the_server_and_the_cases_it_finished() -> None:
    options = ServerOptions(base_url="http://127.0.0.1:1", wires=("openai_chat",), api_key="sk-" + "z" * 24)
    done = CaseResult(
        adapter="server/openai_chat", scenario=probe_id("body_not_json"), mode="non_stream", status="pass"
    )
    result = server_result(ALL, options, [done])
    assert result.cases == (done,)
    assert result.provenance["server http://127.0.0.1:1"]["served_model"] is None
    assert probe_id("body_not_json") in {s.id for s in result.scenarios}
    assert result.selection is not None and result.selection.note == "server http://127.0.0.1:1"
    assert "z" * 24 not in repr(result)


def test_columns_and_wires() -> None:
    columns = server_columns(ServerOptions(base_url="http://127.0.0.1:1", wires=("ollama", "anthropic"), name="llama"))
    assert [c.name for c in columns] == ["llama/ollama", "llama/anthropic"]
    assert all(not c.known_gaps for c in columns)
    with pytest.raises(UsageError, match="unknown wire qwen"):
        server_columns(ServerOptions(base_url="http://127.0.0.1:1", wires=("qwen",)))


def test_select_and_probes_off_narrow_the_cases() -> None:
    options = ServerOptions(
        base_url="http://127.0.0.1:1",
        wires=("openai_chat",),
        probes=False,
        select=lambda column, scenario, mode: mode == "stream",
    )
    assert server_case_count([BY_ID["basic/single_call"], BY_ID["errors/rate_limit"]], options) == 1


# --------------------------------------------------------------------------------------------
# Streamed against non-streamed: server.modes
# --------------------------------------------------------------------------------------------


def _chat_answer(peer: Peer, text: str) -> None:
    """A Chat completion holding ``text``, whole or as a stream (wire-formats.md §1c-§1d)."""
    if not peer.streamed:
        body = json.dumps(
            {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "created": 1,
                "model": "m",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
            }
        ).encode()
        peer.send(head(headers=[("content-type", "application/json"), ("content-length", str(len(body)))]) + body)
        return
    chunk = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    events = [
        {**chunk, "choices": [{"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": None}]},
        {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        {**chunk, "choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}},
    ]
    body = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events) + b"data: [DONE]\n\n"
    peer.send(head(headers=[("content-type", "text/event-stream"), ("content-length", str(len(body)))]) + body)


def _modes_of(result: RunResult) -> tuple[str, str]:
    streamed = next(c for c in result.cases if c.mode == "stream")
    verdict = next(v for v in streamed.checks if v.check == "server.modes")
    return verdict.status, verdict.message + " ".join(f.message for f in verdict.findings)


def test_a_stream_that_decodes_otherwise_than_the_whole_answer_fails_server_modes() -> None:
    def answer(peer: Peer) -> None:
        _chat_answer(peer, "streamed words" if peer.streamed else "whole words")

    with RawServer(answer) as server:
        options = ServerOptions(base_url=server.base_url, wires=("openai_chat",), probes=False)
        result = certify_server([BY_ID["basic/no_tools"]], options)
        asked = server.requests
    status, words = _modes_of(result)
    assert status == "fail"
    assert "streamed words" in words and "whole words" in words and "asked twice" in words
    assert asked == 3  # non-streamed, streamed, and the non-streamed request once more


def test_a_server_that_answers_otherwise_each_time_is_not_deterministic() -> None:
    count = iter(range(1000))
    lock = threading.Lock()

    def answer(peer: Peer) -> None:
        with lock:
            number = next(count)
        _chat_answer(peer, f"answer {number}")

    with RawServer(answer) as server:
        options = ServerOptions(base_url=server.base_url, wires=("openai_chat",), probes=False)
        result = certify_server([BY_ID["basic/no_tools"]], options)
    status, words = _modes_of(result)
    assert status == "unsupported"
    assert "not deterministic" in words and "answer 0" in words and "answer 2" in words


# --------------------------------------------------------------------------------------------
# Bad input: every one a verdict of its case, within the bounds; the run goes on and ends
# --------------------------------------------------------------------------------------------


def _hostile(answer: Callable[[Peer], None], *, wires: tuple[str, ...] = ("openai_chat",), **bounds: Any) -> RunResult:
    with RawServer(answer) as server:
        options = ServerOptions(base_url=server.base_url, wires=wires, **bounds)
        result = certify_server([BY_ID["basic/single_call"], BY_ID["basic/no_tools"]], options)
        assert len(result.cases) == server_case_count([BY_ID["basic/single_call"], BY_ID["basic/no_tools"]], options)
    return result


def test_a_server_that_never_answers_is_cut_at_the_exchange_deadline() -> None:
    def answer(peer: Peer) -> None:
        while not peer.stopped:
            peer.wait(0.05)
            with contextlib.suppress(OSError):
                if peer.sock.recv(1, 0x40) == b"":  # MSG_DONTWAIT: the client hung up
                    return

    result = _hostile(answer, exchange_timeout=0.5, timeout=30)
    for case in result.cases:
        assert case.status == "fail", case
        assert "deadline" in case.message and "--exchange-timeout" in case.message, case.message
        status = {v.check: v for v in case.checks}.get("server.status") or {v.check: v for v in case.checks}.get(
            "server.errors"
        )
        assert status is not None and status.status == "fail"


def test_a_server_that_answers_forever_is_cut_at_the_body_bound() -> None:
    def answer(peer: Peer) -> None:
        peer.send(head(headers=[("content-type", "text/event-stream"), ("transfer-encoding", "chunked")]))
        delta = {"role": "assistant", "content": "x" * 8000}
        event = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m"}
        event["choices"] = [{"index": 0, "delta": delta, "finish_reason": None}]
        piece = b"data: " + json.dumps(event).encode() + b"\n\n"
        with contextlib.suppress(OSError):
            while not peer.stopped:
                peer.send(b"%x\r\n%s\r\n" % (len(piece), piece))

    result = _hostile(answer, max_body=64 * 1024, exchange_timeout=60, timeout=120)
    streamed = [c for c in result.cases if c.mode == "stream"]
    assert streamed
    for case in streamed:
        assert case.status == "fail"
        assert "65,536 bytes" in case.message and "--max-body" in case.message, case.message


def test_a_redirect_is_refused_and_never_followed() -> None:
    with RawServer(lambda peer: None) as elsewhere:

        def answer(peer: Peer) -> None:
            location = elsewhere.base_url + "/v1/chat/completions"
            peer.send(head("307 Temporary Redirect", [("location", location), ("content-length", "0")]))

        result = _hostile(answer)
        assert elsewhere.requests == 0  # the suite connects only to the URL given
    for case in result.cases:
        assert case.status == "fail"
        assert "redirect" in case.message and "307" in case.message, case.message


def test_a_server_answering_in_another_wire_is_a_shape_defect_not_a_crash() -> None:
    def answer(peer: Peer) -> None:
        _chat_answer(peer, "a Chat answer to a Messages request")

    result = _hostile(answer, wires=("anthropic",))
    assert {c.status for c in result.cases} == {"fail"}
    for case in result.cases:
        failed = {v.check for v in case.checks if v.status == "fail"}
        assert failed & {"server.shape", "server.framing", "server.errors"}, case
        assert case.traceback is None
    whole = next(c for c in result.cases if c.scenario == "basic/single_call" and c.mode == "non_stream")
    shape = next(v for v in whole.checks if v.check == "server.shape")
    assert "looks like the openai_chat wire" in " ".join(f.message for f in shape.findings)


def test_a_server_that_is_not_there_fails_each_case_saying_so() -> None:
    with RawServer(lambda peer: None) as gone:
        url = gone.base_url  # a port that was open, closed when the block ends
    options = ServerOptions(base_url=url, wires=("gemini",), exchange_timeout=5)
    result = certify_server([BY_ID["basic/single_call"]], options)
    assert len(result.cases) == server_case_count([BY_ID["basic/single_call"]], options)
    for case in result.cases:
        assert case.status == "fail"
        assert "no answer" in case.message and "cannot connect" in case.message, case.message


def test_a_case_past_its_timeout_is_an_error_and_the_next_case_runs() -> None:
    def answer(peer: Peer) -> None:  # answers after its own slow start: the case's bound cuts it first
        peer.wait(30)

    result = _hostile(answer, exchange_timeout=60, timeout=0.5, probes=False)
    assert len(result.cases) == 4
    for case in result.cases:
        assert case.status == "error"
        assert "did not end within 0.5 s" in case.message and "--timeout" in case.message


def test_the_api_key_never_reaches_the_result_or_the_report() -> None:
    key = "sk-test-" + "k3y" * 10

    def answer(peer: Peer) -> None:  # a server that echoes the request's headers in its error
        body = json.dumps({"error": {"message": peer.head.decode("latin-1"), "type": "invalid_request_error"}})
        data = body.encode()
        peer.send(head("401 Unauthorized", [("content-type", "application/json"), ("content-length", str(len(data)))]))
        peer.send(data)

    with RawServer(answer) as server:
        options = ServerOptions(base_url=server.base_url, wires=("openai_chat",), api_key=key)
        result = certify_server([BY_ID["basic/single_call"]], options)
    assert any(c.status == "fail" for c in result.cases)
    assert key not in repr(result)
    assert key not in render_json(build_report(result)) and key not in render_markdown(build_report(result))
