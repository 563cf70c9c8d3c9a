"""Streaming checks (stream mode only).

``streaming.lifecycle``         per call: start, chunks, end; chunks join to the complete arguments; ids stable;
                                nothing after finish (``conformance.assembly.lifecycle_problems``);
``streaming.fold``              the folded stream gives the same text, calls (names, arguments, errors) and
                                finish reason as the non-streamed run of the same scenario (on a live cassette:
                                as the stream's own decoding recorded live, the two modes being two generations);
``streaming.chunk_invariance``  feeding the recorded bytes one byte at a time and in seeded random pieces (every
                                2-way cut too with ``--exhaustive``) gives identical events;
``streaming.events``            the scenario's expected event types appear in that order.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from conformance.assembly import lifecycle_problems
from conformance.checks._common import CaseContext, diff_findings, verdict
from conformance.model import Response, StreamEvent, Text, ToolCall
from conformance.run.conversation import TurnOutcome
from conformance.verdicts import CheckVerdict, Finding

__all__ = ["RANDOM_SPLITS", "check_streaming", "response_projection", "splits"]

RANDOM_SPLITS = 3
"""Seeded random re-splits of each stream per case (besides single bytes)."""


def check_streaming(ctx: CaseContext) -> Sequence[CheckVerdict]:
    if ctx.mode != "stream" or not ctx.outcome.turns:
        return ()
    invariance = _chunk_invariance(ctx) if ctx.client is None else None  # a client decodes with its own code
    verdicts = (_lifecycle(ctx), invariance, _fold(ctx), _events(ctx))
    return [v for v in verdicts if v is not None]


def _lifecycle(ctx: CaseContext) -> CheckVerdict | None:
    check = "streaming.lifecycle"
    turns = [t for t in ctx.outcome.turns if t.status is not None and t.status < 400 and _has_events(ctx, t.turn)]
    if not turns and ctx.client is not None:
        return None
    findings = [
        Finding(check=check, message=problem, path=f"turn {turn.turn} events", turn=turn.turn)
        for turn in turns
        for problem in lifecycle_problems(turn.events)
    ]
    return verdict(check, findings)


def _has_events(ctx: CaseContext, turn: int) -> bool:
    """Did the turn give stream events? (A client that only exposes an accumulated result gives a
    ``Response``, and one that raised gives its exception: the event checks do not apply to them.)"""
    if ctx.client is None:
        return True
    return any(t.turn == turn and t.result.returned == "events" for t in ctx.client)


def response_projection(response: Response | None) -> dict[str, Any]:
    """What a streamed and a non-streamed decoding of the same reply must agree on (ids may be
    synthetic, derived from different bytes, so they are left out)."""
    if response is None:
        return {}
    return {
        "text": "".join(p.text for p in response.parts if isinstance(p, Text)),
        "calls": [
            {"name": c.name, "arguments": c.arguments, "arguments_error": c.arguments_error is not None}
            for c in response.parts
            if isinstance(c, ToolCall)
        ],
        "finish_reason": response.finish_reason,
    }


def _fold(ctx: CaseContext) -> CheckVerdict | None:
    check = "streaming.fold"
    if ctx.recorded_decoding is not None:  # live: the stream against its own decoding, recorded with it
        return _fold_recorded(ctx, ctx.recorded_decoding)
    if ctx.non_stream is None:
        return None
    findings: list[Finding] = []
    pairs = zip(ctx.outcome.turns, ctx.non_stream.turns, strict=False)
    compared = False
    for streamed, whole in pairs:
        if streamed.error is not None or whole.error is not None:
            continue
        compared = True
        findings += diff_findings(
            check,
            response_projection(whole.response),
            response_projection(streamed.response),
            prefix="$",
            turn=streamed.turn,
            message="streamed (actual) vs non-streamed (expected)",
        )
    return verdict(check, findings) if compared else None


def _fold_recorded(ctx: CaseContext, recorded: Mapping[int, Mapping[str, Any]]) -> CheckVerdict | None:
    """``streaming.fold`` on a live cassette: live, the streamed and the non-streamed answers are two
    generations, so each streamed turn is compared with the decoding recorded for it (``conformance.run.live``)."""
    check = "streaming.fold"
    findings: list[Finding] = []
    compared = False
    for streamed in ctx.outcome.turns:
        want = recorded.get(streamed.turn)
        if want is None or streamed.error is not None:
            continue
        compared = True
        findings += diff_findings(
            check,
            dict(want),
            response_projection(streamed.response),
            prefix="$",
            turn=streamed.turn,
            message="streamed (actual) vs its decoding recorded live (expected)",
        )
    return verdict(check, findings) if compared else None


def splits(data: bytes, *, seed: int, exhaustive: bool) -> Iterable[tuple[str, Iterable[bytes]]]:
    """Named ways to cut ``data``: single bytes, seeded random pieces, and every 2-way cut. The
    single bytes come one at a time (as a list they took ~40 bytes of memory per byte of body: 350 MB
    for an 8 MB stream, which the fuzz tier found)."""
    if len(data) > 1:
        yield "single bytes", (data[i : i + 1] for i in range(len(data)))
    rng = random.Random(seed)
    for n in range(RANDOM_SPLITS):
        cuts = sorted(rng.sample(range(1, len(data)), min(len(data) - 1, rng.randint(1, 12)))) if len(data) > 1 else []
        bounds = [0, *cuts, len(data)]
        yield f"random split #{n} (seed {seed})", [data[a:b] for a, b in itertools.pairwise(bounds)]
    if exhaustive:
        for cut in range(1, len(data)):
            yield f"2-way cut at byte {cut}", [data[:cut], data[cut:]]


def _chunk_invariance(ctx: CaseContext) -> CheckVerdict:
    check = "streaming.chunk_invariance"
    findings: list[Finding] = []
    streamed = [e for e in ctx.exchanges if e.stream and e.status is not None and e.status < 400]
    turns = [t for t in ctx.outcome.turns if t.status is not None and t.status < 400]
    for exchange, turn in zip(streamed, turns, strict=False):
        whole = [exchange.response_body]  # a list the caller keeps: translation.no_mutation watches it
        reference = _decode(ctx, whole, one_shot=False) if exchange.response_body else list(turn.events)
        if reference != list(turn.events):
            findings.append(
                Finding(
                    check=check,
                    message="the whole body in one piece gives other events than the replayed chunks",
                    path=f"turn {turn.turn}",
                    turn=turn.turn,
                )
            )
            continue
        for name, pieces in splits(exchange.response_body, seed=ctx.seed + turn.turn, exhaustive=ctx.exhaustive):
            events = _decode(ctx, pieces)
            if events != reference:
                findings.append(_first_difference(check, name, reference, events, turn))
                break
    return verdict(check, findings)


def _decode(ctx: CaseContext, pieces: Iterable[bytes], *, one_shot: bool = True) -> list[StreamEvent]:
    """The events of ``pieces``, given as a one-shot iterator (a network stream) or as they are (a list)."""
    chunks = iter(pieces) if one_shot else pieces
    return list(ctx.adapter.stream_from_wire(chunks, tools=ctx.scenario.tools))


def _first_difference(
    check: str, name: str, expected: list[StreamEvent], actual: list[StreamEvent], turn: TurnOutcome
) -> Finding:
    index = next(
        (i for i, (a, b) in enumerate(zip(expected, actual, strict=False)) if a != b), min(len(expected), len(actual))
    )
    return Finding(
        check=check,
        message=f"{name}: events differ from event #{index}",
        path=f"turn {turn.turn} events[{index}]",
        expected=repr(expected[index]) if index < len(expected) else None,
        actual=repr(actual[index]) if index < len(actual) else None,
        turn=turn.turn,
    )


def _events(ctx: CaseContext) -> CheckVerdict | None:
    check = "streaming.events"
    findings: list[Finding] = []
    ran = False
    for turn in ctx.outcome.turns:
        wanted = ctx.scenario.turns[turn.turn].expect.events
        if wanted is None or not _has_events(ctx, turn.turn):
            continue
        ran = True
        types: list[str] = [e.type for e in turn.events]
        position = 0
        for want in wanted:
            try:
                position = types.index(want, position) + 1
            except ValueError:
                findings.append(
                    Finding(
                        check=check,
                        message=f"expected event {want!r} (in order) is missing",
                        path=f"turn {turn.turn} events",
                        expected=list(wanted),
                        actual=types,
                        turn=turn.turn,
                    )
                )
                break
    return verdict(check, findings) if ran else None
