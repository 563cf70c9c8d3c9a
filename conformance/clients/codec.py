"""The unified model as JSON, for a driver running in another interpreter (pure, stdlib-only).

``conformance certify --python OTHER`` runs the driver under ``OTHER`` (``conformance.clients.child``)
and talks to it in JSON lines: each ``Call`` goes there, and the ``Response``, the stream events or
the ``ErrorInfo`` of the library's exception come back. Every value of ``conformance.model`` (and
``Call``) is written as an object tagged with its class (``{"$": "ToolCall", ...}``); lists that are
fields of a value come back as tuples, lists inside plain JSON (arguments, schemas) stay lists; a
plain object that has a ``$`` key of its own is wrapped (``{"$": "$map", "value": ...}``) so it
comes back as it was.

What comes back from another process is not trusted: ``from_json`` checks every value against its
class's field types (``misfit``: a string where a string is declared, a known literal, a tuple of
the declared values, plain JSON where ``Any`` is declared) and raises ``UsageError`` naming the
first field that does not fit, so a hostile or broken driver cannot hand the checks a value they
would crash on.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from typing import Any, Literal, Union

from conformance import model
from conformance.clients.contract import Call
from conformance.clients.invoke import TurnResult
from conformance.errors import UsageError

__all__ = ["from_json", "misfit", "to_json"]

_CLASSES: Mapping[str, type] = {
    name: getattr(model, name)
    for name in model.__all__
    if isinstance(getattr(model, name), type) and dataclasses.is_dataclass(getattr(model, name))
} | {"Call": Call, "TurnResult": TurnResult}


def to_json(value: Any) -> Any:
    """A JSON-ready form of a model value (or of plain JSON holding some)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {"$": type(value).__name__}
        for f in dataclasses.fields(value):
            out[f.name] = to_json(getattr(value, f.name))
        return out
    if isinstance(value, Mapping):
        plain = {str(k): to_json(v) for k, v in value.items()}
        return {"$": "$map", "value": plain} if "$" in plain else plain
    if isinstance(value, list | tuple):
        return [to_json(v) for v in value]
    if isinstance(value, frozenset | set):
        return sorted(to_json(v) for v in value)
    return value


def from_json(data: Any) -> Any:
    """The value ``to_json`` wrote; raises ``UsageError`` on a tag that is no model class."""
    if isinstance(data, dict):
        tag = data.get("$")
        if tag is None:
            return {k: from_json(v) for k, v in data.items()}
        if tag == "$map" and isinstance(data.get("value"), dict):
            return {k: from_json(v) for k, v in data["value"].items()}
        cls = _CLASSES.get(tag) if isinstance(tag, str) else None
        if cls is None:
            raise UsageError(f"unknown value {tag!r} in a driver's answer (known: {', '.join(sorted(_CLASSES))})")
        names = {f.name for f in dataclasses.fields(cls) if f.init}
        kwargs = {k: _field(v) for k, v in data.items() if k != "$" and k in names}
        try:
            value = cls(**kwargs)
        except TypeError as exc:
            raise UsageError(f"a driver's {tag} value does not fit the model: {exc}") from exc
        wrong = misfit(value)
        if wrong is not None:
            raise UsageError(f"a driver's {tag} value does not fit the model: {wrong}")
        return value
    if isinstance(data, list):
        return [from_json(v) for v in data]
    return data


def _field(value: Any) -> Any:
    """A value's field: its lists are tuples (the model's sequences are tuples)."""
    if isinstance(value, list):
        return tuple(from_json(v) for v in value)
    return from_json(value)


def misfit(value: Any) -> str | None:
    """Where a model value (or ``Call``, ``TurnResult``) holds something its field types do not
    allow, and what (None: it fits). Its nested values are checked when they are built."""
    for name, hint in _hints(type(value)).items():
        wrong = _misfit(getattr(value, name), hint)
        if wrong is not None:
            return f"{name}: {wrong}"
    return None


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    """The field types of a dataclass (read once)."""
    if cls not in _HINTS:
        names = {f.name for f in dataclasses.fields(cls)}
        _HINTS[cls] = {name: hint for name, hint in typing.get_type_hints(cls).items() if name in names}
    return _HINTS[cls]


def _misfit(value: Any, hint: Any) -> str | None:
    if hint is Any:
        return None if _plain(value) else f"{type(value).__name__} inside plain JSON"
    if hint is type(None):
        return None if value is None else f"{_kind(value)} where nothing may be"
    origin = typing.get_origin(hint)
    if origin is Union or origin is types.UnionType:
        members = typing.get_args(hint)
        if any(_misfit(value, member) is None for member in members):
            return None
        return f"{_kind(value)} fits none of {', '.join(_named(m) for m in members)}"
    if origin is Literal:
        allowed = typing.get_args(hint)
        if any(type(value) is type(a) and value == a for a in allowed):
            return None
        return f"{_kind(value)} is none of {', '.join(repr(a) for a in allowed)}"
    if origin is tuple:
        if not isinstance(value, tuple):
            return f"{_kind(value)} where a list is declared"
        item = typing.get_args(hint)[0]
        for index, member in enumerate(value):
            wrong = _misfit(member, item)
            if wrong is not None:
                return f"[{index}] {wrong}"
        return None
    if origin in (dict, Mapping) or hint in (dict, Mapping):
        if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
            return f"{_kind(value)} where an object is declared"
        return None if _plain(value) else "a model value inside plain JSON"
    if isinstance(hint, type):
        if hint is float:
            ok = isinstance(value, int | float) and not isinstance(value, bool)
        elif hint is int:
            ok = isinstance(value, int) and not isinstance(value, bool)
        else:
            ok = isinstance(value, hint)
        return None if ok else f"{_kind(value)} where {_named(hint)} is declared"
    return None  # a hint this codec does not know: the value is taken as it is


def _plain(value: Any, depth: int = 0) -> bool:
    """Plain JSON (what ``json.loads`` gives): no model value anywhere inside."""
    if depth > 200:
        return False
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v, depth + 1) for k, v in value.items())
    if isinstance(value, list | tuple):
        return all(_plain(v, depth + 1) for v in value)
    return value is None or isinstance(value, str | int | float | bool)


def _kind(value: Any) -> str:
    shown = repr(value)
    return f"{type(value).__name__} {shown[:40]}{'...' if len(shown) > 40 else ''}"


def _named(hint: Any) -> str:
    return hint.__name__ if isinstance(hint, type) else str(hint)
