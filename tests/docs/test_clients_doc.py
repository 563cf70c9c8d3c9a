"""docs/clients.md stays true: its duty table is the contract's, its sample of a finding left to the
caller is the text the suite prints, and what it says the suite accepts lives in docs/equivalences.md."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from conformance.checks.duties import REMEDIES
from conformance.checks.equivalences import bundled_table
from conformance.clients.contract import DUTIES, Call, Client
from conformance.clients.harness import CertifyOptions
from conformance.pipeline.selection import CHECK_IDS
from conformance.run.runner import RunOptions
from conformance.scenarios import bundled
from conformance.verdicts import RunResult
from tests.docs._project import write_project

REPO = Path(__file__).resolve().parents[2]
DOC = (REPO / "docs" / "clients.md").read_text(encoding="utf-8")
NUMBERS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine", 10: "ten"}


def _section(title: str) -> str:
    start = DOC.index(title)
    end = DOC.find("\n## ", start + 1)
    return DOC[start : end if end != -1 else len(DOC)]


def test_the_duty_table_is_the_contracts() -> None:
    rows = re.findall(r"^\| `(\w+)` \|", _section("### Duties"), flags=re.MULTILINE)
    assert rows == list(DUTIES)


def test_the_sample_left_to_the_caller_is_the_remedy_the_suite_prints() -> None:
    block = _section("### Duties").split("```")[1]
    shown = " ".join(block.split("left to the caller:", 1)[1].split())
    assert shown == REMEDIES[("tool_names", "openai_chat")]


def test_every_accepted_equivalence_the_doc_names_is_a_row_of_the_table() -> None:
    paths = {r.path for r in bundled_table().equivalences}
    for named in ("$.provider_details.extra.stream", "$.tool_choice", "$.max_tokens"):
        assert named in paths
    assert "(equivalences.md)" in DOC


# --------------------------------------------------------------------------------------------
# "The contract": the sketch of Call and Client is the contract's
# --------------------------------------------------------------------------------------------


def test_the_sketch_of_the_contract_names_the_fields_of_call_and_client() -> None:
    sketch = re.search(r"```python\n(@dataclass.*?)```", _section("## The contract"), re.S)
    assert sketch is not None
    call, _, client = sketch.group(1).partition("class Client(Protocol):")
    assert re.findall(r"^    (\w+): ", call, re.M) == [f.name for f in dataclasses.fields(Call)]
    declared = re.findall(r"^    (?:# optional: )?(\w+): ", client, re.M)
    methods = re.findall(r"^    def (\w+)\(", client, re.M)
    assert [*declared[:3], *methods] == [*Client.__annotations__, "complete", "error_info"]
    assert set(declared[3:]) == {"schema_rewrites", "request_differences", "duties"}


# --------------------------------------------------------------------------------------------
# "A worked example" and "From Python": the example runs outside a checkout and gives the figures
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Example:
    printed: str
    result: RunResult


@pytest.fixture(scope="module")
def python_example(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Example]:
    """docs/clients.md's "From Python" example, run as written from a folder outside the checkout,
    ``my_pkg.drivers`` being the worked example's driver."""
    pytest.importorskip("openai")
    block = re.search(r"```python\n(.*?)```", _section("## From Python"), re.S)
    assert block is not None
    project = write_project(tmp_path_factory.mktemp("elsewhere"))
    assert not project.resolve().is_relative_to(REPO)
    namespace: dict[str, object] = {}
    out = io.StringIO()
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(project)
        patch.syspath_prepend(str(project))
        for name in [m for m in sys.modules if m == "my_pkg" or m.startswith("my_pkg.")]:
            patch.delitem(sys.modules, name)
        with contextlib.redirect_stdout(out):
            exec(compile(block.group(1), "docs/clients.md", "exec"), namespace)
        for name in [m for m in sys.modules if m == "my_pkg" or m.startswith("my_pkg.")]:
            patch.delitem(sys.modules, name)
    result = namespace["result"]
    assert isinstance(result, RunResult)
    yield Example(out.getvalue(), result)


def test_the_python_example_runs_outside_a_checkout_and_prints_what_the_doc_says(python_example: Example) -> None:
    counts = python_example.result.counts()
    assert counts["error"] == 0, [c.message for c in python_example.result.cases if c.status == "error"][:3]
    said = re.search(r"it prints\n`(\{[^`]+\})`", _section("## From Python"))
    assert said is not None
    first, *failing = python_example.printed.splitlines()
    assert first == said.group(1) == str(counts)
    assert len(failing) == counts["fail"]


def test_the_worked_example_summary_is_the_python_examples_counts(python_example: Example) -> None:
    """The counts the worked example's console shows are the Python example's (the same driver and
    scenarios, through the API): the command itself runs in test_doc_commands.py."""
    section = _section("## A worked example")
    line = re.search(r"^openai-sdk-chat: (\d+) cases: (.*)$", section, re.M)
    assert line is not None
    counts = python_example.result.counts()
    assert int(line.group(1)) == len(python_example.result.cases)
    shown = {status: int(n) for n, status in re.findall(r"(\d+) (\w+)", line.group(2))}
    assert shown == {status: n for status, n in counts.items() if n}
    left = {c.scenario for c in python_example.result.cases if c.status == "left"}
    names = {s for s in left if s.startswith("names/")}
    results = left - names  # duty tool_results: what an MCP result becomes is the SDK caller's to write
    assert re.search(rf"so the {NUMBERS[len(names)]} `names/\*` scenarios are \*\*left to the caller\*\*", section)
    assert re.search(rf"So are the {NUMBERS[len(results)]} whose tool results carry more than text", section)
    assert all(s.startswith(("tool_results/", "mcp/result_")) for s in results) and len(left) == counts["left"]
    assert f"The {NUMBERS[counts['fail']]}\nFAILs" in section or f"The {NUMBERS[counts['fail']]} FAILs" in section


def test_each_fail_the_worked_example_lists_is_the_run_with_its_checks_and_paths(python_example: Example) -> None:
    bullets = re.findall(r"^- `(\w+/\w+)` fails (.*?)(?=^- |^\n)", _section("## A worked example"), re.M | re.S)
    failing = {c.scenario: c for c in python_example.result.cases if c.status == "fail"}
    assert sorted(s for s, _ in bullets) == sorted(failing)
    checks = {check for ids in CHECK_IDS.values() for check in ids} | {"client.typed_errors"}
    for scenario, text in bullets:
        named = set(re.findall(r"`([\w.]+)`", text)) & checks
        case = failing[scenario]
        assert named == {v.check for v in case.checks if v.status == "fail"}, scenario
        paths = {f.path for v in case.checks for f in v.findings}
        assert set(re.findall(r"`(\$[^`]+)`", text)) <= paths, scenario


def test_the_api_finds_the_bundled_cassettes_from_any_folder() -> None:
    """``CertifyOptions()`` and ``RunOptions()`` default to the bundled cassettes by absolute path (the
    installed package's, or the checkout's), never to a folder relative to the current one."""
    for options in (CertifyOptions(), RunOptions()):
        assert options.cassette_dir == bundled.cassettes_dir()
        assert options.cassette_dir.is_absolute() and options.cassette_dir.is_dir()
