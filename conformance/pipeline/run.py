"""``run_target(target, plan, out)``: one run of any kind of target, from its selection to its exit code.

Before a case runs, a selection of no case is a usage error (exit 2, with a hint; the reports of the
last run are left as they were) and so is a report folder that cannot be written; ``--last-failed``
with nothing to rerun says so (exit 0). Then the progress (``conformance.console.progress``), the
cases (``Target.run``, under the trust policy of scenario commands), and the finish
(``conformance.pipeline.finish``). Ctrl-C ends the run with one line and exit 130, after writing the
reports of the cases that finished, marked incomplete (``Finished``); an internal error does the same
with its traceback and exit 1. When the reader of the output goes away (``| head``), the output goes
quiet and the run goes on to the end: the reports are its product, and the exit code is still the
run's verdict.
"""

from __future__ import annotations

import dataclasses
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TextIO

from conformance.errors import UsageError
from conformance.pipeline.finish import finish, rerun_line
from conformance.pipeline.selection import empty_shard, nothing_selected
from conformance.verdicts import CaseResult, RunResult, Selection

if TYPE_CHECKING:
    from conformance.pipeline.plan import Plan
    from conformance.pipeline.targets import Target

__all__ = ["Finished", "run_target"]


def run_target(target: Target, plan: Plan, out: TextIO | None = None) -> int:
    """Run ``plan`` on ``target``, show it on ``out`` (default: stdout) and write its reports; the exit
    code (0 every case passes or is unsupported/xfail, 1 a case failed or errored, 2 a usage error before
    anything ran, 130 Ctrl-C). The target is closed before the finish, whatever happened."""
    from conformance.console.output import QuietOnBrokenPipe
    from conformance.console.progress import Progress
    from conformance.reporting import check_report_dir

    out = QuietOnBrokenPipe.around(out or sys.stdout)
    try:
        if plan.ci.nothing_to_rerun:
            print(plan.ci.nothing_to_rerun, file=out)
            return 0
        select, scenarios = plan.ci.narrow(plan.select, list(plan.scenarios))
        plan = dataclasses.replace(plan, select=select, scenarios=tuple(scenarios))
        for problem in plan.problems:
            print(problem, file=sys.stderr)
        if plan.mcp_transport != "stdio":
            from conformance.mcp_bridge.trust import transport_note

            note = transport_note(plan.scenarios, plan.mcp_transport)
            if note:
                print(note, file=sys.stderr)
        try:
            if not plan.problems and not target.case_count(dataclasses.replace(plan, shard=None)):
                raise UsageError(_nothing_selected(target, plan))
            check_report_dir(plan.report_dir, list(plan.formats))
        except UsageError as exc:
            print(f"conformance {plan.command}: error: {exc}", file=sys.stderr)
            return 2
        total = target.case_count(plan)
        if not total and plan.shard is not None:
            print(empty_shard(plan.shard), file=out)
        progress = None if plan.quiet else Progress(out, judge=plan.ci.judge, total=total)
        finished = Finished(progress)
        ran = plan
        result = finished.run(
            lambda: target.run(ran, finished),
            allow_commands=plan.allow_commands,
            allow_remote_mcp=plan.allow_remote_mcp,
            mcp_transport=plan.mcp_transport,
            partial=lambda: target.partial(ran, finished.cases),
        )
    finally:
        target.close()
    return finish(
        result,
        out,
        progress=progress,
        quiet=plan.quiet,
        verbose=plan.verbose,
        report_dir=plan.report_dir,
        formats=list(plan.formats),
        label=target.label,
        ci=plan.ci,
        rerun=lambda case: rerun_line(
            target.rerun_words(case), case, scenario_paths=plan.scenario_paths, options=plan.rerun_options
        ),
        interrupted=finished.interrupted,
        error=finished.error,
        command=plan.command,
        selection=plan.selection,
    )


def _nothing_selected(target: Target, plan: Plan) -> str:
    """The usage error of a plan that selects no case of ``target``."""
    return nothing_selected(
        plan.selection or Selection(command=plan.command),
        [c.name for c in target.columns],
        plan.scenarios,
        report_dir=plan.report_dir,
        last_failed=plan.ci.last_failed is not None,
        noun=target.noun,
        known=target.known,
    )


class Finished:
    """The progress callback of a run: keeps every case that finished, in order (the reports of a run
    that Ctrl-C ended come from here), and passes it on to ``show``.

    ``watching()`` notes every Ctrl-C while the run goes: Python drops a ``KeyboardInterrupt``
    raised where it cannot propagate (in an at-fork hook while a worker starts, in a finaliser) and
    prints it as "Exception ignored"; such a Ctrl-C still ends the run, at the next finished case,
    and is not printed."""

    def __init__(self, show: Callable[[CaseResult], None] | None = None) -> None:
        self.cases: list[CaseResult] = []
        self.show = show
        self.interrupted = False
        self.error: str | None = None
        """Set by ``crashed()``: the run stopped on an internal error (type and message)."""

    @property
    def early(self) -> bool:
        """Did the run stop before its end (Ctrl-C, an internal error)?"""
        return self.interrupted or self.error is not None

    def crashed(self) -> None:
        """Note the exception being handled as the end of the run, and print its traceback (a bug to report)."""
        kind, exc, _ = sys.exc_info()
        traceback.print_exc(file=sys.stderr)
        self.error = f"{kind.__name__ if kind else 'error'}: {exc}"

    def run(
        self,
        work: Callable[[], RunResult],
        *,
        allow_commands: bool,
        partial: Callable[[], RunResult],
        allow_remote_mcp: bool = False,
        mcp_transport: str = "stdio",
    ) -> RunResult:
        """``work()`` under the trust policy of scenario commands (docs/scenarios.md#trust), noting a
        Ctrl-C or an internal error here; its result, or ``partial()`` (the cases that finished) when
        the run stopped early, with the commands the run started."""
        from conformance.mcp_bridge.trust import command_policy

        result: RunResult | None = None
        with command_policy(allow=allow_commands, allow_remote=allow_remote_mcp, transport=mcp_transport) as started:
            try:
                with self.watching():
                    result = work()
            except KeyboardInterrupt:
                self.interrupted = True
            except Exception:  # a bug of ours: the cases that finished are still reported
                self.crashed()
        if result is None or self.early:
            result = partial()
        return dataclasses.replace(result, commands=tuple(c.to_json() for c in started.commands()))

    def __call__(self, case: CaseResult) -> None:
        self.cases.append(case)
        if self.show is not None:
            self.show(case)
        if self.interrupted:
            raise KeyboardInterrupt

    @contextmanager
    def watching(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread() or (
            signal.getsignal(signal.SIGINT) is not signal.default_int_handler  # ignored (nohup, a test): as it is
        ):
            yield
            return
        previous_hook = sys.unraisablehook

        def interrupt(signum: int, frame: object) -> None:
            self.interrupted = True
            raise KeyboardInterrupt

        def hook(unraisable: Any) -> None:
            if not isinstance(unraisable.exc_value, KeyboardInterrupt):  # a dropped Ctrl-C is noted above
                previous_hook(unraisable)

        signal.signal(signal.SIGINT, interrupt)
        sys.unraisablehook = hook
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, signal.default_int_handler)
            sys.unraisablehook = previous_hook
