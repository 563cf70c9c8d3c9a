// Driver: the Vercel AI SDK (`ai` with `@ai-sdk/openai`) on OpenAI Chat Completions and Responses,
// two wires in one file, as the provider's docs show them (node_modules/@ai-sdk/openai/docs/03-openai.mdx):
// `createOpenAI({baseURL, apiKey})`, then `openai.chat(model)` for Chat Completions and
// `openai.responses(model)` for the Responses API. The conversion and the error mapping are the
// AI SDK drivers' shared part (_ai_sdk.mjs); retries are off there (`maxRetries: 0` on every call).

import { createOpenAI } from "@ai-sdk/openai";

import { complete, errorInfo, interruptedGaps, mergeOptions } from "./_ai_sdk.mjs";
import { serve, versionOf } from "./protocol.mjs";

function model(call) {
  // the OpenAI provider wants the API's root ("https://api.openai.com/v1" by default)
  const openai = createOpenAI({ baseURL: `${call.base_url}/v1`, apiKey: call.api_key });
  return call.wire === "openai_chat" ? openai.chat(call.model) : openai.responses(call.model);
}

/**
 * `providerOptions.openai` for what the call asks and the top-level options cannot say:
 * `parallelToolCalls` (03-openai.mdx "parallelToolCalls"); on Responses with reasoning asked for,
 * `store: false` and `include: ['reasoning.encrypted_content']`, the docs' way to carry reasoning
 * from one turn to the next without server-side state (03-openai.mdx "Encrypted reasoning content").
 * The effort (or 'none') goes as the top-level `reasoning`; OpenAI has no token budget.
 */
function providerOptions(call) {
  const openai = {};
  if (call.parallel_tool_calls != null) openai.parallelToolCalls = call.parallel_tool_calls;
  if (call.wire === "openai_responses" && call.reasoning != null && call.reasoning.enabled !== false) {
    openai.store = false;
    openai.include = ["reasoning.encrypted_content"];
  }
  return mergeOptions(Object.keys(openai).length ? { openai } : {});
}

const COMMON = [
  "streaming",
  "parallel_tool_calls",
  "disable_parallel_tool_calls", // providerOptions.openai.parallelToolCalls
  "tool_choice_auto",
  "tool_choice_none",
  "tool_choice_required",
  "tool_choice_named",
  "system_prompt",
  "call_ids",
  // the top-level `reasoning` (ai/docs/03-ai-sdk-core/26-reasoning.mdx): an effort, or 'none'
  "reasoning_effort",
  "reasoning_off",
];

serve({
  name: "ai-sdk-openai",
  version: versionOf("ai", "@ai-sdk/openai"),
  wires: {
    // Chat: the provider sends an assistant message's text and tool calls only (no reasoning field:
    // @ai-sdk/openai dist/index.js:1593-1625), and a tool result as text (1638-1655)
    openai_chat: COMMON,
    // Responses: reasoning items go back with their encrypted content, a result's images as input images
    openai_responses: [...COMMON, "reasoning_replay", "images_in_tool_results"],
  },
  // The AI SDK transports: tool names and input schemas go out as given (the provider's docs promise
  // no mapping of either to what OpenAI accepts), so those duties are left to its caller.
  // MCP tool results it maps itself: its MCP client's toModelOutput (_ai_sdk.mjs mcpOutput) and the
  // provider's writing of a `content` output take on what they become on the wire (tool_results).
  duties: { openai_chat: ["transport", "tool_results"], openai_responses: ["transport", "tool_results"] },
  known_gaps: interruptedGaps(["openai_chat", "openai_responses"]),
  async complete(call, { signal }) {
    return complete(call, signal, model(call), providerOptions(call));
  },
  errorInfo,
});
