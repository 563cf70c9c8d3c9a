"""Certify the client libraries people really use, each at a pinned version in its own virtualenv.

For each library: build ``.venvs/<name>`` (``python -m venv`` + ``pip install`` of its pins; cached:
skipped when it exists with the same pins, rebuilt with ``--rebuild``), then run
``python -m conformance certify --client examples/clients/<driver>.py:CLIENT --python
.venvs/<name>/bin/python --report-dir docs/certified/<name> --format json,md``, and once more per
*variant* (a library whose behaviour depends on the model name is certified on the provider's current
default model, and on the other model named in its variant, into ``docs/certified/<name>/<label>/``).
The suite itself is not installed in the venvs: the harness puts its source on the child's
``PYTHONPATH``.

Finally ``docs/certified/README.md``: per library and wire, the model asked for and the counts, then
each defect once (a FAIL's signature: check, generalised path, expected and actual kinds) with the
cases it appears in and the library source line or doc that shows it (``DEFECTS``), then what is left
to the caller and what the library sends unasked. A FAIL whose signature ``DEFECTS`` does not explain
is listed as **unexplained**, and ``tests/scripts/test_certify_libraries.py`` fails on it.

Each library gets its own venv because their provider-SDK pins clash (litellm, pydantic-ai and the
LangChain integrations each want their own openai/anthropic/google-genai).

    python scripts/certify_libraries.py [--only NAME ...] [--rebuild] [--no-certify] [--readme-only]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
                ("--wires", "gemini", "--model", "gemini-2.5-flash"),
                "litellm sends Gemini `functionCall.id`/`functionResponse.id` back only for model names it classes"
                " as Gemini 3 or newer (`VertexGeminiConfig._forward_gemini_function_call_id`,"
                " `litellm/llms/vertex_ai/gemini/vertex_and_google_ai_studio_gemini.py:860-867`, via"
                " `_is_gemini_3_or_newer`, lines 837-850), saying older models reject the field with HTTP 400;"
                " gemini-2.5-flash, which Google still serves (https://ai.google.dev/gemini-api/docs/models),"
                " accepted echoed ids in recorded traffic"
                " (shared/realworld/cassettes/gemini/llm-gemini__test_tools.yaml, status 200). On the default"
                " gemini-3.5-flash it sends them.",
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


def installed_version(python: Path, dist: str) -> str:
    code = f"from importlib.metadata import version; print(version({dist!r}))"
    done = subprocess.run([str(python), "-c", code], capture_output=True, text=True)
    return done.stdout.strip() or "?"


def report_dirs(lib: Library) -> list[tuple[str, Path]]:
    """(label, folder) of every report of ``lib``: the default run, then its variants."""
    return [("", CERTIFIED / lib.name), *((v.label, CERTIFIED / lib.name / v.label) for v in lib.variants)]


def certify(lib: Library, python: Path) -> int:
    """Certify ``lib`` (and its variants); the worst exit code (0 pass, 1 findings, 2+ broken)."""
    driver = ROOT / "examples" / "clients" / lib.driver
    if not driver.exists():
        print(f"[{lib.name}] no driver {driver.relative_to(ROOT)}: skipped", flush=True)
        return -1
    worst = 0
    runs = [
        ((("--note", lib.note) if lib.note else ()), CERTIFIED / lib.name),
        *(((*v.args, "--note", v.why), CERTIFIED / lib.name / v.label) for v in lib.variants),
    ]
    for args, folder in runs:
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
            str(folder.relative_to(ROOT)),
            "--format",
            "json,md",
            *args,
        ]
        print(f"[{lib.name}] {' '.join(command[1:])}", flush=True)
        start = time.monotonic()
        code = subprocess.run(command, cwd=ROOT).returncode
        print(f"[{lib.name}] certify exited {code} after {time.monotonic() - start:.1f}s", flush=True)
        worst = max(worst, code)
    return worst


# --------------------------------------------------------------------------------------------
# docs/certified/README.md
# --------------------------------------------------------------------------------------------

COUNTED = ("pass", "fail", "left", "unsupported", "xfail", "stale", "error")


def load_report(folder: Path) -> dict[str, Any] | None:
    path = folder / "report.json"
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        return None
    return data if isinstance(data, dict) and isinstance(data.get("cases"), list) else None


def _wire_of(case: dict[str, Any]) -> str:
    return str(case.get("adapter", "?")).rpartition("/")[2]


@dataclass
class Seen:
    """One signature on one wire: where it appears."""

    wire: str
    signature: str
    kind: str
    remedy: str
    message: str
    cases: set[str] = field(default_factory=set)
    scenarios: set[str] = field(default_factory=set)


def signatures(report: dict[str, Any]) -> Iterator[tuple[dict[str, Any], dict[str, Any], dict[str, Any]]]:
    """(case, check verdict, finding) for every finding of every check in ``report``."""
    for case in report["cases"]:
        for check in case.get("checks", []):
            for finding in check.get("findings", []):
                yield case, check, finding


def collect(report: dict[str, Any]) -> dict[tuple[str, str, str], Seen]:
    """(wire, kind, signature) -> where it appears; a defect counts only where its check failed, and
    an ERROR case is a defect of its own (its message)."""
    seen: dict[tuple[str, str, str], Seen] = {}
    for case in report["cases"]:
        wire = _wire_of(case)
        if case.get("status") == "error":
            entry = seen.setdefault(
                (wire, "error", "ERROR"), Seen(wire, "ERROR", "error", "", str(case.get("message", ""))[:200])
            )
            entry.cases.add(f"{case['scenario']}::{case['mode']}")
            entry.scenarios.add(str(case["scenario"]))
    for case, check, finding in signatures(report):
        kind = str(finding.get("kind", "defect"))
        if kind == "defect" and check.get("status") != "fail":
            continue  # a baselined or known gap: not a FAIL
        wire = _wire_of(case)
        key = (wire, kind, str(finding.get("signature")))
        entry = seen.setdefault(
            key, Seen(wire, key[2], kind, str(finding.get("remedy", "")), str(finding.get("message", "")))
        )
        entry.cases.add(f"{case['scenario']}::{case['mode']}")
        entry.scenarios.add(str(case["scenario"]))
    return seen


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


_SOURCE = re.compile(r"https?://\S+|[\w/.-]+\.(?:py|md|ts)(?::\d+(?:-\d+)?)")


def cites_source(reason: str) -> bool:
    """Does ``reason`` name a source line (``pkg/module.py:123``) or a page (``https://...``)?"""
    return _SOURCE.search(reason) is not None


def _fails(lib: Library) -> Iterator[str]:
    """``wire | signature`` of every FAIL (and ERROR) in ``lib``'s committed reports."""
    for _label, folder in report_dirs(lib):
        report = load_report(folder)
        if report is not None:
            for (wire, kind, sig), _seen in collect(report).items():
                if kind in ("defect", "error"):
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


def _scenarios(seen: Seen, most: int = 4) -> str:
    names = sorted(seen.scenarios)
    shown = ", ".join(f"`{n}`" for n in names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")


def _tally(report: dict[str, Any]) -> dict[str, dict[str, int]]:
    tallies: dict[str, dict[str, int]] = {}
    for case in report["cases"]:
        tally = tallies.setdefault(_wire_of(case), dict.fromkeys(COUNTED, 0))
        status = str(case.get("status"))
        tally[status] = tally.get(status, 0) + 1
    return tallies


def _models(report: dict[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for adapter in report.get("adapters", []):
        model = adapter.get("model")
        if model:
            out[str(adapter.get("name", "")).rpartition("/")[2]] = str(model)
    return out


def library_section(lib: Library, version: str) -> tuple[list[str], list[str]]:
    """The table rows and the section of ``lib`` in the README."""
    rows: list[str] = []
    lines: list[str] = [f"### {lib.name} {version}", ""]
    any_report = False
    for label, folder in report_dirs(lib):
        report = load_report(folder)
        if report is None:
            continue
        any_report = True
        models = _models(report)
        for wire, t in sorted(_tally(report).items()):
            counts = " | ".join(str(t.get(s, 0)) for s in ("pass", "fail", "left", "unsupported", "xfail"))
            extra = ", ".join(f"{s} {t[s]}" for s in ("stale", "error") if t.get(s))
            model = f"`{models.get(wire, '?')}`"
            link = f"[{lib.name}{'/' + label if label else ''}]({folder.relative_to(CERTIFIED).as_posix()}/report.md)"
            rows.append(f"| {link} | {version} | {wire} | {model} | {counts} | {extra} |")
        seen = collect(report)
        title = f"On `{label}`" if label else "Defects"
        if label:
            why = next(v.why for v in lib.variants if v.label == label)
            lines += [f"#### {title} ({', '.join(sorted(models.values()))})", "", why, ""]
        else:
            lines += ["#### Defects (FAIL)", ""]
        defects = sorted(
            (s for s in seen.values() if s.kind in ("defect", "error")), key=lambda s: (-len(s.cases), s.wire)
        )
        for s in defects:
            reason = explain(lib, s.wire, s.signature)
            because = reason or "**unexplained**: no source line or doc shows this defect yet"
            lines.append(
                f"- **{s.wire}** `{s.signature}` in {len(s.cases)} case(s) ({_scenarios(s)}): {s.message}."
                f" Why it is a defect: {because}"
            )
        if not defects:
            lines.append("None.")
        lines.append("")
        left = [s for s in seen.values() if s.kind == "left"]
        if left and not label:
            lines += ["#### Left to the caller", ""]
            for s in sorted(left, key=lambda s: (s.wire, s.signature)):
                lines.append(f"- **{s.wire}** `{s.signature}` in {len(s.cases)} case(s): {s.remedy}")
            lines.append("")
        unasked = [s for s in seen.values() if s.kind in ("unasked", "note")]
        if unasked and not label:
            lines += ["#### Sent unasked", ""]
            for s in sorted(unasked, key=lambda s: (s.wire, s.signature)):
                what = "note: " if s.kind == "note" else ""
                lines.append(f"- **{s.wire}** `{s.signature}` in {len(s.cases)} case(s): {what}{s.remedy}")
            lines.append("")
    if not any_report:
        why = "no report" if (ROOT / "examples" / "clients" / lib.driver).exists() else f"no driver `{lib.driver}`"
        rows.append(f"| {lib.name} | {version} | ({why}) | | | | | | | |")
    return rows, lines


def write_readme(libs: Iterable[Library], versions: dict[str, str], seconds: dict[str, str]) -> Path:
    libs = list(libs)
    lines = [
        "# Certified client libraries",
        "",
        "Written by `python scripts/certify_libraries.py`: each library at a pinned version in its own virtualenv",
        "(`.venvs/<name>`), driven by `examples/clients/<driver>.py` through `conformance certify --python`",
        "against every scenario over the loopback emulator. One folder per library holds its JSON and",
        "Markdown report. The official SDKs transport only; the libraries declare the duties their documentation",
        'promises (docs/clients.md, "Duties"). A FAIL is a defect of the library at that version, listed once',
        "below with the source line or doc that shows it; *left* counts the cases where a duty the library does",
        "not take on is left to the caller.",
        "",
        "| library | version | wire | model | pass | fail | left | unsupported | xfail | other |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    sections: list[str] = []
    for lib in libs:
        rows, section = library_section(lib, versions.get(lib.name, "?"))
        lines.extend(rows)
        sections.extend(section)
    lines += ["", "## Virtualenv build times", ""]
    lines += [f"- {lib.name} (`{' '.join(lib.pins)}`): {seconds.get(lib.name, '?')}" for lib in libs]
    lines += ["", "## Defects by library", "", *sections]
    path = CERTIFIED / "README.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines).rstrip() + "\n", encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
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
        print(f"wrote {write_readme(LIBRARIES, versions, seconds).relative_to(ROOT)}")
        for line in (m for lib in LIBRARIES for m in unexplained(lib)):
            print(f"unexplained FAIL: {line} (add its reason, with the source line, to DEFECTS)", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
