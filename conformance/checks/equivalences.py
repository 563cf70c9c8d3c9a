"""The one table of what the suite accepts (``docs/equivalences.md``): read, validated and applied.

``docs/equivalences.md`` holds five Markdown tables, each row with the provider doc, SDK source line
or recording it rests on:

- **Equivalences**: a value at a read-back path that means the same to the provider as leaving the
  field out (``"stream": false``, Gemini's ``responseModalities: ["TEXT"]``, the documented placeholder
  thought signature), or ``any`` where the field is not compared (a field the wire cannot carry, such
  as ``is_error`` on OpenAI Chat, where the failure reaches the model as the result's text).
  ``without_equivalents`` removes them from a read-back request's plain form, on both sides of a
  comparison, before anything is compared.
- **Parameters sent unasked**: what a parameter the caller did not ask for changes (or ``nothing``:
  a note). ``classify`` makes such a finding ``unasked`` or ``note`` instead of a defect.
- **Fields a provider rejects**: an undefined field the provider answers with an error; ``classify``
  keeps it a defect and says what the provider answers.
- **Error kinds**: an HTTP status a library raises as a more general error kind by design (the openai
  SDK raises every status of 500 and over as ``InternalServerError``), its status kept on the
  exception: ``recovery.provider_error`` accepts that kind there (``accepts_kind``).
- **Replay and prefix**: a difference in what a later request sends back that the provider treats
  as no difference (``REPLAY_RULES``: a Gemini signature spelled in the other base64 alphabet, an
  Anthropic turn's thinking left out once a new user text turn closed its tool loop):
  ``roundtrip.reasoning_replay`` and ``roundtrip.cache_prefix`` apply a rule only where a row for
  the wire names it (``replay_rule``).

Parsing is pure (``parse_table``: text in, ``EquivalenceTable`` out, ``UsageError`` naming the file,
the row and what to write for a bad row); ``bundled_table`` reads the bundled file once, and
``read_table`` a user's (``conformance certify --equivalences FILE``). Nothing is accepted
anywhere else: ``conformance.checks.client_request`` reads only this table.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal, TypeAlias

from conformance.checks._paths import glob_matches, step
from conformance.errors import UsageError
from conformance.verdicts import Finding, FindingKind

__all__ = [
    "ANY",
    "REPLAY_RULES",
    "WHEN",
    "Equivalence",
    "EquivalenceTable",
    "KindByDesign",
    "Rejected",
    "ReplayRule",
    "Unasked",
    "accepts_kind",
    "bundled_table",
    "classify",
    "merged",
    "parse_table",
    "read_table",
    "replay_rule",
    "without_equivalents",
]

_WIRES = ("openai_chat", "openai_responses", "anthropic", "gemini", "ollama")

When: TypeAlias = Literal["", "tools offered", "left open"]
WHEN: tuple[When, ...] = ("", "tools offered", "left open")
"""The conditions a row may carry: none, the request offers tools, the call did not ask for a value."""


class _Any:
    """``any`` in a table's value column: every value (the field is not compared)."""

    def __repr__(self) -> str:
        return "any"


ANY: Any = _Any()


@dataclass(frozen=True, kw_only=True)
class Equivalence:
    """A value that means the same to the provider as leaving the field out."""

    id: str
    wires: frozenset[str]
    """The wires it holds on (empty: every wire)."""
    path: str
    """A glob over the read-back request's JSON path."""
    value: Any
    """The JSON value, or ``ANY``."""
    when: When = ""
    why: str = ""
    source: str


@dataclass(frozen=True, kw_only=True)
class Unasked:
    """What a parameter sent unasked changes."""

    wires: frozenset[str]
    path: str
    changes: str
    """In plain words; ``nothing`` makes a finding a note."""
    source: str


@dataclass(frozen=True, kw_only=True)
class Rejected:
    """A field the provider does not define and answers with an error."""

    wires: frozenset[str]
    path: str
    answer: str
    """What the provider answers."""
    source: str


@dataclass(frozen=True, kw_only=True)
class KindByDesign:
    """A status a library raises as another error kind by design, the status kept."""

    wires: frozenset[str]
    status: int
    kind: str
    """The kind the scenario expects for that status."""
    raised_as: str
    """The kind the library's documented exception class means."""
    source: str


REPLAY_RULES: Mapping[str, str] = {
    "signature as bytes": "a thought signature compares as the bytes its base64 stands for (either alphabet)",
    "thinking omitted after user text": "an earlier assistant turn's thinking blocks may be left out once a new"
    " user text turn closed its tool loop",
}
"""The rules a ``Replay and prefix`` row may name (its ``rule`` cell), with what each accepts."""


@dataclass(frozen=True, kw_only=True)
class ReplayRule:
    """A difference in what is sent back that the provider treats as none (``REPLAY_RULES``)."""

    id: str
    wires: frozenset[str]
    rule: str
    why: str = ""
    source: str


@dataclass(frozen=True, kw_only=True)
class EquivalenceTable:
    files: tuple[str, ...]
    """Where the rows came from (named in messages)."""
    equivalences: tuple[Equivalence, ...] = ()
    unasked: tuple[Unasked, ...] = ()
    rejected: tuple[Rejected, ...] = ()
    error_kinds: tuple[KindByDesign, ...] = ()
    replay: tuple[ReplayRule, ...] = ()
    sha256: str = ""
    """Of the text(s) it was read from: part of the suite's fingerprint."""


# -- parse ---------------------------------------------------------------------------------------

_HEADINGS = {
    "equivalences": ("id", "wire", "path", "value", "when", "why", "source"),
    "parameters sent unasked": ("wire", "path", "changes", "source"),
    "fields a provider rejects": ("wire", "path", "answer", "source"),
    "error kinds": ("wire", "status", "kind", "raised as", "source"),
    "replay and prefix": ("id", "wire", "rule", "why", "source"),
}
_SOURCE = re.compile(r"https?://\S+|[\w./-]+\.(?:py|go|ts|md|yaml|json)(?::\d+(?:-\d+)?)?|§\d")


def parse_table(text: str, file: str) -> EquivalenceTable:
    """The rows of a table file's sections (a missing section has no rows); ``UsageError``
    names the file, the row and what to write for anything malformed."""
    sections = _sections(text)
    unknown = [title for title in sections if title.lower() not in _HEADINGS]
    if unknown:
        raise UsageError(
            f"{file}: unknown section '## {unknown[0]}' (the sections are: "
            + ", ".join(f"'## {t.capitalize()}'" for t in _HEADINGS)
            + ")"
        )
    equivalences: list[Equivalence] = []
    unasked: list[Unasked] = []
    rejected: list[Rejected] = []
    error_kinds: list[KindByDesign] = []
    replay: list[ReplayRule] = []
    seen: dict[str, int] = {}
    for heading, (line, rows) in sections.items():
        title = heading.lower()
        names = _HEADINGS[title]
        if not rows or [c.lower() for c in rows[0][1]] != list(names):
            raise UsageError(
                f"{file}:{rows[0][0] if rows else line}: the table under '## {title.capitalize()}' must have the"
                f" columns {' | '.join(names)} (its first row), in that order"
            )
        for number, cells in rows[1:]:
            where = f"{file}:{number}"
            row = _cells(cells, names, where)
            wires = _wires(row["wire"], where)
            source = _source(row["source"], where)
            if title == "error kinds":
                error_kinds.append(_error_kind(row, wires, source, where))
                continue
            if title == "replay and prefix":
                replay.append(_replay_rule(row, wires, source, where, seen, number))
                continue
            path = _path(row["path"], where)
            if title == "equivalences":
                ident = row["id"]
                if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", ident):
                    raise UsageError(f"{where}: the id {ident!r} must be lower-case words joined by '-'")
                if ident in seen:
                    raise UsageError(f"{where}: the id {ident!r} is used twice (also line {seen[ident]}): rename one")
                seen[ident] = number
                when = row["when"]
                if when not in WHEN:
                    raise UsageError(
                        f"{where}: unknown condition {when!r} in 'when' (write nothing, 'tools offered' or 'left open')"
                    )
                equivalences.append(
                    Equivalence(
                        id=ident,
                        wires=wires,
                        path=path,
                        value=_value(row["value"], where),
                        when=when,
                        why=row["why"],
                        source=source,
                    )
                )
            elif title == "parameters sent unasked":
                if not row["changes"]:
                    raise UsageError(f"{where}: say what the parameter changes in 'changes' (or 'nothing')")
                unasked.append(Unasked(wires=wires, path=path, changes=row["changes"], source=source))
            else:
                if not row["answer"]:
                    raise UsageError(f"{where}: say what the provider answers in 'answer'")
                rejected.append(Rejected(wires=wires, path=path, answer=row["answer"], source=source))
    return EquivalenceTable(
        files=(file,),
        equivalences=tuple(equivalences),
        unasked=tuple(unasked),
        rejected=tuple(rejected),
        error_kinds=tuple(error_kinds),
        replay=tuple(replay),
        sha256=hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest(),
    )


def _replay_rule(
    row: Mapping[str, str], wires: frozenset[str], source: str, where: str, seen: dict[str, int], number: int
) -> ReplayRule:
    ident = row["id"]
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", ident):
        raise UsageError(f"{where}: the id {ident!r} must be lower-case words joined by '-'")
    if ident in seen:
        raise UsageError(f"{where}: the id {ident!r} is used twice (also line {seen[ident]}): rename one")
    seen[ident] = number
    if row["rule"] not in REPLAY_RULES:
        raise UsageError(
            f"{where}: unknown rule {row['rule']!r} in 'rule' (write one of: "
            + ", ".join(repr(r) for r in REPLAY_RULES)
            + ")"
        )
    return ReplayRule(id=ident, wires=wires, rule=row["rule"], why=row["why"], source=source)


def _error_kind(row: Mapping[str, str], wires: frozenset[str], source: str, where: str) -> KindByDesign:
    from conformance.model import ERROR_KINDS

    if not re.fullmatch(r"[1-5]\d\d", row["status"]):
        raise UsageError(f"{where}: the status {row['status']!r} is not an HTTP status (write e.g. 503)")
    for column in ("kind", "raised as"):
        if row[column] not in ERROR_KINDS:
            raise UsageError(
                f"{where}: unknown error kind {row[column]!r} in '{column}' (valid: {', '.join(ERROR_KINDS)})"
            )
    return KindByDesign(
        wires=wires, status=int(row["status"]), kind=row["kind"], raised_as=row["raised as"], source=source
    )


def _sections(text: str) -> dict[str, tuple[int, list[tuple[int, list[str]]]]]:
    """``## Heading`` -> (its line, the table rows under it: line number, cells)."""
    sections: dict[str, tuple[int, list[tuple[int, list[str]]]]] = {}
    current: list[tuple[int, list[str]]] | None = None
    header_seen = False
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if line.startswith("## "):
            title = line[3:].strip()
            current = []
            header_seen = False
            sections[title] = (number, current)
        elif current is not None and line.startswith("|"):
            cells = _split_row(line)
            if header_seen and all(re.fullmatch(r":?-{3,}:?", c) for c in cells):
                continue  # the separator under the header
            header_seen = True
            current.append((number, cells))
    return {t: (n, rows) for t, (n, rows) in sections.items()}


def _split_row(line: str) -> list[str]:
    cells = re.split(r"(?<!\\)\|", line.strip().strip("|"))
    return [c.strip().replace("\\|", "|") for c in cells]


def _cells(cells: list[str], names: tuple[str, ...], where: str) -> dict[str, str]:
    row = [c.strip() for c in cells]
    if len(row) != len(names):
        raise UsageError(
            f"{where}: {len(row)} cells where the table has {len(names)} ({' | '.join(names)}): "
            "write one cell per column (an empty cell is allowed only in 'when' and 'why')"
        )
    return {name: _unquote(cell) for name, cell in zip(names, row, strict=True)}


def _unquote(cell: str) -> str:
    return cell[1:-1] if len(cell) >= 2 and cell[0] == "`" and cell[-1] == "`" and cell.count("`") == 2 else cell


def _wires(cell: str, where: str) -> frozenset[str]:
    if cell == "*":
        return frozenset()
    wires = frozenset(w.strip() for w in cell.split(",") if w.strip())
    unknown = sorted(wires - set(_WIRES))
    if not wires or unknown:
        raise UsageError(
            f"{where}: unknown wire {', '.join(map(repr, unknown)) or repr(cell)} "
            f"(write one of {', '.join(_WIRES)}, several separated by commas, or *)"
        )
    return wires


def _path(cell: str, where: str) -> str:
    if not cell.startswith("$"):
        raise UsageError(
            f"{where}: the path {cell!r} is not a JSON path of the read-back request (write it as "
            "client.recorded_request prints it: $.messages[*].parts[*].is_error)"
        )
    return cell


def _source(cell: str, where: str) -> str:
    if not cell or not _SOURCE.search(cell):
        raise UsageError(
            f"{where}: the row has no source: give the provider's documentation (a URL), the SDK source line it rests "
            "on (path/to/file.py:LINE) or the recording the provider answered"
        )
    return cell


def _value(cell: str, where: str) -> Any:
    if cell == "any":
        return ANY
    try:
        return json.loads(cell)
    except ValueError:
        raise UsageError(
            f'{where}: the value {cell!r} is not JSON (write it in backticks as JSON, e.g. `false`, `"custom"`,'
            ' `["TEXT"]`, or the word any)'
        ) from None


# -- read ----------------------------------------------------------------------------------------


def read_table(path: Path) -> EquivalenceTable:
    """The table in ``path`` (``UsageError`` when it cannot be read or a row is malformed)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"--equivalences {path}: cannot read it ({exc.strerror or exc})") from None
    if len(data) > 1_000_000:
        raise UsageError(f"--equivalences {path}: {len(data)} bytes; a table file holds at most 1,000,000")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"--equivalences {path}: not UTF-8 text (byte {exc.start})") from None
    return parse_table(text, str(path))


@cache
def bundled_table() -> EquivalenceTable:
    """The suite's own table (``docs/equivalences.md``, shipped in the wheel)."""
    from conformance.scenarios.bundled import equivalences_file

    path = equivalences_file()
    return parse_table(path.read_text(encoding="utf-8"), "docs/equivalences.md")


def merged(tables: Iterable[EquivalenceTable]) -> EquivalenceTable:
    """One table of the rows of ``tables``, in order (a user's after the suite's)."""
    tables = list(tables)
    ids: dict[str, str] = {}
    for table in tables:
        for ident in [r.id for r in table.equivalences] + [r.id for r in table.replay]:
            if ident in ids:
                raise UsageError(
                    f"{table.files[0]}: the id {ident!r} is already used in {ids[ident]}: rename it in your table"
                )
            ids[ident] = table.files[0]
    digest = hashlib.sha256("".join(t.sha256 for t in tables).encode()).hexdigest() if len(tables) > 1 else ""
    return EquivalenceTable(
        files=tuple(f for t in tables for f in t.files),
        equivalences=tuple(r for t in tables for r in t.equivalences),
        unasked=tuple(r for t in tables for r in t.unasked),
        rejected=tuple(r for t in tables for r in t.rejected),
        error_kinds=tuple(r for t in tables for r in t.error_kinds),
        replay=tuple(r for t in tables for r in t.replay),
        sha256=digest or (tables[0].sha256 if tables else ""),
    )


# -- apply ---------------------------------------------------------------------------------------


def _holds(wires: frozenset[str], wire: str) -> bool:
    return not wires or wire in wires


def without_equivalents(
    plain: Mapping[str, Any],
    wire: str,
    table: EquivalenceTable,
    *,
    tools_offered: bool,
    left_open: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """``plain`` (a read-back request as plain JSON) with every value the table's equivalences name
    left out: a wire field (under ``provider_details``) is removed, a field of the unified model is
    set to null (its value when the caller leaves it open). ``left_open``: the paths the call did
    not ask a value for."""
    rows = [
        r
        for r in table.equivalences
        if _holds(r.wires, wire)
        and (r.when != "tools offered" or tools_offered)
        and (r.when != "left open" or r.path in left_open)
    ]
    if not rows:
        return dict(plain)
    out = _strip(plain, "$", rows, in_details=False)
    if not isinstance(out, dict):
        return dict(plain)
    if isinstance(out.get("provider_details"), dict):  # a wire field one side adds is named by its own path
        out["provider_details"].setdefault("extra", {})
    return out


def _strip(value: Any, path: str, rows: Sequence[Equivalence], *, in_details: bool) -> Any:
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            where = step(path, key)
            # wire values: provider_details, and a cache breakpoint's own fields (Anthropic's cache_control)
            details = in_details or key in ("provider_details", "cache_control", "system_cache_control")
            if any(_same(row.value, item) and glob_matches(where, (row.path,)) for row in rows):
                if not in_details:
                    out[key] = None  # a field of the unified model: null is "left open"
                continue
            kept = _strip(item, where, rows, in_details=details)
            if in_details and kept == {}:
                continue  # a wire object left empty (on both sides alike)
            out[key] = kept
        return out
    if isinstance(value, list):
        return [_strip(v, f"{path}[{i}]", rows, in_details=in_details) for i, v in enumerate(value)]
    return value


def _same(expected: Any, actual: Any) -> bool:
    if expected is ANY:
        return True
    if isinstance(expected, bool) or isinstance(actual, bool):
        return expected is actual
    return type(expected) is type(actual) and bool(expected == actual)


def replay_rule(table: EquivalenceTable, rule: str, wire: str) -> ReplayRule | None:
    """The first row of ``table`` naming ``rule`` (a ``REPLAY_RULES`` key) on ``wire``; None: not accepted."""
    return next((r for r in table.replay if r.rule == rule and _holds(r.wires, wire)), None)


def accepts_kind(table: EquivalenceTable, wire: str, status: int | None, expected: str, actual: str) -> bool:
    """Does the table accept an error of HTTP ``status`` that the scenario expects as ``expected``
    raised as ``actual`` (the library's documented class for it, the status kept)?"""
    return any(
        _holds(row.wires, wire) and row.status == status and row.kind == expected and row.raised_as == actual
        for row in table.error_kinds
    )


def classify(finding: Finding, wire: str, table: EquivalenceTable) -> Finding:
    """A ``client.recorded_request`` finding as the table sees it: a field sent and not recorded
    that the provider rejects stays a defect, saying what the provider answers; a parameter (a wire
    field of the request or of a tool, ``_PARAMETER``) sent and not recorded is sent unasked
    (``unasked``, with what it changes; a ``note`` when it changes nothing). Anything else stays."""
    if not finding.message.startswith("added:"):
        return finding
    while isinstance(finding.actual, Mapping) and len(finding.actual) == 1:  # named by the field itself
        [(key, value)] = finding.actual.items()
        finding = dataclasses.replace(finding, path=step(finding.path, key), actual=value)
    paths = _leaves(finding.path, finding.actual)
    for rejected in table.rejected:
        if _holds(rejected.wires, wire) and _under(paths, rejected.path):
            return dataclasses.replace(
                finding,
                message=f"{finding.message}: a field the provider does not define",
                remedy=f"the provider answers {rejected.answer}",
            )
    if not _PARAMETER.match(finding.path):
        return finding  # a message, a part, a signature the caller did not give: what the request says changed
    for unasked in table.unasked:
        if _holds(unasked.wires, wire) and _under(paths, unasked.path):
            kind: FindingKind = "note" if unasked.changes.strip().lower().startswith("nothing") else "unasked"
            return dataclasses.replace(
                finding, message="sent unasked: the call did not ask for it", kind=kind, remedy=unasked.changes
            )
    return dataclasses.replace(
        finding,
        message="sent unasked: the call did not ask for it",
        kind="unasked",
        remedy="what it changes is not in the suite's table (docs/equivalences.md, 'Parameters sent unasked')",
    )


_PARAMETER = re.compile(r"^\$(?:\.tools\[\d+\])?\.provider_details\.")
"""A parameter: a wire field of the request or of one of its tools (``$.provider_details.extra.stream_options``,
``$.tools[0].provider_details.function.strict``), not one inside a message."""


def _under(paths: Iterable[str], row: str) -> bool:
    """Is one of ``paths`` the row's path or inside it (``...stream_options.include_usage`` is under
    ``...stream_options``)?"""
    return any(glob_matches(p, (row, row + ".*", row + "[*")) for p in paths)


def _leaves(path: str, value: Any) -> list[str]:
    """``path``, and the paths of the fields inside an added object (``$.x.extra`` holding
    ``{"is_error": true}`` is also ``$.x.extra.is_error``)."""
    out = [path]
    if isinstance(value, Mapping):
        for key, item in value.items():
            out += _leaves(step(path, key), item)
    return out
