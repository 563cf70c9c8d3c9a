"""Qwen-Agent's ``✿FUNCTION✿`` tool calling through a prompt, over the OpenAI-compatible chat wire.

What Qwen-Agent sends to an OpenAI-compatible server with ``fncall_prompt_type='qwen'``. Every
template below was checked against the source with the ``search`` tool (wire-formats.md §6a):

- ``QwenLM/Qwen-Agent`` ``qwen_agent/llm/fncall_prompts/qwen_fncall_prompt.py`` (commit bb52139):
  markers ``FN_NAME='✿FUNCTION✿'``, ``FN_ARGS='✿ARGS✿'``, ``FN_RESULT='✿RESULT✿'``,
  ``FN_EXIT='✿RETURN✿'``, ``FN_STOP_WORDS=[FN_RESULT, FN_EXIT]``; ``FN_CALL_TEMPLATE`` keys ``en``,
  ``zh``, ``en_parallel``, ``zh_parallel`` (an "info" part listing the tools, a blank line, a
  "format" part naming the markers); ``get_function_description``: ``### {name_for_human}\\n\\n
  {name_for_model}: {description} Parameters: {json.dumps(parameters, ensure_ascii=False)}
  {args_format}`` (zh: ``输入参数：``; ``code_interpreter`` asks for a fenced code block); tool
  descriptions joined by a blank line, tool names by ``,``; the block appended to the system
  message after ``\\n\\n``. History (``preprocess_fncall_messages``): a call is
  ``✿FUNCTION✿: {name}\\n✿ARGS✿: {arguments}`` inside the assistant message (``\\n`` before it when
  the message already has text; arguments starting with ````` get a ``\\n``); each result is
  appended to the same assistant message as ``\\n✿RESULT✿: {result}\\n✿RETURN✿: `` (a previous
  trailing ``\\n✿RETURN✿: `` removed first), so a whole multi-step exchange is one assistant
  message; a trailing ``✿RETURN✿: `` loses its ``: `` ("may form a single token"). Replies
  (``postprocess_fncall_messages``): a leading ``: `` or ``:`` is dropped, calls are split on
  ``✿FUNCTION✿:``, several ``✿ARGS✿:`` after one name are several calls (E21), a trailing comment
  after the arguments' last ``}`` is ignored (``remove_trailing_comment_of_fn_args``);
- ``qwen_agent/llm/function_calling.py`` (commit b28fc76): the stop words are added to ``stop``;
  ``parallel_function_calls`` defaults to False; ``simulate_response_completion_with_chat``: when
  the messages end with an assistant message (after tool results), it is appended to the user
  message before it after ``\\n\\n`` and the model answers in a new turn;
- ``qwen_agent/llm/base.py`` (commit 9331efb) and ``qwen_agent/utils/utils.py``: the language is
  ``zh`` when a system or user message has a character in ``[\\u4e00-\\u9fff]``, else ``en``.

This adapter sends exactly that, with: the language from ``provider_details["language"]`` (``en``
/ ``zh``) or detected the same way; the parallel template when ``parallel_tool_calls`` is true
(Qwen-Agent's default, the single-call template, otherwise); no tools block without tools or with
``tool_choice: "none"``; no default system message (Qwen-Agent adds "You are a helpful assistant."
when there is none); a failed tool's text prefixed ``Error: ``. Unlike Qwen-Agent, calls after the
first are kept when parallel calls were not asked for (they are what the model said) and text
after the calls is kept as text. ``tool_choice`` ``required`` / named (Qwen-Agent prefills
``✿FUNCTION✿: name``) is not supported.

Round trips (unified -> wire -> unified is the identity for tools, tool ``title`` (as
``name_for_human``), calls with their synthetic ids and arguments, results and ``is_error``)
except: an empty tool description (read back as None), a description that itself holds the text of a
whole next entry (`` Parameters: {...} Format the arguments as a JSON object.\\n\\n### x\\n\\nnext_tool: ``:
the text is ambiguous and is read as two entries), ``output_schema``/``annotations``,
reasoning parts, several text items of a result (joined by newlines), ``parallel_tool_calls:
false`` (refused) and ``true`` when there are no tools, a ``language`` option equal to the
detected one (not kept), ``tool_choice: "none"`` (no tools section: read back as no tools), a
result text starting ``Error: `` with ``is_error`` false, and history that ends with an assistant
message of text only (read back as part of the user message it continues; a continued turn is
split from the user text at the last blank line before its first marker, so text with a blank
line before the first call of that last turn moves to the user message)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

from conformance.adapters import _prompt, openai_chat
from conformance.adapters._prompt import ERROR_PREFIX
from conformance.adapters._prompt_parse import FN_ARGS, FN_EXIT, FN_NAME, FN_RESULT, QwenParser, json_text
from conformance.adapters._tool_output import WIRE_CARRIES, request_view
from conformance.adapters.base import Adapter, WireRequest, WireTools
from conformance.errors import ProviderError, UnsupportedContentError, UsageError, WireFormatError
from conformance.model import (
    JSONObject,
    Message,
    Part,
    Reasoning,
    Request,
    Response,
    StreamEvent,
    Text,
    Tool,
    ToolCall,
)

__all__ = [
    "ADAPTER",
    "capabilities",
    "error_from_wire",
    "request_from_wire",
    "request_to_wire",
    "response_from_wire",
    "stream_from_wire",
    "tools_to_wire",
]

NAME = "qwen"
STOP = (FN_RESULT, FN_EXIT)
"""``FN_STOP_WORDS``, sent as ``stop`` with every request."""

# --------------------------------------------------------------------------------------------
# Tables (the prompt text of qwen_fncall_prompt.py)
# --------------------------------------------------------------------------------------------

_INFO = {
    "zh": "# 工具\n\n## 你拥有如下工具：\n\n",
    "en": "# Tools\n\n## You have access to the following tools:\n\n",
}
"""``FN_CALL_TEMPLATE_INFO_*`` up to ``{tool_descs}``."""

_FORMAT = {
    "zh": (
        "## 你可以在回复中插入零次、一次或多次以下命令以调用工具：\n\n%s: 工具名称，必须是[",
        "]之一。\n%s: 工具输入\n%s: 工具结果\n%s: 根据工具结果进行回复，需将图片用![](url)渲染出来",
    ),
    "en": (
        "## When you need to call a tool, please insert the following command in your reply, which can be"
        " called zero or multiple times according to your needs:\n\n%s: The tool to use, should be one of [",
        "]\n%s: The input of the tool\n%s: Tool results\n%s: Reply based on tool results. Images need to be"
        " rendered as ![](url)",
    ),
    "zh_parallel": (
        "## 你可以在回复中插入以下命令以并行调用N个工具：\n\n%s: 工具1的名称，必须是[",
        "]之一\n%s: 工具1的输入\n%s: 工具2的名称\n%s: 工具2的输入\n...\n%s: 工具N的名称\n%s: 工具N的输入\n"
        "%s: 工具1的结果\n%s: 工具2的结果\n...\n%s: 工具N的结果\n%s: 根据工具结果进行回复，需将图片用![](url)渲染出来",
    ),
    "en_parallel": (
        "## Insert the following command in your reply when you need to call N tools in parallel:\n\n"
        "%s: The name of tool 1, should be one of [",
        "]\n%s: The input of tool 1\n%s: The name of tool 2\n%s: The input of tool 2\n...\n%s: The name of tool N"
        "\n%s: The input of tool N\n%s: The result of tool 1\n%s: The result of tool 2\n...\n%s: The result of"
        " tool N\n%s: Reply based on tool results. Images need to be rendered as ![](url)",
    ),
}
"""``FN_CALL_TEMPLATE_FMT_*`` split at ``{tool_names}``; ``%s`` are the markers in order."""

_MARKERS = {
    "zh": (FN_NAME, FN_ARGS, FN_RESULT, FN_EXIT),
    "en": (FN_NAME, FN_ARGS, FN_RESULT, FN_EXIT),
    "zh_parallel": (FN_NAME, FN_ARGS) * 3 + (FN_RESULT,) * 3 + (FN_EXIT,),
    "en_parallel": (FN_NAME, FN_ARGS) * 3 + (FN_RESULT,) * 3 + (FN_EXIT,),
}


def _fmt(key: str) -> tuple[str, str]:
    """The format part around ``{tool_names}``, markers filled in as upstream does (``%``)."""
    head, tail = _FORMAT[key]
    heads = head.count("%s")
    markers = _MARKERS[key]
    return head % markers[:heads], tail % markers[heads:]


_FORMATS = {key: _fmt(key) for key in _FORMAT}
_PARAMETERS = {"zh": " 输入参数：", "en": " Parameters: "}
_ARGS_FORMAT = {"zh": "此工具的输入应为JSON对象。", "en": "Format the arguments as a JSON object."}
_CODE_ARGS_FORMAT = {
    "zh": "此工具的输入应为Markdown代码块。",
    "en": "Enclose the code within triple backticks (`) at the beginning and end of the code.",
}
_CJK = re.compile("[\u4e00-\u9fff]")  # Qwen-Agent utils.has_chinese_chars
_RESULT = f"\n{FN_RESULT}: "
_RETURN = f"\n{FN_EXIT}: "
_TURNS = re.compile(f"({re.escape(_RESULT)}|{re.escape(_RETURN)}|\n{re.escape(FN_EXIT)}\\Z)")
_DECODER = json.JSONDecoder()

# --------------------------------------------------------------------------------------------
# Tools
# --------------------------------------------------------------------------------------------


def _function(tool: Tool) -> JSONObject:
    """A tool as Qwen-Agent's function dict (``name_for_human`` from the MCP ``title``)."""
    function: JSONObject = {"name": tool.name}
    if tool.title is not None:
        function["name_for_human"] = tool.title
    function["description"] = tool.description or ""
    function["parameters"] = dict(tool.input_schema)
    return function


def tools_to_wire(tools: Sequence[Tool]) -> WireTools:
    """MCP tools -> the function dicts the prompt describes (names and schemas unchanged)."""
    return WireTools(tools=[_function(t) for t in tools])


def _description(function: JSONObject, language: str) -> str:
    """``get_function_description``."""
    name = function["name"]
    args_format = (_CODE_ARGS_FORMAT if name == "code_interpreter" else _ARGS_FORMAT)[language]
    return (
        f"### {function.get('name_for_human', name)}\n\n{name}: {function['description']}"
        f"{_PARAMETERS[language]}{json_text(function['parameters'])} {args_format}"
    ).rstrip()


def _block(tools: Sequence[Tool], language: str, parallel: bool) -> str:
    functions = tools_to_wire(tools).tools
    head, tail = _FORMATS[language + ("_parallel" if parallel else "")]
    descriptions = "\n\n".join(_description(f, language) for f in functions)
    return f"{_INFO[language]}{descriptions}\n\n{head}{','.join(f['name'] for f in functions)}{tail}"


def _read_block(block: str, language: str) -> tuple[tuple[Tool, ...], bool]:
    """A tools block -> its tools and whether it is the parallel variant. The format section
    names the tools (``[name,name]``), which fixes where each description starts."""
    for parallel in (False, True):
        head, tail = _FORMATS[language + ("_parallel" if parallel else "")]
        at = block.rfind("\n\n" + head)
        if at != -1 and block.endswith(tail):
            names_text = block[at + 2 + len(head) : len(block) - len(tail)]
            names = names_text.split(",") if names_text else []
            return _read_descriptions(block[len(_INFO[language]) : at], names, language), parallel
    raise WireFormatError(f"{NAME}: the system prompt has a tools block whose format section is not the template's")


def _read_descriptions(text: str, names: Sequence[str], language: str) -> tuple[Tool, ...]:
    """``### human\\n\\nname: description Parameters: {json} args_format`` entries, blank-line
    separated, one per name. An entry ends where the next one's ``### human\\n\\nname: `` starts
    after an args format; its schema is the JSON object that ends right before the args format."""
    tools: list[Tool] = []
    position = 0
    for number, name in enumerate(names):
        label = f"\n\n{name}: "
        human_end = text.find(label, position)
        if not text.startswith("### ", position) or human_end == -1:
            raise WireFormatError(f"{NAME}: no description of tool {name!r} at {text[position:][:80]!r}")
        start = human_end + len(label)
        ends = [len(text)] if number == len(names) - 1 else _entry_ends(text, start, names[number + 1], language)
        for end in ends:
            if (parsed := _entry(text[start:end], language)) is not None:
                break
        else:
            raise WireFormatError(f"{NAME}: cannot read the description of tool {name!r}: {text[start:][:80]!r}")
        description, schema = parsed
        human = text[position + 4 : human_end]
        tools.append(
            Tool(
                name=name, description=description or None, input_schema=schema, title=human if human != name else None
            )
        )
        position = end + 2
    if position < len(text):
        raise WireFormatError(f"{NAME}: the tools block describes more tools than its format section names")
    return tuple(tools)


def _entry_ends(text: str, start: int, next_name: str, language: str) -> list[int]:
    """Where an entry may end: before a blank line, ``### `` and a line ending ``next_name: ``."""
    ends = []
    at = text.find("\n\n### ", start)
    while at != -1:
        after = text.find(f"\n\n{next_name}: ", at + 6)
        if after != -1 and "\n\n" not in text[at + 6 : after]:
            ends.append(at)
        at = text.find("\n\n### ", at + 1)
    return ends


def _entry(body: str, language: str) -> tuple[str, JSONObject] | None:
    """``description Parameters: {json} args_format`` -> (description, schema), or None."""
    for args_format in (_ARGS_FORMAT[language], _CODE_ARGS_FORMAT[language]):
        if not body.endswith(" " + args_format):
            continue
        json_end = len(body) - len(args_format) - 1
        at = body.rfind(_PARAMETERS[language], 0, json_end)
        while at != -1:
            try:
                schema, end = _DECODER.raw_decode(body, at + len(_PARAMETERS[language]))
            except ValueError:
                schema, end = None, -1
            if end == json_end and isinstance(schema, dict):
                return body[:at], schema
            at = body.rfind(_PARAMETERS[language], 0, at)
    return None


def _split_block(system: str | None) -> tuple[str | None, str | None, str]:
    """``(caller's system, tools block, language)``: the block is the last one of either language."""
    best: tuple[str | None, str | None, str] = (system, None, "en")
    for language, header in _INFO.items():
        rest, block = _prompt.split_system(system, header)
        if block is not None and (best[1] is None or len(block) < len(best[1])):
            best = (rest, block, language)
    return best


# --------------------------------------------------------------------------------------------
# Requests
# --------------------------------------------------------------------------------------------


def _detected_language(system: str | None, messages: Iterable[Message]) -> str:
    """Qwen-Agent's ``has_chinese_messages``: a CJK character in a system or user message."""
    texts = [system or ""]
    texts += [p.text for m in messages if m.role == "user" for p in m.parts if isinstance(p, Text)]
    return "zh" if any(_CJK.search(t) for t in texts) else "en"


def _language(request: Request) -> str:
    chosen = request.provider_details.get("language")
    if chosen is None:
        return _detected_language(request.system, request.messages)
    if chosen not in _INFO:
        raise UsageError(f"{NAME}: provider_details['language'] is {chosen!r}; use 'en' or 'zh' (or leave it unset)")
    return str(chosen)


def _call_text(call: ToolCall) -> str:
    arguments = call.arguments_raw or json_text(call.arguments if call.arguments is not None else {})
    if arguments.startswith("```"):  # "for markdown rendering"
        arguments = "\n" + arguments
    return f"{FN_NAME}: {call.name}\n{FN_ARGS}: {arguments}"


def _history_to_wire(messages: Sequence[Message]) -> list[Message]:
    """Qwen-Agent's ``preprocess_fncall_messages`` then ``simulate_response_completion_with_chat``."""
    out: list[Message] = []
    bot: str | None = None  # the assistant message being built (calls, results, answers)
    calls: tuple[ToolCall, ...] = ()
    for message in _prompt.tool_runs(messages):
        if message.role == "user":
            if bot is not None:
                out.append(Message(role="assistant", parts=(Text(text=bot),)))
                bot = None
            out.append(message)
        elif message.role == "assistant":
            bot = bot or ""
            for part in message.parts:
                if isinstance(part, Text):
                    bot += part.text
                elif isinstance(part, ToolCall):
                    bot += ("\n" if bot else "") + _call_text(part)
                elif not isinstance(part, Reasoning):
                    raise UnsupportedContentError(
                        f"{NAME}: assistant messages carry text and tool calls, not {part.kind}"
                    )
            calls = tuple(p for p in message.parts if isinstance(p, ToolCall))
        else:
            if bot is None:
                raise UnsupportedContentError(
                    f"{NAME}: tool results continue the assistant message that made the calls"
                )
            for result in _prompt.ordered_results(message.parts, calls, NAME):
                bot = bot.removesuffix(_RETURN) + _RESULT + _prompt.result_text(result, NAME) + _RETURN
            calls = ()
    if bot is None:
        return out
    bot = bot[:-2] if bot.endswith(f"{FN_EXIT}: ") else bot
    if not out or out[-1].role != "user":
        raise UnsupportedContentError(
            f"{NAME}: the assistant turn that ends the history is continued inside the user message before it"
            " (Qwen-Agent simulate_response_completion_with_chat), and there is none"
        )
    user = out.pop()
    last = user.parts[-1] if user.parts else None
    if isinstance(last, Text):
        parts: tuple[Part, ...] = (*user.parts[:-1], Text(text=f"{last.text}\n\n{bot}"))
    else:
        parts = (*user.parts, Text(text=f"\n\n{bot}"))
    out.append(replace(user, parts=parts))
    return out


def _continuation(message: Message) -> tuple[Message | None, str] | None:
    """A last user message that continues an assistant turn -> (the user message, the turn)."""
    last = message.parts[-1] if message.parts else None
    if not isinstance(last, Text):
        return None
    found = [at for marker in (FN_NAME + ":", _RESULT, "\n" + FN_EXIT) if (at := last.text.find(marker)) != -1]
    cut = last.text.rfind("\n\n", 0, min(found)) if found else -1
    if cut == -1:
        return None
    head = last.text[:cut]
    parts = (*message.parts[:-1], Text(text=head)) if head or len(message.parts) == 1 else message.parts[:-1]
    return replace(message, parts=parts), last.text[cut + 2 :]


def _turns(text: str, where: int) -> list[Message]:
    """One wire assistant message -> the assistant and tool messages it holds."""
    out: list[Message] = []
    calls: tuple[ToolCall, ...] = ()
    answers: list[tuple[str, bool, str | None]] = []

    def assistant(segment: str) -> None:
        nonlocal calls
        if answers:
            out.append(_prompt.result_message(answers, calls, NAME, where))
            answers.clear()
        parts = _prompt.parse_text(segment, QwenParser(NAME, reply=False))
        if parts:
            calls = tuple(p for p in parts if isinstance(p, ToolCall))
            out.append(Message(role="assistant", parts=parts))

    pieces = _TURNS.split(text)
    assistant(pieces[0])
    for marker, payload in zip(pieces[1::2], pieces[2::2], strict=True):
        if marker == _RESULT:
            answers.append((payload.removeprefix(ERROR_PREFIX), payload.startswith(ERROR_PREFIX), None))
        else:
            assistant(payload)
    if answers:
        out.append(_prompt.result_message(answers, calls, NAME, where))
    return out


def _history_from_wire(messages: Sequence[Message]) -> list[Message]:
    wire = list(messages)
    tail: str | None = None
    if wire and wire[-1].role == "user" and (split := _continuation(wire[-1])) is not None:
        user, tail = split
        wire[-1:] = [user] if user is not None else []
    out: list[Message] = []
    for index, message in enumerate(wire):
        text = _prompt.only_text(message)
        if message.role == "assistant" and text is not None:
            out.extend(_turns(text, index))
        else:
            out.append(message)
    if tail is not None:
        out.extend(_turns(tail, len(wire)))
    return out


def request_to_wire(request: Request) -> WireRequest:
    """Unified request -> chat body: tools in the system prompt, the exchange in the text."""
    request, notes = request_view(request, carries=WIRE_CARRIES[NAME], wire=NAME)  # docs/mcp.md
    block = None
    if _prompt.check_request(request, NAME):
        block = _block(request.tools, _language(request), bool(request.parallel_tool_calls))
    messages = _history_to_wire(request.messages)
    system = _prompt.merge_system(request.system, block)
    wire = _prompt.wire_request(request, system=system, messages=messages, stop=STOP)
    return replace(wire, notes=wire.notes + notes) if notes else wire


def request_from_wire(body: Mapping[str, Any], *, path: str = "", tools: Sequence[Tool] = ()) -> Request:
    """Chat body -> unified request: tools from the system prompt, calls and results from the text."""
    base = _prompt.read_request(body, stop=STOP)
    system, block, language = _split_block(base.system)
    messages = tuple(_history_from_wire(base.messages))
    details = dict(base.provider_details)
    found: tuple[Tool, ...] = ()
    parallel = None
    if block is not None:
        found, is_parallel = _read_block(block, language)
        parallel = True if is_parallel else None
        if language != _detected_language(system, messages):
            details["language"] = language
    return replace(
        base,
        system=system,
        messages=messages,
        tools=(*base.tools, *found),
        parallel_tool_calls=parallel,
        provider_details=details,
    )


# --------------------------------------------------------------------------------------------
# Responses and streams
# --------------------------------------------------------------------------------------------


def response_from_wire(body: Mapping[str, Any], *, tools: Sequence[Tool] = ()) -> Response:
    """A ``chat.completion`` body -> unified response; ``✿FUNCTION✿`` / ``✿ARGS✿`` become calls."""
    return _prompt.response_from_body(body, QwenParser(NAME, reply=True), tools)


def stream_from_wire(chunks: Iterable[bytes], *, tools: Sequence[Tool] = ()) -> Iterator[StreamEvent]:
    """SSE bytes -> events as they arrive; a call leaves when the next marker or the end arrives."""
    return _prompt.stream_from_bytes(chunks, QwenParser(NAME, reply=True), tools)


# --------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------


def error_from_wire(
    status: int, headers: Mapping[str, str], body: bytes | str | Mapping[str, Any] | None
) -> ProviderError:
    """The chat wire's errors (``openai_chat``)."""
    return openai_chat.error_from_wire(status, headers, body)


# --------------------------------------------------------------------------------------------
# Adapter
# --------------------------------------------------------------------------------------------

capabilities = frozenset({"streaming", "parallel_tool_calls", "system_prompt", "tool_choice_auto", "tool_choice_none"})

ADAPTER = Adapter(
    name=NAME,
    wire_format="openai_chat",
    tools_in_prompt=True,
    prompt_format=NAME,
    capabilities=capabilities,
    tools_to_wire=tools_to_wire,
    request_to_wire=request_to_wire,
    request_from_wire=request_from_wire,
    response_from_wire=response_from_wire,
    stream_from_wire=stream_from_wire,
    error_from_wire=error_from_wire,
    known_gaps={
        "roundtrip.cache_prefix@multi_turn/follow_up_question": "Qwen-Agent appends an answered tool loop to the"
        " user message while it runs and takes it back out at the next user turn"
        " (simulate_response_completion_with_chat, qwen_agent/llm/function_calling.py b28fc76): the prefix"
        " moves by design",
    },
)
