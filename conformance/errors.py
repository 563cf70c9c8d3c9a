"""The one exception hierarchy of ``conformance``.

Every error the package raises on purpose is a ``ConformanceError``; each refines the builtin
it is closest to, so callers that already catch ``ValueError`` or ``LookupError`` keep working::

    ConformanceError(Exception)
    ├── UsageError(ConformanceError, ValueError)            bad command-line or API usage
    ├── WireFormatError(ConformanceError, ValueError)       bytes/bodies that are not the wire format
    │   └── UnsupportedContentError(WireFormatError)        content this wire format cannot carry
    ├── CassetteError(ConformanceError)                     a cassette that cannot be read
    │   ├── CassetteNotFoundError(CassetteError, FileNotFoundError)
    │   └── CassetteFormatError(CassetteError, ValueError)  names the file, the interaction and what to do
    ├── AdapterNotFoundError(ConformanceError, LookupError) unknown adapter name (lists the valid ones)
    └── ProviderError(ConformanceError)                     an error the provider answered with:
                                                            kind, status, message, retry_after
"""

from __future__ import annotations

from collections.abc import Iterable

from conformance.model import ErrorInfo, ErrorKind

__all__ = [
    "AdapterNotFoundError",
    "CassetteError",
    "CassetteFormatError",
    "CassetteNotFoundError",
    "ConformanceError",
    "ProviderError",
    "UnsupportedContentError",
    "UsageError",
    "WireFormatError",
]


class ConformanceError(Exception):
    """Base of every error this package raises on purpose."""


class UsageError(ConformanceError, ValueError):
    """The caller asked for something that does not exist or does not fit."""


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


class AdapterNotFoundError(ConformanceError, LookupError):
    """No adapter has this name; the message lists the valid names."""

    def __init__(self, name: str, valid: Iterable[str]) -> None:
        self.name = name
        self.valid = sorted(valid)
        super().__init__(f"unknown adapter {name!r}; valid adapters: {', '.join(self.valid)}")


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
