"""The client protocol, version 1 (``conformance.clients.protocol``, docs/protocol.md): the schema file
shipped is the one the model's type hints write; the schema (``check``, the suite's side) and the
codec (``from_json``, the driver's side) agree on every message of a corpus, valid and mutated; a
line of another version, of none, not JSON or not an object is refused; ``TurnReader`` reads an
answer into the turn's result and refuses what breaks the protocol, within its bounds; and what a
Python driver writes (``answer_messages``) reads back as the same result."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from conformance.clients import protocol
from conformance.clients.codec import from_json, to_json
from conformance.clients.contract import Call
from conformance.clients.invoke import TurnResult
from conformance.clients.protocol import (
    MAX_MESSAGE,
    SCHEMA_FILE,
    VERSION,
    ProtocolBroken,
    TurnReader,
    answer_messages,
    build_schema,
    call_message,
    check,
    load_schema,
    parse_line,
    read_call,
)
from conformance.errors import UsageError
from conformance.model import ErrorInfo, Part, ReasoningSettings, Response, StreamEvent, Text, TextDelta
from tests.clients.test_codec import BROKEN_CALL, CALL, CALL_VALUE, ERROR, EVENTS, MESSAGES, RESPONSE, RESULT, USAGE

REWRITE = (
    'python -c "import json; from conformance.clients.protocol import SCHEMA_FILE, build_schema;'
    " SCHEMA_FILE.write_text(json.dumps(build_schema(), indent=1) + '\\n', encoding='utf-8')\""
)


def test_the_committed_schema_is_the_one_the_model_writes() -> None:
    """The file both sides check against is written from the model's type hints (``build_schema``):
    a change to the model changes it, and the commit carries the new file."""
    written = json.dumps(build_schema(), indent=1) + "\n"
    assert SCHEMA_FILE.read_text(encoding="utf-8") == written, (
        f"{SCHEMA_FILE} is not what the model writes; rewrite it with: {REWRITE}"
    )
    assert load_schema() == build_schema()


def test_the_schema_names_every_message_of_the_protocol() -> None:
    kinds = {k.removesuffix("_message") for k in load_schema()["$defs"] if k.endswith("_message")}
    assert kinds == {"hello", "call", "event", "end", "response", "error", "failed", "fatal", "sandbox"}


# ---- the schema and the codec agree ------------------------------------------------------------

PARTS: tuple[Part, ...] = (*MESSAGES[0].parts, *MESSAGES[1].parts, RESULT, BROKEN_CALL, *MESSAGES[3].parts)
CALLS: tuple[Call, ...] = (
    CALL_VALUE,
    Call(wire="openai_chat", base_url="http://127.0.0.1:1", api_key="k", model="m"),
    Call(
        wire="gemini",
        base_url="http://127.0.0.1:1",
        api_key="k",
        model="m",
        system_cache_control={"type": "ephemeral"},
        tool_choice="none",
        reasoning=ReasoningSettings(effort="high", budget_tokens=1024),
        timeout=1,
    ),
    Call(
        wire="ollama", base_url="http://127.0.0.1:1", api_key="k", model="m", reasoning=ReasoningSettings(enabled=False)
    ),
)
RESPONSES: tuple[Response, ...] = (
    RESPONSE,
    Response(parts=()),
    Response(parts=PARTS, finish_reason="other", usage=USAGE),
    Response(parts=(Text(text="x"),), finish_reason="malformed_tool_call", error=ErrorInfo(kind="server", message="m")),
)
ERRORS: tuple[ErrorInfo | None, ...] = (ERROR, ErrorInfo(kind="unknown", message="?"), None)

VALUE_FIELD: dict[str, tuple[str, Any]] = {
    "call": ("call", Call),
    "event": ("event", StreamEvent),
    "response": ("response", Response),
}


def _valid_messages() -> Iterator[dict[str, Any]]:
    """A valid message of each type, built from real values (every value kind of test_codec)."""
    for number, call in enumerate(CALLS):
        yield call_message(call, str(number + 1))
    for event in EVENTS:
        yield {"v": VERSION, "type": "event", "id": "1", "event": to_json(event)}
    for response in RESPONSES:
        yield {"v": VERSION, "type": "response", "id": "1", "response": to_json(response)}
    for info in ERRORS:
        message = {"v": VERSION, "type": "error", "id": "1", "exception": {"name": "E", "message": "m"}}
        yield {**message, "error": to_json(info) if info is not None else None}
    yield {**message, "error": None, "mapping_failed": "KeyError: 'status'"}
    yield {"v": VERSION, "type": "end", "id": "1"}
    for reason in ("timeout", "invalid", "crashed"):
        yield {"v": VERSION, "type": "failed", "id": "1", "reason": reason, "message": "no"}
    yield {"v": VERSION, "type": "fatal", "message": "no library"}
    yield {"v": VERSION, "type": "sandbox", "network": "namespace"}
    yield {"v": VERSION, "type": "hello", "name": "x", "wires": {"openai_chat": ["streaming"]}}
    yield {
        "v": VERSION,
        "type": "hello",
        "name": "x",
        "version": "x 1",
        "runtime": "node v22",
        "wires": {"openai_chat": [], "anthropic": ["streaming"]},
        "duties": {"openai_chat": ["transport"]},
        "known_gaps": {"a": "b"},
        "schema_rewrites": {},
        "request_differences": {},
    }


def _nodes(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    yield path, value
    if isinstance(value, dict):
        for key, member in value.items():
            yield from _nodes(member, (*path, key))
    elif isinstance(value, list):
        for index, member in enumerate(value):
            yield from _nodes(member, (*path, index))


def _at(value: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        value = value[step]
    return value


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word.title() for word in rest) if rest else name + "X"


def _other_type(value: Any) -> Any:
    if isinstance(value, bool):
        return "true"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return 5
    if isinstance(value, list):
        return {"0": value}
    if isinstance(value, dict):
        return [value]
    return False  # null


def _mutations(message: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Each object of the message's value (and the message itself): a field removed, renamed to
    camelCase, given a value of another type, its kind or type unknown, a field added."""
    for path, node in list(_nodes(message)):
        if not isinstance(node, dict):
            continue
        where = "$" + "".join(f"[{p!r}]" for p in path)
        for key in node:
            changes: tuple[tuple[str, Callable[[dict[str, Any], str], object]], ...] = (
                ("removed", lambda d, k: d.pop(k)),
                ("camelCase", lambda d, k: d.__setitem__(_camel(k), d.pop(k))),
                ("other type", lambda d, k: d.__setitem__(k, _other_type(d[k]))),
            )
            for how, change in changes:
                mutated = copy.deepcopy(message)
                change(_at(mutated, path), key)
                yield f"{where}.{key} {how}", mutated
            if key in ("kind", "type") and isinstance(node[key], str):
                mutated = copy.deepcopy(message)
                _at(mutated, path)[key] = "nope"
                yield f"{where}.{key} unknown", mutated
        mutated = copy.deepcopy(message)
        _at(mutated, path)["extra_field"] = 1
        yield f"{where} extra field", mutated


def _codec_accepts(message: dict[str, Any]) -> bool | None:
    """Whether the codec reads the message's value (None: the message has no value of the model, or
    its envelope is what is mutated: the schema alone judges it)."""
    kind = message.get("type")
    hint: Any
    if kind == "error":
        field, hint = "error", ErrorInfo | None
    elif isinstance(kind, str) and kind in VALUE_FIELD:
        field, hint = VALUE_FIELD[kind]
    else:
        return None
    if field not in message:
        return None
    try:
        from_json(message[field], hint, f"$.{field}")
    except UsageError:
        return False
    return True


def _envelope_intact(message: dict[str, Any], original: dict[str, Any]) -> bool:
    return {k: v for k, v in message.items() if k != _value_field(original)} == {
        k: v for k, v in original.items() if k != _value_field(original)
    }


def _value_field(message: dict[str, Any]) -> str:
    return "error" if message["type"] == "error" else VALUE_FIELD.get(message["type"], ("", None))[0]


CORPUS: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    (f"{m['type']} #{i}: {how}", mutated, m)
    for i, m in enumerate(_valid_messages())
    for how, mutated in [("valid", m), *_mutations(m)]
]


def test_every_valid_message_fits_the_schema_and_the_codec() -> None:
    valid = [(name, m) for name, m, _orig in CORPUS if name.endswith(": valid")]
    assert len(valid) >= 25
    assert {m["type"] for _n, m in valid} == {
        "hello",
        "call",
        "event",
        "end",
        "response",
        "error",
        "failed",
        "fatal",
        "sandbox",
    }
    refused = {name: check(m) for name, m in valid if check(m) is not None}
    assert not refused
    assert all(_codec_accepts(m) is not False for _n, m in valid)
    assert {type(from_json(m["event"], StreamEvent)) for _n, m in valid if m["type"] == "event"} == {
        type(e) for e in EVENTS
    }


def test_the_schema_and_the_codec_agree_on_every_mutated_message() -> None:
    """A message one side accepts the other accepts: a value the codec refuses (an unknown field, a
    missing one, a camelCase name, another type, an unknown kind) is one the schema refuses, and the
    other way round; a mutated envelope (no id, an extra field, another type) the schema refuses."""
    disagree: list[str] = []
    judged = envelopes = 0
    for name, message, original in CORPUS:
        if name.endswith(": valid"):
            continue
        schema_ok = check(message) is None
        if _envelope_intact(message, original) and _codec_accepts(message) is not None:
            judged += 1
            if schema_ok != _codec_accepts(message):
                disagree.append(f"{name}: schema {'accepts' if schema_ok else 'refuses'}: {check(message)}")
        elif not _envelope_intact(message, original):
            envelopes += 1
            value_renamed = _value_field(original) not in message
            # the envelope's own fields: every change but one to a free-form string is refused
            if schema_ok and not value_renamed and not _free(name):
                disagree.append(f"{name}: the schema accepts a broken envelope")
    print(f"{judged} mutated values judged by both, {envelopes} mutated envelopes by the schema")
    assert judged > 1000 and envelopes > 100, (judged, envelopes)
    assert not disagree, "\n".join(disagree[:40]) + f"\n({len(disagree)} in all)"


def _free(name: str) -> bool:
    """A mutation the schema rightly accepts: an optional hello/mapping_failed field removed, or a
    hello's free-form map's entry (wires, known_gaps, ...) renamed, removed or added."""
    optional = ("version", "runtime", "duties", "known_gaps", "schema_rewrites", "request_differences")
    if any(name.endswith(f"$.{field} removed") for field in (*optional, "mapping_failed", "network")):
        return "hello" in name or "mapping_failed" in name or ("fatal" in name and "network" in name)
    maps = ("['wires']", "['duties']", "['known_gaps']", "['schema_rewrites']", "['request_differences']")
    return "hello" in name and any(m in name for m in maps) and "other type" not in name


def test_check_names_the_field_that_does_not_fit() -> None:
    message = {"v": VERSION, "type": "event", "id": "1", "event": {"type": "text_delta", "text": "a", "toolCallId": 1}}
    assert "toolCallId" in (check(message) or "")
    message = {"v": VERSION, "type": "response", "id": "1", "response": {"parts": [{"kind": "text", "text": 5}]}}
    assert "$.response.parts[0].text" in (check(message) or "")
    assert "is no message of the protocol" in (check({"v": VERSION, "type": "result"}) or "")


def test_a_driver_reads_a_call_by_the_same_rules() -> None:
    """``read_call`` (the Python driver's side, the codec alone) gives the call back, and refuses what
    the schema refuses, naming it."""
    for number, call in enumerate(CALLS):
        assert read_call(json.loads(json.dumps(call_message(call, str(number))))) == (str(number), call)
    message = call_message(CALLS[0], "1")
    for broken, said in (
        ({**message, "id": ""}, "$.id"),
        ({**message, "extra": 1}, "no field 'extra'"),
        ({**message, "type": "event"}, "$.type"),
        ({**message, "call": {**message["call"], "baseUrl": "x"}}, "no field 'baseUrl'"),
    ):
        assert check(broken) is not None
        with pytest.raises(UsageError, match=said.replace("$", r"\$").replace(".", r"\.")):
            read_call(broken)


# ---- parse_line --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "said"),
    [
        (b'{"v": 2, "type": "end", "id": "1"}', "a message of version 2; this suite speaks version 1"),
        (b'{"v": "1", "type": "end", "id": "1"}', 'a message of version "1"'),
        (b'{"v": true, "type": "end", "id": "1"}', "a message of version true"),
        (b'{"type": "end", "id": "1"}', "a message of no version; this suite speaks version 1"),
        (b'{"result": {"$": "Response"}}', "a message of no version"),
        (b"{not json", "a line that is not JSON"),
        (b"\xff\xfe", "a line that is not JSON"),
        (b"[" * 100_000, "a line that is not JSON"),
        (b'[{"v": 1}]', "a line that is not a JSON object"),
        (b'"end"', "a line that is not a JSON object"),
        (b"null", "a line that is not a JSON object"),
    ],
)
def test_a_line_of_another_version_or_not_a_json_object_is_refused_saying_why(line: bytes, said: str) -> None:
    with pytest.raises(ProtocolBroken) as caught:
        parse_line(line)
    assert said in str(caught.value)
    assert len(str(caught.value)) < 1000  # clipped, whatever the line


def test_a_line_of_this_version_is_its_message() -> None:
    assert parse_line(b'{"v": 1, "type": "end", "id": "1"}') == {"v": 1, "type": "end", "id": "1"}
    assert parse_line('{"v": 1, "type": "sandbox", "network": "namespace"}')["network"] == "namespace"


# ---- TurnReader ----------------------------------------------------------------------------------


def _read(call_id: str, *messages: dict[str, Any]) -> TurnResult | None:
    """Feed ``messages`` to a reader of call ``call_id`` as lines; the first result (the rest is
    never read), or None."""
    reader = TurnReader(call_id)
    for message in messages:
        line = json.dumps(message).encode()
        result = reader.take(parse_line(line), len(line) + 1)
        if result is not None:
            return result
    return None


def _event(event: Any, call_id: str = "7") -> dict[str, Any]:
    return {"v": VERSION, "type": "event", "id": call_id, "event": to_json(event)}


END = {"v": VERSION, "type": "end", "id": "7"}


def test_events_then_end_are_the_turns_events() -> None:
    result = _read("7", *(_event(e) for e in EVENTS), END)
    assert result == TurnResult(returned="events", events=EVENTS)


def test_a_response_is_the_turns_response() -> None:
    result = _read("7", {"v": VERSION, "type": "response", "id": "7", "response": to_json(RESPONSE)})
    assert result == TurnResult(returned="response", response=RESPONSE)


@pytest.mark.parametrize(
    ("error", "failed"),
    [(ERROR, None), (None, None), (None, "KeyError: 'status'")],
    ids=["typed", "untyped", "mapping"],
)
def test_an_error_after_events_is_the_libraries_raise(error: ErrorInfo | None, failed: str | None) -> None:
    message: dict[str, Any] = {
        "v": VERSION,
        "type": "error",
        "id": "7",
        "exception": {"name": "RateLimitError", "message": "429 slow down"},
        "error": to_json(error) if error is not None else None,
    }
    if failed is not None:
        message["mapping_failed"] = failed
    result = _read("7", _event(EVENTS[0]), message)
    assert result == TurnResult(
        returned="raised",
        events=EVENTS[:1],
        exception="RateLimitError: 429 slow down",
        error_info=error,
        error_info_failed=failed,
    )


@pytest.mark.parametrize("reason", ["timeout", "invalid", "crashed"])
def test_a_failed_turn_says_its_reason(reason: str) -> None:
    result = _read(
        "7", _event(EVENTS[0]), {"v": VERSION, "type": "failed", "id": "7", "reason": reason, "message": "m"}
    )
    assert result == TurnResult(returned=reason, events=EVENTS[:1], exception="m")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("messages", "said"),
    [
        ([{**END, "id": "8"}], "an answer for call 8, which it was not given (it was asked call 7)"),
        ([_event(EVENTS[0], "6")], "an answer for call 6, which it was not given"),
        (
            [_event(EVENTS[0]), {"v": VERSION, "type": "response", "id": "7", "response": to_json(RESPONSE)}],
            "a response after 1 events of call 7",
        ),
        ([{"v": VERSION, "type": "failed", "id": "7", "reason": "bored", "message": "m"}], "$.reason"),
        ([{"v": VERSION, "type": "hello", "name": "x", "wires": {}}], "a hello message while it answers call 7"),
        ([{"v": VERSION, "type": "sandbox", "network": "x"}], "a sandbox message while it answers call 7"),
        ([{"v": VERSION, "type": "call", "id": "7", "call": to_json(CALLS[1])}], "a call message while it answers"),
        ([{"v": VERSION, "type": "fatal", "message": "no node_modules"}], "the driver gave up: no node_modules"),
        ([{"v": VERSION, "type": "result", "id": "7"}], "is no message of the protocol"),
        ([{**END, "extra": 1}], "schema refuses"),
        ([{"v": VERSION, "type": "end"}], "schema refuses"),
        ([_event(EVENTS[0]) | {"event": {"type": "text_delta", "txt": "a"}}], "no field 'txt'"),
        ([_event(EVENTS[0]) | {"event": {"$": "TextDelta", "text": "a"}}], "schema refuses"),
    ],
)
def test_what_breaks_the_protocol_is_named_and_quoted(messages: list[dict[str, Any]], said: str) -> None:
    with pytest.raises(ProtocolBroken) as caught:
        _read("7", *messages)
    assert said in str(caught.value)


def test_the_reader_returns_at_the_first_ending_and_reads_no_further() -> None:
    """A second ending is never read as the answer: the reader gives the turn's result at the first,
    and what follows (a second answer) is the next turn's to refuse (an answer for another call)."""
    reader = TurnReader("7")
    first = reader.take(END, 40)
    assert first == TurnResult(returned="events")
    after = TurnReader("8")
    with pytest.raises(ProtocolBroken, match="an answer for call 7, which it was not given"):
        after.take(END, 40)


def test_more_messages_than_the_bound_break_the_protocol(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(protocol, "MAX_TURN_MESSAGES", 5)
    reader = TurnReader("7")
    for _ in range(5):
        assert reader.take(_event(TextDelta(text="a")), 10) is None
    with pytest.raises(ProtocolBroken, match="past 5 messages"):
        reader.take(_event(TextDelta(text="a")), 10)


def test_more_bytes_than_the_bound_break_the_protocol() -> None:
    """64 MiB in messages of the largest size: the fifth message of 16 MiB passes the bound."""
    reader = TurnReader("7")
    for _ in range(4):
        assert reader.take(_event(TextDelta(text="a")), MAX_MESSAGE) is None
    with pytest.raises(ProtocolBroken, match="or 64 MiB, the bound on one turn"):
        reader.take(_event(TextDelta(text="a")), MAX_MESSAGE)


# ---- answer_messages read back -----------------------------------------------------------------


@pytest.mark.parametrize(
    "result",
    [
        TurnResult(returned="response", response=RESPONSE),
        TurnResult(returned="response", response=Response(parts=())),
        TurnResult(returned="events", events=EVENTS),
        TurnResult(returned="events"),
        TurnResult(returned="raised", events=EVENTS[:2], exception="httpx.ReadError: boom", error_info=ERROR),
        TurnResult(returned="raised", exception="x.Y: z", error_info_failed="KeyError: 'status'"),
        TurnResult(returned="raised", exception="x.Y: a: b: c"),
        TurnResult(returned="timeout", exception="the turn did not finish within 1 s"),
        TurnResult(returned="invalid", exception="complete returned 5"),
        TurnResult(returned="crashed", events=EVENTS[:1], exception="the worker died"),
    ],
    ids=lambda r: r.returned,
)
def test_a_python_drivers_answer_reads_back_as_the_same_result(result: TurnResult) -> None:
    messages = list(answer_messages("7", result))
    assert all(check(m) is None for m in messages)
    assert [m["type"] for m in messages[:-1]] == ["event"] * (len(messages) - 1)
    assert _read("7", *messages) == result


def test_call_messages_carry_the_call_as_plain_json() -> None:
    message = call_message(CALL_VALUE, "3")
    assert message["v"] == VERSION and message["id"] == "3" and message["type"] == "call"
    assert message["call"]["messages"][1]["parts"][2] == to_json(CALL)
    assert check(json.loads(json.dumps(message))) is None
