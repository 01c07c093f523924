/**
 * Interop: our McpClient against the official SDK's test server
 * (`fixtures/sdkServer.ts`), in process (through the SDK transport bridge)
 * and over stdio (a child process running `fixtures/stdio-sdk-server.mjs`),
 * with the one suite of `utils/sdkClientSuite.ts`; the Streamable HTTP and
 * HTTP+SSE runs are in `interop.http-client.test.ts`.
 */
import type { McpClient } from "@effect-mcp/core"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import { fileURLToPath } from "node:url"
import { makeSdkServer } from "./fixtures/sdkServer.ts"
import { clientInfo, connectOver, connectStdio } from "./utils/client.ts"
import { makeSdkBridge } from "./utils/sdkBridge.ts"
import { sdkClientSuite } from "./utils/sdkClientSuite.ts"

/** The SDK server in this process, and our client connected to it through the bridge. */
const connectInProcess = (options: Partial<McpClient.Options> = {}) =>
  Effect.gen(function*() {
    const bridge = yield* makeSdkBridge()
    const server = makeSdkServer()
    yield* Effect.promise(() => server.connect(bridge.theirs))
    yield* Effect.addFinalizer(() => Effect.promise(() => server.close()))
    return { server, client: yield* connectOver(bridge.layer, options) }
  })

const stdioServer = {
  command: process.execPath,
  args: [fileURLToPath(new URL("./fixtures/stdio-sdk-server.mjs", import.meta.url))],
  stderr: "capture" as const
}

describe("interop: our McpClient → the official SDK's McpServer, in process", () => {
  sdkClientSuite<Scope.Scope>(it.effect, (options) => Effect.map(connectInProcess(options), ({ client }) => client), {
    related: true
  })

  it.effect("the SDK server sees our client's info and its capabilities, derived from the handlers given", () =>
    Effect.gen(function*() {
      const { server } = yield* connectInProcess({ roots: [] })
      assert.deepStrictEqual(server.server.getClientVersion(), clientInfo)
      assert.deepStrictEqual(server.server.getClientCapabilities(), { roots: { listChanged: true } })
    }))
})

describe("interop: our McpClient over stdio → an official SDK server process", () => {
  sdkClientSuite<Scope.Scope>(
    it.live,
    (options) => Effect.map(connectStdio(stdioServer, options), ({ client }) => client),
    {
      related: true
    }
  )

  it.live("scope close: stdin closed, the SDK server exits 0 by itself", () =>
    Effect.gen(function*() {
      const { client, scope, transport } = yield* connectStdio(stdioServer)
      yield* client.ping()
      assert.include(yield* transport.stderrTail, "sdk-server ready")
      yield* Scope.close(scope, Exit.void)
      assert.deepStrictEqual(yield* transport.exitStatus, { code: 0, signal: null })
    }))
})
