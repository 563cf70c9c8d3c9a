"""``conformance.limits``: the bounds on untrusted files, their overrides and the schema measure.

Expected values come from the issue (names, defaults far above the real files, exit 2 listing the
names) and from counting by hand (a schema's values with its references inlined)."""

from __future__ import annotations

import dataclasses

import pytest
from _hostile import ref_bomb

from conformance.errors import UsageError
from conformance.limits import (
    DESCRIPTIONS,
    ENV_VAR,
    Limits,
    current,
    expanded_schema_size,
    how_to_raise,
    parse,
    with_overrides,
)

NAMES = [field.name for field in dataclasses.fields(Limits)]


def test_every_limit_is_described_and_documented() -> None:
    assert sorted(DESCRIPTIONS) == sorted(NAMES)
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[1] / "docs" / "limits.md").read_text(encoding="utf-8")
    for name in NAMES:
        assert f"| `{name}` |" in doc


def test_pairs_override_the_defaults() -> None:
    limits = parse(["yaml_nodes=2_000_000", "body_bytes=128M,nesting_depth=50"])
    assert (limits.yaml_nodes, limits.body_bytes, limits.nesting_depth) == (2_000_000, 128 * 1024 * 1024, 50)
    assert limits.yaml_aliases == Limits().yaml_aliases


@pytest.mark.parametrize("pair", ["bogus=1", "yaml_nodes", "yaml_nodes=0", "yaml_nodes=-3", "yaml_nodes=lots"])
def test_a_bad_pair_is_a_usage_error_listing_the_names(pair: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse([pair])
    text = str(caught.value)
    assert "--limit" in text
    if "=" not in pair or pair.startswith("bogus"):
        assert all(name in text for name in NAMES)
    else:
        assert "positive whole number" in text


def test_the_environment_variable_is_read_and_reread(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VAR, "yaml_aliases=7")
    assert current().yaml_aliases == 7
    monkeypatch.setenv(ENV_VAR, "yaml_aliases=8")
    assert current().yaml_aliases == 8
    monkeypatch.setenv(ENV_VAR, "nope=1")
    with pytest.raises(UsageError, match=r"\$CONFORMANCE_LIMITS: unknown limit 'nope'"):
        current()


def test_overrides_go_into_the_environment_for_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VAR, "yaml_aliases=7")
    limits = with_overrides(["nesting_depth=33"])
    assert (limits.yaml_aliases, limits.nesting_depth) == (7, 33)
    assert current() == limits  # what a worker process reads back from the variable


def test_how_to_raise_names_both_ways() -> None:
    text = how_to_raise("body_bytes")
    assert "--limit body_bytes=N" in text and f"{ENV_VAR}=body_bytes=N" in text and "docs/limits.md" in text


def test_schema_size_counts_references_as_what_they_inline() -> None:
    leaf = {"type": "string"}  # 1 mapping + 1 string = 2 values
    schema = {"$defs": {"s": leaf}, "properties": {"a": {"$ref": "#/$defs/s"}, "b": {"$ref": "#/$defs/s"}}}
    # root 1 + $defs mapping 1 + s 2 + properties 1 + a (1 + 2) + b (1 + 2) = 11
    assert expanded_schema_size(schema, stop=1000) == 11


def test_schema_size_of_a_reference_bomb_stops_at_once() -> None:
    # 26 levels of two references: 2**26 leaves; measured without building them
    assert expanded_schema_size(ref_bomb(26), stop=100_000) == 100_001


def test_a_recursive_reference_counts_once() -> None:
    schema = {"$defs": {"n": {"properties": {"next": {"$ref": "#/$defs/n"}}}}, "$ref": "#/$defs/n"}
    assert expanded_schema_size(schema, stop=1000) < 20


QUARTER = [
    "yaml_nodes=250000",
    "yaml_aliases=2500",
    "yaml_expanded_bytes=16M",
    "nesting_depth=25",
    "body_bytes=8M",
    "schema_nodes=25000",
]
"""A quarter of every default (or less): the real files must pass even these."""


def test_every_bundled_and_real_world_cassette_loads_far_under_the_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    from pathlib import Path

    from conformance.scenarios.bundled import cassettes_dir
    from conformance.traffic.cassettes import iter_cassette_files, load_cassette

    monkeypatch.setenv(ENV_VAR, ",".join(QUARTER))
    realworld = Path(__file__).resolve().parent / "realworld" / "cassettes"
    files = list(iter_cassette_files([cassettes_dir(), realworld]))
    assert len(files) > 600 and sum(f.is_relative_to(realworld) for f in files) == 44
    for file in files:
        load_cassette(file)  # raises past a limit (or on a lone surrogate escape)


def test_every_bundled_scenario_loads_far_under_the_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    from conformance.scenarios.loader import load_scenarios

    monkeypatch.setenv(ENV_VAR, ",".join(QUARTER))
    result = load_scenarios([])
    assert result.ok, result.problems[:3]
    assert len(result.scenarios) > 80
