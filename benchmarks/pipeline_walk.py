"""How far does one ``conformance run`` wander through the package? (issue 29, "One pipeline")

Runs one command in this process under ``sys.settrace`` (``threading.settrace`` too) and follows the
calls between the package's modules from the command's function (``run_command``) down. A *room* is a
module of ``conformance`` the run enters; a *climb back up* is a call from one module into another
that is already lower on the stack (a callback: the runner calling the progress back, a lambda of
the caller called by the runner), counted once per pair of modules, and the calls back into the
command line (``conformance.cli``) apart; a *return to an earlier module* is a function of one module
returning to another (into the command line: counted apart). Calls through modules outside the
package (the standard library, rich, httpx) are transparent: a call's caller is the nearest frame of
the package below it. Worker processes are not followed (their results come back through the
parent, which is what is counted).

    python benchmarks/pipeline_walk.py                       # the tiny run of issue 29
    python benchmarks/pipeline_walk.py --json walk.json -- run --adapters gemini --scenarios 'basic/*'

Counts, not times: the figures are the same on every machine for the same code.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import Any

__all__ = ["TINY_RUN", "Walk", "main", "walk"]

TINY_RUN = ("run", "--adapters", "openai_chat", "--scenarios", "basic/get_time", "--quiet", "--format", "json")
"""The run the issue walks: one adapter, one scenario (its two modes), only the summary line."""

_PACKAGE = str(Path(__file__).resolve().parent.parent / "conformance")


class Walk:
    """The modules a traced command entered, in order, and the climbs back up (caller, callee)."""

    def __init__(self) -> None:
        self.rooms: list[str] = []
        self.climbs: list[tuple[str, str]] = []
        self.climb_calls = 0
        """Every call back up (the same pair again included)."""
        self.climbs_into_cli = 0
        """Of those, calls back into the command line (``conformance.cli``)."""
        self.returns = 0
        """Returns from a module to the one that called it (another module)."""
        self.returns_to_cli = 0
        """Of those, returns into the command line (``conformance.cli``)."""
        self._lock = threading.Lock()

    def trace(self, frame: FrameType, event: str, arg: Any) -> Any:
        if event != "call":
            return None
        module = _module(frame)
        if module is None:
            return None
        below = _package_stack(frame.f_back)
        if below is None or frame.f_code.co_name == "<module>":  # importing a module: not the run's walk
            return None
        caller = below[-1] if below else None
        with self._lock:
            if module not in self.rooms:
                self.rooms.append(module)
            if caller is not None and caller != module and module in below[:-1]:
                self.climb_calls += 1
                if module.startswith("conformance.cli"):
                    self.climbs_into_cli += 1
                if (caller, module) not in self.climbs:
                    self.climbs.append((caller, module))
        if caller is not None and caller != module:
            frame.f_trace_lines = False
            return self._returning
        return None

    def _returning(self, frame: FrameType, event: str, arg: Any) -> Any:
        """A frame entered from another module: its return climbs back up to that module."""
        if event == "return":
            below = _package_stack(frame.f_back) or []
            with self._lock:
                self.returns += 1
                if below and below[-1].startswith("conformance.cli"):
                    self.returns_to_cli += 1
        return self._returning


def _module(frame: FrameType) -> str | None:
    """The ``conformance`` module ``frame`` runs in (None: outside the package)."""
    filename = frame.f_code.co_filename
    if not filename.startswith(_PACKAGE):
        return None
    relative = Path(filename).relative_to(Path(_PACKAGE).parent).with_suffix("")
    parts = list(relative.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _package_stack(frame: FrameType | None) -> list[str] | None:
    """The package's modules on the stack from ``frame`` down, bottom first, repeats folded (None: the
    stack is importing one of them)."""
    found: list[str] = []
    while frame is not None:
        module = _module(frame)
        if module is not None and frame.f_code.co_name == "<module>":
            return None
        if module is not None and (not found or found[-1] != module):
            found.append(module)
        frame = frame.f_back
    return found[::-1]


def walk(argv: Sequence[str]) -> tuple[Walk, int]:
    """Run ``conformance <argv>``, its command's function traced (the parser is built and the arguments
    parsed first, untraced: every command defines its arguments); the walk and the exit code."""
    from conformance.cli import build_parser

    args = build_parser().parse_args(list(argv))
    traced = Walk()
    threading.settrace(traced.trace)
    sys.settrace(traced.trace)
    try:
        code = int(args.handler(args))
    finally:
        sys.settrace(None)
        threading.settrace(None)
    return traced, code


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--json", metavar="PATH", help="also write the rooms and climbs as JSON")
    parser.add_argument("command", nargs="*", help="the conformance command (default: the issue's tiny run)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        command = list(args.command) or [*TINY_RUN, "--report-dir", scratch]
        traced, code = walk(command)
    print(f"conformance {' '.join(command[:1])}: exit {code}")
    print(f"rooms (modules entered): {len(traced.rooms)}")
    print(
        f"climbs back up (calls into a module lower on the stack): {len(traced.climbs)} pairs of modules, "
        f"{traced.climb_calls} calls"
    )
    print(f"  of them into the command line (cli/): {traced.climbs_into_cli} calls")
    print(f"returns to an earlier module: {traced.returns}, into the command line (cli/): {traced.returns_to_cli}")
    for caller, callee in traced.climbs:
        print(f"  {caller} -> {callee}")
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "rooms": traced.rooms,
                    "climbs": traced.climbs,
                    "climb_calls": traced.climb_calls,
                    "climbs_into_cli": traced.climbs_into_cli,
                    "returns": traced.returns,
                    "returns_to_cli": traced.returns_to_cli,
                },
                indent=2,
            )
            + "\n",
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
