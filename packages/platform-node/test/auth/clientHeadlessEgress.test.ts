/**
 * Issue 15, SSRF through the headless authorizer: it requests the
 * authorization endpoint (a URL the authorization server supplies) and each
 * redirect it follows itself, so every hop follows the OAuth client's
 * egress rule (see clientSsrf.test.ts): no further inside the network than
 * the hosts the user named. A loopback, private or link-local host as
 * written is refused before any request; a name, on what it resolves to
 * when connecting. The failure never carries what an internal service said.
 *
 * As in clientSsrf.test.ts, "remote" is declared: the client's `network`
 * seam counts `127.0.0.1` (the MCP server, its authorization server) as
 * public and resolves `.test` names to 127.0.0.1; the "internal" service is
 * reached as `localhost` or through such a name, and records every
 * connection and request: it must record none.
 */
import { McpAuth, type McpError } from "@effect-mcp/core"
import type * as Policy from "@effect-mcp/core/McpOAuthPolicy"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import type * as Scope from "effect/Scope"
import * as Crypto from "node:crypto"
import * as Http from "node:http"
import * as Client from "../../src/internal/oauth/client.ts"
import type * as Egress from "../../src/internal/oauth/egress.ts"
import * as NodeMcpAuthorizer from "../../src/NodeMcpAuthorizer.ts"
import { startAuthServer, startProtectedServer } from "../fixtures/authServer.ts"
import { listenLoopback } from "../fixtures/listen.ts"

interface Internal {
  readonly port: number
  readonly secret: string
  readonly requests: Array<string>
  readonly connections: () => number
}

/** An "internal" service on 127.0.0.1: answers every request with a secret, recording connections and requests. */
const startInternal: Effect.Effect<Internal, never, Scope.Scope> = Effect.gen(function*() {
  const secret = `SECRET-${Crypto.randomBytes(6).toString("hex")}`
  const requests: Array<string> = []
  let connections = 0
  const server = Http.createServer((req, res) => {
    requests.push(req.url ?? "")
    res.writeHead(200, { "content-type": "text/plain" }).end(`${secret}\n`)
  })
  server.on("connection", () => connections++)
  const port = yield* listenLoopback(server)
  return { port, secret, requests, connections: () => connections }
})

/** An authorization endpoint that redirects every request to `location`. */
const startRedirector = (location: () => string) =>
  Effect.gen(function*() {
    const requests: Array<string> = []
    const server = Http.createServer((req, res) => {
      requests.push(req.url ?? "")
      res.writeHead(302, { location: location() }).end()
    })
    const port = yield* listenLoopback(server)
    return { port, requests, url: `http://127.0.0.1:${port}/authorize` }
  })

/** 127.0.0.1 counts as public; `.test` names resolve to 127.0.0.1 (recorded). */
const remoteNetwork = () => {
  const resolved: Array<string> = []
  const network: Egress.Network = {
    hostClass: (host): Policy.HostClass | undefined => host === "127.0.0.1" ? "public" : undefined,
    resolve: (hostname, _family, callback) => {
      resolved.push(hostname)
      if (!hostname.endsWith(".test")) {
        return callback(Object.assign(new Error(`ENOTFOUND ${hostname}`), { code: "ENOTFOUND" }), [])
      }
      callback(null, [{ address: "127.0.0.1", family: 4 }])
    }
  }
  return { network, resolved }
}

/** A sign-in (authorization code flow, headless) of a "remote" MCP server whose AS names `authorizationEndpoint`. */
const signIn = (authorizationEndpoint: string, network: Egress.Network) =>
  Effect.gen(function*() {
    const as = yield* startAuthServer()
    as.config.metadata = { authorization_endpoint: authorizationEndpoint }
    const server = yield* startProtectedServer(as)
    const auth = yield* Client.make(
      { serverUrl: server.url, clientMetadata: { clientName: "headless egress test" } },
      McpAuth.makeMemoryStore(),
      NodeMcpAuthorizer.makeHeadless(),
      network
    )
    const exit = yield* Effect.exit(auth.challenge({
      status: 401,
      url: server.url,
      authorization: undefined,
      bearer: { scheme: "bearer", params: {} }
    }))
    return { exit, as }
  })

const failure = (exit: Exit.Exit<unknown, McpError.McpError>): McpError.McpError => {
  assert.isTrue(Exit.isFailure(exit), "the sign-in fails")
  const found = Exit.isFailure(exit) ? exit.cause.reasons.find((reason) => reason._tag === "Fail") : undefined
  const error = found?._tag === "Fail" ? found.error : undefined
  assert.strictEqual(error?.reason._tag, "AuthError")
  return error!
}

const kindOf = (error: McpError.McpError) => error.reason._tag === "AuthError" ? error.reason.kind : error.reason._tag

describe("issue 15: the headless authorizer's requests follow the OAuth client's egress rule", () => {
  it.live("a redirect of the authorization endpoint to an inward literal host: refused before the request", () =>
    Effect.gen(function*() {
      const internal = yield* startInternal
      const targets = [
        `http://localhost:${internal.port}/latest/meta-data/`,
        `http://[::ffff:127.0.0.1]:${internal.port}/x`,
        "https://169.254.169.254/latest/meta-data/iam/security-credentials/",
        "https://10.0.0.1/admin",
        "https://[fd00::1]/"
      ]
      for (const target of targets) {
        const redirector = yield* startRedirector(() => target)
        const { network } = remoteNetwork()
        const { exit, as } = yield* signIn(redirector.url, network)
        const error = failure(exit)
        assert.deepStrictEqual(internal.requests, [], `${target}: nothing reached the internal service`)
        assert.strictEqual(internal.connections(), 0, target)
        assert.notInclude(error.message, internal.secret)
        assert.strictEqual(kindOf(error), "Refused", `${target}: ${error.message}`)
        assert.include(error.message, "a redirect of the authorization endpoint")
        assert.match(error.message, /loopback|private|link-local/)
        assert.strictEqual(redirector.requests.length, 1, "the authorization endpoint itself was asked")
        assert.strictEqual(as.requestsTo("/token").length, 0)
      }
    }))

  it.live("an authorization endpoint named by a host that resolves to loopback: refused when connecting", () =>
    Effect.gen(function*() {
      const internal = yield* startInternal
      const { network, resolved } = remoteNetwork()
      const { exit } = yield* signIn(`https://internal.test:${internal.port}/authorize`, network)
      const error = failure(exit)
      assert.strictEqual(internal.connections(), 0, "no connection to the internal service")
      assert.deepStrictEqual(internal.requests, [])
      assert.strictEqual(kindOf(error), "Refused", error.message)
      assert.include(error.message, "the authorization URL")
      assert.include(error.message, "internal.test resolves to a loopback address")
      assert.include(resolved, "internal.test")
    }))

  it.live("a redirect to a host that resolves to loopback: refused when connecting", () =>
    Effect.gen(function*() {
      const internal = yield* startInternal
      const redirector = yield* startRedirector(() => `https://internal.test:${internal.port}/latest/meta-data/`)
      const { network, resolved } = remoteNetwork()
      const { exit } = yield* signIn(redirector.url, network)
      const error = failure(exit)
      assert.strictEqual(internal.connections(), 0, "no connection to the internal service")
      assert.strictEqual(kindOf(error), "Refused", error.message)
      assert.include(error.message, "a redirect of the authorization endpoint")
      assert.include(error.message, "internal.test resolves to a loopback address")
      assert.include(resolved, "internal.test")
      assert.notInclude(error.message, internal.secret)
    }))

  it.live("a loopback MCP server (a developer's machine): its AS may redirect through another loopback host", () =>
    Effect.gen(function*() {
      // the authorization endpoint redirects to the AS's own /authorize through `localhost`
      const as = yield* startAuthServer({ issParameter: false })
      let pending = ""
      const redirector = yield* startRedirector(() => `${as.url.replace("127.0.0.1", "localhost")}/authorize${pending}`)
      const hop = Http.createServer((req, res) => {
        pending = new URL(req.url ?? "/", "http://x").search
        res.writeHead(302, { location: `http://127.0.0.1:${redirector.port}/next` }).end()
      })
      const hopPort = yield* listenLoopback(hop)
      as.config.metadata = { authorization_endpoint: `http://127.0.0.1:${hopPort}/authorize` }
      const server = yield* startProtectedServer(as)
      const auth = yield* Client.make(
        { serverUrl: server.url, clientMetadata: { clientName: "headless egress test" } },
        McpAuth.makeMemoryStore(),
        NodeMcpAuthorizer.makeHeadless(),
        undefined
      )
      const exit = yield* Effect.exit(auth.challenge({
        status: 401,
        url: server.url,
        authorization: undefined,
        bearer: { scheme: "bearer", params: {} }
      }))
      assert.isTrue(Exit.isSuccess(exit), String(exit))
      assert.strictEqual(as.requestsTo("/token").length, 1)
    }))
})
