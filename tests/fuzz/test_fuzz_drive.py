"""The fuzz tier's own machinery: a crash, a hang, a dead worker and a memory blow-up are each
caught, reported with what reproduces them, and cost only their own input."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

import conformance.cli.inspect
import conformance.run.runner  # imported before a test patches load_cassette: they bind it by name
import conformance.traffic.cassettes
import tests.fuzz._drive
from tests.fuzz._crafted import crafted
from tests.fuzz._drive import check_input, run_inputs
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
    monkeypatch.setattr(tests.fuzz._drive, "_WATCHDOG_SLACK", 3.0)  # the parent's wait past the worker's alarm
    keys = ["selftest:raise", "selftest:hang", "cassette:0", "selftest:stuck", "selftest:segv", "selftest:memory"]
    keys.append("cassette:1")
    outcome = run_inputs("0", keys, workers=1, input_timeout=1.5)
    found = {f.key: f for f in outcome.findings}
    assert set(found) == {k for k in keys if k.startswith("selftest:")}
    assert found["selftest:raise"].what == "crash" and "KeyError" in found["selftest:raise"].detail
    assert found["selftest:hang"].what == "hang" and "alarm" in found["selftest:hang"].detail
    assert found["selftest:stuck"].what == "hang" and "watchdog" in found["selftest:stuck"].detail
    assert found["selftest:segv"].what == "crash" and "died" in found["selftest:segv"].detail
    assert found["selftest:memory"].what == "crash" and "MemoryError" in found["selftest:memory"].detail
    assert outcome.ran["input"] == len(keys)
    assert outcome.ran["load_cassette"] == 2  # both real inputs ran, each in a worker after a failure
