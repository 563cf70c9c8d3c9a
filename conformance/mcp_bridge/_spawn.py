"""Process plumbing for MCP stdio servers: the parent-death guard and the stderr log.

**The guard.** The SDK's ``stdio_client`` starts the server in its own session (process group) and,
on a normal close, closes its stdin, then terminates the whole group. None of that runs when our
own process is SIGKILLed. On Linux the server is therefore started through a tiny exec wrapper
(``python -I -S -c GUARD_SOURCE``) that sets ``PR_SET_PDEATHSIG`` to SIGKILL and then ``exec``s the
real command: the server keeps the wrapper's pid, and the kernel kills it when the thread that
spawned it (our event-loop thread) dies. ``preexec_fn`` would do the same without the extra exec,
but ``stdio_client`` (anyio ``open_process``) does not accept one. Grandchildren of the server are
not covered by the signal; they see their stdin close and, like any MCP stdio server, exit.
See prctl(2), PR_SET_PDEATHSIG.

**The stderr log.** The server's stderr goes to an unnamed temporary file (the SDK passes it to the
child as its fd 2); ``StderrLog.tail`` reads its last lines with ``pread`` so the shared file
offset the child writes at never moves.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Sequence
from typing import IO

__all__ = ["GUARD_SOURCE", "StderrLog", "guarded_argv"]

GUARD_SOURCE = r"""
import ctypes, os, signal, sys
parent, argv = int(sys.argv[1]), sys.argv[3:]
try:
    if ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0) != 0:  # 1 = PR_SET_PDEATHSIG
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
except Exception as exc:
    sys.stderr.write(f"conformance: warning: PR_SET_PDEATHSIG failed ({exc}); the server may outlive a killed client\n")
if os.getppid() != parent:
    sys.exit(0)  # the client died before the guard was armed: do not start an orphan
try:
    os.execvp(argv[0], argv)
except OSError as exc:
    sys.stderr.write(f"conformance: cannot start the MCP server {argv[0]!r}: {exc.strerror}\n")
    sys.exit(127)
"""
"""The exec wrapper: ``GUARD_SOURCE <client pid> -- <command...>``."""

_TAIL_BYTES = 64 * 1024


def guarded_argv(argv: Sequence[str]) -> list[str]:
    """``argv`` behind the parent-death guard on Linux; unchanged elsewhere."""
    if not sys.platform.startswith("linux") or not sys.executable:
        return list(argv)
    return [sys.executable, "-I", "-S", "-c", GUARD_SOURCE, str(os.getpid()), "--", *argv]


class StderrLog:
    """An unnamed temporary file that a child process writes its stderr to."""

    def __init__(self) -> None:
        # Lives as long as the session, closed by close(): no `with` block fits.
        self._file: IO[bytes] = tempfile.TemporaryFile(prefix="conformance-mcp-stderr-")  # noqa: SIM115

    @property
    def file(self) -> IO[bytes]:
        """The file to hand to the child as its stderr."""
        return self._file

    def tail(self, lines: int = 20) -> str:
        """The last ``lines`` lines written so far (decoded leniently, trailing blank lines dropped)."""
        if self._file.closed:
            return ""
        fd = self._file.fileno()
        size = os.fstat(fd).st_size
        start = max(0, size - _TAIL_BYTES)
        text = os.pread(fd, size - start, start).decode("utf-8", errors="replace")
        kept = text.rstrip("\n").splitlines()
        if start > 0 and kept:
            kept = kept[1:]  # the first line is probably cut
        return "\n".join(kept[-lines:]) if lines > 0 else ""

    def close(self) -> None:
        self._file.close()
