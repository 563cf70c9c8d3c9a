"""Run results built by hand for the reporting tests: every status, hostile strings, secrets.

``mixed_run`` (12 cases over 3 adapters x 3 scenarios):

    scenario              openai_chat        anthropic          gemini
                          ns      s          ns      s          ns           s
    basic/get-time        pass    pass       pass    error      pass         (not run)
    basic/parallel-calls  fail    pass       xfail   stale      unsupported  unsupported
    errors/rate-limit     pass    (not run)  -       -          -            -

The failing case's finding holds ``<script>`` and quotes; its exchange carries an API key in a
header, a key-shaped string in the body and the named secret ``SECRET``.
"""

from __future__ import annotations

from conformance.verdicts import AdapterInfo, CaseResult, CheckVerdict, Finding, RunResult, ScenarioInfo

SECRET = "hunter2-very-secret-token"
KEY = "sk-proj-abcdefghijklmnop1234"
HOSTILE = "<script>alert(\"x\")</script> & 'quoted'"
TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "adapter.py", line 12, in stream_from_wire\n'
    "    raise KeyError('index')\n"
    "KeyError: 'index' <b>not bold</b>\x1b[0m"
)

CASSETTE_GET_TIME = "cassettes/openai_chat/basic/get-time.yaml"
CASSETTE_PARALLEL = "cassettes/openai_chat/basic/parallel-calls.yaml"
CASSETTE_ANTHROPIC = "cassettes/anthropic/basic/get-time.yaml"


def _pass(adapter: str, scenario: str, mode: str, *, cassette: str | None = None) -> CaseResult:
    return CaseResult(
        adapter=adapter,
        scenario=scenario,
        mode=mode,  # type: ignore[arg-type]
        status="pass",
        checks=(
            CheckVerdict(check="translation.tool_names", status="pass"),
            CheckVerdict(check="translation.arguments", status="pass"),
        ),
        duration=0.25,
        cassette=cassette,
    )


def build_mixed_run() -> RunResult:
    failing = CaseResult(
        adapter="openai_chat",
        scenario="basic/parallel-calls",
        mode="non_stream",
        status="fail",
        checks=(
            CheckVerdict(check="translation.tool_names", status="pass"),
            CheckVerdict(
                check="translation.arguments",
                status="fail",
                findings=(
                    Finding(
                        check="translation.arguments",
                        message=f"arguments differ {HOSTILE}",
                        path="$.tool_calls[1].arguments.city",
                        expected=HOSTILE,
                        actual={"city": '"Paris"', "n": 1},
                        turn=0,
                    ),
                    Finding(
                        check="translation.arguments",
                        message="second call missing",
                        path="$.tool_calls[2]",
                        expected={"name": "getTime"},
                        actual=None,
                    ),
                ),
            ),
            CheckVerdict(
                check="roundtrip.request",
                status="fail",
                findings=(
                    Finding(check="roundtrip.request", message="id | pipe", path="$.id", expected="a|b", actual=2),
                ),
            ),
        ),
        duration=0.5,
        cassette=CASSETTE_PARALLEL,
        exchanges=(
            {
                "request": {
                    "method": "POST",
                    "url": f"http://127.0.0.1/v1/chat/completions?key={SECRET}",
                    "headers": {"authorization": f"Bearer {KEY}", "content-type": "application/json"},
                    "body": {"model": "gpt-4o", "messages": [{"role": "user", "content": f"my key is {KEY}"}]},
                },
                "status": 200,
                "response": '{"id": "chatcmpl-1", "choices": [{"message": {"content": "' + SECRET + '"}}]}',
            },
        ),
    )
    erroring = CaseResult(
        adapter="anthropic",
        scenario="basic/get-time",
        mode="stream",
        status="error",
        message="adapter raised KeyError: 'index'",
        traceback=TRACEBACK,
        duration=1.0,
        cassette=CASSETTE_ANTHROPIC,
    )
    xfail = CaseResult(
        adapter="anthropic",
        scenario="basic/parallel-calls",
        mode="non_stream",
        status="xfail",
        checks=(
            CheckVerdict(check="translation.tool_names", status="pass"),
            CheckVerdict(
                check="streaming.lifecycle",
                status="xfail",
                message="known gap: tool_use blocks interleave",
                findings=(Finding(check="streaming.lifecycle", message="start after chunk", path="turn 0"),),
            ),
        ),
    )
    stale = CaseResult(
        adapter="anthropic",
        scenario="basic/parallel-calls",
        mode="stream",
        status="stale",
        checks=(CheckVerdict(check="streaming.lifecycle", status="stale", message="declared gap now passes"),),
    )
    unsupported = [
        CaseResult(
            adapter="gemini",
            scenario="basic/parallel-calls",
            mode=mode,
            status="unsupported",
            message="requires parallel_tool_calls, which gemini does not declare",
        )
        for mode in ("non_stream", "stream")
    ]
    cases = (
        _pass("openai_chat", "basic/get-time", "non_stream", cassette=CASSETTE_GET_TIME),
        _pass("openai_chat", "basic/get-time", "stream", cassette=CASSETTE_GET_TIME),
        failing,
        _pass("openai_chat", "basic/parallel-calls", "stream", cassette=CASSETTE_PARALLEL),
        _pass("openai_chat", "errors/rate-limit", "non_stream"),
        _pass("anthropic", "basic/get-time", "non_stream", cassette=CASSETTE_ANTHROPIC),
        erroring,
        xfail,
        stale,
        _pass("gemini", "basic/get-time", "non_stream"),
        *unsupported,
    )
    return RunResult(
        suite_version="0.1.0",
        adapters=(
            AdapterInfo(
                name="openai_chat", wire_format="openai-chat", capabilities=("streaming", "parallel_tool_calls")
            ),
            AdapterInfo(
                name="anthropic",
                wire_format="anthropic-messages",
                capabilities=("streaming", "parallel_tool_calls"),
                known_gaps={"streaming.lifecycle@basic/parallel-calls": "tool_use blocks interleave"},
            ),
            AdapterInfo(name="gemini", wire_format="gemini", capabilities=("streaming",)),
        ),
        scenarios=(
            ScenarioInfo(
                id="basic/get-time",
                behavior="A single tool call with one numeric argument.",
                source="https://platform.openai.com/docs/guides/function-calling",
            ),
            ScenarioInfo(
                id="basic/parallel-calls",
                behavior=f"Two calls in one turn {HOSTILE}",
                source="https://docs.anthropic.com/en/docs/build-with-claude/tool-use",
                requires=("parallel_tool_calls",),
            ),
            ScenarioInfo(id="errors/rate-limit", behavior="A 429 maps to rate_limit.", source="RFC 6585 §4"),
        ),
        cases=cases,
        provenance={
            CASSETTE_GET_TIME: {
                "suite": "conformance 0.1.0",
                "adapter": "openai_chat",
                "mode": "emulator",
                "base_url": "http://127.0.0.1",
                "scenario": "basic/get-time",
                "clients": {"python": "3.11.7", "httpx": "0.28.1"},
            },
            CASSETTE_PARALLEL: {"adapter": "openai_chat", "mode": "live", "note": HOSTILE, "token": KEY},
        },
    )


def empty_run() -> RunResult:
    return RunResult(suite_version="0.1.0", adapters=(), scenarios=(), cases=())


def large_run(scenarios: int = 125) -> RunResult:
    """``scenarios`` x 8 adapters x 2 modes (2,000 cases by default), shaped like a real run with one buggy
    adapter: every case has 14 checks; ``buggy``'s streamed cases fail with two findings and two wire
    exchanges of a few KB each, and one scenario in ten is unsupported by ``small``."""
    adapters = ("openai_chat", "openai_responses", "anthropic", "gemini", "ollama", "qwen", "hermes", "buggy")
    checks = tuple(f"family{i % 4}.check_{i}" for i in range(14))
    body = {"model": "m", "messages": [{"role": "user", "content": "word " * 400}], "tools": [{"name": "getTime"}]}
    cases = []
    for n in range(scenarios):
        scenario = f"group{n % 9}/scenario_with_a_long_name_{n}"
        for adapter in adapters:
            for mode in ("non_stream", "stream"):
                if adapter == "ollama" and n % 10 == 0:
                    cases.append(
                        CaseResult(
                            adapter=adapter,
                            scenario=scenario,
                            mode=mode,  # type: ignore[arg-type]
                            status="unsupported",
                            message="requires parallel_tool_calls, which ollama does not declare",
                        )
                    )
                    continue
                verdicts = [CheckVerdict(check=c, status="pass") for c in checks]
                exchanges: tuple[dict[str, object], ...] = ()
                status = "pass"
                if adapter == "buggy" and mode == "stream":
                    status = "fail"
                    findings = (
                        Finding(
                            check=checks[3],
                            message="the call is missing",
                            path="$.tool_calls",
                            expected=["getTime"],
                            actual=[],
                        ),
                        Finding(
                            check=checks[3], message="text differs", path="$.text", expected="It is 12:00.", actual=""
                        ),
                    )
                    verdicts[3] = CheckVerdict(check=checks[3], status="fail", findings=findings)
                    exchanges = tuple(
                        {
                            "method": "POST",
                            "url": "http://127.0.0.1/v1/chat/completions",
                            "request": body,
                            "status": 200,
                            "stream": True,
                            "response": "data: {}\n\n" * 60,
                        }
                        for _ in range(2)
                    )
                cases.append(
                    CaseResult(
                        adapter=adapter,
                        scenario=scenario,
                        mode=mode,  # type: ignore[arg-type]
                        status=status,  # type: ignore[arg-type]
                        checks=tuple(verdicts),
                        duration=0.01,
                        cassette=f"cassettes/{adapter}/{scenario}.yaml",
                        exchanges=exchanges,
                    )
                )
    return RunResult(
        suite_version="0.1.0",
        adapters=tuple(AdapterInfo(name=a, wire_format=a) for a in adapters),
        scenarios=tuple(
            ScenarioInfo(id=f"group{n % 9}/scenario_with_a_long_name_{n}", behavior="A behaviour " * 12, source="s")
            for n in range(scenarios)
        ),
        cases=tuple(cases),
    )


FINGERPRINT = "f" * 8 + "0123456789abcdef" * 3 + "e" * 8
"""A suite fingerprint (64 hex digits) for the reports of ``suited_run``."""


def suited_run() -> RunResult:
    """``mixed_run`` as a command makes it: with the suite that judged it, what the command line
    selected (shard 2/3 of a certification on one model) and the model each adapter asked for."""
    from dataclasses import replace

    from conformance.verdicts import Selection, SuiteInfo

    run = build_mixed_run()
    return replace(
        run,
        adapters=tuple(replace(a, model=f"{a.name}-model-1") for a in run.adapters),
        suite=SuiteInfo(fingerprint=FINGERPRINT, version="0.1.0", check_version=1, scenarios=3, equivalences="ab" * 32),
        selection=Selection(
            command="certify", scenarios=("basic/*",), checks=("translation",), model="m-1", shard="2/3"
        ),
    )


DEVIATION_TEXT = "the model answered text instead of calling get_weather: 'I cannot look up the weather.'"
DEVIATION_TOOL = "the model called get_time instead of get_weather"


def deviated_run() -> RunResult:
    """A live server's run (columns ``name/wire``) in which the model did not always do what the scenario
    asks (``deviated``: conformance.verdicts):

        scenario           llama/openai_chat          llama/anthropic
                           ns               s         ns      s
        basic/get-weather  deviated (text)  pass      pass    fail (arguments not JSON; deviated: another tool)

    The deviated cases are shaped as ``conformance.servers.server`` makes them: the ``server.model`` check
    deviated with ``model deviated: ...`` (_model_verdict), the case's message the same (_case_message).
    The deviated checks carry a finding of kind ``defect`` on purpose: a deviation is never a defect,
    whatever its findings say. The failing case's malformed answer is the server's defect."""
    shape = CheckVerdict(check="server.shape", status="pass")
    text = CaseResult(
        adapter="llama/openai_chat",
        scenario="basic/get-weather",
        mode="non_stream",
        status="deviated",
        message=f"model deviated: {DEVIATION_TEXT}",
        checks=(
            shape,
            CheckVerdict(
                check="server.model",
                status="deviated",
                message=f"model deviated: {DEVIATION_TEXT}",
                findings=(
                    Finding(
                        check="server.model",
                        message="no call",
                        path="$.choices[0].message.tool_calls",
                        expected=[{"name": "get_weather"}],
                        actual=None,
                    ),
                ),
            ),
        ),
        duration=0.5,
    )
    malformed = CaseResult(
        adapter="llama/anthropic",
        scenario="basic/get-weather",
        mode="stream",
        status="fail",
        checks=(
            CheckVerdict(
                check="server.arguments",
                status="fail",
                findings=(
                    Finding(
                        check="server.arguments",
                        message="the tool_use input is not a JSON object",
                        path="stream[3].data.delta.partial_json",
                        expected="object",
                        actual='{"city": ',
                        turn=0,
                    ),
                ),
            ),
            CheckVerdict(  # no message: its findings say what the model did
                check="server.model",
                status="deviated",
                findings=(Finding(check="server.model", message=DEVIATION_TOOL, path="$.content[0].name", turn=0),),
            ),
        ),
        duration=0.5,
    )

    def passing(adapter: str, mode: str) -> CaseResult:
        return CaseResult(
            adapter=adapter,
            scenario="basic/get-weather",
            mode=mode,  # type: ignore[arg-type]
            status="pass",
            checks=(shape, CheckVerdict(check="server.model", status="pass")),
            duration=0.5,
        )

    return RunResult(
        suite_version="0.1.0",
        adapters=(
            AdapterInfo(name="llama/openai_chat", wire_format="openai-chat", model="qwen2.5-coder-0.5b"),
            AdapterInfo(name="llama/anthropic", wire_format="anthropic-messages", model="qwen2.5-coder-0.5b"),
        ),
        scenarios=(ScenarioInfo(id="basic/get-weather", behavior="One call with a city.", source="s"),),
        cases=(
            text,
            passing("llama/openai_chat", "stream"),
            passing("llama/anthropic", "non_stream"),
            malformed,
        ),
    )


def deviated_only_run() -> RunResult:
    """``deviated_run`` without its failing case: every case passes or deviated."""
    from dataclasses import replace

    run = deviated_run()
    return replace(run, cases=tuple(c for c in run.cases if c.status != "fail"))
