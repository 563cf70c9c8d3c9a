// The Node side of the client protocol, version 1 (docs/protocol.md): the only protocol code a
// driver uses, so that each driver beside this file is the library-specific part only.
//
//   import { serve, versionOf } from "./protocol.mjs";
//   serve({
//     name: "openai-node", version: versionOf("openai"),
//     wires: { openai_chat: ["streaming", "parallel_tool_calls"] },
//     duties: ["transport"],                       // optional: one list, or {wire: [...]}
//     known_gaps: {}, schema_rewrites: {}, request_differences: {},   // optional (docs/clients.md)
//     async complete(call, { signal }) { ... },    // a response object, or an async iterable of events
//     errorInfo(error) { return { kind, message, status, retry_after }; },   // or null: untyped
//   });
//
// The suite names two pipes of the driver's own in CONFORMANCE_PROTOCOL_FDS=R,W: calls are read
// from R, answers written to W, one JSON object per line; stdout and stderr stay the driver's and
// the library's (a console.log can never corrupt the protocol). Each call message is checked
// against the schema named by CONFORMANCE_PROTOCOL_SCHEMA (conformance/clients/protocol.schema.json)
// before the driver sees it. Calls are answered one at a time, in order; end of the call pipe ends
// the process (exit 0).
//
// `complete(call, { signal })` gets the protocol's call object as it is (snake_case fields,
// docs/protocol.md "Values") and an AbortSignal aborted when the turn's `call.timeout` seconds
// have passed (a driver may hand it to its library; the turn is answered `failed` `timeout`
// either way, and whatever the library gives after that is dropped).

import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import readline from "node:readline";
import { fileURLToPath } from "node:url";

/** The protocol version this module speaks (docs/protocol.md: every message carries `"v": 1`). */
export const PROTOCOL_VERSION = 1;
/** The largest message, in bytes of JSON before its newline (docs/protocol.md "Pipes": at most 16 MiB;
 * conformance/clients/protocol.py, MAX_MESSAGE). */
export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

const HERE = path.dirname(fileURLToPath(import.meta.url));
const DEFAULT_TIMEOUT_SECONDS = 30; // conformance/clients/contract.py, Call.timeout's default

/**
 * "pkg 1.2.3" for each package named, joined by ", " (the hello's `version`): read from
 * node_modules/<pkg>/package.json beside this file, so the report names what was installed.
 */
export function versionOf(...packages) {
  return packages
    .map((pkg) => {
      const file = path.join(HERE, "node_modules", ...pkg.split("/"), "package.json");
      try {
        return `${pkg} ${JSON.parse(fs.readFileSync(file, "utf8")).version}`;
      } catch (error) {
        return `${pkg} (version unknown: ${error?.message ?? error})`;
      }
    })
    .join(", ");
}

function note(text) {
  try {
    fs.writeSync(2, `protocol.mjs: ${text}\n`);
  } catch {
    // stderr gone: nothing left to tell
  }
}

// ---------------------------------------------------------------------------------------------
// Writing: every message is one line on W, written synchronously (nothing is lost at exit).

let writeFd = null;

function writeAll(fd, buffer) {
  let offset = 0;
  while (offset < buffer.length) {
    try {
      offset += fs.writeSync(fd, buffer, offset, buffer.length - offset);
    } catch (error) {
      if (error?.code !== "EAGAIN") throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5); // a full non-blocking pipe
    }
  }
}

/** Write `message` (with `v`); false when it could not be encoded or is past the size bound. */
function send(message) {
  let line;
  try {
    line = JSON.stringify({ v: PROTOCOL_VERSION, ...message });
  } catch (error) {
    return `it is not JSON (${error?.message ?? error})`;
  }
  const bytes = Buffer.from(`${line}\n`, "utf8");
  if (bytes.length - 1 > MAX_MESSAGE_BYTES) {
    return `its message is ${bytes.length - 1} bytes, past the protocol's ${MAX_MESSAGE_BYTES} (16 MiB)`;
  }
  try {
    writeAll(writeFd, bytes);
  } catch (error) {
    note(`the suite's pipe closed (${error?.code ?? error}): exiting`);
    process.exit(1);
  }
  return null;
}

/** Write an answer message; when it cannot be written, the turn ends `failed` `invalid` instead. */
function answer(message) {
  const problem = send(message);
  if (problem === null) return true;
  send({ type: "failed", id: message.id, reason: "invalid", message: `the ${message.type} of call ${message.id}: ${problem}` });
  return false;
}

/** Write a `fatal` message (the driver cannot start: docs/protocol.md) and exit 2. */
export function fatal(message) {
  if (writeFd !== null) send({ type: "fatal", message: String(message) });
  note(`fatal: ${message}`);
  process.exit(2);
}

// ---------------------------------------------------------------------------------------------
// The schema check: the subset of JSON Schema that conformance/clients/protocol.schema.json uses.

const TYPES = {
  object: (v) => v !== null && typeof v === "object" && !Array.isArray(v),
  array: (v) => Array.isArray(v),
  string: (v) => typeof v === "string",
  number: (v) => typeof v === "number" && Number.isFinite(v),
  integer: (v) => Number.isInteger(v),
  boolean: (v) => typeof v === "boolean",
  null: (v) => v === null,
};

function show(value) {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

function resolveRef(root, ref) {
  if (!ref.startsWith("#")) throw new Error(`the schema's $ref ${ref} is not local`);
  let node = root;
  for (const raw of ref.slice(1).split("/").filter(Boolean)) {
    const key = decodeURIComponent(raw).replaceAll("~1", "/").replaceAll("~0", "~");
    node = node?.[key];
    if (node === undefined) throw new Error(`the schema's $ref ${ref} names nothing`);
  }
  return node;
}

function sameJson(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Why `value` (at `where`) does not match `schema`, or null when it does. */
export function schemaError(schema, value, root = schema, where = "$") {
  if (schema === true || schema === undefined) return null;
  if (schema === false) return `${where}: not allowed`;
  if (schema.$ref !== undefined) {
    const problem = schemaError(resolveRef(root, schema.$ref), value, root, where);
    if (problem !== null) return problem;
  }
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (!types.some((t) => TYPES[t]?.(value))) return `${where}: ${show(value)} is not of type ${types.join(" or ")}`;
  }
  if (schema.const !== undefined && !sameJson(schema.const, value)) {
    return `${where}: ${show(value)} is not ${show(schema.const)}`;
  }
  if (schema.enum !== undefined && !schema.enum.some((e) => sameJson(e, value))) {
    return `${where}: ${show(value)} is not one of ${schema.enum.map(show).join(", ")}`;
  }
  if (typeof value === "string") {
    const length = [...value].length; // code points, as JSON Schema counts
    if (schema.minLength !== undefined && length < schema.minLength) {
      return `${where}: ${show(value)} is shorter than ${schema.minLength}`;
    }
    if (schema.maxLength !== undefined && length > schema.maxLength) {
      return `${where}: ${show(value)} is longer than ${schema.maxLength}`;
    }
    if (schema.pattern !== undefined && !new RegExp(schema.pattern, "u").test(value)) {
      return `${where}: ${show(value)} does not match ${schema.pattern}`;
    }
  }
  if (typeof value === "number") {
    if (schema.minimum !== undefined && value < schema.minimum) return `${where}: ${value} is below ${schema.minimum}`;
    if (schema.maximum !== undefined && value > schema.maximum) return `${where}: ${value} is above ${schema.maximum}`;
    if (schema.exclusiveMinimum !== undefined && value <= schema.exclusiveMinimum) {
      return `${where}: ${value} is not above ${schema.exclusiveMinimum}`;
    }
    if (schema.exclusiveMaximum !== undefined && value >= schema.exclusiveMaximum) {
      return `${where}: ${value} is not below ${schema.exclusiveMaximum}`;
    }
  }
  if (TYPES.object(value)) {
    for (const key of schema.required ?? []) {
      if (!(key in value)) return `${where}: the field ${show(key)} is missing`;
    }
    const properties = schema.properties ?? {};
    for (const [key, item] of Object.entries(value)) {
      const at = `${where}.${key}`;
      if (key in properties) {
        const problem = schemaError(properties[key], item, root, at);
        if (problem !== null) return problem;
      } else if (schema.additionalProperties === false) {
        return `${where}: unknown field ${show(key)}`;
      } else if (schema.additionalProperties !== undefined) {
        const problem = schemaError(schema.additionalProperties, item, root, at);
        if (problem !== null) return problem;
      }
    }
  }
  if (TYPES.array(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems) {
      return `${where}: ${value.length} items, fewer than ${schema.minItems}`;
    }
    if (schema.maxItems !== undefined && value.length > schema.maxItems) {
      return `${where}: ${value.length} items, more than ${schema.maxItems}`;
    }
    const prefix = schema.prefixItems ?? [];
    for (let i = 0; i < value.length; i++) {
      const itemSchema = i < prefix.length ? prefix[i] : schema.items;
      const problem = schemaError(itemSchema, value[i], root, `${where}[${i}]`);
      if (problem !== null) return problem;
    }
  }
  for (const part of schema.allOf ?? []) {
    const problem = schemaError(part, value, root, where);
    if (problem !== null) return problem;
  }
  for (const [keyword, exactlyOne] of [["oneOf", true], ["anyOf", false]]) {
    const options = schema[keyword];
    if (options === undefined) continue;
    const problems = options.map((option) => schemaError(option, value, root, where));
    const matched = problems.filter((p) => p === null).length;
    if (matched === 0) return closest(options, problems, value, root, where);
    if (exactlyOne && matched > 1) return `${where}: ${show(value)} matches ${matched} of the schema's oneOf, not one`;
  }
  return null;
}

/** The reason worth reading when no option of a union matched: the option of the same kind/type. */
function closest(options, problems, value, root, where) {
  if (TYPES.object(value)) {
    for (const tag of ["type", "kind"]) {
      if (typeof value[tag] !== "string") continue;
      const index = options.findIndex((option) => {
        const target = option.$ref !== undefined ? resolveRef(root, option.$ref) : option;
        const property = target?.properties?.[tag];
        return property?.const === value[tag] || (property?.enum?.length === 1 && property.enum[0] === value[tag]);
      });
      if (index >= 0) return problems[index];
    }
  }
  return `${where}: ${show(value)} matches none of the schema's ${options.length} forms (the first: ${problems[0]})`;
}

function loadSchema() {
  const file = process.env.CONFORMANCE_PROTOCOL_SCHEMA;
  if (!file) {
    note("CONFORMANCE_PROTOCOL_SCHEMA is not set: calls are not checked against the schema");
    return null;
  }
  let text;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (error) {
    note(`the schema ${file} cannot be read (${error?.code ?? error}): calls are not checked against it`);
    return null;
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    fatal(`the schema ${file} is not JSON: ${error?.message ?? error}`);
  }
}

// ---------------------------------------------------------------------------------------------
// Answering a call.

class TurnTimeout extends Error {}

/** `promise`, or a TurnTimeout rejection once `deadline` (ms since the epoch) has passed. */
function beforeDeadline(promise, deadline) {
  let timer;
  const late = new Promise((_, reject) => {
    // setTimeout takes at most 2^31 - 1 ms (past it, it fires at once): a longer turn waits that long
    timer = setTimeout(() => reject(new TurnTimeout()), Math.min(2 ** 31 - 1, Math.max(0, deadline - Date.now())));
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

function errorMessage(client, id, error) {
  const exception = {
    name: error?.constructor?.name ?? typeof error,
    message: String(error?.message ?? error),
  };
  const message = { type: "error", id, exception, error: null };
  if (typeof client.errorInfo === "function") {
    try {
      message.error = client.errorInfo(error) ?? null;
    } catch (mappingError) {
      message.error = null;
      message.mapping_failed = `errorInfo threw ${mappingError?.constructor?.name ?? typeof mappingError}: ${String(mappingError?.message ?? mappingError)}`;
    }
  }
  return message;
}

async function runTurn(client, id, call) {
  const seconds = typeof call.timeout === "number" ? call.timeout : DEFAULT_TIMEOUT_SECONDS;
  const deadline = Date.now() + seconds * 1000;
  const controller = new AbortController();
  const timedOut = () => {
    controller.abort(new TurnTimeout(`the turn took longer than its ${seconds} s`));
    send({ type: "failed", id, reason: "timeout", message: `the library gave no answer within the turn's ${seconds} s` });
  };
  let result;
  try {
    result = await beforeDeadline(Promise.resolve().then(() => client.complete(call, { signal: controller.signal })), deadline);
  } catch (error) {
    if (error instanceof TurnTimeout) return timedOut();
    return answer(errorMessage(client, id, error));
  }
  if (result !== null && typeof result === "object" && typeof result[Symbol.asyncIterator] === "function") {
    const iterator = result[Symbol.asyncIterator]();
    const stop = () => {
      Promise.resolve()
        .then(() => iterator.return?.())
        .catch(() => {});
    };
    for (;;) {
      let step;
      try {
        step = await beforeDeadline(Promise.resolve().then(() => iterator.next()), deadline);
      } catch (error) {
        if (error instanceof TurnTimeout) {
          stop();
          return timedOut();
        }
        return answer(errorMessage(client, id, error)); // the events written stay the stream's start
      }
      if (step.done) return answer({ type: "end", id });
      if (!answer({ type: "event", id, event: step.value })) return stop();
    }
  }
  if (result !== null && typeof result === "object" && !Array.isArray(result)) {
    return answer({ type: "response", id, response: result });
  }
  const what = Array.isArray(result) ? "an array" : result === null ? "null" : typeof result;
  return answer({
    type: "failed",
    id,
    reason: "invalid",
    message: `complete() gave ${what}: neither a response object nor an async iterable of events`,
  });
}

// ---------------------------------------------------------------------------------------------
// The loop.

function protocolFds() {
  const spec = process.env.CONFORMANCE_PROTOCOL_FDS ?? "";
  const match = /^(\d+),(\d+)$/.exec(spec.trim());
  if (match === null) {
    note(
      `CONFORMANCE_PROTOCOL_FDS is ${spec ? JSON.stringify(spec) : "not set"}: this driver is started by the suite ` +
        '(conformance certify --command "node DRIVER.mjs"), which names its two pipes there as R,W (docs/protocol.md)',
    );
    process.exit(2);
  }
  return [Number(match[1]), Number(match[2])];
}

/**
 * The suite's calls: a socket over the pipe, not fs.createReadStream, whose blocking read in the
 * threadpool keeps process.exit waiting for it forever (a driver could not exit on a fatal message).
 * A file (a driver run by hand, `3<calls.jsonl`) is read as a file: it ends.
 */
function callStream(fd) {
  try {
    return new net.Socket({ fd, readable: true, writable: false });
  } catch {
    return fs.createReadStream(null, { fd, autoClose: true });
  }
}

/** What is missing from the client given to serve(), or null (a driver's mistake, said at once). */
function clientProblem(client) {
  if (client === null || typeof client !== "object") return `serve() needs the client object, not ${show(client)}`;
  if (typeof client.name !== "string" || client.name === "") return "the client has no name (a string)";
  if (client.wires === null || typeof client.wires !== "object") return "the client has no wires ({wire: [capabilities]})";
  if (typeof client.complete !== "function") return "the client has no complete(call) function";
  return null;
}

/** The hello (docs/protocol.md "hello"): `name` and `wires` always, the optional fields when given. */
function hello(client) {
  const message = { type: "hello", name: client.name, runtime: `node ${process.version}`, wires: client.wires };
  for (const key of ["version", "duties", "known_gaps", "schema_rewrites", "request_differences"]) {
    if (client[key] !== undefined) message[key] = client[key];
  }
  return message;
}

/** Check one line from the suite: the call message, or a `fatal` and exit 2. */
function parseCall(line, schema) {
  let message;
  try {
    message = JSON.parse(line);
  } catch (error) {
    fatal(`the suite wrote a line that is not JSON (${error?.message ?? error}): ${show(line)}`);
  }
  if (!TYPES.object(message)) fatal(`the suite wrote ${show(message)}, not a message object`);
  if (message.v !== PROTOCOL_VERSION) {
    fatal(`the suite speaks protocol version ${show(message.v)}; this driver (protocol.mjs) speaks ${PROTOCOL_VERSION}`);
  }
  if (message.type !== "call") fatal(`the suite wrote a ${show(message.type)} message; a driver reads calls only`);
  if (schema !== null) {
    const problem = schemaError(schema, message);
    if (problem !== null) fatal(`the suite's call does not match the protocol schema: ${problem}`);
  }
  return message;
}

/**
 * Speak the protocol for `client` until the suite closes the call pipe: the hello, then one answer
 * per call, then exit 0.
 */
export async function serve(client) {
  const [readFd, fd] = protocolFds();
  writeFd = fd;
  const schema = loadSchema();
  const wrong = clientProblem(client);
  if (wrong !== null) fatal(wrong);
  const problem = send(hello(client));
  if (problem !== null) fatal(`the hello cannot be written: ${problem}`);
  const input = callStream(readFd);
  input.on("error", (error) => fatal(`the suite's call pipe failed: ${error?.message ?? error}`));
  const lines = readline.createInterface({ input, crlfDelay: Infinity });
  for await (const line of lines) {
    if (line.trim() === "") continue;
    const message = parseCall(line, schema);
    try {
      await runTurn(client, message.id, message.call);
    } catch (error) {
      note(`the shared module failed on call ${message.id}: ${error?.stack ?? error}`);
      send({ type: "failed", id: message.id, reason: "crashed", message: `protocol.mjs: ${error?.message ?? error}` });
    }
  }
  process.exit(0); // end of the call pipe: whatever the library still holds open ends with us
}
