"""The HTML report (pure): one self-contained file, readable offline.

Inline CSS only, no script, no external asset; a Content-Security-Policy ``default-src 'none'``
makes the browser refuse any fetch. The scenario x adapter matrix has one coloured cell per mode,
each linking to its case. Every case has a ``<details>``: the ones that did not pass list their
checks, the findings diff table, the traceback and the wire exchanges; passing ones are grouped in
one ``<details>``. The anchor sits inside the ``<details>`` so that following a link opens it
(browsers expand a closed ``<details>`` that holds the fragment's target). Every text from the run
goes through ``html.escape``; the header carries the suite version and no date.
"""

from __future__ import annotations

import html
import re
import shlex
from collections.abc import Mapping
from typing import Any

from conformance.reporting._data import MAX_DEPTH, CaseData, CheckData, ModeCell, Report, ScenarioData, as_report
from conformance.reporting._format import (
    MODE_LABELS,
    compact_json,
    parse_json_text,
    pretty_body,
    pretty_json,
    printable,
)
from conformance.verdicts import STATUS_ORDER, RunResult

__all__ = ["STATUS_COLOURS", "render_html"]

STATUS_COLOURS: dict[str, tuple[str, str]] = {
    "pass": ("#aceebb", "#0f4d24"),
    "fail": ("#cf222e", "#ffffff"),
    "error": ("#82071e", "#ffffff"),
    "unsupported": ("#6e7781", "#ffffff"),
    "xfail": ("#f0b72f", "#3d2a00"),
    "stale": ("#8250df", "#ffffff"),
}
"""Status -> (background, text) of a verdict cell; every pair has a contrast ratio of 4.5 or more."""

_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
_SCENARIO_PX, _MODE_PX = 264, 96  # matrix column widths (the CSS says the same)
_LONG_VALUE = 60  # a value longer than this as one line of JSON is shown indented

_CSS = """
:root { color-scheme: light; --line: #d0d7de; --muted: #57606a; --soft: #f6f8fa; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
       color: #1f2328; margin: 0; padding: 20px 28px 40px; background: #fff; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 28px 0 10px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
h3 { font-size: 14px; margin: 14px 0 6px; }
code, pre, .mono { font-family: ui-monospace, "SFMono-Regular", "DejaVu Sans Mono", Menlo, Consolas, monospace;
                   font-size: 12.5px; }
pre { background: var(--soft); border: 1px solid var(--line); border-radius: 6px; padding: 8px 10px; margin: 4px 0;
      overflow-x: auto; white-space: pre-wrap; word-break: break-word; max-height: 480px; }
td pre { margin: 0; padding: 3px 6px; max-height: 240px; }
.meta { color: var(--muted); margin: 0; }
.meta b { color: #1f2328; }
table { border-collapse: collapse; }
th, td { border: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top; }
thead th { background: var(--soft); font-weight: 600; }
.num { text-align: right; font-variant-numeric: tabular-nums; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-weight: 600; font-size: 12px; }
.chips { display: flex; flex-wrap: wrap; gap: 8px; margin: 10px 0 4px; }
.chip { display: inline-flex; align-items: center; gap: 8px; border: 1px solid var(--line); border-radius: 6px;
        padding: 4px 10px 4px 4px; }
.chip b { font-size: 16px; font-variant-numeric: tabular-nums; }
table.matrix { table-layout: fixed; }
table.matrix th, table.matrix td { padding: 0; }
table.matrix col.scenario { width: 264px; }
table.matrix col.mode { width: 96px; }
table.matrix thead th { padding: 5px 10px; text-align: center; white-space: nowrap;
                        position: sticky; top: 0; z-index: 1; }
table.matrix thead tr.modes th { top: 31px; }
table.matrix thead th.corner { text-align: left; vertical-align: bottom; }
table.matrix thead tr.modes th { font-weight: 500; color: var(--muted); font-size: 12px; padding: 2px 8px; }
table.matrix th.adapter { border-left: 2px solid #8c959f; }
table.matrix th.scenario { padding: 6px 10px; background: #fff; font-weight: normal; overflow-wrap: anywhere; }
table.matrix th.scenario .id { font-weight: 600; }
table.matrix th.scenario .behavior { color: var(--muted); font-size: 12px; overflow: hidden;
                                     display: -webkit-box; -webkit-line-clamp: 2; -webkit-box-orient: vertical; }
table.matrix td { height: 44px; text-align: center; vertical-align: middle; font-size: 12px; }
table.matrix td.first { border-left: 2px solid #8c959f; }
table.matrix td a { display: flex; align-items: center; justify-content: center; height: 100%; min-height: 44px;
                    padding: 4px 2px; color: inherit; text-decoration: none; font-weight: 600; }
table.matrix td a:hover, table.matrix td a:focus { outline: 3px solid #0969da; outline-offset: -3px; }
table.matrix td.none { background: repeating-linear-gradient(45deg, #fff, #fff 5px, var(--soft) 5px, var(--soft) 10px);
                       color: #8c959f; }
details.case { border: 1px solid var(--line); border-radius: 6px; margin: 8px 0; }
details.case > summary { cursor: pointer; padding: 7px 10px; list-style-position: inside; }
details.case > summary .mono { font-weight: 600; margin: 0 6px; }
details.case > summary .why { color: var(--muted); }
details.case[open] > summary { border-bottom: 1px solid var(--line); background: var(--soft); }
.case-body { padding: 6px 12px 12px; scroll-margin-top: 48px; }
.case-body table { margin: 4px 0 8px; }
details.exchange { margin: 6px 0; }
details.exchange > summary { cursor: pointer; }
ul.passing { columns: 2; margin: 6px 0; padding: 6px 12px 10px 28px; }
ul.passing li { scroll-margin-top: 48px; }
:target { background: #fff8c5; }
dl.prov { display: grid; grid-template-columns: max-content 1fr; gap: 0 12px; margin: 0; }
dl.prov dt { color: var(--muted); }
dl.prov dd { margin: 0; }
p.incomplete { border: 2px solid #82071e; background: #ffebe9; color: #82071e; padding: 8px 12px;
               border-radius: 6px; }
footer { margin-top: 32px; color: var(--muted); font-size: 12px; }
"""


def render_html(report: RunResult | Report | Mapping[str, Any]) -> str:
    """The report as one self-contained HTML page (``report.html``)."""
    data = as_report(report)
    anchors = _anchors([case["id"] for case in data["cases"]])
    scenarios = {s["id"]: s for s in data["scenarios"]}
    title = f"Conformance report: {data['suite_version']}"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title>",
        f"<style>{_CSS}{_status_css()}</style>",
        "</head>",
        "<body>",
        _header(data),
        _matrix(data, anchors, scenarios),
        _tallies(data),
        _problems(data),
        _cases(data, anchors, scenarios),
        _provenance(data, anchors),
        _commands(data),
        f"<footer>Generated by conformance {_e(data['suite_version'])} (report format "
        f"{data['report_format']}).</footer>",
        "</body>",
        "</html>",
    ]
    return "\n".join(p for p in parts if p) + "\n"


# -- helpers -----------------------------------------------------------------------------------------------


def _e(value: object) -> str:
    """Escaped text for element content and quoted attribute values."""
    return html.escape(printable(str(value)), quote=True)


def _status_css() -> str:
    rules = [f".st-{status} {{ background: {bg}; color: {fg}; }}" for status, (bg, fg) in STATUS_COLOURS.items()]
    return "\n".join(rules) + "\n"


def _badge(status: str) -> str:
    return f'<span class="badge st-{_e(status)}">{_e(status)}</span>'


def _anchors(case_ids: list[str]) -> dict[str, str]:
    """Case id -> a unique HTML id made of safe characters (deterministic)."""
    anchors: dict[str, str] = {}
    taken: set[str] = set()
    for case_id in case_ids:
        base = "case-" + (re.sub(r"[^A-Za-z0-9_.-]+", "-", case_id).strip("-") or "x")
        anchor, n = base, 1
        while anchor in taken:
            n += 1
            anchor = f"{base}-{n}"
        taken.add(anchor)
        anchors[case_id] = anchor
    return anchors


def _value(value: Any) -> str:
    text = compact_json(value)
    if len(text) > _LONG_VALUE and isinstance(value, dict | list):
        text = pretty_json(value)
    return f"<pre>{_e(text)}</pre>"


# -- sections ----------------------------------------------------------------------------------------------


def _header(data: Report) -> str:
    summary = data["summary"]
    chips = "".join(
        f'<span class="chip">{_badge(status)}<b>{summary["statuses"][status]}</b></span>' for status in STATUS_ORDER
    )
    incomplete = data.get("incomplete")
    banner = f'<p class="incomplete" role="alert"><b>Incomplete report</b>: {_e(incomplete)}</p>' if incomplete else ""
    return (
        "<header>"
        "<h1>Conformance report</h1>"
        f"{banner}"
        f'<p class="meta">suite <b class="mono">{_e(data["suite_version"])}</b> · verdict {_badge(summary["verdict"])}'
        f" · <b>{summary['cases']}</b> cases · <b>{len(data['adapters'])}</b> adapters"
        f" · <b>{len(data['scenarios'])}</b> scenarios · {summary['duration']:.2f} s</p>"
        f'<div class="chips" id="summary">{chips}</div>'
        "</header>"
    )


def _mode_td(cell: ModeCell | None, mode: str, first: bool, anchors: dict[str, str]) -> str:
    edge = " first" if first else ""
    label = MODE_LABELS.get(mode, mode)
    if cell is None:
        return f'<td class="none{edge}" title="{_e(label)}: not run">—</td>'
    status = cell["status"]
    return (
        f'<td class="st-{_e(status)}{edge}" title="{_e(cell["case"])}: {_e(status)}">'
        f'<a href="#{_e(anchors[cell["case"]])}">{_e(status)}</a></td>'
    )


def _matrix(data: Report, anchors: dict[str, str], scenarios: dict[str, ScenarioData]) -> str:
    matrix = data["matrix"]
    if not matrix["rows"] or not matrix["adapters"]:
        return '<section id="matrix"><h2>Matrix</h2><p>No cases were run.</p></section>'
    modes = matrix["modes"]
    columns = len(modes) * len(matrix["adapters"])
    mode_cols = '<col class="mode">' * columns
    top = "".join(f'<th class="adapter" colspan="{len(modes)}">{_e(a)}</th>' for a in matrix["adapters"])
    sub = "".join(
        f'<th class="{"adapter" if i == 0 else ""}">{_e(MODE_LABELS.get(m, m))}</th>'
        for _ in matrix["adapters"]
        for i, m in enumerate(modes)
    )
    rows = []
    for row in matrix["rows"]:
        info = scenarios.get(row["scenario"])
        text = info["behavior"] if info else ""
        behavior = f'<span class="behavior" title="{_e(text)}">{_e(text)}</span>' if text else ""
        scenario_id = "/<wbr>".join(_e(part) for part in row["scenario"].split("/"))  # break long ids after a /
        cells = "".join(
            _mode_td(cell["modes"].get(m), m, i == 0, anchors) for cell in row["cells"] for i, m in enumerate(modes)
        )
        rows.append(
            f'<tr><th class="scenario" scope="row"><span class="id mono">{scenario_id}</span>{behavior}</th>'
            f"{cells}</tr>"
        )
    return (
        '<section id="matrix"><h2>Scenario × adapter</h2>'
        f'<table class="matrix" style="width: {_SCENARIO_PX + _MODE_PX * columns}px"><colgroup><col class="scenario">'
        f"{mode_cols}"
        "</colgroup><thead>"
        f'<tr><th class="corner" rowspan="2">scenario</th>{top}</tr><tr class="modes">{sub}</tr>'
        f"</thead><tbody>{''.join(rows)}</tbody></table></section>"
    )


def _tally_table(title: str, first: str, unit: str, tallies: Mapping[str, Any]) -> str:
    if not tallies:
        return ""
    head = "".join(f"<th>{_badge(s)}</th>" for s in STATUS_ORDER)
    body = "".join(
        f'<tr><th class="mono">{_e(name)}</th><td class="num">{tally["total"]}</td>'
        + "".join(f'<td class="num">{tally["statuses"][s]}</td>' for s in STATUS_ORDER)
        + "</tr>"
        for name, tally in tallies.items()
    )
    return (
        f"<h3>{_e(title)}</h3><table><thead><tr><th>{_e(first)}</th><th>{_e(unit)}</th>{head}</tr></thead>"
        f"<tbody>{body}</tbody></table>"
    )


def _tallies(data: Report) -> str:
    summary = data["summary"]
    return (
        '<section id="counts"><h2>Counts</h2>'
        + _tally_table("By adapter", "adapter", "cases", summary["by_adapter"])
        + _tally_table("By mode", "mode", "cases", {MODE_LABELS[m]: t for m, t in summary["by_mode"].items()})
        + _tally_table("By check family", "check family", "checks", summary["by_check_family"])
        + "</section>"
    )


def _problems(data: Report) -> str:
    if not data["problems"]:
        return ""
    items = "".join(f"<li><pre>{_e(problem)}</pre></li>" for problem in data["problems"])
    return f'<section id="problems"><h2>Problems</h2><ul>{items}</ul></section>'


def _checks_table(checks: list[CheckData]) -> str:
    rows = "".join(
        f'<tr><td class="mono">{_e(c["check"])}</td><td>{_badge(c["status"])}</td><td>{_e(c["message"])}</td></tr>'
        for c in checks
    )
    return f"<table><thead><tr><th>check</th><th>status</th><th>reason</th></tr></thead><tbody>{rows}</tbody></table>"


def _findings_table(checks: list[CheckData]) -> str:
    rows = []
    for check in checks:
        for f in check["findings"]:
            turn = f' <span class="meta">(turn {_e(f["turn"])})</span>' if f["turn"] is not None else ""
            rows.append(
                f'<tr><td class="mono">{_e(f["check"])}</td><td class="mono">{_e(f["path"])}{turn}</td>'
                f"<td>{_value(f['expected'])}</td><td>{_value(f['actual'])}</td><td>{_e(f['message'])}</td></tr>"
            )
    if not rows:
        return ""
    return (
        "<h3>Findings</h3><table><thead><tr><th>check id</th><th>path</th><th>expected</th><th>actual</th>"
        f"<th>message</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


_TARGET_KEYS = ("path", "url", "uri")


def _exchange(index: int, exchange: Mapping[str, Any]) -> str:
    """One wire exchange: method, target and status in the summary; short facts on a line; bodies indented.

    Two shapes are read: the runner's (``method``, ``url``, ``request`` body, ``status``, ``response``)
    and one whose ``request`` holds ``method``/``path``/``headers``/``body``.
    """
    request = exchange.get("request")
    top = any(k in exchange for k in ("method", *_TARGET_KEYS))
    where: Mapping[str, Any] = exchange if top else request if isinstance(request, Mapping) else {}
    target = next((str(where[k]) for k in _TARGET_KEYS if where.get(k)), "")
    line = f"Exchange {index}: {where.get('method', '')} {target}".strip().rstrip(":")
    if exchange.get("status") is not None:
        line += f" → {exchange['status']}"
    facts, blocks = [], []
    for key, value in exchange.items():
        if value is None or key == "status" or (top and key in ("method", *_TARGET_KEYS)):
            continue
        if isinstance(value, bool | int | float) or (
            key not in ("request", "response") and isinstance(value, str) and len(value) <= 120 and "\n" not in value
        ):
            facts.append(f'{_e(key)}: <span class="mono">{_e(compact_json(value))}</span>')
        else:
            blocks.append(f"<h3>{_e(key)}</h3><pre>{_e(pretty_body(_bodies(value)))}</pre>")
    fact_line = f'<p class="meta">{" · ".join(facts)}</p>' if facts else ""
    return f'<details class="exchange"><summary>{_e(line)}</summary>{fact_line}{"".join(blocks)}</details>'


def _bodies(value: Any, depth: int = 0) -> Any:
    """A request or response with JSON-in-a-string bodies parsed, so the page shows them indented
    (mappings below ``MAX_DEPTH`` levels are left as they are)."""
    if isinstance(value, Mapping) and depth < MAX_DEPTH:
        return {k: _bodies(v, depth + 1) for k, v in value.items()}
    if isinstance(value, str):
        ok, parsed = parse_json_text(value)
        return parsed if ok else value
    return value


def _case(case: CaseData, anchor: str, scenario: ScenarioData | None) -> str:
    why = case["message"] or next((c["message"] for c in case["checks"] if c["status"] == case["status"]), "")
    summary = (
        f'<summary>{_badge(case["status"])}<span class="mono">{_e(case["id"])}</span>'
        f'<span class="why">{_e(why)}</span></summary>'
    )
    facts = [
        f'adapter <b class="mono">{_e(case["adapter"])}</b>',
        f'scenario <b class="mono">{_e(case["scenario"])}</b>',
        f"mode <b>{_e(MODE_LABELS.get(case['mode'], case['mode']))}</b>",
        f"{case['duration']:.3f} s",
    ]
    if case["cassette"]:
        facts.append(f'cassette <span class="mono">{_e(case["cassette"])}</span>')
    body = [f'<div class="case-body" id="{_e(anchor)}">', f'<p class="meta">{" · ".join(facts)}</p>']
    if scenario and scenario["behavior"]:
        source = f' <span class="meta">(source: {_e(scenario["source"])})</span>' if scenario["source"] else ""
        body.append(f"<p>{_e(scenario['behavior'])}{source}</p>")
    if case["message"]:
        body.append(f"<pre>{_e(case['message'])}</pre>")
    if case["checks"]:
        body.append(_checks_table(case["checks"]))
    body.append(_findings_table([c for c in case["checks"] if c["status"] != "pass"]))
    if case["traceback"]:
        body.append(f"<h3>Traceback</h3><pre>{_e(case['traceback'])}</pre>")
    if case["exchanges"]:
        body.append("<h3>Wire exchanges</h3>")
        body.extend(_exchange(i, exchange) for i, exchange in enumerate(case["exchanges"], 1))
    body.append("</div>")
    return f'<details class="case">{summary}{"".join(body)}</details>'


def _cases(data: Report, anchors: dict[str, str], scenarios: dict[str, ScenarioData]) -> str:
    failing = [c for c in data["cases"] if c["status"] != "pass"]
    passing = [c for c in data["cases"] if c["status"] == "pass"]
    parts = ['<section id="cases"><h2>Cases</h2>']
    if not data["cases"]:
        parts.append("<p>No cases were run.</p>")
    parts.extend(_case(c, anchors[c["id"]], scenarios.get(c["scenario"])) for c in failing)
    if passing:
        items = "".join(
            f'<li id="{_e(anchors[c["id"]])}"><span class="mono">{_e(c["id"])}</span> '
            f'<span class="meta">({len(c["checks"])} checks: '
            f"{_e(', '.join(ch['check'] for ch in c['checks']) or 'none')})</span></li>"
            for c in passing
        )
        parts.append(
            f'<details class="case"><summary>{_badge("pass")}<span class="mono">{len(passing)} passing cases</span>'
            f'</summary><ul class="passing">{items}</ul></details>'
        )
    parts.append("</section>")
    return "".join(parts)


def _commands(data: Report) -> str:
    """The MCP server commands the run started (``conformance.mcp_bridge.trust``)."""
    if not data.get("commands"):
        return ""
    rows = "".join(
        f'<tr><td class="mono">{_e(c["scenario"])}</td><td class="mono">{_e(shlex.join(c["argv"]))}</td>'
        f'<td class="mono">{_e(c["cwd"] or "")}</td><td>{_e(", ".join(c["env_keys"]))}</td>'
        f"<td>{'bundled' if c['bundled'] else 'allowed (--allow-commands)'}</td></tr>"
        for c in data.get("commands", [])
    )
    return (
        '<section id="commands"><h2>Commands started</h2><table><thead><tr><th>scenario</th><th>command</th>'
        f"<th>cwd</th><th>env</th><th>trust</th></tr></thead><tbody>{rows}</tbody></table></section>"
    )


def _provenance(data: Report, anchors: dict[str, str]) -> str:
    if not data["provenance"]:
        return ""
    rows = []
    for entry in data["provenance"]:
        block = entry["provenance"]
        if block is None:
            facts = '<span class="meta">unknown (no provenance block)</span>'
        else:
            facts = '<dl class="prov">' + "".join(
                f'<dt>{_e(k)}</dt><dd class="mono">{_e(v if isinstance(v, str) else compact_json(v))}</dd>'
                for k, v in block.items()
            )
            facts += "</dl>"
        used = ", ".join(
            f'<a class="mono" href="#{_e(anchors[c])}">{_e(c)}</a>' if c in anchors else _e(c) for c in entry["cases"]
        )
        rows.append(f'<tr><td class="mono">{_e(entry["cassette"])}</td><td>{facts}</td><td>{used}</td></tr>')
    return (
        '<section id="provenance"><h2>Provenance</h2><table><thead><tr><th>cassette</th><th>provenance</th>'
        f"<th>cases</th></tr></thead><tbody>{''.join(rows)}</tbody></table></section>"
    )
