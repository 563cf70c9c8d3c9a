"""Tests for ``conformance.cli`` and ``python -m conformance``: help, usage errors (exit 2), and a
fast ``--help`` (no heavy module imported before a subcommand runs)."""

from __future__ import annotations

import argparse
import ast
import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.cli import build_parser, main

REPO = Path(__file__).resolve().parents[2]


def run_module(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "conformance", *argv], capture_output=True, text=True, timeout=60, check=False
    )


def test_help_via_python_m() -> None:
    done = run_module("--help")
    assert done.returncode == 0
    assert "usage: conformance" in done.stdout
    assert "inspect" in done.stdout
    assert done.stderr == ""


def test_inspect_help() -> None:
    done = run_module("inspect", "--help")
    assert done.returncode == 0
    assert "--format {text,json}" in done.stdout
    assert "PATH" in done.stdout


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ((), "a command is required"),
        (("frobnicate",), "invalid choice: 'frobnicate'"),
        (("inspect",), "the following arguments are required: PATH"),
        (("inspect", "--format", "xml", "x.yaml"), "invalid choice: 'xml'"),
        (("--no-such-option",), "unrecognized arguments"),
    ],
)
def test_usage_errors_exit_2_with_a_message(argv: tuple[str, ...], message: str) -> None:
    done = run_module(*argv)
    assert done.returncode == 2
    assert message in done.stderr
    assert "usage: conformance" in done.stderr
    assert done.stdout == ""


def test_main_returns_exit_codes_instead_of_raising(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    assert "usage: conformance" in capsys.readouterr().out
    assert main([]) == 2
    assert main(["inspect"]) == 2
    assert "required: PATH" in capsys.readouterr().err


def test_help_imports_nothing_heavy() -> None:
    """``conformance --help`` must stay fast (≤ 0.3 s): building the parser and printing help
    imports no adapter, YAML, JSON or assembly module; only the command line's own modules, where each
    command defines its arguments (standard library only at import)."""
    code = (
        "import sys\n"
        "from conformance.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "heavy = sorted(m for m in sys.modules if m.startswith(('conformance.', 'yaml', 'orjson', 'deepdiff')))\n"
        "print(heavy, file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    imported = ast.literal_eval(done.stderr.strip())
    assert "conformance.cli" in imported and "conformance.cli.run" in imported
    assert [m for m in imported if m != "conformance.cli" and not m.startswith("conformance.cli.")] == []


def test_every_subcommand_is_wired_to_one_function() -> None:
    parser = build_parser()
    args = parser.parse_args(["inspect", "some.yaml"])
    assert callable(args.handler)
    assert args.paths == ["some.yaml"] and args.format == "text"


@pytest.mark.skipif(
    shutil.which("conformance") is None, reason="the console script is not installed (pip install -e .)"
)
def test_console_script() -> None:
    done = subprocess.run(["conformance", "--help"], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0
    assert "inspect" in done.stdout


# -- Ctrl-C and closed pipes (issue 14): one line and 130, or quiet and 141; never a traceback ------------


@pytest.mark.parametrize(
    ("argv", "target"),
    [
        (["list"], "conformance.cli.listing.list_command"),
        (["validate"], "conformance.cli.validate.validate_command"),
        (["inspect", "x.yaml"], "conformance.traffic.inspect.inspect_paths"),
        (["record", "--emulator"], "conformance.cli.record.record_command_main"),
        (["drift", "--emulator"], "conformance.cli.drift.drift_command"),
        (["selftest"], "conformance.selftest.selftest_command"),
        (["emulator"], "conformance.emulator.serve_command"),
        (["mcp-server"], "conformance.mcp_bridge.server.serve_stdio"),
        (["run"], "conformance.cli.run.run_command"),
        (["certify", "--client", "x:y"], "conformance.cli.certify.certify_command"),
    ],
)
def test_ctrl_c_in_any_command_is_one_line_and_exit_130(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], argv: list[str], target: str
) -> None:
    def interrupted(*args: object, **kwargs: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(target, interrupted)
    assert main(argv) == 130
    out, err = capsys.readouterr()
    assert err == f"conformance {argv[0]}: interrupted (Ctrl-C)\n"
    assert out == ""


def test_a_silent_mcp_server_stop_still_says_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("conformance.mcp_bridge.server.serve_stdio", lambda **options: 130)
    assert main(["mcp-server"]) == 130
    assert capsys.readouterr().err == "conformance mcp-server: interrupted (Ctrl-C)\n"


def read_then_close(argv: list[str], *, lines: int) -> tuple[int, str]:
    """Run ``conformance ARGV`` with stdout a pipe whose reader reads ``lines`` lines and goes away
    (``| head -N``); the exit code and stderr. The pipe holds one page, so the reader is gone before
    the output is all written, whatever the timing (a pipe holding all of it would let the command end
    with 0, as ``seq 10 | head -1`` does)."""
    reader, writer = os.pipe()
    fcntl.fcntl(writer, fcntl.F_SETPIPE_SZ, 4096)
    process = subprocess.Popen(
        [sys.executable, "-m", "conformance", *argv], stdout=writer, stderr=subprocess.PIPE, text=True
    )
    os.close(writer)
    assert process.stderr is not None
    with open(reader, encoding="utf-8", errors="replace") as stdout:
        for _ in range(lines):
            assert stdout.readline()
    with process.stderr:
        err = process.stderr.read()
    return process.wait(timeout=120), err


@pytest.mark.parametrize(
    "argv",
    [["list"], ["inspect", "cassettes/anthropic"], ["inspect", "--format", "json", "cassettes/openai_chat"]],
)
def test_a_reader_that_goes_away_ends_an_output_command_quietly_with_141(argv: list[str]) -> None:
    code, err = read_then_close(argv, lines=1)
    assert (code, err) == (141, "")


def test_main_turns_a_broken_pipe_into_141_with_stdout_quieted(monkeypatch: pytest.MonkeyPatch) -> None:
    quieted: list[bool] = []

    def broken(args: object) -> int:
        raise BrokenPipeError

    monkeypatch.setattr("conformance.cli.listing.list_command", broken)
    monkeypatch.setattr(
        "conformance.console.output.quiet_stdout", lambda: quieted.append(True)
    )  # not pytest's own fd 1
    assert main(["list"]) == 141
    assert quieted == [True]


# --------------------------------------------------------------------------------------------
# --limit (conformance.limits, docs/limits.md)
# --------------------------------------------------------------------------------------------

LIMIT_COMMANDS = [
    ["validate"],
    ["list"],
    ["inspect", "nothing.yaml"],
    ["run", "--adapter", "openai_chat"],
    ["record", "--emulator"],
    ["certify", "--client", "x:Y"],
]


@pytest.mark.parametrize("command", LIMIT_COMMANDS, ids=lambda c: c[0])
@pytest.mark.parametrize("pair", ["bogus=1", "yaml_nodes=many"])
def test_a_bad_limit_is_a_usage_error_listing_the_names(
    command: list[str], pair: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CONFORMANCE_LIMITS", raising=False)
    assert main([*command, "--limit", pair]) == 2
    err = capsys.readouterr().err
    assert f"conformance {command[0]}: error: --limit" in err
    if pair.startswith("bogus"):
        assert "unknown limit 'bogus'" in err and "yaml_nodes" in err and "schema_nodes" in err


def test_a_bad_limits_variable_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONFORMANCE_LIMITS", "yaml_nodes")
    assert main(["validate"]) == 2
    assert "$CONFORMANCE_LIMITS" in capsys.readouterr().err


def test_limit_is_applied_to_the_files_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONFORMANCE_LIMITS", "")  # --limit sets the variable; it is restored after the test
    from conformance.scenarios.bundled import scenarios_dir

    scenario = scenarios_dir() / "basic" / "get_time.yaml"
    assert main(["validate", str(scenario)]) == 0
    capsys.readouterr()
    assert main(["validate", str(scenario), "--limit", "nesting_depth=2"]) == 1
    assert "past the limit nesting_depth=2" in capsys.readouterr().out
    assert "nesting_depth=2" in os.environ["CONFORMANCE_LIMITS"]  # for worker processes


def test_run_with_hostile_cassettes_errors_only_their_cases_and_writes_every_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import base64
    import json

    from _hostile import billion_laughs, cassette_yaml, deep_brackets, gzip_bomb, run_bounded

    monkeypatch.delenv("CONFORMANCE_LIMITS", raising=False)
    folder = tmp_path / "cassettes" / "openai_chat" / "basic"
    folder.mkdir(parents=True)
    (folder / "get_time.yaml").write_text(
        "bombs:\n" + billion_laughs(indent="  ") + cassette_yaml("    parsed_body: *a9\n")
    )
    bomb = base64.encodebytes(gzip_bomb(100 * 1024 * 1024)).decode().replace("\n", "\n        ")
    (folder / "single_call.yaml").write_text(cassette_yaml(f"    body:\n      string: !!binary |\n        {bomb}\n"))
    deep = json.dumps(deep_brackets(3000))
    (folder / "no_tools.yaml").write_text(cassette_yaml(f"    body: {{string: {deep}}}\n"))
    lone = json.dumps(
        json.dumps({"content": '{"city": "Pa\\ud800ris"}'})
    )  # decoded by an adapter, it broke the reports
    (folder / "text_only_reply.yaml").write_text(cassette_yaml(f"    body: {{string: {lone}}}\n"))
    reports = tmp_path / "reports"
    argv = [
        *("run", "--adapter", "openai_chat", "--scenarios", "basic/*", "-j", "1", "--quiet"),
        *("--cassette-dir", str(tmp_path / "cassettes"), "--report-dir", str(reports), "--limit", "body_bytes=8M"),
    ]
    # in a child under a 1 GiB ceiling: unbounded, these files take minutes and gigabytes
    done = run_bounded(f"from conformance.cli import main\nraise SystemExit(main({argv!r}))", timeout=120)
    assert done.returncode == 1, done.stderr[-2000:]
    assert sorted(p.name for p in reports.iterdir()) == ["junit.xml", "report.html", "report.json", "report.md"]
    report = json.loads((reports / "report.json").read_text(encoding="utf-8"))
    by_case = {(c["scenario"], c["mode"]): c for c in report["cases"]}
    expected = {
        "basic/get_time": "yaml_nodes=",
        "basic/single_call": "body_bytes=8388608",
        "basic/no_tools": "nesting_depth=",
        "basic/text_only_reply": "lone surrogate escape",
    }
    for scenario, limit in expected.items():
        for mode in ("non_stream", "stream"):
            case = by_case[(scenario, mode)]
            assert case["status"] == "error"
            assert limit in json.dumps(case) and f"{scenario.split('/')[1]}.yaml" in json.dumps(case)
    others = [c for (s, _), c in by_case.items() if s not in expected]
    assert others and all(c["status"] == "pass" for c in others)


# -- one command-line vocabulary and "did you mean" (issue 17) -------------------------------------------------


def _flags(command: str) -> set[str]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[command]
    return {flag for action in sub._actions for flag in action.option_strings}


@pytest.mark.parametrize(
    ("flag", "commands"),
    [
        ("--scenarios", ("run", "certify", "record", "emulator", "list", "drift")),
        ("--scenarios-dir", ("run", "certify", "record", "emulator", "list", "drift")),
        ("--cassette-dir", ("run", "certify", "record", "selftest", "drift")),
        ("--adapters", ("run", "record", "list", "drift")),
        ("--format", ("run", "certify", "list", "inspect", "validate", "drift")),
        ("--timeout", ("run", "certify", "record", "selftest", "drift")),
    ],
)
def test_one_flag_name_means_one_thing_in_every_command(flag: str, commands: tuple[str, ...]) -> None:
    missing = [command for command in commands if flag not in _flags(command)]
    assert missing == [], f"{flag} is missing from {missing}"


@pytest.mark.parametrize(
    ("argv", "hint"),
    [
        (["run", "--scenaros", "basic/*"], "--scenaros: did you mean '--scenarios'?"),
        (["certify", "--client", "x:y", "--upstream-p", "4010"], None),  # argparse takes the unique prefix
        (["record", "--emulator", "--scenario-dir", "x"], "--scenario-dir: did you mean '--scenarios-dir'?"),
        (["list", "--formt", "json"], "--formt: did you mean '--format'?"),
        (["emulator", "--prot", "0"], "--prot: did you mean '--port'?"),
        (["rn"], "did you mean 'run'?"),
        (["selftst"], "did you mean 'selftest'?"),
    ],
)
def test_a_misspelt_flag_or_command_is_exit_2_with_the_nearest_name(
    argv: list[str], hint: str | None, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    if hint is None:  # an unambiguous prefix is argparse's abbreviation, not a misspelling: the command runs
        monkeypatch.setattr("conformance.cli.certify.certify_command", lambda args: 0 if args.upstream_port else 3)
        assert main(argv) == 0
        return
    code = main(argv)
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert hint in err and "usage: conformance" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["inspect", "/nonexistent/c.yaml"],
        ["validate", "/nonexistent/s.yaml"],
        ["run", "--scenarios-dir", "/nonexistent"],
        ["certify", "--client", "examples/clients/openai_driver.py:CLIENT", "--scenarios-dir", "/nonexistent"],
        ["record", "--emulator", "--scenarios-dir", "/nonexistent"],
        ["emulator", "--scenario", "basic/get_time", "--scenarios-dir", "/nonexistent"],
        ["list", "--scenarios-dir", "/nonexistent"],
        ["selftest", "--cassette-dir", "/nonexistent"],
    ],
)
def test_a_missing_path_is_exit_2_naming_it_in_every_command(
    argv: list[str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code = main([*argv, *(["--report-dir", str(tmp_path / "r")] if argv[0] in ("run", "certify") else [])])
    out, err = capsys.readouterr()
    assert code == 2, (out, err)
    assert "/nonexistent" in err and "Traceback" not in err


# --------------------------------------------------------------------------------------------
# Numeric options (issue 27, point 4): finite and in range, or a usage error naming the option
# --------------------------------------------------------------------------------------------

_BASE = {
    "record": ["record", "--live", "--base-url", "http://127.0.0.1:9", "--adapter", "openai_chat"],
    "drift": ["drift", "--base-url", "http://127.0.0.1:9", "--adapter", "openai_chat"],
    "run": ["run"],
    "certify": ["certify", "--client", "examples/clients/openai_driver.py:CLIENT"],
    "selftest": ["selftest"],
    "emulator": ["emulator"],
}
_NOT_FINITE = ["nan", "inf", "-inf", "ten", ""]
_NUMBERS = [
    # (command, option, values refused besides _NOT_FINITE)
    ("record", "--timeout", ["0", "-1"]),
    ("record", "--exchange-timeout", ["0", "-0.5"]),
    ("record", "--max-body", ["0", "-1", "1.5M", "12x"]),
    ("record", "--max-tokens", ["0", "-3", "2.5"]),
    ("record", "--temperature", ["-0.1"]),
    ("record", "--seed", ["1.5"]),
    ("drift", "--timeout", ["0", "-1"]),
    ("drift", "--exchange-timeout", ["0"]),
    ("drift", "--max-body", ["0", "-1K"]),
    ("run", "--timeout", ["0", "-1"]),
    ("run", "--jobs", ["0", "-2", "1.5"]),
    ("certify", "--timeout", ["0", "-1"]),
    ("certify", "--jobs", ["0", "1.5"]),
    ("selftest", "--timeout", ["0", "-1"]),
    ("emulator", "--port", ["-1", "65536"]),
    ("emulator", "--max-requests", ["-1", "2.5"]),
    ("emulator", "--max-log-bytes", ["-1"]),
]


@pytest.mark.parametrize(
    ("command", "option", "value"),
    [
        pytest.param(command, option, value, id=f"{command} {option} {value!r}")
        for command, option, refused in _NUMBERS
        for value in [*_NOT_FINITE, *refused]
        if not (option == "--seed" and value in ("-inf",))  # one spelling of a non-number is enough there
    ],
)
def test_a_numeric_option_that_is_not_a_finite_number_in_range_is_a_usage_error(
    command: str, option: str, value: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before, ``--timeout nan`` was a traceback and 0, negative and ``inf`` were taken; every
    command now refuses them while parsing, with one line naming the option and the value."""
    handlers = ("record.record_command_main", "drift.drift_command", "run.run_command", "certify.certify_command")
    for handler in (*handlers, "selftest._selftest", "emulator._emulator"):
        monkeypatch.setattr(f"conformance.cli.{handler}", lambda args: 99)  # parsing must stop before
    code = main([*_BASE[command], f"{option}={value}"])
    out, err = capsys.readouterr()
    assert (code, out) == (2, ""), err
    (line,) = [line for line in err.splitlines() if "error:" in line]
    assert line.startswith(f"conformance {command}: error: {option} ")
    assert repr(value) in line or f"{option} {value}:" in line
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("argv", "attribute", "value"),
    [
        (["record", "--emulator", "--max-body", "64M"], "max_body", 64 * 1024 * 1024),
        (["record", "--emulator", "--max-body", "1_000"], "max_body", 1000),
        (["record", "--emulator"], "max_body", 64 * 1024 * 1024),
        (["drift", "--emulator", "--max-body", "2k"], "max_body", 2048),
        (["record", "--emulator", "--timeout", "0.5"], "timeout", 0.5),
        (["record", "--live", "--temperature", "0"], "temperature", 0.0),
        (["record", "--live", "--temperature", "none"], "temperature", None),
        (["record", "--live", "--seed", "-1"], "seed", -1),  # llama.cpp's "a random seed"
        (["emulator", "--port", "0"], "port", 0),
        (["emulator", "--max-requests", "0"], "max_requests", 0),
        (["run", "-j", "1"], "jobs", 1),
    ],
)
def test_a_finite_number_in_range_is_taken(argv: list[str], attribute: str, value: object) -> None:
    assert getattr(build_parser().parse_args(argv), attribute) == value


def test_an_error_on_stderr_that_quotes_a_secret_of_the_process_shows_it_redacted(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A usage error echoes what the user typed: a key there (a local server's token, not key-shaped,
    known to the process through its provider variable) is redacted on stderr as on stdout."""
    token = "hunter2-local-token-1234xyz"
    monkeypatch.setenv("OPENAI_API_KEY", token)
    code = main(["run", "--checks", token])
    err = capsys.readouterr().err
    assert code == 2
    assert "--checks" in err and "REDACTED" in err
    assert token not in err and token[:12] not in err
