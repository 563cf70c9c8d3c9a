"""Shape profiles of traffic: what (JSON path, JSON type) pairs each kind of exchange holds.

``profile_cassettes`` builds the real side from recorded cassettes; ``profile_exchanges`` the
emulator's side from exchanges collected over loopback (``conformance.emulator.fidelity.drive``).
The kinds and the path patterns are defined in ``conformance.emulator.fidelity.shapes``.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from conformance.adapters import detect_adapter
from conformance.emulator.fidelity.shapes import NOT_JSON, OPAQUE, JSONType, Shape, stream_kinds, walk
from conformance.traffic.cassettes import is_streaming, iter_cassette_files, load_cassette

__all__ = ["MAX_SOURCES", "FieldKey", "KindShape", "Profile", "RawExchange", "profile_cassettes", "profile_exchanges"]

MAX_SOURCES = 3


class FieldKey(NamedTuple):
    """One (path, type) pair of a kind."""

    path: str
    type: JSONType


# --------------------------------------------------------------------------------------------
# Profiles
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class KindShape:
    """What the samples of one (adapter, kind) hold."""

    samples: int
    """How many bodies/events of this kind were profiled."""
    fields: Mapping[FieldKey, int]
    """(path, type) -> how many samples hold it."""
    sources: Mapping[FieldKey, tuple[str, ...]]
    """(path, type) -> where it was first seen (up to three labels, ``file.yaml#2``)."""
    kind_sources: tuple[str, ...] = ()
    """Where the kind was first seen (up to three labels)."""


@dataclass(frozen=True, kw_only=True)
class Profile:
    """The shapes of some traffic, per (adapter, kind)."""

    shapes: Mapping[tuple[str, str], KindShape] = field(default_factory=dict)
    skipped: tuple[str, ...] = ()
    """What was not profiled, one line each with the reason (an unknown endpoint, a GET)."""

    def adapters(self) -> list[str]:
        return sorted({adapter for adapter, _ in self.shapes})

    def kinds(self, adapter: str) -> list[str]:
        return sorted(kind for a, kind in self.shapes if a == adapter)

    def shape(self, adapter: str, kind: str) -> KindShape | None:
        return self.shapes.get((adapter, kind))


class RawExchange(NamedTuple):
    """One exchange as bytes, e.g. captured from the emulator by ``conformance.traffic.transport``."""

    url: str
    request_body: bytes | None
    status: int
    response_body: bytes
    streaming: bool
    label: str = ""
    """Where it comes from, shown in differences (``one_call/stream#1``)."""


_NOT_JSON_SHAPE: Shape = frozenset({("$", "text")})


class _Builder:
    def __init__(self) -> None:
        self.samples: dict[tuple[str, str], int] = defaultdict(int)
        self.fields: dict[tuple[str, str], dict[FieldKey, int]] = defaultdict(lambda: defaultdict(int))
        self.sources: dict[tuple[str, str], dict[FieldKey, list[str]]] = defaultdict(lambda: defaultdict(list))
        self.kind_sources: dict[tuple[str, str], list[str]] = defaultdict(list)
        self.skipped: list[str] = []

    def add(self, adapter: str, kind: str, value: Any, label: str) -> None:
        key = (adapter, kind)
        self.samples[key] += 1
        if len(self.kind_sources[key]) < MAX_SOURCES and label not in self.kind_sources[key]:
            self.kind_sources[key].append(label)
        shape = _NOT_JSON_SHAPE if value is NOT_JSON else walk(value, OPAQUE.get(adapter, ()))
        counts, sources = self.fields[key], self.sources[key]
        for path, type_ in shape:
            fk = FieldKey(path, type_)
            counts[fk] += 1
            if len(sources[fk]) < MAX_SOURCES and label not in sources[fk]:
                sources[fk].append(label)

    def exchange(
        self, adapter: str, request: Any, status: int, body: bytes, parsed: Any, stream: bool, label: str
    ) -> None:
        if request is not None:
            self.add(adapter, "request", request, label)
        if status >= 400:
            self.add(adapter, f"error:{status}", _body_value(body, parsed), label)
        elif stream:
            for kind, payload in stream_kinds(adapter, body):
                self.add(adapter, kind, payload, label)
        elif 200 <= status < 300 and not body.strip():
            self.skipped.append(f"{label}: status {status} has an empty body; not profiled")
        elif 200 <= status < 300:
            self.add(adapter, "response", _body_value(body, parsed), label)
        else:
            self.skipped.append(f"{label}: status {status} is neither a body nor an error; not profiled")

    def build(self) -> Profile:
        shapes = {
            key: KindShape(
                samples=self.samples[key],
                fields=dict(self.fields[key]),
                sources={fk: tuple(v) for fk, v in self.sources[key].items()},
                kind_sources=tuple(self.kind_sources[key]),
            )
            for key in self.samples
        }
        return Profile(shapes=shapes, skipped=tuple(self.skipped))


def _body_value(body: bytes, parsed: Any) -> Any:
    if parsed is not None:
        return parsed
    if not body.strip():
        return NOT_JSON
    try:
        return json.loads(body)
    except ValueError:
        return NOT_JSON


def profile_cassettes(paths: Iterable[str | os.PathLike[str]]) -> Profile:
    """The profile of the cassettes under ``paths`` (files or directories, read recursively).

    The adapter of each interaction comes from its URL (``detect_adapter``); interactions on other
    endpoints (``/v1/conversations``, a ``DELETE``) and interactions with problems are skipped
    and listed in ``Profile.skipped``. Raises what ``load_cassette`` raises for an unreadable file.
    """
    builder = _Builder()
    for path in iter_cassette_files(paths):
        cassette = load_cassette(path)
        for interaction in cassette.interactions:
            label = f"{Path(cassette.path).name}#{interaction.index}"
            request, response = interaction.request, interaction.response
            body = request.json if isinstance(request.json, dict) else None
            adapter = detect_adapter(request.uri, body)
            if adapter is None or response is None:
                why = "no adapter serves this endpoint" if response is not None else "no usable response"
                builder.skipped.append(f"{label}: {request.method} {request.uri}: {why}; not profiled")
                continue
            builder.exchange(
                adapter, body, response.status, response.body, response.json, is_streaming(interaction), label
            )
    return builder.build()


def profile_exchanges(exchanges: Iterable[RawExchange | tuple[Any, ...]], *, adapter: str | None = None) -> Profile:
    """The profile of raw exchanges: (url, request body bytes, status, response body bytes,
    streaming[, label]). The adapter is ``adapter`` or detected from each URL."""
    builder = _Builder()
    for number, item in enumerate(exchanges):
        ex = item if isinstance(item, RawExchange) else RawExchange(*item)
        label = ex.label or f"exchange#{number}"
        request = _body_value(ex.request_body, None) if ex.request_body else None
        request = request if isinstance(request, dict) else None
        name = adapter or detect_adapter(ex.url, request)
        if name is None:
            builder.skipped.append(f"{label}: {ex.url}: no adapter serves this endpoint; not profiled")
            continue
        builder.exchange(name, request, ex.status, ex.response_body, None, ex.streaming, label)
    return builder.build()
