"""Fixtures of the reporting tests (the run results themselves are in ``_runs.py``)."""

from __future__ import annotations

import pytest

from conformance.verdicts import RunResult
from tests.reporting import _runs


@pytest.fixture
def mixed_run() -> RunResult:
    return _runs.build_mixed_run()


@pytest.fixture
def empty_run() -> RunResult:
    return _runs.empty_run()
