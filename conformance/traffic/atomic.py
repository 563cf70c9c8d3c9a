"""Atomic file replacement: a writer killed at any moment leaves the old file intact.

On Linux the new content goes into an anonymous ``O_TMPFILE`` inode in the target's directory, is
fsynced, then linked under a temporary name and ``os.replace``d over the target, and the directory
is fsynced. A process killed while writing leaves nothing behind (the inode has no name); one killed
between the link and the rename leaves a complete ``.NAME.*.tmp`` file, removed by the next write
to the same target. Elsewhere a named temporary file is used, with the same clean-up.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path

__all__ = ["stale_temporaries", "write_atomic"]

_CHUNK = 1 << 16


def _write_chunk(fd: int, data: memoryview) -> int:
    """One ``os.write`` (a seam: the kill test slows it down in a child process)."""
    return os.write(fd, data)


def stale_temporaries(path: Path) -> list[Path]:
    """Temporary files a killed writer of ``path`` may have left (complete, never partial)."""
    return sorted(path.parent.glob(f".{path.name}.*.tmp"))


def write_atomic(path: str | os.PathLike[str], data: bytes, *, check: Callable[[Path], None] | None = None) -> None:
    """Replace ``path`` with ``data`` atomically (temp file in the same directory, fsync, rename).

    ``check``, when given, is called with a named temporary copy of the new content before it
    replaces ``path``; if it raises, ``path`` is left as it was and the exception propagates.
    """
    target = Path(path)
    directory = target.parent
    directory.mkdir(parents=True, exist_ok=True)
    for stale in stale_temporaries(target):
        with contextlib.suppress(OSError):
            stale.unlink()
    temp = directory / f".{target.name}.{os.getpid()}.tmp"
    fd = _open_anonymous(directory)
    try:
        if fd is None:
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o644)
        else:
            os.fchmod(fd, 0o644 & ~_umask())
        _write_all(fd, data)
        os.fsync(fd)
        if not temp.exists():
            _link_anonymous(fd, temp)
    except BaseException:
        if fd is not None:
            os.close(fd)
        with contextlib.suppress(OSError):
            temp.unlink()
        raise
    os.close(fd)
    try:
        if check is not None:
            check(temp)
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise
    _fsync_directory(directory)


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
    mask = os.umask(0)
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
