"""``conformance certify``: a driver file or module certified end to end, here or under another
interpreter; every wrong declaration is a usage error (exit 2) naming what is wrong."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.clients.harness import FAKE_API_KEY

REPO = Path(__file__).resolve().parents[2]

DRIVER = """
from conformance.adapters import for_format
from conformance.clients.translator import TranslatorClient

CLIENT = TranslatorClient(for_format("anthropic"), name="acme")
"""


TWICE_DRIVER = """
class Twice:
    name = "twice"
    wires = CLIENT.wires
    known_gaps = {}
    def complete(self, call):
        CLIENT.complete(call)
        return CLIENT.complete(call)
    def error_info(self, exc):
        return CLIENT.error_info(exc)

TWICE = Twice()
"""
"""A client that sends every request twice (it fails client.one_request)."""


def write_driver(tmp_path: Path, text: str = DRIVER, name: str = "acme_driver.py") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def certify(*args: str) -> int:
    return main(["certify", "--cassette-dir", str(REPO / "cassettes"), *args])


def test_a_driver_file_is_certified_and_every_report_is_written_without_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    driver = write_driver(tmp_path)
    reports = tmp_path / "reports"
    code = certify("--client", f"{driver}:CLIENT", "--scenarios", "basic/*", "--report-dir", str(reports))
    out = capsys.readouterr().out
    assert code == 0
    assert "acme: 16 cases: 16 pass" in out
    assert "acme/anthropic" in out
    report = json.loads((reports / "report.json").read_text())
    assert {c["adapter"] for c in report["cases"]} == {"acme/anthropic"}
    assert sorted(p.name for p in reports.iterdir()) == ["junit.xml", "report.html", "report.json", "report.md"]
    for path in reports.iterdir():
        assert FAKE_API_KEY not in path.read_text()


def test_a_failing_client_exits_1_and_prints_its_findings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    driver = write_driver(tmp_path, DRIVER + TWICE_DRIVER)
    code = certify("--client", f"{driver}:TWICE", "--scenarios", "basic/get_time", "-k", "non_stream", "--format", "")
    out = capsys.readouterr().out
    assert code == 1
    assert "1. [changes meaning] Sends 2 requests for one turn: a retry the caller did not ask for." in out
    assert "   check: client.one_request" in out and "e.g. basic/get_time [non_stream], turn 0 $" in out
    assert "FAIL twice/anthropic basic/get_time [non_stream]" not in out  # every case: with -v
    code = certify(
        "--client", f"{driver}:TWICE", "--scenarios", "basic/get_time", "-k", "non_stream", "--format", "", "-v"
    )
    out = capsys.readouterr().out
    assert "FAIL twice/anthropic basic/get_time [non_stream]" in out
    assert "client.one_request: fail" in out
    assert "the client sent 2 requests for one turn" in out


def test_checks_takes_check_ids_and_judges_the_case_by_them_alone(tmp_path: Path) -> None:
    """The client that sends every request twice fails client.one_request only: chosen without it, the case
    passes; chosen with it, its verdict is the only client.* one."""
    driver = write_driver(tmp_path, DRIVER + TWICE_DRIVER)
    reports = tmp_path / "reports"
    common = ("--client", f"{driver}:TWICE", "--scenarios", "basic/get_time", "-k", "non_stream")
    common += ("--report-dir", str(reports), "--format", "json")

    def checks_run() -> tuple[str, set[str], list[str]]:
        report = json.loads((reports / "report.json").read_text())
        (case,) = report["cases"]
        return case["status"], {v["check"] for v in case["checks"]}, report["selection"]["checks"]

    assert certify(*common, "--checks", "roundtrip.calls,client.call_ids") == 0
    assert checks_run() == ("pass", {"roundtrip.calls", "client.call_ids"}, ["roundtrip.calls", "client.call_ids"])
    assert certify(*common, "--checks", "client.one_request,roundtrip") == 1
    status, ran, asked = checks_run()
    assert status == "fail" and asked == ["client.one_request", "roundtrip"]
    assert {c for c in ran if c.startswith("client.")} == {"client.one_request"}
    assert {"roundtrip.calls", "roundtrip.text"} <= ran  # the family named runs whole


def test_a_misspelt_check_is_a_usage_error_with_the_nearest_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert certify("--client", "x:CLIENT", "--checks", "client.one_reqest") == 2
    err = capsys.readouterr().err
    assert "unknown check 'client.one_reqest': did you mean 'client.one_request'?" in err


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("no_such_module_xyz:CLIENT", "No module named 'no_such_module_xyz'"),
        ("{driver}:MISSING", "has no attribute 'MISSING'"),
        ("{driver}", "is not MODULE:OBJECT or FILE.py:OBJECT"),
    ],
)
def test_a_client_that_cannot_be_loaded_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], spec: str, message: str
) -> None:
    driver = write_driver(tmp_path)
    assert certify("--client", spec.format(driver=driver)) == 2
    err = capsys.readouterr().err
    assert "conformance certify: error: --client" in err and message in err


def test_a_client_breaking_the_contract_is_a_usage_error_listing_the_valid_values(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    driver = write_driver(
        tmp_path,
        """
class Bad:
    name = "bad"
    wires = {"openai-chat": frozenset({"streaming"}), "anthropic": frozenset({"telepathy"})}
    known_gaps = {}
    def complete(self, call): ...

CLIENT = Bad()
""",
    )
    assert certify("--client", f"{driver}:CLIENT") == 2
    err = capsys.readouterr().err
    assert "unknown wire 'openai-chat' (valid: openai_chat, openai_responses, anthropic, gemini, ollama)" in err
    assert "unknown capability telepathy for anthropic" in err
    assert "error_info must be a method" in err


def test_a_known_gap_naming_no_check_and_an_undeclared_wire_are_usage_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    driver = write_driver(
        tmp_path,
        DRIVER
        + """
import dataclasses
GAPPY = dataclasses.replace(CLIENT)
object.__setattr__(GAPPY, "known_gaps", {"anthropic:roundtrip.call": "typo"})
""",
    )
    assert certify("--client", f"{driver}:GAPPY") == 2
    assert "known gap 'anthropic:roundtrip.call' names no check" in capsys.readouterr().err
    assert certify("--client", f"{driver}:CLIENT", "--wires", "gemini") == 2
    assert "acme does not declare gemini (it declares anthropic)" in capsys.readouterr().err


def test_python_runs_the_driver_in_that_interpreter(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    driver = write_driver(tmp_path)
    code = certify(
        "--client",
        f"{driver}:CLIENT",
        "--python",
        sys.executable,
        "--scenarios",
        "errors/rate_limit",
        "--scenarios",
        "multi_turn/call_result_answer",
        "--format",
        "",
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert "acme: 4 cases: 4 pass" in out


def test_python_that_does_not_exist_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    driver = write_driver(tmp_path)
    assert certify("--client", f"{driver}:CLIENT", "--python", str(tmp_path / "nope" / "python")) == 2
    assert "no such interpreter" in capsys.readouterr().err


def test_a_driver_failing_to_import_under_python_names_the_cause(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    driver = write_driver(tmp_path, "import litellm_not_installed_here\n")
    assert certify("--client", f"{driver}:CLIENT", "--python", sys.executable) == 2
    err = capsys.readouterr().err
    assert "ModuleNotFoundError" in err and "litellm_not_installed_here" in err


@pytest.mark.parametrize(
    ("selection", "named"),
    [(("-k", "no_such_case"), "-k 'no_such_case' selects no case"), (("--wires", ""), "--wires '' selects no case")],
)
def test_an_empty_selection_exits_2_with_a_hint_and_leaves_the_reports_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], selection: tuple[str, ...], named: str
) -> None:
    driver = write_driver(tmp_path)
    reports = tmp_path / "reports"
    reports.mkdir()
    (reports / "report.json").write_text("old")
    assert certify("--client", f"{driver}:CLIENT", *selection, "--report-dir", str(reports)) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("conformance certify: error: ") and named in err
    assert "acme declares the wires anthropic; `conformance list` shows the scenario ids" in err
    assert [p.name for p in reports.iterdir()] == ["report.json"] and (reports / "report.json").read_text() == "old"


def test_a_report_dir_that_is_a_file_is_a_usage_error_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    driver = write_driver(tmp_path)
    (tmp_path / "reports").write_text("x")
    assert certify("--client", f"{driver}:CLIENT", "--report-dir", str(tmp_path / "reports")) == 2
    out, err = capsys.readouterr()
    assert out == "" and f"--report-dir {tmp_path / 'reports'}: it is a file, not a folder" in err


def test_a_note_reaches_every_report(tmp_path: Path) -> None:
    """A library whose behaviour depends on the model says so in its report (``--note``)."""
    note = "LiteLLM sends Gemini call ids back only for Gemini 3 model names (its source, line 860)"
    driver = write_driver(tmp_path)
    reports = tmp_path / "reports"
    code = certify(
        *("--client", f"{driver}:CLIENT", "--scenarios", "basic/get_time", "--report-dir", str(reports)),
        *("--format", "json,md,html", "--note", note, "--jobs", "1"),
    )
    assert code == 0
    data = json.loads((reports / "report.json").read_text(encoding="utf-8"))
    assert data["selection"]["note"] == note
    assert f"**Note:** {note}" in (reports / "report.md").read_text(encoding="utf-8")
    assert "<b>Note:</b> LiteLLM sends" in (reports / "report.html").read_text(encoding="utf-8")
