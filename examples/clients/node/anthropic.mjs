// Driver for the official `@anthropic-ai/sdk` JavaScript SDK (1.14), on the Anthropic wire: the
// port of examples/clients/anthropic_driver.py's CLIENT (same declarations, duty `transport`, same
// choices).
//
// Not streaming: `await client.messages.create(params)` (the README's way); the `Message`'s content
// blocks become the parts (`tool_use.input` is already an object). Streaming: the SDK's streaming
// helper, `client.messages.stream(params)` (lib/MessageStream.mjs), whose events a user reads with
// `for await (const event of stream)` (it implements `AsyncIterable<MessageStreamEvent>`) and whose
// accumulated blocks and message the helper hands to its `contentBlock` and `message` listeners:
// text, thinking and signature deltas as they come, `input_json_delta` pieces of the tool block that
// `content_block_start` opened, `content_block_stop` closing it with the block the helper
// accumulated (its `input` is the helper's own parse of the streamed JSON), `message_stop` with the
// accumulated message (its `stop_reason` is the finish). No `message_stop`, no finish. After the
// loop the driver awaits `stream.done()`, which rejects with the stream's error ("Rejects if an
// error occurred": lib/MessageStream.d.ts), as a user of the helper awaits `finalMessage()`.
//
// The SDK throws `APIError` subclasses by status (core/error.mjs STATUS_ERROR_CLASSES:
// `OverloadedError` 529, `ServiceUnavailableError` 503, `RateLimitError` 429 ...); an `error`
// event inside a 200 stream is thrown as the base `APIError` with the event's `type`
// (core/streaming.mjs); the helper wraps any other error in the base `AnthropicError`
// (lib/MessageStream.mjs #handleError). `errorInfo` maps them by class, never reading `.cause`.
// Run: conformance certify --command "node examples/clients/node/anthropic.mjs"

import Anthropic from "@anthropic-ai/sdk";

import {
  ANTHROPIC_CODES,
  dumps,
  finishReason,
  isObject,
  kindForCode,
  ownReasoning,
  retryAfter,
} from "./_convert.mjs";
import { serve, versionOf } from "./protocol.mjs";

/** The Messages API requires `max_tokens`: what the driver sends when the call leaves it open. */
const DEFAULT_MAX_TOKENS = 4096;

// Anthropic's `stop_reason` values (resources/messages/messages.d.ts StopReason).
const ANTHROPIC_FINISH = {
  end_turn: "stop",
  stop_sequence: "stop",
  tool_use: "tool_calls",
  max_tokens: "length",
  model_context_window_exceeded: "length",
  refusal: "content_filter",
};

// ---- the request -----------------------------------------------------------------------------

/** `block` with the caller's prompt-cache breakpoint, where the caller set one. */
const marked = (block, cacheControl) => (cacheControl ? { ...block, cache_control: { ...cacheControl } } : block);

function toolResult(result) {
  const content = [];
  for (const item of result.content ?? []) {
    if (item.kind === "text") content.push(marked({ type: "text", text: item.text }, item.cache_control));
    else if (item.kind === "image" && item.data) {
      content.push({ type: "image", source: { type: "base64", media_type: item.media_type, data: item.data } });
    } else if (item.kind === "resource" && typeof item.text === "string") content.push({ type: "text", text: item.text });
  }
  const block = { type: "tool_result", tool_use_id: result.call_id };
  if (content.length === 1 && content[0].type === "text" && !("cache_control" in content[0])) block.content = content[0].text;
  else if (content.length) block.content = content;
  if (result.is_error) block.is_error = true;
  return marked(block, result.cache_control);
}

function blocks(call) {
  const out = [];
  for (const message of call.messages) {
    const content = [];
    for (const part of message.parts) {
      if (part.kind === "text") content.push(marked({ type: "text", text: part.text }, part.cache_control));
      else if (part.kind === "reasoning") {
        if (!ownReasoning(part, call.wire)) continue; // another provider's reasoning: left out
        if (part.redacted != null) content.push({ type: "redacted_thinking", data: part.redacted });
        else content.push({ type: "thinking", thinking: part.text ?? "", signature: part.signature ?? "" });
      } else if (part.kind === "tool_call") {
        content.push({ type: "tool_use", id: part.id, name: part.name, input: part.arguments ?? {} });
      } else if (part.kind === "tool_result") content.push(toolResult(part));
    }
    const role = message.role === "assistant" ? "assistant" : "user";
    if (out.length && out.at(-1).role === role) out.at(-1).content.push(...content); // results then user text: one turn
    else out.push({ role, content });
  }
  return out;
}

/** The caller's reasoning settings as the SDK's `thinking` and `output_config` (anthropic_driver.py _thinking). */
function thinking(call) {
  const settings = call.reasoning;
  if (settings == null) return {};
  if (settings.enabled === false) return { thinking: { type: "disabled" } };
  const out = {};
  if (settings.budget_tokens != null) out.thinking = { type: "enabled", budget_tokens: settings.budget_tokens };
  if (settings.effort != null) {
    out.thinking = out.thinking ?? { type: "adaptive" };
    out.output_config = { effort: settings.effort };
  }
  return out;
}

function params(call) {
  const out = { model: call.model, max_tokens: call.max_tokens || DEFAULT_MAX_TOKENS, messages: blocks(call), ...thinking(call) };
  if (call.system && call.system_cache_control) out.system = [marked({ type: "text", text: call.system }, call.system_cache_control)];
  else if (call.system) out.system = call.system;
  if (call.tools?.length) {
    out.tools = call.tools.map((t) =>
      marked({ name: t.name, ...(t.description ? { description: t.description } : {}), input_schema: t.input_schema }, t.cache_control),
    );
  }
  let choice = null;
  if (call.tool_choice === "required") choice = { type: "any" };
  else if (call.tool_choice === "auto" || call.tool_choice === "none") choice = { type: call.tool_choice };
  else if (call.tool_choice != null) choice = { type: "tool", name: call.tool_choice };
  if (call.parallel_tool_calls === false) choice = { ...(choice ?? { type: "auto" }), disable_parallel_tool_use: true };
  if (choice !== null) out.tool_choice = choice;
  return out;
}

// ---- the answer ------------------------------------------------------------------------------

function response(message, wire) {
  const parts = [];
  for (const block of message.content) {
    if (block.type === "text") parts.push({ kind: "text", text: block.text });
    else if (block.type === "tool_use") {
      const args = isObject(block.input) ? block.input : null;
      parts.push({
        kind: "tool_call",
        id: block.id,
        name: block.name,
        arguments: args,
        arguments_raw: dumps(block.input),
        arguments_error: args !== null ? null : "input is not an object",
      });
    } else if (block.type === "thinking") {
      parts.push({ kind: "reasoning", text: block.thinking, signature: block.signature, source: wire });
    } else if (block.type === "redacted_thinking") parts.push({ kind: "reasoning", redacted: block.data, source: wire });
  }
  const hasCalls = parts.some((p) => p.kind === "tool_call");
  return { parts, finish_reason: finishReason(ANTHROPIC_FINISH, message.stop_reason, hasCalls), provider_details: { finish_reason: message.stop_reason } };
}

/** The events of `client.messages.stream(...)`, read with `for await`, the blocks and message from
 * the helper's `contentBlock` and `message` listeners (they fire as the helper reads each event,
 * before the loop gets that event). */
function helperEvents(stream, wire) {
  // The listeners go on at once, before the request can fail: a helper that errs with no listener
  // rejects a promise nobody holds (lib/MessageStream.mjs _emit), which ends a Node process.
  const seen = { finished: [], message: null }; // the blocks in the order their content_block_stop came
  stream.on("contentBlock", (block) => seen.finished.push(block));
  stream.on("message", (message) => {
    seen.message = message;
  });
  return readHelper(stream, seen, wire);
}

async function* readHelper(stream, seen, wire) {
  const pending = new Map(); // content block index -> [id, raw pieces]
  let position = 0;
  let stops = 0;
  for await (const event of stream) {
    if (event.type === "content_block_start") {
      const block = event.content_block;
      if (block.type === "tool_use") {
        pending.set(event.index, { id: block.id, raw: [] });
        yield { type: "tool_call_start", tool_call_id: block.id, tool_call_name: block.name, index: position++ };
      } else if (block.type === "redacted_thinking") {
        yield { type: "reasoning_delta", redacted: block.data, source: wire };
      } else if (block.type === "text" && block.text) yield { type: "text_delta", text: block.text };
    } else if (event.type === "content_block_delta") {
      const delta = event.delta;
      if (delta.type === "text_delta") yield { type: "text_delta", text: delta.text };
      else if (delta.type === "thinking_delta") yield { type: "reasoning_delta", text: delta.thinking, source: wire };
      else if (delta.type === "signature_delta") yield { type: "reasoning_delta", signature: delta.signature, source: wire };
      else if (delta.type === "input_json_delta" && pending.has(event.index) && delta.partial_json) {
        const call = pending.get(event.index);
        call.raw.push(delta.partial_json);
        yield { type: "tool_call_chunk", tool_call_id: call.id, tool_call_arguments_chunk: delta.partial_json };
      }
    } else if (event.type === "content_block_stop") {
      const block = seen.finished[stops++];
      const call = pending.get(event.index);
      if (call && block?.type === "tool_use") {
        // the block the helper accumulated: its `input` (the helper's parse of the streamed text)
        // is what a user of the helper calls the tool with
        pending.delete(event.index);
        const args = isObject(block.input) ? block.input : null;
        yield {
          type: "tool_call_end",
          tool_call_id: call.id,
          tool_call_arguments_complete: call.raw.join(""),
          arguments: args,
          arguments_error: args !== null ? null : `the library gave a ${typeof block.input}, not an object`,
        };
      }
    } else if (event.type === "message_stop" && seen.message !== null) {
      const { content, stop_reason: reason } = seen.message;
      yield { type: "finish", reason: finishReason(ANTHROPIC_FINISH, reason, content.some((b) => b.type === "tool_use")), provider_reason: reason };
    }
  }
  await stream.done();
}

// ---- the client ------------------------------------------------------------------------------

function client(call) {
  // maxRetries: 0 (client.mjs: "opts.maxRetries=2 - The maximum number of times the client will
  // retry a request"): the suite counts requests per turn; a hidden retry is a finding and would
  // take the next turn's recorded answer.
  return new Anthropic({ baseURL: call.base_url, apiKey: call.api_key, maxRetries: 0, timeout: call.timeout * 1000 });
}

async function complete(call) {
  const anthropic = client(call);
  if (call.stream) return helperEvents(anthropic.messages.stream(params(call)), call.wire);
  return response(await anthropic.messages.create(params(call)), call.wire);
}

// The SDK's exception classes, most specific first: the kind is what the class means (one class per
// status, core/error.mjs STATUS_ERROR_CLASSES; `APIConnectionError` for a connection that failed).
// No status, body or cause is read to change it.
const CLASSES = [
  [Anthropic.OverloadedError, "overloaded"],
  [Anthropic.ServiceUnavailableError, "overloaded"],
  [Anthropic.RateLimitError, "rate_limit"],
  [Anthropic.ContentTooLargeError, "context_length"],
  [Anthropic.AuthenticationError, "auth"],
  [Anthropic.PermissionDeniedError, "permission"],
  [Anthropic.NotFoundError, "not_found"],
  [Anthropic.BadRequestError, "invalid_request"],
  [Anthropic.UnprocessableEntityError, "invalid_request"],
  [Anthropic.InternalServerError, "server"],
  [Anthropic.APIConnectionTimeoutError, "unknown"],
  [Anthropic.APIUserAbortError, "unknown"],
  [Anthropic.APIConnectionError, "stream_incomplete"],
];

function errorInfo(error) {
  if (!(error instanceof Anthropic.APIError)) return null; // the base AnthropicError names no kind
  // The base class itself (an `error` event inside the 200 stream, a status without a class): the
  // category its documented `type` field names (core/error.mjs: `this.type = type ?? body.error?.type`).
  const kind = CLASSES.find(([cls]) => error instanceof cls)?.[1] ?? kindForCode(ANTHROPIC_CODES, error.type) ?? "unknown";
  return {
    kind,
    message: String(error.message),
    status: typeof error.status === "number" ? error.status : null,
    retry_after: retryAfter(error.headers),
    code: typeof error.type === "string" ? error.type : null,
  };
}

const CAPABILITIES = [
  "streaming",
  "parallel_tool_calls",
  "disable_parallel_tool_calls",
  "tool_choice_auto",
  "tool_choice_none",
  "tool_choice_required",
  "tool_choice_named",
  "images_in_tool_results",
  "is_error_in_tool_results",
  "reasoning_replay",
  // the SDK's own parameters (thinking above) and its cache_control on tools, system and content blocks
  "reasoning_effort",
  "reasoning_budget",
  "reasoning_off",
  "cache_control",
  "system_prompt",
  "call_ids",
];

serve({
  name: "anthropic-node",
  version: versionOf("@anthropic-ai/sdk"),
  wires: { anthropic: CAPABILITIES },
  // An SDK transports: it sends the caller's tool names and input schemas as given (nothing in the
  // SDK maps them to what the API accepts), so those duties are left to its caller.
  duties: { anthropic: ["transport"] },
  complete,
  errorInfo,
});
