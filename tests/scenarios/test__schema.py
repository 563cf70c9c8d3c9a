"""Tests for the published scenario schema (``conformance/schemas/scenario.schema.json``, read by
``conformance.scenarios._schema``): a valid draft 2020-12 schema, closed everywhere, every property
described, its closed vocabularies equal to the Python ones, and shipped as package data."""

from __future__ import annotations

import dataclasses
import tomllib
import typing
from collections.abc import Iterator, Mapping
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

import conformance
from conformance.model import ERROR_KINDS, FINISH_REASONS, StreamEvent
from conformance.scenarios._schema import scenario_schema
from conformance.scenarios.values import FAULT_KINDS, MODES

SCHEMA_FILE = Path(conformance.__file__).parent / "schemas" / "scenario.schema.json"
REPO_ROOT = Path(__file__).resolve().parents[2]
OPEN_BY_DESIGN = {"content_item", "user_item", "history_message"}
"""Unions closed by the item schema their ``if``/``then`` picks (text_item, image_item, history_user ...)."""


def walk(node: Any, at: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Mapping[str, Any]]]:
    if isinstance(node, Mapping):
        yield at, node
        for key, value in node.items():
            yield from walk(value, (*at, str(key)))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from walk(value, (*at, str(i)))


def resolve(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    ref = schema.get("$ref")
    if isinstance(ref, str):
        return resolve(scenario_schema()["$defs"][ref.removeprefix("#/$defs/")])
    return schema


def test_is_a_valid_draft_2020_12_schema_with_an_id() -> None:
    schema = scenario_schema()
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"]


def test_every_property_is_described() -> None:
    undescribed = [
        "/".join((*at, name))
        for at, node in walk(scenario_schema())
        if "if" not in at
        for name, prop in node.get("properties", {}).items()
        if not resolve(prop).get("description")
    ]
    assert undescribed == []


def test_objects_are_closed() -> None:
    open_objects = [
        "/".join(at)
        for at, node in walk(scenario_schema())
        if "properties" in node
        and "if" not in at
        and not (len(at) == 2 and at[1] in OPEN_BY_DESIGN)
        and node.get("additionalProperties") is not False
    ]
    assert open_objects == []


def enum_at(*path: str) -> list[Any]:
    node: Any = scenario_schema()
    for step in path:
        node = node[step]
    return list(node["enum"])


def test_vocabularies_match_the_python_ones() -> None:
    defs = ("$defs",)
    assert enum_at(*defs, "fault", "properties", "kind") == list(FAULT_KINDS)
    assert enum_at(*defs, "expected_error", "properties", "kind") == list(ERROR_KINDS)
    assert enum_at(*defs, "expect", "properties", "finish_reason") == list(FINISH_REASONS)
    assert enum_at("properties", "modes", "items") == list(MODES)
    event_types = [
        field.default
        for cls in typing.get_args(StreamEvent)
        for field in dataclasses.fields(cls)
        if field.name == "type"
    ]
    assert enum_at(*defs, "expect", "properties", "events", "items") == event_types
    # a reply plays what a provider can say; the decoded-only reasons are not playable
    assert enum_at(*defs, "reply", "properties", "finish") == ["stop", "tool_calls", "length", "content_filter"]
    assert set(enum_at(*defs, "reply", "properties", "finish")) <= set(FINISH_REASONS)


def test_schema_ships_as_package_data() -> None:
    pyproject = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = pyproject["tool"]["setuptools"]["package-data"]["conformance"]
    relative = SCHEMA_FILE.relative_to(SCHEMA_FILE.parent.parent).as_posix()
    assert any(fnmatch(relative, pattern) for pattern in patterns), patterns
    assert SCHEMA_FILE.is_file()


@pytest.mark.parametrize(
    ("document", "valid"),
    [
        (
            {
                "schema_version": 1,
                "behavior": "b",
                "source": "s",
                "tools": [],
                "turns": [{"user": "hi", "reply": {"text": "hello"}}],
            },
            True,
        ),
        ({"schema_version": 1, "behavior": "b", "source": "s", "tools": [], "turns": []}, False),
        (
            {
                "schema_version": 1,
                "behavior": "b",
                "source": "s",
                "tools": [],
                "turns": [{"user": "hi", "reply": {"tool_calls": [{"name": "f"}]}}],
            },
            False,  # a call needs arguments or arguments_raw
        ),
        (
            {
                "schema_version": 1,
                "behavior": "b",
                "source": "s",
                "tools": [],
                "turns": [{"user": [{"type": "audio", "data": "AA==", "mimeType": "audio/wav"}], "reply": {}}],
            },
            False,  # audio only in tool results
        ),
    ],
)
def test_schema_on_its_own(document: dict[str, Any], valid: bool) -> None:
    """The schema alone (as an editor uses it) accepts and refuses documents."""
    assert Draft202012Validator(scenario_schema()).is_valid(document) is valid
