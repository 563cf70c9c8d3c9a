"""Which scenario a request plays, read from the request itself (pure): ``Emulator.play_scenarios``.

``ScenarioBook.of(scenarios)`` writes, for every wire, each scenario's first request as the wire's
reference adapter sends it (``run.conversation.build_request``, then ``request_to_wire``), reads it
back with that adapter's ``request_from_wire`` and keeps its **key**: the system prompt, the
messages up to the first user message (the scenario's ``history`` and its turn 0 input), the tools
(names, descriptions, schemas), ``tool_choice``, ``parallel_tool_calls`` and the reasoning settings.
Cache breakpoints, the model, ``max_tokens``, ``stream`` and the fields no scenario sets
(temperature ...) are left out, so a client that asks for a shorter answer or another model still
finds its scenario.

``ScenarioBook.find(wire, request, turn)`` keys an incoming request (read by the same adapter) the
same way. Two scenarios can share a key (their first requests are equal): they are told apart by the
rest of the request — the user texts and tool results of the later turns, which must appear in the
request in order. When that leaves more than one, their replies for the turn decide: the same
reply (the same text, reasoning, calls and finish; the provider quirks it is played with may differ,
as they change only the shape: an id on a Gemini call) is answered as the first of them by id
(``Found.also`` names the others; the server notes it in ``Emulator.log``); different replies are
``Ambiguous`` naming them (the server answers a 400), never a silent pick. A scenario a
wire cannot carry (``UnsupportedContentError``: Ollama has no named ``tool_choice``) is not in
that wire's book.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields, is_dataclass, replace
from typing import Any

from conformance.adapters import for_format
from conformance.model import Message, Request, Text, ToolResult
from conformance.scenarios.values import Reply, Scenario

__all__ = [
    "Ambiguous",
    "Found",
    "ScenarioBook",
    "known_quirks_only",
    "request_key",
    "scenario_inputs",
    "server_playable",
]


@dataclass(frozen=True, kw_only=True)
class Found:
    """The scenario a request plays."""

    scenario: Scenario
    also: tuple[str, ...] = ()
    """Other scenarios the request matches whose reply for its turn is the same (in another
    provider shape at most: ``same`` decides), in id order."""


@dataclass(frozen=True, kw_only=True)
class Ambiguous:
    """More than one scenario matches the request and their replies for its turn differ."""

    scenario_ids: tuple[str, ...]
    turn: int


@dataclass(frozen=True, kw_only=True)
class _Entry:
    scenario: Scenario
    prefix: int
    """How many messages the key covers (the history and the turn-0 user message)."""
    key: str


def server_playable(scenario: Scenario) -> bool:
    """Is ``scenario`` one a live server is asked (what ``conformance emulator --play-scenarios``
    plays; ``conformance.servers.server_scenarios`` asks the same ones)? Not when a turn scripts a
    fault (``HTTP_FAULTS``, ``STREAM_FAULTS``: a server is not told to fail) or expects an error, when
    a reply scripts argument text that is not a JSON object (``arguments/malformed_json``,
    ``arguments/empty_string``, ``arguments/truncated_by_length``: what an adapter must survive, a
    defect in a server's answer), when a tag marks a provider quirk or a deviation (``quirk``,
    ``deviation:...``: the shape of one provider, not of the wire), or when its tools come from an MCP
    server (empty until one runs). Among the bundled scenarios that leaves 76 of 115; their first
    requests collide once (docs/emulator.md, "Playing scenarios by request")."""
    if scenario.mcp is not None:
        return False
    if any(turn.reply.fault is not None or turn.expect.error is not None for turn in scenario.turns):
        return False
    if any(not _object_text(call.arguments_raw) for turn in scenario.turns for call in turn.reply.tool_calls):
        return False
    return not any(tag == "quirk" or tag == "deviation" or tag.startswith("deviation:") for tag in scenario.tags)


def _object_text(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False


def _plain(value: Any) -> Any:
    """A JSON-able form of a unified value, without cache breakpoints and provider details (which
    a request's position in the conversation moves: the newest block carries the marker)."""
    if is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: _plain(getattr(value, f.name))
            for f in fields(value)
            if f.name not in ("cache_control", "provider_details")
        }
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def request_key(request: Request, prefix: int) -> str:
    """The key of a request (read by a wire's reference adapter) over its first ``prefix`` messages."""
    key = {
        "system": request.system,
        "messages": _plain(request.messages[:prefix]),
        "tools": _plain(request.tools),
        "tool_choice": request.tool_choice,
        "parallel_tool_calls": request.parallel_tool_calls,
        "reasoning": _plain(request.reasoning),
    }
    return json.dumps(key, sort_keys=True, ensure_ascii=False, default=str)


def _texts(parts: Iterable[Any]) -> list[str]:
    out: list[str] = []
    for part in parts:
        if isinstance(part, Text):
            out.append(part.text)
        elif isinstance(part, ToolResult):
            out.extend(item.text for item in part.content if isinstance(item, Text))
    return out


def scenario_inputs(scenario: Scenario, turn: int) -> list[str]:
    """The texts the client sends after turn 0 up to scenario turn ``turn``: each earlier turn's tool
    results, then each later turn's user text, in order."""
    out: list[str] = []
    for index, step in enumerate(scenario.turns[:turn]):
        for result in step.tool_results:
            out.extend(item.text for item in result.content if isinstance(item, Text))
        if index + 1 < len(scenario.turns):
            out.extend(_texts(scenario.turns[index + 1].user))
    return [text for text in out if text]


def _holds_in_order(haystack: str, needles: Sequence[str]) -> bool:
    at = 0
    for needle in needles:
        found = haystack.find(needle, at)
        if found < 0:
            return False
        at = found + len(needle)
    return True


def _history_turns(scenario: Scenario) -> int:
    return sum(1 for message in scenario.history if message.role == "assistant")


def _reply(scenario: Scenario, turn: int) -> Reply | None:
    """The scenario's reply for request turn ``turn`` (its history's assistant messages count first)."""
    index = turn - _history_turns(scenario)
    return scenario.turns[index].reply if 0 <= index < len(scenario.turns) else None


@dataclass(frozen=True)
class ScenarioBook:
    """Every wire's scenarios by key (``ScenarioBook.of``)."""

    wires: Mapping[str, tuple[_Entry, ...]]
    skipped: Mapping[str, tuple[str, ...]]
    """Per wire, the scenarios its reference adapter cannot send (and why), left out."""

    @classmethod
    def of(cls, scenarios: Iterable[Scenario], wires: Sequence[str]) -> ScenarioBook:
        from conformance.run.conversation import build_request  # the runner's own request, turn 0

        books: dict[str, list[_Entry]] = {wire: [] for wire in wires}
        skipped: dict[str, list[str]] = {wire: [] for wire in wires}
        chosen = list(scenarios)
        for wire in wires:
            adapter = for_format(wire)
            for scenario in chosen:
                if not scenario.turns or scenario.wire_excluded(wire, wire) is not None:
                    continue
                first = scenario.turns[0]
                messages = (Message(role="user", parts=first.user),) if first.user else ()
                try:
                    sent = adapter.request_to_wire(build_request(scenario, messages, model="emulator", stream=False))
                    read = adapter.request_from_wire(json.loads(json.dumps(sent.body)), path=sent.path)
                except Exception as exc:  # the wire cannot carry this scenario's request: not in its book
                    skipped[wire].append(f"{scenario.id}: {exc}")
                    continue
                prefix = len(scenario.history) + len(messages)
                books[wire].append(_Entry(scenario=scenario, prefix=prefix, key=request_key(read, prefix)))
        return cls(
            wires={wire: tuple(entries) for wire, entries in books.items()},
            skipped={wire: tuple(lines) for wire, lines in skipped.items()},
        )

    def __len__(self) -> int:
        return len({entry.scenario.id for entries in self.wires.values() for entry in entries})

    def candidates(self, wire: str, request: Request) -> list[Scenario]:
        """The scenarios whose first request has this request's key."""
        entries = self.wires.get(wire, ())
        keys = {prefix: request_key(request, prefix) for prefix in {entry.prefix for entry in entries}}
        return [entry.scenario for entry in entries if keys[entry.prefix] == entry.key]

    def find(self, wire: str, request: Request, turn: int, *, same: Any = None) -> Found | Ambiguous | None:
        """The scenario ``request`` (turn ``turn``: its assistant messages) plays on ``wire``; None when
        no scenario matches. ``same(a, b)`` says whether two replies are answered alike on this wire
        (default: equal)."""
        matches = self.candidates(wire, request)
        if len(matches) > 1:
            sent = "\n".join(
                text for message in request.messages if message.role != "assistant" for text in _texts(message.parts)
            )
            matches = [
                s for s in matches if _holds_in_order(sent, scenario_inputs(s, turn - _history_turns(s)))
            ] or matches
        if not matches:
            return None
        if len(matches) == 1:
            return Found(scenario=matches[0])
        alike = same or (lambda a, b: a == b)
        first = _reply(matches[0], turn)
        if all((r := _reply(s, turn)) is not None and first is not None and alike(first, r) for s in matches[1:]):
            chosen = min(matches, key=lambda s: s.id)
            return Found(scenario=chosen, also=tuple(sorted(s.id for s in matches if s is not chosen)))
        return Ambiguous(scenario_ids=tuple(sorted(s.id for s in matches)), turn=turn)


def known_quirks_only(reply: Reply, known: frozenset[str]) -> Reply:
    """``reply`` without the quirks a wire does not know (they change nothing it sends)."""
    return replace(reply, quirks=tuple(q for q in reply.quirks if q in known))
