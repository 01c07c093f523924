/**
 * McpAuth: `WWW-Authenticate` parsing, canonical resource URLs, and how the
 * HTTP client transports answer a challenge through a `ClientAuth` (against a
 * scripted server behind a fake `HttpClient`: every request is recorded).
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { HttpClient, HttpClientResponse } from "effect/http"
import * as McpAuth from "../src/McpAuth.ts"
import * as McpClientSession from "../src/McpClientSession.ts"
import * as McpError from "../src/McpError.ts"
import * as McpHttpClient from "../src/McpHttpClient.ts"
import * as McpSchema from "../src/McpSchema.ts"

describe("McpAuth.parseWwwAuthenticate", () => {
  it("reads quoted and bare parameters, several challenges, escapes and token68", () => {
    assert.deepStrictEqual(
      McpAuth.parseWwwAuthenticate(
        `Bearer resource_metadata="http://127.0.0.1:1/.well-known/oauth-protected-resource/mcp", scope="a b"`
      ),
      [{
        scheme: "bearer",
        params: { resource_metadata: "http://127.0.0.1:1/.well-known/oauth-protected-resource/mcp", scope: "a b" }
      }]
    )
    assert.deepStrictEqual(
      McpAuth.parseWwwAuthenticate(`Basic realm="r", Bearer Error=insufficient_scope, error_description="say \\"x\\""`),
      [
        { scheme: "basic", params: { realm: "r" } },
        { scheme: "bearer", params: { error: "insufficient_scope", error_description: `say "x"` } }
      ]
    )
    assert.deepStrictEqual(McpAuth.parseWwwAuthenticate(`Bearer resource_metadata=http://h/p?q=1`), [
      { scheme: "bearer", params: { resource_metadata: "http://h/p?q=1" } }
    ])
    assert.deepStrictEqual(McpAuth.parseWwwAuthenticate(`Negotiate abc==, Bearer`), [
      { scheme: "negotiate", params: { "": "abc==" } },
      { scheme: "bearer", params: {} }
    ])
    assert.deepStrictEqual(McpAuth.parseWwwAuthenticate(` ,, `), [])
  })

  it("finds the bearer challenge and tells which refusals a client may answer", () => {
    const bearer = McpAuth.bearerChallenge(`Basic realm="x", Bearer error="insufficient_scope", scope="s"`)
    assert.strictEqual(bearer?.params.scope, "s")
    assert.isTrue(McpAuth.isChallenge(401, undefined))
    assert.isTrue(McpAuth.isChallenge(403, bearer))
    assert.isFalse(McpAuth.isChallenge(403, McpAuth.bearerChallenge(`Bearer error="invalid_token"`)))
    assert.isFalse(McpAuth.isChallenge(403, undefined))
  })
})

describe("McpAuth.canonicalResource", () => {
  it("lower-cases scheme and host, drops the fragment and a bare host's slash, keeps the path", () => {
    assert.strictEqual(McpAuth.canonicalResource("HTTPS://MCP.Example.com/"), "https://mcp.example.com")
    assert.strictEqual(McpAuth.canonicalResource("https://mcp.example.com"), "https://mcp.example.com")
    assert.strictEqual(
      McpAuth.canonicalResource("https://mcp.example.com/Server/mcp#x"),
      "https://mcp.example.com/Server/mcp"
    )
    assert.strictEqual(McpAuth.canonicalResource("http://127.0.0.1:8080/mcp/"), "http://127.0.0.1:8080/mcp/")
  })
})

// -----------------------------------------------------------------------------
// the transport's side of a challenge
// -----------------------------------------------------------------------------

const URL = "http://mcp.test/mcp"

interface Seen {
  readonly method: string
  readonly authorization: string | undefined
  readonly body: any
}

/**
 * A Streamable HTTP server that accepts only `Bearer <accepted>` (401 with a
 * challenge otherwise) and, for `tools/call`, only `Bearer <elevated>` (403
 * insufficient_scope otherwise).
 */
const makeServer = (accepted: ReadonlySet<string>, elevated: ReadonlySet<string>) => {
  const seen: Array<Seen> = []
  const client = HttpClient.make((request) =>
    Effect.sync(() => {
      const body = request.body._tag === "Uint8Array"
        ? JSON.parse(new TextDecoder().decode(request.body.body))
        : undefined
      const authorization = request.headers["authorization"]
      seen.push({ method: request.method, authorization, body })
      const token = authorization?.replace(/^Bearer /, "")
      const reply = (response: Response) => HttpClientResponse.fromWeb(request, response)
      if (token === undefined || !accepted.has(token)) {
        return reply(
          new Response("unauthorized", {
            status: 401,
            headers: {
              "www-authenticate": `Bearer resource_metadata="http://mcp.test/.well-known/oauth-protected-resource/mcp"`
            }
          })
        )
      }
      if (request.method !== "POST") {
        return reply(new Response(null, { status: request.method === "DELETE" ? 200 : 405 }))
      }
      if (body.method === "tools/call" && !elevated.has(token)) {
        return reply(
          new Response("", {
            status: 403,
            headers: { "www-authenticate": `Bearer error="insufficient_scope", scope="tools:call"` }
          })
        )
      }
      if (!("id" in body)) return reply(new Response(null, { status: 202 }))
      const result = body.method === "initialize"
        ? {
          protocolVersion: body.params.protocolVersion,
          capabilities: { tools: {} },
          serverInfo: { name: "s", version: "1" }
        }
        : body.method === "tools/call"
        ? { content: [{ type: "text", text: "ok" }] }
        : {}
      return reply(
        new Response(JSON.stringify({ jsonrpc: "2.0", id: body.id, result }), {
          status: 200,
          headers: { "content-type": "application/json", "mcp-session-id": "s1" }
        })
      )
    })
  )
  return { seen, layer: Layer.succeed(HttpClient.HttpClient, client) }
}

/** A client auth that hands out the tokens of `grants` one challenge at a time, recording the challenges. */
const makeAuth = (grants: ReadonlyArray<string>) => {
  const challenges: Array<McpAuth.Challenge> = []
  let current: string | undefined
  const auth: McpAuth.ClientAuth = {
    authorization: () => Effect.sync(() => current === undefined ? undefined : `Bearer ${current}`),
    challenge: (challenge) =>
      Effect.suspend(() => {
        challenges.push(challenge)
        const next = grants[challenges.length - 1]
        if (next === undefined) return Effect.fail(McpAuth.unauthorizedError(challenge))
        current = next
        return Effect.void
      })
  }
  return { auth, challenges }
}

const session = (server: ReturnType<typeof makeServer>, auth: McpAuth.ClientAuth) =>
  Effect.map(
    Layer.build(
      McpClientSession.layer({ clientInfo: { name: "c", version: "1" }, era: "legacy" }).pipe(
        Layer.provide(McpHttpClient.layer({ url: URL, auth, listen: false })),
        Layer.provide(server.layer)
      )
    ),
    (context) => Context.get(context, McpClientSession.McpClientSession)
  )

describe("McpHttpClient with a ClientAuth", () => {
  it.effect("answers a 401 through the challenge and resends the request with the new token", () =>
    Effect.gen(function*() {
      const server = makeServer(new Set(["t1"]), new Set())
      const { auth, challenges } = makeAuth(["t1"])
      yield* Effect.scoped(session(server, auth))
      assert.strictEqual(challenges.length, 1)
      assert.strictEqual(challenges[0]!.status, 401)
      assert.strictEqual(challenges[0]!.url, URL)
      assert.isUndefined(challenges[0]!.authorization)
      assert.strictEqual(
        challenges[0]!.bearer?.params.resource_metadata,
        "http://mcp.test/.well-known/oauth-protected-resource/mcp"
      )
      const posts = server.seen.filter((s) => s.method === "POST")
      assert.deepStrictEqual(posts.map((s) => [s.body.method, s.authorization]), [
        ["initialize", undefined],
        ["initialize", "Bearer t1"],
        ["notifications/initialized", "Bearer t1"]
      ])
    }))

  it.effect("steps up on 403 insufficient_scope, passing the refused token along", () =>
    Effect.gen(function*() {
      const server = makeServer(new Set(["t1", "t2"]), new Set(["t2"]))
      const { auth, challenges } = makeAuth(["t1", "t2"])
      const result = yield* Effect.scoped(Effect.flatMap(
        session(server, auth),
        (client) => client.request(McpSchema.CallTool, { name: "x", arguments: {} })
      ))
      assert.deepStrictEqual((result as any).content, [{ type: "text", text: "ok" }])
      assert.deepStrictEqual(challenges.map((c) => [c.status, c.authorization, c.bearer?.params.scope]), [
        [401, undefined, undefined],
        [403, "Bearer t1", "tools:call"]
      ])
    }))

  it.effect("fails with a typed AuthError when the challenge cannot be answered", () =>
    Effect.gen(function*() {
      const server = makeServer(new Set(["t1"]), new Set())
      const { auth } = makeAuth([])
      const error = yield* Effect.flip(Effect.scoped(session(server, auth)))
      assert.isTrue(McpError.isMcpError(error))
      const reason = (error as McpError.McpError).reason
      assert.strictEqual(reason._tag, "AuthError")
      assert.strictEqual((reason as McpError.AuthError).kind, "Unauthorized")
      assert.strictEqual((reason as McpError.AuthError).status, 401)
    }))

  it.effect("gives up after maxAttempts challenges for one request", () =>
    Effect.gen(function*() {
      // every challenge "succeeds" but the server never accepts the token
      const server = makeServer(new Set(), new Set())
      let challenged = 0
      const auth: McpAuth.ClientAuth = {
        authorization: () => Effect.succeed("Bearer nope"),
        challenge: () => Effect.sync(() => void challenged++),
        maxAttempts: 2
      }
      const error = yield* Effect.flip(Effect.scoped(session(server, auth)))
      assert.strictEqual(challenged, 2)
      assert.strictEqual(server.seen.filter((s) => s.method === "POST").length, 3)
      assert.strictEqual((error as McpError.McpError).reason._tag, "AuthError")
    }))

  it.effect("McpAuth.bearer sends a fixed token and turns a refusal into an AuthError", () =>
    Effect.gen(function*() {
      const accepted = makeServer(new Set(["k"]), new Set())
      yield* Effect.scoped(session(accepted, McpAuth.bearer("k")))
      assert.isTrue(accepted.seen.every((s) => s.authorization === "Bearer k"))
      const refused = makeServer(new Set(), new Set())
      const error = yield* Effect.flip(Effect.scoped(session(refused, McpAuth.bearer("k"))))
      assert.strictEqual((error as McpError.McpError).reason._tag, "AuthError")
      assert.strictEqual(refused.seen.length, 1)
    }))
})
