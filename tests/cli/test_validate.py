"""Tests for ``conformance.cli.validate``: besides the problems, the commands valid scenarios would start.

Each scenario taking its tools from an MCP server is listed with the command as it would start
(``{python}`` resolved, the cwd taken from the scenario's folder, the names of its env variables
but never their values) and whether it runs as it is (bundled) or only with ``--allow-commands``.
The expected values are the scenario file written here and the bundled ``scenarios/mcp`` files.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.scenarios import bundled

USER_SCENARIO = """\
schema_version: 1
behavior: "A user's scenario whose tools come from a server of theirs."
source: tests/cli/test_validate.py
tools:
  mcp:
    command: [node, server.js]
    args: ["--python={python}"]
    cwd: tools
    env: {API_TOKEN: "s3cr3t-value"}
turns:
  - user: "Hello?"
    reply:
      text: "Hi."
"""


def _user(tmp_path: Path) -> Path:
    path = tmp_path / "scenarios" / "mine" / "server.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(USER_SCENARIO, encoding="utf-8")
    return path


def test_text_lists_a_users_command_and_the_flag_it_needs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _user(tmp_path)
    assert main(["validate", str(path)]) == 0
    out = capsys.readouterr().out
    (line,) = [line for line in out.splitlines() if line.startswith("mine/server:")]
    assert f"starts node server.js --python={sys.executable}" in line
    assert f"(cwd {path.parent / 'tools'})" in line and "(env API_TOKEN)" in line
    assert "runs only with --allow-commands" in line
    assert "s3cr3t-value" not in out
    assert out.rstrip().endswith("1 valid; 1 start a command (listed above)")


def test_json_lists_every_command_with_argv_cwd_env_names_and_trust(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _user(tmp_path)
    assert main(["validate", str(path), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["commands"] == [
        {
            "scenario": "mine/server",
            "file": str(path),
            "argv": ["node", "server.js", f"--python={sys.executable}"],
            "cwd": str(path.parent / "tools"),
            "env_keys": ["API_TOKEN"],
            "bundled": False,
            "transport": "stdio",
            "url": None,
            "header_keys": [],
        }
    ]


def test_the_bundled_scenarios_commands_are_listed_as_bundled(capsys: pytest.CaptureFixture[str]) -> None:
    folder = bundled.scenarios_dir() / "mcp"
    assert main(["validate", str(folder), "--format", "json"]) == 0
    commands = json.loads(capsys.readouterr().out)["commands"]
    files = sorted(str(p) for p in folder.glob("*.yaml"))
    assert sorted(c["file"] for c in commands) == files
    assert all(c["bundled"] and c["argv"] == [sys.executable, "-m", "conformance", "mcp-server"] for c in commands)


def test_an_invalid_file_lists_no_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _user(tmp_path)
    path.write_text(USER_SCENARIO.replace("turns:", "turnz:"), encoding="utf-8")
    assert main(["validate", str(path), "--format", "json"]) == 1
    assert json.loads(capsys.readouterr().out)["commands"] == []


def test_a_remote_url_is_listed_with_the_flag_it_needs_and_no_header_value(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "scenarios" / "mine" / "remote.yaml"
    path.parent.mkdir(parents=True)
    text = USER_SCENARIO.replace(
        """    command: [node, server.js]
    args: ["--python={python}"]
    cwd: tools
    env: {API_TOKEN: "s3cr3t-value"}
""",
        """    url: https://mcp.example.com/mcp
    headers: {Authorization: "Bearer ${API_TOKEN}"}
""",
    )
    path.write_text(text, encoding="utf-8")
    assert main(["validate", str(path)]) == 0
    out = capsys.readouterr().out
    assert "connects to https://mcp.example.com/mcp (headers Authorization)" in out
    assert "runs only with --allow-remote-mcp" in out and "API_TOKEN" not in out
