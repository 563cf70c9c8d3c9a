"""What a run shows while its cases run (``conformance.console.progress``, issue 25): the symbol block
under a heading and its legend (once per run), the live bar's colour and time left, names from outside
shown escaped."""

from __future__ import annotations

import io

import pytest

from conformance.console.output import visible_width
from conformance.console.progress import (
    LEGEND_WORDS,
    PROGRESS_HEADING,
    Progress,
    bar_colour,
    legend_lines,
    time_left,
    time_left_text,
)
from conformance.verdicts import CaseResult

LEGEND = ". pass  F fail  E error  u unsupported  x xfail  c left to the caller  S stale"
CONTROLS = {chr(c) for c in [*range(0x20), *range(0x7F, 0xA0)]} - {"\n"}
HOSTILE = "evil\x1b[2J\nPASS 'q' $(touch pwned) x"


def case(adapter: str, status: str = "pass", scenario: str = "basic/s", mode: str = "stream") -> CaseResult:
    return CaseResult(adapter=adapter, scenario=scenario, mode=mode, status=status)  # type: ignore[arg-type]


@pytest.fixture
def columns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.delenv("FORCE_COLOR", raising=False)


def test_the_symbol_block_has_a_heading_and_the_legend_once_per_run(columns: None) -> None:
    out = io.StringIO()
    progress = Progress(out, live=False)
    for adapter, status in [("onebug", "fail"), ("onebug", "pass"), ("openai_chat", "unsupported")]:
        progress(case(adapter, status))
    progress.done()
    assert out.getvalue().splitlines() == [
        PROGRESS_HEADING,
        f"  {LEGEND}",
        "onebug             F.",
        "openai_chat        u",
    ]


@pytest.mark.parametrize("width", [80, 60, 40, 20])
def test_the_legend_fits_the_width_and_never_breaks_an_entry(width: int) -> None:
    lines = legend_lines(width)
    assert all(visible_width(line) <= max(width, len("  c left to the caller")) for line in lines)
    entries = [entry for line in lines for entry in line.strip().split("  ")]
    assert entries == [f"{symbol} {words}" for symbol, words in zip(".FEuxcS", LEGEND_WORDS.values(), strict=True)]


def test_the_bar_is_green_until_a_case_fails() -> None:
    assert bar_colour({}) == bar_colour({"pass": 9, "unsupported": 3, "xfail": 1, "left": 2}) == "green"
    assert "red" in bar_colour({"pass": 9, "fail": 1}) and "red" in bar_colour({"error": 1, "fail": 1})
    assert bar_colour({"error": 1}) == "bold magenta" and bar_colour({"stale": 1}) == "yellow"


def test_the_live_bar_of_a_run_without_failure_is_not_red(columns: None) -> None:
    out = io.StringIO()
    progress = Progress(out, total=4, live=True)
    for status in ("pass", "unsupported", "pass"):
        progress(case("openai_chat", status))
    bar = progress.bar.bar
    assert bar.complete_style == bar.finished_style == "green"  # rich's own is rgb(249,38,114), a red
    progress(case("openai_chat", "fail"))
    assert bar.complete_style == "bold red"
    progress.done()


def run_of(seconds: float, total: int, *, jobs: int, start: float) -> list[tuple[int, float]]:
    """(done, elapsed) after each case of a run whose ``jobs`` workers start after ``start`` seconds and
    then finish their cases together, in bursts."""
    per_burst = (seconds - start) / (total / jobs)
    return [(n, start + per_burst * ((n - 1) // jobs + 1)) for n in range(1, total + 1)]


def test_the_time_left_follows_the_whole_runs_rate() -> None:
    assert time_left(0, 100, 5.0) is None and time_left(2, 100, 5.0) is None  # too few cases yet
    assert time_left(10, 100, 0.5) is None  # too soon
    assert time_left(5, None, 5.0) is None  # no total
    assert time_left(10, 100, 2.0) == pytest.approx(18.0)
    assert time_left(100, 100, 12.0) == 0


@pytest.mark.parametrize(
    ("seconds", "total", "jobs", "start"), [(12, 120, 4, 1.0), (12, 30, 8, 2.0), (12, 400, 1, 0.2)]
)
def test_the_time_left_of_a_12_second_run_stays_in_seconds_and_counts_down(
    seconds: float, total: int, jobs: int, start: float
) -> None:
    shown = [
        (elapsed, time_left(done, total, elapsed)) for done, elapsed in run_of(seconds, total, jobs=jobs, start=start)
    ]
    estimates = [(elapsed, left) for elapsed, left in shown if left is not None]
    assert estimates and all(left < 60 for _, left in estimates)
    assert all("min" not in time_left_text(left) for _, left in estimates)
    foreseen = [elapsed + left for elapsed, left in estimates]  # when the run ends, as the bar tells
    assert abs(foreseen[-1] - seconds) < 0.25 * seconds and max(foreseen) < 5 * seconds


def test_the_time_left_reads_in_seconds_then_minutes() -> None:
    assert time_left_text(None) == ""
    assert time_left_text(0.2) == "1 s left" and time_left_text(59.0) == "59 s left"
    assert time_left_text(61.0) == "2 min left" and time_left_text(3700.0) == "1 h 2 min left"


def test_a_hostile_adapter_name_is_shown_escaped_in_the_progress_lines(columns: None) -> None:
    out = io.StringIO()
    progress = Progress(out, live=False)
    progress(case(HOSTILE))
    progress.done()
    assert not set(out.getvalue()) & CONTROLS
    assert out.getvalue().splitlines()[2].startswith("evil\\x1b[2J\\nPASS 'q' $(touch pwned) x ")


def test_a_hostile_adapter_name_is_shown_escaped_on_the_live_bar(columns: None) -> None:
    out = io.StringIO()
    progress = Progress(out, total=2, live=True)
    progress(case("a\x1b[2Jb[bold]"))
    progress.done()
    assert "\x1b[2J" not in out.getvalue() and "a\\x1b[2Jb[bold]" in out.getvalue()
