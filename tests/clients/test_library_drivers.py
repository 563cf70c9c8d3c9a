"""The library drivers, each in its pinned venv, on the cases that show what the library does once the
driver stops repairing it (docs/clients.md, "Drivers do what a user does").

Opt-in tier ``libraries``: a venv that is not built (``python scripts/certify_libraries.py --no-certify``,
about 3 minutes of installs) skips its test. The expected kinds are the scenarios' own
(``scenarios/errors/*.yaml``); the actual ones are what the library's exception classes mean.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.libraries

ROOT = Path(__file__).resolve().parents[2]
VENVS = ROOT / ".venvs"


def _certify(venv: str, driver: str, scenarios: list[str], tmp_path: Path) -> list[dict[str, Any]]:
    python = VENVS / venv / "bin" / "python"
    if not python.exists():
        pytest.skip(f"opt-in tier: .venvs/{venv} is not built (python scripts/certify_libraries.py --no-certify)")
    command = [sys.executable, "-m", "conformance", "certify", "--client", f"examples/clients/{driver}:CLIENT"]
    command += ["--python", str(python), "--report-dir", str(tmp_path), "--format", "json", "--quiet"]
    command += ["--timeout", "60"]
    for scenario in scenarios:
        command += ["--scenarios", scenario]
    subprocess.run(command, cwd=ROOT, check=False, capture_output=True, timeout=900)
    cases: list[dict[str, Any]] = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))["cases"]
    return cases


def _failing(cases: list[dict[str, Any]], check: str) -> dict[tuple[str, str, str], list[dict[str, Any]]]:
    """(wire, scenario, mode) -> the findings of ``check`` where it failed."""
    return {
        (case["adapter"].rpartition("/")[2], case["scenario"], case["mode"]): verdict["findings"]
        for case in cases
        for verdict in case["checks"]
        if verdict["check"] == check and verdict["status"] == "fail"
    }


def test_litellm_raises_a_broken_stream_as_a_service_unavailable_error(tmp_path: Path) -> None:
    """LiteLLM raises a stream's failure as ``MidStreamFallbackError``, a ``ServiceUnavailableError``
    (litellm/exceptions.py:1267), whatever broke: a cut connection, an error event, on Gemini even a 429
    answered before the stream began. A user catching the documented classes meets a 503-kind error.
    (Ollama's error line is a ``BadRequestError``: LiteLLM's Ollama stream reads a ``message`` the line
    does not have, "KeyError: 'message'".)"""
    scenarios = ["errors/stream_disconnect", "errors/stream_error_event", "errors/rate_limit"]
    failing = _failing(_certify("litellm", "litellm_driver.py", scenarios, tmp_path), "recovery.provider_error")
    kinds = {
        (wire, scenario): (finding["expected"], finding["actual"])
        for (wire, scenario, mode), findings in failing.items()
        for finding in findings
        if finding["path"] == "$.error.kind" and mode == "stream"
    }
    assert kinds == {
        ("openai_chat", "errors/stream_disconnect"): ("stream_incomplete", "overloaded"),
        ("anthropic", "errors/stream_disconnect"): ("stream_incomplete", "overloaded"),
        ("gemini", "errors/stream_disconnect"): ("stream_incomplete", "overloaded"),
        ("ollama", "errors/stream_disconnect"): ("stream_incomplete", "overloaded"),
        ("openai_chat", "errors/stream_error_event"): ("server", "overloaded"),
        ("anthropic", "errors/stream_error_event"): ("server", "overloaded"),
        ("gemini", "errors/stream_error_event"): ("server", "overloaded"),
        ("ollama", "errors/stream_error_event"): ("server", "invalid_request"),
        ("gemini", "errors/rate_limit"): ("rate_limit", "overloaded"),
    }
    assert not [key for key in failing if key[2] == "non_stream"], failing


@pytest.mark.parametrize(
    ("venv", "driver"),
    [("langchain-openai", "langchain_openai_driver.py"), ("langchain-anthropic", "langchain_anthropic_driver.py")],
)
def test_langchain_gathers_a_call_cut_off_by_max_tokens_as_a_valid_call(venv: str, driver: str, tmp_path: Path) -> None:
    """The streamed chunks summed as LangChain's docs do it: ``init_tool_calls`` parses the merged argument
    text with ``parse_partial_json`` (langchain_core/messages/ai.py), so the text the model stopped in the
    middle of is a call with the arguments read so far, not an invalid one. On OpenAI Chat, whose
    arguments are text, that is a defect (the whole answer lists the same call as invalid); Anthropic's
    own whole answer holds the partial input as an object, so there it is left to the caller."""
    cases = _certify(venv, driver, ["arguments/truncated_by_length"], tmp_path)
    wire = "openai_chat" if venv == "langchain-openai" else "anthropic"
    [case] = [c for c in cases if c["mode"] == "stream"]
    [verdict] = [v for v in case["checks"] if v["check"] == "recovery.arguments_error"]
    assert verdict["status"] == ("fail" if wire == "openai_chat" else "left")
    [finding] = verdict["findings"]
    assert (finding["path"], finding["expected"]) == ("$.tool_calls[0].arguments", "arguments_error")
    assert finding["actual"] == {"path": "src/server/middleware/auth.ts"}


@pytest.mark.parametrize(
    ("venv", "driver", "reordered"),
    [
        ("litellm", "litellm_driver.py", True),
        ("langchain-anthropic", "langchain_anthropic_driver.py", False),
        ("pydantic-ai", "pydantic_ai_driver.py", False),
    ],
)
def test_interleaved_thinking_goes_back_between_the_calls_it_came_between(
    venv: str, driver: str, reordered: bool, tmp_path: Path
) -> None:
    """Anthropic's answer [thinking, tool_use, thinking, tool_use] goes back unmodified while the tool loop is open
    ("thinking blocks ... pass them back exactly as received", anthropic types/thinking_block_param.py; the
    scenario's source). LiteLLM keeps an assistant message's thinking in ``thinking_blocks`` beside its
    ``tool_calls`` and writes every thinking block first (litellm_core_utils/prompt_templates/factory.py:3346-3355;
    in order only with server tools, PR #23093): the second thinking block lands before the first tool_use, which
    Anthropic answers with 400 "blocks in the latest assistant message cannot be modified". ChatAnthropic and
    pydantic-ai send the blocks in their order."""
    cases = _certify(venv, driver, ["reasoning/interleaved_between_calls"], tmp_path)
    cases = [c for c in cases if c["adapter"].endswith("/anthropic")]
    statuses = {
        c["mode"]: [v["status"] for v in c["checks"] if v["check"] == "roundtrip.reasoning_replay"] for c in cases
    }
    assert statuses == {mode: ["fail" if reordered else "pass"] for mode in ("non_stream", "stream")}
    if not reordered:
        return
    failing = _failing(cases, "roundtrip.reasoning_replay")
    assert sorted(mode for (_, _, mode) in failing) == ["non_stream", "stream"]
    for findings in failing.values():
        assert [f["path"] for f in findings][:1] == ["$.messages[1].content[1]"]
        assert findings[0]["actual"][0] == "thinking"
