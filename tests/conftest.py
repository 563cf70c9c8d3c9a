"""Shared fixtures: the public real-world cassettes and their MANIFEST.

The cassettes are kept in the repository, byte for byte as committed upstream, in
``tests/realworld`` (its README says where each comes from and under which license; its MANIFEST.md
gives each file's source, sha256 and size, checked by tests/test_realworld_files.py).

- ``realworld_dir``: the directory (session fixture); a test using it is marked ``realworld``;
- ``realworld_cassette``: parametrizes a test over the cassette files, as paths relative to
  ``realworld_dir / "cassettes"`` (e.g. ``anthropic/x.yaml``), each marked ``realworld``;
- ``realworld_manifest``: ``MANIFEST.md`` parsed: relative path -> ``ManifestFile``;
- ``_wide_terminal`` (every test): the command line's output is read as text, with a wide terminal
  (``COLUMNS``), so a message or a path is on one line, unless a test lays the output out at a width
  of its own (tests/cli/test__summary.py renders at 80 columns).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REALWORLD_DIR = Path(__file__).resolve().parent / "realworld"
CASSETTES_DIR = REALWORLD_DIR / "cassettes"


@pytest.fixture(autouse=True)
def _wide_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "1000")


def realworld_files() -> list[str]:
    """The real-world cassettes, relative to ``CASSETTES_DIR``, sorted."""
    return sorted(p.relative_to(CASSETTES_DIR).as_posix() for p in CASSETTES_DIR.rglob("*.yaml"))


@pytest.fixture(scope="session")
def realworld_dir() -> Path:
    return REALWORLD_DIR


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test that reads the real-world cassettes is marked ``realworld`` (deselect with
    ``-m "not realworld"``)."""
    for item in items:
        if "realworld_dir" in getattr(item, "fixturenames", ()) and item.get_closest_marker("realworld") is None:
            item.add_marker(pytest.mark.realworld)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "realworld_cassette" not in metafunc.fixturenames:
        return
    files = realworld_files()
    assert files, f"no real-world cassettes under {CASSETTES_DIR} (they are part of the repository)"
    metafunc.parametrize("realworld_cassette", [pytest.param(f, id=f, marks=pytest.mark.realworld) for f in files])


# --------------------------------------------------------------------------------------------
# MANIFEST.md
# --------------------------------------------------------------------------------------------


@dataclass
class ManifestInteraction:
    """One ``- Interactions:`` line: ``host/path → STATUS | item; item; ...``."""

    line: str
    host_path: str
    status: int
    stream: bool = False
    tool_calls: list[tuple[str, str]] | None = None
    """``N tool call(s): name(preview), ...``: (name, argument preview; truncated upstream)."""
    streamed_tool_calls: list[str] | None = None
    """``N streamed tool call(s): name, name``."""
    arg_deltas: int | None = None
    sse_events: int | None = None
    ndjson_lines: int | None = None
    json_array_chunks: int | None = None
    tool_results: int = 0
    stop: str | None = None
    error: str | None = None
    """The error payload preview (truncated upstream)."""


@dataclass
class ManifestFile:
    path: str
    provider: str = ""
    streaming: bool = False
    interaction_count: int = 0
    statuses: list[int] = field(default_factory=list)
    body_storage: str = ""
    shows: str = ""
    expected_reading: str | None = None
    interactions: list[ManifestInteraction] = field(default_factory=list)
    source: str = ""
    """``- Source:``: the repository the file comes from (``owner/name``)."""
    commit: str = ""
    """The commit of ``source`` the file was taken at."""
    license: str = ""
    """``source``'s license (an SPDX expression)."""
    source_path: str = ""
    """``- Path in source:``: the file's path in ``source``."""
    sha256: str = ""
    """``- sha256:``: the digest of the file's bytes."""
    size: int = -1
    """The file's size in bytes (the same line; -1 when the section has none)."""


_SECTION = re.compile(r"^### `([^`]+)`\s*$", re.MULTILINE)
_HEADER = re.compile(
    r"Provider: (\S+) · Streaming: (yes|no) · Interactions: (\d+) · HTTP status: ([\d, ]+)",
)
_SOURCE = re.compile(r"^- Source: `([^`]+)` @ `([0-9a-f]{40})` \(([^)]+)\)$", re.MULTILINE)
_SOURCE_PATH = re.compile(r"^- Path in source: `([^`]+)`$", re.MULTILINE)
_SHA256 = re.compile(r"^- sha256: `([0-9a-f]{64})` \((\d+) bytes\)$", re.MULTILINE)
_LINE = re.compile(r"^  - (\S+) → (\d{3}) \| ?(.*)$")
_CALLS_HEAD = re.compile(r"(?:^|; )(\d+) tool call\(s\): ")
_CALL = re.compile(r"([A-Za-z_][\w.\-]*)\((.*?)\)(?=, [A-Za-z_][\w.\-]*\(|; |$)")
_STREAMED = re.compile(r"(?:^|; )(\d+) streamed tool call\(s\): ([^;]*)")


def parse_manifest(text: str) -> dict[str, ManifestFile]:
    """MANIFEST.md's per-file sections, keyed by the path relative to ``cassettes/``."""
    files: dict[str, ManifestFile] = {}
    sections = _SECTION.split(text)
    for path, body in zip(sections[1::2], sections[2::2], strict=True):
        entry = ManifestFile(path=path)
        if m := _HEADER.search(body):
            entry.provider = m.group(1)
            entry.streaming = m.group(2) == "yes"
            entry.interaction_count = int(m.group(3))
            entry.statuses = [int(s) for s in m.group(4).split(",")]
        if m := _SOURCE.search(body):
            entry.source, entry.commit, entry.license = m.groups()
        if m := _SOURCE_PATH.search(body):
            entry.source_path = m.group(1)
        if m := _SHA256.search(body):
            entry.sha256, entry.size = m.group(1), int(m.group(2))
        lines = body.splitlines()
        for n, line in enumerate(lines):
            if line.startswith("- Body storage:"):
                entry.body_storage = line.removeprefix("- Body storage:").strip()
            elif line.startswith("- Shows:"):
                entry.shows = line.removeprefix("- Shows:").strip()
            elif line.startswith("- Expected reading:"):
                more = [line.removeprefix("- Expected reading:")]
                more += [x.strip() for x in lines[n + 1 :] if x.startswith("  ") and not x.startswith("  - ")][:10]
                entry.expected_reading = " ".join(x.strip() for x in more)
            elif m := _LINE.match(line):
                entry.interactions.append(_parse_interaction(line, m))
        files[path] = entry
    return files


def _parse_interaction(line: str, m: re.Match[str]) -> ManifestInteraction:
    rest = m.group(3)
    item = ManifestInteraction(line=line, host_path=m.group(1), status=int(m.group(2)))
    error_at = rest.find("error: ")
    if error_at >= 0:
        item.error = rest[error_at + len("error: ") :]
        rest = rest[:error_at]
    items = [x.strip() for x in rest.split(";")]
    item.stream = "stream" in items
    if head := _CALLS_HEAD.search(rest):
        count, pos, calls = int(head.group(1)), head.end(), []
        for _ in range(count):
            call = _CALL.match(rest, pos)
            assert call is not None, f"cannot read the tool calls of MANIFEST line {line!r}"
            calls.append((call.group(1), call.group(2)))
            pos = call.end() + (2 if rest.startswith(", ", call.end()) else 0)
        item.tool_calls = calls
    if streamed := _STREAMED.search(rest):
        item.streamed_tool_calls = [n.strip() for n in streamed.group(2).split(",")]
        assert len(item.streamed_tool_calls) == int(streamed.group(1)), line
    for pattern, attr in (
        (r"(\d+) arg deltas", "arg_deltas"),
        (r"(\d+) SSE events", "sse_events"),
        (r"(\d+) NDJSON lines", "ndjson_lines"),
        (r"JSON-array stream, (\d+) chunks", "json_array_chunks"),
        (r"(\d+) tool results in request", "tool_results"),
    ):
        if found := re.search(pattern, rest):
            setattr(item, attr, int(found.group(1)))
    if stop := re.search(r"stop=(\S+)\s*$", rest):
        item.stop = stop.group(1)
    return item


@pytest.fixture(scope="session")
def realworld_manifest(realworld_dir: Path) -> dict[str, ManifestFile]:
    return parse_manifest((realworld_dir / "MANIFEST.md").read_text(encoding="utf-8"))
