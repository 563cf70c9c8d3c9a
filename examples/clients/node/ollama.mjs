// Driver for the official `ollama` JavaScript client (ollama 0.6.4), on Ollama's /api/chat: the port of
// examples/clients/ollama_driver.py.
//
// `new Ollama({host: base_url}).chat({model, messages, tools, stream})`, as the package's README and its
// examples/tools/*.ts show. Not streaming, the `ChatResponse` message's `content`, `thinking` and
// `tool_calls` (arguments arrive as an object) become the parts; streaming (`stream: true`, an
// `AbortableAsyncIterator` of `ChatResponse` chunks), each chunk's content and thinking are deltas, each
// tool call (Ollama sends a call whole) a start, one chunk of its compact JSON and an end, and the chunk
// with `done: true` the finish (`done_reason`). `max_tokens` is `options.num_predict`; Ollama has no tool
// choice: `none` is sent as no tools, the others are not declared.
//
// Call ids: the package's `ToolCall` type has no `id` and its `Message` no `tool_call_id`
// (src/interfaces.ts:72-88), but it hands on the server's JSON as parsed (src/browser.ts,
// processStreamableRequest: `response.json()`; src/utils.ts, parseJSON), so a call's `id` is there when
// the server sent one (Ollama >= 0.12.10), and a user who keeps the history as the package's examples do
// (`messages.push(chunk.message)`, examples/tools/multi-tool.ts) sends it back on the assistant message.
// The driver does the same; a result goes back as the examples write it, `{role: "tool", content,
// tool_name}`, the only fields `Message` has. A call without an id gets `call_<n>` (`synthetic_id`),
// never sent.
//
// Errors: the package throws `ResponseError` (`error`, `status_code`: src/utils.ts:9-21, thrown by checkOk at :91) for an
// HTTP error; the class is not exported (src/index.ts), so a caller tells it by its `name` and its
// `status_code`. An `{"error": ...}` line inside a 200 stream and a stream without its `done` line are a
// plain `Error` (src/utils.ts:48, :58), and a broken connection is fetch's own `TypeError`: untyped.
// Retries: the package has none (one `fetch` per call, src/browser.ts processStreamableRequest), so there
// is nothing to turn off.
// Run: conformance certify --command "node examples/clients/node/ollama.mjs"

import { Ollama } from "ollama";

import { finishReason, isObject, kindForStatus, ownReasoning, resultText } from "./_convert.mjs";
import { serve, versionOf } from "./protocol.mjs";

const DONE = { stop: "stop", length: "length" };

function messages(call) {
  const out = [];
  if (call.system) out.push({ role: "system", content: call.system });
  for (const message of call.messages) {
    if (message.role === "tool") {
      for (const result of message.parts) {
        if (result.kind !== "tool_result") continue;
        const entry = { role: "tool", content: resultText(result) };
        if (result.name) entry.tool_name = result.name;
        const images = (result.content ?? []).filter((item) => item.kind === "image" && item.data).map((item) => item.data);
        if (images.length) entry.images = images;
        out.push(entry);
      }
      continue;
    }
    const entry = {
      role: message.role,
      content: message.parts
        .filter((p) => p.kind === "text")
        .map((p) => p.text)
        .join(""),
    };
    // the thinking goes back on the assistant message, as the package's examples keep `chunk.message`
    const thinking = message.parts
      .filter((p) => p.kind === "reasoning" && ownReasoning(p, call.wire))
      .map((p) => p.text)
      .join("");
    if (thinking) entry.thinking = thinking;
    const calls = message.parts.filter((p) => p.kind === "tool_call");
    if (calls.length) {
      entry.tool_calls = calls.map((c) => ({
        ...(c.provider_details?.synthetic_id ? {} : { id: c.id }), // the server's id, as the kept message has it
        function: { name: c.name, arguments: c.arguments ?? {} },
      }));
    }
    out.push(entry);
  }
  return out;
}

function request(call) {
  const body = { model: call.model, messages: messages(call) };
  if (call.tools.length && call.tool_choice !== "none") {
    body.tools = call.tools.map((t) => ({
      type: "function",
      function: { name: t.name, ...(t.description ? { description: t.description } : {}), parameters: t.input_schema },
    }));
  }
  if (call.max_tokens != null) body.options = { num_predict: call.max_tokens };
  if (call.reasoning != null) {
    // `think?: boolean | 'high' | 'medium' | 'low'` (src/interfaces.ts, ChatRequest): off is false, an effort
    // the level as given, on without one true; Ollama has no token budget
    const effort = call.reasoning.effort;
    body.think = !call.reasoning.enabled ? false : effort != null ? effort : true;
  }
  return body;
}

/** A call the package handed over: its arguments object, the server's id when it sent one. */
function toolCall(tc, position) {
  const args = tc.function?.arguments;
  const object = isObject(args);
  const synthetic = typeof tc.id !== "string" || tc.id === "";
  return {
    kind: "tool_call",
    id: synthetic ? `call_${position}` : tc.id,
    name: tc.function?.name ?? "",
    arguments: object ? args : null,
    arguments_raw: JSON.stringify(args ?? null),
    arguments_error: object ? null : "arguments are not an object",
    provider_details: synthetic ? { synthetic_id: true } : {},
  };
}

/** Ollama's counts (`prompt_eval_count`, `eval_count`: src/interfaces.ts, ChatResponse), or null. */
function usage(answer) {
  if (answer.prompt_eval_count == null && answer.eval_count == null) return null;
  return { input_tokens: answer.prompt_eval_count ?? null, output_tokens: answer.eval_count ?? null };
}

function response(answer) {
  const message = answer.message ?? {};
  const parts = [];
  if (message.thinking) parts.push({ kind: "reasoning", text: message.thinking, source: "ollama" });
  if (message.content) parts.push({ kind: "text", text: message.content });
  (message.tool_calls ?? []).forEach((tc, position) => parts.push(toolCall(tc, position)));
  const hasCalls = parts.some((p) => p.kind === "tool_call");
  const out = {
    parts,
    finish_reason: finishReason(DONE, answer.done_reason, hasCalls),
    provider_details: { finish_reason: answer.done_reason ?? null },
  };
  const used = usage(answer);
  if (used !== null) out.usage = used;
  return out;
}

async function* events(chunks) {
  let position = 0;
  for await (const chunk of chunks) {
    const message = chunk.message ?? {};
    if (message.thinking) yield { type: "reasoning_delta", text: message.thinking, source: "ollama" };
    if (message.content) yield { type: "text_delta", text: message.content };
    for (const tc of message.tool_calls ?? []) {
      const call = toolCall(tc, position);
      yield {
        type: "tool_call_start",
        tool_call_id: call.id,
        tool_call_name: call.name,
        index: position,
        provider_details: call.provider_details,
      };
      yield { type: "tool_call_chunk", tool_call_id: call.id, tool_call_arguments_chunk: call.arguments_raw };
      yield {
        type: "tool_call_end",
        tool_call_id: call.id,
        tool_call_arguments_complete: call.arguments_raw,
        arguments: call.arguments,
        arguments_error: call.arguments_error,
      };
      position += 1;
    }
    if (chunk.done) {
      const used = usage(chunk);
      if (used !== null) yield { type: "usage", usage: used };
      yield { type: "finish", reason: finishReason(DONE, chunk.done_reason, position > 0), provider_reason: chunk.done_reason ?? null };
    }
  }
}

async function complete(call, { signal }) {
  const client = new Ollama({ host: call.base_url });
  // the turn's time is up: `abort()` ends this client's streams, as the README's "abort" section shows
  signal.addEventListener("abort", () => client.abort(), { once: true });
  if (call.stream) return events(await client.chat({ ...request(call), stream: true }));
  return response(await client.chat({ ...request(call), stream: false }));
}

function errorInfo(error) {
  // One class for every HTTP error, not exported: its `name` and documented-by-type `status_code` are how a
  // caller tells them apart (src/utils.ts:9-21); it keeps no headers, so no retry-after
  if (error instanceof Error && error.name === "ResponseError" && typeof error.status_code === "number") {
    return { kind: kindForStatus(error.status_code), message: String(error.error ?? error.message), status: error.status_code };
  }
  return null;
}

serve({
  name: "ollama-js",
  version: versionOf("ollama"),
  wires: {
    ollama: [
      "streaming",
      "parallel_tool_calls",
      "tool_choice_auto",
      "tool_choice_none",
      "system_prompt",
      // `thinking` goes back as given, and `think` turns it off or sets a level
      "reasoning_replay",
      "reasoning_effort",
      "reasoning_off",
    ],
  },
  // A client library transports: the tools go out as the caller wrote them (the README promises no mapping),
  // so names and schemas are left to its caller.
  duties: ["transport"],
  request_differences: {
    "$.messages[*].parts[*].is_error":
      "Ollama has no error flag on a tool result: the driver sends the tool's text as it is (the recorded" +
      " request marks it with an `Error: ` prefix, which reads back as the flag)",
  },
  complete,
  errorInfo,
});
