"""Every figure of docs/*.md is checked against the suite, or listed with why it cannot be.

A figure is a number the docs state about the suite that a change could make untrue: a count of cases,
verdicts, adapters, scenarios, wires or lines, a timing (``s``, ``ms``, ``minutes``, a ``default N``
of seconds) or a size. ``FIGURE`` finds them; ``FIGURES`` says, for each (doc, figure as written), the
function here that checks it against the code or a real run, the test elsewhere that does, or why it
is not checked (a measurement of a machine or of something that cannot run offline, an example, a
provider's documented value, or words that only look like a figure). A figure ``FIGURE`` finds that
``FIGURES`` does not list fails ``test_every_figure_of_the_docs_is_listed``, and so does an entry no
doc has any more: a doc that gains or changes a figure says here how it stays true.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from conformance.adapters import adapter_names, native_adapters, prompt_adapters
from conformance.adapters.base import WIRE_FORMATS
from conformance.cli import build_parser
from conformance.clients.harness import CertifyOptions
from conformance.emulator import _ollama
from conformance.emulator._server import DEFAULT_MAX_LOG_BYTES
from conformance.emulator._wire import DEFAULT_AFTER
from conformance.emulator.fidelity import ADAPTERS as FIDELITY_ADAPTERS
from conformance.mcp_bridge import client as mcp_client
from conformance.mcp_bridge.scenario_tools import DEFAULT_START_TIMEOUT
from conformance.run import workers
from conformance.run.recording import DEFAULT_EXCHANGE_TIMEOUT
from conformance.run.runner import WATCHDOG_GRACE, RunOptions, pair_budget
from conformance.scenarios.values import DEFAULT_MCP_TIMEOUT
from conformance.traffic.cassettes import load_cassette
from conformance.traffic.volatile import normalise_interactions
from tests._scripts import load_script
from tests.docs._project import DOCS, MY_DOCS, REPO

WORDS = "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
NUMBER = {word: n for n, word in enumerate(WORDS.split("|"), start=1)}
FIGURE = re.compile(
    rf"""(?ix)
    \b(?:\d[\d,.]*(?:[–-]\d[\d,.]*)?|{WORDS})\+?\s+(?:bundled\s+|native\s+|more\s+|`[^`\n]+`\s+)?
        (?:cases?|pass|fail|failed|passed|unsupported|left|xfail|stale|errors|scenarios|adapters|wires|defects|FAILs|lines)\b
    | \b\d[\d,.]*(?:[–-]\d[\d,.]*)?\s?(?:s|ms|min|minutes|seconds|hours)\b
    | \bdefault:?\s+\d[\d,.]*\b(?:\s?(?:s|ms|seconds)\b)?
    | \b\d[\d,.]*\s?(?:KB|MB|GB|MiB|GiB|KiB)\b
    """
)


@dataclass(frozen=True)
class Elsewhere:
    """Checked by another test (``path::test``)."""

    test: str


@dataclass(frozen=True)
class Unchecked:
    """Not checked here, and why."""

    kind: str  # "measured", "example", "provider", "not a figure"
    why: str


# ------------------------------------------------------------------------------------------------
# The checks
# ------------------------------------------------------------------------------------------------


def _doc(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def watchdog_grace() -> None:
    """docs/adapters.md: the watchdog waits the pair's timeouts, one for the cassette, one for an MCP
    server, and 5 s; its quoted message is a pair of two cases at ``--timeout 16``."""
    assert WATCHDOG_GRACE == 5.0
    assert pair_budget(2, 16.0) == 69.0
    assert "one for the cassette, one for an MCP server and 5 s" in _doc("adapters.md").replace("\n  ", " ")


def memory_limit() -> None:
    """A worker's memory: a quarter of the RAM, between 1 and 4 GiB."""
    gib = 1024**3
    for ram, limit in ((64 * gib, 4 * gib), (8 * gib, 2 * gib), (2 * gib, gib)):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(workers.os, "sysconf", lambda name, ram=ram: {"SC_PAGE_SIZE": 4096}.get(name, ram // 4096))
            assert workers.default_memory_limit() == limit
    for doc in ("adapters.md", "clients.md"):
        assert "a quarter of the RAM, between 1 and 4 GiB" in " ".join(_doc(doc).split())


def child_bounds() -> None:
    """docs/clients.md: a driver's message is bounded at 16 MiB, a turn's answer at 64 MiB, read in 64
    KiB pieces; the last 4 KiB of its output are shown; a silent child is killed 10 s past the turn's
    timeout."""
    from conformance.clients import protocol, remote

    assert remote.MAX_MESSAGE == 16 * 2**20 and remote._CHUNK == 64 * 2**10 and remote.STDERR_TAIL == 4 * 2**10
    assert remote.RemoteClient.turn_slack > 10  # the harness waits longer than the child's own 10 s
    text = " ".join(_doc("clients.md").split())
    assert "A message has a size bound: 16 MiB of JSON." in text and "in 64 KiB pieces" in text
    assert "(4 KiB at most)" in text
    assert "a turn's answer, all its messages, 64 MiB and 100,000 messages" in text
    assert remote.MAX_MESSAGE == protocol.MAX_MESSAGE
    assert protocol.MAX_TURN_BYTES == 64 * 2**20 and protocol.MAX_TURN_MESSAGES == 100_000
    assert "no answer 10 s past the turn's `--timeout`" in text
    assert "call.timeout + 10" in (REPO / "conformance" / "clients" / "remote.py").read_text(encoding="utf-8")


def protocol_bounds() -> None:
    """docs/protocol.md: one message is at most 16 MiB, one turn's answer 64 MiB or 100,000 messages;
    a silent driver is killed 10 seconds past the turn's timeout; a driver has 60 seconds to say hello."""
    from conformance.clients import protocol, remote

    assert protocol.MAX_MESSAGE == 16 * 2**20 and remote.MAX_MESSAGE is protocol.MAX_MESSAGE
    assert protocol.MAX_TURN_BYTES == 64 * 2**20 and protocol.MAX_TURN_MESSAGES == 100_000
    assert remote.START_TIMEOUT == 60.0
    assert "call.timeout + 10" in (REPO / "conformance" / "clients" / "remote.py").read_text(encoding="utf-8")
    text = " ".join(_doc("protocol.md").split())
    assert "at most 16 MiB" in text and "a line past 16 MiB" in text
    assert "more than 64 MiB or 100,000 messages for one turn" in text
    assert "the turn's timeout plus 10 seconds" in text and "say hello within 60 seconds" in text


def certify_timeout() -> None:
    """docs/clients.md: a turn has ``--timeout`` seconds (default 30), and ``CertifyOptions()`` 30."""
    from conformance.cli.certify_targets import CLIENT_TIMEOUT

    args = build_parser().parse_args(["certify", "--client", "x:Y"])
    assert args.timeout is None  # not given: each kind of target's own default, a client's 30 s a turn
    assert CLIENT_TIMEOUT == CertifyOptions().timeout == 30.0
    assert "`--timeout`\n  seconds (default 30)" in _doc("clients.md") or "seconds (default 30)" in _doc("clients.md")
    assert "30 seconds a turn" in " ".join(_doc("clients.md").split())


def minimal_driver_lines() -> None:
    """docs/clients.md: the worked example's driver has "about 50 lines of conversion" (``to_openai``
    and ``complete``, without blank and comment lines), to the nearest ten."""
    source = (REPO / "examples" / "clients" / "minimal_openai_driver.py").read_text(encoding="utf-8")
    lines = source.splitlines()
    count = 0
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and node.name in ("to_openai", "complete"):
            body = lines[node.lineno - 1 : node.end_lineno]
            count += sum(1 for line in body if line.strip() and not line.strip().startswith("#"))
    said = re.search(
        r"about (\d+) lines of conversion, `to_openai` and `complete`", " ".join(_doc("clients.md").split())
    )
    assert said is not None and int(said.group(1)) == round(count, -1), count


def fidelity_adapters() -> None:
    assert len(FIDELITY_ADAPTERS) == NUMBER["five"]
    assert "# all five adapters" in _doc("emulator-fidelity.md")


def bundled_adapters() -> None:
    """ "the eight bundled adapters" (docs/emulator.md, docs/tutorial.md), "the five native ones and these
    three" (docs/emulator.md)."""
    assert len(adapter_names()) == NUMBER["eight"]
    emulator = " ".join(_doc("emulator.md").split())
    said = re.search(rf"all ({WORDS}) bundled adapters, the ({WORDS}) native ones and these ({WORDS})", emulator)
    assert said is not None
    assert [NUMBER[w] for w in said.groups()] == [len(adapter_names()), len(native_adapters()), len(prompt_adapters())]
    assert "(every bundled scenario x the eight bundled adapters)" in _doc("tutorial.md")


def request_log_bytes() -> None:
    """docs/emulator.md's table: the request log keeps 67108864 body bytes (64 MiB) by default."""
    assert DEFAULT_MAX_LOG_BYTES == 64 * 1024 * 1024
    assert f"| {DEFAULT_MAX_LOG_BYTES} (64 MiB) |" in _doc("emulator.md")


def ollama_line_ms() -> None:
    assert _ollama._LINE_MS == 32
    assert "Ollama's stream lines 32 ms apart" in _doc("emulator.md")


def fault_defaults() -> None:
    """The fault table's ``after`` defaults (docs/emulator.md, docs/scenarios.md)."""
    for doc in ("emulator.md", "scenarios.md"):
        text = _doc(doc)
        for kind in ("disconnect", "error_event"):
            row = next(line for line in text.splitlines() if re.match(rf"\|\s*`?{kind}`?\s*\|", line))
            said = re.search(r"`after` events(?: \(default (\d+)\))?", row)
            assert said is not None, row
            if said.group(1) is not None:
                assert int(said.group(1)) == DEFAULT_AFTER[kind], (doc, kind)
    said = re.search(r"bad event after `after` events \(default (\d+)\)", " ".join(_doc("emulator.md").split()))
    assert said is not None and int(said.group(1)) == DEFAULT_AFTER["malformed_body"]


def live_tier() -> None:
    """docs/live.md: the server serves three of the five wires; the tier records ten scenarios on the
    three wires, and three call scenarios in the structured mode; ``-t`` defaults to 1."""
    from tests.live_local import _live

    text = " ".join(_doc("live.md").split())
    assert len(WIRE_FORMATS) == NUMBER["five"] and len(_live.ADAPTERS) == NUMBER["three"]
    assert "serves three of the five wires" in text
    said = re.search(rf"records ({WORDS}) scenarios \(([^)]*)\) on the ({WORDS}) wires", text)
    assert said is not None
    assert NUMBER[said.group(1)] == len(_live.SCENARIOS) and NUMBER[said.group(3)] == len(_live.ADAPTERS)
    assert re.findall(r"`([\w/]+)`", said.group(2)) == list(_live.SCENARIOS)
    calls = re.search(rf"records ({WORDS}) call scenarios \(([^)]*)\)", text)
    assert calls is not None and NUMBER[calls.group(1)] == len(_live.STRUCTURED_SCENARIOS)
    assert re.findall(r"`([\w/]+)`", calls.group(2)) == list(_live.STRUCTURED_SCENARIOS)
    conftest = (REPO / "tests" / "live_local" / "conftest.py").read_text(encoding="utf-8")
    assert "int(os.environ.get(THREADS_ENV) or 1)" in conftest and "sets `-t` (default 1)" in text
    servers = load_script("certify_servers")  # the tier's certification: the ten and tool_choice/required
    said = re.search(rf"with the ({WORDS}) scenarios of `LLAMA_SCENARIOS` \(the ten above and `([\w/]+)`\)", text)
    assert said is not None and NUMBER[said.group(1)] == len(servers.LLAMA_SCENARIOS)
    assert list(servers.LLAMA_SCENARIOS) == [*_live.SCENARIOS[:8], said.group(2), *_live.SCENARIOS[8:]]


def limits_peaks() -> None:
    """docs/limits.md: the bundled cassettes and scenarios and the real-world cassettes peak at 37 KB
    per body and 83 KB per file (kB: 1,000 bytes)."""
    files = [
        *(REPO / "cassettes").rglob("*.yaml"),
        *(REPO / "tests" / "realworld" / "cassettes").rglob("*.yaml"),
        *(REPO / "scenarios").rglob("*.yaml"),
    ]
    per_file = max(p.stat().st_size for p in files)
    per_body = max(
        len(body)
        for p in files
        if "scenarios" not in p.relative_to(REPO).parts[:1]
        for i in load_cassette(p).interactions
        for body in (i.request.body, i.response.body if i.response else b"")
    )
    said = re.search(r"(\d+) KB per body and (\d+) KB per file", " ".join(_doc("limits.md").split()))
    assert said is not None
    assert (int(said.group(1)), int(said.group(2))) == (round(per_body / 1000), round(per_file / 1000))


def limits_record_timeout() -> None:
    assert build_parser().parse_args(["record", "--emulator"]).timeout == 300.0
    assert "`record --timeout SECONDS` (default 300)" in _doc("limits.md")


def mcp_timeouts() -> None:
    """docs/mcp.md and docs/scenarios.md: a tools/call has 120 s by default (the scenario's ``timeout``,
    ``McpSession``); a server has the run's ``--timeout`` (30 s) to start, 120 s when recording; the
    error shows the last 20 lines of its stderr."""
    assert DEFAULT_MCP_TIMEOUT == mcp_client.DEFAULT_TIMEOUT == 120.0
    assert RunOptions().timeout == 30.0 and DEFAULT_START_TIMEOUT == 120.0
    assert mcp_client._STDERR_LINES == 20
    mcp = " ".join(_doc("mcp.md").split())
    assert "(optional, default 120)" in mcp and "(the run's `--timeout`, default 30 s; 120 s when recording)" in mcp
    assert "no answer within the timeout (default 120 s;" in mcp and "the last 20 lines of the server's stderr" in mcp
    assert "more than 0. Default 120." in _doc("scenarios.md")


def mcp_progress() -> None:
    """docs/mcp.md "Progress and cancellation" and docs/scenarios.md: a call with progress resetting its
    timeout may take 10 x its timeout in all by default; slow_progress steps last 0..10 s; the two
    progress scenarios run 12 steps of 0.25 s (3 s) against a 2 s timeout."""
    from conformance.mcp_bridge import _fixtures_progress, progress
    from conformance.scenarios.loader import load_scenario

    assert progress.DEFAULT_MAX_TOTAL_FACTOR == 10.0 and _fixtures_progress.MAX_INTERVAL == 10.0
    for name in ("progress_resets_timeout", "progress_silent_timeout"):
        scenario = load_scenario(REPO / "scenarios" / "mcp" / f"{name}.yaml")
        assert scenario.mcp is not None and scenario.mcp.timeout == 2 and scenario.mcp.reset_timeout_on_progress
        (call,) = scenario.turns[0].reply.tool_calls if scenario.turns[0].reply else ()
        assert call.arguments is not None and (call.arguments["steps"], call.arguments["interval"]) == (12, 0.25)
    mcp = " ".join(_doc("mcp.md").split())
    assert "`interval = 0.25` (0..10 s)" in mcp and "3 s, a notification every 0.25 s" in mcp
    assert "so it is cancelled at 2 s" in mcp and "without it the bound is 10 x `timeout`" in mcp
    assert "Default: 10 x `timeout` with `reset_timeout_on_progress`" in _doc("scenarios.md")


def mcp_stdout_garbage() -> None:
    """docs/mcp.md: of a server's stdout lines that are not JSON-RPC, the first 5 are logged and
    quoted, and past 1,000 the session stops reading it."""
    assert mcp_client.JUNK_SHOWN == 5 and mcp_client.JUNK_LIMIT == 1000
    mcp = " ".join(_doc("mcp.md").split())
    assert "`JUNK_SHOWN` = 5 lines logged and quoted" in mcp and "past `JUNK_LIMIT` = 1,000 such lines" in mcp


def mcp_http_bounds() -> None:
    """docs/mcp.md, "Streamable HTTP": one response from an MCP server is cut past 64 MiB; the SDK caps one
    SSE event at 1 MiB (mcp/client/streamable_http.py, DEFAULT_MAX_SSE_EVENT_SIZE)."""
    from mcp.client.streamable_http import DEFAULT_MAX_SSE_EVENT_SIZE

    from conformance.mcp_bridge import _http

    assert _http.MAX_RESPONSE_BYTES == 64 * 1024 * 1024 and DEFAULT_MAX_SSE_EVENT_SIZE == 1024 * 1024
    mcp = " ".join(_doc("mcp.md").split())
    assert "`MAX_RESPONSE_BYTES` = 64 MiB" in mcp and "caps one SSE event at 1 MiB" in mcp


def mcp_conformance_suite() -> None:
    """docs/mcp.md, "The official conformance suite": the script runs 19 of the suite's scenarios, each
    60 s at most."""
    script = load_script("mcp_conformance_suite")
    assert len(script.SCENARIOS) == 19 and script.SCENARIO_TIMEOUT == 60.0
    mcp = " ".join(_doc("mcp.md").split())
    assert "`python scripts/mcp_conformance_suite.py run`): 19 scenarios," in mcp
    assert "(`conformance server --url URL --scenario NAME`, 60 s at most," in mcp


def exchange_timeout() -> None:
    assert build_parser().parse_args(["record", "--emulator"]).exchange_timeout == DEFAULT_EXCHANGE_TIMEOUT == 120.0
    assert "`--exchange-timeout` seconds (default 120)" in " ".join(_doc("recording.md").split())


def live_bounds() -> None:
    """docs/recording.md and docs/live.md: the bounds of a live recording and their defaults."""
    from conformance.run.recording import DEFAULT_MAX_BODY, DEFAULT_PAIR_TIMEOUT

    args = build_parser().parse_args(["record", "--emulator"])
    assert (args.max_body, args.timeout, args.exchange_timeout) == (DEFAULT_MAX_BODY, DEFAULT_PAIR_TIMEOUT, 120.0)
    assert DEFAULT_MAX_BODY == 64 * 1024 * 1024 == build_parser().parse_args(["drift", "--emulator"]).max_body
    recording = " ".join(_doc("recording.md").split())
    assert "(default `64M`, 64 MiB;" in recording and "(both modes, every turn; default 300 s)" in recording
    assert "did not end within 120 s" in recording and "timed out after 300 s" in recording
    live = " ".join(_doc("live.md").split())
    assert "`--exchange-timeout` (default 120 s," in live and "`--timeout` (default 300 s;" in live


LIVE_RSS = Unchecked(
    "measured",
    "peak RSS of one `record --live` pair on this machine (a child per figure, against a loopback server); "
    "tests/cli/test_record_live.py bounds the growth at 3x and 4x a 16 MiB --max-body",
)


def counter_scrub() -> None:
    """docs/recording.md: a counter header's digits become 0 (``6ms`` -> ``0ms``)."""
    interaction = {
        "request": {"method": "POST", "uri": "http://x/v1/chat/completions", "body": "{}", "headers": {}},
        "response": {"status": {"code": 200}, "headers": {"openai-processing-ms": ["6ms"]}, "body": {"string": "{}"}},
    }
    [scrubbed], _ = normalise_interactions([interaction])
    assert scrubbed["response"]["headers"]["openai-processing-ms"] == ["0ms"]
    assert "(`6ms` → `0ms`)" in _doc("recording.md")


CHECKS: dict[str, Callable[[], None]] = {
    f.__name__: f
    for f in (
        watchdog_grace,
        memory_limit,
        child_bounds,
        protocol_bounds,
        certify_timeout,
        minimal_driver_lines,
        fidelity_adapters,
        bundled_adapters,
        request_log_bytes,
        mcp_progress,
        mcp_stdout_garbage,
        mcp_http_bounds,
        ollama_line_ms,
        fault_defaults,
        live_tier,
        limits_peaks,
        limits_record_timeout,
        mcp_timeouts,
        mcp_conformance_suite,
        exchange_timeout,
        live_bounds,
        counter_scrub,
    )
}

WORKED_EXAMPLE = Elsewhere(
    "tests/docs/test_clients_doc.py::test_the_worked_example_summary_is_the_python_examples_counts"
    " (and tests/clients/test_sdk_drivers.py::test_the_worked_example_of_the_docs_is_what_the_minimal_driver_does)"
)
CONSOLE = Elsewhere(
    "tests/docs/test_doc_commands.py::test_the_commands_of_a_block_run_as_written"
    " (the worked example's console lines are what the command prints)"
)
LLAMA = Unchecked(
    "measured",
    "a measurement of the llama.cpp build, the model or the live_local tier on the project's 2-core machine"
    " (the build and the model come from the package index: minutes of compiling, ~470 MB), as the doc says",
)
EMULATOR_RSS = Unchecked(
    "measured",
    "the RSS of a `conformance emulator` process under load on a 2-core machine, as the doc says; the bound"
    " itself is tested (tests/emulator/test__server.py, 'The request log is bounded')",
)

FIGURES: dict[tuple[str, str], str | Elsewhere | Unchecked] = {
    ("adapters.md", "5 s"): "watchdog_grace",
    ("adapters.md", "69 s"): "watchdog_grace",
    ("adapters.md", "4 GiB"): "memory_limit",
    ("clients.md", "default 30"): "certify_timeout",
    ("clients.md", "30 seconds"): "certify_timeout",
    ("clients.md", "4 GiB"): "memory_limit",
    ("clients.md", "16 MiB"): "child_bounds",
    ("clients.md", "64 KiB"): "child_bounds",
    ("clients.md", "4 KiB"): "child_bounds",
    ("clients.md", "10 s"): "child_bounds",
    ("clients.md", "64 MiB"): "child_bounds",
    ("protocol.md", "16 MiB"): "protocol_bounds",
    ("protocol.md", "64 MiB"): "protocol_bounds",
    ("protocol.md", "10 seconds"): "protocol_bounds",
    ("protocol.md", "60 seconds"): "protocol_bounds",
    ("clients.md", "600 MB"): Elsewhere(
        "tests/clients/test_remote.py::test_an_answer_past_the_bound_is_an_error_and_the_suites_memory_stays_bounded"
    ),
    ("clients.md", "1.26 GB"): Unchecked("measured", "the suite's peak RSS at abfa85f, before the bound existed"),
    ("clients.md", "44 MB"): Unchecked(
        "measured", "the suite's peak RSS on this machine; the test bounds its growth at 100 MiB"
    ),
    ("clients.md", "50 lines"): "minimal_driver_lines",
    ("clients.md", "238 cases"): WORKED_EXAMPLE,
    ("clients.md", "64 pass"): WORKED_EXAMPLE,
    ("clients.md", "159 unsupported"): WORKED_EXAMPLE,
    ("clients.md", "12 left"): WORKED_EXAMPLE,
    ("clients.md", "3 fail"): WORKED_EXAMPLE,
    ("clients.md", "five `names/*` scenarios"): WORKED_EXAMPLE,
    ("clients.md", "six `mcp/result_*` scenarios"): WORKED_EXAMPLE,
    ("clients.md", "three FAILs"): WORKED_EXAMPLE,
    ("clients.md", "8 defects"): CONSOLE,
    ("clients.md", "4 left"): CONSOLE,
    ("emulator-fidelity.md", "five adapters"): "fidelity_adapters",
    ("emulator.md", "64 MiB"): "request_log_bytes",
    ("emulator.md", "129 bundled scenarios"): Elsewhere(
        "tests/emulator/test__scenario_book.py::test_the_bundled_server_scenarios_and_their_one_collision"
    ),
    ("emulator.md", "76 bundled scenarios"): Elsewhere(
        "tests/emulator/test__scenario_book.py::test_the_bundled_server_scenarios_and_their_one_collision"
    ),
    ("emulator.md", "five wires"): Unchecked("not a figure", "the wires the emulator serves, listed in its table"),
    ("emulator.md", "76 scenarios"): Elsewhere(
        "tests/emulator/test__scenario_book.py::test_the_bundled_server_scenarios_and_their_one_collision"
    ),
    ("emulator.md", "760 cases"): Unchecked(
        "measured", "the full control run of certify_server, 23 s; tests/servers runs a part"
    ),
    ("emulator.md", "629 pass"): Unchecked("measured", "the full control run of certify_server"),
    ("emulator.md", "131 UNSUPPORTED"): Unchecked("measured", "the full control run of certify_server"),
    ("emulator.md", "0 fail"): Unchecked("measured", "the full control run of certify_server"),
    ("emulator.md", "23 s"): Unchecked("measured", "the full control run of certify_server on 2 cores"),
    ("emulator.md", "four wires"): Elsewhere(
        "tests/emulator/test__scenario_book.py::test_equal_first_requests_are_told_apart_later_or_named"
    ),
    ("emulator.md", "10 MB"): EMULATOR_RSS,
    ("emulator.md", "33 MB"): EMULATOR_RSS,
    ("emulator.md", "538 MB"): EMULATOR_RSS,
    ("emulator.md", "109 MB"): EMULATOR_RSS,
    ("emulator.md", "32 MB"): EMULATOR_RSS,
    ("emulator.md", "2 KB"): EMULATOR_RSS,
    ("emulator.md", "45 MB"): EMULATOR_RSS,
    ("emulator.md", "34 MB"): EMULATOR_RSS,
    ("emulator.md", "eight bundled adapters"): "bundled_adapters",
    ("emulator.md", "Two scenarios"): Unchecked("not a figure", "'two scenarios, or two turns, never share an id'"),
    ("emulator.md", "32 ms"): "ollama_line_ms",
    ("emulator.md", "default 2"): "fault_defaults",
    ("emulator.md", "default 1"): "fault_defaults",
    ("equivalences.md", "default 1"): Unchecked("provider", "OpenAI's temperature default, with its source in the row"),
    ("limits.md", "one passed"): Unchecked("not a figure", "'stops at the first one passed'"),
    ("limits.md", "37 KB"): "limits_peaks",
    ("limits.md", "83 KB"): "limits_peaks",
    ("limits.md", "default 300"): "limits_record_timeout",
    ("live.md", "five wires"): "live_tier",
    ("live.md", "ten scenarios"): "live_tier",
    ("live.md", "eleven scenarios"): "live_tier",
    ("live.md", "three wires"): "live_tier",
    ("live.md", "default 1"): "live_tier",
    ("live.md", "8-21 minutes"): LLAMA,
    ("live.md", "470 MB"): LLAMA,
    ("live.md", "12.7 MB"): LLAMA,
    ("live.md", "687 s"): LLAMA,
    ("live.md", "11.5 minutes"): LLAMA,
    ("live.md", "0.8–4.4 s"): LLAMA,
    ("live.md", "4.4 s"): LLAMA,
    ("live.md", "4 minutes"): LLAMA,
    ("live.md", "12.5 minutes"): LLAMA,
    ("live.md", "349 s"): LLAMA,
    ("live.md", "304 s"): LLAMA,
    ("live.md", "95 s"): LLAMA,
    ("live.md", "1 s"): LLAMA,
    ("mcp.md", "default 120"): "mcp_timeouts",
    ("mcp.md", "default 30 s"): "mcp_timeouts",
    ("mcp.md", "120 s"): "mcp_timeouts",
    ("mcp.md", "default 120 s"): "mcp_timeouts",
    ("mcp.md", "20 lines"): "mcp_timeouts",
    ("mcp.md", "2 s"): Unchecked("provider", "the MCP SDK's shutdown wait, as the doc says (not the suite's code)"),
    ("mcp.md", "5 lines"): "mcp_stdout_garbage",
    ("mcp.md", "0..10 s"): "mcp_progress",
    ("mcp.md", "0.25 s"): "mcp_progress",
    ("mcp.md", "3 s"): "mcp_progress",
    ("scenarios.md", "Default: 10"): "mcp_progress",
    ("mcp.md", "64 MiB"): "mcp_http_bounds",
    ("mcp.md", "1 MiB"): "mcp_http_bounds",
    ("mcp.md", "19 scenarios"): "mcp_conformance_suite",
    ("mcp.md", "60 s"): "mcp_conformance_suite",
    ("mcp.md", "0 failed"): Elsewhere(
        "tests/scripts/test_mcp_conformance_suite.py::test_the_bundled_server_passes_every_scenario_of_the_suite"
    ),
    ("mcp.md", "28 s"): Unchecked(
        "measured", "the official suite's run against the bundled server on the 2-core machine under load"
    ),
    ("mcp.md", "100,000 lines"): Unchecked("measured", "the flood measured at abfa85f, before the bound existed"),
    ("mcp.md", "86 MB"): Unchecked("measured", "the console output of that flood at abfa85f (85,900,000 bytes)"),
    ("recording.md", "default 120"): "exchange_timeout",
    ("recording.md", "6ms"): "counter_scrub",
    ("recording.md", "0ms"): "counter_scrub",
    ("recording.md", "120 s"): "live_bounds",
    ("recording.md", "300 s"): "live_bounds",
    ("recording.md", "default 300 s"): "live_bounds",
    ("recording.md", "64 MiB"): "live_bounds",
    ("recording.md", "4 MB"): Elsewhere(
        "tests/cli/test_record_live.py::test_a_gzip_bomb_fails_the_pair_at_max_body_and_memory_stays_near_the_bound"
    ),
    ("recording.md", "4 GiB"): Elsewhere(
        "tests/cli/test_record_live.py::test_a_gzip_bomb_fails_the_pair_at_max_body_and_memory_stays_near_the_bound"
    ),
    ("recording.md", "47 MB"): LIVE_RSS,
    ("recording.md", "112 MB"): LIVE_RSS,
    ("recording.md", "64 MB"): LIVE_RSS,
    ("recording.md", "63 MB"): LIVE_RSS,
    ("recording.md", "306 MB"): LIVE_RSS,
    ("recording.md", "256 MiB"): LIVE_RSS,
    ("recording.md", "2 GiB"): LIVE_RSS,
    ("live.md", "default 120 s"): "live_bounds",
    ("live.md", "default 300 s"): "live_bounds",
    ("scenarios.md", "Default 120"): "mcp_timeouts",
    ("scenarios.md", "default 2"): "fault_defaults",
    ("tutorial.md", "Two cases"): Elsewhere(
        "tests/docs/test_tutorial.py::test_every_command_of_the_tutorial_works_as_written (statuses {'pass': 2})"
    ),
    ("tutorial.md", "2 stale"): Elsewhere(
        "tests/docs/test_tutorial.py::test_every_command_of_the_tutorial_works_as_written (statuses {'stale': 2})"
    ),
    ("tutorial.md", "eight bundled adapters"): "bundled_adapters",
}
"""(doc, figure as ``FIGURE`` finds it) -> the check here that holds it, the test elsewhere, or why not."""


def figures() -> set[tuple[str, str]]:
    found = set()
    for doc in MY_DOCS:
        text = " ".join((DOCS / doc).read_text(encoding="utf-8").split())  # a figure broken over two lines
        found |= {(doc, m.group(0)) for m in FIGURE.finditer(text)}
    return found


def test_every_figure_of_the_docs_is_listed() -> None:
    found = figures()
    unlisted = sorted(found - set(FIGURES))
    assert not unlisted, f"figures of the docs nothing checks (add each to FIGURES, with its check): {unlisted}"
    gone = sorted(set(FIGURES) - found)
    assert not gone, f"FIGURES lists figures no doc has any more: {gone}"
    for listed in FIGURES.values():
        if isinstance(listed, str):
            assert listed in CHECKS, listed
        elif isinstance(listed, Elsewhere):
            path, _, test = listed.test.partition("::")
            assert re.search(rf"^def {test.split()[0]}\(", (REPO / path).read_text(encoding="utf-8"), re.M), listed


@pytest.mark.parametrize("check", sorted(CHECKS))
def test_each_figure_holds(check: str) -> None:
    assert any(listed == check for listed in FIGURES.values()), f"{check} checks no figure"
    CHECKS[check]()


def test_the_figure_finder_finds_figures_broken_over_lines(tmp_path: Path) -> None:
    found = {m.group(0) for m in FIGURE.finditer(" ".join("the run took 12.5\nminutes; 178 cases: 56 pass".split()))}
    assert found == {"12.5 minutes", "178 cases", "56 pass"}
