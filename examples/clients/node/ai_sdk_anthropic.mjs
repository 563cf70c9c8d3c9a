// Driver: the Vercel AI SDK (`ai` with `@ai-sdk/anthropic`) on the Anthropic Messages API, as the
// provider's docs show it (node_modules/@ai-sdk/anthropic/docs/05-anthropic.mdx):
// `createAnthropic({baseURL, apiKey})` with the API's root (`https://api.anthropic.com/v1` by
// default), then `anthropic(model)`. The conversion and the error mapping are the AI SDK drivers'
// shared part (_ai_sdk.mjs); retries are off there (`maxRetries: 0` on every call).

import { createAnthropic } from "@ai-sdk/anthropic";

import { complete, errorInfo, interruptedGaps, mergeOptions } from "./_ai_sdk.mjs";
import { serve, versionOf } from "./protocol.mjs";

function model(call) {
  const anthropic = createAnthropic({ baseURL: `${call.base_url}/v1`, apiKey: call.api_key });
  return anthropic(call.model);
}

/**
 * `providerOptions.anthropic` for what the call asks and the top-level options cannot say:
 * `disableParallelToolUse` (05-anthropic.mdx, provider options) and an exact thinking budget,
 * `thinking: {type: 'enabled', budgetTokens}` ("If you need to enforce an exact token budget ...
 * keep using providerOptions", ai/docs/03-ai-sdk-core/26-reasoning.mdx). An effort, or 'none',
 * goes as the top-level `reasoning`. Cache breakpoints ride on the parts (_ai_sdk.mjs).
 */
function providerOptions(call) {
  const anthropic = {};
  if (call.parallel_tool_calls === false) anthropic.disableParallelToolUse = true;
  const settings = call.reasoning;
  if (settings != null && settings.enabled !== false && settings.budget_tokens != null) {
    anthropic.thinking = { type: "enabled", budgetTokens: settings.budget_tokens };
  }
  return mergeOptions(Object.keys(anthropic).length ? { anthropic } : {});
}

serve({
  name: "ai-sdk-anthropic",
  version: versionOf("ai", "@ai-sdk/anthropic"),
  wires: {
    anthropic: [
      "streaming",
      "parallel_tool_calls",
      "disable_parallel_tool_calls",
      "tool_choice_auto",
      "tool_choice_none",
      "tool_choice_required",
      "tool_choice_named",
      "images_in_tool_results", // output {type: 'content'} with file parts
      "is_error_in_tool_results", // output {type: 'error-text'}
      "reasoning_replay", // reasoning parts with their signature / redactedData
      "reasoning_effort",
      "reasoning_budget",
      "reasoning_off",
      "cache_control", // providerOptions.anthropic.cacheControl on parts, tools, the system message
      "system_prompt",
      "call_ids",
    ],
  },
  // The AI SDK transports: tool names and input schemas go out as given (the provider's docs promise
  // no mapping of either to what Anthropic accepts), so those duties are left to its caller.
  // MCP tool results it maps itself: its MCP client's toModelOutput (_ai_sdk.mjs mcpOutput) and the
  // provider's writing of a `content` output take on what they become on the wire (tool_results).
  duties: { anthropic: ["transport", "tool_results"] },
  known_gaps: interruptedGaps(["anthropic"]),
  async complete(call, { signal }) {
    return complete(call, signal, model(call), providerOptions(call));
  },
  errorInfo,
});
