"""Screenshot HTML reports in headless Chromium, and drive the page the way a reader does.

    python scripts/screenshot_report.py                  # -> docs/images/report-passed.png, report-failed.png
    python scripts/screenshot_report.py --sample --out /tmp/m.png --html /tmp/report.html

By default two real runs of the bundled scenarios are rendered: the eight bundled adapters (every
case passes or is unsupported: the page says *passed*), and the same run with ``openai_chat``
replaced by the self-test mutant ``MUTANT`` (``conformance.selftest``: a real bug, so real
findings). The second picture is taken with the page's ``fail`` filter on and the first failing case
open, the way a reader looks for the bug. ``--sample`` renders a made-up run with every status
instead (every colour of the matrix). ``Browser`` drives Chromium over the DevTools protocol on a
pipe (``--remote-debugging-pipe``: no port is opened), so the same page can be measured and
clicked in the tests (tests/scripts/test_screenshot_report.py). Needs the ``chromium`` binary
(Debian: ``apt-get install -y chromium``). Exit codes: 0 written, 1 Chromium failed or wrote no
PNG, 2 Chromium not found.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import fcntl
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Any

from conformance import __version__
from conformance.reporting import render_html
from conformance.verdicts import AdapterInfo, CaseResult, CheckVerdict, Finding, RunResult, ScenarioInfo, Status

__all__ = ["Browser", "BrowserError", "find_chromium", "main", "real_run", "sample_run", "screenshot"]

REPO = Path(__file__).resolve().parents[1]
IMAGES = REPO / "docs" / "images"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
MUTANT = "openai_chat~merge_parallel_by_index"
"""The self-test mutant the failing picture runs in place of its reference adapter."""
WINDOW = (1400, 1000)

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
    "names/dotted": "MCP tool names with dots reach the wire as names the provider accepts.",
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
    ("names/dotted", "openai_chat"): ("left", "left"),
    ("choice/required", "anthropic"): ("pass", "deviated"),
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
                        "model": "claude-sonnet-5",
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
    elif status == "left":
        finding = Finding(
            check="translation.tool_names",
            message="wire name is not valid for openai_chat (^[a-zA-Z0-9_-]{1,64}$)",
            path="tools[0]",
            expected="^[a-zA-Z0-9_-]{1,64}$",
            actual="gmail.search",
            kind="left",
            remedy="tool names outside ^[a-zA-Z0-9_-]{1,64}$ reach OpenAI as given: the API answers 400; map them"
            " yourself and map the model's calls back",
        )
        checks.append(CheckVerdict(check="translation.tool_names", status="left", findings=(finding,)))
    elif status == "deviated":  # a live model's choice (docs/servers.md): never a defect
        message = 'model deviated: turn 0 (stream): answered in text ("It is 3 pm.") where the scenario expects a call'
        checks.append(CheckVerdict(check="server.model", status="deviated", message=message))
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


class BrowserError(RuntimeError):
    """Chromium could not be started, closed its pipe, or answered a DevTools call with an error."""


class Browser:
    """One headless Chromium page driven over the DevTools protocol (JSON messages ending in a NUL byte,
    written to the browser's fd 3 and read from its fd 4: ``--remote-debugging-pipe``).

    ``open`` loads a URL and returns the seconds until its load event; ``evaluate`` runs JavaScript
    in the page (DevTools is not bound by the page's Content-Security-Policy, the page's own scripts
    are); ``console`` holds the messages the page logged, CSP violations among them."""

    def __init__(self, chromium: str, *, size: tuple[int, int] = WINDOW, timeout: float = 60.0) -> None:
        self.timeout = timeout
        self.console: list[str] = []
        self._profile = tempfile.TemporaryDirectory(prefix="conformance-chromium-")
        read_end, self._out = os.pipe()
        self._in, write_end = os.pipe()
        # above fd 9, so that putting them on fds 3 and 4 in the child never overwrites one of them
        to_browser, from_browser = (fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (read_end, write_end))
        os.close(read_end)
        os.close(write_end)
        command = [
            chromium,
            "--headless",
            "--disable-gpu",
            "--hide-scrollbars",
            "--no-first-run",
            "--no-default-browser-check",
            "--remote-debugging-pipe",
            f"--user-data-dir={self._profile.name}",
            f"--window-size={size[0]},{size[1]}",
            "about:blank",
        ]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            command.insert(1, "--no-sandbox")  # Chromium refuses to run as root with its sandbox on
        # a small Python puts the two pipe ends on fds 3 and 4, where Chromium looks for them, then execs it
        trampoline = "import os, sys; os.dup2(int(sys.argv[1]), 3); os.dup2(int(sys.argv[2]), 4); "
        trampoline += "os.close(int(sys.argv[1])); os.close(int(sys.argv[2])); os.execvp(sys.argv[3], sys.argv[3:])"
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-c", trampoline, str(to_browser), str(from_browser), *command],
                pass_fds=(to_browser, from_browser),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        finally:
            os.close(to_browser)
            os.close(from_browser)
        self._buffer = b""
        self._events: list[dict[str, Any]] = []
        self._next = 0
        try:
            target = self._call("Target.createTarget", {"url": "about:blank"})["targetId"]
            self._session = self._call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            for domain in ("Page", "Runtime", "Log"):
                self.call(f"{domain}.enable")
            self.call(
                "Emulation.setDeviceMetricsOverride",
                {"width": size[0], "height": size[1], "deviceScaleFactor": 1, "mobile": False},
            )
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            if self._process.poll() is None:
                self._send({"id": 0, "method": "Browser.close"})
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        for fd in (self._out, self._in):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._profile.cleanup()

    # -- the page ------------------------------------------------------------------------------------

    def open(self, url: str) -> float:
        """Load ``url`` and wait for its load event; the seconds it took."""
        self._events.clear()
        started = time.perf_counter()
        self.call("Page.navigate", {"url": url})
        self._wait_event("Page.loadEventFired")
        return time.perf_counter() - started

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (a promise is awaited)."""
        answer = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in answer:
            raise BrowserError(f"{expression[:80]!r} raised: {json.dumps(answer['exceptionDetails'])[:1000]}")
        return answer["result"].get("value")

    def screenshot(self, png: Path, *, full_height: int | None = None) -> None:
        """The viewport (or its top ``full_height`` pixels of page) as a PNG."""
        params: dict[str, Any] = {"format": "png"}
        if full_height is not None:
            width = self.evaluate("document.documentElement.clientWidth")
            params |= {
                "clip": {"x": 0, "y": 0, "width": width, "height": full_height, "scale": 1},
                "captureBeyondViewport": True,
            }
        data = base64.b64decode(self.call("Page.captureScreenshot", params)["data"])
        png.parent.mkdir(parents=True, exist_ok=True)
        png.write_bytes(data)

    # -- the protocol --------------------------------------------------------------------------------

    def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """One DevTools call on the page's session; its result."""
        result: dict[str, Any] = self._call(method, params, session=self._session)
        return result

    def _call(self, method: str, params: dict[str, Any] | None = None, *, session: str | None = None) -> Any:
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        self._send(message)
        while True:
            answer = self._read()
            if answer.get("id") == self._next:
                if "error" in answer:
                    raise BrowserError(f"{method}: {answer['error']}")
                return answer.get("result", {})
            self._keep(answer)

    def _wait_event(self, name: str) -> dict[str, Any]:
        while True:
            for event in self._events:
                if event.get("method") == name:
                    self._events.remove(event)
                    return event
            self._keep(self._read())

    def _keep(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        params = message.get("params", {})
        if method == "Log.entryAdded":
            self.console.append(f"{params['entry'].get('level')}: {params['entry'].get('text')}")
        elif method == "Runtime.consoleAPICalled":
            self.console.append(f"{params.get('type')}: {json.dumps(params.get('args'))[:500]}")
        elif method is not None:
            self._events.append(message)

    def _send(self, message: dict[str, Any]) -> None:
        os.write(self._out, json.dumps(message).encode() + b"\0")

    def _read(self) -> dict[str, Any]:
        deadline = time.monotonic() + self.timeout
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._in], [], [], left)[0]:
                raise BrowserError(f"Chromium sent nothing for {self.timeout:.0f} s")
            chunk = os.read(self._in, 1 << 16)
            if not chunk:
                raise BrowserError(f"Chromium closed its DevTools pipe (exit code {self._process.poll()})")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        message: dict[str, Any] = json.loads(raw)
        return message


def find_chromium(given: str | None = None) -> str | None:
    """The Chromium binary: ``given``, else ``chromium`` or ``chromium-browser`` on PATH."""
    return given or shutil.which("chromium") or shutil.which("chromium-browser")


def real_run(mutant: str | None = None) -> RunResult:
    """The bundled scenarios against the eight bundled adapters, replayed from the bundled cassettes as
    ``conformance run`` does; ``mutant``: a self-test mutant in place of its reference adapter."""
    from conformance.adapters import get_adapter, native_adapters, prompt_adapters
    from conformance.run.runner import RunOptions, run_suite
    from conformance.scenarios.loader import load_scenarios
    from conformance.selftest._mutants import MUTANTS

    adapters = [get_adapter(name) for name in (*native_adapters(), *prompt_adapters())]
    if mutant is not None:
        bug = MUTANTS[mutant]
        adapters = [bug.adapter() if adapter.name == bug.base else adapter for adapter in adapters]
    loaded = load_scenarios([])
    options = RunOptions(jobs=os.cpu_count() or 1)
    return run_suite(loaded.scenarios, adapters, options, problems=[str(p) for p in loaded.problems])


def screenshot(html_path: Path, png_path: Path, *, chromium: str, window_size: str = "1280,900") -> None:
    """Load ``html_path`` in headless Chromium and save a PNG of the window (raises on failure)."""
    width, height = (int(n) for n in window_size.split(","))
    with Browser(chromium, size=(width, height)) as browser:
        browser.open(html_path.resolve().as_uri())
        browser.screenshot(png_path)
    if not png_path.is_file():
        raise BrowserError(f"Chromium wrote no {png_path}")


_SHOW_FAILURES = """(() => {
  document.querySelector('label[for="show-fail"]').click();
  const first = document.querySelector('details.case.is-fail');
  first.open = true;
  return first.querySelector('.case-body').id;
})()"""

_OPEN_FIRST_FINDING = """(() => {
  const finding = document.querySelector('details.case.is-fail[open] .finding');
  window.scrollTo(0, finding.closest('details').getBoundingClientRect().top + window.scrollY - 90);
  return window.scrollY;
})()"""


def real_screenshots(images: Path, chromium: str, html_dir: Path) -> list[Path]:
    """``report-passed.png`` (the top of the page of a run of the bundled adapters), ``report-failed.png``
    (a run with ``MUTANT``, the fail filter on) and ``report-failed-case.png`` (its first failing case
    open, expected and actual side by side)."""
    passed, failed = html_dir / "report-passed.html", html_dir / "report-failed.html"
    passed.write_text(render_html(real_run()), encoding="utf-8")
    failed.write_text(render_html(real_run(MUTANT)), encoding="utf-8")
    out = [images / "report-passed.png", images / "report-failed.png", images / "report-failed-case.png"]
    with Browser(chromium) as browser:
        browser.open(passed.resolve().as_uri())
        browser.screenshot(out[0])
        browser.open(failed.resolve().as_uri())
        browser.evaluate(_SHOW_FAILURES)
        browser.screenshot(out[1])
        browser.evaluate(_OPEN_FIRST_FINDING)
        browser.screenshot(out[2])
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--images", type=Path, default=IMAGES, help=f"where the PNGs go (default {IMAGES})")
    parser.add_argument("--sample", action="store_true", help="screenshot the made-up sample run into --out")
    parser.add_argument("--out", type=Path, default=IMAGES / "report-sample.png", help="the PNG of --sample")
    parser.add_argument("--html", type=Path, help="keep the rendered HTML here (a file with --sample, else a folder)")
    parser.add_argument("--chromium", help="the Chromium binary (default: chromium on PATH)")
    parser.add_argument("--window-size", default="1280,900", help="of --sample (default 1280,900)")
    args = parser.parse_args(argv)
    chromium = find_chromium(args.chromium)
    if not chromium:
        print(
            "chromium not found: install it (Debian: apt-get install -y chromium), or pass --chromium PATH",
            file=sys.stderr,
        )
        return 2
    with tempfile.TemporaryDirectory(prefix="conformance-report-") as scratch:
        try:
            if args.sample:
                html_path = args.html or Path(scratch) / "report.html"
                html_path.parent.mkdir(parents=True, exist_ok=True)
                html_path.write_text(render_html(sample_run()), encoding="utf-8")
                screenshot(html_path, args.out, chromium=chromium, window_size=args.window_size)
                written = [args.out]
            else:
                html_dir = args.html or Path(scratch)
                html_dir.mkdir(parents=True, exist_ok=True)
                written = real_screenshots(args.images, chromium, html_dir)
        except (BrowserError, subprocess.TimeoutExpired, OSError) as error:
            print(f"screenshot failed: {error}", file=sys.stderr)
            return 1
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
