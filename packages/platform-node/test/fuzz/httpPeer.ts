/**
 * A fake Streamable HTTP server for the client fuzz suite: a node:http
 * server on 127.0.0.1 that plays a 2025-11-25 server (initialize, 202 for
 * notifications and responses, 405 for GET, ping answered), except that the
 * next request it is armed for gets a planned, possibly malformed, answer.
 * It keeps what the client POSTs that is not a request (its answers).
 */
import { Effect } from "effect"
import * as Http from "node:http"
import { listenLoopback } from "../fixtures/listen.ts"

/** The id placeholder of a planned frame, replaced by the id of the request it answers. */
export const PENDING = "@@pending@@"

/** How the next request is answered. */
export interface Plan {
  readonly status: number
  readonly contentType: string | undefined
  /** The body, with `"@@pending@@"` standing for the request's id (JSON). */
  readonly body: Uint8Array
}

/** A message the client POSTed that is not a request, with the plan counter it came under. */
export interface Posted {
  readonly step: number
  readonly message: unknown
}

const latin1 = (bytes: Uint8Array) => Buffer.from(bytes).toString("latin1")

/** The body with the placeholder replaced by `id` (bytes kept as they are). */
export const withPending = (body: Uint8Array, id: unknown): Uint8Array =>
  Buffer.from(latin1(body).replaceAll(JSON.stringify(PENDING), JSON.stringify(id)), "latin1")

/** Starts the fake server in the scope; arm it with a plan before each fuzzed call. */
export const fakeServer = Effect.gen(function*() {
  let plan: Plan | undefined
  let step = 0
  const posted: Array<Posted> = []
  let waiter: (() => void) | undefined
  let planned = 0
  let lastId: unknown = undefined
  const server = Http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      if (req.method === "DELETE") return res.writeHead(200).end()
      if (req.method !== "POST") return res.writeHead(405, { allow: "POST, DELETE" }).end()
      let message: any
      try {
        message = JSON.parse(Buffer.concat(chunks).toString("utf8"))
      } catch {
        return res.writeHead(400).end()
      }
      const isRequest = typeof message === "object" && message !== null && "method" in message && "id" in message
      if (!isRequest) {
        if (typeof message === "object" && message !== null && !("method" in message)) {
          posted.push({ step, message })
          waiter?.()
        }
        return res.writeHead(202).end()
      }
      if (message.method === "initialize") {
        res.writeHead(200, { "content-type": "application/json", "mcp-session-id": "fuzz-session" })
        return res.end(JSON.stringify({
          jsonrpc: "2.0",
          id: message.id,
          result: {
            protocolVersion: "2025-11-25",
            capabilities: { tools: {} },
            serverInfo: { name: "fuzz", version: "1" }
          }
        }))
      }
      if (plan !== undefined) {
        const { body, contentType, status } = plan
        plan = undefined
        planned++
        lastId = message.id
        res.writeHead(status, contentType === undefined ? {} : { "content-type": contentType })
        return res.end(withPending(body, message.id))
      }
      res.writeHead(200, { "content-type": "application/json" })
      res.end(JSON.stringify({ jsonrpc: "2.0", id: message.id, result: {} }))
    })
  })
  const port = yield* listenLoopback(server)
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    /** Arms the next request (a new step: answers posted from now on belong to it). */
    arm: (next: Plan) => {
      plan = next
      step++
    },
    /** The id of the request the last plan answered. */
    get lastId() {
      return lastId
    },
    /** How many plans were used. */
    get planned() {
      return planned
    },
    disarm: () => {
      plan = undefined
    },
    /** The answers the client posted during the current step. */
    answers: () => posted.filter((p) => p.step === step).map((p) => p.message),
    /** Waits (bounded by the caller) until the client posted an answer in this step. */
    awaitAnswer: Effect.callback<void>((resume) => {
      if (posted.some((p) => p.step === step)) return resume(Effect.void)
      waiter = () => {
        waiter = undefined
        resume(Effect.void)
      }
    }),
    /** Drops the answers of past steps. */
    trim: () => {
      for (let i = posted.length - 1; i >= 0; i--) if (posted[i]!.step !== step) posted.splice(i, 1)
    }
  }
})
