"""The benchmark entry point ``benchmarks/stream_normalize.py:normalize`` gives the right calls.

No timing here (benchmarks are not timed tests): only that what the peer bench would measure is
correct. Streams come from small hand-made wire samples following wire-formats.md §1d (OpenAI),
§3d (Anthropic), §4d (Gemini), and, in the opt-in ``bench`` tier, from the peer bench's own generator
(``../shared/bench/peer_stream_bench.py``, beside the repository, not in it), whose ``Case.expected``
holds the (id, name, arguments) it encoded (tests/benchmarks/conftest.py).
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from conformance.model import ToolCallEnd, ToolCallStart

REPO_ROOT = Path(__file__).resolve().parents[2]
PROVIDERS = {"openai": "openai_chat", "anthropic": "anthropic", "gemini": "gemini"}


def _load(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


sn = _load("benchmarks_stream_normalize", REPO_ROOT / "benchmarks" / "stream_normalize.py")


def _need_adapter(provider: str) -> None:
    if importlib.util.find_spec(f"conformance.adapters.{PROVIDERS[provider]}") is None:
        pytest.skip(f"adapter module conformance/adapters/{PROVIDERS[provider]}.py is not in this tree yet")


def _calls(events: list[Any]) -> list[tuple[str, str, Any]]:
    names = {e.tool_call_id: e.tool_call_name for e in events if isinstance(e, ToolCallStart)}
    return [(e.tool_call_id, names[e.tool_call_id], e.arguments) for e in events if isinstance(e, ToolCallEnd)]


# --------------------------------------------------------------------------------------------
# Hand-made wire samples (run without the shared bench)
# --------------------------------------------------------------------------------------------

_ARGS = {"city": "Paris", "note": 'a "quoted" \u00e9 \U0001f600', "n": [1, 2.5, None, True]}
_TEXT = json.dumps(_ARGS, ensure_ascii=False, separators=(",", ":"))
_PIECES = [_TEXT[:7], _TEXT[7:20], _TEXT[20:]]


def _openai() -> bytes:
    """§1d: ``data: {chunk}`` events; the call's id and name first, then argument fragments, then [DONE]."""
    head = '{"id":"chatcmpl-1","object":"chat.completion.chunk","model":"gpt-4.1","choices":[{"index":0,"delta":'
    first = (
        '{"tool_calls":[{"index":0,"id":"call_A1","type":"function","function":{"name":"get_weather","arguments":""}}]}'
    )
    frag = '{"tool_calls":[{"index":0,"function":{"arguments":@}}]}'
    deltas = ['{"role":"assistant","content":null}', first, *(frag.replace("@", json.dumps(p)) for p in _PIECES)]
    lines = [f'data: {head}{d},"finish_reason":null}}]}}\n\n' for d in deltas]
    lines.append(f'data: {head}{{}},"finish_reason":"tool_calls"}}]}}\n\ndata: [DONE]\n\n')
    return "".join(lines).encode()


def _anthropic() -> bytes:
    """§3d: named events; a tool_use block whose input arrives as ``input_json_delta`` fragments."""

    def ev(name: str, data: str = "") -> str:
        return f'event: {name}\ndata: {{"type":"{name}"{data}}}\n\n'

    message = '{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5",'
    message += '"stop_reason":null,"usage":{"input_tokens":10,"output_tokens":1}}'
    block = '{"type":"tool_use","id":"toolu_A1","name":"get_weather","input":{}}'
    delta = ',"index":0,"delta":{"type":"input_json_delta","partial_json":@}'
    events = [
        ev("message_start", f',"message":{message}'),
        ev("content_block_start", f',"index":0,"content_block":{block}'),
    ]
    events += [ev("content_block_delta", delta.replace("@", json.dumps(p))) for p in _PIECES]
    events.append(ev("content_block_stop", ',"index":0'))
    events.append(
        ev("message_delta", ',"delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":20}')
    )
    events.append(ev("message_stop"))
    return "".join(events).encode()


def _gemini() -> bytes:
    """§4d: one ``data:`` event with the whole functionCall (args an object), CRLF line ends, no terminator."""
    call = '{"functionCall":{"name":"get_weather","args":' + _TEXT + ',"id":"fc_A1"}}'
    body = '{"candidates":[{"content":{"role":"model","parts":[' + call + ']},"finishReason":"STOP","index":0}]}'
    return f"data: {body}\r\n\r\n".encode()


HAND_MADE = {
    "openai": (_openai, "call_A1"),
    "anthropic": (_anthropic, "toolu_A1"),
    "gemini": (_gemini, "fc_A1"),
}


@pytest.mark.parametrize("provider", sorted(HAND_MADE))
def test_normalize_hand_made_stream(provider: str) -> None:
    _need_adapter(provider)
    make, call_id = HAND_MADE[provider]
    events = sn.normalize(make(), provider)
    assert _calls(events) == [(call_id, "get_weather", _ARGS)]
    assert events[-1].type == "finish"


@pytest.mark.parametrize("provider", sorted(HAND_MADE))
def test_normalize_accepts_pieces(provider: str) -> None:
    """``--adapter-pieces`` hands an iterator of byte reads: same events as one bytes object."""
    _need_adapter(provider)
    data = HAND_MADE[provider][0]()
    assert sn.normalize(iter([data[i : i + 5] for i in range(0, len(data), 5)]), provider) == sn.normalize(
        data, provider
    )


def test_normalize_unknown_provider() -> None:
    with pytest.raises(ValueError, match="openai"):
        sn.normalize(b"", "cohere")


# --------------------------------------------------------------------------------------------
# The bench's own generator (the opt-in ``bench`` tier)
# --------------------------------------------------------------------------------------------


@pytest.mark.bench
@pytest.mark.parametrize(
    ("provider", "scenario", "k"),
    [(p, s, k) for p in ("openai", "anthropic") for s in ("single", "parallel4") for k in (1, 4)]
    + [("gemini", s, 0) for s in ("single", "parallel4")],
)
def test_normalize_bench_stream(peer_bench: ModuleType, provider: str, scenario: str, k: int) -> None:
    _need_adapter(provider)
    case = peer_bench.build_case(provider, scenario, 1024, k)
    events = sn.normalize(case.data, provider)
    assert _calls(events) == case.expected  # Gemini: a functionCall.id that is sent is kept (§9 rule 5)
    # the bench's own check accepts our events
    assert peer_bench.verify(case, events, True) == "ok"


def test_missing_bench_exits_2(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sn, "BENCH_PATH", tmp_path / "peer_stream_bench.py")
    assert sn.main(["--quick"]) == 2
    assert "peer_stream_bench.py" in capsys.readouterr().err
