"""The client protocol, version 1 (docs/protocol.md): its messages, their JSON Schema, and reading
a driver's answers into a turn's result (pure; stdlib-only but for ``check``).

A driver in any language (``conformance certify --command``), or a Python driver in its own
virtualenv (``--python``, ``conformance.clients.child``), speaks JSON lines on two pipes of its own:
the suite writes a ``call`` per turn, the driver a ``hello`` first, then for each call its ``event``
messages and one ending (``end``, ``response``, ``error`` or ``failed``). Every message carries
``"v": VERSION``.

Both sides check what they read. The suite checks each message a driver writes against the schema
shipped beside this module (``SCHEMA_FILE``, written by ``build_schema`` from the model's own type
hints, ``check`` with ``jsonschema``), then reads its values with ``conformance.clients.codec``; the
Python driver side reads each call with the codec alone (the other interpreter has nothing but the
standard library), whose rules are the schema's (``tests/clients/test_protocol.py``).
"""

from __future__ import annotations

import json
import typing
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import Any, Literal

from conformance.clients.codec import discriminator, from_json, json_schema, to_json
from conformance.clients.contract import Call
from conformance.clients.invoke import TurnResult
from conformance.errors import UsageError
from conformance.model import ErrorInfo, Response, StreamEvent

__all__ = [
    "ENDINGS",
    "FDS_ENV",
    "MAX_MESSAGE",
    "MAX_TURN_BYTES",
    "MAX_TURN_MESSAGES",
    "SCHEMA_ENV",
    "SCHEMA_FILE",
    "VERSION",
    "ProtocolBroken",
    "TurnReader",
    "answer_messages",
    "build_schema",
    "call_message",
    "check",
    "clip",
    "hello_message",
    "load_schema",
    "parse_line",
    "read_call",
]

VERSION = 1
"""The protocol version this suite speaks; every message carries it as ``v``."""

MAX_MESSAGE = 16 * 2**20
"""Bytes one message may take: 16 MiB. The suite never reads more than this (plus one read) of a line."""

MAX_TURN_BYTES = 64 * 2**20
"""Bytes the answer to one call may take, all its messages together."""

MAX_TURN_MESSAGES = 100_000
"""Messages the answer to one call may take (a stream of that many events)."""

FDS_ENV = "CONFORMANCE_PROTOCOL_FDS"
"""``R,W``: the descriptors of the suite's messages (read) and the driver's (write)."""

SCHEMA_ENV = "CONFORMANCE_PROTOCOL_SCHEMA"
"""The path of the schema file, for a driver that checks what the suite sends."""

SCHEMA_FILE = Path(__file__).with_name("protocol.schema.json")

ENDINGS = ("end", "response", "error", "failed")
"""The messages that end the answer to a call."""

_FAILED_REASONS = ("timeout", "invalid", "crashed")


class ProtocolBroken(Exception):
    """A driver broke the protocol, died or hung (the message says which and quotes what broke it); it
    is killed and the turn is the case's ERROR."""


# ---- the schema -------------------------------------------------------------------------------


def build_schema() -> dict[str, Any]:
    """The protocol's JSON Schema: each message by its ``type``, the values by the model's hints."""
    defs = json_schema({"Call": Call, "Response": Response, "StreamEvent": StreamEvent, "ErrorInfo": ErrorInfo})
    text = {"type": "string"}
    strings = {"type": "object", "additionalProperties": text}
    words = {"type": "array", "items": text}

    def message(kind: str, fields: Mapping[str, Any], required: tuple[str, ...], doc: str) -> dict[str, Any]:
        return {
            "description": doc,
            "type": "object",
            "properties": {"v": {"const": VERSION}, "type": {"const": kind}, **fields},
            "required": ["v", "type", *required],
            "additionalProperties": False,
        }

    call_id = {"type": "string", "minLength": 1}
    messages = {
        "hello": message(
            "hello",
            {
                "name": {"type": "string", "minLength": 1},
                "version": text,
                "runtime": text,
                "wires": {"type": "object", "additionalProperties": words},
                "duties": {"anyOf": [words, {"type": "object", "additionalProperties": words}]},
                "known_gaps": strings,
                "schema_rewrites": strings,
                "request_differences": strings,
            },
            ("name", "wires"),
            "The driver's first message: who the client is and what it declares (docs/clients.md).",
        ),
        "call": message(
            "call",
            {"id": call_id, "call": {"$ref": "#/$defs/Call"}},
            ("id", "call"),
            "The suite asks for one turn.",
        ),
        "event": message(
            "event",
            {"id": call_id, "event": {"$ref": "#/$defs/StreamEvent"}},
            ("id", "event"),
            "One stream event of the call, as the library handed it over.",
        ),
        "end": message("end", {"id": call_id}, ("id",), "The call's stream ended normally."),
        "response": message(
            "response",
            {"id": call_id, "response": {"$ref": "#/$defs/Response"}},
            ("id", "response"),
            "The call's decoded answer (a library that hands over a whole answer).",
        ),
        "error": message(
            "error",
            {
                "id": call_id,
                "exception": {
                    "type": "object",
                    "properties": {"name": text, "message": text},
                    "required": ["name", "message"],
                    "additionalProperties": False,
                },
                "error": {"anyOf": [{"$ref": "#/$defs/ErrorInfo"}, {"type": "null"}]},
                "mapping_failed": text,
            },
            ("id", "exception", "error"),
            "The library raised: its class name and message, and the driver's ErrorInfo for it (null: untyped).",
        ),
        "failed": message(
            "failed",
            {"id": call_id, "reason": {"type": "string", "enum": list(_FAILED_REASONS)}, "message": text},
            ("id", "reason", "message"),
            "The driver gave nothing usable for the call (it timed the turn out, the library gave no answer).",
        ),
        "fatal": message(
            "fatal",
            {"message": text, "network": text},
            ("message",),
            "The driver cannot start (its library does not load): the run stops (exit 2).",
        ),
        "sandbox": message(
            "sandbox",
            {"network": text},
            ("network",),
            "Written by the suite's launcher before the hello: the network the driver has.",
        ),
    }
    for kind, schema in messages.items():
        defs[f"{kind}_message"] = schema
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://github.com/conformance/conformance/protocol/v1",
        "title": f"conformance client protocol, version {VERSION} (docs/protocol.md)",
        "description": "One JSON object per line; its type names its message.",
        "type": "object",
        "required": ["v", "type"],
        "oneOf": [{"$ref": f"#/$defs/{kind}_message"} for kind in messages],
        "$defs": defs,
    }


@cache
def load_schema() -> dict[str, Any]:
    """The schema file shipped in the package (``SCHEMA_FILE``)."""
    loaded: dict[str, Any] = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    return loaded


@cache
def _validator(kind: str) -> Any:
    import jsonschema  # the suite's side only: the driver's interpreter has the standard library alone

    schema = load_schema()
    sub = {"$ref": f"#/$defs/{kind}_message", "$defs": schema["$defs"]}
    return jsonschema.Draft202012Validator(sub)


@cache
def _event_classes() -> dict[str, str]:
    """Each stream event's ``type`` -> its class's definition in the schema."""
    out: dict[str, str] = {}
    for cls in typing.get_args(StreamEvent):
        tag = discriminator(cls)
        if tag is not None:
            out[str(tag[1])] = cls.__name__
    return out


@cache
def _event_validator(tag: str) -> Any:
    """An event message's validator with its event checked against the one class its ``type`` names:
    the same verdict as the union (each member requires its own ``type`` constant, so a value fits the
    union exactly when it fits that member), about ten times faster per event, the protocol's most
    frequent message (``benchmarks/client_overhead.py --protocol``)."""
    import jsonschema

    defs = load_schema()["$defs"]
    envelope = dict(defs["event_message"])
    envelope["properties"] = {**envelope["properties"], "event": {"$ref": f"#/$defs/{_event_classes()[tag]}"}}
    return jsonschema.Draft202012Validator({**envelope, "$defs": defs})


def check(message: Mapping[str, Any]) -> str | None:
    """What in ``message`` the schema refuses, and where (None: it fits); ``message`` is a JSON
    object of this version (``parse_line``)."""
    kind = message.get("type")
    if not isinstance(kind, str) or f"{kind}_message" not in load_schema()["$defs"]:
        known = ", ".join(k.removesuffix("_message") for k in load_schema()["$defs"] if k.endswith("_message"))
        return f"$.type: {clip(kind, 60)} is no message of the protocol (its messages: {known})"
    import jsonschema

    event = message.get("event") if kind == "event" else None
    tag = event.get("type") if isinstance(event, dict) else None
    validator = _event_validator(tag) if isinstance(tag, str) and tag in _event_classes() else _validator(kind)
    error = jsonschema.exceptions.best_match(validator.iter_errors(message))
    if error is None:
        return None
    return _precisely(kind, message) or f"{error.json_path}: {clip(error.message, 300)}"


_VALUES: Mapping[str, tuple[str, Any]] = {
    "call": ("call", Call),
    "event": ("event", StreamEvent),
    "response": ("response", Response),
    "error": ("error", ErrorInfo | None),
}


def _precisely(kind: str, message: Mapping[str, Any]) -> str | None:
    """Where a value the schema refuses first fails the codec's reading (the same rules): its field
    by name, rather than the schema's "not valid under any of the given schemas"."""
    field, hint = _VALUES.get(kind, ("", None))
    if not field or field not in message:
        return None
    try:
        from_json(message[field], hint, f"$.{field}")
    except UsageError as exc:
        return clip(str(exc), 300)
    return None


# ---- reading and writing messages --------------------------------------------------------------


def parse_line(line: bytes | str) -> dict[str, Any]:
    """One protocol line as its message: a JSON object of this version; ``ProtocolBroken`` says why not."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError) as exc:
        text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
        raise ProtocolBroken(
            f"a line that is not JSON ({type(exc).__name__}: {clip(str(exc))}; it began {clip(text)})"
        ) from None
    if not isinstance(message, dict):
        raise ProtocolBroken(f"a line that is not a JSON object: {clip(message)}")
    version = message.get("v")
    if version != VERSION or isinstance(version, bool):
        said = "no version" if "v" not in message else f"version {clip(json.dumps(version), 40)}"
        raise ProtocolBroken(
            f"a message of {said}; this suite speaks version {VERSION} of the protocol (docs/protocol.md):"
            f" {clip(message)}"
        )
    return message


def call_message(call: Call, call_id: str) -> dict[str, Any]:
    """The suite's message asking for one turn."""
    return {"v": VERSION, "type": "call", "id": call_id, "call": to_json(call)}


def read_call(message: Mapping[str, Any]) -> tuple[str, Call]:
    """A driver's reading of a call message (stdlib: the codec's rules); ``UsageError`` says what does not fit."""
    if message.get("type") != "call":
        raise UsageError(f"$.type: {clip(message.get('type'), 40)} where a call is expected")
    extra = sorted(set(message) - {"v", "type", "id", "call"})
    if extra:
        raise UsageError(f"$: a call message has no field {extra[0]!r}")
    call_id = message.get("id")
    if not isinstance(call_id, str) or not call_id:
        raise UsageError("$.id: a call needs its id (a non-empty string)")
    call = from_json(message.get("call"), Call, "$.call")
    assert isinstance(call, Call)
    return call_id, call


def hello_message(client: Any, *, runtime: str, duties: Any = None) -> dict[str, Any]:
    """A Python driver's hello: what its ``Client`` declares (docs/clients.md)."""
    hello: dict[str, Any] = {
        "v": VERSION,
        "type": "hello",
        "name": str(client.name),
        "runtime": runtime,
        "wires": {str(wire): sorted(str(c) for c in caps) for wire, caps in client.wires.items()},
        "known_gaps": {str(k): str(v) for k, v in dict(getattr(client, "known_gaps", {}) or {}).items()},
        "schema_rewrites": {str(k): str(v) for k, v in dict(getattr(client, "schema_rewrites", {}) or {}).items()},
        "request_differences": {
            str(k): str(v) for k, v in dict(getattr(client, "request_differences", {}) or {}).items()
        },
    }
    version = getattr(client, "version", None)
    if isinstance(version, str):
        hello["version"] = version
    if duties is not None:
        hello["duties"] = duties
    return hello


def answer_messages(call_id: str, result: TurnResult) -> Iterator[dict[str, Any]]:
    """A Python driver's answer to a call, as messages: its events, then the ending."""
    head = {"v": VERSION, "id": call_id}
    for event in result.events:
        yield {**head, "type": "event", "event": to_json(event)}
    if result.returned == "response" and result.response is not None:
        yield {**head, "type": "response", "response": to_json(result.response)}
    elif result.returned == "events":
        yield {**head, "type": "end"}
    elif result.returned == "raised":
        name, _, text = (result.exception or "an exception").partition(": ")
        error: dict[str, Any] = {
            **head,
            "type": "error",
            "exception": {"name": name, "message": text},
            "error": to_json(result.error_info) if result.error_info is not None else None,
        }
        if result.error_info_failed is not None:
            error["mapping_failed"] = result.error_info_failed
        yield error
    else:
        reason = result.returned if result.returned in _FAILED_REASONS else "invalid"
        yield {**head, "type": "failed", "reason": reason, "message": result.exception or "no answer"}


class TurnReader:
    """The suite's reading of the answer to call ``call_id``: ``take`` each message the driver writes,
    in order, until it gives the turn's result. Whatever breaks the protocol raises ``ProtocolBroken``
    quoting the message."""

    def __init__(self, call_id: str) -> None:
        self.call_id = call_id
        self.events: list[StreamEvent] = []
        self.messages = 0
        self.size = 0

    def take(self, message: Mapping[str, Any], size: int) -> TurnResult | None:
        """The turn's result once ``message`` (``size`` bytes on the pipe) ends it; None before."""
        self.messages += 1
        self.size += size
        if self.messages > MAX_TURN_MESSAGES or self.size > MAX_TURN_BYTES:
            raise ProtocolBroken(
                f"an answer to call {self.call_id} past {MAX_TURN_MESSAGES:,} messages or {MAX_TURN_BYTES >> 20} MiB,"
                " the bound on one turn (docs/protocol.md)"
            )
        problem = check(message)
        if problem is not None:
            raise ProtocolBroken(f"a message the protocol's schema refuses ({problem}): {clip(dict(message))}")
        kind = message["type"]
        if kind == "fatal":
            raise ProtocolBroken(f"the driver gave up: {clip(message['message'], 2000)}")
        if kind not in ("event", *ENDINGS):
            raise ProtocolBroken(f"a {kind} message while it answers call {self.call_id}: {clip(dict(message))}")
        if message["id"] != self.call_id:
            raise ProtocolBroken(
                f"an answer for call {clip(message['id'], 40)}, which it was not given (it was asked call"
                f" {self.call_id}): {clip(dict(message))}"
            )
        try:
            return self._read(kind, message)
        except UsageError as exc:
            why = f"a value that does not fit the model ({clip(str(exc), 400)}): {clip(dict(message))}"
            raise ProtocolBroken(why) from None

    def _read(self, kind: str, message: Mapping[str, Any]) -> TurnResult | None:
        events = tuple(self.events)
        if kind == "event":
            self.events.append(from_json(message["event"], StreamEvent, "$.event"))
            return None
        if kind == "end":
            return TurnResult(returned="events", events=events)
        if kind == "response":
            if events:
                raise ProtocolBroken(
                    f"a response after {len(events)} events of call {self.call_id} (an answer is one or the other)"
                )
            response = from_json(message["response"], Response, "$.response")
            return TurnResult(returned="response", response=response)
        if kind == "error":
            exception = message["exception"]
            info = message["error"]
            return TurnResult(
                returned="raised",
                events=events,
                exception=f"{exception['name']}: {exception['message']}",
                error_info=from_json(info, ErrorInfo, "$.error") if info is not None else None,
                error_info_failed=message.get("mapping_failed"),
            )
        reason: Literal["timeout", "invalid", "crashed"] = message["reason"]
        return TurnResult(returned=reason, events=events, exception=message["message"])


def clip(value: Any, limit: int = 200) -> str:
    """``value`` as text of at most ``limit`` characters (what was left out is counted)."""
    text = value if isinstance(value, str) else json.dumps(value, default=repr)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"
