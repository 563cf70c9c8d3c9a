"""``conformance.console.summary`` and the end of ``conformance run``: what a person reads in an 80-column
terminal.

The full run is the bundled suite's shape (every bundled scenario x the eight bundled adapters, both
modes, a case unsupported where the scenario requires a capability the adapter does not declare: the
runner's own rule), its verdicts made here so the test takes no minute. The failing run is a real
one: ``openai_chat`` with one bug, its non-streamed decoder drops the tool calls (the bug of issue 17),
and beside it a copy whose streamed decoder drops them, so that each mode is blamed once.
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.adapters import BUILTIN, get_adapter
from conformance.adapters.base import Adapter
from conformance.cli import main
from conformance.console.output import visible_width
from conformance.console.progress import LEGEND_WORDS, PROGRESS_HEADING, Progress
from conformance.console.summary import SYMBOLS, adapter_lines, defect_lines, findings_lines, matrix_lines
from conformance.pipeline.finish import finish
from conformance.reporting import report_defects
from conformance.run.runner import case_result, run_result
from conformance.scenarios.loader import load_scenarios
from conformance.scenarios.values import Scenario
from conformance.verdicts import CaseResult, CheckVerdict, Finding

ROOT = Path(__file__).resolve().parents[2]
WIDTH = 80

BUGS = '''
"""openai_chat with one bug in one decoder: the tool calls are dropped."""
import dataclasses
from conformance.adapters import get_adapter
from conformance.model import ToolCall, ToolCallChunk, ToolCallEnd, ToolCallStart

REFERENCE = get_adapter("openai_chat")


def _no_calls(body, *, tools=()):
    response = REFERENCE.response_from_wire(body, tools=tools)
    return dataclasses.replace(response, parts=tuple(p for p in response.parts if not isinstance(p, ToolCall)))


def _no_streamed_calls(chunks, *, tools=()):
    for event in REFERENCE.stream_from_wire(chunks, tools=tools):
        if not isinstance(event, ToolCallStart | ToolCallChunk | ToolCallEnd):
            yield event


NON_STREAM_BUG = dataclasses.replace(REFERENCE, name="chat_whole_bug", response_from_wire=_no_calls)
STREAM_BUG = dataclasses.replace(REFERENCE, name="chat_stream_bug", stream_from_wire=_no_streamed_calls)
'''
SCENARIOS = "arguments/*"


def too_wide(text: str, width: int = WIDTH) -> list[str]:
    return [line for line in text.splitlines() if visible_width(line) > width]


@pytest.fixture
def columns_80(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", str(WIDTH))
    monkeypatch.delenv("FORCE_COLOR", raising=False)


# -- the full bundled run --------------------------------------------------------------------------------


def full_run_cases() -> tuple[list[CaseResult], object]:
    scenarios = list(load_scenarios([]).scenarios)
    adapters = [get_adapter(name) for name in BUILTIN]

    def judged(adapter: Adapter, scenario: Scenario, mode: str) -> CaseResult:
        missing = sorted(scenario.requires - adapter.capabilities)
        if not missing:
            return case_result(adapter, scenario, mode, "pass")
        message = f"requires {', '.join(missing)}, which {adapter.name} does not declare"  # the runner's words
        return case_result(adapter, scenario, mode, "unsupported", message=message)

    cases = [
        judged(adapter, scenario, mode) for adapter in adapters for scenario in scenarios for mode in scenario.modes
    ]
    return cases, run_result(adapters, scenarios, cases)


def test_the_full_runs_summary_fits_80_columns(columns_80: None, tmp_path: Path) -> None:
    cases, result = full_run_cases()
    out = io.StringIO()
    progress = Progress(out)
    for case in cases:
        progress(case)
    code = finish(result, out, progress=progress, quiet=False, report_dir=tmp_path, formats=[])  # type: ignore[arg-type]
    text = out.getvalue()
    assert code == 0
    assert too_wide(text) == []
    assert "\x1b[" not in text  # not a terminal: no colour
    # every case is one progress symbol; the adapters each have a line of counts
    progress_lines = text.split("\n\n")[0].splitlines()
    assert progress_lines[:2] == [
        PROGRESS_HEADING,
        "  " + "  ".join(f"{SYMBOLS[s]} {w}" for s, w in LEGEND_WORDS.items()),
    ]
    assert sum(sum(ch in ".u" for ch in line[19:]) for line in progress_lines[2:]) == len(cases)
    unsupported = sum(c.status == "unsupported" for c in cases)
    assert (
        text.splitlines()[-1]
        == f"{len(cases)} cases: {len(cases) - unsupported} pass, {unsupported} unsupported; reports: none"
    )
    for name in BUILTIN:
        assert re.search(rf"^{name} +{sum(c.adapter == name for c in cases)} ", text, re.M), name
    # no matrix: a scenario only unsupported by declaration is counted in one line, with why
    assert matrix_lines(result, WIDTH) == []  # type: ignore[arg-type]
    assert "do not all pass" not in text
    [said] = [n for n, line in enumerate(text.splitlines()) if line.startswith(f"{unsupported} cases unsupported: ")]
    why = " ".join(" ".join(text.splitlines()[said : said + 4]).split())  # wrapped lines, indents aside
    assert "images_in_tool_results not declared" in why and "reasoning_replay not declared" in why


def test_k_narrows_every_table(columns_80: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``-k`` on a real run: only the adapter that ran has a line; no scenario that did not run shows."""
    code = main(["run", "-k", "openai_chat and basic/", "--report-dir", str(tmp_path), "--format", "json"])
    out = capsys.readouterr().out
    assert code == 0
    assert too_wide(out) == []
    assert re.search(r"^openai_chat +\d+ +\d+$", out, re.M)
    for name in BUILTIN:
        if name != "openai_chat":
            assert name not in out
    assert "arguments/" not in out and "tool_choice/" not in out


def test_a_long_scenario_id_and_many_adapters_still_fit() -> None:
    scenarios = list(load_scenarios([]).scenarios)[:2]
    adapters = [get_adapter(name) for name in BUILTIN] * 3  # 24 columns
    adapters = [dataclasses.replace(a, name=f"{a.name}_{n}_with_a_long_name") for n, a in enumerate(adapters)]
    long_id = "some/very/deeply/nested/folder/of/scenarios/with_a_name_that_goes_on_and_on"
    cases = [
        CaseResult(adapter=a.name, scenario=long_id if n else s.id, mode=m, status="fail" if n else "pass")
        for a in adapters
        for n, s in enumerate(scenarios)
        for m in ("non_stream", "stream")
    ]
    result = run_result(adapters, scenarios, cases)
    for width in (80, 60, 40):
        lines = matrix_lines(result, width) + adapter_lines(result, width) + findings_lines(result, width)
        assert lines and [line for line in lines if visible_width(line) > width] == []


# -- a run with one bug ------------------------------------------------------------------------------------


@pytest.fixture
def bugs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    (tmp_path / "term_bugs.py").write_text(BUGS, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    sys.modules.pop("term_bugs", None)


def run_buggy(
    capsys: pytest.CaptureFixture[str], *adapters: str, verbose: bool = False
) -> tuple[int, str, dict[str, object]]:
    argv = ["run", "--scenarios", SCENARIOS, "--report-dir", "reports", "--format", "json", "-j", "1"]
    argv += ["-v"] if verbose else []
    for adapter in adapters:
        argv += ["--adapter", f"term_bugs:{adapter}"]
    code = main(argv)
    out = capsys.readouterr().out
    return code, out, json.loads(Path("reports/report.json").read_text(encoding="utf-8"))


def failing(report: dict[str, object], check: str) -> list[tuple[dict[str, object], dict[str, object]]]:
    """(case, finding) of every finding of ``check``."""
    found = []
    for case in report["cases"]:  # type: ignore[attr-defined]
        for verdict in case["checks"]:
            if verdict["check"] == check:
                found += [(case, f) for f in verdict["findings"]]
    return found


def test_a_one_bug_adapters_findings_are_grouped_and_blame_the_wrong_mode(
    bugs: Path, columns_80: None, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, report = run_buggy(capsys, "NON_STREAM_BUG", verbose=True)
    assert code == 1
    assert too_wide(out) == []
    # -v: after the defects, every failing case, grouped: one headline per check, with the count and the mode
    calls = failing(report, "roundtrip.calls")
    folds = failing(report, "streaming.fold")
    assert calls and folds
    assert f"roundtrip.calls: failed in {len(calls)} cases, all non-streamed, on chat_whole_bug" in out
    assert f"streaming.fold: failed in {len(folds)} cases, all streamed, on chat_whole_bug" in out
    assert f"the non-streamed decoding is wrong in all {len(folds)}" in " ".join(out.split())
    assert out.count("roundtrip.calls: failed") == 1 and out.count("streaming.fold: failed") == 1
    # expected is the scenario's, actual the adapter's
    for case, finding in calls:
        assert case["mode"] == "non_stream"
        assert finding["actual"] == [] and finding["expected"], finding
        assert finding["message"] == f"expected 1 call {finding['expected'][0]}, got none"
    for case, finding in folds:
        assert case["mode"] == "stream"
        assert finding["actual"] == [] and finding["expected"][0]["name"], finding  # the streamed calls are right
        assert finding["message"].startswith("the non-streamed decoding is wrong: it gives no call where the scenario")
    # plain words: no None pairs, no diff-library words
    assert "None" not in out
    for jargon in ("iterable item", "dictionary item", "values changed", "type changes", "(expected null"):
        assert jargon not in out
    # every failing case ends with its rerun command, and that command reruns it alone
    reruns = rerun_commands(out)
    failed = [c for c in report["cases"] if c["status"] == "fail"]  # type: ignore[attr-defined]
    assert len(set(reruns)) == len(failed)
    command = next(c for c in reruns if c.endswith("::arguments/empty_string::stream"))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(bugs)])}
    words = shlex.split(command)
    assert words[0] == "conformance"
    done = subprocess.run(
        [sys.executable, "-m", "conformance", *words[1:], "--report-dir", "again", "--format", "json"],
        cwd=bugs,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    again = json.loads((bugs / "again" / "report.json").read_text(encoding="utf-8"))
    assert [(c["adapter"], c["scenario"], c["mode"], c["status"]) for c in again["cases"]] == [
        ("chat_whole_bug", "arguments/empty_string", "stream", "fail")
    ]


def test_a_streamed_decoder_bug_blames_the_streamed_mode(
    bugs: Path, columns_80: None, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, report = run_buggy(capsys, "STREAM_BUG", verbose=True)
    assert code == 1 and too_wide(out) == []
    assert "the streamed decoding is the wrong one" in " ".join(out.split())  # the defect says it too
    folds = failing(report, "streaming.fold")
    assert folds
    for case, finding in folds:
        assert case["mode"] == "stream"
        assert finding["expected"][0]["name"] and finding["actual"] == [], finding  # the non-streamed calls are right
        assert finding["message"].startswith("the streamed decoding is wrong: it gives no call where the scenario")
    assert f"the streamed decoding is wrong in all {len(folds)}" in " ".join(out.split())


def rerun_commands(out: str) -> list[str]:
    """The rerun commands printed, their continued lines joined as the shell joins them."""
    commands = []
    lines = out.splitlines()
    for n, line in enumerate(lines):
        if line.strip().startswith("rerun: "):
            text = line.strip().removeprefix("rerun: ")
            while text.endswith("\\"):  # " \\": the next word; "\\" alone: the same word goes on
                n += 1
                text = text[:-1] + lines[n].lstrip()
            commands.append(" ".join(shlex.split(text)))
    return commands


def test_a_finding_with_nothing_on_one_side_says_so_without_none() -> None:
    finding = Finding(check="recovery.arguments_error", message="the malformed call is missing", path="$.tool_calls[0]")
    case = CaseResult(
        adapter="a",
        scenario="s",
        mode="non_stream",
        status="fail",
        checks=(CheckVerdict(check=finding.check, status="fail", findings=(finding,)),),
    )
    lines = findings_lines(run_result([], [], [case]), WIDTH)
    assert "    $.tool_calls[0]: the malformed call is missing" in lines
    assert not any("expected" in line or "actual" in line or "None" in line for line in lines)


def test_forced_colour_paints_the_statuses_and_keeps_the_width(
    bugs: Path, columns_80: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.delenv("NO_COLOR", raising=False)
    _, out, _ = run_buggy(capsys, "NON_STREAM_BUG", verbose=True)
    assert "\x1b[1;31mFAIL\x1b[0m chat_whole_bug" in out and too_wide(out) == []
    assert "\x1b[1;31m1. [loses caller data]" in out  # the defect's first line, in the colour of a failure
    monkeypatch.setenv("NO_COLOR", "1")
    _, out, _ = run_buggy(capsys, "NON_STREAM_BUG", verbose=True)
    assert "\x1b[" not in out


def test_the_live_bar_counts_the_cases_and_goes_away(columns_80: None) -> None:
    out = io.StringIO()
    progress = Progress(out, total=3, live=True)
    for status in ("pass", "fail", "pass"):
        progress(CaseResult(adapter="openai_chat", scenario="s", mode="stream", status=status))  # type: ignore[arg-type]
    progress.done()
    shown = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.getvalue())
    assert "3/3" in shown and "2 pass" in shown and "1 fail" in shown
    assert "openai_chat" in shown
    assert progress.bar is None


# -- defects first: the targets of issue 25, at 80 columns ------------------------------------------------------

MUTANT_CLIENTS = ROOT / "tests" / "_mutant_clients.py"
"""The clients with one bug each (``tests._mutant_clients``), given to ``certify`` by their file."""


def before_matrix(out: str) -> list[str]:
    lines = out.splitlines()
    end = next((n for n, line in enumerate(lines) if line == "Scenarios that do not all pass"), len(lines))
    return lines[:end]


def defect_block(out: str) -> list[str]:
    """The lines of the defects, from their heading to the blank line before the matrix."""
    lines = before_matrix(out)
    start = next(n for n, line in enumerate(lines) if re.match(r"^\d+ defects?\b", line))
    return [line for line in lines[start:] if line.strip()]


def test_the_one_bug_adapter_on_the_whole_suite_prints_one_defect_before_the_matrix(
    bugs: Path, columns_80: None, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["run", "--adapter", "term_bugs:NON_STREAM_BUG", "--report-dir", "reports", "--format", "json"])
    out = capsys.readouterr().out
    report = json.loads(Path("reports/report.json").read_text(encoding="utf-8"))
    assert code == 1 and too_wide(out) == []
    failed = [c for c in report["cases"] if c["status"] == "fail"]
    assert len(failed) > 100  # 899 lines before: one block per failing case
    assert len(before_matrix(out)) <= 40, "\n".join(before_matrix(out))
    [calls] = [d for d in report["defects"] if d["check"] == "roundtrip.calls"]
    text = " ".join(" ".join(defect_block(out)).split())
    assert "1. [loses caller data] Drops tool calls from non-streamed answers: the model called" in text
    assert f"in {len(calls['cases'])} cases" in text and "the non-streamed decoding is the wrong one" in text
    assert "restated by streaming.fold" in text
    evidence = calls["evidence"]
    assert evidence["mode"] == "non_stream" and evidence["shown"][1] == "actual []"
    assert f"e.g. {evidence['scenario']} [non_stream], turn 0 $.tool_calls" in text
    assert f"-k chat_whole_bug::{evidence['scenario']}::non_stream" in text  # the command that reruns it


def certified(capsys: pytest.CaptureFixture[str], client: str) -> str:
    """What ``certify`` of a client of ``tests._mutant_clients`` prints on the multi-turn scenarios (it
    fails: exit 1, within 80 columns)."""
    argv = ["certify", "--client", f"{MUTANT_CLIENTS}:{client}", "--report-dir", "reports", "--format", "json"]
    code = main([*argv, "--scenarios", "multi_turn/*"])
    out = capsys.readouterr().out
    assert code == 1 and too_wide(out) == []
    return out


def test_the_dropped_id_client_prints_its_defect_in_15_lines(
    bugs: Path, columns_80: None, capsys: pytest.CaptureFixture[str]
) -> None:
    out = certified(capsys, "DROPPED")
    block = defect_block(out)
    assert len(block) <= 15, "\n".join(block)  # 118 before: five checks restating one fact, case by case
    text = " ".join(" ".join(block).split())
    assert block[0].startswith("1 defect ")
    assert "1. [loses caller data] Drops the call id from the result of the first call" in text
    assert "OpenAI Chat would reject the request ('tool_call_id' is a required property)" in text
    assert "to do: send back each call's id exactly as the provider sent it" in text
    assert "check: client.call_ids; restated by roundtrip.call_ids, translation.request_" in text
    assert 'actual [""]' in text


def test_the_reverse_order_client_is_told_order_with_both_orders(
    bugs: Path, columns_80: None, capsys: pytest.CaptureFixture[str]
) -> None:
    out = certified(capsys, "REVERSED")
    block = defect_block(out)
    text = " ".join(" ".join(block).split())
    assert "1. [changes meaning] Sends tool results in a different order than the calls they answer." in text
    assert "to do: send results in the order of the calls they answer" in text
    calls = [line for line in block if line.strip().startswith("the calls:")]
    sent = [line for line in block if line.strip().startswith("the results sent:")]
    assert len(calls) == len(sent) == 1
    assert calls[0].split(":", 1)[1].split(", ") != sent[0].split(":", 1)[1].split(", ")
    assert sorted(x.strip() for x in calls[0].split(":", 1)[1].split(",")) == sorted(
        x.strip() for x in sent[0].split(":", 1)[1].split(",")
    )
    assert len(block) <= 15


def test_a_certified_librarys_report_at_80_columns() -> None:
    """pydantic-ai's committed certification: its Gemini mapping of finish reasons is one defect, not the
    ~120 cases it fails."""
    report = json.loads((ROOT / "docs/certified/pydantic-ai/report.json").read_text(encoding="utf-8"))
    defects = report_defects(report)
    lines = defect_lines(defects, WIDTH)
    assert [line for line in lines if visible_width(line) > WIDTH] == []
    assert len(lines) <= 12 * len(defects)
    gemini = [d for d in defects if any(a.endswith("/gemini") for a in d["adapters"]) and d["kind"] == "defect"]
    mapping = next(d for d in gemini if d["check"] == "roundtrip.finish_reason")
    failing_on_gemini = sum(c["status"] == "fail" for c in report["cases"] if c["adapter"].endswith("/gemini"))
    assert len(mapping["cases"]) > failing_on_gemini / 2  # one defect for most of the failing cases
    assert mapping["severity"] == "changes_meaning"
    assert mapping["sentence"].startswith('Maps the finish reason "tool_calls" (the model asks for its tool calls')
    assert mapping["evidence"]["shown"] == ['expected "tool_calls"', 'actual "stop"']
    shown = " ".join(" ".join(lines).split())
    assert mapping["sentence"] in shown


def test_a_hostile_or_wide_scenario_id_in_the_matrix_is_escaped_and_fits() -> None:
    scenarios = list(load_scenarios([]).scenarios)[:1]
    adapter = get_adapter("openai_chat")
    ids = ["evil/\x1b[2J\nforged line", "天气/查询" * 8]
    cases = [
        CaseResult(adapter=adapter.name, scenario=i, mode=m, status="fail")
        for i in ids
        for m in ("non_stream", "stream")
    ]
    result = run_result([adapter], scenarios, cases)
    for width in (80, 40):
        lines = matrix_lines(result, width)
        assert not any(ch in line for line in lines for ch in "\x1b\n"), lines
        assert [line for line in lines if visible_width(line) > width] == []
        assert any(line.startswith("evil/\\x1b[2J\\nforged") for line in lines), lines


def test_the_last_lines_fit_even_with_a_long_label(columns_80: None, tmp_path: Path) -> None:
    """certify's last line starts with the client's name: a long one wraps the counts, never past 80."""
    _, result = full_run_cases()
    out = io.StringIO()
    reports = tmp_path / "a-long-folder-name-for-the-reports-of-this-run"
    code = finish(
        result,
        out,
        progress=None,
        quiet=True,
        report_dir=reports,
        formats=["json"],
        label="reversed-results-with-a-long-name: ",
    )  # type: ignore[arg-type]
    assert code == 0 and too_wide(out.getvalue()) == []
    assert out.getvalue().splitlines()[-1] == "reports: listed above"
