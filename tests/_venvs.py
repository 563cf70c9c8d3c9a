"""A fresh virtualenv that reads the suite's dependencies from the running environment, for tests that
install something into it (a wheel, a user's project) without an index or the network."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path

__all__ = ["venv_with_suite_dependencies"]


def venv_with_suite_dependencies(folder: Path) -> Path:
    """A new virtualenv in ``folder``; its python. The suite's dependencies come as the running
    environment has them (a virtualenv's own packages are not the system site's): a path line in a .pth
    file, after the venv's own site-packages, where whatever is installed into it goes; the running
    environment's own .pth files (an editable install of ``conformance``) are not read from there."""
    subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True, timeout=300)
    python = folder / "bin" / "python"
    inner = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout.strip()
    outer = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (Path(inner) / "_suite_dependencies.pth").write_text("".join(f"{p}\n" for p in sorted(outer)), encoding="utf-8")
    return python
