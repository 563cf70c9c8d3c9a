"""Adopting the suite in CI (docs/ci.md): a baseline of known defects and reruns of what failed.

- ``read_ci``: what ``--baseline FILE``, ``--update-baseline``, ``--strict-baseline`` and
  ``--last-failed`` ask for, as ``CiOptions`` (the baseline file read, the cases that failed last time);
- ``CiOptions.narrow``: ``-k`` and the scenarios narrowed to the cases that failed last time;
- ``CiOptions.judge`` and ``CiOptions.settle``: a case and a run as the baseline judges them
  (``conformance.run.baseline``), ``Settled`` the run judged with the lines to print;
- ``CiOptions.write_update``: the baseline ``--update-baseline`` writes, after the reports.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from conformance.errors import UsageError
from conformance.run.fingerprint import CHECK_IDS

if TYPE_CHECKING:
    from conformance.run.baseline import Baseline, BaselineEntry
    from conformance.scenarios.values import Scenario
    from conformance.verdicts import CaseResult, RunResult

__all__ = ["DEFAULT_BASELINE", "RERUN_STATUSES", "CiOptions", "Settled", "read_ci", "read_last_failed"]

DEFAULT_BASELINE = "conformance-baseline.yaml"
RERUN_STATUSES = ("fail", "error", "stale")
"""The statuses ``--last-failed`` reruns and a report gives a rerun command."""


@dataclass(frozen=True, kw_only=True)
class CiOptions:
    """What ``--baseline``, ``--update-baseline``, ``--strict-baseline`` and ``--last-failed`` asked for."""

    baseline_path: Path | None = None
    baseline: Baseline | None = None
    update: bool = False
    strict: bool = False
    last_failed: frozenset[tuple[str, str, str]] | None = None
    nothing_to_rerun: str = ""
    """Set when ``--last-failed`` found a report without failures: the message, and no run."""

    def narrow(
        self, select: Callable[[str, str, str], bool] | None, scenarios: list[Scenario]
    ) -> tuple[Callable[[str, str, str], bool] | None, list[Scenario]]:
        """``-k`` and the scenarios, narrowed to the cases that failed last time (``--last-failed``)."""
        wanted = self.last_failed
        if wanted is None:
            return select, scenarios
        ids = {scenario for _, scenario, _ in wanted}

        def again(adapter: str, scenario: str, mode: str) -> bool:
            return (adapter, scenario, mode) in wanted and (select is None or select(adapter, scenario, mode))

        return again, [s for s in scenarios if s.id in ids]

    def judge(self, case: CaseResult) -> CaseResult:
        """A case as the baseline judges it (for the progress line; ``--update-baseline``: as it is)."""
        from conformance.run.baseline import baseline_case

        if self.baseline is None or self.update:
            return case
        return baseline_case(case, self.baseline, strict=self.strict)

    def settle(self, result: RunResult) -> Settled:
        """The run judged against the baseline (under ``--update-baseline``: against the baseline it is
        about to write, which ``write_update`` writes once the reports are written) and the lines to
        print before the reports."""
        from conformance.run.baseline import Baseline, apply_baseline, new_defects_lines, updated_entries

        if self.baseline_path is None:
            return Settled(result=result)
        baseline = self.baseline
        update = None
        if self.update:
            update = tuple(updated_entries(result, baseline))
            baseline = Baseline(source=str(self.baseline_path), entries=update)
        if baseline is None:
            return Settled(result=result)
        applied = apply_baseline(result, baseline, strict=self.strict)
        notes: list[str] = []
        if applied.baselined:
            notes.append(f"baseline: {applied.baselined} known failures accepted as xfail ({baseline.source})")
        notes += new_defects_lines(applied, baseline.source)
        prefix = "stale baseline entry" if self.strict else "warning: stale baseline entry"
        notes += [f"{prefix}: {line}" for line in applied.stale]
        return Settled(result=applied.result, notes=tuple(notes), update=update)

    def write_update(self, settled: Settled) -> tuple[list[str], str, bool]:
        """Write the baseline ``settled`` holds (``--update-baseline``; the reports are written first):
        the lines to print, the one error line when it could not be written (the old file is then whole,
        and the run fails), and whether it has entries without a reason, which accept nothing: they are
        listed (``missing_reasons``) and fail the run too."""
        from conformance.run.baseline import missing_reasons, unmigrated, write_baseline

        if self.baseline_path is None or settled.update is None:
            return [], "", False
        try:
            write_baseline(self.baseline_path, settled.update)
        except UsageError as exc:
            return [], str(exc), False
        notes: list[str] = []
        baseline = self.baseline
        if baseline is not None and baseline.version1:
            lost = unmigrated(settled.result, baseline)
            notes.append(
                f"baseline: migrated {self.baseline_path} from version 1 to signatures: each entry's reason "
                "now stands beside the signatures of its check that this run found"
                + (
                    f"; {_entries(len(lost))} of cases this run did not run could not be carried over "
                    f"({', '.join(f'{o.case} {o.check}' for o in lost)}): run them too and update again"
                    if lost
                    else ""
                )
            )
        notes.append(f"baseline: wrote {_entries(len(settled.update))} to {self.baseline_path}")
        missing = missing_reasons(str(self.baseline_path), settled.update)
        return notes + missing, "", bool(missing)


@dataclass(frozen=True, kw_only=True)
class Settled:
    """A run judged against its baseline (``CiOptions.settle``)."""

    result: RunResult
    """The run with the baseline applied."""
    notes: tuple[str, ...] = ()
    """The lines to print before the reports (cases accepted, new defects, stale entries)."""
    update: tuple[BaselineEntry, ...] | None = None
    """The baseline ``--update-baseline`` writes once the reports are written (``CiOptions.write_update``)."""


def _entries(count: int) -> str:
    return f"{count} entr{'y' if count == 1 else 'ies'}"


def read_ci(
    *,
    baseline: str | None = None,
    update: bool = False,
    strict: bool = False,
    last_failed: bool = False,
    report_dir: Path | str = "reports",
) -> CiOptions:
    """The baseline and ``--last-failed`` options (``--baseline FILE``, ``--update-baseline``,
    ``--strict-baseline``, ``--last-failed`` reading ``report_dir``'s JSON report); ``UsageError`` on a bad
    baseline file or a missing report."""
    from conformance.run.baseline import read_baseline

    options: dict[str, Any] = {"update": update, "strict": strict}
    if strict and not baseline:
        raise UsageError("--strict-baseline needs --baseline FILE")
    if baseline or update:
        path = Path(baseline or DEFAULT_BASELINE)
        valid = [check for ids in CHECK_IDS.values() for check in ids]
        options["baseline_path"] = path
        if not update:
            options["baseline"] = read_baseline(path, check_ids=valid)
        elif path.exists():  # updating keeps the reasons already written (accepts empty ones, migrates version 1)
            options["baseline"] = read_baseline(path, check_ids=valid, require_reasons=False, migrate=True)
    if last_failed:
        report = Path(report_dir) / "report.json"
        wanted = read_last_failed(report)
        options["last_failed"] = wanted
        if not wanted:
            options["nothing_to_rerun"] = (
                f"--last-failed: no case failed, errored or went stale in {report}: nothing to rerun"
            )
    return CiOptions(**options)


def read_last_failed(report: Path) -> frozenset[tuple[str, str, str]]:
    """The (adapter, scenario, mode) of every case the JSON report ``report`` holds as failed, errored
    or stale (read bounded, like cassettes: ``conformance.reporting._read.load_report``)."""
    from conformance.reporting._read import load_report

    try:
        data = load_report(report, f"--last-failed: {report}")
        cases = data["cases"]
        return frozenset(
            (str(c["adapter"]), str(c["scenario"]), str(c["mode"])) for c in cases if c["status"] in RERUN_STATUSES
        )
    except FileNotFoundError as exc:
        raise UsageError(
            f"--last-failed: no report at {report} (run once without --last-failed, or give the --report-dir "
            "that run wrote to)"
        ) from exc
    except (KeyError, TypeError) as exc:
        raise UsageError(f"--last-failed: {report} is not a conformance JSON report ({exc})") from exc
