"""The public surface is explicit (style.md §13, after httpx ``tests/test_exported_members.py``):
every module under ``conformance/`` has an ``__all__`` whose names exist, and a public module's
``__all__`` lists every public class and function it defines."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from pathlib import Path
from types import ModuleType

import pytest

import conformance

PACKAGE_DIR = Path(conformance.__file__).parent


def module_names() -> list[str]:
    names = [conformance.__name__]
    for info in pkgutil.walk_packages([str(PACKAGE_DIR)], prefix=conformance.__name__ + "."):
        names.append(info.name)
    return sorted(names)


MODULES = module_names()


def is_public(name: str) -> bool:
    return not any(part.startswith("_") for part in name.split("."))


def load(name: str) -> ModuleType:
    return importlib.import_module(name)


def test_the_core_modules_are_found() -> None:
    for name in (
        "conformance.model",
        "conformance.errors",
        "conformance.framing",
        "conformance.assembly",
        "conformance.adapters",
        "conformance.adapters.base",
    ):
        assert name in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_module_has_all(name: str) -> None:
    module = load(name)
    assert isinstance(getattr(module, "__all__", None), list | tuple), f"{name} has no __all__"


@pytest.mark.parametrize("name", MODULES)
def test_every_name_in_all_exists_once(name: str) -> None:
    module = load(name)
    exported = list(getattr(module, "__all__", ()))
    missing = [n for n in exported if not hasattr(module, n)]
    assert not missing, f"{name}.__all__ names what the module does not define: {missing}"
    dupes = sorted({n for n in exported if exported.count(n) > 1})
    assert not dupes, f"{name}.__all__ lists names twice: {dupes}"


@pytest.mark.parametrize("name", [n for n in MODULES if is_public(n)])
def test_all_lists_every_public_class_and_function_defined_there(name: str) -> None:
    module = load(name)
    exported = set(getattr(module, "__all__", ()))
    unlisted = sorted(
        attr
        for attr, value in vars(module).items()
        if not attr.startswith("_")
        and (inspect.isclass(value) or inspect.isfunction(value))
        and getattr(value, "__module__", None) == module.__name__
        and attr not in exported
    )
    assert not unlisted, f"{name} defines public names missing from __all__: {unlisted}"


def test_package_root_exports_the_version() -> None:
    assert conformance.__all__ == ["__version__"]
    assert isinstance(conformance.__version__, str)
