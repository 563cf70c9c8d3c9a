"""Streaming checks (stream mode only).

``streaming.lifecycle``         per call: start, chunks, end; chunks join to the complete arguments; ids stable;
                                nothing after finish (``conformance.assembly.lifecycle_problems``);
``streaming.fold``              the folded stream gives the same text, calls (names, arguments, errors) and
                                finish reason as the non-streamed run of the same scenario (where the scenario
                                says what is right and only one mode gives it, the finding blames the other; on a
                                live cassette: as the stream's own decoding recorded live, the two modes being two
                                generations);
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
from conformance.checks._common import CaseContext, calls_words, diff_findings, same_json, verdict
from conformance.checks.roundtrip import calls_findings
from conformance.model import Response, StreamEvent, Text, ToolCall
from conformance.run.conversation import TurnOutcome
from conformance.scenarios.values import Mode
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
        findings += _fold_findings(ctx, streamed, whole)
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
            message="the streamed decoding differs from the decoding recorded live for this turn",
        )
    return verdict(check, findings) if compared else None


_FIELD_WORDS = {"text": "text", "calls": "tool calls", "finish_reason": "finish reason"}


def _fold_findings(ctx: CaseContext, streamed: TurnOutcome, whole: TurnOutcome) -> list[Finding]:
    """One finding per part of the reply (text, calls, finish reason) on which the two decodings of a
    turn differ. Where the scenario says what that part must be and only one decoding gives it, the
    finding blames the other (``wrong_mode``): expected is the right one, actual the wrong one.
    Otherwise expected is the non-streamed decoding and actual the streamed one."""
    ours, theirs = response_projection(streamed.response), response_projection(whole.response)
    findings: list[Finding] = []
    for field, what in _FIELD_WORDS.items():
        if same_json(theirs.get(field), ours.get(field)):
            continue
        stream_ok = _as_scenario_says(ctx, streamed, field)
        non_stream_ok = _as_scenario_says(ctx, whole, field)
        if non_stream_ok is True and stream_ok is False:
            wrong: Mode | None = "stream"
            expected, actual = theirs.get(field), ours.get(field)
            message = (
                f"the streamed decoding is wrong: it gives {_part_words(field, actual)} where the scenario and the "
                f"non-streamed decoding give {_part_words(field, expected)}"
            )
        elif stream_ok is True and non_stream_ok is False:
            wrong = "non_stream"
            expected, actual = ours.get(field), theirs.get(field)
            message = (
                f"the non-streamed decoding is wrong: it gives {_part_words(field, actual)} where the scenario and the "
                f"streamed decoding give {_part_words(field, expected)}"
            )
        else:
            wrong = None
            expected, actual = theirs.get(field), ours.get(field)
            why = (
                "the scenario does not say which is right"
                if stream_ok is None
                else "both differ from the scenario"
                if not stream_ok
                else "both meet the scenario's expectation"
            )
            message = (
                f"the streamed and non-streamed decodings give other {what} ({why}): expected is the non-streamed "
                f"{what}, actual the streamed {what}"
            )
        findings.append(
            Finding(
                check="streaming.fold",
                message=message,
                path=f"$.{field}",
                expected=expected,
                actual=actual,
                turn=streamed.turn,
                wrong_mode=wrong,
            )
        )
    return findings


def _as_scenario_says(ctx: CaseContext, turn: TurnOutcome, field: str) -> bool | None:
    """Does ``turn``'s decoded ``field`` meet what the scenario expects of it (None: it expects nothing)?"""
    if turn.turn >= len(ctx.scenario.turns) or turn.response is None:
        return None
    expect = ctx.scenario.turns[turn.turn].expect
    if expect.error is not None:
        return None
    response = turn.response
    if field == "calls":
        return None if expect.tool_calls is None else not calls_findings(response, expect.tool_calls, turn.turn)
    if field == "text":
        if expect.text is None:
            return None
        got = "".join(p.text for p in response.parts if isinstance(p, Text))
        return got == expect.text.value if expect.text.mode == "exact" else expect.text.value in got
    return None if expect.finish_reason is None else response.finish_reason == expect.finish_reason


def _part_words(field: str, value: Any) -> str:
    """A projected part of a reply in words ("1 call get_time", "the finish reason 'stop'", "no text")."""
    if field == "calls":
        names = [str(c.get("name")) for c in value or () if isinstance(c, dict)]
        return calls_words(names)
    if field == "text":
        return f"the text {_short(value)}" if value else "no text"
    return f"the finish reason {value!r}" if value is not None else "no finish reason"


def _short(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


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
                    message=(
                        "the whole body in one piece gives other events than the replayed chunks (the decoder "
                        "depends on how the bytes arrive)"
                    ),
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
        message=_cut_words(name, index, len(expected), len(actual)),
        path=f"turn {turn.turn} events[{index}]",
        expected=repr(expected[index]) if index < len(expected) else None,
        actual=repr(actual[index]) if index < len(actual) else None,
        turn=turn.turn,
    )


def _cut_words(name: str, index: int, expected: int, actual: int) -> str:
    """How the events of a stream cut into pieces differ from those of the whole body, in words."""
    counts = f"cut into {name}, the stream gives {actual} events where the whole body gives {expected}"
    if index >= actual:
        return f"{counts}: event #{index} is missing"
    if index >= expected:
        return f"{counts}: event #{index} is not expected"
    return f"cut into {name}, the stream gives another event #{index} than the whole body in one piece"


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
                        message=f"the event {want!r} is missing (expected, in this order: {', '.join(wanted)})",
                        path=f"turn {turn.turn} events",
                        expected=list(wanted),
                        actual=types,
                        turn=turn.turn,
                    )
                )
                break
    return verdict(check, findings) if ran else None
