"""A user's ``--scenarios-dir`` and ``--cassette-dir`` add to the bundled ones (theirs win by id, and
the report names their files), and a cassette recorded from another version of its scenario is a
stale cassette with the exact ``conformance record`` line, never a FAIL of the adapter."""

from __future__ import annotations

import json
import shlex
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from conformance.cli import main
from conformance.scenarios import bundled

REPO = Path(__file__).resolve().parents[2]
SCENARIO = "basic/get_time"

DRIVER = """
from conformance.adapters import for_format
from conformance.clients.translator import TranslatorClient

CLIENT = TranslatorClient(for_format("anthropic"), name="acme")
"""


def copy_pair(tmp_path: Path, *, edit: tuple[str, str] | None = None) -> tuple[Path, Path]:
    """The bundled basic/get_time scenario and its anthropic cassette copied into a user's folders,
    the scenario edited after the recording when ``edit`` (old, new) is given."""
    scenarios, cassettes = tmp_path / "my_scenarios", tmp_path / "my_cassettes"
    text = (REPO / "scenarios" / f"{SCENARIO}.yaml").read_text(encoding="utf-8")
    if edit is not None:
        assert edit[0] in text
        text = text.replace(edit[0], edit[1])
    (scenarios / "basic").mkdir(parents=True)
    (scenarios / f"{SCENARIO}.yaml").write_text(text, encoding="utf-8")
    (cassettes / "anthropic" / "basic").mkdir(parents=True)
    cassette = (REPO / "cassettes" / "anthropic" / f"{SCENARIO}.yaml").read_text(encoding="utf-8")
    (cassettes / "anthropic" / f"{SCENARIO}.yaml").write_text(cassette, encoding="utf-8")
    return scenarios, cassettes


def run(tmp_path: Path, *args: str) -> tuple[int, dict[str, Any]]:
    reports = tmp_path / "reports"
    code = main(
        [
            *("run", "--adapters", "anthropic", "--scenarios", SCENARIO, "--jobs", "1"),
            *("--report-dir", str(reports), "--format", "json", *args),
        ]
    )
    report: dict[str, Any] = json.loads((reports / "report.json").read_text(encoding="utf-8"))
    return code, report


def record_line(*extra: str) -> str:
    return shlex.join(["conformance", "record", "--emulator", "--adapter", "anthropic", "--scenario", SCENARIO, *extra])


def test_the_bundled_folders_are_the_repository_folders_in_a_checkout() -> None:
    assert bundled.is_checkout()
    assert bundled.scenarios_dir() == REPO / "scenarios"
    assert bundled.cassettes_dir() == REPO / "cassettes"


def test_a_run_from_another_directory_finds_the_bundled_cassettes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, report = run(tmp_path)
    assert code == 0
    assert [c["status"] for c in report["cases"]] == ["pass", "pass"]
    assert {c["cassette"] for c in report["cases"]} == {str(REPO / "cassettes" / "anthropic" / f"{SCENARIO}.yaml")}
    assert "file" not in report["scenarios"][0]


def test_the_users_scenario_and_cassette_win_and_the_report_names_their_files(tmp_path: Path) -> None:
    scenarios, cassettes = copy_pair(tmp_path)
    code, report = run(tmp_path, "--scenarios-dir", str(scenarios), "--cassette-dir", str(cassettes))
    assert code == 0
    assert [c["status"] for c in report["cases"]] == ["pass", "pass"]
    assert {c["cassette"] for c in report["cases"]} == {str(cassettes / "anthropic" / f"{SCENARIO}.yaml")}
    assert report["scenarios"] == [
        {**report["scenarios"][0], "id": SCENARIO, "file": str(scenarios / f"{SCENARIO}.yaml")}
    ]


def test_a_scenario_edited_after_recording_is_a_stale_cassette_with_the_record_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the model's final answer changes: replaying the old cassette would FAIL the adapter
    scenarios, cassettes = copy_pair(tmp_path, edit=("昨天是2023年5月22日。", "昨天是2023年5月23日。"))
    code, report = run(tmp_path, "--scenarios-dir", str(scenarios), "--cassette-dir", str(cassettes))
    out = capsys.readouterr().out
    assert code == 1  # stale fails a run
    assert [c["status"] for c in report["cases"]] == ["stale", "stale"]  # STALE, as the legend says; not ERROR
    command = record_line("--scenarios-dir", str(scenarios), "--cassette-dir", str(cassettes))
    for case in report["cases"]:
        assert case["message"].startswith(f"stale cassette {cassettes / 'anthropic' / SCENARIO}.yaml: ")
        assert case["message"].endswith(f"re-record it with `{command}`")
        assert case["checks"] == []
    assert command in out

    # the line it prints is the fix
    assert main(shlex.split(command)[1:]) == 0
    code, report = run(tmp_path, "--scenarios-dir", str(scenarios), "--cassette-dir", str(cassettes))
    assert code == 0
    assert [c["status"] for c in report["cases"]] == ["pass", "pass"]


def test_a_stale_cassette_is_stale_in_the_counts_the_matrix_every_report_and_the_exit_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenarios, cassettes = copy_pair(tmp_path, edit=("昨天是2023年5月22日。", "昨天是2023年5月23日。"))
    reports = tmp_path / "reports"
    code = main(
        [
            *("run", "--adapters", "anthropic", "--scenarios", SCENARIO, "--jobs", "1"),
            *("--scenarios-dir", str(scenarios), "--cassette-dir", str(cassettes), "--report-dir", str(reports)),
        ]
    )
    out = capsys.readouterr().out
    assert code == 1
    lines = out.splitlines()
    assert lines[-1].startswith("2 cases: 2 stale;")  # the terminal's counts: no "error", no "stale 0"
    assert any(line.split() == ["anthropic", "SS"] for line in lines)  # progress: S, as the legend says
    assert any(line.split() == [SCENARIO, "SS"] for line in lines)  # the matrix
    assert "S stale" in " ".join(out.split())  # the legend, true of what it shows
    summary = json.loads((reports / "report.json").read_text(encoding="utf-8"))["summary"]
    assert summary["verdict"] == "stale"
    assert {s: n for s, n in summary["statuses"].items() if n} == {"stale": 2}
    markdown = (reports / "report.md").read_text(encoding="utf-8")
    assert "**FAILED**: 2 stale" in markdown and "| stale | 2 |" in markdown and "| error | 0 |" in markdown
    assert "**stale** / **stale**" in markdown
    html = (reports / "report.html").read_text(encoding="utf-8")
    assert '<span class="counts">2 stale</span>' in html
    assert f'title="anthropic/{SCENARIO}/non_stream: stale"' in html
    junit = ET.fromstring((reports / "junit.xml").read_text(encoding="utf-8"))
    assert (junit.get("tests"), junit.get("failures"), junit.get("errors")) == ("2", "2", "0")
    for failure in junit.iter("failure"):
        assert "stale cassette" in (failure.get("message") or "")


def test_a_cassette_without_a_fingerprint_is_not_judged_stale(tmp_path: Path) -> None:
    scenarios, cassettes = copy_pair(tmp_path, edit=('behavior: "', 'behavior: "Edited. '))
    path = cassettes / "anthropic" / f"{SCENARIO}.yaml"
    code, report = run(tmp_path, "--scenarios-dir", str(scenarios), "--cassette-dir", str(cassettes))
    assert code == 1
    assert "stale cassette" in report["cases"][0]["message"]  # the behaviour is part of the scenario
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(line for line in lines if '"scenario_sha256"' not in line), encoding="utf-8")
    code, report = run(tmp_path, "--scenarios-dir", str(scenarios), "--cassette-dir", str(cassettes))
    assert code == 0
    assert [c["status"] for c in report["cases"]] == ["pass", "pass"]


def test_certify_reports_a_stale_cassette_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenarios, _ = copy_pair(tmp_path, edit=("昨天是2023年5月22日。", "昨天是2023年5月23日。"))
    driver = tmp_path / "acme_driver.py"
    driver.write_text(DRIVER)
    reports = tmp_path / "reports"
    code = main(
        [
            *("certify", "--client", f"{driver}:CLIENT", "--scenarios", SCENARIO),
            *("--scenarios-dir", str(scenarios), "--report-dir", str(reports), "--format", "json"),
        ]
    )
    assert code == 1
    cases = json.loads((reports / "report.json").read_text(encoding="utf-8"))["cases"]
    assert cases and {c["status"] for c in cases} == {"stale"}
    command = record_line("--scenarios-dir", str(scenarios))
    assert all(c["message"].endswith(f"re-record it with `{command}`") for c in cases)
    assert "stale cassette" in capsys.readouterr().out


def test_an_installed_package_records_only_into_a_named_folder(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(bundled, "is_checkout", lambda: False)
    assert main(["record", "--emulator", "--adapter", "anthropic", "--scenario", SCENARIO]) == 2
    assert "--cassette-dir DIR is required" in capsys.readouterr().err


def test_record_with_a_scenarios_dir_records_only_the_users_scenarios(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenarios = tmp_path / "my_scenarios"
    (scenarios / "acme").mkdir(parents=True)
    (scenarios / "acme" / "time.yaml").write_text((REPO / "scenarios" / f"{SCENARIO}.yaml").read_text("utf-8"), "utf-8")
    cassettes = tmp_path / "my_cassettes"
    record = ["record", "--emulator", "--adapter", "anthropic"]
    code = main([*record, "--scenarios-dir", str(scenarios), "--cassette-dir", str(cassettes)])
    assert code == 0, capsys.readouterr().err
    assert sorted(p.relative_to(cassettes).as_posix() for p in cassettes.rglob("*.yaml")) == [
        "anthropic/acme/time.yaml"
    ]
