"""What ``conformance run`` and ``conformance certify`` show while the cases run (issue 25): the symbol
block under a heading and its legend, once per run, and a rerun command that pastes back exactly (the
progress itself: tests/console/test_progress.py)."""

from __future__ import annotations

import argparse
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.cli.plans import rerun_command
from conformance.console.output import command_lines, visible_width
from conformance.console.progress import (
    PROGRESS_HEADING,
)
from conformance.pipeline.finish import case_text
from conformance.pipeline.selection import compile_keyword, keyword_literal
from conformance.verdicts import CaseResult

REPO = Path(__file__).resolve().parents[2]
LEGEND = ". pass  F fail  E error  u unsupported  x xfail  c left to the caller  S stale"
CONTROLS = {chr(c) for c in [*range(0x20), *range(0x7F, 0xA0)]} - {"\n"}
HOSTILE = "evil\x1b[2J\nPASS 'q' $(touch pwned) x"


def case(adapter: str, status: str = "pass", scenario: str = "basic/s", mode: str = "stream") -> CaseResult:
    return CaseResult(adapter=adapter, scenario=scenario, mode=mode, status=status)  # type: ignore[arg-type]


@pytest.fixture
def columns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.delenv("FORCE_COLOR", raising=False)


# -- the symbol block: a heading and the legend, once per run ---------------------------------------------


def test_run_and_certify_show_the_heading_and_the_legend_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    selection = ["--scenarios", "basic/*", "--report-dir"]
    code = main(["run", "--adapters", "openai_chat,anthropic", "-j", "1", *selection, str(tmp_path / "run")])
    out = capsys.readouterr().out
    assert code == 0 and out.count(PROGRESS_HEADING) == 1 and out.count(LEGEND) == 1
    assert re.search(r"^openai_chat +\.+$", out, re.M) and re.search(r"^anthropic +\.+$", out, re.M)
    driver = tmp_path / "acme_driver.py"
    driver.write_text(
        "from conformance.adapters import for_format\n"
        "from conformance.clients.translator import TranslatorClient\n"
        'CLIENT = TranslatorClient(for_format("anthropic"), name="acme")\n'
    )
    client = ["--cassette-dir", str(REPO / "cassettes"), "--client", f"{driver}:CLIENT"]
    code = main(["certify", *client, *selection, str(tmp_path / "certify")])
    out = capsys.readouterr().out
    assert code == 0 and out.count(PROGRESS_HEADING) == 1 and out.count(LEGEND) == 1


# -- names from outside, shown escaped ---------------------------------------------------------------------


def test_a_hostile_case_is_shown_escaped_and_its_rerun_pastes_back_exactly(columns: None) -> None:
    failing = case("openai_chat", "fail", scenario=HOSTILE, mode="non_stream")
    args = argparse.Namespace(scenarios=None, checks=None, exhaustive=False, cassette_dir=None, scenarios_dir=None)
    rerun = rerun_command(args, failing, ["run", "--adapter", "openai_chat"])
    for width in (80, 40):
        text = case_text(failing, rerun=rerun, width=width)
        assert not set(text) - {"\n"} & CONTROLS and "\x1b" not in text
        lines = text.splitlines()
        assert lines[0].startswith("FAIL openai_chat evil\\x1b[2J")
        command = [
            line.removeprefix("  rerun: ") for line in lines[lines.index(next(x for x in lines if "rerun:" in x)) :]
        ]
        assert all(visible_width(line) <= width for line in lines)
        script = "\n".join(command).replace("conformance", "printf '%s\\0'", 1)
        words = subprocess.run(["bash", "-c", script], capture_output=True, check=True).stdout.decode().split("\0")
        assert words[:-1] == shlex.split(rerun)[1:]
        assert HOSTILE in words
        selects = compile_keyword(words[-2])  # -k, quoted: the case and no other
        assert selects("openai_chat", HOSTILE, "non_stream") and not selects("openai_chat", HOSTILE, "stream")
    assert command_lines(rerun, 80)  # the plain form stays readable by shlex (the Markdown report's)


@pytest.mark.parametrize("scenario", ["my scenarios/get (the) time", 'a "quoted" id', "back\\slash", "and", "odd/(x"])
def test_a_rerun_command_reruns_a_case_whose_id_has_spaces_parentheses_or_quotes(scenario: str) -> None:
    key = f"openai_chat::{scenario}::stream"
    selects = compile_keyword(keyword_literal(key))
    assert selects("openai_chat", scenario, "stream")
    assert not selects("openai_chat", scenario, "non_stream") and not selects("openai_chat", "other", "stream")
    failing = case("openai_chat", "fail", scenario=scenario)
    args = argparse.Namespace(scenarios=None, checks=None, exhaustive=False, cassette_dir=None, scenarios_dir=None)
    words = shlex.split(rerun_command(args, failing, ["run", "--adapter", "openai_chat"]))
    assert words[words.index("-k") + 1] == keyword_literal(key)
