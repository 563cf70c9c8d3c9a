from __future__ import annotations

from conformance.checks.streaming import splits


def test_splits_cover_single_bytes_random_and_every_two_way_cut() -> None:
    data = b"data: {}\n\n"
    named = [(name, list(pieces)) for name, pieces in splits(data, seed=7, exhaustive=True)]
    assert all(b"".join(pieces) == data for _, pieces in named)
    assert named[0] == ("single bytes", [bytes([b]) for b in data])
    two_way = [pieces for name, pieces in named if name.startswith("2-way")]
    assert len(two_way) == len(data) - 1 and all(len(p) == 2 and p[0] and p[1] for p in two_way)


def test_random_splits_are_seeded() -> None:
    data = bytes(range(200))

    def named(seed: int) -> list[tuple[str, list[bytes]]]:
        return [(name, list(pieces)) for name, pieces in splits(data, seed=seed, exhaustive=False)]

    assert named(3) == named(3)
    assert named(3) != named(4)
