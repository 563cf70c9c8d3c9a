"""The prompt tool-calling formats the emulator answers in (pure): Qwen-Agent ``✿FUNCTION✿``, Hermes
``<tool_call>`` and the generic ``<function_call>``.

A prompt adapter (``conformance.adapters.qwen``, ``hermes``, ``function_call``) sends an ordinary
OpenAI Chat request without ``tools``: the tools are described in the system prompt, and the model
writes its calls as assistant *text*. The emulator recognises such a request by the tools block
its system prompt ends with (``detect_format``), then plays the scripted reply as the text a model
trained on that format writes (``render_text``), on the plain chat wire: ``content`` only, no
``tool_calls``, and ``finish_reason`` ``stop`` where a native reply would say ``tool_calls`` (the
server does not know the text holds calls).

What is written, per format (the templates the adapters cite; a call whose scenario gave an
arguments *object* gets that object as ``json.dumps``, the templates' ``tojson``; a call given as
``arguments_raw`` only, e.g. malformed JSON or ``\\uXXXX`` escapes, gets exactly that text where the
arguments go):

- ``qwen`` (``qwen_agent/llm/fncall_prompts/qwen_fncall_prompt.py``): ``text\\n✿FUNCTION✿: name\\n
  ✿ARGS✿: {...}``, parallel calls one after the other (the ``*_parallel`` template's
  ``✿FUNCTION✿``/``✿ARGS✿`` pairs), then the ``\\n`` that precedes the stop word ``✿RESULT✿``
  (generation stops there; ``postprocess_fncall_messages`` strips that ``\\n``). When the request
  continues an exchange (its last message ends with ``✿RETURN✿``, whose ``: `` Qwen-Agent trims
  off), the reply starts with the ``: `` the model completes (stripped again by the post-processor).
  Empty arguments text is an empty ``✿ARGS✿:`` line.
- ``hermes`` (the Qwen2.5 chat template, Qwen-Agent ``nous_fncall_prompt.py``): ``text`` then
  ``\\n<tool_call>\\n{"name": "name", "arguments": {...}}\\n</tool_call>`` per call; the first block
  without the ``\\n`` when there is no text. Empty arguments text is ``"arguments": ""`` (what the
  template's ``tojson`` writes for an empty argument string, E3).
- ``function_call`` (``conformance.adapters.function_call``'s template): ``text`` then
  ``\\n<function_call>{"name": "name", "arguments": {...}}</function_call>`` per call; empty
  arguments text as for Hermes.

A reply cut by the length limit (``finish: length``) with calls stops right after its last call's
arguments text: no closing ``}``/tag (the model was cut mid-call). Reasoning is not written into the
text: as on the native chat wire it travels only as ``reasoning_content`` (quirk, a server with a
reasoning parser); the other quirks concern native tool-call fragments and have no effect here.

Streams cut the text with ``pieces``: token-like fragments (``_deterministic.tokens``), so every
marker arrives in several content deltas (``<`` · ``tool_cal`` · ``l`` · ``>``, ``✿`` ·
``FUNCTION`` · ``✿:``) and the adapters' tag parsers meet markers split across chunks.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from conformance.emulator._deterministic import tokens
from conformance.scenarios.values import Reply, ScriptedCall

__all__ = [
    "KNOWN_QUIRKS",
    "PROMPT_FORMATS",
    "continues_exchange",
    "detect_format",
    "pieces",
    "prompt_reply",
    "render_text",
]

PROMPT_FORMATS = ("qwen", "hermes", "function_call")
"""The prompt formats the emulator knows (each named after the adapter that speaks it)."""

KNOWN_QUIRKS = frozenset({"reasoning_content"})
"""Quirks that change a prompt-format reply (the rest only shape native tool-call fragments)."""

FN_NAME = "✿FUNCTION✿"
FN_ARGS = "✿ARGS✿"
FN_RESULT = "✿RESULT✿"
FN_EXIT = "✿RETURN✿"

_SYSTEM_MARKERS: Mapping[str, tuple[str, ...]] = {
    # the format sections of Qwen-Agent's FN_CALL_TEMPLATE (en and zh, single and parallel)
    "qwen": (f"\n{FN_ARGS}: The input of ", f"\n{FN_ARGS}: 工具"),
    # the Qwen2.5 / Nous template sentence introducing the call format
    "hermes": ("<tool_call></tool_call> XML tags:\n<tool_call>",),
    # function_call's template sentence
    "function_call": ("write a <function_call></function_call> block",),
}
"""Text only each format's tools block holds (``docs/emulator.md``, "Prompt formats")."""

_STOP_MARKERS: Mapping[str, str] = {FN_RESULT: "qwen", "<function_result>": "function_call"}
"""Stop words the adapters always send (Qwen-Agent ``FN_STOP_WORDS``; function_call's ``stop``)."""

_HISTORY_MARKERS: Mapping[str, str] = {
    f"{FN_NAME}: ": "qwen",
    "<tool_call>\n": "hermes",
    "<tool_response>\n": "hermes",
    "<function_call>{": "function_call",
    "<function_result>{": "function_call",
}
"""Calls and results written into the history's text, for a request that offers no tools now."""


# --------------------------------------------------------------------------------------------
# Detection
# --------------------------------------------------------------------------------------------


def _texts(content: Any) -> Iterable[str]:
    """The text of a chat message's ``content`` (a string or a list of ``text`` parts)."""
    if isinstance(content, str):
        yield content
    elif isinstance(content, list):
        for part in content:
            if isinstance(part, Mapping) and isinstance(part.get("text"), str):
                yield part["text"]


def _messages(body: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    messages = body.get("messages")
    return [m for m in messages if isinstance(m, Mapping)] if isinstance(messages, list) else []


def detect_format(body: Mapping[str, Any]) -> str | None:
    """The prompt format of a chat request body, or None for a native (or undecidable) request.

    A request with a ``tools`` field is native. Otherwise the system prompt decides: the format
    whose tools-block text appears last in it (a block is appended after the caller's own system
    text). Without a tools block (no tools offered, ``tool_choice: "none"``) the stop words the
    adapters send decide (Qwen-Agent ``✿RESULT✿``, function_call ``<function_result>``), then calls
    or results written into the history's text. A plain text request is None: the native answer
    is the same text.
    """
    if body.get("tools"):
        return None
    messages = _messages(body)
    system = "".join(
        text for m in messages if m.get("role") in ("system", "developer") for text in _texts(m.get("content"))
    )
    best, found = -1, None
    for fmt, markers in _SYSTEM_MARKERS.items():
        at = max(system.rfind(marker) for marker in markers)
        if at > best:
            best, found = at, fmt
    if found is not None:
        return found
    stop = body.get("stop")
    for word in [stop] if isinstance(stop, str) else stop if isinstance(stop, list) else []:
        if isinstance(word, str) and word in _STOP_MARKERS:
            return _STOP_MARKERS[word]
    for message in messages:
        if message.get("role") in ("assistant", "user"):
            for text in _texts(message.get("content")):
                for marker, fmt in _HISTORY_MARKERS.items():
                    if marker in text:
                        return fmt
    return None


def continues_exchange(body: Mapping[str, Any]) -> bool:
    """Whether a Qwen-Agent request ends inside an exchange: its last message ends with
    ``✿RETURN✿`` (results appended, ``: `` trimmed; ``simulate_response_completion_with_chat`` puts
    that assistant text at the end of the last user message)."""
    messages = _messages(body)
    if not messages:
        return False
    return "".join(_texts(messages[-1].get("content"))).endswith(FN_EXIT)


# --------------------------------------------------------------------------------------------
# Rendering
# --------------------------------------------------------------------------------------------


def _json(value: Any) -> str:
    """JSON as the templates write it (``tojson`` / ``json.dumps``: ``", "`` and ``": "``)."""
    return json.dumps(value, ensure_ascii=False)


def _arguments(call: ScriptedCall, *, empty: str) -> str:
    """The arguments as the model writes them: the object as JSON, else the raw text verbatim
    (``empty`` when that text is empty)."""
    if call.arguments is not None:
        return _json(call.arguments)
    return call.arguments_raw if call.arguments_raw.strip() else empty


def _qwen_call(call: ScriptedCall) -> str:
    return f"{FN_NAME}: {call.name}\n{FN_ARGS}: {_arguments(call, empty='')}"


def _tag_call(call: ScriptedCall, cut: bool, open_tag: str, close_tag: str, separator: str) -> str:
    arguments = _arguments(call, empty='""')
    head = f'{open_tag}{separator}{{"name": {_json(call.name)}, "arguments": {arguments}'
    return head if cut else f"{head}}}{separator}{close_tag}"


def render_text(fmt: str, reply: Reply, request: Mapping[str, Any] | None = None) -> str:
    """The assistant text a model trained on ``fmt`` writes for ``reply`` (module docstring)."""
    if fmt not in PROMPT_FORMATS:
        raise ValueError(f"unknown prompt format {fmt!r} (known: {', '.join(PROMPT_FORMATS)})")
    calls = reply.tool_calls
    cut = reply.finish == "length"
    blocks: list[str] = []
    for number, call in enumerate(calls):
        last_cut = cut and number == len(calls) - 1
        if fmt == "qwen":
            blocks.append(_qwen_call(call))
        elif fmt == "hermes":
            blocks.append(_tag_call(call, last_cut, "<tool_call>", "</tool_call>", "\n"))
        else:
            blocks.append(_tag_call(call, last_cut, "<function_call>", "</function_call>", ""))
    text = "\n".join([*([reply.text] if reply.text else []), *blocks])
    if fmt == "qwen":
        if calls and not cut:
            text += "\n"  # generation stops at "✿RESULT✿", which follows the arguments' line
        if request is not None and continues_exchange(request):
            text = ": " + text
    return text


def prompt_reply(fmt: str, reply: Reply, request: Mapping[str, Any] | None = None) -> Reply:
    """``reply`` as a prompt model gives it on the chat wire: text only, ``stop`` for a reply with
    calls, the fault kept, only the quirks that still apply."""
    return replace(
        reply,
        text=render_text(fmt, reply, request),
        tool_calls=(),
        finish="stop" if reply.finish == "tool_calls" else reply.finish,
        quirks=tuple(q for q in reply.quirks if q in KNOWN_QUIRKS),
    )


def pieces(text: str) -> list[str]:
    """Stream fragments of prompt text: one token-like piece each, so markers arrive split."""
    return tokens(text)
