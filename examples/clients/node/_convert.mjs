// The Node drivers' shared conversion helpers: what examples/clients/_convert.py is for the Python
// drivers. Only logic that is the same in several drivers lives here; a driver keeps its own version
// where its library differs (another headers object, another error table, another streaming shape).

/** Compact JSON of `value`, as the drivers send and record arguments (_convert.py `dumps`). */
export const dumps = (value) => JSON.stringify(value);

/** A JSON object: not null, not an array. */
export const isObject = (value) => value !== null && typeof value === "object" && !Array.isArray(value);

/**
 * The arguments a caller gets from `JSON.parse` of the text, or why it cannot use them: `[args, null]`
 * or `[null, error]`; blank text is no arguments (_convert.py `parse_arguments`).
 */
export function parseArguments(raw) {
  if (!raw.trim()) return [{}, null];
  let value;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    return [null, `invalid JSON: ${error.message}`];
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return [null, `arguments are a JSON ${value === null ? "null" : Array.isArray(value) ? "array" : typeof value}, not an object`];
  }
  return [value, null];
}

/** A `tool_call` part from a call's raw argument text, with its parse (_convert.py `tool_call`). */
export function toolCall(id, name, raw, details) {
  const [args, error] = parseArguments(raw);
  const part = { kind: "tool_call", id, name, arguments: args, arguments_raw: raw, arguments_error: error };
  if (details) part.provider_details = details;
  return part;
}

/** The text of an MCP tool result: text items and embedded text resources, joined by newlines (_convert.py `result_text`). */
export function resultText(result) {
  const texts = [];
  for (const item of result.content ?? []) {
    if (item.kind === "text") texts.push(item.text);
    else if (item.kind === "resource" && typeof item.text === "string") texts.push(item.text);
  }
  return texts.join("\n");
}

/** The image items of an MCP tool result that carry data (_convert.py `result_images`). */
export const resultImages = (result) => (result.content ?? []).filter((item) => item.kind === "image" && item.data);

/**
 * Reasoning this wire can take back: produced by it, or of unknown origin (a caller's own history);
 * another provider's reasoning is left out, as a user writing this wire's messages must (_convert.py
 * `own_reasoning`).
 */
export const ownReasoning = (part, wire) => part.source == null || part.source === wire;

/**
 * Seconds to wait from `retry-after-ms` or `retry-after` (seconds or an HTTP date) of a fetch
 * `Headers` (anything with `get`), as the official SDKs' errors carry them (_convert.py `retry_after`
 * reads a mapping).
 */
export function retryAfter(headers) {
  if (!headers || typeof headers.get !== "function") return null;
  const ms = headers.get("retry-after-ms");
  if (ms !== null && Number.isFinite(Number.parseFloat(ms))) return Number.parseFloat(ms) / 1000;
  const value = headers.get("retry-after");
  if (value === null) return null;
  if (/^\s*\d+(\.\d+)?\s*$/.test(value)) return Number.parseFloat(value);
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, (date - Date.now()) / 1000);
}

/** OpenAI Chat Completions `finish_reason` values (_convert.py `CHAT_FINISH`). */
export const CHAT_FINISH = {
  stop: "stop",
  tool_calls: "tool_calls",
  function_call: "tool_calls",
  length: "length",
  content_filter: "content_filter",
};

/**
 * The unified reason for a provider's `raw` one (`other` outside `table`); `tool_calls` when calls came
 * back on a `stop` (a forced call says `stop`) (_convert.py `finish_reason`).
 */
export function finishReason(table, raw, hasCalls) {
  const reason = table[raw ?? ""] ?? "other";
  return hasCalls && reason === "stop" ? "tool_calls" : reason;
}

/**
 * The error kind an HTTP status means, for a library that types its errors by status rather than by
 * class (@google/genai's `ApiError.status`, ollama's `ResponseError.status_code`): _convert.py
 * `kind_for_status`.
 */
export function kindForStatus(status) {
  const table = { 400: "invalid_request", 401: "auth", 403: "permission", 404: "not_found", 413: "context_length", 422: "invalid_request", 429: "rate_limit", 503: "overloaded", 529: "overloaded" };
  if (typeof status !== "number") return "unknown";
  if (table[status]) return table[status];
  if (status >= 500 && status < 600) return "server";
  if (status >= 400 && status < 500) return "invalid_request";
  return "unknown";
}

/** Anthropic's error `type` values (https://docs.anthropic.com/en/api/errors). */
export const ANTHROPIC_CODES = {
  invalid_request_error: "invalid_request",
  authentication_error: "auth",
  permission_error: "permission",
  not_found_error: "not_found",
  request_too_large: "context_length",
  rate_limit_error: "rate_limit",
  api_error: "server",
  overloaded_error: "overloaded",
};

/** OpenAI's error `type` / `code` values that name a kind. */
export const OPENAI_CODES = {
  server_error: "server",
  rate_limit_exceeded: "rate_limit",
  insufficient_quota: "rate_limit",
  context_length_exceeded: "context_length",
  invalid_api_key: "auth",
  invalid_request_error: "invalid_request",
};

/** Google RPC statuses (the Gemini API's `error.status`). */
export const GOOGLE_CODES = {
  INVALID_ARGUMENT: "invalid_request",
  FAILED_PRECONDITION: "invalid_request",
  UNAUTHENTICATED: "auth",
  PERMISSION_DENIED: "permission",
  NOT_FOUND: "not_found",
  RESOURCE_EXHAUSTED: "rate_limit",
  INTERNAL: "server",
  UNAVAILABLE: "overloaded",
  DEADLINE_EXCEEDED: "server",
};

/** All three providers' codes: _convert.py `_CODES`, for a library that speaks them all. */
export const CODES = { ...ANTHROPIC_CODES, ...OPENAI_CODES, ...GOOGLE_CODES };

/**
 * The error kind of the first provider error type/code string that names one in `table`, or null
 * (_convert.py `kind_for_code`, which reads the one table `CODES`; a driver for one provider passes
 * that provider's table, so another provider's code names no kind there).
 */
export function kindForCode(table, ...codes) {
  for (const code of codes) if (typeof code === "string" && table[code]) return table[code];
  return null;
}
