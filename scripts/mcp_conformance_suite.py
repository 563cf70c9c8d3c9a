"""The official MCP conformance suite's server scenarios against the bundled MCP server over Streamable HTTP.

    python scripts/mcp_conformance_suite.py install          # Node >= 22, then `npm ci` in examples/mcp_conformance
    python scripts/mcp_conformance_suite.py run              # the scenarios of SCENARIOS; exit 0 when all pass
    python scripts/mcp_conformance_suite.py run --scenario tools-call-error --timeout 30
    python scripts/mcp_conformance_suite.py list             # the scenarios run, and why each applies

The suite is the npm package ``@modelcontextprotocol/conformance`` (its CLI ``conformance server
--url URL --scenario NAME -o DIR``), pinned in ``examples/mcp_conformance/package.json`` and
``package-lock.json``; ``install`` puts it in that folder's ``node_modules`` with the Node that
``scripts/node_runtime.py`` finds or installs (from the npm registry only, never at test time).

``run`` starts ``python -m conformance mcp-server --transport http --port 0 --profile
conformance-suite`` (the bundled server with the tools the suite calls, first in its list:
``conformance/mcp_bridge/_fixtures_suite.py``) on 127.0.0.1, waits for the port it writes
(``START_TIMEOUT``), then runs each scenario in a Node process of its own, ``SCENARIO_TIMEOUT``
seconds at most (then its process group is killed and the scenario FAILs saying so), reads the
``checks.json`` the suite writes (at most ``MAX_CHECKS_BYTES``), and prints one line per scenario
(PASS or FAIL, its checks passed / failed / warnings, and each failed check's message), then a
summary. A scenario that writes no checks, a server that dies (its stderr's last lines are shown)
or a Node that cannot start costs that scenario a FAIL; the others still run.

Exit codes: 0 every scenario passed; 1 one failed; 2 usage; 3 the suite cannot run here (no Node
>= 22, the suite not installed, the server did not start: one line on stderr, the last, saying why
and what to do; ``.ci/run`` prints it and skips the tier). Standard library only, beside the
``conformance`` package it starts. Tests: tests/scripts/test_mcp_conformance_suite.py.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import node_runtime  # the Node runtime beside this script

__all__ = [
    "MAX_CHECKS_BYTES",
    "PACKAGE",
    "SCENARIOS",
    "SCENARIO_TIMEOUT",
    "START_TIMEOUT",
    "SUITE_DIR",
    "Check",
    "ScenarioResult",
    "SuiteUnavailable",
    "main",
    "read_checks",
    "run_scenario",
    "run_suite",
    "start_server",
    "suite_bin",
    "summary_line",
]

SCRIPT = "scripts/mcp_conformance_suite.py"
ROOT = Path(__file__).resolve().parents[1]
SUITE_DIR = ROOT / "examples" / "mcp_conformance"
PACKAGE = "@modelcontextprotocol/conformance"
START_TIMEOUT = 60.0
"""Seconds for the server to listen (it does in about 2 s): a safety net only."""
SCENARIO_TIMEOUT = 60.0
"""Seconds for one scenario's Node process (each takes under a second): past it, the scenario FAILs."""
STOP_GRACE = 5.0
"""Seconds a process gets after SIGTERM before SIGKILL."""
MAX_CHECKS_BYTES = 8 * 1024 * 1024
"""The largest ``checks.json`` read (the suite's are a few KB)."""
TAIL_BYTES = 4096
"""How much of a process's output a verdict quotes, from its end."""

SCENARIOS: dict[str, str] = {
    "server-initialize": "the session every tool call runs in (initialize, initialized)",
    "tools-list": "tools/list: each tool has name, description and inputSchema",
    "tools-call-simple-text": "a text result",
    "tools-call-image": "an image result (data, mimeType)",
    "tools-call-audio": "an audio result (audio/wav)",
    "tools-call-embedded-resource": "an embedded resource result (uri, mimeType, text)",
    "tools-call-mixed-content": "text, image and resource in one result",
    "tools-call-error": "a failing tool: isError with its message",
    "tools-call-with-progress": "notifications/progress during a call, increasing",
    "tools-call-with-logging": "notifications/message during a call",
    "logging-set-level": "logging/setLevel, which the logging tool's scenario sends first",
    "tools-call-sampling": "a tool asking the client sampling/createMessage",
    "tools-call-elicitation": "a tool asking the client elicitation/create",
    "elicitation-sep1034-defaults": "a tool's elicitation schema with defaults (SEP-1034)",
    "elicitation-sep1330-enums": "a tool's elicitation schema with the five enum forms (SEP-1330)",
    "json-schema-2020-12": "a tool's inputSchema keeps $schema, $defs, additionalProperties (SEP-1613)",
    "ping": "the session stays answerable (Streamable HTTP)",
    "server-sse-multiple-streams": "concurrent POSTs, each with its own SSE stream (Streamable HTTP)",
    "dns-rebinding-protection": "a loopback server refuses foreign Host/Origin headers (Streamable HTTP)",
}
"""The server scenarios of the suite (``conformance list --server``) run here, with why each applies
to tools over Streamable HTTP. Not run: ``completion-complete``, ``resources-*`` and ``prompts-*``
(the bundled server serves tools only) and ``server-sse-polling`` (SEP-1699 resumption: the SDK's
event store, not tools)."""


class SuiteUnavailable(Exception):
    """The suite cannot run here: the message is one line saying why and what to do."""


@dataclass(frozen=True)
class Check:
    """One entry of the suite's ``checks.json``."""

    id: str
    status: str
    """``SUCCESS``, ``FAILURE``, ``WARNING``, ``SKIPPED`` or ``INFO`` (the suite's ``CheckStatus``)."""
    description: str = ""
    error: str = ""


@dataclass(frozen=True)
class ScenarioResult:
    """One scenario's verdict: its checks, or why it has none."""

    scenario: str
    checks: tuple[Check, ...] = ()
    problem: str = ""
    """Why the scenario FAILs without a failing check (timed out, no checks written...); empty otherwise."""
    seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def passed(self) -> bool:
        return not self.problem and bool(self.checks) and not any(c.status == "FAILURE" for c in self.checks)

    def count(self, status: str) -> int:
        return sum(1 for c in self.checks if c.status == status)

    def lines(self) -> list[str]:
        """Its line (PASS/FAIL, the counts) and one more per failed check or problem."""
        head = (
            f"{'PASS' if self.passed else 'FAIL'} {self.scenario}: checks {self.count('SUCCESS')} passed, "
            f"{self.count('FAILURE')} failed, {self.count('WARNING')} warnings ({self.seconds:.1f} s)"
        )
        out = [head]
        out += [f"    {c.id}: {c.error or c.description}" for c in self.checks if c.status == "FAILURE"]
        out += [f"    warning {c.id}: {c.description}" for c in self.checks if c.status == "WARNING"]
        if self.problem:
            out.append(f"    {self.problem}")
        return out


def suite_bin(suite_dir: Path | None = None) -> Path:
    """The suite's CLI (``bin.conformance`` of its package.json) in ``suite_dir``'s node_modules
    (default ``SUITE_DIR``), at the version ``suite_dir/package.json`` pins."""
    suite_dir = SUITE_DIR if suite_dir is None else suite_dir
    package = suite_dir / "node_modules" / "@modelcontextprotocol" / "conformance"
    try:
        meta = json.loads((package / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SuiteUnavailable(
            f"{PACKAGE} is not installed in {suite_dir}/node_modules ({exc.__class__.__name__}): "
            f"`python {SCRIPT} install` installs it (from the npm registry)"
        ) from None
    wanted = _pinned_version(suite_dir)
    if wanted is not None and meta.get("version") != wanted:
        raise SuiteUnavailable(
            f"{suite_dir}/node_modules has {PACKAGE} {meta.get('version')}, package.json pins {wanted}: "
            f"`python {SCRIPT} install` installs the pinned one"
        )
    binary = meta.get("bin", {}).get("conformance") if isinstance(meta.get("bin"), dict) else None
    if not isinstance(binary, str) or not (package / binary).is_file():
        raise SuiteUnavailable(f"{package}/package.json names no `conformance` bin that exists")
    return package / binary


def _pinned_version(suite_dir: Path) -> str | None:
    try:
        deps = json.loads((suite_dir / "package.json").read_text(encoding="utf-8")).get("dependencies", {})
    except (OSError, ValueError, AttributeError):
        return None
    value = deps.get(PACKAGE) if isinstance(deps, dict) else None
    return value if isinstance(value, str) else None


def read_checks(path: Path, *, limit: int = MAX_CHECKS_BYTES) -> tuple[Check, ...]:
    """The checks of a ``checks.json`` (a JSON array of objects with ``id`` and ``status``). Raises
    ``ValueError`` saying what is wrong with it (too large, not JSON, not that shape)."""
    size = path.stat().st_size
    if size > limit:
        raise ValueError(f"{path.name} is {size:,} bytes, past the {limit:,} read")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ValueError(f"{path.name} is not JSON ({exc})") from None
    if not isinstance(data, list):
        raise ValueError(f"{path.name} is not a JSON array of checks")
    checks = []
    for i, item in enumerate(data):
        if not isinstance(item, dict) or not isinstance(item.get("status"), str):
            raise ValueError(f"{path.name}: check {i} has no status")
        checks.append(
            Check(
                id=str(item.get("id", f"check {i}")),
                status=item["status"],
                description=str(item.get("description", "")),
                error=str(item.get("errorMessage") or ""),
            )
        )
    return tuple(checks)


def _tail(path: Path, size: int = TAIL_BYTES) -> str:
    try:
        with path.open("rb") as stream:
            stream.seek(max(0, path.stat().st_size - size))
            text = stream.read().decode("utf-8", "replace")
    except OSError:
        return ""
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    return " | ".join(lines[-5:])[-1000:]


def _stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM to its process group, SIGKILL after ``STOP_GRACE``."""
    if process.poll() is not None:
        return
    for sig, wait in ((signal.SIGTERM, STOP_GRACE), (signal.SIGKILL, STOP_GRACE)):
        try:
            os.killpg(process.pid, sig)
        except (ProcessLookupError, PermissionError):
            return
        try:
            process.wait(wait)
            return
        except subprocess.TimeoutExpired:
            continue


def run_scenario(
    command: Sequence[str],
    scenario: str,
    url: str,
    work: Path,
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = SCENARIO_TIMEOUT,
) -> ScenarioResult:
    """One scenario: ``command`` (node and the suite's CLI) ``server --url URL --scenario S -o DIR``
    in a process group of its own, killed past ``timeout``; its checks, or why it has none."""
    out_dir = work / scenario.replace("/", "_")
    out_dir.mkdir(parents=True, exist_ok=True)
    log = out_dir / "output.txt"
    argv = [*command, "server", "--url", url, "--scenario", scenario, "-o", str(out_dir)]
    started = time.monotonic()
    with log.open("wb") as output:
        try:
            process = subprocess.Popen(
                argv, stdout=output, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                env=dict(os.environ if env is None else env), cwd=work, start_new_session=True,
            )  # fmt: skip
        except OSError as exc:
            return ScenarioResult(scenario, problem=f"the suite could not start: {' '.join(argv[:2])}: {exc}")
        try:
            code = process.wait(timeout)
        except subprocess.TimeoutExpired:
            _stop(process)
            return ScenarioResult(
                scenario,
                problem=f"timed out: no verdict within {timeout:g} s, the suite's process was killed"
                f" (its last output: {_tail(log) or 'none'})",
                seconds=time.monotonic() - started,
            )
        finally:
            _stop(process)
    seconds = time.monotonic() - started
    found = sorted(out_dir.glob("*/checks.json"))
    if not found:
        return ScenarioResult(
            scenario,
            problem=f"the suite exited {code} without writing checks.json (its last output: {_tail(log) or 'none'})",
            seconds=seconds,
        )
    try:
        checks = read_checks(found[-1])
    except (OSError, ValueError) as exc:
        return ScenarioResult(scenario, problem=f"unreadable result: {exc}", seconds=seconds)
    if not checks:
        return ScenarioResult(scenario, problem="the suite wrote no checks", seconds=seconds)
    return ScenarioResult(scenario, checks=checks, seconds=seconds, extra={"exit": code})


def start_server(
    work: Path,
    *,
    timeout: float = START_TIMEOUT,
    command: Sequence[str] | None = None,
    profile: str = "conformance-suite",
) -> tuple[subprocess.Popen[bytes], str, Path]:
    """The bundled server (``command``: ``python -m conformance mcp-server``) over Streamable HTTP
    with ``profile``, listening: its process, its URL and its stderr log. Raises ``SuiteUnavailable``
    (its stderr's last lines) when it does not listen within ``timeout``."""
    port_file = work / "server.port"
    log = work / "server.log"
    argv = list(command) if command is not None else [sys.executable, "-m", "conformance", "mcp-server"]
    argv += ["--transport", "http", "--port", "0", "--port-file", str(port_file), "--profile", profile]
    with log.open("wb") as output:
        process = subprocess.Popen(
            argv, stdout=subprocess.DEVNULL, stderr=output, stdin=subprocess.DEVNULL, start_new_session=True
        )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if port_file.is_file():
            port = port_file.read_text(encoding="ascii").strip()
            if port.isdigit():
                return process, f"http://127.0.0.1:{port}/mcp", log
        if process.poll() is not None:
            raise SuiteUnavailable(
                f"the MCP server exited {process.returncode} before listening: {_tail(log) or 'no output'}"
            )
        time.sleep(0.05)
    _stop(process)
    raise SuiteUnavailable(f"the MCP server did not listen within {timeout:g} s: {_tail(log) or 'no output'}")


def run_suite(
    scenarios: Sequence[str],
    *,
    node: Path,
    work: Path,
    suite_dir: Path | None = None,
    timeout: float = SCENARIO_TIMEOUT,
    server_command: Sequence[str] | None = None,
    profile: str = "conformance-suite",
    echo: bool = True,
) -> list[ScenarioResult]:
    """Start the server, run each scenario against it (one failing or hanging never stops the
    others), stop the server; the results, printed as they come when ``echo``."""
    suite_dir = SUITE_DIR if suite_dir is None else suite_dir
    command = [str(node), str(suite_bin(suite_dir))]
    env = {**os.environ, "PATH": os.pathsep.join([str(node.parent), os.environ.get("PATH", "")])}
    process, url, log = start_server(work, command=server_command, profile=profile)
    results: list[ScenarioResult] = []
    try:
        if echo:
            version = _pinned_version(suite_dir)
            print(f"{PACKAGE} {version} against {url} (the bundled server, --profile {profile})")
        for scenario in scenarios:
            if process.poll() is not None:
                result = ScenarioResult(
                    scenario,
                    problem=f"the MCP server exited {process.returncode} before it: {_tail(log) or 'no output'}",
                )
            else:
                result = run_scenario(command, scenario, url, work, env=env, timeout=timeout)
            results.append(result)
            if echo:
                print("\n".join(result.lines()), flush=True)
    finally:
        _stop(process)
    return results


def summary_line(results: Sequence[ScenarioResult]) -> str:
    """``N scenarios: P passed, F failed (checks: ...)``."""
    passed = sum(1 for r in results if r.passed)
    checks = [c for r in results for c in r.checks]
    counts = {s: sum(1 for c in checks if c.status == s) for s in ("SUCCESS", "FAILURE", "WARNING")}
    return (
        f"{len(results)} scenarios of the MCP conformance suite: {passed} passed, {len(results) - passed} failing"
        f" (checks: {counts['SUCCESS']} passed, {counts['FAILURE']} failed, {counts['WARNING']} warnings)"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=SCRIPT, description=__doc__.split("\n\n", 1)[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("install", help=f"Node >= {node_runtime.MIN_MAJOR}, then npm ci in examples/mcp_conformance")
    sub.add_parser("list", help="the scenarios run, and why each applies to tools")
    run = sub.add_parser("run", help="run the scenarios against the bundled server over Streamable HTTP")
    run.add_argument(
        "--scenario", action="append", metavar="NAME", help="only this scenario (repeatable; default: all of list)"
    )
    run.add_argument(
        "--timeout", type=float, default=SCENARIO_TIMEOUT, help="seconds per scenario (default: %(default)g)"
    )
    run.add_argument("--keep", type=Path, metavar="DIR", help="keep the suite's results and the server's log in DIR")
    args = parser.parse_args(argv)
    if args.command == "list":
        for name, why in SCENARIOS.items():
            print(f"{name}: {why}")
        return 0
    try:
        if args.command == "install":
            node = node_runtime.find_node(install=True)
            node_runtime.install_drivers(node, drivers=SUITE_DIR)
            suite_bin()
            print(node)
            return 0
        if args.timeout <= 0:
            parser.error("--timeout must be > 0")
        node = node_runtime.find_node(install=False)
        suite_bin()
        scenarios = args.scenario or list(SCENARIOS)
        if args.keep is not None:
            args.keep.mkdir(parents=True, exist_ok=True)
            results = run_suite(scenarios, node=node, work=args.keep, timeout=args.timeout)
        else:
            with tempfile.TemporaryDirectory(prefix="mcp-suite-") as work:
                results = run_suite(scenarios, node=node, work=Path(work), timeout=args.timeout)
    except (SuiteUnavailable, node_runtime.NodeUnavailable) as exc:
        print(f"{SCRIPT}: {exc}", file=sys.stderr)
        return 3
    print(summary_line(results))
    return 0 if all(r.passed for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
