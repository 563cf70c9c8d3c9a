"""The suite's fingerprint: which scenarios, checks and equivalences judged a run.

A report is only comparable with another (merged with it, or trusted as a committed certification)
when the same suite made both. ``suite_info`` gives the ``SuiteInfo`` every report carries; its
``fingerprint`` is a sha256 over

- the scenario set: every bundled scenario's id and content fingerprint
  (``conformance.scenarios._build.scenario_fingerprint``), with the run's own scenarios (from
  ``--scenarios-dir`` or a file given to ``--scenarios``) added or put in place of the bundled one
  with their id;
- the check ids (``CHECK_IDS``) and ``CHECK_VERSION``;
- the equivalence table used (``EquivalenceTable.sha256``: the suite's, or merged with
  ``--equivalences`` files).

It describes the suite, never the selection: ``--scenarios`` globs, ``-k``, ``--wires``,
``--model``, ``--checks`` and ``--shard`` leave it as it is (the report records them apart, in
``selection``). Nor does the package version (``SuiteInfo.version``): a release that changes no
scenario, check or table keeps the committed reports valid.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from importlib import metadata
from typing import TYPE_CHECKING

from conformance.verdicts import SuiteInfo

if TYPE_CHECKING:
    from conformance.checks.equivalences import EquivalenceTable
    from conformance.scenarios.values import Scenario

__all__ = ["CHECK_IDS", "CHECK_VERSION", "suite_fingerprint", "suite_info", "suite_version"]

CHECK_VERSION = 4
"""Bumped whenever a check's judgement changes without its id changing (a new finding, a path or
severity judged differently): every report made before then is from another suite. 2: issue 28
(``roundtrip.usage`` reads Anthropic's input as input plus cache tokens and the reasoning and cache
counts of every wire; ``roundtrip.call_ids`` leaves the scenario's own history ids aside). 3: issue 30
(``client.recorded_request`` reads a Gemini signature sent on its own part after the calls and one
sent on the turn's first call as the same: ``conformance.checks._meaning.signed_first_call``). 4: issue 31
(``roundtrip.request`` compares a tool result as the rule of docs/mcp.md says the wire receives it:
``conformance.adapters._tool_output.request_view``)."""

CHECK_IDS: dict[str, tuple[str, ...]] = {
    "translation": (
        "translation.wire_paths",
        "translation.tool_names",
        "translation.tool_definitions",
        "translation.tool_choice",
        "translation.request_shape",
        "translation.no_mutation",
        "translation.recorded_request",
        "translation.tool_list",
        "translation.tool_result_content",
    ),
    "roundtrip": (
        "roundtrip.calls",
        "roundtrip.text",
        "roundtrip.finish_reason",
        "roundtrip.request",
        "roundtrip.wire",
        "roundtrip.call_ids",
        "roundtrip.usage",
        "roundtrip.reasoning",
        "roundtrip.reasoning_replay",
        "roundtrip.cache_prefix",
    ),
    "streaming": ("streaming.lifecycle", "streaming.fold", "streaming.chunk_invariance", "streaming.events"),
    "recovery": ("recovery.provider_error", "recovery.arguments_error", "recovery.broken_stream"),
    "client": (
        "client.one_request",
        "client.stream_mode",
        "client.call_ids",
        "client.recorded_request",
        "client.request_headers",
        "client.typed_errors",
    ),
    "server": (  # conformance.checks.server.SERVER_CHECKS: model servers and gateways, judged on their answers
        "server.status",
        "server.shape",
        "server.framing",
        "server.ids",
        "server.arguments",
        "server.finish",
        "server.usage",
        "server.errors",
        "server.modes",
        "server.model",
    ),
}
"""Every check id a run can give, per family (``conformance list`` shows them; a test keeps it complete)."""


def suite_version() -> str:
    """The installed conformance version."""
    try:
        return metadata.version("conformance")
    except metadata.PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        return "0+unknown"


def suite_fingerprint(
    scenarios: Mapping[str, str],
    check_ids: Iterable[str],
    check_version: int,
    equivalences: str,
) -> str:
    """sha256 of the canonical JSON of ``scenarios`` (id -> content fingerprint), the sorted
    ``check_ids``, ``check_version`` and ``equivalences`` (the table's sha256)."""
    canonical = json.dumps(
        {
            "scenarios": dict(sorted(scenarios.items())),
            "checks": sorted(check_ids),
            "check_version": check_version,
            "equivalences": equivalences,
        },
        sort_keys=True,
        separators=(",", ":"),
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def suite_info(scenarios: Sequence[Scenario] = (), equivalences: EquivalenceTable | None = None) -> SuiteInfo:
    """The suite a run over ``scenarios`` (those it chose) judged with ``equivalences`` (None: the
    suite's table) is: the bundled scenario set with the chosen ones that are not bundled in it."""
    from conformance.checks.equivalences import bundled_table

    bundled_dir = _bundled_dir()
    universe = dict(_bundled_scenarios())
    for scenario in scenarios:
        if scenario.fingerprint and not _is_under(scenario, bundled_dir):
            universe[scenario.id] = scenario.fingerprint
    table = (equivalences or bundled_table()).sha256
    ids = [check for family in CHECK_IDS.values() for check in family]
    return SuiteInfo(
        fingerprint=suite_fingerprint(universe, ids, CHECK_VERSION, table),
        version=suite_version(),
        check_version=CHECK_VERSION,
        scenarios=len(universe),
        equivalences=table,
    )


@cache
def _bundled_dir() -> str:
    from conformance.scenarios import bundled

    return str(bundled.scenarios_dir().resolve())


def _is_under(scenario: Scenario, folder: str) -> bool:
    return scenario.path.resolve().is_relative_to(folder)


@cache
def _bundled_scenarios() -> tuple[tuple[str, str], ...]:
    """(id, content fingerprint) of every bundled scenario, read once per process (a file that does
    not load counts with an empty fingerprint: it is part of the set all the same)."""
    from conformance.scenarios import bundled
    from conformance.scenarios.loader import load_scenarios, scenario_files

    folder = bundled.scenarios_dir()
    loaded = {s.id: s.fingerprint for s in load_scenarios([folder]).scenarios}
    return tuple(sorted((sid, loaded.get(sid, "")) for _, sid in scenario_files([folder])))
