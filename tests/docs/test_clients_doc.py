"""docs/clients.md stays true: its duty table is the contract's, its sample of a finding left to the
caller is the text the suite prints, and what it says the suite accepts lives in docs/equivalences.md."""

from __future__ import annotations

import re
from pathlib import Path

from conformance.checks.duties import REMEDIES
from conformance.checks.equivalences import bundled_table
from conformance.clients.contract import DUTIES

REPO = Path(__file__).resolve().parents[2]
DOC = (REPO / "docs" / "clients.md").read_text(encoding="utf-8")


def _section(title: str) -> str:
    start = DOC.index(title)
    end = DOC.find("\n## ", start + 1)
    return DOC[start : end if end != -1 else len(DOC)]


def test_the_duty_table_is_the_contracts() -> None:
    rows = re.findall(r"^\| `(\w+)` \|", _section("### Duties"), flags=re.MULTILINE)
    assert rows == list(DUTIES)


def test_the_sample_left_to_the_caller_is_the_remedy_the_suite_prints() -> None:
    block = _section("### Duties").split("```")[1]
    shown = " ".join(block.split("left to the caller:", 1)[1].split())
    assert shown == REMEDIES[("tool_names", "openai_chat")]


def test_every_accepted_equivalence_the_doc_names_is_a_row_of_the_table() -> None:
    paths = {r.path for r in bundled_table().equivalences}
    for named in ("$.provider_details.extra.stream", "$.tool_choice", "$.max_tokens"):
        assert named in paths
    assert "(equivalences.md)" in DOC
