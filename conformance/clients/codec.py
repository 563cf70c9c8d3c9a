"""The unified model as JSON, for a driver running in another interpreter (pure, stdlib-only).

``conformance certify --python OTHER`` runs the driver under ``OTHER`` (``conformance.clients.child``)
and talks to it in JSON lines: each ``Call`` goes there, and the ``Response``, the stream events or
the ``ErrorInfo`` of the library's exception come back. Every value of ``conformance.model`` (and
``Call``) is written as an object tagged with its class (``{"$": "ToolCall", ...}``); lists that are
fields of a value come back as tuples, lists inside plain JSON (arguments, schemas) stay lists.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from conformance import model
from conformance.clients.contract import Call
from conformance.clients.invoke import TurnResult
from conformance.errors import UsageError

__all__ = ["from_json", "to_json"]

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
        return {str(k): to_json(v) for k, v in value.items()}
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
        cls = _CLASSES.get(tag) if isinstance(tag, str) else None
        if cls is None:
            raise UsageError(f"unknown value {tag!r} in a driver's answer (known: {', '.join(sorted(_CLASSES))})")
        names = {f.name for f in dataclasses.fields(cls) if f.init}
        kwargs = {k: _field(v) for k, v in data.items() if k != "$" and k in names}
        try:
            return cls(**kwargs)
        except TypeError as exc:
            raise UsageError(f"a driver's {tag} value does not fit the model: {exc}") from exc
    if isinstance(data, list):
        return [from_json(v) for v in data]
    return data


def _field(value: Any) -> Any:
    """A value's field: its lists are tuples (the model's sequences are tuples)."""
    if isinstance(value, list):
        return tuple(from_json(v) for v in value)
    return from_json(value)
