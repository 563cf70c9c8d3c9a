"""The bounds on untrusted input files, in one place (``docs/limits.md``).

Cassettes and scenarios come from other people: a few hundred bytes of YAML aliases can stand
for gigabytes, a gzip body can inflate a thousandfold, nested brackets can exhaust the stack and
two ``$ref`` per level double a schema at each level. Every reader of such a file checks the
``Limits`` in force and, past one, stops at once with an error naming the file, the place, the
limit and how to raise it (``InputLimitError`` for cassettes, a ``ScenarioProblem`` for scenarios,
``UnsupportedContentError`` for a schema an adapter cannot expand).

The defaults are far above anything a real file holds (the bundled cassettes and scenarios and
the real-world cassettes of ``tests/realworld`` peak at about 1,700 YAML nodes, 18 levels of
nesting and 77 KB per file, with no aliases) and low enough that a hostile file is refused in
well under a second with flat memory. They are overridden by the environment variable
``CONFORMANCE_LIMITS`` (``name=value`` pairs, comma-separated), which worker subprocesses inherit,
or by the repeatable ``--limit NAME=VALUE`` option of the commands that read files (which sets
that variable). Values are whole numbers; ``K``, ``M`` and ``G`` suffixes multiply by 1024.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from conformance.errors import InputLimitError, UsageError

__all__ = [
    "DESCRIPTIONS",
    "ENV_VAR",
    "Limits",
    "current",
    "expanded_schema_size",
    "how_to_raise",
    "parse",
    "parse_size",
    "read_bounded",
    "with_overrides",
]

ENV_VAR = "CONFORMANCE_LIMITS"
"""Environment variable holding the overrides, e.g. ``yaml_nodes=2000000,body_bytes=128M``."""

_MIB = 1024 * 1024


@dataclass(frozen=True, kw_only=True)
class Limits:
    """The bounds on one input file; see ``DESCRIPTIONS`` and ``docs/limits.md``."""

    yaml_nodes: int = 1_000_000
    """Nodes of one YAML document, each alias counted as the nodes it stands for."""
    yaml_aliases: int = 10_000
    """Alias uses (``*name``) in one YAML document."""
    yaml_expanded_bytes: int = 64 * _MIB
    """Characters of the scalars of one YAML document, each alias counted as the text it stands for."""
    nesting_depth: int = 100
    """Levels of nested mappings/lists in a YAML document, or in a JSON body of a cassette."""
    body_bytes: int = 32 * _MIB
    """Bytes of one body after gzip decompression."""
    schema_nodes: int = 100_000
    """Nodes of one tool's input schema once every ``$ref`` is inlined."""


DESCRIPTIONS: dict[str, str] = {
    "yaml_nodes": "nodes of one YAML document, aliases counted as what they stand for",
    "yaml_aliases": "alias uses (*name) in one YAML document",
    "yaml_expanded_bytes": "characters of one YAML document's scalars, aliases counted as what they stand for",
    "nesting_depth": "levels of nesting in a YAML document or a JSON body",
    "body_bytes": "bytes of one body after gzip decompression",
    "schema_nodes": "nodes of one tool input schema with every $ref inlined",
}
"""What each limit bounds, by name (the field names of ``Limits``)."""

_NAMES = tuple(f.name for f in fields(Limits))
_SUFFIXES = {"K": 1024, "M": _MIB, "G": 1024 * _MIB}


def how_to_raise(name: str) -> str:
    """The sentence an error ends with: how to raise limit ``name`` for a file you trust."""
    return InputLimitError.how_to_raise(name)


def parse_size(text: str) -> int:
    """A size in bytes: a whole number (``_`` between digits allowed), with an optional ``K``, ``M``
    or ``G`` (times 1024); ``ValueError`` for anything else. Its sign is the caller's to check."""
    raw = text.strip().replace("_", "")
    factor = _SUFFIXES.get(raw[-1:].upper(), 1) if raw else 1
    digits = raw[:-1] if factor != 1 else raw
    if not digits.lstrip("-").isdigit():
        raise ValueError(text)
    return int(digits) * factor


def _value(name: str, text: str, origin: str) -> int:
    try:
        size = parse_size(text)
    except ValueError:
        size = 0
    if size <= 0:
        raise UsageError(f"{origin}: limit {name} must be a positive whole number (K, M, G allowed), not {text!r}")
    return size


def parse(pairs: Sequence[str], *, base: Limits | None = None, origin: str = "--limit") -> Limits:
    """``base`` (default: the built-in defaults) with the ``name=value`` ``pairs`` applied; a pair
    may hold several, comma-separated. Raises ``UsageError`` naming the valid limits for an unknown
    name, and for a value that is not a positive whole number."""
    changes: dict[str, int] = {}
    for pair in pairs:
        for item in filter(None, (part.strip() for part in pair.split(","))):
            name, equals, text = item.partition("=")
            name = name.strip()
            if not equals:
                raise UsageError(f"{origin}: {item!r} is not NAME=VALUE; limits: {', '.join(_NAMES)}")
            if name not in _NAMES:
                raise UsageError(f"{origin}: unknown limit {name!r}; limits: {', '.join(_NAMES)}")
            changes[name] = _value(name, text, origin)
    return replace(base or Limits(), **changes)


_cache: tuple[str, Limits] | None = None


def read_bounded(path: Path, where: str) -> bytes:
    """The bytes of ``path``, read no further than ``yaml_expanded_bytes`` (the bound of cassettes):
    a larger file is a ``UsageError`` that starts with ``where``, names the limit and how to raise
    it, raised before the file is read whole. ``OSError`` propagates."""
    limit = current().yaml_expanded_bytes
    with path.open("rb") as handle:
        raw = handle.read(limit + 1)
    if len(raw) > limit:
        raise UsageError(
            f"{where}: larger than {limit} bytes: past the limit yaml_expanded_bytes={limit} "
            f"({how_to_raise('yaml_expanded_bytes')})"
        )
    return raw


def current() -> Limits:
    """The limits in force: the defaults with ``$CONFORMANCE_LIMITS`` applied (re-read when it
    changes). Raises ``UsageError`` when the variable is malformed."""
    global _cache
    text = os.environ.get(ENV_VAR, "")
    if _cache is None or _cache[0] != text:
        _cache = (text, parse([text], origin=f"${ENV_VAR}"))
    return _cache[1]


def with_overrides(pairs: Sequence[str]) -> Limits:
    """Apply ``--limit`` ``pairs`` over the limits in force and put the result in
    ``$CONFORMANCE_LIMITS``, so worker subprocesses inherit it; returns it. Raises ``UsageError``."""
    limits = parse(pairs, base=current())
    if pairs:
        os.environ[ENV_VAR] = ",".join(f"{name}={getattr(limits, name)}" for name in _NAMES)
    return limits


class _Past(Exception):
    pass


def expanded_schema_size(schema: Any, *, stop: int) -> int:
    """How many JSON values ``schema`` holds once every local ``$ref`` (``#/...``) is replaced by
    what it points to, as an adapter that inlines references builds it (a reference met again
    inside itself counts one). Linear in the schema: each reference is measured once. Counting
    stops past ``stop`` (the result is then ``stop + 1``), so a schema of 26 levels of two
    references each (2**26 values) is measured at once, not built."""
    sizes: dict[str, int] = {}
    active: set[str] = set()

    def target(ref: str) -> tuple[bool, Any]:
        node: Any = schema
        for token in ref[2:].split("/") if ref != "#" else []:
            token = token.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, Mapping) or token not in node:
                return False, None
            node = node[token]
        return True, node

    def size(node: Any) -> int:
        total = 1
        if isinstance(node, Mapping):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#") and ref not in active:
                if ref not in sizes:
                    found, value = target(ref)
                    active.add(ref)
                    try:
                        sizes[ref] = size(value) if found else 1
                    finally:
                        active.discard(ref)
                total += sizes[ref]
            total += sum(size(value) for key, value in node.items() if key != "$ref")
        elif isinstance(node, list):
            total += sum(size(item) for item in node)
        if total > stop:
            raise _Past
        return total

    try:
        return size(schema)
    except (_Past, RecursionError):
        return stop + 1
