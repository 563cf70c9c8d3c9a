"""The fidelity allow-list: accepted differences between the emulator's traffic and real traffic.

An entry is ``"adapter kind side path [type]": reason`` (``*`` globs in kind and path, ``-`` as the
path for a whole kind, no type: any type), read from the fenced ```` ```yaml fidelity-allow ````
block of a Markdown file (``docs/emulator-fidelity.md``) so the docs and the test cannot drift.
Parsing only; the comparison is ``conformance.emulator.fidelity``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.emulator.fidelity.shapes import ADAPTERS, SIDES, TYPES, glob_match, split_path
from conformance.errors import UsageError

__all__ = ["AllowEntry", "load_allow_list", "matches", "parse_allow_list"]


@dataclass(frozen=True, kw_only=True)
class AllowEntry:
    """One accepted difference: ``adapter kind side path [type]`` (``*`` globs in kind and path;
    ``-`` as the path for a whole kind), and why it is accepted."""

    pattern: str
    reason: str


def _pattern_parts(pattern: str) -> list[str]:
    parts = pattern.split()
    return [*parts, "*"] if len(parts) == 4 else parts


def matches(pattern: str, key: str) -> bool:
    """Whether an allow-list ``pattern`` matches a difference ``key`` (``Difference.key``)."""
    return glob_match(" ".join(_pattern_parts(pattern)), key)


def parse_allow_list(data: Any, *, source: str = "allow-list") -> list[AllowEntry]:
    """Entries from the YAML allow-list value (a mapping: pattern -> reason).

    Raises ``UsageError`` naming ``source`` and the entry when a pattern is malformed (not 4 or 5
    fields, an unknown adapter, side or type, a path that is not a path) or has no reason.
    """
    if data is None:
        return []
    if not isinstance(data, dict):
        raise UsageError(
            f"{source}: the allow-list must be a YAML mapping `pattern: reason`, not {type(data).__name__}"
        )
    entries: list[AllowEntry] = []
    for pattern, reason in data.items():
        where = f"{source}: entry {pattern!r}"
        parts = str(pattern).split()
        if len(parts) not in (4, 5):
            raise UsageError(f"{where}: expected `adapter kind side path [type]` (4 or 5 fields), got {len(parts)}")
        adapter, kind, side, path = parts[:4]
        if adapter not in ADAPTERS:
            raise UsageError(f"{where}: unknown adapter {adapter!r}; valid ones: {', '.join(ADAPTERS)}")
        if side not in SIDES:
            raise UsageError(f"{where}: side must be one of {', '.join(SIDES)}, not {side!r}")
        if path != "-" and not path.startswith(("$", "*")):
            raise UsageError(f"{where}: the path must start with `$` (or `*`), or be `-` for a whole kind")
        if path != "-" and "*" not in path:
            try:
                split_path(path)
            except ValueError as exc:
                raise UsageError(f"{where}: {exc}") from None
        if len(parts) == 5 and parts[4] not in TYPES and parts[4] not in ("*", "-"):
            raise UsageError(f"{where}: unknown type {parts[4]!r}; valid ones: {', '.join(sorted(TYPES))}")
        if not isinstance(reason, str) or not reason.strip():
            raise UsageError(f"{where}: give the reason the difference is accepted")
        if not kind:
            raise UsageError(f"{where}: empty kind")
        entries.append(AllowEntry(pattern=" ".join(parts), reason=reason.strip()))
    return entries


_FENCE = re.compile(r"^```ya?ml[ \t]+fidelity-allow[ \t]*\n(.*?)^```", re.MULTILINE | re.DOTALL)


def load_allow_list(path: str | os.PathLike[str]) -> list[AllowEntry]:
    """The allow-list in a Markdown file: the fenced block opened with ```` ```yaml fidelity-allow ````.

    Raises ``UsageError`` when the file is missing, has no such block, or the block is not valid.
    """
    import yaml

    name = os.fspath(path)
    try:
        text = Path(name).read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"{name}: cannot read the fidelity allow-list: {exc.strerror or exc}") from None
    blocks = list(_FENCE.finditer(text))
    if len(blocks) != 1:
        raise UsageError(f"{name}: expected exactly one ```yaml fidelity-allow block, found {len(blocks)}")
    first_line = text.count("\n", 0, blocks[0].start(1)) + 1
    try:
        data = yaml.safe_load(blocks[0].group(1))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f"line {first_line + mark.line}" if mark is not None else "the fidelity-allow block"
        raise UsageError(
            f"{name}, {where}: not valid YAML ({exc.problem}); quote a reason holding `: `, ` #` or a leading "
            f"backtick/bracket"
        ) from None
    except yaml.YAMLError as exc:
        raise UsageError(f"{name}: the fidelity-allow block is not valid YAML: {exc}") from None
    return parse_allow_list(data, source=name)
