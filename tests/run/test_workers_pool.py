"""``WorkerPool``: the workers of ``run_in_workers`` for items asked for one at a time (the pytest
plugin's pairs). One worker serves item after item; one that dies, hangs or retires costs its item
only, and the next item gets a new worker."""

from __future__ import annotations

import contextlib
import ctypes
import faulthandler
import os
import time
from collections.abc import Callable, Iterator

import pytest

from conformance.run.workers import WorkerFailure, WorkerPool, can_fork

pytestmark = pytest.mark.skipif(not can_fork(), reason="worker processes are forked")

EXIT, SEGFAULT, GIL, RETIRE = 100, 101, 102, 103
"""Items that end their worker: ``os._exit(3)``, a segfault, an hour in C holding the GIL, a retirement."""


def do(index: int) -> tuple[str, bool]:
    """Item ``index`` in a worker: its process id (or its misdeed), and whether the worker retires."""
    if index == EXIT:
        os._exit(3)
    if index == SEGFAULT:
        faulthandler.disable()  # a deliberate crash: no "Fatal Python error" stack on the run's output
        ctypes.string_at(0)
    if index == GIL:
        ctypes.PyDLL(None).sleep(3600)  # one C call that holds the GIL for an hour
    return f"{index} in {os.getpid()}", index == RETIRE


@contextlib.contextmanager
def serving() -> Iterator[Callable[[int], tuple[str, bool]]]:
    yield do


def crashed(index: int, failure: WorkerFailure) -> str:
    return f"{index} crashed: {failure.how}" + (" (hung)" if failure.hung else "")


@pytest.fixture
def pool() -> Iterator[WorkerPool[str]]:
    workers: WorkerPool[str] = WorkerPool(worker=serving, crashed=crashed, budget=lambda _index: 3.0, memory=1 << 30)
    yield workers
    workers.close()


def pid(answer: str) -> int:
    return int(answer.rpartition(" ")[2])


def test_one_worker_serves_the_items_as_they_are_asked_for(pool: WorkerPool[str]) -> None:
    first, second = pool.run(1), pool.run(2)
    assert first.startswith("1 in ") and second.startswith("2 in ")
    assert pid(first) == pid(second) != os.getpid()


@pytest.mark.parametrize(("item", "shown"), [(EXIT, "exit code 3"), (SEGFAULT, "killed by SIGSEGV")])
def test_a_worker_that_dies_costs_its_item_and_the_next_gets_a_new_worker(
    pool: WorkerPool[str], item: int, shown: str
) -> None:
    before = pid(pool.run(1))
    assert pool.run(item) == f"{item} crashed: {shown}"
    after = pid(pool.run(2))
    assert after not in (before, os.getpid())


def test_a_worker_holding_the_gil_is_killed_at_the_items_budget(pool: WorkerPool[str]) -> None:
    started = time.monotonic()
    assert pool.run(GIL) == f"{GIL} crashed: no answer within 3 s (hung)"
    assert time.monotonic() - started < 300  # the call holds the GIL for an hour: it was killed
    assert pool.run(1).startswith("1 in ")


def test_a_worker_that_retires_is_replaced_and_an_idle_worker_has_no_deadline(pool: WorkerPool[str]) -> None:
    retiring = pid(pool.run(RETIRE))
    serving_next = pool.run(1)
    assert pid(serving_next) != retiring
    time.sleep(3.5)  # idle past an item's budget: nothing is killed while no item runs
    assert pid(pool.run(2)) == pid(serving_next)


def test_close_stops_the_workers_and_the_pool_starts_again_when_asked(pool: WorkerPool[str]) -> None:
    before = pid(pool.run(1))
    pool.close()
    with pytest.raises(ProcessLookupError):
        for _ in range(100):  # closed: the worker has exited (and was reaped)
            os.kill(before, 0)
            time.sleep(0.05)
    assert pid(pool.run(2)) != before
