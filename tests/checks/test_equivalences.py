"""The one table of what the suite accepts (docs/equivalences.md): every row has a source, a bad row
is a usage error naming the file and the row, and ``client.recorded_request`` accepts exactly what
the table says: documented equivalents are spelling, a parameter sent unasked is shown with what it
changes and does not fail, a field the provider rejects fails saying what the provider answers."""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from conformance.adapters import for_format
from conformance.adapters.base import Adapter, WireRequest
from conformance.checks.client_request import CHECK
from conformance.checks.equivalences import (
    ANY,
    bundled_table,
    merged,
    parse_table,
    read_table,
    without_equivalents,
)
from conformance.cli import main
from conformance.clients.harness import CertifyOptions, certify
from conformance.clients.translator import TranslatorClient
from conformance.errors import UsageError
from conformance.model import Request
from conformance.scenarios.loader import load_scenarios
from conformance.verdicts import CheckVerdict

REPO = Path(__file__).resolve().parents[2]
CASSETTES = REPO / "cassettes"

HEADER = "## Equivalences\n\n| id | wire | path | value | when | why | source |\n|---|---|---|---|---|---|---|\n"


def _rewriting(wire: str, rewrite: Callable[[dict[str, Any]], None]) -> Adapter:
    adapter = for_format(wire)
    real = adapter.request_to_wire

    def request_to_wire(request: Request) -> WireRequest:
        sent = real(request)
        body = copy.deepcopy(dict(sent.body))
        rewrite(body)
        return replace(sent, body=body)

    return replace(adapter, request_to_wire=request_to_wire)


def _verdict(wire: str, rewrite: Callable[[dict[str, Any]], None], scenario: str, **options: Any) -> CheckVerdict:
    chosen = [s for s in load_scenarios([]).scenarios if s.id == scenario]
    run = certify(
        chosen,
        TranslatorClient(_rewriting(wire, rewrite)),
        CertifyOptions(cassette_dir=CASSETTES, modes=("non_stream",), isolate=False, **options),
    )
    [case] = run.cases
    [found] = [v for v in case.checks if v.check == CHECK]
    return found


# -- the table itself ------------------------------------------------------------------------------


def test_the_bundled_table_reads_and_every_row_has_a_source() -> None:
    table = bundled_table()
    assert {r.id for r in table.equivalences} >= {"stream-false", "gemini-skip-signature", "is-error-not-carried"}
    rows = [*table.equivalences, *table.unasked, *table.rejected]
    assert rows and all(r.source for r in rows)
    assert len(table.sha256) == 64


@pytest.mark.parametrize(
    ("row", "problem"),
    [
        ("| a | openai_chat | `$.x` | `1` | | why | |", "the row has no source"),
        ("| a | openai-chat | `$.x` | `1` | | why | https://x.test |", "unknown wire 'openai-chat'"),
        ("| a | * | x.y | `1` | | why | https://x.test |", "is not a JSON path of the read-back request"),
        ("| a | * | `$.x` | `fals` | | why | https://x.test |", "is not JSON"),
        ("| a | * | `$.x` | `1` | sometimes | why | https://x.test |", "unknown condition 'sometimes'"),
        ("| A b | * | `$.x` | `1` | | why | https://x.test |", "must be lower-case words"),
        ("| a | * | `$.x` | `1` | https://x.test |", "5 cells where the table has 7"),
    ],
)
def test_a_bad_row_is_a_usage_error_naming_the_file_and_line(row: str, problem: str) -> None:
    with pytest.raises(UsageError) as raised:
        parse_table("# mine\n\n" + HEADER + row + "\n", "mine.md")
    assert str(raised.value).startswith("mine.md:7: ")
    assert problem in str(raised.value)


def test_an_id_used_twice_a_wrong_header_and_an_unknown_section_are_refused() -> None:
    good = "| a | * | `$.x` | `1` | | why | https://x.test |\n"
    with pytest.raises(UsageError, match=r"mine.md:6: the id 'a' is used twice \(also line 5\)"):
        parse_table(HEADER + good + good, "mine.md")
    with pytest.raises(UsageError, match=r"must have the columns id \| wire"):
        parse_table("## Equivalences\n\n| id | path |\n|---|---|\n", "mine.md")
    with pytest.raises(UsageError, match="unknown section '## Spelling'"):
        parse_table("## Spelling\n", "mine.md")
    with pytest.raises(UsageError, match=r"is already used in docs/equivalences\.md"):
        merged([bundled_table(), parse_table(HEADER + good.replace("| a |", "| stream-false |"), "mine.md")])


def test_a_table_that_cannot_be_read_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="cannot read it"):
        read_table(tmp_path / "missing.md")
    (tmp_path / "bytes.md").write_bytes(b"\xff\xfe")
    with pytest.raises(UsageError, match="not UTF-8"):
        read_table(tmp_path / "bytes.md")


def test_certify_refuses_a_table_row_without_a_source_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = tmp_path / "ours.md"
    table.write_text(HEADER + "| warm | openai_chat | `$.provider_details.extra.temperature` | `0.9` | | | |\n")
    driver = tmp_path / "drv.py"
    driver.write_text(
        "from conformance.adapters import for_format\n"
        "from conformance.clients.translator import TranslatorClient\n"
        "CLIENT = TranslatorClient(for_format('openai_chat'))\n"
    )
    code = main(
        ["certify", "--client", f"{driver}:CLIENT", "--equivalences", str(table), "--report-dir", str(tmp_path)]
    )
    assert code == 2
    assert f"{table}:5: the row has no source" in capsys.readouterr().err


def test_values_the_table_names_are_left_out_on_both_sides_and_modelled_fields_become_null() -> None:
    table = parse_table(
        HEADER
        + "| off | * | `$.provider_details.extra.stream` | `false` | | | https://x.test |\n"
        + '| auto | * | `$.tool_choice` | `"auto"` | tools offered | | https://x.test |\n'
        + "| any-name | ollama | `$.messages[*].parts[*].provider_details.extra.name` | any | | | https://x.test |\n",
        "t.md",
    )
    assert table.equivalences[2].value is ANY
    plain = {
        "tool_choice": "auto",
        "messages": [{"parts": [{"provider_details": {"extra": {"name": "x"}}}]}],
        "provider_details": {"extra": {"stream": False, "temperature": 1}},
    }
    out = without_equivalents(plain, "ollama", table, tools_offered=True)
    assert out == {
        "tool_choice": None,
        "messages": [{"parts": [{"provider_details": {}}]}],
        "provider_details": {"extra": {"temperature": 1}},
    }
    assert without_equivalents(plain, "ollama", table, tools_offered=False)["tool_choice"] == "auto"
    assert without_equivalents(plain, "gemini", table, tools_offered=True)["messages"] == plain["messages"]


# -- the table applied by client.recorded_request ------------------------------------------------------


def test_documented_gemini_equivalents_are_spelling() -> None:
    def like_pydantic_ai(body: dict[str, Any]) -> None:
        body.setdefault("generationConfig", {})["responseModalities"] = ["TEXT"]
        for content in body["contents"]:
            for part in content["parts"]:
                if "functionCall" in part:
                    part["thoughtSignature"] = "c2tpcF90aG91Z2h0X3NpZ25hdHVyZV92YWxpZGF0b3I="

    found = _verdict("gemini", like_pydantic_ai, "basic/get_time")
    assert (found.status, found.findings) == ("pass", ())

    def another_signature(body: dict[str, Any]) -> None:
        for content in body["contents"]:
            for part in content["parts"]:
                if "functionCall" in part:
                    part["thoughtSignature"] = "bm90IHRoZSBwbGFjZWhvbGRlcg=="

    changed = _verdict("gemini", another_signature, "basic/get_time")
    assert changed.status == "fail"  # a signature the provider never sent is not the placeholder
    assert [f.path for f in changed.findings] == ["$.messages[1].parts[0].provider_details.thoughtSignature"]


def test_a_parameter_sent_unasked_says_what_it_changes_and_does_not_fail() -> None:
    def with_usage(body: dict[str, Any]) -> None:
        body["stream_options"] = {"include_usage": True}

    found = _verdict("openai_chat", with_usage, "basic/get_time")
    assert found.status == "pass"
    assert {(f.path, f.kind) for f in found.findings} == {
        ("$.provider_details.extra.stream_options.include_usage", "unasked")
    }
    assert all("usage" in f.remedy and f.message.startswith("sent unasked") for f in found.findings)

    def with_user(body: dict[str, Any]) -> None:
        body["user"] = "u-1"

    assert {f.kind for f in _verdict("openai_chat", with_user, "basic/get_time").findings} == {"note"}


def test_a_field_the_provider_rejects_fails_saying_what_it_answers() -> None:
    def flagged(body: dict[str, Any]) -> None:
        for message in body["messages"]:
            if message["role"] == "tool":
                message["is_error"] = True

    found = _verdict("openai_chat", flagged, "tool_results/is_error")
    assert found.status == "fail"
    [finding] = found.findings
    assert finding.kind == "defect" and finding.path == "$.messages[2].parts[0].provider_details.extra.is_error"
    assert "400 `Unknown parameter: 'messages[N].is_error'`" in finding.remedy


def test_no_error_flag_on_openai_chat_is_asked_for_but_the_result_text_must_reach_the_model() -> None:
    def plain_text(body: dict[str, Any]) -> None:
        for message in body["messages"]:
            if message["role"] == "tool":
                message["content"] = message["content"].removeprefix("Error: ")

    assert _verdict("openai_chat", plain_text, "tool_results/is_error").status == "pass"

    def emptied(body: dict[str, Any]) -> None:
        for message in body["messages"]:
            if message["role"] == "tool":
                message["content"] = ""

    lost = _verdict("openai_chat", emptied, "tool_results/is_error")
    assert lost.status == "fail"
    assert [f.path for f in lost.findings] == ["$.messages[2].parts[0].text"]


def test_a_users_table_accepts_what_its_rows_say(tmp_path: Path) -> None:
    def warmer(body: dict[str, Any]) -> None:
        body["temperature"] = 0.9

    table = tmp_path / "ours.md"
    table.write_text(
        HEADER + "| our-default | openai_chat | `$.provider_details.extra.temperature` | `0.9` | | ours |"
        " https://docs.example.test/defaults |\n"
    )
    ours = merged([bundled_table(), read_table(table)])
    assert _verdict("openai_chat", warmer, "basic/get_time", equivalences=ours).findings == ()
    assert _verdict("openai_chat", warmer, "basic/get_time").findings  # without it: sent unasked


KINDS = "## Error kinds\n\n| wire | status | kind | raised as | source |\n|---|---|---|---|---|\n"


@pytest.mark.parametrize(
    ("row", "problem"),
    [
        ("| openai_chat | 5xx | overloaded | server | https://x.test |", "is not an HTTP status"),
        ("| openai_chat | 503 | busy | server | https://x.test |", "unknown error kind 'busy' in 'kind'"),
        ("| openai_chat | 503 | overloaded | server | |", "the row has no source"),
    ],
)
def test_a_bad_error_kind_row_is_a_usage_error(row: str, problem: str) -> None:
    with pytest.raises(UsageError, match=re.escape(problem)):
        parse_table(KINDS + row + "\n", "mine.md")


def test_the_openai_sdks_generic_5xx_class_is_its_design_but_a_changed_status_is_not() -> None:
    """openai-python raises every status of 500 and over as InternalServerError (its README's error
    table, ``_client.py:664``): a 503 read as ``server``, status 503 kept, is accepted; the same kind
    with the status changed to 500 (litellm 1.110's 503 -> 500) is not."""
    pytest.importorskip("openai")
    from conformance.clients.child import load_object
    from conformance.model import ErrorInfo

    sdk = load_object(f"{REPO / 'examples' / 'clients' / 'openai_driver.py'}:CLIENT")
    chosen = [s for s in load_scenarios([]).scenarios if s.id == "errors/unavailable"]
    options = CertifyOptions(cassette_dir=CASSETTES, modes=("non_stream",), isolate=False, wires=("openai_chat",))

    def kind_of(client: Any) -> CheckVerdict:
        [case] = certify(chosen, client, options).cases
        [found] = [v for v in case.checks if v.check == "recovery.provider_error"]
        return found

    assert kind_of(sdk).status == "pass"

    def five_hundred(exc: BaseException) -> ErrorInfo | None:
        info = sdk.error_info(exc)
        return None if info is None else replace(info, status=500)

    changed = kind_of(replace(sdk, error_info=five_hundred))
    assert changed.status == "fail"
    assert {f.path for f in changed.findings} == {"$.error.kind", "$.error.status"}


REPLAY = "## Replay and prefix\n\n| id | wire | rule | why | source |\n|---|---|---|---|---|\n"


def test_replay_rules_are_read_checked_and_applied_only_on_their_wires() -> None:
    from conformance.checks.equivalences import REPLAY_RULES, replay_rule

    bundled = bundled_table()
    assert {r.rule for r in bundled.replay} == set(REPLAY_RULES)
    assert replay_rule(bundled, "signature as bytes", "gemini") is not None
    assert replay_rule(bundled, "signature as bytes", "anthropic") is None
    assert replay_rule(bundled, "thinking omitted after user text", "anthropic") is not None
    with pytest.raises(UsageError, match=r"mine\.md:5: unknown rule 'bytes' in 'rule'"):
        parse_table(REPLAY + "| x | gemini | bytes | | https://x.example |\n", "mine.md")
    with pytest.raises(UsageError, match="has no source"):
        parse_table(REPLAY + "| x | gemini | signature as bytes | | |\n", "mine.md")
    with pytest.raises(UsageError, match="already used"):
        row = "| gemini-signature-bytes | gemini | signature as bytes | | https://x.example |\n"
        merged([bundled, parse_table(REPLAY + row, "mine.md")])
    mine = parse_table(REPLAY + "| mine | ollama | signature as bytes | | https://x.example |\n", "mine.md")
    assert replay_rule(merged([bundled, mine]), "signature as bytes", "ollama") is not None


def test_an_explicit_five_minute_ttl_is_the_same_cache_breakpoint() -> None:
    # anthropic/types/cache_control_ephemeral_param.py: ttl "Defaults to `5m`"
    table = bundled_table()
    sent = {
        "tools": [{"name": "a", "cache_control": {"type": "ephemeral", "ttl": "5m"}}],
        "system_cache_control": {"type": "ephemeral", "ttl": "5m"},
        "messages": [{"parts": [{"kind": "text", "text": "x", "cache_control": {"type": "ephemeral", "ttl": "1h"}}]}],
        "provider_details": {},
    }
    out = without_equivalents(sent, "anthropic", table, tools_offered=True)
    assert out["tools"][0]["cache_control"] == {"type": "ephemeral"}
    assert out["system_cache_control"] == {"type": "ephemeral"}
    assert out["messages"][0]["parts"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}  # not the default


def test_anthropics_direct_caller_sent_back_as_given_is_the_same_call() -> None:
    # cassettes/anthropic/basic/get_time.yaml:96: Anthropic's answer carries "caller": {"type": "direct"}
    # on its tool_use block; anthropic/types/tool_use_block_param.py:28 takes it back (DirectCallerParam,
    # "Tool invocation directly from the model"). The AI SDK writes it back as received.
    def caller(value: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
        def rewrite(body: dict[str, Any]) -> None:
            for message in body["messages"]:
                for block in message["content"] if isinstance(message["content"], list) else []:
                    if block.get("type") == "tool_use":
                        block["caller"] = value

        return rewrite

    found = _verdict("anthropic", caller({"type": "direct"}), "basic/get_time")
    assert (found.status, found.findings) == ("pass", ())
    # a server tool's caller (anthropic/types/server_tool_caller_param.py) is another call: still compared
    server = _verdict(
        "anthropic", caller({"type": "code_execution_20250825", "tool_id": "srvtoolu_1"}), "basic/get_time"
    )
    assert [f.path for f in server.findings] == ["$.messages[1].parts[0].provider_details.extra.caller"]


def test_a_reasoning_summary_sent_beside_the_effort_is_sent_unasked_not_the_effort_dropped() -> None:
    # the AI SDK adds summary "detailed" to every effort (@ai-sdk/openai docs/03-openai.mdx:280)
    def with_summary(body: dict[str, Any]) -> None:
        body["reasoning"]["summary"] = "detailed"

    found = _verdict("openai_responses", with_summary, "reasoning/settings_effort")
    assert found.status == "pass"
    assert {(f.path, f.kind) for f in found.findings} == {("$.provider_details.extra.reasoning.summary", "unasked")}
    assert all("summary" in f.remedy for f in found.findings)


def test_gemini_results_that_repeat_the_tools_name_are_the_same_results() -> None:
    # @ai-sdk/google dist/index.js:920-931: response {name, content} / {name, error};
    # https://ai.google.dev/api/caching#FunctionResponse: 'error' is the error key
    def like_the_ai_sdk(body: dict[str, Any]) -> None:
        for content in body["contents"]:
            for part in content["parts"]:
                if "functionResponse" in part:
                    function = part["functionResponse"]
                    [(key, value)] = function["response"].items()
                    function["response"] = {"name": function["name"], "error" if key == "error" else "content": value}

    for scenario in ("basic/get_time", "tool_results/is_error"):
        found = _verdict("gemini", like_the_ai_sdk, scenario)
        assert (found.status, found.findings) == ("pass", ()), scenario
