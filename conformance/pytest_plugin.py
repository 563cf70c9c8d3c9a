"""The pytest plugin (entry point ``pytest11: conformance``): the suite's cases as pytest items.

A thin layer over the runner (``conformance.run.runner.run_pair``) and the client harness
(``conformance.clients.harness.Harness``); ``docs/pytest.md`` shows it in use::

    @pytest.mark.conformance(client=MY_CLIENT, wires=["anthropic"], scenarios=["basic/*", "errors/*"])
    def test_my_client(conformance_case):
        conformance_case.check()

- **Items.** A test taking ``conformance_case`` and marked ``conformance`` (``client=`` or
  ``adapter=``, optional ``wires``, ``scenarios`` globs, ``modes``) is parametrised at collection into
  one item per (scenario, wire, mode), id ``<wire>-<scenario>-<mode>`` (an adapter's wire is the
  traffic it declares). ``check()`` runs its (target, wire, scenario) pair once per process (the
  non-streamed conversation feeds the streamed case's fold comparison) and takes its mode's case:
  FAIL and ERROR fail the item with the findings (check id, JSON path, expected, actual) and the
  cassette; a declared known gap is ``xfail`` with its reason, and a gap that passes fails the item
  as stale (``xfail(strict=True)``); UNSUPPORTED skips with the reason.
- **Isolation.** Where fork is available (``conformance.run.workers.can_fork``), the pairs run in a
  worker process (``WorkerPool``: the workers of ``conformance run`` and ``certify``, forked at the
  first pair and knowing every pair collected), which records a pair's cassette first when the record
  mode asks: a client or adapter that exits, segfaults, overruns the pair's budget
  (``--conformance-timeout`` per case or turn, as the CLI's) or the worker's memory limit costs the
  pair's items an ERROR saying so, the next pair gets a new worker, and the session goes on. The
  worker inherits the session's network guard. Under xdist, an item carries from its setup the ERROR
  case the controller keeps should its xdist worker die before the item's call report.
- **command=.** ``@pytest.mark.conformance(command="node drivers/x.mjs", wires=["openai_chat"])``
  certifies a driver in any language on the client protocol (docs/protocol.md), as ``certify
  --command`` does (``conformance.pipeline.targets.load_command``): the driver starts at collection
  (its hello names the client and its wires; one process per distinct command, shared by the markers
  that name it) and ends with the session; each worker process drives a child of its own
  (``RemoteClient.again``), so a pipe is never shared. A driver that does not start is the test's
  collection error; one that breaks the protocol, dies or hangs costs its turn's case an ERROR and the
  next turn starts it again (``conformance.clients.remote``).
- **server=.** ``@pytest.mark.conformance(server="http://127.0.0.1:8080", wires=["openai_chat"])``
  certifies a model server (``conformance.servers.certify_server``, docs/servers.md): one item per
  (wire, scenario a live server can be asked, mode) and per invalid-request probe
  (``server/invalid/<probe>``, non-streamed), with optional ``scenarios``, ``modes``, ``model``,
  ``api_key_env`` (the name of the variable holding the key) and ``name``. Each pair runs once, in
  this process (the server is judged, not our code: its bounds are the server target's); a deviated
  case (the model's choice) skips saying what the model did.
- **conformance_server.** A loopback ``Emulator`` playing one scenario's cassette for one wire
  (``@pytest.mark.conformance_server(scenario=..., wire=...)`` or indirect parametrisation with a
  ``{"scenario": ..., "wire": ...}`` param): ``base_url``, ``requests``, ``played``.
- **Options** (group ``conformance``): ``--conformance-record-mode`` (pytest-recording's
  ``--record-mode``: ``none`` replays only; ``once`` records a missing cassette; ``new`` also
  re-records one that does not load; ``rewrite`` records every pair again, once per process), against
  the emulator or ``--conformance-live-url`` (key from ``--conformance-api-key-env``);
  ``--conformance-block-network`` (default; ``--no-conformance-block-network`` lifts it): only
  loopback while tests run (``conformance.traffic.network_guard``), and while a pair runs in the
  Python processes its client or adapter starts (``guard_children``); ``--conformance-report-dir``:
  every format of ``conformance.reporting.write_reports`` at the session's end, from the case each
  item carries on its report (``user_properties``), so it works under pytest-xdist;
  ``--conformance-allow-commands`` (or the ini option ``conformance_allow_commands``): scenarios
  that are not bundled may start their ``tools.mcp`` commands (``conformance.mcp_bridge.trust``);
  ``--conformance-allow-remote-mcp``: scenarios may reach MCP servers at URLs that are not loopback;
  ``--conformance-mcp-transport stdio|http``: how the bundled MCP server runs (docs/mcp.md);
  ``--conformance-timeout``: seconds per case of an adapter, per turn of a client.

Module level imports only pytest and the standard library: installed, the plugin loads into every
pytest session, and the suite is imported only by a session that uses it.
"""

from __future__ import annotations

import argparse
import contextlib
import fnmatch
import importlib
import json
import math
import os
import pickle
import tempfile
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeAlias

import pytest

if TYPE_CHECKING:
    from conformance.adapters.base import Adapter
    from conformance.emulator import Emulator
    from conformance.run.workers import WorkerFailure, WorkerPool
    from conformance.scenarios.values import Mode, Scenario
    from conformance.verdicts import AdapterInfo, CaseResult, ScenarioInfo

__all__ = [
    "DEFAULT_TIMEOUT",
    "RECORD_MODES",
    "ConformanceCase",
    "conformance_case",
    "conformance_server",
    "failure_message",
    "pytest_addoption",
    "pytest_configure",
    "pytest_generate_tests",
    "pytest_runtestloop",
    "suite_dirs",
]

RECORD_MODES = ("none", "once", "new", "rewrite")
DEFAULT_TIMEOUT = 30.0
"""``--conformance-timeout``'s default: seconds per case of an adapter, per turn of a client (the CLI's)."""
PROPERTY = "conformance_case"
"""The ``user_properties`` key of the JSON a finished item carries to the controller."""
PLANNED = "conformance_case_planned"
"""The ``user_properties`` key of the ERROR case an xdist worker's item carries from its setup: the
controller keeps it if the xdist worker dies before the item's call report (the case is never missing)."""

_STASH: pytest.StashKey[_Plugin] = pytest.StashKey()


def suite_dirs(config: pytest.Config) -> tuple[Path, list[Path]]:
    """Where the cassettes and the scenarios are: the options (a folder replacing the bundled one),
    else the bundled ones (``conformance.scenarios.bundled``: package data when installed). The one
    place the plugin decides it."""
    from conformance.scenarios import bundled

    cassettes = config.getoption("conformance_cassette_dir")
    scenarios = config.getoption("conformance_scenarios_dir")
    return Path(cassettes) if cassettes else bundled.cassettes_dir(), [Path(scenarios)] if scenarios else []


def _usage(message: str) -> NoReturn:
    """A mistake in a marker or a fixture's choice: the collection error or test error says it, without
    a traceback of the plugin."""
    pytest.fail(message, pytrace=False)


# ---- options and markers -----------------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("conformance", "LLM tool-calling conformance (conformance.pytest_plugin)")
    group.addoption(
        "--conformance-record-mode",
        choices=RECORD_MODES,
        default="none",
        help="none: replay only (a missing cassette is an error); once: record missing cassettes; "
        "new: also re-record cassettes that do not load; rewrite: record every pair again (default: none)",
    )
    group.addoption(
        "--conformance-live-url",
        default=None,
        metavar="URL",
        help="record against this provider base URL instead of the loopback emulator",
    )
    group.addoption(
        "--conformance-api-key-env",
        default=None,
        metavar="VAR",
        help="environment variable holding the key for --conformance-live-url",
    )
    group.addoption(
        "--conformance-block-network",
        dest="conformance_block_network",
        action="store_true",
        default=True,
        help="allow only loopback connections while tests run (default: on)",
    )
    group.addoption(
        "--no-conformance-block-network",
        dest="conformance_block_network",
        action="store_false",
        help="do not block non-loopback connections",
    )
    group.addoption(
        "--conformance-report-dir",
        default=None,
        metavar="DIR",
        help="write the run's reports (JSON, Markdown, HTML, JUnit) into DIR at the session's end",
    )
    group.addoption(
        "--conformance-timeout",
        type=_seconds,
        default=DEFAULT_TIMEOUT,
        metavar="SECONDS",
        help=f"seconds per case of an adapter, per turn of a client (default: {DEFAULT_TIMEOUT:g}); a worker "
        "process that overruns its pair's budget is killed and the pair's items are errors",
    )
    group.addoption("--conformance-cassette-dir", default=None, metavar="DIR", help="the cassettes to replay")
    group.addoption("--conformance-scenarios-dir", default=None, metavar="DIR", help="the scenarios to run")
    group.addoption(
        "--conformance-allow-commands",
        action="store_true",
        default=None,
        help="let scenarios that are not bundled start their tools.mcp commands (docs/scenarios.md#trust); "
        "also the ini option conformance_allow_commands",
    )
    group.addoption(
        "--conformance-allow-remote-mcp",
        action="store_true",
        default=False,
        help="let scenarios reach MCP servers at tools.mcp.url addresses that are not loopback (docs/mcp.md)",
    )
    group.addoption(
        "--conformance-mcp-transport",
        choices=("stdio", "http"),
        default="stdio",
        help="run the bundled MCP server over stdio or Streamable HTTP on 127.0.0.1 (default: %(default)s)",
    )
    parser.addini(
        "conformance_allow_commands",
        type="bool",
        default=False,
        help="let scenarios that are not bundled start their tools.mcp commands (docs/scenarios.md#trust)",
    )


def _seconds(text: str) -> float:
    """``--conformance-timeout``: a finite number of seconds above zero (else a usage error)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number of seconds above 0 (e.g. 30)")
    return value


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "conformance(client=None, adapter=None, command=None, server=None, wires=None, scenarios=None, modes=None): "
        "one item per (scenario, wire, mode) of the client, adapter, driver command or server, run by the "
        "conformance_case fixture",
    )
    config.addinivalue_line(
        "markers", "conformance_server(scenario, wire): the scenario the conformance_server fixture plays"
    )
    plugin = _Plugin(config)
    config.stash[_STASH] = plugin
    config.pluginmanager.register(plugin, "conformance-session")


@pytest.hookimpl(wrapper=True)
def pytest_runtestloop(session: pytest.Session) -> Iterator[None]:
    if not session.config.getoption("conformance_block_network"):
        return (yield)
    from conformance.traffic.network_guard import network_guard

    with network_guard():  # the workers of the pairs inherit it
        return (yield)


# ---- collection --------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Target:
    """What a marker certifies: a client on its wires, or an adapter on its traffic format."""

    key: int
    adapter: Adapter | None
    client: Any
    server: Any = None
    """``server=``: the ``conformance.servers.ServerOptions`` of a model server (all wires)."""


@dataclass(frozen=True)
class _Spec:
    target: _Target
    wire: str
    scenario: str
    mode: str
    modes: tuple[str, ...]
    """The modes of the pair that the marker asks for (the pair is run once for all of them)."""

    @property
    def id(self) -> str:
        return f"{self.wire}-{self.scenario}-{self.mode}"


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "conformance_case" not in metafunc.fixturenames:
        return
    marker = metafunc.definition.get_closest_marker("conformance")
    if marker is None:
        _usage(
            f"{metafunc.definition.nodeid}: conformance_case needs @pytest.mark.conformance(client=... or adapter=...)"
        )
    plugin = metafunc.config.stash[_STASH]
    specs = plugin.specs(marker, metafunc.definition.nodeid)
    metafunc.parametrize("conformance_case", specs, ids=[s.id for s in specs], indirect=True)


# ---- fixtures ----------------------------------------------------------------------------------


@dataclass
class ConformanceCase:
    """One (scenario, wire, mode) case of a client or adapter; ``check()`` runs and judges it."""

    wire: str
    scenario: str
    mode: str
    _spec: _Spec
    _plugin: _Plugin
    _item: pytest.Item
    _result: CaseResult | None = field(default=None, repr=False)

    def result(self) -> CaseResult:
        """The case's verdicts (run once; ``check()`` judges them)."""
        if self._result is None:
            self._result = self._plugin.case(self._spec)
            self._item.user_properties.append((PROPERTY, self._plugin.carried(self._spec, self._result)))
        return self._result

    def check(self) -> None:
        """Pass, or fail with the findings, xfail on a known gap, skip when unsupported, left to
        the caller (a duty the client does not take on: the skip says what the caller must do) or
        deviated (the model did not do what the scenario asks: the skip says what it did)."""
        case = self.result()
        if case.status == "pass":
            return
        if case.status == "unsupported":
            pytest.skip(case.message or "unsupported")
        if case.status == "left":
            remedies = [f.remedy or f.message for v in case.checks if v.status == "left" for f in v.findings]
            pytest.skip("left to the caller: " + "; ".join(dict.fromkeys(remedies)))
        if case.status == "deviated":  # the model's choice, never the server's defect (conformance.verdicts)
            from conformance.reporting._deviations import model_did

            did = [v.message or "; ".join(f.message for f in v.findings) for v in case.checks if v.status == "deviated"]
            pytest.skip("model deviated: " + model_did([case.message, *did]))
        if case.status == "xfail":
            reasons = [v.message for v in case.checks if v.status == "xfail"]
            pytest.xfail("; ".join(dict.fromkeys(reasons)) or "known gap")
        pytest.fail(failure_message(case, wire=self.wire), pytrace=False)


@pytest.fixture
def conformance_case(request: pytest.FixtureRequest) -> ConformanceCase:
    spec = getattr(request, "param", None)
    if not isinstance(spec, _Spec):
        pytest.fail("conformance_case is parametrised by @pytest.mark.conformance(...)", pytrace=False)
    plugin = request.config.stash[_STASH]
    if hasattr(request.config, "workerinput"):  # an xdist worker: the case the controller keeps if we die
        request.node.user_properties.append((PLANNED, plugin.planned(spec)))
    return ConformanceCase(
        wire=spec.wire, scenario=spec.scenario, mode=spec.mode, _spec=spec, _plugin=plugin, _item=request.node
    )


@pytest.fixture
def conformance_server(request: pytest.FixtureRequest) -> Iterator[Emulator]:
    """A loopback emulator playing one scenario's cassette for one wire (its ``base_url``,
    ``requests`` and ``played``)."""
    from conformance.adapters import for_format
    from conformance.emulator import Emulator
    from conformance.traffic.cassettes import load_cassette

    param = getattr(request, "param", None)
    marker = request.node.get_closest_marker("conformance_server")
    chosen: Mapping[str, Any] = param if isinstance(param, Mapping) else (marker.kwargs if marker else {})
    scenario_id, wire = chosen.get("scenario"), chosen.get("wire")
    if not isinstance(scenario_id, str) or not isinstance(wire, str):
        pytest.fail(
            "conformance_server needs a scenario and a wire: @pytest.mark.conformance_server(scenario=..., wire=...) "
            'or indirect parametrisation with {"scenario": ..., "wire": ...}',
            pytrace=False,
        )
    plugin = request.config.stash[_STASH]
    scenario = plugin.scenario(scenario_id)
    failure = plugin.ensure_cassette(for_format(wire), scenario)
    if failure:
        pytest.fail(failure, pytrace=False)
    with Emulator() as server:
        server.play_cassette(load_cassette(plugin.cassette_dir / wire / f"{scenario.id}.yaml"))
        yield server


# ---- running -----------------------------------------------------------------------------------


_PairRun: TypeAlias = "tuple[list[CaseResult], dict[str, Any]]"
"""The cases of one (target, wire, scenario) pair, and the provenance of the cassette they read."""

_WORKER_MODULES = (
    "conformance.clients.harness",
    "conformance.clients.invoke",
    "conformance.emulator",
    "conformance.mcp_bridge.scenario_tools",
    "conformance.run.recording",
    "conformance.run.runner",
)
"""What a worker runs, imported in the session's process before it forks (not once per worker)."""


def _modes(spec: _Spec) -> tuple[Mode, ...]:
    return tuple("stream" if m == "stream" else "non_stream" for m in spec.modes)


def _portable(run: _PairRun) -> _PairRun:
    """The pair's result as it can travel back from a worker: itself, or, when a value a client or
    adapter put in a finding cannot be pickled, the cases as their report JSON gives them (such values
    by their ``repr``)."""
    try:
        pickle.dumps(run)
    except Exception:
        cases = [_case_from(json.loads(json.dumps(asdict(case), default=repr))) for case in run[0]]
        return cases, json.loads(json.dumps(run[1], default=repr))
    return run


class _Plugin:
    """The session's state: scenarios, cached pair results, cassettes recorded, finished cases."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self._scenarios: dict[str, Scenario] | None = None
        self._pairs: dict[tuple[int, str, str, tuple[str, ...]], _PairRun] = {}
        self._recorded: set[tuple[str, str]] = set()
        self._planned: dict[str, str] = {}
        """The ERROR case each xdist item carried from its setup, until its call report comes (the controller's)."""
        self._pool: WorkerPool[_PairRun] | None = None
        self._guard_folder: tempfile.TemporaryDirectory[str] | None = None
        """The folder that guards the Python children of a pair's client: the session's (made before a
        worker is forked, removed at the session's end), so a worker that dies leaves nothing behind."""
        self._pair_specs: list[_Spec] = []
        """The pairs run in workers, in the order they came: the workers know them by their index."""
        self._known: dict[tuple[int, str, str, tuple[str, ...]], int] = {}
        self._pool_knows = 0
        """How many of ``_pair_specs`` the pool's workers were forked with."""
        self.finished: list[dict[str, Any]] = []
        self._commands: dict[str, Any] = {}
        """The ``RemoteClient`` of each ``command=`` (started at collection, closed at the session's end)."""
        self._session_pid = os.getpid()
        self._own: dict[int, Any] = {}
        """In a worker process: its own child of each ``RemoteClient`` (``_driven``), by the client's id."""

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Keep the case of each finished item (on the xdist controller: from the worker's report); an
        item whose xdist worker died under it (xdist reports it with ``when`` neither setup, call nor
        teardown) keeps the ERROR case its setup carried, saying so."""
        carried = dict((name, value) for name, value in report.user_properties if isinstance(value, str))
        if report.when == "setup":
            if PLANNED in carried:
                self._planned[report.nodeid] = carried[PLANNED]
            return
        if report.when == "call":
            self._planned.pop(report.nodeid, None)
            if PROPERTY in carried:
                self.finished.append(json.loads(carried[PROPERTY]))
            return
        planned = self._planned.pop(report.nodeid, None) if report.when != "teardown" and report.failed else None
        if planned is not None:
            data = json.loads(planned)
            how = report.longreprtext.strip().splitlines()[:1] or ["it ended"]
            data["case"]["message"] = (
                f"the pytest-xdist worker running this case died before it finished ({how[0]}); the session went on"
            )
            self.finished.append(data)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool = None
        for client in self._commands.values():  # the drivers' processes, and every process they started
            client.close()
        self._commands.clear()
        if self._guard_folder is not None:
            self._guard_folder.cleanup()
            self._guard_folder = None
        report_dir = self.config.getoption("conformance_report_dir")
        if not report_dir or hasattr(self.config, "workerinput"):  # an xdist worker: the controller writes
            return
        if self.finished:
            from conformance.reporting import write_reports

            write_reports(_run_from(self.finished), report_dir)

    @property
    def allow_commands(self) -> bool:
        """``--conformance-allow-commands``, else the ini option ``conformance_allow_commands``."""
        given = self.config.getoption("conformance_allow_commands")
        return bool(self.config.getini("conformance_allow_commands") if given is None else given)

    @property
    def mcp_policy(self) -> dict[str, Any]:
        """``command_policy``'s words: ``--conformance-allow-remote-mcp`` and ``--conformance-mcp-transport``."""
        return {
            "allow_remote": bool(self.config.getoption("conformance_allow_remote_mcp")),
            "transport": self.config.getoption("conformance_mcp_transport"),
        }

    @property
    def cassette_dir(self) -> Path:
        return suite_dirs(self.config)[0]

    def scenarios(self) -> dict[str, Scenario]:
        if self._scenarios is None:
            from conformance.scenarios.loader import load_scenarios

            loaded = load_scenarios(suite_dirs(self.config)[1])
            if loaded.problems:
                _usage("\n".join(str(p) for p in loaded.problems))
            self._scenarios = {s.id: s for s in loaded.scenarios}
        return self._scenarios

    def scenario(self, scenario_id: str) -> Scenario:
        found = self.scenarios().get(scenario_id)
        if found is None:
            _usage(f"no scenario {scenario_id!r}")
        return found

    def specs(self, marker: pytest.Mark, where: str) -> list[_Spec]:
        from conformance.adapters import get_adapter
        from conformance.adapters.base import Adapter
        from conformance.clients.contract import client_problems
        from conformance.scenarios.values import MODES

        kwargs = dict(marker.kwargs)
        if "server" in kwargs:
            return self._server_specs(kwargs, where, marker.args)
        unknown = sorted(set(kwargs) - {"client", "adapter", "command", "wires", "scenarios", "modes"})
        targets = [name for name in ("client", "adapter", "command") if name in kwargs]
        if unknown or len(targets) != 1 or marker.args:
            _usage(
                f"{where}: @pytest.mark.conformance takes client=, adapter= or command= (one of them), or server=, "
                f"and optional wires=, scenarios=, modes= (got {', '.join(sorted(kwargs)) or 'nothing'})"
            )
        modes = tuple(kwargs.get("modes") or MODES)
        if bad := [m for m in modes if m not in MODES]:
            _usage(f"{where}: unknown mode {', '.join(bad)} (modes: {', '.join(MODES)})")
        if "adapter" in kwargs:
            adapter = kwargs["adapter"]
            adapter = get_adapter(adapter) if isinstance(adapter, str) else adapter
            if not isinstance(adapter, Adapter):
                _usage(f"{where}: adapter= takes an Adapter or a built-in adapter's name")
            target = _Target(key=id(adapter), adapter=adapter, client=None)
            wires = [adapter.traffic_format]
        else:
            client = self._command(kwargs["command"], where) if "command" in kwargs else kwargs["client"]
            if problems := client_problems(client):
                _usage(f"{where}: not a client: {'; '.join(problems)}")
            target = _Target(key=id(client), adapter=None, client=client)
            asked = kwargs.get("wires")
            wires = list(client.wires) if asked is None else list(asked)
            if missing := [w for w in wires if w not in client.wires]:
                _usage(
                    f"{where}: {client.name} does not speak {', '.join(missing)} "
                    f"(it declares {', '.join(client.wires)})"
                )
        patterns = kwargs.get("scenarios") or ["*"]
        chosen = [
            s for s in self.scenarios().values() if any(s.id == p or fnmatch.fnmatchcase(s.id, p) for p in patterns)
        ]
        if not chosen:
            _usage(f"{where}: no scenario matches {', '.join(patterns)}")
        specs: list[_Spec] = []
        for wire in wires:
            for scenario in chosen:
                pair_modes = tuple(m for m in modes if m in scenario.modes)
                specs += [_Spec(target, wire, scenario.id, mode, pair_modes) for mode in pair_modes]
        for spec in specs:
            self._register(spec)
        return specs

    def _command(self, command: Any, where: str) -> Any:
        """The client of ``command=``: the driver started once per distinct command (its hello read and
        checked, ``conformance.pipeline.targets.load_command``); a driver that does not start is a usage
        error naming the marker."""
        if not isinstance(command, str) or not command.strip():
            _usage(f"{where}: command= takes the driver's command line as one string, e.g. 'node drivers/x.mjs'")
        if command not in self._commands:
            from conformance.errors import UsageError
            from conformance.pipeline.targets import load_command

            try:
                self._commands[command] = load_command(command)
            except UsageError as exc:
                _usage(f"{where}: command={command!r}: {exc}")
        return self._commands[command]

    def _driven(self, client: Any) -> Any:
        """The client a pair drives here: ``client`` itself, or, for a driver in a process of its own
        (``RemoteClient``: ``command=``) in a worker process, the worker's own child of it, started on
        first use and stopped with the worker (the pipe to the session's child is never shared)."""
        from conformance.clients.remote import RemoteClient

        if not isinstance(client, RemoteClient) or os.getpid() == self._session_pid:
            return client
        if id(client) not in self._own:
            self._own[id(client)] = client.again()
        return self._own[id(client)]

    def _close_own(self) -> None:
        """A worker's own drivers' processes, ended as it ends."""
        for client in self._own.values():
            client.close()
        self._own.clear()

    def case(self, spec: _Spec) -> CaseResult:
        from conformance.verdicts import CaseResult

        key = (spec.target.key, spec.wire, spec.scenario, spec.modes)
        if key not in self._pairs:
            self._pairs[key] = self._run_isolated(spec) if spec.target.server is None else self._run_server(spec)
        for case in self._pairs[key][0]:
            if case.mode == spec.mode:
                return case
        return CaseResult(
            adapter=self._adapter(spec).name,
            scenario=spec.scenario,
            mode="stream" if spec.mode == "stream" else "non_stream",
            status="error",
            message="the run gave no case for this mode",
        )

    def _adapter(self, spec: _Spec) -> Adapter:
        from conformance.clients.harness import client_adapter

        if spec.target.adapter is not None:
            return spec.target.adapter
        if spec.target.server is not None:
            return self._server_column(spec)
        return client_adapter(spec.target.client, spec.wire)

    def _guard_children(self) -> contextlib.AbstractContextManager[object]:
        """With ``--conformance-block-network``: the Python processes a pair's client or adapter starts
        are guarded too (the environment says so: the worker's, for as long as it runs), from the
        session's folder (``_guard_folder``). A test's own child processes are not: the guard's
        ``sitecustomize`` would import this package into every Python process they start."""
        if not self.config.getoption("conformance_block_network"):
            return contextlib.nullcontext()
        from conformance.traffic.network_guard import guard_children

        return guard_children(self._guard_folder_path())

    def _guard_folder_path(self) -> Path:
        """The session's guard folder, made on first use: in the session's process, before a worker
        is forked (``_workers``), so every worker shares it."""
        if self._guard_folder is None:
            self._guard_folder = tempfile.TemporaryDirectory(prefix="conformance-guard-")
        return Path(self._guard_folder.name)

    def _recorder(self, spec: _Spec) -> Adapter:
        """The adapter that records the pair's cassette: the target adapter, or the client's wire's."""
        from conformance.adapters import for_format

        return spec.target.adapter if spec.target.adapter is not None else for_format(spec.wire)

    def _run_isolated(self, spec: _Spec) -> _PairRun:
        """The pair's cases, run (and its cassette recorded, when the record mode asks) in the session's
        worker process (``conformance.run.workers.WorkerPool``, the workers of ``conformance run`` and
        ``certify``): a client or adapter that exits, crashes the interpreter, hangs past the pair's
        budget or runs out of the worker's memory costs that pair's items an ERROR saying so, and the
        next pair gets a new worker. Where fork is not available (``can_fork``), here."""
        from conformance.mcp_bridge.trust import command_policy
        from conformance.run.workers import can_fork

        record = self._wants_cassette(self._recorder(spec), self.scenario(spec.scenario))
        if not can_fork():
            with (
                command_policy(allow=self.allow_commands, **self.mcp_policy),
                self._guard_children(),
            ):  # docs/scenarios.md#trust
                return self._run_guarded(spec, record)
        pair = self._register(spec)
        if self._pool is not None and pair >= self._pool_knows:
            self._pool.close()  # a pair its workers do not know (collected after they were forked)
            self._pool = None
        return self._workers().run(2 * pair + record)

    def _register(self, spec: _Spec) -> int:
        """The pair's index in ``_pair_specs`` (collected pairs are registered at collection, so that
        the workers, forked at the first pair, know every pair of the session)."""
        key = (spec.target.key, spec.wire, spec.scenario, spec.modes)
        if key not in self._known:
            self._known[key] = len(self._pair_specs)
            self._pair_specs.append(spec)
        return self._known[key]

    def _workers(self) -> WorkerPool[_PairRun]:
        """The session's worker pool, started with every pair collected so far (item ``2 * n + r``: the
        ``n``th pair, its cassette recorded first when ``r``)."""
        if self._pool is not None:
            return self._pool
        from conformance.run.workers import WorkerPool, memory_limit_from_env

        for module in _WORKER_MODULES:  # loaded once here, not again in every worker
            importlib.import_module(module)
        if self.config.getoption("conformance_block_network"):
            self._guard_folder_path()  # before the fork

        def unpack(index: int) -> tuple[_Spec, bool]:
            pair, record = divmod(index, 2)
            return self._pair_specs[pair], bool(record)

        def run_one(index: int) -> tuple[_PairRun, bool]:
            from conformance.clients import invoke
            from conformance.mcp_bridge.trust import command_policy
            from conformance.run import runner

            with command_policy(allow=self.allow_commands, **self.mcp_policy):  # docs/scenarios.md#trust
                found = _portable(self._run_guarded(*unpack(index)))
            # a case's thread still runs past its timeout, or memory ran out: the next pair gets a new worker
            return found, invoke.strained() or runner.strained()

        @contextlib.contextmanager
        def worker() -> Iterator[Callable[[int], tuple[_PairRun, bool]]]:
            with self._guard_children():
                try:
                    yield run_one
                finally:
                    self._close_own()

        def crashed(index: int, failure: WorkerFailure) -> _PairRun:
            return self._crashed(*unpack(index), failure), {}

        def budget(index: int) -> float:
            spec, record = unpack(index)
            return self._budget(spec, self.scenario(spec.scenario), record)

        self._pool = WorkerPool(worker=worker, crashed=crashed, budget=budget, memory=memory_limit_from_env())
        self._pool_knows = len(self._pair_specs)
        return self._pool

    @property
    def timeout(self) -> float:
        """``--conformance-timeout``: seconds per case of an adapter, per turn of a client."""
        return float(self.config.getoption("conformance_timeout"))

    def _budget(self, spec: _Spec, scenario: Scenario, record: bool) -> float:
        """Seconds the watchdog gives the worker for a pair: as ``conformance run`` (a timeout per case)
        and ``certify`` (a timeout per turn and one for the checks, in each mode) give theirs, and a
        recording's pair timeout when the cassette is recorded first."""
        from conformance.clients.remote import RemoteClient
        from conformance.run.recording import DEFAULT_PAIR_TIMEOUT
        from conformance.run.runner import WATCHDOG_GRACE, pair_budget

        modes = len(spec.modes)
        cases = modes if spec.target.adapter is not None else modes * (len(scenario.turns) + 1)
        client = spec.target.client
        starting = client.start_timeout if isinstance(client, RemoteClient) else 0.0  # its child starts in the worker
        return pair_budget(cases, self.timeout) + starting + (DEFAULT_PAIR_TIMEOUT + WATCHDOG_GRACE if record else 0.0)

    def _crashed(self, spec: _Spec, _record: bool, failure: WorkerFailure) -> list[CaseResult]:
        """The pair's cases when its worker process died or was killed by the watchdog."""
        from conformance.run.runner import case_result

        adapter, scenario = self._adapter(spec), self.scenario(spec.scenario)
        what = "adapter" if spec.target.adapter is not None else "client"
        where = f"the worker process running {adapter.name} on {scenario.id}"
        if failure.hung:
            per = "case" if spec.target.adapter is not None else "turn"
            message = (
                f"{where} gave {failure.how} and was killed: the {what} or a check hung where the {per}'s timeout"
                f" cannot stop it (a loop holding the GIL, a call blocked in C); --conformance-timeout changes"
                f" the limit ({self.timeout:g} s per {per}); the session went on"
            )
        else:
            message = (
                f"{where} died ({failure.how}) before this case finished: the {what} or a check crashed the"
                " interpreter (os._exit, a segfault, out of memory); the session went on"
            )
        return [case_result(adapter, scenario, m, "error", message=message) for m in _modes(spec)]

    def _run_guarded(self, spec: _Spec, record: bool) -> _PairRun:
        """``_run_pair`` after recording the cassette when ``record``; a bug of ours, or memory running
        out outside the cases, is the pair's ERROR rather than a dead worker."""
        from conformance.run.runner import case_result
        from conformance.run.workers import MEMORY_ENV

        adapter, scenario = self._adapter(spec), self.scenario(spec.scenario)
        try:
            failure = self._record(self._recorder(spec), scenario) if record else ""
            return self._run_pair(spec, failure)
        except MemoryError:
            message = (
                f"the pair ran out of memory outside its cases' threads; {MEMORY_ENV} sets each worker"
                f" process's limit (e.g. {MEMORY_ENV}=8G, 0 for none)"
            )
            return [case_result(adapter, scenario, m, "error", message=message) for m in _modes(spec)], {}
        except Exception as exc:
            message = f"internal error in the pytest plugin ({type(exc).__name__}: {exc}); please report it"
            trace = traceback.format_exc()
            return [
                case_result(adapter, scenario, m, "error", message=message, traceback=trace) for m in _modes(spec)
            ], {}

    def _run_pair(self, spec: _Spec, failure: str) -> _PairRun:
        from conformance.run.runner import case_result

        scenario = self.scenario(spec.scenario)
        adapter = self._adapter(spec)
        modes = _modes(spec)
        if failure:
            return [case_result(adapter, scenario, m, "error", message=failure) for m in modes], {}
        provenance: dict[str, Any] = {}
        if spec.target.adapter is not None:
            from conformance.run.runner import RunOptions, run_pair

            options = RunOptions(cassette_dir=self.cassette_dir, modes=modes, timeout=self.timeout)
            return run_pair(scenario, adapter, options, provenance=provenance), provenance
        from conformance.clients.harness import CertifyOptions, Harness
        from conformance.clients.invoke import EventLoop
        from conformance.emulator import Emulator
        from conformance.mcp_bridge.scenario_tools import McpPool

        certify = CertifyOptions(cassette_dir=self.cassette_dir, wires=(spec.wire,), modes=modes, timeout=self.timeout)
        with Emulator() as server, EventLoop() as loop, McpPool(start_timeout=certify.timeout) as pool:
            client = self._driven(spec.target.client)
            driver = Harness(client=client, server=server, loop=loop, pool=pool, options=certify)
            return driver.pair(adapter, scenario), provenance

    def ensure_cassette(self, adapter: Adapter, scenario: Scenario) -> str:
        """Record the pair's cassette when the record mode asks for it; why it failed, or ``""``."""
        return self._record(adapter, scenario) if self._wants_cassette(adapter, scenario) else ""

    def _wants_cassette(self, adapter: Adapter, scenario: Scenario) -> bool:
        """Whether the record mode asks to record the pair's cassette now (then it counts as recorded
        in this session: ``rewrite`` records each once)."""
        from conformance.errors import CassetteError
        from conformance.run.recording import cassette_path
        from conformance.traffic.cassettes import load_cassette

        mode = self.config.getoption("conformance_record_mode")
        if (
            mode == "none"
            or scenario.requires - adapter.capabilities
            or scenario.wire_excluded(adapter.name, adapter.wire_format) is not None
        ):
            return False
        path = cassette_path(self.cassette_dir, adapter.traffic_format, scenario.id)
        key = (adapter.traffic_format, scenario.id)
        if mode == "rewrite":
            wanted = key not in self._recorded
        elif mode == "once":
            wanted = not path.is_file()
        else:  # new: a missing cassette, or one that does not load
            try:
                wanted = bool(load_cassette(path).problems)
            except CassetteError:
                wanted = True
        if wanted:
            self._recorded.add(key)
        return wanted

    def _record(self, adapter: Adapter, scenario: Scenario) -> str:
        from conformance.run.recording import record_pairs

        live = self.config.getoption("conformance_live_url")
        if live:
            key_env = self.config.getoption("conformance_api_key_env")
            api_key = os.environ.get(key_env) if key_env else None
            if key_env and not api_key:
                return f"environment variable {key_env} (--conformance-api-key-env) is not set or empty"
            results = record_pairs(
                [scenario], [adapter], cassette_dir=self.cassette_dir, base_url=live, mode="live", api_key=api_key
            )
        else:
            from conformance.emulator import Emulator, EmulatorScript

            with Emulator() as emulator:

                def set_script(chosen: Scenario | None) -> None:
                    emulator.set_script(None if chosen is None else EmulatorScript.from_scenario(chosen))

                results = record_pairs(
                    [scenario],
                    [adapter],
                    cassette_dir=self.cassette_dir,
                    base_url=emulator.base_url,
                    mode="emulator",
                    set_script=set_script,
                )
        failed = [r for r in results if r.status == "failed"]
        return f"recording {adapter.traffic_format} {scenario.id} failed: {failed[0].detail}" if failed else ""

    def planned(self, spec: _Spec) -> str:
        """``carried`` for the ERROR case of an item whose xdist worker dies before its call report."""
        from conformance.verdicts import CaseResult

        mode: Mode = "stream" if spec.mode == "stream" else "non_stream"
        message = "the pytest-xdist worker running this case died before it finished"
        case = CaseResult(
            adapter=self._adapter(spec).name, scenario=spec.scenario, mode=mode, status="error", message=message
        )
        return self.carried(spec, case)

    def carried(self, spec: _Spec, case: CaseResult) -> str:
        """The case as JSON, with what the report needs about its column and scenario."""
        from conformance.run.runner import adapter_info

        scenario = self._scenario_row(spec.scenario)
        info = adapter_info(self._adapter(spec))
        provenance = self._pairs.get((spec.target.key, spec.wire, spec.scenario, spec.modes), ([], {}))[1]
        return json.dumps(
            {
                "case": asdict(case),
                "adapter": asdict(info),
                "scenario": {
                    "id": scenario.id,
                    "behavior": scenario.behavior,
                    "source": scenario.source,
                    "requires": sorted(scenario.requires),
                },
                "provenance": provenance,
            },
            default=repr,
        )

    # ---- server= : a model server on its wires (conformance.servers, docs/servers.md) -----------

    def _server_specs(self, kwargs: dict[str, Any], where: str, args: tuple[Any, ...]) -> list[_Spec]:
        """The items of ``@pytest.mark.conformance(server=URL, wires=[...], ...)``: each scenario a live
        server can be asked, per wire and mode, and each invalid-request probe per wire (non-streamed)."""
        from conformance.scenarios.values import MODES
        from conformance.servers import SERVER_WIRES, ServerOptions, server_scenarios
        from conformance.servers.invalid import PROBES, probe_id

        allowed = {"server", "wires", "scenarios", "modes", "model", "api_key_env", "name"}
        url, wires = kwargs.get("server"), kwargs.get("wires")
        if sorted(set(kwargs) - allowed) or args or not isinstance(url, str) or not wires:
            _usage(
                f"{where}: @pytest.mark.conformance(server=URL, wires=[...]) takes optional scenarios=, modes=, "
                f"model=, api_key_env=, name= (got {', '.join(sorted(kwargs)) or 'nothing'})"
            )
        if bad := [w for w in wires if w not in SERVER_WIRES]:
            _usage(f"{where}: a server is certified on {', '.join(SERVER_WIRES)}, not {', '.join(bad)}")
        modes = tuple(kwargs.get("modes") or MODES)
        if bad := [m for m in modes if m not in MODES]:
            _usage(f"{where}: unknown mode {', '.join(bad)} (modes: {', '.join(MODES)})")
        key_env = kwargs.get("api_key_env")
        if key_env is not None and not os.environ.get(key_env):
            _usage(f"{where}: api_key_env={key_env!r}, but ${key_env} is not set")
        options = ServerOptions(
            base_url=url,
            wires=tuple(wires),
            name=kwargs.get("name") or "server",
            model=kwargs.get("model"),
            api_key=os.environ.get(key_env) if key_env else None,
        )
        target = _Target(key=id(options), adapter=None, client=None, server=options)
        patterns = kwargs.get("scenarios") or ["*"]

        def chosen(scenario_id: str) -> bool:
            return any(scenario_id == p or fnmatch.fnmatchcase(scenario_id, p) for p in patterns)

        asked = [
            (s.id, tuple(m for m in modes if m in s.modes)) for s in server_scenarios(list(self.scenarios().values()))
        ]
        asked += [(probe_id(p), ("non_stream",) if "non_stream" in modes else ()) for p in PROBES]
        pairs = [(scenario_id, pair_modes) for scenario_id, pair_modes in asked if chosen(scenario_id) and pair_modes]
        if not pairs:
            _usage(f"{where}: no scenario a server is asked matches {', '.join(patterns)}")
        return [
            _Spec(target, wire, scenario_id, mode, pair_modes)
            for wire in wires
            for scenario_id, pair_modes in pairs
            for mode in pair_modes
        ]

    def _run_server(self, spec: _Spec) -> _PairRun:
        """One (wire, scenario) pair of a server, both its modes, in this process."""
        from dataclasses import replace

        from conformance.servers import certify_server

        options = replace(
            spec.target.server,
            wires=(spec.wire,),
            modes=_modes(spec),
            select=lambda column, scenario_id, mode: scenario_id == spec.scenario,
        )
        result = certify_server(list(self.scenarios().values()), options)
        return list(result.cases), dict(result.provenance)

    def _server_column(self, spec: _Spec) -> Adapter:
        from dataclasses import replace

        from conformance.servers import server_columns

        return server_columns(replace(spec.target.server, wires=(spec.wire,)))[0]

    def _scenario_row(self, scenario_id: str) -> Any:
        """The report's row of a case's scenario: the suite's, or a server probe's (``server/invalid/*``)."""
        from conformance.servers.invalid import PROBE_BEHAVIOR
        from conformance.verdicts import ScenarioInfo

        probe = scenario_id.removeprefix("server/invalid/")
        if probe != scenario_id and probe in PROBE_BEHAVIOR:
            return ScenarioInfo(id=scenario_id, behavior=PROBE_BEHAVIOR[probe], source="suite")
        return self.scenario(scenario_id)


# ---- messages and reports ----------------------------------------------------------------------


def failure_message(case: CaseResult, *, wire: str = "") -> str:
    """A failing, stale or erroring case: its defects first, in plain words (severity, sentence, what to
    do: ``conformance.reporting.case_defects``), then each finding (check id, JSON path, expected,
    actual) and the cassette; ``wire``: the case's wire format (some plain words depend on it)."""
    from conformance.reporting import SEVERITY_WORDS, case_defects

    lines = [f"conformance {case.status.upper()}: {case.adapter} {case.scenario} {case.mode}"]
    if case.message:
        lines.append(case.message)
    for defect in (d for d in case_defects(case, wire) if d["kind"] == "defect"):
        lines.append(f"[{SEVERITY_WORDS[defect['severity']]}] {defect['sentence']}")
        lines += [f"  to do: {defect['remedy']}"] if defect["remedy"] else []
        lines += [f"  {line}" for line in defect["evidence"]["shown"]]
    lines += ["findings:"] if any(v.findings for v in case.checks) else []
    for verdict in case.checks:
        if verdict.status == "stale":
            lines.append(f"{verdict.check}: STALE ({verdict.message}): remove the known gap")
        elif verdict.status in ("fail", "error"):
            lines.append(
                f"{verdict.check}: {verdict.status.upper()}" + (f" ({verdict.message})" if verdict.message else "")
            )
            for finding in verdict.findings:
                turn = f" (turn {finding.turn})" if finding.turn is not None else ""
                lines.append(f"  {finding.check} at {finding.path or '-'}{turn}: {finding.message}")
                lines.append(f"    expected: {finding.expected!r}")
                lines.append(f"    actual:   {finding.actual!r}")
    if case.traceback:
        lines.append(case.traceback)
    lines.append(f"cassette: {case.cassette or '(none)'}")
    return "\n".join(lines)


def _case_from(data: Mapping[str, Any]) -> CaseResult:
    from conformance.verdicts import CaseResult, CheckVerdict, Finding

    checks = tuple(
        CheckVerdict(
            check=v["check"],
            status=v["status"],
            message=v["message"],
            findings=tuple(Finding(**f) for f in v["findings"]),
        )
        for v in data["checks"]
    )
    fields = {k: v for k, v in data.items() if k not in ("checks", "exchanges")}
    return CaseResult(**fields, checks=checks, exchanges=tuple(data["exchanges"]))


def _run_from(finished: Sequence[Mapping[str, Any]]) -> Any:
    from conformance.run.runner import suite_version
    from conformance.verdicts import AdapterInfo, RunResult, ScenarioInfo

    adapters: dict[str, AdapterInfo] = {}
    scenarios: dict[str, ScenarioInfo] = {}
    provenance: dict[str, Any] = {}
    cases = []
    for data in finished:
        info = data["adapter"]
        adapters.setdefault(info["name"], AdapterInfo(**{**info, "capabilities": tuple(info["capabilities"])}))
        s = data["scenario"]
        scenarios.setdefault(s["id"], ScenarioInfo(**{**s, "requires": tuple(s["requires"])}))
        provenance.update(data["provenance"])
        cases.append(_case_from(data["case"]))
    order = {name: i for i, name in enumerate(sorted(adapters))}
    cases.sort(key=lambda c: (order[c.adapter], c.scenario, c.mode != "non_stream"))
    return RunResult(
        suite_version=suite_version(),
        adapters=tuple(adapters[name] for name in sorted(adapters)),
        scenarios=tuple(scenarios[k] for k in sorted(scenarios)),
        cases=tuple(cases),
        provenance=provenance,
    )
