"""The ``server.*`` rules of the OpenAI Responses wire, whole and streamed.

Responses (wire-formats.md §2c-d; openai-python ``types/responses/``):

- framing: ``response.created`` first; an ``event:`` name, when sent, equal to the data's ``type``;
  ``sequence_number`` increasing; one terminal event (``response.completed``, ``response.incomplete``,
  ``response.failed``) last (a ``data: [DONE]`` after it is tolerated: openai-python stops at it);
  an item's events after its ``response.output_item.added`` and before its ``.done``.
- ids: the response ``id`` present and the same on every event that carries the response; each
  item's ``id`` present (deltas reference it as ``item_id``) and unique, with one ``output_index``
  throughout; each function call's ``call_id`` present and unique.
- arguments: a call's ``arguments`` parse as a JSON object; streamed, its deltas joined equal the
  ``function_call_arguments.done`` arguments and the ``output_item.done`` item's.
- finish: ``status`` against ``incomplete_details`` and ``error`` (``completed`` with neither,
  ``incomplete`` with a reason, ``failed`` with an error); the terminal event's type matches it.
- usage: present, ``input_tokens + output_tokens == total_tokens`` (``response_usage.py``).
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

__all__ = ["responses_stream", "responses_whole"]

_TERMINAL = {"response.completed": "completed", "response.incomplete": "incomplete", "response.failed": "failed"}


# --------------------------------------------------------------------------------------------


def _responses_status(out: Collector, path: str, response: Mapping[str, Any], request: Mapping[str, Any]) -> None:
    out.judge("server.finish")
    status = response.get("status")
    details = response.get("incomplete_details")
    if status == "completed" and (details is not None or response.get("error") is not None):
        what = "incomplete_details" if details is not None else "error"
        out.add(
            "server.finish",
            f"{path}.{what}",
            f"status completed with {what} set: a completed response has neither",
            expected=None,
            actual=quote(repr(response.get(what)), 120),
        )
    elif status == "incomplete" and not dict_of(details).get("reason"):
        out.add(
            "server.finish",
            f"{path}.incomplete_details",
            "status incomplete without incomplete_details.reason (max_output_tokens, content_filter)",
            expected="a reason",
            actual=details,
        )
    elif status == "failed" and response.get("error") is None:
        out.add("server.finish", f"{path}.error", "status failed without an error", expected="an error")
    elif status in ("in_progress", "queued") and not request.get("background"):
        out.add(
            "server.finish",
            f"{path}.status",
            f"a final answer with status {status}: a request that is not background ends completed,"
            " incomplete or failed",
            expected="completed",
            actual=status,
        )


def _responses_usage(out: Collector, path: str, usage: Any) -> None:
    out.judge("server.usage")
    if not isinstance(usage, Mapping):
        out.add("server.usage", path, "no usage on the response", expected="usage", remedy="report the token counts")
        return
    given, made, total = (int_of(usage.get(k)) for k in ("input_tokens", "output_tokens", "total_tokens"))
    if given is not None and made is not None and total is not None and given + made != total:
        out.add(
            "server.usage",
            f"{path}.total_tokens",
            f"total_tokens {total} is not input_tokens {given} + output_tokens {made}",
            expected=given + made,
            actual=total,
            remedy="total_tokens is input_tokens + output_tokens (openai-python types/responses/response_usage.py)",
        )


def responses_whole(value: Any, request: Mapping[str, Any], out: Collector) -> None:
    """A whole Responses answer."""
    body = dict_of(value)
    out.judge("server.ids", "server.arguments", "server.finish", "server.usage")
    if not is_text(body.get("id")):
        out.add("server.ids", "$.id", "the response has no id", expected="an id", actual=body.get("id"))
    cut = dict_of(body.get("incomplete_details")).get("reason") == "max_output_tokens"
    seen: dict[str, str] = {}
    for i, item in enumerate(list_of(body.get("output"))):
        item = dict_of(item)
        if item.get("type") == "function_call":
            judge_call_id(out, f"$.output[{i}].call_id", item.get("call_id"), seen)
            if not cut:
                judge_arguments(out, f"$.output[{i}].arguments", item.get("arguments"))
    _responses_status(out, "$", body, request)
    if body.get("status") != "failed":
        _responses_usage(out, "$.usage", body.get("usage"))


def responses_stream(frames: Sequence[Frame], request: Mapping[str, Any], out: Collector) -> None:
    """A streamed Responses answer."""
    out.judge("server.framing", "server.ids", "server.arguments", "server.finish", "server.usage")
    events = [f for f in frames if isinstance(f.value, Mapping) and f.value.get("type") != "error"]
    if events and events[0].value.get("type") != "response.created":
        out.add(
            "server.framing",
            f"{events[0].path}.type",
            "the first event is not response.created",
            expected="response.created",
            actual=events[0].value.get("type"),
        )
    terminal = next((f for f in events if f.value.get("type") in _TERMINAL), None)
    if terminal is None:
        out.add(
            "server.framing",
            f"stream[{len(frames)}]",
            "the stream ends without response.completed, response.incomplete or response.failed",
            expected="a terminal event",
            remedy="end the stream with response.completed (or .incomplete/.failed)",
        )
    else:
        rest = [f for f in frames[terminal.index + 1 :] if f.data != "[DONE]"]
        if rest:
            out.add(
                "server.framing",
                f"stream[{rest[0].index}]",
                f"an event after the terminal {terminal.value.get('type')} ({quote(rest[0].data, 80)})",
                expected="nothing after the terminal event",
                actual=quote(rest[0].data, 80),
            )
    last_seq: int | None = None
    response_id: str | None = None
    items: dict[str, dict[str, Any]] = {}
    by_index: dict[int, str] = {}
    seen: dict[str, str] = {}
    for frame in events:
        event = frame.value
        kind = event.get("type")
        if frame.event is not None and frame.event != kind:
            out.add(
                "server.framing",
                f"stream[{frame.index}].event",
                f"event: {frame.event} but the data's type is {kind!r}",
                expected=kind,
                actual=frame.event,
                remedy="name each event by its data's type",
            )
        seq = int_of(event.get("sequence_number"))
        if seq is not None:
            if last_seq is not None and seq <= last_seq:
                out.add(
                    "server.framing",
                    f"{frame.path}.sequence_number",
                    f"sequence_number {seq} after {last_seq}: it increases with every event",
                    expected=last_seq + 1,
                    actual=seq,
                )
            last_seq = seq
        response = event.get("response")
        if isinstance(response, Mapping):
            rid = response.get("id")
            if not is_text(rid):
                path = f"{frame.path}.response.id"
                out.add("server.ids", path, "the response has no id", expected="an id", actual=rid)
            elif response_id is None:
                response_id = rid
            elif rid != response_id:
                out.add(
                    "server.ids",
                    f"{frame.path}.response.id",
                    f"the response id changes from {response_id!r} to {rid!r} within one stream",
                    expected=response_id,
                    actual=rid,
                )
        _responses_item_event(out, frame, event, items, by_index, seen)
    if terminal is None:
        return
    response = dict_of(terminal.value.get("response"))
    status = response.get("status")
    want = _TERMINAL[str(terminal.value.get("type"))]
    if status != want:
        out.add(
            "server.finish",
            f"{terminal.path}.response.status",
            f"{terminal.value.get('type')} carries a response with status {status!r}",
            expected=want,
            actual=status,
        )
    _responses_status(out, f"{terminal.path}.response", response, request)
    cut = dict_of(response.get("incomplete_details")).get("reason") == "max_output_tokens"
    for iid, item in items.items():
        if item["type"] != "function_call" or cut:
            continue
        joined = "".join(item["deltas"])
        final = item["done_arguments"] if item["done_arguments"] is not None else item["item_arguments"]
        for label, text, path in (
            ("function_call_arguments.done", item["done_arguments"], item["done_path"]),
            ("output_item.done", item["item_arguments"], item["item_path"]),
        ):
            if text is not None and item["deltas"] and text != joined:
                out.add(
                    "server.arguments",
                    path,
                    f"the {label} arguments of item {iid!r} differ from its deltas joined",
                    expected=quote(joined, 120),
                    actual=quote(text, 120),
                    remedy="the done events repeat exactly what the deltas sent",
                )
        judge_arguments(
            out, item["done_path"] or item["item_path"] or item["path"], final if final is not None else joined
        )
        if item["item_path"] is None and want == "completed":
            out.add(
                "server.framing",
                item["path"],
                f"item {iid!r} is added but never done (no response.output_item.done before {want})",
                expected="response.output_item.done",
            )
    if want != "failed":
        _responses_usage(out, f"{terminal.path}.response.usage", response.get("usage"))


def _responses_item_event(
    out: Collector,
    frame: Frame,
    event: Mapping[str, Any],
    items: dict[str, dict[str, Any]],
    by_index: dict[int, str],
    seen: dict[str, str],
) -> None:
    kind = event.get("type")
    index = int_of(event.get("output_index"))
    if kind == "response.output_item.added":
        item = dict_of(event.get("item"))
        iid = item.get("id")
        if not isinstance(iid, str) or not iid:
            out.add(
                "server.ids",
                f"{frame.path}.item.id",
                "an added item without an id: its events reference it as item_id",
                expected="an id",
                actual=iid,
            )
            return
        if iid in items:
            path = f"{frame.path}.item.id"
            out.add("server.ids", path, f"item id {iid!r} added twice", expected="a new id", actual=iid)
            return
        if index is not None and index in by_index:
            out.add(
                "server.ids",
                f"{frame.path}.output_index",
                f"output_index {index} already belongs to item {by_index[index]!r}",
                expected="a new output_index",
                actual=index,
            )
        if index is not None:
            by_index[index] = iid
        items[iid] = {
            "type": item.get("type"),
            "index": index,
            "path": f"{frame.path}.item",
            "deltas": [],
            "done_arguments": None,
            "done_path": None,
            "item_arguments": None,
            "item_path": None,
        }
        if item.get("type") == "function_call":
            judge_call_id(out, f"{frame.path}.item.call_id", item.get("call_id"), seen)
        return
    if kind == "response.output_item.done":
        iid = dict_of(event.get("item")).get("id")
    elif "item_id" in event:
        iid = event.get("item_id")
    else:
        return
    where = f"{frame.path}.item.id" if kind == "response.output_item.done" else f"{frame.path}.item_id"
    if not isinstance(iid, str) or iid not in items:
        out.add(
            "server.ids",
            where,
            f"{kind} references item {iid!r}, which no earlier response.output_item.added announced",
            expected="an added item's id",
            actual=iid,
            remedy="announce each item with response.output_item.added before its other events",
        )
        return
    item = items[iid]
    if index is not None and item["index"] is not None and index != item["index"]:
        out.add(
            "server.ids",
            f"{frame.path}.output_index",
            f"item {iid!r} was added at output_index {item['index']}, this event says {index}",
            expected=item["index"],
            actual=index,
        )
    if item["item_path"] is not None:
        out.add(
            "server.framing",
            f"{frame.path}.type",
            f"{kind} for item {iid!r} after its response.output_item.done",
            expected="no event after the item's done",
            actual=kind,
        )
    if kind == "response.function_call_arguments.delta" and isinstance(event.get("delta"), str):
        item["deltas"].append(event["delta"])
    elif kind == "response.function_call_arguments.done":
        item["done_arguments"] = event.get("arguments")
        item["done_path"] = f"{frame.path}.arguments"
    elif kind == "response.output_item.done":
        item["item_arguments"] = dict_of(event.get("item")).get("arguments")
        item["item_path"] = f"{frame.path}.item.arguments"
