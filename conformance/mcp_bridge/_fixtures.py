"""Deterministic data behind the bundled MCP server's tools (pure; no ``mcp`` import).

A small fake code base for ``search_codebase`` / ``get_file_content``, a weather table for
``get_weather``, and tiny encoders for the PNG chart (``render_chart``) and the WAV clip
(``mixed_content``), written out with ``zlib``/``struct`` so no imaging library is needed.
"""

from __future__ import annotations

import re
import struct
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = [
    "FAKE_FILES",
    "WEATHER",
    "Weather",
    "file_lines",
    "png_bar_chart",
    "search_files",
    "wav_silence",
]


@dataclass(frozen=True, kw_only=True)
class Weather:
    """The fixed weather of a known city."""

    city: str
    condition: str
    temperature_c: float
    humidity_pct: int


WEATHER: Mapping[str, Weather] = {
    w.city.lower(): w
    for w in (
        Weather(city="Paris", condition="sunny", temperature_c=21.0, humidity_pct=40),
        Weather(city="London", condition="light rain", temperature_c=14.5, humidity_pct=82),
        Weather(city="Tokyo", condition="cloudy", temperature_c=18.0, humidity_pct=65),
        Weather(city="New York", condition="windy", temperature_c=9.5, humidity_pct=55),
        Weather(city="San Francisco", condition="fog", temperature_c=16.0, humidity_pct=90),
    )
}
"""Known cities, keyed by lower-case name."""

FAKE_FILES: Mapping[str, str] = {
    "README.md": (
        "# weather-app\n"
        "\n"
        "A tiny app that prints the weather and the time.\n"
        "Run it with `python -m weather_app Paris`.\n"
    ),
    "src/weather_app/__init__.py": ('"""weather-app: weather and time for a city."""\n\n__version__ = "1.2.0"\n'),
    "src/weather_app/clock.py": (
        "import time\n"
        "\n"
        "\n"
        "def get_time(offset_ms: float = 0) -> int:\n"
        '    """Epoch milliseconds, shifted by offset_ms."""\n'
        "    return int(time.time() * 1000 + offset_ms)\n"
        "\n"
        "\n"
        "def format_time(epoch_ms: int) -> str:\n"
        "    # TODO: honour the user's time zone\n"
        '    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(epoch_ms / 1000))\n'
    ),
    "src/weather_app/weather.py": (
        "from dataclasses import dataclass\n"
        "\n"
        "\n"
        "@dataclass\n"
        "class Weather:\n"
        "    city: str\n"
        "    temperature_c: float\n"
        "\n"
        "\n"
        "def get_weather(city: str) -> Weather:\n"
        "    # TODO: call a real weather service\n"
        "    if city.lower() not in KNOWN:\n"
        '        raise ValueError(f"unknown city: {city}")\n'
        "    return KNOWN[city.lower()]\n"
        "\n"
        "\n"
        'KNOWN = {"paris": Weather("Paris", 21.0)}\n'
    ),
    "web/src/api.ts": (
        "export async function getWeather(city: string): Promise<Weather> {\n"
        "  const res = await fetch(`/api/weather?city=${encodeURIComponent(city)}`);\n"
        "  // TODO: handle HTTP errors\n"
        "  return res.json();\n"
        "}\n"
        "\n"
        "export interface Weather {\n"
        "  city: string;\n"
        "  temperatureC: number;\n"
        "}\n"
    ),
    "tests/test_clock.py": (
        "from weather_app.clock import get_time\n"
        "\n"
        "\n"
        "def test_get_time_offset() -> None:\n"
        "    assert get_time(-1000) < get_time()\n"
    ),
}
"""The fake repository: path -> content (``\\n`` line ends, final newline)."""


def search_files(
    pattern: str, *, file_type: str | None = None, case_sensitive: bool = False, max_results: int = 20
) -> list[tuple[str, int, str]]:
    """``(path, line number, line)`` for each line matching the regex, in path then line order.

    ``file_type`` is an extension with or without the dot (``py``, ``.ts``). Raises ``re.error``
    for an invalid pattern.
    """
    regex = re.compile(pattern, 0 if case_sensitive else re.IGNORECASE)
    suffix = None if not file_type else "." + file_type.lstrip(".")
    hits: list[tuple[str, int, str]] = []
    for path in sorted(FAKE_FILES):
        if suffix is not None and not path.endswith(suffix):
            continue
        for number, line in enumerate(FAKE_FILES[path].splitlines(), start=1):
            if regex.search(line):
                hits.append((path, number, line))
                if len(hits) >= max_results:
                    return hits
    return hits


def file_lines(path: str) -> list[str]:
    """The lines of a fake file (KeyError when there is no such file)."""
    return FAKE_FILES[path].splitlines()


def png_bar_chart(values: Sequence[float], *, bar_width: int = 6, height: int = 24) -> bytes:
    """A grayscale PNG bar chart: one dark bar per value on white, scaled to the largest value.

    PNG: signature, IHDR (8-bit grayscale), one IDAT (filter type 0 per row), IEND
    (https://www.w3.org/TR/png-3/). Negative values draw as empty bars.
    """
    top = max([v for v in values if v > 0], default=1.0)
    width = max(1, bar_width * len(values))
    heights = [max(0, round(height * v / top)) if v > 0 else 0 for v in values]
    rows = bytearray()
    for y in range(height):
        rows.append(0)  # filter: none
        for x in range(width):
            bar = heights[x // bar_width] if values else 0
            inside = x % bar_width != bar_width - 1  # a one-pixel gap between bars
            rows.append(0x30 if inside and height - y <= bar else 0xFF)
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", ihdr)
        + _chunk(b"IDAT", zlib.compress(bytes(rows), 9))
        + _chunk(b"IEND", b"")
    )


def wav_silence(*, milliseconds: int = 50, rate: int = 8000) -> bytes:
    """A mono 8-bit PCM WAV file of silence (RIFF/WAVE, ``fmt `` and ``data`` chunks)."""
    samples = bytes([0x80]) * (rate * milliseconds // 1000)
    fmt = struct.pack("<HHIIHH", 1, 1, rate, rate, 1, 8)
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + struct.pack("<I", len(samples)) + samples
    return b"RIFF" + struct.pack("<I", len(body)) + body


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
