"""Tests for ``conformance.cli`` and ``python -m conformance``: help, usage errors (exit 2), and a
fast ``--help`` (no heavy module imported before a subcommand runs)."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from conformance.cli import build_parser, main


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
    imports no adapter, YAML, JSON or assembly module."""
    code = (
        "import sys\n"
        "from conformance.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "heavy = sorted(m for m in sys.modules if m.startswith(('conformance.', 'yaml', 'orjson', 'deepdiff')))\n"
        "print(heavy, file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stderr.strip() == "['conformance.cli']"


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
