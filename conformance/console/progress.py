"""What a run shows while its cases run (``conformance run``, ``conformance certify``).

On a terminal: a live bar (rich, imported only then) with the column running, the cases done of the
total, the counts by status and the time left (``time_left``, at the rate of the whole run so far),
in a colour that turns with the first failure (``bar_colour``), gone when the run ends. Elsewhere (a
pipe, a CI log, ``TERM=dumb``): a heading and the legend of the symbols (once per run), then one line
per column, one symbol per case (``.`` pass, ``F`` fail, ``E`` error, ...: ``SYMBOLS``), wrapped at
the width. Names from outside are shown as ``conformance.console.output.shown`` escapes them.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from typing import Any, TextIO

from conformance.console.output import Style, cut, is_terminal, output_width, shown, visible_width, wrapped
from conformance.console.summary import SYMBOLS
from conformance.verdicts import STATUS_ORDER, CaseResult

__all__ = [
    "LEGEND_WORDS",
    "PROGRESS_HEADING",
    "SETTLED_CASES",
    "SETTLED_SECONDS",
    "Progress",
    "bar_colour",
    "legend_lines",
    "time_left",
    "time_left_text",
]

PROGRESS_HEADING = "Progress: a symbol per case as it finishes, a line per adapter"
LEGEND_WORDS = {
    "pass": "pass",
    "fail": "fail",
    "error": "error",
    "unsupported": "unsupported",
    "xfail": "xfail",
    "left": "left to the caller",
    "stale": "stale",
}
"""What each progress symbol (``SYMBOLS``) stands for, in the order of the legend."""


def legend_lines(width: int, style: Style | None = None) -> list[str]:
    """The progress symbols' legend (``. pass  F fail ...``) in lines of at most ``width`` cells, never
    breaking an entry."""
    style = style or Style()
    lines: list[str] = []
    line, used = "  ", 2
    for status, words in LEGEND_WORDS.items():
        entry, size = f"{style.paint(SYMBOLS[status], status)} {words}", len(words) + 2
        if used > 2 and used + 2 + size > width:
            lines.append(line)
            line, used = "  ", 2
        line, used = (f"{line}  {entry}", used + 2 + size) if used > 2 else (line + entry, used + size)
    return [*lines, line]


class Progress:
    """The run's progress. On a terminal: a live bar with the cases done, the counts by status and the
    time left (rich, imported only then), gone when the run ends. Elsewhere: a heading and the legend
    of the symbols (once per run), then one line per adapter, one symbol per case (``.`` pass, ``F``
    fail, ``E`` error, ...), wrapped at the width. Names are shown as ``shown`` escapes them."""

    def __init__(
        self,
        out: TextIO,
        judge: Callable[[CaseResult], CaseResult] | None = None,
        *,
        total: int | None = None,
        live: bool | None = None,
    ) -> None:
        self.out = out
        self.adapter: str | None = None
        self.judge = judge  # how a case is shown (--baseline: a baselined failure is x)
        self.total = total
        self.width = output_width()
        self.style = Style.for_stream(out)
        self.column = 0
        self.indent = 0
        self.headed = False
        self.counts: dict[str, int] = {}
        wanted = (
            live if live is not None else is_terminal(out) and os.environ.get("TERM", "") not in ("dumb", "unknown")
        )
        self.bar: Any = _LiveBar(out, total) if wanted else None

    def __call__(self, case: CaseResult) -> None:
        if self.judge is not None:
            case = self.judge(case)
        self.counts[case.status] = self.counts.get(case.status, 0) + 1
        if self.bar is not None:
            self.bar.advance(case.adapter, self.counts)
            return
        if not self.headed:
            self.headed = True
            heading = [self.style.paint(line, "bold") for line in wrapped(PROGRESS_HEADING, self.width)]
            self.out.write("\n".join([*heading, *legend_lines(self.width, self.style)]) + "\n")
        if case.adapter != self.adapter:
            if self.adapter is not None:
                self.out.write("\n")
            self.adapter = case.adapter
            name = shown(case.adapter)
            prefix = name + " " * max(1, 19 - visible_width(name))
            size = visible_width(prefix)
            self.indent = size if size <= self.width // 2 else 2
            if size < self.width:
                self.out.write(prefix)
                self.column = size
            else:
                self.out.write(cut(name, self.width) + "\n" + " " * self.indent)
                self.column = self.indent
        if self.column >= self.width:
            self.out.write("\n" + " " * self.indent)
            self.column = self.indent
        self.out.write(self.style.paint(SYMBOLS[case.status], case.status))
        self.column += 1
        self.out.flush()

    def done(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None
        elif self.adapter is not None:
            self.out.write("\n")
            self.adapter = None


SETTLED_CASES = 3
SETTLED_SECONDS = 1.0
"""The live bar shows no time left before this many cases and seconds: the first cases say little
of the rate of the run (they start its workers)."""


def time_left(done: int, total: int | None, elapsed: float) -> float | None:
    """The seconds a run has left after ``done`` of ``total`` cases in ``elapsed`` seconds, at the rate
    of the whole run so far (not of the last cases, which finish in bursts when the cases run in
    parallel: rich's own estimate then jumps from seconds to minutes and back); None before
    ``SETTLED_CASES`` cases and ``SETTLED_SECONDS``, or without a total."""
    if total is None or done < SETTLED_CASES or elapsed < SETTLED_SECONDS:
        return None
    return max(0, total - done) * elapsed / done


def time_left_text(seconds: float | None) -> str:
    """``time_left`` as the bar shows it: ``12 s left``, ``3 min left``, ``1 h 5 min left`` (nothing: none yet)."""
    if seconds is None:
        return ""
    whole = math.ceil(seconds)
    if whole < 60:
        return f"{whole} s left"
    minutes = math.ceil(whole / 60)
    return f"{minutes} min left" if minutes < 60 else f"{minutes // 60} h {minutes % 60} min left"


_BAR_COLOURS = {"pass": "green", "fail": "bold red", "error": "bold magenta", "stale": "yellow", "xfail": "yellow"}


def bar_colour(counts: Mapping[str, int]) -> str:
    """The live bar's colour: the colour of the first of fail, error and stale the run has so far; green
    without one (rich's own bar is red-pink whatever the cases did)."""
    return next((_BAR_COLOURS[s] for s in ("fail", "error", "stale") if counts.get(s)), "green")


class _LiveBar:
    """rich's progress bar on ``out``: the adapter running, a bar (its colour: ``bar_colour``), cases done
    of the total, the counts by status, the time left (``time_left``)."""

    def __init__(self, out: TextIO, total: int | None) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, ProgressColumn, Task, TextColumn
        from rich.progress import Progress as RichProgress
        from rich.text import Text

        class TimeLeft(ProgressColumn):
            def render(self, task: Task) -> Text:
                left = time_left(
                    int(task.completed), None if task.total is None else int(task.total), task.elapsed or 0
                )
                return Text(time_left_text(left), style="progress.remaining")

        console = Console(file=out, force_terminal=True, width=output_width())
        colour = bar_colour({})
        self.bar = BarColumn(bar_width=None, complete_style=colour, finished_style=colour, pulse_style=colour)
        self.progress = RichProgress(
            TextColumn("{task.description}"),
            self.bar,
            MofNCompleteColumn(),
            TextColumn("{task.fields[counts]}"),
            TimeLeft(),
            console=console,
            transient=True,
            expand=True,
        )
        self.task = self.progress.add_task("cases", total=total, counts="")
        self.progress.start()

    def advance(self, adapter: str, counts: Mapping[str, int]) -> None:
        from rich.markup import escape

        text = " ".join(f"[{_BAR_COLOURS.get(s, 'dim')}]{counts[s]} {s}[/]" for s in STATUS_ORDER if counts.get(s))
        colour = bar_colour(counts)
        self.bar.complete_style = self.bar.finished_style = self.bar.pulse_style = colour
        self.progress.update(self.task, advance=1, description=escape(cut(shown(adapter), 18)), counts=text)

    def stop(self) -> None:
        self.progress.stop()
