"""Text helpers shared by the renderers (pure): values as JSON text, labels, safe characters.

Values nested deeper than ``MAX_DEPTH`` are shown cut (``cap_depth``), never with a ``RecursionError``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from conformance.reporting._data import CaseData, FindingData, Tally, cap_depth
from conformance.reporting._defects import DefectData, EvidenceData
from conformance.verdicts import STATUS_ORDER

__all__ = [
    "FAILING_STATUSES",
    "MODE_LABELS",
    "MODE_WORDS",
    "Outcome",
    "case_findings_text",
    "compact_json",
    "defect_where",
    "evidence_place",
    "failing_checks",
    "parse_json_text",
    "pretty_body",
    "pretty_json",
    "printable",
    "quantity",
    "run_outcome",
]

MODE_LABELS = {"non_stream": "non-stream", "stream": "stream"}

FAILING_STATUSES = frozenset({"fail", "error", "stale"})
"""The case statuses that make a run fail (exit 1); ``unsupported``, ``xfail``, ``left`` and ``deviated``
(the model did not do what the scenario asks: never a defect of the server) do not."""


@dataclass(frozen=True)
class Outcome:
    """What a run (or one adapter's cases) came to, in words: ``passed``, ``failed`` or ``incomplete``,
    and its counts, the failing ones first (``110 fail, 2 error, 1,168 pass``)."""

    word: str
    counts: str


def run_outcome(tally: Tally, *, problems: int = 0, incomplete: bool = False) -> Outcome:
    """The headline of ``tally``: ``failed`` when a case failed, errored or is stale or a scenario file had
    problems (the run exits 1); ``incomplete`` when the run was interrupted; else ``passed``, even when
    some cases are unsupported, xfail, left or deviated (the exit code is 0 then too)."""
    statuses = tally["statuses"]
    order = [s for s in reversed(STATUS_ORDER) if s in FAILING_STATUSES] + [
        s for s in STATUS_ORDER if s not in FAILING_STATUSES
    ]
    parts = [f"{statuses[s]:,} {s}" for s in order if statuses.get(s)]
    if problems:
        parts.insert(0, f"{problems:,} scenario problem{'s' if problems != 1 else ''}")
    counts = ", ".join(parts) or "no cases"
    if incomplete:
        return Outcome("incomplete", counts)
    failed = problems > 0 or any(statuses.get(s) for s in FAILING_STATUSES)
    return Outcome("failed" if failed else "passed", counts)


# XML 1.0 forbids these; HTML treats them as parse errors. A traceback with ANSI colours has \x1b.
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff\ufffe\uffff]")


def quantity(count: int, noun: str) -> str:
    """``1 adapter``, ``3 adapters``, ``1,180 cases``: a count and its noun in the number it takes."""
    return f"{count:,} {noun}" if count == 1 else f"{count:,} {noun}s"


def printable(text: str) -> str:
    """``text`` with control characters shown as ``\\xNN`` escapes (valid in XML 1.0 and HTML)."""
    return _CONTROL.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def compact_json(value: Any) -> str:
    """One line of JSON (strings quoted, so ``"1"`` and ``1`` differ); Unicode kept."""
    try:
        return json.dumps(value, ensure_ascii=False, separators=(", ", ": "), sort_keys=False)
    except RecursionError:
        return json.dumps(cap_depth(value), ensure_ascii=False, separators=(", ", ": "), sort_keys=False)


def pretty_json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, indent=2)
    except RecursionError:
        return json.dumps(cap_depth(value), ensure_ascii=False, indent=2)


def parse_json_text(text: str) -> tuple[bool, Any]:
    """``(True, value)`` when ``text`` holds a JSON object or array (cut below ``MAX_DEPTH`` levels),
    else ``(False, None)``; text nested too deeply for the parser stays text."""
    stripped = text.strip()
    if stripped[:1] not in ("{", "["):
        return False, None
    try:
        return True, cap_depth(json.loads(stripped))
    except (ValueError, RecursionError):
        return False, None


def pretty_body(value: Any) -> str:
    """A wire body for reading: JSON (a value, or a string holding JSON) indented; other text as is."""
    if isinstance(value, str):
        ok, parsed = parse_json_text(value)
        return pretty_json(parsed) if ok else value
    return pretty_json(value)


def failing_checks(case: CaseData) -> list[str]:
    """Ids of the checks that ended with the case's own status (the ones that made it what it is)."""
    return [check["check"] for check in case["checks"] if check["status"] == case["status"]]


def _finding_line(finding: FindingData) -> str:
    where = f" at {finding['path']}" if finding["path"] else ""
    turn = f" (turn {finding['turn']})" if finding["turn"] is not None else ""
    return (
        f"[{finding['check']}]{where}{turn}: {finding['message']}\n"
        f"  expected: {compact_json(finding['expected'])}\n"
        f"  actual:   {compact_json(finding['actual'])}"
    )


def case_findings_text(case: CaseData) -> str:
    """Every check that did not pass, with its findings, as plain text (JUnit failure bodies)."""
    lines: list[str] = []
    if case["message"]:
        lines.append(case["message"])
    for check in case["checks"]:
        if check["status"] == "pass":
            continue
        reason = f": {check['message']}" if check["message"] else ""
        lines.append(f"{check['check']} {check['status']}{reason}")
        lines.extend(_finding_line(finding) for finding in check["findings"])
    return printable("\n".join(lines))


MODE_WORDS = {"non_stream": "non-streamed", "stream": "streamed"}
"""A mode in a sentence (``MODE_LABELS``: in a table cell)."""


def defect_where(defect: DefectData) -> str:
    """Where a defect appears, in words: ``in 110 cases (55 non-streamed, 55 streamed), 55 scenarios, on
    onebug; the non-streamed decoding is the wrong one``."""
    cases = len(defect["cases"])
    modes: dict[str, int] = {}
    for case_id in defect["cases"]:
        mode = case_id.partition("#")[0].rsplit("/", 1)[-1]
        modes[mode] = modes.get(mode, 0) + 1
    if len(modes) == 1:
        [(mode, _)] = modes.items()
        split = f"all {MODE_WORDS.get(mode, mode)}" if cases > 1 else MODE_WORDS.get(mode, mode)
    elif len(set(modes.values())) == 1:
        split = f"{next(iter(modes.values()))} per mode"
    else:
        split = ", ".join(f"{modes[m]} {word}" for m, word in MODE_WORDS.items() if modes.get(m))
    adapters = defect["adapters"]
    on = f"on {adapters[0]}" if len(adapters) == 1 else f"on {len(adapters)} adapters"
    text = f"in {quantity(cases, 'case')} ({split}), {quantity(len(defect['scenarios']), 'scenario')}, {on}"
    blamed = defect["wrong_mode"]
    return text + (f"; the {MODE_WORDS.get(blamed, blamed)} decoding is the wrong one" if blamed else "")


def evidence_place(evidence: EvidenceData) -> str:
    """Where the evidence is: ``turn 1 $.messages[2].content`` (a path that names its turn already as is)."""
    path = evidence["path"]
    if evidence["turn"] is None or path.startswith("turn "):
        return path
    return f"turn {evidence['turn']} {path}".rstrip()
