/**
 * `effect-mcp serve`: the servers of the command line (a config, or one
 * `--stdio` / `--url` server) served as one MCP server (`NodeMcpGateway`),
 * over Streamable HTTP (`--port`) or this process's stdio (`--serve-stdio`),
 * until interrupted or, over stdio, until the client closes stdin.
 *
 * @internal
 */
import type * as McpError from "@effect-mcp/core/McpError"
import type * as McpServer from "@effect-mcp/core/McpServer"
import { NodeMcpAuthStore, NodeMcpGateway, NodeMcpHttpServer, NodeMcpStdio } from "@effect-mcp/platform-node"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Cluster from "./cluster.ts"
import * as Connect from "./connect.ts"
import * as Failures from "./failures.ts"
import * as Filters from "./filters.ts"
import * as Front from "./front.ts"

// -----------------------------------------------------------------------------
// Flags
// -----------------------------------------------------------------------------

const patterns = (name: string, description: string) =>
  Flag.String(name).pipe(Flag.withMetavar("PATTERN"), Flag.withDescription(description), Flag.atLeast(0))

const urlFlag = (name: string, description: string) =>
  Flag.String(name).pipe(Flag.withMetavar("URL"), Flag.withDescription(description), Flag.optional)

const flags = {
  port: Flag.Int("port").pipe(
    Flag.withMetavar("PORT"),
    Flag.withDescription("Serve over Streamable HTTP on this port (0: a free one), at /mcp. Not with --serve-stdio"),
    Flag.optional
  ),
  host: Flag.String("host").pipe(
    Flag.withMetavar("HOST"),
    Flag.withDescription(
      "With --port: the address to bind (default 127.0.0.1). Beyond loopback only with --auth-issuer and " +
        "--auth-jwks-url, or --allow-unauthenticated"
    ),
    Flag.optional
  ),
  serveStdio: Flag.Boolean("serve-stdio").pipe(
    Flag.withDescription(
      "Be a stdio server: speak MCP over this process's stdin and stdout (only protocol frames go to stdout), " +
        "until the client closes stdin. Not with --port"
    ),
    Flag.withDefault(false)
  ),
  allowUnauthenticated: Flag.Boolean("allow-unauthenticated").pipe(
    Flag.withDescription("With --host beyond loopback: serve without authorization, to anyone who can reach it"),
    Flag.withDefault(false)
  ),
  authIssuer: urlFlag(
    "auth-issuer",
    "With --port: accept only bearer tokens issued by this authorization server (its issuer), as JWTs; " +
      "with --auth-jwks-url"
  ),
  authJwksUrl: urlFlag("auth-jwks-url", "With --auth-issuer: the JSON Web Key Set the tokens are signed with"),
  authAudience: Flag.String("auth-audience").pipe(
    Flag.withMetavar("AUDIENCE"),
    Flag.withDescription("With --auth-issuer: an audience accepted besides the endpoint's URL (repeatable)"),
    Flag.atLeast(0)
  ),
  authScope: Flag.String("auth-scope").pipe(
    Flag.withMetavar("SCOPE"),
    Flag.withDescription("With --auth-issuer: a scope every token must carry (repeatable)"),
    Flag.atLeast(0)
  ),
  authResource: urlFlag(
    "auth-resource",
    "With --auth-issuer: the endpoint's public URL, the audience of its tokens (default the address it listens " +
      "on; required on 0.0.0.0 or ::)"
  ),
  allowTools: patterns(
    "allow-tools",
    "Serve only the tools of every server whose own name matches (* for any characters; repeatable; laid over " +
      "the config's \"tools\" filters: both must let a tool through)"
  ),
  denyTools: patterns("deny-tools", "Hide the tools of every server whose own name matches (repeatable)"),
  allowPrompts: patterns("allow-prompts", "Serve only the prompts whose own name matches (repeatable)"),
  denyPrompts: patterns("deny-prompts", "Hide the prompts whose own name matches (repeatable)"),
  allowResources: patterns(
    "allow-resources",
    "Serve only the resources and templates whose URI (template) matches (repeatable)"
  ),
  denyResources: patterns(
    "deny-resources",
    "Hide the resources and templates whose URI (template) matches (repeatable)"
  ),
  redis: urlFlag(
    "redis",
    "Be one replica of many behind a load balancer, sharing on this Redis (redis:// or rediss://) the sessions, " +
      "streams, tasks, list changes and requestState secret: a request is served whichever replica it lands on"
  ),
  redisPrefix: Flag.String("redis-prefix").pipe(
    Flag.withMetavar("PREFIX"),
    Flag.withDescription("With --redis: the prefix of every key and channel (default mcp:), the same on every replica"),
    Flag.optional
  ),
  replicaId: Flag.String("replica-id").pipe(
    Flag.withMetavar("ID"),
    Flag.withDescription("With --redis: this replica's id, unique among the live ones (default a random UUID)"),
    Flag.optional
  ),
  relayPort: Flag.Int("relay-port").pipe(
    Flag.withMetavar("PORT"),
    Flag.withDescription(
      "With --redis: take the requests other replicas forward here over HTTP on this port (0: a free one), " +
        "not Redis pub/sub (kept as the fallback)"
    ),
    Flag.optional
  ),
  relayHost: Flag.String("relay-host").pipe(
    Flag.withMetavar("HOST"),
    Flag.withDescription("With --relay-port: the address to listen on (default 127.0.0.1; bind a private one)"),
    Flag.optional
  ),
  relayAdvertise: urlFlag(
    "relay-advertise",
    "With --relay-port: the URL the other replicas reach this one at (default http://HOST:PORT; required on 0.0.0.0 or ::)"
  )
}

// -----------------------------------------------------------------------------
// Fronts
// -----------------------------------------------------------------------------

type Gateway = Layer.Layer<McpServer.McpServer, McpError.McpError>

/** `1 server (a)`, `2 servers (a, b)`. */
const described = (names: ReadonlyArray<string>): string =>
  `${names.length} server${names.length === 1 ? "" : "s"} (${names.join(", ")})`

/** Streamable HTTP: says where once listening, then serves until interrupted. */
const serveHttp = (
  gateway: Gateway,
  front: Extract<Front.Front, { readonly _tag: "Http" }>,
  names: ReadonlyArray<string>,
  replica: string | undefined
) =>
  Effect.gen(function*() {
    const url = yield* NodeMcpHttpServer.url()
    const protectedBy = front.issuer === undefined ? "" : ` (bearer tokens of ${front.issuer})`
    const clustered = replica === undefined ? "" : `, replica ${replica}`
    yield* Console.error(`effect-mcp: serving ${described(names)} on ${url}${protectedBy}${clustered}`)
    return yield* Effect.never
  }).pipe(
    Effect.provide(
      // a replica is ready (`/readyz`) while its Redis answers
      Layer.unwrap(Effect.map(Effect.service(Cluster.Readiness), (readiness) =>
        NodeMcpHttpServer.layer({
          port: front.port,
          host: front.host,
          ...(front.auth === undefined ? {} : { auth: front.auth }),
          ...(readiness === undefined ? {} : { readiness })
        }))).pipe(Layer.provide(gateway))
    ),
    Effect.mapError((error) =>
      error._tag === "ServeError"
        ? Failures.listenFailure(
          `${front.host.includes(":") ? `[${front.host}]` : front.host}:${front.port}`,
          error.cause
        )
        : Failures.connectionFailure(error)
    )
  )

/** stdio: serves one client until it closes stdin; stdout carries only the protocol's frames. */
const serveStdio = (gateway: Gateway, names: ReadonlyArray<string>) =>
  Effect.andThen(Console.error(`effect-mcp: serving ${described(names)} on stdio`), NodeMcpStdio.serve).pipe(
    Effect.provide(gateway),
    Effect.mapError((error) => Failures.connectionFailure(error))
  )

// -----------------------------------------------------------------------------
// The command
// -----------------------------------------------------------------------------

/**
 * `serve`: checks the front's flags, then serves the servers of the command
 * line (with the config's filters, the flags' laid over them) until
 * interrupted or, over stdio, until the client closes stdin. The client's
 * credentials in front never reach the servers behind: the gateway reaches
 * them with their own configuration (headers, OAuth tokens of the auth file).
 */
export const command = Command.make("serve", flags, (given) =>
  Effect.gen(function*() {
    // the front's flags are checked before any server is started
    const front = yield* Effect.fromResult(Front.parse(given))
    const cluster = yield* Effect.fromResult(Cluster.parse(given, front._tag === "Http"))
    const { options, secrets, servers, upstreams } = yield* Connect.selectServers(undefined, true)
    const store = yield* NodeMcpAuthStore.make({ path: Connect.authFile(options.authFile) })
    const policy = Filters.policy(given)
    // a server that cannot connect is down and retried (the gateway's default); the others are served
    const gatewayWith = (secret: string | undefined) =>
      NodeMcpGateway.layer({
        name: "effect-mcp",
        version: Connect.version,
        servers,
        upstreams,
        connector: Connect.connector(options, secrets, store),
        ...(policy === undefined ? {} : { policy }),
        ...(options.qualify ? { group: { nameHook: Connect.qualify } } : {}),
        ...(secret === undefined ? {} : { requestState: { secret } })
      })
    // a replica: its retries may land on another, which must open their requestState
    const gateway = cluster === undefined ? gatewayWith(undefined) : Cluster.layer(cluster, gatewayWith)
    const names = Object.keys(servers)
    return yield* (front._tag === "Stdio"
      ? serveStdio(gateway, names)
      : serveHttp(gateway, front, names, cluster?.replicaId)).pipe(
        Effect.mapError((error) => Failures.masked(error, secrets.diagnostics))
      )
  })).pipe(
    Command.withDescription(
      "Serve the servers as one MCP server (a gateway), over Streamable HTTP (--port) or stdio (--serve-stdio). " +
        "With several servers, tools and prompts are named <server>__<name>. Runs until interrupted (exit 130) " +
        "or, over stdio, until the client closes stdin (exit 0)"
    ),
    Command.withExamples([
      {
        command: "effect-mcp serve --port 8080",
        description: "The servers of ./mcp.json on http://127.0.0.1:8080/mcp"
      },
      {
        command: "effect-mcp serve --serve-stdio -c team.json",
        description: "One stdio server for a desktop client that launches one command"
      },
      {
        command: "effect-mcp --stdio \"node server.js\" serve --port 0 --deny-tools 'delete_*'",
        description: "One stdio server over HTTP, without its delete_* tools"
      },
      {
        command: "effect-mcp serve --port 8080 --redis redis://10.0.0.2:6379 --relay-port 7070 --relay-host 10.0.3.7",
        description: "One replica of many behind a load balancer (run the same on each, with its own address)"
      },
      {
        command:
          "effect-mcp serve --port 443 --host 0.0.0.0 --auth-issuer https://auth.example.com --auth-jwks-url https://auth.example.com/jwks --auth-resource https://mcp.example.com/mcp",
        description: "Beyond loopback, protected by an authorization server's JWTs"
      }
    ])
  )
