"""``conformance emulator``: serve the emulator on 127.0.0.1 until interrupted (an I/O edge)."""

from __future__ import annotations

import difflib
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from conformance.emulator._scenario_book import server_playable
from conformance.emulator._server import (
    DEFAULT_MAX_LOG_BYTES,
    DEFAULT_MAX_REQUESTS,
    ENCODERS,
    Emulator,
    EmulatorScript,
)

if TYPE_CHECKING:
    from conformance.scenarios.loader import LoadResult
    from conformance.scenarios.values import Scenario

__all__ = ["serve_command"]

_USAGE = 2
_PROBLEMS = 1
_PATHS = {
    "openai_chat": "/v1/chat/completions",
    "openai_responses": "/v1/responses",
    "anthropic": "/v1/messages",
    "gemini": "/v1beta/models/{model}:generateContent (:streamGenerateContent?alt=sse)",
    "ollama": "/api/chat",
}


def serve_command(
    port: int = 0,
    scenario: str | None = None,
    scenarios_dir: str | Sequence[str] | None = None,
    *,
    max_requests: int = DEFAULT_MAX_REQUESTS,
    max_log_bytes: int = DEFAULT_MAX_LOG_BYTES,
    play_scenarios: bool = False,
    stop: threading.Event | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Serve the emulator (playing ``scenario`` when given) until Ctrl-C, or until ``stop`` is set;
    its request log keeps the newest ``max_requests`` requests, ``max_log_bytes`` of bodies in all.
    ``play_scenarios``: play every scenario a server is asked (``server_playable``; the bundled ones
    and those of ``scenarios_dir``), each request answered from the one it belongs to
    (``Emulator.play_scenarios``).

    Prints the base URL and the paths first. Exit codes: 0 after a clean stop, 1 when the scenario
    has problems or the port cannot be bound, 2 for an unknown scenario id or a bad port.
    """
    out = out or sys.stdout
    err = err or sys.stderr
    if not 0 <= port <= 65535:
        print(f"conformance emulator: error: --port {port} is not a TCP port (0-65535; 0 picks a free one)", file=err)
        return _USAGE
    if max_requests < 0 or max_log_bytes < 0:
        print(
            f"conformance emulator: error: --max-requests {max_requests} and --max-log-bytes {max_log_bytes} must "
            "be 0 or more (0 keeps nothing in the request log)",
            file=err,
        )
        return _USAGE
    if play_scenarios and scenario is not None:
        print(
            f"conformance emulator: error: --play-scenarios plays every scenario, chosen by each request; "
            f"it does not go with --scenario {scenario} (which plays that one for every request): give one of them",
            file=err,
        )
        return _USAGE
    playing: list[Scenario] = []
    if play_scenarios:
        loaded, code = _load_scenarios(scenarios_dir, err)
        if loaded is None:
            return code
        playing = [s for s in loaded if server_playable(s)]
    script: EmulatorScript | None = None
    if scenario is not None:
        script, code = _load_script(scenario, scenarios_dir, err)
        if script is None:
            return code
    try:
        emulator = Emulator(port, script=script, max_requests=max_requests, max_log_bytes=max_log_bytes)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        print(
            f"conformance emulator: error: cannot listen on 127.0.0.1:{port}: {reason}; "
            "choose another --port (0 picks a free one)",
            file=err,
        )
        return _PROBLEMS
    with emulator:
        book = emulator.play_scenarios(playing) if play_scenarios else None
        print(f"conformance emulator listening on {emulator.base_url}", file=out)
        for wire in ENCODERS:
            print(f"  {wire:<17} POST {emulator.base_url}{_PATHS[wire]}", file=out)
        if script is not None:
            print(f"playing scenario {script.scenario_id} ({len(script.replies)} turn(s))", file=out)
        elif book is not None:
            print(
                f"playing {len(book)} scenario(s), each request answered from the one it belongs to "
                "(no scripted faults, no provider quirks); a request that matches none gets the default reply",
                file=out,
            )
        else:
            print("no scenario: every request gets the default reply", file=out)
        print(f"request log: the newest {max_requests} request(s), {max_log_bytes} body bytes in all", file=out)
        print("press Ctrl-C to stop", file=out, flush=True)
        waiter = stop or threading.Event()
        try:
            while not waiter.wait(0.25):
                pass
        except KeyboardInterrupt:
            pass
    print("conformance emulator stopped", file=out, flush=True)
    return 0


def _load(scenarios_dir: str | Sequence[str] | None, err: TextIO) -> tuple[LoadResult | None, list[str], int]:
    """The bundled scenarios and those of ``scenarios_dir`` (and the folders), or None and the exit code
    after printing why not."""
    from conformance.errors import UsageError
    from conformance.scenarios.loader import load_with_user_dirs

    dirs = [scenarios_dir] if isinstance(scenarios_dir, str) else list(scenarios_dir or ())
    missing = [d for d in dirs if not Path(d).is_dir()]
    if missing:
        print(f"conformance emulator: error: --scenarios-dir {missing[0]}: no such folder", file=err)
        return None, dirs, _USAGE
    try:
        return load_with_user_dirs(dirs), dirs, 0
    except UsageError as exc:
        print(f"conformance emulator: error: {exc}", file=err)
        return None, dirs, _USAGE


def _load_scenarios(scenarios_dir: str | Sequence[str] | None, err: TextIO) -> tuple[list[Scenario] | None, int]:
    """Every scenario that loads (``--play-scenarios``); the files with problems are named on ``err``
    and left out."""
    result, _, code = _load(scenarios_dir, err)
    if result is None:
        return None, code
    for problem in result.problems:
        print(f"conformance emulator: left out (check with `conformance validate`): {problem}", file=err)
    return list(result.scenarios), 0


def _load_script(
    scenario: str, scenarios_dir: str | Sequence[str] | None, err: TextIO
) -> tuple[EmulatorScript | None, int]:
    """The script of scenario ``scenario``, or None and the exit code after printing why not."""
    result, dirs, code = _load(scenarios_dir, err)
    if result is None:
        return None, code
    for candidate in result.scenarios:
        if candidate.id == scenario:
            return EmulatorScript.from_scenario(candidate), 0
    own = [p for p in result.problems if _names(Path(p.path), scenario)]
    if own:
        print(f"conformance emulator: error: scenario {scenario!r} has problems:", file=err)
        for problem in own:
            print(f"  {problem}", file=err)
        print(f"fix them (check with `conformance validate {own[0].path}`), then start the emulator again", file=err)
        return None, _PROBLEMS
    ids = [s.id for s in result.scenarios]
    near = difflib.get_close_matches(scenario, ids, n=3)
    hint = f"; did you mean {', '.join(near)}?" if near else ""
    where = " and ".join(["the bundled scenarios", *dirs])
    print(f"conformance emulator: error: no scenario {scenario!r} in {where}{hint}", file=err)
    print("list the valid ids with `conformance list`", file=err)
    return None, _USAGE


def _names(path: Path, scenario: str) -> bool:
    """Whether ``path`` is the file of scenario id ``scenario`` (``.../basic/get_time.yaml``)."""
    text = path.as_posix()
    return any(
        text.endswith(f"{scenario}{suffix}") and text[: -len(scenario + suffix)][-1:] in ("", "/")
        for suffix in (".yaml", ".yml")
    )
