"""The unified model as plain JSON, the values of the client protocol (pure, stdlib-only).

A driver in any language (docs/protocol.md, "Values") reads each ``Call`` and writes its
``Response``, stream events and ``ErrorInfo`` as plain JSON: an object per value with its fields by
name, lists as arrays, ``null`` for none. No class tag: where a field holds one of several kinds, the
value says which by the field the model already has, ``kind`` for message parts and tool-result
content (``text``, ``tool_call``, ...), ``type`` for stream events (``text_delta``, ``finish``, ...).
So decoding is driven by the declared type: ``from_json(data, Response)`` reads a response,
``from_json(data, StreamEvent)`` an event.

What comes back from another process is not trusted: ``from_json`` refuses an unknown field, a
missing required one, a value of another type, a kind outside the union, and raises ``UsageError``
naming the first place (``$.parts[1].arguments``) and what is wrong, so a hostile or broken driver
cannot hand the checks a value they would crash on. ``json_schema`` writes the same rules as JSON
Schema (``conformance/clients/protocol.schema.json``): the two are one contract, and
``tests/clients/test_protocol.py`` holds them to it.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from typing import Any, Literal, Union

from conformance import model
from conformance.errors import UsageError

__all__ = ["DISCRIMINATED", "discriminator", "from_json", "json_schema", "misfit", "to_json"]

_MAX_DEPTH = 200
"""Nesting a value may reach (plain JSON inside a schema or arguments included)."""

DISCRIMINATED: frozenset[type] = frozenset(
    typing.get_args(model.Part) + typing.get_args(model.ContentItem) + typing.get_args(model.StreamEvent)
)
"""The classes a value must name (``kind`` or ``type``): each is one of several in some field."""


def discriminator(cls: type) -> tuple[str, str] | None:
    """The field naming ``cls`` among its union's members and its value (``("kind", "text")``)."""
    for name in ("kind", "type"):
        hint = _hints(cls).get(name)
        if hint is not None and typing.get_origin(hint) is Literal and len(typing.get_args(hint)) == 1:
            return name, typing.get_args(hint)[0]
    return None


def to_json(value: Any) -> Any:
    """The plain JSON of a model value (or of plain JSON holding some): every field, by name."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_json(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_json(v) for v in value]
    if isinstance(value, frozenset | set):
        return sorted(to_json(v) for v in value)
    return value


def from_json(data: Any, hint: Any, where: str = "$") -> Any:
    """The value of type ``hint`` that ``data`` writes; ``UsageError`` names the first place that does
    not fit and why."""
    return _decode(data, hint, where, 0)


def _decode(data: Any, hint: Any, where: str, depth: int) -> Any:
    if depth > _MAX_DEPTH:
        raise UsageError(f"{where}: nested deeper than {_MAX_DEPTH} levels")
    if hint is Any:
        if not _plain(data, depth):
            raise UsageError(f"{where}: not plain JSON")
        return data
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _decode_value(data, hint, where, depth)
    origin = typing.get_origin(hint)
    if origin is Union or origin is types.UnionType:
        return _decode_union(data, typing.get_args(hint), where, depth)
    if origin is Literal:
        allowed = typing.get_args(hint)
        if any(type(data) is type(a) and data == a for a in allowed):
            return data
        raise UsageError(f"{where}: {_kind(data)} is none of {', '.join(repr(a) for a in allowed)}")
    if origin is tuple:
        if not isinstance(data, list):
            raise UsageError(f"{where}: {_kind(data)} where an array is declared")
        item = typing.get_args(hint)[0]
        return tuple(_decode(v, item, f"{where}[{i}]", depth + 1) for i, v in enumerate(data))
    if origin in (dict, Mapping) or hint in (dict, Mapping):
        if not isinstance(data, dict):
            raise UsageError(f"{where}: {_kind(data)} where an object is declared")
        if not _plain(data, depth):
            raise UsageError(f"{where}: not plain JSON")
        return data
    if hint is float:
        if isinstance(data, int | float) and not isinstance(data, bool):
            return float(data) if isinstance(data, int) else data
        raise UsageError(f"{where}: {_kind(data)} where a number is declared")
    if hint is int:
        if isinstance(data, int) and not isinstance(data, bool):
            return data
        raise UsageError(f"{where}: {_kind(data)} where an integer is declared")
    if hint is type(None):
        if data is None:
            return None
        raise UsageError(f"{where}: {_kind(data)} where null is declared")
    if isinstance(hint, type):
        if isinstance(data, hint) and not (hint is not bool and isinstance(data, bool)):
            return data
        raise UsageError(f"{where}: {_kind(data)} where {_named(hint)} is declared")
    raise UsageError(f"{where}: the model declares a type the protocol does not know ({hint!r})")


def _decode_value(data: Any, cls: type, where: str, depth: int) -> Any:
    if not isinstance(data, dict):
        raise UsageError(f"{where}: {_kind(data)} where a {cls.__name__} object is declared")
    hints = _hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    unknown = sorted(k for k in data if k not in fields)
    if unknown:
        raise UsageError(
            f"{where}: {cls.__name__} has no field {unknown[0]!r} (its fields: {', '.join(sorted(fields))})"
        )
    kwargs: dict[str, Any] = {}
    for name, f in fields.items():
        if name not in data:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise UsageError(f"{where}: {cls.__name__} needs {name!r}")
            continue
        kwargs[name] = _decode(data[name], hints[name], f"{where}.{name}", depth + 1)
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as exc:
        raise UsageError(f"{where}: a {cls.__name__} that does not fit the model: {exc}") from None


def _decode_union(data: Any, members: tuple[Any, ...], where: str, depth: int) -> Any:
    if data is None and type(None) in members:
        return None
    classes = [m for m in members if isinstance(m, type) and dataclasses.is_dataclass(m)]
    if classes and isinstance(data, dict):
        if len(classes) == 1:
            return _decode_value(data, classes[0], where, depth)
        tagged = [(discriminator(c), c) for c in classes]
        fields = {tag[0] for tag, _cls in tagged if tag is not None}
        if len(fields) == 1 and all(tag is not None for tag, _cls in tagged):
            field = fields.pop()
            value = data.get(field)
            for tag, cls in tagged:
                if tag is not None and value == tag[1] and type(value) is type(tag[1]):
                    return _decode_value(data, cls, where, depth)
            names = ", ".join(repr(tag[1]) for tag, _cls in tagged if tag is not None)
            raise UsageError(f"{where}: {field} {_kind(value)} is none of {names}")
    for member in members:  # scalars: the first member the value fits
        if member is type(None) or (isinstance(member, type) and dataclasses.is_dataclass(member)):
            continue
        try:
            return _decode(data, member, where, depth)
        except UsageError:
            continue
    raise UsageError(f"{where}: {_kind(data)} fits none of {', '.join(_named(m) for m in members)}")


def misfit(value: Any) -> str | None:
    """Where a model value (or ``Call``, ``TurnResult``) built in this process holds something its
    field types do not allow, and what (None: it fits): its plain JSON read back."""
    try:
        from_json(to_json(value), type(value))
    except UsageError as exc:
        return str(exc).removeprefix("$.")
    return None


# ---- the same rules as JSON Schema -----------------------------------------------------------


def json_schema(roots: Mapping[str, Any]) -> dict[str, Any]:
    """JSON Schema (2020-12) ``$defs`` for each root type (``{"Call": Call, "StreamEvent": ...}``)
    and every model class they reach, by the rules ``from_json`` reads with."""
    defs: dict[str, Any] = {}
    for name, hint in roots.items():
        schema = _schema(hint, defs)
        if schema != {"$ref": f"#/$defs/{name}"}:  # a class is its own definition already
            defs[name] = schema
    return defs


def _schema(hint: Any, defs: dict[str, Any]) -> dict[str, Any]:
    if hint is Any:
        return {}
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        name = hint.__name__
        if name not in defs:
            defs[name] = {}  # reserved first: a class may reach itself
            defs[name] = _object_schema(hint, defs)
        return {"$ref": f"#/$defs/{name}"}
    origin = typing.get_origin(hint)
    if origin is Union or origin is types.UnionType:
        members = typing.get_args(hint)
        literals = [a for m in members if typing.get_origin(m) is Literal for a in typing.get_args(m)]
        if str in members and literals:  # ``ToolChoice``: the words or any other string
            rest = [m for m in members if m is not str and typing.get_origin(m) is not Literal]
            schemas = [{"type": "string"}] + [_schema(m, defs) for m in rest]
            return schemas[0] if len(schemas) == 1 else {"anyOf": schemas}
        classes = [m for m in members if isinstance(m, type) and dataclasses.is_dataclass(m)]
        schemas = [_schema(m, defs) for m in members if m is not type(None)]
        key = "oneOf" if len(classes) > 1 else "anyOf"
        if type(None) in members:
            schemas.append({"type": "null"})
        return schemas[0] if len(schemas) == 1 else {key: schemas}
    if origin is Literal:
        allowed = list(typing.get_args(hint))
        kinds = sorted({_json_type(a) for a in allowed})
        return {"type": kinds[0] if len(kinds) == 1 else kinds, "enum": allowed}
    if origin is tuple:
        return {"type": "array", "items": _schema(typing.get_args(hint)[0], defs)}
    if origin in (dict, Mapping) or hint in (dict, Mapping):
        return {"type": "object"}
    if hint is float:
        return {"type": "number"}
    if hint is int:
        return {"type": "integer"}
    if hint is bool:
        return {"type": "boolean"}
    if hint is str:
        return {"type": "string"}
    if hint is type(None):
        return {"type": "null"}
    raise TypeError(f"no JSON Schema for {hint!r}")


def _object_schema(cls: type, defs: dict[str, Any]) -> dict[str, Any]:
    hints = _hints(cls)
    properties: dict[str, Any] = {}
    required: list[str] = []
    tag = discriminator(cls) if cls in DISCRIMINATED else None
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        properties[f.name] = _schema(hints[f.name], defs)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            required.append(f.name)
        elif tag is not None and f.name == tag[0]:
            required.append(f.name)
    schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = required
    doc = (cls.__doc__ or "").strip().split("\n\n")[0].replace("\n", " ")
    return {"description": doc, **schema} if doc else schema


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, str):
        return "string"
    return "null" if value is None else "number"


# ---- helpers -----------------------------------------------------------------------------------

_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    """The field types of a dataclass (read once)."""
    if cls not in _HINTS:
        names = {f.name for f in dataclasses.fields(cls)}
        _HINTS[cls] = {name: hint for name, hint in typing.get_type_hints(cls).items() if name in names}
    return _HINTS[cls]


def _plain(value: Any, depth: int = 0) -> bool:
    """Plain JSON (what ``json.loads`` gives), at most ``_MAX_DEPTH`` deep."""
    if depth > _MAX_DEPTH:
        return False
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v, depth + 1) for k, v in value.items())
    if isinstance(value, list | tuple):
        return all(_plain(v, depth + 1) for v in value)
    return value is None or isinstance(value, str | int | float | bool)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    shown = repr(value)
    return f"{type(value).__name__} {shown[:40]}{'...' if len(shown) > 40 else ''}"


def _named(hint: Any) -> str:
    if hint is type(None):
        return "null"
    return hint.__name__ if isinstance(hint, type) else str(hint)
