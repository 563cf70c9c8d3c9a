"""Certify the client libraries people really use, each at a pinned version in its own virtualenv.

For each library: build ``.venvs/<name>`` (``python -m venv`` + ``pip install`` of its pins; cached:
skipped when it exists with the same pins, rebuilt with ``--rebuild``), then run
``python -m conformance certify --client examples/clients/<driver>.py:CLIENT --python
.venvs/<name>/bin/python --report-dir docs/certified/<name> --format json,md``, and once more per
*variant* (a library whose behaviour depends on the model name is certified on the provider's current
default model, and on the other model named in its variant, into ``docs/certified/<name>/<label>/``).
The suite itself is not installed in the venvs: the harness puts its source on the child's
``PYTHONPATH``.

Each certification's pages are then rendered from its ``report.json`` (``render_pages``; the same with
``--render-only``, which runs nothing): the report gets its defects (``defects_of``, the "defects" key
``build_report`` writes), and ``report.md`` lists each defect once, worst first, with its evidence and
why it is a defect of the library (the ``DEFECTS`` reason of its ``wire | signature``, or of a signature
restating it: the library's source line or doc), then every case. A FAIL whose signature ``DEFECTS``
does not explain is printed as **unexplained**, and ``tests/scripts/test_certify_libraries.py`` fails on it.

Finally the libraries at a glance, from the reports alone: ``docs/certified/README.md`` (one screen: a
library x wire matrix of defect counts by severity, each cell linking to that wire's worst defect on
the library's page, then each library's worst defect) and the same as ``docs/certified/index.html``.

Each library gets its own venv because their provider-SDK pins clash (litellm, pydantic-ai and the
LangChain integrations each want their own openai/anthropic/google-genai).

JavaScript libraries (``language="javascript"``) run their Node driver in examples/clients/node/ with
``certify --command "node examples/clients/node/<driver>.mjs"``, on the Node >= 22 and the packages
``scripts/node_runtime.py install`` provides (package-lock.json pins every version).

    python scripts/certify_libraries.py [--only NAME ...] [--language python|javascript] [--rebuild]
        [--no-certify] [--render-only]
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
import shutil
import subprocess
import sys
import time
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

from conformance.cli import build_parser
from conformance.cli.plans import rerun_command
from conformance.pipeline.targets import client_rerun_words, command_rerun_words
from conformance.reporting import render_json, render_markdown
from conformance.reporting._data import Report, report_defects
from conformance.reporting._defects import SEVERITIES, SEVERITY_WORDS, DefectData, defects_of

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from certified_defects import DEFECTS  # noqa: E402  (the explanations beside this script)

VENVS = ROOT / ".venvs"
CERTIFIED = ROOT / "docs" / "certified"
PINS_FILE = "conformance-pins.txt"
TIMINGS_FILE = "build-seconds.txt"


@dataclass(frozen=True)
class Defect:
    """Why a FAIL signature of a library is a defect: what the library does, and where it says so."""

    signature: str
    """A pattern over ``wire | signature`` where ``*`` is any text (``gemini | client.call_ids at *``)."""
    reason: str
    """What the library does wrong, with the source line (path in its venv's site-packages) or doc."""


@dataclass(frozen=True)
class Variant:
    """One more certification of a library: ``args`` added to ``certify``, into ``<name>/<label>/``."""

    label: str
    args: tuple[str, ...]
    why: str
    """Why this run exists (the library's behaviour depends on what it changes), with the source."""


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
    language: str = "python"
    """``python`` (a venv of its own, ``--python``) or ``javascript`` (a Node driver in
    examples/clients/node/, its packages pinned by package-lock.json there, ``--command``)."""
    variants: tuple[Variant, ...] = ()
    note: str = ""
    """What a reader of its default report must know (``certify --note``): the model dependence."""

    @property
    def defects(self) -> tuple[Defect, ...]:
        """Why each FAIL of its reports is a defect (``scripts/certified_defects.py``)."""
        return _defects(self.name)


def _defects(name: str) -> tuple[Defect, ...]:
    return tuple(Defect(signature, reason) for signature, reason in DEFECTS.get(name, ()))


LIBRARIES: tuple[Library, ...] = (
    Library("openai", "openai_driver.py", ("openai==3.57.0",), "openai", "sdk"),
    Library("anthropic", "anthropic_driver.py", ("anthropic==2.14.0",), "anthropic", "sdk"),
    Library("google-genai", "google_genai_driver.py", ("google-genai==3.6.1",), "google-genai", "sdk"),
    Library("ollama", "ollama_driver.py", ("ollama==0.6.3",), "ollama", "sdk"),
    Library(
        "litellm",
        "litellm_driver.py",
        ("litellm==1.110.2",),
        "litellm",
        "library",
        note="LiteLLM's Gemini requests depend on the model name: it sends the functionCall ids Gemini gave back"
        " only for names it classes as Gemini 3 or newer"
        " (litellm/llms/vertex_ai/gemini/vertex_and_google_ai_studio_gemini.py:837-867). This report asks for each"
        " provider's current default family (gemini-3.5-flash on Gemini); the report in gemini-2.5-flash/ asks for"
        " gemini-2.5-flash, which Google still serves.",
        variants=(
            Variant(
                "gemini-2.5-flash",
                ("--wires", "gemini", "--model", "gemini-2.5-flash", "-k", "not reasoning/settings_effort"),
                "litellm sends Gemini `functionCall.id`/`functionResponse.id` back only for model names it classes"
                " as Gemini 3 or newer (`VertexGeminiConfig._forward_gemini_function_call_id`,"
                " `litellm/llms/vertex_ai/gemini/vertex_and_google_ai_studio_gemini.py:860-867`, via"
                " `_is_gemini_3_or_newer`, lines 837-850), saying older models reject the field with HTTP 400;"
                " gemini-2.5-flash, which Google still serves (https://ai.google.dev/gemini-api/docs/models),"
                " accepted echoed ids in recorded traffic"
                " (tests/realworld/cassettes/gemini/llm-gemini__test_tools.yaml, status 200). On the default"
                " gemini-3.5-flash it sends them. reasoning/settings_effort is left out here: it asks for a"
                " thinkingLevel, which Gemini 2.5 does not have (a budget instead: https://ai.google.dev/gemini-api/docs/thinking).",
            ),
        ),
    ),
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
    # JavaScript: the drivers in examples/clients/node/, every package pinned by its package-lock.json
    # (python scripts/node_runtime.py install: Node >= 22 and `npm ci`, from the npm registry only)
    Library("openai-node", "node/openai.mjs", ("openai@7.59.0",), "openai", "sdk", "javascript"),
    Library(
        "anthropic-node", "node/anthropic.mjs", ("@anthropic-ai/sdk@1.14.0",), "@anthropic-ai/sdk", "sdk", "javascript"
    ),
    Library(
        "google-genai-node", "node/google_genai.mjs", ("@google/genai@3.3.0",), "@google/genai", "sdk", "javascript"
    ),
    Library("ollama-js", "node/ollama.mjs", ("ollama@0.6.4",), "ollama", "sdk", "javascript"),
    Library(
        "ai-sdk-openai",
        "node/ai_sdk_openai.mjs",
        ("ai@7.0.173", "@ai-sdk/openai@4.0.118"),
        "ai",
        "library",
        "javascript",
    ),
    Library(
        "ai-sdk-anthropic",
        "node/ai_sdk_anthropic.mjs",
        ("ai@7.0.173", "@ai-sdk/anthropic@4.0.105"),
        "ai",
        "library",
        "javascript",
    ),
    Library(
        "ai-sdk-google",
        "node/ai_sdk_google.mjs",
        ("ai@7.0.173", "@ai-sdk/google@4.0.121"),
        "ai",
        "library",
        "javascript",
    ),
    Library(
        "langchain-openai-js",
        "node/langchain_openai.mjs",
        ("@langchain/openai@1.6.0", "@langchain/core@1.4.0"),
        "@langchain/openai",
        "library",
        "javascript",
    ),
)


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


def pinned_version(lib: Library) -> str:
    """The version ``lib`` is pinned at (its pins are exact: ``litellm==1.110.2`` -> ``1.110.2``,
    ``openai@7.59.0`` -> ``7.59.0``)."""
    pin = next((p for p in lib.pins if p.startswith(lib.dist)), lib.pins[0])
    if lib.language == "javascript":
        return pin.rpartition("@")[2] or "?"
    return pin.rpartition("==")[2] or "?"


def node_path() -> str:
    """The folder of the Node >= 22 the JavaScript drivers run on, with their packages installed
    (``scripts/node_runtime.py install``; ``CalledProcessError`` when it cannot, its reason printed)."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "node_runtime.py"), "install"],
        check=True,
        capture_output=True,
        text=True,
    )
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    return str(Path(lines[-1]).parent)


def build(lib: Library, *, rebuild: bool) -> dict[str, str]:
    """Make ``lib`` runnable: its venv (Python) or Node with the pinned packages (JavaScript); the
    environment its certification runs in."""
    env = dict(os.environ)
    if lib.language == "javascript":
        env["PATH"] = os.pathsep.join([node_path(), env.get("PATH", "")])
    else:
        build_venv(lib, rebuild=rebuild)
    return env


def runs(lib: Library) -> list[tuple[str, Path, tuple[str, ...]]]:
    """(label, folder, what ``certify`` is given besides the client) of every certification of ``lib``:
    the default run, then its variants."""
    return [
        ("", CERTIFIED / lib.name, ("--note", lib.note) if lib.note else ()),
        *((v.label, CERTIFIED / lib.name / v.label, (*v.args, "--note", v.why)) for v in lib.variants),
    ]


def report_dirs(lib: Library) -> list[tuple[str, Path]]:
    """(label, folder) of every report of ``lib``: the default run, then its variants."""
    return [(label, folder) for label, folder, _ in runs(lib)]


def certify_arguments(lib: Library, folder: Path, added: tuple[str, ...]) -> list[str]:
    """The ``conformance`` arguments that certify ``lib`` into ``folder`` (its pages' rerun commands are
    read from them too)."""
    if lib.language == "javascript":
        driver = ["--command", f"node examples/clients/{lib.driver}"]
    else:
        python = _python(VENVS / lib.name).relative_to(ROOT).as_posix()
        driver = ["--client", f"examples/clients/{lib.driver}:CLIENT", "--python", python]
    return [
        "certify",
        *driver,
        "--report-dir",
        Path(os.path.relpath(folder, ROOT)).as_posix(),
        "--format",
        "json,md",
        *added,
    ]


def certify(lib: Library, env: dict[str, str] | None = None) -> int:
    """Certify ``lib`` (and its variants) and render their pages; the worst exit code (0 pass, 1 findings,
    2+ broken)."""
    driver = ROOT / "examples" / "clients" / lib.driver
    if not driver.exists():
        print(f"[{lib.name}] no driver {driver.relative_to(ROOT)}: skipped", flush=True)
        return -1
    worst = 0
    for _label, folder, added in runs(lib):
        command = [sys.executable, "-m", "conformance", *certify_arguments(lib, folder, added)]
        print(f"[{lib.name}] {' '.join(command[1:])}", flush=True)
        start = time.monotonic()
        code = subprocess.run(command, cwd=ROOT, env=env).returncode
        print(f"[{lib.name}] certify exited {code} after {time.monotonic() - start:.1f}s", flush=True)
        worst = max(worst, code)
    for path in render_pages(lib):  # certify's own report.md knows no reasons: rendered again with them
        print(f"[{lib.name}] wrote {os.path.relpath(path, ROOT)}", flush=True)
    return worst


# --------------------------------------------------------------------------------------------
# which FAIL is explained (DEFECTS)
# --------------------------------------------------------------------------------------------


def load_report(folder: Path) -> dict[str, Any] | None:
    path = folder / "report.json"
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        return None
    return data if isinstance(data, dict) and isinstance(data.get("cases"), list) else None


def fail_signatures(report: dict[str, Any]) -> dict[tuple[str, str], None]:
    """(wire, signature) of every FAIL of ``report``, in report order: each finding of a failed check that
    is a defect (a baselined or known gap is not a FAIL), and ``ERROR`` for a wire where a case erred."""
    out: dict[tuple[str, str], None] = {}
    for case in report["cases"]:
        wire = str(case.get("adapter", "?")).rpartition("/")[2]
        if case.get("status") == "error":
            out[(wire, "ERROR")] = None
        for check in case.get("checks", []):
            if check.get("status") != "fail":
                continue
            for finding in check.get("findings", []):
                if finding.get("kind", "defect") == "defect":
                    out[(wire, str(finding.get("signature")))] = None
    return out


def matches(subject: str, pattern: str) -> bool:
    """``*`` in ``pattern`` stands for any text; everything else is literal (``[*]`` of a generalised
    path included, which ``fnmatch`` would read as a character class)."""
    return re.fullmatch(".*".join(re.escape(part) for part in pattern.split("*")), subject, re.DOTALL) is not None


def explain(lib: Library, wire: str, signature: str) -> str | None:
    """The reason ``DEFECTS`` gives for a FAIL signature of ``lib`` on ``wire`` (None: unexplained)."""
    subject = f"{wire} | {signature}"
    for defect in lib.defects:
        if matches(subject, defect.signature):
            return defect.reason
    return None


_SOURCE = re.compile(r"https?://\S+|[\w/.@-]+\.(?:py|md|ts|js|mjs|cjs)(?::\d+(?:-\d+)?)")


def cites_source(reason: str) -> bool:
    """Does ``reason`` name a source line (``pkg/module.py:123``) or a page (``https://...``)?"""
    return _SOURCE.search(reason) is not None


def _fails(lib: Library) -> Iterator[str]:
    """``wire | signature`` of every FAIL (and ERROR) in ``lib``'s committed reports."""
    for _label, folder in report_dirs(lib):
        report = load_report(folder)
        if report is not None:
            for wire, sig in fail_signatures(report):
                yield f"{wire} | {sig}"


def used_patterns(lib: Library) -> set[str]:
    """The ``DEFECTS`` patterns of ``lib`` that match a FAIL of its committed reports."""
    subjects = list(_fails(lib))
    return {d.signature for d in lib.defects if any(matches(s, d.signature) for s in subjects)}


def unexplained(lib: Library) -> list[str]:
    """The FAIL signatures (and ERROR cases) of ``lib``'s committed reports that nothing explains."""
    missing: list[str] = []
    for subject in _fails(lib):
        wire, _, sig = subject.partition(" | ")
        if explain(lib, wire, sig) is None and f"{lib.name}: {subject}" not in missing:
            missing.append(f"{lib.name}: {subject}")
    return missing


# --------------------------------------------------------------------------------------------
# the pages of a library: docs/certified/<name>[/<label>]/report.json and report.md
# --------------------------------------------------------------------------------------------


def wires_of(report: dict[str, Any]) -> dict[str, str]:
    """adapter name -> its wire format."""
    return {str(a["name"]): str(a["wire_format"]) for a in report.get("adapters", [])}


def _defect_wires(defect: DefectData, wires: dict[str, str]) -> list[str]:
    return list(dict.fromkeys(wires.get(a, a.rpartition("/")[2]) for a in defect["adapters"]))


def with_defects(report: dict[str, Any]) -> dict[str, Any]:
    """``report`` with its defects (``build_report``'s "defects" key, before the cases), computed from its
    cases; the verdicts as they are."""
    defects = defects_of(report["cases"], wires_of(report))
    out: dict[str, Any] = {}
    for key, value in report.items():
        if key == "cases":
            out["defects"] = defects
        if key != "defects":
            out[key] = value
    out.setdefault("defects", defects)
    return out


def reasons(lib: Library, defect: DefectData, report: dict[str, Any]) -> dict[str, str | None]:
    """wire -> why ``defect`` (a FAIL) is a defect of ``lib`` on that wire: the ``DEFECTS`` reason of its
    signature there, or of a signature restating it (None: unexplained). Empty for a duty left to the
    caller or a note: ``DEFECTS`` explains FAILs."""
    if defect["kind"] != "defect":
        return {}
    fails = fail_signatures(report)
    members = [defect["signature"], *(r["signature"] for r in defect["restated"])]
    out: dict[str, str | None] = {}
    for wire in _defect_wires(defect, wires_of(report)):
        seen = [sig for sig in members if (wire, sig) in fails] or members
        out[wire] = next((r for sig in seen if (r := explain(lib, wire, sig)) is not None), None)
    return out


def defect_reason(lib: Library, defect: DefectData, report: dict[str, Any]) -> str | None:
    """Why ``defect`` is a defect of ``lib`` (Markdown: the reason, or one per group of wires when they
    differ; a wire nothing explains says so), None when nothing explains it."""
    by_wire = reasons(lib, defect, report)
    if not any(by_wire.values()):
        return None
    grouped: dict[str | None, list[str]] = {}
    for wire, reason in by_wire.items():
        grouped.setdefault(reason, []).append(wire)
    if len(grouped) == 1:
        return str(next(iter(grouped)))
    missing = "**unexplained**: no source line or doc in scripts/certified_defects.py shows it yet."
    return " ".join(f"On {', '.join(f'`{w}`' for w in ws)}: {reason or missing}" for reason, ws in grouped.items())


def reruns_of(arguments: list[str], report: dict[str, Any]) -> dict[str, str]:
    """``adapter::scenario::mode`` -> the command that reruns that case alone, for each case that did not
    pass, as ``conformance certify`` given ``arguments`` writes it under the case."""
    args = build_parser().parse_args(arguments)
    out: dict[str, str] = {}
    for case in report["cases"]:
        if case["status"] not in ("fail", "error", "stale"):
            continue
        # how certify names the client in a rerun (conformance/pipeline/targets.py)
        column = str(case["adapter"])
        if args.driver_command is not None:
            words = command_rerun_words(args.driver_command, column)
        else:
            words = client_rerun_words(args.client, column, python=args.python, intercept=args.intercept)
        where = SimpleNamespace(adapter=case["adapter"], scenario=case["scenario"], mode=case["mode"])  # all it reads
        out[f"{case['adapter']}::{case['scenario']}::{case['mode']}"] = rerun_command(args, where, words)
    return out


def page(lib: Library, folder: Path, added: tuple[str, ...], report: dict[str, Any]) -> str:
    """The library's page (``report.md``) of ``report``: its defects with why each is one, then the cases."""
    return render_markdown(
        report,
        reruns=reruns_of(certify_arguments(lib, folder, added), report),
        explain=lambda defect: defect_reason(lib, defect, report),
    )


def render_pages(lib: Library) -> list[Path]:
    """Write the defects into each committed ``report.json`` of ``lib`` and its ``report.md`` from it;
    the paths written."""
    written: list[Path] = []
    for _label, folder, added in runs(lib):
        report = load_report(folder)
        if report is None:
            continue
        report = with_defects(report)
        for name, text in (("report.json", render_json(report)), ("report.md", page(lib, folder, added, report))):
            (folder / name).write_text(text, encoding="utf-8")
            written.append(folder / name)
    return written


# --------------------------------------------------------------------------------------------
# at a glance: docs/certified/README.md and index.html
# --------------------------------------------------------------------------------------------

WIRES = ("openai_chat", "openai_responses", "anthropic", "gemini", "ollama")
"""The matrix's columns (a wire of a report not named here follows them)."""

MARKS: dict[str, str] = {
    "loses_data": "D",
    "changes_meaning": "M",
    "rejected": "R",
    "left": "C",
    "erred": "E",
}
"""A severity's letter in a cell (``SEVERITIES`` order, then the cases that erred or went stale). A note is
no defect of the library: its page lists it, the matrix does not count it."""

MARK_WORDS: dict[str, str] = {**SEVERITY_WORDS, "erred": "cases that erred or went stale"}

WIDTH = 100
"""The columns a README line of a worst defect takes at most (its text as GitHub shows it)."""


@dataclass(frozen=True)
class Row:
    """One row of the matrix: one certification of a library (its default run, or a variant)."""

    lib: Library
    label: str
    page: str
    """Its page, relative to docs/certified/."""
    counts: dict[str, dict[str, int]]
    """wire -> ``MARKS`` key -> count, for each wire it was certified on."""
    anchors: dict[str, str]
    """wire -> the anchor of that wire's worst defect on the page."""
    models: dict[str, str]
    """wire -> the model asked for."""
    worst: DefectData | None
    worst_anchor: str

    @property
    def name(self) -> str:
        """The row's name: a variant's drops the provider from its model (litellm on 2.5-flash), so that the
        table fits 100 columns; the models line below it names the model whole."""
        return f"{self.lib.name} on {self.label.removeprefix('gemini-')}" if self.label else self.lib.name


def slug(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading's text (github-slugger: lower case, punctuation and
    symbols dropped, each space a hyphen), after its escapes and code spans are read."""
    text = re.sub(r"\\(.)", r"\1", heading).replace("`", "").lower()
    return "".join(
        "-" if c == " " else c for c in text if c in " -_" or c.isalnum() or unicodedata.category(c).startswith("M")
    )


def heading_anchors(markdown: str) -> list[tuple[str, str]]:
    """(heading line, anchor) of every heading of a page, in order (a repeated anchor gets ``-1``, ``-2``...)."""
    out: list[tuple[str, str]] = []
    used: dict[str, int] = {}
    fence = ""  # the backticks that opened the code block we are in
    for line in markdown.splitlines():
        ticks = line[: len(line) - len(line.lstrip("`"))]
        if len(ticks) >= 3 and (not fence or (ticks.startswith(fence) and line == ticks)):
            fence = "" if fence else ticks
            continue
        match = None if fence else re.match(r"#{1,6} (.*)", line)
        if match is None:
            continue
        base = slug(match.group(1).strip())
        n = used.get(base, 0)
        used[base] = n + 1
        out.append((line, base if n == 0 else f"{base}-{n}"))
    return out


def defect_anchors(markdown: str, count: int) -> list[str]:
    """The anchors of a page's ``count`` numbered defect headings (``### 1. ...``), in order."""
    anchors = {
        line.split(".", 1)[0]: anchor for line, anchor in heading_anchors(markdown) if re.match(r"### \d+\. ", line)
    }
    return [anchors.get(f"### {n}", "") for n in range(1, count + 1)]


def rows(libs: Iterable[Library]) -> list[Row]:
    """The matrix's rows: every committed certification of ``libs``, recomputed from its report.json."""
    out: list[Row] = []
    for lib in libs:
        for label, folder, added in runs(lib):
            report = load_report(folder)
            if report is None:
                continue
            wires = wires_of(report)
            defects = report_defects(cast(Report, report))
            anchors = defect_anchors(page(lib, folder, added, report), len(defects))
            counts = {w: dict.fromkeys(MARKS, 0) for w in wires.values()}
            first: dict[str, str] = {}
            for defect, anchor in zip(defects, anchors, strict=True):
                if defect["severity"] not in MARKS:  # a note
                    continue
                for wire in _defect_wires(defect, wires):
                    counts.setdefault(wire, dict.fromkeys(MARKS, 0))[defect["severity"]] += 1
                    first.setdefault(wire, anchor)
            for case in report["cases"]:
                if case["status"] in ("error", "stale"):
                    wire = wires.get(case["adapter"], str(case["adapter"]).rpartition("/")[2])
                    counts.setdefault(wire, dict.fromkeys(MARKS, 0))["erred"] += 1
            models = {wire: str(a.get("model") or "?") for a in report["adapters"] for wire in [str(a["wire_format"])]}
            out.append(
                Row(
                    lib=lib,
                    label=label,
                    page=(folder / "report.md").relative_to(CERTIFIED).as_posix(),
                    counts=counts,
                    anchors=first,
                    models=models,
                    worst=defects[0] if defects else None,  # worst first (defects_of)
                    worst_anchor=anchors[0] if anchors else "",
                )
            )
    return out


def columns(table: list[Row]) -> list[str]:
    seen = {wire for row in table for wire in row.counts}
    return [*(w for w in WIRES if w in seen), *sorted(seen - set(WIRES))]


def cell(counts: dict[str, int]) -> list[tuple[str, int]]:
    """(``MARKS`` key, count) of a cell, the non-zero ones in order (empty: none)."""
    return [(key, counts[key]) for key in MARKS if counts.get(key)]


def cell_text(counts: dict[str, int]) -> str:
    """A cell as both the README and the page show it: ``2D 1M 3C``, or ``none``."""
    return " ".join(f"{n}{MARKS[key]}" for key, n in cell(counts)) or "none"


def _shorten(text: str, width: int) -> str:
    if len(text) <= width:
        return text
    cut = text[: max(width - 1, 1)].rsplit(" ", 1)[0].rstrip(" ,;:.")
    return cut + "…"


def worst_line(lib: Library, table: list[Row]) -> tuple[str, str, str, str] | None:
    """(lead: the library at its pin, its severity in words, its sentence, the link to it) of ``lib``'s
    worst defect over its certifications (the default run's on a tie), or None when it has none."""
    ranked = [
        (SEVERITIES.index(row.worst["severity"]), -len(row.worst["cases"]), n, row)
        for n, row in enumerate(r for r in table if r.lib is lib)
        if row.worst is not None
    ]
    if not ranked:
        return None
    *_, row = min(ranked, key=lambda t: t[:3])
    assert row.worst is not None
    lead = f"{lib.name} {pinned_version(lib)}" + (f" on {row.label}" if row.label else "")
    link = row.page + (f"#{row.worst_anchor}" if row.worst_anchor else "")
    return lead, SEVERITY_WORDS[row.worst["severity"]], row.worst["sentence"], link


def _md(text: str) -> str:
    """Prose in Markdown: its special characters escaped."""
    return re.sub(r"([\\`*_\[\]<>|#!~&])", r"\\\1", text)


INTRO = (
    "The defects `conformance certify` finds in the client libraries people use, each at its pin in its"
    " own virtualenv, against every scenario over the loopback emulator (`python scripts/certify_libraries.py`;"
    " `--render-only` renders these pages again from the committed reports)."
)


def legend() -> str:
    return (
        "Each cell counts the library's defects on that wire by severity: "
        + ", ".join(f"**{mark}** {MARK_WORDS[key]}" for key, mark in MARKS.items())
        + "; — not certified on that wire. A defect seen on several wires counts on each."
        " A cell links to that wire's worst defect on the library's page."
    )


def models_line(table: list[Row]) -> str:
    """The model asked for on each wire (a row that asked another names it)."""
    parts: list[str] = []
    for wire in columns(table):
        asked = [(row, row.models[wire]) for row in table if wire in row.models]
        usual = max(dict.fromkeys(m for _, m in asked), key=lambda m: sum(1 for _, x in asked if x == m))
        others = ", ".join(f"{row.name} `{m}`" for row, m in asked if m != usual)
        parts.append(f"{wire} `{usual}`" + (f" ({others})" if others else ""))
    return "Models asked for: " + ", ".join(parts) + "."


def readme(libs: Iterable[Library]) -> str:
    """docs/certified/README.md: the libraries at a glance, from their committed reports."""
    libs = list(libs)
    table = rows(libs)
    wires = columns(table)
    lines = ["# Certified client libraries", "", INTRO, "", legend(), ""]
    lines += ["| library | " + " | ".join(wires) + " |", "|---" * (len(wires) + 1) + "|"]
    for row in table:
        cells = [f"[{row.name}]({row.page})"]
        for wire in wires:
            if wire not in row.counts:
                cells.append("—")
            else:
                anchor = row.anchors.get(wire)
                cells.append(f"[{cell_text(row.counts[wire])}]({row.page}{f'#{anchor}' if anchor else ''})")
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", models_line(table), "", "## The worst defect of each library", ""]
    for lib in libs:
        worst = worst_line(lib, table)
        if worst is None:
            found = "no defect" if any(r.lib is lib for r in table) else "no report"
            lines.append(f"- **{lib.name} {pinned_version(lib)}**: {found}")
        else:
            lead, words, sentence, link = worst
            shown = _shorten(sentence, WIDTH - len(f"- {lead}, {words}: "))
            lines.append(f"- **{_md(lead)}**, {words}: [{_md(shown)}]({link})")
    lines += [
        "",
        "Each page lists the library's defects once, worst first, with evidence and the library's source line or"
        " doc (scripts/certified_defects.py), then every case that did not pass."
        " The same matrix as a page: [index.html](index.html).",
    ]
    return "\n".join(lines) + "\n"


SEVERITY_COLOURS: dict[str, tuple[str, str]] = {
    "loses_data": ("#cf222e", "#ffffff"),
    "changes_meaning": ("#bc4c00", "#ffffff"),
    "rejected": ("#8250df", "#ffffff"),
    "left": ("#ddf4ff", "#0a3069"),
    "note": ("#eaeef2", "#24292f"),
    "erred": ("#24292f", "#ffffff"),
}
"""A mark's (background, text) colours in index.html."""

_CSP = "default-src 'none'; style-src 'unsafe-inline'"


def index_html(libs: Iterable[Library]) -> str:
    """docs/certified/index.html: README.md's matrix and worst defects as one self-contained page (inline
    CSS, no script, no external resource; every text escaped)."""
    libs = list(libs)
    table = rows(libs)
    wires = columns(table)
    e = html.escape
    css = [
        "body{font:15px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;color:#24292f;margin:24px;max-width:1200px}",
        "table{border-collapse:collapse}",
        "th,td{border:1px solid #d0d7de;padding:6px 10px;text-align:left;white-space:nowrap}",
        "thead th{background:#f6f8fa;font-family:ui-monospace,monospace;font-size:13px}",
        "td a{text-decoration:none;color:inherit}",
        ".mark{display:inline-block;border-radius:4px;padding:0 5px;margin-right:3px;font-weight:600}",
        ".none{color:#57606a}.absent{color:#8c959f;text-align:center}",
        "code{font-family:ui-monospace,monospace;font-size:13px;background:#f6f8fa;padding:0 3px}",
        *(f".m-{key}{{background:{bg};color:{fg}}}" for key, (bg, fg) in SEVERITY_COLOURS.items()),
    ]
    legend_marks = ", ".join(
        f'<span class="mark m-{key}">{e(mark)}</span> {e(MARK_WORDS[key])}' for key, mark in MARKS.items()
    )
    out = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',  # a constant: nothing to escape
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>Certified client libraries</title>",
        "<style>" + "".join(css) + "</style>",
        "</head>",
        "<body>",
        "<h1>Certified client libraries</h1>",
        f"<p>{_inline_code(INTRO)}</p>",
        f"<p>Each cell counts the library's defects on that wire by severity: {legend_marks}; — not certified on"
        " that wire. A defect seen on several wires counts on each. A cell links to that wire's worst defect on"
        " the library's page.</p>",
        '<table class="matrix">',
        "<thead><tr><th>library</th>" + "".join(f"<th>{e(w)}</th>" for w in wires) + "</tr></thead>",
        "<tbody>",
    ]
    for row in table:
        tds = [f'<th scope="row"><a href="{e(row.page)}">{e(row.name)}</a></th>']
        for wire in wires:
            if wire not in row.counts:
                tds.append('<td class="absent">—</td>')
                continue
            anchor = row.anchors.get(wire)
            href = row.page + (f"#{anchor}" if anchor else "")
            marks = cell(row.counts[wire])
            shown = (
                " ".join(
                    f'<span class="mark m-{key}" title="{e(MARK_WORDS[key])}">{n}{e(MARKS[key])}</span>'
                    for key, n in marks
                )
                if marks
                else '<span class="none">none</span>'
            )
            tds.append(f'<td data-wire="{e(wire)}"><a href="{e(href)}">{shown}</a></td>')
        out.append("<tr>" + "".join(tds) + "</tr>")
    out += ["</tbody>", "</table>", f"<p>{_inline_code(models_line(table))}</p>"]
    out += ["<h2>The worst defect of each library</h2>", "<ul>"]
    for lib in libs:
        worst = worst_line(lib, table)
        if worst is None:
            out.append(f"<li><b>{e(lib.name)} {e(pinned_version(lib))}</b>: no defect</li>")
        else:
            lead, words, sentence, link = worst
            out.append(f'<li><b>{e(lead)}</b>, {e(words)}: <a href="{e(link)}">{e(sentence)}</a></li>')
    out += [
        "</ul>",
        "<p>Each page lists the library's defects once, worst first, with evidence and the library's source"
        " line or doc (scripts/certified_defects.py), then every case that did not pass."
        ' The same as Markdown: <a href="README.md">README.md</a>.</p>',
        "</body>",
        "</html>",
    ]
    return "\n".join(out) + "\n"


def _inline_code(text: str) -> str:
    """Escaped text whose Markdown code spans become ``<code>``."""
    parts = html.escape(text).split("`")
    return "".join(f"<code>{p}</code>" if n % 2 else p for n, p in enumerate(parts))


def write_index(libs: Iterable[Library]) -> list[Path]:
    """Write docs/certified/README.md and index.html from the committed reports."""
    libs = list(libs)
    CERTIFIED.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in (("README.md", readme(libs)), ("index.html", index_html(libs))):
        (CERTIFIED / name).write_text(text, encoding="utf-8")
        written.append(CERTIFIED / name)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--only", action="append", metavar="NAME", help="only this library (repeatable)")
    parser.add_argument("--rebuild", action="store_true", help="rebuild the venvs even when cached")
    parser.add_argument("--no-certify", action="store_true", help="build the venvs only")
    parser.add_argument(
        "--render-only",
        action="store_true",
        help="run nothing: render each library's pages, the README and index.html again from the reports there",
    )
    parser.add_argument("--readme-only", action="store_true", help="only rewrite the README and index.html")
    parser.add_argument(
        "--language", choices=("python", "javascript"), help="only the libraries in this language (default: both)"
    )
    args = parser.parse_args(argv)
    names = {lib.name for lib in LIBRARIES}
    if args.only and (unknown := sorted(set(args.only) - names)):
        parser.error(f"unknown library {', '.join(unknown)} (known: {', '.join(sorted(names))})")
    libs = [
        lib
        for lib in LIBRARIES
        if (not args.only or lib.name in args.only) and (args.language is None or lib.language == args.language)
    ]
    failed = False
    if args.render_only:
        for lib in libs:
            for path in render_pages(lib):
                print(f"wrote {path.relative_to(ROOT)}", flush=True)
    for lib in [] if args.render_only or args.readme_only else libs:
        try:
            env = build(lib, rebuild=args.rebuild)
        except subprocess.CalledProcessError as exc:
            why = (exc.stderr or exc.stdout or "").strip().splitlines()[-1:] if isinstance(exc.stderr, str) else []
            print(f"[{lib.name}] build failed: {exc}{': ' + why[0] if why else ''}", flush=True)
            failed = True
            continue
        if not args.no_certify:
            failed |= certify(lib, env) not in (0, 1)  # 1: the run had FAILs, which is a result
    if not args.no_certify:  # the README covers every library, the ones not run now as last certified
        for path in write_index(LIBRARIES):
            print(f"wrote {path.relative_to(ROOT)}", flush=True)
        for line in (m for lib in LIBRARIES for m in unexplained(lib)):
            print(f"unexplained FAIL: {line} (add its reason, with the source line, to DEFECTS)", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
