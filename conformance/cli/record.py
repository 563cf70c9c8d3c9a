"""``conformance record``: (re)record the cassettes of scenarios x adapters (``conformance.run.recording``).

``--emulator`` starts the loopback emulator and scripts it with the scenario's replies; ``--live``
sends the same requests to ``--base-url`` with the key read from ``--api-key-env``, with the
recording's sampling knobs (``--temperature``, ``--seed``, ``--max-tokens``; ``conformance.run.live``).
Each pair prints one status: ``recorded``, ``unchanged``, ``model deviated: <what the model did
instead>`` or ``failed: <error>`` (or ``unsupported``). The exit code is 1 when any pair failed, or
deviated without ``--allow-deviation``; 2 on usage errors (among them a ``--scenarios-dir`` that is
missing, is a file, or holds a link leading out of it, sampling knobs given with ``--emulator``, and
a ``--timeout``, ``--exchange-timeout`` or ``--max-body`` that is not a finite positive number,
which ``conformance.cli`` refuses while parsing).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from conformance.cli.options import PAIR_TIMEOUT_HELP, add_limit_option, add_live_options, add_mcp_options, seconds

if TYPE_CHECKING:
    from conformance.mcp_bridge.trust import CommandLog
    from conformance.scenarios.values import Scenario

__all__ = ["add_command", "key_from_env", "no_match", "record_command_main", "scenario_pool", "unknown_adapters"]

_USAGE = 2


def add_command(commands: Any) -> None:
    """The ``record`` subcommand and its options."""
    record = commands.add_parser(
        "record",
        help="(re)record cassettes by running adapters against the emulator or a live provider",
        description=(
            "Run the chosen scenarios x adapters, non-streaming then streaming, and write one scrubbed cassette per "
            "pair to CASSETTE_DIR/<adapter>/<scenario-id>.yaml. Each pair is recorded, unchanged (the file is left "
            "byte-identical), model deviated (--live: the model did not do what the scenario allows; nothing is "
            "written unless --allow-deviation), unsupported or failed (nothing is written, the old cassette stays). "
            "Exit 0 when every pair was recorded, unchanged or unsupported, 1 when any deviated (unless "
            "--allow-deviation) or failed, 2 on usage errors."
        ),
    )
    source = record.add_mutually_exclusive_group(required=True)
    source.add_argument("--emulator", action="store_true", help="record against the loopback emulator")
    source.add_argument("--live", action="store_true", help="record against --base-url (a real provider)")
    record.add_argument(
        "--adapters", "--adapter", dest="adapter", action="append", metavar="A,B", help="adapter names (repeatable)"
    )
    record.add_argument(
        "--scenarios", "--scenario", dest="scenario", action="append", metavar="ID|GLOB", help="scenario ids or globs"
    )
    record.add_argument("--base-url", metavar="URL", help="provider base URL (with --live)")
    record.add_argument("--api-key-env", metavar="VAR", help="environment variable holding the API key (with --live)")
    record.add_argument(
        "--model",
        metavar="NAME",
        help="model name to request (default: per adapter; a live cassette then says model_default, and records "
        "the model that answered as served_model either way)",
    )
    record.add_argument(
        "--scenarios-dir",
        action="append",
        metavar="DIR",
        help="your scenarios, added to the bundled ones (same id: yours wins; repeatable); without --scenario, "
        "only yours are recorded",
    )
    record.add_argument(
        "--cassette-dir",
        metavar="DIR",
        help="where to write (default: the bundled cassettes in a checkout; required when installed)",
    )
    record.add_argument(
        "--allow-commands",
        action="store_true",
        help="let scenarios that are not bundled start their tools.mcp commands (trusted scenarios only: "
        "docs/scenarios.md#trust)",
    )
    add_mcp_options(record)
    record.add_argument("--timeout", type=seconds("--timeout"), default=300.0, help=PAIR_TIMEOUT_HELP)
    live_knobs = add_live_options(record)
    record.add_argument(
        "--provenance",
        action="append",
        metavar="KEY=VALUE",
        help="one more provenance line in each live cassette (repeatable): the server build, the model file and "
        "its sha256, the flags it runs with (no secrets)",
    )
    live_knobs.add_argument(
        "--allow-deviation",
        action="store_true",
        help="write the pairs whose model deviated from the scenario too (exit 0 unless one failed)",
    )
    add_limit_option(record)
    record.set_defaults(handler=record_command_main)


def record_command_main(args: argparse.Namespace) -> int:
    """The ``conformance record`` command (arguments parsed by ``conformance.cli``); prints the MCP server
    commands it started (``--allow-commands``: docs/scenarios.md#trust)."""
    from conformance.mcp_bridge.trust import command_policy

    with command_policy(
        allow=args.allow_commands, allow_remote=args.allow_remote_mcp, transport=args.mcp_transport
    ) as started:
        return _record(args, started)


def _record(args: argparse.Namespace, started: CommandLog) -> int:
    from conformance.adapters import BUILTIN, get_adapter, native_adapters
    from conformance.errors import UsageError
    from conformance.run.live import DEFAULT_SAMPLING
    from conformance.run.recording import record_pairs, record_with_emulator, select_scenarios
    from conformance.scenarios import bundled

    names = [n.strip() for value in (args.adapter or []) for n in value.split(",") if n.strip()] or (
        sorted(BUILTIN) if args.emulator else list(native_adapters())
    )
    if unknown := unknown_adapters(names):
        return _usage(unknown)
    if args.live and not args.base_url:
        return _usage("--live needs --base-url URL (and usually --api-key-env VAR)")
    if args.emulator and (args.base_url or args.api_key_env):
        return _usage("--base-url and --api-key-env go with --live; --emulator starts its own server")
    knobs = {k: getattr(args, k) for k in ("temperature", "seed", "max_tokens") if hasattr(args, k)}
    if args.emulator and (knobs or args.allow_deviation):
        given = [f"--{k.replace('_', '-')}" for k in knobs] + (["--allow-deviation"] if args.allow_deviation else [])
        return _usage(f"{', '.join(given)} go with --live; the emulator plays the scenario's script")
    notes, wrong = _notes(args.provenance or [])
    if wrong:
        return _usage(wrong)
    if notes and args.emulator:
        return _usage("--provenance goes with --live (the emulator's cassettes say where they came from)")
    api_key, unset = key_from_env(args.api_key_env)
    if unset:
        return _usage(unset)
    if args.cassette_dir is None and not bundled.is_checkout():
        return _usage(
            "--cassette-dir DIR is required: this conformance is installed, and its bundled cassettes "
            f"({bundled.cassettes_dir()}) are not written unless you name that folder"
        )
    try:
        pool, problems = scenario_pool(args)
    except UsageError as exc:
        return _usage(str(exc))
    chosen = select_scenarios(pool, args.scenario)
    if not chosen:
        if problems:  # the scenarios asked for did not load: a bad file (printed above), exit 1
            print(f"conformance record: no scenario to record: {problems} problem(s) above", file=sys.stderr)
            return 1
        return _usage(no_match(args.scenario, pool))
    adapters = [get_adapter(n) for n in names]
    cassette_dir = Path(args.cassette_dir) if args.cassette_dir else bundled.cassettes_dir()
    if args.live:
        results = record_pairs(
            chosen,
            adapters,
            cassette_dir=cassette_dir,
            base_url=args.base_url,
            mode="live",
            api_key=api_key,
            model=args.model,
            progress=sys.stderr,
            timeout=args.timeout,
            sampling=dataclasses.replace(DEFAULT_SAMPLING, **knobs),
            exchange_timeout=args.exchange_timeout,
            max_body=args.max_body,
            allow_deviation=args.allow_deviation,
            notes=notes,
        )
    else:
        results = record_with_emulator(
            chosen,
            adapters,
            cassette_dir=cassette_dir,
            model=args.model,
            progress=sys.stderr,
            timeout=args.timeout,
            exchange_timeout=args.exchange_timeout,
            max_body=args.max_body,
        )
    for command in started.commands():
        print(f"started for {command.scenario}: {command.shown()}", file=sys.stderr)
    statuses = ("recorded", "unchanged", "deviated", "unsupported", "failed")
    counts = {status: sum(r.status == status for r in results) for status in statuses}
    print(", ".join(f"{n} {status}" for status, n in counts.items()), file=sys.stderr)
    for result in results:
        if result.status in ("failed", "deviated"):
            print(f"{result.status.upper()} {result.adapter} {result.scenario}: {result.shown()}", file=sys.stderr)
    deviated = counts["deviated"] and not args.allow_deviation
    return 1 if counts["failed"] or deviated or problems else 0


_NOTE_KEY = re.compile(r"[a-z][a-z0-9_]{0,63}")
_RESERVED = frozenset(
    {
        "suite",
        "adapter",
        "mode",
        "base_url",
        "model",
        "model_default",
        "served_model",
        "scenario",
        "scenario_sha256",
        "sampling",
        "expected",
        "volatile",
        "clients",
    }
)


def unknown_adapters(names: list[str]) -> str:
    """The usage error for names that are no bundled adapter (with the nearest), or ``""``."""
    from conformance.adapters import BUILTIN
    from conformance.scenarios.problems import closest

    unknown = [n for n in names if n not in BUILTIN]
    if not unknown:
        return ""
    hints = [f"{name}: {hint}" for name in unknown if (hint := closest(name, sorted(BUILTIN)))]
    near = f" ({'; '.join(hints)})" if hints else ""
    return f"unknown adapter {', '.join(unknown)}{near}; known: {', '.join(sorted(BUILTIN))}"


def key_from_env(variable: str | None) -> tuple[str | None, str]:
    """The API key in ``--api-key-env``'s variable (None without one), or the usage error when it is empty."""
    if not variable:
        return None, ""
    key = os.environ.get(variable)
    return (key, "") if key else (None, f"environment variable {variable} is not set or empty")


def scenario_pool(args: argparse.Namespace) -> tuple[tuple[Scenario, ...], int]:
    """The scenarios ``record`` and ``drift`` choose from, and how many files did not load (their
    problems are printed): the bundled ones plus ``--scenarios-dir``'s, only the user's when that is
    given without ``--scenarios``. ``UsageError`` for a folder that is missing, a file, or holds a
    link leaving it."""
    from conformance.pipeline.selection import check_scenarios_dirs
    from conformance.scenarios import bundled
    from conformance.scenarios.loader import load_with_user_dirs

    check_scenarios_dirs(args.scenarios_dir or ())
    loaded = load_with_user_dirs(args.scenarios_dir or ())
    for problem in loaded.problems:
        print(problem, file=sys.stderr)
    pool = loaded.scenarios
    if args.scenarios_dir and not args.scenario:  # no --scenarios: the user's scenarios, not every bundled one
        pool = tuple(s for s in pool if not s.path.resolve().is_relative_to(bundled.scenarios_dir().resolve()))
    return pool, len(loaded.problems)


def no_match(patterns: list[str] | None, pool: tuple[Scenario, ...]) -> str:
    """The usage error for ``--scenarios`` patterns that choose nothing, with the nearest ids."""
    from conformance.scenarios.problems import closest

    ids = [s.id for s in pool]
    hints = [f"{g}: {h}" for g in patterns or () if (h := closest(g, ids))]
    near = f" ({'; '.join(hints)})" if hints else ""
    return f"no scenario matches {', '.join(patterns or ['(all)'])}{near}"


def _notes(pairs: list[str]) -> tuple[dict[str, str], str]:
    """``--provenance KEY=VALUE`` lines, or the usage problem: a key is lower_snake_case and not one
    the recorder writes itself."""
    notes: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not _NOTE_KEY.fullmatch(key):
            return {}, f"--provenance {pair!r}: give KEY=VALUE with a lower_snake_case KEY (e.g. model_sha256=...)"
        if key in _RESERVED:
            return {}, f"--provenance {key}: the recorder writes {key} itself; choose another key"
        notes[key] = value
    return notes, ""


def _usage(message: str) -> int:
    print(f"conformance record: error: {message}", file=sys.stderr)
    return _USAGE
