"""The Markdown report (pure): the outcome, the defects (each once, worst first:
``conformance.reporting._defects``), the model deviations apart from them (when the model behind a
live server did not do what a scenario asks: ``conformance.reporting._deviations``), the summary
counts, the scenario x adapter matrix, then every case that did not pass.

Ids and values go in code spans (their text is literal, so ``<script>`` in a value stays text);
prose is escaped. Table cells never hold a raw ``|`` or a line break. GitHub-flavoured tables.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Mapping
from typing import Any

from conformance.reporting._data import CaseData, ModeCell, Report, as_report, report_defects, report_deviations
from conformance.reporting._defects import SEVERITIES, SEVERITY_WORDS, DefectData, severity_counts
from conformance.reporting._format import (
    MODE_LABELS,
    compact_json,
    defect_where,
    evidence_place,
    printable,
    quantity,
    run_outcome,
)
from conformance.verdicts import STATUS_ORDER, RunResult

__all__ = ["render_markdown"]

_SPECIAL = re.compile(r"([\\`*\[\]<>|#!~&])")  # no _: tool_use stays readable (at worst a word is emphasised)
_NOT_RUN = "—"


def render_markdown(
    report: RunResult | Report | Mapping[str, Any],
    *,
    reruns: Mapping[str, str] | None = None,
    explain: Callable[[DefectData], str | None] | None = None,
) -> str:
    """The report as GitHub-flavoured Markdown (``report.md``); ``reruns``: ``adapter::scenario::mode`` ->
    the shell command that reruns that case alone, shown under a failing, erroring or stale case and
    under the defect it is the evidence of; ``explain``: why a defect is one, with the library's source
    line or doc (Markdown, shown as it is), where the caller knows it."""
    data = as_report(report)
    out: list[str] = []
    _headline(data, out)
    _defects(data, out, reruns or {}, explain)
    _deviations(data, out)
    _summary(data, out)
    _matrix(data, out)
    if data["problems"]:
        out += ["## Problems", ""]
        out += [f"- {_text(problem)}" for problem in data["problems"]]
        out.append("")
    _cases(data, out, reruns or {})
    _provenance(data, out)
    _commands(data, out)
    return "\n".join(out).rstrip("\n") + "\n"


# -- escaping ----------------------------------------------------------------------------------------------


def _text(value: str) -> str:
    """Prose for a paragraph or a table cell: Markdown and HTML characters escaped, one line."""
    return _SPECIAL.sub(r"\\\1", _one_line(value))


def _code(value: str) -> str:
    """A code span holding ``value`` literally (fence longer than any backtick run inside)."""
    value = _one_line(value).replace("|", "\\|")  # GFM reads \| in a table cell as |, also in code
    longest = max((len(run) for run in re.findall("`+", value)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if value.startswith("`") or value.endswith("`") or not value.strip() else ""
    return f"{fence}{pad}{value}{pad}{fence}"


def _one_line(value: str) -> str:
    return printable(" ".join(value.splitlines()) if "\n" in value or "\r" in value else value)


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _status(status: str) -> str:
    return status if status == "pass" else f"**{status}**"


# -- sections ----------------------------------------------------------------------------------------------


def _headline(data: Report, out: list[str]) -> None:
    summary = data["summary"]
    out += ["# Conformance report", ""]
    if data.get("incomplete"):
        out += [f"> **Incomplete report**: {_text(str(data['incomplete']))}", ""]
    outcome = run_outcome(
        {"total": summary["cases"], "statuses": summary["statuses"]},
        problems=summary["problems"],
        incomplete=bool(data.get("incomplete")),
    )
    out += [
        f"**{outcome.word.upper()}**: {outcome.counts}",
        "",
        f"Suite {_code(data['suite_version'])} · worst case status {_status(summary['verdict'])} · "
        f"{quantity(summary['cases'], 'case')} · {quantity(len(data['adapters']), 'adapter')} · "
        f"{quantity(len(data['scenarios']), 'scenario')}",
        "",
        *_suite_lines(data),
    ]


def _fenced(lines: list[str], info: str = "text") -> list[str]:
    body = "\n".join(printable(line) for line in lines)
    fence = "`" * max(3, max((len(run) + 1 for run in re.findall("`+", body)), default=0))
    return [fence + info, body, fence]


def _defects(
    data: Report, out: list[str], reruns: Mapping[str, str], explain: Callable[[DefectData], str | None] | None
) -> None:
    defects = report_defects(data)
    out += ["## Defects", ""]
    if not defects:
        out += ["None: no check found a defect.", ""]
        return
    counts = severity_counts(defects)
    tally = ", ".join(f"{counts[s]} {SEVERITY_WORDS[s]}" for s in SEVERITIES if counts[s])
    out += [
        f"{quantity(len(defects), 'defect')} ({tally}), worst first. Each is listed once, however many cases "
        "it fails; the findings of other checks that restate it are named under it. Every case follows, "
        "below the matrix.",
        "",
    ]
    for n, defect in enumerate(defects, 1):
        evidence = defect["evidence"]
        out += [f"### {n}. {_text(defect['sentence'])}", ""]
        out += [
            f"**{SEVERITY_WORDS[defect['severity']]}** · {_code(defect['check'])} · {_text(defect_where(defect))}",
            "",
        ]
        if defect["remedy"]:
            out += [f"**To do:** {_text(defect['remedy'])}", ""]
        reason = explain(defect) if explain is not None else None
        if reason:
            out += [f"**Why this is a defect of the library:** {reason}", ""]
        place = evidence_place(evidence)
        out += [
            f"Evidence: {_code(evidence['case'])}"
            + (f", {_code(place)}" if place else "")
            + (f", cassette {_code(evidence['cassette'])}" if evidence["cassette"] else ""),
            "",
        ]
        if evidence["shown"]:
            out += [*_fenced(evidence["shown"]), ""]
        rerun = reruns.get(f"{evidence['adapter']}::{evidence['scenario']}::{evidence['mode']}")
        if rerun:
            out += ["Rerun it:", "", *_fenced([rerun], "sh"), ""]
        if defect["restated"]:
            restated = ", ".join(
                f"{_code(r['check'])} ({quantity(r['cases'], 'case')}: {_text(r['message'])})"
                for r in defect["restated"]
            )
            out += [f"Restated by: {restated}", ""]
        out += [
            f"<details><summary>{quantity(len(defect['scenarios']), 'scenario')}</summary>",
            "",
            ", ".join(_code(s) for s in defect["scenarios"]),
            "",
            "</details>",
            "",
        ]


def _deviations(data: Report, out: list[str]) -> None:
    """The cases in which the model deviated from the scenario, apart from the defects (none: no section)."""
    deviations = report_deviations(data)
    if not deviations:
        return
    out += [
        "## Model deviations",
        "",
        f"The model did not do what the scenario asks in {quantity(len(deviations), 'case')} (text instead of a "
        "call, another tool, other arguments): the model's choice, not a defect of the server, and not a failure. "
        "What the server sent was still judged for its shape; a case whose answer was also malformed fails, and "
        "its defect is listed above.",
        "",
        _row(["column", "scenario", "mode", "status", "what the model did"]),
        _row(["---"] * 5),
    ]
    for deviation in deviations:
        cells = [
            _code(deviation["adapter"]),
            _code(deviation["scenario"]),
            MODE_LABELS.get(deviation["mode"], deviation["mode"]),
            _status(deviation["status"]),
            _text(deviation["message"]),
        ]
        out.append(_row(cells))
    out.append("")


def _summary(data: Report, out: list[str]) -> None:
    summary = data["summary"]
    out += [
        "## Summary",
        "",
        _row(["status", "cases"]),
        _row(["---", "---:"]),
    ]
    out += [_row([status, str(summary["statuses"][status])]) for status in STATUS_ORDER]
    out.append("")
    heads = ["adapter", "cases", *STATUS_ORDER]
    out += ["### By adapter", "", _row(heads), _row(["---"] + ["---:"] * (len(heads) - 1))]
    for adapter, tally in summary["by_adapter"].items():
        out.append(_row([_code(adapter), str(tally["total"])] + [str(tally["statuses"][s]) for s in STATUS_ORDER]))
    out.append("")
    if summary["by_check_family"]:
        heads = ["check family", "checks", *STATUS_ORDER]
        out += ["### By check family", "", _row(heads), _row(["---"] + ["---:"] * (len(heads) - 1))]
        for family, tally in summary["by_check_family"].items():
            out.append(_row([_code(family), str(tally["total"])] + [str(tally["statuses"][s]) for s in STATUS_ORDER]))
        out.append("")


def _suite_lines(data: Report) -> list[str]:
    """The suite's fingerprint, what was selected (a shard, a model) and the model each wire asked for."""
    suite = data.get("suite")
    selection = data.get("selection")
    parts: list[str] = []
    if suite:
        parts.append(
            f"Suite fingerprint {_code(suite['fingerprint'][:16])} (checks v{suite['check_version']}, "
            f"{suite['scenarios']} scenarios)"
        )
    if selection and selection.get("shard"):
        parts.append(f"shard {_code(str(selection['shard']))}")
    if selection and selection.get("merged"):
        parts.append(f"merged from shards {', '.join(_code(str(k)) for k in selection['merged'])}")
    models = [f"{_code(a['name'])} {_code(str(a['model']))}" for a in data["adapters"] if a.get("model")]
    if models:
        parts.append("model asked for: " + ", ".join(models))
    note = selection.get("note") if selection else None
    lines = [" · ".join(parts), ""] if parts else []
    return lines + ([f"**Note:** {note}", ""] if note else [])


def _mode_cell(cell: ModeCell | None) -> str:
    return _NOT_RUN if cell is None else _status(cell["status"])


def _matrix(data: Report, out: list[str]) -> None:
    matrix = data["matrix"]
    out += [
        "## Matrix",
        "",
        f"Each cell: {' / '.join(MODE_LABELS[m] for m in matrix['modes'])}; {_NOT_RUN} = not run.",
        "",
    ]
    if not matrix["rows"] or not matrix["adapters"]:
        out += ["No cases were run.", ""]
        return
    out.append(_row(["scenario", *(_code(a) for a in matrix["adapters"])]))
    out.append(_row(["---"] * (len(matrix["adapters"]) + 1)))
    for row in matrix["rows"]:
        cells = [" / ".join(_mode_cell(cell["modes"][m]) for m in matrix["modes"]) for cell in row["cells"]]
        out.append(_row([_code(row["scenario"]), *cells]))
    out.append("")


def _cases(data: Report, out: list[str], reruns: Mapping[str, str]) -> None:
    failing = [case for case in data["cases"] if case["status"] != "pass"]
    out += ["## Cases that did not pass", ""]
    if not failing:
        out += ["None: every case passed.", ""]
        return
    for case in failing:
        _case(case, out)
        rerun = reruns.get(f"{case['adapter']}::{case['scenario']}::{case['mode']}")
        if rerun and case["status"] in ("fail", "error", "stale"):
            out += ["Rerun this case alone:", "", "```sh", printable(rerun), "```", ""]


def _case(case: CaseData, out: list[str]) -> None:
    out += [f"### {_code(case['id'])}: {case['status']}", ""]
    facts = [
        f"adapter {_code(case['adapter'])}",
        f"scenario {_code(case['scenario'])}",
        f"mode {MODE_LABELS[case['mode']]}",
    ]
    if case["cassette"]:
        facts.append(f"cassette {_code(case['cassette'])}")
    out += [" · ".join(facts), ""]
    if case["message"]:
        out += [_text(case["message"]), ""]
    checks = [check for check in case["checks"] if check["status"] != "pass"]
    if checks:
        out += [_row(["check", "status", "reason"]), _row(["---", "---", "---"])]
        out += [_row([_code(c["check"]), c["status"], _text(c["message"])]) for c in checks]
        out.append("")
    findings = [finding for check in checks for finding in check["findings"]]
    if findings:
        out += [_row(["check id", "path", "expected", "actual", "message"]), _row(["---"] * 5)]
        for finding in findings:
            path = _code(finding["path"]) if finding["path"] else ""
            if finding["turn"] is not None:
                path = f"{path} (turn {finding['turn']})".lstrip()
            out.append(
                _row(
                    [
                        _code(finding["check"]),
                        path,
                        _code(compact_json(finding["expected"])),
                        _code(compact_json(finding["actual"])),
                        _text(finding["message"]),
                    ]
                )
            )
        out.append("")
    if case["traceback"]:
        body = printable(case["traceback"].rstrip("\n"))
        fence = "`" * max(3, max((len(run) + 1 for run in re.findall("`+", body)), default=0))
        out += ["<details><summary>Traceback</summary>", "", fence + "text", body, fence, "", "</details>", ""]


def _provenance(data: Report, out: list[str]) -> None:
    if not data["provenance"]:
        return
    out += ["## Provenance", "", _row(["cassette", "provenance", "cases"]), _row(["---", "---", "---"])]
    for entry in data["provenance"]:
        block = entry["provenance"]
        facts = "unknown" if block is None else "; ".join(_fact(k, v) for k, v in block.items())
        out.append(_row([_code(entry["cassette"]), facts, ", ".join(_code(c) for c in entry["cases"])]))
    out.append("")


def _commands(data: Report, out: list[str]) -> None:
    """The MCP server commands the run started (``conformance.mcp_bridge.trust``)."""
    if not data.get("commands"):
        return
    out += ["## Commands started", "", _row(["scenario", "command", "cwd", "env", "trust"]), _row(["---"] * 5)]
    for c in data.get("commands", []):
        trusted = "bundled" if c["bundled"] else "allowed (--allow-commands)"
        cells = [
            _code(c["scenario"]),
            _code(shlex.join(c["argv"])) if not c.get("url") else _served(c),
            _code(c["cwd"]) if c["cwd"] else "",
            _text(", ".join(c["env_keys"])),
        ]
        out.append(_row([*cells, trusted]))
    out.append("")


def _served(c: Any) -> str:
    """An MCP server over Streamable HTTP: its URL, then the command that served it (if any)."""
    started = f" started by {_code(shlex.join(c['argv']))}" if c["argv"] else ""
    return f"{_code(c['url'])} (Streamable HTTP){started}"


def _fact(key: str, value: Any) -> str:
    return f"{_text(key)}: {_code(value if isinstance(value, str) else compact_json(value))}"
