"""Token usage read straight from recorded bodies, per wire, independently of the adapters' decoders.

The reference for a usage check: what each provider's official SDK reads from the same bytes.

- ``openai_chat``: ``usage`` (``prompt_tokens``, ``completion_tokens``, ``total_tokens``,
  ``prompt_tokens_details.cached_tokens`` (DeepSeek: ``prompt_cache_hit_tokens`` where that is absent;
  docs.stigg.io DeepSeek usage, third-party), ``prompt_tokens_details.cache_write_tokens``
  (openai-python ``types/completion_usage.py:46``; OpenRouter usage accounting,
  https://openrouter.ai/docs/use-cases/usage-accounting), ``completion_tokens_details.reasoning_tokens``);
  streamed, only the chunk that carries a non-null ``usage`` (sent last with ``stream_options.include_usage``).
- ``openai_responses``: ``usage`` (``input_tokens``, ``output_tokens``, ``total_tokens``,
  ``input_tokens_details.cached_tokens``, ``input_tokens_details.cache_write_tokens``,
  ``output_tokens_details.reasoning_tokens``: openai-python ``types/responses/response_usage.py``;
  older replies have no ``cache_write_tokens``, which is then absent, wire-formats.md §2c); streamed,
  the ``response.completed`` event's ``response.usage``.
- ``anthropic``: ``usage`` (``output_tokens``, ``cache_read_input_tokens``, ``cache_creation_input_tokens``,
  ``output_tokens_details.thinking_tokens``: anthropic-sdk-python ``types/usage.py:18-21``,
  ``types/output_tokens_details.py:9``); the input is ``input_tokens`` plus both cache counts (the SDK's
  docstring: the request's total input is their sum; E19; the wire reports no total, so none is
  judged); streamed, ``message_start``'s usage updated field by field by each cumulative ``message_delta`` usage
  (non-null values replace).
- ``gemini``: ``usageMetadata`` (``promptTokenCount``, ``candidatesTokenCount``, ``totalTokenCount``,
  ``cachedContentTokenCount``, ``thoughtsTokenCount``); streamed, cumulative: the last chunk's counts.
- ``ollama``: ``prompt_eval_count`` and ``eval_count``; streamed, the ``done`` chunk's counts.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from conformance.checks._common import CaseContext, verdict
from conformance.model import Usage
from conformance.verdicts import CheckVerdict, Finding

__all__ = [
    "USAGE_FIELDS",
    "USAGE_WIRES",
    "check_usage",
    "recorded_usage",
    "stream_payloads",
    "usage_findings",
    "usage_verdict",
]

USAGE_WIRES = ("openai_chat", "openai_responses", "anthropic", "gemini", "ollama")
USAGE_FIELDS = (
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
)


def usage_findings(want: Usage | None, got: Usage | None, *, turn: int) -> list[Finding]:
    """``roundtrip.usage`` findings: each field the recorded traffic reports that the decoded usage differs on."""
    if want is None:
        return []
    return [
        Finding(
            check="roundtrip.usage",
            message=f"decoded usage {name} differs from the recorded traffic's",
            path=f"$.usage.{name}",
            expected=getattr(want, name),
            actual=None if got is None else getattr(got, name),
            turn=turn,
        )
        for name in USAGE_FIELDS
        if getattr(want, name) is not None and (got is None or getattr(got, name) != getattr(want, name))
    ]


def usage_verdict(ctx: CaseContext) -> CheckVerdict | None:
    """``roundtrip.usage`` of a case: each turn that got an answer, its decoded usage against the usage
    its answer's recorded body reports. A turn's answer is the last one that succeeded: after a retry
    (a 429, then the answer), the one the caller got. None when no turn pairs with an answer.

    An adapter's turns pair with the exchanges in order (one each; when a turn took several, the
    successful answers pair with the turns that got one). A black-box client's turn pairs with the
    last of its own requests answered below 400, and is judged only when the client reports usage
    (a driver that does not map the library's usage leaves ``Response.usage`` None)."""
    wire = ctx.adapter.wire_format
    pairs: list[tuple[int, Usage | None, bytes, bool]] = []
    answered_turns = [t for t in ctx.outcome.turns if t.response is not None and t.error is None]
    if ctx.client is not None:
        sent = {t.turn: t.sent for t in ctx.client}
        for turn in answered_turns:
            assert turn.response is not None
            ok = [s for s in sent.get(turn.turn, ()) if s.status is not None and s.status < 400]
            if ok and turn.response.usage is not None:
                pairs.append((turn.turn, turn.response.usage, ok[-1].response_body, ok[-1].stream))
    elif len(ctx.exchanges) == len(ctx.outcome.turns):
        for turn, exchange in zip(ctx.outcome.turns, ctx.exchanges, strict=True):
            if turn.response is not None and turn.error is None:
                pairs.append((turn.turn, turn.response.usage, exchange.response_body, exchange.stream))
    else:
        answered = [e for e in ctx.exchanges if e.status is not None and e.status < 400]
        if len(answered) != len(answered_turns):
            return None
        for turn, exchange in zip(answered_turns, answered, strict=True):
            assert turn.response is not None
            pairs.append((turn.turn, turn.response.usage, exchange.response_body, exchange.stream))
    if not pairs:
        return None
    findings: list[Finding] = []
    for number, got, body, stream in pairs:
        findings += check_usage(wire, body, got, stream=stream, turn=number)
    return verdict("roundtrip.usage", findings)


def check_usage(wire: str, body: bytes, got: Usage | None, *, stream: bool, turn: int) -> list[Finding]:
    """Compare one turn's decoded usage with what its recorded response body reports on ``wire``."""
    if stream:
        payloads = stream_payloads(body)
    else:
        try:
            payloads = [json.loads(body)]
        except ValueError:
            return []
    return usage_findings(recorded_usage(wire, payloads, stream=stream), got, turn=turn)


def stream_payloads(body: bytes) -> list[Any]:
    """The JSON payloads of an SSE, NDJSON or JSON-array stream body, in order (unparsable ones skipped)."""
    text = body.decode("utf-8", "replace").strip()
    if text.startswith("["):
        try:
            value = json.loads(text)
        except ValueError:
            value = None
        if isinstance(value, list):
            return value
    sse = any(line.startswith("data:") for line in text.splitlines())
    out: list[Any] = []
    for line in text.splitlines():
        line = line.strip()
        if sse:
            if not line.startswith("data:"):
                continue
            line = line[5:].strip()
        if not line or line == "[DONE]":
            continue
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out


def recorded_usage(wire: str, payloads: Sequence[Any], *, stream: bool) -> Usage | None:
    """The usage the recorded payloads report on ``wire`` (one body, or a stream's payloads); None when none."""
    dicts = [p for p in payloads if isinstance(p, Mapping)]
    if wire == "openai_chat":
        found = [p["usage"] for p in dicts if isinstance(p.get("usage"), Mapping)]
        if not found:
            return None
        usage = _openai(found[-1], "prompt_tokens", "completion_tokens", cache_write=True)
        if usage.cache_read_tokens is None:
            usage = replace(usage, cache_read_tokens=_int(found[-1], "prompt_cache_hit_tokens"))
        return usage
    if wire == "openai_responses":
        if stream:
            done = [p.get("response") for p in dicts if p.get("type") == "response.completed"]
            found = [r["usage"] for r in done if isinstance(r, Mapping) and isinstance(r.get("usage"), Mapping)]
        else:
            found = [p["usage"] for p in dicts if isinstance(p.get("usage"), Mapping)]
        return _openai(found[-1], "input_tokens", "output_tokens", cache_write=True) if found else None
    if wire == "anthropic":
        return _anthropic(dicts, stream=stream)
    if wire == "gemini":
        found = [p["usageMetadata"] for p in dicts if isinstance(p.get("usageMetadata"), Mapping)]
        if not found:
            return None
        meta = found[-1]
        return Usage(
            input_tokens=_int(meta, "promptTokenCount"),
            output_tokens=_int(meta, "candidatesTokenCount"),
            total_tokens=_int(meta, "totalTokenCount"),
            cache_read_tokens=_int(meta, "cachedContentTokenCount"),
            reasoning_tokens=_int(meta, "thoughtsTokenCount"),
        )
    if wire == "ollama":
        finals = [p for p in dicts if p.get("done") is True or not stream]
        if not finals or ("prompt_eval_count" not in finals[-1] and "eval_count" not in finals[-1]):
            return None
        return Usage(input_tokens=_int(finals[-1], "prompt_eval_count"), output_tokens=_int(finals[-1], "eval_count"))
    return None


def _openai(raw: Mapping[str, Any], input_key: str, output_key: str, *, cache_write: bool = False) -> Usage:
    """OpenAI usage; ``cache_write``: read ``<input>_details.cache_write_tokens`` (the Responses wire)."""
    details_in = raw.get(f"{input_key}_details")
    details_out = raw.get(f"{output_key}_details")
    return Usage(
        input_tokens=_int(raw, input_key),
        output_tokens=_int(raw, output_key),
        total_tokens=_int(raw, "total_tokens"),
        cache_read_tokens=_int(details_in, "cached_tokens"),
        cache_write_tokens=_int(details_in, "cache_write_tokens") if cache_write else None,
        reasoning_tokens=_int(details_out, "reasoning_tokens"),
    )


def _anthropic(payloads: Iterable[Mapping[str, Any]], *, stream: bool) -> Usage | None:
    merged: dict[str, Any] = {}
    seen = False
    for p in payloads:
        if stream and p.get("type") == "message_start" and isinstance(p.get("message"), Mapping):
            raw = p["message"].get("usage")
        elif stream and p.get("type") == "message_delta":
            raw = p.get("usage")
        elif not stream:
            raw = p.get("usage")
        else:
            continue
        if isinstance(raw, Mapping):
            seen = True
            merged.update((k, v) for k, v in raw.items() if v is not None)
    if not seen:
        return None
    base, output = _int(merged, "input_tokens"), _int(merged, "output_tokens")
    read, write = _int(merged, "cache_read_input_tokens"), _int(merged, "cache_creation_input_tokens")
    total_input = None if base is None else base + (read or 0) + (write or 0)
    return Usage(
        input_tokens=total_input,
        output_tokens=output,
        cache_read_tokens=read,
        cache_write_tokens=write,
        reasoning_tokens=_int(merged.get("output_tokens_details"), "thinking_tokens"),
    )


def _int(raw: Any, key: str) -> int | None:
    value = raw.get(key) if isinstance(raw, Mapping) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None
