/**
 * The stdio line limit, both sides, with real processes: by default a 33 MB
 * message goes through (a tool call to the server, a tool result to the
 * client); a line above a configured limit gets `-32700` and the next line
 * is read normally. A frame that is both a request and a response gets
 * `-32600`.
 */
import { JsonRpc } from "@effect-mcp/core"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Stream } from "effect"
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import * as NodeMcpStdio from "../src/NodeMcpStdio.ts"
import { clientInfo, connectStdio, textOf } from "./utils/client.ts"

const root = fileURLToPath(new URL("../../..", import.meta.url))
const fixture = fileURLToPath(new URL("./fixtures/stdio-limits-server.ts", import.meta.url))
const BIG = 33 * 1024 * 1024

const handshake = [
  JsonRpc.request(1, "initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo }),
  JsonRpc.notification("notifications/initialized")
]

/**
 * Runs the fixture server with `env`, writes `lines` to its stdin and closes
 * it; resolves with the JSON-RPC messages it wrote before exiting.
 */
const exchange = (lines: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  new Promise<Array<any>>((resolve, reject) => {
    const child = spawn(process.execPath, ["--conditions=development", fixture], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ["pipe", "pipe", "pipe"]
    })
    const chunks: Array<Buffer> = []
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk))
    child.stderr.on("data", (chunk) => (stderr += chunk))
    child.on("error", reject)
    child.on("exit", (code) => {
      if (code !== 0) return reject(new Error(`exit ${code}: ${stderr}`))
      const text = Buffer.concat(chunks).toString("utf8").trim()
      resolve(text === "" ? [] : text.split("\n").map((line) => JSON.parse(line)))
    })
    child.stdin.end(lines.join("\n") + "\n")
  })

const line = (message: unknown) => JSON.stringify(message)

describe("NodeMcpStdio server: the line limit", () => {
  it("by default a valid ~33 MB tools/call is answered", async () => {
    const text = "y".repeat(BIG)
    const answers = await exchange([
      ...handshake.map(line),
      line(JsonRpc.request(2, "tools/call", { name: "size", arguments: { text } })),
      line(JsonRpc.request(3, "ping"))
    ])
    const byId = new Map(answers.filter((m) => "id" in m).map((m) => [m.id, m]))
    assert.strictEqual(byId.get(2).result.content[0].text, String(BIG))
    assert.deepStrictEqual(byId.get(3).result, {})
  }, 30_000)

  it("with maxLineBytes: a longer line gets -32700 (id null), the next request is answered", async () => {
    const answers = await exchange([
      ...handshake.map(line),
      line(JsonRpc.request(2, "tools/call", { name: "size", arguments: { text: "z".repeat(4096) } })),
      line(JsonRpc.request(3, "tools/call", { name: "size", arguments: { text: "short" } })),
      // both a request and a response: -32600 with its id
      line({ jsonrpc: "2.0", id: 4, method: "ping", result: {} })
    ], { STDIO_MAX_LINE_BYTES: "2048" })
    const replies = answers.filter((m) => "id" in m && m.id !== 1)
    assert.strictEqual(replies.length, 3)
    assert.strictEqual(replies.find((m) => m.id === 4).error.code, JsonRpc.ErrorCode.InvalidRequest)
    const parseError = replies.find((m) => m.id === null)
    assert.strictEqual(parseError.error.code, JsonRpc.ErrorCode.ParseError)
    assert.include(parseError.error.message, "2048")
    assert.strictEqual(replies.find((m) => m.id === 3).result.content[0].text, "5")
  }, 30_000)
})

const serverOptions = (options: Partial<NodeMcpStdio.ClientOptions> = {}): NodeMcpStdio.ClientOptions => ({
  command: process.execPath,
  args: ["--conditions=development", fixture],
  cwd: root,
  stderr: "capture",
  ...options
})

describe("NodeMcpStdio client: the line limit", () => {
  it.live("by default a ~33 MB tool result reaches the client", () =>
    Effect.gen(function*() {
      const { client } = yield* connectStdio(serverOptions())
      const result = yield* client.callTool("big", { bytes: BIG })
      assert.strictEqual(textOf(result).length, BIG)
    }).pipe(Effect.scoped), { timeout: 30_000 })

  it.live(
    "with maxLineBytes: a longer line becomes Malformed, the next line is read normally",
    () =>
      Effect.gen(function*() {
        const transport = yield* NodeMcpStdio.makeClient(serverOptions({ maxLineBytes: 64 * 1024 }))
        const reading = yield* transport.incoming.pipe(Stream.take(3), Stream.runCollect, Effect.forkChild)
        for (const message of handshake) yield* transport.send(message)
        yield* transport.send(JsonRpc.request(2, "tools/call", { name: "big", arguments: { bytes: 200 * 1024 } }))
        yield* transport.send(JsonRpc.request(3, "tools/call", { name: "big", arguments: { bytes: 10 } }))
        const frames = Array.from(yield* Fiber.join(reading)) as Array<any>
        assert.strictEqual(frames[0].id, 1)
        const malformed = frames.find((frame) => frame instanceof JsonRpc.Malformed)
        assert.instanceOf(malformed, JsonRpc.Malformed)
        assert.include(malformed.reason, String(64 * 1024))
        const small = frames.find((frame) => frame?.id === 3)
        assert.strictEqual(small.result.content[0].text, "x".repeat(10))
      }).pipe(Effect.scoped),
    { timeout: 30_000 }
  )
})
