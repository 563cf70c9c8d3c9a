"""Sensitivity self-test: does the suite catch real adapter bugs, and only bugs?

Each mutant (``conformance.selftest._mutants``) is a reference adapter with one real-world bug
injected. ``run_selftest`` runs every mutant on the bundled scenarios (but those served by an MCP
server, ``replayed_scenarios``; a mutant with an ``mcp_tag`` also on the MCP scenarios with that tag,
``mcp_scenarios``), replayed from the cassettes of
its base wire (``cassettes/<wire>/``, the runner's fallback for an adapter without its own folder),
and compares each case with the same case of the reference adapter: the mutant is *killed* when a
check that passes for the reference fails or errors for the mutant (or a case the reference passes
errors). The kill is recorded with the check ids and scenarios that caught it. The reference
adapters themselves run too: any case of theirs that fails or errors is a *false failure*.

A mutant that declares a ``gap`` (no bundled scenario can reach its bug) is reported, not failed;
if it is killed after all it is STALE (remove the gap). The run is OK when every other mutant is
killed and the references have no false failure. ``conformance selftest`` prints the table
(mutant | base | bug | killed by) and exits 0 when OK, 1 otherwise.
"""

from __future__ import annotations

from conformance.selftest._mutants import MUTANTS, Mutant, harmless_copy, mutant_registry
from conformance.selftest._report import killed_by, selftest_command, summary_line, table_markdown, table_text
from conformance.selftest._run import (
    Kill,
    MutantResult,
    MutantStatus,
    SelftestResult,
    default_cassette_dir,
    mcp_scenarios,
    reference_cases,
    replayed_scenarios,
    run_mutant,
    run_selftest,
    select_mutants,
)

__all__ = [
    "MUTANTS",
    "Kill",
    "Mutant",
    "MutantResult",
    "MutantStatus",
    "SelftestResult",
    "default_cassette_dir",
    "harmless_copy",
    "killed_by",
    "mcp_scenarios",
    "mutant_registry",
    "reference_cases",
    "replayed_scenarios",
    "run_mutant",
    "run_selftest",
    "select_mutants",
    "selftest_command",
    "summary_line",
    "table_markdown",
    "table_text",
]
