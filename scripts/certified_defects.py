"""Why each FAIL of the committed certifications (docs/certified/) is a defect of the library: per library, a
pattern over ``wire | signature`` (``*`` is any text) and the reason, with the library's source line (a path
under its venv's site-packages) or doc. ``scripts/certify_libraries.py`` shows the reason under each defect
of the library's page (docs/certified/<library>/report.md); a FAIL no pattern explains is unexplained, and
``tests/scripts/test_certify_libraries.py`` fails on it, as it does on a pattern that explains no FAIL."""

from __future__ import annotations

__all__ = ["DEFECTS"]

_OPENAI_1 = (
    "The SDK parses a 200 body with an unguarded `response.json()` (`openai/_response.py:265`) and each "
    "stream event with a bare `json.loads` (`openai/_streaming.py:95`, async `:216`, via `:300`), so a body "
    'or event that is not JSON escapes as `json.JSONDecodeError`, although the README says "All errors '
    'inherit from `openai.APIError`" (https://github.com/openai/openai-python#handling-errors) and the SDK '
    "has `APIResponseValidationError` for unreadable data (`openai/_exceptions.py:82-89`): a caller catching "
    "`openai.APIError` misses it."
)

_OPENAI_3 = (
    "`Stream.__stream__` iterates the SSE events until the body ends and treats that end like `data: [DONE]`,"
    " reaching only a `finally` that closes the response (`openai/_streaming.py:71-119`, async `:187-240`): a"
    " Chat stream cut before its finish chunk and `[DONE]`, or a Responses stream without "
    "`response.completed`, ends silently with no `APIError`, so the caller takes a cut answer for a whole "
    "one."
)

_ANTHROPIC_1 = (
    "`_build_headers` writes `str(options.timeout)` into `x-stainless-timeout` "
    "(`anthropic/_base_client.py:562-564`) instead of the effective timeout it computed at `:554`, so every "
    "request without a per-request timeout (every `messages.stream(...)`, and every request of a client built"
    " with `timeout=`, since `messages.create` only fills one in for a default-timeout client, "
    "`anthropic/resources/messages/messages.py:3042-3045`) sends the sentinel's repr `NOT_GIVEN` "
    "(`anthropic/_types.py:256-258`) as the header's value."
)

_ANTHROPIC_2 = (
    'The SDK lets non-SDK exceptions out although its README says "All errors inherit from '
    '`anthropic.APIError`" (https://github.com/anthropics/anthropic-sdk-python#handling-errors): a body that '
    "is not JSON escapes as `json.JSONDecodeError` (`anthropic/_response.py:289`; stream events "
    "`anthropic/_streaming.py:246` via `:327-328`), a stream cut mid-body as `httpx2.RemoteProtocolError` "
    "because the body is read outside the send's `APIConnectionError` wrapper "
    "(`anthropic/_streaming.py:198-199`, re-raised at `:249-252`; `anthropic/_base_client.py:2245-2260`; "
    "anthropic-sdk-python#1919), and the streaming helper's bad tool JSON as a builtin `ValueError` "
    "(`anthropic/lib/streaming/_messages.py:510-513`): a caller catching `anthropic.APIError` misses all "
    "three."
)

_ANTHROPIC_4 = (
    "The streaming helper re-parses a tool call's JSON on every `input_json_delta` and, when the model's text"
    " is not JSON, raises a builtin `ValueError` before firing that delta's events "
    "(`anthropic/lib/streaming/_messages.py:307-316`, `:509-513`): the whole stream is aborted, the delta "
    "holding the bad text never reaches the caller (only the exception message quotes it), and the call "
    "cannot come back as a call with an arguments error."
)

_ANTHROPIC_6 = (
    "`AsyncStream.__stream__` iterates SSE events until the body ends and then only closes the response, "
    "never checking that `message_stop` arrived (`anthropic/_streaming.py:221-259`, sync `:92-130`), and the "
    "helper's loop and `get_final_message()` do not check either "
    "(`anthropic/lib/streaming/_messages.py:302-321`, `:261-267`): a stream cut before `message_stop` ends "
    "silently, and the caller takes a cut answer for a whole one."
)

_GOOGLE_GENAI_1 = (
    "the SDK's MCP tool translation crashes on `additionalProperties: false`, the most common value of a "
    "keyword it lists as supported: `_filter_to_supported_schema` recurses into the boolean and calls "
    "`.items()` on it (`google/genai/_mcp_utils.py:147-162`; googleapis/python-genai#2393 and #2476, labelled"
    " type: bug), so no request is sent and the caller gets a bare `AttributeError`"
)

_GOOGLE_GENAI_2 = (
    "the SDK lets foreign exceptions out where it has its own: the MCP schema filter raises `AttributeError` "
    "on a boolean `additionalProperties` (`google/genai/_mcp_utils.py:160-162`, python-genai#2393), and a "
    "non-streamed body that is not JSON raises `json.JSONDecodeError` from a bare `json.loads(response.body)`"
    " (`google/genai/models.py:4584`) although the SDK raises its own `errors.UnknownApiResponseError` for "
    "exactly that on the stream path (`google/genai/_api_client.py:771-778`, "
    "`google/genai/errors.py:333-335`): a caller catching the SDK's errors misses both"
)

_GOOGLE_GENAI_4 = (
    "the SDK's MCP tool translation silently drops camelCase JSON Schema keywords its own `Schema` supports "
    "(`maxItems`, `minItems`, `minLength`, `maxLength`): `_filter_to_supported_schema` keeps only the "
    "snake_case field names of `JSONSchema` plus five camelCase ones (`google/genai/_mcp_utils.py:145-149`, "
    "`172-173`), though `Schema.max_items` exists (`google/genai/types.py:3344`): the model never sees the "
    "caller's limits"
)

_OLLAMA_1 = (
    "the SDK drops the tool call ids Ollama sends and never sends them back: `Message.ToolCall` has no `id` "
    "field and `Message` no `tool_call_id` (`ollama/_types.py:304-355`; pydantic ignores the extra keys), and"
    " every outgoing message is re-validated through `Message` (`ollama/_client.py:1371-1375`), although the "
    "server generates and accepts both (ollama/ollama `api/types.go:206,221-224`, "
    "`server/routes.go:2305-2312`; ollama/ollama-python#667, approved fix #698): results of two calls to one "
    "tool can only be paired by order"
)

_OLLAMA_3 = (
    "the SDK drops what a tool property may hold below its type: `Tool.Function.Parameters.Property` keeps "
    "only `type`, `items`, `description` and `enum` (`ollama/_types.py:372-378`), so a property's "
    "`properties`, `required` and `anyOf` never reach the server, which keeps them (ollama/ollama "
    "`api/types.go:418-426`; ollama/ollama-python#724): the model sees a bare `object` and guesses its fields"
)

_OLLAMA_6 = (
    "`ResponseError` keeps only the body text and the status (`ollama/_types.py:702-718`), built from "
    "`e.response.text, e.response.status_code` (`ollama/_client.py:147`, `193`): a `Retry-After` header the "
    "server or a gateway sends with a 429 is lost, so the caller cannot honour it"
)

_OLLAMA_7 = (
    'the SDK documents `ResponseError` "if the request could not be fulfilled" (`ollama/_client.py:387`) but '
    "wraps only HTTP status errors and `ConnectError` (`ollama/_client.py:146-149`, `191-193`): a body that "
    "is not JSON raises `json.JSONDecodeError` (`ollama/_client.py:196`, `202`) and a cut stream "
    "`httpx.RemoteProtocolError` (`ollama/_client.py:195`), which a caller catching `ResponseError` misses"
    ", as does a call without `arguments` (which only a server outside Ollama's API sends): its `Message` model"
    " requires them (`ollama/_types.py:346`) and raises `pydantic_core.ValidationError`"
)

_OLLAMA_8 = (
    "a body that is not JSON raises `json.JSONDecodeError` (`ollama/_client.py:196`, `202`) and a cut stream "
    "`httpx.RemoteProtocolError` (`ollama/_client.py:195`), not the `ResponseError` its `chat` docstring "
    "promises (`ollama/_client.py:387`): the caller cannot tell a broken answer from a bug"
)

_OLLAMA_9 = (
    "a stream the server closes without its `done: true` line ends silently: `Client._request`'s `inner` loop"
    " yields lines until `iter_lines()` runs out and never checks `done` (`ollama/_client.py:195-199`): the "
    "caller cannot tell a cut answer from a whole one"
)

_LITELLM_1 = (
    "LiteLLM builds the Anthropic `tool_result` from a tool message without its `is_error` "
    "(`litellm/litellm_core_utils/prompt_templates/factory.py:1942-1948`), although its own "
    "`ChatCompletionToolMessage` declares `is_error` (`litellm/types/llms/openai.py:960`): a failed tool call"
    " reaches Claude as a success."
)

_LITELLM_3 = (
    'LiteLLM always writes a tool result as `functionResponse.response = {"content": ...}`, never under the '
    "`error` key Gemini reads as a failure, and ignores the tool message's `is_error` "
    "(`litellm/litellm_core_utils/prompt_templates/factory.py:1753-1758`): a failed tool call reaches Gemini "
    "as its output."
)

_LITELLM_5 = (
    "LiteLLM accepts `is_error` on a tool message (`litellm/types/llms/openai.py:960`) but its OpenAI path "
    "sends every non-user message as given (`litellm/llms/openai/chat/gpt_transformation.py:469-472`), so "
    "`messages[N].is_error` reaches OpenAI, which answers 400 `Unknown parameter`."
)

_LITELLM_6 = (
    "LiteLLM gives the caller the `functionCall.id` Gemini sent "
    "(`litellm/llms/vertex_ai/gemini/vertex_and_google_ai_studio_gemini.py:2345-2346`) but sends it back on "
    "`functionCall`/`functionResponse` only for model names it classes as Gemini 3 or newer (lines 837-850, "
    "859-867; `litellm/llms/vertex_ai/gemini/transformation.py:804`): on gemini-2.5-flash, which accepts "
    "echoed ids, the result is no longer tied to the call the provider named."
)

_LITELLM_9 = (
    "LiteLLM's Ollama stream parser overwrites the id Ollama sent on every call with arguments by a fresh "
    "`uuid4()` (`litellm/llms/ollama/chat/transformation.py:491-496`): the caller, and the next request's "
    "`tool_calls[].id` and `tool_call_id`, carry an id the server never issued."
)

_LITELLM_11 = (
    "LiteLLM's Ollama request builder copies role, content, images, tool_calls and `tool_call_id` of each "
    "message but drops the tool message's `name` (`litellm/llms/ollama/chat/transformation.py:280-295`), "
    "although its own `OllamaChatCompletionMessage` declares `tool_name` (`litellm/types/llms/ollama.py:32`):"
    " Ollama gets tool results without the name of the tool that produced them."
)

_LITELLM_12 = (
    "LiteLLM raises any Anthropic answer whose body says `overloaded_error` (a 529, and a 503) as "
    "`InternalServerError` with `status_code` 500 "
    "(`litellm/litellm_core_utils/exception_mapping_utils.py:634-640`, checked before the 503 -> "
    "`ServiceUnavailableError` branch at 713-719; `litellm/exceptions.py:885`), and LiteLLM re-raises every "
    "error met while iterating a stream, except a non-429 4xx, as `MidStreamFallbackError`, a "
    "`ServiceUnavailableError` subclass (`litellm/litellm_core_utils/streaming_handler.py:2931-2947`, "
    "`litellm/exceptions.py:1267`): a caller catching the documented classes sees a server error for an "
    "overload and a 503-kind error for a cut stream or an error event."
)

_LITELLM_13 = (
    "LiteLLM raises an Anthropic 503 whose body says `overloaded_error` as `InternalServerError`, whose "
    "`status_code` is always 500 (`litellm/litellm_core_utils/exception_mapping_utils.py:634-640`, "
    "`litellm/exceptions.py:885`): the 503 the provider answered is lost."
)

_LITELLM_14 = (
    "LiteLLM re-raises every error met while iterating a stream, except a non-429 4xx, as "
    "`MidStreamFallbackError`, a `ServiceUnavailableError` subclass "
    "(`litellm/litellm_core_utils/streaming_handler.py:2931-2947`, `litellm/exceptions.py:1267`), and "
    "Gemini's request itself is sent from inside that iteration (`streaming_handler.py:2544-2546`), so even a"
    " 429 or 500 answered before the stream began comes out that way; a non-streamed 503 'model is "
    "overloaded' is raised as `InternalServerError` "
    "(`litellm/litellm_core_utils/exception_mapping_utils.py:1407-1413`, before the 503 branch at 1493) and a"
    " 200 body that is not JSON as `BadRequestError` with status 422 "
    "(`litellm/llms/vertex_ai/gemini/long_decode.py:333-345`): the caller cannot catch `RateLimitError`, and "
    "is told a broken answer was its own bad request."
)

_LITELLM_15 = (
    "LiteLLM re-raises every error met while iterating a stream, except a non-429 4xx, as "
    "`MidStreamFallbackError`, a `ServiceUnavailableError` subclass "
    "(`litellm/litellm_core_utils/streaming_handler.py:2931-2947`, `litellm/exceptions.py:1267`): a cut "
    "connection, a stream that ends without a finish reason and an error event inside the stream all reach a "
    "caller catching the documented classes as a 503-kind error."
)

_LITELLM_16 = (
    "LiteLLM re-raises every error met while iterating a stream, except a non-429 4xx, as "
    "`MidStreamFallbackError`, a `ServiceUnavailableError` subclass "
    "(`litellm/litellm_core_utils/streaming_handler.py:2931-2947`, `litellm/exceptions.py:1267`); and the "
    '`{"error": ...}` object Ollama streams when the model fails is parsed as a chunk, its missing `message` '
    "key raised as `BadRequestError` with status 400 (`litellm/llms/ollama/chat/transformation.py:488`, "
    "`557-562`): a server failure is reported as the caller's bad request."
)

_LITELLM_17 = (
    "LiteLLM takes a retry delay only from the `retry-after` header (`litellm/utils.py:8560-8588`) and never "
    "reads the `google.rpc.RetryInfo.retryDelay` that a Gemini 429 carries in its body: the caller gets no "
    "delay."
)

_LITELLM_18 = (
    "LiteLLM never looks for Anthropic's `message_stop` (the chunk parser, "
    "`litellm/llms/anthropic/chat/handler.py:1005-1260`, has no branch for it) and ends a stream at EOF "
    "without error once a finish reason came (`litellm/litellm_core_utils/streaming_handler.py:2213-2220`, "
    "`2623-2627`): a stream cut after `message_delta` reads as complete."
)

_LITELLM_21 = (
    "LiteLLM stamps every Gemini chunk that has no `finishReason` with `stop` "
    "(`litellm/llms/vertex_ai/gemini/vertex_and_google_ai_studio_gemini.py:2702-2705`, `2819-2822`), so its "
    "end-of-stream check (`litellm/litellm_core_utils/streaming_handler.py:2213-2220`) never fires: a stream "
    "cut before its final chunk ends silently with finish reason `stop`."
)

_LITELLM_23 = (
    "A Gemini stream event that is not JSON is buffered as a partial value and dropped at EOF "
    "(`litellm/llms/vertex_ai/gemini/vertex_and_google_ai_studio_gemini.py:4489-4494`, `4522-4525`), and a "
    "stream without a final `finishReason` chunk ends without error because every chunk is stamped `stop` "
    "(lines 2702-2705; `litellm/litellm_core_utils/streaming_handler.py:2213-2220`): both read as an empty or"
    " complete success."
)

_LITELLM_24 = (
    "LiteLLM's stream line parser turns a line that is not JSON into an empty chunk "
    "(`litellm/llms/base_llm/base_model_iterator.py:127-134`, `156-166`), so an Ollama stream whose only line"
    " is broken ends as an empty answer with finish reason `stop` "
    "(`litellm/litellm_core_utils/streaming_handler.py:2203-2206`)."
)

_LITELLM_25 = (
    "LiteLLM reports a Gemini `MAX_TOKENS` answer that carries a call as `tool_calls` "
    "(`litellm/llms/vertex_ai/gemini/vertex_and_google_ai_studio_gemini.py:2698-2701`), `OTHER` as "
    "`content_filter` and `MALFORMED_FUNCTION_CALL` as `stop` "
    "(`litellm/litellm_core_utils/core_helpers.py:395-397`), and its streamed choices drop the provider's "
    "value that its docs say is kept in `provider_specific_fields['native_finish_reason']` "
    "(`litellm/types/utils.py:2219`, unlike 1813-1818): a streaming caller cannot tell a cut or malformed "
    "call from a normal end."
)

_LITELLM_27 = (
    "LiteLLM reads `functionCall['args']` unconditionally "
    "(`litellm/llms/vertex_ai/gemini/vertex_and_google_ai_studio_gemini.py:2320`) though Gemini's `args` is "
    "optional (`google/genai/types.py:2057-2060`, google-genai 3.6.1): a no-argument call sent without `args`"
    " raises `KeyError`, surfaced as `MidStreamFallbackError`."
)

_LITELLM_28 = (
    "LiteLLM splits Anthropic's answer into `thinking_blocks` and `tool_calls`, and rebuilds the assistant "
    "turn with every thinking block first and the `tool_use` blocks after them: the interleaved order is kept "
    "only when server tools are present (`litellm/litellm_core_utils/prompt_templates/factory.py:3242-3245`, "
    "the fix for litellm #23047), not for client tool calls (the sequential mode, `factory.py:3346-3356`). "
    "[thinking, tool_use, thinking, tool_use] goes back as [thinking, thinking, tool_use, tool_use]. Anthropic "
    "requires the thinking blocks of the open tool loop unmodified and in place, and rejects the request with "
    '400 "`thinking` or `redacted_thinking` blocks in the latest assistant message cannot be modified" '
    "(https://docs.claude.com/en/docs/build-with-claude/extended-thinking#preserving-thinking-blocks)."
)

_LITELLM_29 = (
    "LiteLLM turns a Gemini `thought` part into a `thinking_blocks` entry that carries Gemini's "
    "`thoughtSignature` as its `signature` (`litellm/llms/vertex_ai/gemini/vertex_and_google_ai_studio_gemini.py:"
    "2155-2165`). Its Anthropic request builder sends every signed thinking block back as it is, whatever "
    "provider signed it (`_replayable_thinking_blocks`, `litellm/litellm_core_utils/prompt_templates/"
    "factory.py:2827-2837`, emitted at `3355-3356`). A conversation begun on Gemini and continued on Claude with"
    " the same messages therefore sends Anthropic a thinking block whose signature Anthropic did not issue, "
    "and Anthropic verifies signatures and answers 400 (https://docs.claude.com/en/docs/build-with-claude/"
    "extended-thinking#thinking-encryption)."
)

_LITELLM_30 = (
    "LiteLLM's OpenAI Chat path rewrites only user content parts and sends every other message as given "
    "(`litellm/llms/openai/chat/gpt_transformation.py:448-472`). An Anthropic answer's `reasoning_content` and "
    "its signed `thinking_blocks`, which LiteLLM puts on the assistant message, therefore reach an "
    "OpenAI-compatible server when the conversation moves there. OpenAI answers 400 `Unknown parameter` for a "
    "message field it does not define, as for `messages[N].is_error` above, and a strict server rejects it too: "
    "Fireworks answered \"Extra inputs are not permitted, field: 'messages[2].thinking_blocks'\" "
    "(AndyMik90/Aperant#1988)."
)

_LITELLM_31 = (
    "LiteLLM never sends OpenRouter's `reasoning_details` back. It reads only `reasoning`/`reasoning_content` "
    "into `message.reasoning_content` (`litellm/litellm_core_utils/prompt_templates/reasoning_utils.py:22-39`), "
    "the signed details land in `provider_specific_fields`, and its Chat path passes assistant messages through "
    "(`litellm/llms/openai/chat/gpt_transformation.py:448-472`); no request builder of the pinned version "
    "writes `reasoning_details` (the name occurs only in `litellm_core_utils/redact_messages.py`). OpenRouter "
    'requires the details back unmodified on the assistant message with the tool calls: "Gemini models '
    'require OpenRouter reasoning details to be preserved in each request", a 400 '
    "(https://openrouter.ai/docs/guides/best-practices/reasoning-tokens#preserving-reasoning-blocks)."
)

_LITELLM_32 = (
    "A `thoughtSignature` that Gemini sends on a part of its own (an empty text part after the `functionCall`) "
    "is kept only in the message's `provider_specific_fields.thought_signatures` "
    "(`litellm/llms/vertex_ai/gemini/vertex_and_google_ai_studio_gemini.py:2168-2183`). LiteLLM replays those "
    "signatures only on a string `content` text part (`litellm/llms/vertex_ai/gemini/transformation.py:883-910`), "
    "and the content of a calls-only answer is `None`. The call goes back without the signature: with the "
    "`skip_thought_signature_validator` placeholder on Gemini 3 names (`litellm/litellm_core_utils/"
    "prompt_templates/factory.py:1413-1421`) and with nothing on older ones. This is so even when the caller "
    "appends LiteLLM's own message. LiteLLM's docstring for the placeholder says Google documents it as a last "
    'resort that "will negatively impact model performance", only for when no real signature is available '
    "(`factory.py:1332-1346`). Google says to pass the signature back exactly as received "
    "(https://ai.google.dev/gemini-api/docs/thought-signatures)."
)

_LITELLM_33 = (
    "Streamed, LiteLLM joins the thought parts of a Gemini chunk into one `reasoning_content` string with no "
    "separator (`litellm/llms/vertex_ai/gemini/vertex_and_google_ai_studio_gemini.py:2106-2143`), so two thoughts"
    " the model wrote before two different calls reach the caller as one run-on text ahead of both calls; "
    "non-streamed, the same answer keeps each thought as its own thinking block (`:3128-3129`). The caller of a "
    "stream cannot tell which reasoning preceded which call, which the non-streamed caller can."
)

_PYDANTIC_AI_1 = (
    "When the caller sets no max_tokens, pydantic-ai sends the model's whole output limit "
    "(`pydantic_ai/models/anthropic/__init__.py:950-967`, applied at :1866; 128000 for claude-sonnet-5). "
    "Because that is above `_MAX_NON_STREAMING_TOKENS` (:886), it sends a non-streamed `model_request` with "
    "`stream: true`: directly when a timeout is set (:1739-1747), otherwise after the SDK's 'Streaming is "
    "required' ValueError (:1748-1753). A caller who asked for one JSON response gets an SSE request, and a "
    "gateway or Anthropic-compatible server that serves only non-streamed requests fails. This is deliberate:"
    " the docstrings at :951-955 and `exceptions.py:626-629` say so."
)

_PYDANTIC_AI_2 = (
    "pydantic-ai maps Gemini's `STOP` to `finish_reason='stop'` whatever the candidate holds "
    "(`pydantic_ai/models/google.py:201-203`, through `_finish_details` :2520-2527). Gemini has no "
    "function-call finish reason and ends every call turn with STOP, so on Gemini a turn with calls never "
    "reads `'tool_call'`, while the same turn on OpenAI Chat, Anthropic, Bedrock, Mistral or Groq does "
    "(`messages.py:169-180`). pydantic-ai does derive 'tool_call' from the calls where a provider sends no "
    "reason (`models/snowflake.py:288-292`). The calls themselves are decoded, and the raw 'STOP' stays in "
    "`provider_details['finish_reason']` (:2524)."
)

_PYDANTIC_AI_3 = (
    "pydantic-ai reports `finish_reason='stop'` for replies that hold tool calls in two cases. It hands on "
    "OpenAI's `stop` for a forced call (`pydantic_ai/models/openai/_chat_completions.py:19`). It also fills a"
    " stream that ended without a finish reason with 'stop' even when the stream held calls "
    "(`models/openai/_chat_streaming.py:148-150`, `:347-352`), unlike its Snowflake subclass "
    "(`models/snowflake.py:288-292`). The second case is the quirk scenario "
    "streaming/done_without_finish_reason. Stands or falls with the Gemini entry above."
)

_PYDANTIC_AI_4 = (
    "pydantic-ai sends a tool whose schema is `{}` as `input_schema: {}`. `AnthropicJsonSchemaTransformer` "
    "leaves non-strict schemas alone apart from `title`/`$schema` "
    "(`pydantic_ai/providers/anthropic.py:292-308`, :327-332), and `models/anthropic/__init__.py:3978` sends "
    '`parameters_json_schema` as given. Anthropic requires `input_schema.type: "object"` and answers 400 '
    "`tools.N.custom.input_schema.type: Field required`, so a tool the caller gave (for example an MCP tool "
    "with an empty inputSchema) makes the whole request fail, although the profile promises 'to make JSON "
    "schemas for tools ... compatible with the model' (`profiles/__init__.py:255-256`)."
)

_PYDANTIC_AI_8 = (
    "An Anthropic stream that closes without `message_stop` ends silently. "
    "`AnthropicStreamedResponse._get_event_iterator` (`pydantic_ai/models/anthropic/_streaming.py:105-110`) "
    "just runs out with the SDK's event stream and never checks that `message_stop` (:124-125) arrived, so a "
    "truncated answer reaches the caller as a complete one."
)

_PYDANTIC_AI_9 = (
    "Same as the anthropic streaming.events entry: `anthropic/_streaming.py:105-110` raises nothing when "
    "`message_stop` never came."
)

_PYDANTIC_AI_11 = (
    "A Gemini stream whose chunks stop before any chunk carries a `finishReason` ends silently. "
    "`GeminiStreamedResponse._get_event_iterator` (`pydantic_ai/models/google.py:1727-1737`) runs out with "
    "the chunks and leaves finish_reason None without raising, so a truncated answer reaches the caller as a "
    "complete one."
)

_PYDANTIC_AI_12 = (
    "Same as the gemini streaming.events entry: `google.py:1727-1737` raises nothing when no chunk carried a "
    "finishReason."
)

_PYDANTIC_AI_13 = (
    'Within a tool loop `OpenAIChatModel._map_messages` backfills `reasoning_content: ""` on an assistant '
    "message with tool calls that came without reasoning, but only for the messages after the last user message "
    "(`pydantic_ai/models/openai/_chat_model.py:1178-1200`): once the user asks something new, the same message "
    'goes out without the field again, as its own comment says ("A message backfilled here goes out without '
    'the field again once a newer user message follows it", :1184-1185). The request no longer starts with the '
    "previous request's messages, so the provider's prompt cache (DeepSeek caches the repeated prefix: "
    "https://api-docs.deepseek.com/guides/kv_cache) misses from that message on, on every later request; "
    "pydantic-ai tracks prefix stability as a goal (pydantic/pydantic-ai#6528)."
)

_LANGCHAIN_OPENAI_1 = (
    "LangChain builds a streamed message's `tool_calls` with `parse_partial_json` "
    "(`langchain_core/messages/ai.py:557`, `langchain_core/utils/json.py:60-150`), which closes and trims "
    "cut-off JSON until it parses, so arguments truncated by `finish_reason: length` become a valid call "
    "(`startLine`/`endLine` silently dropped) while the non-streamed path puts the same call in "
    "`invalid_tool_calls` (`langchain_openai/chat_models/base.py:243-250`): a caller running the summed "
    "message's `tool_calls` executes a call the model never finished "
    "(https://github.com/langchain-ai/langchain/issues/39275)."
)

_LANGCHAIN_OPENAI_3 = (
    "The openai SDK that ChatOpenAI calls parses a 200 body and each stream event with unguarded JSON "
    "decoding (`openai/_legacy_response.py:330`, `openai/_streaming.py:216` via `:300`), and langchain-openai"
    " re-raises what escapes unchanged (`langchain_openai/chat_models/base.py:2307-2310`, `:2229-2232` "
    "catches only `openai.APIError`), so a body that is not JSON reaches the caller as "
    "`json.JSONDecodeError`, although the errors ChatOpenAI raises are the SDK's, whose README says \"All "
    'errors inherit from `openai.APIError`" (https://github.com/openai/openai-python#handling-errors).'
)

_LANGCHAIN_OPENAI_5 = (
    "`_astream` leaves its loop when the SDK's stream runs out, without checking that a `finish_reason` "
    "arrived (`langchain_openai/chat_models/base.py:2204-2233`), and the SDK's `AsyncStream.__stream__` "
    "treats the end of the body like `data: [DONE]` (`openai/_streaming.py:187-240`): a stream cut before its"
    " finish chunk and `[DONE]` ends silently, and the caller takes a cut answer for a whole one."
)

_LANGCHAIN_OPENAI_6 = (
    "ChatOpenAI writes a `ToolMessage`'s content blocks into the Chat tool message as they come: "
    "`_sanitize_chat_completions_content` trims text blocks and appends every other block unchanged "
    "(`langchain_openai/chat_models/base.py:309-331`, applied to a tool message at `:544-552`), so the `file` block"
    " LangChain's MCP adapters make of an embedded blob goes out as a `file` part of the tool message "
    "(`langchain_core/messages/block_translators/openai.py:93-116`), although a Chat tool message takes text parts"
    " only (`openai/types/chat/chat_completion_tool_message_param.py:14`): the provider refuses the whole request"
    " (HTTP 400) and the turn is lost, where it could have sent the block's text or said it cannot."
)

_LANGCHAIN_MCP_STRUCTURED = (
    "LangChain's MCP adapters keep an MCP result's `structuredContent` in the `ToolMessage`'s artifact only, which"
    " is never sent (`MCPToolArtifact`, langchain_mcp_adapters/tools.py:161-172, 276-283, mirrored in the driver's"
    " `_langchain.py`), so a tool that returns structured content with no text block beside it (the MCP spec "
    "makes the text a SHOULD, https://modelcontextprotocol.io/specification/2025-11-25/server/tools#structured-content)"
    " reaches the model as an empty result: langchain-ai/langchain-mcp-adapters#283."
)

_LANGCHAIN_ANTHROPIC_1 = (
    "ChatAnthropic always builds its SDK client with a client-level timeout (`None` by default) and never "
    "passes a per-request one (`langchain_anthropic/chat_models.py:1746-1764`, `:2187-2196`), so the "
    "anthropic SDK's `_build_headers`, which writes `str(options.timeout)` instead of the effective timeout "
    "(`anthropic/_base_client.py:554`, `:562-564`), sends the sentinel's repr `NOT_GIVEN` "
    "(`anthropic/_types.py:256-258`) as `x-stainless-timeout` on every request, streamed or not."
)

_LANGCHAIN_ANTHROPIC_2 = (
    "Non-SDK exceptions from the anthropic SDK pass through ChatAnthropic unclassified: a body that is not "
    "JSON raises `json.JSONDecodeError` (`anthropic/_response.py:289`, parsed outside the `try` at "
    "`langchain_anthropic/chat_models.py:2641`; stream events `anthropic/_streaming.py:246`) and a stream cut"
    " mid-body raises `httpx2.RemoteProtocolError` (`anthropic/_streaming.py:198-199`, "
    "anthropic-sdk-python#1919), while `_astream` catches only `anthropic.APIError` "
    "(`chat_models.py:2293-2296`), so a caller catching the SDK's or LangChain's classes (\"All errors inherit"
    ' from `anthropic.APIError`", https://github.com/anthropics/anthropic-sdk-python#handling-errors) misses '
    "them."
)

_LANGCHAIN_ANTHROPIC_3 = (
    "Non-SDK exceptions from the anthropic SDK pass through ChatAnthropic unclassified: a body that is not "
    "JSON raises `json.JSONDecodeError` (`anthropic/_response.py:289`, parsed outside the `try` at "
    "`langchain_anthropic/chat_models.py:2641`; stream events `anthropic/_streaming.py:246`) and a stream cut"
    " mid-body raises `httpx2.RemoteProtocolError` (`anthropic/_streaming.py:198-199`, "
    "anthropic-sdk-python#1919), while `_astream` catches only `anthropic.APIError` "
    "(`chat_models.py:2293-2296`), so a caller catching the SDK's or LangChain's classes (\"All errors inherit"
    ' from `anthropic.APIError`", https://github.com/anthropics/anthropic-sdk-python#handling-errors) misses '
    "them. `_handle_anthropic_api_error` keeps the SDK class for a 529 "
    "(`AnthropicOverloadedError(anthropic.OverloadedError, ...)`, "
    "`langchain_anthropic/chat_models.py:1249-1250`, `:1307-1310`) but re-raises the SDK's "
    "`ServiceUnavailableError` (503) as `AnthropicAPIError`, only an `anthropic.InternalServerError` "
    "(`chat_models.py:1245-1246`, `:1311-1314`): code catching `anthropic.ServiceUnavailableError` no longer "
    "catches a 503 through ChatAnthropic (status 503 kept on the exception)."
)

_LANGCHAIN_ANTHROPIC_4 = (
    '`_astream` ignores `message_stop` (an "unhandled event type", '
    "`langchain_anthropic/chat_models.py:2521-2524`) and leaves its loop when the SDK's stream runs out "
    "(`chat_models.py:2275-2292`), which itself ends quietly at the end of the body "
    "(`anthropic/_streaming.py:221-259`): a stream cut before `message_stop` ends silently, and the caller "
    "takes a cut answer for a whole one."
)


_LANGCHAIN_ANTHROPIC_5 = (
    "ChatAnthropic writes every standard `file` block as a `document` whatever it holds "
    "(`langchain_anthropic/chat_models.py:441-458`): base64 data under the block's own MIME type (an "
    "`application/gzip` blob from LangChain's MCP adapters), although a base64 document source takes only "
    "`application/pdf` (`anthropic/types/base64_pdf_source_param.py:15`), and a URL as a URL document the API "
    "fetches (`anthropic/types/url_pdf_source_param.py:9-11`), so an MCP resource link the adapters make a file "
    "block by its `file://` uri is sent as a document no one can fetch; both requests are refused (HTTP 400) and "
    "the turn is lost, where the link's uri or the blob's description as text would reach the model. (The suite's"
    " Anthropic reader also refuses any `document` block in a tool result, a limit of ours; these two documents "
    "are invalid on their own.)"
)


# ---- JavaScript (examples/clients/node; paths under examples/clients/node/node_modules/) -------------

_OPENAI_NODE_1 = (
    'The README says a subclass of `APIError` is thrown "when the library is unable to connect to the API, or if the'
    ' API returns a non-success status code" and lists `APIConnectionError` for "N/A" (openai/README.md, "Handling'
    " errors\"), but the SDK lets the runtime's own errors out: a 200 body that is not JSON is an unguarded"
    " `JSON.parse(bodyText)` (`openai/internal/parse.mjs:41`, rethrown as it is at `openai/client.mjs:675`), a stream"
    " event that is not JSON `throw new SyntaxError('Error reading response: malformed server-sent event JSON.')`"
    " (`openai/core/streaming.mjs:111`), and a stream cut mid-body undici's `TypeError: terminated` from"
    " `reader.read()` (`openai/core/streaming.mjs:170`), rethrown by `_iterSSEMessages` (`:527-531`) and"
    " `Stream.fromSSEResponse` (`:130-137`) without the `APIConnectionError` wrapper the request itself gets"
    " (`openai/client.mjs:932`): a caller catching `OpenAI.APIError` misses all three, and cannot tell a cut"
    " connection from a bug."
)

_OPENAI_NODE_2 = (
    "`Stream.fromSSEResponse` tracks whether `[DONE]` arrived (`receivedCompletionSentinel`,"
    " `openai/core/streaming.mjs:88`, `:101`) but when the body ends without it the loop only sets `done = true`"
    " (`:128`) and returns: a Chat stream cut before its finish chunk and `[DONE]`, or a Responses stream without"
    " `response.completed`, ends silently with no `APIError`, so the caller takes a cut answer for a whole one."
)

_ANTHROPIC_NODE_1 = (
    "A 200 body that is not JSON escapes as a `SyntaxError` from an unguarded `await response.json()`"
    " (`@anthropic-ai/sdk/internal/parse.mjs:29`); in a stream, undici's `TypeError: terminated` (the body read at"
    " `@anthropic-ai/sdk/core/streaming.mjs:234`, rethrown at `:70-74`) and a `JSON.parse` failure of an event"
    " (`core/streaming.mjs:58`, rethrown at `:63`) reach the streaming helper, whose `#handleError` wraps anything"
    " that is not an `AnthropicError` into the base class, `new AnthropicError(error.message)`"
    " (`@anthropic-ai/sdk/lib/MessageStream.mjs:58-63`): no status and no `APIConnectionError`, so a caller catching"
    " `Anthropic.APIConnectionError` (or reading `APIError.status`) cannot tell a cut connection from a bug."
)

_ANTHROPIC_NODE_2 = (
    "At `content_block_stop` the streaming helper freezes a tool block's `input` by reading its lazy getter"
    " (`@anthropic-ai/sdk/lib/MessageStream.mjs:573-582`), which runs `partialParse(jsonBuf)`"
    ' (`internal/message-stream-utils.mjs:22`); for a complete buffer the vendored parser hands it "to JSON.parse'
    ' unchanged so that it still throws" (`_vendor/partial-json-parser/parser.mjs:1-4`, `:250-253`), and the throw'
    " escapes `#addStreamEvent` and `_createMessage` (`lib/MessageStream.mjs:181-190`) as the base `AnthropicError`:"
    " the provider's answer (a call whose text is not JSON) is lost, and the caller gets an error the provider never"
    " sent instead of a call with an arguments error."
)

_ANTHROPIC_NODE_3 = (
    "`Stream.fromSSEResponse` iterates SSE events until the body ends and sets `done = true`"
    " (`@anthropic-ai/sdk/core/streaming.mjs:67`) without checking that `message_stop` arrived; the helper's"
    " `_createMessage` then calls `#endRequest` (`lib/MessageStream.mjs:195`), which throws only when no"
    ' `message_start` came at all ("request ended without sending any chunks", `:475-477`), so `done()` and'
    " `finalMessage()` resolve on a cut message."
)

_GOOGLE_GENAI_NODE_1 = (
    'The README\'s "Error Handling" offers one class, `ApiError` ("To handle errors raised by the API, the SDK'
    ' provides this ApiError class"), thrown only for an HTTP status or an error chunk (`throwErrorIfNotOK`,'
    " `@google/genai/dist/node/index.mjs:14198-14227`; `throwIfStreamErrorChunk`, `:14171`). Everything else escapes"
    " as the runtime's own error: a 200 body that is not JSON a `SyntaxError` from `httpResponse.json()`"
    " (`dist/node/index.mjs:16554`, via `HttpResponse.json`, `:2684-2685`), a streamed chunk likewise (`:16671`); a"
    " stream cut mid-body undici's `TypeError: terminated` from `reader.read()` (`dist/node/index.mjs:13925`;"
    " `processStreamResponse` has a `try`/`finally` only), rethrown by `StreamContinuation.endHop` (`:15522-15525`);"
    " and a last SSE event without its blank line `throw new Error('Incomplete JSON segment at the end')`"
    " (`dist/node/index.mjs:13926-13929`), a plain `Error` that also drops the complete last chunk (the Python SDK"
    " and openai-node parse it)."
)

_LANGCHAIN_OPENAI_JS_1 = (
    '`convertMessagesToCompletionsMessageParams` sends an assistant message\'s string `content` as it is, `""`'
    " included, beside its `tool_calls` (`@langchain/openai/dist/converters/completions.js:577`, `:583-589`), and"
    ' ChatOpenAI builds every AIMessage it returns with `content: message.content || ""`'
    ' (`converters/completions.js:183`), so a user who keeps the history sends `""` back where the provider\'s'
    ' request had `null`. The Python package nulls it on purpose ("If tool calls present, content null value should'
    ' be None not empty string", `langchain_openai/chat_models/base.py:514-516`), LangChain.js made the same fix for'
    " v1 messages (https://github.com/langchain-ai/langchainjs/pull/11419), and an empty string changes what"
    " OpenAI-compatible servers render (https://github.com/vercel/ai/issues/12390,"
    " https://github.com/ollama/ollama/issues/14181)."
)

_LANGCHAIN_OPENAI_JS_2 = (
    "`parseToolCall` runs `JSON.parse(rawToolCall.function.arguments)` with no empty case"
    " (`@langchain/core/dist/output_parsers/openai_tools/json_output_tools_parsers.js:17-28`) and ChatOpenAI puts the"
    " failure in `invalid_tool_calls` (`@langchain/openai/dist/converters/completions.js:165-168`), while a streamed"
    " call's empty text is read as `\"{}\"` (`@langchain/core/dist/messages/utils.js:295`) and Python's"
    ' `parse_tool_call` reads it as `{}` ("Handle None or empty string arguments for parameter-less tools",'
    " `langchain_core/output_parsers/openai_tools.py:58-60`): the same answer is a call when streamed and an error"
    " when not."
)

_LANGCHAIN_OPENAI_JS_3 = (
    "ChatOpenAI lets the openai SDK's errors out as thrown (only status errors get an `lc_error_code`,"
    " `@langchain/openai/dist/utils/client.js:10-27`), and the SDK lets the runtime's own errors out although its"
    ' README promises a subclass of `APIError` "when the library is unable to connect to the API": a 200 body that'
    " is not JSON is an unguarded `JSON.parse(bodyText)` (`openai/internal/parse.mjs:41`), an event that is not JSON"
    " `throw new SyntaxError(...)` (`openai/core/streaming.mjs:111`), and a body cut mid-stream undici's `TypeError:"
    " terminated` (`openai/core/streaming.mjs:170`, rethrown at `:529-531`, `:130-137`)."
)

_LANGCHAIN_OPENAI_JS_4 = (
    "The SDK's `fromSSEResponse` leaves its loop when the body ends without `[DONE]` and sets `done = true`"
    " (`openai/core/streaming.mjs:98-128`) with no error, and `_streamResponseChunks` yields chunks until the SDK's"
    " stream runs out without checking that a `finish_reason` arrived"
    " (`@langchain/openai/dist/chat_models/completions.js:197-229`): the caller takes a cut answer for a whole one."
)

_LANGCHAIN_OPENAI_JS_5 = (
    "The summed chunk's `tool_calls` come from `collapseToolCallChunks`, which parses the joined text with"
    " `parsePartialJson` (`@langchain/core/dist/messages/utils.js:307`; `@langchain/core/dist/utils/json.js:198-206`"
    " closes open strings and objects), so arguments cut by `finish_reason: length` become a valid call when"
    " streamed, while the non-streamed path puts the same text in `invalid_tool_calls`"
    " (`@langchain/openai/dist/converters/completions.js:165-168`); the Python package has the same defect"
    " (https://github.com/langchain-ai/langchain/issues/39275)."
)

_OLLAMA_JS_1 = (
    "`ResponseError` keeps only `error` (the body text) and `status_code` (`ollama/src/utils.ts:9-21`), built by"
    " `checkOk` from `response.status` and the body (`:67-92`): the response's headers never reach the caller, so a"
    " `Retry-After` or `retry-after-ms` a server or gateway sends with a 429 cannot be honoured."
)

_OLLAMA_JS_2 = (
    "The package's one error class is `ResponseError`, thrown for HTTP statuses only (`checkOk`,"
    " `ollama/src/utils.ts:91`) and not even exported (`ollama/src/index.ts`), so a caller can only test"
    ' `error.name === "ResponseError"`. Everything else is a runtime error: an `{"error": ...}` line inside a 200'
    " stream is `throw new Error(message.error)` (`ollama/src/utils.ts:48`; the Python SDK raises its `ResponseError`"
    " there), a stream that ends without its `done` line `throw new Error('Did not receive done or success response"
    " in stream.')` (`:58`), a body that is not JSON a `SyntaxError` from `response.json()`"
    " (`ollama/src/browser.ts:110`), a body cut mid-stream undici's `TypeError: terminated`"
    " (`ollama/src/utils.ts:308`), and a streamed line that is not JSON is dropped with a `console.warn`"
    " (`:321-326`): a caller cannot tell a"
    " broken answer from a bug by class."
)

_AI_SDK_OPENAI_1 = (
    "The Chat model maps OpenAI's `stop` to `'stop'` whatever the message holds (`mapOpenAIFinishReason`,"
    " `@ai-sdk/openai/dist/index.js:1682-1690`, non-streamed `:2269`, streamed `:2436`), and OpenAI answers"
    ' `finish_reason: "stop"` to a call forced by a named `tool_choice`: a turn that returned calls for the caller'
    " to run reads `finishReason: 'stop'`, not `'tool-calls'` (\"model triggered tool calls\","
    " `ai/dist/index.d.ts:124`), although the same provider's Responses model derives `'tool-calls'` from the"
    " calls it got (`mapOpenAIResponseFinishReason`, `:4259-4268`)."
)

_AI_SDK_OPENAI_2 = (
    "The Responses model reports `'tool-calls'` only when `hasFunctionCall` is set"
    " (`mapOpenAIResponseFinishReason`, `@ai-sdk/openai/dist/index.js:4259-4268`), which it sets for every call"
    " the caller runs (`function_call` `:7888`, `custom_tool_call` `:7946`, a `computer_call` with a `call_id`"
    " `:8050`, `apply_patch_call` `:8120`; streamed `:8460`, `:8565`, `:8625`, `:8777`) except a client-executed"
    ' `tool_search_call` (`:7785-7801`, streamed `:8692-8719`), which its docs call a search "The SDK calls your'
    ' `execute` callback" for (`@ai-sdk/openai/docs/03-openai.mdx:1783`): a turn whose only item is a search the'
    " caller must run ends with `finishReason: 'stop'`, as if the model had finished."
)

_AI_SDK_GOOGLE_2 = (
    "The Google provider maps Gemini's `MALFORMED_FUNCTION_CALL` (the model tried to call a tool and wrote a call"
    " that could not be read) to `'error'` (`@ai-sdk/google/dist/index.js:1990`), the value the AI SDK documents"
    ' as "model stopped because of an error" (`ai/dist/index.d.ts:125`) and also gives a step that a provider\'s'
    " error chunk ended (`:4721-4727`): a caller reading `finishReason` learns that something failed, not that"
    " the model meant to call a tool and can be asked again; only `rawFinishReason` keeps Gemini's value (users"
    ' meet it as an unexplained `"error"`: https://github.com/vercel/ai/issues/8186, labelled a bug).'
)


_AI_SDK_MCP_STRUCTURED = (
    "The AI SDK's MCP client hands the model a result through `mcpToModelOutput`, which reads only the result's"
    " `content` (`@ai-sdk/mcp` 2.0.36, `packages/mcp/src/tool/mcp-client.ts:209-239` at vercel/ai ed857f50);"
    " `structuredContent` is read only for a tool given an explicit `outputSchema` (`:1232-1240`), never for the"
    " tools `tools()` lists by default (`schemas: 'automatic'`): a result that carries its data in"
    " `structuredContent` alone reaches the model as an empty tool result (the Chat provider writes `[]`,"
    ' `@ai-sdk/openai/dist/index.js:1649-1650`; the Google provider its own `"Tool executed successfully."`).'
    " Reported as https://github.com/vercel/ai/issues/20171 (a maintainer closed the fix"
    " https://github.com/vercel/ai/pull/20197 in favour of https://github.com/vercel/ai/pull/20173)."
)

_AI_SDK_MCP_IS_ERROR = (
    "The AI SDK's MCP client returns an `isError` result as it came instead of throwing"
    " (`@ai-sdk/mcp` 2.0.36, `packages/mcp/src/tool/mcp-client.ts:1232-1234` at vercel/ai ed857f50), and"
    " `mcpToModelOutput` turns it into a `{type: 'content'}` output (`:209-239`), never the `error-text` or"
    " `error-json` output the AI SDK itself builds for a tool that failed (`ai/dist/index.js:2037-2058`): the"
    " providers mark a tool result as failed only for those (`is_error`,"
    " `@ai-sdk/anthropic/dist/index.js:3193`; the Google provider's error response,"
    " `@ai-sdk/google/dist/index.js:921`), so the model reads the tool's error message as a successful result."
)

_AI_SDK_GOOGLE_MCP_STRUCTURED = (
    _AI_SDK_MCP_STRUCTURED
    + " On Gemini the model reads a text the tool never returned in its place: the Google provider writes a tool"
    " result's texts into `functionResponse.response.content` and, for a result with none, the literal"
    ' `"Tool executed successfully."` (`@ai-sdk/google/dist/index.js:628-666`, the literal at `:663`).'
)

DEFECTS: dict[str, tuple[tuple[str, str], ...]] = {
    "openai": (
        ("openai_* | client.typed_errors at error_info: none -> string", _OPENAI_1),
        ("openai_* | recovery.provider_error at $.error: string -> none", _OPENAI_3),
        ("openai_* | recovery.broken_stream at turn * events: string -> array", _OPENAI_3),
        ("openai_* | streaming.events at turn * events: array -> array", _OPENAI_3),
        ("openai_* | streaming.lifecycle at turn * events: none -> none", _OPENAI_3),
    ),
    "anthropic": (
        ('anthropic | client.request_headers at headers["x-stainless-timeout"]: none -> string', _ANTHROPIC_1),
        ("anthropic | client.typed_errors at error_info: none -> string", _ANTHROPIC_2),
        ("anthropic | recovery.provider_error at $.error.kind: string -> string", _ANTHROPIC_2),
        ("anthropic | recovery.provider_error at $.error: none -> string", _ANTHROPIC_4),
        ("anthropic | recovery.arguments_error at $.tool_calls[*].arguments_raw: string -> string", _ANTHROPIC_4),
        ("anthropic | recovery.provider_error at $.error: string -> none", _ANTHROPIC_6),
        ("anthropic | recovery.broken_stream at turn * events: string -> array", _ANTHROPIC_6),
        ("anthropic | streaming.events at turn * events: array -> array", _ANTHROPIC_6),
        ("anthropic | streaming.lifecycle at turn * events: none -> none", _ANTHROPIC_6),
    ),
    "google-genai": (
        ("gemini | client.one_request at $: number -> number", _GOOGLE_GENAI_1),
        ("gemini | client.typed_errors at error_info: none -> string", _GOOGLE_GENAI_2),
        ("gemini | * at $.tools*.input_schema*.maxItems: number -> none", _GOOGLE_GENAI_4),
    ),
    "ollama": (
        ("ollama | client.recorded_request at $.messages*.parts*.id: string -> string", _OLLAMA_1),
        ("ollama | client.recorded_request at $.messages*.parts*.call_id: string -> string", _OLLAMA_1),
        ("ollama | * at $.tools*.input_schema.properties.*.properties: object -> none", _OLLAMA_3),
        ("ollama | recovery.provider_error at $.error.retry_after: number -> none", _OLLAMA_6),
        ("ollama | client.typed_errors at error_info: none -> string", _OLLAMA_7),
        ("ollama | recovery.provider_error at $.error.kind: string -> string", _OLLAMA_8),
        ("ollama | streaming.lifecycle at turn * events: none -> none", _OLLAMA_9),
        ("ollama | streaming.events at turn * events: array -> array", _OLLAMA_9),
        ("ollama | recovery.broken_stream at turn * events: string -> array", _OLLAMA_9),
        ("ollama | recovery.provider_error at $.error: string -> none", _OLLAMA_9),
    ),
    "litellm": (
        ("anthropic | client.recorded_request at $.messages[*].parts[*].is_error: boolean -> boolean", _LITELLM_1),
        ("anthropic | translation.wire_paths at $.messages[*].content[*].is_error: boolean -> none", _LITELLM_1),
        ("gemini | client.recorded_request at $.messages[*].parts[*].is_error: boolean -> boolean", _LITELLM_3),
        (
            "gemini | translation.wire_paths at $.contents[*].parts[*].functionResponse.response.error: * -> none",
            _LITELLM_3,
        ),
        (
            "openai_chat | client.recorded_request at $.messages[*].parts[*].provider_details.extra.is_error: *",
            _LITELLM_5,
        ),
        ("gemini | client.call_ids at *", _LITELLM_6),
        ("gemini | client.recorded_request at $.messages[*].parts[*].id: string -> string", _LITELLM_6),
        ("gemini | client.recorded_request at $.messages[*].parts[*].call_id: string -> string", _LITELLM_6),
        ("ollama | client.recorded_request at $.messages[*].parts[*].id: string -> string", _LITELLM_9),
        ("ollama | client.recorded_request at $.messages[*].parts[*].call_id: string -> string", _LITELLM_9),
        (
            "ollama | client.recorded_request at $.messages[*].parts[*].provider_details.no_tool_name: none -> boolean",
            _LITELLM_11,
        ),
        ("anthropic | recovery.provider_error at $.error.kind: string -> string", _LITELLM_12),
        ("anthropic | recovery.provider_error at $.error.status: number -> number", _LITELLM_13),
        ("gemini | recovery.provider_error at $.error.kind: string -> string", _LITELLM_14),
        ("openai_chat | recovery.provider_error at $.error.kind: string -> string", _LITELLM_15),
        ("ollama | recovery.provider_error at $.error.kind: string -> string", _LITELLM_16),
        ("gemini | recovery.provider_error at $.error.retry_after: number -> none", _LITELLM_17),
        ("anthropic | streaming.events at turn * events: array -> array", _LITELLM_18),
        ("anthropic | recovery.broken_stream at turn * events: string -> array", _LITELLM_18),
        ("anthropic | recovery.provider_error at $.error: string -> none", _LITELLM_18),
        ("gemini | streaming.events at turn * events: array -> array", _LITELLM_21),
        ("gemini | recovery.broken_stream at turn * events: string -> array", _LITELLM_21),
        ("gemini | recovery.provider_error at $.error: string -> none", _LITELLM_23),
        ("ollama | recovery.provider_error at $.error: string -> none", _LITELLM_24),
        ("gemini | roundtrip.finish_reason at $.finish_reason: string -> string", _LITELLM_25),
        ("gemini | streaming.fold at $.finish_reason: string -> string", _LITELLM_25),
        ("gemini | recovery.provider_error at $.error: none -> string", _LITELLM_27),
        ("anthropic | translation.wire_paths at $.messages[*].content[*].type: string -> string", _LITELLM_28),
        ("anthropic | roundtrip.reasoning_replay at $.messages[*].content[*]: array -> array", _LITELLM_28),
        ("anthropic | roundtrip.reasoning_replay at $.messages[*].content[*].thinking: none -> string", _LITELLM_29),
        ("anthropic | roundtrip.reasoning_replay at $.messages[*].content[*].signature: none -> string", _LITELLM_29),
        (
            "openai_chat | roundtrip.reasoning_replay at $.messages[*].thinking_blocks[*].signature: none -> string",
            _LITELLM_30,
        ),
        ("openai_chat | client.recorded_request at $.messages[*].provider_details.extra: none -> string", _LITELLM_30),
        (
            "openai_chat | translation.wire_paths at $.messages[*].reasoning_details[*].signature: none -> none",
            _LITELLM_31,
        ),
        (
            "openai_chat | translation.wire_paths at $.messages[*].reasoning_details[*].type: string -> none",
            _LITELLM_31,
        ),
        ("gemini | roundtrip.reasoning_replay at $.contents[*].parts: string -> none", _LITELLM_32),
        (
            "gemini | client.recorded_request at $.messages[*].parts[*].provider_details.thoughtSignature:"
            " string -> none",
            _LITELLM_32,
        ),
        ("gemini | roundtrip.reasoning at $.reasoning: number -> number", _LITELLM_33),
        ("gemini | roundtrip.reasoning at $.reasoning[*].text: string -> string", _LITELLM_33),
    ),
    "pydantic-ai": (
        ("openai_chat | roundtrip.cache_prefix at $.messages[*].reasoning_content: string -> none", _PYDANTIC_AI_13),
        ("anthropic | client.stream_mode at $.stream: boolean -> boolean", _PYDANTIC_AI_1),
        ("gemini | roundtrip.finish_reason at $.finish_reason: string -> string", _PYDANTIC_AI_2),
        ("openai_chat | roundtrip.finish_reason at $.finish_reason: string -> string", _PYDANTIC_AI_3),
        ("anthropic | translation.request_shape at $.tools[*].input_schema: string -> string", _PYDANTIC_AI_4),
        ("anthropic | streaming.events at turn * events: array -> array", _PYDANTIC_AI_8),
        ("anthropic | recovery.provider_error at $.error: string -> none", _PYDANTIC_AI_9),
        ("anthropic | recovery.broken_stream at turn * events: string -> array", _PYDANTIC_AI_9),
        ("gemini | streaming.events at turn * events: array -> array", _PYDANTIC_AI_11),
        ("gemini | recovery.provider_error at $.error: string -> none", _PYDANTIC_AI_12),
        ("gemini | recovery.broken_stream at turn * events: string -> array", _PYDANTIC_AI_12),
    ),
    "langchain-openai": (
        ("openai_chat | recovery.arguments_error at $.tool_calls*.arguments: string -> object", _LANGCHAIN_OPENAI_1),
        ("openai_chat | streaming.fold at $.calls: array -> array", _LANGCHAIN_OPENAI_1),
        ("openai_chat | client.typed_errors at error_info: none -> string", _LANGCHAIN_OPENAI_3),
        ("openai_chat | recovery.provider_error at $.error: string -> none", _LANGCHAIN_OPENAI_5),
        ("openai_chat | recovery.broken_stream at turn * events: string -> array", _LANGCHAIN_OPENAI_5),
        ("openai_chat | streaming.events at turn * events: array -> array", _LANGCHAIN_OPENAI_5),
        ("openai_chat | streaming.lifecycle at turn * events: none -> none", _LANGCHAIN_OPENAI_5),
        ("openai_chat | ERROR", _LANGCHAIN_OPENAI_6),
        ("openai_chat | recovery.provider_error at $.error: none -> string", _LANGCHAIN_OPENAI_6),
        (
            "openai_chat | translation.tool_result_content at $.messages[*].parts[*].content: string -> string",
            _LANGCHAIN_MCP_STRUCTURED,
        ),
    ),
    "langchain-anthropic": (
        (
            'anthropic | client.request_headers at headers["x-stainless-timeout"]: none -> string',
            _LANGCHAIN_ANTHROPIC_1,
        ),
        ("anthropic | client.typed_errors at error_info: none -> string", _LANGCHAIN_ANTHROPIC_2),
        ("anthropic | recovery.provider_error at $.error.kind: string -> string", _LANGCHAIN_ANTHROPIC_3),
        ("anthropic | recovery.provider_error at $.error: string -> none", _LANGCHAIN_ANTHROPIC_4),
        ("anthropic | recovery.broken_stream at turn * events: string -> array", _LANGCHAIN_ANTHROPIC_4),
        ("anthropic | streaming.events at turn * events: array -> array", _LANGCHAIN_ANTHROPIC_4),
        ("anthropic | ERROR", _LANGCHAIN_ANTHROPIC_5),
        ("anthropic | recovery.provider_error at $.error: none -> string", _LANGCHAIN_ANTHROPIC_5),
        (
            "anthropic | translation.tool_result_content at $.messages[*].parts[*].content: string -> string",
            _LANGCHAIN_MCP_STRUCTURED,
        ),
    ),
    "openai-node": (
        ("openai_* | client.typed_errors at error_info: none -> string", _OPENAI_NODE_1),
        ("openai_* | recovery.provider_error at $.error.kind: string -> string", _OPENAI_NODE_1),
        ("openai_* | recovery.provider_error at $.error: string -> none", _OPENAI_NODE_2),
        ("openai_* | recovery.broken_stream at turn * events: string -> array", _OPENAI_NODE_2),
        ("openai_* | streaming.events at turn * events: array -> array", _OPENAI_NODE_2),
        ("openai_* | streaming.lifecycle at turn * events: none -> none", _OPENAI_NODE_2),
    ),
    "anthropic-node": (
        ("anthropic | client.typed_errors at error_info: none -> string", _ANTHROPIC_NODE_1),
        ("anthropic | recovery.provider_error at $.error.kind: string -> string", _ANTHROPIC_NODE_1),
        ("anthropic | recovery.provider_error at $.error: none -> string", _ANTHROPIC_NODE_2),
        ("anthropic | recovery.provider_error at $.error: string -> none", _ANTHROPIC_NODE_3),
        ("anthropic | recovery.broken_stream at turn * events: string -> array", _ANTHROPIC_NODE_3),
        ("anthropic | streaming.events at turn * events: array -> array", _ANTHROPIC_NODE_3),
        ("anthropic | streaming.lifecycle at turn * events: none -> none", _ANTHROPIC_NODE_3),
    ),
    "google-genai-node": (
        ("gemini | client.typed_errors at error_info: none -> string", _GOOGLE_GENAI_NODE_1),
        ("gemini | recovery.provider_error at $.error.kind: string -> string", _GOOGLE_GENAI_NODE_1),
    ),
    "ollama-js": (
        ("ollama | recovery.provider_error at $.error.retry_after: number -> none", _OLLAMA_JS_1),
        ("ollama | client.typed_errors at error_info: none -> string", _OLLAMA_JS_2),
        ("ollama | recovery.provider_error at $.error.kind: string -> string", _OLLAMA_JS_2),
    ),
    "langchain-openai-js": (
        (
            "openai_chat | client.recorded_request at $.messages[*].provider_details.extra.content: none -> string",
            _LANGCHAIN_OPENAI_JS_1,
        ),
        ("openai_chat | roundtrip.calls at $.tool_calls[*].arguments: object -> string", _LANGCHAIN_OPENAI_JS_2),
        ("openai_chat | client.typed_errors at error_info: none -> string", _LANGCHAIN_OPENAI_JS_3),
        ("openai_chat | recovery.provider_error at $.error.kind: string -> string", _LANGCHAIN_OPENAI_JS_3),
        ("openai_chat | recovery.provider_error at $.error: string -> none", _LANGCHAIN_OPENAI_JS_4),
        ("openai_chat | recovery.broken_stream at turn * events: string -> array", _LANGCHAIN_OPENAI_JS_4),
        ("openai_chat | streaming.lifecycle at turn * events: none -> none", _LANGCHAIN_OPENAI_JS_4),
        ("openai_chat | streaming.events at turn * events: array -> array", _LANGCHAIN_OPENAI_JS_4),
        (
            "openai_chat | recovery.arguments_error at $.tool_calls[*].arguments: string -> object",
            _LANGCHAIN_OPENAI_JS_5,
        ),
        ("openai_chat | streaming.fold at $.calls: array -> array", _LANGCHAIN_OPENAI_JS_5),
    ),
    "ai-sdk-openai": (
        ("openai_chat | roundtrip.finish_reason at $.finish_reason: string -> string", _AI_SDK_OPENAI_1),
        ("openai_responses | roundtrip.finish_reason at $.finish_reason: string -> string", _AI_SDK_OPENAI_2),
        (
            "openai_* | translation.tool_result_content at $.messages[*].parts[*].content: string -> string",
            _AI_SDK_MCP_STRUCTURED,
        ),
    ),
    "ai-sdk-anthropic": (
        (
            "anthropic | translation.tool_result_content at $.messages[*].parts[*].content: string -> string",
            _AI_SDK_MCP_STRUCTURED,
        ),
        (
            "anthropic | translation.wire_paths at $.messages[*].content[*].is_error: boolean -> none",
            _AI_SDK_MCP_IS_ERROR,
        ),
        ("anthropic | roundtrip.request at $.parts[*].is_error: boolean -> boolean", _AI_SDK_MCP_IS_ERROR),
        (
            "anthropic | client.recorded_request at $.messages[*].parts[*].is_error: boolean -> boolean",
            _AI_SDK_MCP_IS_ERROR,
        ),
    ),
    "ai-sdk-google": (
        ("gemini | roundtrip.finish_reason at $.finish_reason: string -> string", _AI_SDK_GOOGLE_2),
        (
            "gemini | translation.tool_result_content at $.messages[*].parts[*].content: string -> string",
            _AI_SDK_GOOGLE_MCP_STRUCTURED,
        ),
        (
            "gemini | client.recorded_request at $.messages[*].parts[*].is_error: boolean -> boolean",
            _AI_SDK_MCP_IS_ERROR,
        ),
    ),
}
