"""Translation checks: tools and messages reach the wire as the scenario expects.

``translation.wire_paths``      the scenario's present/absent/equal JSON paths, on every request they name (a
                                black-box client's request normalised first: read back, then written by the
                                reference adapter, so ``function_declarations`` and ``functionDeclarations``
                                are the same request);
``translation.tool_names``      wire tool names valid for the wire (OpenAI ``^[a-zA-Z0-9_-]{1,64}$``, Anthropic 128,
                                Gemini: letter or ``_`` first, then ``[a-zA-Z0-9_.:-]``, 128 at most since
                                python-genai 29103464, wire-formats.md §4a; E14) and
                                mapped back to the original MCP names without collisions;
``translation.tool_definitions`` every tool reaches the wire with its name, description and input schema
                                (a schema the adapter reports as changed, Gemini E15, is compared only by name);
``translation.tool_list``       each request offers the tools the bridge held at its turn, when the MCP
                                server's list changed between turns (``conformance.checks.tool_list``);
``translation.tool_choice``     ``tool_choice`` and ``parallel_tool_calls`` read back from the body as set;
``translation.request_shape``   the body validates against the wire format's request schema
                                (``conformance/schemas/requests/<wire>.schema.json``);
``translation.recorded_request`` each turn's body is the one its cassette recorded, field by field
                                (``conformance.checks.recorded_request``);
``translation.tool_result_content`` each tool result sent, read back, is the rule's view of it (docs/mcp.md,
                                "What the model receives"): structured content, text fallback, links, and
                                a placeholder with its note for a block the wire cannot carry
                                (``conformance.checks.tool_output``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from functools import cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator

from conformance.checks._common import CaseContext, diff_findings, unwrapped_results, verdict, without_details
from conformance.checks._meaning import canonical_schema, input_schema, meaning, signed_first_call
from conformance.checks._names import NAME_RULES
from conformance.checks.equivalences import bundled_table, classify, without_equivalents
from conformance.checks.recorded_request import compare_bodies, recorded_request
from conformance.checks.tool_list import check_tool_list
from conformance.checks.tool_output import check_tool_result_content
from conformance.scenarios.values import json_path_get, json_path_set
from conformance.verdicts import CheckVerdict, Finding

__all__ = ["NAME_RULES", "check_translation", "request_schema"]


@cache
def request_schema(wire_format: str) -> Draft202012Validator | None:
    """The request-body validator of a wire format (None when the suite has no schema for it)."""
    try:
        text = resources.files("conformance").joinpath(f"schemas/requests/{wire_format}.schema.json").read_text()
    except (FileNotFoundError, OSError):
        return None
    return Draft202012Validator(json.loads(text))


def check_translation(ctx: CaseContext) -> Sequence[CheckVerdict]:
    turns = ctx.outcome.turns
    if not turns:
        return ()
    verdicts = [
        _wire_paths(ctx),
        _tool_names(ctx),
        _tool_definitions(ctx),
        _tool_choice(ctx),
        _request_shape(ctx),
        recorded_request(ctx),
        check_tool_list(ctx),
        check_tool_result_content(ctx),
    ]
    return [v for v in verdicts if v is not None]


def _wire_paths(ctx: CaseContext) -> CheckVerdict | None:
    check = "translation.wire_paths"
    # keyed by the traffic the adapter declares: its prompt format, else its wire format
    wanted = [w for w in ctx.scenario.wire if w.adapter == ctx.adapter.traffic_format]
    if not wanted:
        return None
    findings: list[Finding] = []
    for expectation in wanted:
        for turn in ctx.outcome.turns:
            if expectation.turn is not None and expectation.turn != turn.turn:
                continue
            bodies = _Bodies(ctx, turn.turn)
            for path in expectation.present:
                if not any(json_path_get(body, path)[0] for body in bodies):
                    findings.append(
                        Finding(check=check, message="missing (the scenario expects it)", path=path, turn=turn.turn)
                    )
            for path in expectation.absent:
                if all(json_path_get(body, path)[0] for body in bodies):
                    value = json_path_get(bodies.made[0], path)[1]
                    findings.append(
                        Finding(
                            check=check,
                            message="present, where the scenario expects it absent",
                            path=path,
                            actual=value,
                            turn=turn.turn,
                        )
                    )
            for path, expected in expectation.equal.items():
                if any(_equal_at(body, path, expected) for body in bodies):
                    continue
                if ctx.client is not None and _same_meaning_with(ctx, turn.turn, path, expected):
                    continue  # a wire detail beside the same meaning: client.recorded_request judges it
                found, value = json_path_get(bodies.made[0], path)
                findings.append(
                    Finding(
                        check=check,
                        message="differs from the scenario's value"
                        if found
                        else "missing (the scenario gives its value)",
                        path=path,
                        expected=expected,
                        actual=value if found else None,
                        turn=turn.turn,
                    )
                )
    return verdict(check, findings)


def _same_meaning_with(ctx: CaseContext, turn: int, path: str, expected: Any) -> bool:
    """Does a black-box client's body mean what it would mean with ``expected`` at ``path``? Then
    the difference is a wire detail the unified model keeps aside (Gemini's ``VALIDATED`` mode is
    ``tool_choice: auto`` with schema enforcement), which ``client.recorded_request`` classifies
    (sent unasked, or a defect) once, instead of here."""
    wire = ctx.outcome.turns[turn].wire
    changed = json_path_set(wire.body, path, expected)
    if changed is None:
        return False
    try:
        with_expected = ctx.adapter.request_from_wire(changed, path=wire.path, tools=ctx.scenario.tools)
    except Exception:  # a body the reader cannot take with that value: not the same meaning
        return False
    got = ctx.read_back(turn)
    if without_details(with_expected) == without_details(got):
        return True
    return _equivalent(ctx, with_expected, got)


def _equivalent(ctx: CaseContext, expected: Any, got: Any) -> bool:
    """Do the two requests differ only where the table of equivalences (docs/equivalences.md) says the
    difference is spelling, a parameter sent unasked or a note? Then ``client.recorded_request`` shows it."""
    wire, table = ctx.adapter.wire_format, ctx.equivalences or bundled_table()
    same: dict[str, Any] = {"tools_offered": bool(got.tools), "left_open": frozenset()}
    found = compare_bodies(
        signed_first_call(without_equivalents(meaning(expected), wire, table, **same)),
        signed_first_call(without_equivalents(meaning(got), wire, table, **same)),
        turn=0,
        check="translation.wire_paths",
    )
    return all(classify(f, wire, table).kind != "defect" for f in found)


def _equal_at(body: Any, path: str, expected: Any) -> bool:
    found, value = json_path_get(body, path)
    return bool(found and value == expected)


class _Bodies:
    """The forms of a turn's request a ``wire:`` expectation may hold on, made when first asked for.

    An adapter's request: as sent. A black-box client's: as sent; then read back and written again by
    the reference adapter in the wire's own spelling (Gemini's snake_case and camelCase keys are one
    request); then written from its meaning alone (the choices the wire leaves open, such as a system
    prompt as a string or as text blocks, made as the reference adapter makes them)."""

    def __init__(self, ctx: CaseContext, turn: int) -> None:
        self.ctx, self.turn = ctx, turn
        self.made: list[Any] = [ctx.outcome.turns[turn].wire.body]

    def __iter__(self) -> Iterator[Any]:
        yield from self.made
        if self.ctx.client is None or len(self.made) == 3:
            return
        back = self.ctx.read_back(self.turn)
        if len(self.made) == 1:
            spelling = without_details(back, only=("spelling", "parts_spelling"))
            self.made.append(self.ctx.adapter.request_to_wire(spelling).body)
            yield self.made[1]
        self.made.append(self.ctx.adapter.request_to_wire(unwrapped_results(without_details(back))).body)
        yield self.made[2]


def _tool_names(ctx: CaseContext) -> CheckVerdict | None:
    check = "translation.tool_names"
    if not ctx.scenario.tools:
        return None
    rule = None if ctx.adapter.tools_in_prompt else NAME_RULES.get(ctx.adapter.wire_format)
    if ctx.client is not None:
        return _sent_tool_names(ctx, rule)
    wire_tools = ctx.adapter.tools_to_wire(ctx.scenario.tools)
    findings: list[Finding] = []
    seen: dict[str, str] = {}
    for tool in ctx.scenario.tools:
        wire_name = wire_tools.names.wire(tool.name)
        if rule is not None and not rule.match(wire_name):
            findings.append(
                Finding(
                    check=check,
                    message=f"wire name is not valid for {ctx.adapter.wire_format} ({rule.pattern})",
                    path=f"tools[{tool.name!r}]",
                    expected=rule.pattern,
                    actual=wire_name,
                )
            )
        if wire_name in seen:
            findings.append(
                Finding(
                    check=check,
                    message=f"the tools {seen[wire_name]!r} and {tool.name!r} share the wire name {wire_name!r}",
                    path=f"tools[{tool.name!r}]",
                )
            )
        seen[wire_name] = tool.name
        back = wire_tools.names.original(wire_name)
        if back != tool.name:
            findings.append(
                Finding(
                    check=check,
                    message=f"the wire name {wire_name!r} does not map back to the MCP name",
                    path=f"tools[{tool.name!r}]",
                    expected=tool.name,
                    actual=back,
                )
            )
    return verdict(check, findings)


def _sent_tool_names(ctx: CaseContext, rule: re.Pattern[str] | None) -> CheckVerdict | None:
    """A black-box client's tool names as it sent them (its own naming): valid for the wire and
    distinct; that they map back to the MCP names is ``translation.tool_definitions``."""
    check = "translation.tool_names"
    if not ctx.outcome.turns:
        return None
    wire = ctx.outcome.turns[0].wire
    sent = [t.name for t in ctx.adapter.request_from_wire(wire.body, path=wire.path).tools]
    findings: list[Finding] = []
    for number, name in enumerate(sent):
        if rule is not None and not rule.match(name):
            findings.append(
                Finding(
                    check=check,
                    message=f"wire name is not valid for {ctx.adapter.wire_format} ({rule.pattern})",
                    path=f"tools[{number}]",
                    expected=rule.pattern,
                    actual=name,
                    turn=0,
                )
            )
        if name in sent[:number]:
            findings.append(
                Finding(check=check, message=f"two tools share the wire name {name!r}", path=f"tools[{number}]", turn=0)
            )
    return verdict(check, findings)


def _tool_definitions(ctx: CaseContext) -> CheckVerdict | None:
    check = "translation.tool_definitions"
    if not ctx.scenario.tools or ctx.scenario.tool_choice == "none":
        return None  # with tool_choice none an adapter may leave the tools out (Ollama has no tool_choice)
    read = ctx.read_back(0)
    changed = {change.tool for change in ctx.outcome.turns[0].wire.schema_changes}
    canonical = canonical_schema if ctx.client is not None else input_schema
    expected = [
        {
            "name": t.name,
            "description": t.description or "",
            **({} if t.name in changed else {"input_schema": canonical(t.input_schema)}),
        }
        for t in ctx.scenario.tools
    ]
    actual = [
        {
            "name": t.name,
            "description": t.description or "",
            **({} if t.name in changed else {"input_schema": canonical(t.input_schema)}),
        }
        for t in read.tools
    ]
    return verdict(check, diff_findings(check, expected, actual, prefix="$.tools", turn=0))


def _tool_choice(ctx: CaseContext) -> CheckVerdict | None:
    check = "translation.tool_choice"
    scenario = ctx.scenario
    if scenario.tool_choice is None and scenario.parallel_tool_calls is None:
        return None
    read = ctx.read_back(0)
    findings: list[Finding] = []
    read_choice = read.tool_choice
    if read_choice is None and scenario.tool_choice == "auto":
        read_choice = "auto"  # every wire's default when tools are offered
    if read_choice is None and scenario.tool_choice == "none" and not read.tools:
        read_choice = "none"  # no tools on the wire: nothing can be called (Ollama has no tool_choice field)
    if scenario.tool_choice is not None and read_choice != scenario.tool_choice:
        findings.append(
            Finding(
                check=check,
                message="tool_choice read back from the wire differs",
                path="$.tool_choice",
                expected=scenario.tool_choice,
                actual=read.tool_choice,
                turn=0,
            )
        )
    if scenario.parallel_tool_calls is not None and read.parallel_tool_calls != scenario.parallel_tool_calls:
        findings.append(
            Finding(
                check=check,
                message="parallel_tool_calls read back from the wire differs",
                path="$.parallel_tool_calls",
                expected=scenario.parallel_tool_calls,
                actual=read.parallel_tool_calls,
                turn=0,
            )
        )
    return verdict(check, findings)


def _compact(value: Any, limit: int = 200) -> Any:
    """``value`` as it is, or as compact JSON cut at ``limit`` characters when it is an object or array."""
    if not isinstance(value, dict | list):
        return value
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _request_shape(ctx: CaseContext) -> CheckVerdict | None:
    check = "translation.request_shape"
    validator = request_schema(ctx.adapter.wire_format)
    if validator is None:
        return None
    findings: list[Finding] = []
    for turn in ctx.outcome.turns:
        for error in validator.iter_errors(turn.wire.body):
            path = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
            findings.append(
                Finding(
                    check=check,
                    message=f"not valid for the {ctx.adapter.wire_format} request schema: {error.message[:300]}",
                    path=path,
                    expected=f"{error.validator}: {_compact(error.validator_value)}",
                    actual=_compact(error.instance),
                    turn=turn.turn,
                )
            )
    return verdict(check, findings)
