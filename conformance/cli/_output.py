"""The command line's standard output: its width, its colours, and what happens when its reader goes
away (``conformance list | head -1``).

``quiet_stdout`` points stdout at the null device, so the output still to come and Python's own flush
at exit go nowhere instead of raising ``BrokenPipeError``. ``QuietOnBrokenPipe`` wraps the stream a
run prints its progress to: after the reader went away it drops the rest, and the run goes on to
write its reports.

``Style`` colours a status word or symbol, on a terminal only: ``NO_COLOR`` (set and not empty,
no-color.org) turns colour off, ``FORCE_COLOR`` (set and not empty, force-color.org) turns it on
where the output is not a terminal, ``TERM=dumb`` turns it off. ``output_width`` is the terminal's
width (``COLUMNS`` when set, 80 when there is no terminal); ``wrapped``, ``cut`` and
``command_lines`` keep every line within it (``visible_width`` does not count colour codes).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import shutil
import sys
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TextIO, cast

__all__ = [
    "MIN_WIDTH",
    "QuietOnBrokenPipe",
    "Style",
    "command_lines",
    "cut",
    "is_terminal",
    "output_width",
    "quiet_stdout",
    "visible_width",
    "wants_colour",
    "wrapped",
]

MIN_WIDTH = 40
"""The narrowest width the output is laid out for (a narrower terminal gets lines of this width)."""


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

    def isatty(self) -> bool:
        return is_terminal(self.out)

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


# -- width and colour ------------------------------------------------------------------------------------


def is_terminal(stream: object) -> bool:
    """Is ``stream`` a terminal (through a ``QuietOnBrokenPipe``)?"""
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty()) if callable(isatty) else False
    except (ValueError, OSError):  # closed
        return False


def wants_colour(stream: object, environ: Mapping[str, str] | None = None) -> bool:
    """Colour on ``stream``? ``NO_COLOR`` wins, then ``FORCE_COLOR``, then ``TERM=dumb``, then: a terminal."""
    env = os.environ if environ is None else environ
    if env.get("NO_COLOR", ""):
        return False
    if env.get("FORCE_COLOR", ""):
        return True
    if env.get("TERM", "") in ("dumb", "unknown"):
        return False
    return is_terminal(stream)


def output_width() -> int:
    """The width to lay lines out in: the terminal's (``COLUMNS`` first), 80 without one, at least ``MIN_WIDTH``."""
    return max(MIN_WIDTH, shutil.get_terminal_size((80, 24)).columns)


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def visible_width(line: str) -> int:
    """The columns ``line`` takes (colour codes take none)."""
    return len(_ANSI.sub("", line))


_COLOURS = {
    "pass": "32",  # green
    "fail": "1;31",  # bold red
    "error": "1;35",  # bold magenta
    "stale": "33",  # yellow
    "xfail": "33",
    "left": "36",  # cyan
    "unsupported": "2",  # dim
    "bold": "1",
    "dim": "2",
}


@dataclass(frozen=True)
class Style:
    """How the output is coloured (``colour``: not at all when False)."""

    colour: bool = False

    @classmethod
    def for_stream(cls, stream: object) -> Style:
        return cls(colour=wants_colour(stream))

    def paint(self, text: str, kind: str) -> str:
        """``text`` in the colour of ``kind`` (a status, ``bold`` or ``dim``); as it is without colour."""
        code = _COLOURS.get(kind)
        if not self.colour or code is None or not text:
            return text
        return f"\x1b[{code}m{text}\x1b[0m"


def cut(text: str, width: int) -> str:
    """``text`` on one line of at most ``width`` columns, ending in ``…`` when it was longer."""
    text = " ".join(text.split()) if "\n" in text else text
    return text if len(text) <= width else text[: max(0, width - 1)] + "…"


def wrapped(text: str, width: int, *, indent: str = "", next_indent: str | None = None) -> list[str]:
    """``text`` wrapped in lines of at most ``width`` columns (words longer than a line are broken)."""
    following = indent if next_indent is None else next_indent
    return textwrap.wrap(
        text,
        width=max(width, len(following) + 10, len(indent) + 10),
        initial_indent=indent,
        subsequent_indent=following,
        break_on_hyphens=False,
        break_long_words=True,
    ) or [indent.rstrip()]


def command_lines(command: str, width: int, *, indent: str = "", next_indent: str | None = None) -> list[str]:
    """A shell command in lines of at most ``width`` columns that the shell reads as the one command:
    each line but the last ends in `` \\``. A word too long for a line is cut into pieces quoted on
    their own, each line ending in ``\\`` (the shell joins them into the one word again)."""
    following = indent + "  " if next_indent is None else next_indent
    words = shlex.split(command)
    units: list[str] = []  # an option and its value stay on one line when they fit
    for word in words:
        if units and units[-1].startswith("-") and " " not in units[-1] and not word.startswith("-"):
            units[-1] = f"{units[-1]} {shlex.quote(word)}"
        else:
            units.append(shlex.quote(word))
    lines: list[str] = []
    line = indent
    for unit in units:
        if len(unit) > width - 2 - len(following) and " " in unit:  # a pair too long for a line: word by word
            option, _, value = unit.partition(" ")
            line = _add_words(lines, line, [option, value], width, indent, following)
        else:
            line = _add_words(lines, line, [unit], width, indent, following)
    lines.append(line)
    return lines


def _add_words(lines: list[str], line: str, words: list[str], width: int, indent: str, following: str) -> str:
    """``line`` with the quoted ``words`` added, the lines it filled appended to ``lines``."""
    for quoted in words:
        start = line == indent if not lines else line == following
        room = width - 2  # the " \\" a continued line ends in
        if (start and len(line) + len(quoted) <= room) or len(line) + 1 + len(quoted) <= room:
            line = line + quoted if start else f"{line} {quoted}"
            continue
        if not start:
            lines.append(line + " \\")
            line = following
        if len(line) + len(quoted) <= room:
            line += quoted
            continue
        # a word longer than a line: pieces quoted on their own, joined by the shell (no indent inside a word)
        [word] = shlex.split(quoted)
        pieces = _pieces(word, room - len(line), room)
        for piece in pieces[:-1]:
            lines.append(line + shlex.quote(piece) + "\\")
            line = ""
        line += shlex.quote(pieces[-1])
    return line


def _pieces(word: str, first: int, rest: int) -> list[str]:
    """``word`` cut so that each piece, quoted, fits (the first in ``first`` columns, the others in ``rest``)."""
    pieces: list[str] = []
    room = max(first, 8)
    while word:
        size = len(word)
        while size > 1 and len(shlex.quote(word[:size])) > room:
            size -= 1
        pieces.append(word[:size])
        word = word[size:]
        room = max(rest, 8)
    return pieces
