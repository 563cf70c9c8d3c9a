"""Tests for ``conformance.mcp_bridge._spawn``: the parent-death guard and the stderr log.

The guard is checked with the kernel's own answer: prctl(PR_GET_PDEATHSIG) (option 2, prctl(2))
returns the signal armed by PR_SET_PDEATHSIG (option 1) in the exec'd program.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from conformance.mcp_bridge._spawn import GUARD_SOURCE, StderrLog, guarded_argv

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux-only")

# Prints the pid, the parent-death signal armed in this process, and the arguments it got.
REPORT = (
    "import ctypes, os, sys; s = ctypes.c_int(0); "
    "ctypes.CDLL(None).prctl(2, ctypes.byref(s), 0, 0, 0); "
    "print(os.getpid(), s.value, sys.argv[1:])"
)


@linux_only
def test_the_guard_wraps_the_command_with_our_pid() -> None:
    argv = guarded_argv(["server", "--flag"])
    assert argv[:5] == [sys.executable, "-I", "-S", "-c", GUARD_SOURCE]
    assert argv[5:] == [str(os.getpid()), "--", "server", "--flag"]


@linux_only
def test_the_guarded_program_has_sigkill_armed_and_keeps_the_pid() -> None:
    proc = subprocess.run(
        guarded_argv([sys.executable, "-c", REPORT, "a b", "c"]), capture_output=True, text=True, timeout=30
    )
    assert proc.returncode == 0, proc.stderr
    pid, armed, args = proc.stdout.split(" ", 2)
    assert int(armed) == signal.SIGKILL
    assert args.strip() == "['a b', 'c']"
    assert int(pid) > 0


@linux_only
def test_a_missing_program_exits_127_with_a_message() -> None:
    proc = subprocess.run(guarded_argv(["no-such-program-xyz"]), capture_output=True, text=True, timeout=30)
    assert proc.returncode == 127
    assert "cannot start the MCP server 'no-such-program-xyz': No such file or directory" in proc.stderr


@linux_only
def test_the_guard_does_not_start_an_orphan() -> None:
    # A parent pid that is not ours: the client is gone, so the command must not run.
    argv = guarded_argv([sys.executable, "-c", "print('started')"])
    argv[5] = "1" if os.getppid() != 1 else "2"
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0
    assert proc.stdout == ""


def test_without_linux_the_argv_is_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "darwin")
    assert guarded_argv(["a", "b"]) == ["a", "b"]


def test_the_stderr_tail_keeps_the_last_lines() -> None:
    log = StderrLog()
    try:
        assert log.tail() == ""
        log.file.write("".join(f"line {i}\n" for i in range(30)).encode())
        log.file.flush()
        assert log.tail(3) == "line 27\nline 28\nline 29"
        assert log.tail(0) == ""
        assert log.tail().splitlines()[0] == "line 10"
        # the writer's position does not move when the tail is read
        log.file.write(b"\xffbad utf-8\n")
        log.file.flush()
        assert log.tail(1) == "\ufffdbad utf-8"
    finally:
        log.close()
    assert log.tail() == ""


def test_a_huge_log_drops_the_cut_first_line() -> None:
    log = StderrLog()
    try:
        log.file.write(b"x" * 70_000 + b"\nlast\n")
        log.file.flush()
        assert log.tail(5) == "last"
    finally:
        log.close()
