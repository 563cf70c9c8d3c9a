"""The real-world cassettes in ``tests/realworld`` are the upstream files, byte for byte, with their
provenance and licenses (tests/realworld/README.md).

``MANIFEST.md`` (kept byte for byte too) is the manifest: each file's section gives its source
repository, commit, path in the source, license, sha256 and size, and its "Sources and licenses"
table names each file prefix's repository. Checked here: every file has the sha256 and size its
section gives; ``MANIFEST.md`` lists exactly the files of ``cassettes/``; every source repository
has its license notice in ``LICENSES/<prefix>/``.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.realworld

MANIFEST_SHA256 = "5dc41880cf87caeb5c10701408de045a3c93e253df39ce9142772f9ecfe818ec"
"""``MANIFEST.md`` as copied (54,800 bytes): it is the manifest, so it is pinned here."""

LICENSE_TEXTS = {
    "MIT": "Permission is hereby granted, free of charge",
    "Apache-2.0": "Apache License",
    "BSD-3-Clause": "Redistribution and use in source and binary forms",
}
"""The licenses the files may come under (MANIFEST: "MIT / Apache-2.0 / BSD"), and words of each text."""

_SOURCE_ROW = re.compile(
    r"^\| `([^`]+)` \| ([\w.-]+/[\w.-]+) \| `([0-9a-f]{40})` \| [\d-]+ \| ([^|]+) \|$", re.MULTILINE
)


def sources(manifest_text: str) -> dict[str, set[tuple[str, str, str]]]:
    """MANIFEST "Sources and licenses": file prefix -> {(repository, commit, license)}."""
    found: dict[str, set[tuple[str, str, str]]] = {}
    for prefix, repository, commit, license_ in _SOURCE_ROW.findall(manifest_text):
        found.setdefault(prefix, set()).add((repository, commit, license_.strip()))
    return found


@pytest.fixture(scope="module")
def manifest_text(realworld_dir: Path) -> str:
    return (realworld_dir / "MANIFEST.md").read_text(encoding="utf-8")


def test_the_manifest_is_the_copied_one(realworld_dir: Path) -> None:
    data = (realworld_dir / "MANIFEST.md").read_bytes()
    assert hashlib.sha256(data).hexdigest() == MANIFEST_SHA256


def test_every_cassette_is_the_upstream_file(
    realworld_dir: Path, realworld_cassette: str, realworld_manifest: dict[str, Any]
) -> None:
    assert realworld_cassette in realworld_manifest, "MANIFEST.md does not list this file"
    entry = realworld_manifest[realworld_cassette]
    data = (realworld_dir / "cassettes" / realworld_cassette).read_bytes()
    assert (hashlib.sha256(data).hexdigest(), len(data)) == (entry.sha256, entry.size)


def test_the_manifest_lists_exactly_the_files_of_cassettes(
    realworld_dir: Path, realworld_manifest: dict[str, Any]
) -> None:
    root = realworld_dir / "cassettes"
    on_disk = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}
    assert sorted(on_disk - set(realworld_manifest)) == [], "files MANIFEST.md does not list"
    assert sorted(set(realworld_manifest) - on_disk) == [], "MANIFEST.md entries with no file"
    assert len(on_disk) == 44  # MANIFEST "Counts": total


def test_every_entry_names_its_source_and_license(realworld_manifest: dict[str, Any], manifest_text: str) -> None:
    table = sources(manifest_text)
    for path, entry in realworld_manifest.items():
        prefix = path.split("/", 1)[1].split("__", 1)[0]
        assert (entry.source, entry.commit, entry.license) in table.get(prefix, set()), path
        assert set(entry.license.split(" OR ")) <= set(LICENSE_TEXTS), path
        assert entry.source_path.endswith(path.split("__", 1)[1]), path  # renamed <prefix>__<upstream name>
    assert set(table) == {p.split("/", 1)[1].split("__", 1)[0] for p in realworld_manifest}


def test_every_source_repository_has_its_license_notice(realworld_dir: Path, manifest_text: str) -> None:
    table = sources(manifest_text)
    folders = {p.name for p in (realworld_dir / "LICENSES").iterdir() if p.is_dir()}
    assert folders == set(table)
    for prefix, rows in table.items():
        folder = realworld_dir / "LICENSES" / prefix
        assert (folder / "LICENSE").is_file(), f"{folder}: the repository's LICENSE"
        texts = "\n".join(p.read_text(encoding="utf-8") for p in folder.rglob("*") if p.is_file())
        for _, _, license_ in rows:
            for name in license_.split(" OR "):
                assert LICENSE_TEXTS[name] in texts, f"{folder} lacks the {name} text"
    # Apache-2.0 section 4(d): a NOTICE travels with the work; dd-trace-py is the one source that has one
    assert (realworld_dir / "LICENSES" / "dd-trace-py" / "NOTICE").is_file()
    readme = (realworld_dir / "README.md").read_text(encoding="utf-8")
    assert all(f"`{prefix}`" in readme for prefix in table), "tests/realworld/README.md names every source"
