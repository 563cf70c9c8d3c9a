"""Read scenario files: YAML -> JSON Schema -> rules -> ``Scenario`` values (the I/O edge).

Each file goes through four steps, and every problem found is kept with its file, line, column
and JSON pointer (``ScenarioProblem``), so one bad file never hides the problems of another:

1. YAML (``_positioned_yaml``): syntax, duplicate keys, non-string keys, non-core tags (composed by
   libyaml; a file with any problem is read again by the pure-Python composer, whose positions
   and messages the problems carry);
2. ``schemas/scenario.schema.json`` (``_schema``): shapes, unknown keys (with the closest
   valid one), enums (with the allowed values);
3. the rules JSON Schema cannot say (``_rules``), run when the schema holds;
4. the values (``_build``), with the ``expect`` defaults applied.

A scenario's id is its path relative to the folder it was found in, without ``.yaml``/``.yml``
(``scenarios/basic/get_time.yaml`` -> ``basic/get_time``). The bundled folder is the default;
``CONFORMANCE_SCENARIOS`` overrides it. ``conformance validate`` is ``conformance.cli.validate``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from conformance.errors import ScenarioError, UsageError
from conformance.scenarios import bundled
from conformance.scenarios._build import build_scenario
from conformance.scenarios._positioned_yaml import compose
from conformance.scenarios._rules import semantic_problems
from conformance.scenarios._schema import schema_problems
from conformance.scenarios.problems import ScenarioProblem
from conformance.scenarios.values import Scenario

__all__ = [
    "ENV_VAR",
    "SUFFIXES",
    "LoadResult",
    "ScenarioProblem",
    "default_scenarios_dir",
    "load_scenario",
    "load_scenarios",
    "load_with_user_dirs",
    "scenario_files",
]

ENV_VAR = "CONFORMANCE_SCENARIOS"
"""Environment variable naming the scenarios folder to use instead of the bundled one."""
SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True, kw_only=True)
class LoadResult:
    """The valid scenarios of a load, and the problems of the files that are not valid."""

    scenarios: tuple[Scenario, ...] = ()
    """Sorted by id; a file with any problem contributes none."""
    problems: tuple[ScenarioProblem, ...] = ()
    """Every problem of every file, by file then position."""
    files: tuple[Path, ...] = ()
    """Every scenario file read."""

    @property
    def ok(self) -> bool:
        return not self.problems


def default_scenarios_dir() -> Path:
    """``$CONFORMANCE_SCENARIOS``, else the ``scenarios/`` folder beside the package."""
    override = os.environ.get(ENV_VAR)
    if override:
        return Path(override)
    return bundled.scenarios_dir()


def scenario_files(paths: Sequence[Path | str] = (), *, root: Path | None = None) -> list[tuple[Path, str]]:
    """``(file, id)`` of every scenario file under ``paths`` (default: ``default_scenarios_dir()``).

    Folders are searched recursively for ``*.yaml`` and ``*.yml`` (names starting with ``.`` are
    skipped); ids are relative to the folder, or to ``root`` when given. A file given directly
    takes its id relative to ``root``, else to its nearest ancestor folder named ``scenarios``,
    else its stem. Raises ``UsageError`` for a path that does not exist or is not a YAML file.
    """
    targets = [Path(p) for p in paths] or [default_scenarios_dir()]
    found: list[tuple[Path, str]] = []
    seen: set[Path] = set()
    for target in targets:
        if target.is_dir():
            base = root or target
            files = sorted(
                f
                for f in target.rglob("*")
                if f.suffix in SUFFIXES
                and f.is_file()
                and not any(part.startswith(".") for part in f.relative_to(target).parts)
            )
            pairs = [(f, _id(f, base)) for f in files]
        elif target.is_file():
            if target.suffix not in SUFFIXES:
                raise UsageError(f"{target}: not a scenario file (scenario files end in .yaml or .yml)")
            pairs = [(target, _id(target, root))]
        elif not target.exists():
            where = f" (from ${ENV_VAR})" if not paths and os.environ.get(ENV_VAR) else ""
            raise UsageError(f"{target}: no such file or directory{where}")
        else:
            raise UsageError(f"{target}: not a file or directory")
        for file, scenario_id in pairs:
            resolved = file.resolve()
            if resolved not in seen:
                seen.add(resolved)
                found.append((file, scenario_id))
    return found


def _id(file: Path, root: Path | None) -> str:
    if root is not None:
        try:
            return file.resolve().relative_to(root.resolve()).with_suffix("").as_posix()
        except ValueError:
            where = f" (a link to {file.resolve()})" if file.is_symlink() or file.resolve() != file.absolute() else ""
            raise UsageError(
                f"{file}{where} is not under the scenarios folder {root}: links must stay inside it; "
                "copy the file into the folder instead of linking it"
            ) from None
    resolved = file.resolve()
    for parent in resolved.parents:
        if parent.name == "scenarios":
            return resolved.relative_to(parent).with_suffix("").as_posix()
    return file.stem


def load_scenarios(paths: Sequence[Path | str] = (), *, root: Path | None = None) -> LoadResult:
    """Load every scenario file under ``paths`` (see ``scenario_files``).

    Never raises for a bad file: its problems are in the result and the other files still load.
    Two files with the same id (``x.yaml`` and ``x.yml``) are a problem of the second. Raises
    ``UsageError`` only when a path does not exist or is not a scenario file.
    """
    scenarios: dict[str, Scenario] = {}
    problems: list[ScenarioProblem] = []
    files = scenario_files(paths, root=root)
    owner: dict[str, Path] = {}
    for file, scenario_id in files:
        if scenario_id in owner:
            problems.append(
                ScenarioProblem(
                    path=file,
                    line=1,
                    column=1,
                    message=f"duplicate scenario id {scenario_id!r}: {owner[scenario_id]} has it too",
                    expected="one file per id",
                    hint="rename or remove one of the two files (x.yaml and x.yml share the id x)",
                )
            )
            continue
        owner[scenario_id] = file
        try:
            scenario, found = _load_file(file, scenario_id)
        except Exception as exc:  # a bug of ours must not hide the other files' problems
            message = f"internal error while loading ({type(exc).__name__}: {exc}); please report it"
            scenario, found = None, [ScenarioProblem(path=file, message=message)]
        problems.extend(found)
        if scenario is not None:
            scenarios[scenario_id] = scenario
    return LoadResult(
        scenarios=tuple(scenarios[k] for k in sorted(scenarios)),
        problems=tuple(problems),
        files=tuple(file for file, _ in files),
    )


def load_with_user_dirs(dirs: Sequence[Path | str] = ()) -> LoadResult:
    """The bundled scenarios (``default_scenarios_dir()``) plus every scenario under ``dirs`` (ids
    relative to each folder): a user's scenario replaces the bundled one with its id, and a later
    folder's replaces an earlier one's. Each scenario's ``path`` says which file it came from."""
    results = [load_scenarios([]), *(load_scenarios([d]) for d in dirs)]
    merged = {s.id: s for result in results for s in result.scenarios}
    return LoadResult(
        scenarios=tuple(merged[k] for k in sorted(merged)),
        problems=tuple(p for result in results for p in result.problems),
        files=tuple(f for result in results for f in result.files),
    )


def load_scenario(path: Path | str, *, root: Path | None = None) -> Scenario:
    """The scenario in one file; raises ``ScenarioError`` carrying its problems."""
    file = Path(path)
    if not file.is_file():
        raise ScenarioError([ScenarioProblem(path=file, message="no such scenario file", hint="check the path")])
    scenario, problems = _load_file(file, _id(file, root))
    if scenario is None:
        raise ScenarioError(problems)
    return scenario


def _load_file(path: Path, scenario_id: str) -> tuple[Scenario | None, list[ScenarioProblem]]:
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, [ScenarioProblem(path=path, message=f"not UTF-8 text ({exc.reason} at byte {exc.start})")]
    except OSError as exc:
        return None, [ScenarioProblem(path=path, message=f"cannot read the file: {exc.strerror or exc}")]
    text = text.removeprefix("\ufeff")
    try:
        scenario, problems = _read(text, path, scenario_id, fast=True)
    except Exception:  # whatever libyaml makes of a broken file: the pure-Python composer says what it is
        scenario, problems = None, []
    if scenario is None:  # problems are placed and worded by the pure-Python composer (libyaml's differ)
        scenario, problems = _read(text, path, scenario_id, fast=False)
    return scenario, problems


def _read(text: str, path: Path, scenario_id: str, *, fast: bool) -> tuple[Scenario | None, list[ScenarioProblem]]:
    document, problems = compose(text, path, fast=fast)
    if document is None:
        return None, problems
    problems += schema_problems(document.data, document.locator)
    if not problems:
        problems += semantic_problems(document.data, document.locator, scenario_id)
    if problems:
        return None, _ordered(problems)
    return build_scenario(document.data, scenario_id=scenario_id, path=path), []


def _ordered(problems: list[ScenarioProblem]) -> list[ScenarioProblem]:
    unique = list(dict.fromkeys(problems))
    return sorted(unique, key=lambda p: (p.line or 0, p.column or 0, p.pointer, p.message))
