"""Tests for ``conformance list`` (``conformance.cli.listing``): run's selection flags, text and
``--format json``, did-you-mean for misspelt names, and its exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.adapters import BUILTIN
from conformance.cli import main
from conformance.pipeline.selection import CHECK_IDS
from conformance.scenarios.bundled import scenarios_dir

BUNDLED_IDS = sorted(p.relative_to(scenarios_dir()).with_suffix("").as_posix() for p in scenarios_dir().rglob("*.yaml"))


def listed(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, object], str]:
    code = main(["list", "--format", "json", *argv])
    out, err = capsys.readouterr()
    return code, json.loads(out) if out else {}, err


def test_json_lists_every_bundled_scenario_file_adapter_and_check(capsys: pytest.CaptureFixture[str]) -> None:
    code, data, err = listed(capsys)
    assert (code, err) == (0, "")
    scenarios = data["scenarios"]
    assert isinstance(scenarios, list)
    assert [s["id"] for s in scenarios] == BUNDLED_IDS  # one per file under scenarios/
    assert all(Path(s["path"]).is_file() and s["behavior"] for s in scenarios)
    wires = {s["id"]: s["wires"] for s in scenarios}
    assert wires["wire_specific/client_tool_search"] == ["openai_responses"]  # the file's `wires:` list
    assert wires["basic/get_time"] == []  # no list: every wire
    adapters = data["adapters"]
    assert isinstance(adapters, list)
    assert sorted(a["name"] for a in adapters) == sorted(BUILTIN)
    assert {a["name"]: a["wire"] for a in adapters}["openai_responses"] == "openai_responses"
    assert data["checks"] == {family: list(ids) for family, ids in CHECK_IDS.items()}
    assert data["problems"] == []


def test_the_selection_flags_narrow_every_table(capsys: pytest.CaptureFixture[str]) -> None:
    code, data, _ = listed(capsys, "--scenarios", "basic/*", "--adapters", "anthropic,gemini")
    assert code == 0
    assert [s["id"] for s in data["scenarios"]] == [i for i in BUNDLED_IDS if i.startswith("basic/")]  # type: ignore[union-attr]
    assert [a["name"] for a in data["adapters"]] == ["anthropic", "gemini"]  # type: ignore[union-attr]
    main(["list", "--scenarios", "basic/*", "--adapter", "qwen"])
    text = capsys.readouterr().out
    assert "errors/" not in text and "basic/get_time" in text
    assert "Adapters (1):" in text and "  qwen (wire " in text


def test_a_users_scenarios_dir_adds_its_scenarios(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = scenarios_dir() / "basic" / "get_time.yaml"
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "clock.yaml").write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    code, data, _ = listed(capsys, "--scenarios-dir", str(tmp_path))
    assert code == 0
    ids = [s["id"] for s in data["scenarios"]]  # type: ignore[union-attr]
    assert "mine/clock" in ids and len(ids) == len(BUNDLED_IDS) + 1


def test_a_scenario_file_with_problems_is_listed_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "broken.yaml").write_text("id: [\n", encoding="utf-8")
    code, data, _ = listed(capsys, "--scenarios-dir", str(tmp_path))
    assert code == 1
    problems = data["problems"]
    assert isinstance(problems, list) and len(problems) == 1 and "broken.yaml" in problems[0]


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--adapters", "anthropc"], "unknown adapter 'anthropc' (did you mean 'anthropic'?)"),
        (["--scenarios", "basic/get_tme"], "did you mean 'basic/get_time'?"),
        (["--scenarios-dir", "/nonexistent-dir"], "--scenarios-dir /nonexistent-dir: no such folder"),
    ],
)
def test_a_misspelt_name_or_a_missing_folder_is_a_usage_error_with_a_hint(
    argv: list[str], expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["list", *argv])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert expected in err


def test_the_listing_fits_the_terminal_and_keeps_every_word(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every line within COLUMNS (80 here); a scenario's whole behaviour is there, wrapped under its id."""
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["list", "--scenarios", "arguments/*"]) == 0
    out = capsys.readouterr().out
    assert out and max(len(line) for line in out.splitlines()) <= 80
    words = " ".join(out.split())
    assert (
        "arguments/escaped_strings: String arguments holding double quotes and backslashes (a regex with escaped"
        " parentheses and a Windows path) survive the JSON-in-JSON encoding of the wire unchanged." in words
    )
