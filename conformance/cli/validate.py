"""``conformance validate``: check scenario files and print every problem with its place, and the
commands the valid ones would start.

A scenario taking its tools from an MCP server starts ``tools.mcp.command`` when it runs; each such
command is listed (argv with ``{python}`` resolved, cwd, the names of the env variables it adds) with
whether it runs as it is (a bundled scenario) or only with ``--allow-commands``
(``conformance.mcp_bridge.trust``). A scenario whose server is a Streamable HTTP ``url`` is listed
with that URL (and the names of its headers), and one that is not loopback says it runs only with
``--allow-remote-mcp``. Exit 0 when every file is valid, 1 when any has problems, 2 on
usage errors.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

from conformance.cli.options import add_limit_option

__all__ = ["add_command", "validate_command"]

_OK, _PROBLEMS, _USAGE = 0, 1, 2


def add_command(commands: Any) -> None:
    """The ``validate`` subcommand and its options."""
    validate = commands.add_parser(
        "validate",
        help="check scenario files against the published schema",
        description=(
            "Check scenario files (files, or directories searched for *.yaml and *.yml; default: the bundled "
            "scenarios) against conformance/schemas/scenario.schema.json and the semantic rules of docs/scenarios.md. "
            "Every problem is printed as file:line:column, the JSON pointer, what was expected and a hint. "
            "Exit 0 when all are valid, 1 when any has problems, 2 on usage errors."
        ),
    )
    validate.add_argument("paths", nargs="*", metavar="PATH", help="scenario file or directory")
    validate.add_argument(
        "--format", choices=("text", "json"), default="text", help="output format (default: %(default)s)"
    )
    add_limit_option(validate)
    validate.set_defaults(handler=_validate)


def _validate(args: argparse.Namespace) -> int:
    return validate_command(args.paths, output_format=args.format)


def validate_command(paths: Sequence[str], *, output_format: Literal["text", "json"] | str = "text") -> int:
    """``conformance validate``: print every problem of every file; 0 all valid, 1 problems, 2 usage."""
    from conformance.errors import UsageError
    from conformance.mcp_bridge.trust import ALLOW_FLAG, ALLOW_REMOTE_FLAG, is_loopback_url, server_command
    from conformance.scenarios.loader import default_scenarios_dir, load_scenarios

    try:
        result = load_scenarios(paths)
    except UsageError as exc:
        print(f"conformance validate: error: {exc}", file=sys.stderr)
        return _USAGE
    if not result.files:
        where = ", ".join(paths) if paths else str(default_scenarios_dir())
        print(f"conformance validate: error: no scenario files (*.yaml, *.yml) under {where}", file=sys.stderr)
        return _USAGE
    problems = [replace(p, path=_shown(p.path)) for p in result.problems]
    bad_files = {p.path for p in problems}
    commands = [c for c in map(server_command, result.scenarios) if c is not None]
    if output_format == "json":
        report = {
            "files": len(result.files),
            "valid": len(result.scenarios),
            "invalid": len(bad_files),
            "scenarios": [s.id for s in result.scenarios],
            "problems": [p.to_json() for p in problems],
            "commands": [c.to_json() for c in commands],
        }
        print(json.dumps(report, ensure_ascii=False, indent=2))
    else:
        for problem in problems:
            print(problem)
        for command in commands:
            needs = [] if command.bundled or not command.argv else [ALLOW_FLAG]
            if command.url is not None and not is_loopback_url(command.url):
                needs.append(ALLOW_REMOTE_FLAG)
            runs = "bundled, " if command.bundled else "not bundled: " if command.argv else ""
            runs += f"runs only with {' and '.join(needs)}" if needs else "runs as it is"
            verb = "starts" if command.argv else "connects to"
            print(f"{command.scenario}: {verb} {command.shown()} ({runs}; {_shown(Path(command.file))})")
        summary = f"{len(result.files)} scenario file(s) checked: {len(result.scenarios)} valid"
        if problems:
            summary += f", {len(bad_files)} with problems ({len(problems)} problem(s))"
        if commands:
            summary += f"; {len(commands)} start a command (listed above)"
        print(summary)
    return _PROBLEMS if problems else _OK


def _shown(path: Path) -> Path:
    """``path`` relative to the working directory when it is under it (shorter to read)."""
    try:
        return path.resolve().relative_to(Path.cwd())
    except ValueError:
        return path
