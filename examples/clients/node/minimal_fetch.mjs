// The minimal JavaScript client: Chat Completions tool calling over plain `fetch` (no package),
// non-streamed, certified with
//   conformance certify --command "node examples/clients/node/minimal_fetch.mjs" --wires openai_chat
//
// A port of examples/clients/minimal_openai_driver.py, choice for choice: the same capabilities,
// duties, conversion, finish table and error mapping, so the same driver logic over the protocol
// gives the same verdicts as the Python one in-process (issue 30, "Done means"). Where the Python
// driver leans on the openai SDK, the SDK's own behaviour is mirrored and cited
// (openai/_base_client.py and openai/_client.py, openai 3.57.0 in the venv).
//
// Retries: none. `fetch` never retries, and this driver calls it once per turn (the Python driver
// passes max_retries=0 to the SDK for the same reason: the suite counts the requests of a turn).

import { serve } from "./protocol.mjs";

/**
 * A non-2xx answer (the SDK's APIStatusError): the HTTP status, the retry-after header, and the
 * SDK's message, "Error code: 429 - <the body's error.message>" (openai/_base_client.py,
 * _make_status_error_from_response).
 */
export class HttpError extends Error {
  constructor(status, retryAfter, body) {
    let message = `Error code: ${status}`;
    const error = isMapping(body) ? (body.error ?? body) : null;
    if (isMapping(error) && typeof error.message === "string" && error.message) message += ` - ${error.message}`;
    super(message);
    this.name = "HttpError";
    this.status = status;
    this.retryAfter = retryAfter;
    this.body = body;
  }
}

function isMapping(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function textOf(parts) {
  return parts
    .filter((p) => p.kind === "text")
    .map((p) => p.text)
    .join("");
}

export function toOpenai(call) {
  const messages = call.system ? [{ role: "system", content: call.system }] : [];
  for (const m of call.messages ?? []) {
    const texts = textOf(m.parts ?? []);
    const calls = (m.parts ?? []).filter((p) => p.kind === "tool_call");
    if (m.role === "tool") {
      for (const r of m.parts ?? []) {
        messages.push({ role: "tool", tool_call_id: r.call_id, content: textOf(r.content ?? []) });
      }
    } else if (calls.length > 0) {
      const toolCalls = calls.map((c) => ({
        id: c.id,
        type: "function",
        function: { name: c.name, arguments: c.arguments_raw },
      }));
      messages.push({ role: "assistant", content: texts || null, tool_calls: toolCalls });
    } else {
      messages.push({ role: m.role, content: texts });
    }
  }
  return messages;
}

async function complete(call, { signal }) {
  const tools = (call.tools ?? []).map((t) => ({
    type: "function",
    function: { name: t.name, description: t.description || "", parameters: t.input_schema },
  }));
  const body = { model: call.model, messages: toOpenai(call) };
  if (tools.length > 0) body.tools = tools;
  if (call.tool_choice !== null && call.tool_choice !== undefined && tools.length > 0) body.tool_choice = call.tool_choice;
  if (call.max_tokens !== null && call.max_tokens !== undefined) body.max_tokens = call.max_tokens;
  // The SDK's request: POST {base_url}/chat/completions with a bearer key (openai/_client.py,
  // auth_headers; resources/chat/completions), base_url being the server root + "/v1".
  const response = await fetch(`${call.base_url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${call.api_key}` },
    body: JSON.stringify(body),
    signal,
  });
  const text = await response.text();
  if (!response.ok) {
    // The SDK's status error body: the answer's JSON when it parses, else its text, stripped.
    let parsed = text.trim();
    try {
      parsed = JSON.parse(parsed);
    } catch {
      // not JSON: the text stays the body, as in the SDK
    }
    throw new HttpError(response.status, response.headers.get("retry-after"), parsed);
  }
  const completion = JSON.parse(text);
  const choice = completion.choices[0];
  const parts = choice.message.content ? [{ kind: "text", text: choice.message.content }] : [];
  for (const c of choice.message.tool_calls ?? []) {
    let args = null;
    let error = null;
    try {
      args = JSON.parse(c.function.arguments || "{}");
    } catch (exc) {
      error = String(exc.message);
    }
    parts.push({
      kind: "tool_call",
      id: c.id,
      name: c.function.name,
      arguments: args,
      arguments_raw: c.function.arguments ?? null,
      arguments_error: error,
    });
  }
  const reason = { tool_calls: "tool_calls", stop: "stop", length: "length" }[choice.finish_reason] ?? "other";
  return { parts, finish_reason: reason };
}

// The SDK's exception classes by status (openai/_client.py, _make_status_error: 400
// BadRequestError, 401 AuthenticationError, 429 RateLimitError, >= 500 InternalServerError), with
// the Python driver's kinds: the kind is what the class means, so a 503 is "server"; the SDK's other
// status classes (403, 404, 409, 422, and any other status) are "unknown" there, and here.
function kindOf(status) {
  if (status === 429) return "rate_limit";
  if (status === 400) return "invalid_request";
  if (status === 401) return "auth";
  if (status >= 500) return "server";
  return "unknown";
}

// Python's float(): what the Python driver's float(retry_after) accepts; past it float() raises,
// and so does this (the mapping fails the same way, e.g. for an HTTP-date).
const PYTHON_FLOAT = /^\s*[+-]?((\d[\d_]*(\.[\d_]*)?|\.\d[\d_]*)([eE][+-]?\d+)?|inf(inity)?|nan)\s*$/i;

function pythonFloat(text) {
  if (!PYTHON_FLOAT.test(text)) throw new Error(`could not convert string to float: '${text}'`);
  const value = Number(text.trim().replaceAll("_", "").replace(/^([+-]?)inf(inity)?$/i, "$1Infinity"));
  return Number.isFinite(value) ? value : null;
}

function errorInfo(error) {
  if (error instanceof HttpError) {
    return {
      kind: kindOf(error.status),
      message: error.message,
      status: error.status,
      retry_after: error.retryAfter ? pythonFloat(error.retryAfter) : null,
    };
  }
  return null; // a connection failure or an answer that is no JSON: untyped, as the SDK's are there
}

serve({
  name: "minimal-fetch",
  version: `undici ${process.versions.undici} (Node's fetch)`,
  // no "streaming": the stream cases are UNSUPPORTED, as for the Python driver
  wires: {
    openai_chat: [
      "parallel_tool_calls",
      "tool_choice_auto",
      "tool_choice_none",
      "tool_choice_required",
      "system_prompt",
      "call_ids",
    ],
  },
  duties: ["transport"], // fetch sends tool names and schemas as given
  complete,
  errorInfo,
});
