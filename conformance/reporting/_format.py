"""Text helpers shared by the renderers (pure): values as JSON text, labels, safe characters.

Values nested deeper than ``MAX_DEPTH`` are shown cut (``cap_depth``), never with a ``RecursionError``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from conformance.reporting._data import CaseData, FindingData, cap_depth

__all__ = [
    "MODE_LABELS",
    "case_findings_text",
    "compact_json",
    "failing_checks",
    "parse_json_text",
    "pretty_body",
    "pretty_json",
    "printable",
]

MODE_LABELS = {"non_stream": "non-stream", "stream": "stream"}

# XML 1.0 forbids these; HTML treats them as parse errors. A traceback with ANSI colours has \x1b.
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff\ufffe\uffff]")


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
