"""The ``gateway`` tier: LiteLLM's real proxy (scripts/gateway_server.py) certified as a gateway.

Opt-in (``python -m pytest -m gateway tests/servers/test_gateway_proxy.py``, about 30 s on 2
cores): without ``-m gateway`` these tests are skipped saying so, and without the proxy's venv
(``python scripts/gateway_server.py build``) they are skipped naming that command. One proxy is
started for the module, bound to 127.0.0.1 with a random master key, its routes calling the
emulator on a free port; each test certifies it on a few scenarios:

- OpenAI Chat downstream to Anthropic and Gemini upstreams: the basic scenarios pass (what the proxy
  sent upstream and what it answered downstream); to Ollama, a whole answer passes and a streamed one
  changes its chunk id on every chunk (``server.ids``);
- an upstream 529 (Anthropic) or 503 (Ollama) reaches the caller as Chat's overload error, after
  the two retries LiteLLM's router makes by default (``num_retries`` 2, litellm 1.110.2
  ``router_rust/core.py:721-722``): ``client.one_request`` names the three upstream requests;
- its Anthropic-format endpoint (``/v1/messages``) downstream, to Anthropic and to Gemini.

The master key never reaches a case's message or findings.
"""

from __future__ import annotations

import importlib.util
import secrets
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from conformance.scenarios.loader import load_scenarios
from conformance.scenarios.values import Scenario
from conformance.servers.gateway import GatewayOptions, certify_gateway

pytestmark = pytest.mark.gateway

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "gateway_server.py"
OPT_IN = "opt-in tier (LiteLLM's proxy, about 30 s): run it with `python -m pytest -m gateway`"
BASIC = ["basic/single_call", "basic/text_only_reply", "basic/parallel_calls", "multi_turn/call_result_answer"]


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gateway_server", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["gateway_server"] = module
    spec.loader.exec_module(module)
    return module


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def proxy(request: pytest.FixtureRequest) -> Iterator[tuple[str, int, str]]:
    """(the proxy's base URL, the emulator's port it calls, its master key)."""
    if "gateway" not in (request.config.getoption("markexpr", "") or ""):
        pytest.skip(OPT_IN)
    gs = _script()
    cache = gs.Cache.default()
    absent = gs.missing(cache)
    if absent:
        pytest.skip(f"gateway: the proxy's venv is not in the cache: run `{absent[0][1]}`")
    upstream_port, key = _free_port(), f"sk-gw-{secrets.token_hex(12)}"
    with gs.GatewayServer(cache, upstream_port=upstream_port, master_key=key) as server:
        print(f"\ngateway: LiteLLM proxy ready in {server.start_seconds} s", file=sys.stderr)
        yield server.base_url, upstream_port, key


@pytest.fixture(scope="module")
def scenarios() -> dict[str, Scenario]:
    return {s.id: s for s in load_scenarios().scenarios}


def _certify(
    proxy: tuple[str, int, str], scenarios: dict[str, Scenario], ids: list[str], *, wire: str, upstream: str
) -> dict[tuple[str, str], Any]:
    base_url, port, key = proxy
    options = GatewayOptions(
        base_url=base_url,
        wire=wire,
        upstreams=(upstream,),
        upstream_port=port,
        api_key=key,
        name="litellm-proxy",
        timeout=60,
    )
    result = certify_gateway([scenarios[i] for i in ids], options)
    for case in result.cases:
        assert key not in repr(case), f"the master key reached {case.scenario} {case.mode}"
    return {(case.scenario, case.mode): case for case in result.cases}


def _not_passed(case: Any) -> list[Any]:
    return [v for v in case.checks if v.status != "pass"]


@pytest.mark.parametrize("upstream", ["anthropic", "gemini"])
def test_chat_to_each_upstream_passes_the_basic_scenarios(
    proxy: tuple[str, int, str], scenarios: dict[str, Scenario], upstream: str
) -> None:
    cases = _certify(proxy, scenarios, BASIC, wire="openai_chat", upstream=upstream)
    assert len(cases) == 2 * len(BASIC)
    for key, case in cases.items():
        assert case.adapter == f"litellm-proxy@openai_chat/{upstream}"
        assert case.status == "pass", (key, case.message, _not_passed(case))
        assert any(v.check == "server.shape" for v in case.checks), key  # the downstream answer was judged


def test_chat_streamed_from_ollama_changes_the_chunk_id_on_every_chunk(
    proxy: tuple[str, int, str], scenarios: dict[str, Scenario]
) -> None:
    """Upstream, the proxy sends what the scenarios ask; downstream, a whole answer passes, but a
    streamed one carries a new ``id`` on each ``chat.completion.chunk`` (OpenAI gives every chunk of
    a completion the completion's id: openai-python ``types/chat/chat_completion_chunk.py:310``, "Each chunk has the
    same ID")."""
    cases = _certify(proxy, scenarios, BASIC[:2], wire="openai_chat", upstream="ollama")
    for (scenario, mode), case in cases.items():
        if mode == "non_stream":
            assert case.status == "pass", (scenario, case.message, _not_passed(case))
            continue
        assert [v.check for v in _not_passed(case)] == ["server.ids"], (scenario, _not_passed(case))
        finding = _not_passed(case)[0].findings[0]
        assert finding.path == "stream[1].data.id"
        assert finding.message.startswith("the chunk's id changes from ")


@pytest.mark.parametrize(("upstream", "status"), [("anthropic", 529), ("ollama", 503)])
def test_an_overload_upstream_reaches_the_caller_after_two_retries_noted_as_its_policy(
    proxy: tuple[str, int, str], scenarios: dict[str, Scenario], upstream: str, status: int
) -> None:
    cases = _certify(proxy, scenarios, ["errors/overloaded"], wire="openai_chat", upstream=upstream)
    for key, case in cases.items():
        verdicts = {v.check: v for v in case.checks}
        assert verdicts["recovery.provider_error"].status == "pass", (key, _not_passed(case))
        # LiteLLM's documented retry policy (num_retries 2, router_rust/core.py:721-722): said as a note, never a
        # failure of the gateway (conformance.servers.gateway.WIRE_LIMITS, policy_retries)
        retries = verdicts["client.one_request"]
        assert retries.status == "pass"
        said = f"the client sent 3 requests for one turn (hidden retries; answered [{status}, {status}, {status}])"
        assert [(f.kind, f.message.startswith(said)) for f in retries.findings] == [("note", True)]


@pytest.mark.parametrize("upstream", ["anthropic", "gemini"])
def test_the_anthropic_endpoint_passes_the_basic_scenarios(
    proxy: tuple[str, int, str], scenarios: dict[str, Scenario], upstream: str
) -> None:
    cases = _certify(proxy, scenarios, BASIC, wire="anthropic", upstream=upstream)
    assert len(cases) == 2 * len(BASIC)
    for key, case in cases.items():
        assert case.adapter == f"litellm-proxy@anthropic/{upstream}"
        assert case.status == "pass", (key, case.message, _not_passed(case))
