"""The package's layout is its architecture (README, "Architecture"): the root holds only the core
modules everything stands on, every concern is a package, and no module imports itself back
through a circle of imports. The imports are read with ``ast`` (nothing is executed), every
import counts (module level, inside functions, under ``TYPE_CHECKING``), and importing
``a.b.c`` counts as importing the packages ``a`` and ``a.b`` too, as Python runs their
``__init__`` first."""

from __future__ import annotations

import ast
from pathlib import Path

import conformance

PACKAGE_DIR = Path(conformance.__file__).resolve().parent

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
    "emulator",
    "framing",
    "mcp_bridge",
    "reporting",
    "run",
    "scenarios",
    "selftest",
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
