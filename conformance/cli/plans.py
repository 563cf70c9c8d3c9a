"""A command line's arguments as the pipeline's plain values (``conformance.pipeline.plan.Plan``).

``plan_of`` turns what ``run`` and ``certify`` read (``--checks``, ``-k``, ``--timeout``, the
scenarios, the CI options ...) into a ``Plan``; ``selection_of`` is what the reports record of the
command line, ``record_args`` what a printed ``conformance record`` line needs, and
``rerun_command`` the command that reruns one case (``conformance.pipeline.finish.rerun_line`` with
the options of ``args`` that change what runs).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from conformance.pipeline.ci import CiOptions
    from conformance.pipeline.plan import Plan
    from conformance.run.shard import Shard
    from conformance.scenarios.values import Scenario
    from conformance.verdicts import Selection

__all__ = ["ci_of", "plan_of", "record_args", "rerun_command", "rerun_options", "scenario_paths", "selection_of"]


def plan_of(
    args: argparse.Namespace,
    command: str,
    *,
    checks: Sequence[str],
    formats: Sequence[str],
    select: Callable[[str, str, str], bool] | None,
    timeout: float,
    jobs: int,
    shard: Shard | None,
    scenarios: Sequence[Scenario],
    problems: Sequence[str],
    ci: CiOptions,
) -> Plan:
    """The plan of ``command`` (``run``, ``certify``) from ``args`` and the values already read from it."""
    from conformance.pipeline.plan import Plan
    from conformance.pipeline.selection import chosen_checks

    families, kept = chosen_checks(checks)
    return Plan(
        command=command,
        scenarios=tuple(scenarios),
        problems=tuple(problems),
        families=families,
        checks=kept,
        select=select,
        timeout=timeout,
        fail_fast=args.fail_fast,
        exhaustive=bool(getattr(args, "exhaustive", False)),
        jobs=jobs,
        shard=shard,
        model=getattr(args, "model", None),
        user_cassette_dirs=tuple(Path(d) for d in args.cassette_dir or ()),
        record_args=record_args(args),
        allow_commands=args.allow_commands,
        allow_remote_mcp=bool(getattr(args, "allow_remote_mcp", False)),
        mcp_transport=str(getattr(args, "mcp_transport", "stdio") or "stdio"),
        report_dir=Path(args.report_dir),
        formats=tuple(formats),
        ci=ci,
        quiet=args.quiet,
        verbose=args.verbose,
        selection=selection_of(args, command, checks, shard),
        scenario_paths=scenario_paths(args),
        rerun_options=rerun_options(args),
    )


def ci_of(args: argparse.Namespace) -> CiOptions:
    """``--baseline``, ``--update-baseline``, ``--strict-baseline``, ``--last-failed`` (docs/ci.md) read."""
    from conformance.pipeline.ci import read_ci

    return read_ci(
        baseline=getattr(args, "baseline", None),
        update=bool(getattr(args, "update_baseline", False)),
        strict=bool(getattr(args, "strict_baseline", False)),
        last_failed=bool(getattr(args, "last_failed", False)),
        report_dir=getattr(args, "report_dir", "reports"),
    )


def selection_of(args: argparse.Namespace, command: str, checks: Sequence[str], shard: Shard | None) -> Selection:
    """What the command line selected, for the report (``selection``; ``checks``: the families and check
    ids of ``--checks``, as asked)."""
    from conformance.pipeline.selection import split_list
    from conformance.verdicts import Selection

    wires = getattr(args, "wires", None)
    return Selection(
        command=command,
        scenarios=tuple(getattr(args, "scenarios", None) or ()),
        keyword=getattr(args, "keyword", None),
        checks=tuple(checks),
        wires=tuple(split_list([wires])) if wires is not None else None,
        model=getattr(args, "model", None),
        shard=None if shard is None else str(shard),
        note=getattr(args, "note", None),
    )


def record_args(args: argparse.Namespace) -> tuple[str, ...]:
    """What a ``conformance record`` line needs to find the user's scenarios and write where the
    run reads the user's cassettes."""
    found: list[str] = []
    for folder in args.scenarios_dir or ():
        found += ["--scenarios-dir", folder]
    if args.cassette_dir:
        found += ["--cassette-dir", args.cassette_dir[0]]
    if getattr(args, "allow_commands", False):
        found.append("--allow-commands")
    if getattr(args, "allow_remote_mcp", False):
        found.append("--allow-remote-mcp")
    if getattr(args, "mcp_transport", "stdio") == "http":
        found += ["--mcp-transport", "http"]
    return tuple(found)


def scenario_paths(args: argparse.Namespace) -> tuple[str, ...]:
    """The ``--scenarios`` that name files or folders (a rerun names them again; ids are named by ``-k``)."""
    return tuple(s for s in getattr(args, "scenarios", None) or () if Path(s).exists())


def rerun_options(args: argparse.Namespace) -> tuple[str, ...]:
    """The options of ``args`` that change what runs, as a rerun command repeats them."""
    words: list[str] = []
    if getattr(args, "checks", None):
        words += ["--checks", args.checks]
    if getattr(args, "exhaustive", False):
        words.append("--exhaustive")
    if getattr(args, "model", None):
        words += ["--model", args.model]
    if getattr(args, "allow_commands", False):
        words.append("--allow-commands")
    if getattr(args, "allow_remote_mcp", False):
        words.append("--allow-remote-mcp")
    if getattr(args, "mcp_transport", "stdio") == "http":
        words += ["--mcp-transport", "http"]
    for option in ("cassette_dir", "scenarios_dir"):
        value: Any = getattr(args, option, None) or ()
        for folder in [value] if isinstance(value, str) else value:  # repeatable: each one again
            words += [f"--{option.replace('_', '-')}", str(folder)]
    return tuple(words)


def rerun_command(args: argparse.Namespace, case: Any, command: list[str]) -> str:
    """The shell command that reruns ``case`` alone: ``conformance`` + ``command`` (the subcommand and how
    it names the adapter or client), the options that change what runs, ``-k`` naming the case."""
    from conformance.pipeline.finish import rerun_line

    return rerun_line(command, case, scenario_paths=scenario_paths(args), options=rerun_options(args))
