"""The one exception hierarchy of ``conformance``.

Every error the package raises on purpose is a ``ConformanceError``; each refines the builtin
it is closest to, so callers that already catch ``ValueError`` or ``LookupError`` keep working::

    ConformanceError(Exception)
    ├── UsageError(ConformanceError, ValueError)            bad command-line or API usage
    │   └── AdapterContractError(UsageError)                an adapter value that breaks the contract
    ├── WireFormatError(ConformanceError, ValueError)       bytes/bodies that are not the wire format
    │   └── UnsupportedContentError(WireFormatError)        content this wire format cannot carry
    ├── CassetteError(ConformanceError)                     a cassette that cannot be read
    │   ├── CassetteNotFoundError(CassetteError, FileNotFoundError)
    │   ├── CassetteFormatError(CassetteError, ValueError)  names the file, the interaction and what to do
    │   │   └── InputLimitError(CassetteFormatError)        past a bound of conformance.limits (names it)
    │   ├── CassetteWriteError(CassetteError)               a recorded cassette that could not be written/verified
    │   └── ReplayMissError(CassetteError, LookupError)     no recorded interaction matches a request
    ├── ScenarioError(ConformanceError, ValueError)         scenario files that are not valid; carries the problems
    ├── AdapterNotFoundError(ConformanceError, LookupError) unknown adapter name (lists the valid ones)
    ├── TransportError(ConformanceError)                    an HTTP exchange that failed below the wire format
    │   ├── TransportConnectError(TransportError, ConnectionError)  nothing listens / refused / unreachable
    │   ├── TransportTimeoutError(TransportError, TimeoutError)     connect, read, write or pool timeout
    │   ├── StreamInterruptedError(TransportError)          the peer closed or broke the body mid-way
    │   └── NetworkBlockedError(TransportError)             a non-loopback connect while tests run
    ├── ProviderError(ConformanceError)                     an error the provider answered with:
    │                                                       kind, status, message, retry_after
    └── McpServerError(ConformanceError)                    an MCP server that failed to start, died or broke
        │                                                   the protocol; carries the tail of its stderr
        ├── McpTimeoutError(McpServerError, TimeoutError)   no answer within the per-call timeout
        └── McpCommandRefusedError(McpServerError, PermissionError)  a scenario outside the bundled set
            │                                               whose command was not allowed to start
            └── McpRemoteRefusedError(McpCommandRefusedError)  an MCP server URL that is not loopback,
                                                            without --allow-remote-mcp
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from conformance.model import ErrorInfo, ErrorKind

if TYPE_CHECKING:
    from conformance.scenarios.problems import ScenarioProblem

__all__ = [
    "AdapterContractError",
    "AdapterNotFoundError",
    "CassetteError",
    "CassetteFormatError",
    "CassetteNotFoundError",
    "CassetteWriteError",
    "ConformanceError",
    "InputLimitError",
    "McpCommandRefusedError",
    "McpRemoteRefusedError",
    "McpServerError",
    "McpTimeoutError",
    "NetworkBlockedError",
    "ProviderError",
    "ReplayMissError",
    "ScenarioError",
    "StreamInterruptedError",
    "TransportConnectError",
    "TransportError",
    "TransportTimeoutError",
    "UnsupportedContentError",
    "UsageError",
    "WireFormatError",
]


class ConformanceError(Exception):
    """Base of every error this package raises on purpose."""


class UsageError(ConformanceError, ValueError):
    """The caller asked for something that does not exist or does not fit."""


class AdapterContractError(UsageError):
    """An adapter that does not keep the contract of ``docs/adapters.md``: an unknown wire format,
    prompt format or capability, a missing function, or a known gap without a reason. The message
    names the field, what it holds and the valid values."""


class WireFormatError(ConformanceError, ValueError):
    """Input that is not valid for the wire format (a malformed body, event or request)."""


class UnsupportedContentError(WireFormatError):
    """Content that the target wire format cannot carry; it is never dropped silently."""


class CassetteError(ConformanceError):
    """A cassette file could not be read."""


class CassetteNotFoundError(CassetteError, FileNotFoundError):
    """The cassette file does not exist."""


class CassetteFormatError(CassetteError, ValueError):
    """A cassette (or one interaction in it) is malformed.

    The message names the file, the interaction index when known, what is wrong and what to do.
    """

    def __init__(self, path: str, problem: str, *, interaction: int | None = None, hint: str = "") -> None:
        self.path = path
        self.problem = problem
        self.interaction = interaction
        self.hint = hint
        where = path if interaction is None else f"{path}: interaction {interaction}"
        super().__init__(f"{where}: {problem}" + (f" ({hint})" if hint else ""))


class InputLimitError(CassetteFormatError):
    """An input file past one of the bounds of ``conformance.limits`` (alias expansion, nodes,
    nesting, decompressed size): reading stopped there. ``limit`` is the limit's name and ``value``
    its value; the message names the file, the place, the limit and how to raise it."""

    def __init__(
        self,
        path: str,
        problem: str,
        *,
        limit: str,
        value: int,
        interaction: int | None = None,
        line: int | None = None,
        column: int | None = None,
    ) -> None:
        self.limit = limit
        self.value = value
        self.line = line
        self.column = column
        self.what = f"{problem}: past the limit {limit}={value}"
        where = f" at line {line}, column {column}" if line is not None else ""
        super().__init__(
            path,
            f"{problem}{where}: past the limit {limit}={value}",
            interaction=interaction,
            hint=self.how_to_raise(limit),
        )

    @staticmethod
    def how_to_raise(limit: str) -> str:
        """The sentence every limit error ends with (``conformance.limits.how_to_raise``)."""
        return (
            f"if the file is trusted, raise it with --limit {limit}=N or CONFORMANCE_LIMITS={limit}=N (docs/limits.md)"
        )


class CassetteWriteError(CassetteError):
    """A cassette could not be written, or the written file did not read back as what was recorded.

    The previous file at the path is left as it was."""


class ReplayMissError(CassetteError, LookupError):
    """A request that no (unplayed) interaction of the cassette matches.

    The message names the cassette, the request (method, path, stream mode) and the command that
    records it."""

    def __init__(self, cassette: str, request: str, *, command: str = "") -> None:
        self.cassette = cassette
        self.request = request
        self.command = command
        hint = f"; record it with `{command}`" if command else "; re-record the cassette with `conformance record`"
        super().__init__(f"{cassette}: no recorded interaction matches {request}{hint}")


class ScenarioError(ConformanceError, ValueError):
    """One or more scenario files are not valid.

    ``problems`` are ``conformance.scenarios.loader.ScenarioProblem`` values (file, line, column, JSON
    pointer, what is wrong, what was expected and a hint); the message lists them all."""

    def __init__(self, problems: Sequence[ScenarioProblem]) -> None:
        self.problems: tuple[ScenarioProblem, ...] = tuple(problems)
        lines = [str(p) for p in self.problems] or ["invalid scenario"]
        super().__init__("\n".join(lines))


class AdapterNotFoundError(ConformanceError, LookupError):
    """No adapter has this name; the message lists the valid names."""

    def __init__(self, name: str, valid: Iterable[str]) -> None:
        self.name = name
        self.valid = sorted(valid)
        super().__init__(f"unknown adapter {name!r}; valid adapters: {', '.join(self.valid)}")


class TransportError(ConformanceError):
    """An HTTP exchange failed below the wire format (no HTTP response, or a broken body).

    ``url`` is the request URL (secrets never included)."""

    def __init__(self, message: str, *, url: str = "") -> None:
        self.url = url
        super().__init__(f"{message} ({url})" if url else message)


class TransportConnectError(TransportError, ConnectionError):
    """The connection could not be made (nothing listens, refused, unreachable, DNS failure)."""


class TransportTimeoutError(TransportError, TimeoutError):
    """A connect, read, write or pool timeout."""


class StreamInterruptedError(TransportError):
    """The peer closed the connection or sent a broken body before the response was complete."""


class NetworkBlockedError(TransportError):
    """A socket connect to a non-loopback address while the test network guard is on.

    Not an ``OSError``, so HTTP clients do not mistake it for a network failure and retry."""


class ProviderError(ConformanceError):
    """An error response from a provider, typed. ``error_from_wire`` returns one; it is raised
    only where a caller asked for a successful response."""

    def __init__(self, info: ErrorInfo) -> None:
        self.info = info
        status = f"HTTP {info.status} " if info.status is not None else ""
        super().__init__(f"{status}{info.kind}: {info.message}")

    @property
    def kind(self) -> ErrorKind:
        return self.info.kind

    @property
    def status(self) -> int | None:
        return self.info.status

    @property
    def message(self) -> str:
        return self.info.message

    @property
    def retry_after(self) -> float | None:
        return self.info.retry_after


class McpServerError(ConformanceError):
    """An MCP server could not be started, died, or answered outside the protocol.

    ``command`` is the server's command line; ``stderr_tail`` the last lines it wrote to stderr
    (often the reason), also shown in the message."""

    def __init__(self, message: str, *, command: str = "", stderr_tail: str = "") -> None:
        self.command = command
        self.stderr_tail = stderr_tail
        text = f"{message} (server: {command})" if command else message
        if stderr_tail:
            text += "\n--- last lines of the server's stderr ---\n" + stderr_tail
        super().__init__(text)


class McpTimeoutError(McpServerError, TimeoutError):
    """The MCP server did not answer a request within the timeout."""


class McpCommandRefusedError(McpServerError, PermissionError):
    """A scenario outside the bundled set names an MCP server command, and commands were not allowed
    (``conformance.mcp_bridge.trust``): nothing was started. The message names the scenario file, the
    command and how to allow it."""


class McpRemoteRefusedError(McpCommandRefusedError):
    """A scenario's MCP server ``url`` is not a loopback address and remote MCP servers were not
    allowed (``conformance.mcp_bridge.trust``): nothing was contacted. The message names the
    scenario file, the URL and how to allow it (``--allow-remote-mcp``)."""
