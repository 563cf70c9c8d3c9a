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
``command_lines`` keep every line within it, counted in terminal cells (``visible_width``: a wide
character two, a combining mark none, colour codes none).

What goes through ``QuietOnBrokenPipe`` (the output of ``run``, ``certify`` and ``merge-reports``)
is scrubbed on its way out: key shapes and the secrets of the process
(``conformance.traffic.scrub.environment_secrets``), in every spelling the scrubber knows; a text a
cassette or a result carries never prints a key.

Names come from outside (a scenario id, an adapter name, a file name) and may hold control
characters: ``shown`` escapes them (``\x1b``, ``\n``), ``cut`` and ``wrapped`` escape them in every
line they return (the colour codes of ``Style`` kept), and ``command_lines`` quotes each word with
``shell_word``, which writes such a word as ``$'...'`` so that it pastes back exactly.
"""

from __future__ import annotations

import contextlib
import functools
import io
import os
import re
import shlex
import shutil
import sys
import unicodedata
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TextIO, cast

from conformance.traffic.scrub import environment_secrets, known_scrubber

__all__ = [
    "MIN_WIDTH",
    "QuietOnBrokenPipe",
    "Style",
    "command_lines",
    "cut",
    "is_terminal",
    "output_width",
    "quiet_stdout",
    "shell_word",
    "shown",
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
    the rest of the output is dropped, and whatever prints to it goes on. What it writes is scrubbed
    of key shapes and the process's secrets (the module docstring)."""

    def __init__(self, out: TextIO) -> None:
        super().__init__()
        self.out = out
        self.gone = False
        self.scrub = known_scrubber(environment_secrets(os.environ)).text

    @classmethod
    def around(cls, out: TextIO) -> TextIO:
        """``out`` wrapped (once)."""
        return out if isinstance(out, cls) else cast(TextIO, cls(out))

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return is_terminal(self.out)

    def fileno(self) -> int:
        """The wrapped stream's descriptor (for a child process's output: not scrubbed here)."""
        return self.out.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.out, "encoding", None) or "utf-8"

    def write(self, text: str) -> int:
        if not self.gone:
            try:
                self.out.write(self.scrub(text))
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


_COLOURS = {
    "pass": "32",  # green
    "fail": "1;31",  # bold red
    "error": "1;35",  # bold magenta
    "stale": "33",  # yellow
    "xfail": "33",
    "left": "36",  # cyan
    "deviated": "34",  # blue: the model's choice, not a defect
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


# -- what a terminal is shown: cells, escapes --------------------------------------------------------------

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_OWN_CODES = re.compile("|".join(re.escape(f"\x1b[{code}m") for code in sorted({"0", *_COLOURS.values()})))
"""The colour codes ``Style`` writes: the only control sequences a line the helpers return may hold."""
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
"""What a terminal must not be sent as it is: the C0 and C1 controls and DEL (ESC starts a sequence that
moves the cursor or clears the screen; a newline or a carriage return forges a line), the line and
paragraph separators, and the bidirectional controls, which reorder what is shown around them
(CVE-2021-42574, "Trojan Source")."""
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_WHITESPACE = str.maketrans(dict.fromkeys("\t\n\x0b\x0c\r", " "))
"""What ``textwrap`` reads as a space (its ``replace_whitespace``)."""
_VS16 = "\ufe0f"
"""VARIATION SELECTOR-16: the character before it is shown as an emoji, two cells wide (``☀️``)."""


def shown(text: str) -> str:
    """``text`` as it is safe to show on a terminal: each control character, DEL, line separator and
    bidirectional control written as an escape (``\\x1b``, ``\\n``, ``\\u202e``), everything else as it is.
    For names that come from outside (scenario ids, adapter names, file names): a hostile one cannot
    move the cursor, clear the screen or forge a line of the output."""
    return _UNSAFE.sub(_escape, text) if _UNSAFE.search(text) else text


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    return _NAMED.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def _line_safe(text: str) -> str:
    """``shown(text)``, keeping the colour codes of ``Style`` (a line the helpers lay out may be painted)."""
    if not _UNSAFE.search(text):
        return text
    if "\x1b" not in text:
        return shown(text)
    parts = _OWN_CODES.split(text)
    codes = _OWN_CODES.findall(text)
    return "".join(shown(part) + code for part, code in zip(parts, [*codes, ""], strict=True))


def shell_word(word: str) -> str:
    """``word`` quoted for a POSIX shell as ``shlex.quote`` quotes it, unless it holds a character
    ``shown`` escapes: then as an ANSI-C quoted string (``$'...'``, POSIX.1-2024, bash, zsh, ksh) whose
    every such character is written as its UTF-8 bytes (``\\xHH``), so that the line shows no control
    character and pasting it gives back exactly the word."""
    if not _UNSAFE.search(word):
        return shlex.quote(word)
    body = "".join(
        "".join(f"\\x{byte:02x}" for byte in char.encode("utf-8"))
        if _UNSAFE.match(char)
        else "\\" + char
        if char in "\\'"
        else char
        for char in word
    )
    return f"$'{body}'"


@functools.cache
def _char_cells(char: str) -> int:
    """The cells ``char`` takes on a terminal: two when East Asian Wide or Fullwidth (most emoji are)
    or a regional indicator (half a flag); none when a combining mark or a zero-width format character
    (ZERO WIDTH JOINER, a variation selector); else one. Where terminals differ this counts the most
    cells they show, so that a line never comes out wider than counted."""
    if unicodedata.east_asian_width(char) in ("W", "F") or "\U0001f1e6" <= char <= "\U0001f1ff":
        return 2
    if unicodedata.category(char) in ("Mn", "Me", "Cf") and char != "\xad":  # a soft hyphen may be shown
        return 0
    return 1


def _units(text: str) -> Iterator[tuple[int, int]]:
    """Where each unit of ``text`` ends and the cells it takes: a colour code (none), or a character
    with the zero-width ones after it (a character before VARIATION SELECTOR-16 takes two)."""
    at, end = 0, len(text)
    while at < end:
        if text[at] == "\x1b" and (code := _ANSI.match(text, at)):
            at = code.end()
            yield at, 0
            continue
        cells = _char_cells(text[at])
        at += 1
        while at < end and _char_cells(text[at]) == 0:
            if text[at] == _VS16 and cells == 1:
                cells = 2
            at += 1
        yield at, cells


def visible_width(line: str) -> int:
    """The terminal cells ``line`` takes: a wide character (CJK, most emoji) two, a combining mark or
    a zero-width character none, colour codes none."""
    if line.isascii():  # the most of what is printed: a character is a cell
        return len(_ANSI.sub("", line)) if "\x1b" in line else len(line)
    return sum(cells for _, cells in _units(line))


def _split_cells(text: str, width: int) -> tuple[str, str]:
    """``text`` cut after the last unit that ends within ``width`` cells (a wide character never split)."""
    if text.isascii() and "\x1b" not in text:
        return text[:width], text[width:]
    used = kept = 0
    for end, cells in _units(text):
        if used + cells > width:
            break
        used, kept = used + cells, end
    return text[:kept], text[kept:]


def cut(text: str, width: int) -> str:
    """``text`` on one line of at most ``width`` cells, ending in ``…`` when it was longer (a multi-line
    text joined by spaces; a control character escaped as ``shown`` does)."""
    text = _line_safe(" ".join(text.split()) if "\n" in text else text)
    if text.isascii() and "\x1b" not in text:  # the most of what is printed: a character is a cell
        return text if len(text) <= width else text[: max(0, width - 1)] + "…"
    if len(text) * 2 <= width:  # no character takes more than two cells
        return text
    used = kept = 0
    for end, cells in _units(text):  # walked only as far as the width
        used += cells
        if used > width:
            break
        if used < width:
            kept = end
    else:
        return text
    head = text[:kept]
    codes = _OWN_CODES.findall(head)
    if codes and codes[-1] != "\x1b[0m":  # cut inside a painted part: the colour ends with it
        head += "\x1b[0m"
    return head + "…"


def wrapped(text: str, width: int, *, indent: str = "", next_indent: str | None = None) -> list[str]:
    """``text`` wrapped in lines of at most ``width`` cells (words longer than a line are broken, never
    a wide character; a control character is escaped as ``shown`` does).

    As ``textwrap.wrap`` with ``break_on_hyphens=False`` lays it out (whitespace read as spaces, the
    spaces at the start of a line after the first dropped, those at the end of every line dropped),
    counting terminal cells where ``textwrap`` counts characters."""
    following = indent if next_indent is None else next_indent
    width = max(width, visible_width(following) + 10, visible_width(indent) + 10)
    text = _line_safe(text.expandtabs(8).translate(_WHITESPACE))
    chunks = [chunk for chunk in _SPACES.split(text) if chunk]
    chunks.reverse()
    lines: list[str] = []
    while chunks:
        lead = following if lines else indent
        room = width - visible_width(lead)
        if lines and not chunks[-1].strip():
            chunks.pop()
        line: list[str] = []
        used = 0
        while chunks and used + (size := visible_width(chunks[-1])) <= room:
            line.append(chunks.pop())
            used += size
        if chunks and visible_width(chunks[-1]) > room:  # a word longer than a line: broken
            head, chunks[-1] = _split_cells(chunks[-1], room - used)
            line.append(head)
        if line and not line[-1].strip():
            line.pop()
        if line:
            lines.append(lead + "".join(line))
    return lines or [indent.rstrip()]


_SPACES = re.compile(r"( +)")


def command_lines(command: str, width: int, *, indent: str = "", next_indent: str | None = None) -> list[str]:
    """A shell command in lines of at most ``width`` cells that the shell reads as the one command:
    each line but the last ends in `` \\``. Each word is quoted by ``shell_word`` (so a control
    character in it is shown escaped and pasted back as it was). A word too long for a line is cut
    into pieces quoted on their own, each line ending in ``\\`` (the shell joins them into the one
    word again)."""
    following = indent + "  " if next_indent is None else next_indent
    units: list[list[str]] = []  # an option and its value stay on one line when they fit
    for word in shlex.split(command):
        last = units[-1] if units else []
        if len(last) == 1 and last[0].startswith("-") and " " not in shell_word(last[0]) and not word.startswith("-"):
            last.append(word)
        else:
            units.append([word])
    lines: list[str] = []
    line = indent
    room = width - 2 - visible_width(following)
    for unit in units:
        too_long = len(unit) > 1 and visible_width(" ".join(map(shell_word, unit))) > room
        line = _add_words(lines, line, [[word] for word in unit] if too_long else [unit], width, indent, following)
    lines.append(line)
    return lines


def _add_words(lines: list[str], line: str, units: list[list[str]], width: int, indent: str, following: str) -> str:
    """``line`` with ``units`` added (each a word, or an option and its value, quoted by ``shell_word``),
    the lines it filled appended to ``lines``."""
    room = width - 2  # the " \\" a continued line ends in
    for unit in units:
        text = " ".join(map(shell_word, unit))
        start = line == indent if not lines else line == following
        used, size = visible_width(line), visible_width(text)
        if (start and used + size <= room) or used + 1 + size <= room:
            line = line + text if start else f"{line} {text}"
            continue
        if not start:
            lines.append(line + " \\")
            line = following
            used = visible_width(line)
        if used + size <= room:
            line += text
            continue
        if len(unit) > 1:  # an option and its value too long for a line: word by word
            line = _add_words(lines, line, [[word] for word in unit], width, indent, following)
            continue
        # a word longer than a line: pieces quoted on their own, joined by the shell (no indent inside a word)
        pieces = _pieces(unit[0], room - used, room)
        for piece in pieces[:-1]:
            lines.append(line + shell_word(piece) + "\\")
            line = ""
        line += shell_word(pieces[-1])
    return line


def _pieces(word: str, first: int, rest: int) -> list[str]:
    """``word`` cut so that each piece, quoted, fits (the first in ``first`` cells, the others in ``rest``)."""
    pieces: list[str] = []
    room = max(first, 8)
    while word:
        size = len(word)
        while size > 1 and visible_width(shell_word(word[:size])) > room:
            size -= 1
        pieces.append(word[:size])
        word = word[size:]
        room = max(rest, 8)
    return pieces
