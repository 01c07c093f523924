/**
 * The fuzz suite's frames: a corpus of valid client→server and
 * server→client frames, seeded mutations of them (fast-check arbitraries),
 * and the oracle that says, per JSON-RPC 2.0 and MCP (2025-11-25 sessions,
 * where batches are gone), what a peer must answer to one frame. The oracle
 * works on the bytes that were sent, independently of the code under test.
 */
import * as fc from "fast-check"

/** Runs per property: fixed in CI, more with `FUZZ_RUNS=10000`. */
export const numRuns = (fallback: number): number => {
  const fromEnv = Number(process.env.FUZZ_RUNS)
  return Number.isInteger(fromEnv) && fromEnv > 0 ? fromEnv : fallback
}

/** The seed of every property: `FUZZ_SEED` or 42. */
export const seed: number = Number.isInteger(Number(process.env.FUZZ_SEED)) && process.env.FUZZ_SEED !== undefined
  ? Number(process.env.FUZZ_SEED)
  : 42

const modernMeta = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "fuzz", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": {}
}

/** Valid client→server frames (ids are replaced per run). */
export const clientCorpus: ReadonlyArray<Record<string, unknown>> = [
  {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "fuzz", version: "1" } }
  },
  { jsonrpc: "2.0", id: 1, method: "ping" },
  { jsonrpc: "2.0", id: 1, method: "ping", params: { _meta: { progressToken: "p" } } },
  { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} },
  { jsonrpc: "2.0", id: 1, method: "tools/list", params: { cursor: "abc" } },
  { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "weather", arguments: { city: "Paris" } } },
  {
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: { name: "weather", arguments: { city: "Oslo" }, _meta: { progressToken: 7 } }
  },
  { jsonrpc: "2.0", id: 1, method: "resources/list" },
  { jsonrpc: "2.0", id: 1, method: "resources/templates/list" },
  { jsonrpc: "2.0", id: 1, method: "resources/read", params: { uri: "notes://readme" } },
  { jsonrpc: "2.0", id: 1, method: "resources/read", params: { uri: "notes://launch?page=2" } },
  { jsonrpc: "2.0", id: 1, method: "prompts/list" },
  {
    jsonrpc: "2.0",
    id: 1,
    method: "prompts/get",
    params: { name: "explain", arguments: { topic: "tides", level: "expert" } }
  },
  {
    jsonrpc: "2.0",
    id: 1,
    method: "completion/complete",
    params: { ref: { type: "ref/prompt", name: "explain" }, argument: { name: "level", value: "b" } }
  },
  {
    jsonrpc: "2.0",
    id: 1,
    method: "completion/complete",
    params: { ref: { type: "ref/resource", uri: "notes://{topic}{?page}" }, argument: { name: "topic", value: "la" } }
  },
  { jsonrpc: "2.0", id: 1, method: "logging/setLevel", params: { level: "error" } },
  { jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: modernMeta } },
  {
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: { name: "weather", arguments: { city: "Rome" }, _meta: modernMeta }
  },
  { jsonrpc: "2.0", id: 1, method: "server/discover", params: { _meta: modernMeta } },
  { jsonrpc: "2.0", method: "notifications/initialized" },
  { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 999_999, reason: "fuzz" } },
  { jsonrpc: "2.0", method: "notifications/roots/list_changed" },
  { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: "none", progress: 1 } },
  { jsonrpc: "2.0", id: 999_998, result: {} },
  { jsonrpc: "2.0", id: 999_997, error: { code: -32603, message: "nope" } }
]

/** Valid server→client frames (ids are replaced per run; strings, never the client's own integer ids). */
export const serverCorpus: ReadonlyArray<Record<string, unknown>> = [
  { jsonrpc: "2.0", id: "s", method: "ping" },
  { jsonrpc: "2.0", id: "s", method: "roots/list" },
  {
    jsonrpc: "2.0",
    id: "s",
    method: "sampling/createMessage",
    params: { messages: [{ role: "user", content: { type: "text", text: "hi" } }], maxTokens: 5 }
  },
  {
    jsonrpc: "2.0",
    id: "s",
    method: "elicitation/create",
    params: { message: "name?", requestedSchema: { type: "object", properties: { name: { type: "string" } } } }
  },
  { jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "hello" } },
  { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: "none", progress: 1, total: 2 } },
  { jsonrpc: "2.0", method: "notifications/tools/list_changed" },
  { jsonrpc: "2.0", method: "notifications/resources/updated", params: { uri: "notes://readme" } },
  { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "nothing" } },
  { jsonrpc: "2.0", id: "unknown-response", result: { tools: [] } },
  { jsonrpc: "2.0", id: "unknown-error", error: { code: -32601, message: "no" } }
]

// ---------------------------------------------------------------------------
// mutations

/** A frame to send: its bytes (one line, no LF) and how it was made. */
export interface Frame {
  readonly bytes: Uint8Array
  readonly how: string
}

/** A JSON value. */
export type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }
type Mutable = Record<string, unknown>

const clone = <A>(value: A): A => JSON.parse(JSON.stringify(value))

/** Every path of an object (objects and arrays), at most `depth` deep. */
const pathsOf = (value: unknown, depth = 4, prefix: ReadonlyArray<string> = []): Array<ReadonlyArray<string>> => {
  if (depth === 0 || value === null || typeof value !== "object") return []
  return Object.keys(value).flatMap((key) => {
    const path = [...prefix, key]
    return [path, ...pathsOf((value as Mutable)[key], depth - 1, path)]
  })
}

const setPath = (root: Mutable, path: ReadonlyArray<string>, update: (parent: Mutable, key: string) => void) => {
  let parent: Mutable = root
  for (const key of path.slice(0, -1)) parent = parent[key] as Mutable
  update(parent, path[path.length - 1]!)
}

/** A value of any JSON type, small. */
const anyJson: fc.Arbitrary<Json> = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.string({ maxLength: 12 }),
  fc.constant([]),
  fc.constant({}),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 4 }), fc.integer(), { maxKeys: 2 })
)

/** Ids a peer does not expect (bounded; never an integer of the client's own counter). */
export const oddId: fc.Arbitrary<Json> = fc.oneof(
  fc.constant(null),
  fc.constant(1.5),
  fc.constant(-1),
  fc.constant(Number.MAX_SAFE_INTEGER),
  fc.constant(""),
  fc.constant({}),
  fc.constant({ id: 1 }),
  fc.constant([1]),
  fc.constant(true),
  fc.integer({ min: 1, max: 2000 }).map((n) => "x".repeat(n * 50)),
  fc.string({ unit: "binary", maxLength: 20 })
)

/** A structural mutation of a frame object (its JSON text, which may hold duplicate keys). */
const structural = (base: Mutable): fc.Arbitrary<{ text: string; how: string }> => {
  const paths = pathsOf(base)
  const top = Object.keys(base)
  const text = (value: unknown, how: string) => ({ text: JSON.stringify(value), how })
  const pick = <A>(items: ReadonlyArray<A>) => fc.constantFrom(...items)
  const options: Array<fc.Arbitrary<{ text: string; how: string }>> = [
    pick(paths).map((path) => {
      const frame = clone(base)
      setPath(frame, path, (parent, key) => {
        if (Array.isArray(parent)) parent.splice(Number(key), 1)
        else delete parent[key]
      })
      return text(frame, `drop ${path.join(".")}`)
    }),
    fc.tuple(pick(paths), anyJson).map(([path, value]) => {
      const frame = clone(base)
      setPath(frame, path, (parent, key) => (parent[key] = value))
      return text(frame, `retype ${path.join(".")} = ${JSON.stringify(value)?.slice(0, 40)}`)
    }),
    fc.tuple(pick(top), anyJson).map(([key, value]) => {
      // a duplicate key: JSON.parse keeps the last one
      const body = JSON.stringify(base)
      return {
        text: `{${JSON.stringify(key)}:${JSON.stringify(value)},${body.slice(1)}`,
        how: `duplicate ${key} first`
      }
    }),
    fc.tuple(pick(top), anyJson).map(([key, value]) => {
      const body = JSON.stringify(base)
      return {
        text: `${body.slice(0, -1)},${JSON.stringify(key)}:${JSON.stringify(value)}}`,
        how: `duplicate ${key} last`
      }
    }),
    fc.constantFrom<Json>("1.0", "2", 2, 2.0, null, "", "2.0 ", ["2.0"]).map((jsonrpc) =>
      text({ ...base, jsonrpc }, `jsonrpc ${JSON.stringify(jsonrpc)}`)
    ),
    fc.constant(null).map(() => {
      const { jsonrpc: _, ...rest } = base
      return text(rest, "no jsonrpc")
    }),
    oddId.map((id) => text({ ...base, id }, `id ${JSON.stringify(id).slice(0, 30)}`)),
    fc.constantFrom<[string, Json]>(["result", {}], ["error", { code: 1, message: "x" }], ["method", "ping"]).map(
      ([key, value]) => text({ ...base, [key]: value }, `add ${key}`)
    ),
    fc.oneof(
      fc.constantFrom(
        "tools/call ",
        "Tools/List",
        "",
        "tools",
        "rpc.discover",
        "$/cancel",
        "notifications/initialized",
        "__proto__",
        "constructor",
        "valueOf",
        "hasOwnProperty",
        "toString"
      ),
      fc.string({ maxLength: 16 })
    ).map((method) => text({ ...base, method }, `method ${JSON.stringify(method)}`)),
    fc.tuple(pick<ReadonlyArray<string>>([[], ...paths]), pick(["__proto__", "constructor", "prototype"])).map(
      ([path, key]) => {
        // own `__proto__` keys only exist in parsed JSON: build the text by hand
        const frame = clone(base)
        const where = path.join(".")
        const target = path.reduce<unknown>((at, k) => (at as Mutable)?.[k], frame)
        const inject = `{${JSON.stringify(key)}:{"polluted":true,"toString":1},`
        const json = JSON.stringify(frame)
        if (target === null || typeof target !== "object" || Array.isArray(target)) {
          return { text: `${inject}${json.slice(1)}`, how: `${key} at top` }
        }
        const marker = "\u0000marker\u0000"
        ;(target as Mutable)[marker] = 0
        const marked = JSON.stringify(frame)
        return {
          text: marked.replace(`${JSON.stringify(marker)}:0`, `${JSON.stringify(key)}:{"polluted":true}`),
          how: `${key} at ${where}`
        }
      }
    ),
    fc.tuple(pick(paths), fc.integer({ min: 1_000, max: 200_000 })).map(([path, length]) => {
      const frame = clone(base)
      setPath(frame, path, (parent, key) => (parent[key] = "é".repeat(length)))
      return text(frame, `long string ${length} at ${path.join(".")}`)
    }),
    fc.tuple(fc.constantFrom("params", "id", "method"), fc.integer({ min: 10, max: 3_000 }), fc.boolean()).map(
      ([key, depth, arrays]) => {
        const nested = arrays
          ? `${"[".repeat(depth)}${"]".repeat(depth)}`
          : `${"{\"a\":".repeat(depth)}1${"}".repeat(depth)}`
        const body = JSON.stringify({ ...base, [key]: 0 })
        return {
          text: body.replace(`${JSON.stringify(key)}:0`, `${JSON.stringify(key)}:${nested}`),
          how: `nesting ${depth} at ${key}`
        }
      }
    )
  ]
  return fc.oneof(...options)
}

const encoder = new TextEncoder()

/** Byte-level damage to a frame's text: truncation, insertions (bad UTF-8, NUL, control chars), deletions. */
const bytewise = (text: string): fc.Arbitrary<Frame> => {
  const bytes = encoder.encode(text)
  return fc.oneof(
    fc.integer({ min: 1, max: Math.max(1, bytes.length - 1) }).map((at) => ({
      bytes: bytes.slice(0, at),
      how: `truncate at ${at}`
    })),
    fc.tuple(
      fc.integer({ min: 0, max: bytes.length }),
      fc.array(
        fc.oneof(
          fc.constantFrom(0x00, 0x80, 0xc0, 0xc3, 0xe2, 0xed, 0xf0, 0xf8, 0xfe, 0xff, 0x7f),
          fc.integer({ min: 0x01, max: 0x1f }).filter((byte) => byte !== 0x0a)
        ),
        { minLength: 1, maxLength: 4 }
      )
    ).map(([at, inserted]) => ({
      bytes: new Uint8Array([...bytes.slice(0, at), ...inserted, ...bytes.slice(at)]),
      how: `insert ${inserted.map((b) => b.toString(16)).join(" ")} at ${at}`
    })),
    fc.integer({ min: 0, max: bytes.length - 1 }).map((at) => ({
      bytes: new Uint8Array([...bytes.slice(0, at), ...bytes.slice(at + 1)]),
      how: `delete byte ${at}`
    }))
  )
}

/** A frame object with a fresh id (requests and responses keep an id, notifications have none). */
const withId = (frame: Mutable, id: Json): Mutable => ("id" in frame ? { ...frame, id } : frame)

/**
 * Mutated frames from a corpus. `nextId` gives each run's frame an id of its
 * own (before mutation), so answers cannot be confused across runs.
 */
export const mutatedFrame = (corpus: ReadonlyArray<Mutable>, nextId: () => Json): fc.Arbitrary<Frame> => {
  const base = fc.constantFrom(...corpus).map((frame) => withId(frame, nextId()))
  const single: fc.Arbitrary<{ text: string; how: string }> = base.chain((frame) =>
    fc.oneof(
      {
        weight: 1,
        arbitrary: fc.constant({ text: JSON.stringify(frame), how: `valid ${frame.method ?? "response"}` })
      },
      {
        weight: 6,
        arbitrary: structural(frame).map(({ how, text }) => ({ text, how: `${frame.method ?? "response"}: ${how}` }))
      }
    )
  )
  const batch = fc.array(
    fc.oneof(
      single.map(({ text }) => text),
      base.map((frame) => JSON.stringify(frame)),
      fc.constantFrom("1", "null", "\"x\"", "{}", "[]")
    ),
    { maxLength: 4 }
  ).map((items) => ({ text: `[${items.join(",")}]`, how: `batch of ${items.length}` }))
  const text = fc.oneof({ weight: 8, arbitrary: single }, { weight: 1, arbitrary: batch })
  return fc.oneof(
    { weight: 3, arbitrary: text.map(({ how, text }) => ({ bytes: encoder.encode(text), how })) },
    {
      weight: 1,
      arbitrary: text.chain(({ how, text }) =>
        bytewise(text).map((frame) => ({ bytes: frame.bytes, how: `${how}; ${frame.how}` }))
      )
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        "5",
        "\"ping\"",
        "null",
        "true",
        "{}",
        "[]",
        "[[]]",
        "{\"jsonrpc\":\"2.0\"}",
        "\u00a0{}"
      ).map((text) => ({
        bytes: encoder.encode(text),
        how: `literal ${text}`
      }))
    }
  )
}

// ---------------------------------------------------------------------------
// the oracle

/** What a peer must answer to one frame. */
export type Expected =
  /** Nothing (a notification, or a response to us). */
  | { readonly _tag: "None"; readonly why: string }
  /**
   * Nothing, or an Invalid Request with one of these ids (a malformed
   * response: JSON-RPC only says how to answer invalid requests).
   */
  | { readonly _tag: "NoneOrInvalid"; readonly ids: ReadonlyArray<Json>; readonly why: string }
  /** One error response with one of these codes and one of these ids. */
  | {
    readonly _tag: "Error"
    readonly codes: ReadonlyArray<number>
    readonly ids: ReadonlyArray<Json>
    readonly why: string
  }
  /** One response (result, or an error whose code is not one of `notCodes`) with this id. */
  | { readonly _tag: "Response"; readonly id: Json; readonly notCodes: ReadonlyArray<number>; readonly why: string }
  /**
   * A response with this id, or an Invalid Request with `id: null` (a
   * fractional or unsafe-integer number id: MCP's `RequestId` is
   * `string | number`, JSON-RPC says it SHOULD NOT be fractional).
   */
  | { readonly _tag: "ResponseOrInvalid"; readonly id: Json; readonly why: string }
  /** Any of these (a request id used before in the session: MCP forbids reusing one). */
  | { readonly _tag: "AnyOf"; readonly options: ReadonlyArray<Expected>; readonly why: string }

const isObject = (value: unknown): value is Mutable =>
  typeof value === "object" && value !== null && !Array.isArray(value)
const own = (value: Mutable, key: string) => Object.prototype.hasOwnProperty.call(value, key)
const isValidId = (id: unknown) => typeof id === "string" || (typeof id === "number" && Number.isSafeInteger(id))
const isString = (value: unknown) => typeof value === "string"
const optional = (value: Mutable, key: string, check: (value: unknown) => boolean) =>
  !own(value, key) || check(value[key])
const stringRecord = (value: unknown) => isObject(value) && Object.values(value).every(isString)

/** The MCP methods a client sends, and whether params are valid (shape only). */
const clientMethods: Record<string, (params: Mutable) => boolean> = {
  ping: () => true,
  initialize: (p) =>
    isString(p.protocolVersion) && isObject(p.capabilities) && isObject(p.clientInfo) && isString(p.clientInfo.name) &&
    isString(p.clientInfo.version),
  "tools/list": (p) => optional(p, "cursor", isString),
  "resources/list": (p) => optional(p, "cursor", isString),
  "resources/templates/list": (p) => optional(p, "cursor", isString),
  "prompts/list": (p) => optional(p, "cursor", isString),
  "tools/call": (p) => isString(p.name) && optional(p, "arguments", isObject),
  "resources/read": (p) => isString(p.uri),
  "resources/subscribe": (p) => isString(p.uri),
  "resources/unsubscribe": (p) => isString(p.uri),
  "prompts/get": (p) => isString(p.name) && optional(p, "arguments", stringRecord),
  "completion/complete": (p) =>
    isObject(p.ref) &&
    ((p.ref.type === "ref/prompt" && isString(p.ref.name)) || (p.ref.type === "ref/resource" && isString(p.ref.uri))) &&
    isObject(p.argument) && isString(p.argument.name) && isString(p.argument.value) &&
    optional(p, "context", (c) => isObject(c) && optional(c, "arguments", stringRecord)),
  "logging/setLevel": (p) =>
    ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"].includes(p.level as string),
  // 2026-07-28; a legacy session may not know it (-32601 is then allowed)
  "server/discover": () => true
}

/** The MCP methods a server sends to a client. */
const serverMethods: Record<string, (params: Mutable) => boolean> = {
  ping: () => true,
  "roots/list": () => true,
  "sampling/createMessage": (p) => Array.isArray(p.messages) && typeof p.maxTokens === "number",
  "elicitation/create": (p) => isString(p.message)
}

/** Methods a peer may not implement (capabilities it does not declare): -32601 allowed. */
const optionalMethods = new Set(["server/discover", "roots/list", "sampling/createMessage", "elicitation/create"])

/** The methods 2026-07-28 removed: a modern request for one is an unknown method. */
const removedIn2026 = new Set([
  "initialize",
  "ping",
  "logging/setLevel",
  "resources/subscribe",
  "resources/unsubscribe"
])

const isModern = (params: unknown) =>
  isObject(params) && isObject(params._meta) && own(params._meta, "io.modelcontextprotocol/protocolVersion")

/** Whether the bytes are UTF-8 and then JSON. */
const parse = (
  bytes: Uint8Array
): { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly why: string } => {
  let text: string
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes)
  } catch {
    return { ok: false, why: "not UTF-8" }
  }
  try {
    return { ok: true, value: JSON.parse(text) }
  } catch {
    return { ok: false, why: "not JSON" }
  }
}

const INVALID = -32600
const PARSE = -32700
const NOT_FOUND = -32601
const PARAMS = -32602
/** 2026-07-28: a `_meta` protocol version the server does not serve. */
const UNSUPPORTED_VERSION = -32022

/** The answer one message (not a batch) calls for. */
const expectOne = (
  message: unknown,
  methods: Record<string, (params: Mutable) => boolean>,
  used?: Set<Json>
): Expected => {
  const expected = expectFresh(message, methods)
  if (
    used === undefined || !isObject(message) || !own(message, "method") || !own(message, "id") || !isValidId(message.id)
  ) {
    return expected
  }
  const id = message.id as Json
  if (!used.has(id)) {
    used.add(id)
    return expected
  }
  const reused: Expected = {
    _tag: "Error",
    codes: [INVALID],
    ids: [id, null],
    why: `id ${JSON.stringify(id).slice(0, 20)} reused`
  }
  return { _tag: "AnyOf", options: [expected, reused], why: `${expected.why}, id reused` }
}

const expectFresh = (message: unknown, methods: Record<string, (params: Mutable) => boolean>): Expected => {
  if (!isObject(message)) return { _tag: "Error", codes: [INVALID], ids: [null], why: "not an object" }
  const hasId = own(message, "id")
  const id = message.id as Json
  // an invalid message's answer carries its id when the id could be read, else null
  const readable = isString(id) || (typeof id === "number" && Number.isFinite(id))
  const replyIds: ReadonlyArray<Json> = hasId && readable ? [id, null] : [null]
  const invalid = (why: string): Expected => ({ _tag: "Error", codes: [INVALID], ids: replyIds, why })
  const hasMethod = own(message, "method")
  const hasResult = own(message, "result")
  const hasError = own(message, "error")
  if (hasMethod && (hasResult || hasError)) return invalid("both a request and a response")
  if (!hasMethod) {
    if (!hasResult && !hasError) return invalid("neither a request nor a response")
    const wellFormed = message.jsonrpc === "2.0" && hasId && isValidId(id) && !(hasResult && hasError) &&
      (!hasError ||
        (isObject(message.error) && Number.isInteger(message.error.code) && isString(message.error.message)))
    return wellFormed
      ? { _tag: "None", why: "a response" }
      : { _tag: "NoneOrInvalid", ids: replyIds, why: "a malformed response" }
  }
  if (message.jsonrpc !== "2.0") return invalid("jsonrpc is not \"2.0\"")
  if (!isString(message.method)) return invalid("method is not a string")
  const params = message.params
  if (own(message, "params") && (typeof params !== "object" || params === null)) return invalid("params not structured")
  if (!hasId) return { _tag: "None", why: "a notification" }
  if (typeof id === "number" && !Number.isSafeInteger(id)) {
    return { _tag: "ResponseOrInvalid", id, why: Number.isInteger(id) ? "an id beyond 2^53" : "a fractional id" }
  }
  if (!isValidId(id)) {
    return { _tag: "Error", codes: [INVALID], ids: [null], why: `id ${JSON.stringify(id)?.slice(0, 20)} is invalid` }
  }
  const method = message.method as string
  const check = Object.hasOwn(methods, method) ? methods[method] : undefined
  if (check === undefined) {
    // a 2026-07-28 request is admitted (its `_meta` checked: -32602, -32022) before its method is looked up, or after
    const codes = isModern(params) ? [NOT_FOUND, PARAMS, UNSUPPORTED_VERSION] : [NOT_FOUND]
    return { _tag: "Error", codes, ids: [id], why: `unknown method ${method.slice(0, 30)}` }
  }
  const maybeMissing = optionalMethods.has(method) ? [NOT_FOUND] : []
  const paramsObject = own(message, "params") ? params : {}
  if (!isObject(paramsObject)) {
    // `initialize` in an initialized session: "already initialized" (-32600) may come first
    const codes = method === "initialize" ? [PARAMS, INVALID] : [PARAMS, ...maybeMissing]
    return { _tag: "Error", codes, ids: [id], why: `${method}: params not an object` }
  }
  if (own(paramsObject, "_meta") && !isObject(paramsObject._meta)) {
    return { _tag: "Error", codes: [PARAMS, ...maybeMissing], ids: [id], why: `${method}: _meta not an object` }
  }
  if (isModern(paramsObject) && removedIn2026.has(method)) {
    return { _tag: "Error", codes: [NOT_FOUND], ids: [id], why: `${method} (removed in 2026-07-28)` }
  }
  if (isModern(paramsObject) || method === "server/discover") {
    // 2026-07-28 requests: their own version/capability checks (-32602, -32022) apply
    return {
      _tag: "Response",
      id,
      notCodes: [PARSE, INVALID, ...(maybeMissing.length ? [] : [NOT_FOUND])],
      why: `${method} (2026-07-28)`
    }
  }
  if (method === "initialize") {
    // the session is initialized already: an error is due, params or not
    return { _tag: "Response", id, notCodes: [PARSE, NOT_FOUND], why: "initialize again" }
  }
  if (!check(paramsObject)) {
    return { _tag: "Error", codes: [PARAMS, ...maybeMissing], ids: [id], why: `${method}: bad params` }
  }
  return { _tag: "Response", id, notCodes: [PARSE, INVALID, ...(maybeMissing.length ? [] : [NOT_FOUND])], why: method }
}

/** Whether the bytes are valid UTF-8. */
export const isUtf8 = (bytes: Uint8Array): boolean => {
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(bytes)
    return true
  } catch {
    return false
  }
}

/** Whether a frame is a 2026-07-28 request (`_meta` names its version, or `server/discover`). */
export const isModernFrame = (bytes: Uint8Array): boolean => {
  const parsed = parse(bytes)
  return parsed.ok && isObject(parsed.value) &&
    (isModern(parsed.value.params) || parsed.value.method === "server/discover")
}

const headerSafe = (value: unknown): value is string => typeof value === "string" && /^[\x21-\x7e]+$/.test(value)

/**
 * The standard headers a 2026-07-28 client sends with this frame
 * (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` from the body), and
 * whether all could be sent as plain ASCII (when not, `-32020` is due).
 */
export const modernHeaders = (
  bytes: Uint8Array
): { readonly headers: Record<string, string>; readonly complete: boolean } => {
  const parsed = parse(bytes)
  const message = parsed.ok && isObject(parsed.value) ? parsed.value : {}
  const params = isObject(message.params) ? message.params : {}
  const version = isObject(params._meta) ? params._meta["io.modelcontextprotocol/protocolVersion"] : undefined
  const name = message.method === "tools/call" || message.method === "prompts/get"
    ? params.name
    : message.method === "resources/read"
    ? params.uri
    : null
  const headers: Record<string, string> = { "mcp-protocol-version": headerSafe(version) ? version : "2026-07-28" }
  if (headerSafe(message.method)) headers["mcp-method"] = message.method
  if (headerSafe(name)) headers["mcp-name"] = name
  const complete = (version === undefined || headerSafe(version)) && headerSafe(message.method) &&
    (name === null || headerSafe(name))
  return { headers, complete }
}

/** The answer a frame calls for, from a peer in a 2025-11-25 session (no batches). */
export const expectedAnswer = (bytes: Uint8Array, side: "server" | "client" = "server", used?: Set<Json>): Expected => {
  const parsed = parse(bytes)
  if (!parsed.ok) return { _tag: "Error", codes: [PARSE], ids: [null], why: parsed.why }
  if (Array.isArray(parsed.value)) {
    return {
      _tag: "Error",
      codes: [INVALID],
      ids: [null],
      why: parsed.value.length === 0 ? "empty batch" : "a batch (2025-11-25 has none)"
    }
  }
  return expectOne(parsed.value, side === "server" ? clientMethods : serverMethods, used)
}

/** A message a peer wrote, parsed. */
export interface Answer {
  readonly jsonrpc?: unknown
  readonly id?: unknown
  readonly method?: unknown
  readonly result?: unknown
  readonly error?: { readonly code?: unknown; readonly message?: unknown }
}

/** Whether a parsed message is a JSON-RPC 2.0 message at all. */
export const isJsonRpc = (message: unknown): message is Answer => {
  if (!isObject(message) || message.jsonrpc !== "2.0") return false
  if (own(message, "method")) return isString(message.method) && !own(message, "result") && !own(message, "error")
  if (!own(message, "id")) return false
  if (own(message, "result") === own(message, "error")) return false
  return !own(message, "error") ||
    (isObject(message.error) && Number.isInteger(message.error.code) && isString(message.error.message))
}

/**
 * Whether the responses a peer sent (responses only: its own requests and
 * notifications are filtered out before) satisfy `expected`; `undefined` when
 * they do, else why not.
 */
export const judge = (expected: Expected, responses: ReadonlyArray<Answer>): string | undefined => {
  const show = () => JSON.stringify(responses).slice(0, 300)
  switch (expected._tag) {
    case "None":
      return responses.length === 0 ? undefined : `expected no answer (${expected.why}), got ${show()}`
    case "NoneOrInvalid":
      if (responses.length === 0) return undefined
      return responses.length === 1 && responses[0]!.error?.code === INVALID &&
          expected.ids.includes(responses[0]!.id as Json)
        ? undefined
        : `expected nothing or -32600 id ${JSON.stringify(expected.ids)} (${expected.why}), got ${show()}`
    case "Error": {
      if (responses.length !== 1) {
        return `expected one error ${expected.codes} (${expected.why}), got ${responses.length}: ${show()}`
      }
      const [answer] = responses
      const ok = answer!.error !== undefined && expected.codes.includes(answer!.error.code as number) &&
        expected.ids.some((id) => id === answer!.id)
      return ok
        ? undefined
        : `expected error ${expected.codes} id ${JSON.stringify(expected.ids)} (${expected.why}), got ${show()}`
    }
    case "Response": {
      if (responses.length !== 1) {
        return `expected one response id ${
          JSON.stringify(expected.id)
        } (${expected.why}), got ${responses.length}: ${show()}`
      }
      const [answer] = responses
      if (answer!.id !== expected.id) {
        return `expected id ${JSON.stringify(expected.id)} (${expected.why}), got ${show()}`
      }
      if (answer!.error !== undefined && expected.notCodes.includes(answer!.error.code as number)) {
        return `expected a result or an error other than ${expected.notCodes} (${expected.why}), got ${show()}`
      }
      return undefined
    }
    case "AnyOf": {
      const problems = expected.options.map((option) => judge(option, responses))
      return problems.includes(undefined) ? undefined : problems.join("; or ")
    }
    case "ResponseOrInvalid": {
      if (responses.length !== 1) return `expected one answer (${expected.why}), got ${responses.length}: ${show()}`
      const [answer] = responses
      return answer!.id === expected.id || (answer!.id === null && answer!.error?.code === INVALID)
        ? undefined
        : `expected id ${expected.id} or -32600/null (${expected.why}), got ${show()}`
    }
  }
}

/** The ids an answer to `expected` may carry (to wait for it). */
export const awaitsAnswer = (expected: Expected): boolean =>
  expected._tag === "AnyOf"
    ? expected.options.every(awaitsAnswer)
    : expected._tag !== "None" && expected._tag !== "NoneOrInvalid"

/** Figures per transport, printed at the end of a suite. */
export class Tally {
  sent = 0
  asSpecified = 0
  readonly disagreements: Array<{ readonly how: string; readonly frame: string; readonly problem: string }> = []
  /** Frames per expected answer. */
  readonly kinds = new Map<string, number>()
  readonly name: string
  constructor(name: string) {
    this.name = name
  }
  /** Each disagreement as `how: problem` (empty when every frame was answered per spec). */
  problems(): ReadonlyArray<string> {
    return this.disagreements.map((d) => `${d.how}: ${d.problem}`)
  }
  record(frame: Frame, problem: string | undefined, expected?: Expected | string) {
    if (expected !== undefined) {
      const kind = typeof expected === "string"
        ? expected
        : `${expected._tag}${"codes" in expected ? ` ${expected.codes.join("/")}` : ""}`
      this.kinds.set(kind, (this.kinds.get(kind) ?? 0) + 1)
    }
    this.sent++
    if (problem === undefined) this.asSpecified++
    else if (this.disagreements.length < 200) {
      this.disagreements.push({
        how: frame.how,
        frame: Buffer.from(frame.bytes).toString("utf8").slice(0, 200),
        problem
      })
    }
  }
  /** A summary: counts, then distinct problems (by oracle reason), with one example each. */
  report(): string {
    const byWhy = new Map<string, { count: number; example: Tally["disagreements"][number] }>()
    for (const d of this.disagreements) {
      const key = d.problem.replace(/got .*/s, "").slice(0, 160)
      const entry = byWhy.get(key)
      if (entry) entry.count++
      else byWhy.set(key, { count: 1, example: d })
    }
    const lines = [
      `[fuzz ${this.name}] frames sent ${this.sent}, answered per spec ${this.asSpecified}, disagreements ${
        this.sent - this.asSpecified
      }`,
      `  expected: ${[...this.kinds].map(([kind, n]) => `${kind} ×${n}`).join(", ")}`
    ]
    for (const [key, { count, example }] of byWhy) {
      lines.push(
        `  ${count}× ${key}\n     e.g. ${example.how}: ${example.frame.slice(0, 160)}\n     ${
          example.problem.slice(0, 400)
        }`
      )
    }
    return lines.join("\n")
  }
}

// ---------------------------------------------------------------------------
// batches (2025-03-26 sessions, JSON-RPC 2.0 §6)

/** A batch of valid and mutated client frames (never `initialize`, which 2025-03-26 keeps out of batches). */
export const mutatedBatch = (corpus: ReadonlyArray<Mutable>, nextId: () => Json): fc.Arbitrary<Frame> => {
  const usable = corpus.filter((frame) => frame.method !== "initialize" && !isModern(frame.params))
  const base = fc.constantFrom(...usable).map((frame) => withId(frame, nextId()))
  const element = fc.oneof(
    {
      weight: 3,
      arbitrary: base.map((frame) => ({ text: JSON.stringify(frame), how: `valid ${frame.method ?? "response"}` }))
    },
    {
      weight: 3,
      arbitrary: base.chain((frame) => structural(frame)).filter(({ text }) => !text.includes("\"initialize\""))
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom("1", "null", "\"x\"", "{}", "[]", "true").map((text) => ({
        text,
        how: `literal ${text}`
      }))
    }
  )
  return fc.array(element, { minLength: 0, maxLength: 5 }).map((items) => ({
    bytes: encoder.encode(`[${items.map(({ text }) => text).join(",")}]`),
    how: `batch [${items.map(({ how }) => how).join(" | ")}]`
  }))
}

/**
 * The answer a batch calls for in a 2025-03-26 session: `single` for a frame
 * that is not a non-empty array (unparseable, empty: one error), else one
 * expectation per element.
 */
export const expectedBatch = (
  bytes: Uint8Array,
  used?: Set<Json>
): { readonly _tag: "Single"; readonly expected: Expected } | {
  readonly _tag: "Batch"
  readonly elements: ReadonlyArray<Expected>
} => {
  const parsed = parse(bytes)
  if (!parsed.ok) return { _tag: "Single", expected: { _tag: "Error", codes: [PARSE], ids: [null], why: parsed.why } }
  if (!Array.isArray(parsed.value)) return { _tag: "Single", expected: expectOne(parsed.value, clientMethods, used) }
  if (parsed.value.length === 0) {
    return { _tag: "Single", expected: { _tag: "Error", codes: [INVALID], ids: [null], why: "empty batch" } }
  }
  return { _tag: "Batch", elements: parsed.value.map((element) => expectOne(element, clientMethods, used)) }
}

/**
 * Whether the answers to a batch are right: one array holding one response
 * per element that calls for one (in any order), nothing at all when none
 * does; `undefined` when they are, else why not.
 */
export const judgeBatch = (
  elements: ReadonlyArray<Expected>,
  arrays: ReadonlyArray<ReadonlyArray<Answer>>,
  singles: ReadonlyArray<Answer>
): string | undefined => {
  const show = () => JSON.stringify({ arrays, singles }).slice(0, 400)
  const due = elements.filter(awaitsAnswer)
  if (due.length === 0 && elements.every((e) => e._tag === "None")) {
    return arrays.length === 0 && singles.length === 0
      ? undefined
      : `expected no answer (all notifications/responses), got ${show()}`
  }
  if (singles.length > 0) return `expected one array, got single messages: ${show()}`
  if (arrays.length !== 1) {
    return due.length === 0 && arrays.length === 0
      ? undefined
      : `expected one array of ${due.length}+ answers, got ${arrays.length} arrays: ${show()}`
  }
  const open = [...due, ...elements.filter((e) => e._tag === "NoneOrInvalid")]
  // answers with an id first: an id-less -32600 fits several members, an answer with an id one
  const answers = arrays[0]!.filter((m) => !("method" in m))
  const ordered = [...answers.filter((m) => m.id !== null), ...answers.filter((m) => m.id === null)]
  for (const answer of ordered) {
    const at = open.findIndex((expected) => judge(expected, [answer]) === undefined)
    if (at === -1) return `an answer no element calls for: ${JSON.stringify(answer).slice(0, 200)}; all: ${show()}`
    open.splice(at, 1)
  }
  const missing = open.filter(awaitsAnswer)
  return missing.length === 0 ? undefined : `no answer for ${missing.map((e) => e.why).join(", ")}: ${show()}`
}
