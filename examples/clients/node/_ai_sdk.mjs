// The conversion the Vercel AI SDK drivers share (ai_sdk_openai.mjs, ai_sdk_anthropic.mjs,
// ai_sdk_google.mjs): the suite's call as the AI SDK's own inputs, what the AI SDK hands back as
// the protocol's values (docs/protocol.md "Values"), and its errors by its public classes.
//
// It calls the AI SDK the way its docs tell users to (node_modules/ai/docs, the pages of
// https://ai-sdk.dev/docs):
// - `generateText` and `streamText` from `ai` (docs/03-ai-sdk-core/05-generating-text.mdx), the
//   system prompt as `instructions` (`system` is deprecated: ai/dist/index.d.ts:893-899);
// - the history as ModelMessage[] (docs/02-foundations/03-prompts.mdx "Tool Messages"): assistant
//   `tool-call` parts with the parsed `input`, `tool` messages of `tool-result` parts whose `output`
//   is `{type: "text"}` for a result's text, `{type: "error-text"}` for a failed tool (what the SDK
//   itself builds when a tool's execute throws: createToolModelOutput, ai/dist/index.js:2037-2056)
//   and `{type: "content"}` for several items, images among them (docs/02-foundations/03-prompts.mdx
//   "Multi-modal Tool Results"; `toolOutput` below); an MCP result with more than text as the AI
//   SDK's own MCP client hands it to the model (`mcpOutput` below, @ai-sdk/mcp's `mcpToModelOutput`);
// - tools as `tool({description, inputSchema: jsonSchema(schema)})` with no `execute`: the caller
//   runs them (docs/03-ai-sdk-core/15-tools-and-tool-calling.mdx: execute "is optional because you
//   might want to forward tool calls to the client"), so one call is one step (the default
//   `stopWhen: isStepCount(1)`, ai/dist/index.d.ts:4024);
// - `maxRetries: 0` on every call: the AI SDK retries a failed call twice by default
//   ("Maximum number of retries. Set to 0 to disable retries. @default 2", ai/dist/index.d.ts:853-857),
//   and the suite counts the requests of each turn. `streamRetries` is left out: "Omit to disable all
//   stream retry behavior" (ai/dist/index.d.ts:3972);
// - `toolChoice`, `maxOutputTokens`, the top-level `reasoning` (docs/03-ai-sdk-core/26-reasoning.mdx)
//   and `providerOptions` only for what the call asks and the top-level options cannot say (a token
//   budget, parallel calls off, cache breakpoints), each in the provider's documented form.
//
// What a part of the answer carries for the provider (its `providerMetadata`: Anthropic's thinking
// signature, Gemini's thoughtSignature, the Responses item id) rides in the part's
// `provider_details.ai_sdk` and goes back as that part's `providerOptions` on the next turn: the
// AI SDK's own response messages carry it that way (`result.response.messages`, which the docs tell
// users to append to the history).

import {
  APICallError,
  EmptyResponseBodyError,
  InvalidArgumentError,
  InvalidPromptError,
  InvalidResponseDataError,
  InvalidToolInputError,
  JSONParseError,
  LoadAPIKeyError,
  NoContentGeneratedError,
  NoOutputGeneratedError,
  NoSuchToolError,
  RetryError,
  StreamProviderError,
  ToolCallRepairError,
  ToolChoiceViolationError,
  TypeValidationError,
  UnsupportedFunctionalityError,
  generateText,
  jsonSchema,
  streamText,
  tool,
} from "ai";

import { CODES, isObject, kindForCode, kindForStatus } from "./_convert.mjs";

export const KEY = "ai_sdk";

/** The AI SDK's `providerOptions`/`providerMetadata` key of each wire (the provider's name). */
export const PROVIDER_KEYS = {
  openai_chat: "openai",
  openai_responses: "openai",
  anthropic: "anthropic",
  gemini: "google",
};

// ---------------------------------------------------------------------------------------------
// The call as the AI SDK's inputs

function own(details) {
  const saved = details?.[KEY];
  return saved && typeof saved === "object" ? saved : undefined;
}

/** An image as the AI SDK's file part data (tagged form: provider-utils FilePart.data). */
function fileData(image) {
  if (image.data != null) return { type: "data", data: image.data };
  return { type: "url", url: new URL(image.url) };
}

function withOptions(part, options) {
  return options && Object.keys(options).length ? { ...part, providerOptions: options } : part;
}

/** A cache breakpoint in the Anthropic provider's form (docs: @ai-sdk/anthropic "Cache Control"). */
function cacheOptions(cacheControl, wire) {
  if (!cacheControl || wire !== "anthropic") return undefined;
  return { anthropic: { cacheControl } };
}

function userContent(parts, wire) {
  const content = [];
  for (const part of parts) {
    if (part.kind === "text") {
      content.push(withOptions({ type: "text", text: part.text }, cacheOptions(part.cache_control, wire)));
    } else if (part.kind === "image" && (part.data != null || part.url)) {
      content.push({ type: "file", mediaType: part.media_type || "image", data: fileData(part) });
    }
  }
  return content;
}

/** The texts of a tool result's content (text items, embedded text resources), as MCP gives them. */
function resultTexts(result) {
  const texts = [];
  for (const item of result.content ?? []) {
    if (item.kind === "text") texts.push(item.text);
    else if (item.kind === "resource" && item.text != null) texts.push(item.text);
  }
  return texts;
}

/**
 * A tool result's `output` in the forms docs/02-foundations/03-prompts.mdx gives: one text as
 * `{type: 'text'}`, a failed tool's text as `{type: 'error-text'}`, several items (texts, images)
 * as the multi-part `{type: 'content'}`, one part each, on the wires that take multi-part tool
 * results; on OpenAI Chat, whose tool message is text, the texts as one text output ("for models
 * that do not support multi-part tool results, you can include a regular output part", the same
 * page).
 */
function toolOutput(result, wire) {
  const texts = resultTexts(result);
  const images = (result.content ?? []).filter((item) => item.kind === "image" && (item.data != null || item.url));
  if (result.is_error) return { type: "error-text", value: texts.join("\n") };
  if (images.length === 0 && (texts.length <= 1 || wire === "openai_chat")) return { type: "text", value: texts.join("\n") };
  const value = [];
  for (const item of result.content ?? []) {
    if (item.kind === "text") value.push({ type: "text", text: item.text });
    else if (item.kind === "resource" && item.text != null) value.push({ type: "text", text: item.text });
    else if (item.kind === "image" && (item.data != null || item.url)) {
      value.push({ type: "file", mediaType: item.media_type || "image", data: fileData(item) });
    }
  }
  return { type: "content", value };
}

/**
 * Does an MCP result carry more than text (a block of another type, or structured content)? Such a
 * result reaches an AI SDK user through the AI SDK's MCP client (`mcpOutput`); a result of text alone
 * is what a tool of the user's own returns, and goes as `toolOutput` writes it.
 */
function needsMcpMapping(result) {
  const mcp = result.provider_details?.mcp;
  return (mcp != null && "structured_content" in mcp) || (result.content ?? []).some((item) => item.kind !== "text");
}

/**
 * A content item as the MCP block it came as (the bridge keeps the keys the model has no field for,
 * a resource link's `name` among them, in `provider_details.mcp.content_extras`; the same shape as
 * conformance/mcp_bridge/_convert.py `content_to_wire`).
 */
function mcpBlock(item, extras = {}) {
  const { resource: inner = {}, ...more } = extras;
  if (item.kind === "audio") return { type: "audio", data: item.data, mimeType: item.media_type, ...more };
  if (item.kind === "image") return { type: "image", data: item.data, mimeType: item.media_type, ...more };
  if (item.kind === "resource" && item.text == null && item.blob == null) {
    const { name = item.uri, ...rest } = more;
    return { type: "resource_link", uri: item.uri, name, ...(item.media_type != null ? { mimeType: item.media_type } : {}), ...rest };
  }
  const resource = { uri: item.uri, ...(item.media_type != null ? { mimeType: item.media_type } : {}) };
  if (item.text != null) resource.text = item.text;
  else resource.blob = item.blob;
  return { type: "resource", resource: { ...resource, ...inner }, ...more };
}

/**
 * The `output` the AI SDK's MCP client gives the model for an MCP result: its tools' `toModelOutput`
 * is `mcpToModelOutput` (@ai-sdk/mcp 2.0.36, packages/mcp/src/tool/mcp-client.ts:209-239 and
 * 1255/1264 at vercel/ai ed857f50): `{type: 'content'}` of the result's `content`, a text block as
 * text, an image as a `file` part with its data, any other block (audio, an embedded resource, a
 * resource link) as a text holding the block's JSON (`JSON.stringify(part)`). `structuredContent` is
 * not read there (the tool's `execute` returns the whole result, 1232-1240), and an `isError` result
 * goes the same way (1232-1234: returned as it came, not thrown).
 */
function mcpOutput(result) {
  const extras = result.provider_details?.mcp?.content_extras ?? {};
  const value = (result.content ?? []).map((item, index) => {
    if (item.kind === "text") return { type: "text", text: item.text };
    if (item.kind === "image" && item.data != null && item.media_type) {
      return { type: "file", mediaType: item.media_type, data: { type: "data", data: item.data } };
    }
    return { type: "text", text: JSON.stringify(mcpBlock(item, extras[String(index)])) };
  });
  return { type: "content", value };
}

/**
 * A reasoning part of the history as the AI SDK's `reasoning` part: what the AI SDK gave for it
 * (kept in provider_details), else the proof in the form its provider reads back (the Anthropic
 * provider's `signature`/`redactedData`, the Google provider's `thoughtSignature`, the OpenAI
 * Responses provider's `reasoningEncryptedContent`), under the key of the wire that produced it:
 * a part from another provider goes to the AI SDK as it would from a user who switched models,
 * and the AI SDK decides.
 */
function reasoningPart(part, wire) {
  const saved = own(part.provider_details);
  if (saved) return withOptions({ type: "reasoning", text: part.text ?? "" }, saved);
  const source = part.source ?? wire;
  const key = PROVIDER_KEYS[source];
  let options;
  if (key === "anthropic") {
    options = part.redacted != null ? { redactedData: part.redacted } : part.signature != null ? { signature: part.signature } : undefined;
  } else if (key === "google") {
    options = part.signature != null ? { thoughtSignature: part.signature } : undefined;
  } else if (key === "openai") {
    options = part.signature != null ? { reasoningEncryptedContent: part.signature } : undefined;
  }
  return withOptions({ type: "reasoning", text: part.text ?? "" }, options && key ? { [key]: options } : undefined);
}

function assistantContent(parts, wire) {
  const content = [];
  for (const part of parts) {
    const saved = own(part.provider_details);
    if (part.kind === "text") {
      content.push(withOptions({ type: "text", text: part.text }, textOptions(saved, wire)));
    } else if (part.kind === "reasoning" && part.provider_details?.text_part) {
      content.push(withOptions({ type: "text", text: part.text ?? "" }, saved)); // see `events`, text-end
    } else if (part.kind === "reasoning") {
      content.push(reasoningPart(part, wire));
    } else if (part.kind === "tool_call") {
      const input = part.arguments ?? part.arguments_raw ?? {};
      content.push(withOptions({ type: "tool-call", toolCallId: part.id, toolName: part.name, input }, saved));
    }
  }
  return content;
}

/**
 * What goes back on a text part. On the OpenAI wires none: with the Responses API's default
 * `store: true` the provider turns a text part carrying its item id into an `item_reference` to a
 * response stored at OpenAI (@ai-sdk/openai dist/index.js:6089-6101), and the history here is the
 * caller's own, kept in full; elsewhere what the AI SDK gave (Gemini's thoughtSignature on text).
 */
function textOptions(saved, wire) {
  if (!saved || wire === "openai_chat" || wire === "openai_responses") return undefined;
  return saved;
}

/** The tool name of each call id in the history (a tool-result part names its tool). */
function callNames(messages) {
  const names = new Map();
  for (const message of messages) {
    for (const part of message.parts) if (part.kind === "tool_call") names.set(part.id, part.name);
  }
  return names;
}

/** The call's history as ModelMessage[]. */
export function modelMessages(call) {
  const names = callNames(call.messages);
  const out = [];
  for (const message of call.messages) {
    if (message.role === "user") {
      out.push({ role: "user", content: userContent(message.parts, call.wire) });
    } else if (message.role === "assistant") {
      out.push({ role: "assistant", content: assistantContent(message.parts, call.wire) });
    } else if (message.role === "tool") {
      const content = [];
      for (const part of message.parts) {
        if (part.kind !== "tool_result") continue;
        const result = {
          type: "tool-result",
          toolCallId: part.call_id,
          toolName: part.name ?? names.get(part.call_id) ?? "",
          output: needsMcpMapping(part) ? mcpOutput(part) : toolOutput(part, call.wire),
        };
        content.push(withOptions(result, cacheOptions(part.cache_control, call.wire)));
      }
      out.push({ role: "tool", content });
    }
  }
  return out;
}

/** The call's tools as the AI SDK's tool set: `tool({description, inputSchema: jsonSchema(...)})`. */
export function toolSet(call) {
  if (!call.tools?.length) return undefined;
  const tools = {};
  for (const t of call.tools) {
    const options = cacheOptions(t.cache_control, call.wire);
    tools[t.name] = tool({
      ...(t.description != null ? { description: t.description } : {}),
      inputSchema: jsonSchema(t.input_schema),
      ...(options ? { providerOptions: options } : {}),
    });
  }
  return tools;
}

/** `toolChoice` (ai/dist/index.d.ts ToolChoice): 'auto' | 'none' | 'required' | {type: 'tool', toolName}. */
export function toolChoice(call) {
  const choice = call.tool_choice;
  if (choice == null) return undefined;
  if (choice === "auto" || choice === "none" || choice === "required") return choice;
  return { type: "tool", toolName: choice };
}

/** The system prompt as `instructions`, with its cache breakpoint as a system message's options. */
export function instructions(call) {
  if (call.system == null) return undefined;
  const options = cacheOptions(call.system_cache_control, call.wire);
  return options ? { role: "system", content: call.system, providerOptions: options } : call.system;
}

/**
 * The top-level `reasoning` (docs/03-ai-sdk-core/26-reasoning.mdx): an effort level, or 'none'
 * for reasoning off. A token budget has no top-level form ("If you need to enforce an exact token
 * budget ... keep using providerOptions"): the driver's `budgetOptions` gives it.
 */
export function reasoningLevel(call) {
  const settings = call.reasoning;
  if (settings == null) return undefined;
  if (settings.enabled === false) return "none";
  return settings.effort ?? undefined;
}

/** Deep-merge plain provider options ({provider: {...}}). */
export function mergeOptions(...all) {
  const out = {};
  for (const options of all) {
    for (const [provider, values] of Object.entries(options ?? {})) {
      out[provider] = { ...(out[provider] ?? {}), ...values };
    }
  }
  return Object.keys(out).length ? out : undefined;
}

/** The options of `generateText`/`streamText` for `call` on `model`, `providerOptions` the driver's. */
export function callOptions(call, model, providerOptions, signal) {
  const options = {
    model,
    messages: modelMessages(call),
    maxRetries: 0, // retries off: the AI SDK retries twice by default (ai/dist/index.d.ts:853-857)
  };
  const system = instructions(call);
  if (system !== undefined) options.instructions = system;
  const tools = toolSet(call);
  if (tools !== undefined) options.tools = tools;
  const choice = toolChoice(call);
  if (choice !== undefined) options.toolChoice = choice;
  if (call.max_tokens != null) options.maxOutputTokens = call.max_tokens;
  const level = reasoningLevel(call);
  if (level !== undefined) options.reasoning = level;
  if (providerOptions !== undefined) options.providerOptions = providerOptions;
  if (signal) options.abortSignal = signal;
  return options;
}

// ---------------------------------------------------------------------------------------------
// What the AI SDK hands back, as the protocol's values

/** The AI SDK's FinishReason (ai/dist/index.d.ts:129) as the suite's. */
const FINISH = {
  // "provider stream ended without a completion signal; output may be incomplete"
  // (ai/dist/index.d.ts:126): an answer that ended in error, which the AI SDK reports without one
  // (see `interruptedGaps`)
  interrupted: "error",
  stop: "stop",
  length: "length",
  "content-filter": "content_filter",
  "tool-calls": "tool_calls",
  error: "error",
  other: "other",
};

/**
 * The known gaps of every AI SDK driver (docs/clients.md: behaviour the library documents): a
 * stream that ends cleanly without its provider's completion signal is no error. "A stream that
 * ends cleanly without its provider completion signal can report 'interrupted'. Partial output is
 * preserved; interruption alone does not emit an error" (ai/docs/07-reference/01-ai-sdk-core/
 * 02-stream-text.mdx, `finishReason`): the caller gets the partial answer and the finish reason
 * 'interrupted' (read here as 'error'), never an error part.
 */
export function interruptedGaps(wires) {
  const reason =
    "the AI SDK ends a stream cut before its completion signal with finishReason 'interrupted' and no error, as" +
    " documented (ai/docs/07-reference/01-ai-sdk-core/02-stream-text.mdx, finishReason: 'interruption alone does" +
    " not emit an error'); the caller must check the finish reason";
  const gaps = {};
  for (const wire of wires) {
    for (const check of ["recovery.provider_error", "recovery.broken_stream", "streaming.events"]) {
      gaps[`${wire}:${check}@errors/stream_no_terminator`] = reason;
    }
  }
  return gaps;
}

/**
 * The suite's finish reason for the AI SDK's `finishReason`, and its `rawFinishReason` where the
 * AI SDK's docs tell users to read that one: the Anthropic provider maps `pause_turn` onto 'stop'
 * (@ai-sdk/anthropic dist/index.js:3865-3867) and documents "Check `rawFinishReason ===
 * 'pause_turn'` to detect this case" (@ai-sdk/anthropic/docs/05-anthropic.mdx:374-376): a turn the
 * server paused, to be sent back to continue, is not finished ('other'), as a user reading those
 * docs tells. No other raw reason is read: the AI SDK's own mapping is what is certified.
 */
export function finishReason(reason, raw) {
  if (raw === "pause_turn") return "other";
  return FINISH[reason] ?? "other";
}

/** LanguageModelUsage (ai/dist/index.d.ts:347-386) as the suite's Usage. */
export function usage(u, wire) {
  if (!u) return null;
  const out = {};
  const put = (key, value) => {
    if (typeof value === "number") out[key] = value;
  };
  put("input_tokens", u.inputTokens);
  // The AI SDK's outputTokens count reasoning in ("outputTokenDetails.reasoningTokens" is part of
  // it): on OpenAI and Anthropic that is the wire's own output count; Gemini counts its thoughts
  // apart (thoughtsTokenCount beside candidatesTokenCount), and the provider adds them up
  // (@ai-sdk/google dist/index.js:488, convertGoogleUsage), so the wire's output count is the AI SDK's textTokens.
  put("output_tokens", wire === "gemini" ? (u.outputTokenDetails?.textTokens ?? u.outputTokens) : u.outputTokens);
  put("total_tokens", u.totalTokens);
  put("cache_read_tokens", u.inputTokenDetails?.cacheReadTokens);
  put("cache_write_tokens", u.inputTokenDetails?.cacheWriteTokens);
  put("reasoning_tokens", u.outputTokenDetails?.reasoningTokens);
  return Object.keys(out).length ? out : null;
}

function details(metadata) {
  return metadata && Object.keys(metadata).length ? { [KEY]: metadata } : {};
}

/** The message of the AI SDK's error for an invalid call (InvalidToolInputError, NoSuchToolError). */
function callError(part) {
  if (!part.invalid) return null;
  return String(part.error?.message ?? part.error ?? "invalid tool call");
}

/** Is the call's `input` the AI SDK's parse of valid arguments? An invalid call whose error is not
 * about its input (NoSuchToolError: a tool the caller did not offer) still carries them parsed. */
function parsedInput(part) {
  if (!isObject(part.input)) return false;
  return !part.invalid || NoSuchToolError.isInstance(part.error);
}

/**
 * The model's arguments of a call of OpenAI's client-executed `tool_search` (a Responses
 * `tool_search_call` with `execution: "client"`), which the OpenAI provider hands over as a call of
 * its `tool_search` tool whose input is `{arguments, call_id}` (@ai-sdk/openai dist/index.js:7785-7800,
 * streamed 8692-8716): that is the tool's documented input (`toolSearchInputSchema`, :3927-3930; the
 * docs' `execute: async ({ arguments: args }) => ...`, @ai-sdk/openai/docs/03-openai.mdx "Client-Executed
 * Tool Search"), so the model's arguments are its `arguments`, as a user's execute callback reads
 * them. A tool the caller offered under that name is the caller's own: its input is kept whole.
 */
function toolSearchArguments(part, context) {
  if (context?.wire !== "openai_responses" || part.toolName !== "tool_search") return undefined;
  if (context.offered?.has("tool_search")) return undefined;
  const input = part.input;
  if (input === null || typeof input !== "object" || Array.isArray(input) || !("arguments" in input)) return undefined;
  return { ...part, input: input.arguments };
}

/**
 * A `tool-call` part as the suite's ToolCall: the AI SDK's own parse (`input`) and its verdict on
 * it (`invalid`, `error`: parseToolCall, ai/dist/index.js:3923-3989; an unparseable input stays the
 * model's text). The AI SDK gives no argument text of a whole answer, only the parsed `input`: the
 * text is that input as JSON. `context` ({wire, offered: the caller's tool names}) tells a call of
 * the provider's own tool_search (`toolSearchArguments`).
 */
export function toolCall(original, raw, context) {
  const part = toolSearchArguments(original, context) ?? original;
  const parsed = parsedInput(part);
  // the streamed pieces, unless the input was unwrapped (the pieces are then the wrapper's)
  const pieces = part === original ? raw : undefined;
  const text = pieces ?? (typeof part.input === "string" ? part.input : JSON.stringify(part.input ?? {}));
  return {
    kind: "tool_call",
    id: part.toolCallId,
    name: part.toolName,
    arguments: parsed ? part.input : null,
    arguments_raw: text,
    arguments_error: parsed ? null : (callError(part) ?? "the AI SDK's input is not an object"),
    provider_details: details(part.providerMetadata),
  };
}

/**
 * A reasoning part's proof, from what its provider put in its metadata. A Responses reasoning item
 * with no readable text (an empty summary: the provider gives it as a reasoning part with text ''
 * and the item's `reasoningEncryptedContent`, @ai-sdk/openai dist/index.js:7756-7768, streamed
 * 8425-8435 and 8860-8870) is redacted reasoning, the payload alone, as the openai SDK's driver reads
 * the same item (examples/clients/openai_driver.py `_reasoning_part`) and docs/adapters.md
 * "Reasoning" reads it; with text (`readable`) the payload is its signature.
 */
function reasoningProof(metadata, wire, readable = true) {
  const m = metadata?.[PROVIDER_KEYS[wire]] ?? {};
  if (m.redactedData != null) return { redacted: String(m.redactedData) };
  if (!readable && wire === "openai_responses" && m.reasoningEncryptedContent != null) {
    return { redacted: String(m.reasoningEncryptedContent) };
  }
  const signature = m.signature ?? m.thoughtSignature ?? m.reasoningEncryptedContent;
  return signature != null ? { signature: String(signature) } : {};
}

export function reasoning(part, wire) {
  return {
    kind: "reasoning",
    text: part.text ?? "",
    ...reasoningProof(part.providerMetadata, wire, Boolean(part.text)),
    source: wire,
    provider_details: details(part.providerMetadata),
  };
}

/** A `generateText` result as the suite's Response (its content parts, in order). */
export function response(result, wire, context) {
  const parts = [];
  for (const part of result.content) {
    if (part.type === "text") {
      parts.push({ kind: "text", text: part.text, provider_details: details(part.providerMetadata) });
    } else if (part.type === "reasoning") {
      parts.push(reasoning(part, wire));
    } else if (part.type === "tool-call" && !part.providerExecuted) {
      // a call the provider ran itself (Anthropic's web search) is not the caller's to run
      parts.push(toolCall(part, undefined, context));
    }
  }
  return {
    parts,
    finish_reason: finishReason(result.finishReason, result.rawFinishReason),
    usage: usage(result.usage, wire),
  };
}

/**
 * `result.fullStream` as the protocol's events. `text-delta` → text_delta, `reasoning-delta` /
 * `reasoning-end` → reasoning_delta (the end carries the part's signature), a `text-*` part with
 * no text but provider data (Gemini) → an empty reasoning_delta marked `text_part`, `tool-input-start` /
 * `tool-input-delta` → tool_call_start / tool_call_chunk, `tool-call` (the AI SDK's parse of the
 * whole input) → tool_call_end, `finish` → usage and finish.
 *
 * An `error` part: `streamText` does not throw; it reports every error, one met before the
 * response began (a 429) as well as one inside the stream, as an `error` part of `fullStream`
 * carrying the error object (a provider's error event: ai/dist/index.js:10517-10533; an error
 * starting a step: 10837-10843; an error before the response began: 10872-10884), and the
 * error handling docs tell users to handle it there by its class (`StreamProviderError.isInstance
 * (part.error)`, docs/03-ai-sdk-core/50-error-handling.mdx). So a user meets the same error object
 * `generateText` throws, in the part. The driver throws the object the part carries: the suite then
 * reads the stream as ended in that error (docs/clients.md, "a library that raises while streaming
 * is read as a stream that ended in that error"), judges the error by the AI SDK's class
 * (`client.typed_errors`) and keeps the events before it as the stream's start.
 */
export async function* events(result, wire, context) {
  const calls = new Map(); // toolCallId -> {index, pieces}
  const thoughts = new Map(); // reasoning part id -> {metadata: its provider metadata so far, said: whether text came}
  const texts = new Map(); // text part id -> {metadata, said: whether any text came}
  for await (const part of result.fullStream) {
    switch (part.type) {
      case "text-start":
        texts.set(part.id, { metadata: mergeOptions(part.providerMetadata), said: false });
        break;
      case "text-delta":
        if (texts.has(part.id)) {
          const open = texts.get(part.id);
          open.metadata = mergeOptions(open.metadata, part.providerMetadata);
          if (part.text) open.said = true;
        }
        if (part.text) yield { type: "text_delta", text: part.text };
        break;
      case "text-end": {
        // A text part with no text that carries provider data (Gemini's thoughtSignature on an
        // empty part of its own, after the calls): a text delta has no slot for it, so it goes as
        // an empty reasoning delta marked to go back as a text part (`text_part`, see
        // `assistantContent`). A signature riding on a text part with text has no slot in the
        // protocol's stream events and is not kept.
        const open = texts.get(part.id);
        texts.delete(part.id);
        const metadata = mergeOptions(open?.metadata, part.providerMetadata);
        if (open && !open.said && metadata && wire === "gemini") {
          yield { type: "reasoning_delta", text: "", source: wire, provider_details: { [KEY]: metadata, text_part: true } };
        }
        break;
      }
      case "reasoning-start":
        thoughts.set(part.id, { metadata: mergeOptions(part.providerMetadata) ?? {}, said: false });
        break;
      case "reasoning-delta": {
        // a delta may carry metadata only (Anthropic's signature_delta, ...): kept for the part's end
        const open = thoughts.get(part.id) ?? { metadata: {}, said: false };
        open.metadata = mergeOptions(open.metadata, part.providerMetadata) ?? {};
        if (part.text) open.said = true;
        thoughts.set(part.id, open);
        if (part.text) yield { type: "reasoning_delta", text: part.text, source: wire };
        break;
      }
      case "reasoning-end": {
        // the part's proof (signature, redacted data) and what its provider put on it, from the
        // metadata of its start, deltas and end; redacted when no text came (see reasoningProof)
        const open = thoughts.get(part.id);
        const metadata = mergeOptions(open?.metadata, part.providerMetadata);
        thoughts.delete(part.id);
        if (metadata) {
          const proof = reasoningProof(metadata, wire, Boolean(open?.said));
          yield { type: "reasoning_delta", text: "", ...proof, source: wire, provider_details: details(metadata) };
        }
        break;
      }
      case "tool-input-start":
        if (!part.providerExecuted && !calls.has(part.id)) {
          calls.set(part.id, { index: calls.size, pieces: [] });
          const index = calls.size - 1;
          // what the provider put on the call (Gemini's thoughtSignature) goes back with it next turn
          yield { type: "tool_call_start", tool_call_id: part.id, tool_call_name: part.toolName, index, provider_details: details(part.providerMetadata) };
        }
        break;
      case "tool-input-delta": {
        const open = calls.get(part.id);
        if (open && part.delta) {
          open.pieces.push(part.delta);
          yield { type: "tool_call_chunk", tool_call_id: part.id, tool_call_arguments_chunk: part.delta };
        }
        break;
      }
      case "tool-call": {
        if (part.providerExecuted) break; // run by the provider, not the caller's (see `response`)
        let open = calls.get(part.toolCallId);
        if (!open) {
          // a call whose input came whole (no tool-input-* parts before it)
          open = { index: calls.size, pieces: [] };
          calls.set(part.toolCallId, open);
          yield { type: "tool_call_start", tool_call_id: part.toolCallId, tool_call_name: part.toolName, index: open.index, provider_details: details(part.providerMetadata) };
        }
        const call = toolCall(part, open.pieces.length ? open.pieces.join("") : undefined, context);
        if (!open.pieces.length && call.arguments_raw) {
          yield { type: "tool_call_chunk", tool_call_id: part.toolCallId, tool_call_arguments_chunk: call.arguments_raw };
        }
        const start = { type: "tool_call_end", tool_call_id: part.toolCallId };
        yield {
          ...start,
          tool_call_arguments_complete: call.arguments_raw,
          arguments: call.arguments,
          arguments_error: call.arguments_error,
        };
        break;
      }
      case "finish": {
        const u = usage(part.totalUsage, wire);
        if (u) yield { type: "usage", usage: u };
        yield { type: "finish", reason: finishReason(part.finishReason, part.rawFinishReason), provider_reason: part.rawFinishReason ?? null };
        break;
      }
      case "error":
        throw part.error; // see above: the error object the AI SDK hands over, as a user meets it
      default:
        break; // start, start-step, finish-step, text-start/-end, tool-input-end, tool-error, source, ...
    }
  }
}

/** One turn: `generateText`, or `streamText` and its `fullStream` as events. */
export async function complete(call, signal, model, providerOptions) {
  const options = callOptions(call, model, providerOptions, signal);
  const context = { wire: call.wire, offered: new Set((call.tools ?? []).map((t) => t.name)) };
  if (call.stream) return events(streamText(options), call.wire, context);
  return response(await generateText(options), call.wire, context);
}

// ---------------------------------------------------------------------------------------------
// Errors, by the AI SDK's public classes (@ai-sdk/provider dist/index.js, ai/dist/index.js)

/**
 * Seconds to wait, from the `retry-after-ms` or `retry-after` header the error carries. Not
 * _convert.mjs's `retryAfter`: the AI SDK's `responseHeaders` is a plain record, not a `Headers`.
 */
export function retryAfter(headers) {
  if (!headers) return null;
  const lower = {};
  for (const [k, v] of Object.entries(headers)) lower[k.toLowerCase()] = String(v);
  if (lower["retry-after-ms"] != null && Number.isFinite(Number(lower["retry-after-ms"]))) {
    return Number(lower["retry-after-ms"]) / 1000;
  }
  const value = lower["retry-after"];
  if (value == null) return null;
  if (value.trim() !== "" && Number.isFinite(Number(value))) return Number(value);
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, (date - Date.now()) / 1000);
}

/**
 * Seconds to wait from a Google error's `RetryInfo.retryDelay` ("3s"), which Gemini sends in the
 * error JSON's `details` and no header carries: the Google provider parses the error body with
 * `details` kept (`getGoogleErrorSchema`, @ai-sdk/google dist/index.js:46-51) and hands it over as
 * `APICallError.data` ("Any additional data associated with the error", ai-api-call-error.mdx), the
 * error JSON the google-genai drivers read the same delay from (examples/clients/google_genai_driver.py
 * `_retry_delay`, examples/clients/node/google_genai.mjs `retryDelay`).
 */
export function retryDelay(data) {
  const details = data?.error?.details;
  for (const item of Array.isArray(details) ? details : []) {
    const delay = item?.retryDelay;
    if (typeof delay === "string" && delay.endsWith("s")) {
      const seconds = Number.parseFloat(delay.slice(0, -1));
      return Number.isFinite(seconds) ? seconds : null;
    }
  }
  return null;
}

/**
 * The AI SDK's error classes, most specific first, and the kind each means. Every class is the
 * AI SDK's own (`X.isInstance(error)`, the check its docs use); nothing reads an error's `cause`
 * or a wrapped error (RetryError's `lastError`: `maxRetries: 0` means no RetryError is made).
 */
const CLASSES = [
  // a well-formed provider error event inside a response stream (docs: ai-stream-provider-error)
  [StreamProviderError, "stream"],
  // an HTTP call that failed: its `statusCode` says the kind; none is a connection that failed
  [APICallError, "http"],
  [InvalidResponseDataError, "malformed_response"],
  [JSONParseError, "malformed_response"],
  [TypeValidationError, "malformed_response"],
  [EmptyResponseBodyError, "malformed_response"],
  [NoContentGeneratedError, "malformed_response"],
  // "No output generated. The model stream ended without a finish chunk." (ai/dist/index.js:10770)
  [NoOutputGeneratedError, "stream_incomplete"],
  [ToolChoiceViolationError, "malformed_response"],
  [NoSuchToolError, "malformed_response"],
  [InvalidToolInputError, "malformed_response"],
  [ToolCallRepairError, "malformed_response"],
  [LoadAPIKeyError, "auth"],
  [InvalidPromptError, "invalid_request"],
  [InvalidArgumentError, "invalid_request"],
  [UnsupportedFunctionalityError, "invalid_request"],
  [RetryError, "unknown"],
];

/** The protocol's ErrorInfo for an error the AI SDK raised (or handed over in a stream), or null. */
export function errorInfo(error) {
  const entry = CLASSES.find(([cls]) => cls.isInstance(error));
  if (!entry) return null;
  let kind = entry[1];
  const status = typeof error.statusCode === "number" ? error.statusCode : null;
  let code = null;
  if (kind === "stream") {
    code = error.code ?? error.type ?? null;
    // no status: no kind from it (the stream's error came inside a success)
    kind = kindForCode(CODES, error.type, error.code) ?? (status == null ? null : kindForStatus(status)) ?? "server";
  } else if (kind === "http") {
    // An error status says the kind. A success status is an answer the provider utilities could
    // not read, and the documented `isRetryable` ("Whether the request can be retried",
    // ai/docs/07-reference/05-ai-sdk-errors/ai-api-call-error.mdx) tells which: a body whose read
    // failed on the network (a stream cut mid-body: undici's `TypeError: terminated`) is wrapped as
    // "Failed to process successful response" (@ai-sdk/provider-utils dist/index.js:4136-4146) and
    // marked retryable by `handleFetchError` as a network error (:603-615, the codes at :568-580),
    // while a body that is not JSON ("Invalid JSON response", :4260-4268) keeps the status's
    // default, not retryable (@ai-sdk/provider dist/index.js:70). So a retryable error after a
    // success status is an answer that broke off; no status ("Cannot connect to API") says no more
    // than "unknown".
    if (status != null && status >= 400) kind = kindForStatus(status);
    else if (status != null && error.isRetryable === true) kind = "stream_incomplete";
    else kind = "unknown";
  }
  return {
    kind,
    message: String(error.message ?? error),
    status,
    retry_after: retryAfter(error.responseHeaders) ?? retryDelay(error.data),
    code: code == null ? null : String(code),
  };
}
