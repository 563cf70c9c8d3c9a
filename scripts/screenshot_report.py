"""Render a sample HTML report and screenshot it with headless Chromium (checks the page in a real browser).

    python scripts/screenshot_report.py                                  # -> docs/images/report-matrix.png
    python scripts/screenshot_report.py --out /tmp/m.png --html /tmp/report.html

The sample run is made up (five reference adapters, eight scenarios, every status: pass, fail,
error, unsupported, xfail, stale) so the picture shows every colour of the matrix. Needs the
``chromium`` binary (Debian: ``apt-get install -y chromium``). Exit codes: 0 written, 1 Chromium
failed or wrote no PNG, 2 Chromium not found.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from conformance import __version__
from conformance.reporting import render_html
from conformance.verdicts import AdapterInfo, CaseResult, CheckVerdict, Finding, RunResult, ScenarioInfo, Status

__all__ = ["main", "sample_run", "screenshot"]

REPO = Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO / "docs" / "images" / "report-matrix.png"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

ADAPTERS = ("openai_chat", "openai_responses", "anthropic", "gemini", "ollama")
SCENARIOS = {
    "basic/get-time": "A single tool call with one numeric argument.",
    "basic/no-tool-needed": "The model answers in text; no tool call is made.",
    "parallel/two-cities": "Two calls to the same tool in one turn, results fed back in order.",
    "results/error-result": "A tool result flagged as an error reaches the model as an error.",
    "choice/required": "tool_choice=required forces a call.",
    "streaming/long-arguments": "Arguments streamed in many small chunks concatenate to valid JSON.",
    "results/image-result": "A tool result holding an image.",
    "errors/rate-limit": "A 429 with retry-after maps to rate_limit with its delay.",
}

# (scenario, adapter) -> (non-stream status, stream status); every other pair passes in both modes
OUTCOMES: dict[tuple[str, str], tuple[Status, Status]] = {
    ("results/error-result", "anthropic"): ("fail", "fail"),
    ("choice/required", "gemini"): ("xfail", "xfail"),
    ("choice/required", "ollama"): ("unsupported", "unsupported"),
    ("results/image-result", "ollama"): ("unsupported", "unsupported"),
    ("results/image-result", "openai_chat"): ("unsupported", "unsupported"),
    ("streaming/long-arguments", "openai_responses"): ("pass", "error"),
    ("streaming/long-arguments", "ollama"): ("pass", "stale"),
    ("errors/rate-limit", "gemini"): ("fail", "pass"),
}


def _case(scenario: str, adapter: str, mode: str, status: Status) -> CaseResult:
    cassette = f"cassettes/{adapter}/{scenario}.yaml"
    checks = [CheckVerdict(check="translation.tools", status="pass")]
    message, traceback = "", None
    exchanges: tuple[dict[str, object], ...] = ()
    if status == "fail" and scenario == "results/error-result":
        finding = Finding(
            check="translation.tool_result",
            message="the tool result lost its error flag",
            path="$.messages[2].content[0].is_error",
            expected=True,
            actual=None,
        )
        checks.append(CheckVerdict(check="translation.tool_result", status="fail", findings=(finding,)))
        exchanges = (
            {
                "request": {
                    "method": "POST",
                    "path": "/v1/messages",
                    "headers": {"x-api-key": "REDACTED", "anthropic-version": "2023-06-01"},
                    "body": {
                        "model": "claude-sonnet-4-5",
                        "messages": [
                            {"role": "user", "content": "What time is it in Paris?"},
                            {
                                "role": "assistant",
                                "content": [{"type": "tool_use", "id": "toolu_01", "name": "getTime", "input": {}}],
                            },
                            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01"}]},
                        ],
                    },
                },
                "status": 200,
                "response": '{"type": "message", "stop_reason": "end_turn", '
                '"content": [{"type": "text", "text": "12:00"}]}',
            },
        )
    elif status == "fail":
        finding = Finding(
            check="recovery.retry_after",
            message="retry-after header not carried into the error",
            path="$.error.retry_after",
            expected=2.0,
            actual=None,
        )
        checks.append(CheckVerdict(check="recovery.retry_after", status="fail", findings=(finding,)))
    elif status == "error":
        checks = []
        message = "the adapter did not finish the stream within 10 s"
        traceback = (
            "Traceback (most recent call last):\n"
            '  File "conformance/run/runner.py", line 88, in run_case\n'
            "    events = list(adapter.stream_from_wire(chunks))\n"
            "TimeoutError: no event for 10 s after 'response.function_call_arguments.delta'"
        )
    elif status == "xfail":
        checks.append(CheckVerdict(check="translation.tool_choice", status="xfail", message="declared known gap"))
    elif status == "stale":
        checks.append(
            CheckVerdict(check="streaming.lifecycle", status="stale", message="declared known gap, but it now passes")
        )
    elif status == "unsupported":
        checks = []
        message = f"requires a capability {adapter} does not declare"
    return CaseResult(
        adapter=adapter,
        scenario=scenario,
        mode=mode,  # type: ignore[arg-type]
        status=status,
        checks=tuple(checks),
        message=message,
        traceback=traceback,
        duration=0.042,
        cassette=cassette,
        exchanges=exchanges,
    )


def sample_run() -> RunResult:
    """A made-up run with every status, shaped like a real one."""
    cases = []
    for scenario in SCENARIOS:
        for adapter in ADAPTERS:
            statuses = OUTCOMES.get((scenario, adapter), ("pass", "pass"))
            for mode, status in zip(("non_stream", "stream"), statuses, strict=True):
                cases.append(_case(scenario, adapter, mode, status))
    provenance = {
        f"cassettes/{adapter}/{scenario}.yaml": {
            "suite": f"conformance {__version__}",
            "adapter": adapter,
            "mode": "emulator",
            "base_url": "http://127.0.0.1",
            "scenario": scenario,
        }
        for scenario in list(SCENARIOS)[:2]
        for adapter in ADAPTERS
    }
    return RunResult(
        suite_version=__version__,
        adapters=tuple(AdapterInfo(name=name, wire_format=name) for name in ADAPTERS),
        scenarios=tuple(ScenarioInfo(id=sid, behavior=text, source="sample") for sid, text in SCENARIOS.items()),
        cases=tuple(cases),
        provenance=provenance,
    )


def screenshot(html_path: Path, png_path: Path, *, chromium: str, window_size: str = "1280,900") -> None:
    """Load ``html_path`` in headless Chromium and save a PNG of the window (raises on failure)."""
    png_path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="conformance-chromium-") as profile:
        command = [
            chromium,
            "--headless",
            "--disable-gpu",
            "--hide-scrollbars",
            "--no-first-run",
            "--no-default-browser-check",
            f"--user-data-dir={profile}",
            f"--window-size={window_size}",
            f"--screenshot={png_path}",
            html_path.resolve().as_uri(),
        ]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            command.insert(1, "--no-sandbox")  # Chromium refuses to run as root with its sandbox on
        done = subprocess.run(command, capture_output=True, text=True, timeout=180, check=False)
    if done.returncode != 0 or not png_path.is_file():
        raise RuntimeError(f"chromium exited with {done.returncode} and wrote no {png_path}:\n{done.stderr[-2000:]}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"the PNG to write (default {DEFAULT_OUT})")
    parser.add_argument("--html", type=Path, help="also keep the rendered HTML here (default: a temporary file)")
    parser.add_argument("--chromium", help="the Chromium binary (default: chromium on PATH)")
    parser.add_argument("--window-size", default="1280,900")
    args = parser.parse_args(argv)
    chromium = args.chromium or shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        print(
            "chromium not found: install it (Debian: apt-get install -y chromium), or pass --chromium PATH",
            file=sys.stderr,
        )
        return 2
    page = render_html(sample_run())
    with tempfile.TemporaryDirectory(prefix="conformance-report-") as scratch:
        html_path = args.html or Path(scratch) / "report.html"
        html_path.parent.mkdir(parents=True, exist_ok=True)
        html_path.write_text(page, encoding="utf-8")
        try:
            screenshot(html_path, args.out, chromium=chromium, window_size=args.window_size)
        except (RuntimeError, subprocess.TimeoutExpired, OSError) as error:
            print(f"screenshot failed: {error}", file=sys.stderr)
            return 1
    print(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
