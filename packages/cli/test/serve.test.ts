/**
 * `effect-mcp serve`, run as the built bin: the servers it names served as
 * one, over Streamable HTTP to the official SDK client and over stdio to
 * ours; filters from flags and from the config; a front protected by an
 * authorization server's JWTs whose tokens never reach the servers behind;
 * usage errors; and no server process left once it ends (SIGTERM: 130;
 * stdin closed by the client: 0).
 */
import { McpClient, McpContent, type McpError, McpTransport } from "@effect-mcp/core"
import { NodeMcpStdio } from "@effect-mcp/platform-node"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Context, Effect, Exit, Layer, Option, Result, Scope } from "effect"
import { randomUUID } from "node:crypto"
import { writeFileSync } from "node:fs"
import { startAuthServer, startProtectedServer } from "../../platform-node/test/fixtures/authServer.ts"
import { isRunning } from "../../platform-node/test/utils/process.ts"
import * as Filters from "../src/internal/filters.ts"
import * as Front from "../src/internal/front.ts"
import {
  assertExit,
  bin,
  config,
  exampleServer,
  processesWith,
  quote,
  type Ran,
  runCli,
  startCli,
  tempDir,
  weatherServer
} from "./utils/cli.ts"

const files = tempDir({
  "two.json": {
    mcpServers: {
      // the config's filter hides countdown
      example: { ...config.mcpServers.example, tools: { deny: ["count*"] } },
      rainy: { command: process.execPath, args: [weatherServer] }
    }
  }
})
afterAll(() => files.cleanup())

const example = ["--stdio", `${quote(process.execPath)} ${quote(exampleServer)}`]

/** Polls (10 ms apart, at most 5 s) until `check` holds; dies if it never does. */
const waitFor = (check: () => boolean, what: string) =>
  Effect.gen(function*() {
    for (let attempt = 0; attempt < 500; attempt++) {
      if (check()) return
      yield* Effect.sleep("10 millis")
    }
    return yield* Effect.die(new Error(`${what}: never happened`))
  })

/** The processes seen are all gone, and so is every process of the run. */
const assertAllGone = (pids: ReadonlyArray<number>, ran: Ran) => {
  for (const pid of pids) assert.isFalse(isRunning(pid), `process ${pid} is still running`)
  assert.deepStrictEqual(processesWith(ran.marker), [], "processes left behind")
}

/** The official SDK client (1.32.2) over Streamable HTTP, closed with the scope. */
const sdkClient = (url: string, headers?: Record<string, string>) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new Client({ name: "official-sdk", version: "1.0.0" })
      await client.connect(
        new StreamableHTTPClientTransport(new URL(url), headers === undefined ? {} : { requestInit: { headers } })
      )
      return client
    }),
    (client) => Effect.promise(() => client.close().catch(() => undefined))
  )

describe("effect-mcp serve", () => {
  it.live("over Streamable HTTP: the official SDK client lists and calls; SIGTERM closes every server, exit 130", () =>
    Effect.scoped(Effect.gen(function*() {
      const running = yield* startCli(["serve", ...example, "--port", "0", "--deny-tools", "count*"])
      const [, url] = yield* running.stderrMatching(
        /^effect-mcp: serving 1 server \(example-server\) on (http:\/\/127\.0\.0\.1:\d+\/mcp)$/m
      )
      // the CLI and the example server
      const pids = processesWith(running.marker)
      assert.lengthOf(pids, 2)
      assert.include(pids, running.pid)

      const client = yield* sdkClient(url!)
      assert.strictEqual(client.getServerVersion()?.name, "effect-mcp")
      // --deny-tools hides countdown
      const { tools } = yield* Effect.promise(() => client.listTools())
      assert.deepStrictEqual(tools.map((tool) => tool.name), ["weather"])
      const result = yield* Effect.promise(() => client.callTool({ name: "weather", arguments: { city: "Lisbon" } }))
      assert.deepStrictEqual(result.structuredContent, { city: "Lisbon", celsius: 21.5, conditions: "sunny" })
      // and calling it fails as for a tool no server has
      const hidden = yield* Effect.promise(() =>
        client.callTool({ name: "countdown", arguments: { from: 1 } }).then(() => undefined, (error: unknown) => error)
      )
      assert.strictEqual((hidden as { code?: unknown } | undefined)?.code, -32602)
      assert.include(String(hidden), "Unknown tool: countdown")

      yield* running.signal("SIGTERM")
      const ran = yield* running.exit
      assertExit(ran, 130)
      assert.strictEqual(ran.stdout, "")
      assertAllGone(pids, ran)
    })))

  it.live("as a stdio server: two servers' tools prefixed, the config's filter hides one; closing stdin ends it all", () =>
    Effect.gen(function*() {
      const id = randomUUID()
      const marker = `EFFECT_MCP_CLI_TEST_RUN=${id}`
      const scope = yield* Scope.make()
      const transport = yield* NodeMcpStdio.makeClient({
        command: process.execPath,
        args: [bin, "serve", "--serve-stdio", "-c", files.path("two.json")],
        // an LC_* variable: the servers the CLI spawns inherit it
        env: { LC_EFFECT_MCP_CLI_TEST_RUN: id, NO_COLOR: "1" },
        stderr: "capture"
      }).pipe(Scope.provide(scope))
      const context = yield* Layer.buildWithScope(
        McpClient.layer({ clientInfo: { name: "serve-test", version: "1.0.0" } }).pipe(
          Layer.provide(Layer.succeed(McpTransport.McpTransport, transport))
        ),
        scope
      )
      const client = Context.get(context, McpClient.McpClient)

      const tools = yield* client.tools.get
      assert.deepStrictEqual(tools.map((tool) => tool.name).sort(), ["example__weather", "rainy__weather"])
      const rain = yield* client.callTool("rainy__weather", { city: "Oslo" })
      assert.strictEqual(McpContent.textOf(rain), "rain in Oslo")
      const sunny = yield* client.callTool("example__weather", { city: "Lisbon" })
      assert.deepStrictEqual(sunny.structuredContent, { city: "Lisbon", celsius: 21.5, conditions: "sunny" })
      // the hidden tool is unknown, as a name no server has
      const hidden = yield* client.callTool("example__countdown", { from: 1 }).pipe(Effect.flip)
      const unknown = yield* client.callTool("nothing__here", {}).pipe(Effect.flip)
      const protocol = (error: McpError.McpError) =>
        error.reason._tag === "ProtocolError"
          ? { code: error.reason.code, message: error.reason.message }
          : error.reason
      assert.deepStrictEqual(protocol(hidden), {
        code: -32602,
        message: "Unknown tool: example__countdown (code -32602)"
      })
      assert.deepStrictEqual(protocol(unknown), { code: -32602, message: "Unknown tool: nothing__here (code -32602)" })

      // the CLI and its two servers
      const pids = processesWith(marker)
      assert.lengthOf(pids, 3)
      assert.include(pids, transport.pid)

      // closing the client closes the CLI's stdin: it ends by itself (0), its servers with it
      yield* Scope.close(scope, Exit.void)
      assert.deepStrictEqual(yield* transport.exitStatus, { code: 0, signal: null })
      assert.include(yield* transport.stderrTail, "effect-mcp: serving 2 servers (example, rainy) on stdio")
      yield* waitFor(() => processesWith(marker).length === 0, "every process of the run gone")
      for (const pid of pids) assert.isFalse(isRunning(pid), `process ${pid} is still running`)
    }))

  it.live("usage errors (exit 2, nothing started): both fronts, neither, a host beyond loopback without auth", () =>
    Effect.gen(function*() {
      const runs = yield* Effect.all([
        runCli(["serve", ...example, "--port", "0", "--serve-stdio"]),
        runCli(["serve", ...example]),
        runCli(["serve", ...example, "--port", "0", "--host", "0.0.0.0"]),
        runCli(["serve", ...example, "--port", "0", "--auth-issuer", "http://127.0.0.1:1"]),
        runCli(["serve", ...example, "--serve-stdio", "--host", "127.0.0.1"]),
        runCli(["serve", ...example, "--port", "70000"])
      ], { concurrency: "unbounded" })
      const messages = [
        "effect-mcp: --port and --serve-stdio cannot be used together",
        "effect-mcp: serve needs a front: --port PORT (Streamable HTTP, 0 for a free port) or --serve-stdio",
        "effect-mcp: --host 0.0.0.0 serves beyond this machine: protect the endpoint with --auth-issuer and " +
        "--auth-jwks-url, or pass --allow-unauthenticated",
        "effect-mcp: --auth-issuer: protecting the endpoint needs both --auth-issuer URL",
        "effect-mcp: --host goes with --port, not --serve-stdio",
        "effect-mcp: --port must be a port number from 0 to 65535, got 70000"
      ]
      runs.forEach((ran, i) => {
        assertExit(ran, 2)
        assert.strictEqual(ran.stdout, "")
        assert.include(ran.stderr, messages[i]!)
      })
    }))

  it.live("--auth-issuer/--auth-jwks-url: a token for the endpoint is required, and never reaches the server behind", () =>
    Effect.scoped(Effect.gen(function*() {
      const as = yield* startAuthServer()
      // the server behind is protected too: the gateway reaches it with a token of its own (a static header)
      const behind = yield* startProtectedServer(as)
      const own = yield* Effect.promise(() => as.issueToken({ sub: "gateway", aud: behind.resource }))
      const cfg = files.path("protected.json")
      writeFileSync(
        cfg,
        JSON.stringify({ mcpServers: { secure: { url: behind.url, headers: { Authorization: `Bearer ${own}` } } } })
      )
      const running = yield* startCli([
        "serve",
        "-c",
        cfg,
        "--port",
        "0",
        "--auth-issuer",
        as.issuer,
        "--auth-jwks-url",
        as.endpoints.jwks
      ])
      const [, url] = yield* running.stderrMatching(
        /^effect-mcp: serving 1 server \(secure\) on (http:\/\/127\.0\.0\.1:\d+\/mcp) \(bearer tokens of http:\/\/127\.0\.0\.1:\d+\)$/m
      )

      // no token, or the token of the server behind (another audience): 401 with the challenge
      const initialize = (authorization?: string) =>
        Effect.promise(async () => {
          const response = await fetch(url!, {
            method: "POST",
            headers: {
              "content-type": "application/json",
              accept: "application/json, text/event-stream",
              ...(authorization === undefined ? {} : { authorization })
            },
            body: JSON.stringify({
              jsonrpc: "2.0",
              id: 1,
              method: "initialize",
              params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "probe", version: "1" } }
            })
          })
          await response.text()
          return { status: response.status, challenge: response.headers.get("www-authenticate") ?? "" }
        })
      const anonymous = yield* initialize()
      assert.strictEqual(anonymous.status, 401)
      assert.match(
        anonymous.challenge,
        /^Bearer .*resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\/mcp"/
      )
      assert.strictEqual((yield* initialize(`Bearer ${own}`)).status, 401)

      // a token for the endpoint, of another subject
      const token = yield* Effect.promise(() => as.issueToken({ sub: "alice", aud: url! }))
      const client = yield* sdkClient(url!, { Authorization: `Bearer ${token}` })
      const { tools } = yield* Effect.promise(() => client.listTools())
      assert.includeMembers(tools.map((tool) => tool.name), ["echo", "whoami"])
      const whoami = yield* Effect.promise(() => client.callTool({ name: "whoami", arguments: {} }))
      const seen = JSON.parse((whoami.content as Array<{ text: string }>)[0]!.text)
      // the server behind saw the gateway's own token, not alice's
      assert.strictEqual(seen.subject, "gateway")
      assert.strictEqual(seen.token, own.slice(0, 12))
      assert.isAbove(behind.requests.length, 0)
      for (const request of behind.requests) assert.notInclude(JSON.stringify(request.headers), token)

      yield* running.signal("SIGTERM")
      const ran = yield* running.exit
      assertExit(ran, 130)
    })))
})

describe("serve's flags", () => {
  const none = {
    allowTools: [],
    denyTools: [],
    allowPrompts: [],
    denyPrompts: [],
    allowResources: [],
    denyResources: []
  }
  const component = (kind: "tool" | "prompt" | "resource" | "resourceTemplate", upstreamName: string) => ({
    kind,
    name: `s__${upstreamName}`,
    server: "s",
    upstreamName
  })

  it("filters: * for any characters, the rest literal; allow then deny, by the server's own names", () => {
    assert.isUndefined(Filters.policy(none))
    const policy = Filters.policy({
      ...none,
      allowTools: ["read_*", "list.files"],
      denyTools: ["*secret*"],
      denyResources: ["file:///etc/*"]
    })!
    const request = { auth: undefined, context: undefined as never }
    const passes = (kind: Parameters<typeof component>[0], name: string) => policy(component(kind, name), request)
    assert.isTrue(passes("tool", "read_file"))
    assert.isTrue(passes("tool", "list.files"))
    assert.isFalse(passes("tool", "listXfiles"), ". is literal")
    assert.isFalse(passes("tool", "write_file"), "not allowed")
    assert.isFalse(passes("tool", "read_secret_key"), "denied")
    assert.isTrue(passes("prompt", "write_file"), "tool flags leave prompts alone")
    assert.isFalse(passes("resource", "file:///etc/passwd"))
    assert.isFalse(passes("resourceTemplate", "file:///etc/{name}"))
    assert.isTrue(passes("resource", "file:///home/notes"))
  })

  const flags: Front.Flags = {
    port: Option.some(0),
    host: Option.none(),
    serveStdio: false,
    allowUnauthenticated: false,
    authIssuer: Option.none(),
    authJwksUrl: Option.none(),
    authAudience: [],
    authScope: [],
    authResource: Option.none()
  }
  const auth = {
    authIssuer: Option.some("https://auth.example.com"),
    authJwksUrl: Option.some("https://auth.example.com/jwks")
  }
  const failure = (given: Partial<Front.Flags>) => {
    const parsed = Front.parse({ ...flags, ...given })
    assert.isTrue(Result.isFailure(parsed))
    return Result.isFailure(parsed) ? parsed.failure.description : ""
  }

  it("front: loopback by default; beyond it only with auth or --allow-unauthenticated; auth on a wildcard needs its resource", () => {
    const http = (given: Partial<Front.Flags>) => {
      const parsed = Front.parse({ ...flags, ...given })
      assert.isTrue(Result.isSuccess(parsed))
      return Result.isSuccess(parsed) && parsed.success._tag === "Http" ? parsed.success : undefined
    }
    assert.deepInclude(http({}), { port: 0, host: "127.0.0.1", auth: undefined })
    assert.deepInclude(http({ host: Option.some("[::1]") }), { host: "::1", auth: undefined })
    assert.deepInclude(http({ host: Option.some("localhost") }), { host: "localhost" })
    assert.deepInclude(http({ host: Option.some("0.0.0.0"), allowUnauthenticated: true }), {
      host: "0.0.0.0",
      auth: undefined
    })
    const protectedFront = http({
      ...auth,
      host: Option.some("10.0.0.5"),
      authScope: ["mcp:use"],
      authAudience: ["api://mcp"]
    })!
    assert.deepInclude(protectedFront.auth, {
      authorizationServers: ["https://auth.example.com"],
      requiredScopes: ["mcp:use"],
      audiences: ["api://mcp"]
    })
    assert.strictEqual(protectedFront.issuer, "https://auth.example.com")
    assert.strictEqual(
      http({ ...auth, host: Option.some("::"), authResource: Option.some("https://mcp.example.com/mcp") })?.auth
        ?.resource,
      "https://mcp.example.com/mcp"
    )
    assert.include(failure({ host: Option.some("192.168.1.2") }), "--host 192.168.1.2 serves beyond this machine")
    assert.include(failure({ ...auth, host: Option.some("0.0.0.0") }), "--auth-resource URL")
    assert.include(failure({ authJwksUrl: auth.authJwksUrl }), "needs both --auth-issuer URL")
    assert.include(
      failure({ ...auth, authIssuer: Option.some("auth.example.com") }),
      "--auth-issuer must be an http:// or https:// URL"
    )
    assert.include(failure({ port: Option.some(-1) }), "--port must be a port number")
    assert.include(failure({ host: Option.some(" ") }), "--host needs an address")
  })

  it("front: --serve-stdio alone", () => {
    assert.deepStrictEqual(
      Front.parse({ ...flags, port: Option.none(), serveStdio: true }),
      Result.succeed({ _tag: "Stdio" })
    )
    assert.include(
      failure({ port: Option.none(), serveStdio: true, allowUnauthenticated: true, ...auth }),
      "--allow-unauthenticated, --auth-issuer, --auth-jwks-url go with --port, not --serve-stdio"
    )
  })
})
