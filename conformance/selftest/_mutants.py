"""The mutants: reference adapters, each with one real-world bug injected.

A mutant is ``dataclasses.replace(<reference ADAPTER>, name="<base>~<bug>", <the wrapped function>)``
(``Mutant.adapter``). Its ``patch`` (the bugs are in ``_bugs``) wraps one reference function with a
``_wrap`` helper: it rewrites what the function reads (wire bytes, a body) or what it gives (events,
a wire body, a typed error) so that the observable behaviour is exactly the bug and nothing else. A
decoding bug patches both decoders with the same rewrite (one bug in a shared table or accumulator
shows in both modes).

Each mutant names its real-world source: an edge case of wire-formats.md §10 (E-ids) or §9, or the
public issue where the bug was reported. ``gap`` marks a mutant that no bundled scenario can kill and
names the scenario (or check) that would (the selftest reports it, it does not fail the run; a gap
mutant that gets killed is STALE).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace

from conformance.adapters import get_adapter
from conformance.adapters.base import Adapter
from conformance.selftest import _bugs as bugs
from conformance.selftest._wrap import Patch, each_chunk, stream_bytes

__all__ = ["MUTANTS", "Mutant", "harmless_copy", "mutant_registry"]


@dataclass(frozen=True, kw_only=True)
class Mutant:
    """One reference adapter with one bug."""

    base: str
    """The reference adapter it copies (``openai_chat``, ``anthropic``, ...)."""
    bug: str
    """Short id of the bug (``merge_parallel_by_index``); the mutant is named ``<base>~<bug>``."""
    description: str
    """What the mutant does wrong, in one sentence."""
    source: str
    """Where the bug comes from: a wire-formats.md edge case (§10 E-id, §9 rule) or an issue URL."""
    patch: Callable[[Adapter], Patch]
    """The reference adapter -> the wrapped function(s) that carry the bug."""
    gap: str | None = None
    """Set when no bundled scenario can kill it: the scenario that would be needed."""
    mcp_tag: str | None = None
    """The tag of the MCP scenarios it also runs on (the self-test leaves scenarios whose tools come
    from an MCP server out otherwise: each starts a server), for a bug only they can show."""

    @property
    def name(self) -> str:
        return f"{self.base}~{self.bug}"

    def adapter(self) -> Adapter:
        """The mutant adapter: a copy of the reference with the patched function(s)."""
        reference = get_adapter(self.base)
        return replace(reference, name=self.name, **self.patch(reference))


# --------------------------------------------------------------------------------------------
# The registry
# --------------------------------------------------------------------------------------------


def mutant_registry(mutants: Iterable[Mutant]) -> Mapping[str, Mutant]:
    """Name -> mutant; a duplicate name raises."""
    registry: dict[str, Mutant] = {}
    for mutant in mutants:
        if mutant.name in registry:
            raise ValueError(f"duplicate mutant {mutant.name!r}")
        registry[mutant.name] = mutant
    return registry


def harmless_copy(base: str) -> Mutant:
    """A "mutant" that changes nothing (its ``response_from_wire`` is the reference's): the harness
    must report it as not killed."""
    return Mutant(
        base=base,
        bug="identical_copy",
        description="No bug: the reference function itself.",
        source="(control)",
        patch=lambda adapter: {"response_from_wire": adapter.response_from_wire},
    )


_ISSUE = "https://github.com/"

MUTANTS: Mapping[str, Mutant] = mutant_registry(
    [
        # OpenAI Chat
        Mutant(
            base="openai_chat",
            bug="merge_parallel_by_index",
            description="Every tool_call fragment rewritten to index 0 and accumulated by index alone: "
            "parallel calls merge into the first one.",
            source=_ISSUE + "ollama/ollama/issues/15457; " + _ISSUE + "ag-ui-protocol/ag-ui/issues/1776",
            patch=bugs.merge_parallel_by_index,
        ),
        Mutant(
            base="openai_chat",
            bug="concat_repeated_names",
            description="A name repeated on every fragment is concatenated (get_weatherget_weather).",
            source="E4; " + _ISSUE + "NousResearch/hermes-agent/issues/12230",
            patch=bugs.concat_repeated_names,
        ),
        Mutant(
            base="openai_chat",
            bug="args_in_first_chunk_dropped",
            description="The arguments on the fragment that opens a call (id, name) are ignored.",
            source="E6/E25 (Mistral sends the whole call in one delta)",
            patch=bugs.args_in_first_chunk_dropped,
        ),
        Mutant(
            base="openai_chat",
            bug="bad_json_to_empty",
            description="Argument text that is not valid JSON becomes {} and the call looks valid.",
            source=_ISSUE + "astrid-runtime/astrid/issues/169",
            patch=bugs.on_events(bugs.bad_json_to_empty),
        ),
        Mutant(
            base="openai_chat",
            bug="second_call_id_lost",
            description="The second call of a reply comes out without its id.",
            source=_ISSUE + "sgl-project/sglang/issues/7048; " + _ISSUE + "BerriAI/litellm/issues/11407",
            patch=bugs.on_events(bugs.lose_second_call_id),
        ),
        Mutant(
            base="openai_chat",
            bug="utf8_per_chunk",
            description="Each network chunk is decoded on its own with errors='replace' (no stateful decoder).",
            source="E1; " + _ISSUE + "braintrustdata/braintrust-sdk-javascript/issues/2091",
            patch=lambda adapter: each_chunk(adapter, bugs.utf8_per_chunk),
        ),
        Mutant(
            base="openai_chat",
            bug="length_as_stop",
            description="finish_reason length is mapped to stop: a truncated reply (and its cut call) looks complete.",
            source="§9 rule 7; " + _ISSUE + "UKGovernmentBEIS/inspect_ai/issues/5143",
            patch=bugs.chat_length_as_stop,
        ),
        Mutant(
            base="openai_chat",
            bug="tool_choice_required_dropped",
            description="tool_choice required is not sent (the provider default auto applies).",
            source=_ISSUE + "lidge-jun/opencodex/issues/5211",
            patch=bugs.on_request(bugs.drop_required_tool_choice),
        ),
        # OpenAI Responses
        Mutant(
            base="openai_responses",
            bug="cumulative_args_as_deltas",
            description="The complete arguments of function_call_arguments.done are appended as one more delta.",
            source=_ISSUE + "microsoft/agent-framework/pull/4200; " + _ISSUE + "NousResearch/hermes-agent/pull/35718",
            patch=bugs.cumulative_args_as_deltas,
        ),
        Mutant(
            base="openai_responses",
            bug="parallel_false_dropped",
            description="parallel_tool_calls false is not sent (the API default true applies).",
            source=_ISSUE + "openai/openai-agents-python/pull/333",
            patch=bugs.on_request(bugs.drop_parallel_false),
        ),
        Mutant(
            base="openai_responses",
            bug="text_before_call_dropped",
            description="A reply holding calls keeps only the calls: the text before them is lost.",
            source=_ISSUE + "JetBrains/koog/issues/1589; " + _ISSUE + "BerriAI/litellm/pull/25208",
            patch=bugs.on_events(bugs.text_dropped_with_calls),
        ),
        Mutant(
            base="openai_responses",
            bug="item_id_as_call_id",
            description="The item id (fc_…) is taken for the call id, so results answer the wrong id.",
            source="E12",
            patch=bugs.on_events(bugs.item_id_as_call_id),
        ),
        Mutant(
            base="openai_responses",
            bug="retry_after_ignored",
            description="The retry-after header of a 429 is not read.",
            source=_ISSUE + "cyanheads/mcp-ts-core/issues/285",
            patch=bugs.on_error(bugs.no_retry_after),
        ),
        # Anthropic
        Mutant(
            base="anthropic",
            bug="is_error_dropped",
            description="A failed tool result is sent without is_error: true.",
            source="§3b, E20; " + _ISSUE + "openclaw/openclaw/pull/717",
            patch=bugs.on_request(bugs.drop_is_error),
        ),
        Mutant(
            base="anthropic",
            bug="results_after_text",
            description="In a user message holding tool results and text, the text goes first.",
            source="§3b, E17; " + _ISSUE + "anthropics/claude-code/issues/37",
            patch=bugs.on_request(bugs.results_after_text),
        ),
        Mutant(
            base="anthropic",
            bug="overloaded_529_as_server",
            description="Kinds come from the status alone: 529 overloaded_error becomes a generic server error.",
            source="§3e; " + _ISSUE + "anthropics/claude-code/issues/3633",
            patch=bugs.on_error(bugs.overloaded_as_server),
        ),
        Mutant(
            base="anthropic",
            bug="input_schema_dropped",
            description="Tools go out without their input_schema.",
            source=_ISSUE + "mnfst/llm-gateway/issues/2754; " + _ISSUE + "latitude-dev/latitude-llm/issues/1522",
            patch=bugs.on_request(bugs.drop_input_schema),
        ),
        Mutant(
            base="anthropic",
            bug="empty_args_error",
            description="An empty argument text (a no-argument call) is parsed as JSON and reported as an error.",
            source="E3; " + _ISSUE + "sigoden/aichat/pull/1217",
            patch=bugs.on_events(bugs.empty_args_error),
        ),
        Mutant(
            base="anthropic",
            bug="broken_stream_calls_valid",
            description="A call cut off by a broken stream is closed up from its partial JSON and reported valid.",
            source="E8; "
            + _ISSUE
            + "earendil-works/pi/issues/6284; "
            + _ISSUE
            + "NousResearch/hermes-agent/pull/65843",
            patch=bugs.on_events(bugs.broken_stream_calls_valid),
        ),
        # Gemini
        Mutant(
            base="gemini",
            bug="stop_with_calls_as_stop",
            description="finishReason STOP maps to stop although the reply holds function calls.",
            source="§4c; " + _ISSUE + "BerriAI/litellm/pull/10485",
            patch=bugs.on_events(bugs.stop_with_calls_as_stop),
        ),
        Mutant(
            base="gemini",
            bug="names_not_mapped_back",
            description="Calls come back under the sanitized wire name, not the original MCP name.",
            source="E14; " + _ISSUE + "Hmbown/Codewhale/issues/5158",
            patch=bugs.names_not_mapped_back,
        ),
        Mutant(
            base="gemini",
            bug="retry_delay_ignored",
            description="The retry delay of a 429 (RetryInfo.retryDelay, retry-after) is not read.",
            source="§4e; " + _ISSUE + "DouglasdeMoura/chroncal/issues/105",
            patch=bugs.on_error(bugs.no_retry_after),
        ),
        Mutant(
            base="gemini",
            bug="is_error_as_result",
            description="A failed tool result goes out as functionResponse.response.result, not .error.",
            source="§4b, E16, E20",
            patch=bugs.on_request(bugs.is_error_as_result),
        ),
        Mutant(
            base="gemini",
            bug="call_ids_dropped",
            description="The functionCall.id the provider sent is dropped from the replayed call and its "
            "functionResponse.",
            source="§4b, E31; " + _ISSUE + "BerriAI/litellm/pull/34603",
            patch=bugs.on_request(bugs.drop_gemini_call_ids),
        ),
        Mutant(
            base="gemini",
            bug="last_event_not_flushed",
            description="The SSE decoder is not flushed at the end: a last event without its blank line is lost.",
            source="§9 rule 1; "
            + _ISSUE
            + "google-gemini/gemini-cli/issues/29059; "
            + _ISSUE
            + "openai/openai-node/issues/2725",
            patch=lambda adapter: stream_bytes(adapter, bugs.unflushed),
        ),
        # Ollama
        Mutant(
            base="ollama",
            bug="arguments_as_json_string",
            description="A replayed call's arguments are sent as a JSON string instead of an object.",
            source=_ISSUE + "neuron-core/neuron-ai/issues/219; " + _ISSUE + "aliasrobotics/cai/issues/76",
            patch=bugs.on_request(bugs.arguments_as_json_string),
        ),
        Mutant(
            base="ollama",
            bug="length_as_stop",
            description="done_reason length is mapped to stop: a truncated reply looks complete.",
            source=_ISSUE + "BerriAI/litellm/issues/25825",
            patch=bugs.ollama_length_as_stop,
        ),
        Mutant(
            base="ollama",
            bug="names_not_mapped_back",
            description="Calls come back under the sanitized wire name, not the original MCP name.",
            source="E14; " + _ISSUE + "NousResearch/hermes-agent/issues/82876",
            patch=bugs.names_not_mapped_back,
        ),
        Mutant(
            base="ollama",
            bug="busy_503_as_server",
            description="503 (server busy, queue full) is taken for a generic server error, not overloaded.",
            source="§5e (docs/api/errors.mdx)",
            patch=bugs.on_error(bugs.unavailable_as_server),
        ),
        # Reasoning that must travel back (issue 15, part 4: multi_turn/reasoning_replay)
        Mutant(
            base="anthropic",
            bug="thinking_signature_blanked",
            description="A replayed thinking block goes out with an empty signature (the key kept).",
            source="§3b, E10 (thinking blocks replayed unmodified, signature included)",
            patch=bugs.on_request(bugs.blank_thinking_signature),
        ),
        Mutant(
            base="gemini",
            bug="thought_signature_dropped",
            description="The thoughtSignature on a replayed functionCall part is dropped (Gemini 3 answers 400).",
            source="§4b, E10, E31 (echo signatures byte for byte)",
            patch=bugs.on_request(bugs.drop_thought_signatures),
        ),
        Mutant(
            base="openai_responses",
            bug="reasoning_items_not_replayed",
            description="The reasoning items of earlier turns are left out of the next request's input.",
            source="§2b, E10 (reasoning items passed back with the function_call)",
            patch=bugs.on_request(bugs.drop_reasoning_items),
        ),
        # Reasoning and the cache prefix across turns (issue 28: scenarios/reasoning, multi_turn/two_rounds)
        Mutant(
            base="gemini",
            bug="thought_signature_moved",
            description="The thoughtSignature of a replayed functionCall part goes back on the next part of its turn.",
            source="§4b, E10 (kept on the part that carried it); " + _ISSUE + "spring-projects/spring-ai/issues/4977",
            patch=bugs.on_request(bugs.move_thought_signatures),
        ),
        Mutant(
            base="anthropic",
            bug="foreign_reasoning_sent",
            description="Reasoning another wire produced (a Gemini thought in the history) is sent as a thinking"
            " block with that wire's signature.",
            source="E10; issue 28 point 1; openclaw commit c4e8b60 (Claude signatures sent as Gemini"
            " thought_signature: 400 'Base64 decoding failed')",
            patch=bugs.foreign_reasoning_sent,
        ),
        Mutant(
            base="openai_chat",
            bug="tool_turn_reasoning_dropped_at_user_turn",
            description="At a new user turn, earlier reasoning_content is cleared, that of tool turns included"
            " (DeepSeek V4 answers 400).",
            source="https://api-docs.deepseek.com/zh-cn/guides/thinking_mode/; "
            + _ISSUE
            + "anomalyco/opencode/issues/24722",
            patch=bugs.on_request(bugs.tool_turn_reasoning_dropped_at_user_turn),
        ),
        Mutant(
            base="openai_chat",
            bug="tools_reordered_between_turns",
            description="After the first turn the tools go out in another order: the cacheable prefix moves.",
            source="issue 28 point 4; " + _ISSUE + "BerriAI/litellm/issues/34248",
            patch=bugs.on_request(bugs.tools_reordered_after_first_turn),
        ),
        Mutant(
            base="openai_chat",
            bug="earlier_calls_reserialised",
            description="The arguments of every assistant turn but the newest are re-serialised with other"
            " separators: each request rewrites an earlier message.",
            source="issue 28 point 4; "
            + _ISSUE
            + "BerriAI/litellm/issues/17479; "
            + _ISSUE
            + "pydantic/pydantic-ai/issues/6528",
            patch=bugs.on_request(bugs.earlier_calls_reserialised),
        ),
        # Every form of retry delay (issue 15, part 4: errors/rate_limit_retry_after_ms, rate_limit_delay_in_body)
        Mutant(
            base="openai_chat",
            bug="retry_after_ms_ignored",
            description="Only retry-after (whole seconds) is read; the exact retry-after-ms is ignored.",
            source="§1e; " + _ISSUE + "Azure/azure-openai-benchmark/issues/31",
            patch=bugs.retry_after_ms_ignored,
        ),
        Mutant(
            base="gemini",
            bug="retry_delay_body_ignored",
            description="Only the retry-after header is read; a delay given only as RetryInfo.retryDelay is lost.",
            source="§4e (RetryInfo.retryDelay in error.details)",
            patch=bugs.retry_delay_body_ignored,
        ),
        # Names repeated empty on later fragments (issue 15, part 4: streaming/name_empty_repeated)
        Mutant(
            base="openai_chat",
            bug="last_name_wins",
            description="The name of the last fragment that has one wins: a later empty name overwrites the real one.",
            source="E4; " + _ISSUE + "NousResearch/hermes-agent/pull/106943",
            patch=bugs.last_name_wins,
        ),
        # Ids empty or null on later fragments (issue 15, part 4: streaming/id_empty_repeated, id_null_repeated)
        Mutant(
            base="openai_chat",
            bug="present_id_opens_call",
            description="A later fragment carrying the id key, even empty or null, opens a new call.",
            source="E4; " + _ISSUE + "symfony/ai/pull/2220; " + _ISSUE + "anomalyco/opencode/pull/40969",
            patch=bugs.present_id_opens_call,
        ),
        # Every finish reason of each wire (issue 15, part 4: wire_specific/content_filter)
        Mutant(
            base="anthropic",
            bug="refusal_as_stop",
            description="stop_reason refusal falls through to stop: a reply the safety filter stopped looks complete.",
            source="§8; " + _ISSUE + "BerriAI/litellm/pull/23899; " + _ISSUE + "camel-ai/camel/pull/4210",
            patch=bugs.on_events(bugs.refusal_as_stop),
        ),
        Mutant(
            base="anthropic",
            bug="context_window_as_stop",
            description="model_context_window_exceeded falls through to stop: the cut reply looks complete.",
            source="§8; " + _ISSUE + "mozilla-ai/any-llm/pull/1306; " + _ISSUE + "laravel/ai/pull/881",
            patch=bugs.on_events(bugs.context_window_as_stop),
        ),
        Mutant(
            base="anthropic",
            bug="stop_sequence_as_other",
            description="stop_reason stop_sequence falls through to other: a stop-sequence reply looks unknown.",
            source="§8; " + _ISSUE + "microsoft/semantic-kernel/pull/14382",
            patch=bugs.on_events(bugs.stop_sequence_as_other),
        ),
        Mutant(
            base="gemini",
            bug="other_as_stop",
            description="finishReason OTHER is read as stop: the reply stopped for no stated reason looks complete.",
            source="§8; " + _ISSUE + "BerriAI/litellm/issues/40477",
            patch=bugs.on_events(bugs.other_as_stop),
        ),
        Mutant(
            base="anthropic",
            bug="pause_turn_as_stop",
            description="stop_reason pause_turn is read as stop: the paused turn looks finished, never continued.",
            source="§8; ANT-SDK types/message.py; " + _ISSUE + "google/adk-python/issues/5394",
            patch=bugs.on_events(bugs.pause_turn_as_stop),
        ),
        Mutant(
            base="gemini",
            bug="recitation_as_stop",
            description="finishReason RECITATION falls through to stop: the stopped reply looks complete.",
            source="§8; " + _ISSUE + "BaseIntelligence/bounty-challenge/issues/19761",
            patch=bugs.on_events(bugs.recitation_as_stop),
        ),
        Mutant(
            base="gemini",
            bug="malformed_call_as_stop",
            description="MALFORMED_FUNCTION_CALL falls through to stop: the lost call looks like an answer.",
            source="§8; " + _ISSUE + "NousResearch/hermes-agent/pull/83886",
            patch=bugs.on_events(bugs.malformed_call_as_stop),
        ),
        Mutant(
            base="openai_chat",
            bug="done_without_finish_incomplete",
            description="A stream that reaches [DONE] without a non-null finish_reason is taken for one cut"
            " short: its complete calls become unusable.",
            source=_ISSUE + "openai/openai-node (ChatCompletionStream: 'missing finish_reason for choice')",
            patch=lambda adapter: stream_bytes(adapter, bugs.done_without_finish_incomplete),
        ),
        Mutant(
            base="openai_responses",
            bug="client_tool_search_dropped",
            description="A tool_search_call with execution client is dropped like a server-run item.",
            source=_ISSUE + "openai/openai-python (types/responses/response_tool_search_call.py)",
            patch=bugs.on_events(bugs.client_tool_search_dropped),
        ),
        # Mutating the caller's inputs (translation.no_mutation)
        Mutant(
            base="openai_chat",
            bug="pops_caller_tool_schema_key",
            description="request_to_wire pops 'required' from the caller's tool schema after sending it.",
            source=_ISSUE + "BerriAI/litellm/issues/34510; " + _ISSUE + "BerriAI/litellm/pull/24054",
            patch=bugs.pops_tool_schema_key,
        ),
        Mutant(
            base="anthropic",
            bug="clears_caller_chunk_list",
            description="stream_from_wire empties the caller's list of chunks after reading it.",
            source=_ISSUE + "BerriAI/litellm/pull/42245 (provider-owned stream data changed in place)",
            patch=bugs.clears_chunk_list,
        ),
        Mutant(
            base="gemini",
            bug="edits_caller_response_body",
            description="response_from_wire pops usageMetadata from the caller's body after decoding it.",
            source=_ISSUE + "BerriAI/litellm/pull/42245 (provider-owned response dicts changed in place)",
            patch=bugs.edits_response_body,
        ),
        # Requests that differ from the recorded traffic where no ``wire:`` expectation looks
        Mutant(
            base="openai_chat",
            bug="default_temperature_sent",
            description="temperature: 1 sent on every request though the caller set none.",
            source="§1b (a sampling field the caller never set); issue 15 part 1",
            patch=bugs.on_request(bugs.default_temperature_sent),
        ),
        Mutant(
            base="anthropic",
            bug="max_tokens_default_changed",
            description="The default max_tokens sent changed from 1024 to 4096.",
            source="§3b (max_tokens is required; its default is the adapter's choice); issue 15 part 1",
            patch=bugs.on_request(bugs.max_tokens_default_changed),
        ),
        Mutant(
            base="ollama",
            bug="stream_false_dropped",
            description="stream: false left out of non-streamed requests (Ollama streams by default, §5d).",
            source="§5d; issue 15 part 1 (a dropped optional field)",
            patch=bugs.on_request(bugs.ollama_stream_flag_dropped),
        ),
        Mutant(
            base="openai_responses",
            bug="strict_false_dropped",
            description="strict: false left off each function tool (the Responses API then defaults to strict).",
            source="§2a (tools[].strict; the Responses API defaults to strict); issue 15 part 1",
            patch=bugs.on_request(bugs.strict_false_dropped),
        ),
        # Usage (roundtrip.usage)
        Mutant(
            base="openai_chat",
            bug="usage_dropped",
            description="Usage is never decoded (the final chunk's usage is ignored).",
            source="§1c/§1d (usage, stream_options.include_usage)",
            patch=bugs.on_events(bugs.usage_dropped),
        ),
        Mutant(
            base="anthropic",
            bug="usage_from_message_start_only",
            description="Streamed usage is taken from message_start only; the cumulative message_delta is ignored.",
            source="§3d (message_delta.usage is cumulative)",
            patch=bugs.on_events(bugs.usage_first_only),
        ),
        Mutant(
            base="gemini",
            bug="usage_summed",
            description="Each chunk's cumulative usageMetadata is added up instead of the last replacing the others.",
            source="§4c/§4d (usageMetadata per chunk, cumulative)",
            patch=bugs.on_events(bugs.usage_summed),
        ),
        Mutant(
            base="anthropic",
            bug="usage_start_plus_delta",
            description="message_start's usage is added to message_delta's, which is already the cumulative total.",
            source="§3d; "
            + _ISSUE
            + "tensorzero/tensorzero/issues/5481; "
            + _ISSUE
            + "microsoft/agent-framework/issues/7143",
            patch=bugs.on_events(bugs.usage_summed),
        ),
        Mutant(
            base="openai_responses",
            bug="cache_tokens_ignored",
            description="input_tokens_details.cached_tokens is not decoded.",
            source="§2c (usage.input_tokens_details.cached_tokens)",
            patch=bugs.on_events(bugs.usage_cache_ignored),
        ),
        Mutant(
            base="openai_responses",
            bug="cache_write_ignored",
            description="input_tokens_details.cache_write_tokens is not decoded (only cached_tokens is).",
            source="§2c (openai-python types/responses/response_usage.py)",
            patch=bugs.on_events(bugs.usage_cache_write_ignored),
        ),
        Mutant(
            base="anthropic",
            bug="stale_tool_list",
            description="The first request's tools are offered on every later request of the conversation,"
            " whatever notifications/tools/list_changed said.",
            source=_ISSUE + "anthropics/claude-code/issues/13646; " + _ISSUE + "maximhq/bifrost/issues/6885",
            patch=bugs.stale_tool_list,
            mcp_tag="tool_list_changes",
        ),
        # MCP tool results (docs/mcp.md, "What the model receives"; translation.tool_result_content)
        Mutant(
            base="openai_chat",
            bug="drop_structured_content",
            description="A tool result's structuredContent is not sent: a result holding structured content"
            " alone reaches the model empty.",
            source=_ISSUE + "MoonshotAI/kimi-code/issues/2554; " + _ISSUE + "anomalyco/opencode/issues/38923",
            patch=bugs.on_unified_request(bugs.drop_structured_content),
            mcp_tag="structured_content",
        ),
        Mutant(
            base="anthropic",
            bug="drop_text_fallback",
            description="With structuredContent, the result's text blocks are dropped and its JSON.stringify"
            " sent instead.",
            source=_ISSUE + "anthropics/claude-code/issues/55677",
            patch=bugs.on_unified_request(bugs.drop_text_fallback),
            mcp_tag="structured_content",
        ),
        Mutant(
            base="gemini",
            bug="audio_as_text_silently",
            description="An audio block goes as the JSON text of the MCP block (its base64 and all), with no"
            " note that the audio was not sent.",
            source=_ISSUE + "vercel/ai/pull/15285",
            patch=bugs.on_unified_request(bugs.audio_as_text_silently),
            mcp_tag="audio",
        ),
    ]
)
"""Every bundled mutant by name (``<base>~<bug>``)."""
