"""The ``server.*`` rules of the OpenAI Chat Completions wire, whole and streamed.

Chat (wire-formats.md §1c-d; openai-python ``types/chat/chat_completion*.py``):

- ids: ``id`` on the answer and on every chunk, the same on every chunk; each tool call's ``id``
  present and unique in the answer. Streamed, a call's fragments share its ``index``, counted from 0
  up by one per new call, and only the first fragment of an index carries ``id`` and
  ``function.name``: openai-python's stream accumulator (``lib/streaming/_deltas.py``
  ``accumulate_delta``) appends every later string to the first one (``call_xcall_x``) and inserts a
  new index at its list position, so a repeated id or name, or an index that skips, reaches its users
  broken (wire-formats.md §1d, §9 rule 2).
- arguments: each call's ``arguments`` (streamed, its fragments joined) parse as a JSON object; not
  judged on an answer cut by ``length`` (the text stops where the tokens did).
- finish: ``tool_calls`` when calls came back, and never without calls; ``stop`` beside calls is
  what OpenAI answers to a forced call (a named ``tool_choice``, reportedly ``required`` too:
  wire-formats.md §1c, vllm-project/vllm#49496), so it is accepted then; ``length`` below the
  request's ``max_completion_tokens``/``max_tokens`` is a note (the SDK's docstring: length when the
  request's maximum was reached; a server's own token cap or a full context window ends it too);
  streamed, one chunk carries the choice's ``finish_reason``.
- usage: present on a whole answer; streamed, when the request asked
  ``stream_options.include_usage``, in a last chunk whose ``choices`` is ``[]`` (openai-python
  ``chat_completion_stream_options_param.py``); ``prompt_tokens + completion_tokens == total_tokens``.
- framing: the stream ends with ``data: [DONE]`` and nothing follows it (openai-python
  ``_streaming.py`` stops reading there).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from conformance.checks._server_read import (
    Collector,
    Frame,
    dict_of,
    int_of,
    is_text,
    judge_arguments,
    judge_call_id,
    list_of,
    quote,
)

__all__ = ["chat_stream", "chat_whole"]


def _forced(request: Mapping[str, Any], forced: str | None) -> bool:
    """The request named a function in ``tool_choice`` (or said ``required``): a forced call."""
    choice = request.get("tool_choice")
    return forced is not None or choice == "required" or isinstance(choice, Mapping)


# --------------------------------------------------------------------------------------------


def _chat_finish(
    out: Collector,
    path: str,
    finish: Any,
    calls: int,
    request: Mapping[str, Any],
    usage: Mapping[str, Any],
    forced: str | None,
) -> None:
    out.judge("server.finish")
    if finish is None:
        out.add(
            "server.finish",
            path,
            "no finish_reason: a choice ends with one (stop, length, tool_calls, content_filter)",
            expected="a finish reason",
            remedy="send the choice's finish_reason (streamed: on the choice's last chunk)",
        )
        return
    if calls and finish == "stop" and not _forced(request, forced):
        out.add(
            "server.finish",
            path,
            f"finish_reason stop with {calls} tool call(s) under tool_choice auto: OpenAI ends a turn that"
            " calls tools with tool_calls (stop only for a forced call; wire-formats.md §1c)",
            expected="tool_calls",
            actual=finish,
            remedy="say tool_calls when the message carries tool_calls",
        )
    if not calls and finish == "tool_calls":
        out.add(
            "server.finish",
            path,
            "finish_reason tool_calls, but the message carries no tool call",
            expected="stop",
            actual=finish,
            remedy="say tool_calls only when tool_calls are sent",
        )
    if finish == "length":
        limit = int_of(request.get("max_completion_tokens")) or int_of(request.get("max_tokens"))
        used = int_of(usage.get("completion_tokens"))
        if limit is not None and used is not None and used < limit:
            out.add(
                "server.finish",
                path,
                f"finish_reason length after {used} completion tokens, below the request's limit of {limit}"
                " (openai-python's ChatCompletion: length when the request's maximum was reached; a server's"
                " own cap or a full context window may also end it, so this is noted, not failed)",
                expected=f"length at {limit} tokens",
                actual=used,
                kind="note",
            )


def _chat_usage(out: Collector, path: str, usage: Any, *, required: bool, why: str) -> None:
    out.judge("server.usage")
    if not isinstance(usage, Mapping):
        if required:
            out.add("server.usage", path, f"no usage {why}", expected="usage", remedy="report the token counts")
        return
    prompt, completion, total = (int_of(usage.get(k)) for k in ("prompt_tokens", "completion_tokens", "total_tokens"))
    if prompt is not None and completion is not None and total is not None and prompt + completion != total:
        out.add(
            "server.usage",
            f"{path}.total_tokens",
            f"total_tokens {total} is not prompt_tokens {prompt} + completion_tokens {completion}",
            expected=prompt + completion,
            actual=total,
            remedy="total_tokens is prompt_tokens + completion_tokens (openai-python types/completion_usage.py)",
        )


def chat_whole(value: Any, request: Mapping[str, Any], out: Collector, forced: str | None) -> None:
    """A whole Chat Completions answer."""
    body = dict_of(value)
    out.judge("server.ids", "server.arguments", "server.finish", "server.usage")
    if not is_text(body.get("id")):
        out.add("server.ids", "$.id", "the answer has no id", expected="an id", actual=body.get("id"))
    seen: dict[str, str] = {}
    usage = dict_of(body.get("usage"))
    for ci, choice in enumerate(list_of(body.get("choices"))):
        choice = dict_of(choice)
        calls = list_of(dict_of(choice.get("message")).get("tool_calls"))
        finish = choice.get("finish_reason")
        for k, call in enumerate(calls):
            call = dict_of(call)
            path = f"$.choices[{ci}].message.tool_calls[{k}]"
            judge_call_id(out, f"{path}.id", call.get("id"), seen)
            if finish != "length":
                judge_arguments(out, f"{path}.function.arguments", dict_of(call.get("function")).get("arguments"))
        _chat_finish(out, f"$.choices[{ci}].finish_reason", finish, len(calls), request, usage, forced)
    if not list_of(body.get("choices")):
        out.add(
            "server.finish",
            "$.choices",
            "an answer without a choice: a request without n answers with one",
            expected="one choice",
            actual=body.get("choices"),
            remedy="answer with choices[0]: the message and its finish_reason",
        )
    _chat_usage(out, "$.usage", body.get("usage"), required=True, why="on a whole answer")


def chat_stream(frames: Sequence[Frame], request: Mapping[str, Any], out: Collector, forced: str | None) -> None:
    """A streamed Chat Completions answer (``frames``: every event, ``[DONE]`` included)."""
    out.judge("server.framing", "server.ids", "server.arguments", "server.finish", "server.usage")
    done = [f for f in frames if f.data == "[DONE]"]
    if not done:
        out.add(
            "server.framing",
            f"stream[{len(frames)}]",
            "the stream does not end with data: [DONE] (openai-python's Stream reads until it)",
            expected="data: [DONE]",
            remedy="end the stream with data: [DONE] and a blank line",
        )
    elif done[0].index != frames[-1].index:
        after = frames[done[0].index + 1]
        out.add(
            "server.framing",
            f"stream[{after.index}]",
            f"an event after data: [DONE] ({quote(after.data, 80)}): the SDK stops reading at [DONE]",
            expected="nothing after [DONE]",
            actual=quote(after.data, 80),
        )
    end = done[0].index if done else len(frames)
    first_id: str | None = None
    calls: dict[tuple[int, int], dict[str, Any]] = {}
    per_choice: dict[int, int] = {}
    finishes: dict[int, tuple[str, Any]] = {}
    seen: dict[str, str] = {}
    usage_frames: list[Frame] = []
    for frame in frames[:end]:
        chunk = frame.value
        if not isinstance(chunk, Mapping) or chunk.get("error"):
            continue
        chunk_id = chunk.get("id")
        if not is_text(chunk_id):
            out.add("server.ids", f"{frame.path}.id", "a chunk without an id", expected="an id", actual=chunk_id)
        elif first_id is None:
            first_id = chunk_id
        elif chunk_id != first_id:
            out.add(
                "server.ids",
                f"{frame.path}.id",
                f"the chunk's id changes from {first_id!r} to {chunk_id!r}: every chunk of an answer has its id",
                expected=first_id,
                actual=chunk_id,
                remedy="send the same id on every chunk of one answer",
            )
        if chunk.get("usage") is not None:
            usage_frames.append(frame)
        for pos, choice in enumerate(list_of(chunk.get("choices"))):
            choice = dict_of(choice)
            ci = int_of(choice.get("index")) or 0
            for j, fragment in enumerate(list_of(dict_of(choice.get("delta")).get("tool_calls"))):
                fragment = dict_of(fragment)
                path = f"{frame.path}.choices[{pos}].delta.tool_calls[{j}]"
                _chat_fragment(out, path, ci, fragment, calls, per_choice, seen)
            if choice.get("finish_reason") is not None:
                if ci in finishes:
                    out.add(
                        "server.finish",
                        f"{frame.path}.choices[{pos}].finish_reason",
                        f"a second finish_reason for choice {ci} (the first at {finishes[ci][0]})",
                        expected="one finish_reason per choice",
                        actual=choice.get("finish_reason"),
                    )
                finishes[ci] = (f"{frame.path}.choices[{pos}].finish_reason", choice.get("finish_reason"))
    include = dict_of(request.get("stream_options")).get("include_usage") is True
    last_usage = dict_of(usage_frames[-1].value) if usage_frames else {}
    usage = dict_of(last_usage.get("usage"))
    for (ci, _index), call in calls.items():
        if finishes.get(ci, ("", None))[1] != "length":
            judge_arguments(out, f"{call['path']}.function.arguments", "".join(call["arguments"]))
    for ci in sorted({*per_choice, *finishes} or {0}):
        path, finish = finishes.get(ci, (f"stream[{end}]", None))
        count = sum(1 for (c, _i) in calls if c == ci)
        _chat_finish(out, path, finish, count, request, usage, forced)
    if usage_frames:
        frame = usage_frames[-1]
        if include and list_of(last_usage.get("choices")):
            out.add(
                "server.usage",
                f"{frame.path}.choices",
                "the usage chunk carries choices: with include_usage the usage comes in a last chunk whose"
                " choices is [] (openai-python chat_completion_stream_options_param.py)",
                expected=[],
                actual=quote(repr(last_usage.get("choices")), 80),
            )
        _chat_usage(out, f"{frame.path}.usage", last_usage.get("usage"), required=False, why="")
    elif include:
        why = "chunk, although the request asked stream_options.include_usage"
        _chat_usage(out, f"stream[{end}]", None, required=True, why=why)


def _chat_fragment(
    out: Collector,
    path: str,
    choice: int,
    fragment: Mapping[str, Any],
    calls: dict[tuple[int, int], dict[str, Any]],
    per_choice: dict[int, int],
    seen: dict[str, str],
) -> None:
    index = int_of(fragment.get("index"))
    function = dict_of(fragment.get("function"))
    if index is None:
        out.add(
            "server.ids",
            f"{path}.index",
            "a tool call fragment without an index: fragments are joined by index (openai-python"
            " lib/streaming/_deltas.py raises on an entry without one)",
            expected="an index",
            actual=fragment.get("index"),
        )
        return
    key = (choice, index)
    if key not in calls:
        want = per_choice.get(choice, 0)
        if index != want:
            out.add(
                "server.ids",
                f"{path}.index",
                f"a new call with index {index} where {want} is next: openai-python's accumulator inserts a new"
                " index at that list position (lib/streaming/_deltas.py), so later fragments land on another call",
                expected=want,
                actual=index,
                remedy="number the calls of a choice 0, 1, 2 ... in the order they start",
            )
        per_choice[choice] = max(want, index) + 1
        calls[key] = {"path": path, "arguments": []}
        judge_call_id(out, f"{path}.id", fragment.get("id"), seen)
        if not is_text(function.get("name")):
            out.add(
                "server.ids",
                f"{path}.function.name",
                "the first fragment of a call carries no function name",
                expected="the tool's name",
                actual=function.get("name"),
                remedy="send id, type and function.name on a call's first fragment",
            )
    else:
        for field, value in (("id", fragment.get("id")), ("function.name", function.get("name"))):
            if is_text(value):
                out.add(
                    "server.ids",
                    f"{path}.{field}",
                    f"a later fragment of call index {index} repeats its {field}: openai-python's accumulator"
                    f" appends every string (lib/streaming/_deltas.py), so its users get {value!r} twice over",
                    expected=None,
                    actual=value,
                    remedy=f"send {field} on a call's first fragment only",
                )
    arguments = function.get("arguments")
    if isinstance(arguments, str):
        calls[key]["arguments"].append(arguments)
