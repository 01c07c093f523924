/**
 * Issue 15, finding 2: SSRF through OAuth discovery. A remote MCP server
 * names the URLs the client fetches (`resource_metadata` in its challenge,
 * `authorization_servers` in its protected resource metadata, the endpoints
 * of the authorization server metadata): it may not send the client to a
 * loopback, private or link-local address (only a loopback MCP server may:
 * a developer's machine), neither as written (IP literals, `localhost`) nor
 * through a name resolving there (checked on the addresses connected to);
 * and a failure says what was expected, never what answered.
 *
 * Only loopback is available here, so "remote" is declared: the client's
 * internal `network` seam says which hosts count as public (`127.0.0.1`, or
 * names such as `mcp.test`) and resolves the `.test` names to 127.0.0.1. An
 * "internal" service records every request: it must record none.
 */
import { McpAuth, McpClient, type McpError } from "@effect-mcp/core"
import * as Policy from "@effect-mcp/core/McpOAuthPolicy"
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer } from "effect"
import type * as Scope from "effect/Scope"
import * as Crypto from "node:crypto"
import * as Http from "node:http"
import * as Client from "../../src/internal/oauth/client.ts"
import type * as Egress from "../../src/internal/oauth/egress.ts"
import * as NodeJsonSchemaValidator from "../../src/NodeJsonSchemaValidator.ts"
import * as NodeMcpAuthorizer from "../../src/NodeMcpAuthorizer.ts"
import * as NodeMcpHttpClient from "../../src/NodeMcpHttpClient.ts"
import type * as NodeMcpOAuth from "../../src/NodeMcpOAuth.ts"
import { startAuthServer, startProtectedServer } from "../fixtures/authServer.ts"
import { listenLoopback } from "../fixtures/listen.ts"

// -----------------------------------------------------------------------------
// fixtures
// -----------------------------------------------------------------------------

interface Recorder {
  readonly port: number
  readonly requests: Array<{ readonly path: string; readonly host: string | undefined }>
}

/** A node:http server on 127.0.0.1 that records every request and answers with `handler`. */
const startRecorder = (
  handler: (url: URL, res: Http.ServerResponse) => void
): Effect.Effect<Recorder, never, Scope.Scope> =>
  Effect.gen(function*() {
    const requests: Array<{ readonly path: string; readonly host: string | undefined }> = []
    const server = Http.createServer((req, res) => {
      requests.push({ path: req.url ?? "", host: req.headers.host })
      handler(new URL(req.url ?? "/", "http://recorder"), res)
    })
    const port = yield* listenLoopback(server)
    return { port, requests }
  })

/** An "internal" service: answers every request with a secret (text, or a JSON document holding it). */
const startInternal = (secret: string, json?: Record<string, unknown>) =>
  startRecorder((_url, res) => {
    if (json === undefined) res.writeHead(200, { "content-type": "text/plain" }).end(`${secret}\n`)
    else res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(json))
  })

const newSecret = () => `SECRET-${Crypto.randomBytes(6).toString("hex")}`

/** The network of a test: `.test` names resolve to 127.0.0.1 (recorded); `publicHosts` count as public. */
const testNetwork = (publicHosts: ReadonlyArray<string>, answers: Record<string, ReadonlyArray<string>> = {}) => {
  const resolved: Array<string> = []
  const network: Egress.Network = {
    hostClass: (host): Policy.HostClass | undefined => publicHosts.includes(host) ? "public" : undefined,
    resolve: (hostname, _family, callback) => {
      resolved.push(hostname)
      const addresses = answers[hostname] ?? (hostname.endsWith(".test") ? ["127.0.0.1"] : undefined)
      if (addresses === undefined) {
        return callback(Object.assign(new Error(`ENOTFOUND ${hostname}`), { code: "ENOTFOUND" }), [])
      }
      callback(null, addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 })))
    }
  }
  return { network, resolved }
}

/** The OAuth client (its `ClientAuth`) with a test network. */
const makeAuth = (
  options: Partial<NodeMcpOAuth.Options> & { readonly serverUrl: string },
  network: Egress.Network | undefined,
  store: McpAuth.McpAuthStore["Service"] = McpAuth.makeMemoryStore()
) =>
  Client.make(
    { clientMetadata: { clientName: "ssrf test" }, ...options },
    store,
    NodeMcpAuthorizer.makeHeadless(),
    network
  )

/** A connected McpClient over Streamable HTTP with `auth`. */
const connectWith = (url: string, auth: McpAuth.ClientAuth) =>
  Effect.map(
    Layer.build(
      McpClient.layer({ clientInfo: { name: "ssrf-test", version: "1.0.0" } }).pipe(
        Layer.provide(NodeMcpHttpClient.layer({ url, auth })),
        Layer.provide(NodeJsonSchemaValidator.layer)
      )
    ),
    (context) => Context.get(context, McpClient.McpClient)
  )

const challenge401 = (url: string, resourceMetadata?: string): McpAuth.Challenge => ({
  status: 401,
  url,
  authorization: undefined,
  bearer: { scheme: "bearer", params: resourceMetadata === undefined ? {} : { resource_metadata: resourceMetadata } }
})

const failure = (exit: Exit.Exit<unknown, McpError.McpError>) => {
  assert.isTrue(Exit.isFailure(exit), "the sign-in fails")
  const found = Exit.isFailure(exit) ? exit.cause.reasons.find((reason) => reason._tag === "Fail") : undefined
  const error = found?._tag === "Fail" ? found.error : undefined
  assert.strictEqual(error?.reason._tag, "AuthError")
  return error!
}

const kindOf = (error: McpError.McpError) => error.reason._tag === "AuthError" ? error.reason.kind : error.reason._tag

/** A tiny MCP-server stand-in that serves only its protected resource metadata (at the path-aware URL). */
const startPrmServer = (prm: (port: number) => Record<string, unknown>) =>
  Effect.gen(function*() {
    let port = 0
    const server = yield* startRecorder((url, res) => {
      if (url.pathname === "/.well-known/oauth-protected-resource/mcp") {
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(prm(port)))
      } else res.writeHead(404).end()
    })
    port = server.port
    return server
  })

// -----------------------------------------------------------------------------
// literal addresses
// -----------------------------------------------------------------------------

describe("issue 15 #2: a remote MCP server may not point discovery at loopback, private or link-local addresses", () => {
  it.live("resource_metadata naming a loopback service (localhost): refused, the service sees no request (full flow)", () =>
    Effect.gen(function*() {
      const secret = newSecret()
      const internal = yield* startInternal(secret)
      const as = yield* startAuthServer()
      const server = yield* startProtectedServer(as, {
        front_: { resourceMetadataUrl: `http://localhost:${internal.port}/latest/meta-data` }
      })
      // the MCP server (and its authorization server) are "remote": 127.0.0.1 counts as public here
      const { network } = testNetwork(["127.0.0.1"])
      const auth = yield* makeAuth({ serverUrl: server.url }, network)
      const error = yield* Effect.flip(connectWith(server.url, auth))
      assert.deepStrictEqual(internal.requests, [], "nothing reached the internal service")
      assert.notInclude(error.message, secret)
      assert.strictEqual(kindOf(error), "Refused")
      assert.include(error.message, "loopback")
      assert.strictEqual(as.requestsTo("/register").length, 0)
      assert.strictEqual(as.requestsTo("/token").length, 0)
    }))

  it.live("authorization_servers naming a loopback service: refused before its metadata is asked for", () =>
    Effect.gen(function*() {
      const secret = newSecret()
      const internal = yield* startInternal(secret, { issuer: secret })
      const as = yield* startAuthServer()
      const server = yield* startProtectedServer(as, {
        front_: { prmOverride: { authorization_servers: [`http://localhost:${internal.port}`] } }
      })
      const { network } = testNetwork(["127.0.0.1"])
      const auth = yield* makeAuth({ serverUrl: server.url }, network)
      const error = yield* Effect.flip(connectWith(server.url, auth))
      assert.deepStrictEqual(internal.requests, [], "nothing reached the internal service")
      assert.notInclude(error.message, secret)
      assert.strictEqual(kindOf(error), "Refused")
      assert.include(error.message, "authorization server")
    }))

  it.live("authorization server metadata whose token endpoint is a loopback service: refused, nothing sent there", () =>
    Effect.gen(function*() {
      const internal = yield* startInternal(newSecret())
      const as = yield* startAuthServer({ clients: [{ clientId: "m2m", clientSecret: "m2m-secret" }] })
      as.config.metadata = { token_endpoint: `http://localhost:${internal.port}/token` }
      const server = yield* startProtectedServer(as)
      const { network } = testNetwork(["127.0.0.1"])
      const auth = yield* makeAuth({
        serverUrl: server.url,
        grant: { type: "client_credentials", clientId: "m2m", clientSecret: "m2m-secret" }
      }, network)
      const exit = yield* Effect.exit(auth.challenge(challenge401(server.url)))
      assert.deepStrictEqual(internal.requests, [], "nothing was sent to the internal service")
      const error = failure(exit)
      assert.strictEqual(kindOf(error), "Refused")
      assert.include(error.message, "token endpoint")
    }))

  it.live("every inward literal form in resource_metadata is refused without a connection", () =>
    Effect.gen(function*() {
      const internal = yield* startInternal(newSecret())
      const targets = [
        "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
        "http://[fe80::1]/x",
        "https://10.0.0.1/admin",
        "https://192.168.1.1/",
        "https://[fd00::1]/",
        "https://100.64.0.1/",
        `http://127.0.0.1:${internal.port}/x`,
        `http://127.1:${internal.port}/x`,
        `http://2130706433:${internal.port}/x`,
        `http://0.0.0.0:${internal.port}/x`,
        `http://[::ffff:127.0.0.1]:${internal.port}/x`,
        `http://[::1]:${internal.port}/x`,
        `http://localhost.:${internal.port}/x`,
        `http://sub.localhost:${internal.port}/x`
      ]
      // the server is a name declared public: nothing inward is its own
      const { network } = testNetwork(["mcp.test"])
      const serverUrl = "https://mcp.test/mcp"
      const auth = yield* makeAuth({ serverUrl }, network)
      const exits = yield* Effect.forEach(
        targets,
        (target) => Effect.exit(auth.challenge(challenge401(serverUrl, target)))
      )
      assert.deepStrictEqual(internal.requests, [], "nothing reached the internal service")
      exits.forEach((exit, i) => {
        const error = failure(exit)
        assert.strictEqual(kindOf(error), "Refused", targets[i])
        assert.match(error.message, /loopback|private|link-local|neither https/, targets[i])
      })
    }))

  it.live("a loopback MCP server (a developer's machine) may still use a loopback authorization server", () =>
    Effect.gen(function*() {
      // no RFC 9207 `iss` in the redirect: the fixture would name its 127.0.0.1 issuer there
      const as = yield* startAuthServer({ issParameter: false })
      // the PRM names the AS as http://localhost:<port>: another loopback host than the server's 127.0.0.1
      const server = yield* startProtectedServer(as, {
        front_: { prmOverride: { authorization_servers: [as.url.replace("127.0.0.1", "localhost")] } }
      })
      as.config.metadata = { issuer: as.url.replace("127.0.0.1", "localhost") }
      const auth = yield* makeAuth({ serverUrl: server.url }, undefined)
      const client = yield* connectWith(server.url, auth)
      yield* client.callTool("echo", { text: "ok" })
      assert.strictEqual(as.requestsTo("/token").length, 1)
    }))
})

// -----------------------------------------------------------------------------
// names
// -----------------------------------------------------------------------------

describe("issue 15 #2: a name a remote server gives is checked on what it resolves to, when connecting", () => {
  it.live("resource_metadata naming a host that resolves to loopback: refused, the service sees no request", () =>
    Effect.gen(function*() {
      const secret = newSecret()
      const internal = yield* startInternal(secret)
      const prm = yield* startPrmServer((port) => ({
        resource: `http://mcp.test:${port}/mcp`,
        authorization_servers: []
      }))
      const serverUrl = `http://mcp.test:${prm.port}/mcp`
      const { network, resolved } = testNetwork(["mcp.test"])
      const auth = yield* makeAuth({ serverUrl, allowInsecureRequests: true }, network)
      const error = failure(
        yield* Effect.exit(auth.challenge(challenge401(serverUrl, `http://internal.test:${internal.port}/secret`)))
      )
      assert.strictEqual(kindOf(error), "Refused")
      assert.include(error.message, "internal.test resolves to a loopback address")
      assert.notInclude(error.message, secret)
      assert.include(resolved, "internal.test")
      assert.deepStrictEqual(internal.requests, [])
    }))

  it.live("authorization_servers naming a host that resolves to loopback (or to a public and a private address): refused", () =>
    Effect.gen(function*() {
      const internal = yield* startInternal(newSecret(), { issuer: "x" })
      for (const name of ["internal.test", "mixed.test"]) {
        const prm = yield* startPrmServer((port) => ({
          resource: `http://mcp.test:${port}/mcp`,
          authorization_servers: [`http://${name}:${internal.port}`]
        }))
        const serverUrl = `http://mcp.test:${prm.port}/mcp`
        const { network } = testNetwork(["mcp.test"], { "mixed.test": ["93.184.215.14", "10.1.2.3"] })
        const auth = yield* makeAuth({ serverUrl, allowInsecureRequests: true }, network)
        const error = failure(yield* Effect.exit(auth.challenge(challenge401(serverUrl))))
        assert.strictEqual(kindOf(error), "Refused", name)
        assert.include(error.message, `${name} resolves to a`)
        // the PRM was read from the server itself (trusted, whatever it resolves to)
        assert.deepStrictEqual(prm.requests.map((r) => r.path), ["/.well-known/oauth-protected-resource/mcp"])
      }
      assert.deepStrictEqual(internal.requests, [])
    }))

  it.live("a public authorization server named by a public server is used (the client credentials grant)", () =>
    Effect.gen(function*() {
      const as = yield* startAuthServer({ clients: [{ clientId: "m2m", clientSecret: "m2m-secret" }] })
      const asPort = new URL(as.url).port
      const issuer = `http://as.test:${asPort}`
      as.config.metadata = {
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        registration_endpoint: `${issuer}/register`
      }
      const prm = yield* startPrmServer((port) => ({
        resource: `http://mcp.test:${port}/mcp`,
        authorization_servers: [issuer]
      }))
      const serverUrl = `http://mcp.test:${prm.port}/mcp`
      const { network, resolved } = testNetwork(["mcp.test", "as.test"])
      const auth = yield* makeAuth({
        serverUrl,
        allowInsecureRequests: true,
        grant: { type: "client_credentials", clientId: "m2m", clientSecret: "m2m-secret" }
      }, network)
      yield* auth.challenge(challenge401(serverUrl))
      assert.match((yield* auth.authorization(serverUrl)) ?? "", /^Bearer /)
      assert.strictEqual(as.requestsTo("/token").length, 1)
      assert.strictEqual(as.requestsTo("/token")[0]!.form!.resource, serverUrl)
      assert.includeMembers(resolved, ["mcp.test", "as.test"])
    }))
})

// -----------------------------------------------------------------------------
// what answered is not echoed
// -----------------------------------------------------------------------------

describe("issue 15 #2: a discovery failure says what was expected, not what answered", () => {
  it.live("a protected resource metadata that is no JSON, or names another resource; AS metadata of another issuer", () =>
    Effect.gen(function*() {
      const secret = newSecret()
      const text = yield* startInternal(secret)
      const json = yield* startInternal(secret, { resource: `http://${secret}.example/mcp`, authorization_servers: [] })
      const asLike = yield* startInternal(secret, { issuer: `http://${secret}.example` })
      const prm = yield* startPrmServer((port) => ({
        resource: `http://127.0.0.1:${port}/mcp`,
        authorization_servers: [`http://127.0.0.1:${asLike.port}`]
      }))
      // a loopback server: loopback targets are allowed, so each one is fetched and its answer refused
      const serverUrl = `http://127.0.0.1:${prm.port}/mcp`
      const auth = yield* makeAuth({ serverUrl }, undefined)
      const notJson = failure(
        yield* Effect.exit(auth.challenge(challenge401(serverUrl, `http://127.0.0.1:${text.port}/x`)))
      )
      const otherResource = failure(
        yield* Effect.exit(auth.challenge(challenge401(serverUrl, `http://127.0.0.1:${json.port}/x`)))
      )
      const otherIssuer = failure(yield* Effect.exit(auth.challenge(challenge401(serverUrl))))
      for (const error of [notJson, otherResource, otherIssuer]) assert.notInclude(error.message, secret)
      assert.strictEqual(kindOf(notJson), "Discovery")
      assert.include(notJson.message, "is not a JSON object")
      assert.strictEqual(kindOf(otherResource), "Refused")
      assert.include(otherResource.message, "not the MCP server")
      assert.strictEqual(kindOf(otherIssuer), "Discovery")
      assert.include(otherIssuer.message, "as its issuer")
      assert.strictEqual(text.requests.length, 1)
      assert.strictEqual(json.requests.length, 1)
      assert.isAtLeast(asLike.requests.length, 1)
    }))
})

// -----------------------------------------------------------------------------
// the classification
// -----------------------------------------------------------------------------

describe("issue 15 #2: how hosts are classed (Policy)", () => {
  it("IP literals however written, localhost names; other names are left to resolution", () => {
    const cases: ReadonlyArray<readonly [string, Policy.HostClass | undefined]> = [
      ["127.0.0.1", "loopback"],
      ["127.255.0.9", "loopback"],
      ["0.0.0.0", "loopback"],
      ["[::1]", "loopback"],
      ["[::]", "loopback"],
      ["[::ffff:7f00:1]", "loopback"],
      ["[64:ff9b::7f00:1]", "loopback"],
      ["localhost", "loopback"],
      ["LOCALHOST.", "loopback"],
      ["app.localhost", "loopback"],
      ["169.254.169.254", "link-local"],
      ["[fe80::1]", "link-local"],
      ["10.0.0.1", "private"],
      ["172.16.5.4", "private"],
      ["192.168.0.1", "private"],
      ["100.64.0.1", "private"],
      ["[fd00::1]", "private"],
      ["[::ffff:a00:1]", "private"],
      ["[2002:c0a8:101::1]", "private"],
      ["8.8.8.8", "public"],
      ["172.32.0.1", "public"],
      ["[2606:4700::1111]", "public"],
      ["[64:ff9b::808:808]", "public"],
      ["mcp.example.com", undefined]
    ]
    for (const [host, expected] of cases) assert.strictEqual(Policy.literalHostClass(host), expected, host)
    // resolved addresses (zone index ignored)
    assert.strictEqual(Policy.addressClass("fe80::1%eth0"), "link-local")
    assert.strictEqual(Policy.addressClass("::ffff:127.0.0.1"), "loopback")
  })

  it("a public server reaches public hosts only; a private one its own class too; a loopback one anything", () => {
    const classes: ReadonlyArray<Policy.HostClass> = ["loopback", "link-local", "private", "public"]
    const reach = (from: ReadonlyArray<Policy.HostClass>) => classes.filter((to) => Policy.mayReach(new Set(from), to))
    assert.deepStrictEqual(reach(["public"]), ["public"])
    assert.deepStrictEqual(reach(["private"]), ["private", "public"])
    assert.deepStrictEqual(reach(["link-local"]), ["link-local", "public"])
    assert.deepStrictEqual(reach(["loopback"]), classes)
    assert.deepStrictEqual(reach([]), ["public"])
  })

  it("a browser is sent to https, or http on a loopback host, only", () => {
    assert.isTrue(Policy.isBrowsable(new URL("https://auth.example.com/authorize")))
    assert.isTrue(Policy.isBrowsable(new URL("http://127.0.0.1:9000/authorize")))
    assert.isTrue(Policy.isBrowsable(new URL("http://localhost/authorize")))
    for (
      const url of [
        "http://auth.example.com/authorize",
        "file:///tmp/x",
        "javascript:alert(1)",
        "vscode://x/y",
        "data:,x"
      ]
    ) {
      assert.isFalse(Policy.isBrowsable(new URL(url)), url)
    }
  })
})
