"""Tests for ``conformance.errors``: one hierarchy, drawn in its docstring (style.md §7), whose
classes refine the builtins they are closest to, and messages that say what to do (style.md §8)."""

from __future__ import annotations

import re

import pytest

from conformance import errors
from conformance.adapters import BUILTIN, get_adapter
from conformance.errors import (
    AdapterNotFoundError,
    CassetteError,
    CassetteFormatError,
    CassetteNotFoundError,
    ConformanceError,
    ProviderError,
    UnsupportedContentError,
    UsageError,
    WireFormatError,
)
from conformance.model import ErrorInfo

_DRAWN = re.compile(r"(?P<name>[A-Z]\w*)\((?P<bases>[A-Z][\w, ]*)\)")


def docstring_tree() -> list[tuple[int, str, list[str]]]:
    """(column, class name, bases) for each class drawn in the module docstring's tree."""
    doc = errors.__doc__
    assert doc
    rows: list[tuple[int, str, list[str]]] = []
    for line in doc.splitlines():
        m = _DRAWN.search(line)
        if m is None or line[: m.start()].strip(" │├└─"):
            continue  # prose, not a line of the tree
        rows.append((m.start(), m["name"], [b.strip() for b in m["bases"].split(",")]))
    return rows


def test_docstring_draws_every_class() -> None:
    drawn = {name for _, name, _ in docstring_tree()}
    assert drawn == set(errors.__all__)


def test_docstring_bases_are_the_real_bases() -> None:
    for _, name, bases in docstring_tree():
        cls = getattr(errors, name)
        assert [b.__name__ for b in cls.__bases__] == bases, name


def test_docstring_nesting_is_the_first_base() -> None:
    rows = docstring_tree()
    root_column, root, _ = rows[0]
    assert root == "ConformanceError"
    for i, (column, name, bases) in enumerate(rows[1:], start=1):
        assert column > root_column, name
        parent = next(n for c, n, _ in reversed(rows[:i]) if c < column)
        assert bases[0] == parent, (name, bases)


@pytest.mark.parametrize(
    ("cls", "builtin"),
    [
        (UsageError, ValueError),
        (WireFormatError, ValueError),
        (UnsupportedContentError, ValueError),
        (CassetteNotFoundError, FileNotFoundError),
        (CassetteFormatError, ValueError),
        (AdapterNotFoundError, LookupError),
    ],
)
def test_errors_refine_the_builtin(cls: type[Exception], builtin: type[Exception]) -> None:
    assert issubclass(cls, builtin)
    assert issubclass(cls, ConformanceError)


def test_every_public_error_is_a_conformance_error() -> None:
    for name in errors.__all__:
        assert issubclass(getattr(errors, name), ConformanceError), name


def test_unsupported_content_is_a_wire_format_error() -> None:
    assert issubclass(UnsupportedContentError, WireFormatError)
    assert issubclass(CassetteNotFoundError, CassetteError)
    assert issubclass(CassetteFormatError, CassetteError)


def test_cassette_not_found_is_caught_as_file_not_found() -> None:
    with pytest.raises(FileNotFoundError) as info:
        raise CassetteNotFoundError(2, "No such cassette", "cassettes/openai_chat/basic/x.yaml")
    assert info.value.filename == "cassettes/openai_chat/basic/x.yaml"
    assert "cassettes/openai_chat/basic/x.yaml" in str(info.value)


def test_cassette_format_error_names_file_interaction_and_hint() -> None:
    err = CassetteFormatError(
        "cassettes/a.yaml", "response body is not JSON", interaction=3, hint="re-record it with conformance record"
    )
    msg = str(err)
    assert "cassettes/a.yaml" in msg
    assert "interaction 3" in msg
    assert "response body is not JSON" in msg
    assert "conformance record" in msg
    assert (err.path, err.interaction, err.problem) == ("cassettes/a.yaml", 3, "response body is not JSON")
    assert isinstance(err, ValueError)


def test_cassette_format_error_without_interaction() -> None:
    msg = str(CassetteFormatError("c.yaml", "no interactions key"))
    assert msg == "c.yaml: no interactions key"


def test_adapter_not_found_lists_the_valid_names_sorted() -> None:
    err = AdapterNotFoundError("opnai_chat", ["openai_chat", "anthropic"])
    assert err.valid == ["anthropic", "openai_chat"]
    assert "'opnai_chat'" in str(err)
    assert "anthropic, openai_chat" in str(err)
    with pytest.raises(LookupError):
        raise err


def test_registry_raises_adapter_not_found_with_every_builtin_name() -> None:
    with pytest.raises(AdapterNotFoundError) as info:
        get_adapter("no-such-adapter")
    for name in BUILTIN:
        assert name in str(info.value)


def test_provider_error_carries_its_info() -> None:
    info = ErrorInfo(kind="rate_limit", message="slow down", status=429, retry_after=2.5, code="rate_limit_error")
    err = ProviderError(info)
    assert (err.kind, err.status, err.message, err.retry_after) == ("rate_limit", 429, "slow down", 2.5)
    assert str(err) == "HTTP 429 rate_limit: slow down"
    assert err.info is info


def test_provider_error_inside_a_stream_has_no_status() -> None:
    err = ProviderError(ErrorInfo(kind="overloaded", message="Overloaded"))
    assert err.status is None
    assert str(err) == "overloaded: Overloaded"
