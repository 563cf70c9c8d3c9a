"""The README fits a newcomer's first two minutes and says only what holds: at most 150 lines; its
three commands are the ones CI runs (install, test) or that this file runs (``conformance run``,
whose last lines, as the README shows them, are what it prints); every link resolves; its counts of
adapters and scenarios are the code's; its one picture exists and stays small."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from conformance import __version__
from conformance.adapters import adapter_names, native_adapters, prompt_adapters
from conformance.cli import build_parser
from conformance.scenarios.loader import load_scenarios

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")
NUMBERS = {"five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}
THREE = ['pip install -e ".[dev]"', "conformance run", "pytest"]


def blocks(text: str) -> list[str]:
    """The fenced code blocks of a Markdown text, in order."""
    return re.findall(r"^```[\w-]*\n(.*?)^```", text, re.M | re.S)


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, each space a hyphen."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"), flags=re.M | re.S)
    return {slug(m.group(1)) for m in re.finditer(r"^#{1,6} (.*)$", text, re.M)}


def test_the_readme_is_at_most_150_lines() -> None:
    assert len(README.splitlines()) <= 150


def test_its_commands_are_the_three() -> None:
    first = blocks(README)[0]
    assert first.splitlines() == THREE
    others = [line for block in blocks(README)[1:] for line in block.splitlines()]
    assert not [line for line in others if line.startswith(("pip ", "conformance ", "pytest", "python "))]


def test_install_and_pytest_are_what_ci_runs() -> None:
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    installs = [shlex.split(line) for line in ci if line.startswith("python -m pip install ") and " -e " in line]
    assert installs == [["python", "-m", "pip", "install", "-q", "-e", ".[dev]"]]
    pip = shlex.split(THREE[0])
    assert installs[0][2:] == [pip[0], pip[1], "-q", *pip[2:]]  # the same, but quiet
    assert THREE[2] in ci  # the bare command, as CI runs it


def test_the_install_line_names_this_version() -> None:
    assert f"`Successfully installed ... conformance-{__version__} ...`" in README


def test_the_pytest_line_gives_the_time_docs_testing_measured_and_links_it() -> None:
    """The README's time for ``pytest`` is the default tier's in docs/testing.md (measured there)."""
    said = re.search(
        r"about (\d+) min on 2 cores\s+at rest, measured in \[docs/testing\.md\]\(docs/testing\.md\)", README
    )
    assert said, "the README's pytest line lost its time or its link"
    testing = (REPO / "docs" / "testing.md").read_text(encoding="utf-8")
    [row] = [line for line in testing.splitlines() if line.startswith("| default | `pytest` |")]
    assert f"| {said.group(1)} min " in row, row


def test_each_conformance_command_named_inline_exists() -> None:
    subcommands = next(a for a in build_parser()._actions if a.dest == "command").choices
    named = re.findall(r"`conformance (\w[\w-]*)", README)
    assert named and set(named) <= set(subcommands)


def test_conformance_run_ends_with_the_lines_the_readme_shows(tmp_path: Path) -> None:
    """Runs the README's command as a newcomer does (a fresh folder, no terminal, 80 columns), and
    finds each run of lines the README shows between its ``...`` in what it printed, in order, the
    last ending the output."""
    shown = blocks(README)[1].splitlines()
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "CLICOLOR_FORCE")}
    env.update(COLUMNS="80", NO_COLOR="1")
    done = subprocess.run(
        [sys.executable, "-m", "conformance", "run"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    printed = done.stdout.splitlines()
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    tail = "\n".join(printed[-16:])
    pieces: list[list[str]] = [[]]
    for line in shown:
        if line == "...":
            pieces.append([])
        else:
            pieces[-1].append(line)
    start = 0
    for piece in pieces:
        at = next((i for i in range(start, len(printed)) if printed[i : i + len(piece)] == piece), None)
        assert at is not None, f"the README's lines {piece} are not what `conformance run` prints; it ends:\n{tail}"
        start = at + len(piece)
    assert start == len(printed), f"`conformance run` prints more after the README's last line:\n{tail}"


def broken_links(page: Path) -> list[str]:
    """The relative links of a Markdown page (images included) whose file, or heading, is missing."""
    text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.M | re.S)
    broken = []
    for link in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", link):
            continue
        path, _, anchor = link.partition("#")
        target = (page.parent / path) if path else page
        if not target.exists():
            broken.append(f"{link}: no such file")
        elif anchor and anchor not in anchors(target):
            broken.append(f"{link}: no heading with that anchor in {target.relative_to(REPO)}")
    return broken


def test_every_relative_link_resolves_to_a_file_and_its_anchor() -> None:
    assert len(re.findall(r"\]\((?![a-z]+:)", README)) > 15
    assert broken_links(REPO / "README.md") == []


@pytest.mark.parametrize(
    "page", ["docs/commands.md", "docs/architecture.md", "docs/selftest.md", "benchmarks/README.md"]
)
def test_the_links_of_the_pages_the_readme_moved_to_resolve(page: str) -> None:
    assert broken_links(REPO / page) == []


def test_slug_is_githubs() -> None:
    assert slug("Trust: scenarios that start commands") == "trust-scenarios-that-start-commands"
    assert slug("`suite_speed.py`: start-up and `--exhaustive`") == "suite_speedpy-start-up-and---exhaustive"
    assert slug("Our adapter at 1 MB, k = 1") == "our-adapter-at-1-mb-k--1"


def test_the_docs_it_lists_are_every_doc() -> None:
    linked = set(re.findall(r"\]\((docs/[\w./-]+\.md)", README))
    assert {str(p.relative_to(REPO)) for p in (REPO / "docs").glob("*.md")} <= linked


def test_the_listed_reference_adapters_are_the_registrys() -> None:
    line = re.search(r"\*\*Reference adapters\*\* \((.*?)\), tested", README, re.S)
    assert line is not None
    native, _, prompt = line.group(1).partition("the prompt-based")
    assert sorted(re.findall(r"`(\w+)`", native)) == sorted(native_adapters())
    assert sorted(re.findall(r"`(\w+)`", prompt)) == sorted(prompt_adapters())


def test_every_count_of_bundled_adapters_is_the_registrys() -> None:
    counts = re.findall(r"\b(five|six|seven|eight|nine|ten) bundled adapters", README)
    assert counts and {NUMBERS[c] for c in counts} == {len(adapter_names())}


def test_the_scenario_count_holds() -> None:
    claimed = re.search(r"`scenarios/`, (\d+)\+ of them", README)
    assert claimed is not None and len(load_scenarios([]).scenarios) >= int(claimed.group(1))


def test_its_one_picture_exists_and_is_small() -> None:
    [picture] = re.findall(r"!\[[^]]*\]\(([\w/.-]+\.png)\)", README)
    data = (REPO / picture).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) < 200_000


def test_the_report_pictures_the_commands_page_shows_exist() -> None:
    text = (REPO / "docs" / "commands.md").read_text(encoding="utf-8")
    pictures = re.findall(r"!\[[^]]*\]\((images/[\w.-]+\.png)\)", text)
    assert {"images/report-passed.png", "images/report-failed.png"} <= set(pictures)
    assert all((REPO / "docs" / p).is_file() for p in pictures)
