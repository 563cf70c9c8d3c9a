"""What a run selects: adapters, scenarios, checks, cases (``-k``), report formats, workers and shards.

Every reader here takes the plain values of the command line (texts, lists) and raises
``UsageError`` naming the option, the value and what is valid (the nearest name when one is
misspelt), so the command can end with exit 2 before anything runs:

- ``load_adapter``: a built-in adapter name or ``pkg.module:object`` (the adapter contract of
  ``conformance.adapters.base.Adapter``, checked);
- ``select_scenarios``: ``--scenarios PATH|GLOB`` (a file or folder loads those files; otherwise a
  glob over scenario ids) and ``--scenarios-dir``;
- ``read_checks`` and ``chosen_checks``: ``--checks`` families (``FAMILIES``) and check ids
  (``conformance.run.fingerprint.CHECK_IDS``); ``read_formats``: ``--format``;
- ``compile_keyword``: ``-k EXPR`` (pytest-style: words matched as substrings of
  ``column::scenario::mode``, combined with ``and``/``or``/``not`` and parentheses);
- ``read_jobs`` and ``read_shard``: ``--jobs`` and ``--shard K/N``;
- ``nothing_selected``: why a selection holds no case, and where the names to choose from are.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import importlib
import os
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from conformance.adapters import BUILTIN, get_adapter
from conformance.errors import ConformanceError, UsageError
from conformance.run.fingerprint import CHECK_IDS
from conformance.scenarios.problems import closest

if TYPE_CHECKING:
    from conformance.adapters.base import Adapter
    from conformance.run.shard import Shard
    from conformance.scenarios.values import Scenario
    from conformance.verdicts import Selection

__all__ = [
    "CHECK_IDS",
    "EXHAUSTIVE_TIMEOUT",
    "FAMILIES",
    "REPORT_FORMATS",
    "TIMEOUT",
    "check_gap_keys",
    "check_scenarios_dirs",
    "chosen_checks",
    "compile_keyword",
    "default_jobs",
    "empty_shard",
    "keyword_literal",
    "load_adapter",
    "nothing_selected",
    "read_checks",
    "read_formats",
    "read_jobs",
    "read_shard",
    "select_scenarios",
    "split_list",
]

REPORT_FORMATS = ("json", "md", "html", "junit")
TIMEOUT = 30.0
"""Seconds per case by default (``conformance run``)."""
EXHAUSTIVE_TIMEOUT = 300.0
"""Seconds per case with ``--exhaustive``: every 2-way cut of a stream decodes it again, so a case
costs the square of its streams' length (the longest bundled case takes ~30 s on a busy core)."""
FAMILIES = ("translation", "roundtrip", "streaming", "recovery", "client", "server")
"""The check families (``conformance.checks.FAMILIES``, named here so ``--help`` stays fast); ``client``
judges black-box clients (``conformance certify --client``) and ``server`` model servers and gateways
(``conformance.checks.server``): neither gives a verdict on an adapter."""


def load_adapter(spec: str) -> Adapter:
    """A built-in adapter name, or ``pkg.module:object`` naming an object with the adapter contract.

    Any object with the contract's attributes will do: it is checked (``contract_problems``) and
    turned into an ``Adapter`` value, so a wrong declaration is a usage error here (exit 2), naming
    the field and the valid values, never an ERROR in every case later."""
    from conformance.adapters.base import Adapter, contract_problems

    if ":" not in spec:
        if spec not in BUILTIN:
            hint = closest(spec, sorted(BUILTIN))
            raise UsageError(
                f"unknown adapter {spec!r}{' (' + hint + ')' if hint else ''}; use one of "
                f"{', '.join(sorted(BUILTIN))} or pkg.module:object"
            )
        return get_adapter(spec)
    module_name, _, attribute = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise UsageError(f"--adapter {spec}: cannot import {module_name!r} ({exc}); is it on PYTHONPATH?") from exc
    except ConformanceError as exc:  # an Adapter(...) at import time that breaks the contract
        raise UsageError(f"--adapter {spec}: importing {module_name} failed: {exc}") from exc
    obj: Any = module
    for part in attribute.split("."):
        if not hasattr(obj, part):
            raise UsageError(f"--adapter {spec}: {module_name} has no attribute {attribute!r}")
        obj = getattr(obj, part)
    if isinstance(obj, Adapter):
        adapter = obj
    else:
        problems = contract_problems(obj)
        if problems:
            raise UsageError(f"--adapter {spec}: " + "; ".join(problems) + " (see docs/adapters.md)")
        declared = {f.name: getattr(obj, f.name) for f in dataclasses.fields(Adapter) if hasattr(obj, f.name)}
        adapter = Adapter(**{**declared, "capabilities": frozenset(obj.capabilities)})
    check_gap_keys(adapter.known_gaps, f"--adapter {spec}")
    return adapter


def check_gap_keys(gaps: Mapping[str, str], where: str) -> None:
    """Every known-gap key (``check``, ``check@glob``, for a client also ``wire:check[@glob]``) names a
    check id; ``UsageError`` naming ``where`` and the valid ids when one does not."""
    valid = [check for ids in CHECK_IDS.values() for check in ids]
    for key in gaps:
        check = key.partition("@")[0]
        check = check.partition(":")[2] or check
        if check not in valid:
            raise UsageError(f"{where}: known gap {key!r} names no check (valid check ids: {', '.join(valid)})")


def read_checks(text: str | None) -> tuple[str, ...]:
    """``--checks`` (check families and check ids, as asked; None: every family) read and checked:
    ``UsageError`` names an unknown one with the nearest valid name, and where the valid ones are."""
    checks = tuple(dict.fromkeys(split_list([text]))) if text else tuple(FAMILIES)
    ids = [check for family in CHECK_IDS.values() for check in family]
    for name in checks:
        if name not in FAMILIES and name not in ids:
            hint = closest(name, [*FAMILIES, *ids])
            raise UsageError(
                f"unknown check {name!r}{': ' + hint if hint else ''} (--checks takes the families "
                f"{', '.join(FAMILIES)} and their check ids, which `conformance list` shows)"
            )
    return checks


def read_formats(text: str | None) -> list[str]:
    """``--format`` (comma-separated) read and checked (``UsageError`` names the unknown ones)."""
    formats = split_list([text or ""])
    bad = [f for f in formats if f not in REPORT_FORMATS]
    if bad:
        raise UsageError(f"unknown report format {', '.join(bad)} (known: {', '.join(REPORT_FORMATS)})")
    return formats


def chosen_checks(checks: Sequence[str]) -> tuple[tuple[str, ...], frozenset[str] | None]:
    """What ``--checks`` (families and check ids, checked by ``read_checks``) runs: the families, in the
    order asked, and the check ids whose verdicts are kept (None: every verdict of those families). A
    family named runs whole; a check id runs its family and keeps that check's verdicts alone, so a
    case is judged by the chosen checks only."""
    family_of = {check: family for family, ids in CHECK_IDS.items() for check in ids}
    families = tuple(dict.fromkeys(name if name in FAMILIES else family_of[name] for name in checks))
    if all(name in FAMILIES for name in checks):
        return families, None
    kept = {check for name in checks for check in (CHECK_IDS.get(name, ()) if name in FAMILIES else (name,))}
    return families, frozenset(kept)


_TOKEN = re.compile(r'\s*("(?:[^"\\]|\\.)*"|\(|\)|and\b|or\b|not\b|[^\s()]+)')
"""``-k``'s words: a double-quoted literal (``\\"`` and ``\\\\`` inside), a parenthesis, an operator, or a run
of other characters."""
_LITERAL_NEEDED = re.compile(r'[\s()"\\]|^(and|or|not)$')


def keyword_literal(text: str) -> str:
    """``text`` as one ``-k`` word that matches it as a substring: as it is, or double-quoted when it holds
    a space, a parenthesis, a quote or a backslash, or is an operator (a scenario id from a user's file
    may)."""
    if not _LITERAL_NEEDED.search(text):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def compile_keyword(expression: str) -> Callable[[str, str, str], bool]:
    """``-k``: a pytest-style expression over ``column::scenario::mode`` (a word in double quotes is
    matched as it is: ``keyword_literal``)."""
    tokens = _TOKEN.findall(expression)
    if not tokens:
        raise UsageError("-k needs an expression")
    words: list[str] = []
    parts: list[str] = []
    for token in tokens:
        if token in ("(", ")", "and", "or", "not"):
            parts.append(token)
        else:
            quoted = len(token) >= 2 and token[0] == token[-1] == '"'
            words.append(re.sub(r"\\(.)", r"\1", token[1:-1]) if quoted else token)
            parts.append(f"(w[{len(words) - 1}] in name)")
    code = " ".join(parts)
    try:
        compiled = compile(code, "<-k>", "eval")
        eval(compiled, {"__builtins__": {}}, {"w": words, "name": ""})
    except SyntaxError as exc:
        raise UsageError(f"-k {expression!r}: not a valid expression") from exc

    def select(adapter: str, scenario: str, mode: str) -> bool:
        return bool(eval(compiled, {"__builtins__": {}}, {"w": words, "name": f"{adapter}::{scenario}::{mode}"}))

    return select


def default_jobs() -> int:
    """``--jobs`` when not given: the CPUs this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def read_jobs(jobs: int | None) -> int:
    """``--jobs`` (None: ``default_jobs()``); ``UsageError`` below 1."""
    jobs = default_jobs() if jobs is None else int(jobs)
    if jobs < 1:
        raise UsageError(f"--jobs {jobs}: must be at least 1 (1 runs the pairs one at a time; omit it for one per CPU)")
    return jobs


def read_shard(text: str | None) -> Shard | None:
    """``--shard K/N`` read (None when not given); ``UsageError`` naming the flag and the form."""
    from conformance.run.shard import parse_shard

    return None if text is None else parse_shard(text)


def empty_shard(shard: Shard) -> str:
    """What a shard that holds none of the selected cases says (its report is empty; exit 0)."""
    return (
        f"--shard {shard}: this shard holds none of the selected cases (there are fewer pairs of adapter and "
        f"scenario than shards); its report is empty, and `conformance merge-reports` takes it with the others"
    )


def split_list(values: Sequence[str | None] | None) -> list[str]:
    """``--opt a,b --opt c`` -> ``[a, b, c]``."""
    return [v.strip() for value in values or [] if value for v in value.split(",") if v.strip()]


def select_scenarios(specs: Sequence[str], dirs: Sequence[str] = ()) -> tuple[list[Scenario], list[str]]:
    """The scenarios ``--scenarios`` names (files, folders or id globs; none: all bundled, plus
    those of ``--scenarios-dir``, which win by id), and the problems of the files that could not be
    loaded."""
    from conformance.scenarios.loader import load_scenarios, load_with_user_dirs

    check_scenarios_dirs(dirs)
    paths = [s for s in specs if Path(s).exists()]
    globs = [s for s in specs if not Path(s).exists()]
    loaded = load_scenarios(paths) if paths else load_with_user_dirs(dirs)
    scenarios = list(loaded.scenarios)
    if globs:
        scenarios = [s for s in scenarios if any(fnmatch.fnmatchcase(s.id, g) or s.id == g for g in globs)]
        if not scenarios:
            ids = [s.id for s in loaded.scenarios]
            hints = [f"{g}: {h}" for g in globs if (h := closest(g, ids))]
            near = f" ({'; '.join(hints)})" if hints else ""
            raise UsageError(f"no scenario id matches {', '.join(globs)}{near} (see `conformance list`)")
    return scenarios, [str(p) for p in loaded.problems]


def check_scenarios_dirs(dirs: Sequence[str]) -> None:
    """Every ``--scenarios-dir`` is a folder (``UsageError`` naming the one that is missing or a file)."""
    for folder in dirs:
        path = Path(folder)
        if not path.exists():
            raise UsageError(f"--scenarios-dir {folder}: no such folder (give the folder holding your scenario files)")
        if not path.is_dir():
            raise UsageError(f"--scenarios-dir {folder}: it is a file, not a folder (give the folder that holds it)")


def nothing_selected(
    selection: Selection,
    columns: Sequence[str],
    scenarios: Sequence[Scenario],
    *,
    report_dir: Path,
    last_failed: bool = False,
    noun: str = "adapters",
    known: str = "",
) -> str:
    """Why a run selects no case, and what shows the names to select from (for a usage error;
    ``selection``: what the command line chose; ``known``: more names to choose from, e.g. the wires a
    client declares)."""
    chosen = [f"-k {selection.keyword!r}"] if selection.keyword else []
    chosen += [f"--scenarios {spec}" for spec in selection.scenarios]
    if selection.wires is not None:
        chosen.append(f"--wires {','.join(selection.wires)!r}")
    if last_failed:
        chosen.append("--last-failed")
    example = f"{columns[0]}::{scenarios[0].id}::non_stream" if columns and scenarios else "adapter::scenario::mode"
    return (
        f"{' with '.join(chosen) or 'this selection'} selects no case of {len(scenarios)} scenarios x "
        f"{len(columns)} {noun} (a case is named like {example}; {known + '; ' if known else ''}`conformance list` "
        f"shows the scenario ids and adapters); nothing ran and the reports in {report_dir} were left as they were"
    )
