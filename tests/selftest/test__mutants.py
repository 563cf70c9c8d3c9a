"""Tests for ``conformance.selftest._mutants``: every bundled mutant is caught by the bundled
scenario written for its behaviour, the reference adapters give no false failure, and the registry
holds its rules (names, one bug per mutant, spread over the five native adapters)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import pytest

from conformance.adapters import get_adapter
from conformance.adapters.base import CONTRACT_FUNCTIONS
from conformance.run.runner import RunOptions
from conformance.scenarios.values import Scenario
from conformance.selftest import MUTANTS, Mutant, harmless_copy, mcp_scenarios, mutant_registry, run_mutant
from tests.selftest._support import NATIVE, References

# The scenario written for each bug's behaviour (scenarios/README.md "covers" column, wire-formats.md
# §10), and the check family that judges that behaviour. The kill must include this one.
EXPECTED_KILL: dict[str, tuple[str, str]] = {
    "openai_chat~merge_parallel_by_index": ("roundtrip.calls", "streaming/parallel_calls_stream"),
    "openai_chat~concat_repeated_names": ("roundtrip.calls", "streaming/name_repeated"),
    "openai_chat~args_in_first_chunk_dropped": ("roundtrip.calls", "streaming/args_in_first_chunk"),
    "openai_chat~bad_json_to_empty": ("recovery.arguments_error", "arguments/malformed_json"),
    "openai_chat~second_call_id_lost": ("roundtrip.calls", "basic/parallel_calls"),
    "openai_chat~utf8_per_chunk": ("streaming.chunk_invariance", "streaming/multibyte_text"),
    "openai_chat~length_as_stop": ("roundtrip.finish_reason", "basic/max_tokens_length"),
    "openai_chat~tool_choice_required_dropped": ("translation.tool_choice", "tool_choice/required"),
    "openai_responses~cumulative_args_as_deltas": ("roundtrip.calls", "basic/single_call"),
    "openai_responses~parallel_false_dropped": ("translation.tool_choice", "tool_choice/parallel_disabled"),
    "openai_responses~text_before_call_dropped": ("roundtrip.text", "basic/text_before_call"),
    "openai_responses~retry_after_ignored": ("recovery.provider_error", "errors/rate_limit"),
    "openai_responses~item_id_as_call_id": ("roundtrip.call_ids", "basic/get_time"),
    "anthropic~is_error_dropped": ("roundtrip.request", "tool_results/is_error"),
    "anthropic~results_after_text": ("translation.wire_paths", "multi_turn/results_then_user_text"),
    "anthropic~overloaded_529_as_server": ("recovery.provider_error", "errors/overloaded"),
    "anthropic~input_schema_dropped": ("translation.tool_definitions", "basic/single_call"),
    "anthropic~empty_args_error": ("roundtrip.calls", "streaming/empty_args_string"),
    "anthropic~broken_stream_calls_valid": ("recovery.broken_stream", "errors/stream_error_event"),
    "gemini~stop_with_calls_as_stop": ("roundtrip.finish_reason", "basic/single_call"),
    "gemini~names_not_mapped_back": ("roundtrip.calls", "names/slash"),
    "gemini~retry_delay_ignored": ("recovery.provider_error", "errors/rate_limit"),
    "gemini~is_error_as_result": ("translation.wire_paths", "tool_results/is_error"),
    "gemini~call_ids_dropped": ("translation.wire_paths", "multi_turn/call_id_sent_back"),
    "gemini~last_event_not_flushed": ("recovery.provider_error", "streaming/unterminated_last_event"),
    "ollama~arguments_as_json_string": ("translation.request_shape", "multi_turn/call_result_answer"),
    "ollama~length_as_stop": ("roundtrip.finish_reason", "basic/max_tokens_length"),
    "ollama~names_not_mapped_back": ("roundtrip.calls", "names/dotted"),
    "ollama~busy_503_as_server": ("recovery.provider_error", "errors/unavailable"),
    "anthropic~thinking_signature_blanked": ("translation.wire_paths", "multi_turn/reasoning_replay"),
    "gemini~thought_signature_dropped": ("translation.wire_paths", "multi_turn/reasoning_replay"),
    "openai_responses~reasoning_items_not_replayed": ("translation.wire_paths", "multi_turn/reasoning_replay"),
    "openai_chat~retry_after_ms_ignored": ("recovery.provider_error", "errors/rate_limit_retry_after_ms"),
    "gemini~retry_delay_body_ignored": ("recovery.provider_error", "errors/rate_limit_delay_in_body"),
    "openai_chat~last_name_wins": ("roundtrip.calls", "streaming/name_empty_repeated"),
    "openai_chat~pops_caller_tool_schema_key": ("translation.no_mutation", "arguments/escaped_strings"),
    "anthropic~clears_caller_chunk_list": ("translation.no_mutation", "arguments/empty_string"),
    "gemini~edits_caller_response_body": ("translation.no_mutation", "arguments/empty_string"),
    "openai_chat~done_without_finish_incomplete": ("recovery.provider_error", "streaming/done_without_finish_reason"),
    "openai_chat~default_temperature_sent": ("translation.recorded_request", "basic/single_call"),
    "anthropic~max_tokens_default_changed": ("translation.recorded_request", "basic/single_call"),
    "ollama~stream_false_dropped": ("translation.recorded_request", "basic/single_call"),
    "openai_responses~strict_false_dropped": ("translation.recorded_request", "basic/single_call"),
    "openai_chat~usage_dropped": ("roundtrip.usage", "basic/text_before_call"),
    "anthropic~usage_from_message_start_only": ("roundtrip.usage", "basic/text_before_call"),
    "gemini~usage_summed": ("roundtrip.usage", "basic/text_before_call"),
    "openai_responses~cache_tokens_ignored": ("roundtrip.usage", "basic/text_before_call"),
    "openai_responses~cache_write_ignored": ("roundtrip.usage", "basic/text_before_call"),
    "anthropic~stale_tool_list": ("translation.tool_list", "mcp/tools_added"),
    "openai_chat~drop_structured_content": ("translation.tool_result_content", "mcp/result_structured_only"),
    "anthropic~drop_text_fallback": ("translation.tool_result_content", "mcp/result_structured_error"),
    "gemini~audio_as_text_silently": ("translation.tool_result_content", "mcp/result_audio"),
    "openai_responses~client_tool_search_dropped": ("roundtrip.calls", "wire_specific/client_tool_search"),
    "openai_chat~present_id_opens_call": ("roundtrip.calls", "streaming/id_empty_repeated"),
    "anthropic~refusal_as_stop": ("roundtrip.finish_reason", "wire_specific/content_filter"),
    "anthropic~usage_start_plus_delta": ("roundtrip.usage", "basic/text_before_call"),
    "gemini~malformed_call_as_stop": ("roundtrip.finish_reason", "wire_specific/gemini_malformed_function_call"),
    "gemini~recitation_as_stop": ("roundtrip.finish_reason", "wire_specific/gemini_recitation"),
    "anthropic~context_window_as_stop": ("roundtrip.finish_reason", "wire_specific/anthropic_context_window_exceeded"),
    "anthropic~stop_sequence_as_other": ("roundtrip.finish_reason", "wire_specific/anthropic_stop_sequence"),
    "gemini~other_as_stop": ("roundtrip.finish_reason", "wire_specific/gemini_finish_other"),
    "anthropic~pause_turn_as_stop": ("roundtrip.finish_reason", "wire_specific/anthropic_pause_turn"),
    "gemini~thought_signature_moved": ("roundtrip.reasoning_replay", "reasoning/call_after_thinking"),
    "anthropic~foreign_reasoning_sent": ("roundtrip.reasoning_replay", "reasoning/cross_wire_history_to_anthropic"),
    "openai_chat~tool_turn_reasoning_dropped_at_user_turn": ("roundtrip.reasoning_replay", "reasoning/new_user_turn"),
    "openai_chat~tools_reordered_between_turns": ("roundtrip.cache_prefix", "multi_turn/two_rounds"),
    "openai_chat~earlier_calls_reserialised": ("roundtrip.cache_prefix", "multi_turn/two_rounds"),
}


@pytest.mark.parametrize("base", NATIVE)
def test_the_reference_adapters_have_no_false_failures(base: str, references: References) -> None:
    cases, failed = references(base)
    assert cases
    assert [(c.scenario, c.mode, c.status, c.message) for c in failed] == []


@pytest.mark.parametrize("name", list(MUTANTS))
def test_every_mutant_is_killed_by_the_bundled_scenarios(
    name: str, scenarios: Sequence[Scenario], options: RunOptions, references: References
) -> None:
    mutant = MUTANTS[name]
    reference, _ = references(mutant.base)
    tagged = mcp_scenarios(mutant.mcp_tag) if mutant.mcp_tag else []  # its MCP scenarios, as the command runs them
    result = run_mutant(mutant, [*scenarios, *tagged], options, reference)
    if mutant.gap is not None:
        assert result.status == "gap", f"{name} is killed now: remove its declared gap ({result.kills[:3]})"
        return
    assert result.status == "killed"
    caught = {(k.check, k.scenario) for k in result.kills}
    assert EXPECTED_KILL[name] in caught, sorted(caught)
    assert all(k.check != "case.error" for k in result.kills), "a bug must be caught by a check, not a crash"


def test_every_killable_mutant_names_the_scenario_that_must_catch_it() -> None:
    assert set(EXPECTED_KILL) == {name for name, m in MUTANTS.items() if m.gap is None}


def test_at_least_22_killable_mutants_spread_over_the_five_native_adapters() -> None:
    killable = [m for m in MUTANTS.values() if m.gap is None]
    assert len(killable) >= 22
    per_base = Counter(m.base for m in killable)
    assert set(per_base) == set(NATIVE)
    assert min(per_base.values()) >= 4


def test_gaps_name_the_scenario_or_check_that_would_be_needed() -> None:
    for mutant in MUTANTS.values():
        if mutant.gap is not None:
            assert len(mutant.gap) > 40


@pytest.mark.parametrize("name", list(MUTANTS))
def test_a_mutant_is_its_reference_with_one_bug(name: str) -> None:
    mutant = MUTANTS[name]
    reference = get_adapter(mutant.base)
    adapter = mutant.adapter()
    assert adapter.name == f"{mutant.base}~{mutant.bug}" == name
    assert adapter.wire_format == reference.wire_format
    assert adapter.capabilities == reference.capabilities
    changed = {f for f in CONTRACT_FUNCTIONS if getattr(adapter, f) is not getattr(reference, f)}
    # one function, or both decoders for a decoding bug (a shared table or accumulator)
    assert len(changed) == 1 or changed == {"response_from_wire", "stream_from_wire"}, changed
    assert mutant.source and mutant.description


def test_every_mutant_names_a_real_world_source() -> None:
    for mutant in MUTANTS.values():
        assert "github.com/" in mutant.source or mutant.source.startswith(("E", "§")), mutant.source


def test_the_registry_refuses_a_duplicate_name() -> None:
    copy = harmless_copy("gemini")
    with pytest.raises(ValueError, match="duplicate mutant 'gemini~identical_copy'"):
        mutant_registry([copy, copy])


def test_a_harmless_copy_changes_no_behaviour() -> None:
    mutant: Mutant = harmless_copy("ollama")
    adapter = mutant.adapter()
    reference = get_adapter("ollama")
    assert adapter.name == "ollama~identical_copy"
    assert adapter.response_from_wire is reference.response_from_wire
