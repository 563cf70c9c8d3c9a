"""The HTML report (pure): one self-contained file, readable offline.

Inline CSS only, no script, no external asset; a Content-Security-Policy ``default-src 'none'``
makes the browser refuse any fetch. The page opens with the run's outcome in words (``passed``
when no case failed, errored or is stale: unsupported and xfail cases do not fail a run, as the
exit code says) in a compact header, then the defects (``conformance.reporting._defects``: each
once, worst first, with its severity, where it appears, what to do, why, and its evidence linking
to its case), so that both fit the first screen (1280 x 900) above the matrix; past
``_MANY_DEFECTS`` only the worst ``_DEFECT_BLOCKS`` are blocks, the rest one linked line each.
The model deviations follow, apart from the defects (``conformance.reporting._deviations``: a
table of the cases in which the model behind a live server did not do what the scenario asks,
each linked to its case; none: no section).
Then one summary row per adapter, the filters, the scenario x adapter matrix (one coloured cell
per mode, each linking to its case) in a box whose header row and scenario column stay in view
while it scrolls, and the cases. Filtering by verdict and by adapter is pure
CSS (radio buttons and checkboxes read by ``:has()`` rules), so the policy stays ``default-src
'none'`` with no script at all; a browser without ``:has()`` shows everything. Every case that did
not pass has a ``<details>`` whose closed summary line already shows its first finding; open, it
shows each finding with the expected value (what the scenario or recording says) and the actual
one (what the adapter produced) side by side, then its checks, the traceback and the wire exchanges.
Passing cases are one list in one ``<details>``. The anchor sits inside the ``<details>`` so that
following a link opens it (browsers expand a closed ``<details>`` that holds the fragment's
target). Every text from the run goes through ``html.escape``; of an ``explain`` text (Markdown
from the caller's own table) only code spans and http(s) links become markup (a link is followed,
never fetched). The header carries the suite version and no date.
"""

from __future__ import annotations

import html
import re
import shlex
from collections.abc import Callable, Mapping
from typing import Any

from conformance.reporting._data import (
    MAX_DEPTH,
    CaseData,
    CheckData,
    FindingData,
    ModeCell,
    Report,
    ScenarioData,
    as_report,
    report_defects,
    report_deviations,
)
from conformance.reporting._defects import SEVERITIES, SEVERITY_WORDS, DefectData, severity_counts
from conformance.reporting._format import (
    FAILING_STATUSES,
    MODE_LABELS,
    compact_json,
    defect_where,
    parse_json_text,
    pretty_body,
    pretty_json,
    printable,
    quantity,
    run_outcome,
)
from conformance.verdicts import STATUS_ORDER, RunResult

__all__ = ["OUTCOME_COLOURS", "SEVERITY_COLOURS", "STATUS_COLOURS", "render_html"]

STATUS_COLOURS: dict[str, tuple[str, str]] = {
    "pass": ("#aceebb", "#0f4d24"),
    "fail": ("#cf222e", "#ffffff"),
    "error": ("#82071e", "#ffffff"),
    "unsupported": ("#6e7781", "#ffffff"),
    "xfail": ("#f0b72f", "#3d2a00"),
    "left": ("#0969da", "#ffffff"),
    "deviated": ("#1b7c83", "#ffffff"),
    "stale": ("#8250df", "#ffffff"),
}
"""Status -> (background, text) of a verdict cell; every pair has a contrast ratio of 4.5 or more
(``deviated``: teal, apart from the blue of ``left`` and the red of the defects)."""

OUTCOME_COLOURS: dict[str, tuple[str, str]] = {
    "passed": ("#1a7f37", "#ffffff"),
    "failed": ("#cf222e", "#ffffff"),
    "incomplete": ("#82071e", "#ffffff"),
}
"""Outcome of a run or an adapter (``run_outcome``) -> (background, text) of its headline."""

SEVERITY_COLOURS: dict[str, tuple[str, str]] = {
    "loses_data": ("#82071e", "#ffffff"),
    "changes_meaning": ("#cf222e", "#ffffff"),
    "rejected": ("#953800", "#ffffff"),
    "left": ("#0969da", "#ffffff"),
    "note": ("#6e7781", "#ffffff"),
}
"""Defect severity (``SEVERITIES``) -> (background, text) of its badge; the background also edges its block."""

SHORT_LABELS = {"unsupported": "unsup.", "deviated": "dev."}
"""A matrix cell's text when the status is too long for the cell (its title has the whole word)."""

_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
_LONG_VALUE = 60  # a value longer than this as one line of JSON is shown indented
_WHY_CHARS = 240  # a closed case's reason line is cut here (the case body has the whole text)
_MANY_DEFECTS = 30  # from this many defects on, only the first _DEFECT_BLOCKS are shown as blocks
_DEFECT_BLOCKS = 10

_CSS = """
:root { color-scheme: light; --line: #d0d7de; --muted: #57606a; --soft: #f6f8fa; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
       color: #1f2328; margin: 0; padding: 16px 24px 40px; background: #fff; }
h1 { font-size: 22px; margin: 0 0 8px; }
h2 { font-size: 17px; margin: 24px 0 10px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
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
.zero { color: #afb8c1; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-weight: 600; font-size: 12px; }
.headline { display: flex; align-items: center; gap: 6px 12px; flex-wrap: wrap; margin: 4px 0 6px; }
.headline .outcome { font-size: 20px; font-weight: 700; padding: 2px 14px; border-radius: 6px;
                     text-transform: uppercase; letter-spacing: .04em; }
.headline .counts { font-size: 15px; }
.chips { display: flex; flex-wrap: wrap; gap: 6px; margin: 0 0 0 auto; }
.chip { display: inline-flex; align-items: center; gap: 6px; border: 1px solid var(--line); border-radius: 6px;
        padding: 2px 8px 2px 2px; }
.chip b { font-size: 14px; font-variant-numeric: tabular-nums; }
table.adapters td.outcome { text-align: center; }
table.adapters .bar { display: flex; width: 220px; height: 12px; border-radius: 3px; overflow: hidden;
                      background: var(--soft); margin-top: 4px; }
table.adapters .bar span { display: block; height: 100%; }
.filters { position: sticky; top: 0; z-index: 5; background: #fff; border-bottom: 1px solid var(--line);
           padding: 6px 0; margin: 16px 0 0; display: flex; flex-direction: column; gap: 4px; }
.filters .group { display: flex; flex-wrap: wrap; align-items: center; gap: 4px 6px; }
.filters .group > b { min-width: 64px; color: var(--muted); font-weight: 600; }
.filters input { position: absolute; opacity: 0; width: 1px; height: 1px; margin: 0; }
.filters label { border: 1px solid var(--line); border-radius: 14px; padding: 1px 10px; cursor: pointer;
                 user-select: none; font-size: 13px; background: #fff; }
.filters input:checked + label { background: #0969da; border-color: #0969da; color: #fff; }
.filters input:focus-visible + label { outline: 3px solid #0969da; outline-offset: 1px; }
.filters .hint { color: var(--muted); font-size: 12px; }
.matrix-box { overflow: auto; max-height: calc(100vh - 110px); border: 1px solid var(--line); border-radius: 6px;
              max-width: 100%; width: max-content; }
table.matrix { border-collapse: separate; border-spacing: 0; }
table.matrix th, table.matrix td { padding: 0; border: 0; border-right: 1px solid var(--line);
                                   border-bottom: 1px solid var(--line); }
table.matrix thead { position: sticky; top: 0; z-index: 3; }
table.matrix thead th { padding: 4px 6px; text-align: center; white-space: nowrap; background: var(--soft); }
table.matrix thead th.corner { text-align: left; vertical-align: bottom; position: sticky; left: 0; z-index: 4; }
table.matrix thead th.adapter { white-space: normal; overflow-wrap: break-word; font-size: 13px; }
table.matrix thead tr.modes th { font-weight: 500; color: var(--muted); font-size: 11px; padding: 1px 4px; }
table.matrix .first { border-left: 2px solid #8c959f; }
table.matrix th.scenario { position: sticky; left: 0; z-index: 2; width: 232px; min-width: 232px; max-width: 232px;
                           padding: 4px 8px; background: #fff; font-weight: normal; overflow-wrap: anywhere;
                           box-shadow: 1px 0 0 var(--line); }
table.matrix th.scenario .id { font-weight: 600; font-size: 12px; }
table.matrix th.scenario .behavior { color: var(--muted); font-size: 11.5px; overflow: hidden; line-height: 1.3;
                                     display: -webkit-box; -webkit-line-clamp: 2; -webkit-box-orient: vertical; }
table.matrix td { width: 60px; min-width: 60px; max-width: 60px; height: 40px; text-align: center;
                  vertical-align: middle; font-size: 12px; }
table.matrix td a { display: flex; align-items: center; justify-content: center; height: 100%; min-height: 40px;
                    padding: 2px; color: inherit; text-decoration: none; font-weight: 600; }
table.matrix td a:hover, table.matrix td a:focus { outline: 3px solid #0969da; outline-offset: -3px; }
table.matrix td.none { background: repeating-linear-gradient(45deg, #fff, #fff 5px, var(--soft) 5px, var(--soft) 10px);
                       color: #8c959f; }
details.case { border: 1px solid var(--line); border-radius: 6px; margin: 6px 0; }
details.case > summary { cursor: pointer; padding: 6px 10px; list-style-position: inside; }
details.case > summary .mono { font-weight: 600; margin: 0 6px; }
details.case > summary .why { display: block; color: #3d444d; margin: 2px 0 0 22px; white-space: nowrap;
                              overflow: hidden; text-overflow: ellipsis; font-size: 13px; }
details.case > summary .why code { font-size: 12px; color: var(--muted); }
details.case[open] > summary { border-bottom: 1px solid var(--line); background: var(--soft); }
details.case[open] > summary .why { white-space: normal; }
.case-body { padding: 6px 12px 12px; scroll-margin-top: 96px; }
.case-body table { margin: 4px 0 8px; }
p.rerun code { background: var(--soft); padding: 1px 6px; border-radius: 4px; user-select: all; }
.finding { border-left: 3px solid #cf222e; padding: 2px 0 2px 10px; margin: 8px 0 12px; }
.finding > p { margin: 0 0 4px; }
.sides { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 10px; }
.sides h4 { margin: 0; font-size: 12px; font-weight: 600; }
.sides h4 span { font-weight: normal; color: var(--muted); }
details.exchange { margin: 6px 0; }
details.exchange > summary { cursor: pointer; }
ul.passing { columns: 2; margin: 6px 0; padding: 6px 12px 10px 28px; }
ul.passing li { scroll-margin-top: 96px; }
:target { background: #fff8c5; }
dl.prov { display: grid; grid-template-columns: max-content 1fr; gap: 0 12px; margin: 0; }
dl.prov dt { color: var(--muted); }
dl.prov dd { margin: 0; }
p.incomplete { border: 2px solid #82071e; background: #ffebe9; color: #82071e; padding: 8px 12px;
               border-radius: 6px; }
footer { margin-top: 32px; color: var(--muted); font-size: 12px; }
#defects > h2 { margin-top: 14px; }
#defects .tally { margin: 0 0 8px; }
#defects .tally .badge { margin-right: 4px; }
ol.defects { list-style: none; margin: 0; padding: 0; }
li.defect { border: 1px solid var(--line); border-left: 4px solid var(--severity, #cf222e); border-radius: 6px;
            padding: 6px 12px 8px; margin: 0 0 8px; scroll-margin-top: 96px; }
li.defect h3 { font-size: 15px; margin: 0 0 2px; }
li.defect h3 .n { color: var(--muted); font-weight: normal; margin-right: 4px; }
li.defect h3 .badge { margin-right: 6px; vertical-align: 1px; }
li.defect p { margin: 2px 0; }
li.defect pre { max-height: 160px; }
li.defect .evidence { margin: 4px 0; }
li.defect details > summary { cursor: pointer; color: var(--muted); }
li.defect details p { margin: 2px 0 0 16px; }
ol.more-defects { margin: 4px 0; padding-left: 32px; }
ol.more-defects li { margin: 1px 0; }
ol.more-defects .badge { margin: 0 6px; }
"""


def render_html(
    report: RunResult | Report | Mapping[str, Any],
    *,
    reruns: Mapping[str, str] | None = None,
    explain: Callable[[DefectData], str | None] | None = None,
) -> str:
    """The report as one self-contained HTML page (``report.html``); ``reruns``: ``adapter::scenario::mode``
    -> the shell command that reruns that case alone, shown in a case that failed, errored or is stale
    and under the defect it is the evidence of; ``explain``: why a defect is one, with the library's
    source line or doc, where the caller knows it (Markdown: its code spans and links are kept, the
    rest is shown as text)."""
    data = as_report(report)
    anchors = _anchors([case["id"] for case in data["cases"]])
    scenarios = {s["id"]: s for s in data["scenarios"]}
    adapters = _adapter_index(data)
    title = f"Conformance report: {data['suite_version']}"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title>",
        f"<style>{_CSS}{_status_css()}{_filter_css(data, adapters)}</style>",
        "</head>",
        "<body>",
        _header(data),
        _defects(data, anchors, reruns or {}, explain),
        _deviations(data, anchors, adapters),
        _adapters(data),
        _problems(data),
        _filters(data, adapters),
        _matrix(data, anchors, scenarios, adapters),
        _cases(data, anchors, scenarios, adapters, reruns or {}),
        _tallies(data),
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
    rules += [f".oc-{word} {{ background: {bg}; color: {fg}; }}" for word, (bg, fg) in OUTCOME_COLOURS.items()]
    rules += [
        f".sv-{severity} {{ background: {bg}; color: {fg}; }} .defect.is-{severity} {{ --severity: {bg}; }}"
        for severity, (bg, fg) in SEVERITY_COLOURS.items()
    ]
    return "\n".join(rules) + "\n"


def _present(data: Report) -> list[str]:
    """The statuses some case of the run has, best first."""
    return [s for s in STATUS_ORDER if data["summary"]["statuses"].get(s)]


def _adapter_index(data: Report) -> dict[str, int]:
    """Adapter name -> its number in the ``ad-N`` classes and ``adapter-N`` filter ids (names may hold
    any character, so they never go into a class or an id)."""
    names = [a["name"] for a in data["adapters"]] + [c["adapter"] for c in data["cases"]]
    return {name: i for i, name in enumerate(dict.fromkeys(names))}


def _filter_css(data: Report, adapters: dict[str, int]) -> str:
    """The filters as CSS: a checked verdict radio hides the cases and matrix rows without that verdict
    (and dims the other cells); an unchecked adapter box hides that adapter's columns and cases."""
    items = ":is(details.case, li.case)"
    rules = []
    for status in _present(data):
        on = f"body:has(#show-{status}:checked)"
        rules.append(f"{on} {items}:not(.is-{status}), {on} tr.row:not(.h-{status}) {{ display: none; }}")
        rules.append(f"{on} table.matrix td:not(.st-{status}) {{ opacity: .3; }}")
    on = "body:has(#show-problems:checked)"
    rules.append(f"{on} {items}.is-pass, {on} tr.row.clean {{ display: none; }}")
    rules.extend(f"body:has(#adapter-{i}:not(:checked)) .ad-{i} {{ display: none; }}" for i in adapters.values())
    return "\n".join(rules) + "\n"


def _badge(status: str) -> str:
    return f'<span class="badge st-{_e(status)}">{_e(status)}</span>'


def _n(count: int) -> str:
    """A count in a table cell: zero greyed out so the other numbers stand out."""
    return f'<td class="num{" zero" if count == 0 else ""}">{count:,}</td>'


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


def _breakable(name: str) -> str:
    """An escaped name that may wrap after ``_``, ``~``, ``/`` or ``.`` (a long adapter name in a narrow header)."""
    return re.sub(r"([_~/.])", r"\1<wbr>", _e(name))


_INLINE = re.compile(
    r"(?P<fence>`+)(?P<code>.+?)(?P=fence)"
    r"|\[(?P<label>[^\]\n]+)\]\((?P<target>https?://[^\s()<>]+)\)"
    r"|(?P<url>https?://[^\s<>`\"']*[^\s<>`\"'.,;:!?)\]])"
)
"""Of Markdown, what an ``explain`` text uses: code spans, ``[text](url)`` links and bare URLs (http and https only)."""


def _inline_markdown(text: str) -> str:
    """``text`` (Markdown from our own table) as HTML: code spans as ``<code>``, links as ``<a>``, every
    other character escaped (so ``<script>`` stays text)."""
    out: list[str] = []
    at = 0
    for match in _INLINE.finditer(text):
        out.append(_e(text[at : match.start()]))
        at = match.end()
        if match["code"] is not None:
            code = match["code"]
            code = code[1:-1] if code.startswith(" ") and code.endswith(" ") and code.strip() else code
            out.append(f"<code>{_e(code)}</code>")
        elif match["target"] is not None:
            out.append(f'<a href="{_e(match["target"])}">{_e(match["label"])}</a>')
        else:
            out.append(f'<a href="{_e(match["url"])}">{_e(match["url"])}</a>')
    out.append(_e(text[at:]))
    return "".join(out)


def _cut(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- sections ----------------------------------------------------------------------------------------------


def _header(data: Report) -> str:
    summary = data["summary"]
    incomplete = data.get("incomplete")
    outcome = run_outcome(
        {"total": summary["cases"], "statuses": summary["statuses"]},
        problems=summary["problems"],
        incomplete=bool(incomplete),
    )
    chips = "".join(
        f'<span class="chip">{_badge(status)}<b>{summary["statuses"][status]}</b></span>' for status in STATUS_ORDER
    )
    banner = f'<p class="incomplete" role="alert"><b>Incomplete report</b>: {_e(incomplete)}</p>' if incomplete else ""
    notes = []
    if summary["statuses"].get("unsupported"):
        notes.append("<b>unsupported</b>: the scenario needs a capability the adapter does not declare")
    if summary["statuses"].get("left"):
        notes.append("<b>left</b>: left to the caller, a duty the client does not take on (what to do is in the case)")
    if summary["statuses"].get("xfail"):
        notes.append("<b>xfail</b>: a known gap the adapter declares")
    if summary["statuses"].get("deviated"):
        notes.append("<b>deviated</b>: the model did not do what the scenario asks, not a defect of the server")
    verdict = {1: "It does not fail a run.", 2: "Neither fails a run."}.get(len(notes), "None of them fails a run.")
    note = f'<p class="meta">{"; ".join(notes)}. {verdict}</p>' if notes and outcome.word == "passed" else ""
    return (
        "<header>"
        "<h1>Conformance report</h1>"
        f"{banner}"
        f'<div class="headline" id="outcome"><span class="outcome oc-{outcome.word}">{outcome.word}</span>'
        f'<span class="counts">{_e(outcome.counts)}</span><div class="chips" id="summary">{chips}</div></div>'
        f"{note}"
        f'<p class="meta">suite <b class="mono">{_e(data["suite_version"])}</b>'
        f" · {_counted(summary['cases'], 'case')} · {_counted(len(data['adapters']), 'adapter')}"
        f" · {_counted(len(data['scenarios']), 'scenario')} · worst case status {_badge(summary['verdict'])}"
        f" · {summary['duration']:.2f} s of case time</p>"
        f"{_suite_meta(data)}"
        "</header>"
    )


def _severity(severity: str, text: str | None = None) -> str:
    """A severity badge, saying ``text`` (else the severity's words)."""
    words = SEVERITY_WORDS.get(severity, severity) if text is None else text
    return f'<span class="badge sv-{_e(severity)}">{_e(words)}</span>'


def _case_link(case_id: str, anchors: Mapping[str, str]) -> str:
    if case_id in anchors:
        return f'<a class="mono" href="#{_e(anchors[case_id])}">{_e(case_id)}</a>'
    return f'<span class="mono">{_e(case_id)}</span>'


def _defects(
    data: Report,
    anchors: Mapping[str, str],
    reruns: Mapping[str, str],
    explain: Callable[[DefectData], str | None] | None,
) -> str:
    """Each defect once, worst first: a block per defect (the first ``_DEFECT_BLOCKS`` when there are
    ``_MANY_DEFECTS`` or more, the rest one line each, linked to its evidence)."""
    defects = report_defects(data)
    if not defects:
        return '<section id="defects"><h2>Defects</h2><p class="tally">None: no check found a defect.</p></section>'
    counts = severity_counts(defects)
    tally = " ".join(_severity(s, f"{counts[s]:,} {SEVERITY_WORDS[s]}") for s in SEVERITIES if counts[s])
    blocks = defects[:_DEFECT_BLOCKS] if len(defects) >= _MANY_DEFECTS else defects
    rest = defects[len(blocks) :]
    parts = [
        '<section id="defects"><h2>Defects</h2>',
        f'<p class="tally">{_counted(len(defects), "defect")}: {tally}, worst first; each is listed once, '
        "however many cases it fails (every case is below the matrix).</p>",
        '<ol class="defects">',
        *(_defect(n, d, anchors, reruns, explain) for n, d in enumerate(blocks, 1)),
        "</ol>",
    ]
    if rest:
        items = "".join(
            f'<li id="defect-{n}"><a href="#{_e(anchors.get(d["evidence"]["case"], f"defect-{n}"))}">'
            f"{_e(d['sentence'])}</a>{_severity(d['severity'])}"
            f'<span class="meta">{_e(quantity(len(d["cases"]), "case"))}</span></li>'
            for n, d in enumerate(rest, len(blocks) + 1)
        )
        parts.append(
            f"<h3>{quantity(len(rest), 'more defect')}, each linked to its evidence</h3>"
            f'<ol class="more-defects" start="{len(blocks) + 1}">{items}</ol>'
        )
    parts.append("</section>")
    return "".join(parts)


def _defect(
    n: int,
    defect: DefectData,
    anchors: Mapping[str, str],
    reruns: Mapping[str, str],
    explain: Callable[[DefectData], str | None] | None,
) -> str:
    evidence = defect["evidence"]
    body = [
        f'<li class="defect is-{_e(defect["severity"])}" id="defect-{n}">'
        f'<h3><span class="n">{n}.</span>{_severity(defect["severity"])}'
        f'<span class="sentence">{_e(defect["sentence"])}</span></h3>',
        f'<p class="meta"><code>{_e(defect["check"])}</code> · {_e(defect_where(defect))}</p>',
    ]
    if defect["remedy"]:
        body.append(f'<p class="todo"><b>To do:</b> {_e(defect["remedy"])}</p>')
    reason = explain(defect) if explain is not None else None
    if reason:
        body.append(f'<p class="why"><b>Why this is a defect of the library:</b> {_inline_markdown(reason)}</p>')
    place = []
    if evidence["turn"] is not None and not evidence["path"].startswith("turn "):
        place.append(f"turn {_e(evidence['turn'])}")
    if evidence["path"]:
        place.append(f"<code>{_e(evidence['path'])}</code>")
    if evidence["cassette"]:
        place.append(f'cassette <span class="mono">{_e(evidence["cassette"])}</span>')
    body.append(
        f'<div class="evidence"><p>Evidence: {_case_link(evidence["case"], anchors)}'
        f"{''.join(f' · {p}' for p in place)}</p>"
    )
    if evidence["shown"]:
        body.append(f"<pre>{_e(chr(10).join(evidence['shown']))}</pre>")
    rerun = reruns.get(f"{evidence['adapter']}::{evidence['scenario']}::{evidence['mode']}")
    if rerun:
        body.append(f'<p class="rerun">Rerun it: <code>{_e(rerun)}</code></p>')
    body.append("</div>")
    if defect["restated"]:
        restated = "; ".join(
            f"<code>{_e(r['check'])}</code> ({_e(quantity(r['cases'], 'case'))}: {_e(r['message'])})"
            for r in defect["restated"]
        )
        body.append(f'<p class="restated">Restated by {restated}</p>')
    scenarios = ", ".join(f'<span class="mono">{_e(s)}</span>' for s in defect["scenarios"])
    body.append(
        f'<details class="scenarios"><summary>{_e(quantity(len(defect["scenarios"]), "scenario"))}</summary>'
        f"<p>{scenarios}</p></details></li>"
    )
    return "".join(body)


def _deviations(data: Report, anchors: Mapping[str, str], adapters: Mapping[str, int]) -> str:
    """The cases in which the model deviated from the scenario, apart from the defects: a row each (column,
    scenario, mode, the case's status, what the model did), linked to its case and hidden with its column
    by the adapter filter; none: no section."""
    deviations = report_deviations(data)
    if not deviations:
        return ""
    rows = "".join(
        f'<tr class="ad-{adapters.get(d["adapter"], -1)}"><td>{_case_link(d["case"], anchors)}</td>'
        f'<td class="mono">{_e(d["adapter"])}</td><td class="mono">{_e(d["scenario"])}</td>'
        f"<td>{_e(MODE_LABELS.get(d['mode'], d['mode']))}</td><td>{_badge(d['status'])}</td>"
        f"<td>{_e(d['message'])}</td></tr>"
        for d in deviations
    )
    return (
        '<section id="deviations"><h2>Model deviations</h2>'
        f'<p class="tally">The model did not do what the scenario asks in {_counted(len(deviations), "case")} '
        "(text instead of a call, another tool, other arguments): the model's choice, not a defect of the server, "
        "and not a failure. What the server sent was still judged for its shape; a case whose answer was also "
        "malformed fails, and its defect is listed above.</p>"
        "<table><thead><tr><th>case</th><th>column</th><th>scenario</th><th>mode</th><th>status</th>"
        f"<th>what the model did</th></tr></thead><tbody>{rows}</tbody></table></section>"
    )


def _counted(count: int, noun: str) -> str:
    """``<b>1</b> adapter``, ``<b>3</b> adapters`` (``quantity``, the number in bold)."""
    number, _, word = quantity(count, noun).partition(" ")
    return f"<b>{number}</b> {word}"


def _suite_meta(data: Report) -> str:
    """One line: the suite's fingerprint, the shard (or the shards merged) and the models asked for."""
    suite = data.get("suite")
    selection = data.get("selection")
    parts: list[str] = []
    if suite:
        parts.append(
            f'suite fingerprint <b class="mono" title="{_e(suite["fingerprint"])}">{_e(suite["fingerprint"][:16])}</b>'
            f" (checks v{_e(suite['check_version'])}, {_e(suite['scenarios'])} scenarios)"
        )
    if selection and selection.get("shard"):
        parts.append(f'shard <b class="mono">{_e(selection["shard"])}</b>')
    if selection and selection.get("merged"):
        parts.append(f'merged from shards <span class="mono">{_e(", ".join(selection["merged"]))}</span>')
    models = [f"{_e(a['name'])}: {_e(a['model'])}" for a in data["adapters"] if a.get("model")]
    if models:
        parts.append(f'model asked for <span class="mono">{"; ".join(models)}</span>')
    note = selection.get("note") if selection else None
    meta = f'<p class="meta">{" · ".join(parts)}</p>' if parts else ""
    return meta + (f'<p class="meta"><b>Note:</b> {_e(note)}</p>' if note else "")


def _adapters(data: Report) -> str:
    """One row per adapter, first thing after the headline: its outcome, its counts and a bar of them."""
    tallies = data["summary"]["by_adapter"]
    if not tallies:
        return ""
    wires = {a["name"]: a["wire_format"] for a in data["adapters"]}
    head = "".join(f"<th>{_badge(s)}</th>" for s in STATUS_ORDER)
    rows = []
    for name, tally in tallies.items():
        outcome = run_outcome(tally)
        total = tally["total"] or 1
        bar = "".join(
            f'<span class="st-{s}" style="width: {100 * tally["statuses"][s] / total:.2f}%" '
            f'title="{tally["statuses"][s]:,} {s}"></span>'
            for s in STATUS_ORDER
            if tally["statuses"][s]
        )
        rows.append(
            f'<tr><th class="mono">{_e(name)}</th><td class="mono">{_e(wires.get(name, ""))}</td>'
            f'<td class="outcome"><span class="badge oc-{outcome.word}">{outcome.word}</span></td>'
            f"{_n(tally['total'])}{''.join(_n(tally['statuses'][s]) for s in STATUS_ORDER)}"
            f'<td><div class="bar">{bar}</div></td></tr>'
        )
    return (
        '<section id="adapters"><h2>By adapter</h2><table class="adapters"><thead><tr><th>adapter</th>'
        f"<th>wire format</th><th>outcome</th><th>cases</th>{head}<th>share</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table></section>"
    )


def _filters(data: Report, adapters: dict[str, int]) -> str:
    """Radio buttons (one verdict at a time) and a checkbox per adapter; ``_filter_css`` reads them."""
    if not data["cases"]:
        return ""
    statuses = data["summary"]["statuses"]
    not_passing = sum(n for s, n in statuses.items() if s != "pass")
    options = [("all", f"all ({data['summary']['cases']:,})"), ("problems", f"not passing ({not_passing:,})")]
    options += [(s, f"{s} ({statuses[s]:,})") for s in _present(data)]
    verdicts = "".join(
        f'<input type="radio" name="show" id="show-{key}"{" checked" if key == "all" else ""}>'
        f'<label for="show-{key}">{_e(label)}</label>'
        for key, label in options
    )
    boxes = "".join(
        f'<input type="checkbox" id="adapter-{i}" checked><label for="adapter-{i}" class="mono">{_e(name)}</label>'
        for name, i in adapters.items()
    )
    return (
        '<nav class="filters" id="filters" aria-label="filters">'
        f'<div class="group" id="verdict-filter"><b>Verdict</b>{verdicts}</div>'
        f'<div class="group" id="adapter-filter"><b>Adapters</b>{boxes}'
        '<span class="hint">(the matrix and the cases below follow these filters)</span></div>'
        "</nav>"
    )


def _mode_td(cell: ModeCell | None, mode: str, classes: str, anchors: dict[str, str]) -> str:
    label = MODE_LABELS.get(mode, mode)
    if cell is None:
        return f'<td class="none {classes}" title="{_e(label)}: not run">—</td>'
    status = cell["status"]
    return (
        f'<td class="st-{_e(status)} {classes}" title="{_e(cell["case"])}: {_e(status)}">'
        f'<a href="#{_e(anchors[cell["case"]])}">{_e(SHORT_LABELS.get(status, status))}</a></td>'
    )


def _matrix(data: Report, anchors: dict[str, str], scenarios: dict[str, ScenarioData], adapters: dict[str, int]) -> str:
    matrix = data["matrix"]
    if not matrix["rows"] or not matrix["adapters"]:
        return '<section id="matrix"><h2>Scenario × adapter</h2><p>No cases were run.</p></section>'
    modes = matrix["modes"]
    top = "".join(
        f'<th class="adapter first ad-{adapters[a]}" colspan="{len(modes)}">{_breakable(a)}</th>'
        for a in matrix["adapters"]
    )
    sub = "".join(
        f'<th class="{"first " if i == 0 else ""}ad-{adapters[a]}">{_e(MODE_LABELS.get(m, m))}</th>'
        for a in matrix["adapters"]
        for i, m in enumerate(modes)
    )
    rows = []
    for row in matrix["rows"]:
        info = scenarios.get(row["scenario"])
        text = info["behavior"] if info else ""
        behavior = f'<span class="behavior" title="{_e(text)}">{_e(text)}</span>' if text else ""
        scenario_id = "/<wbr>".join(_e(part) for part in row["scenario"].split("/"))  # break long ids after a /
        seen = {m["status"] for cell in row["cells"] for m in cell["modes"].values() if m is not None}
        row_classes = ["row", *(f"h-{s}" for s in STATUS_ORDER if s in seen)] + (["clean"] if seen <= {"pass"} else [])
        cells = "".join(
            _mode_td(cell["modes"].get(m), m, f"{'first ' if i == 0 else ''}ad-{adapters[cell['adapter']]}", anchors)
            for cell in row["cells"]
            for i, m in enumerate(modes)
        )
        rows.append(
            f'<tr class="{" ".join(row_classes)}"><th class="scenario" scope="row">'
            f'<span class="id mono">{scenario_id}</span>{behavior}</th>{cells}</tr>'
        )
    return (
        '<section id="matrix"><h2>Scenario × adapter</h2><div class="matrix-box">'
        '<table class="matrix"><thead>'
        f'<tr><th class="corner" rowspan="2">scenario</th>{top}</tr><tr class="modes">{sub}</tr>'
        f"</thead><tbody>{''.join(rows)}</tbody></table></div></section>"
    )


def _tally_table(title: str, first: str, unit: str, tallies: Mapping[str, Any]) -> str:
    if not tallies:
        return ""
    head = "".join(f"<th>{_badge(s)}</th>" for s in STATUS_ORDER)
    body = "".join(
        f'<tr><th class="mono">{_e(name)}</th>{_n(tally["total"])}'
        + "".join(_n(tally["statuses"][s]) for s in STATUS_ORDER)
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


def _where(finding: FindingData) -> str:
    path = f" at <code>{_e(finding['path'])}</code>" if finding["path"] else ""
    turn = f" (turn {_e(finding['turn'])})" if finding["turn"] is not None else ""
    return f"{path}{turn}"


def _findings(checks: list[CheckData]) -> str:
    """Each finding: its check, place and message, then expected and actual side by side."""
    blocks = [
        f'<div class="finding"><p><code>{_e(f["check"])}</code>{_where(f)}: {_e(f["message"])}</p>'
        '<div class="sides"><div class="expected"><h4>expected <span>(what the scenario or recording says)</span></h4>'
        f"{_value(f['expected'])}</div>"
        '<div class="actual"><h4>actual <span>(what the adapter produced)</span></h4>'
        f"{_value(f['actual'])}</div></div></div>"
        for check in checks
        for f in check["findings"]
    ]
    return f"<h3>Findings</h3>{''.join(blocks)}" if blocks else ""


def _why(case: CaseData) -> str:
    """A closed case's reason line: its message, else the first finding of a check that gave the case its
    status (check id, place, message; expected and actual when there is no message), with how many more."""
    if case["message"]:
        return _e(_cut(case["message"], _WHY_CHARS))
    deciding = [c for c in case["checks"] if c["status"] == case["status"]]
    findings = [f for c in deciding for f in c["findings"]]
    if findings:
        first = findings[0]
        words = first["message"] or (
            f"expected {compact_json(first['expected'])}, actual {compact_json(first['actual'])}"
        )
        more = f" (+{len(findings) - 1} more)" if len(findings) > 1 else ""
        return f"<code>{_e(first['check'])}</code>{_where(first)}: {_e(_cut(words, _WHY_CHARS))}{more}"
    for check in deciding:
        if check["message"]:
            return f"<code>{_e(check['check'])}</code>: {_e(_cut(check['message'], _WHY_CHARS))}"
    return ""


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


def _case(case: CaseData, anchor: str, scenario: ScenarioData | None, adapter: int, rerun: str | None) -> str:
    why = _why(case)
    reason = f'<span class="why">{why}</span>' if why else ""
    summary = f'<summary>{_badge(case["status"])}<span class="mono">{_e(case["id"])}</span>{reason}</summary>'
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
    if rerun:
        body.append(f'<p class="rerun">Rerun just this case: <code>{_e(rerun)}</code></p>')
    body.append(_findings([c for c in case["checks"] if c["status"] != "pass"]))
    if case["checks"]:
        body.append(_checks_table(case["checks"]))
    if case["traceback"]:
        body.append(f"<h3>Traceback</h3><pre>{_e(case['traceback'])}</pre>")
    if case["exchanges"]:
        body.append("<h3>Wire exchanges</h3>")
        body.extend(_exchange(i, exchange) for i, exchange in enumerate(case["exchanges"], 1))
    body.append("</div>")
    return f'<details class="case is-{_e(case["status"])} ad-{adapter}">{summary}{"".join(body)}</details>'


def _cases(
    data: Report,
    anchors: dict[str, str],
    scenarios: dict[str, ScenarioData],
    adapters: dict[str, int],
    reruns: Mapping[str, str],
) -> str:
    failing = [c for c in data["cases"] if c["status"] != "pass"]
    passing = [c for c in data["cases"] if c["status"] == "pass"]
    parts = ['<section id="cases"><h2>Cases</h2>']
    if not data["cases"]:
        parts.append("<p>No cases were run.</p>")
    parts.extend(
        _case(
            c,
            anchors[c["id"]],
            scenarios.get(c["scenario"]),
            adapters[c["adapter"]],
            reruns.get(f"{c['adapter']}::{c['scenario']}::{c['mode']}") if c["status"] in FAILING_STATUSES else None,
        )
        for c in failing
    )
    if passing:
        items = "".join(
            f'<li class="case is-pass ad-{adapters[c["adapter"]]}" id="{_e(anchors[c["id"]])}">'
            f'<span class="mono">{_e(c["id"])}</span> <span class="meta">({len(c["checks"])} checks)</span></li>'
            for c in passing
        )
        parts.append(
            f'<details class="case is-pass passes"><summary>{_badge("pass")}'
            f'<span class="mono">{len(passing):,} passing cases</span></summary>'
            f'<ul class="passing">{items}</ul></details>'
        )
    parts.append("</section>")
    return "".join(parts)


def _served(c: Any) -> str:
    """The command line; for Streamable HTTP the URL, then the command that served it (if any)."""
    if not c.get("url"):
        return shlex.join(c["argv"])
    started = f" started by {shlex.join(c['argv'])}" if c["argv"] else ""
    return f"{c['url']} (Streamable HTTP){started}"


def _commands(data: Report) -> str:
    """The MCP server commands the run started (``conformance.mcp_bridge.trust``)."""
    if not data.get("commands"):
        return ""
    rows = "".join(
        f'<tr><td class="mono">{_e(c["scenario"])}</td><td class="mono">{_e(_served(c))}</td>'
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
