"""Tests for ``conformance.scenarios.loader``: every broken file under ``tests/data/broken_scenarios`` is
reported at the right line, column and JSON pointer; a bad file never stops the others; the
canonical getTime scenario loads into the values docs/scenarios.md describes; ``conformance
validate`` exits 0/1/2.

Expected positions are read from the broken files themselves (the line holding a marker text and
the column where the offending node starts), never copied from the loader's output."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
import yaml

from conformance.adapters.base import PROMPT_FORMATS, WIRE_FORMATS
from conformance.cli import main
from conformance.cli.validate import validate_command
from conformance.errors import ScenarioError, UsageError
from conformance.model import Text, Tool
from conformance.scenarios.loader import (
    ENV_VAR,
    LoadResult,
    ScenarioProblem,
    default_scenarios_dir,
    load_scenario,
    load_scenarios,
    scenario_files,
)
from conformance.scenarios.values import (
    Expectation,
    ExpectedCall,
    Reply,
    Scenario,
    ScriptedCall,
    TextExpectation,
    ToolResultSpec,
    Turn,
)

DATA = Path(__file__).resolve().parents[1] / "data"
BROKEN = DATA / "broken_scenarios"
VALID = DATA / "scenarios"
GET_TIME = VALID / "basic" / "get_time.yaml"
REPO_ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Case:
    """A broken file, the pointer of one of its problems, and where in the file that problem is."""

    file: str
    pointer: str
    line_with: str | None
    """Text of the line the problem is on (its ``nth`` occurrence); None: line 1, column 1."""
    at: str | None
    """Where the node starts within that line (default: where ``line_with`` starts)."""
    phrase: str
    """Part of the message."""
    nth: int = 1
    expected: str = ""
    hint: str = ""

    def position(self) -> tuple[int, int]:
        if self.line_with is None:
            return 1, 1
        lines = (BROKEN / self.file).read_text(encoding="utf-8").splitlines()
        hits = [i for i, line in enumerate(lines) if self.line_with in line]
        index = hits[self.nth - 1]
        return index + 1, lines[index].index(self.at or self.line_with) + 1


CASES = [
    Case("wrong_type.yaml", "/max_tokens", "max_tokens:", "many", "expected an integer, got a string"),
    Case(
        "unknown_key_typo.yaml",
        "/turns/0/reply/tool_calls/0/argumnets",
        "argumnets:",
        None,
        "unknown key 'argumnets'",
        expected="arguments, arguments_raw, name",
        hint="did you mean 'arguments'?",
    ),
    # a missing key is reported at the mapping that lacks it: the top-level mapping starts at its first key
    Case("missing_turns.yaml", "", "schema_version:", None, "missing required key 'turns'"),
    Case("empty_turns.yaml", "/turns", "turns:", "[]", "the list is empty"),
    Case(
        "bad_yaml_syntax.yaml",
        "",
        "behavior:",
        ": decodes",
        "mapping values are not allowed here",
        hint="quote a value that contains ': '",
    ),
    Case("duplicate_keys.yaml", "/source", "source:", None, "duplicate key 'source' (first at line 3)", nth=2),
    Case("dup_id.yml", "", None, None, "duplicate scenario id 'dup_id'"),
    Case(
        "tool_results_out_of_range.yaml",
        "/turns/0/tool_results/0/call",
        "call: 2",
        "2",
        "answers call 2, but the reply has 1 tool call(s)",
    ),
    Case(
        "tool_choice_unknown_tool.yaml",
        "/tool_choice/name",
        "tool_choice:",
        "getTme",
        "tool_choice names 'getTme', which is not in tools",
        hint="did you mean 'getTime'?",
    ),
    Case(
        "unknown_capability.yaml",
        "/requires/0",
        "requires:",
        "parallel_tools",
        "unknown capability 'parallel_tools'",
        hint="did you mean 'parallel_tool_calls'?",
    ),
    Case(
        "unknown_adapter.yaml",
        "/wire/open_ai_chat",
        "open_ai_chat:",
        None,
        "unknown wire or prompt format 'open_ai_chat'",
        expected=", ".join(sorted((*WIRE_FORMATS, *PROMPT_FORMATS))),
        hint="did you mean 'openai_chat'?",
    ),
    # wires: limits a scenario to the wire formats where its provider shape exists
    Case(
        "unknown_wire_in_wires.yaml",
        "/wires/1",
        "wires:",
        "open_ai_chat",
        "unknown wire format 'open_ai_chat'",
        expected=", ".join(WIRE_FORMATS),
        hint="did you mean 'openai_chat'?",
    ),
    Case(
        "prompt_format_in_wires.yaml",
        "/wires/0",
        "wires:",
        "qwen",
        "unknown wire format 'qwen'",
        hint="qwen is a prompt format, spoken over openai_chat: list openai_chat",
    ),
    Case(
        "wire_expectation_outside_wires.yaml",
        "/wire/anthropic",
        "anthropic:",
        None,
        "wire expectations for 'anthropic', a wire the scenario does not run on (wires: openai_responses)",
        hint="add anthropic to wires, or remove its expectations",
    ),
    Case(
        "both_arguments.yaml",
        "/turns/0/reply/tool_calls/0",
        "- name: getTime",
        "name",
        "exactly one of arguments or arguments_raw",
        nth=2,
    ),
    Case(
        "bad_json_path.yaml",
        "/wire/openai_chat/0/present/1",
        "present:",
        '"tools[0].function"',
        "JSON path 'tools[0].function' must start with '$'",
    ),
    Case(
        "unknown_fault_kind.yaml",
        "/turns/0/reply/fault/kind",
        "fault:",
        "timeout",
        "'timeout' is not allowed",
        expected="rate_limit, server_error, unavailable, overloaded",
    ),
    Case("schema_version_2.yaml", "/schema_version", "schema_version:", "2", "schema_version 2 is not supported"),
    Case(
        "stream_fault_without_stream_mode.yaml",
        "/turns/0/reply/fault",
        "kind: disconnect",
        None,
        "the disconnect fault breaks a stream, so the scenario runs in stream mode only",
        expected="modes: [stream]",
    ),
    Case(
        "fault_without_expect_error.yaml",
        "/turns/0/reply/fault",
        "fault:",
        "{kind",
        "a rate_limit fault needs expect.error",
        expected="kind: rate_limit",
    ),
    Case("tab_indentation.yaml", "", "\t- name", "\t", "found character '\\t'", hint="tab"),
    Case("top_level_list.yaml", "", "- schema_version", None, "the file holds a list, not a mapping"),
    Case("empty_file.yaml", "", None, None, "the file holds no YAML document"),
    Case("non_string_key.yaml", "/tools/0/annotations", "200: ok", None, "mapping key '200' is not a string"),
    Case(
        "python_tag.yaml",
        "/turns/0/user",
        "- user:",
        "!!python",
        "YAML tag !!python/object/apply:os.system is not allowed",
    ),
    Case(
        "tool_results_without_calls.yaml",
        "/turns/0/tool_results",
        "- content:",
        "-",
        "tool_results on a turn whose reply makes no tool calls",
    ),
    Case(
        "missing_tool_results.yaml",
        "/turns/0/reply",
        "tool_calls:",
        None,
        "turn 1 follows the tool calls of turn 0, but call(s) 0 have no tool result",
    ),
    Case("turn_without_user.yaml", "/turns/1", "- reply:", "reply", "turn 1 has no user message"),
    Case(
        "duplicate_tool_names.yaml",
        "/tools/2/name",
        "- name: getTime",
        "getTime",
        "tool name 'getTime' is used twice (also tools[0])",
        nth=2,
    ),
    Case("id_mismatch.yaml", "/id", "id:", "basic/get_time", "does not match the file's place ('id_mismatch')"),
    Case("bad_base64.yaml", "/turns/0/tool_results/0/content/0/data", "data:", '"not base64!"', "not valid base64"),
    Case(
        "arguments_error_with_arguments.yaml",
        "/turns/0/expect/tool_calls/0",
        "- name: getTime",
        "name",
        "a call expected to end with arguments_error has no arguments",
        nth=3,
    ),
    Case(
        "user_wrong_type.yaml",
        "/turns/0/user",
        "user:",
        "42",
        "an integer does not fit here",
        expected="a string or a list",
    ),
    Case(
        "tool_choice_typo.yaml",
        "/tool_choice",
        "tool_choice:",
        "requried",
        "'requried' is not allowed here",
        expected="auto, none, required",
        hint="did you mean 'required'?",
    ),
    Case("two_documents.yaml", "", "---", None, "expected a single document", hint="one scenario per file"),
    Case(
        "retry_after_on_server_error.yaml",
        "/turns/0/reply/fault/retry_after",
        "fault:",
        "5",
        "retry_after does not apply to a server_error fault",
    ),
    Case(
        "match_schema_invalid.yaml",
        "/turns/0/expect/tool_calls/0/arguments/type",
        "type: objekt",
        "objekt",
        "arguments is a JSON Schema, and this one is not valid",
    ),
    Case("events_without_stream_mode.yaml", "/modes", "modes:", "[non_stream]", "stream mode only"),
    # tools: {mcp: ...} and tool_results: mcp (docs/mcp.md); a missing key points at the mapping's first key
    Case("mcp_without_command.yaml", "/tools/mcp", "args:", None, "missing required key 'command'"),
    Case(
        "mcp_unknown_key.yaml",
        "/tools/mcp/selcet",
        "selcet:",
        None,
        "unknown key 'selcet'",
        expected="args, command, cwd, env, headers, list_changes, max_total_timeout, reset_timeout_on_progress, select,"
        " timeout, url",
        hint="did you mean 'select'?",
    ),
    Case(
        "tool_results_mpc.yaml",
        "/turns/0/tool_results",
        "tool_results:",
        "mpc",
        "'mpc' is not allowed here",
        expected="mcp",
        hint="did you mean 'mcp'?",
    ),
    Case(
        "tool_results_mcp_without_server.yaml",
        "/turns/0/tool_results",
        "tool_results:",
        "mcp",
        "tool_results: mcp executes the calls through the scenario's MCP server, but tools is a list",
        expected="tools: {mcp:",
    ),
    # issue 28: reasoning settings, cache breakpoints, redacted replies and the history
    Case(
        "reasoning_budget_zero.yaml",
        "/reasoning/budget_tokens",
        "reasoning:",
        "0}",
        "0 is out of range",
        expected="at least 1",
    ),
    Case(
        "reasoning_off_with_effort.yaml",
        "/reasoning/effort",
        "effort: high",
        None,
        "reasoning.enabled: false turns reasoning off, so effort has no meaning",
        hint="remove effort",
    ),
    Case(
        "reasoning_says_nothing.yaml",
        "/reasoning",
        "reasoning:",
        "{enabled",
        "say neither effort nor budget_tokens",
        expected="effort: minimal|low|medium|high",
    ),
    Case(
        "redacted_without_reasoning.yaml",
        "/turns/0/reply/reasoning_redacted",
        "reasoning_redacted:",
        None,
        "the reply has no reasoning",
        expected="reasoning: TEXT",
    ),
    Case(
        "history_unknown_source.yaml",
        "/history/1/reasoning/0/source",
        "source: antropic",
        "antropic",
        "unknown source 'antropic'",
        expected="openai_chat, openai_responses, anthropic, gemini, ollama",
        hint="did you mean 'anthropic'?",
    ),
    Case(
        "history_call_answered_twice.yaml",
        "/history/2/results/1/call_id",
        "Snow again",
        "call_1",
        "tool call 'call_1' is answered twice (also results[0])",
        expected="one result per call",
    ),
    Case(
        "history_call_unanswered.yaml",
        "/history/1/tool_calls/1/id",
        "call_bergen, name",
        None,
        "tool call 'call_bergen' has no result in the tool message after it",
    ),
    Case(
        "history_unknown_call_id.yaml",
        "/history/2/results/0/call_id",
        "call_olso",
        None,
        "call_id 'call_olso' is not a call of the assistant message before this tool message",
        expected="call_oslo",
        hint="did you mean 'call_oslo'?",
    ),
    Case(
        "history_ends_with_user.yaml",
        "/history/2/role",
        "role: user",
        "user",
        "the history ends with a user message",
        nth=2,
    ),
    Case(
        "history_redacted_with_text.yaml",
        "/history/1/reasoning/0/text",
        'text: "I said hi."',
        None,
        "a redacted reasoning part has no text",
    ),
    Case(
        "history_role_typo.yaml",
        "/history/1/role",
        "role: asistant",
        "asistant",
        "'asistant' is not allowed here",
        expected="user, assistant, tool",
        hint="did you mean 'assistant'?",
    ),
    Case(
        "cache_control_system_without_system.yaml",
        "/cache_control/1",
        "cache_control:",
        "system]",
        "cache_control marks the system prompt, but the scenario has no system:",
    ),
]

VALID_IN_BROKEN = {"dup_id.yaml"}  # valid by itself; its twin dup_id.yml is the broken one


@pytest.fixture(scope="module")
def broken() -> LoadResult:
    return load_scenarios([BROKEN])


def test_every_broken_file_has_a_case() -> None:
    files = {p.name for p in BROKEN.iterdir()}
    cased = {case.file for case in CASES}
    assert cased <= files
    assert files - cased == VALID_IN_BROKEN
    assert len(cased) >= 18


@pytest.mark.parametrize("case", CASES, ids=[case.file for case in CASES])
def test_broken_file_is_reported_in_place(case: Case, broken: LoadResult) -> None:
    mine = [p for p in broken.problems if p.path.name == case.file]
    at_pointer = [p for p in mine if p.pointer == case.pointer and case.phrase in p.message]
    assert at_pointer, f"no problem at {case.pointer!r} saying {case.phrase!r}; got:\n" + "\n".join(map(str, mine))
    problem = at_pointer[0]
    assert (problem.line, problem.column) == case.position()
    assert case.expected in problem.expected
    assert case.hint in problem.hint
    assert problem.path == BROKEN / case.file


@pytest.mark.parametrize("case", [c for c in CASES if c.file != "dup_id.yml"], ids=lambda c: c.file)
def test_load_scenario_raises_with_the_same_problem(case: Case) -> None:
    with pytest.raises(ScenarioError) as caught:
        load_scenario(BROKEN / case.file)
    problems = caught.value.problems
    assert any(p.pointer == case.pointer and case.phrase in p.message for p in problems)
    assert str(BROKEN / case.file) in str(caught.value)


def test_one_bad_file_never_stops_the_others(broken: LoadResult) -> None:
    result = load_scenarios([BROKEN, VALID])
    with_problems = {p.path.name for p in result.problems}
    assert with_problems == {case.file for case in CASES}
    assert [s.id for s in result.scenarios] == ["basic/get_time", "dup_id"]
    assert len(result.files) == len(list(BROKEN.iterdir())) + 1
    assert result.problems[: len(broken.problems)] == broken.problems
    assert not result.ok


def test_problems_of_a_file_come_in_file_order(broken: LoadResult) -> None:
    mine = [p for p in broken.problems if p.path.name == "unknown_key_typo.yaml"]
    assert len(mine) >= 2
    assert [(p.line, p.column) for p in mine] == sorted((p.line or 0, p.column or 0) for p in mine)


def test_problem_text_format() -> None:
    problem = ScenarioProblem(
        path=Path("scenarios/x.yaml"),
        line=12,
        column=11,
        pointer="/turns/0/reply/tool_calls/0/argumnets",
        message="unknown key 'argumnets'",
        expected="one of: arguments, arguments_raw, name",
        hint="did you mean 'arguments'?",
    )
    assert str(problem) == (
        "scenarios/x.yaml:12:11: /turns/0/reply/tool_calls/0/argumnets: unknown key 'argumnets' "
        "(expected: one of: arguments, arguments_raw, name) hint: did you mean 'arguments'?"
    )
    top = ScenarioProblem(path=Path("x.yaml"), line=1, column=1, message="the file holds no YAML document")
    assert str(top) == "x.yaml:1:1: (top level): the file holds no YAML document"
    whole = ScenarioProblem(path=Path("x.yaml"), message="cannot read the file")
    assert str(whole) == "x.yaml: (top level): cannot read the file"
    assert whole.to_json() == {
        "path": "x.yaml",
        "line": None,
        "column": None,
        "pointer": "",
        "message": "cannot read the file",
        "expected": "",
        "hint": "",
    }


# ----------------------------------------------------------------------------------------------
# The canonical example (docs/scenarios.md) loads into exactly these values
# ----------------------------------------------------------------------------------------------


def test_get_time_scenario_values() -> None:
    get_time = Tool(
        name="getTime",
        description="Get the current time in milliseconds since the Unix epoch, shifted by offset_ms.",
        input_schema={
            "type": "object",
            "properties": {"offset_ms": {"type": "number", "description": "Offset from now in milliseconds"}},
            "required": ["offset_ms"],
        },
    )
    expected = Scenario(
        id="basic/get_time",
        path=GET_TIME,
        behavior=(
            "The adapter offers getTime, decodes the model's call with its integer argument, feeds the result "
            "back and decodes the final text."
        ),
        source="seed",
        requires=frozenset(),
        tags=(),
        modes=("non_stream", "stream"),
        system=None,
        tool_choice=None,
        parallel_tool_calls=None,
        max_tokens=None,
        tools=(get_time,),
        turns=(
            Turn(
                index=0,
                user=(Text(text="请告诉我昨天的日期是什么时候?"),),
                reply=Reply(
                    tool_calls=(
                        ScriptedCall(
                            name="getTime", arguments={"offset_ms": -86400000}, arguments_raw='{"offset_ms":-86400000}'
                        ),
                    ),
                    finish="tool_calls",
                ),
                expect=Expectation(
                    tool_calls=(ExpectedCall(name="getTime", arguments={"offset_ms": -86400000}, match="exact"),),
                    text=None,
                    finish_reason="tool_calls",
                    events=None,
                    error=None,
                ),
                tool_results=(ToolResultSpec(call=0, content=(Text(text="1684713600000"),), is_error=False),),
            ),
            Turn(
                index=1,
                user=(),
                reply=Reply(text="昨天是2023年5月22日。", finish="stop"),
                expect=Expectation(
                    tool_calls=(),
                    text=TextExpectation(value="昨天是2023年5月22日。", mode="exact"),
                    finish_reason="stop",
                ),
            ),
        ),
        wire=(),
    )
    loaded = load_scenario(GET_TIME)
    assert replace(loaded, fingerprint="") == expected
    # the fingerprint is the parsed content as sorted compact JSON: layout and comments do not count
    data = yaml.safe_load(GET_TIME.read_text("utf-8"))
    canonical = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    assert loaded.fingerprint == hashlib.sha256(canonical.encode("utf-8")).hexdigest()
    assert load_scenarios([VALID]).scenarios == (loaded,)


def test_the_fingerprint_ignores_layout_and_sees_every_value(tmp_path: Path) -> None:
    text = GET_TIME.read_text("utf-8")
    relaid = tmp_path / "scenarios" / "basic" / "get_time.yaml"
    relaid.parent.mkdir(parents=True)
    relaid.write_text(f"# a comment\n\n{text}\n# the end\n", "utf-8")
    assert load_scenario(relaid).fingerprint == load_scenario(GET_TIME).fingerprint
    relaid.write_text(text.replace("offset_ms: -86400000", "offset_ms: -86400001"), "utf-8")
    assert load_scenario(relaid).fingerprint != load_scenario(GET_TIME).fingerprint


# ----------------------------------------------------------------------------------------------
# Finding files and ids
# ----------------------------------------------------------------------------------------------


def test_ids_are_paths_relative_to_the_folder_given(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    for name in ("a/b/deep.yaml", "a/top.yml", "root.yaml", "notes.txt", ".hidden.yaml", "a/.draft/x.yaml"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("{}\n", encoding="utf-8")
    found = scenario_files([tmp_path])
    assert [(f.relative_to(tmp_path).as_posix(), i) for f, i in found] == [
        ("a/b/deep.yaml", "a/b/deep"),
        ("a/top.yml", "a/top"),
        ("root.yaml", "root"),
    ]
    assert scenario_files([tmp_path / "a"]) == [(tmp_path / "a/b/deep.yaml", "b/deep"), (tmp_path / "a/top.yml", "top")]
    assert scenario_files([tmp_path / "a"], root=tmp_path)[0][1] == "a/b/deep"
    # a file given directly: relative to the nearest folder named scenarios, else its stem
    assert scenario_files([GET_TIME]) == [(GET_TIME, "basic/get_time")]
    assert scenario_files([tmp_path / "a/b/deep.yaml"]) == [(tmp_path / "a/b/deep.yaml", "deep")]
    # the same file reached twice is loaded once
    assert len(scenario_files([tmp_path, tmp_path / "root.yaml"])) == 3


@pytest.mark.parametrize(
    ("name", "phrase"), [("missing", "no such file or directory"), ("notes.txt", "not a scenario file")]
)
def test_bad_paths_are_usage_errors(tmp_path: Path, name: str, phrase: str) -> None:
    (tmp_path / "notes.txt").write_text("", encoding="utf-8")
    with pytest.raises(UsageError, match=phrase):
        load_scenarios([tmp_path / name])


def test_default_folder_is_the_repository_scenarios(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)
    assert default_scenarios_dir() == REPO_ROOT / "scenarios"


def test_env_var_overrides_the_default_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VAR, str(VALID))
    assert default_scenarios_dir() == VALID
    assert [s.id for s in load_scenarios().scenarios] == ["basic/get_time"]
    assert main(["validate"]) == 0


def test_env_var_naming_nothing_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "nowhere"))
    assert main(["validate"]) == 2
    assert f"${ENV_VAR}" in capsys.readouterr().err


def test_unreadable_files_are_problems(tmp_path: Path) -> None:
    (tmp_path / "latin1.yaml").write_bytes("behavior: caf\xe9\n".encode("latin-1"))
    (tmp_path / "bom.yaml").write_bytes(b"\xef\xbb\xbf" + GET_TIME.read_bytes())
    result = load_scenarios([tmp_path])
    assert [s.id for s in result.scenarios] == ["bom"]
    (problem,) = result.problems
    assert problem.path.name == "latin1.yaml"
    assert problem.line is None
    assert "not UTF-8" in problem.message
    with pytest.raises(ScenarioError, match="no such scenario file"):
        load_scenario(tmp_path / "missing.yaml")


# ----------------------------------------------------------------------------------------------
# conformance validate
# ----------------------------------------------------------------------------------------------


def test_validate_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(VALID)]) == 0
    assert capsys.readouterr().out == "1 scenario file(s) checked: 1 valid\n"

    assert main(["validate", str(BROKEN)]) == 1
    out = capsys.readouterr().out
    for case in CASES:
        assert f"{case.file}:" in out
    assert out.splitlines()[-1].startswith(
        f"{len(list(BROKEN.iterdir()))} scenario file(s) checked: 1 valid, {len(CASES)} with problems ("
    )

    assert main(["validate", str(tmp_path / "missing.yaml")]) == 2
    assert "no such file or directory" in capsys.readouterr().err

    assert main(["validate", str(tmp_path)]) == 2  # an empty folder: nothing to validate
    assert "no scenario files" in capsys.readouterr().err

    assert main(["validate", str(GET_TIME), str(BROKEN / "wrong_type.yaml")]) == 1


def test_validate_json_output(capsys: pytest.CaptureFixture[str]) -> None:
    code = validate_command([str(GET_TIME), str(BROKEN / "tool_choice_typo.yaml")], output_format="json")
    assert code == 1
    report = json.loads(capsys.readouterr().out)
    assert report["files"] == 2
    assert report["valid"] == 1
    assert report["invalid"] == 1
    assert report["scenarios"] == ["basic/get_time"]
    (problem,) = report["problems"]
    case = next(c for c in CASES if c.file == "tool_choice_typo.yaml")
    assert (problem["line"], problem["column"]) == case.position()
    assert problem["pointer"] == "/tool_choice"
    assert problem["path"].endswith("tool_choice_typo.yaml")
    assert problem["hint"] == "did you mean 'required'?"


def test_bundled_scenarios_are_valid(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)
    if not any(default_scenarios_dir().rglob("*.y*ml")):
        pytest.skip("no bundled scenarios yet")
    code = main(["validate"])
    assert code == 0, capsys.readouterr().out


def _yaml_files() -> list[Path]:
    root = Path(__file__).resolve().parents[2]
    return sorted([*(root / "scenarios").rglob("*.yaml"), *DATA.rglob("*.yaml"), *DATA.rglob("*.yml")])


@pytest.mark.parametrize("path", _yaml_files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_libyaml_composes_what_the_positioned_composer_does(path: Path) -> None:
    """The loader composes with libyaml and reads a file again with the pure-Python composer when
    anything is wrong with it: on a file it accepts, libyaml must give the same data and marks,
    and it must never accept a file the pure-Python composer refuses."""
    from conformance.scenarios._positioned_yaml import compose

    try:
        text = path.read_bytes().decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        return
    exact, exact_problems = compose(text, path)
    try:
        fast, fast_problems = compose(text, path, fast=True)
    except Exception:  # the loader falls back on anything libyaml raises
        return
    if fast is not None and not fast_problems:
        assert exact is not None and not exact_problems
        assert (fast.data, fast.locator) == (exact.data, exact.locator)


# --------------------------------------------------------------------------------------------
# untrusted files: the bounds of conformance.limits, lone surrogates (issue 14)
# --------------------------------------------------------------------------------------------


def _variant(tmp_path: Path, old: str, new: str, name: str = "case.yaml") -> Path:
    text = GET_TIME.read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / name
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path


def _only_problem(path: Path) -> ScenarioProblem:
    result = load_scenarios([path])
    assert not result.scenarios
    (problem,) = result.problems
    return problem


def test_a_very_deep_file_is_refused_before_libyaml_composes_it(tmp_path: Path) -> None:
    from _hostile import run_bounded

    # libyaml's composer recurses in C: at 100,000 levels it crashed the process (SIGSEGV)
    path = _variant(tmp_path, "source: seed", "source: seed\ntags: " + "[" * 100_000 + "]" * 100_000)
    code = (
        "from conformance.scenarios.loader import load_scenarios\n"
        f"(p,) = load_scenarios([{str(path)!r}]).problems\nprint(p.line, p.column)\nprint(p)\n"
    )
    done = run_bounded(code)
    assert done.returncode == 0, done.stderr[-2000:]
    line, text = done.stdout.split("\n", 1)
    row, column = map(int, line.split())
    # the 100th bracket (level 101 under the top mapping); PyYAML 6.0.4's libyaml refuses 1,000 levels
    # while scanning ahead, before that event comes out: then the place is its 1,000th bracket
    assert (row, column) in {(5, len("tags: ") + 100), (5, len("tags: ") + 1000)}
    assert str(path) in text and "nesting_depth=100" in text and "--limit nesting_depth=N" in text


def test_billion_laughs_in_a_scenario_is_refused_in_a_bounded_child(tmp_path: Path) -> None:
    from _hostile import billion_laughs, run_bounded

    laughs = billion_laughs(indent="  ")
    path = _variant(tmp_path, "source: seed", "source: seed\nx-bombs:\n" + laughs)
    code = f"from conformance.scenarios.loader import load_scenarios\nprint(*load_scenarios([{str(path)!r}]).problems)"
    done = run_bounded(code)
    assert done.returncode == 0, done.stderr[-2000:]
    assert str(path) in done.stdout and "past the limit yaml_nodes=1000000" in done.stdout


@pytest.mark.parametrize(
    ("old", "new", "pointer"),
    [
        ("- name: getTime", '- name: "get\\ud800Time"', "/tools/0/name"),
        ('text: "昨天是2023年5月22日。"', 'text: "bad \\udc00 half"', "/turns/1/reply/text"),
        (
            "offset_ms:\n          type: number",
            '"offset\\ud800":\n          type: number',
            "/tools/0/inputSchema/properties",
        ),
    ],
)
def test_a_lone_surrogate_is_a_placed_problem(tmp_path: Path, old: str, new: str, pointer: str) -> None:
    path = _variant(tmp_path, old, new)
    problem = _only_problem(path)
    assert problem.pointer.startswith(pointer)
    assert "lone surrogate" in problem.message and "UTF-8 cannot encode" in problem.message
    line = next(i for i, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if "\\ud" in text)
    assert problem.line == line


def test_an_escaped_surrogate_pair_is_its_character(tmp_path: Path) -> None:
    path = _variant(tmp_path, 'text: "昨天是2023年5月22日。"', 'text: "ok \\ud83d\\ude00"')
    scenario = load_scenario(path)
    assert scenario.turns[1].reply.text == "ok \U0001f600"


def test_lone_surrogates_reach_validate_and_list_as_problems(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "scenarios"
    folder.mkdir()
    _variant(folder, "- name: getTime", '- name: "get\\ud800Time"')
    assert main(["validate", str(folder)]) == 1
    out = capsys.readouterr().out
    assert "case.yaml:6:" in out and "lone surrogate" in out


def test_a_schema_that_references_explode_is_refused_naming_tool_and_limit(tmp_path: Path) -> None:
    from _hostile import ref_bomb

    schema = json.dumps(ref_bomb(26))  # 4 KB; 2**26 leaves once its $refs are inlined
    text = GET_TIME.read_text(encoding="utf-8")
    start = text.index("    inputSchema:\n")
    end = text.index("turns:")
    path = tmp_path / "refs.yaml"
    path.write_text(text[:start] + f"    inputSchema: {schema}\n" + text[end:], encoding="utf-8")
    problem = _only_problem(path)
    assert problem.pointer == "/tools/0/inputSchema" and problem.line == start_line(text, start)
    assert "'getTime'" in problem.message and "schema_nodes=100000" in problem.message
    assert "--limit schema_nodes=N" in problem.hint


def start_line(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def test_limits_are_overridable_for_scenarios(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONFORMANCE_LIMITS", "nesting_depth=3")
    problem = _only_problem(_variant(tmp_path, "source: seed", "source: seed"))  # it nests 6 levels deep
    assert "nesting_depth=3" in problem.message
    monkeypatch.setenv("CONFORMANCE_LIMITS", "nesting_depth=300")
    assert load_scenarios([tmp_path / "case.yaml"]).ok


def test_text_through_aliases_is_bounded_where_libyaml_cannot_read_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # an escaped surrogate pair sends the file to the pure-Python composer; the walk counts the text
    monkeypatch.setenv("CONFORMANCE_LIMITS", "yaml_expanded_bytes=20000")
    big = "x" * 1000
    path = _variant(
        tmp_path,
        "source: seed",
        f'source: seed\nx-a: &a "{big} \\ud83d\\ude00"\nx-b: [' + ", ".join(["*a"] * 30) + "]",
    )
    problem = _only_problem(path)
    assert "too much text through aliases: past the limit yaml_expanded_bytes=20000" in problem.message
    assert problem.line == 5  # the anchor whose text the aliases repeat


@pytest.mark.parametrize("output", ["text", "json"])
def test_a_lone_surrogate_in_an_unknown_key_never_reaches_the_output(
    tmp_path: Path, output: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # validate printed the schema problem quoting the key, and died encoding it (UnicodeEncodeError)
    path = _variant(tmp_path, "schema_version: 1", 'schema_version: 1\n"x\\ud800y": 1')
    assert main(["validate", "--format", output, str(path)]) == 1
    out = capsys.readouterr().out
    out.encode("utf-8")  # strict: what was printed is valid UTF-8
    assert "lone surrogate" in out and "x\ufffdy" in out


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("\x1fschema_version: 1\n", "not valid YAML: unacceptable character #x001f"),  # found by tests/fuzz
        ("schema_version: 1\nmax_tokens: " + "9" * 5000 + "\n", "an integer of 5000 characters is too long to read"),
    ],
    ids=["control-character", "5000-digit-integer"],
)
def test_text_yaml_or_python_refuses_is_a_placed_problem_not_an_internal_error(
    tmp_path: Path, text: str, expected: str
) -> None:
    path = tmp_path / "odd.yaml"
    path.write_text(text)
    loaded = load_scenarios([path])
    messages = [p.message for p in loaded.problems]
    assert any(expected in m for m in messages), messages
    assert not any("internal error" in m for m in messages)


# --------------------------------------------------------------------------------------------
# issue 28: a big history or a megabyte of reasoning loads in bounded CPU time, or is a placed problem
# --------------------------------------------------------------------------------------------


def _history_file(tmp_path: Path, rounds: int, reasoning: str, *, drop_last_result: bool = False) -> Path:
    history: list[dict[str, object]] = []
    for n in range(rounds):
        history.append({"role": "user", "text": f"question {n}"})
        call = {"id": f"call_{n}", "name": "getTime", "arguments": {"offset_ms": n}}
        history.append(
            {"role": "assistant", "reasoning": [{"text": reasoning, "source": "anthropic"}], "tool_calls": [call]}
        )
        if not (drop_last_result and n == rounds - 1):
            history.append({"role": "tool", "results": [{"call_id": f"call_{n}", "content": str(n)}]})
        history.append({"role": "assistant", "text": f"answer {n}"})
    data = {
        "schema_version": 1,
        "behavior": "b",
        "source": "s",
        "tools": [{"name": "getTime"}],
        "history": history,
        "turns": [{"user": "and now?", "reply": {"text": "now.", "reasoning": reasoning}}],
    }
    path = tmp_path / "big.yaml"
    path.write_text(json.dumps(data), encoding="utf-8")  # JSON is YAML
    return path


def test_a_megabyte_of_reasoning_and_a_long_history_load_in_bounded_cpu_time(tmp_path: Path) -> None:
    import time

    megabyte = "why " * (1 << 18)
    path = _history_file(tmp_path, 1000, "short", drop_last_result=False)
    start = time.process_time()
    scenario = load_scenario(path)
    assert len(scenario.history) == 4000  # every rule is linear in the history's length
    big = load_scenario(_history_file(tmp_path, 2, megabyte))
    assert time.process_time() - start < 60  # a safety net: both take about 3 s of CPU here
    assert big.turns[0].reply.reasoning == megabyte
    assert big.turns[0].expect.reasoning is not None and big.turns[0].expect.reasoning[0].text == megabyte


def test_an_unanswered_call_deep_in_a_long_history_is_placed(tmp_path: Path) -> None:
    result = load_scenarios([_history_file(tmp_path, 500, "short", drop_last_result=True)])
    assert not result.scenarios
    assert [(p.pointer, p.message) for p in result.problems] == [
        ("/history/1997/tool_calls/0/id", "tool call 'call_499' has no result before history[1998]"),
        ("/history/1998/role", "two assistant messages in a row (history[1997] and history[1998])"),
    ]
