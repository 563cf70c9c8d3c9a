"""The package's layout is its architecture (docs/architecture.md): the root holds only the core
modules everything stands on, every concern is a package, and no module imports itself back
through a circle of imports. The imports are read with ``ast`` (nothing is executed), every
import counts (module level, inside functions, under ``TYPE_CHECKING``), and importing
``a.b.c`` counts as importing the packages ``a`` and ``a.b`` too, as Python runs their
``__init__`` first. The page stays true: every module and package it names exists, and it names
every package."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import conformance

PACKAGE_DIR = Path(conformance.__file__).resolve().parent
REPO = PACKAGE_DIR.parent
ARCHITECTURE = REPO / "docs" / "architecture.md"

CORE = {"__init__", "__main__", "model", "errors", "limits", "assembly", "verdicts"}
"""The values, errors, input limits and fold everything else stands on, and the entry (stream framing is the
core package ``framing``: its decoders, and the fast reader of runs it owns)."""

ENTRY_POINTS = {"pytest_plugin", "respx"}
"""Entry modules beside ``__main__``: the pytest plugin (``pytest11``), which pytest imports by this
name and which imports the packages only inside its hooks, and ``conformance.respx``, the respx
router a user's own test suite imports (docs/pytest.md)."""

PACKAGES = {
    "adapters",
    "checks",
    "cli",
    "clients",
    "console",
    "emulator",
    "framing",
    "mcp_bridge",
    "pipeline",
    "reporting",
    "run",
    "scenarios",
    "selftest",
    "servers",
    "traffic",
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE_DIR.rglob("*.py"))}


def imported(name: str, path: Path) -> set[str]:
    """The modules of ``conformance`` that importing ``name`` runs directly."""
    found: set[str] = set()
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".") if is_package else name.split(".")[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            submodules = [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in MODULES]
            # ``from a.b import name`` needs a.b's ``__init__`` run to its end; ``from a.b import sub``
            # needs only a.b.sub
            targets = [base if len(submodules) < len(node.names) else "", *submodules]
        for i, target in enumerate(targets):
            if i == 0 and target in MODULES and target != name:
                found.add(target)  # ``from a.b import x`` runs a.b, even when a.b is our own package
            target = target.rpartition(".")[0] if i == 0 else target
            while target:  # a.b.c runs a and a.b first, except the packages ``name`` sits in (running already)
                if target in MODULES and target != name and not name.startswith(target + "."):
                    found.add(target)
                target = target.rpartition(".")[0]
    return found


def find_circle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (circle := visit(nxt)) is not None:
                return circle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (circle := visit(node)) is not None:
            return circle
    return None


def test_there_is_no_import_circle() -> None:
    graph = {name: imported(name, path) for name, path in MODULES.items()}
    assert sum(len(v) for v in graph.values()) > 200, "the import walk found too few imports to be reading them"
    circle = find_circle(graph)
    assert circle is None, "import circle: " + " -> ".join(circle or [])


def test_the_circle_finder_finds_a_circle() -> None:
    assert find_circle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_circle({"a": {"b"}, "b": set()}) is None


def test_a_lazy_import_inside_a_function_counts(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text("def f():\n    from conformance.run import runner\n", encoding="utf-8")
    assert "conformance.run.runner" in imported("conformance.x", source)
    assert "conformance.run" in imported("conformance.x", source)


def test_the_root_holds_only_the_core_and_the_packages() -> None:
    modules = {p.stem for p in PACKAGE_DIR.glob("*.py")}
    packages = {p.parent.name for p in PACKAGE_DIR.glob("*/__init__.py")}
    assert modules == CORE | ENTRY_POINTS
    assert packages == PACKAGES


# --- docs/architecture.md names what exists -----------------------------------------------------

NAMED = re.compile(r"`([A-Za-z_<][\w<>*.-]*(?:/[\w<>*.-]+)*(?:\.py|/))`")
"""A module (``name.py``) or package or folder (``name/``) in a code span of the page's text."""
DRAWN = re.compile(r"(?<![\w/<*.])([a-z_]+)/([a-z_]*)")
"""A package (``checks/``) or module (``run/runner``) in the drawing."""


def named_in_architecture(text: str) -> list[tuple[str, str]]:
    """(the package of the table row it is in, or "", the name) for each module and package the page
    names: code spans ending in ``.py`` or ``/`` outside code blocks, and ``a/`` or ``a/b`` in the
    drawing (the page's first code block; the other code blocks are Python)."""
    found: list[tuple[str, str]] = []
    pieces = text.split("```")
    for piece in pieces[0::2]:
        for line in piece.splitlines():
            cells = line.split(" | ")
            row = re.match(r"\| `([\w]+)/`", line) if line.startswith("| ") and len(cells) > 1 else None
            found += [(row.group(1) if row else "", name) for name in NAMED.findall(line)]
    drawing = pieces[1] if len(pieces) > 1 else ""
    found += [("", f"{a}/{b}" if b else f"{a}/") for a, b in DRAWN.findall(drawing)]
    return found


def resolve(package: str, name: str) -> Path | None:
    """Where ``name`` is: in ``package`` (a package of ``conformance``, or ""), else in ``conformance``,
    else in the repository. ``<...>`` is any text; a drawn ``a/b`` is a module ``b.py`` or package
    ``b/`` of ``a``."""
    bases = [PACKAGE_DIR / package] if package else []
    pattern = re.sub(r"<[^>]*>", "*", name)
    for base in [*bases, PACKAGE_DIR, REPO]:
        if pattern.endswith("/"):
            candidates = [p for p in base.glob(pattern.rstrip("/")) if p.is_dir()]
        elif pattern.endswith(".py"):
            candidates = [p for p in base.glob(pattern) if p.is_file()]
        else:  # drawn a/b
            candidates = [p for p in (base / f"{pattern}.py", base / pattern) if p.exists()]
        if candidates:
            return candidates[0]
    return None


def test_every_module_and_package_named_in_the_architecture_exists() -> None:
    named = named_in_architecture(ARCHITECTURE.read_text(encoding="utf-8"))
    assert len(named) > 60, "the page's names were not found: has its table's layout changed?"
    missing = sorted(
        {f"{name} (row {package}/)" if package else name for package, name in named if not resolve(package, name)}
    )
    assert missing == [], f"docs/architecture.md names what does not exist: {missing}"


def test_the_architecture_names_every_package() -> None:
    named = {
        resolve(package, name) for package, name in named_in_architecture(ARCHITECTURE.read_text(encoding="utf-8"))
    }
    packages = {p.parent for p in PACKAGE_DIR.rglob("__init__.py")} - {PACKAGE_DIR}
    unnamed = sorted(str(p.relative_to(PACKAGE_DIR)) + "/" for p in packages - named)
    assert unnamed == [], f"docs/architecture.md does not name these packages: {unnamed}"


def test_a_name_that_does_not_exist_is_found_missing() -> None:
    text = "| `run/` | `runner.py`, `nowhere.py`, `model.py` |\n| `checks/` | `schemas/requests/` |\n"
    named = named_in_architecture(text)
    assert named == [
        ("run", "run/"),
        ("run", "runner.py"),
        ("run", "nowhere.py"),
        ("run", "model.py"),
        ("checks", "checks/"),
        ("checks", "schemas/requests/"),
    ]
    assert [name for package, name in named if resolve(package, name) is None] == ["nowhere.py"]
    assert resolve("", "run/runner") == PACKAGE_DIR / "run" / "runner.py"
    assert resolve("", "adapters/") == PACKAGE_DIR / "adapters"
    assert resolve("adapters", "_<wire>_*.py") is not None
    assert resolve("", "run/nowhere") is None
