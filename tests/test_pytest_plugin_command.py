"""The pytest plugin's ``command=`` (``@pytest.mark.conformance(command="node drivers/x.mjs", ...)``):
a driver in any language on the client protocol (docs/protocol.md), certified as pytest items in
inner sessions with ``pytester``. The driver here is a Python one run as a command
(``PYTHON -m conformance.clients.child examples/clients/minimal_openai_driver.py:CLIENT``): the same
verdicts as the same driver in-process (``client=``) are the expected ones."""

from __future__ import annotations

import importlib.util
import json
import os
import shlex
import sys
import textwrap
from importlib import metadata
from pathlib import Path

import pytest

import conformance

pytest_plugins = ["pytester"]

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("openai") is None, reason="the minimal driver (examples/clients) needs openai"
)

INSTALLED = bool(metadata.entry_points(group="pytest11", name="conformance"))
PLUGIN_ARGS: tuple[str, ...] = () if INSTALLED else ("-p", "conformance.pytest_plugin")
ROOT = Path(__file__).resolve().parents[1]
DRIVER = f"{ROOT / 'examples' / 'clients' / 'minimal_openai_driver.py'}:CLIENT"
COMMAND = f"{shlex.quote(sys.executable)} -m conformance.clients.child {shlex.quote(DRIVER)}"


def run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, body: str, *args: str) -> pytest.RunResult:
    """An inner session in an interpreter of its own (the driver's ``openai`` and the session's
    processes stay out of this one), importing the ``conformance`` this session imports."""
    pytester.makepyfile(test_inner_command_marker=textwrap.dedent(body))
    here = str(Path(conformance.__file__).resolve().parents[1])
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [here, os.environ.get("PYTHONPATH")])))
    return pytester.runpytest_subprocess(*PLUGIN_ARGS, "-p", "no:cacheprovider", *args, timeout=300)


def outcomes(result: pytest.RunResult) -> dict[str, int]:
    return {k: v for k, v in result.parseoutcomes().items() if k != "seconds"}


def test_a_command_is_certified_as_the_same_driver_in_process(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """One item per (wire, scenario, mode), named by the hello's wires; the same outcomes as the same
    driver given as ``client=`` (it does not stream: the stream cases skip as unsupported), and the
    report's column is the hello's name."""
    body = f"""
    import pytest
    from conformance.clients.child import load_object

    SCENARIOS = ["basic/get_time", "basic/parallel_calls"]

    @pytest.mark.conformance(command={COMMAND!r}, wires=["openai_chat"], scenarios=SCENARIOS)
    def test_command(conformance_case):
        conformance_case.check()

    @pytest.mark.conformance(client=load_object({DRIVER!r}), scenarios=SCENARIOS)
    def test_in_process(conformance_case):
        conformance_case.check()
    """
    reports = tmp_path / "reports"
    result = run(pytester, monkeypatch, body, "-v", "--conformance-report-dir", str(reports))
    assert outcomes(result) == {"passed": 4, "skipped": 4}
    for test in ("test_command", "test_in_process"):
        result.stdout.fnmatch_lines([f"*::{test}[[]openai_chat-basic/get_time-non_stream[]] PASSED*"])
        result.stdout.fnmatch_lines([f"*::{test}[[]openai_chat-basic/get_time-stream[]] SKIPPED*streaming*"])
    report = json.loads((reports / "report.json").read_text(encoding="utf-8"))
    assert {c["adapter"] for c in report["cases"]} == {"openai-sdk-chat/openai_chat"}


def test_a_command_serves_every_marker_that_names_it_and_ends_with_the_session(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two tests naming the same command share its driver; no process of it is left after the session."""
    body = f"""
    import pytest

    @pytest.mark.conformance(command={COMMAND!r}, scenarios=["basic/get_time"], modes=["non_stream"])
    def test_one(conformance_case):
        conformance_case.check()

    @pytest.mark.conformance(command={COMMAND!r}, scenarios=["basic/get_time"], modes=["non_stream"])
    def test_two(conformance_case):
        conformance_case.check()

    def test_shared(request):
        plugin = request.config.stash[__import__("conformance.pytest_plugin").pytest_plugin._STASH]
        assert len(plugin._commands) == 1
    """
    before = _drivers()
    result = run(pytester, monkeypatch, body)
    assert outcomes(result) == {"passed": 3}
    assert _drivers() <= before  # every child of the command ended with the session


def _drivers() -> set[int]:
    """The live processes running this driver (Linux ``/proc``; elsewhere none are seen)."""
    found: set[int] = set()
    needle = DRIVER.encode()
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            line = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if needle in line:
            found.add(int(entry.name))
    return found


def test_a_command_that_does_not_start_is_a_usage_error_naming_the_marker(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    silent = f"{shlex.quote(sys.executable)} -c pass"  # exits without a hello
    body = f"""
    import pytest

    @pytest.mark.conformance(command={silent!r})
    def test_silent(conformance_case):
        conformance_case.check()
    """
    result = run(pytester, monkeypatch, body)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*test_silent: command=*-c pass*did not start*"])


@pytest.mark.parametrize(
    ("marker", "said"),
    [
        ("command='', wires=['openai_chat']", "command= takes the driver's command line as one string*"),
        ("command=['node', 'x.mjs']", "command= takes the driver's command line as one string*"),
        ("command='node x.mjs', client=object()", "takes client=, adapter= or command= (one of them)*"),
    ],
)
def test_a_bad_command_marker_is_a_usage_error(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, marker: str, said: str
) -> None:
    body = f"""
    import pytest

    @pytest.mark.conformance({marker})
    def test_bad(conformance_case):
        conformance_case.check()
    """
    result = run(pytester, monkeypatch, body)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines([f"*test_bad: *{said}"])


def test_a_driver_that_dies_in_a_turn_costs_that_case_an_error_and_the_session_goes_on(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A driver command that exits while it answers: the case is an ERROR naming it (docs/protocol.md,
    "What breaks the protocol"), the next case starts the driver again and the session goes on."""
    driver = pytester.path / "dying_driver.py"
    driver.write_text(
        textwrap.dedent(
            f"""
            import os
            import sys

            sys.path.insert(0, {str(ROOT / "examples" / "clients")!r})
            import minimal_openai_driver as minimal
            from conformance.clients import SimpleClient

            def complete(call):
                if call.scenario == "basic/parallel_calls":
                    os._exit(3)
                return minimal.complete(call)

            CLIENT = SimpleClient(
                name="dying", wires=minimal.CLIENT.wires, complete=complete, error_info=minimal.error_info,
                duties=minimal.CLIENT.duties,
            )
            """
        ),
        encoding="utf-8",
    )
    command = f"{shlex.quote(sys.executable)} -m conformance.clients.child {shlex.quote(str(driver))}:CLIENT"
    body = f"""
    import pytest

    @pytest.mark.conformance(
        command={command!r}, scenarios=["basic/parallel_calls", "basic/get_time"], modes=["non_stream"]
    )
    def test_dying(conformance_case):
        conformance_case.check()
    """
    result = run(pytester, monkeypatch, body, "-v")
    assert outcomes(result) == {"passed": 1, "failed": 1}
    result.stdout.fnmatch_lines(["*basic/parallel_calls-non_stream*FAILED*"])
    result.stdout.fnmatch_lines(["*conformance ERROR: dying/openai_chat basic/parallel_calls non_stream*"])
    result.stdout.fnmatch_lines(["*exited with code 3*"])
