"""Repo-level pytest configuration (kept minimal; shared fixtures live in ``tests/conftest.py``).

Network guard: every test runs inside ``conformance.traffic.network_guard.network_guard()`` (autouse, whole
session), so a connect to anything but loopback fails loudly with ``NetworkBlockedError``.

Hypothesis runs without its per-example deadline: this suite runs on small shared machines where
wall-clock timings vary by 2x or more (docs/toolchain.md, "Timing caveat"), and a deadline there
only makes tests flaky. A test that needs a deadline sets its own ``@settings``.

Tiers (docs/testing.md): the bare ``pytest`` runs every test on both cores (``-n auto`` in
pyproject.toml) but the opt-in tiers of ``OPT_IN``, which are skipped with one line naming the command
that runs them, unless ``-m`` names their marker. ``live_local`` and ``bench`` do the same in their
own folders' conftest.py.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator

import pytest
from hypothesis import settings

from conformance.traffic.network_guard import network_guard

settings.register_profile("conformance", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "conformance"))


@pytest.fixture(autouse=True, scope="session")
def _no_network_beyond_loopback() -> Iterator[None]:
    with network_guard():
        yield


def pytest_configure(config: pytest.Config) -> None:
    """A pytest that a test starts (``python -m pytest ...`` from the checkout, as a doc says) runs in
    its own process, not on workers of its own beside this run's (``-n auto`` in pyproject.toml): set
    for the processes that run tests, an xdist worker or a run with ``-n 0``, never for the controller,
    whose workers read the environment too. pytester's inner sessions drop PYTEST_ADDOPTS anyway."""
    if hasattr(config, "workerinput") or config.getoption("dist", "no") == "no":
        os.environ["PYTEST_ADDOPTS"] = " ".join(filter(None, [os.environ.get("PYTEST_ADDOPTS"), "-n 0"]))


OPT_IN = {
    "fuzz_corpus": (
        "the whole fuzz corpus (3,000 files, 4,000 child-protocol lines, 66 hostile servers; about 2 min): "
        "run it with `pytest -m fuzz_corpus`"
    ),
    "packaging": "builds the wheel and installs it in a fresh venv (about 30 s): run it with `pytest -m packaging`",
    "libraries": (
        "re-certifies real libraries from .venvs/ (about 1 min): run it with "
        "`python scripts/certify_libraries.py --no-certify && pytest -m libraries`"
    ),
    "javascript": (
        "certifies the JavaScript drivers of examples/clients/node on Node >= 22 (about 1 min): run it with "
        "`python scripts/node_runtime.py install && pytest -m javascript`"
    ),
    "mcp_conformance": (
        "the official MCP conformance suite against the bundled MCP server over Streamable HTTP (about 1 min): "
        "run it with `python scripts/mcp_conformance_suite.py install && pytest -m mcp_conformance`"
    ),
}
"""Marker -> the skip reason: what the tier does, how long it takes, the command that runs it."""
_SKIPPED = "opt-in tier:"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip the opt-in tiers' tests unless ``-m`` names their marker (``-m "not packaging"`` names it
    too, and deselects it)."""
    named = set(re.findall(r"[\w.]+", config.getoption("markexpr", "") or ""))
    for item in items:
        for marker, reason in OPT_IN.items():
            if marker not in named and item.get_closest_marker(marker) is not None:
                item.add_marker(pytest.mark.skip(reason=f"{_SKIPPED} {reason}"))
                break


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[pytest.TestReport]:
    """An opt-in tier's skips are one line per file in the summary (``-ra``): without a line number,
    which pytest keeps apart for a test function that carries marks of its own."""
    report: pytest.TestReport = yield
    if report.skipped and isinstance(report.longrepr, tuple) and _SKIPPED in str(report.longrepr[2]):
        report.longrepr = (report.longrepr[0], None, report.longrepr[2])
    return report
