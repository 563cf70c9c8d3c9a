"""Reasoning checks: decoded as the provider sent it, and sent back as each wire's rule says.

``roundtrip.reasoning``         each turn that expects reasoning (``Expectation.reasoning``) decoded its
                                reasoning parts as scripted, in order: the text (unless redacted), whether
                                it was redacted, and ``source`` naming the adapter's wire;
``roundtrip.reasoning_replay``  each request after the first sends back the reasoning the provider produced
                                earlier in the conversation where and as the wire's rule says, byte for
                                byte after JSON parsing, and nothing another wire produced.

What the provider produced is read straight from the recorded answers (``checks._answers``), never
from the decoding under test. The rules, per wire (docs/adapters.md, "Reasoning"):

- ``anthropic``: the ``thinking`` (``thinking`` and ``signature``) and ``redacted_thinking`` (``data``)
  blocks of an answer that called tools go back unmodified, in their order, before the ``tool_use``
  blocks they preceded, on the assistant message holding those calls, while the tool loop is open
  (anthropic-sdk-python ``types/thinking_block_param.py:11-17``; "echo the assistant message exactly as
  received", https://platform.claude.com/docs/build-with-claude/thinking-tool-workflows). After a new user
  text turn they may be left out (equivalence ``thinking omitted after user text``); sent, they must
  still be unmodified.
- ``gemini``: a ``thoughtSignature`` goes back on the part that carried it (python-genai ``types.py:2268-2275``;
  https://ai.google.dev/gemini-api/docs/thought-signatures: "pass it back exactly as received"; Gemini 3
  answers 400 for a function call missing its signature). A call's signature on that call (the n-th
  ``functionCall`` of the model turn), never on a part the provider did not sign; a signature streamed
  on an empty part of its own after the calls (the calls' signature: modfin/bellman#35) on such a part
  again or on the turn's first call (which part it belongs to is not documented: bellman attaches it
  to the first call, spring-ai#4977 to the call parts; the reference adapter keeps its part), never
  left out; a text or thought part's signature is not validated, so not required. Compared as bytes
  where the table says so (``signature as bytes``); the documented placeholder stands for no
  signature, never for the one the provider gave.
- ``openai_responses``: a ``reasoning`` item (``id``, ``encrypted_content``) that preceded a
  ``function_call`` goes back in ``input`` before that call's item, unmodified, in every later request
  (openai-python ``response_reasoning_item.py``; 400 "Item rs_… of type reasoning was provided without its
  required following item"); one that preceded only a message may be left out. A request that continues
  with ``previous_response_id`` holds no history and is not judged.
- ``openai_chat``: the ``reasoning_content`` of an answer that called tools goes back on the assistant
  message holding those calls in every later request, new user turns included (DeepSeek V4 thinking
  mode, https://api-docs.deepseek.com/zh-cn/guides/thinking_mode/: omitted, 400 "The reasoning_content in
  the thinking mode must be passed back"); OpenRouter's ``reasoning_details`` on that message unmodified
  (``type``, ``text``, ``summary``, ``data``, ``signature``). An answer without calls: no rule
  (DeepSeek ignores it). ``reasoning`` alone (vLLM): no documented rule.
- ``ollama``: ``thinking``, when sent back on the assistant message holding the calls, unchanged
  (ollama-python ``examples/gpt-oss-tools-stream.py``); no rule requires it.

Reasoning the scenario's ``history`` gives with another wire as ``source`` must appear nowhere in a
request: its signature or redacted payload (as any string, or base64 of it) nor its text in the
wire's reasoning fields (``conformance.adapters.base.reasoning_note``).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from conformance.checks._answers import answer_bodies, answer_content
from conformance.checks._common import CaseContext, json_dicts, json_list, same_json, verdict
from conformance.checks.equivalences import EquivalenceTable, bundled_table, replay_rule
from conformance.model import Message, Reasoning
from conformance.verdicts import CheckVerdict, Finding

__all__ = ["check_reasoning", "check_reasoning_replay", "clip", "signature_bytes"]

_REPLAY = "roundtrip.reasoning_replay"
_DECODED = "roundtrip.reasoning"


def clip(value: Any, limit: int = 200) -> Any:
    """``value`` for a finding: strings past ``limit`` characters cut with their length said, lists
    past 20 items cut (a megabyte of reasoning never lands in a report)."""
    if isinstance(value, str):
        return value if len(value) <= limit else f"{value[:limit]}… ({len(value):,} characters)"
    if isinstance(value, Mapping):
        return {str(k): clip(v, limit) for k, v in list(value.items())[:20]}
    if isinstance(value, list | tuple):
        return [clip(v, limit) for v in value[:20]] + ([f"… ({len(value)} items)"] if len(value) > 20 else [])
    return value


def signature_bytes(value: Any) -> bytes | None:
    """The bytes a base64 signature stands for, in either alphabet, padding optional (None: not base64)."""
    if not isinstance(value, str) or not value:
        return None
    text = value.strip().replace("-", "+").replace("_", "/")
    text += "=" * (-len(text) % 4)
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None


# ---- roundtrip.reasoning ----------------------------------------------------------------------


def check_reasoning(ctx: CaseContext) -> CheckVerdict | None:
    """``roundtrip.reasoning``: None when no answered turn expects reasoning."""
    findings: list[Finding] = []
    ran = False
    wire = ctx.adapter.wire_format
    for turn in ctx.outcome.turns:
        spec = ctx.scenario.turns[turn.turn]
        expected = getattr(spec.expect, "reasoning", None)
        if expected is None or spec.expect.error is not None or turn.response is None or turn.error is not None:
            continue
        ran = True
        got = [p for p in turn.response.parts if isinstance(p, Reasoning)]
        if len(got) != len(expected):
            findings.append(
                Finding(
                    check=_DECODED,
                    message=f"expected {len(expected)} reasoning part(s), decoded {len(got)}",
                    path="$.reasoning",
                    expected=len(expected),
                    actual=len(got),
                    turn=turn.turn,
                )
            )
        for n, (want, part) in enumerate(zip(expected, got, strict=False)):
            path = f"$.reasoning[{n}]"
            redacted = bool(part.redacted)
            if redacted != bool(getattr(want, "redacted", False)):
                findings.append(
                    Finding(
                        check=_DECODED,
                        message="redacted reasoning decoded as readable, or readable as redacted",
                        path=f"{path}.redacted",
                        expected=bool(getattr(want, "redacted", False)),
                        actual=redacted,
                        turn=turn.turn,
                    )
                )
            text = getattr(want, "text", None)
            if text is not None and part.text != text:
                findings.append(
                    Finding(
                        check=_DECODED,
                        message="the reasoning text differs",
                        path=f"{path}.text",
                        expected=clip(text),
                        actual=clip(part.text),
                        turn=turn.turn,
                    )
                )
            if part.source != wire:
                findings.append(
                    Finding(
                        check=_DECODED,
                        message="the reasoning does not name the wire that produced it (source), so it cannot be"
                        " kept from other providers",
                        path=f"{path}.source",
                        expected=wire,
                        actual=part.source,
                        turn=turn.turn,
                    )
                )
    return verdict(_DECODED, findings) if ran else None


# ---- roundtrip.reasoning_replay ---------------------------------------------------------------


@dataclass(frozen=True)
class _Judged:
    ran: bool
    findings: list[Finding]


def check_reasoning_replay(ctx: CaseContext) -> CheckVerdict | None:
    """``roundtrip.reasoning_replay``: None when no answer produced reasoning a rule covers and the
    history holds no other wire's reasoning."""
    wire = ctx.adapter.wire_format
    table = ctx.equivalences or bundled_table()
    requests = [(t.turn, t.wire.body) for t in ctx.outcome.turns if isinstance(t.wire.body, dict)]
    if len(requests) < 1:
        return None
    answers: dict[int, list[dict[str, Any]]] = {}
    if len(requests) > 1:
        for turn, (raw, stream) in sorted(answer_bodies(ctx).items()):
            answers[turn] = answer_content(wire, raw, stream=stream)
    judge = _RULES.get(wire)
    ran = False
    findings: list[Finding] = []
    if judge is not None:
        judged = judge(answers, requests, table)
        ran, findings = judged.ran, judged.findings
    foreign = _foreign(getattr(ctx.scenario, "history", ()), wire)
    if foreign:
        ran = True
        for turn, body in requests:
            findings += _foreign_findings(foreign, wire, body, turn)
    return verdict(_REPLAY, findings) if ran else None


def _later(requests: Sequence[tuple[int, dict[str, Any]]], turn: int) -> Iterator[tuple[int, dict[str, Any]]]:
    return ((j, body) for j, body in requests if j > turn)


def _finding(message: str, path: str, expected: Any, actual: Any, turn: int) -> Finding:
    return Finding(check=_REPLAY, message=message, path=path, expected=clip(expected), actual=clip(actual), turn=turn)


# -- anthropic


def _anthropic_step(block: Mapping[str, Any]) -> tuple[Any, ...] | None:
    kind = block.get("type")
    if kind == "thinking":
        return ("thinking", block.get("thinking"), block.get("signature"))
    if kind == "redacted_thinking":
        return ("redacted_thinking", block.get("data"))
    if kind == "tool_use":
        return ("tool_use", block.get("id"))
    return None


def _anthropic_words(step: tuple[Any, ...] | None) -> str:
    if step is None:
        return "nothing"
    if step[0] == "tool_use":
        return f"the tool_use {step[1]!r}"
    return f"a {step[0]} block"


def _user_text_after(messages: Sequence[Any], index: int) -> bool:
    """Does a user message with more than tool results follow ``messages[index]`` (a new user turn)?"""
    for m in messages[index + 1 :]:
        if not isinstance(m, dict) or m.get("role") != "user":
            continue
        content = m.get("content")
        if isinstance(content, str) or any(b.get("type") != "tool_result" for b in json_dicts(content)):
            return True
    return False


def _anthropic(
    answers: Mapping[int, list[dict[str, Any]]], requests: Sequence[tuple[int, dict[str, Any]]], table: EquivalenceTable
) -> _Judged:
    ran = False
    findings: list[Finding] = []
    omitted = replay_rule(table, "thinking omitted after user text", "anthropic")
    for turn, blocks in answers.items():
        steps = [s for s in map(_anthropic_step, blocks) if s is not None]
        ids = {s[1] for s in steps if s[0] == "tool_use"}
        if not ids or not any(s[0] != "tool_use" for s in steps):
            continue  # no thinking before a call: nothing the wire asks back
        for j, body in _later(requests, turn):
            messages = json_list(body.get("messages"))
            where = next(
                (
                    i
                    for i, m in enumerate(messages)
                    if isinstance(m, dict)
                    and m.get("role") == "assistant"
                    and any(b.get("type") == "tool_use" and b.get("id") in ids for b in json_dicts(m.get("content")))
                ),
                None,
            )
            if where is None:
                continue  # the calls themselves are not sent back: roundtrip.call_ids / request say so
            ran = True
            content = messages[where].get("content")
            sent = [(n, s) for n, b in enumerate(json_dicts(content)) if (s := _anthropic_step(b)) is not None]
            closed = _user_text_after(messages, where)
            if closed and omitted is not None and not any(s[0] != "tool_use" for _, s in sent):
                continue  # left out after a new user turn: the API ignores it (docs/equivalences.md)
            for k in range(max(len(steps), len(sent))):
                want = steps[k] if k < len(steps) else None
                got = sent[k][1] if k < len(sent) else None
                if want is not None and got is not None and same_json(list(want), list(got)):
                    continue
                position = sent[k][0] if k < len(sent) else len(json_dicts(content))
                what = "changed" if want and got and want[0] == got[0] else "missing or out of order"
                findings.append(
                    _finding(
                        f"{_anthropic_words(want)} of turn {turn}'s answer is {what} in the assistant message sent"
                        f" back (found {_anthropic_words(got)} there): thinking goes back unmodified, in order, before"
                        " the tool_use it preceded (Anthropic answers 400)",
                        f"$.messages[{where}].content[{position}]",
                        list(want) if want else None,
                        list(got) if got else None,
                        j,
                    )
                )
                break
    return _Judged(ran, findings)


# -- gemini


def _signature(part: Mapping[str, Any]) -> Any:
    return part.get("thoughtSignature", part.get("thought_signature"))


def _call(part: Mapping[str, Any]) -> Any:
    call = part.get("functionCall", part.get("function_call"))
    return call if isinstance(call, dict) else None


def _call_key(part: Mapping[str, Any]) -> tuple[Any, ...]:
    call = _call(part) or {}
    return (call.get("name"), call.get("args"))


def _placeholders(table: EquivalenceTable) -> list[Any]:
    return [
        row.value
        for row in table.equivalences
        if (not row.wires or "gemini" in row.wires) and row.path.endswith("thoughtSignature")
    ]


def _gemini(
    answers: Mapping[int, list[dict[str, Any]]], requests: Sequence[tuple[int, dict[str, Any]]], table: EquivalenceTable
) -> _Judged:
    ran = False
    findings: list[Finding] = []
    as_bytes = replay_rule(table, "signature as bytes", "gemini") is not None
    placeholders = _placeholders(table)

    def same(want: Any, got: Any) -> bool:
        if same_json(want, got):
            return True
        return as_bytes and signature_bytes(want) is not None and signature_bytes(want) == signature_bytes(got)

    seen: dict[Any, int] = {}
    for turn, parts in sorted(answers.items()):
        calls = [p for p in parts if _call(p) is not None]
        key = repr([_call_key(p) for p in calls])
        occurrence = seen.get(key, 0)
        seen[key] = occurrence + 1
        signed_calls = [(n, _signature(p)) for n, p in enumerate(calls) if _signature(p) is not None]
        own = [_signature(p) for p in parts if _call(p) is None and _signature(p) is not None and p.get("text") == ""]
        if not calls or not (signed_calls or own):
            continue
        for j, body in _later(requests, turn):
            contents = json_list(body.get("contents"))
            matching = [
                i
                for i, c in enumerate(contents)
                if isinstance(c, dict)
                and c.get("role") == "model"
                and [_call_key(p) for p in json_dicts(c.get("parts")) if _call(p) is not None]
                == [_call_key(p) for p in calls]
            ]
            if occurrence >= len(matching):
                continue  # the calls are not sent back: roundtrip.request says so
            ran = True
            where = matching[occurrence]
            sent = list(enumerate(json_dicts(contents[where].get("parts"))))
            sent_calls = [(n, p) for n, p in sent if _call(p) is not None]
            for n, (position, part) in enumerate(sent_calls):
                want = dict(signed_calls).get(n)
                got = _signature(part)
                path = f"$.contents[{where}].parts[{position}].thoughtSignature"
                if want is not None and not same(want, got):
                    what = (
                        "replaced by the placeholder"
                        if got in placeholders
                        else "missing"
                        if got is None
                        else "changed"
                    )
                    findings.append(
                        _finding(
                            f"the thoughtSignature turn {turn}'s answer put on call #{n} is {what}: it goes back"
                            " on the same part, as received (Gemini 3 answers 400)",
                            path,
                            want,
                            got,
                            j,
                        )
                    )
                elif (
                    want is None
                    and got is not None
                    and got not in placeholders
                    and not (n == 0 and any(same(o, got) for o in own))  # the turn's own-part signature
                ):
                    findings.append(
                        _finding(
                            f"call #{n} of turn {turn}'s answer carries a thoughtSignature the provider did not put"
                            " on it (moved from another part, or made up)",
                            path,
                            None,
                            got,
                            j,
                        )
                    )
            for signature in own:
                if any(same(signature, _signature(p)) for _, p in sent_calls):
                    continue  # on the first call (accepted) or another one (reported above)
                if not any(same(signature, _signature(p)) for _, p in sent if _call(p) is None):
                    findings.append(
                        _finding(
                            f"the thoughtSignature turn {turn}'s answer sent on a part of its own (after its calls)"
                            " is not sent back on a part of its own: it is the calls' signature (Gemini 3 answers"
                            " 400 without it)",
                            f"$.contents[{where}].parts",
                            signature,
                            None,
                            j,
                        )
                    )
    return _Judged(ran, findings)


# -- openai_responses


def _item_type(item: Any) -> Any:
    """An input item's type; a message may leave it out (openai-python ``EasyInputMessageParam``: ``type`` optional)."""
    if not isinstance(item, dict):
        return None
    return item.get("type") or ("message" if "role" in item else None)


def _responses(
    answers: Mapping[int, list[dict[str, Any]]], requests: Sequence[tuple[int, dict[str, Any]]], table: EquivalenceTable
) -> _Judged:
    ran = False
    findings: list[Finding] = []
    for turn, items in answers.items():
        for n, item in enumerate(items):
            if item.get("type") != "reasoning" or not isinstance(item.get("id"), str):
                continue
            following = next((i for i in items[n + 1 :] if _item_type(i) != "reasoning"), None)
            before_call = following is not None and following.get("type") == "function_call"
            for j, body in _later(requests, turn):
                if body.get("previous_response_id") is not None or not isinstance(body.get("input"), list):
                    continue  # the server keeps the conversation: nothing is sent back
                sent = body["input"]
                where = next((k for k, s in enumerate(sent) if isinstance(s, dict) and s.get("id") == item["id"]), None)
                if where is None:
                    if before_call:
                        ran = True
                        findings.append(
                            _finding(
                                f"turn {turn}'s reasoning item {item['id']!r} is not sent back before the"
                                f" function_call {(following or {}).get('call_id')!r} it preceded"
                                " (the API needs it with the call when the caller keeps the context)",
                                "$.input",
                                {"type": "reasoning", "id": item["id"]},
                                None,
                                j,
                            )
                        )
                    continue
                ran = True
                got = sent[where]
                if "encrypted_content" in item and not same_json(
                    item["encrypted_content"], got.get("encrypted_content")
                ):
                    findings.append(
                        _finding(
                            f"turn {turn}'s reasoning item {item['id']!r} goes back with its encrypted_content changed",
                            f"$.input[{where}].encrypted_content",
                            item["encrypted_content"],
                            got.get("encrypted_content"),
                            j,
                        )
                    )
                    continue
                if got.get("type") != "reasoning":
                    findings.append(
                        _finding(
                            f"turn {turn}'s reasoning item {item['id']!r} goes back as another type",
                            f"$.input[{where}].type",
                            "reasoning",
                            got.get("type"),
                            j,
                        )
                    )
                    continue
                if following is None:
                    continue
                after = next((s for s in sent[where + 1 :] if _item_type(s) != "reasoning"), None)
                ok = isinstance(after, dict) and _item_type(after) == _item_type(following)
                if ok and before_call and isinstance(after, dict):  # the same item: its id, else its call id
                    same_id = following.get("id") is not None and after.get("id") == following.get("id")
                    ok = same_id or after.get("call_id") == following.get("call_id")
                if not ok:
                    findings.append(
                        _finding(
                            f"turn {turn}'s reasoning item {item['id']!r} is not followed by the item it preceded",
                            f"$.input[{where + 1}]",
                            {"type": _item_type(following), "call_id": following.get("call_id")},
                            {"type": _item_type(after), "call_id": after.get("call_id")}
                            if isinstance(after, dict)
                            else after,
                            j,
                        )
                    )
    return _Judged(ran, findings)


# -- openai_chat


_DETAIL_KEYS = ("type", "text", "summary", "data", "signature")
_OTHER_NAME = {"reasoning_content": "reasoning", "reasoning": "reasoning_content"}


def _chat(
    answers: Mapping[int, list[dict[str, Any]]], requests: Sequence[tuple[int, dict[str, Any]]], table: EquivalenceTable
) -> _Judged:
    ran = False
    findings: list[Finding] = []
    for turn, messages in answers.items():
        message = messages[0] if messages else {}
        ids = {c.get("id") for c in json_dicts(message.get("tool_calls")) if isinstance(c.get("id"), str)}
        # an empty one: no documented rule (issue28 facts §4). vLLM's ``reasoning`` (>= 0.11) may go back under
        # either name: "reasoning used to be called reasoning_content ... will continue to work"
        # (https://docs.vllm.ai/en/v0.11.2/features/reasoning_outputs/); which name a server reads back is
        # not documented, so either is accepted
        field = "reasoning_content" if message.get("reasoning_content") else "reasoning"
        content = message.get(field) or None
        details = json_dicts(message.get("reasoning_details"))
        if details and field == "reasoning":
            content = None  # OpenRouter: reasoning_details are what goes back; its reasoning string is their text
        if not ids or (content is None and not details):
            continue
        for j, body in _later(requests, turn):
            sent = json_list(body.get("messages"))
            where = next(
                (
                    i
                    for i, m in enumerate(sent)
                    if isinstance(m, dict)
                    and m.get("role") == "assistant"
                    and any(c.get("id") in ids for c in json_dicts(m.get("tool_calls")))
                ),
                None,
            )
            if where is None:
                continue
            ran = True
            got = sent[where]
            sent_back = got.get(field) if field in got else got.get(_OTHER_NAME[field])
            if content is not None and not same_json(content, sent_back):
                findings.append(
                    _finding(
                        f"turn {turn}'s {field} is "
                        + ("missing" if field not in got and _OTHER_NAME[field] not in got else "changed")
                        + " on the assistant message with its tool calls: it goes back in every later request"
                        " (DeepSeek answers 400 without it)",
                        f"$.messages[{where}].{field}",
                        content,
                        sent_back,
                        j,
                    )
                )
            if details:
                want = [{k: d[k] for k in _DETAIL_KEYS if k in d} for d in details]
                have = [{k: d[k] for k in _DETAIL_KEYS if k in d} for d in json_dicts(got.get("reasoning_details"))]
                if not same_json(want, have):
                    findings.append(
                        _finding(
                            f"turn {turn}'s reasoning_details do not go back unmodified on the assistant message"
                            " with its tool calls (OpenRouter needs them to replay the provider's signatures)",
                            f"$.messages[{where}].reasoning_details",
                            want,
                            got.get("reasoning_details"),
                            j,
                        )
                    )
    return _Judged(ran, findings)


# -- ollama


def _ollama_calls(message: Mapping[str, Any]) -> list[tuple[Any, Any]]:
    out = []
    for call in json_dicts(message.get("tool_calls")):
        function = call.get("function")
        if isinstance(function, dict):
            out.append((function.get("name"), function.get("arguments")))
        else:
            out.append((None, None))
    return out


def _ollama(
    answers: Mapping[int, list[dict[str, Any]]], requests: Sequence[tuple[int, dict[str, Any]]], table: EquivalenceTable
) -> _Judged:
    ran = False
    findings: list[Finding] = []
    for turn, messages in answers.items():
        message = messages[0] if messages else {}
        thinking = message.get("thinking")
        calls = _ollama_calls(message)
        if not calls or not isinstance(thinking, str) or not thinking:
            continue
        for j, body in _later(requests, turn):
            sent = json_list(body.get("messages"))
            where = next(
                (
                    i
                    for i, m in enumerate(sent)
                    if isinstance(m, dict) and m.get("role") == "assistant" and same_json(_ollama_calls(m), calls)
                ),
                None,
            )
            if where is None or "thinking" not in sent[where]:
                continue  # no rule requires it
            ran = True
            if not same_json(thinking, sent[where]["thinking"]):
                findings.append(
                    _finding(
                        f"turn {turn}'s thinking goes back changed on the assistant message with its tool calls",
                        f"$.messages[{where}].thinking",
                        thinking,
                        sent[where]["thinking"],
                        j,
                    )
                )
    return _Judged(ran, findings)


_RULES = {
    "anthropic": _anthropic,
    "gemini": _gemini,
    "openai_responses": _responses,
    "openai_chat": _chat,
    "ollama": _ollama,
}


# -- reasoning from another wire


@dataclass(frozen=True)
class _Foreign:
    source: str
    payloads: tuple[str, ...]
    """Signature and redacted data: found as any string of the body (or the base64 of one)."""
    text: str


def _foreign(history: Any, wire: str) -> list[_Foreign]:
    out: list[_Foreign] = []
    for message in history or ():
        if not isinstance(message, Message):
            continue
        for part in message.parts:
            if isinstance(part, Reasoning) and part.source is not None and part.source != wire:
                payloads = tuple(p for p in (part.signature, part.redacted) if isinstance(p, str) and p)
                out.append(_Foreign(source=part.source, payloads=payloads, text=part.text))
    return out


def _strings(value: Any, path: str, depth: int = 0) -> Iterator[tuple[str, str]]:
    if depth > 200:
        return
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from _strings(item, f"{path}.{key}", depth + 1)
    elif isinstance(value, list):
        for n, item in enumerate(value):
            yield from _strings(item, f"{path}[{n}]", depth + 1)


def _in_verified_field(wire: str, path: str) -> bool:
    """Is ``path`` a reasoning field the receiving provider verifies? Anthropic checks every
    ``thinking`` block's ``signature`` (``ThinkingBlockParam.signature`` is required; a rebuilt block
    is a 400), and a Responses reasoning item needs its own id and ``encrypted_content``. Gemini thought
    text, Chat ``reasoning_content`` / ``reasoning`` and Ollama ``thinking`` carry no proof: another
    provider's reasoning *text* there (or rendered as plain text, as pydantic-ai's
    ``render_replayed_thinking`` does) is nothing the provider can fail to verify, so only its opaque
    payloads are judged (issue 28: "drops what the other provider cannot verify")."""
    last = path.rsplit(".", 1)[-1]
    if wire == "anthropic":
        return last == "thinking"
    if wire == "openai_responses":
        return last in ("text", "summary") and (".summary[" in path or ".content[" in path) and "reasoning" in path
    return False


def _foreign_findings(foreign: Sequence[_Foreign], wire: str, body: Mapping[str, Any], turn: int) -> list[Finding]:
    findings: list[Finding] = []
    for path, value in _strings(body, "$"):
        for part in foreign:
            leaked = any(value == p or signature_bytes(value) == p.encode() for p in part.payloads)
            if not leaked and part.text:
                leaked = value == part.text and _in_verified_field(wire, path)
            if leaked:
                findings.append(
                    _finding(
                        f"reasoning produced by {part.source} is sent to {wire}, which cannot verify it: leave it out"
                        " and say so (WireRequest.notes)",
                        path,
                        None,
                        value,
                        turn,
                    )
                )
                break
    return findings
