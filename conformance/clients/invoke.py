"""Call a client's ``complete`` for one turn and collect what it gave back (stdlib-only).

Sync and async clients are driven alike: an ``async def complete`` (or one returning an awaitable
or an async iterator) runs on the run's one long-lived ``EventLoop`` (a loop per turn would break
the library's pooled connections); a sync one runs in a worker thread. Either way the turn has
``timeout`` seconds. Stream events are kept as they arrive, so a stream the library breaks
mid-way keeps the events before the break beside the exception it raised. A turn that overran its
timeout may still run (a thread cannot be stopped, a coroutine may ignore its cancellation), and
one may have run out of memory: ``strained()`` says so, and a worker process retires then. A client
wrapper whose own process died, hung or broke its protocol (``conformance.clients.remote``) raises
``ClientCrashed``: the turn is ``crashed``, the case's ERROR, never what the library raised.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import inspect
import os
import threading
import time
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from typing import Any, Literal

from conformance.clients.contract import Call, Client
from conformance.model import ErrorInfo, Response, StreamEvent

__all__ = ["ClientCrashed", "EventLoop", "InvalidCompletion", "TurnResult", "invoke", "strained"]

Returned = Literal["response", "events", "raised", "timeout", "invalid", "crashed"]


@dataclass(frozen=True, kw_only=True)
class TurnResult:
    """What ``complete`` gave for one turn."""

    returned: Returned
    response: Response | None = None
    events: tuple[StreamEvent, ...] = ()
    exception: str | None = None
    """``module.Class: message`` of what the library raised (or why the turn gave nothing usable)."""
    error_info: ErrorInfo | None = None
    """``client.error_info(exception)``; None when it is not typed (or nothing was raised)."""
    error_info_failed: str | None = None
    """``error_info`` itself raised this."""
    seconds: float = 0.0


_strain: list[str] = []
"""Why this process should run no more turns (a turn overran its timeout, or ran out of memory)."""


def _forget_strain() -> None:
    _strain.clear()  # a forked child runs none of its parent's turns


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_strain)


def strained() -> bool:
    """Whether a turn in this process overran its timeout (it may still run) or ran out of memory."""
    return bool(_strain)


class InvalidCompletion(Exception):
    """Raised by a client wrapper whose driver gave something that is not a result (reported as such)."""


class ClientCrashed(Exception):
    """Raised by a client wrapper whose process died, hung or broke the protocol (reported as the
    case's ERROR, with what happened: an exit code or signal, "no answer in N s", its stderr's tail)."""


class EventLoop:
    """One asyncio loop in a daemon thread, for every async turn of a run."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="conformance-client-loop", daemon=True)
        self._thread.start()

    def run(self, coroutine: Any, timeout: float) -> Any:
        future = asyncio.run_coroutine_threadsafe(coroutine, self.loop)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise

    def close(self) -> None:
        async def _shutdown() -> None:
            await self.loop.shutdown_asyncgens()

        if self.loop.is_running():
            with contextlib.suppress(Exception):  # a library's generator that will not close: leave it
                asyncio.run_coroutine_threadsafe(_shutdown(), self.loop).result(5)
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(timeout=5)
        if not self.loop.is_running():
            self.loop.close()

    def __enter__(self) -> EventLoop:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def invoke(client: Client, call: Call, loop: EventLoop, *, timeout: float) -> TurnResult:
    """Run ``client.complete(call)`` within ``timeout`` seconds; never raises for the client's faults."""
    events: list[StreamEvent] = []
    started = time.perf_counter()
    box: dict[str, Any] = {}

    async def consume_async() -> None:
        await _take_async(client.complete(call), events, box)

    def consume_sync() -> None:
        result = client.complete(call)
        if inspect.isawaitable(result) or isinstance(result, AsyncIterator):
            loop.run(_take_async(result, events, box), timeout)
            return
        _take(result, events, box)

    try:
        if inspect.iscoroutinefunction(client.complete) or inspect.isasyncgenfunction(client.complete):
            loop.run(consume_async(), timeout)
        else:
            _in_thread(consume_sync, timeout)
    except (TimeoutError, concurrent.futures.TimeoutError):
        _strain.append("timeout")
        return TurnResult(
            returned="timeout",
            events=tuple(events),
            exception=f"the turn did not finish within {timeout:g} s",
            seconds=time.perf_counter() - started,
        )
    except InvalidCompletion as exc:
        return TurnResult(returned="invalid", exception=str(exc), seconds=time.perf_counter() - started)
    except ClientCrashed as exc:
        return TurnResult(
            returned="crashed", events=tuple(events), exception=str(exc), seconds=time.perf_counter() - started
        )
    except BaseException as exc:  # whatever the library raised is the turn's outcome
        if isinstance(exc, KeyboardInterrupt | SystemExit):
            raise
        if isinstance(exc, MemoryError):
            _strain.append("memory")
        return _raised(client, exc, events, time.perf_counter() - started)
    seconds = time.perf_counter() - started
    if "invalid" in box:
        return TurnResult(returned="invalid", exception=box["invalid"], seconds=seconds)
    if "response" in box:
        return TurnResult(returned="response", response=box["response"], seconds=seconds)
    return TurnResult(returned="events", events=tuple(events), seconds=seconds)


def _raised(client: Client, exc: BaseException, events: list[StreamEvent], seconds: float) -> TurnResult:
    name = getattr(exc, "described", None) or f"{type(exc).__module__}.{type(exc).__qualname__}: {exc}"
    try:
        info = client.error_info(exc)
    except Exception as failure:
        return TurnResult(
            returned="raised",
            events=tuple(events),
            exception=name,
            error_info_failed=f"{type(failure).__name__}: {failure}",
            seconds=seconds,
        )
    if info is not None and not isinstance(info, ErrorInfo):
        return TurnResult(
            returned="raised",
            events=tuple(events),
            exception=name,
            error_info_failed=f"error_info returned a {type(info).__name__}, not an ErrorInfo or None",
            seconds=seconds,
        )
    return TurnResult(returned="raised", events=tuple(events), exception=name, error_info=info, seconds=seconds)


def _take(result: Any, events: list[StreamEvent], box: dict[str, Any]) -> None:
    if isinstance(result, Response):
        box["response"] = result
        return
    if isinstance(result, Iterable) and not isinstance(result, str | bytes | dict):
        for event in result:
            events.append(event)
        return
    box["invalid"] = f"complete returned a {type(result).__name__}, not a Response or stream events"


async def _take_async(result: Any, events: list[StreamEvent], box: dict[str, Any]) -> None:
    if inspect.isawaitable(result):
        result = await result
    if isinstance(result, AsyncIterator):
        async for event in result:
            events.append(event)
        return
    _take(result, events, box)


def _in_thread(work: Any, timeout: float) -> None:
    """Run ``work`` in a daemon thread; raise ``TimeoutError`` when it overruns (the thread is left)."""
    box: dict[str, BaseException] = {}
    done = threading.Event()

    def target() -> None:
        try:
            work()
        except BaseException as exc:
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=target, name="conformance-client-turn", daemon=True).start()
    if not done.wait(timeout):
        raise TimeoutError(f"the turn did not finish within {timeout:g} s")
    if "error" in box:
        raise box["error"]
