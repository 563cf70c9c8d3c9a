"""The recorded-request regression for black-box clients: what a client sends means what was recorded.

``client.recorded_request``  on every turn, the request the client sent and the cassette's recorded request
                             whose answer it got are both read back into the unified model by the same
                             reference adapter (``request_from_wire``), and the two read-backs are compared
                             field by field (``checks.recorded_request.compare_bodies``). Each difference is
                             a finding naming the path in the read-back request (``$.tools[0].description``,
                             ``$.provider_details.extra.temperature``) and the recorded and sent values.

Comparing read-backs makes spelling differences between libraries disappear: key order, JSON
whitespace, a content given as a string or as one text block, ``functionDeclarations`` or
``function_declarations``, a Gemini path under ``/v1/`` or ``/v1beta/``. On top of the read-back, and
nothing else (docs/clients.md, "client.recorded_request"):

- ``$.model``: the model the call asked for stands for the recorded one (``--model``);
- every value the equivalence table (``docs/equivalences.md``, ``conformance.checks.equivalences``)
  says means the same as leaving the field out is left out on both sides: ``"stream": false``, an
  Anthropic tool's ``"type": "custom"``, ``tool_choice: auto`` with tools offered, Anthropic's
  ``max_tokens`` when the call left it open (each library chooses its own), Gemini's
  ``responseModalities: ["TEXT"]`` and its documented placeholder thought signature, and ``is_error``
  on the wires that have no error flag (the failure reaches the model as the result's text, which
  is compared);
- how a body was spelled, kept by the reader so that it writes the same bytes again, is left out
  (``SPELLING_DETAILS``: ``content_list``, ``no_content_key``, ``path_prefix``, ...), and so is a
  call's argument text (``arguments_raw``: its parsed ``arguments`` are compared);
- an empty object, empty list or null among the wire fields the model does not cover
  (``provider_details``) is absent (``generationConfig: {}``, ``tools: []``), and a first message
  that is then a plain system message is the system prompt (Ollama's ``"images": []`` on it);
- a call id the provider never sent (made up by the reference adapter when recording, or by the
  client) is compared by its place: the n-th made-up id of a request on both sides;
- a tool result's text is compared without its whitespace (libraries join a result's text items
  with newlines, spaces or nothing), as ``roundtrip.request`` does; tool schemas in one spelling
  (``translation.tool_definitions``'s canonical form), and not at all for the tools the client
  declares it rewrites (``schema_rewrites``: the rewrite covers the schema and its ``strict`` flag);
  image bytes as bytes (base64 or base64url);
- values the cassette marks ``volatile`` are compared for presence only;
- a client declares the differences it intends as data, ``request_differences`` (a JSON path glob
  of the read-back request -> the reason; ``wire:glob`` for one wire): those paths are not compared.

A tool, a message, a parameter (``temperature``, ``max_tokens``), a text or a tool result that
changes is a FAIL. A field sent that the recorded request does not carry is classified by the
table (``equivalences.classify``): a field the provider rejects is a FAIL saying what the provider
answers; any other is a parameter **sent unasked** (kind ``unasked``, with what it changes, or a
``note`` when it changes nothing), which does not fail the check. The check gives no verdict on a
case none of whose turns got a recorded answer.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

from conformance.checks._common import CaseContext, unwrapped_results, verdict
from conformance.checks.equivalences import bundled_table, classify, without_equivalents
from conformance.checks.recorded_request import compare_bodies, glob_matches, step, volatile_globs
from conformance.checks.translation import _canonical_schema as canonical_schema
from conformance.model import Image, Request, Resource, Text, ToolCall, ToolResult
from conformance.verdicts import CheckVerdict, Finding

__all__ = ["CHECK", "SPELLING_DETAILS", "client_recorded_request", "meaning", "request_differences"]

CHECK = "client.recorded_request"

SPELLING_DETAILS = frozenset(
    {
        "content_list",  # a content given as a list of blocks rather than a string
        "content_str",  # ... or as a string rather than one block
        "no_content_key",  # an assistant message without "content" rather than "content": null
        "parts_spelling",  # Gemini parts in snake_case or camelCase
        "spelling",  # the same, on other Gemini values
        "path_prefix",  # Gemini's /v1/ or /v1beta/
        "query",  # the query string (Gemini's ?alt=sse)
        "synthetic_id",  # the reader made the call id up (the wire had none)
        "no_tool_call_id",  # a result without its call's id (the wire has none)
        "item_id",  # a Responses item's own id (fc_...), optional when sent back
        "own_message",  # a tool result in a message of its own rather than with its siblings
        "system_blocks",  # a system prompt as text blocks rather than a string
        "stream_omitted",  # "stream": false rather than no "stream"
        "max_tokens_key",  # max_tokens or max_completion_tokens
        "input_string",  # a Responses input given as a string rather than one message
        "merge_with_previous",  # two same-role messages the wire keeps as one
        "response_object",  # a Gemini result as the whole functionResponse.response object ...
        "response_key",  # ... or under "output" rather than "result" ...
        "result_json",  # ... or as JSON rather than a string (its text is compared)
        "schema_field",  # Gemini's parameters or parametersJsonSchema
        "is_error_key",  # "is_error": false said out loud (the flag itself is compared)
    }
)
"""``provider_details`` keys that say how a body was spelled, not what it asks: left out."""


def request_differences(client: Any, wire: str) -> dict[str, str]:
    """The read-back paths a client declares it sends differently on ``wire`` (glob -> reason):
    its ``request_differences`` keys without a wire, and those of ``wire:`` with the prefix removed."""
    found: dict[str, str] = {}
    for key, reason in (getattr(client, "request_differences", {}) or {}).items():
        prefix, colon, rest = str(key).partition(":")
        if colon and not prefix.startswith("$"):
            if prefix == wire:
                found[rest] = reason
        else:
            found[str(key)] = reason
    return found


def client_recorded_request(ctx: CaseContext) -> CheckVerdict | None:
    """The ``client.recorded_request`` verdict of a black-box case (None when it does not apply)."""
    if ctx.client is None:
        return None
    seen = {turn.turn: turn for turn in ctx.client}
    wire = ctx.adapter.wire_format
    table = ctx.equivalences or bundled_table()
    intended = tuple(getattr(ctx.adapter, "request_differences", {}) or {})
    rewritten = {change.tool for t in ctx.outcome.turns[:1] for change in t.wire.schema_changes}
    volatile = volatile_globs(ctx.provenance)
    served = b""
    findings: list[Finding] = []
    ran = False
    for turn in ctx.outcome.turns:
        client_turn = seen.get(turn.turn)
        recorded = client_turn.recorded if client_turn is not None else None
        if recorded is not None and isinstance(recorded.json, Mapping):
            ran = True
            tools = ctx.scenario.tools
            want = ctx.adapter.request_from_wire(recorded.json, path=urlsplit(recorded.uri).path, tools=tools)
            if volatile:
                body = _settled(recorded.json, turn.wire.body, volatile)
                got = ctx.client_names(ctx.adapter.request_from_wire(body, path=turn.wire.path, tools=tools))
            else:
                got = ctx.read_back(turn.turn)
            want = replace(want, model=turn.request.model)  # the model the call asked for stands for it
            open_paths = frozenset({"$.max_tokens"} if turn.request.max_tokens is None else ())
            same: dict[str, Any] = {"tools_offered": bool(turn.request.tools), "left_open": open_paths}
            found = compare_bodies(
                without_equivalents(meaning(want, served, rewritten), wire, table, **same),
                without_equivalents(meaning(got, served, rewritten), wire, table, **same),
                ignored=intended,
                turn=turn.turn,
                check=CHECK,
            )
            findings += [classify(f, wire, table) for f in found]
        if client_turn is not None:
            served += b"".join(s.response_body for s in client_turn.sent)
    return verdict(CHECK, findings) if ran else None


def meaning(request: Request, served: bytes = b"", rewritten: Collection[str] = ()) -> dict[str, Any]:
    """A read-back request as plain JSON with its spelling left out (see the module docstring):
    ``served`` is every answer the provider gave so far (call ids not in it are made up),
    ``rewritten`` the tools whose schema is not compared."""
    request = unwrapped_results(request)
    made_up: dict[str, str] = {}

    def call_id(value: str) -> str:
        if not value or value.encode() in served:
            return value
        return made_up.setdefault(value, f"<made-up id #{len(made_up)}>")

    out: dict[str, Any] = _plain(request)
    out["provider_details"].setdefault("extra", {})  # a field one side adds is named by its own path
    for message, plain in zip(request.messages, out["messages"], strict=True):
        for part, shown in zip(message.parts, plain["parts"], strict=True):
            if isinstance(part, ToolCall):
                shown["id"] = call_id(part.id)
            elif isinstance(part, ToolResult):
                shown["call_id"] = call_id(part.call_id)
                text = "".join(c.text or "" for c in part.content if isinstance(c, Text | Resource))
                shown["content"] = [c for c in shown["content"] if c.get("kind") not in ("text", "resource")]
                shown["text"] = "".join(text.split())
    for tool, plain in zip(request.tools, out["tools"], strict=True):
        if tool.name in rewritten:  # a declared rewrite: the schema and its strict flag are the client's
            plain.pop("input_schema", None)
            _drop_strict(plain["provider_details"])
        else:
            plain["input_schema"] = canonical_schema(tool.input_schema)
    _system_first(out)
    return out


def _drop_strict(details: dict[str, Any]) -> None:
    """A tool's ``strict`` flag (OpenAI Chat ``function.strict``, Responses ``strict``) left out."""
    for holder in (details.get("function"), details.get("extra"), details):
        if isinstance(holder, dict):
            holder.pop("strict", None)
    for key in ("function", "extra"):
        if details.get(key) == {}:
            del details[key]


def _system_first(plain: dict[str, Any]) -> None:
    """A first message that is the system prompt in all but spelling (the reader kept it as a
    message for a field it does not write again, such as Ollama's ``"images": []``, now dropped as
    empty) is the system prompt."""
    messages = plain["messages"]
    if plain["system"] is not None or not messages:
        return
    first = messages[0]
    parts = first["parts"]
    alone = len(parts) == 1 and parts[0]["kind"] == "text" and parts[0]["provider_details"] == {}
    if first["provider_details"] == {"role": "system"} and alone:
        plain["system"] = parts[0]["text"]
        del messages[0]


def _plain(value: Any, *, details: bool = False) -> Any:
    """A model value as plain JSON: spelling details and argument text left out, empty wire values
    (inside ``provider_details``) dropped, image bytes in standard base64."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {
            f.name: _plain(getattr(value, f.name), details=f.name == "provider_details")
            for f in dataclasses.fields(value)
        }
        out.pop("arguments_raw", None)
        if isinstance(value, Image | Resource):
            for key in ("data", "blob"):
                if isinstance(out.get(key), str):
                    out[key] = _base64(out[key])
        if details_of := out.get("provider_details"):
            out["provider_details"] = {k: v for k, v in details_of.items() if k not in SPELLING_DETAILS}
        return out
    if isinstance(value, Mapping):
        items = {str(k): _plain(v, details=details) for k, v in value.items()}
        return {k: v for k, v in items.items() if not (details and v in (None, {}, []))}
    if isinstance(value, list | tuple):
        return [_plain(v, details=details) for v in value]
    return value


def _base64(text: str) -> str:
    """Base64 or base64url text as standard base64 (the same bytes); the text itself when it is neither."""
    try:
        raw = base64.b64decode(text.replace("-", "+").replace("_", "/"), validate=True)
    except (binascii.Error, ValueError):
        return text
    return base64.b64encode(raw).decode()


def _settled(recorded: Any, sent: Any, volatile: Sequence[str], path: str = "$") -> Any:
    """``sent`` with the recorded value wherever a volatile glob matches and both have one (only
    presence is compared there)."""
    if path != "$" and glob_matches(path, volatile):
        return recorded
    if isinstance(recorded, Mapping) and isinstance(sent, Mapping):
        return {k: _settled(recorded[k], v, volatile, step(path, k)) if k in recorded else v for k, v in sent.items()}
    if isinstance(recorded, list) and isinstance(sent, list):
        return [
            _settled(recorded[i], v, volatile, f"{path}[{i}]") if i < len(recorded) else v for i, v in enumerate(sent)
        ]
    return sent
