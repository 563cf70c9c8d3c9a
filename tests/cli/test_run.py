from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conformance.cli import main
from conformance.errors import UsageError
from conformance.pipeline.selection import CHECK_IDS, load_adapter
from conformance.reporting import FORMATS
from conformance.scenarios.loader import default_scenarios_dir, scenario_files


def test_checks_takes_check_ids_and_keeps_only_their_verdicts(tmp_path: Path) -> None:
    """``--checks roundtrip.calls,streaming``: the roundtrip family runs, but only roundtrip.calls is kept,
    beside the whole streaming family; the report records what was asked."""
    argv = ["run", "--adapters", "anthropic", "--scenarios", "basic/get_time", "-j", "1", "--format", "json"]
    assert main([*argv, "--report-dir", str(tmp_path), "--checks", "roundtrip.calls,streaming"]) == 0
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    ran = {case["mode"]: {v["check"] for v in case["checks"]} for case in report["cases"]}
    assert ran["non_stream"] == {"roundtrip.calls"}
    assert ran["stream"] - {"roundtrip.calls"} and all(
        check.startswith("streaming.") for check in ran["stream"] - {"roundtrip.calls"}
    )
    assert "roundtrip.calls" in ran["stream"]
    assert report["selection"]["checks"] == ["roundtrip.calls", "streaming"]


@pytest.mark.parametrize(
    ("checks", "message"),
    [
        ("roundtrip.cals", "unknown check 'roundtrip.cals': did you mean 'roundtrip.calls'?"),
        ("roundtrip,streamng", "unknown check 'streamng': did you mean 'streaming'?"),
        ("speed", "unknown check 'speed' ("),
    ],
)
def test_an_unknown_check_is_a_usage_error_with_the_nearest_name_and_where_the_names_are(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], checks: str, message: str
) -> None:
    assert main(["run", "--checks", checks, "--report-dir", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "--checks takes the families translation, roundtrip, streaming, recovery, client" in err
    assert "`conformance list` shows" in err
    assert not (tmp_path / "r").exists()


def test_a_misspelt_wire_format_is_a_usage_error_at_load_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before any case runs: exit 2, the field, and the valid wire formats (not one ERROR per case
    with a hint to record cassettes)."""
    (tmp_path / "typo_adapter.py").write_text(
        "from dataclasses import replace\n"
        "from conformance.adapters import get_adapter\n"
        "ADAPTER = replace(get_adapter('anthropic'), name='typo', wire_format='antropic')\n",
        encoding="utf-8",
    )
    (tmp_path / "duck_adapter.py").write_text(
        "from conformance.adapters import get_adapter\n"
        "_A = get_adapter('anthropic')\n"
        "class ADAPTER:\n"
        "    name = 'duck'\n"
        "    wire_format = 'anthropic'\n"
        "    capabilities = {'streaming', 'parallel_tools'}\n"
        "    tools_to_wire = staticmethod(_A.tools_to_wire)\n"
        "    request_to_wire = staticmethod(_A.request_to_wire)\n"
        "    request_from_wire = staticmethod(_A.request_from_wire)\n"
        "    response_from_wire = staticmethod(_A.response_from_wire)\n"
        "    stream_from_wire = staticmethod(_A.stream_from_wire)\n"
        "    error_from_wire = staticmethod(_A.error_from_wire)\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    from conformance.adapters.base import CAPABILITIES, WIRE_FORMATS
    from conformance.cli import main

    assert main(["run", "--adapter", "typo_adapter:ADAPTER", "--report-dir", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert "unknown wire_format 'antropic'" in err and all(w in err for w in WIRE_FORMATS)
    assert main(["run", "--adapter", "duck_adapter:ADAPTER", "--report-dir", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert "unknown capability parallel_tools" in err and all(c in err for c in CAPABILITIES)
    assert not (tmp_path / "r").exists()


def test_a_known_gap_naming_no_check_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    import dataclasses
    import types

    from conformance.adapters import get_adapter

    module = types.ModuleType("gap_typo_adapter")
    module.ADAPTER = dataclasses.replace(get_adapter("anthropic"), known_gaps={"roundtrip.txt": "typo"})  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "gap_typo_adapter", module)
    with pytest.raises(
        UsageError, match=r"known gap 'roundtrip\.txt' names no check \(valid check ids: .*roundtrip\.text"
    ):
        load_adapter("gap_typo_adapter:ADAPTER")


def test_every_check_id_a_run_gives_is_listed() -> None:
    from conformance.adapters import get_adapter
    from conformance.run.runner import RunOptions, run_suite
    from conformance.scenarios.loader import load_scenarios

    root = Path(__file__).resolve().parents[2]
    scenarios = [s for s in load_scenarios().scenarios if s.id in ("basic/get_time", "errors/rate_limit")]
    result = run_suite(scenarios, [get_adapter("anthropic")], RunOptions(cassette_dir=root / "cassettes"))
    seen = {v.check for c in result.cases for v in c.checks}
    listed = {check for ids in CHECK_IDS.values() for check in ids}
    assert seen and seen <= listed


def test_exhaustive_runs_get_a_longer_default_timeout(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Every 2-way cut decodes a stream again: a case costs the square of its streams' length, so
    ``--exhaustive`` gives each case ``EXHAUSTIVE_TIMEOUT`` unless ``--timeout`` says otherwise."""
    from conformance.cli import main
    from conformance.pipeline import selection as run_module

    seen: list[float] = []

    def capture(scenarios: object, adapters: object, options: Any, **kwargs: Any) -> Any:
        seen.append(options.timeout)
        raise SystemExit(0)

    monkeypatch.setattr("conformance.run.runner.run_suite", capture)
    for argv, expected in (
        ([], run_module.TIMEOUT),
        (["--exhaustive"], run_module.EXHAUSTIVE_TIMEOUT),
        (["--exhaustive", "--timeout", "7"], 7.0),
    ):
        with pytest.raises(SystemExit):
            main(["run", "-k", "get_time", "--report-dir", str(tmp_path), *argv])
        assert seen.pop() == expected
    assert run_module.EXHAUSTIVE_TIMEOUT > run_module.TIMEOUT


# -- Ctrl-C, closed pipes, the report folder and empty selections (issue 14) ------------------------------

REPO = Path(__file__).resolve().parents[2]
SYMBOLS = set(".FEuxS")


def interrupt_after(argv: list[str], *, cases: int, cwd: Path) -> tuple[int, str, str]:
    """Start ``conformance ARGV`` in its own process group, wait until ``cases`` progress symbols are
    out, then Ctrl-C the group as a terminal does; the exit code, all of stdout, and stderr."""
    process = subprocess.Popen(
        [sys.executable, "-m", "conformance", *argv],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    assert process.stdout is not None
    seen = b""
    while sum(chr(b) in SYMBOLS for b in seen.partition(b"S stale\n")[2].rpartition(b"  ")[2]) < cases:
        chunk = os.read(process.stdout.fileno(), 1)
        assert chunk, f"the run ended before {cases} cases: {seen!r}"
        seen += chunk
    os.killpg(process.pid, signal.SIGINT)
    out, err = process.communicate(timeout=120)
    return process.returncode, (seen + out).decode(), err.decode()


def progress_symbols(out: str) -> int:
    """How many cases the progress lines show (``adapter   ..F.u``: the symbols after the name, below the
    heading and the legend that ends in ``S stale``)."""
    lines = out.split("\n\n", 1)[0].partition("S stale\n")[2].splitlines()
    return sum(sum(c in SYMBOLS for c in line.split(maxsplit=1)[1]) for line in lines if " " in line.strip())


@pytest.mark.skipif(sys.platform == "win32", reason="process groups and SIGINT are POSIX")
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_ctrl_c_writes_partial_reports_of_the_finished_cases_marked_incomplete(tmp_path: Path, jobs: str) -> None:
    reports = tmp_path / "reports"
    argv = ["run", "--adapters", "openai_chat,anthropic", "-j", jobs, "--report-dir", str(reports)]
    code, out, err = interrupt_after(argv, cases=12, cwd=tmp_path)
    assert code == 130, err
    assert "Traceback" not in err and "Exception ignored" not in err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("conformance run: interrupted (Ctrl-C) after ")
    assert f"partial reports (marked incomplete): {reports / 'report.json'}" in lines[0]
    data = json.loads((reports / "report.json").read_text(encoding="utf-8"))
    assert data["incomplete"].startswith("interrupted (Ctrl-C) after")
    assert data["summary"]["verdict"] == "error"
    finished = len(data["cases"])
    assert 12 <= finished < 2 * 2 * 82  # only what finished, not the whole selection
    assert finished == progress_symbols(out)  # exactly the cases shown as finished
    assert f"after {finished} finished cases" in lines[0]
    assert "**Incomplete report**" in (reports / "report.md").read_text(encoding="utf-8")
    assert 'class="incomplete"' in (reports / "report.html").read_text(encoding="utf-8")
    junit = (reports / "junit.xml").read_text(encoding="utf-8")
    assert '<property name="incomplete" value="interrupted (Ctrl-C)' in junit


@pytest.mark.skipif(sys.platform == "win32", reason="process groups and SIGINT are POSIX")
def test_ctrl_c_in_certify_writes_partial_reports_marked_incomplete(tmp_path: Path) -> None:
    driver = tmp_path / "acme_driver.py"
    driver.write_text(
        "from conformance.adapters import for_format\n"
        "from conformance.clients.translator import TranslatorClient\n"
        'CLIENT = TranslatorClient(for_format("anthropic"), name="acme")\n'
    )
    reports = tmp_path / "reports"
    argv = ["certify", "--client", f"{driver}:CLIENT", "--report-dir", str(reports)]
    code, out, err = interrupt_after(argv, cases=6, cwd=tmp_path)
    assert code == 130, err
    assert len(err.splitlines()) == 1 and err.startswith("conformance certify: interrupted (Ctrl-C) after "), err
    data = json.loads((reports / "report.json").read_text(encoding="utf-8"))
    assert data["incomplete"] and 6 <= len(data["cases"]) == progress_symbols(out)


SMALL_PIPE = ("--adapter", "openai_chat", "--scenarios", "basic/*", "-j", "1")


def test_a_closed_pipe_does_not_stop_the_run_or_its_reports(tmp_path: Path) -> None:
    """``conformance run | head -1``: the output goes quiet, the run ends, the reports are written and
    the exit code is the run's own."""
    reports = tmp_path / "reports"
    process = subprocess.Popen(
        [sys.executable, "-m", "conformance", "run", *SMALL_PIPE, "--report-dir", str(reports)],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    assert os.read(process.stdout.fileno(), 1)
    process.stdout.close()
    with process.stderr:
        err = process.stderr.read().decode()
    assert process.wait(timeout=120) == 0, err
    assert err == ""
    data = json.loads((reports / "report.json").read_text(encoding="utf-8"))
    assert data["incomplete"] is None and len(data["cases"]) == 16


def run_main(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


BUNDLED_SCENARIOS = len(scenario_files([default_scenarios_dir()]))
"""The number of bundled scenarios (it grows as scenarios are added)."""

SMALL = ("--adapter", "openai_chat", "--scenarios", "basic/single_call", "-j", "1")


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda d: d.write_text("x"), "it is a file, not a folder"),
        (lambda d: (d / "report.json").mkdir(parents=True), "report.json is a folder"),
    ],
)
def test_a_report_dir_that_cannot_be_written_is_a_usage_error_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make: Any, reason: str
) -> None:
    target = tmp_path / "reports"
    make(target)
    code, out, err = run_main(capsys, "run", *SMALL, "--report-dir", str(target))
    assert code == 2 and out == ""  # not a case ran: no progress, no matrix
    assert err.startswith(f"conformance run: error: --report-dir {target}: ") and reason in err


def test_a_report_dir_under_a_file_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "file").write_text("x")
    code, _, err = run_main(capsys, "run", *SMALL, "--report-dir", str(tmp_path / "file" / "reports"))
    assert code == 2 and "cannot create it (Not a directory" in err


def test_a_missing_report_dir_is_created_with_its_parents(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "a" / "b" / "reports"
    code, _, _ = run_main(capsys, "run", *SMALL, "--report-dir", str(target))
    assert code == 0 and (target / "report.json").is_file()


@pytest.mark.parametrize(
    ("selection", "named"),
    [
        (
            ("-k", "no_such_case"),
            f"-k 'no_such_case' selects no case of {BUNDLED_SCENARIOS} scenarios x 1 adapters",
        ),
        (("--scenarios", "EMPTY"), "--scenarios EMPTY selects no case of 0 scenarios"),
        (("-k", "stream and not stream"), "-k 'stream and not stream' selects no case"),
    ],
)
def test_an_empty_selection_exits_2_with_a_hint_and_leaves_the_reports_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], selection: tuple[str, ...], named: str
) -> None:
    reports = tmp_path / "reports"
    reports.mkdir()
    (reports / "report.json").write_text('{"old": true}')
    (tmp_path / "empty").mkdir()
    argv = [a.replace("EMPTY", str(tmp_path / "empty")) for a in selection]
    code, out, err = run_main(capsys, "run", "--adapter", "openai_chat", *argv, "--report-dir", str(reports))
    assert code == 2 and out == ""
    assert named.replace("EMPTY", str(tmp_path / "empty")) in err
    assert "`conformance list` shows the scenario ids and adapters" in err
    assert f"the reports in {reports} were left as they were" in err
    assert sorted(p.name for p in reports.iterdir()) == ["report.json"]
    assert (reports / "report.json").read_text() == '{"old": true}'


def test_a_report_that_fails_is_one_line_and_exit_1_and_the_others_are_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(report: object) -> str:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setitem(FORMATS, "html", ("report.html", broken))
    code, out, err = run_main(capsys, "run", *SMALL, "--report-dir", str(tmp_path))
    assert code == 1
    assert err == (
        f"conformance run: error: report {tmp_path / 'report.html'}: not written: a value is nested too deeply "
        "to render (RecursionError: maximum recursion depth exceeded)\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["junit.xml", "report.json", "report.md"]
    assert f"reports: {tmp_path / 'report.json'}, {tmp_path / 'report.md'}, {tmp_path / 'junit.xml'}" in out


@pytest.mark.parametrize("command", ["run", "record"])
def test_a_scenarios_dir_that_is_missing_a_file_or_holds_a_link_out_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    (tmp_path / "file.yaml").write_text("x")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "mine.yaml").write_text((REPO / "scenarios/basic/single_call.yaml").read_text())
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "mine.yaml").symlink_to(outside / "mine.yaml")
    extra = ["--emulator", "--cassette-dir", str(tmp_path / "cassettes")] if command == "record" else []
    for folder, message in [
        (tmp_path / "missing", "no such folder"),
        (tmp_path / "file.yaml", "it is a file, not a folder"),
        (tree, "is not under the scenarios folder"),
    ]:
        code, _, err = run_main(capsys, command, *extra, "--scenarios-dir", str(folder))
        assert code == 2, err
        assert err.startswith(f"conformance {command}: error: ") and message in err and str(folder) in err
    assert not (tmp_path / "cassettes").exists()


def test_an_internal_error_mid_run_still_writes_the_reports_of_the_finished_cases(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from conformance.verdicts import CaseResult

    def run_suite(scenarios: object, adapters: object, options: object, *, progress: Any, problems: object) -> Any:
        progress(CaseResult(adapter="openai_chat", scenario="basic/single_call", mode="non_stream", status="pass"))
        raise RuntimeError("a bug of ours")

    monkeypatch.setattr("conformance.run.runner.run_suite", run_suite)
    code, _, err = run_main(capsys, "run", *SMALL, "--report-dir", str(tmp_path))
    assert code == 1
    assert "Traceback" in err and "RuntimeError: a bug of ours" in err  # a bug to report: its traceback
    assert err.splitlines()[-1] == (
        "conformance run: stopped by an internal error (RuntimeError: a bug of ours; please report it) after "
        f"1 finished case; partial reports (marked incomplete): {tmp_path / 'report.json'}, {tmp_path / 'report.md'}, "
        f"{tmp_path / 'report.html'}, {tmp_path / 'junit.xml'}"
    )
    data = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert data["incomplete"].startswith("stopped by an internal error (RuntimeError: a bug of ours")
    assert [c["id"] for c in data["cases"]] == ["openai_chat/basic/single_call/non_stream"]


def test_a_name_stdout_cannot_encode_is_printed_escaped_and_the_reports_written(tmp_path: Path) -> None:
    """A scenario file whose name is not UTF-8 gives an id with a lone surrogate; a strict UTF-8
    stdout (PYTHONIOENCODING=utf-8) prints it escaped instead of ending the run before its reports."""
    folder = tmp_path / "mine" / "basic"
    folder.mkdir(parents=True)
    name = os.fsdecode(b"odd\xff.yaml")
    (folder / name).write_text((REPO / "scenarios/basic/single_call.yaml").read_text())
    reports = tmp_path / "reports"
    argv = ["run", "--adapter", "openai_chat", "--scenarios-dir", str(tmp_path / "mine"), "-k", "odd", "-j", "1"]
    done = subprocess.run(
        [sys.executable, "-m", "conformance", *argv, "--report-dir", str(reports)],
        cwd=tmp_path,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert b"Traceback" not in done.stderr, done.stderr.decode(errors="replace")
    assert done.returncode == 1  # the odd scenario has no cassette: its cases are errors
    assert b"basic/odd\\udcff" in done.stdout
    assert json.loads((reports / "report.json").read_text(encoding="utf-8"))["summary"]["cases"] == 2
