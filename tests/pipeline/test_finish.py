"""``conformance.pipeline.finish``: the end of a run on the terminal, and the command that reruns a case."""

from __future__ import annotations

import shlex
from typing import Any

from conformance.pipeline.selection import compile_keyword
from conformance.verdicts import CaseResult


def test_a_finding_nested_too_deeply_for_repr_is_shown_cut() -> None:
    from conformance.pipeline.finish import case_text
    from conformance.verdicts import CaseResult, CheckVerdict, Finding

    deep: Any = []
    for _ in range(5000):
        deep = [deep]
    finding = Finding(check="roundtrip.calls", message="differs", expected=1, actual=deep)
    case = CaseResult(
        adapter="a",
        scenario="s",
        mode="stream",
        status="fail",
        checks=(CheckVerdict(check="roundtrip.calls", status="fail", findings=(finding,)),),
    )
    text = case_text(case)
    assert "expected 1, actual [[[[" in text and "nested deeper than 100 levels" in text


def test_a_rerun_line_names_the_target_the_scenario_the_options_and_the_case() -> None:
    from conformance.pipeline.finish import rerun_line

    case = CaseResult(adapter="acme/anthropic", scenario="basic/get (the) time", mode="stream", status="fail")
    line = rerun_line(["certify", "--client", "d.py:CLIENT"], case, options=["--checks", "client"])
    words = shlex.split(line)
    assert words[:6] == ["conformance", "certify", "--client", "d.py:CLIENT", "--scenarios", "basic/get (the) time"]
    assert words[6:8] == ["--checks", "client"] and words[8] == "-k"
    selects = compile_keyword(words[9])  # the case and no other
    assert selects("acme/anthropic", "basic/get (the) time", "stream")
    assert not selects("acme/anthropic", "basic/get (the) time", "non_stream")
    given = rerun_line(["run", "--adapter", "x"], case, scenario_paths=["mine/a.yaml", "mine/b.yaml"])
    assert shlex.split(given)[4:8] == ["--scenarios", "mine/a.yaml", "--scenarios", "mine/b.yaml"]
