"""The fuzz tier's seeded corpus: thousands of mutated cassettes and scenarios, and the crafted
ones, through every entry point a user's file reaches; 0 crashes and 0 hangs.

The default run (bare ``pytest``) takes the crafted inputs and a seeded sample of the corpus, every
``SAMPLE_EVERY``-th input (150 of 3,000, a few seconds); the whole corpus is the ``fuzz_corpus`` tier
(``pytest -m fuzz_corpus``, about 2 min on 2 cores with the other targets; docs/testing.md).

The run is deterministic: ``CONFORMANCE_FUZZ_SEED`` (default ``0``) seeds it, and
``CONFORMANCE_FUZZ_CASSETTES`` / ``CONFORMANCE_FUZZ_SCENARIOS`` (defaults 2,000 and 1,000) say how
many inputs to make; ``CONFORMANCE_FUZZ_WORKERS`` how many worker processes run them (default 2).
A longer local run::

    CONFORMANCE_FUZZ_SEED=7 CONFORMANCE_FUZZ_CASSETTES=20000 CONFORMANCE_FUZZ_SCENARIOS=10000 \\
        python -m pytest tests/fuzz -m fuzz_corpus -s

Each input is bounded by its CPU time, not the wall clock (``tests/fuzz/_drive.py``): an input the
machine was too busy to finish within the wall cap is listed as "machine too busy", not as a hang.

Every finding is listed with its reproducer (``python -m tests.fuzz._drive --seed S KIND INDEX``);
none stops the run.
"""

from __future__ import annotations

import os

import pytest

from tests.fuzz._crafted import crafted
from tests.fuzz._drive import Outcome, run_inputs

pytestmark = pytest.mark.fuzz

SEED = os.environ.get("CONFORMANCE_FUZZ_SEED", "0")
CASSETTES = int(os.environ.get("CONFORMANCE_FUZZ_CASSETTES", "2000"))
SCENARIOS = int(os.environ.get("CONFORMANCE_FUZZ_SCENARIOS", "1000"))
WORKERS = int(os.environ.get("CONFORMANCE_FUZZ_WORKERS", str(min(2, os.cpu_count() or 1))))
SAMPLE_EVERY = 20
"""The default run's sample: inputs 0, 20, 40, ... of the corpus (the same inputs, reproduced the same way)."""


def _summary(what: str, outcome: Outcome) -> str:
    ran = ", ".join(f"{name} {count}" for name, count in sorted(outcome.ran.items()))
    crashes = sum(f.what == "crash" for f in outcome.findings)
    hangs = sum(f.what == "hang" for f in outcome.findings)
    busy = f", {len(outcome.busy)} not judged (machine too busy)" if outcome.busy else ""
    return f"fuzz {what} (seed {SEED}): {ran}; {crashes} crash(es), {hangs} hang(s){busy} in {outcome.seconds:.1f} s"


def _report(what: str, outcome: Outcome, capsys: pytest.CaptureFixture[str]) -> None:
    with capsys.disabled():
        print("\n" + _summary(what, outcome))
        for busy in outcome.busy:  # said, not failed: the machine, not the package
            print(busy.describe())
    listing = "\n".join(f.describe() for f in outcome.findings)
    assert not outcome.findings, f"{_summary(what, outcome)}\n{listing}"


def _corpus(every: int) -> list[str]:
    return [f"cassette:{i}" for i in range(0, CASSETTES, every)] + [f"scenario:{i}" for i in range(0, SCENARIOS, every)]


def test_the_crafted_inputs_crash_nothing_and_hang_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    keys = [f"crafted:{name}" for name in crafted()]
    outcome = run_inputs(SEED, keys, workers=WORKERS)
    assert outcome.ran["input"] == len(keys) >= 40
    _report("crafted", outcome, capsys)


def test_a_seeded_sample_of_the_corpus_crashes_nothing_and_hangs_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    keys = _corpus(SAMPLE_EVERY)
    outcome = run_inputs(SEED, keys, workers=WORKERS)
    assert outcome.ran["input"] == len(keys) >= 150
    _report(f"sample, every {SAMPLE_EVERY}th input (the whole corpus: pytest -m fuzz_corpus)", outcome, capsys)


@pytest.mark.fuzz_corpus
def test_the_mutated_corpus_crashes_nothing_and_hangs_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    keys = _corpus(1)
    outcome = run_inputs(SEED, keys, workers=WORKERS)
    assert outcome.ran["input"] == CASSETTES + SCENARIOS
    # every cassette reached the loader, or is a finding there (listed below with its reproducer)
    stopped = sum(f.entry in ("input", "load_cassette") for f in [*outcome.findings, *outcome.busy])
    assert outcome.ran.get("load_cassette", 0) + stopped >= CASSETTES
    _report("corpus", outcome, capsys)
