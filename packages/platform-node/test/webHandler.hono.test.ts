/**
 * `McpHttpServer.toWebHandler` mounted in a Hono app
 * (`app.all("/mcp", (c) => handler(c.req.raw))`), the app's `fetch` served
 * on `node:http` (`fixtures/webHandlerHttp.ts`, 127.0.0.1, an ephemeral
 * port), driven by our client in both eras.
 */
import { McpHttpServer } from "@effect-mcp/core"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { Hono } from "hono"
import * as NodeMcpHttpClient from "../src/NodeMcpHttpClient.ts"
import { ModernServer } from "./fixtures/modernServer.ts"
import { listenWebHandler } from "./fixtures/webHandlerHttp.ts"
import { connectOver, textOf } from "./utils/client.ts"

/** A Hono app: its own route next to the MCP endpoint; served for the test's scope. */
const serveHono = Effect.acquireRelease(
  Effect.promise(() => {
    const { dispose, handler } = McpHttpServer.toWebHandler(ModernServer, { path: "/mcp" })
    const app = new Hono()
    app.get("/hello", (c) => c.text("hi"))
    app.all("/mcp", (c) => handler(c.req.raw))
    return listenWebHandler({ fetch: (request) => Promise.resolve(app.fetch(request)), close: dispose }, "hono")
  }),
  (served) => Effect.promise(() => served.close())
)

describe("toWebHandler in a Hono app", () => {
  it.live("our client, 2026-07-28 and a legacy session (with an elicitation) through the app", () =>
    Effect.gen(function*() {
      const { url } = yield* serveHono
      const elicitation = (name: string) => ({
        form: () => Effect.succeed({ action: "accept" as const, content: { name } })
      })
      const modern = yield* connectOver(NodeMcpHttpClient.layer({ url }), {
        era: "modern",
        elicitation: elicitation("Io")
      })
      assert.strictEqual(modern.era, "modern")
      const { tools } = yield* modern.listTools()
      assert.include(tools.map((tool) => tool.name), "greet")
      assert.strictEqual(textOf(yield* modern.callTool("greet", { name: "Oslo" })), "Hello, Oslo! [modern]")
      assert.strictEqual(textOf(yield* modern.callTool("ask_name", {})), "Hello, Io! [modern]")
      const legacy = yield* connectOver(NodeMcpHttpClient.layer({ url }), {
        era: "legacy",
        elicitation: elicitation("Lu")
      })
      assert.strictEqual(legacy.era, "legacy")
      assert.strictEqual(textOf(yield* legacy.callTool("ask_name", {})), "Hello, Lu! [legacy]")
    }).pipe(Effect.scoped))
})
