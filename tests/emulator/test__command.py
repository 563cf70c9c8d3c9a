"""``serve_command`` (``conformance emulator``): in a thread with a stop event, and as a real
subprocess stopped with Ctrl-C (SIGINT)."""

from __future__ import annotations

import io
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from _emulator_http import exchange, request_for

from conformance.emulator import serve_command

REPO = Path(__file__).resolve().parents[2]

SCENARIO = """\
schema_version: 1
behavior: "The adapter decodes one call, then the answer."
source: "test"
tools:
  - name: get_weather
    inputSchema: {type: object, properties: {city: {type: string}}}
turns:
  - user: "Weather in Paris?"
    reply:
      tool_calls:
        - name: get_weather
          arguments: {city: Paris}
    tool_results:
      - content: "18C"
  - reply:
      text: "It is 18C in Paris."
"""


class _Served:
    def __init__(self, **kwargs: object) -> None:
        self.out = io.StringIO()
        self.err = io.StringIO()
        self.stop = threading.Event()
        self.code: int | None = None
        self._thread = threading.Thread(target=self._run, kwargs=kwargs, daemon=True)

    def _run(self, **kwargs: object) -> None:
        self.code = serve_command(stop=self.stop, out=self.out, err=self.err, **kwargs)  # type: ignore[arg-type]

    def __enter__(self) -> str:
        self._thread.start()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            match = re.search(r"listening on (http://127\.0\.0\.1:\d+)", self.out.getvalue())
            if match:
                return match.group(1)
            if not self._thread.is_alive():
                break
            time.sleep(0.01)
        raise AssertionError(f"the emulator did not start: {self.out.getvalue()!r} {self.err.getvalue()!r}")

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self._thread.join(60)


@pytest.fixture
def scenarios(tmp_path: Path) -> Path:
    (tmp_path / "basic").mkdir()
    (tmp_path / "basic" / "weather.yaml").write_text(SCENARIO, encoding="utf-8")
    (tmp_path / "broken.yaml").write_text("schema_version: 1\nturns: []\n", encoding="utf-8")
    return tmp_path


def test_it_serves_the_default_reply_on_an_ephemeral_port_until_stopped() -> None:
    served = _Served(port=0)
    with served as url, httpx.Client(base_url=url) as http:
        outcome = exchange(http, "openai_chat", request_for("openai_chat", stream=False))
        assert outcome.response is not None and outcome.response.text == "Hello from the conformance emulator."
    assert served.code == 0
    printed = served.out.getvalue()
    assert f"{url}/v1/chat/completions" in printed and f"{url}/api/chat" in printed
    assert "default reply" in printed and "Ctrl-C" in printed and "stopped" in printed


def test_it_plays_a_scenario_by_id(scenarios: Path) -> None:
    served = _Served(port=0, scenario="basic/weather", scenarios_dir=str(scenarios))
    with served as url, httpx.Client(base_url=url) as http:
        first = exchange(http, "anthropic", request_for("anthropic", stream=True))
        assert first.response is not None
        assert [(c.name, c.arguments) for c in first.response.tool_calls] == [("get_weather", {"city": "Paris"})]
    assert "playing scenario basic/weather (2 turn(s))" in served.out.getvalue()
    assert served.code == 0


def test_it_plays_every_scenario_chosen_by_the_request(scenarios: Path) -> None:
    from conformance.adapters import get_adapter
    from conformance.model import Message
    from conformance.run.conversation import build_request
    from conformance.scenarios.loader import load_scenario

    weather = load_scenario(scenarios / "basic" / "weather.yaml", root=scenarios)
    adapter = get_adapter("openai_responses")
    sent = adapter.request_to_wire(
        build_request(weather, (Message(role="user", parts=weather.turns[0].user),), model="m", stream=False)
    )
    served = _Served(port=0, play_scenarios=True, scenarios_dir=str(scenarios))
    with served as url:
        answer = httpx.post(f"{url}{sent.path}", json=sent.body, timeout=10).json()
    calls = [item for item in answer["output"] if item["type"] == "function_call"]
    assert [(c["name"], c["arguments"]) for c in calls] == [("get_weather", '{"city":"Paris"}')]
    assert "playing 77 scenario(s), each request answered from the one it belongs to" in served.out.getvalue()
    assert "left out" in served.err.getvalue() and "broken.yaml" in served.err.getvalue()
    assert served.code == 0


def test_play_scenarios_with_one_scenario_is_a_usage_error() -> None:
    err = io.StringIO()
    assert serve_command(port=0, scenario="basic/get_time", play_scenarios=True, out=io.StringIO(), err=err) == 2
    assert "--play-scenarios" in err.getvalue() and "--scenario basic/get_time" in err.getvalue()


def test_an_unknown_scenario_is_a_usage_error_with_the_nearest_ids(scenarios: Path) -> None:
    err = io.StringIO()
    code = serve_command(port=0, scenario="basic/wether", scenarios_dir=str(scenarios), out=io.StringIO(), err=err)
    assert code == 2
    assert "no scenario 'basic/wether'" in err.getvalue() and "did you mean basic/weather" in err.getvalue()


def test_a_scenario_with_problems_prints_them(scenarios: Path) -> None:
    err = io.StringIO()
    code = serve_command(port=0, scenario="broken", scenarios_dir=str(scenarios), out=io.StringIO(), err=err)
    assert code == 1
    assert "broken.yaml" in err.getvalue() and "conformance validate" in err.getvalue()


def test_a_missing_scenarios_dir_is_a_usage_error(tmp_path: Path) -> None:
    err = io.StringIO()
    code = serve_command(port=0, scenario="x", scenarios_dir=str(tmp_path / "nope"), out=io.StringIO(), err=err)
    assert code == 2 and "nope" in err.getvalue()


def test_a_bad_or_busy_port_is_reported() -> None:
    err = io.StringIO()
    assert serve_command(port=70000, out=io.StringIO(), err=err) == 2
    assert "not a TCP port" in err.getvalue()
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        err = io.StringIO()
        assert serve_command(port=port, out=io.StringIO(), err=err) == 1
    assert f"cannot listen on 127.0.0.1:{port}" in err.getvalue() and "--port" in err.getvalue()


@pytest.fixture
def cli() -> Iterator[subprocess.Popen[str]]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(
        [sys.executable, "-m", "conformance", "emulator", "--port", "0"],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate(timeout=60)


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child process is POSIX-only")
def test_the_cli_prints_its_url_serves_and_exits_0_on_ctrl_c(cli: subprocess.Popen[str]) -> None:
    assert cli.stdout is not None
    line = cli.stdout.readline()
    match = re.search(r"listening on (http://127\.0\.0\.1:\d+)", line)
    assert match, line
    with httpx.Client(base_url=match.group(1)) as http:
        outcome = exchange(http, "gemini", request_for("gemini", stream=True))
        assert outcome.response is not None and outcome.response.text == "Hello from the conformance emulator."
    cli.send_signal(signal.SIGINT)
    assert cli.wait(timeout=60) == 0
