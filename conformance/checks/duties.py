"""Duties: a finding about a duty the client does not take on is left to the caller, not a defect.

A client declares the duties it takes on (``conformance.clients.contract.DUTIES``, docs/clients.md
"Duties"): every client **transports** (what the caller gave reaches the provider unchanged, what the
provider sent reaches the caller); a framework that promises to adapt the caller's tools also maps
**tool names** and **tool schemas** to what the provider accepts. An official SDK passes the
caller's tools through as given: when a name with ``.`` then reaches OpenAI, the SDK did what it
offered, and the caller has a job to do. Such a finding is reported as ``left`` (left to the caller),
with what the caller must do and what the provider answers otherwise, and is never a FAIL and
never a PASS.

Only a finding the client *passed through unchanged* is left: a name or a schema the caller gave,
sent as given, that the provider does not accept. A client that changes what the caller gave (drops
a schema keyword, renames a tool badly) fails as before, whatever it declares.

============================  =====================================================================
duty                          findings it covers (the client sent the caller's value as given)
============================  =====================================================================
``tool_names``                ``translation.tool_names`` and ``translation.request_shape`` on a tool
                              name; the model's calls to names the caller never mapped
                              (``roundtrip.*``, ``streaming.*``, ``client.recorded_request`` on a
                              call's name) when the names went out unmapped
``tool_schemas``              ``translation.request_shape`` inside a tool's input schema
``tool_results``              ``translation.tool_result_content``, and any check's finding on the
                              content of a tool result the caller gave from an MCP result with more
                              than text (structured content, images, audio, resources, resource
                              links; ``client.recorded_request``, ``translation.wire_paths``): what it
                              became on the wire, where the caller wrote the wire's content itself
                              (an official SDK, LiteLLM's OpenAI-format tool message)
``quirks``                    ``streaming.*``, ``roundtrip.*`` and ``recovery.*`` in a scenario tagged
                              ``deviation`` (or ``deviation:<wire>``: what some providers and gateways
                              send outside the wire's rules): the library handed it on as it came
============================  =====================================================================

One case is left to every client's caller whatever it declares: Anthropic hands on a tool_use block
cut by ``max_tokens`` with its input parsed as far as it got, marked only by the stop reason
(``CUT_CALL_REMEDY``); a client that hands it on so, with finish reason ``length``, keeps the wire's
meaning, and running the call or not is the caller's decision.

A quirk the client chokes on in its own way stays a defect: an exception outside its classes
(``client.typed_errors``), a request it should not have sent (``client.*``, ``translation.*``).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Collection, Mapping, Sequence

from conformance.checks._common import CaseContext, verdict
from conformance.checks._meaning import canonical_schema
from conformance.checks._names import NAME_RULES
from conformance.model import Request, Text, ToolCall, ToolResult
from conformance.verdicts import CheckVerdict, Finding

__all__ = ["CUT_CALL_REMEDY", "REMEDIES", "TOOL_RESULT_CHECK", "deviates", "duty_of", "left_to_caller"]

TOOL_RESULT_CHECK = "translation.tool_result_content"
"""The check of what a tool result's MCP content became on the wire (docs/mcp.md, "What the model receives"):
its findings are about the duty ``tool_results``."""

_NAME_PATHS = re.compile(
    r"^\$\.tools\[\d+\]\.(?:function\.name|name|(?:functionDeclarations|function_declarations)\[\d+\]\.name)$"
)
_SCHEMA_PATHS = re.compile(
    r"^\$\.tools\[(\d+)\]\.(?:input_schema|function\.parameters|parameters"
    r"|(?:functionDeclarations|function_declarations)\[(\d+)\]\.(?:parameters|parametersJsonSchema|parameters_json_schema))"
    r"(?:[.\[]|$)"
)
_CALL_NAME = re.compile(r"(?:^|\.)(?:tool_calls\[\d+\]\.name|name)$|tool_call_name")
_READ_BACK_RESULT = re.compile(r"^\$\.messages\[(\d+)\]\.parts\[(\d+)\]\.(?:content|text)(?:[.\[]|$)")
"""A read-back path into a tool result's content (``translation.tool_result_content``; ``client.recorded_request``
compares its ``text`` and its other ``content``)."""
_PROJECTED_RESULT = re.compile(r"^\$\.parts\[(\d+)\]\.(?:result|images)(?:[.\[]|$)")
"""A path of ``roundtrip.request``'s projection into a tool result (``roundtrip.request_projection``: the request's
parts in order, empty texts and reasoning left out)."""
_WIRE_RESULT: Mapping[str, re.Pattern[str]] = {
    "openai_chat": re.compile(r"^\$\.messages\[(\d+)\]\.content(?:[.\[]|$)()"),
    "ollama": re.compile(r"^\$\.messages\[(\d+)\]\.(?:content|images)(?:[.\[]|$)()"),
    "openai_responses": re.compile(r"^\$\.input\[(\d+)\]\.output(?:[.\[]|$)()"),
    "anthropic": re.compile(r"^\$\.messages\[(\d+)\]\.content\[(\d+)\]\.content(?:[.\[]|$)"),
    "gemini": re.compile(r"^\$\.contents\[(\d+)\]\.parts\[(\d+)\]\.functionResponse\.(?:response|parts)(?:[.\[]|$)"),
}
"""Per wire, a path of the sent body into a tool result's content (``translation.wire_paths``): the
message (and block) index; the body at that index must be a tool result (``_is_result_slot``)."""

_RESULT_RULE = (
    "; structured content without a text block goes as its serialized JSON (the MCP spec: a tool returning"
    " structured content SHOULD also return the serialized JSON in a TextContent block), a resource link as a"
    " text naming it, and a block the slot cannot carry as a text saying what was left out: a block dropped"
    ' silently leaves the model answering without knowing it was there (docs/mcp.md, "What the model receives")'
)
REMEDIES: Mapping[tuple[str, str], str] = {
    ("tool_names", "openai_chat"): (
        "tool names outside ^[a-zA-Z0-9_-]{1,64}$ reach OpenAI as given: the API answers 400 invalid_value"
        " (param tools[N].function.name); map them to valid names yourself and map the model's calls back"
        " (wire-formats.md §1a)"
    ),
    ("tool_names", "openai_responses"): (
        "tool names outside ^[a-zA-Z0-9_-]{1,64}$ reach OpenAI as given: the API answers 400 invalid_value"
        " (param tools[N].name); map them to valid names yourself and map the model's calls back"
        " (wire-formats.md §1a, §2a)"
    ),
    ("tool_names", "anthropic"): (
        "tool names outside ^[a-zA-Z0-9_-]{1,128}$ reach Anthropic as given: the API answers 400"
        " (tools.N.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'); map them yourself"
        " and map the model's calls back (wire-formats.md §3a)"
    ),
    ("tool_names", "gemini"): (
        "tool names that do not start with a letter or _ and use only [a-zA-Z0-9_.:-] (128 at most) reach"
        " Gemini as given: the API answers 400 INVALID_ARGUMENT (Invalid function name); map them yourself"
        " and map the model's calls back (wire-formats.md §4a)"
    ),
    ("tool_names", "ollama"): (
        "Ollama renders tool names into the model's prompt as given (no name rule is enforced,"
        " wire-formats.md §5a); a model may not reproduce a name outside [a-zA-Z0-9_-] in its calls:"
        " map such names yourself if your model needs it"
    ),
    ("tool_schemas", "anthropic"): (
        "the input schema reaches Anthropic as given: the API answers 400 when it is not an object schema"
        " (input_schema.type must be 'object', wire-formats.md §3a); give every tool an object schema"
    ),
    ("tool_schemas", "gemini"): (
        "the input schema reaches Gemini as given: the API answers 400 INVALID_ARGUMENT on keywords it does"
        " not support in parameters (wire-formats.md §4a); adapt the schema yourself or send it as"
        " parametersJsonSchema"
    ),
    ("tool_results", "openai_chat"): (
        "you write the tool message from the MCP result: it carries text only (content: a string or text parts,"
        " openai/types/chat/chat_completion_tool_message_param.py), so images, audio and blobs cannot go there"
        + _RESULT_RULE
    ),
    ("tool_results", "openai_responses"): (
        "you write the function_call_output from the MCP result: it takes text, images and files (output: a string"
        " or input_text/input_image/input_file items, openai/types/responses/response_input_item_param.py), not"
        " audio" + _RESULT_RULE
    ),
    ("tool_results", "anthropic"): (
        "you write the tool_result block from the MCP result: it takes text, image and document blocks"
        " (anthropic/types/tool_result_block_param.py), not audio" + _RESULT_RULE
    ),
    ("tool_results", "gemini"): (
        "you write the functionResponse from the MCP result: a response object and media parts"
        " (FunctionResponse.response and .parts, google/genai/types.py)" + _RESULT_RULE
    ),
    ("tool_results", "ollama"): (
        "you write the tool message from the MCP result: its text content and images"
        " (Message.content, Message.images, ollama/_types.py), nothing else" + _RESULT_RULE
    ),
}
"""(duty, wire) -> what the caller must do, and what the provider answers otherwise."""

_GENERIC = {
    "tool_names": "the tool names reach the provider as given: map them to names it accepts yourself",
    "tool_schemas": "the input schemas reach the provider as given: adapt them to what it accepts yourself",
    "tool_results": "the tool results reach the provider as you wrote them: map each MCP result to the wire's"
    " tool-result slot yourself" + _RESULT_RULE,
}

_QUIRK_CHECKS = ("streaming.", "roundtrip.", "recovery.")
"""The checks of how an answer is read: what a quirk changes when a library hands it on as it came."""


def deviates(tags: Collection[str], wire: str) -> bool:
    """Does a scenario with ``tags`` play, on ``wire``, what providers send outside the wire's rules?
    (``deviation``: on every wire; ``deviation:<wire>``: on that one, such as a ``reasoning_content``
    delta on OpenAI Chat.) The tag ``quirk`` names the emulator's quirks, which are often a wire's own
    documented shapes (Gemini's retry delay in the body) and are judged as any answer."""
    return "deviation" in tags or f"deviation:{wire}" in tags


def _quirk_remedy(ctx: CaseContext) -> str:
    behavior = ctx.scenario.behavior.strip().rstrip(".")
    return (
        f"a provider quirk reaches you as the provider sent it ({behavior}); the library does not promise"
        " to read such answers: handle it in your code where your providers or gateways send it"
    )


CUT_CALL_REMEDY = (
    "Anthropic marks a tool_use block cut by max_tokens only by stop_reason max_tokens, its input parsed as far as it"
    " got (https://platform.claude.com/docs/en/build-with-claude/handling-stop-reasons, incomplete tool use blocks;"
    " the SDK keeps the partial input by design, anthropics/anthropic-sdk-python#794): check the finish reason and"
    " never run a call from an answer cut by the limit"
)
"""What the caller does with a call Anthropic cut at the output limit (wire-formats.md §3c)."""


def _cut_call(finding: Finding, ctx: CaseContext) -> bool:
    """An Anthropic call cut by the output limit handed on as the object the provider's own answer would
    hold (the finish reason ``length`` reached the caller): the wire's meaning, left to the caller to act on."""
    if ctx.adapter.wire_format != "anthropic" or "length" not in ctx.scenario.tags:
        return False
    if finding.check == "recovery.arguments_error":
        return isinstance(finding.actual, Mapping)
    return False


def left_to_caller(
    verdicts: Sequence[CheckVerdict], ctx: CaseContext, duties: Collection[str]
) -> tuple[CheckVerdict, ...]:
    """``verdicts`` with every defect about a duty the client does not take on made ``left``, and an
    Anthropic call cut by the output limit (``CUT_CALL_REMEDY``) left to every client's caller.

    A client that takes on ``tool_results`` is judged on the content of an MCP result by
    ``translation.tool_result_content`` alone (what the model lost: ``checks/tool_output.client_findings``):
    the other checks' findings on that content (``client.recorded_request``'s text, ``roundtrip.request``'s
    result, ``translation.wire_paths`` into the slot) compare the library's spelling with ours, and are
    dropped. Its flag (``is_error``) and its call id stay theirs."""
    missing = {"tool_names", "tool_schemas", "tool_results", "quirks"} - set(duties)
    if ctx.client is None:
        return tuple(verdicts)
    wire = ctx.adapter.wire_format
    out: list[CheckVerdict] = []
    for v in verdicts:
        if v.status != "fail":
            out.append(v)
            continue
        findings = []
        for f in v.findings:
            duty = duty_of(f, ctx) if f.kind == "defect" else None
            if duty == "tool_results" and "tool_results" in duties and f.check != TOOL_RESULT_CHECK:
                continue  # the content of an MCP result is one fact, judged once: by TOOL_RESULT_CHECK
            if f.kind == "defect" and _cut_call(f, ctx):
                f = dataclasses.replace(f, kind="left", remedy=CUT_CALL_REMEDY)
            elif duty in missing:
                remedy = _quirk_remedy(ctx) if duty == "quirks" else REMEDIES.get((duty, wire), _GENERIC[duty])
                f = dataclasses.replace(f, kind="left", remedy=remedy)
            findings.append(f)
        out.append(dataclasses.replace(verdict(v.check, findings), message=v.message))
    return tuple(out)


def duty_of(finding: Finding, ctx: CaseContext) -> str | None:
    """The duty a defect finding is about, when the client passed the caller's value through as
    given (None: a transport defect, or not about a duty)."""
    names = {t.name for t in ctx.scenario.tools}
    check, path = finding.check, finding.path
    if deviates(ctx.scenario.tags, ctx.adapter.wire_format) and check.startswith(_QUIRK_CHECKS):
        return "quirks"
    if check == TOOL_RESULT_CHECK or _in_mcp_result(finding, ctx):
        return "tool_results"
    if check == "translation.tool_names":
        return "tool_names" if finding.actual in names else None
    if check == "translation.request_shape":
        if _NAME_PATHS.match(path):
            return "tool_names" if finding.actual in names else None
        schema = _SCHEMA_PATHS.match(path)
        if schema is not None and _schema_as_given(ctx, int(schema.group(1)), schema.group(2)):
            return "tool_schemas"
        return None
    if _CALL_NAME.search(path) and _names_went_unmapped(ctx):
        mapped_back = finding.expected in names and finding.actual not in names
        return "tool_names" if mapped_back or check == "translation.tool_definitions" else None
    return None


def _rich(result: ToolResult) -> bool:
    """Does an MCP result need the rule of docs/mcp.md beyond its text (a block other than text, or
    structured content)?"""
    mcp = result.provider_details.get("mcp")
    structured = isinstance(mcp, Mapping) and "structured_content" in mcp
    return structured or any(not isinstance(item, Text) for item in result.content)


def _results(request: Request) -> dict[str, ToolResult]:
    return {p.call_id: p for m in request.messages for p in m.parts if isinstance(p, ToolResult)}


def _in_mcp_result(finding: Finding, ctx: CaseContext) -> bool:
    """Is ``finding`` about the content of a tool result the caller gave from an MCP result that needs
    the rule (``_rich``): what the wire's tool-result slot got where the caller wrote it (any check:
    ``client.recorded_request`` and ``translation.wire_paths`` see the same content)?"""
    if ctx.client is None or not ctx.outcome.turns:
        return False
    turn = finding.turn if finding.turn is not None and 0 <= finding.turn < len(ctx.outcome.turns) else -1
    given = _results(ctx.outcome.turns[turn].request)
    if not any(_rich(r) for r in given.values()):
        return False
    read_back = _READ_BACK_RESULT.match(finding.path)
    if read_back is not None:
        messages = ctx.read_back(turn if turn >= 0 else len(ctx.outcome.turns) - 1).messages
        i, j = int(read_back.group(1)), int(read_back.group(2))
        # the compared form may have moved a system message out of the messages (``_meaning._system_first``); a
        # wire without call ids (Gemini) reads back ids of its own: then the caller's result at that place
        caller = ctx.outcome.turns[turn].request.messages
        for message, mine in zip(messages[i : i + 2], caller[i : i + 2], strict=False):
            part = message.parts[j] if j < len(message.parts) else None
            if isinstance(part, ToolResult):
                same = mine.parts[j] if j < len(mine.parts) else None
                result = given.get(part.call_id, same if isinstance(same, ToolResult) else None)
                return result is not None and _rich(result)
        return False
    projected = _PROJECTED_RESULT.match(finding.path)
    if projected is not None:
        parts = [p for m in ctx.outcome.turns[turn].request.messages for p in m.parts if _projected(p)]
        k = int(projected.group(1))
        found = parts[k] if k < len(parts) else None
        return isinstance(found, ToolResult) and _rich(found)
    wire = ctx.adapter.wire_format
    pattern = _WIRE_RESULT.get(wire)
    match = pattern.match(finding.path) if pattern is not None else None
    if match is None:
        return False
    return _is_result_slot(ctx.outcome.turns[turn].wire.body, wire, int(match.group(1)), match.group(2))


def _projected(part: object) -> bool:
    """Is ``part`` one of ``roundtrip.request_projection``'s parts (a non-empty text, a call, a result)?"""
    return (isinstance(part, Text) and bool(part.text)) or isinstance(part, ToolCall | ToolResult)


def _is_result_slot(body: object, wire: str, index: int, inner: str | None) -> bool:
    """Is the body's ``index``-th message (its ``inner``-th block) the wire's tool-result slot?"""
    key = {"openai_responses": "input", "gemini": "contents"}.get(wire, "messages")
    items = body.get(key) if isinstance(body, Mapping) else None
    item = items[index] if isinstance(items, list) and index < len(items) else None
    if not isinstance(item, Mapping):
        return False
    if wire in ("openai_chat", "ollama"):
        return item.get("role") == "tool"
    if wire == "openai_responses":
        return item.get("type") == "function_call_output"
    blocks = item.get("content" if wire == "anthropic" else "parts")
    block = blocks[int(inner)] if inner and isinstance(blocks, list) and int(inner) < len(blocks) else None
    if not isinstance(block, Mapping):
        return False
    if wire == "anthropic":
        return block.get("type") == "tool_result"
    return "functionResponse" in block or "function_response" in block  # E32: the API takes both spellings


def _sent_tools(ctx: CaseContext) -> list[tuple[str, object]]:
    if not ctx.outcome.turns:
        return []
    return [(t.name, t.input_schema) for t in ctx.read_back(0).tools]


def _names_went_unmapped(ctx: CaseContext) -> bool:
    """Did the client send the caller's tool names as given, some of them invalid for the wire?"""
    sent = [name for name, _ in _sent_tools(ctx)]
    given = [t.name for t in ctx.scenario.tools]
    rule = NAME_RULES.get(ctx.adapter.wire_format)
    return sent == given and rule is not None and any(not rule.match(n) for n in given)


def _schema_as_given(ctx: CaseContext, index: int, inner: str | None) -> bool:
    """Is the schema of the ``index``-th tool sent (Gemini: of its ``inner``-th declaration) the
    caller's, unchanged (in the canonical spelling of ``translation.tool_definitions``)?"""
    body = ctx.outcome.turns[0].wire.body if ctx.outcome.turns else None
    tools = body.get("tools") if isinstance(body, Mapping) else None
    if not isinstance(tools, list) or index >= len(tools):
        return False
    position = index if inner is None else int(inner)  # Gemini: one tools entry holds the declarations
    sent = _sent_tools(ctx)
    if position >= len(sent) or position >= len(ctx.scenario.tools):
        return False
    given = ctx.scenario.tools[position]
    name, schema = sent[position]
    return name == given.name and canonical_schema(schema) == canonical_schema(given.input_schema)  # type: ignore[arg-type]
