"""Shared fixtures of the self-test tests: the bundled scenarios and the reference adapters' cases,
computed once per session (each reference run replays every bundled scenario)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest

from conformance.run.runner import RunOptions
from conformance.scenarios.values import Scenario
from conformance.selftest import default_cassette_dir, reference_cases, replayed_scenarios
from conformance.verdicts import CaseResult
from tests.selftest._support import References


@pytest.fixture(scope="session")
def scenarios() -> Sequence[Scenario]:
    return replayed_scenarios()


@pytest.fixture(scope="session")
def options() -> RunOptions:
    return RunOptions(cassette_dir=default_cassette_dir())


@pytest.fixture(scope="session")
def references(scenarios: Sequence[Scenario], options: RunOptions) -> References:
    """base adapter -> (its cases by (scenario, mode), its failed or erroring cases), cached."""
    cache: dict[str, tuple[Mapping[tuple[str, str], CaseResult], list[CaseResult]]] = {}

    def get(base: str) -> tuple[Mapping[tuple[str, str], CaseResult], list[CaseResult]]:
        if base not in cache:
            cache[base] = reference_cases(base, scenarios, options)
        return cache[base]

    return get
