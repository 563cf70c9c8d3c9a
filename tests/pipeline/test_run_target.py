"""``conformance.pipeline.run.run_target``: one flow for any kind of target. A target here is a small
class of the ``Target`` protocol that hands out finished cases, as a server or a gateway target
would: the pipeline does the rest (nothing selected, progress, Ctrl-C, the finish, closing it)."""

from __future__ import annotations

import dataclasses
import io
import json
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from conformance.adapters import get_adapter
from conformance.adapters.base import Adapter
from conformance.pipeline.ci import CiOptions
from conformance.pipeline.plan import Plan
from conformance.pipeline.run import run_target
from conformance.pipeline.selection import compile_keyword
from conformance.pipeline.targets import Target
from conformance.run.runner import run_result
from conformance.scenarios.loader import load_scenarios
from conformance.verdicts import CaseResult, RunResult, Selection


class HandedOut:
    """A target whose cases are given: each one the plan selects is passed to the progress in turn."""

    label = "acme: "
    noun = "wires"
    known = "acme declares the wire openai_chat"

    def __init__(self, statuses: Sequence[tuple[str, str]], *, interrupt_after: int | None = None) -> None:
        self.statuses = statuses
        self.interrupt_after = interrupt_after
        self.closed = 0

    @property
    def columns(self) -> Sequence[Adapter]:
        return [dataclasses.replace(get_adapter("openai_chat"), name="acme/openai_chat")]

    def _cases(self, plan: Plan) -> list[CaseResult]:
        cases = [
            CaseResult(adapter="acme/openai_chat", scenario="basic/get_time", mode=mode, status=status)  # type: ignore[arg-type]
            for mode, status in self.statuses
        ]
        return [c for c in cases if plan.select is None or plan.select(c.adapter, c.scenario, c.mode)]

    def case_count(self, plan: Plan) -> int:
        return len(self._cases(plan))

    def run(self, plan: Plan, progress: Callable[[CaseResult], None]) -> RunResult:
        done: list[CaseResult] = []
        for case in self._cases(plan):
            if self.interrupt_after is not None and len(done) == self.interrupt_after:
                raise KeyboardInterrupt
            progress(case)
            done.append(case)
        return self.partial(plan, done)

    def partial(self, plan: Plan, cases: Sequence[CaseResult]) -> RunResult:
        return run_result(self.columns, plan.scenarios, cases, problems=plan.problems)

    def rerun_words(self, case: CaseResult) -> list[str]:
        return ["certify", "--acme", "x"]

    def close(self) -> None:
        self.closed += 1


def plan(tmp_path: Path, **fields: object) -> Plan:
    scenarios = tuple(s for s in load_scenarios([]).scenarios if s.id == "basic/get_time")
    given: dict[str, object] = {
        "command": "certify",
        "scenarios": scenarios,
        "report_dir": tmp_path,
        "formats": ("json", "md"),
        "selection": Selection(command="certify"),
    }
    return Plan(**{**given, **fields})  # type: ignore[arg-type]


def test_a_target_of_the_protocol_runs_shows_its_cases_and_writes_its_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = HandedOut([("non_stream", "pass"), ("stream", "fail")])
    checked: Target = target  # the protocol, as mypy reads it
    out = io.StringIO()
    assert run_target(checked, plan(tmp_path), out) == 1
    assert target.closed == 1
    text = out.getvalue()
    assert "acme/openai_chat   .F" in text
    assert text.rstrip().splitlines()[-1].startswith("acme: 2 cases: 1 pass, 1 fail; reports:")
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert [c["status"] for c in report["cases"]] == ["pass", "fail"] and report["selection"]["command"] == "certify"
    assert "conformance certify --acme x --scenarios basic/get_time -k" in (tmp_path / "report.md").read_text()


def test_a_plan_that_selects_nothing_is_exit_2_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = HandedOut([("stream", "pass")])
    selected = plan(
        tmp_path / "reports",
        select=compile_keyword("nothing"),
        selection=Selection(command="certify", keyword="nothing"),
    )
    assert run_target(target, selected, io.StringIO()) == 2
    err = capsys.readouterr().err
    assert err.startswith("conformance certify: error: -k 'nothing' selects no case of 1 scenarios x 1 wires")
    assert "acme declares the wire openai_chat" in err
    assert not (tmp_path / "reports").exists() and target.closed == 1


def test_ctrl_c_writes_the_finished_cases_marked_incomplete_and_closes_the_target(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = HandedOut([("non_stream", "pass"), ("stream", "pass")], interrupt_after=1)
    assert run_target(target, plan(tmp_path, quiet=True), io.StringIO()) == 130
    assert target.closed == 1
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert len(report["cases"]) == 1 and report["incomplete"].startswith("interrupted (Ctrl-C) after 1 finished case")
    assert "conformance certify: interrupted (Ctrl-C) after 1 finished case" in capsys.readouterr().err


def test_last_failed_with_nothing_to_rerun_says_so_and_runs_nothing(tmp_path: Path) -> None:
    target = HandedOut([("stream", "fail")])
    out = io.StringIO()
    nothing = CiOptions(last_failed=frozenset(), nothing_to_rerun="--last-failed: nothing to rerun")
    assert run_target(target, plan(tmp_path / "reports", ci=nothing), out) == 0
    assert out.getvalue() == "--last-failed: nothing to rerun\n" and target.closed == 1
    assert not (tmp_path / "reports").exists()
