"""Plain words for a defect: one sentence of what the library does wrong, what to do, and the evidence (pure).

``describe`` reads the finding that names a defect and the findings that restate it in the same case,
and tries the recognisers below in order; the first that knows the pattern words it. Each recogniser
is exercised by a test with a real mutant (tests/reporting/test__words.py):

- results sent in another order than the calls they answer (the word "order", both orders shown);
- a call id dropped or replaced (which call, what was sent instead);
- tool calls dropped from an answer;
- a finish reason mapped to another (both, and what the provider's one means);
- a stream that was cut off taken as a normal end;
- a retry the caller did not ask for (more than one request for one turn);
- an untyped error;
- a tool's failure lost: ``is_error`` on a wire that has no such flag, where the failure must be
  written into the result text (wire-formats.md: OpenAI Chat, Responses and Ollama carry no error flag);
- a request the provider would reject (its request schema);
- a field lost on the way to the provider, or out of an answer;
- a duty left to the caller, a note (the check's own remedy);
- what a model server or gateway answered (the ``server.*`` checks, ``conformance.checks.server``):
  the check's message, which says what the server sent as evidence, as the sentence;
- anything else: the check's message, with the value expected and the value found.

A sentence starts with a verb whose subject is the library under test ("Sends ...", "Drops ..."); a
server's defect is said as its check says it (a server translates nothing: "Changes ..." would not fit).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

if TYPE_CHECKING:
    from conformance.reporting._shapes import FindingData

__all__ = [
    "FINISH_MEANINGS",
    "NO_ERROR_FLAG",
    "SEVERITIES",
    "SEVERITY_WORDS",
    "Severity",
    "Words",
    "describe",
    "field_of",
    "severity_of",
]

Severity: TypeAlias = Literal["loses_data", "changes_meaning", "rejected", "left", "note"]
SEVERITIES: tuple[Severity, ...] = ("loses_data", "changes_meaning", "rejected", "left", "note")
"""Worst first."""
SEVERITY_WORDS: dict[str, str] = {
    "loses_data": "loses caller data",
    "changes_meaning": "changes meaning",
    "rejected": "the provider would reject the request",
    "left": "left to the caller",
    "note": "note",
}

FINISH_MEANINGS: dict[str, str] = {
    "stop": "the model finished its answer",
    "tool_calls": "the model asks for its tool calls to be run",
    "length": "the answer was cut by the token limit",
    "content_filter": "the provider withheld the answer",
    "malformed_tool_call": "the model wrote a call that could not be read",
    "error": "the provider failed",
    "other": "an ending the unified model has no word for",
}
"""What each unified finish reason tells the caller (``conformance.model.FinishReason``)."""

NO_ERROR_FLAG: frozenset[str] = frozenset({"openai_chat", "openai_responses", "ollama"})
"""Wires whose tool result has no error flag (wire-formats.md §1d, §2c, §5a): the result text carries
the failure."""

_ERROR_PREFIX = "Error: "
"""How a failed tool's result text starts on a wire without an error flag (the recorded requests of the
reference adapters: conformance/adapters/_openai_chat_messages.py)."""
_ID_FIELDS = ("call_id", "tool_call_id", "id")
_TEXT_FIELDS = ("result", "content", "text", "output")
_CALL_NO = re.compile(r"\(call #(\d+)\)")
_FIELD = re.compile(r"[.\[]\"?'?([A-Za-z_][\w-]*)\"?'?\]?$")
_SHOWN = 160
_EXCEPTION = re.compile(r"[\w.]*(Error|Exception|Exit|Interrupt)")
"""A dotted exception class name (``litellm.InternalServerError``) in a finding's message."""
_SAID = 160
"""A message or an exception is said in a sentence in at most this many characters (its first line)."""
"""A value is shown in at most this many characters (the reports' case listings have it whole)."""


@dataclass(frozen=True)
class Words:
    sentence: str
    severity: Severity
    remedy: str = ""
    shown: tuple[str, ...] = ()
    """The evidence, one line each."""
    known: bool = True
    """A recogniser knew the pattern (its severity is the defect's); False: the generic words, whose
    severity gives way to the worst of the findings restating it."""


def severity_of(finding: FindingData) -> Severity:
    """A finding's severity when no recogniser words it (``describe`` may judge it more exactly)."""
    if finding["kind"] == "left":
        return "left"
    if finding["kind"] != "defect":
        return "note"
    if finding["check"] in ("translation.request_shape", "translation.tool_names"):
        return "rejected"
    if finding["actual"] is None and finding["expected"] is not None:
        return "loses_data"
    return "changes_meaning"


def describe(finding: FindingData, related: Sequence[FindingData], *, wire: str, modes: Sequence[str]) -> Words:
    """The plain words of the defect ``finding`` names; ``related``: every finding of the defect (and of
    the checks that restate it) in the same conversation, ``finding`` first; ``wire``: the case's wire
    format; ``modes``: the modes the defect appears in."""
    for recognise in _RECOGNISERS:
        words = recognise(finding, related, wire, modes)
        if words is not None:
            return words
    return replace(_differs(finding), known=False)


# -- values -------------------------------------------------------------------------------------------------


def _text(value: Any, limit: int = _SHOWN) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str)
    except (RecursionError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _clip(text: str, limit: int = _SAID) -> str:
    """A message said in a sentence: its first line, at most ``limit`` characters, no final stop."""
    line = text.strip().splitlines()[0].strip() if text.strip() else ""
    line = line if len(line) <= limit else line[: limit - 1].rstrip() + "…"
    return line.rstrip(".")


def _bare(value: Any, limit: int) -> str:
    """A string as it is (an id), cut to ``limit`` characters."""
    text = str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _sides(finding: FindingData) -> tuple[str, ...]:
    return tuple(
        f"{name} {_text(value)}"
        for name, value in (("expected", finding["expected"]), ("actual", finding["actual"]))
        if value is not None
    )


def field_of(path: str) -> str:
    """The last named field of a path (``$.messages[2].tool_call_id (call #0)`` -> ``tool_call_id``)."""
    bare = _CALL_NO.sub("", path).strip()
    bare = re.sub(r"\[(\d+|\*)\]$", "", bare)
    match = _FIELD.search(bare)
    return match.group(1) if match else (bare or "the value")


def _ordinal(n: int) -> str:
    words = ("first", "second", "third", "fourth", "fifth")
    return words[n] if n < len(words) else f"#{n + 1}"


def _answers(modes: Sequence[str]) -> str:
    if list(modes) == ["non_stream"]:
        return "non-streamed answers"
    if list(modes) == ["stream"]:
        return "streamed answers"
    return "answers"


def _wire_name(wire: str) -> str:
    return {
        "openai_chat": "OpenAI Chat",
        "openai_responses": "OpenAI Responses",
        "anthropic": "Anthropic",
        "gemini": "Gemini",
        "ollama": "Ollama",
    }.get(wire, wire or "the provider's")


# -- recognisers ----------------------------------------------------------------------------------------------

_Recogniser: TypeAlias = Callable[["FindingData", Sequence["FindingData"], str, Sequence[str]], "Words | None"]


def _left(finding: FindingData, related: Sequence[FindingData], wire: str, modes: Sequence[str]) -> Words | None:
    if finding["kind"] != "left":
        return None
    said = _clip(finding["message"])
    if len(said) < 40 and finding["expected"] is not None:  # a bare "finish reason differs": say what to what
        said += f" ({_text(finding['expected'], 40)} read as {_text(finding['actual'], 40)})"
    return Words(f"Leaves to the caller: {said}.", "left", remedy=finding["remedy"], shown=_sides(finding))


def _note(finding: FindingData, related: Sequence[FindingData], wire: str, modes: Sequence[str]) -> Words | None:
    if finding["kind"] == "defect":
        return None
    if finding["kind"] == "unasked":
        sentence = (
            f"Sends {field_of(finding['path'])} = {_text(finding['actual'], 60)}, which the caller did not ask for."
        )
    else:
        sentence = f"{finding['message'][:1].upper()}{finding['message'][1:]}."
    return Words(sentence, "note", remedy=finding["remedy"], shown=_sides(finding))


def _server(finding: FindingData, related: Sequence[FindingData], wire: str, modes: Sequence[str]) -> Words | None:
    """A server's or gateway's answer judged by a ``server.*`` check: its message is the evidence a maintainer
    reads ("the arguments are not JSON ...", "the invalid request (...) was accepted with 200: ...")."""
    if not finding["check"].startswith("server.") or finding["kind"] != "defect":
        return None
    said = _clip(finding["message"], 200)
    sentence = f"{said[:1].upper()}{said[1:]}."
    return Words(sentence, severity_of(finding), remedy=finding["remedy"], shown=_sides(finding))


def _order(finding: FindingData, related: Sequence[FindingData], wire: str, modes: Sequence[str]) -> Words | None:
    for fields, what in ((_ID_FIELDS, "ids"), (_TEXT_FIELDS, "texts")):
        lists: dict[tuple[str, str], tuple[list[Any], list[Any]]] = {}
        for f in related:
            same_turn = f["kind"] == "defect" and f["turn"] == finding["turn"]
            strings = isinstance(f["expected"], str) and isinstance(f["actual"], str)
            if same_turn and strings and field_of(f["path"]) in fields:
                expected, actual = lists.setdefault((f["check"], field_of(f["path"])), ([], []))
                expected.append(f["expected"])
                actual.append(f["actual"])
        for expected, actual in lists.values():
            if len(expected) >= 2 and expected != actual and sorted(expected) == sorted(actual):
                show = _bare if what == "ids" else _text
                shown = (
                    f"the calls:        {', '.join(show(v, 24) for v in expected)}",
                    f"the results sent: {', '.join(show(v, 24) for v in actual)}",
                )
                sentence = "Sends tool results in a different order than the calls they answer."
                return Words(
                    sentence,
                    "changes_meaning",
                    remedy="send results in the order of the calls they answer",
                    shown=shown,
                )
    return None


def _rejection(related: Sequence[FindingData]) -> str:
    for f in related:
        if f["check"] == "translation.request_shape" and f["kind"] == "defect":
            return f["message"].partition("schema: ")[2] or f["message"]
    return ""


def _call_id(finding: FindingData, related: Sequence[FindingData], wire: str, modes: Sequence[str]) -> Words | None:
    named = next((f for f in related if f["check"] == "client.call_ids" and f["kind"] == "defect"), None)
    if named is None and finding["check"] == "roundtrip.call_ids":
        named = finding
    if named is None:
        return None
    rejected = _rejection(related)
    tail = f" {_wire_name(wire)} would reject the request ({rejected})." if rejected else ""
    remedy = "send back each call's id exactly as the provider sent it"
    if named["check"] == "roundtrip.call_ids":
        sentence = f"Sends a tool result with the id {_text(named['actual'], 60)}, which no call of the provider had."
        return Words(sentence + tail, "changes_meaning", remedy=remedy, shown=_sides(named))
    number = _CALL_NO.search(named["path"])
    which = f"the {_ordinal(int(number.group(1)))} call" if number else "a call"
    sent = [a for a in named["actual"] if isinstance(a, str)] if isinstance(named["actual"], list) else []
    dropped = not any(sent)
    answer = "assistant's" not in named["message"]
    thing = f"the result of {which}" if answer else f"{which} of the assistant's turn sent back"
    if dropped:
        given = _text(named["expected"], 60)
        sentence = f"Drops the call id from {thing}: the provider gave {given}, the request carries none."
    else:
        sentence = (
            f"Replaces the call id of {thing}: the provider gave {_text(named['expected'], 60)},"
            f" the request carries {', '.join(_text(s, 40) for s in sent if s)}."
        )
    return Words(sentence + tail, "loses_data" if dropped else "changes_meaning", remedy=remedy, shown=_sides(named))


def _tool_list(finding: FindingData, related: Sequence[FindingData], wire: str, modes: Sequence[str]) -> Words | None:
    """``translation.tool_list`` (issue 31): a request that keeps the tools the MCP server no longer lists."""
    if finding["check"] != "translation.tool_list":
        return None
    sentence = (
        f"Keeps offering an old tool list after the MCP server changed it: {_clip(finding['message'], 200)}, so"
        " the model is offered tools that are gone, misses new ones, or fills in an old schema."
    )
    remedy = (
        "list the tools again when notifications/tools/list_changed arrives and offer that list on the next request"
    )
    return Words(sentence, "changes_meaning", remedy=remedy, shown=_sides(finding))


def _calls(finding: FindingData, related: Sequence[FindingData], wire: str, modes: Sequence[str]) -> Words | None:
    if finding["check"] != "roundtrip.calls" or field_of(finding["path"]) != "tool_calls":
        return None
    expected, actual = finding["expected"], finding["actual"]
    if not isinstance(expected, list) or not isinstance(actual, list):
        return None
    called = ", ".join(map(str, expected)) or "nothing"
    got = ", ".join(map(str, actual)) or "no call"
    if len(actual) < len(expected):
        sentence = f"Drops tool calls from {_answers(modes)}: the model called {called}, the caller got {got}."
        return Words(sentence, "loses_data", shown=_sides(finding))
    told = f"the model called {called}, the caller got {got}"
    if len(actual) > len(expected):
        sentence = f"Returns tool calls the model did not make in {_answers(modes)}: {told}."
        return Words(sentence, "changes_meaning", shown=_sides(finding))
    sentence = f"Returns other tool calls than the model made in {_answers(modes)}: {told}."
    return Words(sentence, "changes_meaning", shown=_sides(finding))


def _finish(finding: FindingData, related: Sequence[FindingData], wire: str, modes: Sequence[str]) -> Words | None:
    if field_of(finding["path"]) != "finish_reason" or not isinstance(finding["expected"], str):
        return None
    expected, actual = finding["expected"], finding["actual"]
    meaning = FINISH_MEANINGS.get(expected, "")
    told = f" ({meaning})" if meaning else ""
    if actual is None:
        sentence = f"Gives no finish reason where the provider's answer ended with {_text(expected)}{told}."
        return Words(
            sentence, "loses_data", remedy=f"map the provider's reason to {_text(expected)}", shown=_sides(finding)
        )
    sentence = f"Maps the finish reason {_text(expected)}{told} to {_text(actual)}."
    return Words(
        sentence, "changes_meaning", remedy=f"map the provider's reason to {_text(expected)}", shown=_sides(finding)
    )


def _stream_cut(finding: FindingData, related: Sequence[FindingData], wire: str, modes: Sequence[str]) -> Words | None:
    cut = (
        finding["check"] == "recovery.broken_stream"
        or (
            finding["check"] == "recovery.provider_error"
            and finding["expected"] == "stream_incomplete"
            and finding["actual"] is None
        )
        or (finding["check"] == "streaming.lifecycle" and "no finish event" in finding["message"])
    )
    if not cut:
        return None
    sentence = "Takes a stream that was cut off as a normal end: the caller gets a partial answer and no error."
    remedy = "when a stream ends before its terminator, raise an error (kind stream_incomplete)"
    return Words(sentence, "changes_meaning", remedy=remedy, shown=_sides(finding))


def _spurious_error(
    finding: FindingData, related: Sequence[FindingData], wire: str, modes: Sequence[str]
) -> Words | None:
    if finding["check"] != "recovery.provider_error" or finding["expected"] is not None:
        return None
    if not isinstance(finding["actual"], str) or field_of(finding["path"]) != "error":
        return None
    detail = _clip(finding["message"].removeprefix("unexpected error: "))
    sentence = f"Reports an error of kind {_text(finding['actual'])} where the provider sent a whole answer: {detail}."
    return Words(sentence, "changes_meaning", remedy=finding["remedy"], shown=_sides(finding))


def _retry(finding: FindingData, related: Sequence[FindingData], wire: str, modes: Sequence[str]) -> Words | None:
    if finding["check"] != "client.one_request":
        return None
    expected, actual = finding["expected"], finding["actual"]
    if isinstance(actual, int) and isinstance(expected, int) and actual > expected:
        sentence = f"Sends {actual} requests for one turn: a retry the caller did not ask for."
        return Words(
            sentence, "changes_meaning", remedy="retry only when the caller asks for it", shown=_sides(finding)
        )
    if actual == 0:
        return Words("Sends no request for a turn the caller asked for.", "loses_data", shown=_sides(finding))
    return None


def _untyped(finding: FindingData, related: Sequence[FindingData], wire: str, modes: Sequence[str]) -> Words | None:
    if finding["check"] == "client.typed_errors":
        raised = str(finding["actual"] or "an exception").partition(":")[0]
        provider = ""
    elif (
        finding["check"] == "recovery.provider_error"
        and finding["actual"] == "unknown"
        and "untyped" in finding["message"]
    ):
        raised = finding["message"].partition("untyped exception ")[2].partition(":")[0] or "an exception"
        provider = f" where the provider answered with an error of kind {_text(finding['expected'])}"
    else:
        return None
    sentence = f"Raises an untyped error ({raised}){provider}: the caller cannot tell what failed or whether to retry."
    remedy = "raise the library's typed error for it, carrying the HTTP status and the kind of failure"
    return Words(sentence, "changes_meaning", remedy=remedy, shown=_sides(finding))


def _is_error(finding: FindingData, related: Sequence[FindingData], wire: str, modes: Sequence[str]) -> Words | None:
    flag = field_of(finding["path"]) == "is_error" and finding["expected"] is True and finding["actual"] is not True
    expected, actual = finding["expected"], finding["actual"]
    marker = (  # the failure's marker left out of the result text (OpenAI Chat: "Error: ", the reference's)
        wire in NO_ERROR_FLAG
        and field_of(finding["path"]) in _TEXT_FIELDS
        and isinstance(expected, str)
        and isinstance(actual, str)
        and expected.startswith(_ERROR_PREFIX)
        and not actual.startswith(_ERROR_PREFIX)
        and expected.endswith(actual)
    )
    if not flag and not marker:
        return None
    if wire in NO_ERROR_FLAG:
        sentence = f"Loses that a tool failed: the result reaches {_wire_name(wire)} as a success."
        remedy = f"on this wire ({_wire_name(wire)} has no error flag) write the failure into the result text"
    else:
        sentence = "Drops is_error from a failed tool's result: the provider reads it as a success."
        remedy = "send the tool's failure as the wire's error flag (is_error: true)"
    return Words(sentence, "loses_data", remedy=remedy, shown=_sides(finding))


def _rejected(finding: FindingData, related: Sequence[FindingData], wire: str, modes: Sequence[str]) -> Words | None:
    if finding["check"] != "translation.request_shape":
        return None
    reason = finding["message"].partition("schema: ")[2] or finding["message"]
    sentence = f"Sends a request {_wire_name(wire)} would reject: {reason} (at {finding['path']})."
    return Words(sentence, "rejected", remedy=finding["remedy"], shown=_sides(finding))


def _lost(finding: FindingData, related: Sequence[FindingData], wire: str, modes: Sequence[str]) -> Words | None:
    if finding["actual"] is not None or finding["expected"] is None:
        return None
    field = field_of(finding["path"])
    request = finding["check"].startswith(("translation.", "client.")) or finding["check"] == "roundtrip.request"
    where = "the request to the provider" if request else "the answer the caller gets"
    sentence = f"Drops {field} ({_text(finding['expected'], 60)}) from {where}."
    return Words(sentence, "loses_data", shown=_sides(finding))


def _differs(finding: FindingData) -> Words:
    field = field_of(finding["path"])
    expected, actual, message = finding["expected"], finding["actual"], _clip(finding["message"])
    if expected is None and actual is None:
        severity: Severity = "loses_data" if "missing" in message else severity_of(finding)
        sentence = f"{message[:1].upper()}{message[1:]} (at {finding['path'] or 'the case'})."
        if message.startswith("missing (the scenario expects it)"):
            sentence = f"Drops {field}, which the scenario expects (at {finding['path']})."
        return Words(sentence, severity, remedy=finding["remedy"])
    if expected is None:
        detail = message.removeprefix("added: ").removeprefix("sent, not recorded").lstrip(": ")
        sentence = f"Adds {field} ({_text(actual, 60)}), which the caller did not give" + (
            f": {detail}." if detail else "."
        )
    elif isinstance(expected, str) and isinstance(actual, str) and field in _ID_FIELDS:
        sentence = f"Replaces the {field} the provider gave ({_text(expected, 40)}) with {_text(actual, 40)}."
    elif isinstance(expected, str) and isinstance(actual, str) and message.startswith("text differs"):
        sentence = f"Sends {field} {_text(actual, 60)} where the recorded request has {_text(expected, 60)}."
    else:
        sentence = f"Changes {field}: {message}."
    return Words(sentence, severity_of(finding), remedy=finding["remedy"], shown=_sides(finding))


def _header(finding: FindingData, related: Sequence[FindingData], wire: str, modes: Sequence[str]) -> Words | None:
    if finding["check"] != "client.request_headers" or finding["actual"] is None:
        return None
    name = field_of(finding["path"])
    why = _clip(finding["message"].partition(": ")[2] or finding["message"])
    sentence = f"Sends the header {name}: {_bare(finding['actual'], 60)} ({why})."
    return Words(sentence, severity_of(finding), remedy=finding["remedy"], shown=_sides(finding))


def _stream_mode(finding: FindingData, related: Sequence[FindingData], wire: str, modes: Sequence[str]) -> Words | None:
    if finding["check"] != "client.stream_mode" or not isinstance(finding["expected"], bool):
        return None
    asked = "a streamed" if finding["expected"] else "a non-streamed"
    got = "a stream" if finding["actual"] else "a whole answer"
    sentence = f"Asks the provider for {got} when the caller asked for {asked} call."
    return Words(sentence, "changes_meaning", remedy=finding["remedy"], shown=_sides(finding))


def _error_fields(
    finding: FindingData, related: Sequence[FindingData], wire: str, modes: Sequence[str]
) -> Words | None:
    if finding["check"] not in ("recovery.provider_error", "client.typed_errors"):
        return None
    field = field_of(finding["path"])
    expected, actual = finding["expected"], finding["actual"]
    if field == "kind" and isinstance(expected, str) and isinstance(actual, str):
        raised = finding["message"].partition("(")[2].partition(":")[0].removeprefix("untyped exception ")
        by = f" (it raises {raised})" if _EXCEPTION.fullmatch(raised) else ""
        sentence = f"Reports the provider's {_text(expected)} error as {_text(actual)}{by}."
        remedy = f"map this provider error to the kind {_text(expected)}, so that the caller can act on it"
        return Words(sentence, "changes_meaning", remedy=remedy, shown=_sides(finding))
    if field == "status" and actual is not None and expected is not None:
        sentence = f"Reports the HTTP status {_text(actual)} where the provider answered {_text(expected)}."
        return Words(sentence, "changes_meaning", remedy=finding["remedy"], shown=_sides(finding))
    return None


def _arguments(finding: FindingData, related: Sequence[FindingData], wire: str, modes: Sequence[str]) -> Words | None:
    if finding["check"] != "recovery.arguments_error" or finding["kind"] != "defect":
        return None
    message = finding["message"]
    if "reported as a valid call" in message:
        sentence = "Reports a call whose argument text is not valid JSON as a valid call: the caller runs the tool."
        remedy = "mark the call as an arguments error and keep its raw argument text"
        return Words(sentence, "changes_meaning", remedy=remedy, shown=_sides(finding))
    if "raw argument text" in message:
        sentence = "Does not keep the raw argument text of a call whose arguments are not valid JSON."
        return Words(
            sentence, "loses_data", remedy="keep the argument text as the model sent it", shown=_sides(finding)
        )
    if "missing" in message:
        sentence = "Drops a call whose argument text is not valid JSON: the caller never learns the model called it."
        return Words(sentence, "loses_data", shown=_sides(finding))
    return None


def _reasoning(finding: FindingData, related: Sequence[FindingData], wire: str, modes: Sequence[str]) -> Words | None:
    """The issue-28 checks: reasoning decoded, sent back, and the cache prefix (docs/adapters.md)."""
    check, said = finding["check"], _clip(finding["message"], 200)
    name = _wire_name(wire)
    if check == "roundtrip.reasoning":
        sentence = f"Decodes the model's reasoning otherwise than {name} sent it: {said}."
        return Words(
            sentence, "loses_data", remedy="keep each reasoning part as the provider sent it", shown=_sides(finding)
        )
    if check == "roundtrip.reasoning_replay":
        if "cannot verify" in said:
            sentence = f"Sends reasoning another provider produced to {name}: {said}."
            remedy = "leave out reasoning another wire produced (its signature cannot be verified)"
        else:
            sentence = f"Does not send back the reasoning {name} produced as its replay rule says: {said}."
            remedy = "send each reasoning block back unmodified, in its place, on every later request"
        return Words(sentence, "rejected", remedy=remedy, shown=_sides(finding))
    if check == "roundtrip.cache_prefix":
        sentence = (
            f"Moves the cacheable prefix between requests ({said}): {name} cannot reuse its prompt cache,"
            " so every later request pays the full input price."
        )
        remedy = "send tools, system and earlier messages again exactly as before, and only append"
        return Words(sentence, "changes_meaning", remedy=remedy, shown=_sides(finding))
    return None


_RECOGNISERS: tuple[_Recogniser, ...] = (
    _left,
    _note,
    _server,
    _arguments,
    _order,
    _call_id,
    _reasoning,
    _tool_list,
    _calls,
    _finish,
    _stream_cut,
    _spurious_error,
    _retry,
    _untyped,
    _error_fields,
    _header,
    _stream_mode,
    _is_error,
    _rejected,
    _lost,
)
