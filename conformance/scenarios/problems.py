"""A problem found in a scenario file, and where it is (``conformance.scenarios.loader`` re-exports it).

Positions come from the YAML nodes (``_positioned_yaml``): every value and every mapping key of the
document has its 1-based line and column, keyed by its path of keys and list indexes. A problem
about a mapping key (an unknown or duplicate key) points at the key; one about a value points at
the value; a missing key points at the mapping that lacks it.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeAlias

__all__ = ["DocPath", "Locator", "ScenarioProblem", "closest", "json_pointer", "type_name"]

DocPath: TypeAlias = tuple[str | int, ...]
"""A place in the document: the keys and list indexes from the top (``("turns", 0, "reply")``)."""


@dataclass(frozen=True, kw_only=True)
class ScenarioProblem:
    """One thing wrong with a scenario file, with its place and what to do about it."""

    path: Path
    """The scenario file."""
    line: int | None = None
    """1-based line of the offending node (None: the file as a whole, e.g. it cannot be read)."""
    column: int | None = None
    """1-based column of the offending node."""
    pointer: str = ""
    """JSON pointer (RFC 6901) to the offending node; ``""`` is the whole document."""
    message: str
    """What is wrong."""
    expected: str = ""
    """What would be valid there."""
    hint: str = ""
    """What to do next."""

    def __str__(self) -> str:
        where = str(self.path) if self.line is None else f"{self.path}:{self.line}:{self.column}"
        text = f"{where}: {self.pointer or '(top level)'}: {self.message}"
        if self.expected:
            text += f" (expected: {self.expected})"
        if self.hint:
            text += f" hint: {self.hint}"
        return text

    def to_json(self) -> dict[str, Any]:
        """The problem as a JSON object (the ``conformance validate --format json`` shape)."""
        return {
            "path": str(self.path),
            "line": self.line,
            "column": self.column,
            "pointer": self.pointer,
            "message": self.message,
            "expected": self.expected,
            "hint": self.hint,
        }


def json_pointer(at: DocPath) -> str:
    """``("turns", 0, "a/b")`` -> ``/turns/0/a~1b`` (RFC 6901)."""
    return "".join("/" + str(step).replace("~", "~0").replace("/", "~1") for step in at)


@dataclass(frozen=True)
class Locator:
    """Positions of the nodes of one document, and a maker of problems placed on them."""

    path: Path
    values: Mapping[DocPath, tuple[int, int]]
    """(line, column) of each value node."""
    keys: Mapping[DocPath, tuple[int, int]]
    """(line, column) of the key of each mapping entry."""

    def value_position(self, at: DocPath) -> tuple[int, int] | None:
        """Where the value at ``at`` is (or its nearest enclosing node that has a position)."""
        for end in range(len(at), -1, -1):
            position = self.values.get(at[:end])
            if position is not None:
                return position
        return None

    def key_position(self, at: DocPath) -> tuple[int, int] | None:
        """Where the key of the entry ``at`` is (else where its value is)."""
        return self.keys.get(at) or self.value_position(at)

    def problem(
        self, at: DocPath, message: str, *, expected: str = "", hint: str = "", on_key: bool = False
    ) -> ScenarioProblem:
        """A problem about the node at ``at`` (about its key when ``on_key``)."""
        position = self.key_position(at) if on_key else self.value_position(at)
        line, column = position if position is not None else (None, None)
        return ScenarioProblem(
            path=self.path,
            line=line,
            column=column,
            pointer=json_pointer(at),
            message=message,
            expected=expected,
            hint=hint,
        )


def closest(word: str, choices: Iterable[str]) -> str:
    """``did you mean 'x'?`` for the closest of ``choices``, or ``""`` when none is close."""
    match = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"did you mean {match[0]!r}?" if match else ""


_TYPE_NAMES: tuple[tuple[type, str], ...] = (
    (bool, "a boolean"),
    (int, "an integer"),
    (float, "a number"),
    (str, "a string"),
    (list, "a list"),
    (dict, "a mapping"),
)


def type_name(value: Any) -> str:
    """The YAML-flavoured name of a value's type (``a mapping``, ``a list``, ``null`` ...)."""
    if value is None:
        return "null"
    for cls, name in _TYPE_NAMES:
        if isinstance(value, cls):
            return name
    return type(value).__name__
