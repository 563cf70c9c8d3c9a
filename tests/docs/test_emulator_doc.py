"""docs/emulator.md agrees with the code: every quirk each wire's encoder knows is named in that wire's
paragraph, the error and server quirks are named, the fault table has one row per fault kind, and
the options it starts the emulator with are the command's."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest

from conformance.cli import build_parser
from conformance.emulator import Emulator, _prompt_formats
from conformance.emulator._server import ENCODERS, ERROR_QUIRKS, SERVER_QUIRKS
from conformance.scenarios.values import FAULT_KINDS

DOC = (Path(__file__).resolve().parents[2] / "docs" / "emulator.md").read_text(encoding="utf-8")
PARAGRAPHS = {
    "openai_chat": "**OpenAI Chat.**",
    "openai_responses": "**OpenAI Responses.**",
    "anthropic": "**Anthropic.**",
    "gemini": "**Gemini.**",
    "ollama": "**Ollama.**",
}


def paragraph(start: str) -> str:
    begin = DOC.index(start)
    return DOC[begin : DOC.find("\n\n", begin)]


def named(text: str) -> set[str]:
    return set(re.findall(r"`(\w+)`", text))


def test_every_wire_has_a_paragraph() -> None:
    assert set(PARAGRAPHS) == set(ENCODERS)


@pytest.mark.parametrize("wire", sorted(PARAGRAPHS))
def test_each_quirk_a_wire_knows_is_in_its_paragraph(wire: str) -> None:
    quirks = paragraph(PARAGRAPHS[wire]).split("Quirks:", 1)[1]
    assert set(ENCODERS[wire].KNOWN_QUIRKS) <= named(quirks)


def test_the_error_server_and_prompt_format_quirks_are_named() -> None:
    section = DOC[DOC.index("## Per wire, and the quirks each knows") :]
    for quirks in (*ERROR_QUIRKS.values(), SERVER_QUIRKS):
        assert set(quirks) <= named(section)
    assert set(_prompt_formats.KNOWN_QUIRKS) <= named(DOC[DOC.index("## Prompt formats") :])


def test_the_fault_table_has_a_row_per_fault_kind() -> None:
    section = DOC[DOC.index("## Faults") :]
    rows = re.findall(r"^\| `(\w+)` \| [^|]*\| `\w+` \|$", section, re.M)
    assert rows == list(FAULT_KINDS)


def test_the_documented_emulator_commands_parse() -> None:
    commands = re.findall(r"^(conformance emulator [^#\n]*?)\s*(?:#.*)?$", DOC, re.M)
    assert len(commands) >= 4
    parser = build_parser()
    for command in commands:
        parser.parse_args(command.split()[1:])  # an unknown option exits 2 (SystemExit fails the test)


def test_the_python_example_runs_and_the_default_reply_is_the_documented_text() -> None:
    block = re.search(r"From Python:\n\n```python\n(.*?)```", DOC, re.S)
    assert block is not None
    exec(compile(block.group(1), "docs/emulator.md", "exec"), {})  # the example as written, on 127.0.0.1
    said = re.search(r"every turn of every wire answers the text\n`([^`]+)`", DOC)
    assert said is not None
    with Emulator(port=0) as emu:
        answer = httpx.post(
            emu.base_url + "/v1/chat/completions", json={"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        )
        assert answer.json()["choices"][0]["message"]["content"] == said.group(1)
        assert httpx.post(emu.base_url + "/not/served", json={}).status_code == 404
