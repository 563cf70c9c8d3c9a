"""What changed between a stored cassette and a fresh recording of the same pair (pure: no I/O).

``compare_cassettes`` reads two cassette documents (as ``conformance.traffic.safe_yaml.load_yaml``
gives them), normalises the volatile values of both (``conformance.traffic.volatile``: ids,
``created``, timings, request-id headers), and lists every difference that is left, interaction by
interaction (``interactions[N]``, in order):

- **shapes** of request bodies, response bodies and stream events, by the shape code of the emulator
  fidelity profiles (``conformance.emulator.fidelity.shapes``: array indices as ``[]``, typed elements
  as ``[type=X]``, user data such as call arguments and schemas opaque): a field path *added* or
  *removed*, a path whose JSON type *changed*, a kind of stream event added or removed;
- **values** left once volatile ones are normalised (a text, a finish reason, a usage count): the
  concrete JSON path and both values, at most ``MAX_VALUES`` per body (the rest counted); the
  request line, the status, the response headers, the number of interactions and of events;
- **provenance** entries other than the recording date, the client versions, the suite version and
  the ``volatile`` list (the scenario fingerprint, the model, the mode).

No difference at all is what ``conformance drift`` reports as ``unchanged``.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from conformance.emulator.fidelity.shapes import NOT_JSON, OPAQUE, Shape, json_type, stream_kinds, walk
from conformance.traffic.volatile import normalise_interactions

__all__ = ["MAX_VALUES", "UNTRACKED_PROVENANCE", "Change", "compare_cassettes"]

MAX_VALUES = 10
"""Value differences listed per body (or per stream); more are counted in one line."""
UNTRACKED_PROVENANCE = frozenset({"recorded", "clients", "suite", "volatile"})

ChangeKind = Literal["added", "removed", "type changed", "value changed"]


@dataclass(frozen=True, kw_only=True)
class Change:
    """One difference: where (``interactions[1].response``), in which kind of body or event, what."""

    where: str
    kind: str
    """``request``, ``response``, ``error:<status>``, ``stream_event:<name>``, ``chunk:<features>``,
    ``headers``, ``status``, ``provenance``, ``interactions``, ``events``."""
    change: ChangeKind
    path: str = ""
    stored: str = ""
    """The stored JSON type or value (shortened), empty when it was not there."""
    fresh: str = ""
    """The fresh one, empty when it is not there any more."""

    def describe(self) -> str:
        """One line: ``interactions[1].response response: added $.x (string)``."""
        head = f"{self.where} {self.kind}: {self.change}" + (f" {self.path}" if self.path else "")
        if self.change == "added":
            return f"{head} ({self.fresh})"
        if self.change == "removed":
            return f"{head} ({self.stored})"
        return f"{head} ({self.stored} -> {self.fresh})"

    def as_json(self) -> dict[str, str]:
        return {
            "where": self.where,
            "kind": self.kind,
            "change": self.change,
            "path": self.path,
            "stored": self.stored,
            "fresh": self.fresh,
        }


def compare_cassettes(stored: Mapping[str, Any], fresh: Mapping[str, Any]) -> tuple[Change, ...]:
    """The differences between two cassette documents, volatile values normalised on both sides."""
    out: list[Change] = []
    old_block, new_block = _block(stored), _block(fresh)
    for key in sorted({*old_block, *new_block} - UNTRACKED_PROVENANCE, key=str):
        if old_block.get(key) != new_block.get(key):
            out.append(
                _value("provenance", "provenance", key, old_block.get(key, _ABSENT), new_block.get(key, _ABSENT))
            )
    adapter = str(new_block.get("adapter") or old_block.get("adapter") or "")
    old = _interactions(stored)
    new = _interactions(fresh)
    if len(old) != len(new):
        out.append(
            _value(
                "cassette",
                "interactions",
                "",
                _Shown(f"{len(old)} interaction(s)"),
                _Shown(f"{len(new)} interaction(s)"),
            )
        )
    for index, (a, b) in enumerate(zip(old, new, strict=False)):
        out.extend(_interaction(f"interactions[{index}]", a, b, adapter))
    return tuple(out)


_ABSENT = object()


class _Shown(str):
    """A value already written for people (a count, a sequence of event kinds): shown unquoted."""

    __slots__ = ()


def _block(document: Mapping[str, Any]) -> Mapping[str, Any]:
    block = document.get("provenance")
    return block if isinstance(block, dict) else {}


def _interactions(document: Mapping[str, Any]) -> list[dict[str, Any]]:
    value = document.get("interactions")
    items = [i for i in value if isinstance(i, dict)] if isinstance(value, list) else []
    return normalise_interactions(items)[0]


def _interaction(where: str, old: Mapping[str, Any], new: Mapping[str, Any], adapter: str) -> list[Change]:
    out: list[Change] = []
    old_request, new_request = _side(old, "request"), _side(new, "request")
    for key in ("method", "uri"):
        if old_request.get(key) != new_request.get(key):
            out.append(_value(f"{where}.request", "request", key, old_request.get(key), new_request.get(key)))
    out.extend(
        _bodies(
            f"{where}.request",
            _documents(old_request, adapter, "request"),
            _documents(new_request, adapter, "request"),
            adapter,
        )
    )
    old_response, new_response = _side(old, "response"), _side(new, "response")
    old_status, new_status = _status(old_response), _status(new_response)
    if old_status != new_status:
        out.append(_value(f"{where}.response", "status", "", old_status, new_status))
    out.extend(_headers(f"{where}.response", old_response.get("headers"), new_response.get("headers")))
    old_kind = f"error:{old_status}" if isinstance(old_status, int) and old_status >= 400 else "response"
    new_kind = f"error:{new_status}" if isinstance(new_status, int) and new_status >= 400 else "response"
    out.extend(
        _bodies(
            f"{where}.response",
            _documents(old_response, adapter, old_kind),
            _documents(new_response, adapter, new_kind),
            adapter,
        )
    )
    return out


def _side(interaction: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    side = interaction.get(name)
    return side if isinstance(side, dict) else {}


def _status(response: Mapping[str, Any]) -> Any:
    status = response.get("status")
    return status.get("code") if isinstance(status, dict) else status


def _documents(side: Mapping[str, Any], adapter: str, kind: str) -> list[tuple[str, Any]]:
    """The (kind, payload) pairs of one side: its JSON body, or the events of its stream."""
    if "parsed_body" in side:
        return [(kind, side["parsed_body"])]
    body = side.get("body")
    if isinstance(body, dict):
        body = body.get("chunks", body.get("string"))
    if isinstance(body, list):
        body = "".join(p for p in body if isinstance(p, str))
    if isinstance(body, str):
        body = body.encode("utf-8")
    if not isinstance(body, bytes) or not body:
        return []
    try:
        return [(kind, json.loads(body))]
    except ValueError:
        pass
    if kind == "request":
        return [(kind, NOT_JSON)]
    return list(stream_kinds(adapter, body))


def _bodies(where: str, old: list[tuple[str, Any]], new: list[tuple[str, Any]], adapter: str) -> list[Change]:
    out: list[Change] = []
    opaque = OPAQUE.get(adapter, ())
    old_shapes, new_shapes = _shapes(old, opaque), _shapes(new, opaque)
    for kind in sorted({*old_shapes, *new_shapes}):
        if kind not in new_shapes:
            out.append(Change(where=where, kind=kind, change="removed", stored=f"{_count(old, kind)} body/event(s)"))
        elif kind not in old_shapes:
            out.append(Change(where=where, kind=kind, change="added", fresh=f"{_count(new, kind)} body/event(s)"))
        else:
            out.extend(_shape_changes(where, kind, old_shapes[kind], new_shapes[kind]))
    old_kinds, new_kinds = [k for k, _ in old], [k for k, _ in new]
    if old_kinds != new_kinds:
        at = next((i for i, (a, b) in enumerate(zip(old_kinds, new_kinds, strict=False)) if a != b), None)
        at = min(len(old_kinds), len(new_kinds)) if at is None else at
        path = f"events[{at}:]"  # the first event that differs, and the rest
        out.append(_value(where, "events", path, _Shown(_sequence(old_kinds[at:])), _Shown(_sequence(new_kinds[at:]))))
        return out  # events no longer pair up one to one: their values are not compared
    values: list[Change] = []
    streamed = len(new) > 1 or any(k.startswith(("stream_event:", "chunk:")) for k in new_kinds)
    for index, ((kind, a), (_, b)) in enumerate(zip(old, new, strict=True)):
        _values(f"{where}.events[{index}]" if streamed else where, kind, a, b, "$", values)
    out.extend(values[:MAX_VALUES])
    if len(values) > MAX_VALUES:
        more = len(values) - MAX_VALUES
        out.append(Change(where=where, kind="values", change="value changed", stored="…", fresh=f"{more} more"))
    return out


def _shapes(documents: Iterable[tuple[str, Any]], opaque: Iterable[str]) -> dict[str, Shape]:
    found: dict[str, set[tuple[str, Any]]] = defaultdict(set)
    for kind, payload in documents:
        found[kind] |= {("$", "text")} if payload is NOT_JSON else walk(payload, tuple(opaque))
    return {kind: frozenset(shape) for kind, shape in found.items()}


def _shape_changes(where: str, kind: str, old: Shape, new: Shape) -> list[Change]:
    old_types: dict[str, set[str]] = defaultdict(set)
    new_types: dict[str, set[str]] = defaultdict(set)
    for path, type_ in old:
        old_types[path].add(type_)
    for path, type_ in new:
        new_types[path].add(type_)
    out: list[Change] = []
    for path in sorted({*old_types, *new_types}):
        a, b = old_types.get(path, set()), new_types.get(path, set())
        if a == b:
            continue
        shown_a, shown_b = "|".join(sorted(a)), "|".join(sorted(b))
        if not a:
            out.append(Change(where=where, kind=kind, change="added", path=path, fresh=shown_b))
        elif not b:
            out.append(Change(where=where, kind=kind, change="removed", path=path, stored=shown_a))
        else:
            out.append(Change(where=where, kind=kind, change="type changed", path=path, stored=shown_a, fresh=shown_b))
    return _outermost(out)


def _outermost(changes: list[Change]) -> list[Change]:
    """Added or removed paths under an added or removed path are left out (one line per subtree)."""
    roots = [c.path for c in changes if c.change in ("added", "removed")]
    return [
        c
        for c in changes
        if not any(c.path != root and c.path.startswith(root) and c.path[len(root)] in ".[" for root in roots)
    ]


def _values(where: str, kind: str, old: Any, new: Any, path: str, out: list[Change]) -> None:
    """Differences of value at concrete paths where both sides hold the same JSON type (a type or
    presence difference is a shape change, reported above)."""
    if json_type(old) != json_type(new):
        return
    if isinstance(old, dict):
        for key in old:
            if key in new:
                _values(where, kind, old[key], new[key], f"{path}.{key}", out)
        return
    if isinstance(old, list):
        if len(old) != len(new):
            out.append(_value(where, kind, path, _Shown(f"{len(old)} item(s)"), _Shown(f"{len(new)} item(s)")))
        for index, (a, b) in enumerate(zip(old, new, strict=False)):
            _values(where, kind, a, b, f"{path}[{index}]", out)
        return
    if old is NOT_JSON or new is NOT_JSON or old == new:
        return
    out.append(_value(where, kind, path, old, new))


def _headers(where: str, old: Any, new: Any) -> list[Change]:
    old = {str(k).lower(): v for k, v in old.items()} if isinstance(old, dict) else {}
    new = {str(k).lower(): v for k, v in new.items()} if isinstance(new, dict) else {}
    out: list[Change] = []
    for name in sorted({*old, *new}):
        if name not in new:
            out.append(Change(where=where, kind="headers", change="removed", path=name, stored=_shown(old[name])))
        elif name not in old:
            out.append(Change(where=where, kind="headers", change="added", path=name, fresh=_shown(new[name])))
        elif old[name] != new[name]:
            out.append(_value(where, "headers", name, old[name], new[name]))
    return out


def _value(where: str, kind: str, path: str, old: Any, new: Any) -> Change:
    if old is _ABSENT:
        return Change(where=where, kind=kind, change="added", path=path, fresh=_shown(new))
    if new is _ABSENT:
        return Change(where=where, kind=kind, change="removed", path=path, stored=_shown(old))
    return Change(where=where, kind=kind, change="value changed", path=path, stored=_shown(old), fresh=_shown(new))


def _shown(value: Any, limit: int = 80) -> str:
    if isinstance(value, _Shown):
        return value
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _count(documents: Iterable[tuple[str, Any]], kind: str) -> int:
    return sum(k == kind for k, _ in documents)


def _sequence(kinds: list[str]) -> str:
    """``kind x3, other`` (runs collapsed), shortened."""
    runs: list[list[Any]] = []
    for kind in kinds:
        if runs and runs[-1][0] == kind:
            runs[-1][1] += 1
        else:
            runs.append([kind, 1])
    text = ", ".join(f"{k} x{n}" if n > 1 else str(k) for k, n in runs) or "(none)"
    return text if len(text) <= 200 else text[:199] + "…"
