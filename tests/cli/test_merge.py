"""``--shard K/N`` on ``run`` and ``certify`` and ``conformance merge-reports``: N shards merged give
the verdicts of one run; bad input is a usage error (exit 2) naming the flag or file and what to do."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conformance.cli import main

REPO = Path(__file__).resolve().parents[2]
CASSETTES = REPO / "cassettes"
OPENAI_DRIVER = f"{REPO / 'examples' / 'clients' / 'openai_driver.py'}:CLIENT"

RUN = ["run", "--adapters", "openai_chat,anthropic,gemini", "--scenarios", "basic/*", "--scenarios", "errors/*"]
RUN += ["--cassette-dir", str(CASSETTES), "-j", "2", "--quiet", "--format", "json"]
CERTIFY = ["certify", "--client", OPENAI_DRIVER, "--scenarios", "basic/*", "--scenarios", "tool_results/*"]
CERTIFY += ["--cassette-dir", str(CASSETTES), "-j", "2", "--quiet", "--format", "json"]


def _report(folder: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    return data


def verdicts(report: dict[str, Any]) -> list[tuple[str, str, list[str]]]:
    """Per case, in the report's order: its id, its status and the signatures of its findings."""
    return [
        (c["id"], c["status"], [f["signature"] for check in c["checks"] for f in check["findings"]])
        for c in report["cases"]
    ]


@pytest.mark.parametrize("command", [RUN, CERTIFY], ids=["run", "certify"])
def test_three_shards_merged_give_the_verdicts_of_one_run(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    whole = tmp_path / "whole"
    code = main([*command, "--report-dir", str(whole)])
    sizes = []
    for k in (1, 2, 3):
        assert main([*command, "--shard", f"{k}/3", "--report-dir", str(tmp_path / f"shard{k}")]) == code
        shard = _report(tmp_path / f"shard{k}")
        assert shard["selection"]["shard"] == f"{k}/3"
        sizes.append(len(shard["cases"]))
    assert min(sizes) > 0
    capsys.readouterr()
    merged = tmp_path / "merged"
    shards = [str(tmp_path / f"shard{k}") for k in (3, 1)] + [str(tmp_path / "shard2" / "report.json")]
    assert main(["merge-reports", *shards, "--report-dir", str(merged)]) == code
    out = capsys.readouterr().out
    total = len(_report(whole)["cases"])
    assert sum(sizes) == total
    assert f"merged 3 shards: {total} cases: " in out
    one, joined = _report(whole), _report(merged)
    assert verdicts(joined) == verdicts(one)
    assert {k: v for k, v in joined["summary"].items() if k != "duration"} == {
        k: v for k, v in one["summary"].items() if k != "duration"
    }
    assert joined["matrix"] == one["matrix"] and joined["adapters"] == one["adapters"]
    assert joined["suite"] == one["suite"] and joined["selection"]["merged"] == ["1/3", "2/3", "3/3"]
    assert sorted(p.name for p in merged.iterdir()) == ["junit.xml", "report.html", "report.json", "report.md"]


def test_a_shard_that_holds_no_case_writes_an_empty_report_and_exits_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["run", "--adapter", "openai_chat", "--scenarios", "basic/get_time", "--cassette-dir", str(CASSETTES)]
    argv += ["-j", "1", "--format", "json"]
    assert main([*argv, "--shard", "2/2", "--report-dir", str(tmp_path / "2")]) == 0
    assert "--shard 2/2: this shard holds none of the selected cases" in capsys.readouterr().out
    assert _report(tmp_path / "2")["cases"] == []
    assert main([*argv, "--shard", "1/2", "--report-dir", str(tmp_path / "1")]) == 0
    assert main(["merge-reports", str(tmp_path / "1"), str(tmp_path / "2"), "--report-dir", str(tmp_path / "m")]) == 0
    assert len(_report(tmp_path / "m")["cases"]) == 2


@pytest.mark.parametrize("command", ["run", "certify"])
@pytest.mark.parametrize(
    ("shard", "said"),
    [
        ("0/3", "--shard 0/3: K counts from 1 to N=3"),
        ("3/2", "--shard 3/2: K counts from 1 to N=2"),
        ("x", "--shard 'x' is not K/N"),
        ("1/0", "--shard 1/0: N, the number of shards, must be at least 1"),
    ],
)
def test_a_bad_shard_is_a_usage_error_naming_the_flag(
    command: str, shard: str, said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [command, "--shard", shard, "--report-dir", str(tmp_path / "r")]
    if command == "certify":
        argv += ["--client", OPENAI_DRIVER]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"conformance {command}: error: {said}" in err
    assert "e.g. --shard 1/3 --shard 2/3 --shard 3/3" in err
    assert not (tmp_path / "r").exists()


def test_bad_jobs_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["certify", "--client", OPENAI_DRIVER, "--jobs", "0", "--report-dir", str(tmp_path)]) == 2
    assert "--jobs 0: must be at least 1" in capsys.readouterr().err


def _shard_reports(tmp_path: Path, count: int) -> list[Path]:
    argv = ["run", "--adapter", "openai_chat", "--scenarios", "basic/*", "--cassette-dir", str(CASSETTES)]
    argv += ["-j", "1", "--quiet", "--format", "json"]
    folders = []
    for k in range(1, count + 1):
        folder = tmp_path / f"shard{k}"
        assert main([*argv, "--shard", f"{k}/{count}", "--report-dir", str(folder)]) == 0
        folders.append(folder)
    return folders


def test_merge_reports_refuses_what_is_not_the_shards_of_one_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one, two, three = _shard_reports(tmp_path, 3)
    out = tmp_path / "merged"
    capsys.readouterr()

    def refused(*reports: str | Path) -> str:
        assert main(["merge-reports", *map(str, reports), "--report-dir", str(out)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("conformance merge-reports: error: "), err
        return err

    assert "shard 2/3 of the run is missing (given: 1/3, 3/3)" in refused(one, three)
    assert "shard 1/3 is also in" in refused(one, one, two, three)
    other = tmp_path / "other.json"
    data = json.loads((two / "report.json").read_text(encoding="utf-8"))
    data["suite"]["fingerprint"] = "0" * 64
    other.write_text(json.dumps(data), encoding="utf-8")
    said = refused(one, other, three)
    assert f"{other}: made by a different suite than {one / 'report.json'}" in said
    assert "re-run every shard with the same conformance" in said
    (tmp_path / "notes.txt").write_text("not json", encoding="utf-8")
    assert f"{tmp_path / 'notes.txt'}: not JSON" in refused(one, tmp_path / "notes.txt")
    (tmp_path / "list.json").write_text("[1, 2]", encoding="utf-8")
    assert "list.json: not a conformance JSON report" in refused(tmp_path / "list.json")
    assert "nowhere.json: no such file" in refused(tmp_path / "nowhere.json")
    assert "a folder without report.json" in refused(tmp_path)
    assert not out.exists()
    assert main(["merge-reports", str(one), str(three), "--allow-partial", "--report-dir", str(out)]) == 1
    assert "merged without shard 2/3" in capsys.readouterr().err
    assert _report(out)["incomplete"].startswith("shards missing: 2/3")


def test_the_report_names_the_model_and_the_equivalence_table_used(tmp_path: Path) -> None:
    table = tmp_path / "mine.md"
    table.write_text(
        "## Equivalences\n\n| id | wire | path | value | when | why | source |\n|---|---|---|---|---|---|---|\n"
        "| mine-a | * | `$.x` | `1` | | why | https://x.test |\n",
        encoding="utf-8",
    )
    argv = ["certify", "--client", OPENAI_DRIVER, "--scenarios", "basic/get_time", "-k", "non_stream"]
    argv += ["--cassette-dir", str(CASSETTES), "-j", "1", "--quiet", "--format", "json"]
    assert main([*argv, "--report-dir", str(tmp_path / "a")]) == 0
    assert main([*argv, "--model", "gpt-x", "--equivalences", str(table), "--report-dir", str(tmp_path / "b")]) == 0
    plain, mine = _report(tmp_path / "a"), _report(tmp_path / "b")
    assert plain["adapters"][0]["model"] != "gpt-x" and mine["adapters"][0]["model"] == "gpt-x"
    assert mine["selection"]["model"] == "gpt-x" and plain["selection"]["model"] is None
    assert mine["suite"]["equivalences"] != plain["suite"]["equivalences"]
    assert mine["suite"]["fingerprint"] != plain["suite"]["fingerprint"]
    assert mine["suite"]["scenarios"] == plain["suite"]["scenarios"]
