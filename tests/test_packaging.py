"""The package as a user gets it: a built wheel carries every package and the bundled scenarios and
cassettes, and installed into a fresh virtualenv outside the checkout it runs from any directory.

Every test but the first is the ``packaging`` tier (``pytest -m packaging``, about 30 s; skipped in
the default run, docs/testing.md): ``pip wheel`` gets the build requirements from the configured index.

The virtualenv is made without ``--system-site-packages`` (from inside a virtualenv that would be the
base interpreter's packages, not the running environment's) and the wheel installed with
``--no-deps``: the dependencies come from the environment running the tests through a ``.pth`` file
listing its site-packages after the venv's own (no index, no network), while the ``conformance``
imported is the wheel's (``--ignore-installed``: an editable install of a checkout in the outer
environment has the same version, and its ``.pth`` files are not read from there; the test asserts
where ``conformance`` is imported from)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import setuptools

from tests._venvs import venv_with_suite_dependencies

REPO = Path(__file__).resolve().parents[1]
BUNDLED_CASSETTES = sorted(p.relative_to(REPO / "cassettes").as_posix() for p in (REPO / "cassettes").rglob("*.yaml"))
BUNDLED_SCENARIOS = sorted(p.relative_to(REPO / "scenarios").as_posix() for p in (REPO / "scenarios").rglob("*.yaml"))


def test_pyproject_lists_every_package() -> None:
    """The package list is explicit (two of its packages are the repository's data folders):
    a new package of ``conformance/`` must be added to it, or the wheel would lack it."""
    listed = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"]
    found = setuptools.find_namespace_packages(str(REPO), include=["conformance", "conformance.*"])
    bundled = ["conformance._bundled.scenarios", "conformance._bundled.cassettes", "conformance._bundled.docs"]
    assert sorted(listed) == sorted([*(p for p in found if "__pycache__" not in p), *bundled])


@dataclass(frozen=True)
class Installed:
    """The wheel installed in a fresh virtualenv, and a scratch directory outside the checkout."""

    wheel: Path
    python: Path
    workdir: Path

    def run(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """``args`` under the venv's interpreter, from the scratch directory, without PYTHONPATH."""
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "CONFORMANCE_SCENARIOS")}
        return subprocess.run(
            [str(self.python), *args],
            cwd=self.workdir,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def conformance(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return self.run("-m", "conformance", *args, timeout=timeout)

    def pytest_file(self, source: str, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        """Run a user's pytest file (``source``, see ``USER_SUITES``) with the installed package,
        from the scratch directory."""
        test_file = self.workdir / "test_user_suite.py"
        test_file.write_text(source, encoding="utf-8")
        return self.run("-m", "pytest", "-p", "no:cacheprovider", str(test_file), *args, timeout=timeout)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    root = tmp_path_factory.mktemp("installed")
    wheels = root / "wheels"
    source = (
        root / "source"
    )  # a clean copy: building in the checkout leaves build/, whose stale files a later wheel keeps
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    for name in ("conformance", "scenarios", "cassettes"):
        shutil.copytree(REPO / name, source / name, ignore=ignore)
    (source / "docs").mkdir()  # the table of accepted equivalences ships as conformance._bundled.docs
    shutil.copy2(REPO / "docs" / "equivalences.md", source / "docs" / "equivalences.md")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, source / name)
    subprocess.run(  # the build requirements come from the configured index (a local one here)
        [sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "-q", "-w", str(wheels)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = wheels.glob("conformance-*.whl")
    python = venv_with_suite_dependencies(root / "venv")
    subprocess.run(
        [str(python), "-m", "pip", "install", "--no-deps", "--no-index", "--ignore-installed", "-q", str(wheel)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    workdir = root / "elsewhere"
    workdir.mkdir()
    yield Installed(wheel=wheel, python=python, workdir=workdir)


@pytest.mark.packaging
def test_the_wheel_carries_every_bundled_scenario_and_cassette(installed: Installed) -> None:
    names = zipfile.ZipFile(installed.wheel).namelist()
    cassettes = sorted(n.removeprefix("conformance/_bundled/cassettes/") for n in names if "/_bundled/cassettes/" in n)
    scenarios = sorted(
        n.removeprefix("conformance/_bundled/scenarios/")
        for n in names
        if "/_bundled/scenarios/" in n and n.endswith(".yaml")
    )
    assert cassettes == BUNDLED_CASSETTES
    assert scenarios == BUNDLED_SCENARIOS
    assert len(cassettes) > 600 and len(scenarios) > 80
    assert "conformance/_bundled/scenarios/README.md" in names
    # the table the checks read, and only it of docs/ (the checks accept nothing else)
    assert [n for n in names if "/_bundled/docs/" in n] == ["conformance/_bundled/docs/equivalences.md"]
    assert "conformance/schemas/scenario.schema.json" in names
    assert "conformance/py.typed" in names


@pytest.mark.packaging
def test_the_installed_package_is_the_wheels(installed: Installed) -> None:
    done = installed.run("-c", "import conformance; print(conformance.__file__)")
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()).is_relative_to(installed.python.parent.parent), done.stdout


@pytest.mark.packaging
def test_list_from_another_directory(installed: Installed) -> None:
    script = installed.python.parent / "conformance"  # the console script pip made
    done = installed.run(str(script), "list")
    assert done.returncode == 0, done.stderr
    assert f"Scenarios ({len(BUNDLED_SCENARIOS)}):" in done.stdout
    assert "  basic/get_time: " in done.stdout


@pytest.mark.packaging
def test_run_from_another_directory_passes_every_bundled_case(installed: Installed) -> None:
    done = installed.conformance("run", "--quiet", "--report-dir", "reports", timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    summary = done.stdout.strip().splitlines()[-1]
    # no fail, error or stale; xfail only as a bundled adapter declares it (Qwen-Agent's cache-prefix gap)
    assert re.match(r"\d+ cases: \d+ pass, (?:\d+ xfail, )?\d+ unsupported; reports:", summary), summary
    assert (installed.workdir / "reports" / "report.json").is_file()


@pytest.mark.packaging
def test_record_from_an_installed_package_needs_a_cassette_folder(installed: Installed) -> None:
    done = installed.conformance("record", "--emulator", "--adapter", "anthropic", "--scenario", "basic/get_time")
    assert done.returncode == 2
    assert "--cassette-dir DIR is required" in done.stderr
    done = installed.conformance(
        "record", "--emulator", "--adapter", "anthropic", "--scenario", "basic/get_time", "--cassette-dir", "mine"
    )
    assert done.returncode == 0, done.stderr
    assert (installed.workdir / "mine" / "anthropic" / "basic" / "get_time.yaml").is_file()


LIBRARY_SUITE = """
from conformance.adapters import get_adapter
from conformance.run.runner import RunOptions, run_suite
from conformance.scenarios.loader import load_scenarios


def test_the_bundled_scenarios_pass_for_an_adapter():
    scenarios = [s for s in load_scenarios().scenarios if s.id.startswith("basic/")]
    result = run_suite(scenarios, [get_adapter("anthropic")], RunOptions())
    assert scenarios and result.cases
    assert {c.status for c in result.cases} == {"pass"}, [c.message for c in result.cases if c.status != "pass"]
"""

PLUGIN_SUITE = """
import pytest

from conformance.adapters import for_format
from conformance.clients.translator import TranslatorClient

CLIENT = TranslatorClient(for_format("anthropic"), name="mine")


@pytest.mark.conformance(client=CLIENT, wires=["anthropic"], scenarios=["basic/get_time", "errors/rate_limit"])
def test_my_client(conformance_case):
    conformance_case.check()


@pytest.mark.conformance(adapter="gemini", scenarios=["basic/*"])
def test_my_adapter(conformance_case):
    conformance_case.check()
"""
"""The pytest plugin (its pytest11 entry point, installed with the wheel) on a client and an adapter:
2 + 2 client cases (basic/get_time and errors/rate_limit, both modes) and 8 scenarios x 2 modes of
``basic/*`` for the adapter."""

USER_SUITES = {
    "library": (LIBRARY_SUITE, "1 passed"),
    "plugin": (PLUGIN_SUITE, "20 passed"),
}
"""Pytest files a user would keep in their own repository, run against the installed package from
outside the checkout: name -> (source, what pytest's summary line must say). The files using the
pytest plugin (an adapter and a client) belong here."""


@pytest.mark.packaging
@pytest.mark.parametrize("name", sorted(USER_SUITES))
def test_a_users_pytest_file_runs_against_the_installed_package(installed: Installed, name: str) -> None:
    source, summary = USER_SUITES[name]
    done = installed.pytest_file(source, "-q")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert summary in done.stdout.strip().splitlines()[-1], done.stdout[-3000:]
