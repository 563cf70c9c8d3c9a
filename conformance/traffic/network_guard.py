"""The network guard: no socket beyond loopback while the test suite runs or a client is certified.

``network_guard()`` is a context manager that patches ``socket.socket.connect``/``connect_ex`` and
``socket.getaddrinfo``/``socket.create_connection``, and turns on an audit hook
(``sys.addaudithook``, installed once per process) that sees every ``socket.connect``,
``socket.sendto``, ``socket.sendmsg`` and name lookup, including those made through ``_socket``
directly and UDP datagrams: a connect or a datagram to an address outside loopback (``127.0.0.0/8``,
``::1``) or a name lookup for anything but ``localhost`` raises ``NetworkBlockedError`` naming the
address. Unix and netlink sockets are allowed. ``NetworkBlockedError`` is not an ``OSError``, so
httpx and SDKs do not turn it into a retryable connection error: the test fails loudly at the line
that tried. The repo-level ``conftest.py`` turns it on for every test.

Every refusal is kept (``refusal_mark``/``refused_since``: ``conformance certify`` reports each one
as a finding of the case in which it happened). Python child processes are guarded too where the
child's environment says so (``LOG_ENV``, set by ``guard_children`` or by ``RemoteClient`` for a
``--python`` driver): a ``sitecustomize`` on their ``PYTHONPATH`` (``write_site``) installs the same
hook at start-up, and each refusal is appended to the log file ``LOG_ENV`` names (``watch_log``
reads it back here). Not covered: a child that is not Python (``curl``), one started with ``-S``/``-I``
or with another ``PYTHONPATH``, and code that opens sockets from C without Python's ``socket``
module.

``connect_log()`` records every connect attempt (allowed or not), for tests proving that replay
opens no socket at all.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import socket
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.errors import NetworkBlockedError

__all__ = [
    "LOG_ENV",
    "LOG_LIMIT",
    "RefusalMark",
    "connect_log",
    "guard_children",
    "install_from_environment",
    "is_loopback",
    "network_guard",
    "prepare_guard_folder",
    "refusal_mark",
    "refused_since",
    "unwatch_log",
    "watch_log",
    "write_site",
]

LOG_ENV = "CONFORMANCE_NETWORK_LOG"
"""Set in a child's environment: the file its refusals are appended to (one line each), and the sign
that the ``sitecustomize`` ``write_site`` writes guards that process."""

LOG_LIMIT = 1 << 20
"""Bytes a refusals log may grow to (then further refusals are still refused, but not logged)."""

_KEPT = 10_000
"""Refusals kept in this process's list (later ones are counted, not kept)."""

_LOCAL_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})
_LOCAL_FAMILIES = frozenset(
    f for f in (getattr(socket, "AF_UNIX", None), getattr(socket, "AF_NETLINK", None)) if f is not None
)
_UNSPECIFIED = (None, "", b"", "0.0.0.0", "::")
"""Addresses that resolve for ``bind()``, not to reach another host."""

_EVENTS = frozenset(
    {
        "socket.connect",
        "socket.sendto",
        "socket.sendmsg",
        "socket.getaddrinfo",
        "socket.gethostbyname",
        "socket.gethostbyname_ex",
        "socket.gethostbyaddr",
    }
)

_state: dict[str, Any] = {"depth": 0, "hooked": False, "log": None, "count": 0}
"""This process's guard: open ``network_guard`` blocks, whether the audit hook is installed, the log
file to append to (a guarded child), and the number of refusals so far."""
_refused: list[str] = []
_watched: dict[Path, None] = {}


def is_loopback(host: Any) -> bool:
    """Whether ``host`` (an IP literal or a name) is a loopback address; ``localhost`` counts."""
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    if not isinstance(host, str):
        return False
    name = host.strip("[]").split("%", 1)[0].lower()
    if name in _LOCAL_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _refuse(address: Any, how: str) -> None:
    """Keep the refusal (and log it, in a guarded child), then raise ``NetworkBlockedError``."""
    shown = _shown(address)
    _state["count"] += 1
    if len(_refused) < _KEPT:
        _refused.append(f"{shown} ({how})")
    log = _state["log"]
    if log:
        with contextlib.suppress(OSError):
            fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                if os.fstat(fd).st_size < LOG_LIMIT:
                    line = f"{shown} ({how}, pid {os.getpid()})".replace("\n", " ")[:500] + "\n"
                    os.write(fd, line.encode("utf-8", "replace"))
            finally:
                os.close(fd)
    raise NetworkBlockedError(
        f"network access to {shown} ({how}) is blocked: only loopback (127.0.0.1, ::1) is allowed while tests"
        " run or a client is certified; replay from a cassette or point the client at the loopback server"
    )


def _shown(address: Any) -> str:
    if isinstance(address, tuple) and len(address) >= 2 and isinstance(address[1], int):
        host = address[0].decode("ascii", "replace") if isinstance(address[0], bytes) else str(address[0])
        return f"[{host}]:{address[1]}" if ":" in host else f"{host}:{address[1]}"
    return (address if isinstance(address, str) else repr(address))[:200]


def _check_address(family: int, address: Any, how: str = "connect") -> None:
    if family in _LOCAL_FAMILIES:
        return
    host = address[0] if isinstance(address, tuple) and address else address
    if not is_loopback(host):
        _refuse(address, how)


def _check_name(host: Any, how: str) -> None:
    """A name lookup: of ``localhost``, an IP literal of loopback, or this machine's own name (read
    from ``/etc/hosts``: ``socket.getfqdn()`` looks it up)."""
    if host not in _UNSPECIFIED and not is_loopback(host) and host != _own_name():
        _refuse(host.decode("ascii", "replace") if isinstance(host, bytes) else host, how)


def _own_name() -> str:
    if "name" not in _state:
        _state["name"] = socket.gethostname()
    return str(_state["name"])


def _audit(event: str, args: tuple[Any, ...]) -> None:
    """The audit hook: every socket connect, datagram and name lookup of this process, whatever
    module made it (``_socket`` included)."""
    if event not in _EVENTS or not (_state["depth"] or _state["log"]):
        return
    if event in ("socket.connect", "socket.sendto", "socket.sendmsg"):
        sock, address = args[0], args[1]
        if address is None:  # sendmsg on a connected socket: its connect was checked
            return
        _check_address(getattr(sock, "family", -1), address, event.removeprefix("socket."))
    else:
        _check_name(args[0], "name lookup")


def _hook() -> None:
    if not _state["hooked"]:
        sys.addaudithook(_audit)
        _state["hooked"] = True


def install_from_environment() -> bool:
    """Guard this process for good if its environment names a refusals log (``LOG_ENV``): what the
    ``sitecustomize`` of ``write_site`` calls at a child's start. Whether it did."""
    log = os.environ.get(LOG_ENV)
    if not log:
        return False
    _state["log"] = log
    _hook()
    return True


@dataclass(frozen=True)
class RefusalMark:
    """Where the refusals stood (``refusal_mark``): this process's count and each watched log's size."""

    count: int
    logs: tuple[tuple[Path, int], ...]


def watch_log(path: Path) -> None:
    """Read refusals from ``path`` too (a guarded child's log) in ``refused_since``."""
    _watched[path] = None


def unwatch_log(path: Path) -> None:
    """Stop reading ``path`` (``watch_log``)."""
    _watched.pop(path, None)


def refusal_mark() -> RefusalMark:
    """Where the refusals stand now: ``refused_since`` gives those made after it."""
    return RefusalMark(_state["count"], tuple((p, _size(p)) for p in _watched))


def refused_since(mark: RefusalMark) -> list[str]:
    """The refusals made since ``mark``, each naming the address and how (at most ``_KEPT`` of this
    process's, and what each watched log holds, which ``LOG_LIMIT`` bounds)."""
    found = _refused[mark.count : _KEPT]
    if _state["count"] > max(mark.count, _KEPT):
        found.append(f"and {_state['count'] - max(mark.count, _KEPT)} more")
    sizes = dict(mark.logs)
    for path in list(_watched):
        start = sizes.get(path, 0)
        with contextlib.suppress(OSError), path.open("rb") as log:
            log.seek(start)
            text = log.read(LOG_LIMIT).decode("utf-8", "replace")
            found += [line for line in text.splitlines() if line.strip()]
    return found


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


_SITE = '''"""Written by conformance.traffic.network_guard: guards this Python process's network (only loopback)."""
import os

if os.environ.get("CONFORMANCE_NETWORK_LOG"):
    try:
        from conformance.traffic.network_guard import install_from_environment

        install_from_environment()
    except Exception:  # the package is not importable here: nothing is guarded
        pass
'''


def write_site(folder: Path) -> None:
    """Write the ``sitecustomize.py`` that guards a Python child process into ``folder`` (which must
    be on the child's ``PYTHONPATH``, beside an importable ``conformance``)."""
    (folder / "sitecustomize.py").write_text(_SITE, encoding="utf-8")


def prepare_guard_folder(folder: Path, *, package: Path | None = None) -> Path:
    """Make ``folder`` the one a guarded Python child gets on its ``PYTHONPATH``: a link to this
    package (``package``, default the one imported here; once) and the ``sitecustomize``
    (``write_site``), with its refusals log, watched here (``watch_log``). Returns the log's path
    (for the child's ``LOG_ENV``)."""
    if not (folder / "conformance").is_symlink():
        target = package or Path(__file__).resolve().parents[1]
        (folder / "conformance").symlink_to(target, target_is_directory=True)
    write_site(folder)
    log = folder / "refused.log"
    log.touch()
    watch_log(log)
    return log


@contextmanager
def guard_children(folder: Path | None = None) -> Iterator[Path]:
    """Guard the Python child processes started inside the block: ``PYTHONPATH`` gets a folder holding
    the ``sitecustomize`` and this package, ``LOG_ENV`` a log file, watched here (``refused_since``).
    Yields the log's path; the environment is restored after. The folder is a temporary one removed
    after the block, or ``folder``, which the caller owns (a process that may die inside the block
    leaves nothing behind when its parent owns the folder)."""
    saved = {name: os.environ.get(name) for name in ("PYTHONPATH", LOG_ENV)}
    with contextlib.ExitStack() as stack:
        if folder is None:
            folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="conformance-guard-")))
        log = prepare_guard_folder(folder)
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(folder), saved["PYTHONPATH"]) if p)
        os.environ[LOG_ENV] = str(log)
        try:
            yield log
        finally:
            unwatch_log(log)
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value


@contextmanager
def network_guard() -> Iterator[None]:
    """Block every non-loopback connect, datagram and name lookup inside the block (re-entrant)."""
    original_connect = socket.socket.connect
    original_connect_ex = socket.socket.connect_ex
    original_getaddrinfo = socket.getaddrinfo
    original_create_connection = socket.create_connection

    def connect(self: socket.socket, address: Any) -> None:
        _check_address(self.family, address)
        original_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> int:
        _check_address(self.family, address)
        return original_connect_ex(self, address)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        _check_name(host, "name lookup")
        return original_getaddrinfo(host, *args, **kwargs)

    def create_connection(address: Any, *args: Any, **kwargs: Any) -> socket.socket:
        _check_address(socket.AF_INET, address)
        return original_create_connection(address, *args, **kwargs)

    patches: list[tuple[Any, str, Callable[..., Any]]] = [
        (socket.socket, "connect", connect),
        (socket.socket, "connect_ex", connect_ex),
        (socket, "getaddrinfo", getaddrinfo),
        (socket, "create_connection", create_connection),
    ]
    saved = [(owner, name, getattr(owner, name)) for owner, name, _ in patches]
    for owner, name, replacement in patches:
        setattr(owner, name, replacement)
    _hook()
    _state["depth"] += 1
    try:
        yield
    finally:
        _state["depth"] -= 1
        for owner, name, value in reversed(saved):
            setattr(owner, name, value)


@contextmanager
def connect_log() -> Iterator[list[Any]]:
    """Record the address of every ``socket.connect``/``connect_ex`` attempt inside the block."""
    seen: list[Any] = []
    original_connect = socket.socket.connect
    original_connect_ex = socket.socket.connect_ex

    def connect(self: socket.socket, address: Any) -> None:
        seen.append(address)
        original_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> int:
        seen.append(address)
        return original_connect_ex(self, address)

    setattr(socket.socket, "connect", connect)  # noqa: B010 - mypy refuses a method assignment
    setattr(socket.socket, "connect_ex", connect_ex)  # noqa: B010
    try:
        yield seen
    finally:
        setattr(socket.socket, "connect", original_connect)  # noqa: B010
        setattr(socket.socket, "connect_ex", original_connect_ex)  # noqa: B010
