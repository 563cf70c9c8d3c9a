"""``conformance list``: the scenarios, adapters (with capabilities) and checks, as text or JSON.

It takes the selection flags of ``run``: ``--scenarios PATH|GLOB``, ``--scenarios-dir DIR``
(yours, added to the bundled ones), ``--adapters A,B`` / ``--adapter NAME``. ``--format json``
prints one object for scripts: ``scenarios`` (each with ``id``, ``behavior``, ``requires``,
``wires`` and ``path``), ``adapters`` (``name``, ``wire``, ``capabilities``), ``checks`` (family
-> ids) and ``problems``. Scenario files with problems are listed on stderr (text) or under
``problems`` (JSON) and make the exit code 1; a selection that names nothing is a usage error (2).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO

from conformance.cli.options import add_limit_option

__all__ = ["add_command", "list_command"]


def add_command(commands: Any) -> None:
    """The ``list`` subcommand and its options."""
    listing = commands.add_parser(
        "list",
        help="show the scenarios, adapters (with capabilities) and checks",
        description="Show what `conformance run` chooses from: the scenarios (bundled, plus --scenarios-dir), the "
        "adapters with their capabilities, and the check ids. Takes run's selection flags. Exit 0, 1 when a "
        "scenario file has problems (listed), 2 on usage errors.",
    )
    listing.add_argument("--scenarios", action="append", metavar="PATH|GLOB", help="scenario files/folders or id glob")
    listing.add_argument("--adapter", action="append", metavar="NAME|MODULE:OBJECT", help="adapter to show (repeat)")
    listing.add_argument("--adapters", action="append", metavar="A,B", help="comma-separated adapter names")
    listing.add_argument(
        "--scenarios-dir",
        action="append",
        metavar="DIR",
        help="your scenarios, added to the bundled ones (same id: yours wins; repeatable)",
    )
    listing.add_argument(
        "--format", choices=("text", "json"), default="text", help="output format (default: %(default)s)"
    )
    add_limit_option(listing)
    listing.set_defaults(handler=list_command)


def list_command(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Print what ``run`` would choose from; the exit code (0, 1 for scenario problems, 2 usage)."""
    from conformance.adapters import BUILTIN
    from conformance.console.output import output_width, wrapped
    from conformance.errors import UsageError
    from conformance.pipeline.selection import CHECK_IDS, load_adapter, select_scenarios, split_list

    out = out or sys.stdout
    try:
        scenarios, problems = select_scenarios(getattr(args, "scenarios", None) or [], args.scenarios_dir or ())
        names = [*(args.adapter or []), *split_list(args.adapters)] or sorted(BUILTIN)
        adapters = [load_adapter(name) for name in names]
    except UsageError as exc:
        print(f"conformance list: error: {exc}", file=sys.stderr)
        return 2
    if args.format == "json":
        document: dict[str, Any] = {
            "scenarios": [
                {
                    "id": s.id,
                    "behavior": s.behavior,
                    "requires": sorted(s.requires),
                    "wires": list(s.wires),
                    "path": str(s.path),
                }
                for s in scenarios
            ],
            "adapters": [
                {"name": a.name, "wire": a.wire_format, "capabilities": sorted(a.capabilities)} for a in adapters
            ],
            "checks": {family: list(ids) for family, ids in CHECK_IDS.items()},
            "problems": problems,
        }
        print(json.dumps(document, indent=2, ensure_ascii=False), file=out)
        return 1 if problems else 0
    width = output_width()

    def entry(text: str) -> None:  # one entry, wrapped to the terminal's width under a hanging indent
        print("\n".join(wrapped(text, width, indent="  ", next_indent="      ")), file=out)

    print(f"Scenarios ({len(scenarios)}):", file=out)
    for scenario in scenarios:
        requires = f"  [requires {', '.join(sorted(scenario.requires))}]" if scenario.requires else ""
        wires = f"  [wires {', '.join(scenario.wires)}]" if scenario.wires else ""
        entry(f"{scenario.id}: {scenario.behavior}{requires}{wires}")
    print(f"\nAdapters ({len(adapters)}):", file=out)
    for adapter in adapters:
        entry(f"{adapter.name} (wire {adapter.wire_format}): {', '.join(sorted(adapter.capabilities))}")
    print("\nChecks:", file=out)
    for family, ids in CHECK_IDS.items():
        entry(f"{family}: {', '.join(ids)}")
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0
