"""docs/ci.md, "Using every core, and sharding across a CI matrix": its commands run as written and
merge into the report of one run, and its GitHub Actions matrix is a workflow whose steps the CLI
takes, each shard's upload being what the merge step reads."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
import yaml

from conformance.cli import build_parser, main
from conformance.run.shard import parse_shard

REPO = Path(__file__).resolve().parents[2]
DOC = (REPO / "docs" / "ci.md").read_text(encoding="utf-8")
SECTION = DOC[DOC.index("## Using every core, and sharding across a CI matrix") :]


def _blocks(fence: str) -> list[str]:
    return re.findall(rf"```{fence}\n(.*?)```", SECTION, re.S)


def test_the_sharded_run_and_its_merge_run_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    [block] = _blocks("")
    commands = [shlex.split(line) for line in block.splitlines() if line.startswith("conformance ")]
    assert [c[1] for c in commands] == ["run", "run", "merge-reports"]
    for words in commands:
        assert main(words[1:]) == 0, capsys.readouterr().err
    whole = [*words_of(commands[0], without=("--shard",)), "--report-dir", "whole"]
    assert main(whole[1:]) == 0
    merged = json.loads((tmp_path / "conformance-reports" / "report.json").read_text(encoding="utf-8"))
    one = json.loads((tmp_path / "whole" / "report.json").read_text(encoding="utf-8"))
    assert [(c["id"], c["status"]) for c in merged["cases"]] == [(c["id"], c["status"]) for c in one["cases"]]
    assert merged["selection"]["merged"] == ["1/2", "2/2"]
    assert merged["suite"]["fingerprint"] == one["suite"]["fingerprint"]


def words_of(command: list[str], *, without: tuple[str, ...]) -> list[str]:
    """``command`` without the options ``without`` (and their values) and without ``--report-dir``."""
    kept: list[str] = []
    skip = False
    for word in command:
        if skip:
            skip = False
            continue
        if word in (*without, "--report-dir"):
            skip = True
            continue
        kept.append(word)
    return kept


def test_the_matrix_workflow_shards_certify_and_merges_what_the_shards_upload() -> None:
    [workflow] = [yaml.safe_load(b) for b in _blocks("yaml")]
    shards = workflow["jobs"]["shard"]
    values = shards["strategy"]["matrix"]["shard"]
    assert values == [1, 2, 3] and shards["strategy"]["fail-fast"] is False
    certify = next(s["run"] for s in shards["steps"] if s.get("name") == "Certify")
    upload = next(s for s in shards["steps"] if s.get("uses", "").startswith("actions/upload-artifact"))
    assert upload["if"] == "always()"
    merge_job = workflow["jobs"]["merge"]
    assert merge_job["needs"] == "shard" and merge_job["if"] == "always()"
    download = next(s for s in merge_job["steps"] if s.get("uses", "").startswith("actions/download-artifact"))
    merge = next(s["run"] for s in merge_job["steps"] if s.get("name") == "Merge")
    merge_args = build_parser().parse_args(shlex.split(merge)[1:])
    uploaded = []
    for k in values:
        text = certify.replace("${{ matrix.shard }}", str(k))
        args = build_parser().parse_args(shlex.split(text)[1:])
        assert parse_shard(args.shard) == parse_shard(f"{k}/{len(values)}")
        assert args.format == "json" and args.python == ".venvs/mylib/bin/python"
        name = upload["with"]["name"].replace("${{ matrix.shard }}", str(k))
        assert upload["with"]["path"].replace("${{ matrix.shard }}", str(k)) == f"{args.report_dir}/report.json"
        # download-artifact puts each artifact matching the pattern in <path>/<its name>/
        assert re.fullmatch(download["with"]["pattern"].replace("*", ".*"), name)
        uploaded.append(f"{download['with']['path']}/{name}")
    assert merge_args.reports == uploaded and merge_args.report_dir == "conformance-reports"


def test_the_commands_pages_lines_on_shards_are_commands_the_cli_takes() -> None:
    page = (REPO / "docs" / "commands.md").read_text(encoding="utf-8")
    lines = [line.partition("   #")[0] for line in page.splitlines() if "--shard" in line or "merge-reports" in line]
    lines = [line for line in lines if line.startswith("conformance ")]
    assert [shlex.split(line)[1] for line in lines] == ["certify", "merge-reports"]
    shard = build_parser().parse_args(shlex.split(lines[0])[1:])
    assert parse_shard(shard.shard) == parse_shard("2/3")
    merge = build_parser().parse_args(shlex.split(lines[1])[1:])
    assert merge.reports == ["shard-1", "shard-2", "shard-3"]
