/**
 * Fuzz, our server over Streamable HTTP: seeded mutations of valid client
 * frames (see `frames.ts`) POSTed as raw bodies in one 2025-11-25 session to
 * `NodeMcpHttpServer.layer` in a child process
 * (`fixtures/fuzz-http-server.ts`), each followed by a ping. Asserted: the
 * ping is always answered (no crash), every body is JSON-RPC (JSON or SSE),
 * the child's RSS stays bounded, and each frame gets the answer the spec
 * prescribes: a request → 200 with its response; a notification or a
 * response → 202, no body; input the server cannot accept (-32700, -32600)
 * → a 4xx whose body, if any, is that error.
 *
 * `FUZZ_RUNS=10000 npx vitest run packages/platform-node/test/fuzz` for more rounds.
 */
import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import { spawn } from "node:child_process"
import * as Http from "node:http"
import { fileURLToPath } from "node:url"
import {
  type Answer,
  clientCorpus,
  type Expected,
  expectedAnswer,
  type Frame,
  isJsonRpc,
  isModernFrame,
  isUtf8,
  type Json,
  judge,
  modernHeaders,
  mutatedFrame,
  numRuns,
  seed,
  Tally
} from "./frames.ts"
import { isResponse, rssOf } from "./peer.ts"

const root = fileURLToPath(new URL("../../../..", import.meta.url))
const RUNS = numRuns(600)
const RSS_BOUND = 400 * 1024 * 1024

interface Reply {
  readonly status: number
  readonly contentType: string
  readonly body: string
  readonly session: string | undefined
}

const agent = new Http.Agent({ keepAlive: true, maxSockets: 1 })

const post = (url: string, body: Uint8Array | string, headers: Http.OutgoingHttpHeaders) =>
  new Promise<Reply>((resolve, reject) => {
    const request = Http.request(url, { method: "POST", headers, agent, timeout: 10_000 }, (response) => {
      let text = ""
      response.setEncoding("utf8")
      response.on("data", (chunk: string) => (text += chunk))
      response.on("end", () =>
        resolve({
          status: response.statusCode!,
          contentType: String(response.headers["content-type"] ?? ""),
          body: text,
          session: response.headers["mcp-session-id"] as string | undefined
        }))
    })
    request.on("timeout", () => request.destroy(new Error("timed out")))
    request.on("error", reject)
    request.end(body)
  })

/** The JSON-RPC messages of a body (JSON or SSE); `undefined` when some part is not JSON-RPC. */
const messagesOf = (reply: Reply): ReadonlyArray<Answer> | undefined => {
  if (reply.body === "") return []
  const texts = reply.contentType.includes("text/event-stream")
    ? reply.body.split(/\n\n/).flatMap((block) => {
      const data = block.split("\n").filter((line) => line.startsWith("data:")).map((line) => line.slice(5).trimStart())
      return data.length === 0 ? [] : [data.join("\n")]
    })
    : [reply.body]
  const messages: Array<Answer> = []
  for (const text of texts) {
    try {
      const message = JSON.parse(text)
      if (!isJsonRpc(message)) return undefined
      messages.push(message)
    } catch {
      return undefined
    }
  }
  return messages
}

const is4xx = (status: number) => status >= 400 && status < 500

/** The Streamable HTTP oracle: status and body for a frame. */
const judgeHttp = (expected: Expected, modern: boolean, reply: Reply): string | undefined => {
  const messages = messagesOf(reply)
  if (messages === undefined) return `a body that is not JSON-RPC: ${reply.status} ${reply.body.slice(0, 200)}`
  const responses = messages.filter(isResponse)
  const body = judge(expected, responses)
  const show = `${reply.status} ${reply.body.slice(0, 300)}`
  switch (expected._tag) {
    case "None":
      return reply.status === 202 && reply.body === ""
        ? undefined
        : `expected 202 and no body (${expected.why}), got ${show}`
    case "NoneOrInvalid":
      return (reply.status === 202 && reply.body === "") ||
          (is4xx(reply.status) && (responses.length === 0 || body === undefined))
        ? undefined
        : `expected 202, or a 4xx with -32600 (${expected.why}), got ${show}`
    case "ResponseOrInvalid":
      return (reply.status === 200 && body === undefined && responses[0]?.id === expected.id) ||
          (is4xx(reply.status) && (responses.length === 0 || responses[0]?.error?.code === -32600))
        ? undefined
        : `expected 200 with id ${expected.id}, or a 4xx with -32600 (${expected.why}), got ${show}`
    case "Error": {
      const unacceptable = (code: unknown) => code === -32700 || code === -32600
      if (responses.length === 0) {
        // input the server cannot accept: an HTTP error, whose body MAY hold the error
        return is4xx(reply.status) && expected.codes.every(unacceptable)
          ? undefined
          : `expected error ${expected.codes} (${expected.why}), got ${show}`
      }
      if (body !== undefined) return body
      if (unacceptable(responses[0]!.error?.code)) {
        return is4xx(reply.status)
          ? undefined
          : `expected a 4xx with ${responses[0]!.error?.code} (${expected.why}), got ${show}`
      }
      // an accepted request: 200 with its error (2026-07-28 maps errors to statuses)
      return reply.status === 200 || (modern && is4xx(reply.status))
        ? undefined
        : `expected 200 (${expected.why}), got ${show}`
    }
    case "AnyOf": {
      const problems = expected.options.map((option) => judgeHttp(option, modern, reply))
      return problems.includes(undefined) ? undefined : problems.join("; or ")
    }
    case "Response":
      if (reply.status !== 200 && !(modern && is4xx(reply.status))) return `expected 200 (${expected.why}), got ${show}`
      return body
  }
}

describe("fuzz: our server over Streamable HTTP", () => {
  const tally = new Tally("http server")
  /** Bodies that are not UTF-8, apart: see the finding below. */
  const utf8Tally = new Tally("http server, bodies not UTF-8")
  let crashed: string | undefined
  let badBodies: Array<string> = []

  it("survives mutated frames: pings answered, only JSON-RPC in bodies, RSS bounded", async () => {
    const child = spawn(process.execPath, [
      // the heap capped: a leak of what it was sent would end it long before the RSS bound
      "--max-old-space-size=128",
      "--conditions=development",
      "packages/platform-node/test/fixtures/fuzz-http-server.ts"
    ], {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stderr = ""
    child.stderr.setEncoding("utf8")
    child.stderr.on("data", (chunk: string) => (stderr = (stderr + chunk).slice(-20_000)))
    let rss: { before: number | undefined; after: number | undefined } = { before: undefined, after: undefined }
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = ""
        child.stdout.setEncoding("utf8")
        child.stdout.on("data", (chunk: string) => {
          out += chunk
          const match = /^listening on (\S+)\n/.exec(out)
          if (match !== null) resolve(match[1]!)
        })
        child.on("exit", (code) => reject(new Error(`exited with ${code} before listening: ${stderr}`)))
      })
      const base = { accept: "application/json, text/event-stream", "content-type": "application/json" }
      const init = await post(
        url,
        JSON.stringify({
          jsonrpc: "2.0",
          id: 0,
          method: "initialize",
          params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "fuzz", version: "1" } }
        }),
        { ...base, "mcp-protocol-version": "2025-11-25" }
      )
      assert.strictEqual(init.status, 200, init.body)
      const session = init.session
      assert.isString(session)
      const headers = { ...base, "mcp-protocol-version": "2025-11-25", "mcp-session-id": session }
      const initialized = await post(
        url,
        JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
        headers
      )
      assert.strictEqual(initialized.status, 202)
      rss.before = rssOf(child.pid!)
      let counter = 0
      /** The request ids sent in this session so far (MCP forbids reusing one). */
      const used = new Set<Json>()
      await fc.assert(
        fc.asyncProperty(mutatedFrame(clientCorpus, () => 10_000 + counter), async (frame: Frame) => {
          counter++
          const expected = expectedAnswer(frame.bytes, "server", used)
          const modern = isModernFrame(frame.bytes)
          // a 2026-07-28 request goes out as a modern client sends it: no session, its standard headers
          const standard = modern ? modernHeaders(frame.bytes) : { headers: {}, complete: true }
          const reply = await post(url, frame.bytes, modern ? { ...base, ...standard.headers } : headers).catch(
            (error: Error) => {
              crashed = `no reply to ${frame.how}: ${error.message} ${stderr.slice(-500)}`
              throw error
            }
          )
          if (messagesOf(reply) === undefined) badBodies.push(`${frame.how}: ${reply.body.slice(0, 200)}`)
          const incomplete = !standard.complete && is4xx(reply.status) && messagesOf(reply)?.[0]?.error?.code === -32020
          const problem = incomplete ? undefined : judgeHttp(expected, modern, reply)
          if (isUtf8(frame.bytes)) tally.record(frame, problem, expected)
          else utf8Tally.record(frame, problem, expected)
          const ping = await post(
            url,
            JSON.stringify({ jsonrpc: "2.0", id: `ping-${counter}`, method: "ping" }),
            headers
          )
          const pong = messagesOf(ping)?.find((message) => message.id === `ping-${counter}`)
          if (ping.status !== 200 || pong?.result === undefined) {
            crashed = `the ping after ${frame.how} got ${ping.status} ${ping.body.slice(0, 200)}`
            throw new Error(crashed)
          }
        }),
        { seed, numRuns: RUNS, endOnFailure: true }
      )
      rss.after = rssOf(child.pid!)
    } finally {
      agent.destroy()
      child.kill("SIGKILL")
      console.error(tally.report())
      console.error(utf8Tally.report())
      console.error(`[fuzz http server] RSS before ${rss.before} after ${rss.after} bytes`)
    }
    assert.isUndefined(crashed)
    assert.deepStrictEqual(badBodies, [])
    if (rss.after !== undefined) assert.isBelow(rss.after, RSS_BOUND)
  }, Math.max(120_000, RUNS * 60))

  it("answers every UTF-8 frame per JSON-RPC 2.0 / MCP / Streamable HTTP", () => {
    assert.isAbove(tally.sent, 0)
    assert.deepStrictEqual(tally.problems(), [])
  })

  // found by this suite: a body that is not UTF-8 was decoded leniently (U+FFFD)
  // and answered as that text; now it is -32700, as on stdio (RFC 8259 §8.1)
  it("answers bodies that are not UTF-8 with -32700, as stdio does", () => {
    assert.isAbove(utf8Tally.sent, 0)
    assert.deepStrictEqual(utf8Tally.problems(), [])
  })
})
