"""Fidelity of the emulator to real traffic: shape profiles of bodies and stream events, compared.

A *profile* says, for each (adapter, kind of exchange), which (JSON path pattern, JSON type)
pairs the traffic holds and how many of the samples hold each. Kinds (``shapes``):

- ``request``: a request body;
- ``response``: a non-streamed 200 body;
- ``error:<status>``: an error body (any status >= 400, streaming request or not);
- ``stream_event:<name>``: an SSE event by its ``event:`` name, else its JSON ``type``/``object``
  (``/<type>`` appended where the payload nests a typed block: Anthropic content blocks and
  deltas, Responses output items and content parts); ``stream_event:[DONE]`` for the terminator;
- ``chunk:<features>``: a Gemini or Ollama stream chunk by what it holds, e.g.
  ``chunk:function_call``, ``chunk:text+final``, ``chunk:thinking``.

``compare`` lists the differences between a real profile (``profile_cassettes`` over the
public recordings) and the emulator's (``profile_exchanges`` over live traffic):

- **emulator_only**: a (path, type) the emulator sends that no real sample of that kind has,
  or a kind the emulator sends that real traffic never shows; always a fault to fix or explain;
- **real_only**: a (path, type) real samples have and the emulator never sends (a feature it does
  not emulate, or a field it misses), or a kind real traffic has that the emulator never sends.

Rules that keep the comparison about the wire rather than about the samples:

- types are the union over samples: a field seen as ``string`` in one recording and ``null`` in
  another accepts both; the emulator sending one of them is enough (a real-only ``null`` is not
  reported when the emulator sends the path with another type);
- an ``integer`` is a ``number``: the emulator may send ``0`` where real traffic sent ``0.5``;
- error bodies share one envelope per provider while recordings hold only a few statuses, so each
  ``error:<status>`` kind is compared for presence, and their fields are compared pooled as
  ``error:*``;
- a difference whose parent object/array is itself a difference is not listed again (it is
  counted in ``hidden``): one line says the emulator never sends ``logprobs`` at all.

The accepted differences (with the reason for each) live in ``docs/emulator-fidelity.md``, in a
fenced YAML block read by ``load_allow_list``; ``check`` splits differences into explained and
unexplained and lists allow-list entries that match nothing (stale). Run
``python -m conformance.emulator.fidelity [--adapter NAME]`` to print them.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from conformance.emulator.fidelity.allow_list import AllowEntry, load_allow_list, matches, parse_allow_list
from conformance.emulator.fidelity.profiles import (
    MAX_SOURCES,
    FieldKey,
    KindShape,
    Profile,
    RawExchange,
    profile_cassettes,
    profile_exchanges,
)
from conformance.emulator.fidelity.shapes import (
    ADAPTERS,
    SIDES,
    JSONType,
    Side,
    parent_path,
)
from conformance.errors import UsageError

__all__ = [
    "ADAPTERS",
    "DEFAULT_ALLOW_LIST",
    "SIDES",
    "AllowEntry",
    "CheckResult",
    "Difference",
    "FieldKey",
    "KindShape",
    "Profile",
    "RawExchange",
    "Side",
    "check",
    "compare",
    "default_realworld_dir",
    "load_allow_list",
    "main",
    "parse_allow_list",
    "profile_cassettes",
    "profile_exchanges",
    "real_profile",
]

# --------------------------------------------------------------------------------------------
# Differences
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Difference:
    """One way the emulator's traffic differs from real traffic."""

    adapter: str
    kind: str
    side: Side
    path: str | None = None
    """None: the whole kind is present on one side only."""
    type: JSONType | None = None
    seen: int = 0
    """How many samples of that side hold it (of ``samples``)."""
    samples: int = 0
    sources: tuple[str, ...] = ()
    hidden: int = 0
    """Differences under this path not listed separately."""

    @property
    def key(self) -> str:
        """``adapter kind side path type`` (``-`` for a whole kind): what allow-list patterns match."""
        return f"{self.adapter} {self.kind} {self.side} {self.path or '-'} {self.type or '-'}"

    @property
    def in_every_sample(self) -> bool:
        return self.samples > 0 and self.seen == self.samples

    def describe(self) -> str:
        who = "real traffic" if self.side == "real_only" else "the emulator"
        if self.path is None:
            what = f"kind {self.kind} is sent only by {who}"
        else:
            what = f"{self.path} ({self.type}) is sent only by {who}"
        extra = f" [{self.seen}/{self.samples} samples]" if self.samples else ""
        if self.hidden:
            extra += f" (+{self.hidden} nested)"
        where = f"; e.g. {', '.join(self.sources)}" if self.sources else ""
        return f"{self.adapter} {self.kind}: {what}{extra}{where}"


def _is_error(kind: str) -> bool:
    return kind.startswith("error:")


def _pooled(profile: Profile, adapter: str) -> dict[str, KindShape]:
    """The adapter's kinds, with every ``error:<status>`` merged into one ``error:*``."""
    out: dict[str, KindShape] = {}
    errors = [shape for (a, kind), shape in profile.shapes.items() if a == adapter and _is_error(kind)]
    for (a, kind), shape in profile.shapes.items():
        if a == adapter and not _is_error(kind):
            out[kind] = shape
    if errors:
        fields: dict[FieldKey, int] = defaultdict(int)
        sources: dict[FieldKey, list[str]] = defaultdict(list)
        for shape in errors:
            for fk, n in shape.fields.items():
                fields[fk] += n
                sources[fk].extend(s for s in shape.sources[fk] if len(sources[fk]) < MAX_SOURCES)
        out["error:*"] = KindShape(
            samples=sum(s.samples for s in errors),
            fields=dict(fields),
            sources={k: tuple(v) for k, v in sources.items()},
            kind_sources=tuple(s for shape in errors for s in shape.kind_sources)[:MAX_SOURCES],
        )
    return out


def _covered(fk: FieldKey, other: Mapping[FieldKey, int], *, emulator_side: bool) -> bool:
    """Whether ``fk`` on one side is matched by the other side's fields (type rules above)."""
    if fk in other:
        return True
    if emulator_side:  # an emulator integer where real traffic has numbers
        return fk.type == "integer" and FieldKey(fk.path, "number") in other
    if fk.type == "number" and FieldKey(fk.path, "integer") in other:
        return True
    # a nullable real field: the emulator sends it with one of its other types
    return fk.type == "null" and any(o.path == fk.path and o.type != "null" for o in other)


def _field_differences(adapter: str, kind: str, real: KindShape, emu: KindShape) -> list[Difference]:
    found: list[Difference] = []
    sides: tuple[tuple[Side, KindShape, KindShape], ...] = (("real_only", real, emu), ("emulator_only", emu, real))
    for side, mine, theirs in sides:
        # the root's own type is compared only when it says "not JSON at all"
        missing = {
            fk
            for fk in mine.fields
            if (fk.path != "$" or fk.type == "text")
            and not _covered(fk, theirs.fields, emulator_side=side == "emulator_only")
        }
        # a difference under a container that is itself a difference is counted, not listed
        containers = {fk.path for fk in missing if fk.type in ("object", "array")}
        hidden: dict[str, int] = defaultdict(int)
        listed: list[FieldKey] = []
        for fk in missing:
            top = _top_container(fk.path, containers)
            if top is None:
                listed.append(fk)
            else:
                hidden[top] += 1
        for fk in sorted(listed):
            found.append(
                Difference(
                    adapter=adapter,
                    kind=kind,
                    side=side,
                    path=fk.path,
                    type=fk.type,
                    seen=mine.fields[fk],
                    samples=mine.samples,
                    sources=mine.sources.get(fk, ()),
                    hidden=hidden.get(fk.path, 0) if fk.type in ("object", "array") else 0,
                )
            )
    return found


def _top_container(path: str, containers: set[str]) -> str | None:
    """The outermost proper ancestor of ``path`` among ``containers``, if any."""
    top = None
    parent = parent_path(path)
    while parent is not None:
        if parent in containers:
            top = parent
        parent = parent_path(parent)
    return top


def compare(real: Profile, emulated: Profile, allow: Mapping[str, str] | None = None) -> list[Difference]:
    """Every difference between ``real`` and ``emulated`` for the adapters the emulated profile
    has, minus those an ``allow`` pattern explains (pattern -> reason; see ``check``)."""
    found: list[Difference] = []
    for adapter in emulated.adapters():
        real_kinds, emu_kinds = _pooled(real, adapter), _pooled(emulated, adapter)
        statuses = {k for a, k in real.shapes if a == adapter and _is_error(k)}
        emu_statuses = {k for a, k in emulated.shapes if a == adapter and _is_error(k)}
        for kind in sorted(set(real_kinds) | set(emu_kinds) | statuses | emu_statuses):
            if kind in statuses | emu_statuses:  # presence of one error status
                if (kind in statuses) != (kind in emu_statuses):
                    side: Side = "real_only" if kind in statuses else "emulator_only"
                    shape = (real if side == "real_only" else emulated).shapes[(adapter, kind)]
                    found.append(_kind_difference(adapter, kind, side, shape))
                continue
            r, e = real_kinds.get(kind), emu_kinds.get(kind)
            if r is not None and e is not None:
                found.extend(_field_differences(adapter, kind, r, e))
            elif kind == "error:*":  # one side has no errors: the statuses above say so
                continue
            elif r is not None:
                found.append(_kind_difference(adapter, kind, "real_only", r))
            elif e is not None:
                found.append(_kind_difference(adapter, kind, "emulator_only", e))
    if not allow:
        return found
    return [d for d in found if not any(matches(p, d.key) for p in allow)]


def _kind_difference(adapter: str, kind: str, side: Side, shape: KindShape) -> Difference:
    return Difference(
        adapter=adapter, kind=kind, side=side, seen=shape.samples, samples=shape.samples, sources=shape.kind_sources
    )


# --------------------------------------------------------------------------------------------
# Checking against the allow-list
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class CheckResult:
    """Differences split by the allow-list."""

    unexplained: tuple[Difference, ...]
    explained: tuple[tuple[Difference, AllowEntry], ...]
    stale: tuple[AllowEntry, ...]
    """Entries (for the adapters compared) that match no difference any more."""

    @property
    def ok(self) -> bool:
        return not self.unexplained and not self.stale


def check(real: Profile, emulated: Profile, allow: Sequence[AllowEntry] = ()) -> CheckResult:
    """``compare`` with the allow-list applied: what is unexplained, what is explained by which
    entry, and which entries of the compared adapters explain nothing."""
    differences = compare(real, emulated)
    adapters = set(emulated.adapters())
    used: set[str] = set()
    unexplained: list[Difference] = []
    explained: list[tuple[Difference, AllowEntry]] = []
    for difference in differences:
        entry = next((e for e in allow if matches(e.pattern, difference.key)), None)
        if entry is None:
            unexplained.append(difference)
        else:
            explained.append((difference, entry))
            used.update(e.pattern for e in allow if matches(e.pattern, difference.key))
    stale = tuple(e for e in allow if e.pattern.split()[0] in adapters and e.pattern not in used)
    return CheckResult(unexplained=tuple(unexplained), explained=tuple(explained), stale=stale)


# --------------------------------------------------------------------------------------------
# python -m conformance.emulator.fidelity
# --------------------------------------------------------------------------------------------

_REPO = Path(__file__).resolve().parents[3]  # conformance/emulator/fidelity/__init__.py -> the checkout
DEFAULT_ALLOW_LIST = _REPO / "docs" / "emulator-fidelity.md"
"""The allow-list shipped with the repository."""


def default_realworld_dir() -> Path:
    """``$CONFORMANCE_REALWORLD``, else the checkout's ``tests/realworld``."""
    env = os.environ.get("CONFORMANCE_REALWORLD")
    return Path(env) if env else _REPO / "tests" / "realworld"


def real_profile(realworld: str | os.PathLike[str], adapters: Iterable[str]) -> Profile:
    """The profile of ``<realworld>/cassettes/<adapter>/`` for each adapter (the providers' own
    recordings; ``other/`` holds OpenAI-compatible servers with their own deviations)."""
    root = Path(realworld) / "cassettes"
    return profile_cassettes([root / name for name in adapters if (root / name).is_dir()])


def _yaml_key(difference: Difference) -> str:
    return json.dumps(difference.key)


def main(argv: Sequence[str] | None = None) -> int:
    """Print the differences between the emulator's traffic and real traffic; 0 when every one
    is explained by the allow-list and no entry is stale, 1 otherwise, 2 when it cannot run."""
    import argparse
    import sys

    parser = argparse.ArgumentParser(
        prog="python -m conformance.emulator.fidelity",
        description="Compare the shapes of the emulator's bodies and stream events with real recorded traffic.",
    )
    parser.add_argument("--adapter", action="append", choices=ADAPTERS, help="only this adapter (repeatable)")
    parser.add_argument("--realworld", type=Path, default=None, help="the real cassettes (default: tests/realworld)")
    parser.add_argument("--allow", type=Path, default=DEFAULT_ALLOW_LIST, help="the allow-list Markdown file")
    parser.add_argument("--all", action="store_true", help="also print the explained differences and their reasons")
    args = parser.parse_args(argv)
    adapters: list[str] = args.adapter or list(ADAPTERS)
    realworld: Path = args.realworld or default_realworld_dir()
    if not (realworld / "cassettes").is_dir():
        print(f"error: no real cassettes at {realworld / 'cassettes'}; pass --realworld DIR", file=sys.stderr)
        return 2
    try:
        from conformance.emulator.fidelity.drive import emulator_profile, load_emulator

        emulator_type = load_emulator().Emulator
    except ImportError as exc:
        print(f"error: the emulator is not available ({exc})", file=sys.stderr)
        return 2
    try:
        allow = load_allow_list(args.allow) if args.allow.exists() else []
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not args.allow.exists():
        print(f"note: no allow-list at {args.allow}; every difference is listed as unexplained")
    real = real_profile(realworld, adapters)
    failed = False
    with emulator_type(port=0) as emulator:
        for adapter in adapters:
            result = check(real, emulator_profile(emulator, adapter), allow)
            failed = failed or not result.ok
            print(
                f"{adapter}: {len(result.unexplained)} unexplained, {len(result.explained)} explained, "
                f"{len(result.stale)} stale allow-list entries"
            )
            for difference in result.unexplained:
                print(f"  - {difference.describe()}\n    {_yaml_key(difference)}: <reason>")
            for entry in result.stale:
                print(f"  - stale allow-list entry (matches nothing): {entry.pattern!r}")
            if args.all:
                for difference, entry in result.explained:
                    print(f"  = {difference.describe()}\n    because: {entry.reason}")
    return 1 if failed else 0
