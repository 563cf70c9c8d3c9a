"""``--shard K/N``: a stable partition of a run's (adapter, scenario) pairs; bad input names the flag."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conformance.errors import UsageError
from conformance.run.shard import Shard, parse_shard, shard_pairs

PAIRS = [
    (adapter, f"group{n % 3}/scenario_{n}") for adapter in ("openai_chat", "anthropic", "gemini") for n in range(7)
]


def _key(pair: tuple[str, str]) -> tuple[str, str]:
    return pair


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("0/3", "--shard 0/3: K counts from 1 to N=3"),
        ("3/2", "--shard 3/2: K counts from 1 to N=2"),
        ("x", "--shard 'x' is not K/N"),
        ("1/0", "--shard 1/0: N, the number of shards, must be at least 1"),
        ("1/", "--shard '1/' is not K/N"),
        ("-1/3", "--shard '-1/3' is not K/N"),
    ],
)
def test_bad_input_names_the_flag_and_what_to_write(text: str, said: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_shard(text)
    assert str(caught.value).startswith(said)
    assert "write K/N with 1 <= K <= N, e.g. --shard 1/3 --shard 2/3 --shard 3/3" in str(caught.value)


def test_k_of_n_reads_and_prints_back() -> None:
    assert parse_shard(" 2 / 3 ") == Shard(2, 3)
    assert str(Shard(2, 3)) == "2/3"
    assert parse_shard("1/1") == Shard(1, 1)


@pytest.mark.parametrize("count", [1, 2, 3, 5, 30])
def test_the_shards_cover_every_pair_once_in_the_pairs_order_and_share_them_evenly(count: int) -> None:
    parts = [shard_pairs(PAIRS, Shard(k, count), key=_key, selected=lambda _: True) for k in range(1, count + 1)]
    assert sorted(p for part in parts for p in part) == sorted(PAIRS)
    for part in parts:
        assert part == [p for p in PAIRS if p in part]  # the run's order is kept
    sizes = [len(part) for part in parts]
    assert max(sizes) - min(sizes) <= 1


def test_the_partition_depends_on_the_names_only_not_their_order() -> None:
    shard = Shard(2, 4)
    once = shard_pairs(PAIRS, shard, key=_key, selected=lambda _: True)
    reordered = shard_pairs(list(reversed(PAIRS)), shard, key=_key, selected=lambda _: True)
    assert sorted(once) == sorted(reordered)
    assert shard_pairs(PAIRS, None, key=_key, selected=lambda _: False) == PAIRS  # no shard: everything


def test_pairs_holding_no_selected_case_go_to_no_shard() -> None:
    chosen = {p for p in PAIRS if p[0] == "gemini"}
    parts = [shard_pairs(PAIRS, Shard(k, 2), key=_key, selected=lambda p: p in chosen) for k in (1, 2)]
    assert sorted(p for part in parts for p in part) == sorted(chosen)
    assert [len(part) for part in parts] == [4, 3]


def test_the_partition_is_the_same_under_every_hash_seed() -> None:
    code = (
        "from conformance.run.shard import Shard, shard_pairs\n"
        "pairs = [(a, f's{n}') for a in ('x', 'y', 'z') for n in range(9)]\n"
        "print(shard_pairs(pairs, Shard(2, 3), key=lambda p: p, selected=lambda p: True))\n"
    )
    seen = {
        subprocess.run(
            [sys.executable, "-c", code], env={"PYTHONHASHSEED": seed}, capture_output=True, text=True, check=True
        ).stdout
        for seed in ("0", "1", "12345")
    }
    assert len(seen) == 1
