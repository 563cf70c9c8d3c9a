"""Where the bundled scenarios, cassettes and equivalence table live: the one module that knows.

Installed from a wheel they are package data, ``conformance/_bundled/scenarios`` and
``conformance/_bundled/cassettes`` (pyproject.toml maps the repository's top-level folders there);
in a checkout or an editable install they are the repository's ``scenarios/`` and ``cassettes/``
beside the package. Every default that means "the bundled ones" asks here, so every command works
from any directory.
"""

from __future__ import annotations

from pathlib import Path

import conformance

__all__ = ["cassettes_dir", "equivalences_file", "is_checkout", "scenarios_dir"]

_PACKAGE = Path(conformance.__file__).resolve().parent


def _find(name: str) -> Path:
    installed = _PACKAGE / "_bundled" / name
    if installed.is_dir():
        return installed
    return _PACKAGE.parent / name


def is_checkout() -> bool:
    """True when the package runs from a source tree (the bundled data is the repository's folders,
    where ``conformance record`` may write), False when it is installed package data."""
    return not (_PACKAGE / "_bundled").is_dir()


def scenarios_dir() -> Path:
    """The bundled scenarios folder (``$CONFORMANCE_SCENARIOS`` is the loader's business)."""
    return _find("scenarios")


def cassettes_dir() -> Path:
    """The bundled cassettes folder: ``<traffic format>/<scenario id>.yaml`` under it."""
    return _find("cassettes")


def equivalences_file() -> Path:
    """The suite's table of accepted equivalences (``docs/equivalences.md`` in a checkout,
    ``conformance/_bundled/docs/equivalences.md`` installed)."""
    return _find("docs") / "equivalences.md"
