"""The command line's tests read its output as text: they run with a wide terminal (``COLUMNS``), so a
message or a path is on one line, unless a test lays the output out at a width of its own
(tests/cli/test__summary.py renders at 80 columns)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _wide_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "1000")
