"""The one safe YAML load for cassettes, which are untrusted files: the ``istr`` tag read as its
string, every other ``python/`` tag refused (never executed), timestamps left as text; JSON read at
orjson's speed, and a fast builder over libyaml's events for the rest. Used by the cassette reader
(``conformance.traffic.cassettes``), the recorder's read-back and the vcrpy serializer of
``conformance.traffic.replay``. Pure: bytes in, plain data out.

Bounded by ``conformance.limits`` while it reads, before anything is expanded: alias uses, nodes
and scalar text with each alias counted as what it stands for, and nesting (the fast builder
counts as it builds; the full loader is preceded by the same count over libyaml's events, flat
and building nothing; a JSON document's nesting is measured on its bytes). Past a bound it raises
``InputLimitError`` naming the file, the line and the limit.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from typing import Any

import orjson
import yaml
from yaml.events import (
    AliasEvent,
    DocumentEndEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)
from yaml.nodes import ScalarNode

from conformance.errors import CassetteFormatError, InputLimitError
from conformance.limits import Limits, current

__all__ = [
    "CassetteLoader",
    "Fallback",
    "FastSafeLoader",
    "build_fast",
    "check_bounds",
    "load_yaml",
    "nests_deeper",
    "parse_yaml",
]

# --------------------------------------------------------------------------------------------
# YAML: a safe loader, and a fast builder over libyaml's events
# --------------------------------------------------------------------------------------------

try:
    from yaml import CSafeLoader as FastSafeLoader
except ImportError:  # PyYAML built without libyaml
    from yaml import SafeLoader as FastSafeLoader  # type: ignore[assignment]
"""PyYAML's safe loader on libyaml where PyYAML has it (the one place that falls back)."""

_ISTR_TAG = "tag:yaml.org,2002:python/object/apply:multidict._multidict.istr"
_STR_TAG = "tag:yaml.org,2002:str"
_BINARY_TAG = "tag:yaml.org,2002:binary"
_PLAIN_TAGS = frozenset({None, "!"})
_MAP_TAGS = frozenset({None, "!", "tag:yaml.org,2002:map"})
_SEQ_TAGS = frozenset({None, "!", "tag:yaml.org,2002:seq"})


class CassetteLoader(FastSafeLoader):
    """The safe loader plus the aiohttp ``istr`` header-key tag; ``python/`` tags are refused.

    Timestamps are not resolved: a cassette's text stays text (``json.dumps`` of a
    ``parsed_body`` holding a ``datetime`` would fail, and a header value is a string).
    """


def _construct_istr(loader: yaml.SafeLoader, node: yaml.Node) -> str:
    # aiohttp records header names as multidict.istr (MANIFEST dialect 6): the node is
    # ``!!python/object/apply:multidict._multidict.istr [Name]``. Only the wrapped string is read.
    items = loader.construct_sequence(node) if isinstance(node, yaml.SequenceNode) else None
    if not items or len(items) != 1 or not isinstance(items[0], str):
        raise yaml.constructor.ConstructorError(
            None, None, "an istr header key must wrap exactly one string", node.start_mark
        )
    return items[0]


def _refuse_python_tag(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> Any:
    raise yaml.constructor.ConstructorError(
        None,
        None,
        f"the tag !!python/{suffix} is refused: python tags can run code and cassettes are untrusted "
        f"input; only !!python/object/apply:multidict._multidict.istr header keys are read",
        node.start_mark,
    )


CassetteLoader.add_constructor(_ISTR_TAG, _construct_istr)
CassetteLoader.add_multi_constructor("tag:yaml.org,2002:python/", _refuse_python_tag)
CassetteLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in FastSafeLoader.yaml_implicit_resolvers.items()
}

# A plain scalar can resolve to something other than a string only if it is empty or starts
# with one of these (YAML 1.1 null/bool/int/float and the merge/value keys, as PyYAML resolves).
_MAYBE_NOT_STR = re.compile(r"[-+.0-9~nNtTfFyYoO<=]|\Z").match


class Fallback(Exception):
    """The fast builder met something it leaves to the full safe loader."""


def load_yaml(data: bytes | str, *, name: str = "<yaml>", limits: Limits | None = None) -> Any:
    """The one safe load of a cassette's text: JSON at orjson's speed when it is JSON (``conformance
    record`` writes pretty JSON, which is YAML), else YAML through ``CassetteLoader`` (the fast
    builder where it can). YAML errors propagate; ``parse_yaml`` explains them.

    Bounded (``limits``, default ``conformance.limits.current()``): past ``yaml_nodes``,
    ``yaml_aliases``, ``yaml_expanded_bytes`` or ``nesting_depth`` it raises ``InputLimitError``
    naming ``name``, the line and the limit, before anything is expanded."""
    bounds = limits or current()
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if raw.lstrip()[:1] == b"{":
        # anything orjson refuses (integers beyond 64 bits, YAML-only syntax) goes the YAML way
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass
        else:
            # JSON has no aliases: its size is the file's; only its nesting needs a look
            if raw.count(b"[") + raw.count(b"{") > bounds.nesting_depth and _deeper(value, bounds.nesting_depth):
                raise InputLimitError(
                    name, "the JSON document nests too deeply", limit="nesting_depth", value=bounds.nesting_depth
                )
            return value
    try:
        return build_fast(raw, name=name, limits=bounds)
    except Fallback:
        check_bounds(raw, name=name, limits=bounds)
        return yaml.load(raw, Loader=CassetteLoader)  # a SafeLoader subclass


def _deeper(value: dict[str, Any] | list[Any], limit: int) -> bool:
    """Whether parsed JSON ``value`` (an object or an array) nests more than ``limit`` levels: level
    by level, without recursion (any depth), each level's containers gathered by one comprehension
    (~3x faster than a stack of (item, depth) pairs: a third of loading a cassette was this walk)."""
    level: list[Any] = [value]
    for _ in range(limit):
        level = [
            child
            for item in level
            for child in (item.values() if item.__class__ is dict else item)
            if child.__class__ is dict or child.__class__ is list
        ]
        if not level:
            return False
    return True


_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b'"[]{}')
_INNERMOST = re.compile(rb"\[\]|\{\}")


def nests_deeper(data: bytes, limit: int) -> bool:
    """Whether the brackets of ``data`` outside JSON strings nest more than ``limit`` levels (JSON
    text, or JSON events in a stream). Nothing is parsed or built, and every step runs at C speed:
    escaped backslashes and quotes go, then everything but quotes and brackets, then what lies
    between quotes (strings); then the innermost pairs are taken away one level per pass.
    Unmatched brackets (a cut body) count as levels, so the answer errs on the side of "deeper"."""
    if data.count(b"[") + data.count(b"{") <= limit:
        return False
    unescaped = data.replace(b"\\\\", b"").replace(b'\\"', b"").translate(None, _NOT_STRUCTURE)
    brackets = b"".join(unescaped.split(b'"')[::2])
    for level in range(limit + 1):
        if not brackets:
            return False
        inner = _INNERMOST.sub(b"", brackets)
        if inner == brackets:  # only unmatched brackets are left
            return level + brackets.count(b"[") + brackets.count(b"{") > limit
        brackets = inner
    return True


def _too_much(name: str, event: Any, what: str, limit: str, limits: Limits) -> InputLimitError:
    mark = event.start_mark
    line, column = (mark.line + 1, mark.column + 1) if mark is not None else (None, None)
    return InputLimitError(name, what, limit=limit, value=getattr(limits, limit), line=line, column=column)


def check_bounds(data: bytes, *, name: str = "<yaml>", limits: Limits | None = None) -> None:
    """Walk the YAML events of ``data`` (libyaml's, nothing built) and raise ``InputLimitError`` at
    the first bound passed; what ``build_fast`` checks as it builds, for the full loader's sake."""
    bounds = limits or current()
    loader = CassetteLoader(data)
    sizes: dict[str, tuple[int, int]] = {}  # anchor -> (nodes, characters) it stands for
    starts: list[tuple[str | None, int, int]] = []
    nodes = chars = aliases = 0
    try:
        while True:
            event: Any = loader.get_event()
            if event is None:  # past the stream's end: never loop there (event classes of another
                return  # import of yaml, as pytester's inline runs make, match none of the branches)
            cls = type(event)
            if cls is ScalarEvent:
                nodes += 1
                chars += len(event.value)
                if event.anchor is not None:
                    sizes[event.anchor] = (1, len(event.value))
            elif cls is MappingStartEvent or cls is SequenceStartEvent:
                nodes += 1
                starts.append((event.anchor, nodes, chars))
                if len(starts) > bounds.nesting_depth:
                    raise _too_much(name, event, "the YAML nests too deeply", "nesting_depth", bounds)
                continue
            elif cls is MappingEndEvent or cls is SequenceEndEvent:
                anchor, first, before = starts.pop()
                if anchor is not None:
                    sizes[anchor] = (nodes - first + 1, chars - before)
            elif cls is AliasEvent:
                aliases += 1
                if aliases > bounds.yaml_aliases:
                    raise _too_much(name, event, "too many aliases", "yaml_aliases", bounds)
                more, text = sizes.get(event.anchor or "", (1, 0))
                nodes += more
                chars += text
            elif cls is StreamEndEvent:
                return
            else:
                continue
            if nodes > bounds.yaml_nodes:
                raise _too_much(name, event, "the YAML expands to too many nodes", "yaml_nodes", bounds)
            if chars > bounds.yaml_expanded_bytes:
                raise _too_much(name, event, "the YAML expands to too much text", "yaml_expanded_bytes", bounds)
    except yaml.MarkedYAMLError as exc:
        if "nesting depth" not in str(exc.problem):
            raise
        # libyaml from PyYAML 6.0.4 on refuses 1,000 levels itself, while scanning ahead of the
        # events: the place it names is that level, not the one past our bound
        mark = exc.problem_mark
        line, column = (mark.line + 1, mark.column + 1) if mark is not None else (None, None)
        what = f"the YAML nests too deeply (libyaml refused it: {exc.problem})"
        raise InputLimitError(
            name, what, limit="nesting_depth", value=bounds.nesting_depth, line=line, column=column
        ) from None
    finally:
        loader.dispose()


def parse_yaml(name: str, data: bytes) -> Any:
    """``load_yaml``, with a YAML error turned into a ``CassetteFormatError`` naming the file, the
    line and column, and what to do."""
    try:
        return load_yaml(data, name=name)
    except InputLimitError:
        raise
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = " ".join(str(p) for p in (exc.context, exc.problem) if p)
        raise CassetteFormatError(
            name,
            f"not valid cassette YAML{where}: {problem}",
            hint="fix the YAML there, or re-record the cassette",
        ) from None
    except (yaml.YAMLError, ValueError, TypeError, RecursionError) as exc:
        raise CassetteFormatError(
            name, f"not valid cassette YAML: {exc}", hint="fix the file, or re-record the cassette"
        ) from None


def build_fast(data: bytes, *, name: str = "<yaml>", limits: Limits | None = None) -> Any:
    """One YAML document from libyaml's events, as ``yaml.load(data, CassetteLoader)`` gives it.

    Mappings are collected as flat key/value lists and made dicts at their end. Raises
    ``Fallback`` for whatever it does not handle itself, ``InputLimitError`` past a bound of
    ``limits`` (counted as ``check_bounds`` counts).
    """
    bounds = limits or current()
    max_nodes, max_chars, max_aliases, max_depth = (
        bounds.yaml_nodes,
        bounds.yaml_expanded_bytes,
        bounds.yaml_aliases,
        bounds.nesting_depth,
    )
    loader = CassetteLoader(data)
    get_event: Callable[[], Any] = loader.get_event
    anchors: dict[str, Any] = {}
    sizes: dict[str, tuple[int, int]] = {}  # anchor -> (nodes, characters) it stands for
    nodes = chars = aliases = 0
    plain: dict[str, Any] = {}
    frames: list[list[Any]] = []
    kinds: list[tuple[bool, str | None, str | None, int, int]] = []  # (is mapping, anchor, tag, nodes, chars)
    get_event()  # StreamStartEvent
    if type(loader.peek_event()) is StreamEndEvent:
        return None
    get_event()  # DocumentStartEvent
    root: Any = None
    while True:
        event = get_event()
        cls = type(event)
        if cls is ScalarEvent:
            tag = event.tag
            value: Any = event.value
            nodes += 1
            chars += len(value)
            if tag in _PLAIN_TAGS:
                if event.implicit[0] and _MAYBE_NOT_STR(value):
                    if value in plain:
                        value = plain[value]
                    else:
                        value = plain[value] = _resolve_plain(loader, event)
            elif tag == _BINARY_TAG:
                try:
                    value = base64.decodebytes(value.encode("ascii"))
                except (binascii.Error, UnicodeEncodeError):
                    raise Fallback from None
            elif tag != _STR_TAG:
                raise Fallback
            if event.anchor is not None:
                anchors[event.anchor] = value
                sizes[event.anchor] = (1, len(event.value))
        elif cls is MappingStartEvent or cls is SequenceStartEvent:
            is_map = cls is MappingStartEvent
            if is_map and event.tag not in _MAP_TAGS:
                raise Fallback
            nodes += 1
            frames.append([])
            kinds.append((is_map, event.anchor, None if is_map else event.tag, nodes, chars))
            if len(frames) > max_depth:
                raise _too_much(name, event, "the YAML nests too deeply", "nesting_depth", bounds)
            continue
        elif cls is MappingEndEvent or cls is SequenceEndEvent:
            items = frames.pop()
            is_map, anchor, tag, first, before = kinds.pop()
            if is_map:
                pairs = iter(items)
                try:
                    value = dict(zip(pairs, pairs, strict=True))
                except TypeError:  # an unhashable key: the safe loader says where
                    raise Fallback from None
            elif tag in _SEQ_TAGS:
                value = items
            elif tag == _ISTR_TAG and len(items) == 1 and type(items[0]) is str:
                value = items[0]
            else:
                raise Fallback
            if anchor is not None:
                anchors[anchor] = value
                sizes[anchor] = (nodes - first + 1, chars - before)
        elif cls is AliasEvent:
            if event.anchor not in anchors:
                raise Fallback
            value = anchors[event.anchor]
            aliases += 1
            if aliases > max_aliases:
                raise _too_much(name, event, "too many aliases", "yaml_aliases", bounds)
            more, text = sizes[event.anchor]
            nodes += more
            chars += text
        elif cls is DocumentEndEvent:
            if type(get_event()) is not StreamEndEvent:
                raise Fallback  # several documents: the safe loader reports it
            return root
        else:  # pragma: no cover - libyaml gives no other event inside a document
            raise Fallback
        if nodes > max_nodes:
            raise _too_much(name, event, "the YAML expands to too many nodes", "yaml_nodes", bounds)
        if chars > max_chars:
            raise _too_much(name, event, "the YAML expands to too much text", "yaml_expanded_bytes", bounds)
        if frames:
            frames[-1].append(value)
        else:
            root = value


def _resolve_plain(loader: CassetteLoader, event: Any) -> Any:
    resolve: Callable[..., str] = loader.resolve
    tag = resolve(ScalarNode, event.value, (True, False))
    if tag == _STR_TAG:
        return event.value
    if tag in ("tag:yaml.org,2002:merge", "tag:yaml.org,2002:value"):
        raise Fallback
    return loader.construct_object(ScalarNode(tag, event.value, event.start_mark, event.end_mark))
