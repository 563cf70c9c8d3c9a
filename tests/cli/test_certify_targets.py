"""``conformance certify --server`` and ``--gateway`` (issue 29): the command line reads them into the
pipeline's server and gateway targets; what each needs and what it refuses are usage errors (exit 2)
before anything is connected to; a server run writes the reports a client run writes, its key never
in them, and its rerun commands name the server again."""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.emulator import Emulator
from conformance.scenarios.loader import load_scenarios
from conformance.servers.server import server_scenarios

KEY = "sk-certify-cli-server-0123456789"


@pytest.fixture(scope="module")
def control() -> Iterator[str]:
    """The emulator playing every scenario a server is asked (the control of docs/servers.md)."""
    with Emulator() as emulator:
        emulator.play_scenarios(server_scenarios(load_scenarios([]).scenarios))
        yield emulator.base_url


def test_a_server_is_certified_on_its_wires_and_the_key_never_reaches_a_report(
    control: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MY_SERVER_KEY", KEY)
    code = main(
        [
            "certify",
            "--server",
            control,
            "--wires",
            "openai_chat,anthropic",
            "--name",
            "control",
            "--api-key-env",
            "MY_SERVER_KEY",
            "--scenarios",
            "basic/single_call",
            "--report-dir",
            str(tmp_path),
            "--format",
            "json,md,junit",
        ]
    )
    out = capsys.readouterr()
    assert code == 0, out.out + out.err
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    columns = {case["adapter"] for case in report["cases"]}
    assert columns == {"control/openai_chat", "control/anthropic"}
    scenarios = {case["scenario"] for case in report["cases"]}
    assert "basic/single_call" in scenarios and "server/invalid/body_not_json" in scenarios
    assert all(case["status"] == "pass" for case in report["cases"]), report["summary"]
    checks = {v["check"] for case in report["cases"] for v in case["checks"]}
    assert {"server.shape", "server.framing", "server.errors", "server.model"} <= checks
    for name in ("report.json", "report.md", "junit.xml"):
        assert KEY not in (tmp_path / name).read_text(encoding="utf-8")
    assert KEY not in out.out + out.err
    assert out.out.rstrip().endswith("pass; reports: listed above") or "cases:" in out.out


def test_a_failing_server_case_prints_a_rerun_command_naming_the_server(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with Emulator() as emulator:  # plays nothing: every scenario gets the default text reply
        code = main(
            [
                "certify",
                "--server",
                emulator.base_url,
                "--wires",
                "openai_chat",
                "--scenarios",
                "basic/single_call",
                "--report-dir",
                str(tmp_path),
                "--format",
                "json",
                "-v",
            ]
        )
    out = capsys.readouterr().out
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    statuses = {(c["scenario"], c["mode"]): c["status"] for c in report["cases"]}
    assert statuses[("basic/single_call", "non_stream")] == "deviated"  # text where a call is expected
    assert code == 0, out  # a deviation is never a failure
    reruns = [line.strip() for line in out.splitlines() if line.strip().startswith("conformance certify")]
    for line in reruns:
        words = shlex.split(line)
        assert words[words.index("--server") + 1] == emulator.base_url


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--server", "http://127.0.0.1:9"], "--server needs --wires"),
        (["--server", "http://127.0.0.1:9", "--wires", "openai_chat,smoke_signals"], "smoke_signals: not a wire"),
        (["--server", "127.0.0.1:9", "--wires", "openai_chat"], "give the server's root URL"),
        (["--server", "http://127.0.0.1:9", "--wires", "openai_chat", "--python", "/usr/bin/python3"], "--python is"),
        (["--server", "http://127.0.0.1:9", "--wires", "openai_chat", "--upstream", "anthropic"], "--upstream is for"),
        (["--gateway", "http://127.0.0.1:9", "--wire", "openai_chat"], "--gateway needs --wire"),
        (
            ["--gateway", "http://127.0.0.1:9", "--wire", "openai_chat", "--upstream", "anthropic", "--wires", "x"],
            "--wires is for --server",
        ),
        (
            ["--server", "http://127.0.0.1:9", "--wires", "openai_chat", "--api-key-env", "NO_SUCH_VARIABLE_29"],
            "NO_SUCH_VARIABLE_29: that environment variable is not set",
        ),
        (
            ["--client", "examples/clients/openai_driver.py:CLIENT", "--upstream-port", "4010"],
            "--upstream-port is for --server or --gateway",
        ),
    ],
)
def test_what_a_server_or_gateway_needs_and_refuses_is_a_usage_error(
    argv: list[str], words: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["certify", *argv, "--report-dir", str(tmp_path / "reports")])
    err = capsys.readouterr().err
    assert code == 2, err
    assert words in err
    assert not (tmp_path / "reports").exists()  # nothing ran, nothing was written


def test_server_client_and_gateway_are_one_of_a_kind(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["certify", "--server", "http://127.0.0.1:9", "--gateway", "http://127.0.0.1:8"]) == 2
    assert "argument --gateway: not allowed with argument --server" in capsys.readouterr().err
