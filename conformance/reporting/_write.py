"""Writing the reports (the one I/O edge of ``conformance.reporting``): each file replaced atomically.

Every format is rendered and written on its own: one that fails (a renderer's error, a full disk)
costs only its own file, never the others. ``check_report_dir`` finds a report folder that cannot
be written before a run starts.

Each rendered text is scrubbed once more here, the one place every report passes, before it is
written: the key shapes, the secrets the caller names and the secrets of the process
(``conformance.traffic.scrub.environment_secrets``: the provider key variables and any variable
named like a key), in every spelling the scrubber knows (raw, percent-encoded, JSON-escaped, hex,
base64), so that a secret a result carries in a form the report data did not show is still removed.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.errors import UsageError
from conformance.reporting._data import Report, build_report
from conformance.reporting._html import render_html
from conformance.reporting._json import render_json
from conformance.reporting._junit import render_junit
from conformance.reporting._markdown import render_markdown
from conformance.traffic.atomic import write_atomic
from conformance.traffic.scrub import environment_secrets, known_scrubber
from conformance.verdicts import RunResult

__all__ = [
    "FORMATS",
    "ReportFailure",
    "WrittenReports",
    "check_report_dir",
    "write_each_report",
    "write_report_data",
    "write_reports",
]

_Renderer = Callable[[RunResult | Report | Mapping[str, Any]], str]

FORMATS: dict[str, tuple[str, _Renderer]] = {
    "json": ("report.json", render_json),
    "md": ("report.md", render_markdown),
    "html": ("report.html", render_html),
    "junit": ("junit.xml", render_junit),
}
"""Format name -> (file name in the report directory, renderer)."""


@dataclass(frozen=True)
class ReportFailure:
    """A report file that was not written, and why (the old file, if any, is left as it was)."""

    path: Path
    reason: str
    error: BaseException

    def __str__(self) -> str:
        return f"{self.path}: not written: {self.reason}"


@dataclass(frozen=True)
class WrittenReports:
    """What ``write_each_report`` did: the files written, in order, and those that failed."""

    written: tuple[Path, ...]
    failed: tuple[ReportFailure, ...]


def check_report_dir(report_dir: str | os.PathLike[str], formats: Iterable[str] = tuple(FORMATS)) -> None:
    """Make sure the reports in ``formats`` can be written into ``report_dir`` (created when missing,
    parents too); ``UsageError`` naming the folder and the reason when they cannot."""
    directory = Path(report_dir)
    wanted = [name for name in dict.fromkeys(formats) if name in FORMATS]
    if not wanted:
        return
    advice = "choose another with --report-dir DIR"
    if directory.exists() and not directory.is_dir():
        raise UsageError(f"--report-dir {directory}: it is a file, not a folder; {advice}")
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--report-dir {directory}: cannot create it ({_reason(exc)}); {advice}") from exc
    for name in wanted:
        target = directory / FORMATS[name][0]
        if target.is_dir():
            raise UsageError(f"--report-dir {directory}: {target} is a folder, where the report file goes; {advice}")
    try:
        fd, probe = tempfile.mkstemp(dir=directory, prefix=".conformance-probe-", suffix=".tmp")
    except OSError as exc:
        raise UsageError(f"--report-dir {directory}: cannot write there ({_reason(exc)}); {advice}") from exc
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(probe)


def write_each_report(
    run: RunResult,
    report_dir: str | os.PathLike[str],
    formats: Iterable[str] = ("json", "md", "html", "junit"),
    *,
    secrets: Iterable[str] = (),
    reruns: Mapping[str, str] | None = None,
    incomplete: str | None = None,
) -> WrittenReports:
    """Write the reports of ``run`` into ``report_dir`` (created if missing), each on its own: a format
    that cannot be rendered or written is a ``ReportFailure`` and the others are still written.

    Each file is replaced atomically: a reader sees the old report or the new one, never half of
    one. ``secrets`` are removed from every string (key-shaped strings always are). ``reruns``
    (``adapter::scenario::mode`` -> command) go under the failing cases of the Markdown and HTML
    reports.
    ``incomplete``: why the run stopped early; every format says the report is incomplete.
    """
    wanted = _wanted(formats)
    directory = Path(report_dir)
    secrets = (*secrets, *environment_secrets(os.environ))
    try:
        report = build_report(run, secrets=secrets, incomplete=incomplete)
    except Exception as exc:  # whatever a result holds, the run still ends with a message
        reason = f"the report data could not be built ({_reason(exc)})"
        return WrittenReports((), tuple(ReportFailure(directory / FORMATS[n][0], reason, exc) for n in wanted))
    return write_report_data(report, directory, wanted, reruns=reruns, secrets=secrets)


def _wanted(formats: Iterable[str]) -> list[str]:
    wanted = list(dict.fromkeys(formats))
    unknown = [name for name in wanted if name not in FORMATS]
    if unknown:
        raise UsageError(f"unknown report format {', '.join(map(repr, unknown))}: choose from {', '.join(FORMATS)}")
    return wanted


def write_report_data(
    report: Report,
    report_dir: str | os.PathLike[str],
    formats: Iterable[str] = ("json", "md", "html", "junit"),
    *,
    reruns: Mapping[str, str] | None = None,
    secrets: Iterable[str] = (),
) -> WrittenReports:
    """Write a built report (``build_report``'s, or ``merge_reports``') in ``formats`` into ``report_dir``,
    each on its own and atomically, as ``write_each_report`` does; each text scrubbed of ``secrets``,
    the process's secrets and the key shapes first (the module docstring)."""
    wanted = _wanted(formats)
    directory = Path(report_dir)
    scrubber = known_scrubber(tuple(sorted({*secrets, *environment_secrets(os.environ)})))
    written: list[Path] = []
    failed: list[ReportFailure] = []
    for name in wanted:
        filename, render = FORMATS[name]
        path = directory / filename
        try:
            if render is render_markdown or render is render_html:  # the two that show rerun commands
                text = (render_markdown if render is render_markdown else render_html)(report, reruns=reruns)
            else:
                text = render(report)
            text = scrubber.text(text)
            write_atomic(path, text.encode("utf-8", "backslashreplace"))  # a lone surrogate from a stream: escaped
        except Exception as exc:  # one format's failure never costs the others
            failed.append(ReportFailure(path, _reason(exc), exc))
        else:
            written.append(path)
    return WrittenReports(tuple(written), tuple(failed))


def write_reports(
    run: RunResult,
    report_dir: str | os.PathLike[str],
    formats: Iterable[str] = ("json", "md", "html", "junit"),
    *,
    secrets: Iterable[str] = (),
    reruns: Mapping[str, str] | None = None,
    incomplete: str | None = None,
) -> list[Path]:
    """Write the reports like ``write_each_report`` and return the paths written, in order; when a
    format failed, its error is raised after every other format was written."""
    done = write_each_report(run, report_dir, formats, secrets=secrets, reruns=reruns, incomplete=incomplete)
    if done.failed:
        raise done.failed[0].error
    return list(done.written)


def _reason(exc: BaseException) -> str:
    """An error as a short reason: the OS's words for an ``OSError``, else the type and message."""
    if isinstance(exc, RecursionError):
        return f"a value is nested too deeply to render (RecursionError: {exc})"
    if isinstance(exc, OSError) and exc.strerror:
        where = f": {exc.filename}" if exc.filename else ""
        return f"{exc.strerror}{where}"
    return f"{type(exc).__name__}: {exc}"
