"""``Plan``: every choice of one run as plain values, whatever the kind of target.

The command line reads its arguments into a ``Plan`` (``conformance.cli.options``); a target
(``conformance.pipeline.targets``) turns the plan into its own options (``RunOptions`` of the runner,
``CertifyOptions`` of the client harness, ...), and ``conformance.pipeline.run.run_target`` runs it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from conformance.pipeline.ci import CiOptions
from conformance.pipeline.selection import FAMILIES, REPORT_FORMATS, TIMEOUT

if TYPE_CHECKING:
    from conformance.run.shard import Shard
    from conformance.scenarios.values import Scenario
    from conformance.verdicts import Selection

__all__ = ["Plan"]


@dataclass(frozen=True, kw_only=True)
class Plan:
    """What to run, how to judge it, what to show and where to write (one run, any target)."""

    command: str = "run"
    """The subcommand, as messages name it (``conformance run: error: ...``) and the reports record it."""
    scenarios: tuple[Scenario, ...] = ()
    problems: tuple[str, ...] = ()
    """The scenario files that could not be loaded (printed; they fail the run)."""
    families: tuple[str, ...] = FAMILIES
    """The check families run on every case (``--checks``); a target runs those it has."""
    checks: frozenset[str] | None = None
    """``--checks`` naming check ids: only their verdicts are kept (None: every verdict)."""
    select: Callable[[str, str, str], bool] | None = None
    """``-k``: (column, scenario id, mode) -> run this case?"""
    timeout: float = TIMEOUT
    fail_fast: bool = False
    exhaustive: bool = False
    jobs: int = 1
    shard: Shard | None = None
    model: str | None = None
    user_cassette_dirs: tuple[Path, ...] = ()
    """``--cassette-dir``: searched before the bundled cassettes."""
    record_args: tuple[str, ...] = ()
    """What a printed ``conformance record`` line needs (``--scenarios-dir``, ``--cassette-dir``, ...)."""
    allow_commands: bool = False
    """Let scenarios that are not bundled start their ``tools.mcp`` commands (docs/scenarios.md#trust)."""
    allow_remote_mcp: bool = False
    """Let scenarios reach MCP servers at URLs that are not loopback (``--allow-remote-mcp``, docs/mcp.md)."""
    mcp_transport: str = "stdio"
    """``--mcp-transport``: ``stdio``, or ``http`` to run the bundled MCP server over Streamable HTTP."""
    report_dir: Path = Path("reports")
    formats: tuple[str, ...] = REPORT_FORMATS
    ci: CiOptions = field(default_factory=CiOptions)
    quiet: bool = False
    verbose: bool = False
    selection: Selection | None = None
    """What the command line selected, recorded in the reports."""
    scenario_paths: tuple[str, ...] = ()
    """The ``--scenarios`` that name files or folders: a rerun command names them again."""
    rerun_options: tuple[str, ...] = ()
    """The words of a rerun command between its ``--scenarios`` and its ``-k`` (``--checks``, ``--model``, ...)."""
