"""The CI files of ``run`` and ``certify`` under attack (issue 27, point 5 and point 6; docs/ci.md):
``--update-baseline`` on a full disk or through a planted symbolic link, ``--last-failed`` and
``merge-reports`` on a hostile ``report.json``. Each attack ends in one clear line naming the file
and what to do; the reports are written first and stay, and the old baseline stays whole.

The failures come from ACME's third-party Hermes adapter without its declared known gaps, as in
``test_ci.py``: ``basic/text_before_call`` fails ``roundtrip.text`` in both modes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.run.baseline import BaselineEntry, render_baseline

ROOT = Path(__file__).resolve().parents[2]
THIRD_PARTY = ROOT / "tests" / "data" / "third_party"
RUN = ["run", "--adapter", "buggy_acme:BUGGY", "-k", "text_before_call", "--cassette-dir", str(ROOT / "cassettes")]
RUN += ["--report-dir", "reports", "--jobs", "1", "--format", "json,md", "--quiet"]
TEXT_SIG = "roundtrip.text at $.text: string -> string"


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A directory with ``buggy_acme.py`` (on ``sys.path``) and the working directory set to it."""
    (tmp_path / "buggy_acme.py").write_text(
        "import dataclasses\n"
        "from acme_agents.hermes_adapter import ACME_HERMES\n"
        "BUGGY = dataclasses.replace(ACME_HERMES, name='buggy_acme', known_gaps={})\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(THIRD_PARTY))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    sys.modules.pop("buggy_acme", None)


def statuses(report_dir: Path) -> dict[str, str]:
    report = json.loads((report_dir / "report.json").read_text(encoding="utf-8"))
    return {case["id"]: case["status"] for case in report["cases"]}


FAILING = {
    "buggy_acme/basic/text_before_call/non_stream": "fail",
    "buggy_acme/basic/text_before_call/stream": "fail",
}

FULL_DISK = """
import resource, sys
from conformance.cli import main

resource.setrlimit(resource.RLIMIT_FSIZE, (256 * 1024, 256 * 1024))  # a full disk (SIGXFSZ is ignored: EFBIG)
sys.exit(main(sys.argv[1:]))
"""


def test_update_baseline_on_a_full_disk_writes_the_reports_and_leaves_the_old_baseline_whole(workdir: Path) -> None:
    """The baseline was written in place: truncated mid-entry (the next run accepted it)."""
    kept = [  # entries of cases this run does not run: --update-baseline keeps them, so the file grows past 256 KiB
        BaselineEntry(case=f"buggy_acme::basic/elsewhere_{n}::stream", signatures=(TEXT_SIG,), reason=f"ACME-{n}")
        for n in range(3000)
    ]
    old = render_baseline(kept)
    assert len(old) > 256 * 1024
    (workdir / "bl.yaml").write_text(old, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-c", FULL_DISK, *RUN, "--baseline", "bl.yaml", "--update-baseline"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(map(str, (ROOT, THIRD_PARTY, workdir)))},
        cwd=workdir,
    )
    assert done.returncode == 1, done.stderr
    assert done.stderr == (
        "conformance run: error: baseline bl.yaml: cannot write it (File too large); the file is as it was: free "
        "space or fix the path, then run again with --update-baseline\n"
    )
    assert (workdir / "bl.yaml").read_text(encoding="utf-8") == old
    assert statuses(workdir / "reports") == FAILING  # judged by the baseline it tried to write: no reasons yet
    assert (workdir / "reports" / "report.md").exists()
    assert sorted(p.name for p in workdir.iterdir() if p.name.startswith(".")) == []


def test_update_baseline_through_a_planted_link_creates_nothing_elsewhere(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workdir / "ci").mkdir()
    planted = workdir / "planted.yaml"
    (workdir / "ci" / "bl.yaml").symlink_to(planted)  # dangling, out of the baseline's folder
    assert main([*RUN, "--baseline", "ci/bl.yaml", "--update-baseline"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(
        f"conformance run: error: baseline ci/bl.yaml: cannot write it (ci/bl.yaml: a symbolic link to {planted}, "
        "outside the folder ci the file is written in; nothing was written: remove the link, or point it inside "
        "that folder); the file is as it was"
    ), err
    assert err.count("\n") == 1
    assert not planted.exists()
    assert statuses(workdir / "reports") == FAILING


def test_a_link_inside_the_baseline_s_folder_is_followed(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (workdir / "ci" / "baselines").mkdir(parents=True)
    (workdir / "ci" / "bl.yaml").symlink_to("baselines/main.yaml")
    assert main([*RUN, "--baseline", "ci/bl.yaml", "--update-baseline"]) == 1  # no reasons yet
    assert "baseline: wrote 2 entries to ci/bl.yaml" in capsys.readouterr().out
    assert (workdir / "ci" / "bl.yaml").is_symlink()
    assert "roundtrip.text at $.text" in (workdir / "ci" / "baselines" / "main.yaml").read_text(encoding="utf-8")


def deep(levels: int) -> str:
    return '{"report_format": 1, "cases": ' + "[" * levels + "]" * levels + "}"


def test_last_failed_on_a_deeply_nested_report_is_a_usage_error(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It was a RecursionError."""
    (workdir / "reports").mkdir()
    (workdir / "reports" / "report.json").write_text(deep(100_000), encoding="utf-8")
    assert main([*RUN, "--last-failed"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        "conformance run: error: --last-failed: reports/report.json: nests deeper than a conformance report can "
        "(116 levels): past the limit nesting_depth=100"
    ), err
    assert err.count("\n") == 1


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ('{"report_format": true, "cases": []}', "not a conformance JSON report of format 1 (report_format true)"),
        ('{"cases": []}', "not a conformance JSON report of format 1 (no report_format)"),
        ("[1, 2]", "not a conformance JSON report of format 1"),
    ],
)
def test_last_failed_needs_a_report_of_this_format(
    workdir: Path, capsys: pytest.CaptureFixture[str], content: str, said: str
) -> None:
    (workdir / "reports").mkdir()
    (workdir / "reports" / "report.json").write_text(content, encoding="utf-8")
    assert main([*RUN, "--last-failed"]) == 2
    assert f"error: --last-failed: reports/report.json: {said}" in capsys.readouterr().err


def test_last_failed_on_a_report_past_the_size_limit_is_refused_before_it_is_read(
    workdir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (workdir / "reports").mkdir()
    (workdir / "reports" / "report.json").write_text('{"report_format": 1, "cases": []}' + " " * 2000)
    monkeypatch.setenv("CONFORMANCE_LIMITS", "yaml_expanded_bytes=1K")
    assert main([*RUN, "--last-failed"]) == 2
    assert (
        "error: --last-failed: reports/report.json: larger than 1024 bytes: past the limit yaml_expanded_bytes=1024"
        in capsys.readouterr().err
    )


def test_merge_reports_on_a_deeply_nested_report_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "report.json"
    report.write_text(deep(100_000), encoding="utf-8")
    assert main(["merge-reports", str(report), "--report-dir", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"conformance merge-reports: error: {report}: nests deeper than a conformance report"), err
    assert not (tmp_path / "out").exists()


def test_merge_reports_refuses_report_format_true(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "report.json"
    report.write_text('{"report_format": true, "cases": []}', encoding="utf-8")
    assert main(["merge-reports", str(report), "--report-dir", str(tmp_path / "out")]) == 2
    assert f"{report}: not a conformance JSON report of format 1 (report_format true)" in capsys.readouterr().err


def test_a_report_path_linked_out_of_the_report_folder_is_refused_and_the_other_reports_are_written(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workdir / "reports").mkdir()
    victim = workdir / "victim.md"
    victim.write_text("keep me", encoding="utf-8")
    (workdir / "reports" / "report.md").symlink_to(victim)
    assert main(RUN) == 1
    err = capsys.readouterr().err
    assert err.startswith("conformance run: error: report reports/report.md: "), err
    assert (
        f"reports/report.md: a symbolic link to {victim}, outside the folder reports the file is written in; nothing "
        "was written: remove the link, or point it inside that folder\n"
    ) in err
    assert err.count("\n") == 1
    assert victim.read_text(encoding="utf-8") == "keep me"
    assert (workdir / "reports" / "report.md").is_symlink()
    assert statuses(workdir / "reports") == FAILING
