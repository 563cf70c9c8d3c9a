"""Feed fuzz inputs to the package's entry points and collect the crashes and hangs.

Each input runs through the entry points a user reaches with a file they were given:

- a cassette: ``load_cassette``; ``conformance inspect`` (text or JSON, in turns) in-process; the replay of
  its (adapter, scenario) pair as ``conformance run`` plays it (``run_pair``, every check family);
  and for every ``FULL_RUN_EVERY``-th input the whole ``conformance run`` command writing its four
  reports;
- a scenario: ``load_scenarios`` and ``load_scenario``; its first request through every bundled
  adapter's ``request_to_wire`` (where tool schemas are expanded); ``conformance validate`` (text
  or JSON, in turns) and ``conformance list`` in-process; and for every ``FULL_RUN_EVERY``-th input that starts no
  command, ``conformance run`` with it as a user's scenario.

A **crash** is an exception outside the ``ConformanceError`` hierarchy escaping a loader or a
command, a case or check ``error`` saying "internal error", a check family that raised
(``<family>.internal``), an exception from the replay that is not a ``ConformanceError``, a
traceback or "internal error" on a command's console, an exit code other than 0/1/2, or a report
missing after ``run``. A **hang** is an input that used more than the per-input bound of **CPU
time** (``INPUT_TIMEOUT``, all its threads), or that slept past the wall cap (a wait that never ends).

Inputs run in worker processes (``python -m tests.fuzz._drive``) with a memory cap
(``RLIMIT_AS``) and a per-input CPU alarm (``ITIMER_PROF``), so a machine busy with other work
slows an input down without making it a hang. The wall clock is only a last resort (``WALL_CAP``):
an input still running then is a hang when it slept most of that time, and **busy** ("machine too
busy", no finding against the package) when it was waiting for a CPU (the run-queue wait of its
threads, ``/proc/<pid>/task/*/schedstat``). The parent (``run_inputs``) also kills a worker that
does not answer within the same bounds (its CPU time read from ``/proc/<pid>/stat``), records the
hang, and starts a new worker for the next input, so a bomb costs its own input and never the
machine. A worker that ends for any other reason (a segfault, ``MemoryError``) is restarted the
same way, with its input recorded as a crash.
"""

from __future__ import annotations

import contextlib
import faulthandler
import io
import json
import os
import re
import resource
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

from tests.fuzz._mutations import ROOT, FuzzInput, cassette_input, scenario_input

__all__ = [
    "FULL_RUN_EVERY",
    "Finding",
    "Outcome",
    "check_input",
    "make_input",
    "run_inputs",
]

FULL_RUN_EVERY = 20
"""Every twentieth input (and every crafted one) also runs the whole ``conformance run`` command,
reports written."""
MEMORY_CAP = 1536 << 20
"""Bytes of address space a worker may take (``RLIMIT_AS``)."""
_RETIRE_KIB = 512 << 10
"""A worker whose peak resident size passed this (KiB) is replaced after its input."""


@dataclass(frozen=True)
class Finding:
    """A crash or a hang, with what reproduces it."""

    what: str
    """``crash``, ``hang``, or ``busy``: the input did not finish within the wall cap while it waited
    for a CPU most of that time (the machine was too busy to judge it; not a finding against the package)."""
    entry: str
    """The entry point: ``load_cassette``, ``inspect``, ``run_pair``, ``validate``, ``list``, ..."""
    key: str
    """``cassette:<index>``, ``scenario:<index>`` or ``crafted:<name>``."""
    seed: str
    source: str
    mutations: str
    detail: str
    """The exception (type, message, innermost frames) or the bad output."""

    def describe(self) -> str:
        kind, _, index = self.key.partition(":")
        how = (
            "the input's bytes follow (a hypothesis example)"
            if self.seed == "hypothesis"
            else f"python -m tests.fuzz._drive --seed {self.seed} {kind} {index}"
        )
        return (
            f"{self.what} in {self.entry}: {self.key} seed={self.seed} from {self.source} by {self.mutations}\n"
            f"    {self.detail.strip().replace(chr(10), chr(10) + '    ')}\n"
            f"    reproduce: {how}"
        )


@dataclass
class Outcome:
    """What a batch of inputs gave."""

    ran: dict[str, int] = field(default_factory=dict)
    """Inputs run per entry point."""
    findings: list[Finding] = field(default_factory=list)
    """The crashes and hangs (``busy`` inputs are in ``busy``)."""
    busy: list[Finding] = field(default_factory=list)
    """Inputs not judged: still running at the wall cap while waiting for a CPU (the machine was too busy)."""
    seconds: float = 0.0


# --------------------------------------------------------------------------------------------
# Inputs by key
# --------------------------------------------------------------------------------------------


def make_input(seed: str, key: str) -> FuzzInput:
    kind, _, name = key.partition(":")
    if kind == "cassette":
        return cassette_input(seed, int(name))
    if kind == "scenario":
        return scenario_input(seed, int(name))
    if kind == "crafted":
        from tests.fuzz._crafted import crafted

        return crafted()[name]
    raise ValueError(f"unknown input key {key!r}")


# --------------------------------------------------------------------------------------------
# The entry points, in this process
# --------------------------------------------------------------------------------------------


class Hang(BaseException):
    """Raised by the per-input alarm (a ``BaseException``: no ``except Exception`` swallows it):
    ``what`` is ``hang``, or ``busy`` when the wall cap found the input waiting for a CPU."""

    def __init__(self, what: str = "hang", detail: str = "") -> None:
        super().__init__(what, detail)
        self.what = what
        self.detail = detail


# --------------------------------------------------------------------------------------------
# CPU time and run-queue waits (Linux /proc; elsewhere the wall clock stands in for CPU time)
# --------------------------------------------------------------------------------------------

_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def cpu_seconds(pid: int) -> float | None:
    """The user + system CPU time process ``pid`` used so far, all its threads (None without /proc)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()  # after the command name, which may hold spaces
    return (int(fields[11]) + int(fields[12])) / _TICK  # utime, stime (fields 14 and 15 of stat)


Schedstat = dict[str, tuple[int, int]]
"""Thread id -> (nanoseconds on a CPU, nanoseconds waiting on a run queue)."""


def schedstat(pid: int | str = "self") -> Schedstat | None:
    """Each thread's CPU time and run-queue wait (``/proc/<pid>/task/*/schedstat``; None without it)."""
    found: Schedstat = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    for tid in tids:
        try:
            ran, waited, _ = Path(f"/proc/{pid}/task/{tid}/schedstat").read_text(encoding="ascii").split()
        except (OSError, ValueError):
            continue
        found[tid] = (int(ran), int(waited))
    return found or None


def stalled(before: Schedstat | None, after: Schedstat | None, wall: float) -> tuple[str, str]:
    """Why an input still runs after ``wall`` seconds: (``hang`` or ``busy``, the figures).

    Its threads' CPU time plus run-queue wait over that time is how long they wanted a CPU: at least
    half the wall time means the input was working, slowed by a busy machine (``busy``: it did not
    reach its CPU bound); less means it slept, waiting for something that does not come (``hang``).
    Without schedstat the input cannot be judged: ``busy``."""
    if before is None or after is None or wall <= 0:
        return "busy", f"over {wall:.0f} s of wall time (no /proc schedstat here to tell a wait from a busy machine)"
    ran = waited = 0
    for tid, (cpu, queue) in after.items():
        cpu0, queue0 = before.get(tid, (0, 0))
        ran += max(cpu - cpu0, 0)
        waited += max(queue - queue0, 0)
    share = (ran + waited) / 1e9 / wall
    figures = f"over {wall:.0f} s of wall time: {ran / 1e9:.1f} s on a CPU, {waited / 1e9:.1f} s waiting for one"
    if share >= 0.5:
        return "busy", f"machine too busy: {figures} (not judged; rerun it on a quieter machine)"
    return "hang", f"{figures}, asleep the rest (a wait that never ends)"


_NOW: dict[str, str] = {"entry": "input", "where": ""}
"""The entry point running, and where the alarm found the main thread (for a hang's report)."""
_NOW_T: dict[str, float] = {"start": 0.0}
"""When the input started (``time.monotonic``)."""
_NOW_STAT: dict[str, Schedstat | None] = {}
"""The worker's threads' schedstat when the input started."""


_TRACEBACK = "Traceback (most recent call last)"
_INTERNAL = re.compile(r"internal error (?:while|in) |please report it")
"""How the package words a bug of its own it caught (a provider's "An internal error has occurred"
in a recorded body is no finding)."""


def _exception(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)[-4:]
    where = " <- ".join(f"{Path(f.filename).name}:{f.lineno} {f.name}" for f in reversed(frames))
    return f"{type(exc).__name__}: {str(exc)[:300]}\n  at {where}"


class _Checker:
    def __init__(self, inp: FuzzInput, work: Path, scenarios: dict[str, Any]) -> None:
        self.inp = inp
        self.work = work
        self.scenarios = scenarios
        self.findings: list[Finding] = []
        self.ran: list[str] = []

    def crash(self, entry: str, detail: str, what: str = "crash") -> None:
        self.findings.append(
            Finding(
                what=what,
                entry=entry,
                key=self.inp.key,
                seed=self.inp.seed,
                source=self.inp.source,
                mutations="+".join(self.inp.mutations),
                detail=detail,
            )
        )

    @contextlib.contextmanager
    def entry(self, name: str, allowed: tuple[type[BaseException], ...]) -> Iterator[None]:
        self.ran.append(name)
        _NOW["entry"] = name
        try:
            yield
        except Hang:
            raise
        except allowed:
            pass
        except BaseException as exc:
            self.crash(name, _exception(exc))

    def cli(self, name: str, argv: Sequence[str], *, reports: Path | None = None) -> None:
        """A command run in-process on a console that encodes strictly as UTF-8 (as a terminal does)."""
        from conformance.cli import main

        self.ran.append(name)
        _NOW["entry"] = name
        out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict", write_through=True)
        err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict", write_through=True)
        code: Any = None
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = main(list(argv))
        except Hang:
            raise
        except SystemExit as exc:
            code = exc.code
        except BaseException as exc:
            self.crash(name, "escaped the command: " + _exception(exc))
            return
        assert isinstance(out.buffer, io.BytesIO) and isinstance(err.buffer, io.BytesIO)
        console = (out.buffer.getvalue() + err.buffer.getvalue()).decode("utf-8", "replace")
        if _TRACEBACK in console:
            at = console.index(_TRACEBACK)
            self.crash(name, "traceback on the console:\n" + console[at : at + 1500])
        elif (found := _INTERNAL.search(console)) is not None:
            start = console.rfind("\n", 0, found.start()) + 1
            self.crash(name, "internal error on the console: " + console[start : start + 600])
        if code not in (0, 1, 2):
            self.crash(name, f"exit code {code!r} (expected 0, 1 or 2)")
        if reports is not None and code in (0, 1):
            missing = [
                n for n in ("report.json", "report.md", "report.html", "junit.xml") if not (reports / n).is_file()
            ]
            if missing:
                self.crash(name, f"exit {code} without the reports {', '.join(missing)}")


def _case_findings(checker: _Checker, cases: Sequence[Any]) -> None:
    from conformance.errors import ConformanceError

    conformance_errors = {cls.__name__ for cls in _subclasses(ConformanceError)}
    for case in cases:
        message = case.message or ""
        if case.status == "error":
            if "timed out after" in message:  # the runner's own (wall) timeout: asleep, or a busy machine
                what, figures = stalled(_NOW_STAT.get("start"), schedstat(), time.monotonic() - _NOW_T["start"])
                checker.crash("run_pair", f"{case.mode}: {message}; {figures}", what=what)
            elif _INTERNAL.search(message):
                checker.crash("run_pair", f"{case.mode}: {message[:600]}")
            elif message.startswith(("the adapter raised ", "replay raised ")):
                name = message.split(" raised ", 1)[1].split(":", 1)[0]
                if name not in conformance_errors:
                    tail = "\n".join((case.traceback or "").strip().splitlines()[-7:])
                    checker.crash("run_pair", f"{case.mode}: {message[:300]}\n{tail}")
        for verdict in case.checks:
            if verdict.check.endswith(".internal"):
                checker.crash("run_pair", f"{case.mode}: check {verdict.check}: {verdict.message[-900:]}")


def _subclasses(cls: type) -> set[type]:
    found = {cls}
    for sub in cls.__subclasses__():
        found |= _subclasses(sub)
    return found


def check_input(
    inp: FuzzInput, work: Path, scenarios: dict[str, Any], *, full_run: bool
) -> tuple[list[str], list[Finding]]:
    """Run ``inp`` through its entry points (files under ``work``); the entry points run, and the findings."""
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    checker = _Checker(inp, work, scenarios)
    if inp.kind == "cassette":
        _check_cassette(checker, full_run=full_run)
    else:
        _check_scenario(checker, full_run=full_run)
    return checker.ran, checker.findings


def _check_cassette(checker: _Checker, *, full_run: bool) -> None:
    from conformance.adapters import get_adapter
    from conformance.errors import ConformanceError
    from conformance.run.runner import RunOptions, run_pair
    from conformance.traffic.cassettes import load_cassette

    inp = checker.inp
    cassettes = checker.work / "cassettes"
    path = cassettes / inp.relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(inp.data)
    with checker.entry("load_cassette", (ConformanceError,)):
        load_cassette(path)
    text = inp.index % 2 == 0 or bool(inp.name)  # the two renderings take turns; crafted inputs get both
    if text:
        checker.cli("inspect", ["inspect", str(path)])
    if not text or inp.name:
        checker.cli("inspect", ["inspect", "--format", "json", str(path)])
    traffic, _, rest = inp.relpath.partition("/")
    scenario_id = rest.removesuffix(".yaml")
    scenario = checker.scenarios.get(scenario_id)
    if scenario is None or scenario.mcp is not None:  # an MCP pair starts a server: the loaders are enough
        return
    options = RunOptions(cassette_dir=cassettes, timeout=_CASE_TIMEOUT)
    with checker.entry("run_pair", ()):
        _case_findings(checker, run_pair(scenario, get_adapter(traffic), options))
    if full_run:
        reports = checker.work / "reports"
        argv = ["run", "--cassette-dir", str(cassettes), "--adapters", traffic, "--scenarios", scenario_id]
        argv += ["--report-dir", str(reports), "--jobs", "1", "--quiet", "--timeout", str(_CASE_TIMEOUT)]
        checker.cli("run", argv, reports=reports)


def _check_scenario(checker: _Checker, *, full_run: bool) -> None:
    from conformance.errors import ConformanceError
    from conformance.scenarios.loader import ENV_VAR, load_scenario, load_scenarios

    inp = checker.inp
    folder = checker.work / "scenarios"
    path = folder / inp.relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(inp.data)
    with checker.entry("load_scenarios", (ConformanceError,)):
        result = load_scenarios([folder])
        for problem in result.problems:
            if _INTERNAL.search(str(problem)):
                checker.crash("load_scenarios", str(problem)[:800])
    scenario = None
    with checker.entry("load_scenario", (ConformanceError,)):
        scenario = load_scenario(path, root=folder)
    if scenario is not None and scenario.mcp is None:
        _encode_requests(checker, scenario)
    if inp.index % 2 == 0 or inp.name:
        checker.cli("validate", ["validate", str(path)])
    if inp.index % 2 == 1 or inp.name:
        checker.cli("validate", ["validate", "--format", "json", str(path)])
    old = os.environ.get(ENV_VAR)
    os.environ[ENV_VAR] = str(folder)
    try:
        checker.cli("list", ["list"])
    finally:
        if old is None:
            del os.environ[ENV_VAR]
        else:
            os.environ[ENV_VAR] = old
    if full_run and b"mcp" not in inp.data and b"command" not in inp.data:  # never start a command
        reports = checker.work / "reports"
        scenario_id = inp.relpath.removesuffix(".yaml")
        argv = ["run", "--scenarios-dir", str(folder), "--scenarios", scenario_id, "--adapters", "openai_chat,gemini"]
        argv += ["--report-dir", str(reports), "--jobs", "1", "--quiet", "--timeout", str(_CASE_TIMEOUT)]
        checker.cli("run", argv, reports=reports)


def _encode_requests(checker: _Checker, scenario: Any) -> None:
    """The scenario's first request through every bundled adapter's ``request_to_wire`` (as ``run``
    and ``record`` send it): tool schemas are expanded there (``$ref``)."""
    from conformance.adapters import BUILTIN, get_adapter
    from conformance.errors import ConformanceError
    from conformance.model import Message
    from conformance.run.conversation import build_request

    first = scenario.turns[0].user if scenario.turns else ()
    messages = [Message(role="user", parts=first)] if first else []
    for name in sorted(BUILTIN):
        for stream in (False, True):
            with checker.entry("request_to_wire", (ConformanceError,)):
                get_adapter(name).request_to_wire(build_request(scenario, messages, model="m", stream=stream))


# --------------------------------------------------------------------------------------------
# The worker process
# --------------------------------------------------------------------------------------------

INPUT_TIMEOUT = float(os.environ.get("CONFORMANCE_FUZZ_INPUT_TIMEOUT", "20"))
"""CPU seconds per input, all its entry points and threads together (the worker's ``ITIMER_PROF``
alarm; the parent's watchdog allows a little more)."""
WALL_CAP = float(os.environ.get("CONFORMANCE_FUZZ_WALL_CAP", "180"))
"""Wall seconds per input, the last resort: an input still running then slept (a hang) or waited for
a CPU (``busy``: the machine was too busy to judge it). At a load of 10 on 2 cores an input gets a
fifth of a CPU: this leaves every input of the corpus (well under 5 s of CPU each) room to finish."""
_CASE_TIMEOUT = float(os.environ.get("CONFORMANCE_FUZZ_CASE_TIMEOUT", str(WALL_CAP / 3)))
"""Wall seconds per replayed case (the runner's own timeout): a case that waits forever; a case that
spins is stopped by the CPU alarm first."""


def _on_alarm(signum: int, frame: FrameType | None) -> None:
    stack = traceback.extract_stack(frame)[-5:] if frame is not None else []
    _NOW["where"] = " <- ".join(f"{Path(f.filename).name}:{f.lineno} {f.name}" for f in reversed(stack))
    if signum == signal.SIGPROF:
        raise Hang("hang", f"over {_NOW['cpu']} s of CPU time (the worker's alarm)")
    what, figures = stalled(_NOW_STAT.get("start"), schedstat(), time.monotonic() - _NOW_T["start"])
    raise Hang(what, f"{figures} (the worker's wall cap)")


def _selftest(action: str) -> None:
    """Misbehave on purpose (``selftest:<action>`` keys), so a test sees the watchdog catch it."""
    if action == "hang":  # spins: the CPU alarm
        while True:
            pass
    if action == "sleep":  # waits for nothing: the wall cap, which finds it asleep
        time.sleep(3600)
    if action in ("stuck", "stuck-sleep"):  # deaf to the alarms: only the parent's watchdog ends it
        signal.signal(signal.SIGALRM, signal.SIG_IGN)  # process-wide: any thread may take a signal
        signal.signal(signal.SIGPROF, signal.SIG_IGN)
        if action == "stuck-sleep":
            time.sleep(3600)
        while True:
            pass
    if action == "segv":
        faulthandler.disable()  # a deliberate crash: no "Fatal Python error" stack on the run's output
        os.kill(os.getpid(), signal.SIGSEGV)
    if action == "memory":
        bytearray(MEMORY_CAP * 2)
    if action == "raise":
        raise KeyError("selftest")


def _worker(seed: str, input_timeout: float, wall_cap: float) -> None:
    """Read input keys on stdin, one a line; for each answer ``start`` and then ``done`` with the findings."""
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 1000))
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.signal(signal.SIGPROF, _on_alarm)
    _NOW["cpu"] = f"{input_timeout:g}"
    # the entry points' modules, imported before the first input: no input pays for them
    import conformance.adapters
    import conformance.cli
    import conformance.run.runner
    import conformance.traffic.cassettes  # noqa: F401
    from conformance.scenarios.loader import load_scenarios

    scenarios = {s.id: s for s in load_scenarios([ROOT / "scenarios"]).scenarios}
    base_threads = threading.active_count()
    reply = sys.stdout
    sys.stdout = sys.stderr  # whatever the package prints outside a command stays off the protocol
    with tempfile.TemporaryDirectory(prefix="conformance-fuzz-") as tmp:
        for line in sys.stdin:
            key, _, flags = line.strip().partition(" ")
            if not key:
                continue
            reply.write(f"start {key}\n")
            reply.flush()
            retire = False
            ran: list[str] = []
            findings: list[Finding] = []
            inp: FuzzInput | None = None
            _NOW.update(entry="input", where="")
            _NOW_T["start"] = time.monotonic()
            _NOW_STAT["start"] = schedstat()
            signal.setitimer(signal.ITIMER_PROF, input_timeout)
            signal.setitimer(signal.ITIMER_REAL, wall_cap)
            try:
                if key.startswith("selftest:"):
                    _NOW["entry"] = "selftest"
                    ran = ["selftest"]
                    try:
                        _selftest(key.partition(":")[2])
                    except (Hang, MemoryError):
                        raise
                    except Exception as exc:
                        findings = [_fail(seed, key, None, "crash", _exception(exc), entry="selftest")]
                else:
                    inp = make_input(seed, key)
                    ran, findings = check_input(inp, Path(tmp) / "in", scenarios, full_run="full" in flags)
            except Hang as stop:
                detail = f"{stop.detail}\n  at {_NOW['where']}"
                findings = [_fail(seed, key, inp, stop.what, detail, entry=_NOW["entry"])]
                retire = True
            except MemoryError as exc:
                detail = f"MemoryError under a {MEMORY_CAP >> 20} MiB cap: {exc}"
                findings = [_fail(seed, key, inp, "crash", detail, entry=_NOW["entry"])]
                retire = True
            finally:
                signal.setitimer(signal.ITIMER_PROF, 0)
                signal.setitimer(signal.ITIMER_REAL, 0)
            if any(f.what in ("hang", "busy") for f in findings) or threading.active_count() > base_threads + 2:
                retire = True  # a case left running past its timeout would slow every later input
            if resource.getrusage(resource.RUSAGE_SELF).ru_maxrss > _RETIRE_KIB:
                retire = True  # a big input left the heap grown: the next input starts under the cap afresh
            payload = {"ran": ran, "findings": [asdict(f) for f in findings], "retire": retire}
            reply.write("done " + json.dumps(payload) + "\n")
            reply.flush()
            if retire:
                break
    reply.flush()
    os._exit(0)  # abandoned case threads must not keep a retiring worker alive


def _fail(seed: str, key: str, inp: FuzzInput | None, what: str, detail: str, *, entry: str = "input") -> Finding:
    return Finding(
        what=what,
        entry=entry,
        key=key,
        seed=seed,
        source=inp.source if inp else "?",
        mutations="+".join(inp.mutations) if inp else "?",
        detail=detail,
    )


# --------------------------------------------------------------------------------------------
# The parent: workers, the watchdog, the findings
# --------------------------------------------------------------------------------------------


class _Process:
    def __init__(self, seed: str, input_timeout: float, wall_cap: float) -> None:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
        env["PYTHONHASHSEED"] = "0"
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.fuzz._drive",
                "--worker",
                "--seed",
                seed,
                "--input-timeout",
                str(input_timeout),
                "--wall-cap",
                str(wall_cap),
            ],
            cwd=ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            bufsize=1,
        )
        self.buffer = ""
        self.since: tuple[float, Schedstat | None] = (time.monotonic(), None)
        self.eof = False
        """The worker closed its end (it died, or exited): not a hang."""

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def read_line(self, cpu: float, wall: float) -> tuple[str | None, str]:
        """The next line, or None with why: the worker died (``eof``), used ``cpu`` seconds of CPU time
        from now (``cpu``; the wall clock stands in where /proc is absent), or ``wall`` seconds passed
        (``wall``)."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        started = time.monotonic()
        used = cpu_seconds(self.proc.pid)
        self.since = (started, schedstat(self.proc.pid))
        while "\n" not in self.buffer:
            now = time.monotonic()
            if now - started >= wall:
                return None, "wall"
            spent = cpu_seconds(self.proc.pid)
            if (spent - used if spent is not None and used is not None else now - started) >= cpu:
                return None, "cpu"
            ready, _, _ = select.select([fd], [], [], min(0.25, wall - (now - started)))
            if not ready:
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                self.eof = True
                return None, "eof"
            self.buffer += chunk.decode("utf-8", "replace")
        line, _, self.buffer = self.buffer.partition("\n")
        return line, ""

    def stalled(self) -> tuple[str, str]:
        """``stalled`` for the worker, since the last ``read_line`` began."""
        started, before = self.since
        return stalled(before, schedstat(self.proc.pid), time.monotonic() - started)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            with contextlib.suppress(OSError):
                assert stream is not None
                stream.close()


_STARTUP_SECONDS = 60.0
"""CPU seconds a new worker may take to import the package and load the scenarios."""
_WATCHDOG_SLACK = float(os.environ.get("CONFORMANCE_FUZZ_WATCHDOG_SLACK", "10"))
"""Seconds (CPU, and wall past the wall cap) the parent waits past the worker's own alarms."""


def _lane(
    seed: str,
    keys: Sequence[str],
    outcome: Outcome,
    lock: threading.Lock,
    input_timeout: float,
    wall_cap: float,
) -> None:
    """Run ``keys`` in order in one worker at a time, restarting it after a hang, a crash or a retirement."""
    proc: _Process | None = None
    try:
        for number, key in enumerate(keys):
            fresh = proc is None
            if proc is None:
                proc = _Process(seed, input_timeout, wall_cap)
            flags = "full" if number % FULL_RUN_EVERY == FULL_RUN_EVERY - 1 or key.startswith("crafted:") else ""
            proc.send(f"{key} {flags}")
            cpu, wall = input_timeout + _WATCHDOG_SLACK, wall_cap + _WATCHDOG_SLACK  # the worker's alarms come first
            line, why = proc.read_line(cpu + _STARTUP_SECONDS if fresh else cpu, wall + (wall if fresh else 0))
            if line is not None and line.startswith("start "):
                line, why = proc.read_line(cpu, wall)
            if line is None or not line.startswith("done "):
                dead = proc.proc.poll()
                if dead is None and proc.eof:  # closed its end: dying, not yet reaped
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        dead = proc.proc.wait(10)
                if dead is not None:
                    what, detail = "crash", f"the worker process died (exit status {dead}) on this input"
                elif why == "cpu":
                    what, detail = "hang", f"no answer after {cpu:g} s of CPU time (killed by the watchdog)"
                else:
                    what, figures = proc.stalled()
                    detail = f"no answer: {figures} (killed by the watchdog)"
                proc.stop()
                proc = None
                inp = _safe_input(seed, key)
                with lock:
                    (outcome.busy if what == "busy" else outcome.findings).append(_fail(seed, key, inp, what, detail))
                    outcome.ran["input"] = outcome.ran.get("input", 0) + 1
                continue
            payload = json.loads(line[len("done ") :])
            with lock:
                for name in payload["ran"]:
                    outcome.ran[name] = outcome.ran.get(name, 0) + 1
                outcome.ran["input"] = outcome.ran.get("input", 0) + 1
                for found in payload["findings"]:
                    (outcome.busy if found["what"] == "busy" else outcome.findings).append(Finding(**found))
            if payload["retire"]:
                proc.stop()
                proc = None
    finally:
        if proc is not None:
            with contextlib.suppress(OSError):
                proc.proc.stdin.close()  # type: ignore[union-attr]  # EOF: the worker ends on its own
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.proc.wait(10)
            proc.stop()


def _safe_input(seed: str, key: str) -> FuzzInput | None:
    try:
        return make_input(seed, key)
    except Exception:
        return None


def run_inputs(
    seed: str,
    keys: Sequence[str],
    *,
    workers: int = 2,
    input_timeout: float | None = None,
    wall_cap: float | None = None,
) -> Outcome:
    """Run every input of ``keys`` in ``workers`` worker processes; every finding collected (none stops
    the run). ``input_timeout`` is CPU seconds per input (``INPUT_TIMEOUT``), ``wall_cap`` wall seconds
    (``WALL_CAP``)."""
    outcome = Outcome()
    lock = threading.Lock()
    started = time.perf_counter()
    lanes = [keys[i::workers] for i in range(workers)]
    bounds = (input_timeout or INPUT_TIMEOUT, wall_cap or WALL_CAP)
    threads = [threading.Thread(target=_lane, args=(seed, lane, outcome, lock, *bounds)) for lane in lanes if lane]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    outcome.seconds = time.perf_counter() - started
    for found in (outcome.findings, outcome.busy):
        found.sort(key=lambda f: (f.key.split(":")[0], _number(f.key), f.entry))
    return outcome


def _number(key: str) -> int:
    tail = key.rpartition(":")[2]
    return int(tail) if tail.isdigit() else -1


# --------------------------------------------------------------------------------------------
# Command line: reproduce one input, or serve as a worker
# --------------------------------------------------------------------------------------------


def _main(argv: Sequence[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m tests.fuzz._drive", description=__doc__.split("\n")[0])
    parser.add_argument("--seed", default=os.environ.get("CONFORMANCE_FUZZ_SEED", "0"))
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--input-timeout", type=float, default=INPUT_TIMEOUT, help=argparse.SUPPRESS)
    parser.add_argument("--wall-cap", type=float, default=WALL_CAP, help=argparse.SUPPRESS)
    parser.add_argument("--write", metavar="FILE", help="write the input's bytes to FILE instead of running it")
    parser.add_argument("kind", nargs="?", choices=("cassette", "scenario", "crafted"))
    parser.add_argument("index", nargs="?", help="the input's number (or a crafted input's name)")
    args = parser.parse_args(argv)
    if args.worker:
        _worker(args.seed, args.input_timeout, args.wall_cap)
        return 0
    if not args.kind or args.index is None:
        parser.error("give KIND and INDEX (e.g. cassette 17)")
    key = f"{args.kind}:{args.index}"
    inp = make_input(args.seed, key)
    print(inp.describe(), file=sys.stderr)
    if args.write:
        Path(args.write).write_bytes(inp.data)
        return 0
    outcome = run_inputs(args.seed, [key], workers=1)
    for finding in [*outcome.findings, *outcome.busy]:
        print(finding.describe())
    print(f"{len(outcome.findings)} finding(s)" + (", machine too busy to judge it" if outcome.busy else ""))
    return 1 if outcome.findings else 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
