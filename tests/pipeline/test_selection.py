"""``conformance.pipeline.selection``: what a run selects, read from plain values (``-k``, adapters,
``--checks``, ``--format``, ``--jobs``), and why a selection of no case is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.errors import UsageError
from conformance.pipeline.selection import (
    CHECK_IDS,
    FAMILIES,
    REPORT_FORMATS,
    chosen_checks,
    compile_keyword,
    load_adapter,
    nothing_selected,
    read_checks,
    read_formats,
    read_jobs,
    split_list,
)
from conformance.scenarios.loader import load_scenarios
from conformance.verdicts import Selection


def test_keyword_expressions_select_like_pytest() -> None:
    select = compile_keyword("gemini and not stream")
    assert select("gemini", "basic/get_time", "non_stream") is False  # "stream" is a substring of "non_stream"
    select = compile_keyword("(openai or anthropic) and get_time")
    assert select("openai_chat", "basic/get_time", "stream")
    assert select("anthropic", "basic/get_time", "non_stream")
    assert not select("gemini", "basic/get_time", "stream")
    assert not select("openai_chat", "basic/single_call", "stream")


def test_bad_keyword_expression_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="not a valid expression"):
        compile_keyword("gemini and (")


def test_load_adapter_by_name_and_by_object_path() -> None:
    assert load_adapter("anthropic").name == "anthropic"
    assert load_adapter("conformance.adapters.gemini:ADAPTER").wire_format == "gemini"


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        ("nope", "unknown adapter"),
        ("no_such_module_xyz:ADAPTER", "cannot import"),
        ("conformance.adapters.gemini:MISSING", "has no attribute"),
        ("conformance.model:Tool", "lacks"),
    ],
)
def test_bad_adapter_specs_say_what_to_do(spec: str, needle: str) -> None:
    with pytest.raises(UsageError, match=needle):
        load_adapter(spec)


def test_check_families_match_the_registry() -> None:
    """The families the registry runs on a case are those of ``--checks`` and of the check ids, in their
    order; ``server`` (model servers and gateways, judged on their exchanges) is the one family more."""
    from conformance.checks import FAMILIES as REGISTRY

    assert tuple(REGISTRY) == FAMILIES[: len(REGISTRY)] == tuple(CHECK_IDS)[: len(REGISTRY)]
    assert set(FAMILIES) - set(REGISTRY) <= {"server"} and set(CHECK_IDS) <= set(FAMILIES)


def test_checks_are_read_as_asked_and_run_by_family() -> None:
    assert read_checks(None) == FAMILIES and read_checks("") == FAMILIES
    assert read_checks("roundtrip.calls,streaming,roundtrip.calls") == ("roundtrip.calls", "streaming")
    assert chosen_checks(("roundtrip.calls", "streaming")) == (
        ("roundtrip", "streaming"),
        frozenset({"roundtrip.calls", *CHECK_IDS["streaming"]}),
    )
    assert chosen_checks(("translation",)) == (("translation",), None)
    assert chosen_checks(("server",)) == (("server",), None)  # judges servers and gateways; none on an adapter
    with pytest.raises(UsageError, match=r"unknown check 'roundtrip\.cals': did you mean 'roundtrip\.calls'"):
        read_checks("roundtrip.cals")


def test_formats_jobs_and_lists_are_read_or_refused() -> None:
    assert read_formats("json,md") == ["json", "md"] and read_formats(None) == []
    assert tuple(read_formats(",".join(REPORT_FORMATS))) == REPORT_FORMATS
    with pytest.raises(UsageError, match="unknown report format pdf"):
        read_formats("json,pdf")
    assert read_jobs(3) == 3 and read_jobs(None) >= 1
    with pytest.raises(UsageError, match="--jobs 0: must be at least 1"):
        read_jobs(0)
    assert split_list(["a, b", None, "c,,"]) == ["a", "b", "c"]


def test_nothing_selected_says_what_selected_nothing_and_where_the_names_are(tmp_path: Path) -> None:
    scenarios = load_scenarios([]).scenarios[:2]
    selection = Selection(command="certify", keyword="nope", scenarios=("basic/*",), wires=("gemini",))
    text = nothing_selected(
        selection,
        ["acme/gemini"],
        scenarios,
        report_dir=tmp_path,
        last_failed=True,
        noun="wires",
        known="acme declares the wires gemini",
    )
    assert text.startswith(
        "-k 'nope' with --scenarios basic/* with --wires 'gemini' with --last-failed selects no case"
    )
    assert f"of 2 scenarios x 1 wires (a case is named like acme/gemini::{scenarios[0].id}::non_stream" in text
    assert "acme declares the wires gemini" in text and f"the reports in {tmp_path} were left as they were" in text
