"""JSON paths as the checks print them (``$.tools[0].name``, ``$.headers["content-type"]``), and globs over them.

Pure and dependency-free, so every check module (and the equivalence table) can use them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache
from typing import Any

__all__ = ["glob_matches", "step"]

_IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$-]*")


@cache
def _glob(pattern: str) -> re.Pattern[str]:
    return re.compile("".join(".*" if ch == "*" else "." if ch == "?" else re.escape(ch) for ch in pattern))


def glob_matches(path: str, globs: Iterable[str]) -> bool:
    """Does the JSON path ``path`` (``$.tools[0].name``) match one of ``globs`` (``*`` any run of
    characters, ``?`` one, everything else literal, brackets included)?"""
    return any(_glob(pattern).fullmatch(path) for pattern in globs)


def step(path: str, key: Any) -> str:
    key = str(key)
    return f"{path}.{key}" if _IDENT.fullmatch(key) else f'{path}["{key}"]'
