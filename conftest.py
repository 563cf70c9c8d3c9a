"""Repo-level pytest configuration (kept minimal; shared fixtures live in ``tests/conftest.py``).

Hypothesis runs without its per-example deadline: this suite runs on small shared machines where
wall-clock timings vary by 2x or more (docs/toolchain.md, "Timing caveat"), and a deadline there
only makes tests flaky. A test that needs a deadline sets its own ``@settings``.
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("conformance", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "conformance"))
