"""A real gateway to certify: LiteLLM's proxy, pinned, offline, bound to 127.0.0.1, calling the emulator.

    python scripts/gateway_server.py build      # its own venv with litellm[proxy] 1.110.2 (1-3 min; pip's cache helps)
    python scripts/gateway_server.py status     # what is in the cache, and what is missing
    python scripts/gateway_server.py config --upstream-port N   # the generated proxy config (YAML)
    CONFORMANCE_GATEWAY_KEY=sk-... python scripts/gateway_server.py serve --upstream-port N [--port P]

Everything lands in ``${CONFORMANCE_CACHE:-~/.cache/conformance}/litellm-proxy/``: ``venv/`` (the
proxy's own virtualenv, never the suite's), ``venv.json`` (what was installed, and how), and for
each ``serve`` a ``config-PORT.yaml`` and ``proxy-PORT.log``.

The pin is ``litellm[proxy]==1.110.2``, the version ``docs/certified/litellm`` certifies. Its
``proxy`` extra pins three packages exactly (``litellm-proxy==1.110.2``,
``litellm-proxy-extras==0.4.114.post1``, ``litellm-enterprise==0.1.83.post1``: the wheel's
METADATA) that the package index pip uses here does not serve ("No matching distribution"). The
proxy server itself ships in the litellm wheel (``litellm/proxy/proxy_server.py``, started by its
``litellm`` console script, ``litellm_cli/main.py``); litellm-proxy-extras holds the database
migrations and litellm-enterprise the licensed hooks, neither used without a database or a
license. So ``build`` asks pip for ``litellm[proxy]==1.110.2`` first and, when the index cannot
serve it, installs ``litellm==1.110.2`` with every other requirement of its ``proxy`` extra (read
from the installed wheel's metadata, ``proxy_requirements``); ``venv.json`` says which it did.

``serve`` starts ``litellm --config CONFIG --host 127.0.0.1 --port P`` (never another address)
with ``LITELLM_LOCAL_MODEL_COST_MAP=True`` (the model cost map from the wheel, not fetched:
LiteLLM's docs, "Offline use"), no ``DATABASE_URL`` (no database, so no keys or spend tracking
beyond the master key) and the master key from ``$CONFORMANCE_GATEWAY_KEY`` (``--master-key-env``;
never printed, never written: the config says ``os.environ/LITELLM_MASTER_KEY``, LiteLLM's
documented way to read a secret from the environment). The config (``proxy_config``) has one route
per upstream wire, each calling the emulator at ``http://127.0.0.1:UPSTREAM_PORT`` with the suite's
fake key (``conformance.clients.harness.FAKE_API_KEY``) and the wire's default model
(``conformance.run.conversation.DEFAULT_MODELS``), as LiteLLM's docs write a route
(``model_list`` / ``litellm_params``: ``model``, ``api_base``, ``api_key``):

- ``emulator-anthropic``: ``anthropic/claude-sonnet-5`` (Messages, ``/v1/messages``);
- ``emulator-gemini``: ``gemini/gemini-3.5-flash`` (``/v1beta/models/...:generateContent``);
- ``emulator-ollama``: ``ollama_chat/qwen3:8b`` (``/api/chat``);
- ``emulator-openai_chat``: ``openai/gpt-5.4-mini`` (``/v1/chat/completions``);
- ``emulator-openai_responses``: ``openai/responses/gpt-5.4-mini`` (``/v1/responses``). The proxy's
  Anthropic endpoint (``/v1/messages``) calls an ``openai/`` model on ``/v1/responses`` too, so a
  gateway column from Anthropic to OpenAI is this route.

Nothing else is set: what the proxy does by default is what its users get, and what the suite
judges. Defaults that change what a caller sees (LiteLLM 1.110.2's source, in the venv):

- retries: the router retries a failed call twice (``num_retries`` defaults to 2:
  ``litellm/router_rust/core.py:721-722``; ``litellm/router.py:142`` "Defaults to 2"), so an upstream
  429/529/5xx costs three upstream requests before the caller sees the error;
- timeouts: a chat call without a timeout of its own gets 600 s per HTTP read
  (``litellm/constants.py:665-676``, ``COMPLETION_HTTP_FALLBACK_SECONDS``);
- cooldowns: a model group of one deployment is never cooled down below 1,000 requests a minute
  (``litellm/router_utils/cooldown_handlers.py:534-562``, ``SINGLE_DEPLOYMENT_TRAFFIC_FAILURE_THRESHOLD``);
- fallbacks: none unless configured (``router.py``'s ``fallbacks`` "Defaults to []").

Exit codes: 0 done, 1 the venv could not be built or the proxy did not start (the message names
the command or log and what to do), 2 usage errors. Tests import ``GatewayServer``, ``Cache``,
``proxy_config`` and ``proxy_command``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from conformance.clients.harness import FAKE_API_KEY
from conformance.errors import ConformanceError
from conformance.run.conversation import DEFAULT_MODELS

__all__ = [
    "KEY_ENV",
    "PIN",
    "ROUTES",
    "Cache",
    "GatewayServer",
    "GatewayServerError",
    "build",
    "main",
    "missing",
    "proxy_command",
    "proxy_config",
    "proxy_environment",
]

SCRIPT = "scripts/gateway_server.py"
HOST = "127.0.0.1"
VERSION = "1.110.2"
PIN = f"litellm[proxy]=={VERSION}"
UNSERVED = frozenset({"litellm-proxy", "litellm-proxy-extras", "litellm-enterprise"})
"""The ``proxy`` extra's exact pins the index here does not serve (see the module docstring)."""
KEY_ENV = "CONFORMANCE_GATEWAY_KEY"
"""The environment variable holding the proxy's master key (the caller's bearer token)."""

ROUTES: Mapping[str, str] = {
    "anthropic": f"anthropic/{DEFAULT_MODELS['anthropic']}",
    "gemini": f"gemini/{DEFAULT_MODELS['gemini']}",
    "ollama": f"ollama_chat/{DEFAULT_MODELS['ollama']}",
    "openai_chat": f"openai/{DEFAULT_MODELS['openai_chat']}",
    "openai_responses": f"openai/responses/{DEFAULT_MODELS['openai_responses']}",
}
"""Upstream wire -> the LiteLLM model string of its route ``emulator-WIRE`` (LiteLLM's provider
prefixes: ``anthropic/``, ``gemini/`` for Google AI Studio, ``ollama_chat/`` for ``/api/chat``,
``openai/`` for any OpenAI-compatible server)."""


API_PATHS: Mapping[str, str] = {"openai_chat": "/v1", "openai_responses": "/v1"}
"""The path an ``api_base`` carries for a wire: LiteLLM's ``openai/`` routes append
``/chat/completions`` to it (the openai SDK's ``base_url``, which ends in ``/v1``); the Anthropic,
Gemini and Ollama routes append the wire's whole path (``/v1/messages``, ``/v1beta/models/...``,
``/api/chat``); ``openai/responses/`` routes append ``/responses``."""


class GatewayServerError(ConformanceError):
    """The proxy's venv could not be built or the proxy did not start; the message names the
    command or log and what to do next."""


@dataclass(frozen=True)
class Cache:
    """Where everything lives: ``${CONFORMANCE_CACHE:-~/.cache/conformance}/litellm-proxy``."""

    root: Path

    @classmethod
    def default(cls) -> Cache:
        base = os.environ.get("CONFORMANCE_CACHE") or str(Path.home() / ".cache" / "conformance")
        return cls(Path(base) / "litellm-proxy")

    @property
    def venv(self) -> Path:
        return self.root / "venv"

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    @property
    def litellm(self) -> Path:
        return self.venv / "bin" / "litellm"

    @property
    def facts(self) -> Path:
        return self.root / "venv.json"

    def config(self, port: int) -> Path:
        return self.root / f"config-{port}.yaml"

    def log(self, port: int) -> Path:
        return self.root / f"proxy-{port}.log"


def missing(cache: Cache) -> list[tuple[Path, str]]:
    """What ``serve`` needs that is absent or not the pinned build, each with the command that makes it."""
    command = f"python {SCRIPT} build"
    if not cache.litellm.is_file() or not cache.facts.is_file():
        return [(cache.litellm, command)]
    facts = json.loads(cache.facts.read_text(encoding="utf-8"))
    return [] if facts.get("litellm") == VERSION else [(cache.facts, command)]


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _pip(cache: Cache, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(cache.python), "-m", "pip", "install", "-q", "--disable-pip-version-check", *args],
        capture_output=True,
        text=True,
        check=False,
    )


PROXY_REQUIREMENTS = """\
import sys
from importlib.metadata import requires
from packaging.requirements import Requirement
for line in requires("litellm") or ():
    req = Requirement(line)
    if req.marker is None or req.name in set(sys.argv[1:]):
        continue
    if req.marker.evaluate({"extra": "proxy"}) and not req.marker.evaluate({"extra": ""}):
        extras = f"[{','.join(sorted(req.extras))}]" if req.extras else ""
        print(f"{req.name}{extras}{req.specifier}")
"""
"""Run in the proxy's venv: the ``proxy`` extra's requirements of the installed litellm (markers
evaluated for that interpreter), less the names given."""


def proxy_requirements(cache: Cache) -> list[str]:
    """The ``proxy`` extra's requirements of the litellm installed in the venv, less ``UNSERVED``."""
    done = subprocess.run(
        [str(cache.python), "-c", PROXY_REQUIREMENTS, *sorted(UNSERVED)], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise GatewayServerError(f"reading litellm's proxy requirements failed: {done.stderr.strip()[-400:]}")
    return done.stdout.split()


def build(cache: Cache, *, force: bool = False) -> None:
    """The proxy's venv with the pin (idempotent: a venv whose facts say the pinned version is kept)."""
    if not force and not missing(cache):
        _log(f"{cache.venv}: litellm {VERSION} already installed")
        return
    started = time.monotonic()
    cache.root.mkdir(parents=True, exist_ok=True)
    done = subprocess.run([sys.executable, "-m", "venv", "--clear", str(cache.venv)], capture_output=True, text=True)
    if done.returncode != 0:
        raise GatewayServerError(f"`{sys.executable} -m venv {cache.venv}` failed: {done.stderr.strip()[-400:]}")
    how = PIN
    whole = _pip(cache, PIN)
    if whole.returncode != 0:
        first = _pip(cache, f"litellm=={VERSION}")
        if first.returncode != 0:
            raise GatewayServerError(
                f"pip could not install {PIN} nor litellm=={VERSION} into {cache.venv}: "
                f"{first.stderr.strip()[-600:]}; check that pip reaches the package index"
            )
        rest = proxy_requirements(cache)
        second = _pip(cache, *rest)
        if second.returncode != 0:
            raise GatewayServerError(
                f"pip could not install litellm's proxy requirements into {cache.venv}: {second.stderr.strip()[-600:]}"
            )
        reason = whole.stderr.strip().splitlines()[-1] if whole.stderr.strip() else "pip failed"
        how = f"litellm=={VERSION} and its proxy extra less {', '.join(sorted(UNSERVED))} ({PIN}: {reason})"
    facts = {"litellm": VERSION, "installed": how, "python": sys.version.split()[0]}
    facts["seconds"] = str(round(time.monotonic() - started))
    cache.facts.write_text(json.dumps(facts, indent=2) + "\n", encoding="utf-8")
    _log(f"{cache.venv}: {how}, in {facts['seconds']} s")


def proxy_config(upstream_port: int, upstreams: Sequence[str] = tuple(ROUTES)) -> str:
    """The proxy's config (YAML; JSON is YAML): one route ``emulator-WIRE`` per upstream wire, each
    calling the emulator at ``http://127.0.0.1:UPSTREAM_PORT`` (``/v1`` after it for OpenAI Chat,
    ``API_PATHS``) with the fake key; the master key
    read from the environment by LiteLLM (``os.environ/LITELLM_MASTER_KEY``)."""
    unknown = [u for u in upstreams if u not in ROUTES]
    if unknown:
        raise GatewayServerError(f"no route for {', '.join(unknown)} (routes: {', '.join(ROUTES)})")
    routes = [
        {
            "model_name": f"emulator-{wire}",
            "litellm_params": {
                "model": ROUTES[wire],
                "api_base": f"http://{HOST}:{upstream_port}{API_PATHS.get(wire, '')}",
                "api_key": FAKE_API_KEY,
            },
        }
        for wire in upstreams
    ]
    config = {"model_list": routes, "general_settings": {"master_key": "os.environ/LITELLM_MASTER_KEY"}}
    return json.dumps(config, indent=2) + "\n"


def proxy_command(cache: Cache, config: Path, port: int) -> list[str]:
    """``litellm --config CONFIG --host 127.0.0.1 --port PORT``."""
    return [str(cache.litellm), "--config", str(config), "--host", HOST, "--port", str(port)]


def proxy_environment(master_key: str, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The proxy's environment: ``base`` (this one by default) without any database URL or provider
    key, with the offline cost map and the master key."""
    env = {
        k: v
        for k, v in (os.environ if base is None else base).items()
        if k not in {"DATABASE_URL", "DIRECT_URL", "REDIS_URL", "LITELLM_MASTER_KEY"}
        and not k.endswith("_API_KEY")
        and k not in {"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"}
    }
    env.update({"LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_MASTER_KEY": master_key, "NO_PROXY": "*"})
    return env


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


class GatewayServer:
    """The proxy as a context manager: started on 127.0.0.1 (a free port unless given), ready when
    ``/health/liveliness`` answers 200, stopped (SIGTERM, then SIGKILL after 10 s) on exit."""

    def __init__(
        self,
        cache: Cache,
        *,
        upstream_port: int,
        master_key: str,
        port: int = 0,
        upstreams: Sequence[str] = tuple(ROUTES),
        ready_timeout: float = 180,
    ) -> None:
        self.cache = cache
        self.upstream_port = upstream_port
        self.master_key = master_key
        self.port = port or free_port()
        self.upstreams = tuple(upstreams)
        self.ready_timeout = ready_timeout
        self.log = cache.log(self.port)
        self.process: subprocess.Popen[bytes] | None = None
        self.start_seconds = 0.0

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def provenance(self) -> dict[str, str]:
        """What a report of this gateway says of it: the build, the command and the routes."""
        facts = json.loads(self.cache.facts.read_text(encoding="utf-8")) if self.cache.facts.is_file() else {}
        return {
            "gateway": f"LiteLLM proxy {VERSION} ({facts.get('installed', PIN)}), started by {SCRIPT}",
            "gateway_command": f"litellm --config config.yaml --host {HOST} --port {self.port}",
            "gateway_routes": ", ".join(f"emulator-{w} -> {ROUTES[w]}" for w in self.upstreams),
        }

    def __enter__(self) -> GatewayServer:
        absent = missing(self.cache)
        if absent:
            raise GatewayServerError("; ".join(f"{path} is missing: run `{command}`" for path, command in absent))
        config = self.cache.config(self.port)
        config.write_text(proxy_config(self.upstream_port, self.upstreams), encoding="utf-8")
        started = time.monotonic()
        with self.log.open("wb") as handle:
            self.process = subprocess.Popen(
                proxy_command(self.cache, config, self.port),
                stdout=handle,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=proxy_environment(self.master_key),
                start_new_session=True,
            )
        try:
            self._wait_ready(started)
        except BaseException:
            self.stop()
            raise
        self.start_seconds = round(time.monotonic() - started, 2)
        return self

    def _wait_ready(self, started: float) -> None:
        assert self.process is not None
        while time.monotonic() - started < self.ready_timeout:
            if self.process.poll() is not None:
                raise GatewayServerError(
                    f"the LiteLLM proxy exited {self.process.returncode} before it was ready;"
                    f" its output is in {self.log}"
                )
            try:
                with urllib.request.urlopen(f"{self.base_url}/health/liveliness", timeout=5) as response:
                    if response.status == 200:
                        return
            except (OSError, urllib.error.URLError):
                pass
            time.sleep(0.25)
        raise GatewayServerError(
            f"the LiteLLM proxy on {self.base_url} did not answer /health/liveliness within {self.ready_timeout} s;"
            f" see {self.log}"
        )

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.stop()


def _status(cache: Cache) -> int:
    print(f"cache: {cache.root}")
    print(f"proxy: {cache.litellm} ({'present' if cache.litellm.is_file() else 'missing'})")
    if cache.facts.is_file():
        print(f"installed: {json.loads(cache.facts.read_text(encoding='utf-8')).get('installed', '?')}")
    absent = missing(cache)
    for path, command in absent:
        print(f"missing {path}: run `{command}`")
    return 1 if absent else 0


def _serve(cache: Cache, port: int, upstream_port: int, key_env: str) -> int:
    key = os.environ.get(key_env, "")
    if not key:
        raise GatewayServerError(f"set ${key_env} to the master key callers will send (it is never printed)")
    stop = {"now": False}

    def on_signal(signum: int, frame: object) -> None:
        stop["now"] = True

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    with GatewayServer(cache, upstream_port=upstream_port, master_key=key, port=port) as server:
        print(server.base_url, flush=True)
        _log(
            f"LiteLLM proxy {VERSION} ready in {server.start_seconds} s, calling the emulator on port {upstream_port};"
            f" routes {', '.join(f'emulator-{w}' for w in ROUTES)}; log: {server.log}; Ctrl-C stops it"
        )
        assert server.process is not None
        while not stop["now"] and server.process.poll() is None:
            time.sleep(0.2)
        if server.process.poll() is not None and not stop["now"]:
            _log(f"the LiteLLM proxy exited {server.process.returncode}; see {server.log}")
            return 1
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=SCRIPT, description=__doc__.split("\n\n", 1)[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--cache",
        type=Path,
        help="the cache folder (default: ${CONFORMANCE_CACHE:-~/.cache/conformance}/litellm-proxy)",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    build_parser = sub.add_parser("build", help=f"build the proxy's venv with {PIN} (idempotent)")
    build_parser.add_argument("--force", action="store_true", help="rebuild even when the venv is current")
    sub.add_parser("status", help="say what is in the cache; exit 1 when the venv is missing")
    config_parser = sub.add_parser("config", help="print the proxy config serve writes")
    config_parser.add_argument("--upstream-port", type=int, required=True, help="the emulator's port")
    serve_parser = sub.add_parser("serve", help="start the proxy on 127.0.0.1 and print its base URL")
    serve_parser.add_argument("--port", type=int, default=0, help="the proxy's port (default: a free one)")
    serve_parser.add_argument(
        "--upstream-port", type=int, required=True, help="the port the emulator listens on (every route calls it)"
    )
    serve_parser.add_argument(
        "--master-key-env", default=KEY_ENV, help=f"the variable holding the master key (default {KEY_ENV})"
    )
    args = parser.parse_args(argv)
    cache = Cache(args.cache) if args.cache else Cache.default()
    try:
        if args.command == "build":
            build(cache, force=args.force)
            return 0
        if args.command == "status":
            return _status(cache)
        if args.command == "config":
            print(proxy_config(args.upstream_port), end="")
            return 0
        return _serve(cache, args.port, args.upstream_port, args.master_key_env)
    except GatewayServerError as exc:
        print(f"{SCRIPT}: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
