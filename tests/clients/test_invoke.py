"""Driving one turn of a client (``conformance.clients.invoke``): every shape ``complete`` may
take (sync or async, a Response or stream events), one long-lived loop for every async turn,
what the library raised with its ``error_info``, a turn that hangs, and a result that is none."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from conformance.clients.contract import Call, SimpleClient
from conformance.clients.invoke import ClientCrashed, EventLoop, InvalidCompletion, TurnResult, invoke
from conformance.model import ErrorInfo, Finish, Response, StreamEvent, Text, TextDelta

CALL = Call(wire="openai_chat", base_url="http://127.0.0.1:1", api_key="fake", model="m", stream=True)
ANSWER = Response(parts=(Text(text="hello"),), finish_reason="stop")
EVENTS: tuple[StreamEvent, ...] = (TextDelta(text="hel"), TextDelta(text="lo"), Finish(reason="stop"))
LIMITED = ErrorInfo(kind="rate_limit", message="slow down", status=429, retry_after=2.0)
HANG = 3600.0
"""Seconds a hanging turn waits (the ``release`` fixture ends it when the test does)."""
SLACK = 20.0
"""Seconds a timed-out turn may take beyond its timeout: room for a machine at a load of 10, and still
far below ``HANG``, so a turn that ended in time ended by its timeout and not by the hang finishing."""


class RateLimited(Exception):
    pass


def _typed(exc: BaseException) -> ErrorInfo | None:
    return LIMITED if isinstance(exc, RateLimited) else None


def _client(complete: Any, error_info: Any = _typed) -> SimpleClient:
    return SimpleClient(name="t", wires={"openai_chat": frozenset()}, complete=complete, error_info=error_info)


@pytest.fixture
def loop() -> Iterator[EventLoop]:
    with EventLoop() as running:
        yield running


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """Set after the test: a hung sync turn's worker thread then finishes."""
    gate = threading.Event()
    yield gate
    gate.set()


def _run(complete: Any, loop: EventLoop, *, timeout: float = 5.0, error_info: Any = _typed) -> TurnResult:
    return invoke(_client(complete, error_info), CALL, loop, timeout=timeout)


# --------------------------------------------------------------------------------------------
# The shapes of a result
# --------------------------------------------------------------------------------------------


def test_a_sync_client_returning_a_response(loop: EventLoop) -> None:
    seen: list[threading.Thread] = []

    def complete(call: Call) -> Response:
        seen.append(threading.current_thread())
        assert call is CALL
        return ANSWER

    result = _run(complete, loop)
    assert result == TurnResult(returned="response", response=ANSWER, seconds=result.seconds)
    assert result.seconds >= 0
    assert seen[0] is not threading.main_thread()  # a sync turn runs in a worker thread


def test_a_sync_generator_of_events(loop: EventLoop) -> None:
    def complete(call: Call) -> Iterator[StreamEvent]:
        yield from EVENTS

    result = _run(complete, loop)
    assert (result.returned, result.events, result.response) == ("events", EVENTS, None)


def test_a_sync_client_returning_a_list_of_events(loop: EventLoop) -> None:
    result = _run(lambda call: list(EVENTS), loop)
    assert (result.returned, result.events) == ("events", EVENTS)


def test_an_async_def_returning_a_response(loop: EventLoop) -> None:
    async def complete(call: Call) -> Response:
        await asyncio.sleep(0)
        return ANSWER

    result = _run(complete, loop)
    assert (result.returned, result.response) == ("response", ANSWER)


def test_an_async_generator_of_events(loop: EventLoop) -> None:
    async def complete(call: Call) -> AsyncIterator[StreamEvent]:
        for event in EVENTS:
            await asyncio.sleep(0)
            yield event

    result = _run(complete, loop)
    assert (result.returned, result.events) == ("events", EVENTS)


def test_a_coroutine_returning_an_async_iterator(loop: EventLoop) -> None:
    async def events() -> AsyncIterator[StreamEvent]:
        for event in EVENTS:
            yield event

    async def complete(call: Call) -> AsyncIterator[StreamEvent]:
        await asyncio.sleep(0)
        return events()

    result = _run(complete, loop)
    assert (result.returned, result.events) == ("events", EVENTS)


def test_a_sync_function_returning_a_coroutine_runs_it_on_the_loop(loop: EventLoop) -> None:
    ran_on: list[asyncio.AbstractEventLoop] = []

    async def work() -> Response:
        ran_on.append(asyncio.get_running_loop())
        return ANSWER

    result = _run(lambda call: work(), loop)
    assert (result.returned, result.response) == ("response", ANSWER)
    assert ran_on == [loop.loop]


def test_every_async_turn_runs_on_the_same_loop(loop: EventLoop) -> None:
    loops: list[asyncio.AbstractEventLoop] = []

    async def complete(call: Call) -> Response:
        loops.append(asyncio.get_running_loop())
        return ANSWER

    async def stream(call: Call) -> AsyncIterator[StreamEvent]:
        loops.append(asyncio.get_running_loop())
        yield TextDelta(text="x")

    for _ in range(3):
        assert _run(complete, loop).returned == "response"
        assert _run(stream, loop).returned == "events"
    assert len(loops) == 6
    assert all(seen is loop.loop for seen in loops)


def test_an_event_loop_stops_and_closes() -> None:
    running = EventLoop()
    assert running.loop.is_running()
    running.close()
    assert running.loop.is_closed()
    running.close()  # twice is harmless


# --------------------------------------------------------------------------------------------
# What the library raised
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_a_typed_error_is_raised_with_its_error_info(loop: EventLoop, kind: str) -> None:
    def sync(call: Call) -> Response:
        raise RateLimited("slow down")

    async def asynchronous(call: Call) -> Response:
        raise RateLimited("slow down")

    result = _run(sync if kind == "sync" else asynchronous, loop)
    assert result.returned == "raised"
    assert result.error_info == LIMITED
    assert result.error_info_failed is None
    assert result.exception == f"{__name__}.RateLimited: slow down"


def test_error_info_none_is_untyped(loop: EventLoop) -> None:
    def complete(call: Call) -> Response:
        raise ConnectionResetError("peer reset")

    result = _run(complete, loop)
    assert result.returned == "raised"
    assert result.error_info is None and result.error_info_failed is None
    assert result.exception == "builtins.ConnectionResetError: peer reset"


def test_error_info_itself_raising_is_error_info_failed(loop: EventLoop) -> None:
    def complete(call: Call) -> Response:
        raise RateLimited("slow down")

    def broken(exc: BaseException) -> ErrorInfo:
        raise KeyError("status")

    result = _run(complete, loop, error_info=broken)
    assert result.returned == "raised"
    assert result.error_info is None
    assert result.error_info_failed == "KeyError: 'status'"


def test_error_info_returning_something_else_is_error_info_failed(loop: EventLoop) -> None:
    def complete(call: Call) -> Response:
        raise RateLimited("slow down")

    result = _run(complete, loop, error_info=lambda exc: {"kind": "rate_limit"})
    assert result.returned == "raised" and result.error_info is None
    assert result.error_info_failed == "error_info returned a dict, not an ErrorInfo or None"


def test_an_exception_carrying_its_description_is_named_by_it(loop: EventLoop) -> None:
    class Described(Exception):
        described = "openai.RateLimitError: 429 from the other interpreter"

    def complete(call: Call) -> Response:
        raise Described("ignored")

    assert _run(complete, loop).exception == Described.described


def test_events_yielded_before_an_exception_are_kept(loop: EventLoop) -> None:
    def complete(call: Call) -> Iterator[StreamEvent]:
        yield EVENTS[0]
        yield EVENTS[1]
        raise RateLimited("cut")

    result = _run(complete, loop)
    assert result.returned == "raised"
    assert result.events == EVENTS[:2]
    assert result.error_info == LIMITED


def test_async_events_yielded_before_an_exception_are_kept(loop: EventLoop) -> None:
    async def complete(call: Call) -> AsyncIterator[StreamEvent]:
        yield EVENTS[0]
        raise ConnectionError("incomplete chunked read")

    result = _run(complete, loop)
    assert (result.returned, result.events) == ("raised", EVENTS[:1])
    assert result.exception == "builtins.ConnectionError: incomplete chunked read"


def test_system_exit_is_not_swallowed(loop: EventLoop) -> None:
    def complete(call: Call) -> Response:
        raise SystemExit(3)

    with pytest.raises(SystemExit):
        _run(complete, loop)


# --------------------------------------------------------------------------------------------
# Hangs
# --------------------------------------------------------------------------------------------


def test_a_sync_hang_times_out_within_the_timeout(loop: EventLoop, release: threading.Event) -> None:
    def complete(call: Call) -> Response:
        release.wait(HANG)
        return ANSWER

    started = time.perf_counter()
    result = _run(complete, loop, timeout=0.3)
    took = time.perf_counter() - started
    assert result.returned == "timeout"
    assert result.exception == "the turn did not finish within 0.3 s"
    assert 0.3 <= took < 0.3 + SLACK
    assert 0.3 <= result.seconds < 0.3 + SLACK


def test_an_async_hang_times_out_and_is_cancelled(loop: EventLoop) -> None:
    cancelled = threading.Event()

    async def complete(call: Call) -> Response:
        try:
            await asyncio.sleep(HANG)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return ANSWER

    started = time.perf_counter()
    result = _run(complete, loop, timeout=0.3)
    assert result.returned == "timeout"
    assert 0.3 <= time.perf_counter() - started < 0.3 + SLACK
    assert cancelled.wait(SLACK)  # the hung coroutine does not linger on the shared loop
    assert _run(lambda call: ANSWER, loop).returned == "response"  # the loop still serves


def test_events_before_a_hang_are_kept(loop: EventLoop, release: threading.Event) -> None:
    def complete(call: Call) -> Iterator[StreamEvent]:
        yield EVENTS[0]
        release.wait(HANG)

    result = _run(complete, loop, timeout=0.3)
    assert (result.returned, result.events) == ("timeout", EVENTS[:1])


def test_an_async_stream_that_hangs_keeps_its_events(loop: EventLoop) -> None:
    async def complete(call: Call) -> AsyncIterator[StreamEvent]:
        yield EVENTS[0]
        await asyncio.sleep(HANG)

    result = _run(complete, loop, timeout=0.3)
    assert (result.returned, result.events) == ("timeout", EVENTS[:1])


# --------------------------------------------------------------------------------------------
# No result
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [42, None, "text", b"bytes", {"parts": []}], ids=repr)
def test_returning_something_else_is_invalid(loop: EventLoop, value: object) -> None:
    result = _run(lambda call: value, loop)
    assert result.returned == "invalid"
    assert result.exception == f"complete returned a {type(value).__name__}, not a Response or stream events"


def test_an_async_def_returning_something_else_is_invalid(loop: EventLoop) -> None:
    async def complete(call: Call) -> int:
        return 42

    result = _run(complete, loop)
    assert (result.returned, result.exception) == (
        "invalid",
        "complete returned a int, not a Response or stream events",
    )


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_invalid_completion_is_invalid(loop: EventLoop, kind: str) -> None:
    def sync(call: Call) -> Response:
        raise InvalidCompletion("the driver returned no result")

    async def asynchronous(call: Call) -> Response:
        raise InvalidCompletion("the driver returned no result")

    result = _run(sync if kind == "sync" else asynchronous, loop)
    assert (result.returned, result.exception) == ("invalid", "the driver returned no result")
    assert result.error_info is None


def test_a_wrapper_whose_process_crashed_is_a_crashed_turn_never_the_librarys_raise(loop: EventLoop) -> None:
    """``ClientCrashed`` (a ``--python`` child that died or hung) is the case's ERROR: ``crashed``,
    with the events before it, and ``error_info`` is never asked about it."""
    asked: list[BaseException] = []

    def complete(call: Call) -> Iterator[StreamEvent]:
        yield TextDelta(text="part")
        raise ClientCrashed("the driver's interpreter died: killed by SIGSEGV")

    def error_info(exc: BaseException) -> ErrorInfo | None:
        asked.append(exc)
        return None

    result = _run(complete, loop, error_info=error_info)
    assert result.returned == "crashed"
    assert result.exception == "the driver's interpreter died: killed by SIGSEGV"
    assert result.events == (TextDelta(text="part"),) and not asked
