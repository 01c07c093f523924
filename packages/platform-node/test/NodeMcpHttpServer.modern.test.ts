/**
 * One Streamable HTTP endpoint, both eras, on real sockets (127.0.0.1,
 * ephemeral ports): 2026-07-28 requests are stateless (no session id, the
 * standard headers checked against the body, the modern errors with their
 * HTTP statuses), closing a request's stream cancels its handler, a listen
 * stream keeps alive; a legacy session on the same endpoint keeps working,
 * and the same elicitation tool asks each era its own way.
 */
import { McpClient, McpServer, McpTool } from "@effect-mcp/core"
import { assert, describe, it } from "@effect/vitest"
import { Context, Deferred, Effect, Layer, Schema } from "effect"
import { TestClock } from "effect/testing"
import * as NodeJsonSchemaValidator from "../src/NodeJsonSchemaValidator.ts"
import * as NodeMcpHttpClient from "../src/NodeMcpHttpClient.ts"
import * as NodeMcpHttpServer from "../src/NodeMcpHttpServer.ts"
import { mcpHeaders, openSse, send } from "./fixtures/rawHttp.ts"

const VERSION = "2026-07-28"

const meta = (capabilities: Record<string, unknown> = {}) => ({
  "io.modelcontextprotocol/protocolVersion": VERSION,
  "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": capabilities
})

const Greet = McpTool.make("greet", {
  description: "Asks for a name, then greets",
  input: Schema.Struct({}),
  handler: (_, context) =>
    Effect.map(
      context.elicit({ message: "Your name?", schema: Schema.Struct({ name: Schema.String }), inputKey: "name" }),
      (answer) => `Hello, ${answer.action === "accept" ? answer.content.name : "stranger"} (${context.era})`
    )
})

const Query = McpTool.make("query", {
  description: "Runs a query in a region",
  input: Schema.Struct({
    region: Schema.String.annotate(McpTool.header("Region")),
    limit: Schema.optionalKey(Schema.Int.annotate(McpTool.header("Limit"))),
    sql: Schema.String
  }),
  handler: ({ region, sql }) => Effect.succeed(`${sql} @ ${region}`)
})

const makeHang = (started: Deferred.Deferred<void>, interrupted: Deferred.Deferred<void>) =>
  McpTool.make("hang", {
    description: "Reports progress, then waits until cancelled",
    input: Schema.Struct({}),
    handler: (_, context) =>
      Effect.andThen(
        context.reportProgress({ progress: 1, total: 2 }),
        Effect.andThen(Deferred.succeed(started, undefined), Effect.never)
      ).pipe(Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined)))
  })

const serve = (options: NodeMcpHttpServer.Options = {}) =>
  Effect.gen(function*() {
    const started = yield* Deferred.make<void>()
    const interrupted = yield* Deferred.make<void>()
    const server = yield* McpServer.make({ name: "dual", version: "2.0.0" })
    for (const tool of [Greet, Query, makeHang(started, interrupted)]) yield* server.register(tool)
    const context = yield* Layer.build(
      NodeMcpHttpServer.layer(options).pipe(Layer.provide(Layer.succeed(McpServer.McpServer, server)))
    )
    const url = yield* NodeMcpHttpServer.url().pipe(Effect.provideContext(context))
    return { server, url, started, interrupted }
  })

/** A modern POST: the standard headers from the body, `extra` laid over them. */
const post = (
  url: string,
  id: number,
  method: string,
  params: Record<string, unknown>,
  extra: Record<string, string> = {}
) => {
  const name = (params.name ?? params.uri) as string | undefined
  return Effect.map(
    send(url, {
      headers: mcpHeaders({ version: VERSION }, {
        "mcp-method": method,
        ...(name === undefined ? {} : { "mcp-name": name }),
        ...extra
      }),
      body: { jsonrpc: "2.0", id, method, params: { _meta: meta(), ...params } }
    }),
    (reply) => ({ ...reply, json: reply.body === "" ? undefined : JSON.parse(reply.body) })
  )
}

describe("NodeMcpHttpServer, 2026-07-28 requests", () => {
  it.live("are stateless: JSON answers, no session id; the legacy handshake still opens sessions", () =>
    Effect.gen(function*() {
      const { url } = yield* serve()
      const listed = yield* post(url, 1, "tools/list", {})
      assert.strictEqual(listed.status, 200)
      assert.strictEqual(listed.headers["content-type"], "application/json")
      assert.isUndefined(listed.headers["mcp-session-id"])
      assert.deepStrictEqual(listed.json.result.tools.map((tool: { name: string }) => tool.name), [
        "greet",
        "hang",
        "query"
      ])
      const legacy = yield* send(url, {
        headers: mcpHeaders(),
        body: {
          jsonrpc: "2.0",
          id: 0,
          method: "initialize",
          params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "old", version: "1" } }
        }
      })
      assert.isString(legacy.headers["mcp-session-id"])
    }).pipe(Effect.scoped))

  it.live("the modern errors and their statuses: -32020 400, -32022 400, -32602 400, -32601 404", () =>
    Effect.gen(function*() {
      const { url } = yield* serve()
      const wrongName = yield* post(url, 2, "tools/call", { name: "greet", arguments: {} }, { "mcp-name": "other" })
      assert.deepStrictEqual([wrongName.status, wrongName.json.error.code, wrongName.json.id], [400, -32020, 2])
      assert.include(wrongName.json.error.message, "Mcp-Name")
      const noMethod = yield* send(url, {
        headers: mcpHeaders({ version: VERSION }),
        body: { jsonrpc: "2.0", id: 3, method: "tools/list", params: { _meta: meta() } }
      })
      assert.deepStrictEqual([noMethod.status, JSON.parse(noMethod.body).error.code], [400, -32020])
      const versionMismatch = yield* post(url, 4, "tools/list", {}, { "mcp-protocol-version": "2025-11-25" })
      assert.deepStrictEqual([versionMismatch.status, versionMismatch.json.error.code], [400, -32020])
      const future = yield* send(url, {
        headers: mcpHeaders({ version: "2099-01-01" }, { "mcp-method": "tools/list" }),
        body: {
          jsonrpc: "2.0",
          id: 5,
          method: "tools/list",
          params: { _meta: { ...meta(), "io.modelcontextprotocol/protocolVersion": "2099-01-01" } }
        }
      })
      const futureError = JSON.parse(future.body).error
      assert.deepStrictEqual([future.status, futureError.code, futureError.data.requested], [400, -32022, "2099-01-01"])
      assert.include(futureError.data.supported, VERSION)
      const bare = yield* send(url, {
        headers: mcpHeaders({ version: VERSION }, { "mcp-method": "server/discover" }),
        body: { jsonrpc: "2.0", id: 6, method: "server/discover", params: {} }
      })
      assert.deepStrictEqual([bare.status, JSON.parse(bare.body).error.code], [400, -32602])
      const unknown = yield* post(url, 7, "nothing/here", {})
      assert.deepStrictEqual([unknown.status, unknown.json.error.code], [404, -32601])
      const removed = yield* post(url, 8, "ping", {})
      assert.deepStrictEqual([removed.status, removed.json.error.code], [404, -32601])
      const capability = yield* post(url, 9, "tools/call", { name: "greet", arguments: {} })
      assert.deepStrictEqual([capability.status, capability.json.error.code], [400, -32021])
      assert.deepStrictEqual(capability.json.error.data, { requiredCapabilities: { elicitation: {} } })
    }).pipe(Effect.scoped))

  it.live("Mcp-Param-* headers of x-mcp-header parameters must match the arguments", () =>
    Effect.gen(function*() {
      const { url } = yield* serve()
      const listed = yield* post(url, 1, "tools/list", {})
      const query = listed.json.result.tools.find((tool: { name: string }) => tool.name === "query")
      assert.strictEqual(query.inputSchema.properties.region["x-mcp-header"], "Region")
      const call = (args: Record<string, unknown>, headers: Record<string, string>) =>
        post(url, 2, "tools/call", { name: "query", arguments: args }, headers)
      const ok = yield* call({ region: "eu-west", limit: 10, sql: "select 1" }, {
        "mcp-param-region": "eu-west",
        "mcp-param-limit": "10"
      })
      assert.strictEqual(ok.json.result.content[0].text, "select 1 @ eu-west")
      const encoded = yield* call({ region: "Zürich", sql: "s" }, {
        "mcp-param-region": `=?base64?${Buffer.from("Zürich").toString("base64")}?=`
      })
      assert.strictEqual(encoded.json.result.content[0].text, "s @ Zürich")
      const missing = yield* call({ region: "eu-west", sql: "s" }, {})
      assert.deepStrictEqual([missing.status, missing.json.error.code], [400, -32020])
      const mismatch = yield* call({ region: "eu-west", sql: "s" }, { "mcp-param-region": "us-east" })
      assert.deepStrictEqual([mismatch.status, mismatch.json.error.code], [400, -32020])
      const number = yield* call({ region: "r", limit: 10, sql: "s" }, {
        "mcp-param-region": "r",
        "mcp-param-limit": "11"
      })
      assert.deepStrictEqual([number.status, number.json.error.code], [400, -32020])
    }).pipe(Effect.scoped))

  it.live("closing a request's stream cancels its handler (its fiber is interrupted)", () =>
    Effect.gen(function*() {
      const { url, started, interrupted } = yield* serve()
      const stream = yield* openSse(url, {
        method: "POST",
        headers: mcpHeaders({ version: VERSION }, { "mcp-method": "tools/call", "mcp-name": "hang" }),
        body: {
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: "hang", arguments: {}, _meta: { ...meta(), progressToken: "p" } }
        }
      })
      assert.strictEqual(stream.headers["content-type"], "text/event-stream")
      const progress = JSON.parse((yield* stream.next)!.data)
      assert.strictEqual(progress.method, "notifications/progress")
      yield* Deferred.await(started)
      yield* stream.drop
      yield* Deferred.await(interrupted).pipe(Effect.timeout("5 seconds"))
    }).pipe(Effect.scoped))

  it.effect("a listen stream: acknowledged, changes as asked, keep-alive comments while quiet (TestClock)", () =>
    Effect.gen(function*() {
      const { server, url } = yield* serve({ sseKeepAlive: "10 seconds" })
      const stream = yield* openSse(url, {
        method: "POST",
        headers: mcpHeaders({ version: VERSION }, { "mcp-method": "subscriptions/listen" }),
        body: {
          jsonrpc: "2.0",
          id: "l",
          method: "subscriptions/listen",
          params: { _meta: meta(), notifications: { toolsListChanged: true } }
        }
      })
      assert.strictEqual(JSON.parse((yield* stream.next)!.data).method, "notifications/subscriptions/acknowledged")
      yield* server.unregister(Greet)
      const changed = JSON.parse((yield* stream.next)!.data)
      assert.strictEqual(changed.method, "notifications/tools/list_changed")
      assert.strictEqual(changed.params._meta["io.modelcontextprotocol/subscriptionId"], "l")
      assert.strictEqual(yield* stream.comments, 0)
      yield* TestClock.adjust("25 seconds")
      // the comments cross a real socket: wait for them, boundedly
      const seen = yield* stream.comments.pipe(
        Effect.repeat({ until: (count) => count >= 2, times: 200 }),
        Effect.andThen(stream.comments)
      )
      assert.strictEqual(seen, 2)
      yield* stream.drop
    }).pipe(Effect.scoped))
})

describe("NodeMcpHttpServer and our client, 2026-07-28", () => {
  it.live("our client's modern requests pass the server's header checks: Mcp-Name, Mcp-Param-* (plain and Base64)", () =>
    Effect.gen(function*() {
      const { url } = yield* serve()
      const client = yield* Layer.build(
        McpClient.layer({
          clientInfo: { name: "ours", version: "1" },
          elicitation: { form: () => Effect.succeed({ action: "accept" as const, content: { name: "Io" } }) }
        }).pipe(Layer.provide([NodeMcpHttpClient.layer({ url }), NodeJsonSchemaValidator.layer]))
      ).pipe(Effect.map(Context.get(McpClient.McpClient)))
      assert.strictEqual(client.era, "modern")
      const plain = yield* client.callTool("query", { region: "eu-west", limit: 3, sql: "select 1" })
      assert.strictEqual((plain.content[0] as { text: string }).text, "select 1 @ eu-west")
      const encoded = yield* client.callTool("query", { region: " Zürich ", sql: "s" })
      assert.strictEqual((encoded.content[0] as { text: string }).text, "s @  Zürich ")
      const greeted = yield* client.callTool("greet", {})
      assert.strictEqual((greeted.content[0] as { text: string }).text, "Hello, Io (modern)")
    }).pipe(Effect.scoped))
})

describe("NodeMcpHttpServer, both eras on one endpoint", () => {
  it.live("the same tool: an input-required round for a modern request, a request to a legacy client", () =>
    Effect.gen(function*() {
      const { url } = yield* serve()
      const first = yield* post(url, 1, "tools/call", {
        name: "greet",
        arguments: {},
        _meta: meta({ elicitation: {} })
      })
      assert.strictEqual(first.json.result.resultType, "input_required")
      assert.deepStrictEqual(Object.keys(first.json.result.inputRequests), ["name"])
      const done = yield* post(url, 2, "tools/call", {
        name: "greet",
        arguments: {},
        _meta: meta({ elicitation: {} }),
        inputResponses: { name: { action: "accept", content: { name: "Mo" } } },
        requestState: first.json.result.requestState
      })
      assert.strictEqual(done.json.result.content[0].text, "Hello, Mo (modern)")
      const client = yield* Layer.build(
        McpClient.layer({
          clientInfo: { name: "legacy", version: "1" },
          era: "legacy",
          elicitation: { form: () => Effect.succeed({ action: "accept" as const, content: { name: "Lu" } }) }
        }).pipe(Layer.provide([NodeMcpHttpClient.layer({ url }), NodeJsonSchemaValidator.layer]))
      ).pipe(Effect.map(Context.get(McpClient.McpClient)))
      const legacy = yield* client.callTool("greet", {})
      assert.strictEqual((legacy.content[0] as { text: string }).text, "Hello, Lu (legacy)")
    }).pipe(Effect.scoped))
})
