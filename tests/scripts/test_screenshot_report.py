"""scripts/screenshot_report.py: the sample has every status; in a real headless Chromium the page renders,
following a matrix link opens the case's <details>, and the DevTools driver reports a browser that
cannot start. (The report's DOM in Chromium is checked in tests/reporting/test__html.py.)"""

from __future__ import annotations

import importlib.util
import os
import re
import struct
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from conformance.reporting import render_html
from conformance.verdicts import STATUS_ORDER

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "screenshot_report.py"
CHROMIUM = Path("/usr/bin/chromium")
needs_chromium = pytest.mark.skipif(
    not CHROMIUM.exists(),
    reason=f"headless Chromium is not installed ({CHROMIUM} missing; apt-get install -y chromium)",
)


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("screenshot_report", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_sample_run_shows_every_status() -> None:
    run = load_script().sample_run()
    assert {case.status for case in run.cases} == set(STATUS_ORDER)
    assert {case.adapter for case in run.cases} == {a.name for a in run.adapters}


def test_a_missing_browser_is_reported_not_raised(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = load_script().main(
        ["--sample", "--out", str(tmp_path / "m.png"), "--chromium", str(tmp_path / "no-such-chromium")]
    )
    assert code == 1
    assert "screenshot failed" in capsys.readouterr().err
    assert not (tmp_path / "m.png").exists()


@pytest.mark.browser
@needs_chromium
def test_the_script_writes_a_png_of_the_window(tmp_path: Path) -> None:
    out, page = tmp_path / "matrix.png", tmp_path / "report.html"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--sample", "--out", str(out), "--html", str(page), "--window-size", "1280,900"],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert data[12:16] == b"IHDR"
    assert struct.unpack(">II", data[16:24]) == (1280, 900)
    assert len(data) > 20_000  # a coloured matrix, not a blank page (a blank 1280x900 PNG is ~5 KB)
    assert 'class="matrix"' in page.read_text(encoding="utf-8")


@pytest.mark.browser
@needs_chromium
def test_following_a_matrix_link_opens_the_case_in_the_browser(tmp_path: Path) -> None:
    module = load_script()
    page = tmp_path / "report.html"
    page.write_text(render_html(module.sample_run()), encoding="utf-8")
    anchor = "case-anthropic-results-error-result-non_stream"
    assert f'href="#{anchor}"' in page.read_text(encoding="utf-8")
    command = [str(CHROMIUM), "--headless", "--disable-gpu", f"--user-data-dir={tmp_path / 'profile'}"]
    if os.geteuid() == 0:
        command.append("--no-sandbox")
    command += ["--virtual-time-budget=2000", "--dump-dom", f"{page.as_uri()}#{anchor}"]
    dom = subprocess.run(command, capture_output=True, text=True, timeout=240, check=False).stdout
    opened = [chunk for chunk in re.split(r'<details class="case[^"]*"', dom)[1:] if chunk.startswith(' open=""')]
    assert len(opened) == 1, "the browser should open exactly the <details> holding the link's target"
    assert f'id="{anchor}"' in opened[0].split("</details>")[0]
