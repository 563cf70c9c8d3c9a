"""The pytest plugin survives its clients (issue 27, point 3): the (target, wire, scenario) pairs run
in a worker process (``conformance.run.workers.WorkerPool``), so a client that calls ``os._exit``,
segfaults, hangs in C or runs out of the worker's memory fails its own items with an ERROR saying
what happened, and the session goes on: later tests run and ``--conformance-report-dir`` is written,
under pytest-xdist too, where the crashed case is an error in ``report.json`` and ``junit.xml``.
The network guard holds in the worker: a client there that reaches beyond loopback is refused.

Every inner session runs in an interpreter of its own: a crash must not end this one (on the plugin
as it was, a client's ``os._exit`` ended the whole session). Their wall timeout is a safety net only.
"""

from __future__ import annotations

import json
import os
import re
import textwrap
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from types import MappingProxyType

import pytest

import conformance
from conformance.run.workers import MEMORY_ENV, can_fork

pytest_plugins = ["pytester"]

pytestmark = pytest.mark.skipif(not can_fork(), reason="the plugin forks a worker per pair where it can")

ROOT = Path(conformance.__file__).resolve().parents[1]
PLUGIN_ARGS: tuple[str, ...] = (
    () if metadata.entry_points(group="pytest11", name="conformance") else ("-p", "conformance.pytest_plugin")
)
"""How an inner session loads the plugin: by itself where installed, else by name."""
SAFETY_NET = 600.0
"""Seconds an inner session may take before it is taken for a hang (a few seconds at rest)."""

CLIENTS = '''
import ctypes
import dataclasses
import faulthandler
import os
import pathlib
import signal
import socket
import subprocess
import sys

import pytest

from conformance.adapters import for_format
from conformance.clients.translator import TranslatorClient

from tests._mutant_clients import Retrying

ANTHROPIC = TranslatorClient(for_format("anthropic"))
HERE = pathlib.Path(__file__).parent


@dataclasses.dataclass(frozen=True)
class Sabotaged(Retrying):
    """The anthropic client, except that each turn first does ``how``."""

    how: str = "exit"

    def complete(self, call):
        (HERE / "client.pid").write_text(str(os.getpid()))
        if self.how == "exit":
            os._exit(3)
        if self.how == "segfault":
            faulthandler.disable()  # a deliberate crash: no "Fatal Python error" stack on the session's output
            ctypes.string_at(0)
        if self.how == "gil":  # one C call that holds the GIL for an hour, asleep (PyDLL keeps the GIL)
            ctypes.PyDLL(None).sleep(3600)
        if self.how == "memory":  # 2 GiB (calloc: untouched pages, so it costs nothing where it is allowed)
            bytearray(2 << 30)
        if self.how == "connect":
            socket.create_connection(("10.255.255.1", 9), timeout=2).close()
        if self.how == "_socket":  # the C-level class under socket.socket
            import _socket

            raw = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
            raw.settimeout(2)
            raw.connect(("10.255.255.1", 9))
            raw.close()
        if self.how == "udp":
            socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("10.255.255.1", 9))
        if self.how == "child":
            code = "import socket; socket.create_connection(('10.255.255.1', 9), timeout=2).close()"
            done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
            if done.returncode:
                raise RuntimeError(f"the child process failed: {done.stderr.strip()[-600:]}")
        return self.inner.complete(call)


'''

ITEMS = """
@pytest.mark.conformance(client=Sabotaged(ANTHROPIC, name="{how}", how="{how}"), scenarios=["basic/get_time"])
def test_sabotaged(conformance_case):
    conformance_case.check()


@pytest.mark.conformance(client=ANTHROPIC, scenarios=["basic/get_time"])
def test_zz_later_client(conformance_case):
    conformance_case.check()


def test_zz_later_plain():
    (HERE / "session.pid").write_text(str(os.getpid()))
"""


def session(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    how: str,
    *args: str,
    environ: Mapping[str, str] = MappingProxyType({}),
    more: str = "",
) -> pytest.RunResult:
    """An inner session in its own interpreter over the sabotaged client ``how`` and two later tests
    (a client that passes, a plain test), and ``more`` tests, importing the ``conformance`` this
    session imports."""
    pytester.makepyfile(test_cases=CLIENTS + textwrap.dedent(ITEMS.format(how=how)) + textwrap.dedent(more))
    paths = [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]  # CLIENTS imports tests._mutant_clients
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(paths))
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    return pytester.runpytest_subprocess(*PLUGIN_ARGS, "-p", "no:cacheprovider", "-rA", *args, timeout=SAFETY_NET)


def outcomes(result: pytest.RunResult) -> dict[str, int]:
    return {k: v for k, v in result.parseoutcomes().items() if k not in ("seconds",)}


def report(folder: Path) -> tuple[dict[str, str], dict[str, str]]:
    """The cases of ``report.json`` (``adapter scenario mode``: status) and of ``junit.xml`` (``name``:
    its outcome element, or ``pass``); the four reports are there."""
    assert sorted(p.name for p in folder.iterdir()) == ["junit.xml", "report.html", "report.json", "report.md"]
    data = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    cases = {f"{c['adapter']} {c['scenario']} {c['mode']}": c["status"] for c in data["cases"]}
    junit = {}
    for case in ET.parse(folder / "junit.xml").getroot().iter("testcase"):
        outcome = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
        junit[f"{case.get('classname')} {case.get('name')}"] = outcome[0] if outcome else "pass"
    return cases, junit


def the_clients_cases(cases: dict[str, str], name: str) -> dict[str, str]:
    return {k: v for k, v in cases.items() if k.startswith(f"{name}/")}


@pytest.mark.parametrize(("how", "shown"), [("exit", "exit code 3"), ("segfault", "killed by SIGSEGV")])
def test_a_client_that_crashes_errors_its_items_and_the_session_goes_on(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, how: str, shown: str
) -> None:
    result = session(pytester, monkeypatch, how, f"--conformance-report-dir={tmp_path / 'out'}")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    # both modes of the crashed pair are errors; the later client's two items and the plain test pass
    assert outcomes(result) == {"failed": 2, "passed": 3}
    result.stdout.fnmatch_lines(
        [
            f"*conformance ERROR: {how}/anthropic basic/get_time non_stream*",
            f"the worker process running {how}/anthropic on basic/get_time died ({shown}) before this case finished:*",
        ]
    )
    assert "PASSED test_cases.py::test_zz_later_plain" in result.outlines
    client = int((pytester.path / "client.pid").read_text())
    assert client != int((pytester.path / "session.pid").read_text()), "the client ran in the session's process"
    cases, junit = report(tmp_path / "out")
    assert the_clients_cases(cases, how) == {
        f"{how}/anthropic basic/get_time non_stream": "error",
        f"{how}/anthropic basic/get_time stream": "error",
    }
    assert set(the_clients_cases(cases, "anthropic-as-client").values()) == {"pass"}
    assert sorted(v for k, v in junit.items() if k.startswith(f"{how}/")) == ["error", "error"]


def test_under_xdist_a_crashed_case_is_an_error_in_the_reports(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    pytest.importorskip("xdist")
    result = session(pytester, monkeypatch, "exit", "-n", "2", f"--conformance-report-dir={tmp_path / 'out'}")
    result.stdout.fnmatch_lines(["*2 workers*"])
    assert outcomes(result) == {"failed": 2, "passed": 3}
    assert "crashed while running" not in result.stdout.str()  # no xdist worker died
    cases, junit = report(tmp_path / "out")
    assert the_clients_cases(cases, "exit") == {
        "exit/anthropic basic/get_time non_stream": "error",
        "exit/anthropic basic/get_time stream": "error",
    }
    assert sorted(v for k, v in junit.items() if k.startswith("exit/")) == ["error", "error"]
    assert set(the_clients_cases(cases, "anthropic-as-client").values()) == {"pass"}


KILLS_ITS_XDIST_WORKER = """
@pytest.mark.conformance(client=TranslatorClient(for_format("anthropic"), name="dies"), scenarios=["basic/get_time"],
                         modes=["non_stream"])
def test_kills_its_xdist_worker(conformance_case):
    os._exit(3)  # not in the client: in the test, around it (the xdist worker itself dies)
"""


def test_under_xdist_an_item_whose_xdist_worker_dies_is_an_error_in_the_reports(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    pytest.importorskip("xdist")
    out = tmp_path / "out"
    result = session(
        pytester, monkeypatch, "exit", "-n", "2", f"--conformance-report-dir={out}", more=KILLS_ITS_XDIST_WORKER
    )
    assert outcomes(result) == {"failed": 3, "passed": 3}
    result.stdout.fnmatch_lines(["*crashed while running*test_kills_its_xdist_worker*"])
    data = json.loads((out / "report.json").read_text(encoding="utf-8"))
    [died] = [c for c in data["cases"] if c["adapter"] == "dies/anthropic"]
    assert (died["scenario"], died["mode"], died["status"]) == ("basic/get_time", "non_stream", "error")
    assert died["message"].startswith("the pytest-xdist worker running this case died before it finished (")
    _, junit = report(out)
    assert [v for k, v in junit.items() if k.startswith("dies/")] == ["error"]


def test_a_hang_holding_the_gil_is_killed_by_the_watchdog(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the budget: per mode, a timeout per turn (2) and one for the checks; one for the cassette and one
    # for an MCP server; a grace of 5 s: (2 x 3 + 2) x 2.5 + 5 = 25 s
    result = session(pytester, monkeypatch, "gil", "--conformance-timeout=2.5")
    assert outcomes(result) == {"failed": 2, "passed": 3}
    result.stdout.fnmatch_lines(
        [
            "*the worker process running gil/anthropic on basic/get_time gave no answer within 25 s and was killed:*",
        ]
    )
    result.stdout.fnmatch_lines(["*--conformance-timeout changes the limit (2.5 s per turn); the session went on*"])


@pytest.mark.parametrize("value", ["nan", "0", "-1", "inf", "soon"])
def test_a_timeout_that_is_not_a_finite_positive_number_is_a_usage_error(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    result = session(pytester, monkeypatch, "exit", f"--conformance-timeout={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*--conformance-timeout*{value!r} is not a finite number of seconds above 0*"])
    assert not (pytester.path / "client.pid").exists()


def test_the_worker_has_a_memory_limit(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    result = session(pytester, monkeypatch, "memory", environ={MEMORY_ENV: "768M"})
    assert outcomes(result) == {"failed": 2, "passed": 3}
    result.stdout.fnmatch_lines(["*conformance ERROR: memory/anthropic basic/get_time non_stream*", "*MemoryError*"])


# ---- the network guard in the worker -----------------------------------------------------------


@pytest.mark.parametrize("how", ["connect", "_socket", "udp", "child"])
def test_a_client_in_the_worker_cannot_leave_loopback(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    result = session(pytester, monkeypatch, how)
    assert outcomes(result) == {"failed": 2, "passed": 3}
    result.stdout.fnmatch_lines([f"*conformance *: {how}/anthropic basic/get_time non_stream*"])
    # each attempt is a finding of the case that names the address (certify's rule, docs/clients.md)
    assert re.search(r"10\.255\.255\.1.*\brefused\b", result.stdout.str()), result.stdout.str()
    assert int((pytester.path / "client.pid").read_text()) != int((pytester.path / "session.pid").read_text())


# ---- docs/pytest.md states the bounds ----------------------------------------------------------


def test_the_doc_states_the_bounds_the_plugin_has() -> None:
    from conformance.pytest_plugin import DEFAULT_TIMEOUT
    from conformance.run.runner import WATCHDOG_GRACE, pair_budget
    from conformance.run.workers import default_memory_limit
    from conformance.scenarios.loader import load_scenarios

    doc = " ".join((ROOT / "docs" / "pytest.md").read_text(encoding="utf-8").split())
    assert f"`--conformance-timeout SECONDS` (default {DEFAULT_TIMEOUT:g})" in doc
    assert f"per turn of a client (default {DEFAULT_TIMEOUT:g})" in doc
    assert f"one for an MCP server, and {WATCHDOG_GRACE:g} s" in doc
    [scenario] = [s for s in load_scenarios().scenarios if s.id == "basic/get_time"]
    budget = pair_budget(2 * (len(scenario.turns) + 1), DEFAULT_TIMEOUT)  # as the plugin gives a client's pair
    assert len(scenario.turns) == 2 and f"two-turn scenario in both modes gets {budget:g} s" in doc
    assert f"gave no answer within {budget:g} s and was killed" in doc
    assert "a quarter of the RAM, between 1 and 4 GiB" in doc
    assert 1 << 30 <= default_memory_limit() <= 4 << 30
    assert f"`{MEMORY_ENV}` changes it" in doc


PLAIN_NETWORK_TEST = """
import socket

import _socket
import pytest

from conformance.errors import NetworkBlockedError

AWAY = ("10.255.255.1", 9)


def test_raw_socket():
    with pytest.raises(NetworkBlockedError, match="10.255.255.1:9"):
        _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM).connect(AWAY)


def test_udp():
    with pytest.raises(NetworkBlockedError, match="10.255.255.1:9"):
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", AWAY)

"""


def test_a_plain_test_cannot_leave_loopback_through_raw_socket_or_udp(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The session's guard (a test's own code, no client), which the pairs' workers inherit."""
    pytester.makepyfile(test_net=PLAIN_NETWORK_TEST)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]))
    result = pytester.runpytest_subprocess(*PLUGIN_ARGS, "-p", "no:cacheprovider", "-rA", timeout=SAFETY_NET)
    assert outcomes(result) == {"passed": 2}, result.stdout.str()


def test_a_crashed_worker_leaves_no_guard_folder_behind(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The folder that guards a client's Python children belongs to the session, not to the worker:
    a worker that dies inside a pair leaves nothing in the temporary folder."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    result = session(pytester, monkeypatch, "exit", environ={"TMPDIR": str(scratch)})
    assert outcomes(result) == {"failed": 2, "passed": 3}
    assert sorted(p.name for p in scratch.iterdir() if p.name.startswith("conformance-guard-")) == []
