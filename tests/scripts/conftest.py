"""The ``script`` fixture: scripts/certify_libraries.py loaded as a module (``certify_libraries``)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "certify_libraries.py"


@pytest.fixture(scope="session")
def script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("certify_libraries", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["certify_libraries"] = module  # its dataclasses look their module up while being made
    spec.loader.exec_module(module)
    return module
