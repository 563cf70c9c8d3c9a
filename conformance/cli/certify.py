"""``conformance certify``: certify a black-box target end to end.

``conformance certify --client my_pkg.drivers:CLIENT [--wires anthropic,gemini] [--scenarios ...]
[-k ...] [--python VENV/bin/python] [--jobs N] [--shard K/N] [--report-dir ...]`` loads the driver (here, or with
``--python`` in that interpreter: ``conformance.clients.remote``), checks it keeps the contract
(exit 2 naming what is wrong), and runs it as a ``ClientTarget`` through the pipeline
(``conformance.pipeline.run.run_target``): what ``conformance run`` prints and writes, progress, the
matrix, every failing case with its findings, and the reports. Exit 0 when every case passes (or is
unsupported/xfail), 1 when any fails or errors; a selection of no case or a ``--report-dir`` that
cannot be written is a usage error before anything runs (exit 2), and Ctrl-C writes the reports of
the cases that finished, marked incomplete (exit 130).

The target is one of a mutually exclusive group: ``--client`` (a ``ClientTarget``), ``--server URL``
(a model server, ``ServerTarget``) or ``--gateway URL`` (a gateway calling the emulator upstream,
``GatewayTarget``); their own options are read in ``conformance.cli.certify_targets``.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any, TextIO

from conformance.cli.certify_targets import add_server_arguments
from conformance.cli.options import add_ci_arguments, add_jobs_and_shard, add_limit_option, add_user_dirs, seconds

if TYPE_CHECKING:
    from conformance.pipeline.plan import Plan
    from conformance.pipeline.targets import Target

__all__ = ["add_command", "certify_command", "certify_plan"]


def add_command(commands: Any) -> None:
    """The ``certify`` subcommand and its options."""
    parser = commands.add_parser(
        "certify",
        help="certify a black-box client (a driver around a library or SDK), a model server or a gateway, and "
        "write reports",
        description=(
            "Serve every chosen scenario's recorded answers over loopback HTTP for each wire the client speaks, "
            "drive the client turn by turn, capture every request it really sent and judge the requests and its "
            "decoded results with the same checks (plus client.*), verdicts and reports as `conformance run`. "
            "Pairs run in --jobs worker processes (each with its own child under --python). "
            "Exit 0 when every case passes (or is unsupported/xfail), 1 when any fails or errors, 2 on usage errors "
            "(a selection of no case included), 130 on Ctrl-C (reports of the finished cases, marked incomplete). "
            "--server URL certifies a model server on --wires; --gateway URL a gateway from --wire to each --upstream "
            "(docs/servers.md)."
        ),
    )
    target = parser.add_mutually_exclusive_group(required=True)  # the kinds of target: one of them
    target.add_argument(
        "--client",
        metavar="MODULE:OBJECT|FILE.py:OBJECT",
        help="the driver to certify (docs/clients.md), e.g. examples/clients/openai_driver.py:CLIENT",
    )
    target.add_argument(
        "--command",
        dest="driver_command",  # not ``command``: that is the subcommand's name (cli/__init__.py)
        metavar="'PROGRAM ARGS'",
        help="a driver in any language, speaking docs/protocol.md: e.g. 'node examples/clients/node/openai.mjs'",
    )
    add_server_arguments(parser, target)
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
    add_user_dirs(parser)
    parser.add_argument("--report-dir", default="reports", metavar="DIR", help="default: %(default)s")
    parser.add_argument("--format", default="json,md,html,junit", help="report formats (default: %(default)s)")
    parser.add_argument(
        "--timeout",
        type=seconds("--timeout"),
        default=None,
        help="seconds per turn (default: 30; a gateway's turn 120; a --server case 300, every turn in it)",
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
    add_jobs_and_shard(parser)
    add_ci_arguments(parser)
    add_limit_option(parser)
    parser.set_defaults(handler=certify_command)


def certify_command(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """``conformance certify``: the exit code (2 on a usage error, printed on stderr)."""
    from conformance.errors import UsageError
    from conformance.pipeline.run import run_target

    try:
        target, plan = certify_plan(args)
    except UsageError as exc:
        print(f"conformance certify: error: {exc}", file=sys.stderr)
        return 2
    return run_target(target, plan, out)


def certify_plan(args: argparse.Namespace) -> tuple[Target, Plan]:
    """The target and the plan ``args`` ask for (``UsageError`` on the first thing wrong; a client
    already loaded is closed first)."""
    if args.server is not None or args.gateway is not None:
        return _server_plan(args)
    return _client_plan(args)


def _server_plan(args: argparse.Namespace) -> tuple[Target, Plan]:
    """``--server`` or ``--gateway``: the target and the plan (the client-only options refused)."""
    from conformance.cli.certify_targets import GATEWAY_TIMEOUT, SERVER_TIMEOUT, gateway_target, server_target
    from conformance.cli.plans import ci_of, plan_of
    from conformance.errors import UsageError
    from conformance.pipeline.selection import compile_keyword, read_checks, read_formats, read_shard, select_scenarios

    flag = "--server" if args.server is not None else "--gateway"
    for option in ("python", "intercept", "equivalences"):
        if getattr(args, option):
            raise UsageError(f"--{option} is for --client: {flag} is certified over HTTP as it answers")
    target = server_target(args) if args.server is not None else gateway_target(args)
    checks, formats = read_checks(args.checks), read_formats(args.format)
    timeout = args.timeout if args.timeout is not None else (SERVER_TIMEOUT if args.server else GATEWAY_TIMEOUT)
    if timeout <= 0:
        raise UsageError("--timeout must be positive")
    scenarios, problems = select_scenarios(args.scenarios or [], args.scenarios_dir or ())
    plan = plan_of(
        args,
        "certify",
        checks=checks,
        formats=formats,
        select=compile_keyword(args.keyword) if args.keyword else None,
        timeout=timeout,
        jobs=1,  # a server answers one request at a time; a gateway's emulator has one port
        shard=read_shard(args.shard),
        scenarios=scenarios,
        problems=problems,
        ci=ci_of(args),
    )
    return target, plan


def _client_plan(args: argparse.Namespace) -> tuple[Target, Plan]:
    """``--client``: the driver loaded and checked, the target and the plan."""
    from conformance.cli.certify_targets import CLIENT_TIMEOUT
    from conformance.cli.plans import ci_of, plan_of
    from conformance.errors import UsageError
    from conformance.pipeline.selection import (
        check_gap_keys,
        compile_keyword,
        read_checks,
        read_formats,
        read_jobs,
        read_shard,
        select_scenarios,
        split_list,
    )
    from conformance.pipeline.targets import ClientTarget, load_client, load_command, read_equivalences

    checks, formats = read_checks(args.checks), read_formats(args.format)
    timeout = CLIENT_TIMEOUT if args.timeout is None else args.timeout
    if timeout <= 0:
        raise UsageError("--timeout must be positive")
    select = compile_keyword(args.keyword) if args.keyword else None
    scenarios, problems = select_scenarios(args.scenarios or [], args.scenarios_dir or ())
    for option in ("wire", "upstream", "upstream_port", "api_key_env", "name", "exchange_timeout", "max_body"):
        if getattr(args, option) is not None:
            raise UsageError(f"--{option.replace('_', '-')} is for --server or --gateway, not --client")
    if args.intercept and (args.python or args.driver_command):
        raise UsageError(
            "--intercept patches this process's HTTP clients: it cannot reach a driver in a process of its own"
        )
    if args.driver_command is not None and args.python:
        raise UsageError("--python is for --client FILE.py:OBJECT; --command runs the program it names as it is")
    spec = args.client if args.driver_command is None else args.driver_command
    client = load_client(args.client, args.python) if args.driver_command is None else load_command(args.driver_command)
    try:
        if (
            args.python or args.driver_command
        ) and client.network != "namespace":  # one line: the driver has the guard alone
            print(f"conformance certify: the driver's network: {client.network} (docs/clients.md)", file=sys.stderr)
        check_gap_keys(client.known_gaps, "--client")
        wires = tuple(split_list([args.wires])) if args.wires is not None else None
        if wires is not None and (missing := [w for w in wires if w not in client.wires]):
            raise UsageError(
                f"{client.name} does not declare {', '.join(missing)} (it declares {', '.join(client.wires)})"
            )
        ci = ci_of(args)  # --baseline, --last-failed (docs/ci.md)
        equivalences = read_equivalences(args.equivalences or ())
        jobs = read_jobs(args.jobs)
        shard = read_shard(args.shard)
    except UsageError:
        ClientTarget(client=client, spec=spec).close()  # a --python or --command driver's process ends here
        raise
    plan = plan_of(
        args,
        "certify",
        checks=checks,
        formats=formats,
        select=select,
        timeout=timeout,
        jobs=jobs,
        shard=shard,
        scenarios=scenarios,
        problems=problems,
        ci=ci,
    )
    target = ClientTarget(
        client=client,
        spec=spec,
        command=args.driver_command is not None,
        python=args.python,
        intercept=args.intercept,
        wires=wires,
        equivalences=equivalences,
    )
    return target, plan
