"""``conformance certify``: certify a black-box client (a driver around a library) end to end.

``conformance certify --client my_pkg.drivers:CLIENT [--wires anthropic,gemini] [--scenarios ...]
[-k ...] [--python VENV/bin/python] [--jobs N] [--shard K/N] [--report-dir ...]`` loads the driver (here, or with
``--python`` in that interpreter: ``conformance.clients.remote``), checks it keeps the contract
(exit 2 naming what is wrong), runs ``conformance.clients.harness.certify`` and prints and writes
what ``conformance run`` does: progress, the matrix, every failing case with its findings, and
the reports. Exit 0 when every case passes (or is unsupported/xfail), 1 when any fails or errors;
like ``conformance run``, a selection of no case or a ``--report-dir`` that cannot be written is a
usage error before anything runs (exit 2), and Ctrl-C writes the reports of the cases that finished,
marked incomplete (exit 130).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from conformance.errors import UsageError

if TYPE_CHECKING:
    from conformance.adapters.base import Adapter
    from conformance.checks.equivalences import EquivalenceTable
    from conformance.clients.harness import CertifyOptions
    from conformance.scenarios.values import Scenario

__all__ = ["certify_command", "load_client"]


def load_client(spec: str, python: str | None = None) -> Any:
    """The client ``spec`` names, checked against the contract (``UsageError`` says what is wrong)."""
    from conformance.clients.contract import client_problems

    if python is not None:
        from conformance.clients.remote import RemoteClient

        return RemoteClient(spec, python)
    from conformance.clients.child import load_object

    try:
        client = load_object(spec)
    except (ImportError, AttributeError) as exc:
        raise UsageError(f"--client {spec}: {exc} (is it on PYTHONPATH?)") from exc
    except Exception as exc:  # the driver module failed while importing
        raise UsageError(f"--client {spec}: importing it failed: {type(exc).__name__}: {exc}") from exc
    problems = client_problems(client)
    if problems:
        raise UsageError(f"--client {spec}: " + "; ".join(problems) + " (see docs/clients.md)")
    return client


def certify_command(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    from conformance.cli.run import (
        Finished,
        Progress,
        check_gap_keys,
        chosen_checks,
        ci_options,
        compile_keyword,
        empty_shard,
        families_and_formats,
        finish,
        jobs_option,
        nothing_selected,
        record_args,
        rerun_command,
        select_scenarios,
        selection_of,
        shard_option,
        split_list,
    )
    from conformance.clients.harness import CertifyOptions, case_modes, certify, chosen_pairs, client_adapter
    from conformance.console.output import QuietOnBrokenPipe
    from conformance.reporting import check_report_dir
    from conformance.run.runner import run_result

    out = QuietOnBrokenPipe.around(out)
    client: Any = None
    try:
        checks, formats = families_and_formats(args)
        families, kept = chosen_checks(checks)
        if args.timeout <= 0:
            raise UsageError("--timeout must be positive")
        select = compile_keyword(args.keyword) if args.keyword else None
        scenarios, problems = select_scenarios(args.scenarios or [], args.scenarios_dir or ())
        if args.intercept and args.python:
            raise UsageError("--intercept patches this process's HTTP clients: it cannot reach a --python driver")
        client = load_client(args.client, args.python)
        if args.python and client.network != "namespace":  # one line: the driver has the guard alone
            print(f"conformance certify: the driver's network: {client.network} (docs/clients.md)", file=sys.stderr)
        check_gap_keys(client.known_gaps, "--client")
        wires = tuple(split_list([args.wires])) if args.wires is not None else None
        if wires is not None and (missing := [w for w in wires if w not in client.wires]):
            raise UsageError(
                f"{client.name} does not declare {', '.join(missing)} (it declares {', '.join(client.wires)})"
            )
        ci = ci_options(args)  # --baseline, --last-failed (docs/ci.md)
        equivalences = _equivalences(args.equivalences or ())
        jobs = jobs_option(args)
        shard = shard_option(args)
    except UsageError as exc:
        print(f"conformance certify: error: {exc}", file=sys.stderr)
        _close(client)
        return 2
    if ci.nothing_to_rerun:
        print(ci.nothing_to_rerun, file=out)
        _close(client)
        return 0
    select, scenarios = ci.narrow(select, scenarios)
    for problem in problems:
        print(problem, file=sys.stderr)
    options = CertifyOptions(
        user_cassette_dirs=tuple(Path(d) for d in args.cassette_dir or ()),
        record_args=record_args(args),
        wires=wires,
        families=families,
        checks=kept,
        timeout=args.timeout,
        select=select,
        fail_fast=args.fail_fast,
        model=args.model,
        intercept=args.intercept,
        equivalences=equivalences,
        jobs=jobs,
        shard=shard,
    )
    columns = [client_adapter(client, w) for w in client.wires if wires is None or w in wires]
    report_dir = Path(args.report_dir)
    try:
        if not problems and not any(_selected(s, c, options) for c in columns for s in scenarios):
            known = f"{client.name} declares the wires {', '.join(client.wires)}"
            raise UsageError(nothing_selected(args, [c.name for c in columns], scenarios, noun="wires", known=known))
        check_report_dir(report_dir, formats)
    except UsageError as exc:
        print(f"conformance certify: error: {exc}", file=sys.stderr)
        _close(client)
        return 2
    total = sum(len(case_modes(c, s, options)) for c, s in chosen_pairs(columns, scenarios, options))
    if not total and shard is not None:
        print(empty_shard(shard), file=out)
    progress = None if args.quiet else Progress(out, judge=ci.judge, total=total)
    finished = Finished(progress)
    try:
        result = finished.run(
            lambda: certify(scenarios, client, options, progress=finished, problems=problems),
            allow_commands=args.allow_commands,
            partial=lambda: run_result(
                columns, scenarios, finished.cases, problems=problems, model=args.model, equivalences=equivalences
            ),
        )
    finally:
        _close(client)
    return finish(
        result,
        out,
        progress=progress,
        quiet=args.quiet,
        verbose=args.verbose,
        report_dir=report_dir,
        formats=formats,
        label=f"{client.name}: ",
        ci=ci,
        rerun=lambda case: rerun_command(args, case, _rerun_words(args, case.adapter)),
        interrupted=finished.interrupted,
        error=finished.error,
        command="certify",
        selection=selection_of(args, "certify", checks, shard),
    )


def _equivalences(files: Sequence[str]) -> EquivalenceTable | None:
    """The suite's table with the rows of ``--equivalences`` files after it (None: the suite's alone);
    ``UsageError`` names the file and row of anything malformed."""
    from conformance.checks.equivalences import bundled_table, merged, read_table

    if not files:
        return None
    return merged([bundled_table(), *(read_table(Path(f)) for f in files)])


def _selected(scenario: Scenario, column: Adapter, options: CertifyOptions) -> bool:
    """Does the (wire column, scenario) pair hold a case the run's modes and ``-k`` select (as the
    harness chooses them)?"""
    modes = [m for m in scenario.modes if m in options.modes]
    return any(options.select is None or options.select(column.name, scenario.id, m) for m in modes)


def _rerun_words(args: argparse.Namespace, adapter: str) -> list[str]:
    """How the rerun command of a case names the client (``client/wire``: the wire after the slash)."""
    words = ["certify", "--client", args.client]
    if args.python:
        words += ["--python", args.python]
    if args.intercept:
        words.append("--intercept")
    return [*words, "--wires", adapter.rpartition("/")[2]]


def _close(client: Any) -> None:
    close = getattr(client, "close", None)
    if callable(close) and type(client).__name__ == "RemoteClient":
        close()
