"""The official-SDK drivers (``examples/clients/*_driver.py``) certified over every bundled scenario.

Each driver keeps the Client contract and imports nothing of ``conformance.adapters`` (a driver
must judge the library's translation, never ours); ``test_driver_rules.py`` holds them to doing what
a user does (no unwrapped causes, no retries, exceptions mapped by the SDK's classes). The anthropic
driver exports two clients, one per way the SDK documents to stream (``CLIENT``: the
``messages.stream`` helper; ``CLIENT_RAW``: ``create(..., stream=True)``).

Certified with ``conformance.clients.harness`` (the emulator playing each scenario's cassette), a
driver's run is its SDK's baseline: no case may ERROR (an ERROR is a driver bug), and every failing
check must be one of the SDK's findings below, each explained from the SDK's own source; a finding
that no longer fails is stale (the SDK, the driver or the suite changed: look, then update the
table). The findings stay FAILs in the reports (they are not the drivers' ``known_gaps``, which are
only for behaviour a library documents).

An SDK that is not installed skips its driver.
"""

from __future__ import annotations

import ast
import fnmatch
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conformance.checks.duties import REMEDIES
from conformance.clients.contract import client_problems
from conformance.clients.harness import CertifyOptions, certify
from conformance.scenarios.loader import load_scenarios
from conformance.verdicts import RunResult

pytestmark = pytest.mark.filterwarnings(
    # anthropic 2.14 warns on the suite's default model (claude-sonnet-4-5: end of life 2026-11-30)
    "ignore:The model .* is deprecated:DeprecationWarning"
)

ROOT = Path(__file__).resolve().parents[2]
CLIENTS = ROOT / "examples" / "clients"
DRIVERS: dict[str, tuple[str, str, str]] = {
    "openai": ("openai", "CLIENT", "openai"),
    "anthropic": ("anthropic", "CLIENT", "anthropic"),
    "anthropic_raw": ("anthropic", "CLIENT_RAW", "anthropic"),
    "google_genai": ("google_genai", "CLIENT", "google.genai"),
    "ollama": ("ollama", "CLIENT", "ollama"),
}
"""Client -> (driver file stem, the object the file exports, the SDK module it drives)."""


@dataclass(frozen=True)
class Finding:
    wire: str
    check: str
    scenarios: str
    """An id glob."""
    why: str


def _f(wire: str, check: str, scenarios: str, why: str) -> Finding:
    return Finding(wire, check, scenarios, why)


# Findings every raising SDK shares: a library that raises while streaming is read as a stream that
# ended in that error (error, finish: error), so what remains is the error's kind and the silent end.
_RAISES_MID_STREAM = "the SDK raises an untyped or differently kinded error instead of a typed stream error"
_SILENT_END = "the SDK ends the iteration silently when the body closes without the terminator"


_NAME_CHECKS = ("translation.tool_names", "translation.request_shape")


def _broken_streams(wire: str, *, typed_disconnect: bool) -> list[Finding]:
    out = [
        _f(wire, "streaming.events", "errors/stream_*", _RAISES_MID_STREAM + " / " + _SILENT_END),
        _f(wire, "streaming.lifecycle", "errors/*", _RAISES_MID_STREAM + " / " + _SILENT_END),
        _f(wire, "recovery.broken_stream", "errors/stream_*", _RAISES_MID_STREAM + " / " + _SILENT_END),
        _f(wire, "recovery.provider_error", "errors/stream_no_terminator", _SILENT_END),
        # (its kind, unknown, is what docs/equivalences.md accepts for a 200 body no library can read)
        _f(wire, "client.typed_errors", "errors/malformed_body", "a body that is not JSON raises json.JSONDecodeError"),
    ]
    if not typed_disconnect:
        why = "a body cut mid-stream raises the transport's RemoteProtocolError, not an SDK exception"
        out += [
            _f(wire, "recovery.provider_error", "errors/stream_disconnect*", why),
            _f(wire, "client.typed_errors", "errors/stream_disconnect*", why),
        ]
    return out


_UNTERMINATED = ("roundtrip.finish_reason", "streaming.events", "streaming.lifecycle")
"""What a last event without its blank line changes: the SDK's SSE decoder drops it, as the SSE standard says."""

LEFT_TO_THE_CALLER: dict[str, tuple[tuple[str, str, str], ...]] = {
    "openai": (
        *((w, c, "names/*") for w in ("openai_chat", "openai_responses") for c in _NAME_CHECKS),
        *(("openai_responses", c, "streaming/unterminated_last_event") for c in _UNTERMINATED),
        # the raw stream ends at [DONE] as at any end: no finish reason to read, the calls never end
        *(
            ("openai_chat", c, "streaming/done_without_finish_reason")
            for c in ("roundtrip.calls", "roundtrip.finish_reason", "streaming.lifecycle")
        ),
    ),
    "anthropic": (
        *(("anthropic", c, "names/*") for c in _NAME_CHECKS),
        ("anthropic", "translation.request_shape", "schemas/empty_schema"),
        *(("anthropic", c, "streaming/unterminated_last_event") for c in _UNTERMINATED),
        ("anthropic", "recovery.arguments_error", "arguments/truncated_by_length"),  # a call cut by max_tokens
    ),
    "anthropic_raw": (
        *(("anthropic", c, "names/*") for c in _NAME_CHECKS),
        ("anthropic", "translation.request_shape", "schemas/empty_schema"),
        *(("anthropic", c, "streaming/unterminated_last_event") for c in _UNTERMINATED),
    ),
    "google_genai": tuple(("gemini", c, "names/*") for c in _NAME_CHECKS),
    "ollama": (
        ("ollama", "translation.tool_names", "names/*"),
        ("ollama", "recovery.provider_error", "streaming/empty_args_string"),  # a call without arguments
    ),
}
"""What each SDK leaves to its caller (it declares transport only: docs/clients.md, "Duties"): the tool
names it sends as given (and Anthropic's input schema without a type), what a provider sends outside the
wire's rules (the scenarios tagged deviation) and a call Anthropic cut at the output limit: (wire, check,
scenario glob)."""


def _result_left(wire: str, scenario: str, verdict: Any) -> bool:
    """A tool result carrying more than text, as the driver (the SDK's caller) wrote it: duty ``tool_results``,
    left with what the wire's tool-result slot takes, whichever check saw it (docs/clients.md, "Duties")."""
    results = fnmatch.fnmatchcase(scenario, "mcp/*") or fnmatch.fnmatchcase(scenario, "tool_results/*")
    return results and all(f.remedy == REMEDIES[("tool_results", wire)] for f in verdict.findings)


_HELPER_RAISES = (
    "the messages.stream helper parses each input_json delta with jiter and raises a builtin ValueError ('Unable"
    " to parse tool parameter JSON from model', lib/streaming/_messages.py:512) on argument text that is not JSON:"
    " untyped, and the stream is lost with it"
)
_ANTHROPIC_TIMEOUT = (
    "anthropic 2.14.0 _base_client.py:562-564 formats options.timeout, a NotGiven when the call sets none (a"
    " client with its own timeout, messages.py:1236), into `x-stainless-timeout: NOT_GIVEN`; line 554 had"
    " resolved it to the client's timeout"
)
_ANTHROPIC = [
    *_broken_streams("anthropic", typed_disconnect=False),
    _f("anthropic", "client.request_headers", "*", _ANTHROPIC_TIMEOUT),
]

FINDINGS: dict[str, list[Finding]] = {
    "openai": [
        *(f for wire in ("openai_chat", "openai_responses") for f in _broken_streams(wire, typed_disconnect=True)),
    ],
    "anthropic": [
        *_ANTHROPIC,
        *(
            _f("anthropic", check, "arguments/malformed_json", _HELPER_RAISES)
            for check in ("client.typed_errors", "recovery.provider_error", "recovery.arguments_error")
        ),
    ],
    "anthropic_raw": _ANTHROPIC,
    "google_genai": [
        # (a stream ended without a finishReason returns normally by design: XFAIL in the driver; a body cut
        # mid-stream raises httpx2's RemoteProtocolError, the class its README tells users to catch)
        _f(
            "gemini",
            "client.typed_errors",
            "errors/malformed_body",
            "a body that is not JSON raises json.JSONDecodeError",
        ),
        _f(
            "gemini",
            "translation.tool_definitions",
            "*",
            "Schema.from_json_schema spells types as the Type enum (OBJECT, STRING) and bounds as floats; "
            "the check compares case- and type-sensitively",
        ),
        *(
            _f(
                "gemini",
                check,
                "schemas/*",
                "_mcp_utils._filter_to_supported_schema recurses into a boolean "
                "additionalProperties: AttributeError before any request",
            )
            for check in ("client.one_request", "client.typed_errors")
        ),
        _f(
            "gemini",
            "client.recorded_request",
            "mcp/render_chart",
            "_mcp_utils._filter_to_supported_schema keeps only the snake_case field names of types.JSONSchema"
            " (max_items): the JSON Schema keyword maxItems, as MCP servers spell it, is dropped",
        ),
    ],
    "ollama": [
        *_broken_streams("ollama", typed_disconnect=False),
        _f("ollama", "recovery.provider_error", "errors/rate_limit*", "ResponseError keeps no headers: no retry-after"),
        _f(
            "ollama",
            "translation.tool_definitions",
            "arguments/nested_objects_arrays",
            "the SDK's Tool.Function.Parameters.Property model drops a nested object's properties",
        ),
        _f(
            "ollama",
            "client.recorded_request",
            "arguments/nested_objects_arrays",
            "the SDK's Tool.Function.Parameters.Property model drops a nested object's properties",
        ),
        _f(
            "ollama",
            "client.recorded_request",
            "*",
            "ollama/_types.py: Message.ToolCall has no id and Message no tool_call_id, so the call ids Ollama"
            " sends (optional, since v0.12.10) are dropped and never sent back with the calls and results",
        ),
        _f(
            "ollama",
            "client.typed_errors",
            "streaming/empty_args_string",
            "a tool call without arguments (only a server outside Ollama's API sends one) fails the SDK's pydantic"
            " ChatResponse: ValidationError instead of a response",
        ),
    ],
}


def _load(name: str) -> Any:
    from conformance.pipeline.targets import load_client

    stem, obj, _ = DRIVERS[name]
    return load_client(f"{CLIENTS / (stem + '_driver.py')}:{obj}")


_RUNS: dict[str, RunResult] = {}


def _run(name: str) -> RunResult:
    if name not in _RUNS:
        scenarios = load_scenarios([ROOT / "scenarios"], root=ROOT / "scenarios").scenarios
        options = CertifyOptions(cassette_dir=ROOT / "cassettes", timeout=20.0)
        _RUNS[name] = certify(scenarios, _load(name), options)
    return _RUNS[name]


@pytest.fixture(params=sorted(DRIVERS))
def driver(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    pytest.importorskip(DRIVERS[name][2])
    return name


def test_driver_keeps_the_contract(driver: str) -> None:
    assert client_problems(_load(driver)) == []


def test_driver_imports_no_reference_adapter(driver: str) -> None:
    for path in (CLIENTS / f"{DRIVERS[driver][0]}_driver.py", CLIENTS / "_convert.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            for name in names:
                assert not name.startswith("conformance.") or name in (
                    "conformance.model",
                    "conformance.clients.contract",
                ), f"{path.name} imports {name}"


def _covered(name: str, wire: str, check: str, scenario: str) -> Finding | None:
    for finding in FINDINGS[name]:
        if finding.wire == wire and finding.check == check and fnmatch.fnmatchcase(scenario, finding.scenarios):
            return finding
    return None


def test_baseline_every_failure_is_a_known_sdk_finding(driver: str) -> None:
    run = _run(driver)
    errors = [f"{c.adapter} {c.scenario} [{c.mode}]: {c.message}" for c in run.cases if c.status in ("error", "stale")]
    assert not errors, "cases that ERROR are driver bugs:\n" + "\n".join(errors)
    unexplained: list[str] = []
    used: set[Finding] = set()
    for case in run.cases:
        wire = case.adapter.rpartition("/")[2]
        for verdict in case.checks:
            if verdict.status != "fail":
                continue
            finding = _covered(driver, wire, verdict.check, case.scenario)
            if finding is None:
                first = verdict.findings[0] if verdict.findings else None
                detail = f"{first.path}: {first.message}" if first is not None else ""
                unexplained.append(f"{wire} {case.scenario} [{case.mode}] {verdict.check}: {detail}")
            else:
                used.add(finding)
    assert not unexplained, "failures no finding explains (a driver bug, or a new SDK finding):\n" + "\n".join(
        unexplained
    )
    stale = [f"{f.wire} {f.check} @ {f.scenarios}" for f in FINDINGS[driver] if f not in used]
    assert not stale, "findings that no longer fail (update the table):\n" + "\n".join(stale)


def test_baseline_passes_the_scenarios_the_sdk_handles(driver: str) -> None:
    """The bulk of the suite passes: a driver whose conversion broke fails far more than its findings."""
    run = _run(driver)
    # anthropic 2.14: every request's headers fail (_ANTHROPIC_TIMEOUT): the floor counts its other checks
    everywhere = {"client.request_headers"} if DRIVERS[driver][0] == "anthropic" else set()
    passed = sum(
        1
        for c in run.cases
        if c.status in ("pass", "left")
        or (c.status == "fail" and {v.check for v in c.checks if v.status == "fail"} <= everywhere)
    )
    judged = sum(1 for c in run.cases if c.status in ("pass", "left", "fail"))
    # ollama: every case whose history holds a call fails client.recorded_request (the SDK drops ids), and the
    # MCP scenarios of issue 31 all replay a call: 82 of 184 judged cases pass (0.45 before them)
    floor = {"openai": 0.8, "anthropic": 0.8, "anthropic_raw": 0.8, "google_genai": 0.1, "ollama": 0.4}[driver]
    assert judged and passed / judged >= floor, f"{passed}/{judged} cases pass"


def test_the_official_sdks_send_the_headers_their_wire_requires_but_anthropic_2_14(driver: str) -> None:
    """``client.request_headers`` on one scenario: openai, google-genai and ollama send what their wires
    require; anthropic 2.14.0 sends a placeholder timeout (``FINDINGS``)."""
    scenarios = [
        s for s in load_scenarios([ROOT / "scenarios"], root=ROOT / "scenarios").scenarios if s.id == "basic/get_time"
    ]
    options = CertifyOptions(cassette_dir=ROOT / "cassettes", timeout=20.0, isolate=False)
    found = {
        (case.adapter, case.mode): verdict
        for case in certify(scenarios, _load(driver), options).cases
        for verdict in case.checks
        if verdict.check == "client.request_headers"
    }
    assert len(found) == 2 * len(_load(driver).wires)  # every wire, both modes
    if DRIVERS[driver][0] != "anthropic":
        assert {v.status for v in found.values()} == {"pass"}, [v.findings for v in found.values()]
        return
    for verdict in found.values():
        assert verdict.status == "fail"
        assert {(f.path, f.actual) for f in verdict.findings} == {('headers["x-stainless-timeout"]', "NOT_GIVEN")}


def test_a_driver_that_drops_a_tool_description_fails_client_recorded_request_with_its_path() -> None:
    """The official openai SDK under a deliberately wrong driver: the request it sends no longer
    means what was recorded, and the finding names the field in the read-back request."""
    pytest.importorskip("openai")
    from dataclasses import replace

    from conformance.clients.contract import Call, SimpleClient

    real = _load("openai")

    def complete(call: Call) -> Any:
        return real.complete(replace(call, tools=tuple(replace(t, description=None) for t in call.tools)))

    wrong = SimpleClient(
        name="openai-drops-descriptions",
        wires={"openai_chat": real.wires["openai_chat"]},
        complete=complete,
        error_info=real.error_info,
        request_differences=real.request_differences,
    )
    scenarios = [
        s for s in load_scenarios([ROOT / "scenarios"], root=ROOT / "scenarios").scenarios if s.id == "basic/get_time"
    ]
    options = CertifyOptions(cassette_dir=ROOT / "cassettes", timeout=20.0, modes=("non_stream",), isolate=False)
    [case] = certify(scenarios, wrong, options).cases
    [found] = [v for v in case.checks if v.check == "client.recorded_request"]
    assert found.status == "fail"
    assert [(f.path, f.actual, f.turn) for f in found.findings if f.turn == 0] == [("$.tools[0].description", None, 0)]
    assert found.findings[0].expected == scenarios[0].tools[0].description


def test_the_worked_example_of_the_docs_is_what_the_minimal_driver_does() -> None:
    """docs/clients.md, "A worked example", shows a run of ``minimal_openai_driver.py``: its summary line
    and the scenarios its list of FAILs names are this run's."""
    pytest.importorskip("openai")
    from conformance.pipeline.targets import load_client

    doc = (ROOT / "docs" / "clients.md").read_text(encoding="utf-8")
    section = doc[doc.index("## A worked example") : doc.index("## A library in its own virtualenv")]
    [figures] = re.findall(
        r"openai-sdk-chat: (\d+) cases: (\d+) pass, (\d+) unsupported, (\d+) left, (\d+) fail", section
    )
    named = set(re.findall(r"^- `((?:names|tool_results|recovery|mcp|errors|wire_specific)/\w+)` fails", section, re.M))
    scenarios = load_scenarios([ROOT / "scenarios"], root=ROOT / "scenarios").scenarios
    options = CertifyOptions(cassette_dir=ROOT / "cassettes", timeout=20.0)
    run = certify(scenarios, load_client(f"{CLIENTS / 'minimal_openai_driver.py'}:CLIENT"), options)
    statuses = [c.status for c in run.cases]
    counted = (
        len(statuses),
        *(statuses.count(s) for s in ("pass", "unsupported", "left", "fail")),
    )
    assert tuple(int(n) for n in figures) == counted
    assert named == {c.scenario for c in run.cases if c.status == "fail"}


def test_what_an_sdk_leaves_to_its_caller_is_left_never_failed_and_says_what_to_do(driver: str) -> None:
    """The official SDKs transport: tool names (and Anthropic's input schema) go out as the caller gave
    them, so the checks of those duties are LEFT with the caller's remedy, and nothing else is."""
    run = _run(driver)
    left = {
        (case.adapter.rpartition("/")[2], v.check, case.scenario): v
        for case in run.cases
        for v in case.checks
        if v.status == "left"
    }
    expected = LEFT_TO_THE_CALLER[driver]
    assert left, "nothing left to the caller"
    for (wire, check, scenario), verdict in left.items():
        if _result_left(wire, scenario, verdict):
            continue
        assert any((wire, check) == (w, c) and fnmatch.fnmatchcase(scenario, glob) for w, c, glob in expected), (
            f"{wire} {check} {scenario} left to the caller"
        )
        assert all(f.kind == "left" and f.remedy for f in verdict.findings)
    for w, c, glob in expected:
        assert any((wire, check) == (w, c) and fnmatch.fnmatchcase(s, glob) for wire, check, s in left), (w, c, glob)
