"""What the bundled scenarios exercise of the emulator (pure): the quirks each wire knows (those of
its streams, of its error answers, such as the form of a retry delay, and the shared ones), the
finish reasons a reply can end with (unified, and as each wire's provider spells them, read from
the body the emulator encodes), and the edge cases of ``wire-formats.md`` §10, each mapped to the
scenarios that use it. ``tests/emulator/test__coverage.py`` checks it in both directions (every
quirk, finish spelling and listed edge case has a scenario or a stated reason; every quirk a
scenario names exists), and ``scenarios/README.md`` holds ``edge_case_table`` between
``TABLE_BEGIN`` and ``TABLE_END``.

Regenerate that table after adding a scenario::

    python -m conformance.emulator._coverage scenarios/README.md

A scenario covers an edge case when its ``source`` cites the E-id. It covers it on a wire when one
of its quirks is known there or it names the wire in ``wire:``; with neither for any of the case's
wires, it covers the case on all of them (it runs unchanged on every wire). A scenario limited by
``wires:`` covers edge cases and finish spellings only on the wires it lists.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from conformance.emulator._server import ENCODERS, ERROR_QUIRKS, SERVER_QUIRKS
from conformance.emulator._wire import WireContext
from conformance.model import FinishReason
from conformance.scenarios.values import Reply, Scenario

__all__ = [
    "CITED_NOT_LISTED",
    "EDGE_CASES",
    "PROVIDER_FINISH",
    "REPLY_FINISH_REASONS",
    "TABLE_BEGIN",
    "TABLE_END",
    "UNCOVERED_FINISH",
    "UNEMULATED_FINISH",
    "WIRES",
    "edge_case_table",
    "edge_case_uses",
    "finish_spelling",
    "finish_uses",
    "known_quirks",
    "provider_finish_uses",
    "quirk_uses",
    "unknown_quirks",
    "update_readme",
]

WIRES: tuple[str, ...] = tuple(ENCODERS)
"""The native wires the emulator speaks, in table order."""

REPLY_FINISH_REASONS: tuple[FinishReason, ...] = ("stop", "tool_calls", "length", "content_filter")
"""What ``reply.finish`` can say (the scenario schema's enum); each wire spells it its own way."""

EDGE_CASES: Mapping[str, tuple[str, tuple[str, ...]]] = {
    "E1": ("multi-byte UTF-8 split across network chunks", WIRES),
    "E2": ("arguments split mid-token", ("openai_chat", "openai_responses", "anthropic")),
    "E3": ("empty-string or absent arguments for a no-argument call", WIRES),
    "E4": ("name/id repeated, empty or null on later chunks", ("openai_chat",)),
    "E6": ("whole call in one chunk", ("openai_chat", "openai_responses")),
    "E7": ("forced tool choice ends with finish_reason stop", ("openai_chat",)),
    "E8": ("stream ended early, or cut by length mid-arguments", WIRES),
    "E9": ("ping events interleaved with argument deltas", ("anthropic",)),
    "E10": (
        "thinking interleaved with tools, replayed with its signature",
        ("anthropic", "gemini", "openai_responses"),
    ),
    "E14": ("tool names sanitized both ways", ("openai_chat", "openai_responses", "anthropic", "gemini")),
    "E15": ("schema keywords a wire rejects", ("gemini",)),
    "E16": ("Gemini functionResponse must be an object", ("gemini",)),
    "E17": ("Anthropic tool_result blocks first in the user message", ("anthropic",)),
    "E25": ("Mistral: the whole call in one delta", ("openai_chat",)),
    "E31": ("Gemini functionCall ids sent back", ("gemini",)),
}
"""The §10 edge cases a real provider exhibits that have a scenario: E-id -> (short title, the
wires where it occurs). A case listed here with no scenario on one of its wires fails the tests."""

CITED_NOT_LISTED: Mapping[str, str] = {
    "E20": "an MCP server's behaviour, on no provider wire",
    "E23": (
        "cited by errors/malformed_body for the converse case; no scenario sends a JSON error body on a stream request"
    ),
}
"""E-ids a scenario cites that ``EDGE_CASES`` leaves out, with the reason."""

UNCOVERED_FINISH: Mapping[str, str] = {}
"""Reply finish reasons no bundled scenario checks yet, with the reason (the tests fail when one of
these gets a scenario, so that the entry is removed)."""

PROVIDER_FINISH: Mapping[str, tuple[str, ...]] = {
    "openai_chat": ("stop", "length", "tool_calls", "content_filter", "function_call"),
    "openai_responses": ("completed", "incomplete:max_output_tokens", "incomplete:content_filter"),
    "anthropic": (
        "end_turn",
        "max_tokens",
        "stop_sequence",
        "tool_use",
        "pause_turn",
        "refusal",
        "model_context_window_exceeded",
    ),
    "gemini": ("STOP", "MAX_TOKENS", "SAFETY", "RECITATION", "MALFORMED_FUNCTION_CALL", "OTHER"),
    "ollama": ("stop", "length"),
}
"""Each wire's finish vocabulary as the provider sends it (Responses: ``status``, with
``incomplete_details.reason`` after a colon): OpenAI SDK ``chat_completion.py`` ``Choice.finish_reason``
and ``responses/response.py`` ``IncompleteDetails.reason``; Anthropic SDK ``types/stop_reason.py``;
google-genai ``types.FinishReason`` (the reasons a tool-calling reply meets); Ollama ``done_reason``
(wire-formats.md §8, §5c)."""

UNEMULATED_FINISH: Mapping[str, Mapping[str, str]] = {
    "openai_chat": {
        "function_call": (
            "the legacy functions API (E35): OpenAI sends it only to a request with functions, which no scenario"
            " key asks an adapter for (openai_chat sends it with provider_details legacy_functions); its decoding"
            " is checked on the real dd-trace-py__chat_completion_function_call cassette"
            " (tests/adapters/test_openai_chat_realworld.py)"
        ),
    },
}
"""Per wire, the spellings of ``PROVIDER_FINISH`` no bundled scenario makes the emulator send, with
the reason (the tests fail when one gets a scenario, so that the entry is removed)."""

TABLE_BEGIN = "<!-- edge-case table: generated by python -m conformance.emulator._coverage -->"
TABLE_END = "<!-- end of edge-case table -->"


def known_quirks() -> dict[str, frozenset[str]]:
    """Wire -> every quirk the emulator knows there (its own, those of its error answers, and the
    ones every wire knows)."""
    return {
        wire: frozenset(encoder.KNOWN_QUIRKS) | ERROR_QUIRKS.get(wire, frozenset()) | SERVER_QUIRKS
        for wire, encoder in ENCODERS.items()
    }


def quirk_uses(scenarios: Iterable[Scenario]) -> dict[str, tuple[str, ...]]:
    """Quirk -> the ids of the scenarios that name it on some turn (every known quirk is a key)."""
    uses: dict[str, list[str]] = {q: [] for q in sorted(set().union(*known_quirks().values()))}
    for scenario in scenarios:
        for quirk in sorted({q for turn in scenario.turns for q in turn.reply.quirks}):
            uses.setdefault(quirk, []).append(scenario.id)
    return {q: tuple(ids) for q, ids in uses.items()}


def unknown_quirks(scenarios: Iterable[Scenario]) -> list[tuple[str, int, str]]:
    """(scenario id, turn, quirk) for each quirk a scenario names that no wire knows."""
    known = set().union(*known_quirks().values())
    return [
        (scenario.id, turn.index, quirk)
        for scenario in scenarios
        for turn in scenario.turns
        for quirk in turn.reply.quirks
        if quirk not in known
    ]


def finish_uses(scenarios: Iterable[Scenario]) -> dict[str, tuple[str, ...]]:
    """Reply finish reason -> the scenarios with a turn that ends with it (no fault) and checks the
    unified reason the adapter decodes (every reason of ``REPLY_FINISH_REASONS`` is a key)."""
    uses: dict[str, list[str]] = {reason: [] for reason in REPLY_FINISH_REASONS}
    for scenario in scenarios:
        found = {
            turn.reply.finish
            for turn in scenario.turns
            if turn.reply.fault is None and turn.expect.finish_reason is not None
        }
        for reason in sorted(found):
            uses.setdefault(reason, []).append(scenario.id)
    return {reason: tuple(ids) for reason, ids in uses.items()}


def finish_spelling(wire: str, reply: Reply) -> str:
    """The finish reason the emulator sends for ``reply`` on ``wire``, read from the body it encodes
    (Responses: ``status``, with ``incomplete_details.reason`` after a colon)."""
    ctx = WireContext(wire=wire, scenario_id="coverage", turn=0, model="model", stream=False)
    body = ENCODERS[wire].response_body(reply, ctx)
    if wire == "openai_chat":
        return str(body["choices"][0]["finish_reason"])
    if wire == "openai_responses":
        reason = (body.get("incomplete_details") or {}).get("reason")
        return f"{body['status']}:{reason}" if reason else str(body["status"])
    if wire == "anthropic":
        return str(body["stop_reason"])
    if wire == "gemini":
        return str(body["candidates"][0]["finishReason"])
    return str(body["done_reason"])


def provider_finish_uses(scenarios: Iterable[Scenario]) -> dict[str, dict[str, tuple[str, ...]]]:
    """Wire -> each spelling of its ``PROVIDER_FINISH`` -> the scenarios with a turn whose reply the
    emulator ends with that spelling there (no fault) and that checks the unified reason decoded."""
    uses: dict[str, dict[str, list[str]]] = {w: {s: [] for s in PROVIDER_FINISH[w]} for w in WIRES}
    for scenario in scenarios:
        replies = [t.reply for t in scenario.turns if t.reply.fault is None and t.expect.finish_reason is not None]
        for wire in scenario.wires or WIRES:
            for spelling in sorted({finish_spelling(wire, reply) for reply in replies}):
                uses[wire].setdefault(spelling, []).append(scenario.id)
    return {w: {s: tuple(ids) for s, ids in cells.items()} for w, cells in uses.items()}


def _cites(scenario: Scenario, case: str) -> bool:
    return re.search(rf"\b{case}\b", scenario.source) is not None


def _wires_of(scenario: Scenario, wires: Sequence[str]) -> tuple[str, ...]:
    """The wires (of ``wires``) on which ``scenario`` shows its edge case (see the module docstring)."""
    wires = tuple(w for w in wires if not scenario.wires or w in scenario.wires)
    quirks = {q for turn in scenario.turns for q in turn.reply.quirks} - SERVER_QUIRKS
    known = known_quirks()
    named = {expectation.adapter for expectation in scenario.wire}
    shown = tuple(w for w in wires if quirks & known[w] or w in named)
    return shown or tuple(wires)


def edge_case_uses(scenarios: Iterable[Scenario]) -> dict[str, dict[str, tuple[str, ...]]]:
    """E-id -> wire (the case's wires) -> ids of the scenarios that cover the case there."""
    listed = list(scenarios)
    table: dict[str, dict[str, tuple[str, ...]]] = {}
    for case, (_, wires) in EDGE_CASES.items():
        cells: dict[str, list[str]] = {w: [] for w in wires}
        for scenario in listed:
            if _cites(scenario, case):
                for wire in _wires_of(scenario, wires):
                    cells[wire].append(scenario.id)
        table[case] = {w: tuple(ids) for w, ids in cells.items()}
    return table


def edge_case_table(scenarios: Iterable[Scenario]) -> str:
    """The Markdown table of ``EDGE_CASES`` × wire -> scenarios, between the two markers."""
    uses = edge_case_uses(scenarios)
    lines = [
        TABLE_BEGIN,
        "",
        "| edge case | " + " | ".join(WIRES) + " |",
        "|---|" + "---|" * len(WIRES),
    ]
    for case, (title, wires) in EDGE_CASES.items():
        cells = []
        for wire in WIRES:
            if wire not in wires:
                cells.append("n/a")
            else:
                ids = uses[case][wire]
                cells.append(", ".join(f"`{i}`" for i in ids) if ids else "**none**")
        lines.append(f"| {case} {title} | " + " | ".join(cells) + " |")
    lines += ["", TABLE_END]
    return "\n".join(lines)


def update_readme(text: str, table: str) -> str:
    """``text`` with its generated table replaced by ``table`` (appended when it has none)."""
    begin, end = text.find(TABLE_BEGIN), text.find(TABLE_END)
    if begin < 0 or end < begin:
        return text.rstrip("\n") + "\n\n" + table + "\n"
    return text[:begin] + table + text[end + len(TABLE_END) :]


def _main(argv: Sequence[str]) -> int:  # pragma: no cover - a maintainer's command
    from conformance.scenarios.loader import load_scenarios

    if len(argv) != 1:
        print("usage: python -m conformance.emulator._coverage scenarios/README.md", file=sys.stderr)
        return 2
    readme = Path(argv[0])
    loaded = load_scenarios([readme.parent], root=readme.parent)
    readme.write_text(update_readme(readme.read_text(encoding="utf-8"), edge_case_table(loaded.scenarios)), "utf-8")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(_main(sys.argv[1:]))
