"""The command line's standard output when its reader goes away (``conformance list | head -1``).

``quiet_stdout`` points stdout at the null device, so the output still to come and Python's own flush
at exit go nowhere instead of raising ``BrokenPipeError``. ``QuietOnBrokenPipe`` wraps the stream a
run prints its progress to: after the reader went away it drops the rest, and the run goes on to
write its reports.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from typing import TextIO, cast

__all__ = ["QuietOnBrokenPipe", "quiet_stdout"]


def quiet_stdout() -> None:
    """Point stdout at the null device (its reader went away), and stderr too when it is the same pipe
    (``2>&1 | head``)."""
    with contextlib.suppress(OSError, ValueError):  # no real file descriptor (captured output): nothing to do
        out = sys.stdout.fileno()
        same = os.path.samestat(os.fstat(out), os.fstat(2))
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, out)
        if same:
            os.dup2(devnull, 2)
        os.close(devnull)


class QuietOnBrokenPipe(io.TextIOBase):
    """A text stream that goes quiet when its reader goes away instead of raising ``BrokenPipeError``:
    the rest of the output is dropped, and whatever prints to it goes on."""

    def __init__(self, out: TextIO) -> None:
        super().__init__()
        self.out = out
        self.gone = False

    @classmethod
    def around(cls, out: TextIO) -> TextIO:
        """``out`` wrapped (once)."""
        return out if isinstance(out, cls) else cast(TextIO, cls(out))

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if not self.gone:
            try:
                self.out.write(text)
            except BrokenPipeError:
                self._went_away()
        return len(text)

    def flush(self) -> None:
        if not self.gone:
            try:
                self.out.flush()
            except BrokenPipeError:
                self._went_away()

    def _went_away(self) -> None:
        self.gone = True
        if self.out is sys.stdout:
            quiet_stdout()  # Python's own flush at exit goes nowhere too
