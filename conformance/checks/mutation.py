"""Non-mutation: no adapter function changes what it was given (``translation.no_mutation``).

``watched(adapter)`` is a copy of the adapter whose six functions each take a snapshot of their
arguments (the unified ``Request``, the tools and their JSON schemas, a wire body, the list of
stream chunks, the error headers) before the call and compare it after (a stream decoder: once its
iterator ends or is closed). The runner drives the conversation and every check family through the
watched copy, so every call on every case is covered; ``MutationWatch.verdict()`` is then PASS, or
FAIL with one finding per function and argument changed, naming the JSON path of the first change
and the values before and after.

A snapshot is a plain tree (dataclasses as dicts of their fields, tuples as lists), built in one
walk: cheaper than ``copy.deepcopy`` and compared with ``==`` at C speed. Bytes and strings are
immutable and kept as they are. An iterator (a stream read from the network) cannot be watched
without consuming it: only a list or tuple of chunks is. All of this is pure (no I/O).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from conformance.adapters.base import Adapter, WireRequest, WireTools
from conformance.errors import ProviderError
from conformance.model import Request, Response, StreamEvent, Tool
from conformance.verdicts import CheckVerdict, Finding

__all__ = ["CHECK", "MutationWatch", "first_change", "snapshot", "watched"]

CHECK = "translation.no_mutation"
"""The check id of a finding."""

_ATOMS = (str, bytes, int, float, bool, type(None), frozenset)
_MISSING = object()


_ATOM_TYPES = frozenset(_ATOMS)
_FIELDS: dict[type, tuple[str, ...]] = {}


def snapshot(value: Any) -> Any:
    """``value`` as a plain tree that later changes to ``value`` cannot reach."""
    kind = type(value)  # the common types by exact type first: one set or identity test each
    if kind in _ATOM_TYPES:
        return value
    if kind is dict:
        return {key: snapshot(item) for key, item in value.items()}
    if kind is tuple or kind is list:
        return [snapshot(item) for item in value]
    names = _FIELDS.get(kind)
    if names is not None:
        return {name: snapshot(getattr(value, name)) for name in names}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        _FIELDS[kind] = names = tuple(f.name for f in dataclasses.fields(value))
        return {name: snapshot(getattr(value, name)) for name in names}
    if isinstance(value, _ATOMS):
        return value
    if isinstance(value, Mapping):
        return {key: snapshot(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [snapshot(item) for item in value]
    if isinstance(value, (bytearray, set)):
        return ("<" + type(value).__name__ + ">", sorted(map(repr, value)) if isinstance(value, set) else bytes(value))
    return value  # an opaque object: compared by its own equality


def _step(path: str, key: Any) -> str:
    return f"{path}[{key}]" if isinstance(key, int) else f"{path}.{key}"


def first_change(before: Any, after: Any, path: str = "$") -> tuple[str, Any, Any] | None:
    """The JSON path of the first difference between two snapshots, with the values there."""
    if type(before) is dict and type(after) is dict:
        for key in (*before, *(k for k in after if k not in before)):
            old, new = before.get(key, _MISSING), after.get(key, _MISSING)
            if old is _MISSING or new is _MISSING:
                return (
                    _step(path, key),
                    None if old is _MISSING else old,
                    "(removed)" if new is _MISSING else new,
                )
            found = first_change(old, new, _step(path, key))
            if found is not None:
                return found
        return None
    if type(before) is list and type(after) is list:
        for index, (old, new) in enumerate(zip(before, after, strict=False)):
            found = first_change(old, new, _step(path, index))
            if found is not None:
                return found
        if len(before) != len(after):
            return f"{path}.length", len(before), len(after)
        return None
    return None if before == after else (path, before, after)


@dataclasses.dataclass(kw_only=True)
class MutationWatch:
    """The changes the watched functions made to their arguments, for one case."""

    findings: list[Finding] = dataclasses.field(default_factory=list)
    _seen: set[tuple[str, str]] = dataclasses.field(default_factory=set)

    def compare(self, function: str, arguments: Mapping[str, tuple[Any, Any]]) -> None:
        """``arguments``: name -> (the argument, its snapshot before the call)."""
        for name, (value, before) in arguments.items():
            after = snapshot(value)
            if after == before:
                continue
            change = first_change(before, after) or ("$", before, after)
            if (function, name) in self._seen:  # one finding per function and argument
                continue
            self._seen.add((function, name))
            path, old, new = change
            self.findings.append(
                Finding(
                    check=CHECK,
                    message=(
                        f"{function} changed its argument {name!r} at {path}: an adapter function must"
                        " not mutate its inputs (the caller may reuse them); copy before changing"
                    ),
                    path=f"{function}({name}){path.removeprefix('$')}",
                    expected=old,
                    actual=new,
                )
            )

    def verdict(self) -> CheckVerdict:
        return CheckVerdict(check=CHECK, status="fail" if self.findings else "pass", findings=tuple(self.findings))


def _watchable(chunks: Iterable[bytes]) -> bool:
    return isinstance(chunks, (list, tuple))


def watched(adapter: Adapter) -> tuple[Adapter, MutationWatch]:
    """A copy of ``adapter`` whose functions report the changes they make to their arguments."""
    watch = MutationWatch()
    real = adapter

    def tools_to_wire(tools: Sequence[Tool], /) -> WireTools:
        args = {"tools": (tools, snapshot(tools))}
        try:
            return real.tools_to_wire(tools)
        finally:
            watch.compare("tools_to_wire", args)

    def request_to_wire(request: Request) -> WireRequest:
        args = {"request": (request, snapshot(request))}
        try:
            return real.request_to_wire(request)
        finally:
            watch.compare("request_to_wire", args)

    def request_from_wire(body: Mapping[str, Any], /, *, path: str = "", tools: Sequence[Tool] = ()) -> Request:
        args = {"body": (body, snapshot(body)), "tools": (tools, snapshot(tools))}
        try:
            return real.request_from_wire(body, path=path, tools=tools)
        finally:
            watch.compare("request_from_wire", args)

    def response_from_wire(body: Mapping[str, Any], /, *, tools: Sequence[Tool] = ()) -> Response:
        args = {"body": (body, snapshot(body)), "tools": (tools, snapshot(tools))}
        try:
            return real.response_from_wire(body, tools=tools)
        finally:
            watch.compare("response_from_wire", args)

    def stream_from_wire(chunks: Iterable[bytes], /, *, tools: Sequence[Tool] = ()) -> Iterator[StreamEvent]:
        args: dict[str, tuple[Any, Any]] = {"tools": (tools, snapshot(tools))}
        if _watchable(chunks):
            args["chunks"] = (chunks, list(chunks))
        events = real.stream_from_wire(chunks, tools=tools)
        return _after(events, lambda: watch.compare("stream_from_wire", args))

    def error_from_wire(
        status: int, headers: Mapping[str, str], body: bytes | str | Mapping[str, Any] | None, /
    ) -> ProviderError:
        args = {"headers": (headers, snapshot(headers)), "body": (body, snapshot(body))}
        try:
            return real.error_from_wire(status, headers, body)
        finally:
            watch.compare("error_from_wire", args)

    copy = dataclasses.replace(
        adapter,
        tools_to_wire=tools_to_wire,
        request_to_wire=request_to_wire,
        request_from_wire=request_from_wire,
        response_from_wire=response_from_wire,
        stream_from_wire=stream_from_wire,
        error_from_wire=error_from_wire,
    )
    return copy, watch


def _after(events: Iterator[StreamEvent], done: Callable[[], None]) -> Iterator[StreamEvent]:
    try:
        yield from events
    finally:
        done()
