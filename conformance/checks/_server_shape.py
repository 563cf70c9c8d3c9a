"""``server.shape``: a body, or each stream event, against the official SDK's own pydantic types.

The types are the ones the emulator's fidelity tests validate its answers with
(``tests/emulator/test_usage_shapes.py``): openai ``types.chat.ChatCompletion`` and
``ChatCompletionChunk``; openai ``types.responses.Response`` and ``ResponseStreamEvent``; anthropic
``types.Message`` and ``RawMessageStreamEvent``; google-genai ``types.GenerateContentResponse`` (read
as the SDK reads an answer, ``_from_response``: keys it does not know dropped first, google/genai/
_common.py ``BaseModel._from_response``); ollama ``ChatResponse``. ``model_validate`` judges what the
types declare: a required field left out, a value outside a ``Literal``, a value of another type.

The two event unions are discriminated by ``type`` (the SDKs' ``PropertyInfo(discriminator="type")``,
which pydantic itself does not read): an event is validated against the one member its ``type``
names, so a defect reads as that event's, not as fifty union members' mismatches. An Anthropic
event of a type the SDK does not know is left alone (the streaming docs: new event types may be
added and must be ignored; wire-formats.md §3d); a Responses one is a finding.

The SDKs are optional for users (the ``server`` extra): each is imported on first use; when one is
missing, ``Missing`` says which and the check is ``unsupported``.
"""

from __future__ import annotations

import copy
import typing
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

from conformance.checks._server_read import Collector, quote

__all__ = ["EXTRA", "Missing", "shape_answer", "shape_event", "wire_guess"]

EXTRA = "pip install 'conformance[server]'"
"""What installs every SDK the shape check reads."""

_PACKAGES = {
    "openai_chat": ("openai", "openai"),
    "openai_responses": ("openai", "openai"),
    "anthropic": ("anthropic", "anthropic"),
    "gemini": ("google.genai", "google-genai"),
    "ollama": ("ollama", "ollama"),
}


class Missing(Exception):
    """The SDK a wire's shapes come from is not installed (the message names it and the extra)."""


Validator = Callable[[Any], object]


def _load(wire: str) -> None:
    module, package = _PACKAGES[wire]
    try:
        __import__(module)
    except ImportError as exc:
        raise Missing(
            f"the {wire} shapes come from the official SDK {package}, which is not installed: {EXTRA}"
        ) from exc


@cache
def _whole(wire: str) -> tuple[str, Validator]:
    """The SDK type of a whole answer on ``wire``: its name (as cited) and a validator."""
    _load(wire)
    if wire == "openai_chat":
        from openai.types.chat import ChatCompletion

        return "openai.types.chat.ChatCompletion", ChatCompletion.model_validate
    if wire == "openai_responses":
        from openai.types.responses import Response

        return "openai.types.responses.Response", Response.model_validate
    if wire == "anthropic":
        from anthropic.types import Message

        return "anthropic.types.Message", Message.model_validate
    if wire == "gemini":
        from google.genai import types

        def gemini(value: Any) -> None:
            types.GenerateContentResponse._from_response(response=copy.deepcopy(value), kwargs={})

        return "google.genai.types.GenerateContentResponse", gemini
    from ollama import ChatResponse

    return "ollama.ChatResponse", ChatResponse.model_validate


@cache
def _events(wire: str) -> tuple[str, Mapping[str, tuple[str, Validator]] | Validator]:
    """The SDK type of one stream event on ``wire``: the union's name, and its members by ``type``
    (the event unions) or one validator (a chunk type)."""
    _load(wire)
    if wire == "openai_chat":
        from openai.types.chat import ChatCompletionChunk

        return "openai.types.chat.ChatCompletionChunk", ChatCompletionChunk.model_validate
    if wire == "openai_responses":
        from openai.types.responses import ResponseStreamEvent

        return "openai.types.responses.ResponseStreamEvent", _members(ResponseStreamEvent)
    if wire == "anthropic":
        from anthropic.types import RawMessageStreamEvent

        return "anthropic.types.RawMessageStreamEvent", _members(RawMessageStreamEvent)
    if wire == "gemini":
        return _whole("gemini")
    return _whole("ollama")


def _members(union: Any) -> dict[str, tuple[str, Validator]]:
    """``Annotated[Union[A, B, ...], discriminator]`` -> {A's ``type`` literal: (A's name, A.model_validate)}."""
    members = typing.get_args(typing.get_args(union)[0])
    out: dict[str, tuple[str, Validator]] = {}
    for member in members:
        for tag in typing.get_args(member.model_fields["type"].annotation):
            out[tag] = (f"{member.__module__.rsplit('.', 1)[0]}.{member.__name__}", member.model_validate)
    return out


def _pydantic_findings(out: Collector, exc: Exception, type_name: str, prefix: str, *, wire: str, value: Any) -> None:
    errors = getattr(exc, "errors", None)
    if not callable(errors):
        out.add("server.shape", prefix, f"{type_name} does not read it: {exc}", remedy=_REMEDY)
        return
    guess = wire_guess(value)
    if guess is not None and guess != wire:
        out.add(
            "server.shape",
            prefix,
            f"{type_name} does not read it: it looks like the {guess} wire's (is the server answering another"
            " wire at this path?)",
            expected=wire,
            actual=guess,
            remedy=f"answer the {wire} endpoint in the {wire} wire",
        )
    missing: list[tuple[str, str]] = []  # (path, field): one finding per value, naming every field it lacks
    for error in _members_meant(list(errors())):
        loc = [step for step in error.get("loc", ()) if not _union_step(step)]
        path = prefix + "".join(f"[{s}]" if isinstance(s, int) else f".{s}" for s in loc)
        field = ".".join(str(s) for s in loc if not isinstance(s, int)) or "(the whole value)"
        kind = error.get("type", "")
        if kind == "missing" and _optional_in_practice(loc):
            continue
        if kind == "missing":
            missing.append((path, field))
            continue
        if kind in ("literal_error", "enum"):
            want = (error.get("ctx") or {}).get("expected", "")
            message = f"sends a {field} outside the values {type_name} allows ({want})"
            expected, actual = str(want), error.get("input")
        else:
            message = f"sends a {field} that {type_name} does not read: {error.get('msg', kind)}"
            expected, actual = kind, error.get("input")
        out.add("server.shape", path, message, expected=expected, actual=_small(actual), remedy=_REMEDY)
    if missing:  # an answer's missing fields are one finding, listed type by type (Collector.lack)
        out.lack(type_name, missing[0][0], [field for _, field in missing])


_REMEDY = "send the field as the SDK type declares it: the official SDK is what most clients of this wire read with"


_OPTIONAL_IN_PRACTICE = ("usage.input_tokens_details.cache_write_tokens",)
"""Fields an SDK types as required that the provider's own answers leave out: a server is not held
to more than the provider it copies. ``cache_write_tokens`` (openai ``response_usage.py``) is missing
from 13 of 18 usages OpenAI recorded on the Responses wire (wire-formats.md §2c, older replies)."""


def _optional_in_practice(loc: list[Any]) -> bool:
    dotted = ".".join(str(s) for s in loc if not isinstance(s, int))
    return any(dotted.endswith(field) for field in _OPTIONAL_IN_PRACTICE)


def _union_step(step: Any) -> bool:
    """A pydantic ``loc`` step naming a union member (a class name: the wires' JSON keys start in
    lower case) or a function validator, not a JSON key."""
    return isinstance(step, str) and (step[:1].isupper() or "[" in step or step.startswith("function-"))


def _members_meant(errors: list[Any]) -> list[Any]:
    """A union (content blocks, output items) tried member by member gives every member's errors:
    keep those of the members whose ``type`` the value has (a member whose ``type`` literal does not
    match is not the one meant); when no member's ``type`` matches, one error says so."""
    wrong: set[tuple[Any, ...]] = set()
    members: dict[tuple[Any, ...], set[Any]] = {}
    for error in errors:
        loc = tuple(error.get("loc", ()))
        cut = next((i for i, step in enumerate(loc) if _union_step(step) and step[:1].isupper()), None)
        if cut is None:
            continue
        members.setdefault(loc[:cut], set()).add(loc[cut])
        if loc[cut + 1 :] == ("type",) and error.get("type") == "literal_error":
            wrong.add(loc[: cut + 1])
    kept: list[Any] = []
    said: set[tuple[Any, ...]] = set()
    for error in errors:
        loc = tuple(error.get("loc", ()))
        cut = next((i for i, step in enumerate(loc) if _union_step(step) and step[:1].isupper()), None)
        if cut is None:
            kept.append(error)
        elif all((*loc[:cut], m) in wrong for m in members[loc[:cut]]):
            if loc[:cut] not in said:
                said.add(loc[:cut])
                kept.append(
                    {"loc": (*loc[:cut], "type"), "type": "union_tag", "msg": "a type none of the SDK's types has"}
                )
        elif loc[: cut + 1] not in wrong:
            kept.append(error)
    return kept


def _small(value: Any) -> Any:
    if isinstance(value, Mapping | list):
        return quote(repr(value), 120)
    return value


def shape_answer(wire: str, value: Any, out: Collector) -> None:
    """A whole answer's body against its SDK type (raises ``Missing`` when the SDK is not installed)."""
    type_name, validate = _whole(wire)
    out.judge("server.shape")
    try:
        validate(value)
    except Exception as exc:  # pydantic ValidationError, or the SDK's own parsing error
        _pydantic_findings(out, exc, type_name, "$", wire=wire, value=value)


def shape_event(wire: str, value: Any, path: str, out: Collector) -> None:
    """One stream event's data against its SDK type (``Missing`` as ``shape_answer``)."""
    union, members = _events(wire)
    out.judge("server.shape")
    if isinstance(members, Mapping):
        tag = value.get("type") if isinstance(value, Mapping) else None
        if tag not in members:
            if wire == "anthropic" and isinstance(tag, str):
                return  # a new event type, to be ignored (wire-formats.md §3d)
            out.add(
                "server.shape",
                f"{path}.type",
                f"{union}: an event type the SDK does not know ({tag!r})",
                expected="an event type of the SDK",
                actual=_small(tag),
                remedy=_REMEDY,
            )
            return
        type_name, validate = members[str(tag)]
    else:
        type_name, validate = union, members
    try:
        validate(value)
    except Exception as exc:
        _pydantic_findings(out, exc, type_name, path, wire=wire, value=value)


def wire_guess(value: Any) -> str | None:
    """The wire a JSON answer looks like, by its top-level keys (None: none of them)."""
    if not isinstance(value, Mapping):
        return None
    if value.get("object") in ("chat.completion", "chat.completion.chunk") or "choices" in value:
        return "openai_chat"
    if value.get("object") == "response" or str(value.get("type", "")).startswith("response."):
        return "openai_responses"
    if value.get("type") in ("message", "message_start", "content_block_delta", "message_delta", "message_stop"):
        return "anthropic"
    if "candidates" in value or "usageMetadata" in value:
        return "gemini"
    if "done" in value and "message" in value:
        return "ollama"
    return None
