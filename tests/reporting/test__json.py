"""render_json and the published schema: rendered reports validate; the schema is strict and draft 2020-12."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import conformance
from conformance.reporting import build_report, render_json, report_schema
from conformance.verdicts import RunResult
from tests.reporting._runs import HOSTILE, KEY

SCHEMA_FILE = Path(conformance.__file__).parent / "schemas" / "report.schema.json"


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())


def test_the_schema_is_a_valid_draft_2020_12_schema() -> None:
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)
    assert report_schema() == schema  # the packaged copy is the published one


def test_a_rendered_report_is_valid(mixed_run: RunResult, validator: jsonschema.Draft202012Validator) -> None:
    document = json.loads(render_json(mixed_run))
    errors = sorted(validator.iter_errors(document), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors]


def test_an_empty_run_and_a_run_with_problems_are_valid(
    empty_run: RunResult, validator: jsonschema.Draft202012Validator
) -> None:
    validator.validate(json.loads(render_json(empty_run)))
    broken = dataclasses.replace(empty_run, problems=("scenarios/a.yaml: not a mapping",))
    validator.validate(json.loads(render_json(broken)))


def test_the_schema_rejects_what_a_report_never_holds(
    mixed_run: RunResult, validator: jsonschema.Draft202012Validator
) -> None:
    def invalid(change: Any) -> bool:
        document = json.loads(render_json(mixed_run))
        change(document)
        return not validator.is_valid(document)

    assert invalid(lambda d: d["cases"][0].__setitem__("status", "passed"))
    assert invalid(lambda d: d["cases"][0].__setitem__("mode", "streaming"))
    assert invalid(lambda d: d["cases"][0].__setitem__("surprise", 1))
    assert invalid(lambda d: d["summary"]["statuses"].pop("stale"))
    assert invalid(lambda d: d.pop("matrix"))
    assert invalid(lambda d: d.__setitem__("report_format", 2))
    assert invalid(lambda d: d["matrix"]["rows"][0]["cells"][0]["modes"].__setitem__("stream", {"status": "pass"}))


def test_render_json_is_the_built_report_as_indented_json(mixed_run: RunResult) -> None:
    text = render_json(mixed_run)
    assert text.endswith("}\n")
    assert text.startswith('{\n  "report_format": 1,\n  "suite_version": "0.1.0",\n')
    assert json.loads(text) == build_report(mixed_run)
    assert render_json(build_report(mixed_run)) == text
    assert HOSTILE in json.loads(text)["cases"][5]["checks"][1]["findings"][0]["expected"]
    assert KEY not in text
    assert "NaN" not in text and "Infinity" not in text


def test_unicode_is_kept_readable(mixed_run: RunResult) -> None:
    scenario = dataclasses.replace(mixed_run.scenarios[0], behavior="Zeit in Zürich — 東京")
    run = dataclasses.replace(mixed_run, scenarios=(scenario, *mixed_run.scenarios[1:]))
    assert "Zeit in Zürich — 東京" in render_json(run)


def test_a_report_with_its_suite_and_selection_is_valid(validator: jsonschema.Draft202012Validator) -> None:
    from tests.reporting._runs import suited_run

    document = json.loads(render_json(suited_run()))
    errors = sorted(validator.iter_errors(document), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors]
    for bad in ({"shard": "0/3"}, {"shard": "x"}):
        broken = {**document, "selection": {**document["selection"], **bad}}
        assert not validator.is_valid(broken), bad
    assert not validator.is_valid({**document, "suite": {**document["suite"], "fingerprint": "abc"}})
