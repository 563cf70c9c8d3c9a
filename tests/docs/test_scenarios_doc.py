"""docs/scenarios.md agrees with the code: its complete example is the bundled scenario it names (without
its ``wire:`` block) and loads; its table of top-level keys is the schema's; the capability names it
lists are ``conformance.adapters.base.CAPABILITIES``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

from conformance.adapters.base import CAPABILITIES
from conformance.scenarios.loader import load_scenario

REPO = Path(__file__).resolve().parents[2]
DOC = (REPO / "docs" / "scenarios.md").read_text(encoding="utf-8")


def section(title: str) -> str:
    start = DOC.index(f"\n## {title}\n")
    end = DOC.find("\n## ", start + 1)
    return DOC[start : end if end != -1 else None]


def test_the_complete_example_is_the_bundled_file_without_its_wire_block(tmp_path: Path) -> None:
    text = section("A complete example")
    named = re.search(r"`(scenarios/[\w/]+\.yaml)`", text)
    assert named is not None
    example = re.search(r"```yaml\n(.*?)```", text, re.S)
    assert example is not None
    bundled = yaml.safe_load((REPO / named.group(1)).read_text(encoding="utf-8"))
    bundled.pop("wire")
    assert yaml.safe_load(example.group(1)) == bundled
    copy = tmp_path / "basic" / "get_time.yaml"
    copy.parent.mkdir()
    copy.write_text(example.group(1), encoding="utf-8")
    scenario = load_scenario(copy, root=tmp_path)
    assert scenario.id == "basic/get_time" and len(scenario.turns) == 2


def test_the_top_level_keys_are_the_schemas() -> None:
    rows = re.findall(r"^\| `(\w+)` \| (yes|no) \|", section("Top-level keys"), re.M)
    schema = json.loads((REPO / "conformance" / "schemas" / "scenario.schema.json").read_text(encoding="utf-8"))
    assert {key for key, _ in rows} == set(schema["properties"])
    assert {key for key, required in rows if required == "yes"} == set(schema["required"])


def test_the_capability_names_are_the_adapters() -> None:
    row = next(line for line in section("Top-level keys").splitlines() if line.startswith("| `requires` |"))
    names = re.search(r"Names: (.*?) \(`conformance", row)
    assert names is not None
    assert re.findall(r"`(\w+)`", names.group(1)) == sorted(CAPABILITIES)
