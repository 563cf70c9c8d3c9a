// Driver for the official `@google/genai` JavaScript SDK (3.3), on the Gemini API wire: the port of
// examples/clients/google_genai_driver.py (same declarations, duty `transport`, same choices but
// one: the tools).
//
// `ai.models.generateContent({model, contents, config})` (or `generateContentStream`, iterated with
// `for await`, as the README's "Streaming" shows) on `new GoogleGenAI({apiKey, httpOptions: {baseUrl}})`.
// The MCP tools go out as the README's "Function Calling" declares them: `functionDeclarations`
// with the tool's JSON Schema as `parametersJsonSchema`, as given (the Python SDK's driver uses its
// MCP translation, `_mcp_utils.mcp_to_gemini_tool`; the JS SDK's counterpart, `mcpToTool`, takes
// a live MCP client only and runs the calls itself, and the function under it is not exported).
// Each streamed `GenerateContentResponse` chunk becomes events: text parts text deltas, thought
// parts reasoning deltas, a `functionCall` part (Gemini sends each call whole) a start, one chunk
// of its compact JSON and an end, and the candidate's `finishReason` the finish. A call without an
// `id` (the Gemini API usually sends none) gets `call_<n>`, marked `synthetic_id` and never sent;
// its result is matched by name. `thoughtSignature` (a base64 string in the JS SDK's types) rides in
// `provider_details` as it came and is replayed on the part it came on.
//
// The SDK throws `ApiError` (its one public error class, README "Error Handling": `e.status` is the
// HTTP status, `e.message` the error JSON, dist/node/index.mjs throwErrorIfNotOK), also for an
// `{"error": ...}` chunk inside a 200 stream; `errorInfo` maps it by its documented `status`.
// Run: conformance certify --command "node examples/clients/node/google_genai.mjs"

import { ApiError, FunctionCallingConfigMode, GoogleGenAI } from "@google/genai";

import { dumps, finishReason, kindForStatus, ownReasoning, resultText } from "./_convert.mjs";
import { serve, versionOf } from "./protocol.mjs";

// Gemini's `finishReason` values (the SDK's `FinishReason` enum).
const GEMINI_FINISH = {
  STOP: "stop",
  MAX_TOKENS: "length",
  SAFETY: "content_filter",
  RECITATION: "content_filter",
  BLOCKLIST: "content_filter",
  PROHIBITED_CONTENT: "content_filter",
  SPII: "content_filter",
  MALFORMED_FUNCTION_CALL: "malformed_tool_call",
};

function finish(raw, hasCalls) {
  const text = String(raw);
  return [finishReason(GEMINI_FINISH, text, hasCalls), text];
}

// ---- the request -----------------------------------------------------------------------------

/** Did the server itself send this id (not a synthetic `call_<n>`)? */
function realId(call, callId) {
  for (const message of call.messages) {
    for (const part of message.parts) {
      if (part.kind === "tool_call" && part.id === callId) return !part.provider_details?.synthetic_id;
    }
  }
  return false;
}

function functionResponse(result, call) {
  const text = resultText(result);
  const images = (result.content ?? [])
    .filter((item) => item.kind === "image" && item.data)
    .map((i) => ({ inlineData: { mimeType: i.media_type, data: i.data } }));
  const out = { name: result.name ?? "", response: result.is_error ? { error: text } : { result: text } };
  if (realId(call, result.call_id)) out.id = result.call_id;
  if (images.length) out.parts = images;
  return out;
}

const withSignature = (part, signature) => (typeof signature === "string" ? { ...part, thoughtSignature: signature } : part);

function contents(call) {
  const out = [];
  for (const message of call.messages) {
    const parts = [];
    for (const part of message.parts) {
      const details = part.provider_details ?? {};
      if (part.kind === "text") parts.push(withSignature({ text: part.text }, details.thought_signature));
      else if (part.kind === "reasoning") {
        if (!ownReasoning(part, call.wire)) continue; // another provider's reasoning: left out
        const signature = part.signature ?? details.thought_signature;
        const thought = details.thought === false ? {} : { thought: true };
        parts.push(withSignature({ text: part.text ?? "", ...thought }, signature));
      } else if (part.kind === "tool_call") {
        const functionCall = { name: part.name, args: part.arguments ?? {} };
        if (!details.synthetic_id) functionCall.id = part.id;
        parts.push(withSignature({ functionCall }, details.thought_signature));
      } else if (part.kind === "tool_result") parts.push({ functionResponse: functionResponse(part, call) });
    }
    out.push({ role: message.role === "assistant" ? "model" : "user", parts });
  }
  return out;
}

/** The caller's reasoning settings as the SDK's `ThinkingConfig` (genai.d.ts: thinkingBudget "0 is
 * DISABLED", includeThoughts, thinkingLevel MINIMAL/LOW/MEDIUM/HIGH). */
function thinkingConfig(call) {
  const settings = call.reasoning;
  if (settings == null) return undefined;
  if (settings.enabled === false) return { thinkingBudget: 0 };
  const out = { includeThoughts: true };
  if (settings.budget_tokens != null) out.thinkingBudget = settings.budget_tokens;
  if (settings.effort != null) out.thinkingLevel = settings.effort.toUpperCase();
  return out;
}

function config(call) {
  const out = { automaticFunctionCalling: { disable: true } };
  if (call.system) out.systemInstruction = call.system;
  if (call.tools?.length) {
    const functionDeclarations = call.tools.map((t) => ({
      name: t.name,
      ...(t.description ? { description: t.description } : {}),
      parametersJsonSchema: t.input_schema,
    }));
    out.tools = [{ functionDeclarations }];
  }
  if (call.tool_choice != null) {
    const modes = { auto: FunctionCallingConfigMode.AUTO, none: FunctionCallingConfigMode.NONE, required: FunctionCallingConfigMode.ANY };
    const functionCallingConfig = { mode: modes[call.tool_choice] ?? FunctionCallingConfigMode.ANY };
    if (!(call.tool_choice in modes)) functionCallingConfig.allowedFunctionNames = [call.tool_choice];
    out.toolConfig = { functionCallingConfig };
  }
  if (call.max_tokens != null) out.maxOutputTokens = call.max_tokens;
  const thinking = thinkingConfig(call);
  if (thinking !== undefined) out.thinkingConfig = thinking;
  return out;
}

// ---- the answer ------------------------------------------------------------------------------

function details(part, extra = {}) {
  return typeof part.thoughtSignature === "string" && part.thoughtSignature
    ? { ...extra, thought_signature: part.thoughtSignature }
    : { ...extra };
}

function callOf(part, position) {
  const fc = part.functionCall;
  const args = fc.args ?? {};
  const synthetic = !fc.id;
  return {
    kind: "tool_call",
    id: fc.id || `call_${position}`,
    name: fc.name ?? "",
    arguments: args,
    arguments_raw: dumps(args),
    arguments_error: null,
    provider_details: details(part, synthetic ? { synthetic_id: true } : {}),
  };
}

/** A thought part: its text, and its `thoughtSignature` as the signature, replayed on a thought part. */
function thought(part) {
  const d = details(part);
  return { kind: "reasoning", text: part.text ?? "", signature: d.thought_signature ?? null, source: "gemini", provider_details: d };
}

function response(answer) {
  const candidate = answer.candidates?.[0];
  if (!candidate) return { parts: [], finish_reason: "other" };
  const parts = [];
  for (const part of candidate.content?.parts ?? []) {
    if (part.functionCall != null) parts.push(callOf(part, parts.filter((p) => p.kind === "tool_call").length));
    else if (part.text != null && part.thought) parts.push(thought(part));
    else if (!part.text && part.thoughtSignature) {
      // a signed empty text part: the signature alone
      parts.push({ kind: "reasoning", signature: part.thoughtSignature, source: "gemini", provider_details: { thought: false } });
    } else if (part.text != null) parts.push({ kind: "text", text: part.text, provider_details: details(part) });
  }
  const [reason, raw] = finish(candidate.finishReason, parts.some((p) => p.kind === "tool_call"));
  return { parts, finish_reason: reason, provider_details: { finish_reason: raw } };
}

async function* events(chunks) {
  let position = 0;
  let thinking = false; // a thought block is open (its parts came without a signature)
  for await (const chunk of chunks) {
    const candidate = chunk.candidates?.[0];
    if (!candidate) continue;
    for (const part of candidate.content?.parts ?? []) {
      if (part.functionCall != null) {
        const tc = callOf(part, position);
        thinking = false;
        yield { type: "tool_call_start", tool_call_id: tc.id, tool_call_name: tc.name, index: position, provider_details: tc.provider_details };
        yield { type: "tool_call_chunk", tool_call_id: tc.id, tool_call_arguments_chunk: tc.arguments_raw };
        yield { type: "tool_call_end", tool_call_id: tc.id, tool_call_arguments_complete: tc.arguments_raw, arguments: tc.arguments };
        position += 1;
      } else if (part.thought) {
        const t = thought(part);
        yield { type: "reasoning_delta", text: t.text, signature: t.signature, provider_details: t.provider_details, source: "gemini" };
        thinking = t.signature === null; // a signature ends the thought block
      } else if (part.thoughtSignature) {
        // A signed text part: the text streams and the signature follows as a block of its own,
        // replayed as a signed empty text part (google_genai_driver.py _events;
        // https://ai.google.dev/gemini-api/docs/thought-signatures)
        if (part.text) yield { type: "text_delta", text: part.text };
        if (thinking) yield { type: "reasoning_delta", provider_details: { thought: true }, source: "gemini" };
        yield { type: "reasoning_delta", signature: part.thoughtSignature, provider_details: { thought: false }, source: "gemini" };
        thinking = false;
      } else if (part.text) {
        yield { type: "text_delta", text: part.text };
        thinking = false;
      }
    }
    if (candidate.finishReason != null) {
      const [reason, raw] = finish(candidate.finishReason, position > 0);
      yield { type: "finish", reason, provider_reason: raw };
    }
  }
}

// ---- the client ------------------------------------------------------------------------------

function client(call) {
  // retryOptions {attempts: 1}: `attempts` counts the initial call, so p-retry gets no retry
  // (dist/node/index.mjs ApiClient.apiCall: `retries: attempts - 1`); without retryOptions the SDK
  // does not retry either (`if (!retryOptions) return runFetch()`), and this says so explicitly.
  // The suite counts requests per turn; a hidden retry is a finding and would take the next turn's
  // recorded answer.
  const httpOptions = { baseUrl: call.base_url, timeout: Math.round(call.timeout * 1000), retryOptions: { attempts: 1 } };
  return new GoogleGenAI({ apiKey: call.api_key, httpOptions });
}

async function complete(call) {
  const ai = client(call);
  const request = { model: call.model, contents: contents(call), config: config(call) };
  if (call.stream) return events(await ai.models.generateContentStream(request));
  return response(await ai.models.generateContent(request));
}

/** RetryInfo's `retryDelay` ("2s") in the error JSON, which the SDK hands over as the message
 * (`new ApiError({message: JSON.stringify(errorBody), status})`, dist/node/index.mjs
 * throwErrorIfNotOK); the SDK keeps no response headers on the error. */
function retryDelay(message) {
  let body;
  try {
    body = JSON.parse(message);
  } catch {
    return null;
  }
  for (const item of body?.error?.details ?? []) {
    const delay = item?.retryDelay;
    if (typeof delay === "string" && delay.endsWith("s")) {
      const seconds = Number.parseFloat(delay.slice(0, -1));
      return Number.isFinite(seconds) ? seconds : null;
    }
  }
  return null;
}

function errorInfo(error) {
  if (!(error instanceof ApiError)) return null;
  // The SDK types its errors by field, not by class: the HTTP `status` it documents names the kind.
  return {
    kind: kindForStatus(error.status),
    message: String(error.message),
    status: typeof error.status === "number" ? error.status : null,
    retry_after: retryDelay(error.message),
  };
}

serve({
  name: "google-genai-node",
  version: versionOf("@google/genai"),
  wires: {
    gemini: [
      "streaming",
      "parallel_tool_calls",
      "tool_choice_auto",
      "tool_choice_none",
      "tool_choice_required",
      "tool_choice_named",
      "images_in_tool_results",
      "system_prompt",
      // thought parts and signatures go back on the parts they came on; ThinkingConfig carries all three
      "reasoning_replay",
      "reasoning_effort",
      "reasoning_budget",
      "reasoning_off",
    ],
  },
  // An SDK transports: it sends the caller's tool names and schemas as given (the README promises no
  // mapping to what the API accepts), so those duties are left to its caller.
  duties: { gemini: ["transport"] },
  // A stream the server closes cleanly before a chunk with a finishReason ends without an error, by
  // design, as in the Python SDK (google_genai_driver.py): StreamContinuation resumes "clean closes
  // without a finishReason" when it has a continuationToken and otherwise throws only "the latest
  // error since the stream last made progress" (dist/node/index.mjs:15411-15414; endHop,
  // :15526-15531: no error kept, no error thrown).
  known_gaps: Object.fromEntries(
    ["recovery.provider_error", "recovery.broken_stream", "streaming.events", "streaming.lifecycle"].map((check) => [
      `${check}@errors/stream_no_terminator`,
      "@google/genai returns normally from a stream that ended cleanly without a finishReason: its StreamContinuation" +
        " throws only an error it caught (dist/node/index.mjs:15411-15414, 15526-15531): check the last chunk's" +
        " finishReason yourself",
    ]),
  ),
  complete,
  errorInfo,
});
