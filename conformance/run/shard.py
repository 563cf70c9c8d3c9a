"""``--shard K/N``: a stable partition of a run's cases, so that N machines (a CI matrix) each run
one part and ``conformance merge-reports`` joins their JSON reports into the report of one run.

The unit is the pair (adapter or ``client/wire``, scenario): a pair's streamed case is judged
against its non-streamed one, so both always run in the same shard. The pairs that hold a selected
case are sorted by adapter name, then scenario id, and dealt round robin: the K-th shard takes the
pairs at positions K-1, K-1+N, K-1+2N, ... of that list. The partition depends only on the names,
never on Python's hash seed, the machine, ``--jobs`` or the order of the flags, so every shard given
the same selection (and the same suite) takes its own pairs and no two take one; the shards hold
equal numbers of pairs, give or take one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from conformance.errors import UsageError

__all__ = ["Shard", "parse_shard", "shard_pairs"]

P = TypeVar("P")

_FORM = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")


@dataclass(frozen=True)
class Shard:
    """The ``index``-th (1-based) of ``count`` shards."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def takes(self, position: int) -> bool:
        """Does this shard take the pair at ``position`` (0-based) of the sorted list?"""
        return position % self.count == self.index - 1


def parse_shard(text: str, flag: str = "--shard") -> Shard:
    """``K/N`` with 1 <= K <= N; ``UsageError`` naming ``flag`` and what to write instead."""
    found = _FORM.fullmatch(text)
    example = f"write K/N with 1 <= K <= N, e.g. {flag} 1/3 {flag} 2/3 {flag} 3/3 on three machines"
    if found is None:
        raise UsageError(f"{flag} {text!r} is not K/N: {example}")
    index, count = int(found.group(1)), int(found.group(2))
    if count < 1:
        raise UsageError(f"{flag} {text}: N, the number of shards, must be at least 1 ({example})")
    if not 1 <= index <= count:
        raise UsageError(f"{flag} {text}: K counts from 1 to N={count} ({example})")
    return Shard(index, count)


def shard_pairs(
    pairs: Sequence[P],
    shard: Shard | None,
    *,
    key: Callable[[P], tuple[str, str]],
    selected: Callable[[P], bool],
) -> list[P]:
    """The pairs of ``shard`` (None: all of them), in their order in ``pairs``. ``key``: the pair's
    (adapter name, scenario id); ``selected``: does it hold a case the run selects (pairs that hold
    none are dealt to no shard, so that the shards share the real work)."""
    if shard is None:
        return list(pairs)
    holding = sorted((i for i, pair in enumerate(pairs) if selected(pair)), key=lambda i: key(pairs[i]))
    taken = {i for position, i in enumerate(holding) if shard.takes(position)}
    return [pair for i, pair in enumerate(pairs) if i in taken]
