"""``conformance.console.output``: a stream that goes quiet when its reader goes away; colour as the
environment says; lines that keep to the width, and commands wrapped so that they paste as one."""

from __future__ import annotations

import io
import shlex
import subprocess

import pytest

from conformance.console.output import (
    QuietOnBrokenPipe,
    Style,
    command_lines,
    cut,
    visible_width,
    wants_colour,
    wrapped,
)


def test_quiet_on_broken_pipe_drops_the_rest_and_keeps_going() -> None:
    class Gone(io.StringIO):
        def write(self, text: str) -> int:
            raise BrokenPipeError

    stream = QuietOnBrokenPipe(Gone())
    assert stream.write("abc") == 3 and stream.gone
    print("more", file=stream)
    stream.flush()
    assert QuietOnBrokenPipe.around(stream) is stream


def test_a_stream_whose_reader_stays_gets_everything() -> None:
    target = io.StringIO()
    stream = QuietOnBrokenPipe(target)
    print("one", file=stream)
    stream.write("two")
    stream.flush()
    assert target.getvalue() == "one\ntwo" and not stream.gone


# -- width and colour -------------------------------------------------------------------------------------


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("environ", "terminal", "colour"),
    [
        ({}, True, True),
        ({}, False, False),
        ({"NO_COLOR": "1"}, True, False),  # no-color.org: set and not empty
        ({"NO_COLOR": ""}, True, True),
        ({"FORCE_COLOR": "1"}, False, True),  # force-color.org: set and not empty
        ({"FORCE_COLOR": ""}, False, False),
        ({"NO_COLOR": "1", "FORCE_COLOR": "1"}, True, False),  # NO_COLOR wins, as in rich
        ({"TERM": "dumb"}, True, False),
    ],
)
def test_colour_on_a_terminal_only_as_the_environment_says(
    environ: dict[str, str], terminal: bool, colour: bool
) -> None:
    stream = Tty() if terminal else io.StringIO()
    assert wants_colour(stream, environ) is colour
    assert wants_colour(QuietOnBrokenPipe(stream), environ) is colour  # seen through the wrapper
    painted = Style(colour=colour).paint("F", "fail")
    assert ("\x1b[" in painted) is colour and visible_width(painted) == 1


def pasted(lines: list[str]) -> list[str]:
    """The words bash reads from ``lines`` pasted as they are."""
    script = "\n".join(lines).replace("conformance", 'printf "%s\\n"', 1)
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True).stdout.splitlines()


@pytest.mark.parametrize("width", [80, 60, 40])
@pytest.mark.parametrize(
    "command",
    [
        "conformance run --adapter buggy:ADAPTER --scenarios arguments/empty_string "
        "-k buggy_chat::arguments/empty_string::non_stream",
        "conformance run --scenarios '/tmp/a folder with spaces/and-a-very-long-name-that-goes-on-and-on/x.yaml' "
        "--cassette-dir \"it's here\" -k 'a::b c::stream'",
    ],
)
def test_a_wrapped_command_pastes_as_the_one_command(command: str, width: int) -> None:
    lines = command_lines(command, width, indent="    rerun: ", next_indent="      ")
    assert all(visible_width(line) <= width for line in lines), lines
    assert lines[0].startswith("    rerun: conformance ")
    lines[0] = lines[0].removeprefix("    rerun: ")
    assert pasted(lines) == shlex.split(command)[1:]


def test_cut_and_wrapped_keep_to_the_width() -> None:
    assert cut("abcdef", 4) == "abc…" and cut("abc", 4) == "abc"
    lines = wrapped("word " * 40 + "x" * 100, 30, indent="  ", next_indent="    ")
    assert all(len(line) <= 30 for line in lines) and lines[1].startswith("    word")
