"""The fuzz tier's own machinery: a crash, a hang, a dead worker and a memory blow-up are each
caught, reported with what reproduces them, and cost only their own input."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

import conformance.run.runner  # imported before a test patches load_cassette: they bind it by name
import conformance.traffic.cassettes
import conformance.traffic.inspect
import tests.fuzz._drive
from tests.fuzz._crafted import crafted
from tests.fuzz._drive import check_input, cpu_seconds, run_inputs, schedstat, stalled
from tests.fuzz._mutations import cassette_input, scenario_input

pytestmark = pytest.mark.fuzz


def test_an_input_is_the_same_bytes_for_the_same_seed_and_index() -> None:
    assert cassette_input("7", 12) == cassette_input("7", 12)
    assert scenario_input("7", 3).data == scenario_input("7", 3).data
    assert {cassette_input("7", i).data for i in range(20)} != {cassette_input("8", i).data for i in range(20)}
    assert cassette_input("7", 12).key == "cassette:12"


def test_the_crafted_corpus_holds_the_bombs_of_issue_14() -> None:
    names = set(crafted())
    assert len(names) >= 40
    assert {"c-laughs-body", "c-gzip-1gib", "c-deep-3000-text", "c-surrogate-chunk", "c-bad-uri"} <= names
    assert {"s-laughs", "s-ref-exponential", "s-surrogate-tool", "s-deep-arguments", "s-python-tag"} <= names
    assert all(len(inp.data) < 10 << 20 for inp in crafted().values())


def test_an_exception_escaping_a_loader_is_a_crash_naming_the_input(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(path: object) -> object:
        raise KeyError("boom")

    monkeypatch.setattr(conformance.traffic.cassettes, "load_cassette", broken)
    inp = cassette_input("0", 4)
    with tempfile.TemporaryDirectory() as tmp:
        ran, findings = check_input(inp, Path(tmp) / "in", {}, full_run=False)
    assert "load_cassette" in ran
    crash = next(f for f in findings if f.entry == "load_cassette")
    assert crash.what == "crash" and crash.key == "cassette:4" and "KeyError: 'boom'" in crash.detail
    assert "--seed 0 cassette 4" in crash.describe()


def test_the_watchdog_catches_hangs_deaths_and_blow_ups_and_the_run_goes_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bounds are CPU time: a spinning input is a hang after 1 s of CPU however busy the machine is,
    and the inputs that finish get all the wall time they need (a wall cap of 10 minutes)."""
    monkeypatch.setattr(tests.fuzz._drive, "_WATCHDOG_SLACK", 1.0)  # the parent's CPU allowance past the alarm
    keys = ["selftest:raise", "selftest:hang", "cassette:0", "selftest:stuck", "selftest:segv", "selftest:memory"]
    keys.append("cassette:1")
    outcome = run_inputs("0", keys, workers=1, input_timeout=1.0, wall_cap=600)
    found = {f.key: f for f in outcome.findings}
    assert set(found) == {k for k in keys if k.startswith("selftest:")}, outcome.findings
    assert found["selftest:raise"].what == "crash" and "KeyError" in found["selftest:raise"].detail
    assert (
        found["selftest:hang"].what == "hang"
        and "over 1 s of CPU time (the worker's alarm)" in found["selftest:hang"].detail
    )
    assert (
        found["selftest:stuck"].what == "hang"
        and "2 s of CPU time (killed by the watchdog)" in found["selftest:stuck"].detail
    )
    assert found["selftest:segv"].what == "crash" and "died" in found["selftest:segv"].detail
    assert found["selftest:memory"].what == "crash" and "MemoryError" in found["selftest:memory"].detail
    assert outcome.ran["input"] == len(keys) and not outcome.busy
    assert outcome.ran["load_cassette"] == 2  # both real inputs ran, each in a worker after a failure


@pytest.mark.skipif(schedstat() is None, reason="needs /proc/<pid>/task/*/schedstat (Linux)")
def test_an_input_asleep_past_the_wall_cap_is_a_hang_deaf_or_not(monkeypatch: pytest.MonkeyPatch) -> None:
    """The wall cap finds an input that sleeps (a wait that never ends): a hang, whether the worker's
    own alarm ends it or, deaf to it, the parent's watchdog kills it. Asleep, it waits for no CPU, so a
    busy machine does not make it ``busy``."""
    monkeypatch.setattr(tests.fuzz._drive, "_WATCHDOG_SLACK", 1.0)
    outcome = run_inputs("0", ["selftest:sleep", "selftest:stuck-sleep"], workers=1, input_timeout=60, wall_cap=2)
    found = {f.key: f for f in outcome.findings}
    assert set(found) == {"selftest:sleep", "selftest:stuck-sleep"} and not outcome.busy, outcome
    assert all(f.what == "hang" and "asleep the rest (a wait that never ends)" in f.detail for f in found.values())
    assert "the worker's wall cap" in found["selftest:sleep"].detail
    assert "killed by the watchdog" in found["selftest:stuck-sleep"].detail


def test_an_input_that_waited_for_a_cpu_is_busy_not_a_hang() -> None:
    """Still running at the wall cap but wanting a CPU most of that time: the machine was too busy
    to judge the input (``busy``), not a hang; asleep most of it: a hang."""
    before = {"1": (0, 0), "2": (5_000_000_000, 0)}
    waiting = {"1": (1_000_000_000, 8_000_000_000), "2": (5_500_000_000, 500_000_000)}
    assert stalled(before, waiting, 10.0)[0] == "busy"
    assert "machine too busy" in stalled(before, waiting, 10.0)[1]
    asleep = {"1": (1_000_000_000, 1_000_000_000), "3": (0, 10_000)}  # thread 2 ended, 3 is new
    assert stalled(before, asleep, 10.0)[0] == "hang"
    assert stalled(None, asleep, 10.0)[0] == "busy"  # no schedstat: not judged
    spent = cpu_seconds(os.getpid())
    assert spent is None or spent > 0
