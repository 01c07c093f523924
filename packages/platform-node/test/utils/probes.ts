/**
 * The HTTP transport's bad-input probes: raw requests (malformed JSON, bytes
 * that are not UTF-8, wrong content types, a body over `maxBodyBytes`, unknown
 * methods and sessions, hostile `Host` and `Origin` headers), each answered
 * as a status, a content type and a JSON-RPC error code, so that the answers
 * of one server (a runtime, the web handler) can be compared with our Node
 * server's. Servers probed are given `PROBE_OPTIONS`.
 */
import { Effect } from "effect"
import * as Http from "node:http"
import { initialize } from "../fixtures/rawHttp.ts"

const MODERN = "2026-07-28"

/** The options of a probed server: a 1 KiB body limit, loopback hosts and origins only. */
export const PROBE_OPTIONS = {
  maxBodyBytes: 1024,
  allowedHosts: ["127.0.0.1"],
  allowedOrigins: ["127.0.0.1"]
} as const

/** A probe's answer: status, content type, JSON-RPC error code. */
export type Answer = readonly [number, string | null, number | null]

/** What a probe sends: its body as is (bytes too). */
export interface Probe {
  readonly method?: string
  readonly headers?: Record<string, string>
  readonly body?: string | Uint8Array
}

/** One raw request on node:http (any `Host`), its status, content type and JSON-RPC error code. */
export const probe = (url: string, init: Probe) =>
  Effect.callback<Answer>((resume) => {
    const request = Http.request(
      url,
      { method: init.method ?? "POST", headers: init.headers, agent: false },
      (response) => {
        let text = ""
        response.setEncoding("utf8")
        response.on("data", (chunk: string) => (text += chunk))
        response.on("end", () => {
          const json = text.startsWith("{") ? JSON.parse(text) : undefined
          resume(
            Effect.succeed([response.statusCode!, response.headers["content-type"] ?? null, json?.error?.code ?? null])
          )
        })
      }
    )
    request.on("error", (error) => resume(Effect.die(error)))
    request.end(init.body)
  })

const headers = (extra: Record<string, string> = {}, version = "2025-11-25") => ({
  accept: "application/json, text/event-stream",
  "content-type": "application/json",
  "mcp-protocol-version": version,
  ...extra
})

/** A 2026-07-28 request: `_meta` as the revision asks, `params` laid over it. */
export const modernRequest = (
  method: string,
  params: Record<string, unknown> = {},
  meta: Record<string, unknown> = {}
) => ({
  jsonrpc: "2.0",
  id: 1,
  method,
  params: {
    ...params,
    _meta: {
      "io.modelcontextprotocol/protocolVersion": MODERN,
      "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
      "io.modelcontextprotocol/clientCapabilities": {},
      ...meta
    }
  }
})

const modernBody = (method: string) => JSON.stringify(modernRequest(method))

export const PROBES: ReadonlyArray<readonly [string, Probe]> = [
  ["malformed JSON", { headers: headers(), body: "{\"jsonrpc\": \"2.0\", " }],
  ["not UTF-8", { headers: headers(), body: new Uint8Array([0x22, 0xc3, 0x28, 0x22]) }],
  ["wrong content type", { headers: headers({ "content-type": "text/plain" }), body: JSON.stringify(initialize) }],
  ["wrong accept", { headers: headers({ accept: "text/html" }), body: JSON.stringify(initialize) }],
  ["a huge body", { headers: headers(), body: JSON.stringify({ ...initialize, padding: "x".repeat(4096) }) }],
  ["an unknown method (2026-07-28)", {
    headers: headers({ "mcp-method": "nothing/here" }, MODERN),
    body: modernBody("nothing/here")
  }],
  ["an unknown method (legacy, no session)", {
    headers: headers(),
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "nothing/here" })
  }],
  ["a batch", { headers: headers(), body: JSON.stringify([initialize]) }],
  ["an unknown session", {
    headers: headers({ "mcp-session-id": "nope" }),
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" })
  }],
  ["GET without a session", { method: "GET", headers: { accept: "text/event-stream" } }],
  ["DELETE of an unknown session", { method: "DELETE", headers: { "mcp-session-id": "nope" } }],
  ["PUT", { method: "PUT", headers: headers(), body: "{}" }],
  ["a hostile Host", { headers: headers({ host: "evil.example" }), body: JSON.stringify(initialize) }],
  ["a hostile Origin", { headers: headers({ origin: "http://evil.example" }), body: JSON.stringify(initialize) }]
]

/** What the probes must get from every server (besides being equal to our Node server's). */
export const EXPECTED: ReadonlyArray<readonly [string, (answer: Answer) => boolean]> = [
  ["malformed JSON", ([status, type, code]) => status === 400 && type === "application/json" && code === -32700],
  ["not UTF-8", ([status, type, code]) => status === 400 && type === "application/json" && code === -32700],
  ["wrong content type", ([status]) => status === 415],
  ["a huge body", ([status, type, code]) => status === 413 && type === "application/json" && code === -32600],
  [
    "an unknown method (2026-07-28)",
    ([status, type, code]) => status === 404 && type === "application/json" && code === -32601
  ],
  ["a hostile Host", ([status]) => status === 403],
  ["a hostile Origin", ([status]) => status === 403]
]
