"""Reports of a run: the report as pure data, rendered as JSON, Markdown, HTML and JUnit XML.

``build_report(run)`` turns a ``RunResult`` into one JSON-ready mapping (summary counts per
status, adapter, mode and check family; the scenario x adapter matrix; the defects, each once
(``defects_of``); the model deviations, apart from the defects (``deviations_of``); every case
with its checks and findings; cassette provenance), scrubbed of secrets. The renderers are pure
functions of that mapping (or of a ``RunResult``); ``merge_reports`` joins the JSON reports of a
run's shards into one such mapping; ``write_reports`` / ``write_each_report`` (each format on its
own) and ``check_report_dir`` (before a run) are the only functions that touch the disk.

The JSON form is a public contract: ``conformance/schemas/report.schema.json`` (draft 2020-12).
"""

from __future__ import annotations

from conformance.reporting._data import (
    MAX_DEPTH,
    REPORT_FORMAT,
    Report,
    build_report,
    cap_depth,
    case_defects,
    check_family,
    report_defects,
    report_deviations,
    run_defects,
)
from conformance.reporting._defects import SEVERITIES, SEVERITY_WORDS, DefectData, defects_of
from conformance.reporting._deviations import DeviationData, deviations_of
from conformance.reporting._html import STATUS_COLOURS, render_html
from conformance.reporting._json import SCHEMA_RESOURCE, render_json, report_schema
from conformance.reporting._junit import render_junit
from conformance.reporting._markdown import render_markdown
from conformance.reporting._merge import MergedReport, merge_reports
from conformance.reporting._write import (
    FORMATS,
    ReportFailure,
    WrittenReports,
    check_report_dir,
    write_each_report,
    write_report_data,
    write_reports,
)

__all__ = [
    "FORMATS",
    "MAX_DEPTH",
    "REPORT_FORMAT",
    "SCHEMA_RESOURCE",
    "SEVERITIES",
    "SEVERITY_WORDS",
    "STATUS_COLOURS",
    "DefectData",
    "DeviationData",
    "MergedReport",
    "Report",
    "ReportFailure",
    "WrittenReports",
    "build_report",
    "cap_depth",
    "case_defects",
    "check_family",
    "check_report_dir",
    "defects_of",
    "deviations_of",
    "merge_reports",
    "render_html",
    "render_json",
    "render_junit",
    "render_markdown",
    "report_defects",
    "report_deviations",
    "report_schema",
    "run_defects",
    "write_each_report",
    "write_report_data",
    "write_reports",
]
