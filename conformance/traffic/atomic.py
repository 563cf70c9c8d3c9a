"""Atomic file replacement: a writer killed at any moment leaves the old file intact.

Every file the suite writes (cassettes, reports, the baseline) goes through ``write_atomic``. On
Linux the new content goes into an anonymous ``O_TMPFILE`` inode in the target's directory, is
fsynced, then linked under a temporary name of its own (``.NAME.<pid>-<random>.tmp``) and
``os.replace``d over the target, and the directory is fsynced. A process killed while writing
leaves nothing behind (the inode has no name); one killed between the link and the rename leaves a
complete ``.NAME.*.tmp`` file. Elsewhere a named temporary file is used. A write that fails (a full
disk, a file-size limit) raises ``OSError`` and leaves the target as it was, whole.

Concurrent writers of one file never fail each other: each temporary name is unique, and a writer
holds an exclusive ``flock`` on its temporary from before it has a name until it is renamed. A
writer removes only the temporaries no one holds (left by a writer that died); one that another
writer holds is left alone. Without ``flock`` (Windows, a file system without it) a temporary is
taken for stale only after an hour.

A symbolic link at the target is followed only when it points inside the folder it is written in
(``reports/report.json -> reports/run-42.json``); one pointing outside it, or dangling outside it,
is refused with ``UsageError`` naming the link and where it points, and nothing is written, so a
planted link never makes the suite create or overwrite a file elsewhere.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import time
from collections.abc import Callable
from pathlib import Path

from conformance.errors import UsageError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["output_path", "stale_temporaries", "write_atomic"]

_CHUNK = 1 << 16
_STALE_AGE = 3600.0
"""Seconds after which a temporary is taken for stale where ``flock`` is missing (Windows)."""
_ATTEMPTS = 8
"""Temporary names tried when a cleaner takes the named file just created (no ``O_TMPFILE``)."""


def _write_chunk(fd: int, data: memoryview) -> int:
    """One ``os.write`` (a seam: the kill test slows it down in a child process)."""
    return os.write(fd, data)


def stale_temporaries(path: Path) -> list[Path]:
    """Temporary files of writers of ``path`` (complete, never partial): a writer that died, or one
    still writing (``write_atomic`` removes only the former)."""
    return sorted(path.parent.glob(f".{path.name}.*.tmp"))


def output_path(path: str | os.PathLike[str]) -> Path:
    """Where writing ``path`` writes: ``path`` itself, or where the symbolic link at ``path`` points
    when that is inside ``path``'s folder. ``UsageError`` (naming the link and its target) for a link
    pointing, or dangling, outside that folder, or a loop of links."""
    target = Path(path)
    if not target.is_symlink():
        return target
    folder = target.parent
    try:
        points = os.readlink(target)
        real = target.resolve()
        inside = folder.resolve() in real.parents
    except (OSError, RuntimeError) as exc:  # a loop of links (RuntimeError before Python 3.13)
        raise UsageError(f"{target}: a symbolic link that cannot be followed ({exc}); remove it") from exc
    if not inside:
        raise UsageError(
            f"{target}: a symbolic link to {points}, outside the folder {folder} the file is written in; "
            "nothing was written: remove the link, or point it inside that folder"
        )
    return real


def write_atomic(path: str | os.PathLike[str], data: bytes, *, check: Callable[[Path], None] | None = None) -> None:
    """Replace ``path`` with ``data`` atomically (temp file in the same directory, fsync, rename).

    ``check``, when given, is called with a named temporary copy of the new content before it
    replaces ``path``; if it raises, ``path`` is left as it was and the exception propagates. A
    failed write (``OSError``) leaves ``path`` as it was and no temporary behind. A symbolic link at
    ``path`` is followed only inside its folder (``output_path``; ``UsageError`` otherwise).
    """
    target = output_path(path)
    directory = target.parent
    directory.mkdir(parents=True, exist_ok=True)
    for stale in stale_temporaries(target):
        _remove_if_abandoned(stale)
    fd, temp = _create(directory, target.name)
    try:
        _write_all(fd, data)
        os.fsync(fd)
        if temp is None:
            temp = directory / _temporary_name(target.name)
            _link_anonymous(fd, temp)
        if check is not None:
            check(temp)
        os.replace(temp, target)  # under the lock: no cleaner takes it for a dead writer's
    except BaseException:
        if temp is not None:
            with contextlib.suppress(OSError):
                temp.unlink()
        raise
    finally:
        os.close(fd)
    _fsync_directory(directory)


def _temporary_name(name: str) -> str:
    return f".{name}.{os.getpid()}-{secrets.token_hex(6)}.tmp"


def _create(directory: Path, name: str) -> tuple[int, Path | None]:
    """A locked file descriptor to write the new content to, and its temporary name (``None``: an
    anonymous ``O_TMPFILE`` inode, named once complete)."""
    fd = _open_anonymous(directory)
    if fd is not None:
        try:
            os.fchmod(fd, 0o644 & ~_umask())
            _lock(fd)  # nobody else can reach a nameless inode: it is free
        except BaseException:
            os.close(fd)
            raise
        return fd, None
    for _ in range(_ATTEMPTS):
        temp = directory / _temporary_name(name)
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o644)
        if _lock(fd) is not False and _names(temp, fd):
            return fd, temp
        os.close(fd)  # a cleaner took it between its creation and the lock: it removes it; another name
    raise OSError(f"{directory}: could not create a temporary file for {name} ({_ATTEMPTS} attempts)")


def _lock(fd: int) -> bool | None:
    """Take the exclusive ``flock`` on ``fd`` without waiting: True when taken, False when someone
    else holds it, None where there are no such locks (Windows, a file system without ``flock``)."""
    if fcntl is None:  # pragma: no cover - Windows
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError:  # pragma: no cover - e.g. ENOLCK on a network file system
        return None
    return True


def _names(path: Path, fd: int) -> bool:
    """Does ``path`` (not following a link) name the file open as ``fd``?"""
    try:
        here, there = os.stat(path, follow_symlinks=False), os.fstat(fd)
    except OSError:
        return False
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)


def _remove_if_abandoned(temp: Path) -> None:
    """Remove ``temp`` when no writer holds it (its writer died); a live writer's is left alone."""
    try:
        fd = os.open(temp, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return
    try:
        held = _lock(fd)
        if held is False:
            return
        if held is None and time.time() - os.fstat(fd).st_mtime < _STALE_AGE:  # no lock to ask: only its age
            return
        if _names(temp, fd):  # still the file locked (a writer renames only under its lock)
            with contextlib.suppress(OSError):
                temp.unlink()
    finally:
        os.close(fd)


def _open_anonymous(directory: Path) -> int | None:
    flag = getattr(os, "O_TMPFILE", 0)
    if not flag or not Path("/proc/self/fd").is_dir():
        return None
    try:
        return os.open(directory, flag | os.O_WRONLY | getattr(os, "O_CLOEXEC", 0), 0o600)
    except OSError:  # the file system does not support O_TMPFILE
        return None


def _link_anonymous(fd: int, temp: Path) -> None:
    # linkat(AT_SYMLINK_FOLLOW) through /proc gives the anonymous inode a name. Python calls plain
    # link(2) unless a dir fd is given, and link(2) does not follow the /proc link (EXDEV).
    proc = os.open("/proc/self/fd", os.O_RDONLY)
    try:
        os.link(str(fd), temp, src_dir_fd=proc, follow_symlinks=True)
    finally:
        os.close(proc)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = _write_chunk(fd, view[:_CHUNK])
        view = view[written:]


def _umask() -> int:
    """The process's umask, read without changing it (``os.umask`` sets it for every thread)."""
    try:
        for line in Path("/proc/self/status").read_text(encoding="ascii").splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0)  # pragma: no cover - a kernel without Umask in /proc/self/status (before 4.7)
    os.umask(mask)
    return mask


def _fsync_directory(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
