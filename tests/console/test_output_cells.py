"""``conformance.console.output``: lines counted in terminal cells (wide characters two, combining marks
and zero-width characters none), and text from outside shown safely (issue 25): a control character
is escaped on the screen, and a rerun command pasted in a shell gives back the exact word."""

from __future__ import annotations

import shlex
import subprocess
import textwrap
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.console.output import Style, command_lines, cut, shell_word, shown, visible_width, wrapped

WEATHER = "22°C, 晴れ ☀️ and 東京タワー at night 🌃"
FAMILY = "👨\u200d👩\u200d👧"  # a ZWJ sequence: three emoji joined, shown as one (or three) on a terminal
ACCENTED = "cafe\u0301 re\u0301sume\u0301 nai\u0308ve"  # combining accents: each with its letter, one cell
TEXTS = [
    f"roundtrip.content: turn 1 $.content: the text differs, actual {WEATHER!r} " * 3,
    " ".join([FAMILY, "☀️", "晴れ", ACCENTED] * 12),
    "東京" * 70,  # one word of wide characters, longer than a line
    "x" + "晴" * 60,  # an odd cell before the wide ones: a wide one cannot straddle the width
    f"{ACCENTED} {'e' + chr(0x301) * 3} a\u200bzero-width\u200bspace {FAMILY * 8}",
]


def test_a_line_is_counted_in_terminal_cells() -> None:
    assert visible_width("abc") == 3
    assert visible_width("晴れ") == 4  # East Asian Wide
    assert visible_width("ＡＢ") == 4  # Fullwidth
    assert visible_width("☀️") == 2  # a text-presentation character made an emoji by VARIATION SELECTOR-16
    assert visible_width("☀") == 1
    assert visible_width(FAMILY) == 6  # at most: a terminal that does not join them shows three emoji
    assert visible_width("🇯🇵") == 4  # regional indicators: two each at most
    assert visible_width("e\u0301") == 1 and visible_width(ACCENTED) == len("cafe resume naive")
    assert visible_width("a\u200bb\u200dc") == 3  # zero-width space and joiner
    assert visible_width(Style(colour=True).paint("晴れ", "fail")) == 4  # colour codes: none
    assert visible_width("22°C, 晴れ ☀️") == 13


@pytest.mark.parametrize("width", [80, 40])
@pytest.mark.parametrize("text", TEXTS)
def test_wrapped_keeps_to_the_width_in_cells_and_loses_no_character(text: str, width: int) -> None:
    lines = wrapped(text, width, indent="    ", next_indent="      ")
    assert all(visible_width(line) <= width for line in lines), [(visible_width(x), x) for x in lines]
    assert "".join("".join(lines).split()) == "".join(text.split())  # every character, in order
    assert all(not unicodedata.combining(line.lstrip()[0]) for line in lines)  # no accent torn from its letter


@pytest.mark.parametrize("width", [80, 40, 41])
@pytest.mark.parametrize("text", TEXTS)
def test_cut_keeps_to_the_width_in_cells_without_splitting_a_character(text: str, width: int) -> None:
    line = cut(text, width)
    assert visible_width(line) <= width and line.endswith("…")
    kept = line.removesuffix("…")
    assert text.startswith(kept) and visible_width(kept) >= width - 2  # the line is filled, less a wide one
    assert cut(WEATHER, 80) == WEATHER  # what fits is left as it is
    painted = Style(colour=True).paint("晴れ" * 30, "fail")
    assert cut(painted, 20).endswith("\x1b[0m…")  # cut inside a painted part: the colour ends with the cut


@pytest.mark.parametrize("width", [80, 40])
def test_a_command_with_wide_characters_keeps_to_the_width_and_pastes_as_one(width: int) -> None:
    words = ["conformance", "run", "--scenarios", f"/tmp/{'天気' * 30}/x.yaml", "-k", f"a::{FAMILY * 9}::stream"]
    lines = command_lines(shlex.join(words), width, indent="    rerun: ", next_indent="      ")
    assert all(visible_width(line) <= width for line in lines), [(visible_width(x), x) for x in lines]
    lines[0] = lines[0].removeprefix("    rerun: ")
    assert pasted(lines) == words


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(st.sampled_from("ab xyz-\t\n.,:'/" + "0123456789"), max_size=160),
    width=st.integers(1, 60),
    indent=st.sampled_from(["", "  ", "    rerun: "]),
    next_indent=st.sampled_from([None, "", "      "]),
)
def test_an_ascii_text_is_wrapped_as_textwrap_wraps_it(text: str, width: int, indent: str, next_indent: str) -> None:
    """Counting cells changes no line of the ASCII text the reports are mostly made of."""
    following = indent if next_indent is None else next_indent
    expected = textwrap.wrap(
        text,
        width=max(width, len(following) + 10, len(indent) + 10),
        initial_indent=indent,
        subsequent_indent=following,
        break_on_hyphens=False,
    ) or [indent.rstrip()]
    assert wrapped(text, width, indent=indent, next_indent=next_indent) == expected


# -- text from outside, shown safely ----------------------------------------------------------------------

HOSTILE = "evil\x1b[2J\nFAKE PASS 'q' $(touch pwned) `id` \\x1b \x07\x7f\x9b\u202etxt.exe\r"
CONTROLS = {chr(c) for c in [*range(0x20), *range(0x7F, 0xA0)]} | {"\u2028", "\u2029", "\u202e"}


def test_shown_escapes_every_control_character() -> None:
    assert shown("arguments/empty_string") == "arguments/empty_string"
    assert shown("a\x1b[2Jb\nc\td") == "a\\x1b[2Jb\\nc\\td"
    assert shown("\x7f\x9b\u202e\u2028") == "\\x7f\\x9b\\u202e\\u2028"
    assert not set(shown(HOSTILE)) & CONTROLS
    assert shown(WEATHER + FAMILY) == WEATHER + FAMILY  # emoji and their joiners are no controls


def test_the_line_helpers_show_a_control_character_escaped_and_keep_their_own_colour() -> None:
    painted = Style(colour=True).paint("FAIL", "fail") + f" openai_chat {HOSTILE} [stream]"
    for line in [cut(painted, 80), *wrapped(painted, 40)]:
        assert not set(line.replace("\x1b[1;31m", "").replace("\x1b[0m", "")) & CONTROLS, line
    assert cut(painted, 200).startswith("\x1b[1;31mFAIL\x1b[0m openai_chat evil\\x1b[2J")


def pasted(lines: list[str]) -> list[str]:
    """The words bash reads from ``lines`` (a command without ``conformance``) pasted as they are."""
    script = "printf '%s\\0' " + "\n".join(lines)
    done = subprocess.run(["bash", "-c", script], capture_output=True, check=True)
    return done.stdout.decode("utf-8").split("\0")[:-1]


@pytest.mark.parametrize("word", [HOSTILE, "it's", "a b", "$(x)", "tab\there", "\u0085nel", "plain", "晴れ\n"])
def test_a_shell_word_shows_no_control_character_and_pastes_back_exactly(word: str) -> None:
    quoted = shell_word(word)
    assert not set(quoted) & CONTROLS
    assert pasted([quoted]) == [word]


@pytest.mark.parametrize("width", [80, 40])
def test_a_hostile_command_is_wrapped_escaped_and_pastes_back_exactly(width: int) -> None:
    words = ["conformance", "run", "--scenarios", HOSTILE * 2, "-k", f"openai_chat::{HOSTILE}::stream"]
    lines = command_lines(shlex.join(words), width, indent="    rerun: ", next_indent="      ")
    assert all(visible_width(line) <= width for line in lines)
    assert not set("".join(lines)) & CONTROLS
    lines[0] = lines[0].removeprefix("    rerun: ")
    assert pasted(lines) == words
