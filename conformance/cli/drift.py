"""``conformance drift``: re-record into a scratch folder and say what changed against the stored cassettes.

Each chosen (adapter, scenario) pair is recorded exactly as ``conformance record`` would record it
(``conformance.run.recording.record_pairs``: live with ``--base-url``, or against the loopback
emulator with ``--emulator``), but into a temporary folder that is removed afterwards: the stored
cassettes (``--cassette-dir``, default the bundled ones) are only read. Each fresh cassette is then
compared with the stored one (``conformance.traffic.cassette_diff``: field paths and JSON types added,
removed or changed in request and response bodies and stream events, values left once volatile ones
are normalised). Per pair: ``unchanged``, ``drifted`` with the changes, ``missing`` (no stored
cassette), ``failed`` (the recording failed or the stored cassette does not read) or
``unsupported``. ``--format json`` prints the same as one JSON document on stdout.

The bounds of a live recording hold here too: ``--exchange-timeout`` per exchange (connecting and
the headers included), ``--max-body`` per decoded response body, ``--timeout`` per pair (its
exchange in flight is cut when it passes).

Exit 0 when every pair is unchanged (or unsupported), 1 when any drifted, is missing or failed,
2 on usage errors.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from conformance.cli.options import PAIR_TIMEOUT_HELP, add_limit_option, add_live_options, add_mcp_options, seconds

if TYPE_CHECKING:
    from conformance.traffic.cassette_diff import Change

__all__ = ["PairDrift", "add_command", "drift_command"]

_USAGE = 2
_RECORDED = frozenset({"written", "unchanged", "recorded"})
"""What ``record_pairs`` says of a pair it recorded (``recorded``: the live recorder's word)."""


def add_command(commands: Any) -> None:
    """The ``drift`` subcommand and its options."""
    drift = commands.add_parser(
        "drift",
        help="re-record into a scratch folder and show what changed against the stored cassettes",
        description=(
            "Record the chosen scenarios x adapters as `conformance record` would, into a temporary folder (the stored "
            "cassettes are only read), and print per pair `unchanged` or what changed: field paths and JSON types "
            "added, removed or changed in bodies and stream events, and values, with volatile values (ids, created, "
            "timings) normalised. Exit 0 when every pair is unchanged, 1 when any drifted, is missing or failed, "
            "2 on usage errors."
        ),
    )
    drift.add_argument("--base-url", metavar="URL", help="the live provider's base URL")
    drift.add_argument("--emulator", action="store_true", help="record against the loopback emulator instead")
    drift.add_argument(
        "--adapters", "--adapter", dest="adapter", action="append", metavar="A,B", help="adapter names (repeatable)"
    )
    drift.add_argument("--api-key-env", metavar="VAR", help="environment variable holding the API key")
    drift.add_argument("--model", metavar="NAME", help="model name to request (default: per adapter)")
    drift.add_argument(
        "--scenarios", "--scenario", dest="scenario", action="append", metavar="ID|GLOB", help="scenario ids or globs"
    )
    drift.add_argument(
        "--scenarios-dir",
        action="append",
        metavar="DIR",
        help="your scenarios, added to the bundled ones (same id: yours wins; repeatable); without --scenarios, "
        "only yours are recorded",
    )
    drift.add_argument("--cassette-dir", metavar="DIR", help="the stored cassettes (default: the bundled ones)")
    drift.add_argument(
        "--allow-commands",
        action="store_true",
        help="let scenarios that are not bundled start their tools.mcp commands (trusted scenarios only: "
        "docs/scenarios.md#trust)",
    )
    add_mcp_options(drift)
    drift.add_argument("--timeout", type=seconds("--timeout"), default=300.0, help=PAIR_TIMEOUT_HELP)
    drift.add_argument("--format", choices=("text", "json"), default="text", help="output (default: %(default)s)")
    add_live_options(drift)
    add_limit_option(drift)
    drift.set_defaults(handler=drift_command)


@dataclass(frozen=True, kw_only=True)
class PairDrift:
    adapter: str
    scenario: str
    status: str
    """``unchanged``, ``drifted``, ``missing``, ``failed`` or ``unsupported``."""
    detail: str = ""
    changes: tuple[Change, ...] = ()

    def as_json(self) -> dict[str, Any]:
        return {
            "adapter": self.adapter,
            "scenario": self.scenario,
            "status": self.status,
            "detail": self.detail,
            "changes": [c.as_json() for c in self.changes],
        }


def drift_command(args: argparse.Namespace) -> int:
    """The ``conformance drift`` command (arguments parsed by ``conformance.cli``); prints the MCP
    server commands it started, as ``record`` does (``--allow-commands``: docs/scenarios.md#trust)."""
    from conformance.mcp_bridge.trust import command_policy

    with command_policy(
        allow=args.allow_commands, allow_remote=args.allow_remote_mcp, transport=args.mcp_transport
    ) as started:
        code = _drift(args)
    for command in started.commands():
        print(f"started for {command.scenario}: {command.shown()}", file=sys.stderr)
    return code


def _drift(args: argparse.Namespace) -> int:
    from conformance.adapters import BUILTIN, get_adapter
    from conformance.cli.record import key_from_env, no_match, scenario_pool, unknown_adapters
    from conformance.errors import UsageError
    from conformance.run.live import DEFAULT_SAMPLING
    from conformance.run.recording import cassette_path, record_pairs, record_with_emulator, select_scenarios
    from conformance.scenarios import bundled

    if args.emulator == bool(args.base_url):
        return _usage("give either --base-url URL (a live provider) or --emulator")
    if args.emulator and args.api_key_env:
        return _usage("--api-key-env goes with --base-url; --emulator starts its own server")
    names = [n.strip() for value in (args.adapter or []) for n in value.split(",") if n.strip()]
    if not names:
        if not args.emulator:
            return _usage("--adapters NAME is required with --base-url (the wire the provider speaks)")
        names = sorted(BUILTIN)
    if unknown := unknown_adapters(names):
        return _usage(unknown)
    knobs = {k: getattr(args, k) for k in ("temperature", "seed", "max_tokens") if hasattr(args, k)}
    if args.emulator and knobs:
        given = ", ".join(f"--{k.replace('_', '-')}" for k in knobs)
        return _usage(f"{given} go with --base-url; the emulator plays the scenario's script")
    api_key, unset = key_from_env(args.api_key_env)
    if unset:
        return _usage(unset)
    stored = Path(args.cassette_dir) if args.cassette_dir else bundled.cassettes_dir()
    if not stored.is_dir():
        return _usage(f"--cassette-dir {stored}: no such folder (the stored cassettes to compare with)")
    try:
        pool, problems = scenario_pool(args)
    except UsageError as exc:
        return _usage(str(exc))
    chosen = select_scenarios(pool, args.scenario)
    if not chosen:
        return _usage(no_match(args.scenario, pool))
    adapters = {name: get_adapter(name) for name in names}
    progress = sys.stderr if args.format == "text" else None

    with tempfile.TemporaryDirectory(prefix="conformance-drift-") as scratch_name:
        scratch = Path(scratch_name)
        if args.emulator:
            results = record_with_emulator(
                chosen,
                list(adapters.values()),
                cassette_dir=scratch,
                model=args.model,
                progress=progress,
                timeout=args.timeout,
                exchange_timeout=args.exchange_timeout,
                max_body=args.max_body,
            )
        else:
            results = record_pairs(
                chosen,
                list(adapters.values()),
                cassette_dir=scratch,
                base_url=args.base_url,
                mode="live",
                api_key=api_key,
                model=args.model,
                progress=progress,
                timeout=args.timeout,
                sampling=dataclasses.replace(DEFAULT_SAMPLING, **knobs),  # as `record --live` sends them
                exchange_timeout=args.exchange_timeout,
                max_body=args.max_body,
                allow_deviation=True,  # a model that answers otherwise is a difference to show, not a failure
            )
        pairs: list[PairDrift] = []
        for result in results:
            adapter = adapters[result.adapter]
            pairs.append(
                _judge(
                    result.adapter,
                    result.scenario,
                    result.status,
                    result.detail,
                    stored=cassette_path(stored, adapter.traffic_format, result.scenario),
                    fresh=cassette_path(scratch, adapter.traffic_format, result.scenario),
                )
            )
    counts = {
        s: sum(p.status == s for p in pairs) for s in ("unchanged", "drifted", "missing", "failed", "unsupported")
    }
    code = 1 if counts["drifted"] or counts["missing"] or counts["failed"] or problems else 0
    if args.format == "json":
        document = {"stored": str(stored), "pairs": [p.as_json() for p in pairs], "counts": counts, "exit_code": code}
        print(json.dumps(document, indent=2, ensure_ascii=False))
    else:
        for pair in pairs:
            print(_render(pair))
        print(", ".join(f"{n} {status}" for status, n in counts.items()))
    return code


def _judge(adapter: str, scenario: str, status: str, detail: str, *, stored: Path, fresh: Path) -> PairDrift:
    """The drift of one pair from its recording's status and the two files."""

    def pair(status: str, detail: str = "", changes: tuple[Change, ...] = ()) -> PairDrift:
        return PairDrift(adapter=adapter, scenario=scenario, status=status, detail=detail, changes=changes)

    if status == "unsupported":
        return pair("unsupported", detail=detail)
    if status not in _RECORDED or not fresh.is_file():
        why = detail or "nothing was recorded"
        return pair("failed", detail=f"{status}: {why}")
    if not stored.is_file():
        return pair("missing", f"no stored cassette at {stored}; record it with conformance record, then drift again")
    import yaml

    from conformance.errors import ConformanceError
    from conformance.traffic.cassette_diff import compare_cassettes
    from conformance.traffic.safe_yaml import load_yaml

    try:
        old = load_yaml(stored.read_bytes(), name=str(stored))
        new = load_yaml(fresh.read_bytes(), name=str(fresh))
    except (OSError, ConformanceError, ValueError, yaml.YAMLError) as exc:
        return pair("failed", detail=f"{stored}: does not read ({exc}); re-record it")
    if not isinstance(old, dict) or not isinstance(new, dict):
        return pair("failed", detail=f"{stored}: not a cassette (a mapping); re-record it")
    changes = compare_cassettes(old, new)
    note = f"{status}: {detail}" if status not in ("written", "unchanged", "recorded") else ""
    return pair("drifted" if changes else "unchanged", note, changes)


def _render(pair: PairDrift) -> str:
    head = f"{pair.adapter} {pair.scenario}: {pair.status}"
    if pair.status == "drifted":
        head += f" ({len(pair.changes)} change(s) against the stored cassette)"
    lines = [head + (f" - {pair.detail}" if pair.detail else "")]
    lines += [f"  {change.describe()}" for change in pair.changes]
    return "\n".join(lines)


def _usage(message: str) -> int:
    print(f"conformance drift: error: {message}", file=sys.stderr)
    return _USAGE
