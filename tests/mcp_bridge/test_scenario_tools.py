"""Tests for ``conformance.mcp_bridge.scenario_tools``: a scenario's tools and results from a real MCP server.

End to end over stdio with the bundled server (``python -m conformance mcp-server``): every
``tools/list`` page is followed even when selecting, ``select`` keeps its order, calls come back
on MCP's error channels, a slow call becomes a timeout result, and a server that cannot start or
dies is an ``McpServerError`` carrying its stderr. Then through the runner and the recorder (with
the loopback emulator): one server per pair, an ERROR naming the command and stderr tail when it
fails, and no server process left behind (found through /proc by a marker in its environment).

Expected values come from the MCP spec (2025-11-25 server/tools, utilities/pagination) and the
fixture module the server serves (``conformance.mcp_bridge._fixtures``, ``server`` constants).
"""

from __future__ import annotations

import os
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from conformance.adapters import get_adapter
from conformance.errors import McpServerError, ScenarioError, UsageError
from conformance.mcp_bridge import _fixtures, _fixtures_progress, _fixtures_results
from conformance.mcp_bridge._convert import MCP_KEY, error_channel
from conformance.mcp_bridge.scenario_tools import (
    McpExecutor,
    open_scenario_tools,
    select_tools,
    server_spec,
    timeout_result,
    unparsed_arguments_result,
)
from conformance.mcp_bridge.server import DEFAULT_PAGE_SIZE, FIXED_NOW_ENV, NOOP_TOOL_COUNT
from conformance.mcp_bridge.trust import ALLOW_ENV
from conformance.model import Image, Text, Tool, ToolCall
from conformance.run.recording import record_pairs
from conformance.run.runner import RunOptions, run_pair
from conformance.scenarios.loader import load_scenario
from conformance.scenarios.values import McpTools, Scenario

REPO_ROOT = Path(__file__).resolve().parents[2]
NOW = 1_684_800_000_000  # 2023-05-23T00:00:00Z
DAY_MS = 86_400_000
# cwd: `python -m conformance` finds the package from the repository even when it is not installed
BUNDLED = McpTools(
    command=("{python}", "-m", "conformance", "mcp-server"), env={FIXED_NOW_ENV: str(NOW)}, cwd=str(REPO_ROOT)
)
FAILING = McpTools(
    command=("{python}", "-c", "import sys; sys.stderr.write('boom: no config file\\n'); sys.exit(3)"),
    cwd=str(REPO_ROOT),
)
# the ten fixture tools of docs/mcp.md, the progress and result-shape tools, then the padding
ALL_TOOLS = 10 + len(_fixtures_progress.TOOL_NAMES) + len(_fixtures_results.TOOL_NAMES) + NOOP_TOOL_COUNT


@pytest.fixture(autouse=True)
def allow_commands(monkeypatch: pytest.MonkeyPatch) -> None:
    """These scenarios live in temporary folders (not bundled): they start their servers only when allowed
    (``conformance.mcp_bridge.trust``; tests/mcp_bridge/test_trust.py tests the refusal)."""
    monkeypatch.setenv(ALLOW_ENV, "1")


needs_proc = pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="finds processes through /proc (Linux)")

SCENARIO_YAML = """\
schema_version: 1
behavior: "getTime through a real MCP server."
source: tests/mcp_bridge/test_scenario_tools.py
tools:
  mcp:
    command: ["{python}", -m, conformance, mcp-server]
turns:
  - user: "What was the date yesterday?"
    reply:
      tool_calls:
        - name: getTime
          arguments: {offset_ms: -86400000}
    tool_results: mcp
  - reply:
      text: "Yesterday was 2023-05-22."
"""


def _scenario(tmp_path: Path, mcp: McpTools = BUNDLED, text: str = SCENARIO_YAML) -> Scenario:
    path = tmp_path / "scenarios" / "mcp" / "case.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return replace(load_scenario(path), mcp=mcp)


def _start(scenario: Scenario) -> None:
    """Start the scenario's server and stop it again."""
    with open_scenario_tools(scenario, start_timeout=60):
        pass


def _call(name: str, arguments: dict[str, object] | None, call_id: str = "call_1") -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments=arguments)


# ---------------------------------------------------------------------------------- pure parts


def test_python_placeholder_and_relative_cwd_are_resolved(tmp_path: Path) -> None:
    mcp = McpTools(command=("{python}", "-m", "srv"), args=("--py={python}",), env={"A": "1"}, cwd="tools")
    spec = server_spec(mcp, base=tmp_path)
    assert spec.argv == (sys.executable, "-m", "srv", f"--py={sys.executable}")
    assert spec.cwd == str(tmp_path / "tools")
    assert dict(spec.env) == {"A": "1"}
    assert server_spec(replace(mcp, cwd="/abs"), base=tmp_path).cwd == "/abs"
    assert server_spec(replace(mcp, cwd=None), base=tmp_path).cwd is None


def test_select_keeps_its_order_and_names_what_is_missing(tmp_path: Path) -> None:
    listed = [Tool(name=n) for n in ("getTime", "get_weather", "noop_24")]
    scenario = _scenario(tmp_path)
    assert select_tools(listed, None, scenario) == tuple(listed)
    assert [t.name for t in select_tools(listed, ("noop_24", "getTime"), scenario)] == ["noop_24", "getTime"]
    with pytest.raises(ScenarioError) as caught:
        select_tools(listed, ("getTime", "get_wether", "nothing_like_it"), scenario)
    first, second = caught.value.problems
    assert first.pointer == "/tools/mcp/select/1"
    assert "select names 'get_wether', which the MCP server does not offer" in first.message
    assert first.hint == "did you mean 'get_weather'?"
    assert "getTime, get_weather, noop_24" in first.expected
    assert second.pointer == "/tools/mcp/select/2"
    assert first.path == scenario.path
    assert str(scenario.path) in str(caught.value)


def test_timeout_and_unreadable_arguments_are_client_channel_errors() -> None:
    timed_out = timeout_result(_call("slow_tool", {"seconds": 5}), 1.0)
    assert timed_out.content == (Text(text="MCP tool call timed out after 1 s"),)
    assert (timed_out.call_id, timed_out.name, timed_out.is_error) == ("call_1", "slow_tool", True)
    assert error_channel(timed_out) == "client"
    assert timed_out.provider_details[MCP_KEY]["error"]["timeout"] == 1.0
    broken = ToolCall(id="c", name="getTime", arguments=None, arguments_raw='{"a":', arguments_error="bad JSON")
    unread = unparsed_arguments_result(broken)
    assert unread.is_error and error_channel(unread) == "client"
    assert isinstance(unread.content[0], Text) and "bad JSON" in unread.content[0].text


def test_a_scenario_with_listed_tools_has_no_server(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="takes no tools from an MCP server"):
        _start(replace(_scenario(tmp_path), mcp=None))


# ---------------------------------------------------------------------------------- the real server


@pytest.fixture(scope="module")
def opened(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Scenario, McpExecutor]]:
    mcp = replace(BUNDLED, select=("noop_24", "getTime", "get_weather", "slow_tool", "render_chart", "exit_server"))
    with pytest.MonkeyPatch.context() as patch:  # set up before the function-scoped allow_commands
        patch.setenv(ALLOW_ENV, "1")
        with open_scenario_tools(_scenario(tmp_path_factory.mktemp("s"), mcp), start_timeout=60) as pair:
            yield pair


def test_select_reaches_the_last_page_and_keeps_its_order(opened: tuple[Scenario, McpExecutor]) -> None:
    scenario, _ = opened
    # 10 tools per page: noop_24 is the last tool of the last page
    assert ALL_TOOLS > 3 * DEFAULT_PAGE_SIZE
    names = [t.name for t in scenario.tools]
    assert names == ["noop_24", "getTime", "get_weather", "slow_tool", "render_chart", "exit_server"]
    get_time = scenario.tools[1]
    assert get_time.input_schema["properties"]["offset_ms"]["type"] == "number"


def test_every_tool_without_select(tmp_path: Path) -> None:
    with open_scenario_tools(_scenario(tmp_path), start_timeout=60) as (scenario, _):
        assert len(scenario.tools) == ALL_TOOLS
        assert [t.name for t in scenario.tools][-1] == f"noop_{NOOP_TOOL_COUNT:02d}"
    assert scenario.turns[0].mcp_results


def test_the_executor_returns_the_real_result(opened: tuple[Scenario, McpExecutor]) -> None:
    _, executor = opened
    result = executor(_call("getTime", {"offset_ms": -DAY_MS}, "call_x"))
    assert result.content == (Text(text=str(NOW - DAY_MS)),)
    assert (result.call_id, result.name, result.is_error) == ("call_x", "getTime", False)


def test_a_tool_error_is_a_result(opened: tuple[Scenario, McpExecutor]) -> None:
    _, executor = opened
    result = executor(_call("get_weather", {"city": "Atlantis"}))
    assert result.is_error and error_channel(result) == "tool"
    (text,) = result.content
    assert isinstance(text, Text) and "Atlantis" in text.text
    assert all(w.city in text.text for w in _fixtures.WEATHER.values())


def test_an_unknown_tool_is_a_protocol_error_result(opened: tuple[Scenario, McpExecutor]) -> None:
    _, executor = opened
    result = executor(_call("no_such_tool", {}))
    assert result.is_error and error_channel(result) == "protocol"
    assert result.provider_details[MCP_KEY]["error"]["code"] == -32602  # spec: unknown tool -> invalid params


def test_image_content_comes_back(opened: tuple[Scenario, McpExecutor]) -> None:
    _, executor = opened
    result = executor(_call("render_chart", {"values": [1, 2, 3]}))
    (image,) = result.content
    assert isinstance(image, Image) and image.media_type == "image/png"
    assert image.data is not None and image.data.startswith("iVBORw0KGgo")  # base64 of the PNG signature


def test_a_slow_call_becomes_a_timeout_result_and_the_server_goes_on(opened: tuple[Scenario, McpExecutor]) -> None:
    _, executor = opened
    quick = McpExecutor(executor.session, timeout=3.0)  # the next call runs under it too, at any load
    started = time.monotonic()
    result = quick(_call("slow_tool", {"seconds": 120}))
    assert time.monotonic() - started < 60  # ended by the timeout, not by the tool
    assert result.is_error and result.content == (Text(text="MCP tool call timed out after 3 s"),)
    assert quick.failure is None
    assert quick(_call("getTime", {})).content == (Text(text=str(NOW)),)


def test_unreadable_arguments_never_reach_the_server(opened: tuple[Scenario, McpExecutor]) -> None:
    _, executor = opened
    before = executor.calls
    result = executor(ToolCall(id="c", name="getTime", arguments=None, arguments_error="not JSON"))
    assert result.is_error and executor.calls == before


def test_a_server_that_cannot_start_raises_with_its_stderr(tmp_path: Path) -> None:
    with pytest.raises(McpServerError) as caught:
        _start(_scenario(tmp_path, FAILING))
    assert "boom: no config file" in caught.value.stderr_tail
    assert sys.executable in caught.value.command
    assert "boom: no config file" in str(caught.value)


def test_a_select_name_the_server_does_not_offer_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError) as caught:
        _start(_scenario(tmp_path, replace(BUNDLED, select=("getTime", "gettime"))))
    (problem,) = caught.value.problems
    assert problem.pointer == "/tools/mcp/select/1"
    assert "'gettime', which the MCP server does not offer" in problem.message
    assert problem.hint == "did you mean 'getTime'?"


def test_a_server_that_dies_mid_call_fails_every_later_call(tmp_path: Path) -> None:
    with open_scenario_tools(_scenario(tmp_path), start_timeout=60) as (_, executor):
        with pytest.raises(McpServerError) as caught:
            executor(_call("exit_server", {"code": 3}))
        assert "exit_server: exiting with status 3" in caught.value.stderr_tail
        assert executor.failure is caught.value
        with pytest.raises(McpServerError) as again:
            executor(_call("getTime", {}))
        assert again.value is caught.value


# ---------------------------------------------------------------------------------- runner and recorder


def _marked_servers(marker: str) -> list[int]:
    """Live processes whose environment holds ``marker`` (the servers this test started)."""
    found = []
    needle = f"CONFORMANCE_TEST_MARKER={marker}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if needle in environ.split(b"\0") and state != "Z":
            found.append(int(entry.name))
    return found


def _wait_gone(marker: str, seconds: float = 10) -> list[int]:
    deadline = time.monotonic() + seconds
    while (left := _marked_servers(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def _record(scenario: Scenario, cassette_dir: Path, adapter: str = "openai_chat") -> str:
    from conformance.emulator import Emulator, EmulatorScript

    with Emulator() as emulator:

        def set_script(chosen: Scenario | None) -> None:
            emulator.set_script(None if chosen is None else EmulatorScript.from_scenario(chosen))

        (result,) = record_pairs(
            [scenario],
            [get_adapter(adapter)],
            cassette_dir=cassette_dir,
            base_url=emulator.base_url,
            mode="emulator",
            set_script=set_script,
        )
    return f"{result.status}: {result.detail}"


@pytest.fixture
def marker() -> str:
    return uuid.uuid4().hex


@needs_proc
def test_the_marker_finds_a_running_server(tmp_path: Path, marker: str) -> None:
    mcp = replace(BUNDLED, env={**BUNDLED.env, "CONFORMANCE_TEST_MARKER": marker})
    with open_scenario_tools(_scenario(tmp_path, mcp), start_timeout=60):
        (pid,) = _marked_servers(marker)
        assert pid != os.getpid()
    assert _wait_gone(marker) == []


@needs_proc
def test_record_then_run_through_the_server_leaves_no_process(tmp_path: Path, marker: str) -> None:
    mcp = replace(BUNDLED, env={**BUNDLED.env, "CONFORMANCE_TEST_MARKER": marker})
    scenario = _scenario(tmp_path, mcp)
    cassettes = tmp_path / "cassettes"
    assert _record(scenario, cassettes).startswith("recorded: 4 interactions")
    assert _wait_gone(marker) == []
    recorded = (cassettes / "openai_chat" / "mcp" / "case.yaml").read_text(encoding="utf-8")
    assert f'"content": "{NOW - DAY_MS}"' in recorded  # the server's answer went to the provider
    cases = run_pair(scenario, get_adapter("openai_chat"), RunOptions(cassette_dir=cassettes, timeout=60))
    assert [(c.mode, c.status) for c in cases] == [("non_stream", "pass"), ("stream", "pass")], [
        c.message for c in cases
    ]
    assert _wait_gone(marker) == []
    # recording again gives the same traffic: the cassette is left byte-identical
    assert _record(scenario, cassettes).startswith("unchanged")
    assert (cassettes / "openai_chat" / "mcp" / "case.yaml").read_text(encoding="utf-8") == recorded


def test_a_server_that_cannot_start_is_an_error_for_each_case(tmp_path: Path) -> None:
    scenario = _scenario(tmp_path)
    cassettes = tmp_path / "cassettes"
    assert _record(scenario, cassettes).startswith("recorded")
    cases = run_pair(replace(scenario, mcp=FAILING), get_adapter("openai_chat"), RunOptions(cassette_dir=cassettes))
    assert [c.status for c in cases] == ["error", "error"]
    for case in cases:
        assert case.message.startswith("the scenario's MCP server failed: ")
        assert sys.executable in case.message and "boom: no config file" in case.message
    failed = _record(replace(scenario, mcp=FAILING), tmp_path / "other")
    assert failed.startswith("failed: MCP tools: ") and "boom: no config file" in failed
    assert not (tmp_path / "other" / "openai_chat" / "mcp" / "case.yaml").exists()


def test_a_server_that_never_answers_is_bounded_by_the_case_timeout(tmp_path: Path) -> None:
    scenario = _scenario(tmp_path)
    cassettes = tmp_path / "cassettes"
    assert _record(scenario, cassettes).startswith("recorded")
    silent = McpTools(command=("{python}", "-c", "import time; time.sleep(3600)"))
    started = time.monotonic()
    cases = run_pair(
        replace(scenario, mcp=silent), get_adapter("openai_chat"), RunOptions(cassette_dir=cassettes, timeout=1)
    )
    assert time.monotonic() - started < 300  # ended by the timeout: the server sleeps an hour
    assert [c.status for c in cases] == ["error", "error"]
    assert "within 1 s" in cases[0].message


def test_a_server_dying_mid_run_is_an_error_and_fails_the_recording(tmp_path: Path) -> None:
    dying = SCENARIO_YAML.replace("name: getTime", "name: exit_server").replace("{offset_ms: -86400000}", "{code: 3}")
    scripted = dying.replace("tool_results: mcp", 'tool_results: [{content: "ok"}]')
    cassettes = tmp_path / "cassettes"
    # a cassette whose first reply calls exit_server (recorded with a scripted result) ...
    assert _record(_scenario(tmp_path, BUNDLED, scripted), cassettes).startswith("recorded")
    # ... replayed with the call executed: the server exits mid-call (the cassette comes from the
    # scripted variant on purpose: no fingerprint, so it is not judged stale)
    replayed = replace(_scenario(tmp_path, BUNDLED, dying), fingerprint="")
    cases = run_pair(replayed, get_adapter("openai_chat"), RunOptions(cassette_dir=cassettes))
    assert [c.status for c in cases] == ["error", "error"]
    assert all(c.message.startswith("the scenario's MCP server failed: ") for c in cases)
    assert "exit_server: exiting with status 3" in cases[0].message
    failed = _record(_scenario(tmp_path, BUNDLED, dying), tmp_path / "other")
    assert failed.startswith("failed: ") and "exit_server: exiting with status 3" in failed
    assert not (tmp_path / "other" / "openai_chat" / "mcp" / "case.yaml").exists()


_KILL_SCENARIO = """\
schema_version: 1
behavior: "A run blocked in a real MCP tool call is killed."
source: "issue 6: no orphan processes"
tools:
  mcp:
    command: ["{{python}}", -m, conformance, mcp-server]
    env: {{CONFORMANCE_TEST_MARKER: "{marker}"}}
    timeout: {timeout}
    select: [slow_tool]
turns:
  - user: "Call the slow tool."
    reply:
      tool_calls:
        - name: slow_tool
          arguments: {{seconds: 30}}
    tool_results: mcp
  - reply:
      text: "done"
"""


@needs_proc
def test_a_run_killed_mid_call_leaves_no_server(tmp_path: Path, marker: str) -> None:
    """Start `conformance run` on a scenario whose MCP call blocks, SIGKILL the run while the call is
    in flight, and find no server process left (the server dies with its parent)."""
    import signal
    import subprocess

    from conformance.cli import main

    scenario_file = tmp_path / "scenarios" / "mcp" / "kill.yaml"
    scenario_file.parent.mkdir(parents=True)
    cassettes = tmp_path / "cassettes"
    # Record with a short timeout (the recording itself does not wait 30 s) ...
    scenario_file.write_text(_KILL_SCENARIO.format(marker=marker, timeout=0.2), "utf-8")
    argv = ["record", "--emulator", "--adapter", "openai_chat", "--scenarios-dir", str(tmp_path / "scenarios")]
    assert main([*argv, "--cassette-dir", str(cassettes)]) == 0
    assert _wait_gone(marker) == []
    # ... then run with a long one: the replayed call blocks in the server (the cassette loses its
    # fingerprint, or the edited scenario would make it a stale cassette)
    scenario_file.write_text(_KILL_SCENARIO.format(marker=marker, timeout=60), "utf-8")
    cassette = cassettes / "openai_chat" / "mcp" / "kill.yaml"
    lines = cassette.read_text("utf-8").splitlines(keepends=True)
    cassette.write_text("".join(line for line in lines if '"scenario_sha256"' not in line), "utf-8")
    command = [sys.executable, "-m", "conformance", "run", "--scenarios", str(tmp_path / "scenarios")]
    command += ["--adapters", "openai_chat", "--cassette-dir", str(cassettes), "--report-dir", str(tmp_path / "r")]
    run = subprocess.Popen(
        command,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while not _marked_servers(marker) and time.monotonic() < deadline and run.poll() is None:
            time.sleep(0.05)
        assert _marked_servers(marker), "the run never started its MCP server"
        time.sleep(1.0)  # the call is in flight: slow_tool sleeps 30 s
        assert run.poll() is None
        run.send_signal(signal.SIGKILL)
        run.wait(10)
    finally:
        if run.poll() is None:
            run.kill()
    assert _wait_gone(marker) == []
