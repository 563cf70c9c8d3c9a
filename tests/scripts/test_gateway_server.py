"""scripts/gateway_server.py without building anything: what it reports missing and the command that
makes it, the proxy command bound to 127.0.0.1 only, the generated config (one route per upstream
wire, each calling the emulator's port with the fake key, the master key read from the environment
and never written), the proxy's environment (offline cost map, no database, no provider key), and
``serve`` refusing to start without a master key. Starting the real proxy is the ``gateway`` tier
(tests/servers/test_gateway_proxy.py)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from conformance.clients.harness import FAKE_API_KEY

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "gateway_server.py"


@pytest.fixture(scope="module")
def gs() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gateway_server", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["gateway_server"] = module
    spec.loader.exec_module(module)
    return module


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, check=False, env=env, timeout=60
    )


def test_help_lists_the_subcommands() -> None:
    done = _run("--help")
    assert done.returncode == 0, done.stderr
    for command in ("build", "status", "config", "serve"):
        assert command in done.stdout


def test_status_names_what_is_missing_and_the_command_that_makes_it(tmp_path: Path) -> None:
    done = _run("--cache", str(tmp_path), "status")
    assert done.returncode == 1
    assert (
        f"missing {tmp_path / 'venv' / 'bin' / 'litellm'}: run `python scripts/gateway_server.py build`" in done.stdout
    )


def test_a_venv_of_another_version_is_missing_too(gs: ModuleType, tmp_path: Path) -> None:
    cache = gs.Cache(tmp_path)
    cache.litellm.parent.mkdir(parents=True)
    cache.litellm.write_text("")
    cache.facts.write_text(json.dumps({"litellm": "1.0.0"}))
    assert gs.missing(cache) == [(cache.facts, "python scripts/gateway_server.py build")]
    cache.facts.write_text(json.dumps({"litellm": gs.VERSION}))
    assert gs.missing(cache) == []


def test_the_proxy_binds_loopback_only(gs: ModuleType, tmp_path: Path) -> None:
    cache = gs.Cache(tmp_path)
    command = gs.proxy_command(cache, tmp_path / "c.yaml", 4123)
    assert command == [
        str(tmp_path / "venv" / "bin" / "litellm"),
        "--config",
        str(tmp_path / "c.yaml"),
        "--host",
        "127.0.0.1",
        "--port",
        "4123",
    ]


def test_every_route_calls_the_emulator_with_the_fake_key_and_the_wires_default_model(gs: ModuleType) -> None:
    config = json.loads(gs.proxy_config(18555))
    routes = {r["model_name"]: r["litellm_params"] for r in config["model_list"]}
    assert routes == {
        "emulator-anthropic": {
            "model": "anthropic/claude-sonnet-5",
            "api_base": "http://127.0.0.1:18555",
            "api_key": FAKE_API_KEY,
        },
        "emulator-gemini": {
            "model": "gemini/gemini-3.5-flash",
            "api_base": "http://127.0.0.1:18555",
            "api_key": FAKE_API_KEY,
        },
        "emulator-ollama": {
            "model": "ollama_chat/qwen3:8b",
            "api_base": "http://127.0.0.1:18555",
            "api_key": FAKE_API_KEY,
        },
        "emulator-openai_chat": {
            "model": "openai/gpt-5.4-mini",
            "api_base": "http://127.0.0.1:18555/v1",
            "api_key": FAKE_API_KEY,
        },
        "emulator-openai_responses": {
            "model": "openai/responses/gpt-5.4-mini",
            "api_base": "http://127.0.0.1:18555/v1",
            "api_key": FAKE_API_KEY,
        },
    }
    # the master key is LiteLLM's reference to the environment, never the key itself
    assert config["general_settings"] == {"master_key": "os.environ/LITELLM_MASTER_KEY"}
    assert set(config) == {"model_list", "general_settings"}  # nothing else: the proxy's defaults are judged


def test_the_config_command_prints_it(gs: ModuleType) -> None:
    done = _run("config", "--upstream-port", "18555")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == json.loads(gs.proxy_config(18555))


def test_the_environment_is_offline_without_database_or_provider_keys(gs: ModuleType) -> None:
    base = {
        "PATH": "/usr/bin",
        "DATABASE_URL": "postgresql://x",
        "ANTHROPIC_API_KEY": "sk-ant-real",
        "HTTPS_PROXY": "http://proxy.example:3128",
        "LITELLM_MASTER_KEY": "old",
    }
    env = gs.proxy_environment("sk-master-1", base)
    assert env == {
        "PATH": "/usr/bin",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "LITELLM_MASTER_KEY": "sk-master-1",
        "NO_PROXY": "*",
    }


def test_serve_without_a_master_key_says_which_variable_to_set(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "CONFORMANCE_CACHE": str(tmp_path)}
    done = _run("serve", "--upstream-port", "18555", env=env)
    assert done.returncode == 1
    assert "set $CONFORMANCE_GATEWAY_KEY to the master key callers will send (it is never printed)" in done.stderr


def test_serve_with_no_venv_names_the_build_command(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "CONFORMANCE_GATEWAY_KEY": "sk-never-printed"}
    done = _run("--cache", str(tmp_path), "serve", "--upstream-port", "18555", env=env)
    assert done.returncode == 1
    assert "is missing: run `python scripts/gateway_server.py build`" in done.stderr
    assert "sk-never-printed" not in done.stdout + done.stderr


def test_an_unknown_upstream_has_no_route(gs: ModuleType) -> None:
    with pytest.raises(gs.GatewayServerError, match="no route for soap"):
        gs.proxy_config(1, ["soap"])
