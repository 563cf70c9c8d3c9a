"""The ``conformance`` command line.

Each subcommand is a module of this package that defines its arguments (``add_command``; the option
groups several share are ``options``) and, once they are parsed, calls one function: ``run`` and
``certify`` a ``conformance.pipeline`` run of their target. Heavy modules are imported inside the
subcommand, so ``conformance --help`` stays fast. Exit codes: 0 success, 1 findings or
problems, 2 usage errors, 130 interrupted (Ctrl-C: one line, no traceback; ``run`` and ``certify``
write partial reports marked incomplete first), 141 when the reader of the output went away
(``conformance list | head -1``: quiet, as git and coreutils end on SIGPIPE; ``run`` and ``certify``
go on to the end and write their reports, see ``conformance.cli.run``).
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import re
import sys
from collections.abc import Sequence
from typing import NoReturn, TextIO

from conformance.cli.options import apply_limits

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
    from conformance.cli import certify, drift, emulator, inspect, listing, merge, record, run, selftest, validate

    parser = _Parser(
        prog="conformance",
        description="Conformance suite and recorder for LLM tool-calling adapters.",
    )
    parser.add_argument("--version", action="version", version=f"conformance {_version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    inspect.add_command(commands)
    validate.add_command(commands)
    emulator.add_commands(commands, servers="emulator")
    record.add_command(commands)
    drift.add_command(commands)
    run.add_command(commands)
    certify.add_command(commands)
    merge.add_command(commands)
    listing.add_command(commands)
    selftest.add_command(commands)
    emulator.add_commands(commands, servers="mcp-server")
    return parser


def _version() -> str:
    from conformance import __version__

    return __version__


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
        problem = apply_limits(args)
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
