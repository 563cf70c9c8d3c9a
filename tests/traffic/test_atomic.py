"""Tests for ``conformance.traffic.atomic`` (the kill test itself is in test_recorder.py: it kills a
real recorder process): a failed check or write keeps the old file, temporaries are unique and only
abandoned ones are removed (two writers of one file never fail each other), and a symbolic link at
the target is followed only inside its folder."""

from __future__ import annotations

import errno
import fcntl
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.errors import UsageError
from conformance.traffic.atomic import stale_temporaries, write_atomic

ROOT = Path(__file__).resolve().parents[2]


def test_a_failed_check_keeps_the_old_file(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_bytes(b"old")

    def refuse(temp: Path) -> None:
        assert temp.read_bytes() == b"new"
        raise RuntimeError("verification failed")

    with pytest.raises(RuntimeError, match="verification failed"):
        write_atomic(path, b"new", check=refuse)
    assert path.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["c.yaml"]


def test_a_complete_temporary_left_by_a_kill_before_the_rename_is_cleaned_up(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    leftover = tmp_path / ".c.yaml.4242.tmp"
    leftover.write_bytes(b"complete but never renamed")
    assert stale_temporaries(path) == [leftover]
    write_atomic(path, b"new")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.yaml"]
    assert path.read_bytes() == b"new"


# -- hostile writers and paths (issue 27, point 5) ----------------------------------------------------------

WRITER = """
import sys
from pathlib import Path
from conformance.traffic.atomic import write_atomic

path, tag, count = Path(sys.argv[1]), sys.argv[2].encode(), int(sys.argv[3])
(path.parent / f"ready-{sys.argv[2]}").touch()
while not (path.parent / "go").exists():  # both start together
    pass
failures = 0
for n in range(count):
    try:
        write_atomic(path, tag * 20_000)
    except OSError as exc:
        failures += 1
        print(type(exc).__name__, exc, file=sys.stderr)
print(failures)
"""


def test_two_concurrent_writers_of_one_file_never_fail_each_other(tmp_path: Path) -> None:
    """Each used to delete the other's linked temporary before its rename (~20% of writes failed)."""
    path = tmp_path / "report.json"
    path.write_bytes(b"0" * 20_000)
    count = 1000
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), tag, str(count)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        for tag in ("a", "b")
    ]
    while not all((tmp_path / f"ready-{tag}").exists() for tag in "ab"):
        assert all(w.poll() is None for w in writers), [w.communicate() for w in writers]
    (tmp_path / "go").touch()
    while any(w.poll() is None for w in writers):  # the file is always one writer's whole content
        content = path.read_bytes()
        assert content in (b"0" * 20_000, b"a" * 20_000, b"b" * 20_000), len(content)
    outcomes = [w.communicate(timeout=120) for w in writers]
    assert [w.returncode for w in writers] == [0, 0], outcomes
    assert [out.strip() for out, _ in outcomes] == ["0", "0"], [err[-2000:] for _, err in outcomes]
    assert path.read_bytes() in (b"a" * 20_000, b"b" * 20_000)
    assert stale_temporaries(path) == []


def test_a_temporary_a_live_writer_holds_is_left_alone(tmp_path: Path) -> None:
    """A writer holds the flock of its temporary until it is renamed; only an abandoned one is removed."""
    path = tmp_path / "c.yaml"
    held = tmp_path / ".c.yaml.77-0123456789ab.tmp"
    held.write_bytes(b"another writer's, about to be renamed")
    with held.open("rb") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        write_atomic(path, b"mine")
        assert held.exists()
    assert path.read_bytes() == b"mine"
    write_atomic(path, b"again")  # its writer is gone (no lock): removed
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.yaml"]


def test_each_temporary_name_is_unique_even_within_one_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    names: list[str] = []

    def checked(temp: Path) -> None:
        names.append(temp.name)

    for _ in range(3):
        write_atomic(tmp_path / "x", b"x", check=checked)
    assert len(set(names)) == 3
    assert all(name.startswith(f".x.{os.getpid()}-") and name.endswith(".tmp") for name in names)


def test_a_link_pointing_outside_the_folder_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "elsewhere").mkdir()
    victim = tmp_path / "elsewhere" / "important"
    victim.write_bytes(b"keep me")
    link = tmp_path / "out" / "report.json"
    link.symlink_to(victim)
    with pytest.raises(UsageError, match=r"report\.json: a symbolic link to .*elsewhere/important, outside the folder"):
        write_atomic(link, b"new")
    assert victim.read_bytes() == b"keep me"
    assert link.is_symlink()
    assert sorted(p.name for p in link.parent.iterdir()) == ["report.json"]


def test_a_dangling_link_pointing_outside_the_folder_creates_nothing_there(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    planted = tmp_path / "planted"
    link = tmp_path / "out" / "baseline.yaml"
    link.symlink_to(planted)
    with pytest.raises(UsageError, match=r"baseline\.yaml: a symbolic link to .*planted"):
        write_atomic(link, b"new")
    assert not planted.exists()
    assert link.is_symlink()


def test_a_link_loop_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    with pytest.raises(UsageError, match="a: a symbolic link"):
        write_atomic(tmp_path / "a", b"new")


def test_a_link_inside_the_folder_is_followed_and_kept(tmp_path: Path) -> None:
    (tmp_path / "runs").mkdir()
    real = tmp_path / "runs" / "42.json"
    link = tmp_path / "report.json"
    link.symlink_to(Path("runs") / "42.json")  # relative, dangling until written
    write_atomic(link, b"new")
    assert link.is_symlink()
    assert real.read_bytes() == b"new"
    write_atomic(link, b"newer")
    assert real.read_bytes() == b"newer"
    from conformance.traffic.atomic import output_path

    assert output_path(link) == real.resolve()
    assert output_path(real) == real


FULL_DISK = """
import resource, sys
from pathlib import Path
from conformance.traffic.atomic import write_atomic

resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))  # SIGXFSZ is ignored by Python: EFBIG
try:
    write_atomic(Path(sys.argv[1]), b"n" * 100_000)
except OSError as exc:
    print("OSError", exc.errno)
"""


def test_a_write_past_the_disk_s_end_leaves_the_old_file_whole_and_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_bytes(b"o" * 3000)
    done = subprocess.run(
        [sys.executable, "-c", FULL_DISK, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.stdout.split() == ["OSError", str(errno.EFBIG)], done.stderr
    assert path.read_bytes() == b"o" * 3000
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.yaml"]


def test_without_o_tmpfile_a_named_temporary_is_locked_and_renamed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from conformance.traffic import atomic

    monkeypatch.setattr(atomic, "_open_anonymous", lambda directory: None)
    path = tmp_path / "c.yaml"
    seen: list[Path] = []

    def locked(temp: Path) -> None:  # a cleaner cannot take it while it is written
        seen.append(temp)
        with temp.open("rb") as handle, pytest.raises(BlockingIOError):
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)

    write_atomic(path, b"new", check=locked)
    assert path.read_bytes() == b"new"
    assert len(seen) == 1 and not seen[0].exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.yaml"]


def test_without_flock_only_an_old_temporary_is_taken_for_stale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from conformance.traffic import atomic

    monkeypatch.setattr(atomic, "fcntl", None)
    path = tmp_path / "c.yaml"
    fresh, old = tmp_path / ".c.yaml.1-aa.tmp", tmp_path / ".c.yaml.2-bb.tmp"
    fresh.write_bytes(b"maybe a live writer's")
    old.write_bytes(b"a dead writer's")
    os.utime(old, (0, 0))
    write_atomic(path, b"new")
    assert sorted(p.name for p in tmp_path.iterdir()) == [fresh.name, "c.yaml"]
