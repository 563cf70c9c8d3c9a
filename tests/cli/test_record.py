"""``conformance record``: emulator and live recording through one code path, stable re-recording,
and the bundled cassettes being exactly what the recorder makes today."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.emulator import Emulator, EmulatorScript
from conformance.scenarios.loader import load_scenarios

ROOT = Path(__file__).resolve().parents[2]


def test_emulator_recording_writes_then_leaves_files_byte_identical(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["record", "--emulator", "--adapter", "anthropic,gemini", "--scenario", "basic/get_time"]
    argv += ["--cassette-dir", str(tmp_path)]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "[1/2] anthropic basic/get_time: recorded" in err and "2 recorded" in err
    files = sorted(tmp_path.rglob("*.yaml"))
    assert [f.relative_to(tmp_path).as_posix() for f in files] == [
        "anthropic/basic/get_time.yaml",
        "gemini/basic/get_time.yaml",
    ]
    before = {f: f.read_bytes() for f in files}
    assert main(argv) == 0
    assert "0 recorded, 2 unchanged" in capsys.readouterr().err
    assert {f: f.read_bytes() for f in files} == before


def test_live_recording_uses_the_same_path_and_scrubs_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    key = "sk-live-test-0123456789abcdefghijklmnop"
    monkeypatch.setenv("CONFORMANCE_TEST_KEY", key)
    scenario = next(s for s in load_scenarios([ROOT / "scenarios"]).scenarios if s.id == "basic/get_time")
    with Emulator() as emulator:  # stands in for the provider: loopback only in tests
        emulator.set_script(EmulatorScript(scenario_id=scenario.id, replies=tuple(t.reply for t in scenario.turns)))
        code = main(
            [
                "record",
                "--live",
                "--adapter",
                "openai_chat",
                "--scenario",
                "basic/get_time",
                "--base-url",
                emulator.base_url,
                "--api-key-env",
                "CONFORMANCE_TEST_KEY",
                "--cassette-dir",
                str(tmp_path),
            ]
        )
        sent = [r.headers.get("authorization") for r in emulator.requests]
    assert code == 0, capsys.readouterr().err
    assert sent and all(h == f"Bearer {key}" for h in sent)  # the key did go to the provider
    path = tmp_path / "openai_chat" / "basic" / "get_time.yaml"
    text = path.read_text(encoding="utf-8")
    assert key not in text
    document = json.loads(text)
    assert document["provenance"]["mode"] == "live"
    assert len(document["interactions"]) == 4  # two turns, non-streamed then streamed


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--live"], "--live needs --base-url"),
        (["--live", "--base-url", "http://127.0.0.1:9", "--api-key-env", "NO_SUCH_VAR_XYZ"], "is not set"),
        (["--emulator", "--adapter", "nope"], "unknown adapter nope"),
        (["--emulator", "--scenario", "no/such"], "no scenario matches no/such"),
        (["--emulator", "--base-url", "http://x"], "go with --live"),
    ],
)
def test_usage_errors_exit_2(extra: list[str], needle: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["record", *extra]) == 2
    assert needle in capsys.readouterr().err


def test_the_bundled_cassettes_are_what_the_recorder_makes_today(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Re-recording the whole bundled suite against the emulator changes no file: the cassettes are
    up to date with the scenarios, the adapters and the emulator, and recording is deterministic."""
    copy = tmp_path / "cassettes"
    shutil.copytree(ROOT / "cassettes", copy)
    before = {p.relative_to(copy): p.read_bytes() for p in copy.rglob("*.yaml")}
    assert main(["record", "--emulator", "--cassette-dir", str(copy)]) == 0
    err = capsys.readouterr().err
    assert err.splitlines()[-1].startswith("0 recorded, "), err[-3000:]
    after = {p.relative_to(copy): p.read_bytes() for p in copy.rglob("*.yaml")}
    assert after == before
