// Driver: the Vercel AI SDK (`ai` with `@ai-sdk/google`) on the Gemini API, as the provider's docs
// show it (node_modules/@ai-sdk/google/docs/15-google.mdx): `createGoogleGenerativeAI({baseURL,
// apiKey})` with the API's root (`https://generativelanguage.googleapis.com/v1beta` by default),
// then `google(model)`. The conversion and the error mapping are the AI SDK drivers' shared part
// (_ai_sdk.mjs); retries are off there (`maxRetries: 0` on every call).

import { createGoogleGenerativeAI } from "@ai-sdk/google";

import { complete, errorInfo, interruptedGaps, mergeOptions } from "./_ai_sdk.mjs";
import { serve, versionOf } from "./protocol.mjs";

function model(call) {
  const google = createGoogleGenerativeAI({ baseURL: `${call.base_url}/v1beta`, apiKey: call.api_key });
  return google(call.model);
}

/**
 * `providerOptions.google` for what the top-level options cannot say: an exact thinking budget,
 * `thinkingConfig: {thinkingBudget}` (15-google.mdx "thinkingConfig"; ai/docs/03-ai-sdk-core/
 * 26-reasoning.mdx). An effort, or 'none', goes as the top-level `reasoning`.
 */
function providerOptions(call) {
  const settings = call.reasoning;
  if (settings != null && settings.enabled !== false && settings.budget_tokens != null) {
    return mergeOptions({ google: { thinkingConfig: { thinkingBudget: settings.budget_tokens } } });
  }
  return undefined;
}

serve({
  name: "ai-sdk-google",
  version: versionOf("ai", "@ai-sdk/google"),
  wires: {
    // no `disable_parallel_tool_calls`: the Gemini API and the provider have no such option
    gemini: [
      "streaming",
      "parallel_tool_calls",
      "tool_choice_auto",
      "tool_choice_none",
      "tool_choice_required",
      "tool_choice_named",
      "images_in_tool_results",
      "system_prompt",
      "reasoning_replay", // thought parts and thoughtSignature go back on the parts they came on
      "reasoning_effort",
      "reasoning_budget",
      "reasoning_off",
    ],
  },
  // The AI SDK transports: tool names and input schemas go out as given; its docs leave a schema
  // Gemini refuses to the caller ("You can work around this by simplifying the schema sent to
  // Google", 15-google.mdx "Schema Limitations"), so those duties are the caller's.
  // MCP tool results it maps itself: its MCP client's toModelOutput (_ai_sdk.mjs mcpOutput) and the
  // provider's writing of a `content` output take on what they become on the wire (tool_results).
  duties: { gemini: ["transport", "tool_results"] },
  known_gaps: interruptedGaps(["gemini"]),
  async complete(call, { signal }) {
    return complete(call, signal, model(call), providerOptions(call));
  },
  errorInfo,
});
