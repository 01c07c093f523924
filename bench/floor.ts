/**
 * The "floor" clients of the cross-process benchmarks (PERF-BASELINE.md):
 * hand-written JSON-RPC with no SDK, to show how much of a round trip is the
 * OS, Node and the wire, and how much is left to the SDKs. Paired with
 * `servers/stdio-floor.mjs` and `servers/http-floor.mjs`.
 *
 * - stdio: lines written to the child's stdin (the calls issued in one tick in
 *   one write), answers split into lines, parsed, matched by id;
 * - HTTP: one `node:http` POST per call on a keep-alive agent, the JSON answer
 *   parsed and matched by id.
 */
import { spawn } from "node:child_process"
import * as Http from "node:http"
import { checkEcho, clientInfo, NODE, TEXT, track, waitGone } from "./harness.ts"

export interface FloorClient {
  readonly call: () => Promise<void>
  readonly close: () => Promise<void>
}

const PROTOCOL_VERSION = "2025-11-25"

const initializeParams = { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo }

interface Answer {
  readonly id: number
  readonly result?: { readonly content?: ReadonlyArray<unknown> }
  readonly error?: unknown
}

// -----------------------------------------------------------------------------
// stdio
// -----------------------------------------------------------------------------

export const floorStdio = async (args: ReadonlyArray<string>): Promise<FloorClient & { readonly pid: number }> => {
  const child = spawn(NODE, args, { stdio: ["pipe", "pipe", "inherit"] })
  const pid = child.pid!
  track(pid)
  const pending = new Map<number, (answer: Answer) => void>()
  let nextId = 0
  let buffer = ""
  child.stdout!.setEncoding("utf8")
  child.stdout!.on("data", (chunk: string) => {
    buffer += chunk
    let newline: number
    while ((newline = buffer.indexOf("\n")) >= 0) {
      const answer = JSON.parse(buffer.slice(0, newline)) as Answer
      buffer = buffer.slice(newline + 1)
      const resolve = pending.get(answer.id)
      pending.delete(answer.id)
      resolve?.(answer)
    }
  })
  // the lines written in one tick go out in one write
  let outbox = ""
  const flush = () => {
    child.stdin!.write(outbox)
    outbox = ""
  }
  const write = (message: unknown) => {
    if (outbox === "") queueMicrotask(flush)
    outbox += `${JSON.stringify(message)}\n`
  }
  const request = (method: string, params: unknown): Promise<Answer> =>
    new Promise((resolve) => {
      const id = ++nextId
      pending.set(id, resolve)
      write({ jsonrpc: "2.0", id, method, params })
    })

  await request("initialize", initializeParams)
  write({ jsonrpc: "2.0", method: "notifications/initialized" })
  const params = { name: "echo", arguments: { text: TEXT } }
  return {
    pid,
    call: async () => {
      const answer = await request("tools/call", params)
      checkEcho(answer.result?.content)
    },
    close: async () => {
      child.stdin!.end()
      if ((await waitGone([pid], 3000)).length > 0) child.kill("SIGKILL")
    }
  }
}

// -----------------------------------------------------------------------------
// Streamable HTTP
// -----------------------------------------------------------------------------

interface Reply {
  readonly status: number
  readonly headers: Http.IncomingHttpHeaders
  readonly body: string
}

/** One POST of a JSON body; the whole answer read as text. */
export const post = (agent: Http.Agent, url: URL, body: unknown, headers: Record<string, string>): Promise<Reply> =>
  new Promise((resolve, reject) => {
    const payload = JSON.stringify(body)
    const request = Http.request(url, {
      method: "POST",
      agent,
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "content-length": Buffer.byteLength(payload),
        ...headers
      }
    }, (response) => {
      let text = ""
      response.setEncoding("utf8")
      response.on("data", (chunk: string) => (text += chunk))
      response.on("end", () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: text }))
      response.on("error", reject)
    })
    request.on("error", reject)
    request.end(payload)
  })

/** `initialize` + `notifications/initialized` over plain POSTs; returns the session id. */
export const openSession = async (agent: Http.Agent, url: URL): Promise<string> => {
  const init = await post(agent, url, { jsonrpc: "2.0", id: 1, method: "initialize", params: initializeParams }, {})
  const sessionId = init.headers["mcp-session-id"]
  if (init.status !== 200 || typeof sessionId !== "string") {
    throw new Error(`initialize answered ${init.status}: ${init.body.slice(0, 200)}`)
  }
  const initialized = await post(agent, url, { jsonrpc: "2.0", method: "notifications/initialized" }, {
    "mcp-session-id": sessionId,
    "mcp-protocol-version": PROTOCOL_VERSION
  })
  if (initialized.status !== 202) throw new Error(`notifications/initialized answered ${initialized.status}`)
  return sessionId
}

export const floorHttp = async (href: string): Promise<FloorClient> => {
  const url = new URL(href)
  const agent = new Http.Agent({ keepAlive: true })
  const sessionId = await openSession(agent, url)
  const headers = { "mcp-session-id": sessionId, "mcp-protocol-version": PROTOCOL_VERSION }
  let nextId = 1
  const params = { name: "echo", arguments: { text: TEXT } }
  return {
    call: async () => {
      const reply = await post(agent, url, { jsonrpc: "2.0", id: ++nextId, method: "tools/call", params }, headers)
      const answer = JSON.parse(reply.body) as Answer
      checkEcho(answer.result?.content)
    },
    close: async () => {
      await new Promise<void>((resolve) => {
        const request = Http.request(url, { method: "DELETE", agent, headers }, (response) => {
          response.resume()
          response.on("end", resolve)
        })
        request.on("error", () => resolve())
        request.end()
      })
      agent.destroy()
    }
  }
}
