/**
 * The Streamable HTTP server on Bun's and Deno's own servers through the
 * web-standard handler: `scratchpad/runtimes/http-server.ts` (the notes
 * server, `McpHttpServer.toWebHandler` on `Bun.serve` / `Deno.serve`,
 * 127.0.0.1, an ephemeral port), run by each runtime's binary from the `bun`
 * and `deno` devDependencies in node_modules with the `development` condition,
 * as `runtimes.stdio.test.ts` runs them. Driven from this process (Node) by our
 * client in both eras (tools listed and called, a 2026-07-28 elicitation round,
 * a legacy session with a server→client elicitation on it) and by the official
 * v2 client in both eras. Deno gets `--allow-net=127.0.0.1` and nothing else.
 * Each test ends the server with SIGTERM: it disposes the handler, exits 0,
 * and its pid is gone.
 *
 * A runtime whose binary is missing fails these tests (run `npm install`); it
 * is never skipped.
 */
import { assert, describe, it } from "@effect/vitest"
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client"
import { Effect, type Scope } from "effect"
import * as NodeMcpHttpClient from "../src/NodeMcpHttpClient.ts"
import { connectOver, textOf } from "./utils/client.ts"
import { isRunning } from "./utils/process.ts"
import { type Runtime, runtimes, serveOn } from "./utils/runtimes.ts"
import { waitFor } from "./utils/wait.ts"

const SERVER = "scratchpad/runtimes/http-server.ts"
const MODERN = "2026-07-28"
const TOOLS = ["add_note", "ask_title", "list_notes"]

// -----------------------------------------------------------------------------
// the runs (the runtimes and their binaries: utils/runtimes.ts)
// -----------------------------------------------------------------------------

/** Our client over Streamable HTTP in `era`, answering elicitations with `title`. */
const ours = (url: string, era: "modern" | "legacy", title: string) =>
  connectOver(NodeMcpHttpClient.layer({ url }), {
    era,
    elicitation: { form: () => Effect.succeed({ action: "accept" as const, content: { title } }) }
  })

/** The official v2 client in `era`, answering elicitations with `title`, for the scope. */
const official = (url: string, era: "modern" | "legacy", title: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new Client({ name: "official-v2", version: "2.4.0" }, {
        capabilities: { elicitation: { form: {} } },
        versionNegotiation: { mode: era === "legacy" ? "legacy" : { pin: MODERN } }
      })
      client.setRequestHandler("elicitation/create", async () => ({ action: "accept", content: { title } }))
      const transport = new StreamableHTTPClientTransport(new URL(url))
      await client.connect(transport)
      return { client, transport }
    }),
    ({ client }) => Effect.promise(() => client.close())
  )

/** Runs `use` against the server on `runtime` (clients closed by its end), then stops the server: exit 0, pid gone. */
const withServer = <A, E>(
  runtime: Runtime,
  use: (url: string, stderr: () => string) => Effect.Effect<A, E, Scope.Scope>
) =>
  Effect.gen(function*() {
    const server = yield* serveOn(runtime, SERVER)
    yield* Effect.scoped(use(server.url, server.stderr))
    const status = yield* server.stop
    assert.deepStrictEqual(status, { code: 0, signal: null }, server.stderr())
    yield* waitFor(() => !isRunning(server.pid))
    // Deno's legacy-abort warning stays away (the flag); nothing else is printed either
    assert.strictEqual(server.stderr(), "", server.stderr())
  }).pipe(Effect.scoped)

// -----------------------------------------------------------------------------
// the tests
// -----------------------------------------------------------------------------

for (const runtime of runtimes) {
  describe(`the Streamable HTTP server on ${runtime.name}'s own server (toWebHandler)`, () => {
    it.live(
      `our client (${MODERN}): lists the tools, calls one, answers an elicitation round`,
      () =>
        withServer(runtime, (url, stderr) =>
          Effect.gen(function*() {
            const client = yield* ours(url, "modern", "groceries")
            assert.strictEqual(client.era, "modern", stderr())
            assert.strictEqual(client.protocolVersion, MODERN)
            assert.strictEqual(client.serverInfo.name, "notes")
            const { tools } = yield* client.listTools()
            assert.deepStrictEqual(tools.map((tool) => tool.name).sort(), TOOLS)
            assert.strictEqual(
              textOf(yield* client.callTool("add_note", { title: "todo", body: "eggs" })),
              "saved todo"
            )
            // input-required round: the server asks, the client answers, the call is retried with the answer
            assert.strictEqual(textOf(yield* client.callTool("ask_title", {})), "saved groceries [modern]")
            assert.strictEqual(textOf(yield* client.callTool("list_notes", {})), "todo\ngroceries")
          })),
      60_000
    )

    it.live(
      "our client (legacy): a session, with a server→client elicitation on it",
      () =>
        withServer(runtime, (url, stderr) =>
          Effect.gen(function*() {
            const client = yield* ours(url, "legacy", "letters")
            assert.strictEqual(client.era, "legacy", stderr())
            assert.notStrictEqual(client.protocolVersion, MODERN)
            const { tools } = yield* client.listTools()
            assert.deepStrictEqual(tools.map((tool) => tool.name).sort(), TOOLS)
            assert.strictEqual(
              textOf(yield* client.callTool("add_note", { title: "todo", body: "eggs" })),
              "saved todo"
            )
            assert.strictEqual(textOf(yield* client.callTool("ask_title", {})), "saved letters [legacy]")
            assert.strictEqual(textOf(yield* client.callTool("list_notes", {})), "todo\nletters")
          })),
      60_000
    )

    it.live(
      `the official v2 client, ${MODERN} and legacy side by side: tools, an elicitation each its own way`,
      () =>
        withServer(runtime, (url, stderr) =>
          Effect.gen(function*() {
            const modern = yield* official(url, "modern", "modern-title")
            const legacy = yield* official(url, "legacy", "legacy-title")
            assert.strictEqual(modern.client.getProtocolEra(), "modern", stderr())
            assert.strictEqual(modern.client.getNegotiatedProtocolVersion(), MODERN)
            assert.isUndefined(modern.transport.sessionId)
            assert.strictEqual(legacy.client.getProtocolEra(), "legacy")
            assert.isString(legacy.transport.sessionId)
            const { tools } = yield* Effect.promise(() => modern.client.listTools())
            assert.deepStrictEqual(tools.map((tool) => tool.name).sort(), TOOLS)
            const saved = yield* Effect.promise(() =>
              legacy.client.callTool({ name: "add_note", arguments: { title: "todo", body: "eggs" } })
            )
            assert.strictEqual(textOf(saved), "saved todo")
            const [viaModern, viaLegacy] = yield* Effect.promise(() =>
              Promise.all([
                modern.client.callTool({ name: "ask_title", arguments: {} }),
                legacy.client.callTool({ name: "ask_title", arguments: {} })
              ])
            )
            assert.strictEqual(textOf(viaModern), "saved modern-title [modern]")
            assert.strictEqual(textOf(viaLegacy), "saved legacy-title [legacy]")
          })),
      60_000
    )
  })
}
