"""``conformance.console.summary`` on a run in which the model behind a live server deviated from a
scenario (``deviated``): its own symbol in the progress and the matrix, its count per adapter, and a
block of its own, apart from the defects, saying what the model did (issue 29, point 1)."""

from __future__ import annotations

import io
from pathlib import Path

from conformance.console.output import Style, visible_width
from conformance.console.summary import SYMBOLS, adapter_lines, deviation_lines, matrix_lines
from conformance.verdicts import STATUS_ORDER
from tests.reporting._runs import DEVIATION_TEXT, DEVIATION_TOOL, build_mixed_run, deviated_only_run, deviated_run

WIDTH = 80


def test_every_status_has_a_symbol_of_its_own() -> None:
    assert list(SYMBOLS) == ["pass", "fail", "error", "unsupported", "xfail", "left", "deviated", "stale"]
    assert set(SYMBOLS) == set(STATUS_ORDER)
    assert len(set(SYMBOLS.values())) == len(SYMBOLS)
    assert SYMBOLS["deviated"] == "~"


def test_the_matrix_and_the_counts_show_a_deviated_case() -> None:
    lines = matrix_lines(deviated_run(), WIDTH)
    assert any("~ model deviated" in line for line in lines)  # the legend
    row = next(line for line in lines if line.startswith("basic/get-weather"))
    assert row.split()[1:] == ["~.", ".F"]  # non-streamed then streamed, per column
    counts = adapter_lines(deviated_run(), WIDTH)
    assert counts[0].split() == ["adapter", "cases", "pass", "deviated", "fail"]
    assert counts[1].split() == ["llama/openai_chat", "2", "1", "1", "-"]
    assert all(visible_width(line) <= WIDTH for line in lines + counts)


def test_the_deviations_are_said_apart_with_what_the_model_did() -> None:
    lines = deviation_lines(deviated_run(), WIDTH)
    assert lines[0] == "2 cases: the model deviated (not a server defect; every one: the reports)"
    assert lines[1] == "  DEVIATED llama/openai_chat basic/get-weather [non_stream]"
    said = " ".join(line.strip() for line in lines[2:4])
    assert said == DEVIATION_TEXT
    assert lines[4] == "  FAIL llama/anthropic basic/get-weather [stream]"  # the malformed answer fails it
    assert lines[5].strip() == DEVIATION_TOOL
    assert all(visible_width(line) <= WIDTH for line in lines)
    assert deviation_lines(build_mixed_run(), WIDTH) == []


def test_the_deviations_are_cut_after_the_first_few_and_painted_in_their_colour() -> None:
    lines = deviation_lines(deviated_run(), WIDTH, shown=1)
    assert lines[-1] == "  and 1 more"
    painted = deviation_lines(deviated_run(), WIDTH, style=Style(colour=True))
    assert "\x1b[34mDEVIATED\x1b[0m" in painted[1]


def test_a_run_whose_other_cases_pass_ends_with_exit_0_and_says_what_the_model_did(tmp_path: Path) -> None:
    from conformance.pipeline.finish import finish

    out = io.StringIO()
    code = finish(deviated_only_run(), out, progress=None, quiet=False, report_dir=tmp_path, formats=["json", "md"])
    text = out.getvalue()
    assert code == 0  # a deviation is never a failure
    assert "1 case: the model deviated (not a server defect; every one: the reports)" in text
    assert DEVIATION_TEXT in " ".join(text.split())
    assert text.rstrip().splitlines()[-1].startswith("3 cases: 2 pass, 1 deviated")
    assert "## Model deviations" in (tmp_path / "report.md").read_text(encoding="utf-8")
    failing = io.StringIO()
    assert finish(deviated_run(), failing, progress=None, quiet=False, report_dir=tmp_path, formats=[]) == 1
