// Driver for the official `openai` JavaScript SDK (7.59), on two wires: the port of
// examples/clients/openai_driver.py (same declarations, duty `transport`, same choices).
//
// - openai_chat: `client.chat.completions.create(params)`; a stream (`stream: true`, iterated with
//   `for await`, as the SDK's README shows) becomes events from the chunks' deltas (text,
//   `tool_calls[i]` keyed by their `index`, `finish_reason`); a whole answer from
//   `choices[0].message`.
// - openai_responses: `client.responses.create(params)`; a stream's events from the typed Responses
//   events (`response.output_item.added` opens a call, `function_call_arguments.delta` / `.done`
//   carry its arguments, `response.completed` / `incomplete` / `failed` end it).
//
// The SDK throws `APIError` subclasses by status (README "Handling errors": one class per 4xx,
// `InternalServerError` for >= 500, `APIConnectionError` when the API cannot be reached), and
// the base `APIError` (no status) for an error event inside a 200 stream
// (node_modules/openai/core/streaming.mjs: `throw new APIError(undefined, data.error, ...)`);
// `errorInfo` maps them by class, never reading `.cause`.
// Run: conformance certify --command "node examples/clients/node/openai.mjs"

import OpenAI from "openai";

import {
  CHAT_FINISH,
  dumps,
  finishReason,
  isObject,
  kindForCode,
  OPENAI_CODES,
  ownReasoning,
  parseArguments,
  resultImages,
  resultText,
  retryAfter,
  toolCall,
} from "./_convert.mjs";
import { serve, versionOf } from "./protocol.mjs";

/** Streamed call pieces (keyed by the SDK's own index or item id) as start/chunk/end events. */
class StreamCalls {
  calls = new Map();

  *start(key, id, name) {
    if (this.calls.has(key)) return;
    const call = { id, name, position: this.calls.size, raw: [], ended: false };
    this.calls.set(key, call);
    yield { type: "tool_call_start", tool_call_id: id, tool_call_name: name, index: call.position };
  }

  *chunk(key, text) {
    const call = this.calls.get(key);
    if (!call || !text) return;
    call.raw.push(text);
    yield { type: "tool_call_chunk", tool_call_id: call.id, tool_call_arguments_chunk: text };
  }

  *piece(key, id, name, text) {
    yield* this.start(key, id, name);
    yield* this.chunk(key, text);
  }

  *end(key, complete = null) {
    const call = this.calls.get(key);
    if (!call || call.ended) return;
    call.ended = true;
    const raw = complete ?? call.raw.join("");
    const [args, error] = parseArguments(raw);
    yield { type: "tool_call_end", tool_call_id: call.id, tool_call_arguments_complete: raw, arguments: args, arguments_error: error };
  }

  /** Close the call with the arguments the SDK parsed itself: an object is a call's arguments. */
  *endParsed(key, args) {
    const call = this.calls.get(key);
    if (!call || call.ended) return;
    call.ended = true;
    const parsed = isObject(args) ? args : null;
    yield {
      type: "tool_call_end",
      tool_call_id: call.id,
      tool_call_arguments_complete: call.raw.join(""),
      arguments: parsed,
      arguments_error: parsed === null ? `the library gave a ${typeof args}, not an object` : null,
    };
  }

  *endAll() {
    for (const key of this.calls.keys()) yield* this.end(key);
  }

  get any() {
    return this.calls.size > 0;
  }
}

// ---- openai_chat -----------------------------------------------------------------------------

// The reasoning fields OpenAI-compatible servers add to a Chat message: `reasoning_content`
// (DeepSeek, https://api-docs.deepseek.com/guides/thinking_mode; vLLM; llama.cpp), `reasoning` and
// `reasoning_details` (OpenRouter, https://openrouter.ai/docs/use-cases/reasoning-tokens). The JS
// SDK hands over the parsed JSON as it came (core/parse.mjs: `response.json()`), so these fields
// are on the message object, and a user who appends the message it got sends them back as they
// came: so does the driver, for this wire's reasoning.
const REASONING_FIELDS = ["reasoning_content", "reasoning", "reasoning_details"];

function chatReasoning(message) {
  const fields = {};
  for (const key of REASONING_FIELDS) if (message[key]) fields[key] = message[key];
  if (Object.keys(fields).length === 0) return null;
  const text = ["reasoning_content", "reasoning"].map((k) => fields[k]).find((v) => typeof v === "string") ?? "";
  return { kind: "reasoning", text, source: "openai_chat", provider_details: { fields } };
}

function chatReasoningFields(message, wire) {
  const out = {};
  for (const part of message.parts) {
    if (part.kind !== "reasoning" || !ownReasoning(part, wire)) continue; // another provider's: left out
    const details = part.provider_details ?? {};
    if (details.fields && typeof details.fields === "object") {
      Object.assign(out, details.fields);
      continue;
    }
    const key = REASONING_FIELDS.includes(details.field) ? details.field : "reasoning_content";
    out[key] = (out[key] ?? "") + (part.text ?? "");
    if (Array.isArray(details.reasoning_details)) out.reasoning_details = details.reasoning_details;
  }
  return out;
}

function chatMessages(call) {
  const out = [];
  if (call.system) out.push({ role: "system", content: call.system });
  for (const message of call.messages) {
    const texts = message.parts.filter((p) => p.kind === "text").map((p) => p.text).join("");
    if (message.role === "user") {
      out.push({ role: "user", content: texts });
    } else if (message.role === "assistant") {
      const calls = message.parts.filter((p) => p.kind === "tool_call");
      const entry = { role: "assistant", content: texts || null, ...chatReasoningFields(message, call.wire) };
      if (calls.length) {
        entry.tool_calls = calls.map((c) => ({
          id: c.id,
          type: "function",
          function: { name: c.name, arguments: c.arguments_raw || dumps(c.arguments ?? {}) },
        }));
      }
      out.push(entry);
    } else {
      for (const result of message.parts) {
        if (result.kind === "tool_result") out.push({ role: "tool", tool_call_id: result.call_id, content: resultText(result) });
      }
    }
  }
  return out;
}

/** The caller's reasoning setting as the SDK's `reasoning_effort` (ReasoningEffort, shared.d.ts): off is `none`. */
const effort = (call) => (call.reasoning == null ? null : call.reasoning.enabled === false ? "none" : call.reasoning.effort ?? null);

function chatParams(call) {
  const params = { model: call.model, messages: chatMessages(call) };
  if (call.tools?.length) {
    params.tools = call.tools.map((t) => ({
      type: "function",
      function: { name: t.name, ...(t.description ? { description: t.description } : {}), parameters: t.input_schema },
    }));
  }
  if (["auto", "none", "required"].includes(call.tool_choice)) params.tool_choice = call.tool_choice;
  else if (call.tool_choice != null) params.tool_choice = { type: "function", function: { name: call.tool_choice } };
  if (call.parallel_tool_calls != null) params.parallel_tool_calls = call.parallel_tool_calls;
  if (call.max_tokens != null) params.max_tokens = call.max_tokens;
  if (call.reasoning != null && effort(call) != null) params.reasoning_effort = effort(call);
  return params;
}

function chatResponse(completion) {
  const choice = completion.choices[0];
  const message = choice.message;
  const parts = [];
  const reasoning = chatReasoning(message);
  if (reasoning) parts.push(reasoning);
  if (message.content) parts.push({ kind: "text", text: message.content });
  for (const tc of message.tool_calls ?? []) parts.push(toolCall(tc.id, tc.function.name, tc.function.arguments ?? ""));
  const hasCalls = parts.some((p) => p.kind === "tool_call");
  return {
    parts,
    finish_reason: finishReason(CHAT_FINISH, choice.finish_reason, hasCalls),
    provider_details: { finish_reason: choice.finish_reason },
  };
}

/** Streamed `reasoning_details` pieces into whole entries, by `index` (openai_driver.py _merge_details). */
function mergeDetails(merged, pieces) {
  for (const piece of pieces) {
    if (piece === null || typeof piece !== "object") continue;
    const entry = merged.find((e) => e.index === piece.index);
    if (!entry) {
      merged.push({ ...piece });
      continue;
    }
    for (const [key, value] of Object.entries(piece)) {
      if (key === "text" && typeof value === "string") entry.text = (entry.text ?? "") + value;
      else if (value != null) entry[key] = value;
    }
  }
}

async function* chatEvents(stream) {
  const calls = new StreamCalls();
  let field = null; // the field the open reasoning came in
  let details = [];
  for await (const chunk of stream) {
    for (const choice of chunk.choices.slice(0, 1)) {
      const delta = choice.delta ?? {};
      for (const name of ["reasoning_content", "reasoning"]) {
        if (typeof delta[name] === "string" && delta[name]) {
          field = field ?? name;
          if (name === field) yield { type: "reasoning_delta", text: delta[name], source: "openai_chat" };
        }
      }
      if (Array.isArray(delta.reasoning_details)) {
        field = field ?? "reasoning";
        mergeDetails(details, delta.reasoning_details);
      }
      if (field !== null && (delta.content || delta.tool_calls?.length || choice.finish_reason != null)) {
        const closing = { field, ...(details.length ? { reasoning_details: details } : {}) };
        yield { type: "reasoning_delta", provider_details: closing, source: "openai_chat" };
        field = null;
        details = [];
      }
      if (delta.content) yield { type: "text_delta", text: delta.content };
      for (const tc of delta.tool_calls ?? []) {
        const fn = tc.function;
        yield* calls.piece(tc.index, tc.id ?? "", fn?.name ?? "", fn?.arguments ?? "");
      }
      if (choice.finish_reason != null) {
        yield* calls.endAll();
        yield { type: "finish", reason: finishReason(CHAT_FINISH, choice.finish_reason, calls.any), provider_reason: choice.finish_reason };
      }
    }
  }
}

// ---- openai_responses ------------------------------------------------------------------------

/** The history as `input` items, each message's parts in their order (a reasoning item goes back
 * right before the item it preceded: https://platform.openai.com/docs/guides/reasoning). */
function responsesInput(call) {
  const out = [];
  for (const message of call.messages) {
    if (message.role === "tool") {
      for (const r of message.parts) if (r.kind === "tool_result") out.push(functionOutput(r));
      continue;
    }
    let texts = [];
    for (const part of message.parts) {
      if (part.kind === "text") {
        texts.push(part.text);
        continue;
      }
      if (texts.length && (part.kind === "reasoning" || part.kind === "tool_call")) {
        out.push({ role: message.role, content: texts.join("") });
        texts = [];
      }
      // the reasoning item as the SDK returned it (its id, summary and encrypted_content)
      if (part.kind === "reasoning" && ownReasoning(part, call.wire)) {
        const item = part.provider_details?.item;
        if (item && typeof item === "object") out.push({ ...item });
      } else if (part.kind === "tool_call") {
        const item = { type: "function_call", call_id: part.id, name: part.name, arguments: part.arguments_raw || dumps(part.arguments ?? {}) };
        if (typeof part.provider_details?.item_id === "string") item.id = part.provider_details.item_id;
        out.push(item);
      }
    }
    if (texts.join("")) out.push({ role: message.role, content: texts.join("") });
  }
  return out;
}

function functionOutput(result) {
  const images = resultImages(result);
  let output = resultText(result);
  if (images.length) {
    output = [
      ...(output ? [{ type: "input_text", text: output }] : []),
      ...images.map((i) => ({ type: "input_image", image_url: `data:${i.media_type};base64,${i.data}` })),
    ];
  }
  return { type: "function_call_output", call_id: result.call_id, output };
}

function responsesParams(call) {
  const params = { model: call.model, input: responsesInput(call) };
  if (call.system) params.instructions = call.system;
  if (call.tools?.length) {
    params.tools = call.tools.map((t) => ({
      type: "function",
      name: t.name,
      ...(t.description ? { description: t.description } : {}),
      parameters: t.input_schema,
      strict: false,
    }));
  }
  if (["auto", "none", "required"].includes(call.tool_choice)) params.tool_choice = call.tool_choice;
  else if (call.tool_choice != null) params.tool_choice = { type: "function", name: call.tool_choice };
  if (call.parallel_tool_calls != null) params.parallel_tool_calls = call.parallel_tool_calls;
  if (call.max_tokens != null) params.max_output_tokens = call.max_tokens;
  if (call.reasoning != null) params.reasoning = { effort: effort(call) };
  if (call.reasoning != null && call.reasoning.enabled !== false) {
    // Stateless reasoning: "set store to false and add reasoning.encrypted_content to include"
    // (https://platform.openai.com/docs/guides/reasoning, "Encrypted reasoning items").
    params.store = false;
    params.include = ["reasoning.encrypted_content"];
  }
  return params;
}

function responsesFinish(response, hasCalls) {
  const status = String(response.status ?? "");
  if (status === "incomplete") {
    const why = String(response.incomplete_details?.reason ?? "");
    return [why === "max_output_tokens" ? "length" : why === "content_filter" ? "content_filter" : "other", why];
  }
  if (status === "failed") return ["error", status];
  return [hasCalls ? "tool_calls" : "stop", status]; // a forced call says completed too
}

/** A `tool_search_call` the caller runs (`execution: "client"`, resources/responses/responses.d.ts). */
const clientToolSearch = (item) => item.type === "tool_search_call" && item.execution === "client";

const reasoningText = (item) =>
  (item.summary ?? []).map((s) => s.text).join("") || (item.content ?? []).map((c) => c.text).join("");

/** A reasoning item: its summary as the text, `encrypted_content` as the signature (or, with no
 * readable text, as redacted reasoning), and the item whole to pass back as it came. */
function reasoningPart(item) {
  const text = reasoningText(item);
  const details = { item };
  if (item.encrypted_content != null && !text) {
    return { kind: "reasoning", redacted: item.encrypted_content, source: "openai_responses", provider_details: details };
  }
  return { kind: "reasoning", text, signature: item.encrypted_content ?? null, source: "openai_responses", provider_details: details };
}

function responsesResponse(response) {
  const parts = [];
  for (const item of response.output ?? []) {
    if (item.type === "reasoning") parts.push(reasoningPart(item));
    else if (item.type === "message") {
      const text = item.content.filter((c) => c.type === "output_text").map((c) => c.text).join("");
      if (text) parts.push({ kind: "text", text });
    } else if (item.type === "function_call") {
      parts.push(toolCall(item.call_id, item.name, item.arguments ?? "", { item_id: item.id }));
    } else if (clientToolSearch(item)) {
      parts.push(toolCall(item.call_id ?? "", "tool_search", dumps(item.arguments), { item_id: item.id }));
    }
  }
  const [reason, raw] = responsesFinish(response, parts.some((p) => p.kind === "tool_call"));
  const out = { parts, finish_reason: reason, provider_details: { status: raw } };
  if (response.error != null) {
    out.error = {
      kind: kindForCode(OPENAI_CODES, response.error.code) ?? "server",
      message: String(response.error.message ?? ""),
      code: response.error.code ?? null,
    };
  }
  return out;
}

async function* responsesEvents(stream) {
  const calls = new StreamCalls();
  const reasoningStreamed = new Set();
  for await (const event of stream) {
    const kind = event.type;
    if (kind === "response.output_item.added" && event.item.type === "function_call") {
      yield* calls.start(event.item.id, event.item.call_id, event.item.name);
      yield* calls.chunk(event.item.id, event.item.arguments ?? ""); // a call sent whole
    } else if (kind === "response.function_call_arguments.delta") {
      yield* calls.chunk(event.item_id, event.delta);
    } else if (kind === "response.function_call_arguments.done") {
      yield* calls.end(event.item_id, event.arguments);
    } else if (kind === "response.output_text.delta") {
      yield { type: "text_delta", text: event.delta };
    } else if (kind === "response.reasoning_summary_text.delta" || kind === "response.reasoning_text.delta") {
      reasoningStreamed.add(event.item_id);
      yield { type: "reasoning_delta", text: event.delta, source: "openai_responses" };
    } else if (kind === "response.output_item.done" && clientToolSearch(event.item)) {
      yield* calls.start(event.item.id, event.item.call_id ?? "", "tool_search"); // sent whole
      yield* calls.endParsed(event.item.id, event.item.arguments);
    } else if (kind === "response.output_item.done" && event.item.type === "reasoning") {
      // The whole item closes the block (and carries it for replay); its summary is the text when
      // no delta streamed it.
      const item = event.item;
      const streamed = reasoningStreamed.has(item.id);
      const text = streamed ? "" : reasoningText(item);
      if (item.encrypted_content != null && !streamed && !text) {
        yield { type: "reasoning_delta", redacted: item.encrypted_content, provider_details: { item }, source: "openai_responses" };
        continue;
      }
      yield { type: "reasoning_delta", text, signature: item.encrypted_content ?? null, provider_details: { item }, source: "openai_responses" };
    } else if (kind === "response.completed" || kind === "response.incomplete" || kind === "response.failed") {
      yield* calls.endAll();
      const [reason, raw] = responsesFinish(event.response, calls.any);
      yield { type: "finish", reason, provider_reason: raw };
    }
  }
}

// ---- the client ------------------------------------------------------------------------------

function client(call) {
  // maxRetries: 0 (README "Retries": "You can use the `maxRetries` option to configure or disable
  // this"): the suite counts requests per turn; a hidden retry is a finding and would take the next
  // turn's recorded answer.
  return new OpenAI({ baseURL: `${call.base_url}/v1`, apiKey: call.api_key, maxRetries: 0, timeout: call.timeout * 1000 });
}

async function complete(call) {
  const openai = client(call);
  if (call.wire === "openai_responses") {
    if (call.stream) return responsesEvents(await openai.responses.create({ ...responsesParams(call), stream: true }));
    return responsesResponse(await openai.responses.create(responsesParams(call)));
  }
  if (call.stream) return chatEvents(await openai.chat.completions.create({ ...chatParams(call), stream: true }));
  return chatResponse(await openai.chat.completions.create(chatParams(call)));
}

// The SDK's exception classes, most specific first: the kind is what the class means (README
// "Handling errors"; node_modules/openai/core/error.mjs APIError.generate). No status or cause is
// read to change it: a 503 the SDK throws as `InternalServerError` is `server`.
const CLASSES = [
  [OpenAI.RateLimitError, "rate_limit"],
  [OpenAI.AuthenticationError, "auth"],
  [OpenAI.PermissionDeniedError, "permission"],
  [OpenAI.NotFoundError, "not_found"],
  [OpenAI.BadRequestError, "invalid_request"],
  [OpenAI.ConflictError, "invalid_request"],
  [OpenAI.UnprocessableEntityError, "invalid_request"],
  [OpenAI.InternalServerError, "server"],
  [OpenAI.APIConnectionTimeoutError, "unknown"],
  [OpenAI.APIUserAbortError, "unknown"],
  [OpenAI.APIConnectionError, "stream_incomplete"],
];

function errorInfo(error) {
  if (!(error instanceof OpenAI.APIError)) return null;
  // `APIError` itself (no subclass applies: an error event inside a 200 stream, a status without a
  // class): the error's own category, the `code`/`type` fields the class declares (core/error.mjs).
  const kind = CLASSES.find(([cls]) => error instanceof cls)?.[1] ?? kindForCode(OPENAI_CODES, error.code, error.type) ?? "unknown";
  return {
    kind,
    message: String(error.message),
    status: typeof error.status === "number" ? error.status : null,
    retry_after: retryAfter(error.headers),
    code: (typeof error.code === "string" && error.code) || (typeof error.type === "string" && error.type) || null,
  };
}

const CHAT = [
  "streaming",
  "parallel_tool_calls",
  "disable_parallel_tool_calls",
  "tool_choice_auto",
  "tool_choice_none",
  "tool_choice_required",
  "tool_choice_named",
  "system_prompt",
  "call_ids",
  // the reasoning the caller hands back (the Chat reasoning fields, the Responses items) goes out as
  // the SDK returned it, and the SDK's reasoning_effort / reasoning.effort carry an effort and "none"
  "reasoning_replay",
  "reasoning_effort",
  "reasoning_off",
];

serve({
  name: "openai-node",
  version: versionOf("openai"),
  wires: { openai_chat: CHAT, openai_responses: [...CHAT, "images_in_tool_results"] },
  // An SDK transports: it sends the caller's tool names and schemas as given (the README promises no
  // mapping to what the API accepts), so those duties are left to its caller.
  duties: { openai_chat: ["transport"], openai_responses: ["transport"] },
  request_differences: {
    "$.messages[*].parts[*].is_error":
      "the OpenAI wires have no error flag on a tool result: the driver sends the tool's text as it is" +
      " (the recorded request marks it with an `Error: ` prefix, which reads back as the flag)",
  },
  complete,
  errorInfo,
});
