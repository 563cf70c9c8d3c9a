"""The README's adapter counts agree with the code: the reference adapters it lists are the registry's,
"eight bundled adapters" is their number, "70+" scenarios holds, and it shows the report's pictures."""

from __future__ import annotations

import re
from pathlib import Path

from conformance.adapters import adapter_names, native_adapters, prompt_adapters
from conformance.scenarios.loader import load_scenarios

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")
NUMBERS = {"five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}


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


def test_the_report_pictures_exist() -> None:
    pictures = re.findall(r"!\[[^]]*\]\((docs/images/[\w.-]+\.png)\)", README)
    assert {"docs/images/report-passed.png", "docs/images/report-failed.png"} <= set(pictures)
    assert all((REPO / p).is_file() for p in pictures)
