"""The JSON report (pure): the report data as indented JSON, valid against ``report.schema.json``."""

from __future__ import annotations

import json
from collections.abc import Mapping
from importlib import resources
from typing import Any, cast

from conformance.reporting._data import Report, as_report
from conformance.verdicts import RunResult

__all__ = ["SCHEMA_RESOURCE", "render_json", "report_schema"]

SCHEMA_RESOURCE = "schemas/report.schema.json"
"""The published JSON Schema (draft 2020-12) of ``report.json``, inside the ``conformance`` package."""


def render_json(report: RunResult | Report | Mapping[str, Any]) -> str:
    """The report as JSON (``report.json``): two-space indent, key order kept, Unicode kept (all of it
    ``\\u``-escaped when a string holds a lone surrogate, which UTF-8 cannot carry)."""
    # allow_nan=False: build_report turns non-finite floats into strings, so this never raises for it
    data = as_report(report)
    text = json.dumps(data, ensure_ascii=False, indent=2, allow_nan=False) + "\n"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(data, ensure_ascii=True, indent=2, allow_nan=False) + "\n"
    return text


def report_schema() -> dict[str, Any]:
    """The JSON Schema of the JSON report (read from the installed package)."""
    text = resources.files("conformance").joinpath(SCHEMA_RESOURCE).read_text(encoding="utf-8")
    return cast(dict[str, Any], json.loads(text))
