"""The harness's loopback server facing a hostile cassette or a hostile request (issue 27, point 6):
a user cassette whose answer is a redirect to another host is never served (the case is an ERROR
naming the cassette, and the client never leaves loopback), and a request nested 100,000 deep is
answered with a 400 and judged like any other request, never a crash of the run."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from conformance.adapters import for_format
from conformance.clients.contract import Call
from conformance.clients.harness import CertifyOptions, certify
from conformance.clients.translator import TranslatorClient
from conformance.errors import ProviderError
from conformance.model import ErrorInfo, Response, StreamEvent
from conformance.scenarios.loader import load_scenarios
from conformance.traffic.network_guard import connect_log, is_loopback
from conformance.verdicts import RunResult

REPO = Path(__file__).resolve().parents[2]
CASSETTES = REPO / "cassettes"
OFF_LOOPBACK = "http://203.0.113.7/v1/chat/completions"


def run(client: Any, user_dir: Path | None = None, **options: Any) -> RunResult:
    scenarios = [s for s in load_scenarios([]).scenarios if s.id == "basic/get_time"]
    dirs = (user_dir,) if user_dir is not None else ()
    return certify(scenarios, client, CertifyOptions(cassette_dir=CASSETTES, user_cassette_dirs=dirs, **options))


@dataclasses.dataclass(frozen=True)
class Following:
    """An OpenAI Chat client on plain httpx that follows redirects (as httpx can be told to)."""

    name: str = "following"

    @property
    def wires(self) -> dict[str, frozenset[str]]:
        return {"openai_chat": for_format("openai_chat").capabilities}

    @property
    def known_gaps(self) -> dict[str, str]:
        return {}

    def complete(self, call: Call) -> Response | Iterator[StreamEvent]:
        adapter = for_format("openai_chat")
        wire = adapter.request_to_wire(dataclasses.replace(call, stream=False).request())
        with httpx.Client(follow_redirects=True, timeout=call.timeout) as http:
            answer = http.post(
                call.base_url + wire.path, json=wire.body, headers={"authorization": f"Bearer {call.api_key}"}
            )
        if answer.status_code >= 400:
            raise ProviderError(adapter.error_from_wire(answer.status_code, answer.headers, answer.content).info)
        return adapter.response_from_wire(answer.json(), tools=call.tools)

    def error_info(self, exc: BaseException) -> ErrorInfo | None:
        return exc.info if isinstance(exc, ProviderError) else None


def _redirecting(tmp_path: Path) -> Path:
    """A user cassette folder whose basic/get_time answers its first turn (both modes) with a 307
    to a host beyond loopback."""
    document = json.loads((CASSETTES / "openai_chat/basic/get_time.yaml").read_text())
    for interaction in document["interactions"]:
        if len(interaction["request"]["parsed_body"]["messages"]) == 1:  # turn 0
            interaction["response"] = {
                "status": {"code": 307, "message": "Temporary Redirect"},
                "headers": {"location": [OFF_LOOPBACK]},
                "body": {"string": ""},
            }
    folder = tmp_path / "mine" / "openai_chat" / "basic"
    folder.mkdir(parents=True)
    (folder / "get_time.yaml").write_text(json.dumps(document))
    return tmp_path / "mine"


@pytest.mark.parametrize("isolate", [True, False], ids=["workers", "here"])
def test_a_cassette_redirecting_off_loopback_is_an_error_and_never_followed(tmp_path: Path, isolate: bool) -> None:
    mine = _redirecting(tmp_path)
    with connect_log() as connects:
        result = run(Following(), mine, isolate=isolate)
    assert [case.status for case in result.cases] == ["error", "error"]
    for case in result.cases:
        assert "off this loopback server" in case.message and OFF_LOOPBACK in case.message, case.message
        assert str(mine / "openai_chat/basic/get_time.yaml") in case.message
        assert case.message.startswith("turn 0: ")
    assert all(is_loopback(address[0]) for address in connects if isinstance(address, tuple))


@dataclasses.dataclass(frozen=True)
class Deep:
    """The reference client, sending a body nested 100,000 deep before each turn's request."""

    inner: TranslatorClient
    name: str = "deep"

    @property
    def wires(self) -> dict[str, frozenset[str]]:
        return dict(self.inner.wires)

    @property
    def known_gaps(self) -> dict[str, str]:
        return {}

    def complete(self, call: Call) -> Response | Iterator[StreamEvent]:
        body = b'{"model": "m", "messages": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
        httpx.post(call.base_url + "/v1/chat/completions", content=body, timeout=call.timeout)
        return self.inner.complete(call)

    def error_info(self, exc: BaseException) -> ErrorInfo | None:
        return self.inner.error_info(exc)


@pytest.mark.parametrize("isolate", [True, False], ids=["workers", "here"])
def test_a_request_nested_100000_deep_is_judged_not_a_crash(isolate: bool) -> None:
    result = run(Deep(TranslatorClient(for_format("openai_chat"))), isolate=isolate)
    assert [case.status for case in result.cases] == ["fail", "fail"]
    for case in result.cases:
        failing = {v.check for v in case.checks if v.status == "fail"}
        assert "client.one_request" in failing  # two requests a turn, the first one refused with a 400
