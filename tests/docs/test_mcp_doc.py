"""docs/mcp.md, "What the model receives", stays true: its table is what ``conformance.adapters._tool_output``
does on each wire (a block is a "placeholder + note" exactly where the rule replaces it), and the worked
example's link text, placeholder and note are what the rule's functions write."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conformance.adapters._tool_output import (
    WIRE_CARRIES,
    left_out_note,
    model_view,
    placeholder_text,
    resource_link_text,
)
from conformance.adapters.base import PROMPT_FORMATS
from conformance.model import Audio, ContentItem, Image, Resource, Text, ToolResult

REPO = Path(__file__).resolve().parents[2]
DOC = (REPO / "docs" / "mcp.md").read_text(encoding="utf-8")
SECTION = DOC.split("## What the model receives", 1)[1].split("\n## ", 1)[0]
HEADER, *BODY = [line for line in SECTION.splitlines() if line.startswith("| ")]
COLUMNS = [cell.strip() for cell in HEADER.strip("|").split("|")][1:]
ROWS = {
    cells[0]: dict(zip(COLUMNS, cells[1:], strict=True))
    for cells in ([cell.strip() for cell in line.strip("|").split("|")] for line in BODY)
}

PNG = "iVBORw0KGgo="
LINK = Resource(uri="file:///a.txt")
BLOCKS: dict[str, ContentItem] = {
    "embedded blob": Resource(uri="file:///a.bin", media_type="application/octet-stream", blob="AAEC"),
    "image": Image(media_type="image/png", data=PNG),
    "audio": Audio(media_type="audio/wav", data="UklGRg=="),
}


def _formats(column: str) -> tuple[str, ...]:
    return PROMPT_FORMATS if column == "prompt formats" else (column,)


def test_the_table_has_a_column_per_wire_and_a_row_per_block() -> None:
    assert COLUMNS == ["openai_chat", "openai_responses", "anthropic", "gemini", "ollama", "prompt formats"]
    assert {f for c in COLUMNS for f in _formats(c)} == set(WIRE_CARRIES)
    assert list(ROWS) == [
        "text",
        "structured + text",
        "structured only",
        "resource_link",
        "embedded text resource",
        "embedded blob",
        "image",
        "audio",
        "isError",
    ]


@pytest.mark.parametrize("row", sorted(BLOCKS))
def test_a_placeholder_is_said_exactly_where_the_rule_replaces_the_block(row: str) -> None:
    result = ToolResult(call_id="call_1", content=(BLOCKS[row],))
    for column, cell in ROWS[row].items():
        for traffic in _formats(column):
            replaced = bool(model_view(result, carries=WIRE_CARRIES[traffic], wire=traffic).replaced)
            assert replaced == (cell == "placeholder + note"), (row, column, cell)


def test_the_rows_every_wire_shares_are_what_the_rule_sends() -> None:
    structured = {"mcp": {"structured_content": {"n": 1}}}
    cases = {
        "text": (ToolResult(call_id="c", content=(Text(text="hi"),)), ("hi",)),
        "structured + text": (
            ToolResult(call_id="c", content=(Text(text='{"n": 1}'),), provider_details=structured),
            ('{"n": 1}',),
        ),
        "structured only": (ToolResult(call_id="c", provider_details=structured), ('{"n":1}',)),
        "resource_link": (
            ToolResult(call_id="c", content=(Resource(uri="u"),)),
            (resource_link_text(Resource(uri="u")),),
        ),
    }
    for row, (result, texts) in cases.items():
        assert len(set(ROWS[row].values())) == 1, row  # the same on every wire
        for traffic, carries in WIRE_CARRIES.items():
            view = model_view(result, carries=carries, wire=traffic)
            assert tuple(i.text for i in view.items if isinstance(i, Text)) == texts and not view.notes


def test_the_worked_example_is_what_the_functions_write() -> None:
    [block] = re.findall(r"```text\n(.*?)```", SECTION, re.S)
    link, placeholder, note = block.splitlines()
    spec_link = Resource(uri="file:///project/src/main.rs", media_type="text/x-rust")
    extras = {"name": "main.rs", "description": "Primary application entry point"}
    assert link == resource_link_text(spec_link, extras)
    wav = Audio(media_type="audio/wav", data="UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA=")
    assert placeholder == placeholder_text(wav)
    result = ToolResult(call_id="call_1", name="get_weather", content=(Text(text="a sound"), wav))
    assert note == left_out_note(result, 1, wav, "openai_chat")
