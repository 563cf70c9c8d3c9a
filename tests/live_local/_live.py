"""The ``live_local`` tier's pieces: the scenarios and adapters it records, the script it starts the
server with, and ``conformance record``/``run`` run as a user runs them (see ``conftest.py``)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from tests import _scripts

__all__ = [
    "ADAPTERS",
    "KEY",
    "KEY_ENV",
    "KNOBS",
    "MAX_TOKENS",
    "MODEL_NAME",
    "SCENARIOS",
    "STRUCTURED_ALWAYS",
    "STRUCTURED_SCENARIOS",
    "THREADS_ENV",
    "Recording",
    "Recordings",
    "Replay",
    "conformance",
    "load_script",
    "record",
    "record_knobs",
]

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "local_model_server.py"

ADAPTERS = ("openai_chat", "openai_responses", "anthropic")
"""The reference adapters of the three wires llama-server serves."""

SCENARIOS = (
    "basic/get_time",
    "basic/single_call",
    "basic/no_tools",
    "basic/text_only_reply",
    "basic/system_prompt",
    "basic/text_before_call",
    "tool_choice/auto",
    "tool_choice/none",
    "arguments/typed_values",
    "schemas/enums",
)
"""Ten scenarios: plain text, one call, text before a call, no tools, a system prompt, typed and
enum arguments (no scripted HTTP errors or MCP servers: a real server does not follow a script).
``tool_choice/required`` is recorded against the structured server only: in the content mode the
model writes its call as text and then newlines until ``max_tokens``, which the Anthropic adapter
sets to 1024 when the recorder gives none (the server's ``-n`` is only a default): 4 minutes at 4
tokens per second."""

MAX_TOKENS = 48
"""The cap on every generation (server ``-n``, and ``--max-tokens`` where ``record`` has it)."""

KNOBS = (("--temperature", "0"), ("--seed", "42"), ("--max-tokens", str(MAX_TOKENS)))
"""Request knobs for recording (issue 16 part 1), passed when ``conformance record --help`` lists them."""

MODEL_NAME = "qwen2.5-coder-0.5b-instruct-q4_k_m"
"""The model name requested: the server's ``--alias`` (it serves its one model whatever the name)."""

DEVIATING = ("basic/single_call",)
"""A scenario whose call this model, in the content mode, writes as JSON text: a deviation."""

STRUCTURED_SCENARIOS = ("basic/single_call", "tool_choice/required", "schemas/enums")
"""Recorded against the ``structured`` server: scenarios whose answer is a call."""

STRUCTURED_ALWAYS = ("basic/single_call", "tool_choice/required")
"""Of those, the ones whose every answer was a structured call on every wire, as measured (in
``schemas/enums`` the model answered the Anthropic request in text: an HTTP 500 there)."""

THREADS_ENV = "CONFORMANCE_LLAMA_THREADS"
"""llama-server's ``-t`` for the tier (default 1: on a busy 2-core machine 2 threads spin-wait on
each other, measured 0.5 against 4 generated tokens per second)."""

KEY_ENV = "CONFORMANCE_LIVE_LOCAL_KEY"
KEY = "sk-live-local-0123456789abcdefghij"
"""llama-server needs no key; a made-up one checks that it never reaches a cassette."""


def load_script() -> ModuleType:
    """``scripts/local_model_server.py`` as a module."""
    return _scripts.load_script("local_model_server")


def conformance(*args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    """``python -m conformance ARGS`` from this checkout, with the made-up key in ``KEY_ENV``."""
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


def record_knobs() -> list[str]:
    """The ``KNOBS`` that this ``conformance record`` offers."""
    help_text = conformance("record", "--help").stdout
    return [part for option, value in KNOBS if option in help_text for part in (option, value)]


_PROGRESS = re.compile(r"^\[\d+/\d+\] (\S+) (\S+): (.*)$", re.MULTILINE)


@dataclass(frozen=True)
class Recording:
    """One ``conformance record --live`` run."""

    argv: tuple[str, ...]
    code: int
    stdout: str
    stderr: str
    statuses: dict[tuple[str, str], str]
    """(adapter, scenario) -> the status text of its progress line."""
    files: dict[str, bytes]
    """The cassette folder after the run: relative path -> bytes."""
    seconds: float


@dataclass(frozen=True)
class Recordings:
    cassette_dir: Path
    first: Recording
    second: Recording


@dataclass(frozen=True)
class Replay:
    code: int
    output: str
    report: dict[str, Any]


def record(
    base_url: str,
    cassette_dir: Path,
    knobs: list[str],
    scenarios: tuple[str, ...] = SCENARIOS,
    notes: dict[str, str] | None = None,
    adapters: tuple[str, ...] = ADAPTERS,
) -> Recording:
    """``conformance record --live`` of ``scenarios`` x ``adapters`` against ``base_url``, with the
    server's facts (``LocalServer.provenance``) as provenance lines."""
    argv = ["record", "--live", "--adapter", ",".join(adapters)]
    argv += [part for key, value in (notes or {}).items() for part in ("--provenance", f"{key}={value}")]
    argv += [part for scenario in scenarios for part in ("--scenario", scenario)]
    argv += ["--base-url", base_url, "--api-key-env", KEY_ENV, "--model", MODEL_NAME]
    argv += ["--cassette-dir", str(cassette_dir), "--timeout", "240", *knobs]
    started = time.monotonic()
    done = conformance(*argv)
    seconds = round(time.monotonic() - started, 1)
    statuses = {(m.group(1), m.group(2)): m.group(3) for m in _PROGRESS.finditer(done.stderr)}
    files = {p.relative_to(cassette_dir).as_posix(): p.read_bytes() for p in sorted(cassette_dir.rglob("*.yaml"))}
    summary = done.stderr.strip().splitlines()[-1:] if done.stderr.strip() else ["(no output)"]
    print(f"live_local: {len(statuses)} pairs in {seconds} s, exit {done.returncode}: {summary[0]}", file=sys.stderr)
    return Recording(tuple(argv), done.returncode, done.stdout, done.stderr, statuses, files, seconds)
