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

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

from conformance.checks._common import CaseContext, verdict
from conformance.checks._meaning import SPELLING_DETAILS, meaning, signed_first_call
from conformance.checks.equivalences import bundled_table, classify, without_equivalents
from conformance.checks.recorded_request import compare_bodies, glob_matches, step, volatile_globs
from conformance.verdicts import CheckVerdict, Finding

__all__ = ["CHECK", "SPELLING_DETAILS", "client_recorded_request", "meaning", "request_differences"]

CHECK = "client.recorded_request"


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
    # every turn's: a tool an MCP server adds mid-run (mcp/tools_added) is first sent in a later turn
    rewritten = {change.tool for t in ctx.outcome.turns for change in t.wire.schema_changes}
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
                signed_first_call(without_equivalents(meaning(want, served, rewritten), wire, table, **same)),
                signed_first_call(without_equivalents(meaning(got, served, rewritten), wire, table, **same)),
                ignored=intended,
                turn=turn.turn,
                check=CHECK,
            )
            findings += [classify(f, wire, table) for f in found]
        if client_turn is not None:
            served += b"".join(s.response_body for s in client_turn.sent)
    return verdict(CHECK, findings) if ran else None


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
