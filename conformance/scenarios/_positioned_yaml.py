"""YAML text -> plain JSON-shaped data, keeping the line and column of every node.

PyYAML's safe composer builds the node graph (every node has its start mark); this module walks
it into dicts, lists and scalars itself, so that it can report what ``yaml.safe_load`` accepts
silently: duplicate keys, keys that are not strings, and tags outside the core JSON-like set
(``!!binary``, ``!!set``, ``!!python/...``, custom ``!tags``). Anchors, aliases and merge keys
(``<<: *base``) are fine. Timestamps (``2023-05-22``) stay strings: JSON has no date type.
Pure: takes the text, returns data, positions and problems.

Scenario files are untrusted: before anything is composed, libyaml's events are counted against
``conformance.limits`` (alias uses, nodes and text with aliases expanded, nesting; libyaml's
composer recurses in C and crashes the process on a very deep file), and the walk stops past
``yaml_nodes`` or ``nesting_depth`` too. A string holding a lone UTF-16 surrogate (the escape
``"\ud800"``, which the pure-Python composer accepts) is a problem: UTF-8, and so every wire
format, cannot carry it. A valid escaped pair (``"\ud83d\ude00"``) is joined into its character.

``fast=True`` composes with libyaml (``yaml.CSafeLoader``, about ten times faster) instead of the
pure-Python composer. Its node graph and marks are the same for a valid file, but its messages
and positions for a broken one are its own: the scenario loader composes a file again with
``fast=False`` when anything is wrong with it, so every problem is placed and worded as before.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from conformance.errors import InputLimitError
from conformance.limits import Limits, current, how_to_raise
from conformance.scenarios.problems import DocPath, Locator, ScenarioProblem, json_pointer
from conformance.traffic.safe_yaml import FastSafeLoader, check_bounds

__all__ = ["YamlDocument", "compose"]

_TAG = "tag:yaml.org,2002:"
_STR, _NULL, _BOOL, _INT, _FLOAT = (_TAG + name for name in ("str", "null", "bool", "int", "float"))
_TIMESTAMP, _MAP, _SEQ, _MERGE = (_TAG + name for name in ("timestamp", "map", "seq", "merge"))
_SURROGATES = re.compile("[\ud800-\udfff]")
_SURROGATE = _SURROGATES.search


@dataclass(frozen=True)
class YamlDocument:
    """The data of one YAML document and where each part of it is."""

    data: Any
    locator: Locator


class _TooLarge(Exception):
    def __init__(self, node: Node, what: str, limit: str) -> None:
        super().__init__(what)
        self.node, self.what, self.limit = node, what, limit


@dataclass
class _Walker:
    loader: yaml.SafeLoader | yaml.CSafeLoader
    path: Path
    limits: Limits
    values: dict[DocPath, tuple[int, int]] = field(default_factory=dict)
    keys: dict[DocPath, tuple[int, int]] = field(default_factory=dict)
    problems: list[ScenarioProblem] = field(default_factory=list)
    active: set[int] = field(default_factory=set)
    count: int = 0
    chars: int = 0

    def report(self, node: Node, at: DocPath, message: str, *, expected: str = "", hint: str = "") -> None:
        line, column = _position(node)
        self.problems.append(
            ScenarioProblem(
                path=self.path,
                line=line,
                column=column,
                pointer=json_pointer(at),
                message=message,
                expected=expected,
                hint=hint,
            )
        )

    def value(self, node: Node, at: DocPath) -> Any:
        self.count += 1
        if self.count > self.limits.yaml_nodes:
            raise _TooLarge(node, "the document expands to too many nodes through aliases", "yaml_nodes")
        if len(at) >= self.limits.nesting_depth:
            raise _TooLarge(node, "the document nests too deeply", "nesting_depth")
        if id(node) in self.active:
            self.report(node, at, "an alias refers to a node that contains it (a recursive structure)")
            return None
        self.active.add(id(node))
        try:
            if isinstance(node, MappingNode):
                self.check_tag(node, at, _MAP)
                result: Any = self.mapping(node, at)
            elif isinstance(node, SequenceNode):
                self.check_tag(node, at, _SEQ)
                result = [self.value(item, (*at, i)) for i, item in enumerate(node.value)]
            else:
                assert isinstance(node, ScalarNode)
                result = self.scalar(node, at)
        finally:
            self.active.discard(id(node))
        self.values[at] = _position(node)
        return result

    def check_tag(self, node: Node, at: DocPath, expected: str) -> None:
        if node.tag != expected:
            self.report(
                node,
                at,
                f"YAML tag {_short_tag(node.tag)} is not allowed",
                expected="plain YAML: strings, numbers, booleans, null, mappings and lists",
                hint="remove the tag",
            )

    def mapping(self, node: MappingNode, at: DocPath) -> dict[str, Any]:
        result: dict[str, Any] = {}
        merges = [value for key, value in node.value if key.tag == _MERGE]
        for source in reversed(merges):  # earlier merged mappings win over later ones (YAML merge key spec)
            for merged in source.value if isinstance(source, SequenceNode) else [source]:
                if not isinstance(merged, MappingNode):
                    self.report(merged, at, "a merge key (<<) takes a mapping or a list of mappings")
                    continue
                result.update(self.value(merged, at))
        seen: dict[str, int] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE:
                continue
            if not (isinstance(key_node, ScalarNode) and key_node.tag == _STR):
                shown = key_node.value if isinstance(key_node, ScalarNode) else "a " + type(key_node).__name__[:-4]
                self.report(
                    key_node,
                    at,
                    f"mapping key {shown!r} is not a string",
                    expected="a string key",
                    hint=f'quote the key: "{shown}":' if isinstance(key_node, ScalarNode) else "",
                )
                continue
            key = self.text(key_node, at)
            line, column = _position(key_node)
            if key in seen:
                self.report(
                    key_node,
                    (*at, key),
                    f"duplicate key {key!r} (first at line {seen[key]})",
                    expected="each key once in a mapping",
                    hint="remove one of the two, or fix the indentation if they belong to different mappings",
                )
            seen[key] = line
            self.keys[(*at, key)] = (line, column)
            result[key] = self.value(value_node, (*at, key))
        return result

    def text(self, node: ScalarNode, at: DocPath) -> str:
        value: str = node.value
        self.chars += len(value)
        if self.chars > self.limits.yaml_expanded_bytes:
            raise _TooLarge(node, "the document expands to too much text through aliases", "yaml_expanded_bytes")
        if _SURROGATE(value):
            value = value.encode("utf-16", "surrogatepass").decode("utf-16", "surrogatepass")  # joins valid pairs
            lone = _SURROGATE(value)
            if lone:
                self.report(
                    node,
                    at,
                    f"the text holds a lone surrogate \\u{ord(lone.group()):04x}, which UTF-8 cannot encode",
                    expected="whole Unicode characters",
                    hint="write the character itself, or both halves of a surrogate pair (\\ud83d\\ude00)",
                )
                value = _SURROGATES.sub("\ufffd", value)  # reported: no later message or output carries it
        return value

    def scalar(self, node: ScalarNode, at: DocPath) -> Any:
        tag = node.tag
        if tag in (_STR, _TIMESTAMP):
            return self.text(node, at)
        if tag == _NULL:
            return None
        if tag == _BOOL:
            return self.loader.construct_yaml_bool(node)
        if tag == _INT:
            try:
                return self.loader.construct_yaml_int(node)
            except ValueError:  # past Python's int_max_str_digits (4,300 digits)
                self.report(
                    node,
                    at,
                    f"an integer of {len(node.value)} characters is too long to read",
                    expected="an integer of at most 4,300 digits",
                    hint='quote it if you meant the text: "..."',
                )
                return None
        if tag == _FLOAT:
            number = self.loader.construct_yaml_float(node)
            if not math.isfinite(number):
                self.report(
                    node,
                    at,
                    f"{node.value} is not a JSON number",
                    expected="a finite number",
                    hint='quote it if you meant the text: "' + node.value + '"',
                )
                return None
            return number
        self.check_tag(node, at, _STR)
        return self.text(node, at)


def compose(text: str, path: Path, *, fast: bool = False) -> tuple[YamlDocument | None, list[ScenarioProblem]]:
    """The document in ``text``, or None when it cannot be read as YAML; and the problems found.

    ``fast``: compose with libyaml; its problems are not worded or placed like the pure-Python
    composer's (see the module docstring)."""
    limits = current()
    try:
        check_bounds(text.encode("utf-8", "surrogatepass"), name=str(path), limits=limits)
    except InputLimitError as exc:
        return None, [_limit_problem(path, exc.line, exc.column, exc.what, exc.limit)]
    except yaml.YAMLError:
        if fast:
            raise  # the loader reads the file again with fast=False, whose composer says what is wrong
        # the pure-Python composer reads what libyaml refuses (escaped surrogates); its recursion is
        # bounded by Python's (RecursionError below) and the walk by the limits
    try:
        loader = FastSafeLoader(text) if fast else yaml.SafeLoader(text)
    except yaml.MarkedYAMLError as exc:  # the reader refuses a character (a control character, say)
        return None, [_syntax_problem(path, exc)]
    except yaml.YAMLError as exc:
        return None, [ScenarioProblem(path=path, line=1, column=1, message=f"not valid YAML: {exc}")]
    try:
        try:
            root = loader.get_single_node()
        except yaml.MarkedYAMLError as exc:
            return None, [_syntax_problem(path, exc)]
        except yaml.YAMLError as exc:
            return None, [ScenarioProblem(path=path, line=1, column=1, message=f"not valid YAML: {exc}")]
        except RecursionError:
            message = f"the document nests too deeply: past the limit nesting_depth={limits.nesting_depth}"
            return None, [_limit_problem(path, 1, 1, message, "nesting_depth")]
        if root is None:
            return None, [
                ScenarioProblem(
                    path=path,
                    line=1,
                    column=1,
                    message="the file holds no YAML document",
                    expected="a mapping with schema_version, behavior, source, tools and turns",
                    hint="see docs/scenarios.md for a complete example",
                )
            ]
        walker = _Walker(loader, path, limits)
        try:
            data = walker.value(root, ())
        except _TooLarge as exc:
            line, column = _position(exc.node)
            message = f"{exc.what}: past the limit {exc.limit}={getattr(limits, exc.limit)}"
            return None, [_limit_problem(path, line, column, message, exc.limit)]
        except RecursionError:
            line, column = _position(root)
            message = f"the document nests too deeply: past the limit nesting_depth={limits.nesting_depth}"
            return None, [_limit_problem(path, line, column, message, "nesting_depth")]
    finally:
        loader.dispose()
    return YamlDocument(data, Locator(path, walker.values, walker.keys)), walker.problems


def _limit_problem(path: Path, line: int | None, column: int | None, message: str, limit: str) -> ScenarioProblem:
    return ScenarioProblem(path=path, line=line or 1, column=column or 1, message=message, hint=how_to_raise(limit))


def _position(node: Node) -> tuple[int, int]:
    return node.start_mark.line + 1, node.start_mark.column + 1


def _short_tag(tag: str) -> str:
    return "!!" + tag[len(_TAG) :] if tag.startswith(_TAG) else tag


def _syntax_problem(path: Path, exc: yaml.MarkedYAMLError) -> ScenarioProblem:
    mark = exc.problem_mark or exc.context_mark
    message = " ".join(part for part in (exc.context, exc.problem) if part) or "not valid YAML"
    problem = exc.problem or ""
    if "'\\t'" in problem or "\t" in problem:
        hint = "indent with spaces: YAML does not allow tab characters in indentation"
    elif "mapping values are not allowed" in problem:
        hint = "quote a value that contains ': ', or check the indentation of this line"
    elif "undefined alias" in problem:
        hint = "define the anchor (&name) before the alias (*name) that uses it"
    elif "single document" in problem or "single document" in (exc.context or ""):
        hint = "one scenario per file: remove the '---' separator and what follows"
    else:
        hint = "check the indentation and quoting around this place"
    return ScenarioProblem(
        path=path,
        line=mark.line + 1 if mark is not None else None,
        column=mark.column + 1 if mark is not None else None,
        message=f"YAML syntax error: {message}",
        expected="valid YAML",
        hint=hint,
    )
