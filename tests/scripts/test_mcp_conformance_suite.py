"""scripts/mcp_conformance_suite.py: the official MCP conformance suite against the bundled server.

In the default run (no Node, no npm): the suite's ``checks.json`` read as the suite writes it
(``ConformanceCheck`` of its ``src/types.ts``: ``id``, ``status``, ``errorMessage``); a scenario's
verdict from a stub suite CLI that passes, fails, hangs past its timeout (its process group killed),
floods its output or writes nothing, each a verdict naming what happened while the other scenarios
still run; the bundled server started with the suite's profile and stopped after; a server that
exits or never listens, and a suite that is not installed, one line saying why (exit 3).

The ``mcp_conformance`` tier (``python scripts/mcp_conformance_suite.py install && pytest -m
mcp_conformance``): the real suite, pinned in examples/mcp_conformance, passes every scenario of
``SCENARIOS`` against the bundled server over Streamable HTTP, and fails the tool scenarios against
the default profile (the checks are not vacuous).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from types import ModuleType

import pytest

from tests._scripts import load_script

ROOT = Path(__file__).resolve().parents[2]
INSTALL = "python scripts/mcp_conformance_suite.py install"

STUB_SUITE = textwrap.dedent(
    """
    # A stand-in for the suite's CLI: `server --url URL --scenario NAME -o DIR`; the scenario says what to do.
    import json, os, sys, time
    args = sys.argv[1:]
    url, scenario, out = (args[args.index(flag) + 1] for flag in ("--url", "--scenario", "-o"))
    assert args[0] == "server" and url.startswith("http://127.0.0.1:") and url.endswith("/mcp"), args
    def write(checks):
        folder = os.path.join(out, f"server-{scenario}-2026-01-01T00-00-00-000Z")
        os.makedirs(folder)
        with open(os.path.join(folder, "checks.json"), "w") as f:
            json.dump(checks, f)
    check = {"id": scenario, "name": "X", "description": "what it checks", "timestamp": "t"}
    if scenario == "passes":
        write([{**check, "status": "SUCCESS"}, {**check, "id": "polling", "status": "WARNING"}])
    elif scenario == "fails":
        write([{**check, "status": "FAILURE", "errorMessage": "Tool did not return isError: true"}])
    elif scenario == "hangs":
        print("started", flush=True)
        time.sleep(600)
    elif scenario == "floods":
        sys.stdout.write("x" * 3_000_000 + "\\nthe last words\\n")
        sys.exit(1)
    elif scenario == "empty":
        write([])
    elif scenario == "garbage":
        folder = os.path.join(out, "server-garbage-x")
        os.makedirs(folder)
        open(os.path.join(folder, "checks.json"), "w").write("{not json")
    sys.exit(0)
    """
)


@pytest.fixture(scope="module")
def suite() -> ModuleType:
    return load_script("mcp_conformance_suite")


@pytest.fixture
def stub_dir(tmp_path: Path) -> Path:
    """A suite folder whose installed package's ``conformance`` bin is the stub (run by Python)."""
    folder = tmp_path / "suite"
    package = folder / "node_modules" / "@modelcontextprotocol" / "conformance"
    (package / "dist").mkdir(parents=True)
    (package / "dist" / "index.js").write_text(STUB_SUITE, encoding="utf-8")
    meta = {"name": "@modelcontextprotocol/conformance", "version": "0.1.16", "bin": {"conformance": "dist/index.js"}}
    (package / "package.json").write_text(json.dumps(meta), encoding="utf-8")
    pinned = {"dependencies": {"@modelcontextprotocol/conformance": "0.1.16"}}
    (folder / "package.json").write_text(json.dumps(pinned), encoding="utf-8")
    return folder


def stub_command(stub_dir: Path) -> list[str]:
    return [sys.executable, str(stub_dir / "node_modules/@modelcontextprotocol/conformance/dist/index.js")]


URL = "http://127.0.0.1:9/mcp"


# -- checks.json ------------------------------------------------------------------------------------


def test_checks_json_is_read_as_the_suite_writes_it(suite: ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "checks.json"
    path.write_text(
        json.dumps(
            [
                {
                    "id": "tools-call-error",
                    "name": "ToolsCallError",
                    "description": "Tool returns error correctly",
                    "status": "FAILURE",
                    "timestamp": "2026-11-29T10:18:51Z",
                    "errorMessage": "Tool did not return isError: true",
                    "specReferences": [{"id": "MCP-Error-Handling", "url": "https://modelcontextprotocol.io"}],
                },
                {"id": "ping", "name": "Ping", "description": "Server responds", "status": "SUCCESS", "timestamp": "t"},
            ]
        ),
        encoding="utf-8",
    )
    failed, passed = suite.read_checks(path)
    assert failed == suite.Check(
        "tools-call-error", "FAILURE", "Tool returns error correctly", "Tool did not return isError: true"
    )
    assert (passed.id, passed.status, passed.error) == ("ping", "SUCCESS", "")


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("{not json", "is not JSON"),
        ('{"checks": []}', "is not a JSON array of checks"),
        ('[{"id": "x"}]', "check 0 has no status"),
        ("[" + "0," * 100 + "0]", "past the 64 read"),
    ],
)
def test_a_checks_json_that_is_not_the_suites_is_named(
    suite: ModuleType, tmp_path: Path, text: str, problem: str
) -> None:
    path = tmp_path / "checks.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=problem):
        suite.read_checks(path, limit=64)


# -- one scenario -----------------------------------------------------------------------------------


def test_a_passing_scenario_and_a_failing_one(suite: ModuleType, stub_dir: Path, tmp_path: Path) -> None:
    passed = suite.run_scenario(stub_command(stub_dir), "passes", URL, tmp_path)
    assert passed.passed and passed.count("SUCCESS") == 1 and passed.count("WARNING") == 1
    assert passed.lines()[0].startswith("PASS passes: checks 1 passed, 0 failed, 1 warnings (")
    assert passed.lines()[1] == "    warning polling: what it checks"
    failed = suite.run_scenario(stub_command(stub_dir), "fails", URL, tmp_path)
    assert not failed.passed
    assert failed.lines()[0].startswith("FAIL fails: checks 0 passed, 1 failed, 0 warnings (")
    assert failed.lines()[1] == "    fails: Tool did not return isError: true"


def test_a_hanging_scenario_is_killed_at_its_timeout(suite: ModuleType, stub_dir: Path, tmp_path: Path) -> None:
    started = time.monotonic()
    result = suite.run_scenario(stub_command(stub_dir), "hangs", URL, tmp_path, timeout=1.0)
    assert time.monotonic() - started < 60  # a safety net: the timeout, then SIGTERM
    assert not result.passed
    assert result.problem.startswith("timed out: no verdict within 1 s, the suite's process was killed")
    assert "its last output: started" in result.problem


@pytest.mark.parametrize(
    ("scenario", "problem"),
    [
        ("floods", "the suite exited 1 without writing checks.json (its last output: "),
        ("empty", "the suite wrote no checks"),
        ("garbage", "unreadable result: checks.json is not JSON"),
        ("unknown", "the suite exited 0 without writing checks.json (its last output: none)"),
    ],
)
def test_a_scenario_without_checks_fails_saying_why(
    suite: ModuleType, stub_dir: Path, tmp_path: Path, scenario: str, problem: str
) -> None:
    result = suite.run_scenario(stub_command(stub_dir), scenario, URL, tmp_path)
    assert not result.passed and result.problem.startswith(problem)
    assert len(result.problem) < 1200  # 3 MB of output: only its tail is quoted
    if scenario == "floods":
        assert result.problem.endswith("the last words)")


def test_a_suite_that_cannot_start_is_that_scenarios_fail(suite: ModuleType, tmp_path: Path) -> None:
    result = suite.run_scenario([str(tmp_path / "no-node")], "ping", URL, tmp_path)
    assert not result.passed and result.problem.startswith("the suite could not start: ")


# -- the whole run against the bundled server ---------------------------------------------------------


def test_every_scenario_runs_against_the_bundled_server_which_is_stopped_after(
    suite: ModuleType, stub_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    node = Path(sys.executable)  # runs the stub bin as the suite's node would run its dist/index.js
    results = suite.run_suite(
        ["passes", "hangs", "fails", "passes"], node=node, work=tmp_path, suite_dir=stub_dir, timeout=1.0
    )
    assert [(r.scenario, r.passed) for r in results] == [
        ("passes", True), ("hangs", False), ("fails", False), ("passes", True)
    ]  # fmt: skip
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("@modelcontextprotocol/conformance 0.1.16 against http://127.0.0.1:")
    assert out[0].endswith("/mcp (the bundled server, --profile conformance-suite)")
    assert suite.summary_line(results) == (
        "4 scenarios of the MCP conformance suite: 2 passed, 2 failing (checks: 2 passed, 1 failed, 2 warnings)"
    )
    port = int((tmp_path / "server.port").read_text(encoding="ascii"))
    with pytest.raises(ConnectionRefusedError):  # stopped: nothing listens there any more
        socket.create_connection(("127.0.0.1", port), timeout=10).close()
    log = (tmp_path / "server.log").read_text(encoding="utf-8", errors="replace")
    assert "Traceback" not in log


def test_a_server_that_exits_or_never_listens_is_one_line(suite: ModuleType, tmp_path: Path) -> None:
    exits = [sys.executable, "-c", "import sys; sys.stderr.write('cannot bind: boom\\n'); sys.exit(4)"]
    with pytest.raises(suite.SuiteUnavailable, match=r"the MCP server exited 4 before listening: cannot bind: boom"):
        suite.start_server(tmp_path, command=exits)
    pid_file = tmp_path / "silent.pid"
    silent = [
        sys.executable,
        "-c",
        f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(600)",
    ]
    with pytest.raises(suite.SuiteUnavailable, match=r"the MCP server did not listen within 1 s"):
        suite.start_server(tmp_path, command=silent, timeout=1.0)
    pid = int(pid_file.read_text(encoding="ascii"))
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_a_suite_not_installed_or_at_another_version_is_named(
    suite: ModuleType, stub_dir: Path, tmp_path: Path
) -> None:
    assert suite.suite_bin(stub_dir).name == "index.js"
    with pytest.raises(
        suite.SuiteUnavailable, match=r"is not installed in .*: `python scripts/mcp_conformance_suite.py install`"
    ):
        suite.suite_bin(tmp_path)
    (stub_dir / "package.json").write_text('{"dependencies": {"@modelcontextprotocol/conformance": "0.1.17"}}')
    with pytest.raises(
        suite.SuiteUnavailable, match=r"has @modelcontextprotocol/conformance 0.1.16, package.json pins 0.1.17"
    ):
        suite.suite_bin(stub_dir)


def test_run_without_the_suite_exits_3_saying_what_to_do(
    suite: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(suite, "SUITE_DIR", tmp_path)
    monkeypatch.setattr(suite.node_runtime, "find_node", lambda install: Path(sys.executable))
    assert suite.main(["run"]) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("scripts/mcp_conformance_suite.py: @modelcontextprotocol/conformance is not installed")


def test_list_names_each_scenario_with_why(suite: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    assert suite.main(["list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == list(suite.SCENARIOS)
    assert len(suite.SCENARIOS) == 19 and all(why for why in suite.SCENARIOS.values())


# -- the tier: the real suite -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def node(suite: ModuleType) -> Path:
    """The Node and the pinned suite (or the tier skips, saying why)."""
    try:
        found: Path = suite.node_runtime.find_node(install=False)
        suite.suite_bin()
    except (suite.SuiteUnavailable, suite.node_runtime.NodeUnavailable) as exc:
        pytest.skip(f"{exc} ({INSTALL})")
    return found


@pytest.mark.mcp_conformance
def test_the_bundled_server_passes_every_scenario_of_the_suite(node: Path) -> None:
    done = subprocess.run(
        [sys.executable, "scripts/mcp_conformance_suite.py", "run"],
        cwd=ROOT, capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    suite = load_script("mcp_conformance_suite")
    lines = done.stdout.splitlines()
    assert sorted(line.split(":")[0][5:] for line in lines if line.startswith("PASS ")) == sorted(suite.SCENARIOS)
    assert lines[-1] == (
        "19 scenarios of the MCP conformance suite: 19 passed, 0 failing (checks: 32 passed, 0 failed, 0 warnings)"
    )


@pytest.mark.mcp_conformance
def test_without_the_suites_tools_its_tool_scenarios_fail(suite: ModuleType, node: Path, tmp_path: Path) -> None:
    """The suite's verdicts are not vacuous: the default profile lacks its tools, and it says so."""
    scenarios = ["tools-call-simple-text", "tools-call-error", "json-schema-2020-12"]
    results = suite.run_suite(scenarios, node=node, work=tmp_path, profile="default", echo=False)
    assert [r.passed for r in results] == [False, False, False]
    text = "\n".join(line for r in results for line in r.lines())
    assert "Unknown tool: test_simple_text" in text and "Unknown tool: test_error_handling" in text
    assert "Tool 'json_schema_2020_12_tool' not found" in text
