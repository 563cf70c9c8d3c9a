"""Tests for ``conformance.mcp_bridge._fixtures``: the bundled server's deterministic data.

The PNG is checked against the PNG specification (https://www.w3.org/TR/png-3/: signature,
chunk layout length/type/data/CRC-32, IHDR fields, filtered scanlines) and the WAV against the
RIFF/WAVE canonical header (fmt chunk: format 1 = PCM).
"""

from __future__ import annotations

import re
import struct
import zlib

import pytest

from conformance.mcp_bridge._fixtures import FAKE_FILES, WEATHER, file_lines, png_bar_chart, search_files, wav_silence


def png_chunks(png: bytes) -> list[tuple[bytes, bytes]]:
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    chunks, at = [], 8
    while at < len(png):
        (length,) = struct.unpack(">I", png[at : at + 4])
        kind, data = png[at + 4 : at + 8], png[at + 8 : at + 8 + length]
        (crc,) = struct.unpack(">I", png[at + 8 + length : at + 12 + length])
        assert crc == zlib.crc32(kind + data), kind
        chunks.append((kind, data))
        at += 12 + length
    return chunks


def test_the_chart_is_a_valid_grayscale_png() -> None:
    png = png_bar_chart([1.0, 2.0], bar_width=6, height=24)
    chunks = png_chunks(png)
    assert [kind for kind, _ in chunks] == [b"IHDR", b"IDAT", b"IEND"]
    width, height, depth, color, compression, filtering, interlace = struct.unpack(">IIBBBBB", chunks[0][1])
    assert (width, height, depth, color, compression, filtering, interlace) == (12, 24, 8, 0, 0, 0, 0)
    pixels = zlib.decompress(chunks[1][1])
    assert len(pixels) == height * (1 + width)
    rows = [pixels[y * 13 : (y + 1) * 13] for y in range(height)]
    assert all(row[0] == 0 for row in rows)  # filter type None
    # the bar of value 2 fills the whole height, the bar of value 1 the lower half
    column = [row[1 + 6] for row in rows]
    assert column == [0x30] * 24
    half = [row[1 + 0] for row in rows]
    assert half == [0xFF] * 12 + [0x30] * 12


def test_the_chart_is_deterministic_and_tolerates_odd_values() -> None:
    assert png_bar_chart([3, 1, 4]) == png_bar_chart([3, 1, 4])
    assert png_chunks(png_bar_chart([]))[0][0] == b"IHDR"
    assert png_chunks(png_bar_chart([-1.0, 0.0]))[0][0] == b"IHDR"


def test_the_wav_is_pcm_silence() -> None:
    wav = wav_silence(milliseconds=50, rate=8000)
    assert wav[:4] == b"RIFF" and wav[8:12] == b"WAVE"
    assert struct.unpack("<I", wav[4:8])[0] == len(wav) - 8
    assert wav[12:16] == b"fmt "
    fmt_format, channels, rate, byte_rate, align, bits = struct.unpack("<HHIIHH", wav[20:36])
    assert (fmt_format, channels, rate, byte_rate, align, bits) == (1, 1, 8000, 8000, 1, 8)
    assert wav[36:40] == b"data"
    assert struct.unpack("<I", wav[40:44])[0] == 400
    assert set(wav[44:]) == {0x80}


def test_search_is_case_insensitive_by_default_and_ordered() -> None:
    hits = search_files("todo")
    assert [(path, line) for path, line, _ in hits] == [
        ("src/weather_app/clock.py", 10),
        ("src/weather_app/weather.py", 11),
        ("web/src/api.ts", 3),
    ]
    assert search_files("todo", case_sensitive=True) == []
    assert [path for path, _, _ in search_files("TODO", file_type=".ts")] == ["web/src/api.ts"]
    assert [path for path, _, _ in search_files("TODO", file_type="py")] == [
        "src/weather_app/clock.py",
        "src/weather_app/weather.py",
    ]
    assert len(search_files(".", max_results=5)) == 5


def test_search_lines_are_the_files_lines() -> None:
    for path, number, line in search_files("def "):
        assert FAKE_FILES[path].splitlines()[number - 1] == line


def test_a_bad_pattern_raises_re_error() -> None:
    with pytest.raises(re.error):
        search_files("(")


def test_file_lines_and_weather_table() -> None:
    assert file_lines("README.md")[0] == "# weather-app"
    with pytest.raises(KeyError):
        file_lines("nope.txt")
    assert all(key == w.city.lower() for key, w in WEATHER.items())
    assert WEATHER["paris"].temperature_c == 21.0
