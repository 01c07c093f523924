/**
 * A protected gateway on real sockets (127.0.0.1, ephemeral ports): its
 * Streamable HTTP endpoint checks JWT access tokens (`NodeMcpJwtVerifier`
 * against the key set of the in-process authorization server of
 * `fixtures/authServer.ts`), and its servers behind are HTTP servers of ours
 * that record the `Authorization` header of every request they receive.
 *
 * - The front client's token stays in front: each server behind sees only
 *   the credential configured for it (`McpGroup.http(url, { headers })`).
 * - A request without a token (or with a token for another resource) is
 *   refused with 401 by the gateway.
 * - A policy (`McpGateway.scopesPolicy`, or one reading the subject) gives
 *   two principals different tool lists through one gateway; a tool hidden
 *   from a principal is, to its calls, an unknown tool.
 */
import { McpGateway, McpGroup, McpHttpServer, McpSchema, McpServer, McpTool } from "@effect-mcp/core"
import type { McpClient, McpError } from "@effect-mcp/core"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer, Schema } from "effect"
import * as Headers from "effect/http/Headers"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServer from "effect/http/HttpServer"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import { createServer } from "node:http"
import * as NodeMcpGateway from "../src/NodeMcpGateway.ts"
import * as NodeMcpHttpClient from "../src/NodeMcpHttpClient.ts"
import * as NodeMcpHttpServer from "../src/NodeMcpHttpServer.ts"
import * as NodeMcpJwtVerifier from "../src/NodeMcpJwtVerifier.ts"
import { type AuthServer, startAuthServer } from "./fixtures/authServer.ts"
import { initialize, mcpHeaders, send } from "./fixtures/rawHttp.ts"
import { connectOver, textOf } from "./utils/client.ts"

// -----------------------------------------------------------------------------
// the servers behind
// -----------------------------------------------------------------------------

const Lookup = McpTool.make("lookup", {
  description: "Looks something up",
  input: Schema.Struct({ q: Schema.String }),
  handler: ({ q }) => Effect.succeed(`found ${q}`)
})

const Launch = McpTool.make("launch", {
  description: "Launches something",
  input: Schema.Struct({}),
  handler: () => Effect.succeed("launched")
})

/** A server behind: its URL, and the `Authorization` header of every HTTP request it received (`null`: none). */
interface Upstream {
  readonly url: string
  readonly authorizations: Array<string | null>
}

/**
 * An HTTP server of ours (`McpHttpServer.layerRoute` in an `HttpRouter` app
 * on `node:http`, 127.0.0.1) with `tools`, recording every request's
 * `Authorization` header, for the scope.
 */
const startUpstream = (name: string, ...tools: ReadonlyArray<McpServer.Definition<never>>) =>
  Effect.gen(function*() {
    const authorizations: Array<string | null> = []
    const record = <A, E, R>(app: Effect.Effect<A, E, R>) =>
      Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
        authorizations.push(request.headers.authorization ?? null)
        return app
      })
    const context = yield* Layer.build(
      HttpRouter.serve(McpHttpServer.layerRoute(), { disableLogger: true, disableListenLog: true, middleware: record })
        .pipe(
          Layer.provideMerge(
            NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1", disablePreemptiveShutdown: true })
          ),
          Layer.provide(McpServer.layer({ name, version: "1.0.0" }, ...tools)),
          Layer.orDie
        )
    )
    const url = HttpServer.formatAddress(Context.get(context, HttpServer.HttpServer).address) + "/mcp"
    return { url, authorizations } satisfies Upstream
  })

// -----------------------------------------------------------------------------
// the gateway, protected
// -----------------------------------------------------------------------------

/**
 * The gateway over `servers`, served over Streamable HTTP on 127.0.0.1 and
 * protected: tokens of `as`, checked by `NodeMcpJwtVerifier` against its key
 * set (the resource server checks the audience: the gateway's URL).
 */
const serveGateway = (as: AuthServer, options: NodeMcpGateway.Options) =>
  Effect.gen(function*() {
    const verify = NodeMcpJwtVerifier.make({ jwksUrl: as.endpoints.jwks, issuer: as.issuer, typ: "at+jwt" })
    const context = yield* Layer.build(
      NodeMcpHttpServer.layer({ auth: { authorizationServers: [as.issuer], verify } }).pipe(
        Layer.provide(NodeMcpGateway.layer(options))
      )
    )
    return yield* NodeMcpHttpServer.url().pipe(Effect.provideContext(context))
  })

/** Our client at the gateway with `token` as its bearer token, speaking `era`. */
const connectWith = (url: string, token: string, era: McpClient.Options["era"] = "auto") =>
  connectOver(NodeMcpHttpClient.layer({ url, headers: Headers.fromInput({ authorization: `Bearer ${token}` }) }), {
    era
  })

/** A `tools/call` sent as it is (no check against the cached list): its failure. */
const refusal = (client: McpClient.Client, name: string, args: Record<string, unknown> = {}) =>
  client.session.request(McpSchema.CallTool, { name, arguments: args }).pipe(
    Effect.flip,
    Effect.map((error: McpError.McpError) => {
      assert.strictEqual(error.reason._tag, "ProtocolError", error.message)
      const reason = error.reason as McpError.ProtocolError
      return { code: reason.code, description: reason.description }
    })
  )

const toolNames = (client: McpClient.Client) =>
  Effect.map(client.listTools(), (result) => result.tools.map((tool) => tool.name).sort())

// -----------------------------------------------------------------------------
// the tests
// -----------------------------------------------------------------------------

describe("protected gateway: credentials in front and behind", () => {
  it.live("the front client's token never reaches a server behind: each sees only its own configured credential", () =>
    Effect.gen(function*() {
      const as = yield* startAuthServer()
      const catalog = yield* startUpstream("catalog", Lookup)
      const rockets = yield* startUpstream("rockets", Launch)
      const url = yield* serveGateway(as, {
        servers: {
          catalog: McpGroup.http(catalog.url, { headers: { Authorization: "Bearer upstream-catalog" } }),
          rockets: McpGroup.http(rockets.url, { headers: { Authorization: "Bearer upstream-rockets" } })
        }
      })
      const token = yield* Effect.promise(() =>
        as.issueToken({ sub: "alice", client_id: "front-client", aud: url, scope: "mcp:use" })
      )
      for (const era of ["modern", "legacy"] as const) {
        const client = yield* connectWith(url, token, era)
        assert.strictEqual(client.era, era)
        assert.deepStrictEqual(yield* toolNames(client), ["catalog__lookup", "rockets__launch"])
        const before = [catalog.authorizations.length, rockets.authorizations.length]
        assert.strictEqual(textOf(yield* client.callTool("catalog__lookup", { q: "moon" })), "found moon")
        assert.strictEqual(textOf(yield* client.callTool("rockets__launch", {})), "launched")
        // the calls went behind, each with its server's credential
        assert.isAbove(catalog.authorizations.length, before[0]!)
        assert.isAbove(rockets.authorizations.length, before[1]!)
        // a call that asks for logs goes through a connection of the gateway's own with the server: the same credential
        yield* client.setLoggingLevel("info")
        const opened = catalog.authorizations.length
        assert.strictEqual(textOf(yield* client.callTool("catalog__lookup", { q: "logs" })), "found logs")
        assert.isAbove(catalog.authorizations.length, opened)
      }
      assert.deepStrictEqual([...new Set(catalog.authorizations)], ["Bearer upstream-catalog"])
      assert.deepStrictEqual([...new Set(rockets.authorizations)], ["Bearer upstream-rockets"])
      for (const seen of [...catalog.authorizations, ...rockets.authorizations]) {
        assert.notInclude(seen ?? "", token)
      }
    }))

  it.live("a request without a token, or with a token for another resource, is refused 401", () =>
    Effect.gen(function*() {
      const as = yield* startAuthServer()
      const catalog = yield* startUpstream("catalog", Lookup)
      const url = yield* serveGateway(as, {
        servers: { catalog: McpGroup.http(catalog.url, { headers: { Authorization: "Bearer upstream-catalog" } }) }
      })

      const anonymous = yield* send(url, { headers: mcpHeaders(), body: initialize })
      assert.strictEqual(anonymous.status, 401)
      assert.match(String(anonymous.headers["www-authenticate"]), /^Bearer /)
      assert.include(String(anonymous.headers["www-authenticate"]), "resource_metadata=")

      const modern = yield* send(url, {
        headers: mcpHeaders({ version: "2026-07-28" }),
        body: {
          jsonrpc: "2.0",
          id: 1,
          method: "tools/list",
          params: {
            _meta: {
              "io.modelcontextprotocol/protocolVersion": "2026-07-28",
              "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
              "io.modelcontextprotocol/clientCapabilities": {}
            }
          }
        }
      })
      assert.strictEqual(modern.status, 401)

      const elsewhere = yield* Effect.promise(() =>
        as.issueToken({ sub: "alice", client_id: "front-client", aud: "http://127.0.0.1:1/mcp", scope: "mcp:use" })
      )
      const wrongAudience = yield* send(url, { headers: mcpHeaders({ token: elsewhere }), body: initialize })
      assert.strictEqual(wrongAudience.status, 401)
      assert.include(String(wrongAudience.headers["www-authenticate"]), "invalid_token")

      // our client without a token cannot connect either
      const failed = yield* Effect.flip(connectOver(NodeMcpHttpClient.layer({ url }), { era: "modern" }))
      assert.include(failed.message, "401")

      // a valid token is served
      const token = yield* Effect.promise(() =>
        as.issueToken({ sub: "alice", client_id: "front-client", aud: url, scope: "mcp:use" })
      )
      const client = yield* connectWith(url, token)
      assert.strictEqual(textOf(yield* client.callTool("lookup", { q: "sun" })), "found sun")
      // what the server behind received (the group's own traffic and the call) carried its credential only
      assert.deepStrictEqual([...new Set(catalog.authorizations)], ["Bearer upstream-catalog"])
    }))
})

describe("protected gateway: a policy per principal", () => {
  for (const era of ["modern", "legacy"] as const) {
    it.live(`scopesPolicy (${era} client): A sees the tools of both servers, B only the unrestricted one; B's call of the other is an unknown tool`, () =>
      Effect.gen(function*() {
        const as = yield* startAuthServer()
        const catalog = yield* startUpstream("catalog", Lookup)
        const rockets = yield* startUpstream("rockets", Launch)
        const url = yield* serveGateway(as, {
          servers: { catalog: McpGroup.http(catalog.url), rockets: McpGroup.http(rockets.url) },
          policy: McpGateway.scopesPolicy({ rockets: ["rockets:launch"] })
        })
        const tokenA = yield* Effect.promise(() =>
          as.issueToken({ sub: "alice", client_id: "front-a", aud: url, scope: "mcp:use rockets:launch" })
        )
        const tokenB = yield* Effect.promise(() =>
          as.issueToken({ sub: "bob", client_id: "front-b", aud: url, scope: "mcp:use" })
        )
        const a = yield* connectWith(url, tokenA, era)
        const b = yield* connectWith(url, tokenB, era)

        assert.deepStrictEqual(yield* toolNames(a), ["catalog__lookup", "rockets__launch"])
        assert.deepStrictEqual(yield* toolNames(b), ["catalog__lookup"])

        assert.strictEqual(textOf(yield* a.callTool("rockets__launch", {})), "launched")
        assert.strictEqual(textOf(yield* b.callTool("catalog__lookup", { q: "mars" })), "found mars")

        const hidden = yield* refusal(b, "rockets__launch")
        assert.deepStrictEqual(hidden, { code: -32602, description: "Unknown tool: rockets__launch" })
        // exactly what a tool that does not exist gets
        const unknown = yield* refusal(b, "rockets__nothing")
        assert.deepStrictEqual(unknown, { code: -32602, description: "Unknown tool: rockets__nothing" })
        // and A is still served
        assert.strictEqual(textOf(yield* a.callTool("rockets__launch", {})), "launched")
      }))
  }

  it.live("a custom policy reading the subject: two tools of one server, one hidden from bob", () =>
    Effect.gen(function*() {
      const as = yield* startAuthServer()
      const both = yield* startUpstream("both", Lookup, Launch)
      const url = yield* serveGateway(as, {
        servers: { both: McpGroup.http(both.url) },
        policy: (component, { auth }) => component.upstreamName !== "launch" || auth?.subject === "alice"
      })
      const alice = yield* connectWith(
        url,
        yield* Effect.promise(() => as.issueToken({ sub: "alice", aud: url, scope: "mcp:use" }))
      )
      const bob = yield* connectWith(
        url,
        yield* Effect.promise(() => as.issueToken({ sub: "bob", aud: url, scope: "mcp:use" }))
      )
      assert.deepStrictEqual(yield* toolNames(alice), ["launch", "lookup"])
      assert.deepStrictEqual(yield* toolNames(bob), ["lookup"])
      assert.deepStrictEqual(yield* refusal(bob, "launch"), { code: -32602, description: "Unknown tool: launch" })
      assert.strictEqual(textOf(yield* alice.callTool("launch", {})), "launched")
    }))
})
