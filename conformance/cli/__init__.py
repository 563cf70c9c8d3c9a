"""The ``conformance`` command line.

Each subcommand parses its arguments and calls one function. Heavy modules are imported inside
the subcommand, so ``conformance --help`` stays fast. Exit codes: 0 success, 1 findings or
problems, 2 usage errors, 130 interrupted (Ctrl-C: one line, no traceback; ``run`` and ``certify``
write partial reports marked incomplete first), 141 when the reader of the output went away
(``conformance list | head -1``: quiet, as git and coreutils end on SIGPIPE; ``run`` and ``certify``
go on to the end and write their reports, see ``conformance.cli.run``).
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import math
import re
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn, TextIO

__all__ = ["BROKEN_PIPE", "INTERRUPTED", "build_parser", "main"]

_USAGE_ERROR = 2
INTERRUPTED = 130
"""Exit code after Ctrl-C (128 + SIGINT, what a shell reports for a process SIGINT ended)."""
BROKEN_PIPE = 141
"""Exit code when the reader of stdout went away (128 + SIGPIPE, as git and coreutils end)."""


class _Parser(argparse.ArgumentParser):
    """argparse, with a "did you mean" for a misspelt subcommand or choice (``conformance rn``), and
    the message of a numeric option's type (``_number``) as it is, after the option it names."""

    def error(self, message: str) -> NoReturn:
        own = re.fullmatch(r"argument (?:-\w/)?(--[\w-]+): (\1\b.*)", message, flags=re.DOTALL)
        if own:
            message = own.group(2)
        match = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
        if match:
            choices = re.findall(r"'([^']*)'", match.group(2))
            hint = _closest(match.group(1), choices)
            if hint:
                message = f"{message}; {hint}"
        super().error(message)


def _closest(word: str, choices: Sequence[str]) -> str:
    """``did you mean 'x'?`` for the choice nearest ``word``, or ``""``."""
    near = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"did you mean {near[0]!r}?" if near else ""


def _unrecognized(parser: argparse.ArgumentParser, args: argparse.Namespace, extras: Sequence[str]) -> str:
    """The usage error for arguments no option of the command takes, with the nearest flag for each
    misspelt one (``--scenaros`` -> ``--scenarios``)."""
    command = _subparser(parser, getattr(args, "command", None)) or parser
    flags = [flag for action in command._actions for flag in action.option_strings if flag.startswith("--")]
    hints = []
    for extra in extras:
        if extra.startswith("-"):
            hint = _closest(extra.partition("=")[0], flags)
            if hint:
                hints.append(f"{extra}: {hint}")
    command.print_usage(sys.stderr)
    return f"unrecognized arguments: {' '.join(extras)}" + (f" ({'; '.join(hints)})" if hints else "")


def _subparser(parser: argparse.ArgumentParser, name: str | None) -> argparse.ArgumentParser | None:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and name in action.choices:
            found: argparse.ArgumentParser = action.choices[name]
            return found
    return None


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = _Parser(
        prog="conformance",
        description="Conformance suite and recorder for LLM tool-calling adapters.",
    )
    parser.add_argument("--version", action="version", version=f"conformance {_version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    inspect = commands.add_parser(
        "inspect",
        help="decode recorded cassettes with the reference adapters and show what they hold",
        description=(
            "Decode every interaction of the given cassettes (files, or directories searched for *.yaml and "
            "*.yml) with the adapter its URL calls for, and print requests, responses, tool calls, stream "
            "events and provider errors. Exit 0 when everything decoded, 1 when an interaction had problems "
            "or a file could not be read, 2 on usage errors."
        ),
    )
    inspect.add_argument("paths", nargs="+", metavar="PATH", help="cassette file or directory")
    inspect.add_argument(
        "--format", choices=("text", "json"), default="text", help="output format (default: %(default)s)"
    )
    _add_limit_option(inspect)
    inspect.set_defaults(handler=_inspect)

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
    _add_limit_option(validate)
    validate.set_defaults(handler=_validate)

    emulator = commands.add_parser(
        "emulator",
        help="serve the provider emulator on 127.0.0.1",
        description=(
            "Serve the loopback provider emulator (openai_chat, openai_responses, anthropic, gemini and ollama wire) "
            "on 127.0.0.1 until interrupted. With --scenario it plays that scenario's replies turn by turn."
        ),
    )
    emulator.add_argument(
        "--port",
        type=_number("--port", int, low=0, high=65535, what="a TCP port (0-65535; 0 picks a free one)"),
        default=0,
        help="TCP port (default: an ephemeral port, printed)",
    )
    emulator.add_argument(
        "--scenarios", "--scenario", dest="scenario", metavar="ID", help="scenario id whose replies the emulator plays"
    )
    emulator.add_argument(
        "--scenarios-dir",
        action="append",
        metavar="DIR",
        help="your scenarios, added to the bundled ones (same id: yours wins; repeatable)",
    )
    emulator.add_argument(
        "--play-scenarios",
        action="store_true",
        help="answer each request from the scenario it belongs to, read from the request (docs/emulator.md)",
    )
    emulator.add_argument(
        "--max-requests",
        type=_number("--max-requests", int, low=0, what="0 or more (0 keeps nothing in the request log)"),
        default=1000,
        metavar="N",
        help="requests (and answers) the request log keeps, the newest (default: %(default)s; docs/emulator.md)",
    )
    emulator.add_argument(
        "--max-log-bytes",
        type=_number("--max-log-bytes", _bytes, low=0, what="0 or more bytes (K, M, G allowed)"),
        default=64 * 1024 * 1024,
        metavar="BYTES",
        help="body bytes the request log keeps in all; longer bodies are kept cut (default: %(default)s)",
    )
    emulator.set_defaults(handler=_emulator)

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
    record.add_argument("--timeout", type=_seconds("--timeout"), default=300.0, help=_PAIR_TIMEOUT_HELP)
    live_knobs = _add_live_options(record)
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
    _add_limit_option(record)
    record.set_defaults(handler=_record)

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
    drift.add_argument("--timeout", type=_seconds("--timeout"), default=300.0, help=_PAIR_TIMEOUT_HELP)
    drift.add_argument("--format", choices=("text", "json"), default="text", help="output (default: %(default)s)")
    _add_live_options(drift)
    _add_limit_option(drift)
    drift.set_defaults(handler=_drift)

    run = commands.add_parser(
        "run",
        help="certify adapters against the scenarios, offline from cassettes, and write reports",
        description=(
            "Run every chosen scenario against every chosen adapter (default: all bundled scenarios and all eight "
            "bundled adapters), non-streaming and streaming, replayed from cassettes with no network; print the "
            "progress and a scenario x adapter matrix, and write reports (JSON, Markdown, HTML, JUnit XML). "
            "Exit 0 when every case passes (or is unsupported/xfail), 1 when any fails or errors, 2 on usage errors "
            "(a selection of no case included), 130 on Ctrl-C (reports of the finished cases, marked incomplete)."
        ),
    )
    _add_run_arguments(run)
    _add_ci_arguments(run)
    _add_limit_option(run)
    run.set_defaults(handler=_run)

    certify = commands.add_parser(
        "certify",
        help="certify a black-box client (a driver around a library or SDK) over loopback HTTP, and write reports",
        description=(
            "Serve every chosen scenario's recorded answers over loopback HTTP for each wire the client speaks, "
            "drive the client turn by turn, capture every request it really sent and judge the requests and its "
            "decoded results with the same checks (plus client.*), verdicts and reports as `conformance run`. "
            "Pairs run in --jobs worker processes (each with its own child under --python). "
            "Exit 0 when every case passes (or is unsupported/xfail), 1 when any fails or errors, 2 on usage errors "
            "(a selection of no case included), 130 on Ctrl-C (reports of the finished cases, marked incomplete)."
        ),
    )
    _add_certify_arguments(certify)
    _add_ci_arguments(certify)
    _add_limit_option(certify)
    certify.set_defaults(handler=_certify)

    merge = commands.add_parser(
        "merge-reports",
        help="join the JSON reports of the shards of one run (--shard K/N) into one report",
        description=(
            "Read the report.json of every shard (a file, or the --report-dir a shard wrote) and write one report "
            "of all their cases, with the counts, matrix and verdict recomputed, in every --format. The reports "
            "must come from the same suite (one fingerprint) and the same selection, hold no case twice, and be "
            "every shard of K/N (or, with --allow-partial, some of them: the report is marked incomplete, naming "
            "the shards missing). Reports of runs without --shard merge too when no case is in two of them. "
            "Exit 0 when every case passes (or is unsupported/xfail), 1 when any fails or errors or the merged "
            "report is incomplete, 2 on usage errors (naming the file and what to do)."
        ),
    )
    merge.add_argument("reports", nargs="+", metavar="REPORT", help="a shard's report.json, or the folder holding it")
    merge.add_argument("--report-dir", default="reports", metavar="DIR", help="where to write (default: %(default)s)")
    merge.add_argument("--format", default="json,md,html,junit", help="report formats (default: %(default)s)")
    merge.add_argument(
        "--allow-partial",
        action="store_true",
        help="merge when some shards of K/N are missing (the report is marked incomplete and names them)",
    )
    merge.add_argument("--quiet", action="store_true", help="only the summary line")
    _add_limit_option(merge)
    merge.set_defaults(handler=_merge_reports)

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
    _add_limit_option(listing)
    listing.set_defaults(handler=_list)

    selftest = commands.add_parser(
        "selftest",
        help="check the suite's sensitivity: mutant adapters with one real bug each must be caught",
        description=(
            "Run every mutant adapter (a reference adapter with one real-world bug injected) on the bundled "
            "scenarios of its wire, replayed from cassettes, and the reference adapters themselves; print the table "
            "mutant | base | bug | killed by (check @ scenario). Exit 0 when every mutant is killed (or a declared "
            "gap) and the reference adapters have no false failure, 1 otherwise, 2 on usage errors."
        ),
    )
    selftest.add_argument("--mutant", action="append", metavar="NAME|GLOB|BASE", help="mutants to run (repeat)")
    selftest.add_argument("--cassette-dir", metavar="DIR", help="default: the bundled cassettes")
    selftest.add_argument(
        "--timeout", type=_seconds("--timeout"), default=30.0, help="seconds per case (default: %(default)s)"
    )
    selftest.add_argument("--markdown", metavar="PATH", help="also write the table as Markdown to PATH")
    selftest.add_argument("--quiet", action="store_true", help="only the summary line")
    selftest.set_defaults(handler=_selftest)

    mcp_server = commands.add_parser(
        "mcp-server",
        help="run the bundled MCP server (stdio) holding the scenarios' tools",
        description="Run the bundled MCP server over stdio: getTime, get_weather, search_codebase, get_file_content, "
        "a failing tool, a slow tool, an image tool, and enough tools to need pagination.",
    )
    mcp_server.set_defaults(handler=_mcp_server)
    return parser


def _add_live_options(parser: argparse.ArgumentParser) -> argparse._ArgumentGroup:
    """``--exchange-timeout`` and the sampling knobs of a live recording (``record``, ``drift``)."""
    parser.add_argument(
        "--exchange-timeout",
        type=_seconds("--exchange-timeout"),
        default=120.0,
        metavar="S",
        help="seconds one HTTP exchange may take, request to last byte, connecting and the headers included: a "
        "silent server, headers sent a byte at a time or a stream that never ends fail their pair "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--max-body",
        type=_number("--max-body", _bytes, low=1, what="positive (a size in bytes; K, M, G allowed)"),
        default=64 * 1024 * 1024,
        metavar="BYTES",
        help="bytes one response body may have once decoded (gzip counted as it inflates): a larger one fails its "
        "pair (K, M, G allowed; default: 64M)",
    )
    live_knobs = parser.add_argument_group("sampling (with --live; 'none' leaves a field out)")
    unset = argparse.SUPPRESS  # not given: the recording's default (conformance.run.live.DEFAULT_SAMPLING)
    live_knobs.add_argument(
        "--temperature",
        type=_optional(_number("--temperature", float, low=0.0, what="a finite number, 0 or more (or none)")),
        default=unset,
        metavar="T",
        help="default: 0",
    )
    live_knobs.add_argument(
        "--seed",
        type=_optional(_number("--seed", int, what="a whole number (or none)")),
        default=unset,
        metavar="N",
        help="where the wire has one (default: 42)",
    )
    live_knobs.add_argument(
        "--max-tokens",
        type=_optional(_number("--max-tokens", int, low=1, what="positive (a whole number, or none)")),
        default=unset,
        metavar="N",
        help="when the scenario sets none (default: 256)",
    )
    return live_knobs


def _add_run_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--adapter", action="append", metavar="NAME|MODULE:OBJECT", help="adapter to certify (repeat)")
    parser.add_argument("--adapters", action="append", metavar="A,B", help="comma-separated adapter names (repeatable)")
    parser.add_argument("--scenarios", action="append", metavar="PATH|GLOB", help="scenario files/folders or id glob")
    parser.add_argument(
        "--checks",
        metavar="CHECKS",
        help="comma-separated check families (translation,roundtrip,streaming,recovery) and check ids (e.g. "
        "roundtrip.calls: only its verdicts), as `conformance list` shows them (default: every family)",
    )
    _add_user_dirs(parser)
    parser.add_argument("--report-dir", default="reports", metavar="DIR", help="default: %(default)s")
    parser.add_argument("--format", default="json,md,html,junit", help="report formats (default: %(default)s)")
    parser.add_argument("--fail-fast", action="store_true", help="stop at the first failing or erroring case")
    parser.add_argument("-k", dest="keyword", metavar="EXPR", help="select cases by adapter::scenario::mode")
    parser.add_argument(
        "--timeout",
        type=_seconds("--timeout"),
        default=None,
        help="seconds per case (default: 30, or 300 with --exhaustive)",
    )
    parser.add_argument("--exhaustive", action="store_true", help="streaming: also every 2-way cut of each stream")
    parser.add_argument("--quiet", action="store_true", help="no progress or matrix, only the summary line")
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="after the defects, every failing case with its findings"
    )
    _add_jobs_and_shard(parser)


def _add_jobs_and_shard(parser: argparse.ArgumentParser) -> None:
    """``--jobs`` and ``--shard`` (``run`` and ``certify``; docs/ci.md)."""
    parser.add_argument(
        "-j",
        "--jobs",
        type=_number(
            "--jobs",
            int,
            low=1,
            said="{flag} {text}: must be at least 1 (1 runs the pairs one at a time; omit it for one per CPU)",
        ),
        metavar="N",
        help="worker processes (default: the number of CPUs; 1 runs the pairs in one worker process); "
        "the output is the same for every N",
    )
    parser.add_argument(
        "--shard",
        metavar="K/N",
        help="run only the K-th of N parts of the selected cases (1 <= K <= N; a stable split by adapter and "
        "scenario, the same on every machine): run each part on its own machine, then join the JSON reports "
        "with `conformance merge-reports` (docs/ci.md)",
    )


def _add_user_dirs(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--scenarios-dir",
        action="append",
        metavar="DIR",
        help="your scenarios, added to the bundled ones (same id: yours wins; repeatable)",
    )
    parser.add_argument(
        "--cassette-dir",
        action="append",
        metavar="DIR",
        help="your cassettes (<format>/<scenario id>.yaml), searched before the bundled ones (repeatable)",
    )
    parser.add_argument(
        "--allow-commands",
        action="store_true",
        help="let scenarios that are not bundled start their tools.mcp commands (trusted scenarios only: "
        "docs/scenarios.md#trust)",
    )


def _add_certify_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--client",
        required=True,
        metavar="MODULE:OBJECT|FILE.py:OBJECT",
        help="the driver to certify (docs/clients.md), e.g. examples/clients/openai_driver.py:CLIENT",
    )
    parser.add_argument(
        "--python",
        metavar="PATH",
        help="run the driver under this interpreter (a virtualenv with the library's own pins); serving and "
        "checking stay here",
    )
    parser.add_argument(
        "--intercept",
        action="store_true",
        help="for a client that cannot take a base URL: answer in-process with vcrpy at the provider's real "
        "address (streams arrive in one piece; broken streams are unsupported)",
    )
    parser.add_argument("--wires", metavar="W1,W2", help="wires to certify (default: every wire the client declares)")
    parser.add_argument("--scenarios", action="append", metavar="PATH|GLOB", help="scenario files/folders or id glob")
    parser.add_argument(
        "--checks",
        metavar="CHECKS",
        help="comma-separated check families (translation,roundtrip,streaming,recovery,client) and check ids "
        "(e.g. client.one_request: only its verdicts), as `conformance list` shows them (default: every family)",
    )
    parser.add_argument("-k", dest="keyword", metavar="EXPR", help="select cases by client/wire::scenario::mode")
    _add_user_dirs(parser)
    parser.add_argument("--report-dir", default="reports", metavar="DIR", help="default: %(default)s")
    parser.add_argument("--format", default="json,md,html,junit", help="report formats (default: %(default)s)")
    parser.add_argument(
        "--timeout", type=_seconds("--timeout"), default=30.0, help="seconds per turn (default: %(default)s)"
    )
    parser.add_argument("--model", metavar="NAME", help="model name to ask for (default: per wire)")
    parser.add_argument(
        "--note",
        metavar="TEXT",
        help="what a reader of the report must know about this run, shown in every report (e.g. that the library's "
        "behaviour depends on the model asked for, with its source)",
    )
    parser.add_argument(
        "--equivalences",
        action="append",
        metavar="FILE",
        help="a table of further accepted equivalences, parameters and rejected fields, in the form of "
        "docs/equivalences.md (repeatable; every row needs its source)",
    )
    parser.add_argument("--fail-fast", action="store_true", help="stop at the first failing or erroring case")
    parser.add_argument("--quiet", action="store_true", help="no progress or matrix, only the summary line")
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="after the defects, every failing case with its findings"
    )
    _add_jobs_and_shard(parser)


def _version() -> str:
    from conformance import __version__

    return __version__


def _add_ci_arguments(parser: argparse.ArgumentParser) -> None:
    """Baselines and reruns (docs/ci.md), shared by ``run`` and ``certify``."""
    ci = parser.add_argument_group("baselines and reruns (docs/ci.md)")
    ci.add_argument(
        "--baseline",
        metavar="FILE",
        help="known defects (case, their signatures, reason) that do not fail the run: a failing check whose "
        "defects are all listed is reported XFAIL with the reason; a new defect fails it, even in a listed case",
    )
    ci.add_argument(
        "--update-baseline",
        action="store_true",
        help="write this run's defect signatures to the --baseline file (default: conformance-baseline.yaml), "
        "keeping the reasons already given (a version-1 file: per check) and empty ones to fill in (until then "
        "the run exits 1 and lists them); entries of cases not run are kept",
    )
    ci.add_argument(
        "--strict-baseline",
        action="store_true",
        help="a baselined signature that no longer appears is STALE and fails the run (default: a warning)",
    )
    ci.add_argument(
        "--last-failed",
        action="store_true",
        help="rerun only the cases that failed, errored or went stale in the last run (<report-dir>/report.json)",
    )


_PAIR_TIMEOUT_HELP = (
    "seconds per adapter x scenario pair; a pair past it fails and its exchange in flight is cut (default: %(default)s)"
)


def _bytes(text: str) -> int:
    """A size in bytes (``conformance.limits.parse_size``: K, M, G allowed), imported when an option needs it."""
    from conformance.limits import parse_size

    return parse_size(text)


def _number(
    flag: str,
    kind: Callable[[str], Any],
    *,
    low: float | None = None,
    high: float | None = None,
    above: float | None = None,
    what: str = "",
    said: str = "",
) -> Callable[[str], Any]:
    """An argparse type for the numeric option ``flag``: ``kind`` of the value (``int``, ``float``,
    ``_bytes``), finite, within ``low``..``high`` and more than ``above``. Anything else (garbage, ``nan``, ``inf``, a
    value out of range) is a usage error (exit 2) whose one line names the option, the value and
    ``what`` it must be (``said``: the whole line, with ``{flag}`` and ``{text}``)."""

    def parse(text: str) -> Any:
        try:
            value = kind(text.strip())
        except (ValueError, OverflowError):
            value = None
        if (
            value is None
            or (isinstance(value, float) and not math.isfinite(value))
            or (low is not None and value < low)
            or (high is not None and value > high)
            or (above is not None and value <= above)
        ):
            raise argparse.ArgumentTypeError(
                said.format(flag=flag, text=text) if said else f"{flag} must be {what}, not {text!r}"
            )
        return value

    parse.__name__ = getattr(kind, "__name__", "value")
    return parse


def _seconds(flag: str) -> Callable[[str], Any]:
    """The argparse type of a number of seconds: finite and above 0 (``--timeout nan`` is a usage error)."""
    return _number(flag, float, above=0.0, what="positive (a finite number of seconds above 0)")


def _optional(kind: Callable[[str], Any]) -> Callable[[str], Any]:
    """An argparse type: ``kind`` of the value, or None for ``none`` (the field is not sent)."""

    def parse(value: str) -> Any:
        return None if value.strip().lower() == "none" else kind(value)

    parse.__name__ = getattr(kind, "__name__", "value")  # argparse names it in "invalid float value"
    return parse


def _add_limit_option(parser: argparse.ArgumentParser) -> None:
    """``--limit NAME=VALUE``, for the commands that read untrusted files (``conformance.limits``)."""
    parser.add_argument(
        "--limit",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="change a bound on input files, e.g. yaml_nodes=2000000 (repeatable; names and defaults: docs/limits.md)",
    )


def _apply_limits(args: argparse.Namespace) -> str | None:
    """Put ``--limit`` into ``$CONFORMANCE_LIMITS`` (worker processes inherit it); the usage error, if any."""
    from conformance.errors import UsageError
    from conformance.limits import with_overrides

    try:
        with_overrides(getattr(args, "limit", []))  # checks $CONFORMANCE_LIMITS for every command
    except UsageError as exc:
        return str(exc)
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (argparse's own exits included)."""
    parser = build_parser()
    name = parser.prog
    try:
        try:
            args, extras = parser.parse_known_args(argv)
        except SystemExit as exc:  # --help (0) and usage errors (2)
            return exc.code if isinstance(exc.code, int) else _USAGE_ERROR
        if extras:
            command = f"{parser.prog} {args.command}" if getattr(args, "command", None) else parser.prog
            print(f"{command}: error: {_unrecognized(parser, args, extras)}", file=sys.stderr)
            return _USAGE_ERROR
        handler = getattr(args, "handler", None)
        if handler is None:
            parser.print_usage(sys.stderr)
            print(f"{parser.prog}: error: a command is required (try `{parser.prog} --help`)", file=sys.stderr)
            return _USAGE_ERROR
        name = f"{parser.prog} {args.command}"
        problem = _apply_limits(args)
        if problem is not None:
            print(f"{name}: error: {problem}", file=sys.stderr)
            return _USAGE_ERROR
        _lenient_output()
        err = sys.stderr
        sys.stderr = _scrubbed(err)  # an error quoting a file's line shows no secret either
        try:
            code: int = handler(args)
            sys.stdout.flush()  # a reader that went away shows here, not as a traceback at exit
        finally:
            sys.stderr = err
        if argv is None:  # the program itself: end even if an imported module left a thread running
            from conformance.run.workers import exit_despite_threads

            exit_despite_threads(code)
        return code
    except KeyboardInterrupt:
        _say(f"{name}: interrupted (Ctrl-C)")
        return INTERRUPTED
    except BrokenPipeError:
        from conformance.console.output import quiet_stdout

        quiet_stdout()
        return BROKEN_PIPE


def _scrubbed(stream: TextIO) -> TextIO:
    """``stream`` scrubbed of key shapes and the process's secrets, as stdout is
    (``conformance.console.output.QuietOnBrokenPipe``)."""
    from conformance.console.output import QuietOnBrokenPipe

    return QuietOnBrokenPipe.around(stream)


def _lenient_output() -> None:
    """A name or text no encoding can write (a lone surrogate from a file name that is not UTF-8) is
    printed escaped, not a ``UnicodeEncodeError`` that ends the command before its reports."""
    for stream in (sys.stdout, sys.stderr):
        if getattr(stream, "errors", None) == "strict":
            with contextlib.suppress(AttributeError, ValueError, OSError):
                stream.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]


def _say(line: str) -> None:
    """One line on stderr, unless stderr is gone too."""
    with contextlib.suppress(OSError, ValueError):
        print(line, file=sys.stderr, flush=True)


def _inspect(args: argparse.Namespace) -> int:
    from conformance.cli.inspect import inspect_paths, render_json, render_text
    from conformance.errors import UsageError

    try:
        report = inspect_paths(args.paths)
    except UsageError as exc:
        print(f"conformance inspect: error: {exc}", file=sys.stderr)
        return _USAGE_ERROR
    print(render_json(report) if args.format == "json" else render_text(report))
    return report.exit_code


def _validate(args: argparse.Namespace) -> int:
    from conformance.cli.validate import validate_command

    return validate_command(args.paths, output_format=args.format)


def _emulator(args: argparse.Namespace) -> int:
    from conformance.emulator import serve_command

    return serve_command(
        port=args.port,
        scenario=args.scenario,
        scenarios_dir=args.scenarios_dir,
        max_requests=args.max_requests,
        max_log_bytes=args.max_log_bytes,
        play_scenarios=args.play_scenarios,
    )


def _record(args: argparse.Namespace) -> int:
    from conformance.cli.record import record_command_main

    return record_command_main(args)


def _drift(args: argparse.Namespace) -> int:
    from conformance.cli.drift import drift_command

    return drift_command(args)


def _mcp_server(args: argparse.Namespace) -> int:
    from conformance.mcp_bridge.server import serve_stdio

    code = serve_stdio()
    if code == INTERRUPTED:  # the server's own Ctrl-C handling is silent
        _say("conformance mcp-server: interrupted (Ctrl-C)")
    return code


def _run(args: argparse.Namespace) -> int:
    from conformance.cli.run import run_command

    return run_command(args)


def _certify(args: argparse.Namespace) -> int:
    from conformance.cli.certify import certify_command

    return certify_command(args)


def _merge_reports(args: argparse.Namespace) -> int:
    from conformance.cli.merge import merge_command

    return merge_command(args)


def _list(args: argparse.Namespace) -> int:
    from conformance.cli.listing import list_command

    return list_command(args)


def _selftest(args: argparse.Namespace) -> int:
    from conformance.selftest import selftest_command

    return selftest_command(args)
