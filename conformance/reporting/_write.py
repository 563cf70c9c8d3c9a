"""Writing the reports (the one I/O edge of ``conformance.reporting``): each file replaced atomically."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from conformance.errors import UsageError
from conformance.reporting._data import Report, build_report
from conformance.reporting._html import render_html
from conformance.reporting._json import render_json
from conformance.reporting._junit import render_junit
from conformance.reporting._markdown import render_markdown
from conformance.traffic.atomic import write_atomic
from conformance.verdicts import RunResult

__all__ = ["FORMATS", "write_reports"]

_Renderer = Callable[[RunResult | Report | Mapping[str, Any]], str]

FORMATS: dict[str, tuple[str, _Renderer]] = {
    "json": ("report.json", render_json),
    "md": ("report.md", render_markdown),
    "html": ("report.html", render_html),
    "junit": ("junit.xml", render_junit),
}
"""Format name -> (file name in the report directory, renderer)."""


def write_reports(
    run: RunResult,
    report_dir: str | os.PathLike[str],
    formats: Iterable[str] = ("json", "md", "html", "junit"),
    *,
    secrets: Iterable[str] = (),
    reruns: Mapping[str, str] | None = None,
) -> list[Path]:
    """Write the reports of ``run`` into ``report_dir`` (created if missing); the paths written, in order.

    Each file is replaced atomically: a reader sees the old report or the new one, never half of
    one. ``secrets`` are removed from every string (key-shaped strings always are). ``reruns``
    (``adapter::scenario::mode`` -> command) go under the failing cases of the Markdown report.
    """
    wanted = list(dict.fromkeys(formats))
    unknown = [name for name in wanted if name not in FORMATS]
    if unknown:
        raise UsageError(f"unknown report format {', '.join(map(repr, unknown))}: choose from {', '.join(FORMATS)}")
    report = build_report(run, secrets=secrets)
    directory = Path(report_dir)
    written: list[Path] = []
    for name in wanted:
        filename, render = FORMATS[name]
        path = directory / filename
        text = render_markdown(report, reruns=reruns) if name == "md" else render(report)
        write_atomic(path, text.encode("utf-8"))
        written.append(path)
    return written
