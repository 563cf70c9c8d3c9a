"""What every check family shares: the case context, verdict building and deepdiff findings (each
difference in plain words: "missing", "not expected", "differs", "null where a string is expected")."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from conformance.adapters.base import Adapter
from conformance.checks._names import NAME_RULES
from conformance.clients.evidence import ClientTurn
from conformance.model import Request, Text, ToolCall, ToolResult
from conformance.run.conversation import ConversationOutcome
from conformance.scenarios.values import Mode, Scenario
from conformance.traffic.cassettes import RecordedRequest
from conformance.traffic.transport import Exchange
from conformance.verdicts import CheckVerdict, Finding, Status

if TYPE_CHECKING:
    from conformance.checks.equivalences import EquivalenceTable

__all__ = [
    "CaseContext",
    "Check",
    "calls_words",
    "diff_findings",
    "json_dicts",
    "json_list",
    "json_type",
    "rename_tools",
    "same_json",
    "system_first",
    "unwrapped_results",
    "verdict",
    "without_details",
]


@dataclass(frozen=True, kw_only=True)
class CaseContext:
    """Everything a check may look at for one (adapter, scenario, mode) case. Checks never do I/O."""

    scenario: Scenario
    adapter: Adapter
    mode: Mode
    outcome: ConversationOutcome
    exchanges: tuple[Exchange, ...] = ()
    """The replayed HTTP exchanges, in order (one per turn that was sent)."""
    non_stream: ConversationOutcome | None = None
    """In stream mode: the same scenario's non-streamed outcome, when it ran (fold comparison)."""
    exhaustive: bool = False
    """Streaming: every 2-way cut of each stream, besides single bytes and seeded random cuts."""
    seed: int = 0
    client: tuple[ClientTurn, ...] | None = None
    """A black-box case (``conformance certify``): what the client did each turn. The wire bodies are
    then the client's own, so checks that judge our decoder or our encoder's spelling step aside."""
    recorded: tuple[RecordedRequest, ...] = ()
    """The cassette's recorded requests that answered each exchange, in order (replay; empty when
    the case did not replay a cassette): ``translation.recorded_request`` compares them with what was sent."""
    provenance: Mapping[str, Any] | None = None
    """The replayed cassette's provenance block (None: recorded by another tool, or no cassette)."""
    recorded_decoding: Mapping[int, Mapping[str, Any]] | None = None
    """A live cassette's decoding of each turn in this mode, made when it was recorded (turn ->
    ``streaming.response_projection`` form; ``conformance.run.live``): live, the streamed and the
    non-streamed answers are two generations, so ``streaming.fold`` compares the stream with this."""
    equivalences: EquivalenceTable | None = None
    """The table of accepted equivalences (``docs/equivalences.md`` and ``--equivalences``); None:
    the suite's own."""
    extra: Mapping[str, Any] = field(default_factory=dict)
    _read_backs: dict[int, Request] = field(default_factory=dict, compare=False, repr=False)
    _decoded: dict[int, Request] = field(default_factory=dict, compare=False, repr=False)

    def read_back(self, turn: int) -> Request:
        """``request_from_wire`` of the body turn ``turn`` sent, decoded once per case (several
        checks read it), a client's own names for the caller's tools read as the caller's."""
        if turn not in self._read_backs:
            self._read_backs[turn] = self.client_names(self._decode(turn))
        return self._read_backs[turn]

    def _decode(self, turn: int) -> Request:
        """``request_from_wire`` of the body turn ``turn`` sent, as it reads (decoded once)."""
        if turn not in self._decoded:
            wire = self.outcome.turns[turn].wire
            self._decoded[turn] = self.adapter.request_from_wire(wire.body, path=wire.path, tools=self.scenario.tools)
        return self._decoded[turn]

    def client_names(self, request: Request) -> Request:
        """A black-box client's request with the tool names it chose read as the caller's: a client
        that maps names (the ``tool_names`` duty) may give a name the wire does not accept its own
        valid, distinct wire name (LiteLLM's ``files_read_2`` for ``files.read``) where the reference
        adapter picks another; the tool sent in that name's place is the caller's tool. A valid name
        sent under another is still a change. ``translation.tool_names`` judges the names themselves,
        ``roundtrip.calls`` that the calls come back under the caller's names."""
        if self.client is None or not self.outcome.turns:
            return request
        rule = NAME_RULES.get(self.adapter.wire_format)
        sent = [t.name for t in self._decode(0).tools]
        given = [t.name for t in self.scenario.tools]
        if rule is None or len(sent) != len(given) or len(set(sent)) != len(sent):
            return request
        mapping = {  # only a name the wire does not accept is renamed, to one it accepts
            s: g for s, g in zip(sent, given, strict=True) if not rule.match(g) and s not in given and rule.match(s)
        }
        if not mapping:
            return request
        return rename_tools(request, mapping)


Check = Callable[[CaseContext], Sequence[CheckVerdict]]
"""A check family: a function of the case giving one verdict per check id it ran (never raising)."""


def verdict(check: str, findings: Sequence[Finding]) -> CheckVerdict:
    """FAIL with a defect among ``findings``; else LEFT (to the caller) with a ``left`` finding; else
    PASS (with the ``unasked`` parameters and notes it found, if any)."""
    kinds = {f.kind for f in findings}
    status: Status = "fail" if "defect" in kinds else "left" if "left" in kinds else "pass"
    return CheckVerdict(check=check, status=status, findings=tuple(findings))


_ROOT_STEP = re.compile(r"\[('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|\d+)\]")


def _json_path(deepdiff_path: str, prefix: str) -> str:
    out = prefix
    for step in _ROOT_STEP.findall(deepdiff_path.removeprefix("root")):
        if step[0] in "'\"":
            key = step[1:-1]
            out += f".{key}" if re.fullmatch(r"[A-Za-z_$][A-Za-z0-9_$-]*", key) else f'["{key}"]'
        else:
            out += f"[{step}]"
    return out


def diff_findings(
    check: str, expected: Any, actual: Any, *, prefix: str = "$", turn: int | None = None, message: str = ""
) -> list[Finding]:
    """One finding per difference deepdiff sees between ``expected`` and ``actual``."""
    if _same(expected, actual):
        return []  # the common case, without deepdiff's cost
    from deepdiff import DeepDiff  # imported on the first difference: it brings numpy and pydantic (~0.2 s)

    diff = DeepDiff(expected, actual, ignore_order=False, verbose_level=2, view="tree")
    findings: list[Finding] = []
    for kind, items in diff.items():
        for item in items:
            path = _json_path(item.path(), prefix)
            t1 = None if type(item.t1).__name__ == "NotPresent" else item.t1
            t2 = None if type(item.t2).__name__ == "NotPresent" else item.t2
            what = _difference_words(kind, t1, t2)
            findings.append(
                Finding(
                    check=check,
                    message=f"{message}{': ' if message else ''}{what}",
                    path=path,
                    expected=t1,
                    actual=t2,
                    turn=turn,
                )
            )
    return findings


def _difference_words(kind: str, expected: Any, actual: Any) -> str:
    """A deepdiff difference kind in plain words (``iterable_item_added``: "not expected")."""
    if kind.endswith("_added"):
        return "not expected"
    if kind.endswith("_removed"):
        return "missing"
    if kind == "values_changed":
        return "differs"
    if kind == "type_changes":
        if actual is None:
            return f"null where {json_type(expected)} is expected"
        if expected is None:
            return f"{json_type(actual)} where null is expected"
        return f"{json_type(actual)} where {json_type(expected)} is expected"
    return kind.replace("_", " ")


def calls_words(names: Sequence[str]) -> str:
    """Tool calls by name in words: "no call", "1 call get_time", "2 calls get_weather, get_time"."""
    if not names:
        return "no call"
    return f"{len(names)} call{'' if len(names) == 1 else 's'} {', '.join(names)}"


def json_type(value: Any) -> str:
    """The JSON type of a value, with its article ("a string", "an object", "null")."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list | tuple):
        return "an array"
    return f"a {type(value).__name__}"


def same_json(expected: Any, actual: Any) -> bool:
    """Equal as JSON values (``True`` is not ``1``)."""
    return _same(expected, actual)


def _same(expected: Any, actual: Any) -> bool:
    """Equal as JSON values: ``==`` with booleans kept apart from numbers (``True == 1`` in Python)."""
    if isinstance(expected, bool) or isinstance(actual, bool):
        return expected is actual
    if isinstance(expected, dict):
        return (
            isinstance(actual, dict)
            and expected.keys() == actual.keys()
            and all(_same(v, actual[k]) for k, v in expected.items())
        )
    if isinstance(expected, list | tuple):
        return (
            isinstance(actual, list | tuple)
            and len(expected) == len(actual)
            and all(_same(a, b) for a, b in zip(expected, actual, strict=True))
        )
    return type(expected) is type(actual) and bool(expected == actual)


# ---- a black-box client's request in the reference adapter's terms --------------------------------


def without_details(value: Any, *, only: tuple[str, ...] | None = None) -> Any:
    """``value`` (a model value, or a tuple of them) with ``provider_details`` emptied, or with only
    the keys ``only`` dropped, at every depth."""
    if isinstance(value, tuple):
        return tuple(without_details(v, only=only) for v in value)
    if not dataclasses.is_dataclass(value) or isinstance(value, type):
        return value
    changes: dict[str, Any] = {}
    for f in dataclasses.fields(value):
        current = getattr(value, f.name)
        if f.name == "provider_details" and isinstance(current, Mapping):
            changes[f.name] = {} if only is None else {k: v for k, v in current.items() if k not in only}
        elif isinstance(current, tuple) or dataclasses.is_dataclass(current):
            changes[f.name] = without_details(current, only=only)
    return dataclasses.replace(value, **changes) if changes else value


def system_first(request: Request) -> Request:
    """A black-box client's request whose first message is the system prompt in all but spelling (the
    reader keeps a system message with a field it does not write again, such as the ``"images": []``
    LiteLLM puts on every Ollama message, as a message) with that text as its system prompt."""
    if request.system is not None or not request.messages:
        return request
    first = request.messages[0]
    [only] = first.parts if len(first.parts) == 1 else (None,)
    if dict(first.provider_details) != {"role": "system"} or not isinstance(only, Text) or only.provider_details:
        return request
    return replace(request, system=only.text, messages=request.messages[1:])


def rename_tools(request: Request, mapping: Mapping[str, str]) -> Request:
    """``request`` with the tools, calls and results named by a key of ``mapping`` named by its value."""

    def part(p: Any) -> Any:
        if isinstance(p, ToolCall) and p.name in mapping:
            return replace(p, name=mapping[p.name])
        if isinstance(p, ToolResult) and p.name is not None and p.name in mapping:
            return replace(p, name=mapping[p.name])
        return p

    tools = tuple(replace(t, name=mapping.get(t.name, t.name)) for t in request.tools)
    messages = tuple(replace(m, parts=tuple(part(p) for p in m.parts)) for m in request.messages)
    return replace(request, tools=tools, messages=messages)


def unwrapped_results(request: Request) -> Request:
    """A black-box client's tool results with their text unwrapped: a client may wrap a result's
    text under a key of its choosing, in Gemini's free-form ``functionResponse.response`` (E16:
    ``{"content": ...}``, pydantic-ai's ``{"return_value": ...}``, where the reference adapter
    writes ``{"result": ...}``) or, on a wire with no error flag, as ``{"error": ...}`` text
    (pydantic-ai on OpenAI); it may write several text items as a JSON array of their texts, and a
    result with no text as ``{}`` (pydantic-ai: ``messages.py`` ``model_response_object`` and
    ``model_response_str``, its MCP toolset's list of texts). A result whose first item reads back
    as such JSON is compared by the texts inside, the items after it (images) kept."""

    def texts(value: Any) -> list[str] | None:
        if value == {}:
            return [""]
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return list(value)
        if isinstance(value, dict) and len(value) == 1:
            [inner] = value.values()
            return [inner] if isinstance(inner, str) else texts(inner) if isinstance(inner, list) else None
        return None

    def unwrap(part: Any) -> Any:
        if not isinstance(part, ToolResult) or not part.content or not isinstance(part.content[0], Text):
            return part
        try:
            value = json.loads(part.content[0].text)
        except ValueError:
            return part
        inside = texts(value)
        if inside is None:
            return part
        return replace(part, content=(*(Text(text=t) for t in inside), *part.content[1:]))

    messages = tuple(replace(m, parts=tuple(unwrap(p) for p in m.parts)) for m in request.messages)
    return replace(request, messages=messages)


def json_list(value: Any) -> list[Any]:
    """``value`` when it is a JSON array, else an empty list (a body field of the wrong type reads as none)."""
    return value if isinstance(value, list) else []


def json_dicts(value: Any) -> list[dict[str, Any]]:
    """The objects of the JSON array ``value`` (empty when it is not an array)."""
    return [v for v in json_list(value) if isinstance(v, dict)]
