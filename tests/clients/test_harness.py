"""The harness certifies black-box clients: the reference adapters wrapped as clients pass what they
pass as adapters (self-consistency), and each client defect the ``client.*`` checks (and the shared
checks) exist for is caught in a client that has it, with a finding naming the field."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest

from conformance.adapters import for_format, native_adapters
from conformance.clients.contract import Call
from conformance.clients.harness import FAKE_API_KEY, OBJECT_ARGUMENTS, CertifyOptions, certify, client_adapter
from conformance.clients.translator import TranslatorClient
from conformance.errors import ProviderError
from conformance.model import ErrorInfo, Message, Response, StreamEvent, ToolCall, ToolResult
from conformance.run.runner import RunOptions, run_suite
from conformance.scenarios.loader import load_scenarios
from conformance.scenarios.values import Scenario
from conformance.verdicts import CaseResult, RunResult

REPO = Path(__file__).resolve().parents[2]
CASSETTES = REPO / "cassettes"


def scenarios(*globs: str) -> list[Scenario]:
    import fnmatch

    loaded = load_scenarios([]).scenarios
    return [s for s in loaded if not globs or any(fnmatch.fnmatchcase(s.id, g) for g in globs)]


def run(client: Any, *globs: str, **options: Any) -> RunResult:
    return certify(scenarios(*globs), client, CertifyOptions(cassette_dir=CASSETTES, **options))


def verdict_of(case: CaseResult, check: str) -> Any:
    found = [v for v in case.checks if v.check == check]
    assert found, f"{check} did not run on {case.adapter} {case.scenario} [{case.mode}]: {case.checks}"
    return found[0]


@dataclasses.dataclass(frozen=True)
class Wrapped:
    """A client that delegates to a reference adapter wrapped as a client, with one defect."""

    inner: TranslatorClient
    name: str = "wrapped"

    @property
    def wires(self) -> dict[str, frozenset[str]]:
        return dict(self.inner.wires)

    @property
    def known_gaps(self) -> dict[str, str]:
        return {}

    def complete(self, call: Call) -> Response | Iterator[StreamEvent]:
        return self.inner.complete(call)

    def error_info(self, exc: BaseException) -> ErrorInfo | None:
        return self.inner.error_info(exc)


# ---- self-consistency ------------------------------------------------------------------------


@pytest.mark.parametrize("name", native_adapters())
def test_a_reference_adapter_as_a_client_passes_every_case_it_passes_as_an_adapter(name: str) -> None:
    adapter = for_format(name)
    every = scenarios()
    as_adapter = run_suite(every, [adapter], RunOptions(cassette_dir=CASSETTES))
    as_client = certify(every, TranslatorClient(adapter), CertifyOptions(cassette_dir=CASSETTES))
    client_cases = {(c.scenario, c.mode): c for c in as_client.cases}
    assert len(client_cases) == len(as_adapter.cases)
    passed = [c for c in as_adapter.cases if c.status == "pass"]
    assert len(passed) > 100
    # an answer no provider of the wire sends (malformed argument text where arguments are objects) is
    # played to an adapter, which must survive it, but a client is not judged on it
    impossible = {
        (s.id, mode)
        for s in every
        for mode in ("non_stream", "stream")
        if "needs-string-arguments" in s.tags and (name, mode) in OBJECT_ARGUMENTS
    }
    assert {k for k in impossible if k in client_cases} == impossible and (name != "anthropic" or impossible)
    assert all("no provider sends the malformed argument text" in client_cases[k].message for k in impossible)
    differ = [
        (c.scenario, c.mode, client_cases[(c.scenario, c.mode)].status, client_cases[(c.scenario, c.mode)].message)
        for c in passed
        if client_cases[(c.scenario, c.mode)].status != "pass" and (c.scenario, c.mode) not in impossible
    ]
    assert differ == []
    unsupported = {(c.scenario, c.mode) for c in as_adapter.cases if c.status == "unsupported"}
    assert unsupported | impossible == {k for k, c in client_cases.items() if c.status == "unsupported"}
    ran = {v.check for c in as_client.cases for v in c.checks}
    assert {"client.one_request", "client.stream_mode"} <= ran
    assert "streaming.chunk_invariance" not in ran and "roundtrip.wire" not in ran  # they judge our decoder


def test_a_client_on_a_wire_is_reported_as_its_name_and_wire_with_its_own_capabilities() -> None:
    client = TranslatorClient(for_format("anthropic"), name="mine")
    adapter = client_adapter(client, "anthropic")
    assert adapter.name == "mine/anthropic"
    assert adapter.capabilities == for_format("anthropic").capabilities
    result = run(client, "basic/get_time")
    assert {c.adapter for c in result.cases} == {"mine/anthropic"}
    assert [a.name for a in result.adapters] == ["mine/anthropic"]


def test_wire_scoped_known_gaps_apply_only_on_their_wire() -> None:
    client = replace(TranslatorClient(for_format("gemini")))
    object.__setattr__(client, "known_gaps", {"gemini:client.one_request": "x", "anthropic:roundtrip.calls": "y"})
    adapter = client_adapter(client, "gemini")
    assert dict(adapter.known_gaps) == {"client.one_request": "x"}


# ---- client.one_request and retries ----------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Retrying(Wrapped):
    """Sends every turn twice (a hidden retry) and keeps the second answer."""

    def complete(self, call: Call) -> Response | Iterator[StreamEvent]:
        first = self.inner.complete(call)
        if not isinstance(first, Response):
            list(first)
        return self.inner.complete(call)


def test_a_hidden_retry_is_a_finding_and_gets_the_same_answer_not_the_next_turns() -> None:
    result = run(Retrying(TranslatorClient(for_format("openai_chat"))), "multi_turn/call_result_answer")
    assert [c.status for c in result.cases] == ["fail", "fail"]
    for case in result.cases:
        one = verdict_of(case, "client.one_request")
        assert one.status == "fail"
        assert [(f.turn, f.expected, f.actual) for f in one.findings] == [(0, 1, 2), (1, 1, 2)]
        # the retried request of turn 0 got turn 0's answer again: the calls and the final text still hold
        assert verdict_of(case, "roundtrip.calls").status == "pass"
        assert verdict_of(case, "roundtrip.text").status == "pass"
        failing = {v.check for v in case.checks if v.status == "fail"}
        assert failing == {"client.one_request"}


# ---- client.stream_mode ------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class AlwaysStreams(Wrapped):
    """Streams even when a whole answer was asked for, and folds it (pydantic-ai's Anthropic defect)."""

    def complete(self, call: Call) -> Response | Iterator[StreamEvent]:
        if call.stream:
            return self.inner.complete(call)
        from conformance.assembly import fold

        events = self.inner.complete(replace(call, stream=True))
        assert not isinstance(events, Response)
        return fold(list(events))


def test_streaming_when_a_whole_answer_was_asked_for_is_a_finding_naming_the_stream_field() -> None:
    result = run(AlwaysStreams(TranslatorClient(for_format("anthropic"))), "basic/get_time")
    by_mode = {c.mode: c for c in result.cases}
    mode = verdict_of(by_mode["non_stream"], "client.stream_mode")
    assert mode.status == "fail"
    assert {(f.path, f.expected, f.actual) for f in mode.findings} == {("$.stream", False, True)}
    assert len(mode.findings) == len(by_mode["non_stream"].checks and scenarios("basic/get_time")[0].turns)
    assert verdict_of(by_mode["stream"], "client.stream_mode").status == "pass"


# ---- client.call_ids ---------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ForgesIds(Wrapped):
    """Sends the history back with ids of its own instead of the provider's."""

    def complete(self, call: Call) -> Response | Iterator[StreamEvent]:
        def forged(message: Message) -> Message:
            parts = tuple(
                replace(p, id=f"forged_{p.id[-4:]}")
                if isinstance(p, ToolCall)
                else replace(p, call_id=f"forged_{p.call_id[-4:]}")
                if isinstance(p, ToolResult)
                else p
                for p in message.parts
            )
            return replace(message, parts=parts)

        return self.inner.complete(replace(call, messages=tuple(forged(m) for m in call.messages)))


@pytest.mark.parametrize(
    ("wire", "scenario"),
    [("anthropic", "multi_turn/call_result_answer"), ("gemini", "multi_turn/call_id_sent_back")],
)
def test_ids_sent_back_other_than_the_decoded_ones_are_a_finding(wire: str, scenario: str) -> None:
    result = run(ForgesIds(TranslatorClient(for_format(wire))), scenario, modes=("non_stream",))
    [case] = result.cases
    ids = verdict_of(case, "client.call_ids")
    assert ids.status == "fail"
    assert {f.turn for f in ids.findings} == {1}
    assert all(str(f.actual).count("forged_") >= 1 for f in ids.findings)
    paths = " ".join(f.path for f in ids.findings)
    expected_paths = {
        "anthropic": ("tool_use", "tool_use_id"),
        "gemini": ("functionCall.id", "functionResponse.id"),
    }[wire]
    assert all(p in paths for p in expected_paths)


def test_ids_the_client_made_up_are_not_asked_back() -> None:
    """Gemini answers without ``functionCall.id``: the ids are the client's own (synthetic), any
    history is fine."""
    result = run(ForgesIds(TranslatorClient(for_format("gemini"))), "multi_turn/call_result_answer")
    assert all(not [v for v in c.checks if v.check == "client.call_ids"] for c in result.cases)


# ---- is_error dropped (a defect the shared checks catch on a client's own body) -----------------


@dataclasses.dataclass(frozen=True)
class DropsIsError(Wrapped):
    def complete(self, call: Call) -> Response | Iterator[StreamEvent]:
        messages = tuple(
            replace(m, parts=tuple(replace(p, is_error=False) if isinstance(p, ToolResult) else p for p in m.parts))
            for m in call.messages
        )
        return self.inner.complete(replace(call, messages=messages))


def test_a_tool_result_sent_without_its_is_error_flag_fails_naming_the_field() -> None:
    result = run(DropsIsError(TranslatorClient(for_format("anthropic"))), "tool_results/is_error")
    for case in result.cases:
        request = verdict_of(case, "roundtrip.request")
        assert request.status == "fail"
        assert any(f.path.endswith(".is_error") and f.expected is True and f.actual is False for f in request.findings)


# ---- client.typed_errors -----------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Untyped(Wrapped):
    def error_info(self, exc: BaseException) -> ErrorInfo | None:
        return None


@dataclasses.dataclass(frozen=True)
class BrokenErrorInfo(Wrapped):
    def error_info(self, exc: BaseException) -> ErrorInfo | None:
        raise KeyError("status")


def test_an_exception_error_info_does_not_map_is_an_untyped_finding() -> None:
    result = run(Untyped(TranslatorClient(for_format("openai_chat"))), "errors/rate_limit", modes=("non_stream",))
    [case] = result.cases
    typed = verdict_of(case, "client.typed_errors")
    assert typed.status == "fail"
    assert "ProviderError" in str(typed.findings[0].actual)
    assert verdict_of(case, "recovery.provider_error").status == "fail"  # no kind: rate_limit was expected
    good = run(TranslatorClient(for_format("openai_chat")), "errors/rate_limit", modes=("non_stream",))
    assert verdict_of(good.cases[0], "client.typed_errors").status == "pass"
    assert verdict_of(good.cases[0], "recovery.provider_error").status == "pass"


def test_error_info_that_raises_is_a_finding_not_a_crash() -> None:
    result = run(BrokenErrorInfo(TranslatorClient(for_format("anthropic"))), "errors/overloaded")
    for case in result.cases:
        typed = verdict_of(case, "client.typed_errors")
        assert typed.status == "fail"
        assert "KeyError" in typed.findings[0].message


# ---- async clients, timeouts -------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Async(Wrapped):
    """An ``async def complete`` whose streams are async generators; records its loops."""

    loops: list[int] = dataclasses.field(default_factory=list)

    async def complete(self, call: Call) -> Any:  # type: ignore[override]
        self.loops.append(id(asyncio.get_running_loop()))
        result = await asyncio.to_thread(self.inner.complete, call)
        if isinstance(result, Response):
            return result
        events = await asyncio.to_thread(list, result)

        async def stream() -> Any:
            for event in events:
                yield event

        return stream()


def test_an_async_client_passes_like_its_sync_twin_on_one_event_loop() -> None:
    client = Async(TranslatorClient(for_format("gemini")))
    result = run(client, "basic/*", "multi_turn/two_rounds", isolate=False)  # the loops are counted here
    twin = run(TranslatorClient(for_format("gemini")), "basic/*", "multi_turn/two_rounds")
    assert [c.status for c in result.cases] == [c.status for c in twin.cases]
    assert {c.status for c in result.cases} == {"pass"}
    assert len(client.loops) > 20 and len(set(client.loops)) == 1


HANG = 3600.0
"""Seconds a hanging client waits: never, within a test (its worker process ends with the run)."""
TURN_TIMEOUT = 4.0
"""The turn's timeout for the hang tests: far above what a passing turn takes on a machine at a load
of 10 (the issue saw 0.5 s fail there), far below ``HANG``."""


@dataclasses.dataclass(frozen=True)
class HangsOnStreams(Wrapped):
    def complete(self, call: Call) -> Response | Iterator[StreamEvent]:
        if call.stream:
            time.sleep(HANG)
        return self.inner.complete(call)


@dataclasses.dataclass(frozen=True)
class AsyncHang(Wrapped):
    async def complete(self, call: Call) -> Any:  # type: ignore[override]
        await asyncio.sleep(HANG)


@pytest.mark.parametrize("hanging", [HangsOnStreams, AsyncHang])
def test_a_client_that_hangs_costs_its_case_an_error_after_the_timeout_and_the_run_goes_on(
    hanging: type[Wrapped],
) -> None:
    """Each pair in its own worker (``jobs=2``): the hangs of the two scenarios wait their timeouts at
    the same time. The async client hangs in both modes: one mode is enough to show it."""
    modes = ("non_stream",) if hanging is AsyncHang else ("non_stream", "stream")
    started = time.perf_counter()
    client = hanging(TranslatorClient(for_format("openai_chat")))
    result = run(client, "basic/get_time", "basic/no_tools", timeout=TURN_TIMEOUT, jobs=2, modes=modes)
    assert time.perf_counter() - started < HANG / 10  # ended by the timeout, not by the hang finishing
    for case in result.cases:
        if case.mode == "stream" or hanging is AsyncHang:
            assert case.status == "error"
            assert f"did not finish within {TURN_TIMEOUT:g} s" in case.message and "--timeout" in case.message
        else:
            assert case.status == "pass", case.message
    assert len(result.cases) == 2 * len(modes)


# ---- what a report may show --------------------------------------------------------------------


def test_the_api_key_never_reaches_a_case_result() -> None:
    result = run(Retrying(TranslatorClient(for_format("anthropic"))), "basic/get_time", "errors/*")
    assert any(c.exchanges for c in result.cases)
    assert FAKE_API_KEY not in repr(result)


def test_unsupported_when_the_client_does_not_declare_what_a_scenario_requires() -> None:
    client = TranslatorClient(for_format("anthropic"))
    object.__setattr__(client, "wires", {"anthropic": frozenset({"call_ids"})})
    result = run(client, "basic/parallel_calls", "basic/get_time")
    statuses = {(c.scenario, c.mode): c.status for c in result.cases}
    assert statuses[("basic/parallel_calls", "non_stream")] == "unsupported"
    assert statuses[("basic/get_time", "stream")] == "unsupported"  # no streaming declared
    assert statuses[("basic/get_time", "non_stream")] == "pass"


# ---- client.request_headers --------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class HandWritten:
    """A user's own client: the body the wire's reference adapter writes, posted with plain httpx and
    the headers (and query) it chooses; whole answers only."""

    wire: str
    headers: Callable[[Call], dict[str, str]]
    query: Callable[[Call], str] = lambda call: ""
    name: str = "hand-written"

    @property
    def wires(self) -> dict[str, frozenset[str]]:
        return {self.wire: for_format(self.wire).capabilities - {"streaming"}}

    @property
    def known_gaps(self) -> dict[str, str]:
        return {}

    def complete(self, call: Call) -> Response | Iterator[StreamEvent]:
        adapter = for_format(self.wire)
        wire = adapter.request_to_wire(call.request())
        url = call.base_url + wire.path + self.query(call)
        with httpx.Client(timeout=call.timeout) as http:
            answer = http.post(url, content=json.dumps(wire.body).encode(), headers=self.headers(call))
        if answer.status_code >= 400:
            raise ProviderError(adapter.error_from_wire(answer.status_code, answer.headers, answer.content).info)
        return adapter.response_from_wire(answer.json(), tools=call.tools)

    def error_info(self, exc: BaseException) -> ErrorInfo | None:
        return exc.info if isinstance(exc, ProviderError) else None


JSON = {"content-type": "application/json"}
RIGHT: dict[str, Callable[[Call], dict[str, str]]] = {
    # what each provider documents (conformance/checks/client_headers.py has the table and sources)
    "openai_chat": lambda call: {**JSON, "authorization": f"Bearer {call.api_key}"},
    "openai_responses": lambda call: {**JSON, "authorization": f"Bearer {call.api_key}"},
    "anthropic": lambda call: {**JSON, "x-api-key": call.api_key, "anthropic-version": "2023-06-01"},
    "gemini": lambda call: {**JSON, "x-goog-api-key": call.api_key},
    "ollama": lambda call: {},
}


def headers_verdict(client: HandWritten, scenario: str = "basic/get_time") -> tuple[Any, CaseResult]:
    [case] = [c for c in run(client, scenario).cases if c.mode == "non_stream"]
    return verdict_of(case, "client.request_headers"), case


@pytest.mark.parametrize("wire", sorted(RIGHT))
def test_a_hand_written_client_sending_what_the_wire_documents_passes(wire: str) -> None:
    found, case = headers_verdict(HandWritten(wire, RIGHT[wire]))
    assert found.status == "pass", found.findings
    assert case.status == "pass", [(v.check, v.findings) for v in case.checks if v.status != "pass"]


def test_a_client_without_anthropic_version_fails_naming_the_header_and_anthropics_400() -> None:
    client = HandWritten("anthropic", lambda call: {**JSON, "x-api-key": call.api_key})
    found, case = headers_verdict(client, "multi_turn/call_result_answer")
    assert found.status == "fail"
    assert [(f.turn, f.path) for f in found.findings] == [
        (0, 'headers["anthropic-version"]'),
        (1, 'headers["anthropic-version"]'),
    ]
    assert "400" in found.findings[0].message and "anthropic-version: header is required" in found.findings[0].message
    assert {v.check for v in case.checks if v.status == "fail"} == {"client.request_headers"}


@pytest.mark.parametrize(
    ("wire", "headers", "header", "value"),
    [
        # a key read from an unset variable and formatted: Python f"{None}", JavaScript `Bearer ${undefined}`
        ("anthropic", {**JSON, "x-api-key": "None", "anthropic-version": "2023-06-01"}, "x-api-key", "None"),
        ("openai_chat", {**JSON, "authorization": "Bearer undefined"}, "authorization", "Bearer undefined"),
    ],
)
def test_a_client_sending_a_runtime_placeholder_as_its_key_fails(
    wire: str, headers: dict[str, str], header: str, value: str
) -> None:
    found, _ = headers_verdict(HandWritten(wire, lambda call: headers))
    assert found.status == "fail"
    assert [(f.turn, f.path, f.actual) for f in found.findings] == [
        (turn, f'headers["{header}"]', value) for turn in (0, 1)
    ]
    assert "placeholder" in found.findings[0].message and "the API key belongs there" in found.findings[0].message


def test_a_client_leaking_the_key_into_the_url_fails_with_a_finding_that_never_shows_the_key() -> None:
    client = HandWritten("openai_chat", RIGHT["openai_chat"], query=lambda call: f"?api_key={call.api_key}")
    found, _ = headers_verdict(client)
    assert found.status == "fail"
    assert [(f.turn, f.path) for f in found.findings] == [(0, "url?api_key"), (1, "url?api_key")]
    assert "URLs are written to access logs" in found.findings[0].message
    assert FAKE_API_KEY not in repr(found)


def test_a_client_sending_the_key_in_another_header_as_well_fails() -> None:
    client = HandWritten("openai_chat", lambda call: {**RIGHT["openai_chat"](call), "x-api-key": call.api_key})
    found, _ = headers_verdict(client)
    assert {f.path for f in found.findings} == {'headers["x-api-key"]'}
    assert "OpenAI takes it from `authorization` only" in found.findings[0].message


def test_gemini_may_take_the_key_in_its_documented_key_parameter() -> None:
    client = HandWritten("gemini", lambda call: dict(JSON), query=lambda call: f"?key={call.api_key}")
    found, _ = headers_verdict(client)
    assert found.status == "pass", found.findings


# ---- a client that crashes or reaches beyond loopback (issue 27, point 2) ------------------------

REMOTE_HOSTILE = """
import os
import socket

from conformance.adapters import for_format
from conformance.clients.translator import TranslatorClient

inner = TranslatorClient(for_format("openai_chat"))


class Hostile:
    name = "hostile"
    wires = inner.wires
    known_gaps = {}

    def complete(self, call):
        if call.scenario == "basic/no_tools":
            print("the library gave up", flush=True)
            os._exit(3)
        if call.turn == 0:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
                try:
                    udp.sendto(b"telemetry", ("192.0.2.1", 9))
                except Exception:
                    pass
        return inner.complete(call)

    def error_info(self, exc):
        return inner.error_info(exc)


client = Hostile()
"""


def test_a_driver_process_that_dies_is_an_error_and_the_next_case_gets_a_new_one(tmp_path: Path) -> None:
    """``--python``: a child that dies is the case's ERROR naming how (never the library's FAIL), and
    a datagram it sent beyond loopback is refused and a finding of its case, naming the address."""
    from conformance.clients.remote import RemoteClient

    driver = tmp_path / "hostile.py"
    driver.write_text(REMOTE_HOSTILE, encoding="utf-8")
    with RemoteClient(f"{driver}:client", sys.executable, start_timeout=60) as remote:
        result = run(remote, "basic/no_tools", "basic/get_time", modes=("non_stream",))
    by_scenario = {case.scenario: case for case in result.cases}
    died = by_scenario["basic/no_tools"]
    assert died.status == "error", died
    assert "died: it exited with code 3" in died.message and "the library gave up" in died.message
    reached = by_scenario["basic/get_time"]
    assert reached.status == "fail", reached
    finding = next(f for v in reached.checks for f in v.findings if v.check == "client.one_request")
    assert str(finding.actual).startswith("192.0.2.1:9 (sendto"), finding
    assert "outside the loopback server" in finding.message


@dataclasses.dataclass(frozen=True)
class Phoning(Wrapped):
    """Connects to an address beyond loopback with the C-level socket class on its first turn."""

    def complete(self, call: Call) -> Response | Iterator[StreamEvent]:
        if call.turn == 0:
            import _socket

            raw = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
            raw.settimeout(1)
            try:
                raw.connect(("192.0.2.1", 443))
            except Exception:
                pass
            finally:
                raw.close()
        return self.inner.complete(call)


@pytest.mark.parametrize("isolate", [True, False], ids=["workers", "here"])
def test_an_in_process_client_reaching_beyond_loopback_is_refused_and_a_finding(isolate: bool) -> None:
    result = run(Phoning(TranslatorClient(for_format("openai_chat"))), "basic/get_time", isolate=isolate)
    assert result.cases and all(case.status == "fail" for case in result.cases)
    for case in result.cases:
        findings = [f for v in case.checks for f in v.findings if v.check == "client.one_request"]
        assert [str(f.actual).partition(" (")[0] for f in findings] == ["192.0.2.1:443"], case
        assert findings[0].turn == 0


STARTED: list[Any] = []
"""The ``Popen`` of each ``sleep`` a ``Spawning`` client started in this process (collected by the test)."""


@dataclasses.dataclass(frozen=True)
class Spawning(Wrapped):
    """Starts a ``sleep`` and a double-forked process in a session of its own on every turn, and
    writes their pids to ``pids``."""

    pids: str = ""

    def complete(self, call: Call) -> Response | Iterator[StreamEvent]:
        import subprocess

        from tests.clients.test_remote import DOUBLE_FORK

        sleeper = subprocess.Popen(["sleep", "600"])
        STARTED.append(sleeper)
        with open(self.pids, "a", encoding="utf-8") as f:
            f.write(f"{sleeper.pid}\n")
        subprocess.run([sys.executable, "-c", DOUBLE_FORK, self.pids], check=True)
        return self.inner.complete(call)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="the process tree is read from /proc")
@pytest.mark.parametrize("isolate", [True, False], ids=["workers", "here"])
def test_every_process_an_in_process_client_starts_ends_with_the_run(tmp_path: Path, isolate: bool) -> None:
    from tests.clients.test_remote import _alive

    pids = tmp_path / "pids"
    client = Spawning(TranslatorClient(for_format("openai_chat")), pids=str(pids))
    result = run(client, "basic/no_tools", isolate=isolate, modes=("non_stream",))
    assert [case.status for case in result.cases] == ["pass"], result.cases
    started = [int(p) for p in pids.read_text().split()]
    assert len(started) == 2
    assert not [p for p in started if _alive(p)]
    while STARTED:  # run here: this process is the sleep's parent, and collects it
        assert STARTED.pop().wait(timeout=10) == -9


def test_a_responses_item_sent_by_reference_is_the_item_the_emulator_answered() -> None:
    """With ``store`` left at its default (true) a client may send its history's output items as
    ``{"type": "item_reference", "id": ...}`` (openai-python ``response_input_item_param.py:744-751``;
    the AI SDK does, @ai-sdk/openai dist/index.js:6089-6101): the emulator, the provider here, resolves
    them to the items it answered in the case, and the checks read the client's request so too."""
    adapter = for_format("openai_responses")
    real = adapter.request_to_wire

    references: list[str] = []

    def by_reference(request: Any) -> Any:
        sent = real(request)
        body = json.loads(json.dumps(sent.body))
        for i, item in enumerate(body.get("input", [])):
            if item.get("type") == "reasoning":  # stored by default: sent by id, as the AI SDK does
                body["input"][i] = {"type": "item_reference", "id": item["id"]}
                references.append(item["id"])
        return replace(sent, body=body)

    client = TranslatorClient(replace(adapter, request_to_wire=by_reference))
    chosen = [s for s in load_scenarios([]).scenarios if s.id == "reasoning/two_rounds"]
    run = certify(chosen, client, CertifyOptions(cassette_dir=CASSETTES, modes=("non_stream",), isolate=False))
    [case] = run.cases
    assert references  # the client did send items by reference
    assert case.status == "pass", (case.message, [v for v in case.checks if v.status != "pass"])


# ---- translation.tool_list: a client that keeps a stale tool list (issue 31 point 3) ---------------


@dataclasses.dataclass(frozen=True)
class StaleTools(Wrapped):
    """Builds its tool list once per conversation, from the first call (an agent made with a fixed
    toolset): after the MCP server's notifications/tools/list_changed it still offers the old one."""

    first: list[Call] = dataclasses.field(default_factory=list)

    def complete(self, call: Call) -> Response | Iterator[StreamEvent]:
        if call.turn == 0:
            self.first[:] = [call]
        return self.inner.complete(replace(call, tools=self.first[0].tools))


def test_a_client_that_keeps_the_first_tool_list_fails_naming_the_tool_the_server_added() -> None:
    fresh = run(TranslatorClient(for_format("openai_chat")), "mcp/tools_added")
    assert [c.status for c in fresh.cases] == ["pass", "pass"]
    assert {verdict_of(c, "translation.tool_list").status for c in fresh.cases} == {"pass"}
    stale = run(StaleTools(TranslatorClient(for_format("openai_chat"))), "mcp/tools_added")
    for case in stale.cases:
        assert case.status == "fail"
        found = verdict_of(case, "translation.tool_list")
        assert found.status == "fail"
        assert [(f.turn, f.path, f.expected) for f in found.findings] == [
            (1, "tools['refund_order']", "refund_order"),
            (2, "tools['refund_order']", "refund_order"),
        ]
        assert "added by the MCP server after turn 0: notifications/tools/list_changed" in found.findings[0].message
        prefix = verdict_of(case, "roundtrip.cache_prefix")
        assert [f.kind for f in prefix.findings] == ["note"]  # the server's change, not the client's doing


def test_an_id_the_client_made_up_is_not_taken_for_a_piece_of_the_providers_id() -> None:
    """ollama-python has no call ids (its driver numbers calls ``call_0``, ``call_1``); Ollama's answer
    carried ``call_0ldertvh``: only a whole JSON string of the answer is an id the provider sent."""
    from conformance.checks.client import _sent_as_string

    served = b'{"message":{"tool_calls":[{"id":"call_0ldertvh","function":{"name":"find_file"}}]}}'
    assert not _sent_as_string("call_0", served)
    assert _sent_as_string("call_0ldertvh", served)
    assert _sent_as_string("appel_é", '{"id":"appel_é"}'.encode()) and _sent_as_string(
        "appel_é", b'{"id":"appel_\\u00e9"}'
    )
