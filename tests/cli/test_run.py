from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from conformance.cli.run import CHECK_IDS, FAMILIES, compile_keyword, load_adapter
from conformance.errors import UsageError


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
    from conformance.checks import FAMILIES as REGISTRY

    assert tuple(REGISTRY) == FAMILIES == tuple(CHECK_IDS)


def test_a_misspelt_wire_format_is_a_usage_error_at_load_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before any case runs: exit 2, the field, and the valid wire formats (not one ERROR per case
    with a hint to record cassettes)."""
    (tmp_path / "typo_adapter.py").write_text(
        "from dataclasses import replace\n"
        "from conformance.adapters import get_adapter\n"
        "ADAPTER = replace(get_adapter('anthropic'), name='typo', wire_format='antropic')\n",
        encoding="utf-8",
    )
    (tmp_path / "duck_adapter.py").write_text(
        "from conformance.adapters import get_adapter\n"
        "_A = get_adapter('anthropic')\n"
        "class ADAPTER:\n"
        "    name = 'duck'\n"
        "    wire_format = 'anthropic'\n"
        "    capabilities = {'streaming', 'parallel_tools'}\n"
        "    tools_to_wire = staticmethod(_A.tools_to_wire)\n"
        "    request_to_wire = staticmethod(_A.request_to_wire)\n"
        "    request_from_wire = staticmethod(_A.request_from_wire)\n"
        "    response_from_wire = staticmethod(_A.response_from_wire)\n"
        "    stream_from_wire = staticmethod(_A.stream_from_wire)\n"
        "    error_from_wire = staticmethod(_A.error_from_wire)\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    from conformance.adapters.base import CAPABILITIES, WIRE_FORMATS
    from conformance.cli import main

    assert main(["run", "--adapter", "typo_adapter:ADAPTER", "--report-dir", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert "unknown wire_format 'antropic'" in err and all(w in err for w in WIRE_FORMATS)
    assert main(["run", "--adapter", "duck_adapter:ADAPTER", "--report-dir", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert "unknown capability parallel_tools" in err and all(c in err for c in CAPABILITIES)
    assert not (tmp_path / "r").exists()


def test_a_known_gap_naming_no_check_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    import dataclasses
    import types

    from conformance.adapters import get_adapter

    module = types.ModuleType("gap_typo_adapter")
    module.ADAPTER = dataclasses.replace(get_adapter("anthropic"), known_gaps={"roundtrip.txt": "typo"})  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "gap_typo_adapter", module)
    with pytest.raises(
        UsageError, match=r"known gap 'roundtrip\.txt' names no check \(valid check ids: .*roundtrip\.text"
    ):
        load_adapter("gap_typo_adapter:ADAPTER")


def test_every_check_id_a_run_gives_is_listed() -> None:
    from conformance.adapters import get_adapter
    from conformance.run.runner import RunOptions, run_suite
    from conformance.scenarios.loader import load_scenarios

    root = Path(__file__).resolve().parents[2]
    scenarios = [s for s in load_scenarios().scenarios if s.id in ("basic/get_time", "errors/rate_limit")]
    result = run_suite(scenarios, [get_adapter("anthropic")], RunOptions(cassette_dir=root / "cassettes"))
    seen = {v.check for c in result.cases for v in c.checks}
    listed = {check for ids in CHECK_IDS.values() for check in ids}
    assert seen and seen <= listed


def test_exhaustive_runs_get_a_longer_default_timeout(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Every 2-way cut decodes a stream again: a case costs the square of its streams' length, so
    ``--exhaustive`` gives each case ``EXHAUSTIVE_TIMEOUT`` unless ``--timeout`` says otherwise."""
    from conformance.cli import main
    from conformance.cli import run as run_module

    seen: list[float] = []

    def capture(scenarios: object, adapters: object, options: Any, **kwargs: Any) -> Any:
        seen.append(options.timeout)
        raise SystemExit(0)

    monkeypatch.setattr("conformance.run.runner.run_suite", capture)
    for argv, expected in (
        ([], run_module.TIMEOUT),
        (["--exhaustive"], run_module.EXHAUSTIVE_TIMEOUT),
        (["--exhaustive", "--timeout", "7"], 7.0),
    ):
        with pytest.raises(SystemExit):
            main(["run", "-k", "get_time", "--report-dir", str(tmp_path), *argv])
        assert seen.pop() == expected
    assert run_module.EXHAUSTIVE_TIMEOUT > run_module.TIMEOUT
