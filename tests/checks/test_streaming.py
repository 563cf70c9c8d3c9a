from __future__ import annotations

from pathlib import Path

from conformance.adapters import get_adapter
from conformance.checks._common import CaseContext
from conformance.checks.streaming import check_streaming, splits
from conformance.model import Response, Text, ToolCall
from conformance.run.conversation import ConversationOutcome, TurnOutcome, build_request
from conformance.scenarios.loader import load_scenario
from conformance.scenarios.values import Mode
from conformance.verdicts import Finding

ROOT = Path(__file__).resolve().parents[2]


def test_splits_cover_single_bytes_random_and_every_two_way_cut() -> None:
    data = b"data: {}\n\n"
    named = [(name, list(pieces)) for name, pieces in splits(data, seed=7, exhaustive=True)]
    assert all(b"".join(pieces) == data for _, pieces in named)
    assert named[0] == ("single bytes", [bytes([b]) for b in data])
    two_way = [pieces for name, pieces in named if name.startswith("2-way")]
    assert len(two_way) == len(data) - 1 and all(len(p) == 2 and p[0] and p[1] for p in two_way)


def test_random_splits_are_seeded() -> None:
    data = bytes(range(200))

    def named(seed: int) -> list[tuple[str, list[bytes]]]:
        return [(name, list(pieces)) for name, pieces in splits(data, seed=seed, exhaustive=False)]

    assert named(3) == named(3)
    assert named(3) != named(4)


# -- streaming.fold: which mode is wrong ----------------------------------------------------------------


def _fold(streamed: Response, whole: Response) -> list[Finding]:
    """The fold findings of turn 0 of basic/get_time (the scenario expects one call getTime there and
    the finish reason ``tool_calls``, and says nothing of text)."""
    scenario = load_scenario(ROOT / "scenarios" / "basic" / "get_time.yaml", root=ROOT / "scenarios")
    adapter = get_adapter("openai_chat")
    request = build_request(scenario, [], model="m", stream=True)

    def outcome(response: Response, mode: Mode) -> ConversationOutcome:
        turn = TurnOutcome(
            turn=0, request=request, wire=adapter.request_to_wire(request), status=200, response=response
        )
        return ConversationOutcome(scenario=scenario.id, adapter=adapter.name, mode=mode, turns=(turn,))

    ctx = CaseContext(
        scenario=scenario,
        adapter=adapter,
        mode="stream",
        outcome=outcome(streamed, "stream"),
        non_stream=outcome(whole, "non_stream"),
    )
    [fold] = [v for v in check_streaming(ctx) if v.check == "streaming.fold"]
    return list(fold.findings)


CALL = ToolCall(id="call_1", name="getTime", arguments={"offset_ms": -86400000}, arguments_raw="{}")
PROJECTED = [{"name": "getTime", "arguments": {"offset_ms": -86400000}, "arguments_error": False}]


def test_fold_blames_the_non_streamed_decoding_when_only_the_streamed_one_gives_the_scenarios_calls() -> None:
    [finding] = _fold(Response(parts=(CALL,)), Response(parts=()))
    assert finding.wrong_mode == "non_stream"
    assert (finding.expected, finding.actual) == (PROJECTED, [])  # expected: the right side
    assert finding.message == (
        "the non-streamed decoding is wrong: it gives no call where the scenario and the streamed decoding give "
        "1 call getTime"
    )


def test_fold_blames_the_streamed_decoding_when_only_the_non_streamed_one_gives_the_scenarios_calls() -> None:
    [finding] = _fold(Response(parts=()), Response(parts=(CALL,)))
    assert finding.wrong_mode == "stream"
    assert (finding.expected, finding.actual) == (PROJECTED, [])
    assert finding.message.startswith("the streamed decoding is wrong: it gives no call where the scenario")


def test_fold_blames_no_mode_where_the_scenario_does_not_say() -> None:
    [finding] = _fold(Response(parts=(Text(text="ok"), CALL)), Response(parts=(CALL,)))
    assert finding.wrong_mode is None and finding.path == "$.text"
    assert (finding.expected, finding.actual) == ("", "ok")  # non-streamed, streamed
    assert "(the scenario does not say which is right)" in finding.message


def test_fold_names_the_finish_reason_the_scenario_expects() -> None:
    [finding] = _fold(
        Response(parts=(CALL,), finish_reason="stop"), Response(parts=(CALL,), finish_reason="tool_calls")
    )
    assert finding.wrong_mode == "stream" and (finding.expected, finding.actual) == ("tool_calls", "stop")
    assert finding.message == (
        "the streamed decoding is wrong: it gives the finish reason 'stop' where the scenario and the non-streamed "
        "decoding give the finish reason 'tool_calls'"
    )
