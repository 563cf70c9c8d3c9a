"""Running the mutants and the reference adapters, and telling kills from false failures (see the
package docstring)."""

from __future__ import annotations

import fnmatch
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from conformance.adapters import get_adapter
from conformance.errors import UsageError
from conformance.run.runner import RunOptions, run_suite
from conformance.scenarios import bundled
from conformance.scenarios.values import Mode, Scenario
from conformance.selftest._mutants import MUTANTS, Mutant
from conformance.verdicts import CaseResult

__all__ = [
    "Kill",
    "MutantResult",
    "MutantStatus",
    "SelftestResult",
    "default_cassette_dir",
    "mcp_scenarios",
    "reference_cases",
    "replayed_scenarios",
    "run_mutant",
    "run_selftest",
    "select_mutants",
]

MutantStatus = Literal["killed", "survived", "gap", "stale"]
"""killed; survived (a failure of the suite); gap (not killed, declared); stale (declared gap, killed)."""

_BAD = ("fail", "error")


@dataclass(frozen=True, kw_only=True)
class Kill:
    """One check that caught a mutant: it passes for the reference and fails for the mutant."""

    check: str
    """The check id (``roundtrip.calls``), or ``case.error`` when the mutant's case errored."""
    scenario: str
    mode: Mode
    message: str = ""
    """The first finding (or the error), for the curious reader."""


@dataclass(frozen=True, kw_only=True)
class MutantResult:
    mutant: Mutant
    kills: tuple[Kill, ...] = ()
    cases: int = 0
    duration: float = 0.0

    @property
    def killed(self) -> bool:
        return bool(self.kills)

    @property
    def status(self) -> MutantStatus:
        if self.kills:
            return "stale" if self.mutant.gap else "killed"
        return "gap" if self.mutant.gap else "survived"


@dataclass(frozen=True, kw_only=True)
class SelftestResult:
    mutants: tuple[MutantResult, ...]
    references: tuple[str, ...]
    """The reference adapters that ran (the bases of the mutants)."""
    reference_cases: int
    false_failures: tuple[CaseResult, ...]
    """Cases of the reference adapters that failed or errored (must be none)."""
    duration: float

    @property
    def ok(self) -> bool:
        return not self.false_failures and all(r.status in ("killed", "gap") for r in self.mutants)

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1

    def count(self, status: MutantStatus) -> int:
        return sum(r.status == status for r in self.mutants)


def default_cassette_dir() -> Path:
    """The bundled cassettes (``conformance.scenarios.bundled``)."""
    return bundled.cassettes_dir()


def replayed_scenarios() -> list[Scenario]:
    """The bundled scenarios the self-test runs: every one but those whose tools come from an MCP
    server (``tools: {mcp: ...}``). Those start a server process per (adapter, scenario) pair
    (about a second each, times every mutant) and exercise the MCP bridge rather than an adapter:
    the adapter behaviour in them is the plain scenarios' (``conformance run`` still runs them).
    Raises ``UsageError`` when a bundled scenario file has problems."""
    from conformance.scenarios.loader import load_scenarios

    loaded = load_scenarios([])
    if loaded.problems:
        raise UsageError(f"the bundled scenarios have problems (see `conformance validate`): {loaded.problems[0]}")
    return [s for s in loaded.scenarios if s.mcp is None]


def mcp_scenarios(tag: str) -> list[Scenario]:
    """The bundled scenarios whose tools come from an MCP server and that carry ``tag`` (a mutant's
    ``mcp_tag``: the few it also runs on)."""
    from conformance.scenarios.loader import load_scenarios

    return [s for s in load_scenarios([]).scenarios if s.mcp is not None and tag in s.tags]


def select_mutants(patterns: Sequence[str] = ()) -> list[Mutant]:
    """The bundled mutants matching any pattern (a name, a glob such as ``gemini~*``, or a base
    adapter name); all of them without patterns. A pattern that matches nothing raises."""
    if not patterns:
        return list(MUTANTS.values())
    chosen: dict[str, Mutant] = {}
    for pattern in patterns:
        found = [m for m in MUTANTS.values() if fnmatch.fnmatchcase(m.name, pattern) or m.base == pattern]
        if not found:
            raise UsageError(f"no mutant matches {pattern!r}; known: {', '.join(MUTANTS)}")
        chosen.update((m.name, m) for m in found)
    return list(chosen.values())


CaseKey = tuple[str, str]
"""(scenario id, mode)."""


def reference_cases(
    base: str, scenarios: Sequence[Scenario], options: RunOptions
) -> tuple[Mapping[CaseKey, CaseResult], list[CaseResult]]:
    """The reference adapter's cases by (scenario, mode), and those that failed or errored."""
    result = run_suite(scenarios, [get_adapter(base)], options)
    cases: dict[CaseKey, CaseResult] = {(c.scenario, c.mode): c for c in result.cases}
    return cases, [c for c in result.cases if c.status in (*_BAD, "stale")]


def run_mutant(
    mutant: Mutant, scenarios: Sequence[Scenario], options: RunOptions, reference: Mapping[CaseKey, CaseResult]
) -> MutantResult:
    """Run one mutant on ``scenarios`` and compare each case with ``reference`` (its base's cases)."""
    started = time.perf_counter()
    result = run_suite(scenarios, [mutant.adapter()], options)
    kills = [kill for case in result.cases for kill in _kills(case, reference.get((case.scenario, case.mode)))]
    return MutantResult(
        mutant=mutant, kills=tuple(kills), cases=len(result.cases), duration=time.perf_counter() - started
    )


def _kills(case: CaseResult, reference: CaseResult | None) -> list[Kill]:
    if case.status not in _BAD or (reference is not None and reference.status == "error"):
        return []  # nothing failed, or the reference could not run this case either
    passed = {v.check: v.status for v in reference.checks} if reference is not None else {}
    kills = [
        Kill(check=v.check, scenario=case.scenario, mode=case.mode, message=_first_finding(v.findings, v.message))
        for v in case.checks
        if v.status in _BAD and passed.get(v.check, "pass") == "pass"
    ]
    if not case.checks and case.status == "error":
        kills.append(Kill(check="case.error", scenario=case.scenario, mode=case.mode, message=case.message))
    return kills


def _first_finding(findings: Sequence[object], message: str) -> str:
    if not findings:
        return message.splitlines()[0] if message else ""
    f = findings[0]
    text = f"{getattr(f, 'path', '')}: {getattr(f, 'message', '')}"
    expected, actual = getattr(f, "expected", None), getattr(f, "actual", None)
    if expected is not None or actual is not None:
        text += f" (expected {expected!r}, actual {actual!r})"
    return text if len(text) <= 200 else text[:197] + "..."


def run_selftest(
    mutants: Sequence[Mutant] | None = None,
    *,
    scenarios: Sequence[Scenario] | None = None,
    cassette_dir: Path | None = None,
    timeout: float = 30.0,
    progress: Callable[[MutantResult], None] | None = None,
) -> SelftestResult:
    """Run the reference adapters, then every mutant, on ``scenarios`` (default: ``replayed_scenarios``),
    and a mutant with an ``mcp_tag`` on the MCP scenarios with that tag too."""
    started = time.perf_counter()
    chosen = list(MUTANTS.values()) if mutants is None else list(mutants)
    if scenarios is None:
        scenarios = replayed_scenarios()
    given = {s.id for s in scenarios}
    extra = {  # a mutant's MCP scenarios (mcp_tag), besides the others
        m.name: [s for s in mcp_scenarios(m.mcp_tag) if s.id not in given] for m in chosen if m.mcp_tag
    }
    options = RunOptions(cassette_dir=cassette_dir or default_cassette_dir(), timeout=timeout)
    bases = sorted({m.base for m in chosen})
    references: dict[str, Mapping[CaseKey, CaseResult]] = {}
    false_failures: list[CaseResult] = []
    for base in bases:
        more = {s.id: s for m in chosen if m.base == base for s in extra.get(m.name, ())}
        references[base], failed = reference_cases(base, [*scenarios, *more.values()], options)
        false_failures += failed
    results: list[MutantResult] = []
    for mutant in chosen:
        outcome = run_mutant(mutant, [*scenarios, *extra.get(mutant.name, ())], options, references[mutant.base])
        results.append(outcome)
        if progress is not None:
            progress(outcome)
    return SelftestResult(
        mutants=tuple(results),
        references=tuple(bases),
        reference_cases=sum(len(cases) for cases in references.values()),
        false_failures=tuple(false_failures),
        duration=time.perf_counter() - started,
    )
