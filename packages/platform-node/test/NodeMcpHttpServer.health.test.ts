/**
 * The health routes of the standalone Node server, over real HTTP
 * (127.0.0.1, ephemeral ports): `/healthz` and `/readyz`, a readiness check
 * that fails, dies or hangs (503), configurable and disabled paths, and
 * `/readyz` answering 503 while the server shuts down (a tool that finishes
 * its work before it lets go keeps the drain going).
 */
import { McpServer, McpTool } from "@effect-mcp/core"
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Layer, Schema, Scope } from "effect"
import * as NodeMcpHttpServer from "../src/NodeMcpHttpServer.ts"
import { mcpHeaders, openSession, send } from "./fixtures/rawHttp.ts"

const serve = (
  options: NodeMcpHttpServer.Options = {},
  scope?: Scope.Scope,
  tools: ReadonlyArray<McpTool.McpTool<any>> = []
) =>
  Effect.gen(function*() {
    const server = yield* McpServer.make({ name: "health", version: "1.0.0" })
    for (const tool of tools) yield* server.register(tool)
    const build = Layer.build(
      NodeMcpHttpServer.layer(options).pipe(Layer.provide(Layer.succeed(McpServer.McpServer, server)))
    )
    const context = yield* (scope === undefined ? build : Scope.provide(build, scope))
    const url = yield* NodeMcpHttpServer.url().pipe(Effect.provideContext(context))
    const base = url.slice(0, -"/mcp".length)
    const get = (path: string) => send(base + path, { method: "GET" })
    return { url, get }
  })

describe("NodeMcpHttpServer health", () => {
  it.live("/healthz and /readyz answer 200 by default, uncached", () =>
    Effect.gen(function*() {
      const { get } = yield* serve()
      const health = yield* get("/healthz")
      assert.strictEqual(health.status, 200)
      assert.strictEqual(health.body, "ok\n")
      assert.strictEqual(health.headers["cache-control"], "no-store")
      const ready = yield* get("/readyz")
      assert.strictEqual(ready.status, 200)
      assert.strictEqual(ready.body, "ready\n")
    }).pipe(Effect.scoped))

  it.live("/readyz runs the readiness check: 503 when it fails, dies or takes too long", () =>
    Effect.gen(function*() {
      let state: "up" | "down" | "dead" | "stuck" = "up"
      const readiness = Effect.suspend(() =>
        state === "up"
          ? Effect.void
          : state === "down"
          ? Effect.fail(new Error("redis down"))
          : state === "dead"
          ? Effect.die(new Error("bug"))
          : Effect.never
      )
      const { get } = yield* serve({ readiness, readinessTimeout: "100 millis" })
      assert.strictEqual((yield* get("/readyz")).status, 200)
      state = "down"
      const down = yield* get("/readyz")
      assert.strictEqual(down.status, 503)
      assert.strictEqual(down.body, "not ready\n")
      // liveness does not depend on the check
      assert.strictEqual((yield* get("/healthz")).status, 200)
      state = "dead"
      assert.strictEqual((yield* get("/readyz")).status, 503)
      state = "stuck"
      assert.strictEqual((yield* get("/readyz")).status, 503)
      state = "up"
      assert.strictEqual((yield* get("/readyz")).status, 200)
    }).pipe(Effect.scoped))

  it.live("paths are configurable, and false turns a route off", () =>
    Effect.gen(function*() {
      const { get, url } = yield* serve({ healthPath: "/live", readyPath: false })
      assert.strictEqual((yield* get("/live")).status, 200)
      assert.strictEqual((yield* get("/healthz")).status, 404)
      assert.strictEqual((yield* get("/readyz")).status, 404)
      // the MCP endpoint is unaffected
      const session = yield* openSession(url, { version: false })
      assert.isString(session)
    }).pipe(Effect.scoped))

  it.live("/readyz answers 503 while the server shuts down; /healthz stays 200", () =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      // finishes its work before it lets go: the drain waits for it
      const Stubborn = McpTool.make("stubborn", {
        input: Schema.Struct({}),
        handler: () =>
          Effect.uninterruptible(Effect.andThen(Deferred.succeed(started, undefined), Deferred.await(release))).pipe(
            Effect.as("done")
          )
      })
      const scope = yield* Scope.make()
      const { get, url } = yield* serve({ shutdownTimeout: "5 seconds" }, scope, [Stubborn])
      const session = yield* openSession(url, { version: false })
      const call = yield* send(url, {
        headers: mcpHeaders({ session, version: false }),
        body: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "stubborn", arguments: {} } }
      }).pipe(Effect.forkChild({ startImmediately: true }))
      yield* Deferred.await(started)
      assert.strictEqual((yield* get("/readyz")).status, 200)
      const closing = yield* Scope.close(scope, Exit.void).pipe(Effect.forkChild({ startImmediately: true }))
      let ready = 200
      for (let i = 0; i < 100 && ready === 200; i++) {
        ready = (yield* get("/readyz")).status
        if (ready === 200) yield* Effect.sleep("10 millis")
      }
      const body = ready === 503 ? (yield* get("/readyz")).body : ""
      const health = (yield* get("/healthz")).status
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(closing)
      yield* Fiber.await(call)
      assert.strictEqual(ready, 503)
      assert.strictEqual(body, "shutting down\n")
      assert.strictEqual(health, 200)
    }).pipe(Effect.scoped))
})
