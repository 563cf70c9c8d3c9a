"""The fuzz tier's properties: hypothesis-made cassettes and scenarios through the same entry points
as the seeded corpus (``tests.fuzz._drive.check_input``: the loaders, ``inspect``, the replay of the
pair with every check family, ``validate`` and ``list``), in this process under a per-example alarm.

Bounded and reproducible: a fixed ``max_examples``, derandomized and without an example database,
so CI runs the same examples every time. An example is bounded by its CPU time (``ITIMER_PROF``),
not by the wall clock nor hypothesis's ``deadline``, so a busy machine slows it down without
making it a hang.
"""

from __future__ import annotations

import json
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz._drive import Finding, Hang, check_input
from tests.fuzz._mutations import CASSETTES, ROOT, SCENARIOS, FuzzInput

pytestmark = pytest.mark.fuzz

EXAMPLE_SECONDS = 10.0
"""CPU seconds: an example using more is a hang."""

FUZZ = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# replayable pairs of every traffic format (no MCP server to start), streamed and not
_CASSETTE_FILES = sorted(
    p.relative_to(CASSETTES).as_posix()
    for p in CASSETTES.glob("*/*/*.yaml")
    if p.parent.name in ("basic", "streaming", "errors", "arguments")
)[::7]
_SCENARIO_FILES = sorted(p.relative_to(SCENARIOS).as_posix() for p in SCENARIOS.glob("*/*.yaml"))[::3]

_SURROGATES = st.text(st.characters(categories=["Cs"]), min_size=1, max_size=3)
_TEXT = st.one_of(
    st.text(max_size=40),
    _SURROGATES,
    st.builds(lambda a, s, b: a + s + b, st.text(max_size=5), _SURROGATES, st.text(max_size=5)),
    st.sampled_from(["", "data: {\n\n", "\r\n", "\x00", "[DONE]", "{}", '{"a":', "http://[::1", "\ufeff", "$ref"]),
)
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(2**80), max_value=2**80),
    st.floats(allow_nan=True, allow_infinity=True),
    _TEXT,
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_TEXT, inner, max_size=4)),
    max_leaves=12,
)


def _nodes(data: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(data, dict):
        for key, value in data.items():
            yield from _nodes(value, (*path, key))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            yield from _nodes(value, (*path, i))


def _replace(data: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    node = data
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = value
    return data


def _on_alarm(signum: int, frame: FrameType | None) -> None:
    raise Hang


def _findings(kind: str, relpath: str, data: bytes, how: str) -> list[Finding]:
    inp = FuzzInput(
        kind=kind,
        index=0,
        seed="hypothesis",
        source=((CASSETTES if kind == "cassette" else SCENARIOS) / relpath).relative_to(ROOT).as_posix(),
        relpath=relpath,
        mutations=(how,),
        data=data,
        name=f"hypothesis-{kind}",
    )
    old = signal.signal(signal.SIGPROF, _on_alarm)
    signal.setitimer(signal.ITIMER_PROF, EXAMPLE_SECONDS)
    try:
        with tempfile.TemporaryDirectory(prefix="conformance-fuzz-") as tmp:
            _, findings = check_input(inp, Path(tmp) / "in", _scenarios(), full_run=False)
    except Hang:
        detail = f"over {EXAMPLE_SECONDS:g} s of CPU time"
        return [Finding("hang", "input", inp.key, inp.seed, inp.source, how, detail)]
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, old)
    return findings


_LOADED: dict[str, Any] = {}


def _scenarios() -> dict[str, Any]:
    if not _LOADED:
        from conformance.scenarios.loader import load_scenarios

        _LOADED.update({s.id: s for s in load_scenarios([SCENARIOS]).scenarios})
    return _LOADED


def _assert_none(findings: list[Finding], data: bytes) -> None:
    assert not findings, "\n".join(f.describe() for f in findings) + f"\ninput: {data[:2000]!r}"


def _dump(data: Any, as_json: bool) -> bytes:
    if as_json:
        return json.dumps(data, allow_nan=True).encode()
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=False).encode()


@FUZZ
@given(st.sampled_from(_CASSETTE_FILES), st.data(), _VALUES, st.booleans())
def test_a_cassette_with_any_value_anywhere_crashes_nothing(
    relpath: str, data: st.DataObject, value: Any, as_json: bool
) -> None:
    document = json.loads((CASSETTES / relpath).read_text("utf-8"))
    paths = list(_nodes(document))
    path = data.draw(st.sampled_from(paths[1:]), label="path")
    text = _dump(_replace(document, path, value), as_json)
    _assert_none(_findings("cassette", relpath, text, f"value at {path!r}"), text)


@FUZZ
@given(st.sampled_from(_CASSETTE_FILES), st.lists(st.one_of(st.binary(max_size=60), _TEXT), min_size=1, max_size=8))
def test_a_streamed_body_of_any_chunks_crashes_nothing(relpath: str, chunks: list[bytes | str]) -> None:
    document = json.loads((CASSETTES / relpath).read_text("utf-8"))
    for interaction in document["interactions"]:
        response = interaction["response"]
        response.pop("parsed_body", None)
        response["body"] = {"chunks": chunks}
    text = yaml.safe_dump(document, sort_keys=False, allow_unicode=False).encode()
    _assert_none(_findings("cassette", relpath, text, "chunks"), text)


@FUZZ
@given(st.sampled_from(_CASSETTE_FILES), st.data())
def test_a_cut_or_patched_cassette_file_crashes_nothing(relpath: str, data: st.DataObject) -> None:
    raw = (CASSETTES / relpath).read_bytes()
    at = data.draw(st.integers(0, len(raw)), label="at")
    patch = data.draw(st.binary(max_size=12), label="patch")
    text = raw[:at] + patch + raw[at + data.draw(st.integers(0, 40), label="cut") :]
    _assert_none(_findings("cassette", relpath, text, "patch"), text)


@FUZZ
@given(st.sampled_from(_SCENARIO_FILES), st.data(), _VALUES)
def test_a_scenario_with_any_value_anywhere_crashes_nothing(relpath: str, data: st.DataObject, value: Any) -> None:
    document = yaml.safe_load((SCENARIOS / relpath).read_text("utf-8"))
    paths = list(_nodes(document))
    path = data.draw(st.sampled_from(paths[1:]), label="path")
    text = _dump(_replace(document, path, value), as_json=False)
    _assert_none(_findings("scenario", relpath, text, f"value at {path!r}"), text)


@FUZZ
@given(st.sampled_from(_SCENARIO_FILES), st.data())
def test_a_cut_or_patched_scenario_file_crashes_nothing(relpath: str, data: st.DataObject) -> None:
    raw = (SCENARIOS / relpath).read_bytes()
    at = data.draw(st.integers(0, len(raw)), label="at")
    patch = data.draw(st.one_of(st.binary(max_size=12), _TEXT.map(lambda t: t.encode("utf-8", "surrogatepass"))))
    text = raw[:at] + patch + raw[at + data.draw(st.integers(0, 40), label="cut") :]
    _assert_none(_findings("scenario", relpath, text, "patch"), text)
