"""Repo-level pytest configuration (kept minimal; shared fixtures live in ``tests/conftest.py``).

Network guard: every test runs inside ``conformance.traffic.network_guard.network_guard()`` (autouse, whole
session), so a connect to anything but loopback fails loudly with ``NetworkBlockedError``.

Hypothesis runs without its per-example deadline: this suite runs on small shared machines where
wall-clock timings vary by 2x or more (docs/toolchain.md, "Timing caveat"), and a deadline there
only makes tests flaky. A test that needs a deadline sets its own ``@settings``.
"""

from __future__ import annotations

import os
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
