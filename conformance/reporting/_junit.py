"""The JUnit XML report (pure), in the shape CI servers read (Jenkins' ``junit-10.xsd``, GitLab, GitHub).

``<testsuites>`` holds one ``<testsuite name="<adapter>">`` per adapter and one
``<testcase classname="<adapter>.<mode>" name="<scenario>">`` per case. A case that fails gets a
``<failure message=... type="<check id>">`` whose message is the case's worst defect in plain words
(``conformance.reporting._defects``) and whose text gives each defect of the case (what to do, the
evidence), then every check that did not pass with its findings; a stale case is a failure too (a
known gap that passes now must go, like pytest's strict xpass; a cassette recorded from another version
of its scenario must be recorded again); an error gets ``<error>`` with the traceback;
unsupported, xfail, left and deviated get ``<skipped message=...>`` (deviated: ``model deviated:
<what the model did>``, the model's choice, never a failure of the server). The
``tests``/``failures``/``errors``/``skipped`` counts follow. ``<testsuites>`` carries no ``skipped``
attribute, which that XSD does not allow there. An incomplete report (an interrupted run) gives every ``<testsuite>`` a
``<property name="incomplete" value="<why>"/>``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping
from typing import Any

from conformance.reporting._data import CaseData, Report, as_report, report_defects
from conformance.reporting._defects import SEVERITY_WORDS, DefectData
from conformance.reporting._deviations import deviations_of
from conformance.reporting._format import case_findings_text, failing_checks, printable
from conformance.verdicts import RunResult

__all__ = ["render_junit"]

_SKIPPED = frozenset({"unsupported", "xfail", "left", "deviated"})
_FAILED = frozenset({"fail", "stale"})
_MESSAGE_LIMIT = 500


def render_junit(report: RunResult | Report | Mapping[str, Any]) -> str:
    """The report as JUnit XML (``junit.xml``)."""
    data = as_report(report)
    by_adapter: dict[str, list[CaseData]] = {name: [] for name in data["matrix"]["adapters"]}
    for case in data["cases"]:
        by_adapter.setdefault(case["adapter"], []).append(case)
    models = {a["name"]: a.get("model") for a in data["adapters"]}
    root = ET.Element("testsuites", {"name": _a(f"conformance {data['suite_version']}")})
    totals = dict.fromkeys(("tests", "failures", "errors", "skipped"), 0)
    time = 0.0
    defects = report_defects(data)
    of_case: dict[str, list[DefectData]] = {}
    for defect in defects:
        for case_id in defect["cases"]:
            of_case.setdefault(case_id, []).append(defect)
    for adapter, cases in by_adapter.items():
        suite = ET.SubElement(root, "testsuite", {"name": _a(adapter)})
        named = _properties(data, models.get(adapter))
        if named:  # <properties> comes first in a <testsuite>
            properties = ET.SubElement(suite, "properties")
            for prop, text in named:
                ET.SubElement(properties, "property", {"name": prop, "value": _a(text)})
        counts = dict.fromkeys(("tests", "failures", "errors", "skipped"), 0)
        suite_time = 0.0
        for case in cases:
            _testcase(suite, case, of_case.get(case["id"], []))
            counts["tests"] += 1
            counts["failures"] += case["status"] in _FAILED
            counts["errors"] += case["status"] == "error"
            counts["skipped"] += case["status"] in _SKIPPED
            suite_time += case["duration"]
        suite.attrib.update({k: str(v) for k, v in counts.items()})
        suite.set("time", _seconds(suite_time))
        for key, value in counts.items():
            totals[key] += value
        time += suite_time
    root.attrib.update({k: str(totals[k]) for k in ("tests", "failures", "errors")})
    root.set("time", _seconds(time))
    ET.indent(root, space="  ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _properties(data: Report, model: str | None) -> list[tuple[str, str]]:
    """A testsuite's properties: why the report is incomplete, the suite's fingerprint, the shard and
    the model asked for."""
    found: list[tuple[str, str]] = []
    if data.get("incomplete"):
        found.append(("incomplete", str(data["incomplete"])))
    suite = data.get("suite")
    if suite:
        found.append(("suite_fingerprint", suite["fingerprint"]))
    selection = data.get("selection")
    if selection and selection.get("shard"):
        found.append(("shard", str(selection["shard"])))
    if model:
        found.append(("model", model))
    return found


def _testcase(suite: ET.Element, case: CaseData, defects: list[DefectData]) -> None:
    element = ET.SubElement(
        suite,
        "testcase",
        {
            "classname": _a(f"{case['adapter']}.{case['mode']}"),
            "name": _a(case["scenario"]),
            "time": _seconds(case["duration"]),
        },
    )
    status = case["status"]
    if status == "pass":
        return
    if status in _FAILED:
        checks = failing_checks(case)
        failing = [d for d in defects if d["kind"] == "defect"]
        if status == "fail" and failing:
            message = _line(f"[{SEVERITY_WORDS[failing[0]['severity']]}] {failing[0]['sentence']}")
            more = len(failing) - 1
            message += f" (and {more} more defect{'s' if more > 1 else ''})" if more else ""
        else:
            message = _message(case) if status == "fail" else f"stale: {_message(case)}"
        child = ET.SubElement(element, "failure", {"message": _a(message), "type": _a(checks[0] if checks else status)})
        said = [_defect_text(d) for d in failing]
        child.text = "\n\n".join([*said, case_findings_text(case)]) if said else case_findings_text(case)
    elif status == "error":
        child = ET.SubElement(element, "error", {"message": _a(_message(case)), "type": "error"})
        text = case_findings_text(case)
        if case["traceback"]:
            text = f"{text}\n\n{printable(case['traceback'])}" if text else printable(case["traceback"])
        child.text = text
    elif status == "deviated":  # what the model did, as the report's deviations say it
        did = next(iter(deviations_of([case])))["message"]
        ET.SubElement(element, "skipped", {"message": _line(f"model deviated: {did}")})
    elif status in _SKIPPED:
        ET.SubElement(element, "skipped", {"message": _a(f"{status}: {_message(case)}")})
    else:  # pragma: no cover - STATUS_ORDER is closed; a new status must be placed above
        raise AssertionError(f"unhandled status {status!r}")


def _defect_text(defect: DefectData) -> str:
    """A defect in a failure's text: severity and sentence, what to do, the evidence."""
    lines = [f"[{SEVERITY_WORDS[defect['severity']]}] {defect['sentence']}"]
    lines += [f"to do: {defect['remedy']}"] if defect["remedy"] else []
    evidence = defect["evidence"]
    lines.append(f"e.g. {evidence['case']} {evidence['path']}".rstrip())
    lines += [f"  {line}" for line in evidence["shown"]]
    return "\n".join(printable(line) for line in lines)


def _line(text: str) -> str:
    line = printable(" ".join(text.split()))
    return line if len(line) <= _MESSAGE_LIMIT else line[: _MESSAGE_LIMIT - 1] + "…"


def _message(case: CaseData) -> str:
    """One line for the ``message`` attribute: the case's message, else the first reason or finding."""
    candidates = [case["message"]]
    for check in case["checks"]:
        if check["status"] == case["status"]:
            candidates.append(check["message"])
            candidates.extend(f["message"] for f in check["findings"])
    first = next((c for c in candidates if c), case["status"])
    line = printable(" ".join(first.split()))
    return line if len(line) <= _MESSAGE_LIMIT else line[: _MESSAGE_LIMIT - 1] + "…"


def _a(value: str) -> str:
    """An attribute value: no characters XML 1.0 forbids (ElementTree escapes the rest)."""
    return printable(value)


def _seconds(value: float) -> str:
    return f"{value:.3f}"
