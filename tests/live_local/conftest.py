"""The ``live_local`` tier: a real model server on this machine (``scripts/local_model_server.py``).

The tier is opt-in (``python -m pytest -m live_local``, a few minutes on 2 cores): without ``-m
live_local`` its tests are skipped saying so, and when the cached ``llama-server`` or model is
absent they are skipped naming the missing file and the command that makes it. Fixtures (session
scoped: one server per mode, one pair of recordings, one replay):

- ``local_server``: ``llama-server`` in its default (``content``) mode, with ``-n`` capping every
  generation at ``MAX_TOKENS`` tokens; ``structured_server`` the same in ``structured`` mode;
- ``recordings``: ``conformance record --live`` of ``SCENARIOS`` x ``ADAPTERS`` into a scratch
  folder, twice in a row, with the request knobs (``--temperature 0 --seed 42 --max-tokens``) that
  this ``conformance record`` offers;
- ``replay``: ``conformance run --cassette-dir`` over those cassettes, its ``report.json``;
- ``structured_recording``: ``STRUCTURED_SCENARIOS`` recorded once against ``structured_server``.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.live_local._live import (
    ADAPTERS,
    DEVIATING,
    MAX_TOKENS,
    SCENARIOS,
    STRUCTURED_SCENARIOS,
    THREADS_ENV,
    Recording,
    Recordings,
    Replay,
    conformance,
    load_script,
    record,
    record_knobs,
)

OPT_IN = "opt-in tier (a real model server, a few minutes): run it with `python -m pytest -m live_local`"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every test here is marked ``live_local``, and skipped unless ``-m`` names that marker."""
    here = Path(__file__).parent
    chosen = "live_local" in (config.getoption("markexpr", "") or "")
    for item in items:
        if item.path.is_relative_to(here):
            item.add_marker(pytest.mark.live_local)
            if not chosen:
                item.add_marker(pytest.mark.skip(reason=OPT_IN))


def _server(mode: str) -> Iterator[Any]:
    script = load_script()
    cache = script.Cache.default()
    absent = script.missing(cache)
    if absent:
        pytest.skip(
            "live_local: the local model server is not in the cache: "
            + "; ".join(f"{path} is missing (make it with `{command}`)" for path, command in absent)
        )
    threads = int(os.environ.get(THREADS_ENV) or 1)
    with script.LocalServer(cache, mode=mode, threads=threads, extra_args=("-n", str(MAX_TOKENS))) as server:
        print(f"\nlive_local: llama-server ({mode}) ready in {server.start_seconds} s", file=sys.stderr)
        yield server


@pytest.fixture(scope="session")
def local_server() -> Iterator[Any]:
    yield from _server("content")


@pytest.fixture(scope="session")
def structured_server() -> Iterator[Any]:
    yield from _server("structured")


@pytest.fixture(scope="session")
def scratch() -> Iterator[Path]:
    """A folder of the tier's own, removed at the end (not pytest's numbered temporary folders, which
    another pytest session on the same machine may remove while this tier still records)."""
    folder = Path(tempfile.mkdtemp(prefix="conformance-live-local-"))
    yield folder
    keep = os.environ.get("CONFORMANCE_LIVE_LOCAL_KEEP")  # a folder to keep the recordings in (docs/live.md)
    if keep:
        for part in ("cassettes", "structured"):
            if (folder / part).is_dir():
                shutil.copytree(folder / part, Path(keep) / part, dirs_exist_ok=True)
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def recordings(local_server: Any, scratch: Path) -> Recordings:
    cassette_dir = scratch / "cassettes"
    knobs = [*record_knobs(), "--allow-deviation"]  # the model's own choices are recorded, and judged as recorded
    notes = local_server.provenance()
    first = record(local_server.base_url, cassette_dir, knobs, notes=notes)
    second = record(local_server.base_url, cassette_dir, knobs, notes=notes)
    return Recordings(cassette_dir, first, second)


@pytest.fixture(scope="session")
def structured_recording(structured_server: Any, scratch: Path) -> Recording:
    cassette_dir = scratch / "structured"
    knobs = [*record_knobs(), "--allow-deviation"]
    return record(structured_server.base_url, cassette_dir, knobs, STRUCTURED_SCENARIOS, structured_server.provenance())


@pytest.fixture(scope="session")
def strict_recording(local_server: Any, scratch: Path) -> Recording:
    """One scenario whose call this model writes as text, recorded without ``--allow-deviation``."""
    notes = local_server.provenance()
    return record(local_server.base_url, scratch / "strict", record_knobs(), DEVIATING, notes, ("openai_chat",))


@pytest.fixture(scope="session")
def replay(recordings: Recordings, scratch: Path) -> Replay:
    report_dir = scratch / "report"
    argv = ["run", "--cassette-dir", str(recordings.cassette_dir), "--adapters", ",".join(ADAPTERS)]
    argv += [part for scenario in SCENARIOS for part in ("--scenarios", scenario)]
    argv += ["--report-dir", str(report_dir), "--format", "json", "-j", "1", "--quiet"]
    done = conformance(*argv)
    report_file = report_dir / "report.json"
    assert report_file.is_file(), f"conformance {' '.join(argv)} wrote no report: {done.stdout}\n{done.stderr}"
    return Replay(done.returncode, done.stdout + done.stderr, json.loads(report_file.read_text(encoding="utf-8")))
