"""Tests for ``conformance.mcp_bridge.trust``: which scenarios may start their ``tools.mcp`` command.

A bundled scenario starts its server; any other starts it only when commands are allowed
(``--allow-commands``, ``$CONFORMANCE_ALLOW_COMMANDS``); a refused scenario starts nothing (a
command that would touch a file leaves no file), its cases are ERRORs naming the file, the command
and the flag, and the run's report lists the commands that did run. The expected values are the
scenario files these tests write and the bundled ``scenarios/mcp/fixed_clock.yaml``.
"""

from __future__ import annotations

import json
import shutil
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from conformance.adapters import get_adapter
from conformance.cli import main
from conformance.errors import McpCommandRefusedError, McpServerError
from conformance.mcp_bridge import trust
from conformance.mcp_bridge.scenario_tools import McpPool, open_scenario_tools
from conformance.mcp_bridge.trust import (
    ALLOW_ENV,
    LOG_ENV,
    command_policy,
    commands_allowed,
    is_bundled,
    note_started,
    refusal,
    server_command,
)
from conformance.run.runner import RunOptions, run_pair
from conformance.scenarios import bundled
from conformance.scenarios.loader import load_scenario

BUNDLED_MCP = bundled.scenarios_dir() / "mcp" / "fixed_clock.yaml"
TOUCHING = """\
schema_version: 1
behavior: "A server command that leaves a file behind when it starts."
source: tests/mcp_bridge/test_trust.py
tools:
  mcp:
    command: ["{python}", "-c", "import pathlib; pathlib.Path('started').touch()"]
    args: ["--flag={python}"]
    cwd: work
    env: {SECRET_TOKEN: "never-shown", A_VAR: "1"}
turns:
  - user: "Hello?"
    reply:
      text: "Hi."
"""


@pytest.fixture(autouse=True)
def no_allowance(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts with commands not allowed and no command log, whatever the shell exported."""
    monkeypatch.delenv(ALLOW_ENV, raising=False)
    monkeypatch.delenv(LOG_ENV, raising=False)


def touching(tmp_path: Path) -> Path:
    """A user's scenario whose command would create ``work/started`` beside it."""
    path = tmp_path / "scenarios" / "mine" / "touch.yaml"
    (path.parent / "work").mkdir(parents=True)
    path.write_text(TOUCHING, encoding="utf-8")
    return path


def copied_fixed_clock(tmp_path: Path) -> Path:
    """The bundled fixed_clock scenario copied byte for byte into a user's folder (same id, same
    fingerprint: the bundled cassette replays it)."""
    target = tmp_path / "scenarios" / "mcp" / "fixed_clock.yaml"
    target.parent.mkdir(parents=True)
    shutil.copyfile(BUNDLED_MCP, target)
    return target


# ---------------------------------------------------------------------------------- what is trusted


def test_a_bundled_scenario_is_trusted_and_a_copy_elsewhere_is_not(tmp_path: Path) -> None:
    assert is_bundled(load_scenario(BUNDLED_MCP))
    assert refusal(load_scenario(BUNDLED_MCP)) is None
    assert not is_bundled(load_scenario(copied_fixed_clock(tmp_path)))


def test_a_symlink_into_the_bundled_folder_that_leads_out_is_not_trusted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "bundled"
    folder.mkdir()
    outside = touching(tmp_path)
    (folder / "link.yaml").symlink_to(outside)
    monkeypatch.setattr(bundled, "scenarios_dir", lambda: folder)
    linked = replace(load_scenario(outside), path=folder / "link.yaml")
    assert not is_bundled(linked)
    assert refusal(linked) is not None
    (folder / "real.yaml").write_text(TOUCHING, encoding="utf-8")
    assert is_bundled(replace(linked, path=folder / "real.yaml"))


def test_the_command_is_shown_as_it_would_start(tmp_path: Path) -> None:
    path = touching(tmp_path)
    command = server_command(load_scenario(path))
    assert command is not None
    assert command.argv == (
        sys.executable,
        "-c",
        "import pathlib; pathlib.Path('started').touch()",
        f"--flag={sys.executable}",
    )
    assert command.cwd == str(path.parent / "work")
    assert command.env_keys == ("A_VAR", "SECRET_TOKEN")
    assert "never-shown" not in json.dumps(command.to_json()) + command.shown()
    assert command.bundled is False
    assert trust.ServerCommand.from_json(command.to_json()) == command


def test_a_scenario_without_an_mcp_server_starts_nothing(tmp_path: Path) -> None:
    scenario = replace(load_scenario(touching(tmp_path)), mcp=None)
    assert server_command(scenario) is None
    assert refusal(scenario) is None


@pytest.mark.parametrize(("value", "allowed"), [("1", True), ("yes", True), ("TRUE", True), ("0", False), ("", False)])
def test_the_environment_variable_allows_commands(
    value: str, allowed: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ALLOW_ENV, value)
    assert commands_allowed() is allowed
    assert (refusal(load_scenario(touching(tmp_path))) is None) is allowed


def test_the_refusal_names_the_file_the_command_and_the_flag(tmp_path: Path) -> None:
    path = touching(tmp_path)
    refused = refusal(load_scenario(path))
    assert isinstance(refused, McpCommandRefusedError)
    assert isinstance(refused, McpServerError) and isinstance(refused, PermissionError)
    text = str(refused)
    assert text.startswith(f"{path}: not started:")
    assert "--allow-commands" in text and ALLOW_ENV in text and f"conformance validate {path}" in text
    shown = server_command(load_scenario(path)).shown()  # type: ignore[union-attr]
    assert refused.command == shown and shown in text and "pathlib.Path" in shown


# ---------------------------------------------------------------------------------- the gate


def test_a_refused_scenario_starts_no_process(tmp_path: Path) -> None:
    path = touching(tmp_path)
    scenario = load_scenario(path)
    with pytest.raises(McpCommandRefusedError), open_scenario_tools(scenario, start_timeout=30):
        pass
    with McpPool(start_timeout=30) as pool:
        pool.prestart([scenario])
        with pytest.raises(McpCommandRefusedError):
            pool.open(scenario)
    assert not (path.parent / "work" / "started").exists()


def test_an_allowed_scenario_starts_its_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = touching(tmp_path)
    monkeypatch.setenv(ALLOW_ENV, "1")
    with pytest.raises(McpServerError) as caught, open_scenario_tools(load_scenario(path), start_timeout=30):
        pass  # the command is no MCP server: it starts, leaves its file and exits
    assert not isinstance(caught.value, McpCommandRefusedError)
    assert (path.parent / "work" / "started").exists()


def test_a_refused_pair_is_an_error_for_each_case_naming_the_flag(tmp_path: Path) -> None:
    scenario = load_scenario(copied_fixed_clock(tmp_path))
    cases = run_pair(scenario, get_adapter("openai_chat"), RunOptions(timeout=30))
    assert [(c.mode, c.status) for c in cases] == [("non_stream", "error"), ("stream", "error")]
    assert all("--allow-commands" in c.message and str(scenario.path) in c.message for c in cases)


# ---------------------------------------------------------------------------------- the policy and its log


def test_the_policy_sets_and_restores_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    with command_policy(allow=True) as log:
        assert commands_allowed()
        assert Path(log.path).is_file()
    assert not commands_allowed()
    import os

    assert LOG_ENV not in os.environ and ALLOW_ENV not in os.environ
    monkeypatch.setenv(ALLOW_ENV, "1")  # exported by the user: a policy without allow keeps it
    with command_policy(allow=False):
        assert commands_allowed()
    assert commands_allowed()


def test_the_log_keeps_each_scenarios_command_once_after_the_block(tmp_path: Path) -> None:
    user = load_scenario(touching(tmp_path))
    note_started(user)  # outside a policy: nowhere to note it, and no error
    with command_policy(allow=False) as log:
        note_started(user)
        note_started(user)
        note_started(load_scenario(BUNDLED_MCP))
        with open(log.path, "a", encoding="ascii") as broken:
            broken.write('{"scenario": "cut')  # a worker killed mid-line
    ran = log.commands()
    assert [(c.scenario, c.bundled) for c in ran] == [("mcp/fixed_clock", True), ("mine/touch", False)]


# ---------------------------------------------------------------------------------- the command line


def _report(folder: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    return data


def test_run_refuses_a_users_command_without_the_flag_and_reports_what_ran_with_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = copied_fixed_clock(tmp_path)
    argv = ["run", "--scenarios", str(tmp_path / "scenarios"), "--adapters", "openai_chat", "-j", "1"]
    assert main([*argv, "--report-dir", str(tmp_path / "refused")]) == 1
    out = capsys.readouterr().out
    assert "not started" in out and "--allow-commands" in out and str(path) in out
    assert _report(tmp_path / "refused")["commands"] == []
    assert "Commands started" not in (tmp_path / "refused" / "report.md").read_text(encoding="utf-8")

    assert main([*argv, "--allow-commands", "--report-dir", str(tmp_path / "allowed")]) == 0
    (ran,) = _report(tmp_path / "allowed")["commands"]  # type: ignore[misc]
    assert ran == {
        "scenario": "mcp/fixed_clock",
        "file": str(path),
        "argv": [sys.executable, "-m", "conformance", "mcp-server"],
        "cwd": None,
        "env_keys": ["CONFORMANCE_FIXED_NOW_MS"],
        "bundled": False,
        "transport": "stdio",
        "url": None,
        "header_keys": [],
    }
    for name in ("report.md", "report.html"):
        text = (tmp_path / "allowed" / name).read_text(encoding="utf-8")
        assert "Commands started" in text and "mcp-server" in text, name
    assert not commands_allowed()  # the flag lasted as long as the run


def test_a_bundled_scenarios_command_runs_and_is_reported_without_the_flag(tmp_path: Path) -> None:
    argv = ["run", "--scenarios", "mcp/fixed_clock", "--adapters", "openai_chat", "-j", "1", "--quiet"]
    assert main([*argv, "--report-dir", str(tmp_path / "r")]) == 0
    (ran,) = _report(tmp_path / "r")["commands"]  # type: ignore[misc]
    assert ran["bundled"] is True and ran["file"] == str(BUNDLED_MCP)  # type: ignore[index]


def test_record_refuses_a_users_command_without_the_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = touching(tmp_path)
    argv = ["record", "--emulator", "--adapter", "openai_chat", "--scenarios-dir", str(tmp_path / "scenarios")]
    assert main([*argv, "--cassette-dir", str(tmp_path / "cassettes")]) == 1
    err = capsys.readouterr().err
    assert "FAILED openai_chat mine/touch" in err and "--allow-commands" in err
    assert not (path.parent / "work" / "started").exists()
    assert main([*argv, "--allow-commands", "--cassette-dir", str(tmp_path / "cassettes")]) == 1  # no MCP server
    err = capsys.readouterr().err
    assert (path.parent / "work" / "started").exists()
    assert "not started" not in err
