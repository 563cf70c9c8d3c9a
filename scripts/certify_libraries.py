"""Certify the client libraries people really use, each at a pinned version in its own virtualenv.

For each library: build ``.venvs/<name>`` (``python -m venv`` + ``pip install`` of its pins; cached:
skipped when it exists with the same pins, rebuilt with ``--rebuild``), then run
``python -m conformance certify --client examples/clients/<driver>.py:CLIENT --python
.venvs/<name>/bin/python --report-dir docs/certified/<name> --format json,md``. The suite itself is
not installed in the venvs: the harness puts its source on the child's ``PYTHONPATH``. Finally
``docs/certified/README.md`` gets a table (library, version, wire, pass/fail/unsupported/xfail
counts) and every FAIL finding (check id, scenario, mode, JSON path, expected vs actual).

Each library gets its own venv because their provider-SDK pins clash (litellm, pydantic-ai and the
LangChain integrations each want their own openai/anthropic/google-genai).

    python scripts/certify_libraries.py [--only NAME ...] [--rebuild] [--no-certify] [--readme-only]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
VENVS = ROOT / ".venvs"
CERTIFIED = ROOT / "docs" / "certified"
PINS_FILE = "conformance-pins.txt"
TIMINGS_FILE = "build-seconds.txt"


@dataclass(frozen=True)
class Library:
    name: str
    """The venv and report folder name."""
    driver: str
    """The driver file under examples/clients/."""
    pins: tuple[str, ...]
    """What pip installs (exact versions)."""
    dist: str
    """The distribution whose version the table shows."""
    kind: str
    """``sdk`` (an official provider SDK, the baseline) or ``library``."""


LIBRARIES: tuple[Library, ...] = (
    Library("openai", "openai_driver.py", ("openai==3.57.0",), "openai", "sdk"),
    Library("anthropic", "anthropic_driver.py", ("anthropic==2.14.0",), "anthropic", "sdk"),
    Library("google-genai", "google_genai_driver.py", ("google-genai==3.6.1",), "google-genai", "sdk"),
    Library("ollama", "ollama_driver.py", ("ollama==0.6.3",), "ollama", "sdk"),
    Library("litellm", "litellm_driver.py", ("litellm==1.110.2",), "litellm", "library"),
    Library(
        "pydantic-ai",
        "pydantic_ai_driver.py",
        ("pydantic-ai-slim[openai,anthropic,google]==2.68.0",),
        "pydantic-ai-slim",
        "library",
    ),
    Library(
        "langchain-openai", "langchain_openai_driver.py", ("langchain-openai==1.7.4",), "langchain-openai", "library"
    ),
    Library(
        "langchain-anthropic",
        "langchain_anthropic_driver.py",
        ("langchain-anthropic==1.7.10",),
        "langchain-anthropic",
        "library",
    ),
)


NOTES: dict[str, tuple[str, ...]] = {
    "litellm": (
        "`is_error` dropped from Anthropic tool results (FAIL `translation.wire_paths` "
        "`$.messages[2].content[0].is_error` in `tool_results/is_error`, `recovery/tool_error_self_correct`, "
        "`mcp/*`): `litellm/litellm_core_utils/prompt_templates/factory.py:1942-1948` builds the `tool_result` "
        "from `tool_call_id` and `content` only (\"We can't determine from openai message format whether it's a "
        "successful or error call result\"); the same for Gemini's `functionResponse` (no `response.error`, "
        "`factory.py:1753-1758`).",
        "Gemini `functionCall.id` is sent back only for model names it classes as Gemini 3 or newer: "
        '`factory.py:1409` (`tool_call_id=(tool.get("id") if forward_function_call_id else None)`) and '
        "`factory.py:1724` (`functionResponse.id`), gated by `VertexGeminiConfig._forward_gemini_function_call_id` "
        "(`llms/vertex_ai/gemini/vertex_and_google_ai_studio_gemini.py:860-867`). The suite asks for "
        "`gemini-3.5-flash` and the bundled Gemini cassettes carry no `functionCall.id`, so this shows no FAIL here.",
        "A Gemini `functionCall` without `args` (a no-argument call) crashes the stream parser with `KeyError: 'args'` "
        "(`vertex_and_google_ai_studio_gemini.py:2320`).",
        "Ollama: an extra `POST /api/show` (model info, `llms/ollama/common_utils.py:248`) on the first call of a "
        "process, counted by `client.one_request`.",
    ),
    "pydantic-ai": (
        "A non-streamed Anthropic call is sent with `stream: true` when `max_tokens` is not set (FAIL "
        "`client.stream_mode`): `AnthropicModel.request` asks `_messages_create(..., False, ...)` "
        "(`pydantic_ai/models/anthropic/__init__.py:1306`), whose default `max_tokens` is the model's maximum output "
        "(64000, `_default_max_tokens`, line 950); above `_MAX_NON_STREAMING_TOKENS = 21_333` (line 886) it streams "
        "behind the scenes (lines 1742-1747 with a timeout set, lines 1748-1753 on the SDK's 'Streaming is required' "
        "error otherwise, `anthropic/_base_client.py:871`).",
        "Gemini `STOP` is reported as finish reason `stop` even when the answer holds function calls "
        "(`pydantic_ai/models/google.py:203`).",
        "OpenAI tools are made strict (`strict: true`, `additionalProperties: false`) when their schema allows it "
        "(`pydantic_ai/profiles/openai.py`, the OpenAI JSON-schema transformer).",
    ),
    "langchain-anthropic": (
        "A 503 (`anthropic.ServiceUnavailableError`) is re-raised as `AnthropicAPIError`, an "
        "`anthropic.InternalServerError` (`langchain_anthropic/chat_models.py:1245`, `_handle_anthropic_api_error`).",
        "A tool call whose arguments are not a JSON object makes `AIMessage` validation raise (untyped "
        "`pydantic_core.ValidationError`).",
    ),
    "langchain-openai": (
        "`reasoning_content` deltas are dropped (no reasoning events); a malformed body raises an untyped "
        "`json.JSONDecodeError`.",
    ),
}
"""Defects confirmed in the library's source at the pinned version (file:line in its venv)."""


def _python(venv: Path) -> Path:
    return venv / "bin" / "python"


def build_venv(lib: Library, *, rebuild: bool) -> tuple[Path, float | None]:
    """The venv's python, and the seconds its build took (None: it was cached)."""
    venv = VENVS / lib.name
    pins_text = "\n".join(lib.pins) + "\n"
    marker = venv / PINS_FILE
    if not rebuild and _python(venv).exists() and marker.exists() and marker.read_text() == pins_text:
        print(f"[{lib.name}] venv cached ({', '.join(lib.pins)})", flush=True)
        return _python(venv), None
    if venv.exists():
        shutil.rmtree(venv)
    print(f"[{lib.name}] building {venv.relative_to(ROOT)}: {' '.join(lib.pins)}", flush=True)
    start = time.monotonic()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run(
        [str(_python(venv)), "-m", "pip", "install", "--disable-pip-version-check", "-q", *lib.pins], check=True
    )
    seconds = time.monotonic() - start
    marker.write_text(pins_text)
    (venv / TIMINGS_FILE).write_text(f"{seconds:.1f}\n")
    print(f"[{lib.name}] built in {seconds:.1f}s", flush=True)
    return _python(venv), seconds


def installed_version(python: Path, dist: str) -> str:
    code = f"from importlib.metadata import version; print(version({dist!r}))"
    done = subprocess.run([str(python), "-c", code], capture_output=True, text=True)
    return done.stdout.strip() or "?"


def certify(lib: Library, python: Path) -> int:
    driver = ROOT / "examples" / "clients" / lib.driver
    if not driver.exists():
        print(f"[{lib.name}] no driver {driver.relative_to(ROOT)}: skipped", flush=True)
        return -1
    command = [
        sys.executable,
        "-m",
        "conformance",
        "certify",
        "--client",
        f"{driver.relative_to(ROOT)}:CLIENT",
        "--python",
        str(python.relative_to(ROOT)),
        "--report-dir",
        str((CERTIFIED / lib.name).relative_to(ROOT)),
        "--format",
        "json,md",
    ]
    print(f"[{lib.name}] {' '.join(command[1:])}", flush=True)
    start = time.monotonic()
    code = subprocess.run(command, cwd=ROOT).returncode
    print(f"[{lib.name}] certify exited {code} after {time.monotonic() - start:.1f}s", flush=True)
    return code


# --------------------------------------------------------------------------------------------
# docs/certified/README.md
# --------------------------------------------------------------------------------------------

COUNTED = ("pass", "fail", "unsupported", "xfail", "stale", "error")


def _load_report(folder: Path) -> dict[str, Any] | None:
    candidates = [folder / "report.json", *sorted(folder.glob("*.json"))]
    for path in candidates:
        if path.is_file():
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except ValueError:
                continue
            if isinstance(data, dict) and isinstance(data.get("cases"), list):
                return data
    return None


def _wire_of(case: dict[str, Any], adapters: dict[str, str]) -> str:
    return str(case.get("wire") or adapters.get(str(case.get("adapter")), case.get("adapter") or "?"))


def _cell(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else json.dumps(value)
    text = text if len(text) <= 160 else text[:157] + "..."
    return text.replace("|", "\\|").replace("\n", " ")


def summarize(lib: Library, version: str) -> tuple[list[str], list[str]]:
    """The table rows and the FAIL finding lines of one library."""
    report = _load_report(CERTIFIED / lib.name)
    if report is None:
        why = "no report" if (ROOT / "examples" / "clients" / lib.driver).exists() else f"no driver `{lib.driver}` yet"
        return [f"| {lib.name} | {version} | ({why}) | | | | | |"], []
    adapters = {str(a.get("name")): str(a.get("wire_format") or a.get("name")) for a in report.get("adapters", [])}
    tallies: dict[str, dict[str, int]] = {}
    failures: dict[str, list[str]] = {}  # a finding line without its mode -> the modes showing it
    for case in report["cases"]:
        wire = _wire_of(case, adapters)
        tally = tallies.setdefault(wire, dict.fromkeys(COUNTED, 0))
        status = str(case.get("status"))
        tally[status] = tally.get(status, 0) + 1
        scenario, mode = case.get("scenario", "?"), case.get("mode", "?")
        if status == "error":
            failures.setdefault(
                f"- ERROR `{wire}` `{scenario}` {{modes}}: {_cell(case.get('message', ''))}", []
            ).append(mode)
        for check in case.get("checks", []):
            if check.get("status") != "fail":
                continue
            findings = check.get("findings") or [{"message": check.get("message", "")}]
            for f in findings:
                where = f" `{f['path']}`" if f.get("path") else ""
                turn = f" turn {f['turn']}" if f.get("turn") is not None else ""
                diff = ""
                if "expected" in f or "actual" in f:
                    diff = f": expected {_cell(f.get('expected'))}, actual {_cell(f.get('actual'))}"
                message = f" ({_cell(f.get('message'))})" if f.get("message") else ""
                line = f"- `{check.get('check')}` `{wire}` `{scenario}` {{modes}}{turn}{where}{diff}{message}"
                failures.setdefault(line, []).append(mode)
    rows = []
    for wire, t in sorted(tallies.items()):
        counts = " | ".join(str(t.get(s, 0)) for s in ("pass", "fail", "unsupported", "xfail"))
        extra = ", ".join(f"{s} {t[s]}" for s in ("stale", "error") if t.get(s))
        rows.append(f"| {lib.name} | {version} | {wire} | {counts} | {extra} |")
    lines = [line.replace("{modes}", "[" + ", ".join(dict.fromkeys(modes)) + "]") for line, modes in failures.items()]
    return rows, lines


def write_readme(libs: list[Library], versions: dict[str, str], seconds: dict[str, str]) -> Path:
    lines = [
        "# Certified client libraries",
        "",
        "Written by `scripts/certify_libraries.py`: each library at a pinned version in its own virtualenv",
        "(`.venvs/<name>`), driven by `examples/clients/<driver>.py` through `conformance certify --python`",
        "against every scenario over the loopback emulator. One folder per library holds its JSON and",
        "Markdown report. Official SDKs are the baseline; a FAIL is a behaviour of the library at that",
        "version (the drivers pass data through as a user of the library would).",
        "",
        "| library | version | wire | pass | fail | unsupported | xfail | other |",
        "|---|---|---|---|---|---|---|---|",
    ]
    all_failures: list[tuple[str, list[str]]] = []
    for lib in libs:
        rows, failures = summarize(lib, versions.get(lib.name, "?"))
        lines.extend(rows)
        all_failures.append((lib.name, failures))
    lines += ["", "## Virtualenv build times", ""]
    lines += [f"- {lib.name} (`{' '.join(lib.pins)}`): {seconds.get(lib.name, '?')}" for lib in libs]
    lines += ["", "## FAIL findings", ""]
    for name, failures in all_failures:
        lines.append(f"### {name}")
        lines.append("")
        if NOTES.get(name):
            lines.append("Confirmed in the library's source (paths under its venv's `site-packages`):")
            lines.append("")
            lines.extend(f"- {note}" for note in NOTES[name])
            lines.append("")
            lines.append("Findings:")
            lines.append("")
        lines.extend(failures or ["None."])
        lines.append("")
    path = CERTIFIED / "README.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines).rstrip() + "\n", encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", metavar="NAME", help="only this library (repeatable)")
    parser.add_argument("--rebuild", action="store_true", help="rebuild the venvs even when cached")
    parser.add_argument("--no-certify", action="store_true", help="build the venvs only")
    parser.add_argument("--readme-only", action="store_true", help="only rewrite the README from the reports there")
    args = parser.parse_args(argv)
    names = {lib.name for lib in LIBRARIES}
    if args.only and (unknown := sorted(set(args.only) - names)):
        parser.error(f"unknown library {', '.join(unknown)} (known: {', '.join(sorted(names))})")
    libs = [lib for lib in LIBRARIES if not args.only or lib.name in args.only]
    versions: dict[str, str] = {}
    seconds: dict[str, str] = {}
    failed = False
    for lib in [] if args.readme_only else libs:
        try:
            python, took = build_venv(lib, rebuild=args.rebuild)
        except subprocess.CalledProcessError as exc:
            print(f"[{lib.name}] venv build failed: {exc}", flush=True)
            failed = True
            continue
        timing = VENVS / lib.name / TIMINGS_FILE
        seconds[lib.name] = (
            f"{took:.1f}s"
            if took is not None
            else (f"{timing.read_text().strip()}s (cached)" if timing.exists() else "cached")
        )
        versions[lib.name] = installed_version(python, lib.dist)
        if not args.no_certify:
            failed |= certify(lib, python) not in (0, 1)  # 1: the run had FAILs, which is a result
    if not args.no_certify:
        for lib in LIBRARIES:  # the README covers every library: the ones not run now as they were last built
            python = _python(VENVS / lib.name)
            if lib.name not in versions and python.exists():
                versions[lib.name] = installed_version(python, lib.dist)
                timing = VENVS / lib.name / TIMINGS_FILE
                seconds[lib.name] = f"{timing.read_text().strip()}s (cached)" if timing.exists() else "cached"
        print(f"wrote {write_readme(list(LIBRARIES), versions, seconds).relative_to(ROOT)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
