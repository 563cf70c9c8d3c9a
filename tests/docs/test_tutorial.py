"""docs/tutorial.md: its files are written and its commands run, in order, in a fresh folder, as a
reader would (``conformance`` is this checkout's; the emulator and the replay use 127.0.0.1 only).

A fenced block whose first line is ``# file: PATH`` is a file to save; every line of a ``sh`` block is
a command, which must exit 0 unless it ends with ``# exits N``. What the tutorial says a step
leaves behind is checked after it: the cassette ``record`` writes (its summary words are left
alone: only its exit code and the file), the reports and their counts, the line the last command prints.
"""

from __future__ import annotations

import ast
import json
import os
import re
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.clients.test_driver_rules import driver_problems

REPO = Path(__file__).resolve().parents[2]
TUTORIAL = REPO / "docs" / "tutorial.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.M | re.S)
EXITS = re.compile(r"\s+#\s*exits\s+(\d+)\s*$")


@dataclass(frozen=True)
class Step:
    kind: str  # "file" or "command"
    text: str  # the file's path or the command line
    body: str = ""  # the file's content
    exit_code: int = 0


def steps(markdown: str) -> list[Step]:
    found: list[Step] = []
    for language, block in FENCE.findall(markdown):
        first, _, rest = block.partition("\n")
        if first.startswith("# file: "):
            found.append(Step("file", first.removeprefix("# file: ").strip(), rest))
        elif language == "sh":
            for line in block.splitlines():
                if not line.strip():
                    continue
                expected = EXITS.search(line)
                command = EXITS.sub("", line).strip()
                found.append(Step("command", command, exit_code=int(expected.group(1)) if expected else 0))
    return found


def test_the_tutorial_parses_into_files_and_commands() -> None:
    found = steps(TUTORIAL.read_text(encoding="utf-8"))
    files = [s.text for s in found if s.kind == "file"]
    assert files == ["my-scenarios/weather/current.yaml", "tinychat.py", "my_driver.py"]
    commands = [s.text.split()[:2] for s in found if s.kind == "command"]
    # write a scenario, record it, certify an adapter and a client, change it, read the report
    assert [c for c in commands if c[0] == "conformance"] == [
        ["conformance", "validate"],
        ["conformance", "record"],
        ["conformance", "run"],
        ["conformance", "certify"],
        ["conformance", "run"],
        ["conformance", "record"],
        ["conformance", "run"],
    ]
    assert [s.exit_code for s in found if s.kind == "command"].count(1) == 1


def test_the_tutorials_driver_follows_the_driver_rules_of_docs_clients() -> None:
    """The tutorial's driver is a driver a reader may copy: it does what docs/clients.md ("Drivers do
    what a user does") asks of every driver in ``examples/clients/``, and converts by hand: it imports
    the library it certifies and only ``conformance.clients`` and ``conformance.model`` of the suite
    (``conformance.adapters`` would certify the suite's translation, not the library's)."""
    [driver] = [s for s in steps(TUTORIAL.read_text(encoding="utf-8")) if s.text == "my_driver.py"]
    assert driver_problems(driver.body, driver.text) == []
    imported = set()
    for node in ast.walk(ast.parse(driver.body)):
        if isinstance(node, ast.Import):
            imported |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module)
    suite = {name for name in imported if name.split(".")[0] == "conformance"}
    assert suite == {"conformance.clients", "conformance.model"}
    assert "tinychat" in imported


def statuses(report: Path) -> dict[str, int]:
    counts: dict[str, int] = json.loads(report.read_text(encoding="utf-8"))["summary"]["statuses"]
    return {status: n for status, n in counts.items() if n}


def test_every_command_of_the_tutorial_works_as_written(tmp_path: Path) -> None:
    markdown = TUTORIAL.read_text(encoding="utf-8")
    work, bin_dir = tmp_path / "work", tmp_path / "bin"
    work.mkdir()
    bin_dir.mkdir()
    launcher = bin_dir / "conformance"  # this checkout's conformance, whatever is installed
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m conformance "$@"\n', encoding="utf-8")
    launcher.chmod(launcher.stat().st_mode | stat.S_IXUSR)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONFORMANCE_")}
    env |= {"PATH": f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    cassette = work / "my-cassettes" / "openai_chat" / "weather" / "current.yaml"
    seen: list[str] = []
    output = ""
    for step in steps(markdown):
        if step.kind == "file":
            target = work / step.text
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(step.body, encoding="utf-8")
            continue
        done = subprocess.run(
            step.text, shell=True, cwd=work, env=env, capture_output=True, text=True, timeout=240, check=False
        )
        assert done.returncode == step.exit_code, f"{step.text}\n{done.stdout}\n{done.stderr}"
        output = done.stdout
        verb = step.text.split()[1] if step.text.startswith("conformance ") else step.text.split()[0]
        seen.append(verb)
        if verb == "record":
            assert cassette.is_file()
            assert "weather/current" in cassette.read_text(encoding="utf-8")
        elif verb == "run" and step.exit_code == 0:
            assert statuses(work / "reports" / "report.json") == {"pass": 2}
            assert (work / "reports" / "report.html").is_file()
        elif verb == "run":  # the scenario changed: its cassette is stale, and the run says how to record it
            assert statuses(work / "reports" / "report.json") == {"stale": 2}
            said = done.stdout + done.stderr
            assert "stale cassette" in said and "conformance record --emulator" in said
        elif verb == "certify":
            report = json.loads((work / "client-reports" / "report.json").read_text(encoding="utf-8"))
            assert statuses(work / "client-reports" / "report.json") == {"pass": 1, "unsupported": 1}
            shown = re.search(r"The client shows as `([^`]+)`", markdown)
            assert shown is not None and {c["adapter"] for c in report["cases"]} == {shown.group(1)}
    assert seen.count("record") == 2 and seen.count("certify") == 1
    printed = re.search(r"The last line prints `([^`]+)`", markdown)
    assert printed is not None and output.strip() == printed.group(1)
