"""The CI conveniences of ``conformance run`` and ``certify`` end to end (docs/ci.md): baselines,
``--last-failed``, ``--version`` and the rerun command printed under a failing case.

The failures come from ACME's third-party Hermes adapter (``tests/data/third_party``) without its
declared known gaps: it drops the text before a tool call, so ``basic/text_before_call`` fails
``roundtrip.text`` in both modes while ``basic/get_time`` passes. ``acme_versions.py`` makes two later
releases of it that gain defects in ``roundtrip.calls`` (a check that already fails gains a new one).

The signatures expected here follow from the checks' sources: ``roundtrip.text`` reports the text at
``$.text``, expected and actual strings (``conformance/checks/roundtrip.py``, ``check_roundtrip``);
``roundtrip.calls`` a wrong name at ``$.tool_calls[n].name`` (strings) and empty ids at
``$.tool_calls[*].id`` with no expected value and the list of ids (``_calls``)."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance import __version__
from conformance.cli import main
from conformance.cli.plans import rerun_command
from conformance.pipeline.targets import client_rerun_words
from conformance.traffic.safe_yaml import load_yaml
from conformance.verdicts import CaseResult

ROOT = Path(__file__).resolve().parents[2]
THIRD_PARTY = ROOT / "tests" / "data" / "third_party"
CASSETTES = ROOT / "cassettes"
BUGGY = "buggy_acme:BUGGY"
TEXT_BEFORE_CALL = "buggy_acme::basic/text_before_call::"
TEXT_SIG = "roundtrip.text at $.text: string -> string"
NAME_SIG = "roundtrip.calls at $.tool_calls[*].name: string -> string"
IDS_SIG = "roundtrip.calls at $.tool_calls[*].id: none -> array"
VERSIONS = """
import dataclasses

from acme_agents.hermes_adapter import ACME_HERMES

from conformance.model import ToolCall


def _release(change):
    # the decoded (non-streamed) calls changed by ``change``; the text before them still dropped
    def response_from_wire(body, /, *, tools=()):
        response = ACME_HERMES.response_from_wire(body, tools=tools)
        parts = tuple(change(p) if isinstance(p, ToolCall) else p for p in response.parts)
        return dataclasses.replace(response, parts=parts)

    return dataclasses.replace(ACME_HERMES, name="buggy_acme", known_gaps={}, response_from_wire=response_from_wire)


def _misnamed(call):
    return dataclasses.replace(call, name=call.name.upper())


V1_1 = _release(_misnamed)  # also misnames the tool it decodes
V1_2 = _release(lambda call: dataclasses.replace(_misnamed(call), id=""))  # and then loses the call ids too
"""


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A directory with ``buggy_acme.py`` (on ``sys.path``) and the working directory set to it."""
    (tmp_path / "buggy_acme.py").write_text(
        "import dataclasses\n"
        "from acme_agents.hermes_adapter import ACME_HERMES\n"
        "BUGGY = dataclasses.replace(ACME_HERMES, name='buggy_acme', known_gaps={})\n",
        encoding="utf-8",
    )
    (tmp_path / "acme_versions.py").write_text(VERSIONS, encoding="utf-8")
    monkeypatch.syspath_prepend(str(THIRD_PARTY))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    sys.modules.pop("buggy_acme", None)
    sys.modules.pop("acme_versions", None)


def conformance_run(*extra: str, keyword: str = "text_before_call or get_time", adapter: str = BUGGY) -> list[str]:
    return [
        "run",
        "--adapter",
        adapter,
        "-k",
        keyword,
        "--cassette-dir",
        str(CASSETTES),
        "--report-dir",
        "reports",
        "--jobs",
        "1",
        *extra,
    ]


def write(path: Path, entries: list[dict[str, Any]], version: int = 2) -> None:
    path.write_text(json.dumps({"version": version, "entries": entries}), encoding="utf-8")


def statuses(report_dir: Path) -> dict[str, str]:
    report = json.loads((report_dir / "report.json").read_text(encoding="utf-8"))
    return {case["id"]: case["status"] for case in report["cases"]}


def known(mode: str, reason: str = "ACME-1234: drops the text before a call") -> dict[str, Any]:
    return {"case": TEXT_BEFORE_CALL + mode, "reason": reason, "signatures": [TEXT_SIG]}


def checks(report_dir: Path, case_id: str) -> dict[str, tuple[str, str]]:
    """The checks of one case of the JSON report that did not pass: check id -> (status, message)."""
    report = json.loads((report_dir / "report.json").read_text(encoding="utf-8"))
    (case,) = [c for c in report["cases"] if c["id"] == case_id]
    return {v["check"]: (v["status"], v["message"]) for v in case["checks"] if v["status"] != "pass"}


def test_without_a_baseline_the_failures_fail_the_run(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(conformance_run()) == 1
    assert statuses(workdir / "reports") == {
        "buggy_acme/basic/get_time/non_stream": "pass",
        "buggy_acme/basic/get_time/stream": "pass",
        "buggy_acme/basic/text_before_call/non_stream": "fail",
        "buggy_acme/basic/text_before_call/stream": "fail",
    }


def test_update_then_fill_in_the_reasons_then_only_new_failures_fail(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    baseline = workdir / "conformance-baseline.yaml"
    assert main(conformance_run("--update-baseline")) == 1  # written, but its entries have no reason yet
    out = capsys.readouterr().out
    assert f"baseline: wrote 2 entries to {baseline.name}\n" in out
    assert f"baseline {baseline.name}: give each entry a reason (an issue link, the known bug)" in out
    assert "\n2 entries of 2 have none (and accept nothing until then):\n" in out
    assert f"\n  entry 1 ({TEXT_BEFORE_CALL}non_stream): {TEXT_SIG}\n  entry 2 ({TEXT_BEFORE_CALL}stream): " in out
    assert set(statuses(workdir / "reports").values()) == {"pass", "fail"}  # the report agrees: nothing accepted
    assert load_yaml(baseline.read_text(encoding="utf-8")) == {
        "version": 2,
        "entries": [
            {"case": TEXT_BEFORE_CALL + "non_stream", "reason": "", "signatures": [TEXT_SIG]},
            {"case": TEXT_BEFORE_CALL + "stream", "reason": "", "signatures": [TEXT_SIG]},
        ],
    }

    # the placeholders must be filled before the baseline is used
    assert main(conformance_run("--baseline", str(baseline))) == 2
    err = capsys.readouterr().err
    assert err.splitlines()[:4] == [
        f"conformance run: error: baseline {baseline}: give each entry a reason (an issue link, the known bug), "
        "or fix the failure and delete the entry",
        "2 entries of 2 have none (and accept nothing until then):",
        f"  entry 1 ({TEXT_BEFORE_CALL}non_stream): {TEXT_SIG}",
        f"  entry 2 ({TEXT_BEFORE_CALL}stream): {TEXT_SIG}",
    ]

    # filled in: the baselined failures pass the run, reported xfail with the reason in every format
    write(baseline, [known("non_stream"), known("stream")])
    assert main(conformance_run("--baseline", str(baseline))) == 0
    out = capsys.readouterr().out
    assert "baseline: 2 known failures accepted as xfail" in out
    assert "buggy_acme         ..xx\n" in out  # the progress line shows them baselined too
    reports = workdir / "reports"
    assert set(statuses(reports).values()) == {"pass", "xfail"}
    assert statuses(reports)["buggy_acme/basic/text_before_call/stream"] == "xfail"
    reason = f"baselined ({baseline}): ACME-1234: drops the text before a call"
    for name in ("report.json", "report.md", "report.html", "junit.xml"):
        assert reason in (reports / name).read_text(encoding="utf-8"), name

    # only one mode listed: the other one is a new failure and fails the run
    write(baseline, [known("stream")])
    assert main(conformance_run("--baseline", str(baseline))) == 1
    out = capsys.readouterr().out
    assert "e.g. basic/text_before_call [non_stream]" in out  # the new defect's evidence
    assert f"new defect (not in baseline {baseline}): {TEXT_SIG} in 1 case: {TEXT_BEFORE_CALL}non_stream" in out
    assert statuses(reports)["buggy_acme/basic/text_before_call/stream"] == "xfail"


def test_a_stale_entry_warns_and_fails_under_strict_baseline(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    baseline = workdir / "bl.yaml"
    fixed = {"case": "buggy_acme::basic/get_time::stream", "reason": "ACME-7", "signatures": [NAME_SIG]}
    write(baseline, [known("non_stream"), known("stream"), fixed])
    line = f"buggy_acme::basic/get_time::stream: {NAME_SIG}: baselined in {baseline} (ACME-7) but no longer found: "
    line += "delete it"
    assert main(conformance_run("--baseline", str(baseline))) == 0
    assert f"warning: stale baseline entry: {line}" in capsys.readouterr().out
    assert main(conformance_run("--baseline", str(baseline), "--strict-baseline")) == 1
    out = capsys.readouterr().out
    assert f"stale baseline entry: {line}" in out and "warning:" not in out
    assert statuses(workdir / "reports")["buggy_acme/basic/get_time/stream"] == "stale"
    assert checks(workdir / "reports", "buggy_acme/basic/get_time/stream") == {"roundtrip.calls": ("stale", line)}


def test_update_baseline_fails_while_an_entry_it_writes_has_no_reason(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Even when every case that ran passes: an entry kept for a case not run, still without a reason."""
    baseline = workdir / "bl.yaml"
    elsewhere = {"case": "buggy_acme::basic/single_call::stream", "signatures": [NAME_SIG]}
    write(baseline, [elsewhere])
    command = conformance_run("--baseline", str(baseline), "--update-baseline", keyword="get_time")
    assert main(command) == 1
    out = capsys.readouterr().out
    assert f"  entry 1 (buggy_acme::basic/single_call::stream): {NAME_SIG}\n" in out
    assert set(statuses(workdir / "reports").values()) == {"pass"}
    assert load_yaml(baseline.read_text(encoding="utf-8"))["entries"] == [{**elsewhere, "reason": ""}]  # kept
    write(baseline, [{**elsewhere, "reason": "ACME-8"}])
    assert main(command) == 0
    assert "no reason" not in capsys.readouterr().out


def test_a_baseline_that_cannot_be_written_fails_the_run_and_the_reports_are_written(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workdir / "not_a_folder").write_text("", encoding="utf-8")
    assert main(conformance_run("--baseline", "not_a_folder/bl.yaml", "--update-baseline")) == 1
    err = capsys.readouterr().err
    assert err.startswith("conformance run: error: baseline not_a_folder/bl.yaml: cannot write it (")
    assert err.count("\n") == 1
    assert statuses(workdir / "reports")["buggy_acme/basic/text_before_call/stream"] == "fail"


def test_strict_baseline_needs_a_baseline(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(conformance_run("--strict-baseline")) == 2
    assert "--strict-baseline needs --baseline FILE" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("signature", "problem"),
    [
        (
            "roundtrip.txt at $.text: string -> string",
            "unknown check id 'roundtrip.txt' (did you mean 'roundtrip.text'? valid: client.call_ids, ",
        ),
        ("roundtrip.text at $.text: str -> string", "unknown expected kind 'str' (did you mean 'string'? valid: none,"),
        ("roundtrip.text: the text is dropped", "not a signature: write '<check> at <path>: <expected-kind> ->"),
        ("roundtrip.calls at $.tool_calls[0].name: string -> string", "write '$.tool_calls[*].name'"),
    ],
)
def test_a_malformed_signature_in_the_baseline_is_a_usage_error(
    workdir: Path, capsys: pytest.CaptureFixture[str], signature: str, problem: str
) -> None:
    write(workdir / "bl.yaml", [known("non_stream"), {**known("stream"), "signatures": [TEXT_SIG, signature]}])
    assert main(conformance_run("--baseline", "bl.yaml")) == 2
    err = capsys.readouterr().err
    assert (
        f"conformance run: error: baseline bl.yaml: entry 2 ({TEXT_BEFORE_CALL}stream): signature 2 {signature!r}: "
        in err
    )
    assert problem in err
    assert not (workdir / "reports").exists()  # refused before anything ran


def test_a_new_defect_in_a_check_that_already_fails_fails_the_run(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Release 1.1 misnames the tool: baselined. Release 1.2 also loses the call ids, in the same check
    (``roundtrip.calls``) of the same case: the run fails naming the new signature, and the known
    defects stay XFAIL."""
    bl = workdir / "bl.yaml"
    v1_1 = conformance_run("--baseline", str(bl), adapter="acme_versions:V1_1", keyword="text_before_call")
    v1_2 = conformance_run("--baseline", str(bl), adapter="acme_versions:V1_2", keyword="text_before_call")
    assert main([*v1_1, "--update-baseline"]) == 1  # the new entries have no reason yet
    non_stream, stream = load_yaml(bl.read_text(encoding="utf-8"))["entries"]
    assert non_stream == {"case": TEXT_BEFORE_CALL + "non_stream", "reason": "", "signatures": [NAME_SIG, TEXT_SIG]}
    assert stream["case"] == TEXT_BEFORE_CALL + "stream" and TEXT_SIG in stream["signatures"]
    non_stream["reason"] = stream["reason"] = "ACME-1300: 1.1 drops the text and misnames the tool"
    write(bl, [non_stream, stream])
    assert main(v1_1) == 0
    assert "baseline: " in capsys.readouterr().out

    assert main(v1_2) == 1
    out = capsys.readouterr().out
    assert f"new defect (not in baseline {bl}): {IDS_SIG} in 1 case: {TEXT_BEFORE_CALL}non_stream" in out
    assert "e.g. basic/text_before_call [non_stream]" in out  # the new defect's evidence
    reports = workdir / "reports"
    assert statuses(reports) == {
        "buggy_acme/basic/text_before_call/non_stream": "fail",
        "buggy_acme/basic/text_before_call/stream": "xfail",
    }
    reason = f"baselined ({bl}): ACME-1300: 1.1 drops the text and misnames the tool"
    assert checks(reports, "buggy_acme/basic/text_before_call/non_stream") == {
        "roundtrip.calls": ("fail", f"new defect (not in baseline {bl}): {IDS_SIG}"),
        "roundtrip.text": ("xfail", reason),
    }
    report = json.loads((reports / "report.json").read_text(encoding="utf-8"))
    shown = {f["signature"] for c in report["cases"] for v in c["checks"] for f in v["findings"]}
    assert {IDS_SIG, NAME_SIG, TEXT_SIG} <= shown  # where a user copies a signature from (docs/ci.md)
    for name in ("report.md", "report.html", "junit.xml"):  # each escapes the signature its own way
        assert "new defect (not in baseline" in (reports / name).read_text(encoding="utf-8"), name


def test_a_version_1_baseline_is_refused_then_migrated_by_update(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The version-1 form of the baseline above accepted ``roundtrip.calls`` as a whole, so release 1.2's
    new defect passed; it is refused with how to migrate, and the update carries each reason over to
    the signatures of its check."""
    bl = workdir / "bl.yaml"
    why_calls, why_text = "ACME-1301: 1.1 misnames the tool", "ACME-1234: drops the text before a call"
    entries = [
        {"case": TEXT_BEFORE_CALL + "non_stream", "check": "roundtrip.calls", "reason": why_calls},
        {"case": TEXT_BEFORE_CALL + "non_stream", "check": "roundtrip.text", "reason": why_text},
        {"case": TEXT_BEFORE_CALL + "stream", "check": "roundtrip.text", "reason": why_text},
        {"case": TEXT_BEFORE_CALL + "stream", "check": "streaming.fold", "reason": why_calls},  # the modes differ
        {"case": "buggy_acme::basic/single_call::stream", "check": "roundtrip.calls", "reason": "ACME-2"},
    ]
    write(bl, entries, version=1)
    command = conformance_run("--baseline", str(bl), adapter="acme_versions:V1_1", keyword="text_before_call")
    assert main(command) == 2
    err = capsys.readouterr().err
    assert f"conformance run: error: baseline {bl}: version: version 1 accepts whole failing checks" in err
    assert "Migrate: run the same command once with --update-baseline" in err

    assert main([*command, "--update-baseline"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert f"baseline: migrated {bl} from version 1 to signatures" in out
    assert (
        "1 entry of cases this run did not run could not be carried over (buggy_acme::basic/single_call::stream "
        "roundtrip.calls): run them too and update again" in out
    )
    migrated = load_yaml(bl.read_text(encoding="utf-8"))
    assert migrated["version"] == 2
    non_stream = [e for e in migrated["entries"] if e["case"] == TEXT_BEFORE_CALL + "non_stream"]
    assert non_stream == [
        {"case": TEXT_BEFORE_CALL + "non_stream", "reason": why_calls, "signatures": [NAME_SIG]},
        {"case": TEXT_BEFORE_CALL + "non_stream", "reason": why_text, "signatures": [TEXT_SIG]},
    ]
    assert all(e["reason"] for e in migrated["entries"])  # every reason carried over: usable as it is
    assert main(command) == 0
    capsys.readouterr()
    v1_2 = conformance_run("--baseline", str(bl), adapter="acme_versions:V1_2", keyword="text_before_call")
    assert main(v1_2) == 1
    assert f"new defect (not in baseline {bl}): {IDS_SIG}" in capsys.readouterr().out


def test_last_failed_reruns_exactly_the_failed_cases(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(conformance_run("--last-failed")) == 2
    assert "--last-failed: no report at reports/report.json" in capsys.readouterr().err
    assert main(conformance_run(keyword="text_before_call or get_time or single_call")) == 1
    assert len(statuses(workdir / "reports")) == 6
    assert main(conformance_run("--last-failed", keyword="buggy")) == 1
    assert statuses(workdir / "reports") == {
        "buggy_acme/basic/text_before_call/non_stream": "fail",
        "buggy_acme/basic/text_before_call/stream": "fail",
    }
    assert "2 cases: 2 fail" in capsys.readouterr().out
    # -k still narrows the rerun
    assert main(conformance_run("--last-failed", keyword="not non_stream")) == 1
    assert statuses(workdir / "reports") == {"buggy_acme/basic/text_before_call/stream": "fail"}
    # nothing failed last time: nothing runs, and it says so
    assert main(conformance_run(keyword="get_time")) == 0
    capsys.readouterr()
    assert main(conformance_run("--last-failed")) == 0
    assert (
        "--last-failed: no case failed, errored or went stale in reports/report.json: nothing to rerun"
        in capsys.readouterr().out
    )


def test_the_printed_rerun_command_reruns_that_case(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(conformance_run("-v")) == 1  # -v: every failing case, each with its rerun command
    out = capsys.readouterr().out
    reruns = [line.strip().removeprefix("rerun: ") for line in out.splitlines() if line.strip().startswith("rerun: ")]
    expected = [
        f"conformance run --adapter {BUGGY} --scenarios basic/text_before_call --cassette-dir {CASSETTES} "
        f"-k {TEXT_BEFORE_CALL}{mode}"
        for mode in ("non_stream", "stream")
    ]
    assert reruns[-2:] == expected and set(reruns[:-2]) <= set(expected)  # first each defect's evidence case
    reruns = expected
    markdown = (workdir / "reports" / "report.md").read_text(encoding="utf-8")
    assert all(f"```sh\n{command}\n```" in markdown for command in reruns)
    words = shlex.split(reruns[1])
    assert words[0] == "conformance"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(workdir), str(THIRD_PARTY)])}
    done = subprocess.run(
        [sys.executable, "-m", "conformance", *words[1:], "--report-dir", "again", "--quiet"],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert statuses(workdir / "again") == {"buggy_acme/basic/text_before_call/stream": "fail"}


def test_certify_rerun_commands_name_the_client_python_and_wire() -> None:
    args = argparse.Namespace(
        client="drivers.py:CLIENT",
        python=".venvs/x/bin/python",
        intercept=False,
        scenarios=None,
        checks="client",
        cassette_dir=None,  # the bundled cassettes: nothing to name
    )
    case = CaseResult(adapter="openai-sdk/anthropic", scenario="basic/get_time", mode="stream", status="fail")
    assert rerun_command(
        args, case, client_rerun_words(args.client, case.adapter, python=args.python, intercept=args.intercept)
    ) == (
        "conformance certify --client drivers.py:CLIENT --python .venvs/x/bin/python --wires anthropic "
        "--scenarios basic/get_time --checks client -k openai-sdk/anthropic::basic/get_time::stream"
    )
    args.cassette_dir = ["mine", "theirs"]  # the user's folders (repeatable) are named again, in order
    assert "--cassette-dir mine --cassette-dir theirs -k" in rerun_command(
        args, case, client_rerun_words(args.client, case.adapter, python=args.python, intercept=args.intercept)
    )


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"conformance {__version__}\n"


def test_the_documented_baseline_and_workflow_are_valid() -> None:
    """docs/ci.md: its baseline example loads, and its workflow uploads the JUnit and HTML reports of a
    ``conformance run`` whose options the parser accepts."""
    import re
    import textwrap

    import yaml

    from conformance.cli import build_parser
    from conformance.pipeline.selection import CHECK_IDS
    from conformance.run.baseline import parse_baseline

    text = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```yaml\n(.*?)```", text, re.S)
    valid = [check for ids in CHECK_IDS.values() for check in ids]
    example = parse_baseline(load_yaml(blocks[0]), "docs/ci.md", check_ids=valid)
    # the documented signature is the one a run writes for the dropped text (the update test above)
    assert [e.signatures for e in example.entries] == [(TEXT_SIG,), ()]
    getting_started = re.search(r"Getting started.*?```\n(.*?)```", text, re.S)
    assert getting_started is not None
    commands = [
        line.partition("   #")[0] for line in getting_started[1].splitlines() if line.startswith("conformance ")
    ]
    assert len(commands) == 2
    for command in commands:
        build_parser().parse_args(shlex.split(command)[1:])  # exits 2 on an option the CLI does not take
    workflow = yaml.safe_load(blocks[1])
    steps = workflow["jobs"]["conformance"]["steps"]
    upload = next(s for s in steps if s.get("uses", "").startswith("actions/upload-artifact"))
    assert {"conformance-reports/junit.xml", "conformance-reports/report.html"} <= set(upload["with"]["path"].split())
    run = next(s["run"] for s in steps if s.get("name") == "Conformance")
    args = build_parser().parse_args(shlex.split(run)[1:])
    assert (args.baseline, args.strict_baseline, args.report_dir) == (
        "conformance-baseline.yaml",
        True,
        "conformance-reports",
    )
    certify = yaml.safe_load(textwrap.dedent(blocks[2]))  # the steps that differ
    words = shlex.split(next(s["run"] for s in certify if s["name"] == "Certify"))
    args = build_parser().parse_args(words[1:])
    assert (args.client, args.wires, args.baseline) == (
        "drivers/mylib_driver.py:CLIENT",
        "openai_chat,anthropic",
        "conformance-baseline.yaml",
    )


TWICE = """
from conformance.adapters import for_format
from conformance.clients.translator import TranslatorClient

CLIENT = TranslatorClient(for_format("anthropic"), name="acme")


class Twice:
    name = "twice"
    wires = CLIENT.wires
    known_gaps = {}

    def complete(self, call):
        CLIENT.complete(call)
        return CLIENT.complete(call)

    def error_info(self, exc):
        return CLIENT.error_info(exc)


TWICE = Twice()
"""


def test_certify_takes_a_baseline_and_prints_a_rerun_command_that_works(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A client that sends every request twice fails client.one_request (non-streaming); baselined, the
    run passes."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "twice_driver.py").write_text(TWICE, encoding="utf-8")
    command = ["certify", "--client", "twice_driver.py:TWICE", "--scenarios", "basic/get_time"]
    command += ["--cassette-dir", str(CASSETTES), "--report-dir", "reports"]
    assert main(command) == 1
    out = capsys.readouterr().out
    reruns = [line.strip().removeprefix("rerun: ") for line in out.splitlines() if line.strip().startswith("rerun: ")]
    assert reruns == [
        "conformance certify --client twice_driver.py:TWICE --wires anthropic --scenarios basic/get_time "
        f"--cassette-dir {CASSETTES} -k twice/anthropic::basic/get_time::non_stream"
    ]
    assert main([*command, "--update-baseline"]) == 1  # written without reasons: they are to be given
    assert "  entry 1 (twice/anthropic::basic/get_time::non_stream): client.one_request" in capsys.readouterr().out
    baseline = load_yaml((tmp_path / "conformance-baseline.yaml").read_text(encoding="utf-8"))
    # client.one_request counts the requests of a turn at "$", expected 1 (conformance/checks/client.py)
    assert [(e["case"], e["signatures"]) for e in baseline["entries"]] == [
        ("twice/anthropic::basic/get_time::non_stream", ["client.one_request at $: number -> number"])
    ]
    for entry in baseline["entries"]:
        entry["reason"] = "TW-1: the retry layer sends every request twice"
    (tmp_path / "conformance-baseline.yaml").write_text(json.dumps(baseline), encoding="utf-8")
    capsys.readouterr()
    assert main([*command, "--baseline", "conformance-baseline.yaml"]) == 0
    assert "twice: 2 cases: 1 pass, 1 xfail" in capsys.readouterr().out

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    words = shlex.split(reruns[0])[1:]
    done = subprocess.run(
        [sys.executable, "-m", "conformance", *words, "--report-dir", "again", "--quiet"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert statuses(tmp_path / "again") == {"twice/anthropic/basic/get_time/non_stream": "fail"}
