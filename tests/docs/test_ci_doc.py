"""docs/ci.md stays true. "Using every core, and sharding across a CI matrix": its commands run as
written and merge into the report of one run, and its GitHub Actions matrix is a workflow whose steps
the CLI takes, each shard's upload being what the merge step reads. Every GitHub Actions workflow of
the page runs (``Runner``): its ``run:`` steps as written, in a user's project, with the suite
installed the way the page says (a ``pip install`` of the suite's checkout, built into a wheel)."""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shlex
import shutil
import subprocess
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from conformance.cli import build_parser, main
from conformance.run.shard import parse_shard
from tests.docs._project import blocks, copy_suite, fresh_venv, launchers, write_mylib, write_project

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


# --------------------------------------------------------------------------------------------
# Every GitHub Actions workflow of docs/ci.md runs: its `run:` steps as written
# --------------------------------------------------------------------------------------------

SUBSTITUTIONS = {
    # the library a driver certifies: no index has the docs' placeholder, so pip installs the test's
    # stand-in (tests/docs/_project.py: mylib 1.2.3) from its folder
    "mylib==1.2.3": "{mylib}",
}
"""What a ``run:`` step would fetch from the network, and the local equivalent put in its place."""


@dataclass
class Runner:
    """A GitHub Actions runner, locally. ``actions/setup-python`` is a fresh virtualenv with the suite's
    dependencies (tests/docs/_project.py ``fresh_venv``: no index) first on ``PATH``; a ``run:`` step
    runs with ``bash -e`` (GitHub's default shell) in the job's workspace; ``actions/checkout`` of the
    suite's repository is a copy of this checkout, and of the project itself the workspace the test
    wrote; ``upload-artifact`` and ``download-artifact`` copy to and from a local store (GitHub's
    layout: an artifact keeps its paths below their common folder, and a pattern downloads each
    artifact into a folder of its name)."""

    root: Path
    bin: Path
    mylib: Path
    log: list[str] = field(default_factory=list)

    def job(
        self, steps: list[dict[str, Any]], workspace: Path, matrix: dict[str, str] | None = None
    ) -> list[int | None]:
        """Each step's exit code (None: a step that is not a `run:` one, or skipped after a failure)."""
        summary = workspace / ".step-summary.md"
        env = {k: v for k, v in os.environ.items() if not k.startswith("CONFORMANCE_") and k != "PYTHONPATH"}
        env |= {
            "PATH": f"{self.bin}{os.pathsep}{env.get('PATH', '')}",
            "GITHUB_STEP_SUMMARY": str(summary),
            "GITHUB_WORKSPACE": str(workspace),
            "NO_COLOR": "1",
        }
        failed = False
        codes: list[int | None] = []
        for step in steps:
            if failed and step.get("if") != "always()":
                codes.append(None)
                continue
            code = self.step(step, workspace, env, matrix or {})
            failed = failed or bool(code)
            codes.append(code)
        return codes

    def step(self, step: dict[str, Any], workspace: Path, env: dict[str, str], matrix: dict[str, str]) -> int | None:
        def fill(text: str) -> str:
            for key, value in matrix.items():
                text = text.replace("${{ matrix." + key + " }}", value)
            return text

        uses, given = step.get("uses", ""), {k: fill(str(v)) for k, v in step.get("with", {}).items()}
        if "run" in step:
            script = fill(step["run"])
            for online, local in SUBSTITUTIONS.items():
                script = script.replace(online, local.format(mylib=self.mylib))
            done = subprocess.run(
                ["bash", "-e", "-c", script], cwd=workspace, env=env, capture_output=True, text=True, timeout=900
            )
            self.log.append(f"$ {script}\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
            return done.returncode
        if uses.startswith("actions/checkout@"):
            if "repository" in given:  # the suite, at the version pinned
                assert given["ref"] and given["path"], step
                copy_suite(workspace / given["path"])
            return None
        if uses.startswith("actions/setup-python@"):
            return None
        if uses.startswith("actions/upload-artifact@"):
            paths = [workspace / p for p in given["path"].split()]
            files = [f for p in paths for f in ([p] if p.is_file() else sorted(p.rglob("*")) if p.is_dir() else [])]
            assert files, f"nothing to upload at {given['path']}"
            base = Path(os.path.commonpath([p if p.is_dir() else p.parent for p in paths]))
            for file in (f for f in files if f.is_file()):
                target = self.root / "artifacts" / given["name"] / file.relative_to(base)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(file, target)
            return None
        if uses.startswith("actions/download-artifact@"):
            for artifact in sorted((self.root / "artifacts").iterdir()):
                if fnmatch.fnmatchcase(artifact.name, given["pattern"]):
                    shutil.copytree(artifact, workspace / given["path"] / artifact.name)
            return None
        raise AssertionError(f"a step the test does not know how to run: {step}")


@pytest.fixture
def runner(tmp_path: Path) -> Runner:
    return Runner(root=tmp_path, bin=fresh_venv(tmp_path / "python"), mylib=write_mylib(tmp_path / "mylib-1.2.3"))


def _workflows() -> list[Any]:
    return [yaml.safe_load(textwrap.dedent(b.text)) for b in blocks("ci.md") if b.language == "yaml"]


def _project(path: Path, baseline: list[str]) -> Path:
    """A user's project (tests/docs/_project.py) with its committed baseline: what ``baseline`` (a
    command with ``--update-baseline``) writes, every entry given a reason, as docs/ci.md's "Getting
    started" says."""
    project = write_project(path)
    env = launchers(path.parent / "bin") | {
        "PYTHONPATH": os.pathsep.join([str(REPO), str(project), str(path.parent / "mylib-1.2.3")])
    }
    done = subprocess.run(baseline, cwd=project, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode in (0, 1) and (project / "conformance-baseline.yaml").is_file(), done.stderr
    subprocess.run([env["EDITOR"], "conformance-baseline.yaml"], cwd=project, env=env, check=True, timeout=60)
    return project


def test_every_workflow_of_the_page_is_run_below() -> None:
    """The workflows are: the baseline example (not a workflow), the adapter's job, the steps that
    certify a client instead, and the sharded matrix; each test below runs one."""
    found = _workflows()
    assert [type(w).__name__ for w in found] == ["dict", "dict", "list", "dict"]
    assert "entries" in found[0] and [w["name"] for w in (found[1], found[3])] == ["conformance", "certify"]


def test_the_adapter_workflow_runs_and_uploads_its_reports(runner: Runner, tmp_path: Path) -> None:
    workflow = _workflows()[1]
    [job] = workflow["jobs"].values()
    project = _project(
        tmp_path / "work", ["conformance", "run", "--adapter", "my_pkg.adapters:MY_ADAPTER", "--update-baseline"]
    )
    codes = runner.job(job["steps"], project)
    assert [c for c in codes if c is not None] == [0, 0, 0], "\n".join(runner.log)
    assert "conformance 0.1.0" in runner.log[0] or re.search(r"^conformance \S+$", runner.log[0], re.M), runner.log[0]
    # the conformance that ran is the one installed from the suite's checkout, not this checkout
    where = subprocess.run(
        [str(runner.bin / "python"), "-c", "import conformance; print(conformance.__file__)"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    assert Path(where.strip()).is_relative_to(runner.bin.parent), where
    report = json.loads((project / "conformance-reports" / "report.json").read_text(encoding="utf-8"))
    statuses = report["summary"]["statuses"]
    assert statuses["xfail"] > 0 and statuses["fail"] == statuses["error"] == statuses["stale"] == 0
    assert (project / ".step-summary.md").read_text(encoding="utf-8") == (
        project / "conformance-reports" / "report.md"
    ).read_text(encoding="utf-8")
    uploaded = sorted(p.name for p in (tmp_path / "artifacts" / "conformance-reports").iterdir())
    assert uploaded == ["junit.xml", "report.html", "report.json"]


def test_the_client_workflow_certifies_a_library_in_its_own_venv(runner: Runner, tmp_path: Path) -> None:
    """The adapter's job with its Install and Conformance steps replaced by the client's."""
    [job] = _workflows()[1]["jobs"].values()
    instead = {s["name"]: s for s in _workflows()[2]}
    steps = [instead.get({"Conformance": "Certify"}.get(s.get("name", ""), s.get("name", "")), s) for s in job["steps"]]
    assert [s.get("name") for s in steps].count("Certify") == 1
    certify = shlex.split(instead["Certify"]["run"])
    at = certify.index("--strict-baseline")
    update = [*certify[: at - 2], "--update-baseline", *certify[at + 1 :]]  # no --python: in-process, the same cases
    update = [w for i, w in enumerate(update) if w != "--python" and (i == 0 or update[i - 1] != "--python")]
    project = _project(tmp_path / "work", update)
    codes = runner.job(steps, project)
    assert [c for c in codes if c is not None] == [0, 0, 0], "\n".join(runner.log)
    report = json.loads((project / "conformance-reports" / "report.json").read_text(encoding="utf-8"))
    assert {c["adapter"] for c in report["cases"]} == {"mylib/openai_chat", "mylib/anthropic"}
    assert report["summary"]["statuses"]["pass"] > 0 and report["summary"]["statuses"]["fail"] == 0
    # the driver ran in the library's venv, which holds mylib and not the suite
    venv = project / ".venvs" / "mylib" / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [str(venv), "-c", "import mylib, conformance"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "No module named 'conformance'" in done.stderr


def test_the_matrix_workflow_runs_three_shards_and_merges_them(runner: Runner, tmp_path: Path) -> None:
    workflow = _workflows()[3]
    shards, merge = workflow["jobs"]["shard"], workflow["jobs"]["merge"]
    values = [str(v) for v in shards["strategy"]["matrix"]["shard"]]
    codes = {}
    for k in values:  # each shard on a machine of its own
        workspace = write_project(tmp_path / f"shard-machine-{k}")
        codes[k] = runner.job(shards["steps"], workspace, matrix={"shard": k})
        report = json.loads((workspace / f"shard-{k}" / "report.json").read_text(encoding="utf-8"))
        failing = any(report["summary"]["statuses"][s] for s in ("fail", "error", "stale"))
        certify_code = codes[k][[s.get("name") for s in shards["steps"]].index("Certify")]
        assert certify_code == (1 if failing else 0), "\n".join(runner.log)
    workspace = tmp_path / "merge-machine"
    workspace.mkdir()
    merged_codes = runner.job(merge["steps"], workspace)
    merge_code = merged_codes[[s.get("name") for s in merge["steps"]].index("Merge")]
    merged = json.loads((workspace / "conformance-reports" / "report.json").read_text(encoding="utf-8"))
    assert merged["selection"]["merged"] == [f"{k}/{len(values)}" for k in values]
    assert merged["incomplete"] is None
    assert merge_code == (1 if any(merged["summary"]["statuses"][s] for s in ("fail", "error", "stale")) else 0)
    assert {c["adapter"] for c in merged["cases"]} == {"mylib/openai_chat", "mylib/anthropic"}
    assert (tmp_path / "artifacts" / "conformance-reports" / "report.md").is_file()
