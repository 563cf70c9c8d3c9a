"""The prompt adapters over their bundled cassettes (``cassettes/{qwen,hermes,function_call}``,
recorded with ``conformance record --emulator``, which answers in each adapter's text format).

- chunk invariance, exhaustive over every recorded reply: the SSE bytes fed one byte at a time give
  exactly the events of the recorded chunks; every 2-way split of every reply's text (and the text
  fed one character at a time) gives the events of the unsplit text once adjacent text deltas are
  joined (text leaves as it arrives, so only its cutting may differ). Every 2-way split of the SSE
  *bytes* would cost minutes; the text splits reach the tag parsers at every position instead.
- the whole suite (``conformance.run.runner.run_suite``) passes for the three adapters: no FAIL or
  ERROR, and UNSUPPORTED exactly where a scenario requires a capability the adapter lacks or runs
  only on wires (``wires:``) other than the adapter's.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from _prompt_wire import coalesce, sse

from conformance.adapters import get_adapter, prompt_adapters
from conformance.assembly import fold
from conformance.model import Reasoning, Response, StreamEvent
from conformance.run.runner import RunOptions, run_suite
from conformance.scenarios.loader import load_scenarios
from conformance.traffic.cassettes import iter_cassette_files, load_cassette

CASSETTES = Path(__file__).resolve().parents[2] / "cassettes"
ADAPTERS = ("qwen", "hermes", "function_call")


@dataclass(frozen=True)
class Recorded:
    adapter: str
    path: Path
    index: int
    chunks: tuple[bytes, ...] | None
    """Stream: the SSE chunks as recorded (None for a whole body)."""
    text: str
    """The reply's content text (a stream's content deltas joined)."""
    finish: str | None
    """The wire's finish reason (None: the stream ended without one)."""


def _from_stream(chunks: tuple[bytes, ...]) -> tuple[str, str | None]:
    text, finish = [], None
    for line in b"".join(chunks).decode().splitlines():
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        try:
            data = json.loads(line[6:])
        except ValueError:
            continue  # the malformed_body fault's event
        for choice in data.get("choices") or []:
            text.append(choice.get("delta", {}).get("content") or "")
            finish = choice.get("finish_reason") or finish
    return "".join(text), finish


def recorded(adapter: str) -> Iterator[Recorded]:
    """Every 200 reply recorded for ``adapter``."""
    for path in iter_cassette_files([CASSETTES / adapter]):
        for interaction in load_cassette(path).interactions:
            response = interaction.response
            if response is None or response.status != 200:
                continue
            if response.chunks is not None:
                yield Recorded(adapter, path, interaction.index, response.chunks, *_from_stream(response.chunks))
            elif isinstance(response.json, dict):
                choice = response.json["choices"][0]
                yield Recorded(
                    adapter, path, interaction.index, None, choice["message"]["content"] or "", choice["finish_reason"]
                )


def test_every_supported_scenario_has_a_cassette_for_each_prompt_adapter() -> None:
    assert set(ADAPTERS) == set(prompt_adapters())
    loaded = load_scenarios([])
    assert loaded.problems == ()
    for name in ADAPTERS:
        adapter = get_adapter(name)
        missing = [
            s.id
            for s in loaded.scenarios
            if s.requires <= adapter.capabilities
            and s.wire_excluded(name, adapter.wire_format) is None
            and not (CASSETTES / name / f"{s.id}.yaml").is_file()
        ]
        assert missing == [], f"record them: conformance record --emulator --adapter {name}"


@pytest.mark.parametrize("name", ADAPTERS)
def test_the_recorded_replies_are_prompt_text_not_native_calls(name: str) -> None:
    replies = list(recorded(name))
    assert len(replies) > 100
    markers = {"qwen": "✿FUNCTION✿: ", "hermes": "<tool_call>\n{", "function_call": "<function_call>{"}
    assert sum(markers[name] in r.text for r in replies) > 40
    for reply in replies:
        assert reply.finish != "tool_calls", reply.path  # a prompt model's server never says tool_calls
        for chunk in reply.chunks or ():
            assert b'"tool_calls"' not in chunk, reply.path


def _events(name: str, chunks: list[bytes] | tuple[bytes, ...]) -> list[StreamEvent]:
    return list(get_adapter(name).stream_from_wire(chunks))


@pytest.mark.parametrize("name", ADAPTERS)
def test_one_byte_sse_pieces_give_the_recorded_streams_events(name: str) -> None:
    streams = [r for r in recorded(name) if r.chunks is not None]
    assert len(streams) > 50
    for reply in streams:
        assert reply.chunks is not None
        data = b"".join(reply.chunks)
        expected = _events(name, reply.chunks)
        assert _events(name, [data]) == expected, (reply.path, reply.index)
        assert _events(name, [data[i : i + 1] for i in range(len(data))]) == expected, (reply.path, reply.index)


@pytest.mark.parametrize("name", ADAPTERS)
def test_every_2_way_split_of_every_reply_text_gives_the_same_events(name: str) -> None:
    texts = {(r.text, r.finish) for r in recorded(name) if r.finish is not None}
    assert len(texts) > 40
    for text, finish in sorted(texts):
        expected = coalesce(_events(name, [sse([text], finish)]))
        for cut in range(1, len(text)):
            got = coalesce(_events(name, [sse([text[:cut], text[cut:]], finish)]))
            assert got == expected, (name, text, cut)
        assert coalesce(_events(name, [sse(list(text), finish)])) == expected, (name, text)


@pytest.mark.parametrize("name", ADAPTERS)
def test_a_streamed_reply_decodes_as_its_whole_body_twin(name: str) -> None:
    """The non-streamed and streamed runs of a cassette play the same script: same text, calls."""
    by_path: dict[Path, list[Recorded]] = {}
    for reply in recorded(name):
        by_path.setdefault(reply.path, []).append(reply)
    adapter = get_adapter(name)
    compared = 0
    for replies in by_path.values():
        whole = [r for r in replies if r.chunks is None]
        streamed = [r for r in replies if r.chunks is not None and r.finish is not None]
        for a, b in zip(whole, streamed, strict=False):
            if a.text != b.text:
                continue  # a conversation cut short by a fault in one mode only
            body = {"choices": [{"index": 0, "message": {"role": "assistant", "content": a.text}}]}
            body["choices"][0]["finish_reason"] = a.finish
            response = adapter.response_from_wire(body)
            assert b.chunks is not None
            folded = _fold(name, b.chunks)
            # the twin body is rebuilt from the content alone; the reasoning a reply carries beside it
            # (reasoning_content) is the chat wire's, judged in tests/adapters/test_openai_chat_reasoning.py
            streamed_parts = tuple(p for p in folded.parts if not isinstance(p, Reasoning))
            assert (streamed_parts, folded.finish_reason) == (response.parts, response.finish_reason), a.path
            compared += 1
    assert compared > 50


def _fold(name: str, chunks: tuple[bytes, ...]) -> Response:
    return fold(_events(name, chunks))


def _run(mcp: bool) -> None:
    loaded = load_scenarios([])
    scenarios = [s for s in loaded.scenarios if (s.mcp is not None) == mcp]
    assert scenarios
    result = run_suite(scenarios, [get_adapter(n) for n in ADAPTERS], RunOptions(cassette_dir=CASSETTES))
    bad = [(c.adapter, c.scenario, c.mode, c.status, c.message) for c in result.cases if c.status in ("fail", "error")]
    assert bad == []
    for case in result.cases:
        scenario = next(s for s in scenarios if s.id == case.scenario)
        adapter = get_adapter(case.adapter)
        lacking = scenario.requires - adapter.capabilities
        excluded = scenario.wire_excluded(adapter.name, adapter.wire_format)
        assert (case.status == "unsupported") == bool(lacking or excluded), (case.adapter, case.scenario, case.status)
    # xfail: only where the adapter declares a known gap (Qwen-Agent's running tool loop moves the prefix)
    for case in result.cases:
        if case.status == "xfail":
            gaps = get_adapter(case.adapter).known_gaps
            assert any(key.endswith("@" + case.scenario) for key in gaps), (case.adapter, case.scenario)
    assert {c.status for c in result.cases} <= {"pass", "unsupported", "xfail"}


def test_the_suite_passes_for_the_prompt_adapters_over_the_bundled_cassettes() -> None:
    _run(mcp=False)


def test_the_mcp_scenarios_pass_for_the_prompt_adapters() -> None:
    """Scenarios whose tools come from an MCP server (one server per pair: the slow part)."""
    _run(mcp=True)
