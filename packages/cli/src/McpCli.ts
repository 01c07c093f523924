/**
 * The `effect-mcp` command: a command-line MCP client over the group of
 * servers an `mcp.json` config names (`McpGroup`), built on `effect/cli`.
 *
 * ```sh
 * effect-mcp list tools                          # every server's tools, with their server
 * effect-mcp call weather --args '{"city":"Lisbon"}'
 * effect-mcp read notes://readme --server example
 * effect-mcp prompt explain --args '{"topic":"MCP"}' --json
 * effect-mcp login search                        # sign in to an OAuth-protected server
 * effect-mcp logout search                       # forget its OAuth tokens
 * ```
 *
 * stdout carries only the command's output (`--json` makes it JSON); logs,
 * errors and the progress bar go to stderr. The exit code says what happened:
 * see {@link ExitCode}.
 *
 * **OAuth.** A Streamable HTTP or HTTP+SSE server that refuses a request
 * (`401`) is signed in to with OAuth 2.1 on first use: the authorization URL
 * is printed on stderr and opened in the browser (`xdg-open`, `open`, or the
 * command in `EFFECT_MCP_BROWSER`, run with the URL as its last argument or
 * in place of a `%s` word), the browser comes back to a listener on
 * `127.0.0.1`, and the tokens are kept in the auth file (`--auth-file`, or
 * `EFFECT_MCP_AUTH_FILE`, default `$XDG_CONFIG_HOME/effect-mcp/auth.json` or
 * `~/.config/effect-mcp/auth.json`, mode 0600). Later runs reuse them and
 * refresh them silently; `login <server>` signs in ahead of time, `logout
 * <server>` forgets them. A server's `oauth`
 * entry in the config can name a pre-registered client (`clientId`,
 * `clientSecret`), the `scope`, a `clientMetadataUrl` and a fixed
 * `callbackPort`; `"oauth": false` or a static `Authorization` header turns
 * it off.
 *
 * @since 0.1.0
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as JsonRpc from "@effect-mcp/core/JsonRpc"
import * as McpAuth from "@effect-mcp/core/McpAuth"
import * as McpError from "@effect-mcp/core/McpError"
import * as McpGroup from "@effect-mcp/core/McpGroup"
import { NodeMcpAuthorizer, NodeMcpAuthStore, NodeMcpGroup } from "@effect-mcp/platform-node"
import * as Console from "effect/Console"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as References from "effect/References"
import * as Result from "effect/Result"
import * as Runtime from "effect/Runtime"
import * as Schema from "effect/Schema"
import * as Argument from "effect/cli/Argument"
import * as CliError from "effect/cli/CliError"
import * as CliOutput from "effect/cli/CliOutput"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Predicate from "effect/Predicate"
import * as Format from "./internal/format.ts"
import * as Progress from "./internal/progress.ts"

// -----------------------------------------------------------------------------
// Exit codes and failures
// -----------------------------------------------------------------------------

/**
 * The process exit codes of `effect-mcp`:
 *
 * | code | name | when |
 * | --- | --- | --- |
 * | 0 | `Ok` | the command did what it was asked |
 * | 1 | `ToolError` | `call`: the tool answered with an error result (`isError: true`) |
 * | 2 | `Usage` | bad flags or arguments, `--args` that is not a JSON object, an unknown `--server`, tool, prompt or resource |
 * | 3 | `Connection` | the config file is missing or invalid, a server could not be started, reached or initialized, or its connection was lost |
 * | 4 | `Request` | a server answered the request with a JSON-RPC error, or it timed out |
 * | 5 | `Auth` | authorization failed: the OAuth sign-in could not complete (refused, timed out, no usable authorization server), the auth file is unreadable, or a server refused the credentials it got |
 *
 * Interrupted (SIGINT, SIGTERM), it closes every server and exits 130.
 *
 * @category models
 * @since 0.1.0
 */
export const ExitCode = {
  Ok: 0,
  ToolError: 1,
  Usage: 2,
  Connection: 3,
  Request: 4,
  Auth: 5
} as const

/**
 * What made a command fail, named after its {@link ExitCode}.
 *
 * @category models
 * @since 0.1.0
 */
export type FailureKind = Exclude<keyof typeof ExitCode, "Ok">

/**
 * The one error of the CLI: it carries the exit code (read by the runtime's
 * teardown) and a message for stderr. It is printed once by {@link run}, so
 * the runtime does not report it again.
 *
 * @category errors
 * @since 0.1.0
 */
export class CliFailure extends Schema.TaggedError<CliFailure>()("CliFailure", {
  kind: Schema.Literals(["ToolError", "Usage", "Connection", "Request", "Auth"]),
  description: Schema.String
}) {
  override get message(): string {
    return this.description
  }
  override get [Runtime.errorExitCode](): number {
    return ExitCode[this.kind]
  }
  override get [Runtime.errorReported](): boolean {
    return false
  }
}

const usage = (description: string) => new CliFailure({ kind: "Usage", description })

const describeMcpError = (error: McpError.McpError): string => {
  const reason = error.reason
  if (reason._tag !== "TransportError") return error.message
  // the causes' own messages say what went wrong on the wire (refused, reset, ...)
  let message = error.message
  let cause: unknown = reason.cause
  for (let depth = 0; depth < 4 && cause !== undefined && cause !== null; depth++) {
    const text = McpError.messageOf(cause)
    if (text !== "" && !message.includes(text)) message = `${message}: ${text}`
    cause = typeof cause === "object" && "cause" in cause ? cause.cause : undefined
  }
  if (reason.stderr === undefined) return message
  // the end of the server's stderr, unless the message already quotes it
  const tail = reason.stderr.trimEnd().split("\n").slice(-10)
  const quoted = tail.length === 1 && message.includes(tail[0]!.trim())
  return tail.join("").trim() === "" || quoted
    ? message
    : `${message}\n  the end of its stderr:\n${tail.map((line) => `    ${line}`).join("\n")}`
}

/** The `AuthError` an error is or was caused by (a server made unavailable by one), if any. */
const authErrorOf = (error: McpError.McpError): McpError.AuthError | undefined => {
  let current: unknown = error
  for (let depth = 0; depth < 4 && McpError.isMcpError(current); depth++) {
    const reason: McpError.Reason = current.reason
    if (reason._tag === "AuthError") return reason
    current = "cause" in reason ? reason.cause : undefined
  }
  return undefined
}

const authFailure = (error: McpError.AuthError, server?: string): CliFailure => {
  const where = server === undefined || error.description.includes(server) ? "" : `server "${server}": `
  const hint = error.kind === "Storage" ? "" : " (effect-mcp logout <server> forgets its tokens)"
  return new CliFailure({
    kind: "Auth",
    description: `${where}authorization failed (${error.kind}): ${error.description}${
      error.kind === "Unauthorized" || error.kind === "InsufficientScope" ? hint : ""
    }`
  })
}

/** Connecting (config, spawn, handshake): everything is a connection failure, but authorization. */
const connectionFailure = (error: McpError.McpError, server?: string): CliFailure => {
  const auth = authErrorOf(error)
  if (auth !== undefined) return authFailure(auth, server)
  const hint = error.reason._tag === "NameCollisionError" && error.reason.kind !== "server"
    ? " (--qualify names them <server>_<name>)"
    : ""
  const where = server === undefined || error.message.includes(`"${server}"`) ? "" : `server "${server}": `
  return new CliFailure({ kind: "Connection", description: `${where}${describeMcpError(error)}${hint}` })
}

/**
 * A request: a lost connection is a connection failure, a name no server
 * offers a usage error, an answered error (or a timeout) a request failure.
 */
const requestFailure = (error: McpError.McpError): CliFailure => {
  const auth = authErrorOf(error)
  if (auth !== undefined) return authFailure(auth)
  switch (error.reason._tag) {
    case "TransportError":
    case "ClosedError":
    case "HandshakeError":
    case "ServerUnavailableError":
    case "ConfigError":
      return connectionFailure(error)
    case "NotFoundError":
      return new CliFailure({ kind: "Usage", description: describeMcpError(error) })
    case "ProtocolError":
      // -32002: the server knows no such resource, like a name no server offers
      return new CliFailure({
        kind: error.reason.code === JsonRpc.ErrorCode.ResourceNotFound ? "Usage" : "Request",
        description: describeMcpError(error)
      })
    default:
      return new CliFailure({ kind: "Request", description: describeMcpError(error) })
  }
}

// -----------------------------------------------------------------------------
// Arguments
// -----------------------------------------------------------------------------

/**
 * Parses the text of `--args`: a JSON object (absent means `{}`).
 *
 * @category parsing
 * @since 0.1.0
 */
export const parseArgs = (text: string | undefined): Result.Result<Record<string, unknown>, CliFailure> => {
  if (text === undefined) return Result.succeed({})
  const parsed = Result.try({
    try: () => JSON.parse(text) as unknown,
    catch: (error) => usage(`--args is not valid JSON: ${error instanceof Error ? error.message : String(error)}`)
  })
  return Result.flatMap(parsed, (value) =>
    Predicate.isObject(value)
      ? Result.succeed(value)
      : Result.fail(
        usage(`--args must be a JSON object, got ${Array.isArray(value) ? "an array" : JSON.stringify(value)}`)
      ))
}

/**
 * Parses the text of a prompt's `--args`: a JSON object whose values are
 * strings (numbers and booleans are turned into strings).
 *
 * @category parsing
 * @since 0.1.0
 */
export const parsePromptArgs = (text: string | undefined): Result.Result<Record<string, string>, CliFailure> =>
  Result.flatMap(parseArgs(text), (object) => {
    const out: Record<string, string> = {}
    for (const [key, value] of Object.entries(object)) {
      if (typeof value === "string") out[key] = value
      else if (typeof value === "number" || typeof value === "boolean") out[key] = String(value)
      else return Result.fail(usage(`prompt arguments are strings: --args key "${key}" is ${JSON.stringify(value)}`))
    }
    return Result.succeed(out)
  })

/**
 * The name hook of `--qualify`: tools and prompts are named
 * `<server>_<name>`; resources and templates keep their URIs.
 *
 * @category naming
 * @since 0.1.0
 */
export const qualify: McpGroup.NameHook = McpGroup.prefixed({ separator: "_" })

const unknownName = (what: string, name: string, known: ReadonlyArray<string>) => {
  const shown = known.slice(0, 20).join(", ")
  return usage(
    `unknown ${what} "${name}"; ${
      known.length === 0
        ? `there are no ${what}s`
        : `the ${what}s are: ${shown}${known.length > 20 ? `, … (${known.length} in all)` : ""}`
    }`
  )
}

// -----------------------------------------------------------------------------
// Commands
// -----------------------------------------------------------------------------

const root = Command.make("effect-mcp").pipe(
  Command.withSharedFlags({
    config: Flag.String("config").pipe(
      Flag.withAlias("c"),
      Flag.withMetavar("FILE"),
      Flag.withDescription("The servers to connect to: an mcp.json file"),
      Flag.withDefault("./mcp.json")
    ),
    server: Flag.String("server").pipe(
      Flag.withAlias("s"),
      Flag.withMetavar("NAME"),
      Flag.withDescription("Connect to this server of the config only"),
      Flag.optional
    ),
    qualify: Flag.Boolean("qualify").pipe(
      Flag.withDescription("Name tools and prompts <server>_<name>"),
      Flag.withDefault(false)
    ),
    verbose: Flag.Boolean("verbose").pipe(
      Flag.withDescription("Pass the servers' stderr through to stderr"),
      Flag.withDefault(false)
    ),
    json: Flag.Boolean("json").pipe(
      Flag.withDescription("Print JSON on stdout"),
      Flag.withDefault(false)
    ),
    authFile: Flag.String("auth-file").pipe(
      Flag.withMetavar("FILE"),
      Flag.withDescription(
        "Where OAuth tokens are kept (default: $EFFECT_MCP_AUTH_FILE, else $XDG_CONFIG_HOME/effect-mcp/auth.json or ~/.config/effect-mcp/auth.json)"
      ),
      Flag.optional
    )
  }),
  Command.withDescription("A command-line MCP client over the servers of an mcp.json config")
)

type Group = McpGroup.McpGroup["Service"]

interface Connected {
  readonly group: Group
  readonly json: boolean
  /** The servers' names, in the config's order. */
  readonly order: ReadonlyArray<string>
  /** Where OAuth tokens are kept. */
  readonly store: McpAuth.McpAuthStore["Service"]
}

/** The auth file: `--auth-file`, else `EFFECT_MCP_AUTH_FILE`, else the store's default. */
const authFile = (flag: Option.Option<string>): string | undefined => {
  if (Option.isSome(flag)) return flag.value
  const env = process.env.EFFECT_MCP_AUTH_FILE
  return env === undefined || env === "" ? undefined : env
}

/** How the CLI signs in: the auth file, the browser (`EFFECT_MCP_BROWSER` or the platform's). */
const authOptions = (): NodeMcpGroup.AuthOptions => {
  const browser = process.env.EFFECT_MCP_BROWSER
  return {
    clientMetadata: { clientName: "effect-mcp", softwareId: "effect-mcp-cli", softwareVersion: version },
    loopback: browser === undefined || browser.trim() === "" ? {} : { open: NodeMcpAuthorizer.openWith(browser) }
  }
}

/** Connects to the config's servers: `only`, else `--server`, else all. */
const connectTo = (only: string | undefined) => Effect.gen(function*() {
  const options = yield* root
  const all = yield* NodeMcpGroup.loadConfig(options.config).pipe(Effect.mapError((error) => connectionFailure(error)))
  const store = yield* NodeMcpAuthStore.make({ path: authFile(options.authFile) })
  let servers = all
  const selected = only !== undefined ? Option.some(only) : options.server
  if (Option.isSome(selected)) {
    const name = selected.value
    const params = all[name]
    if (params === undefined) {
      return yield* unknownName("server", name, Object.keys(all))
    }
    servers = { [name]: params }
  }
  // one shot: a server that goes down stays down; the servers' stderr is kept
  // for the error that reports their death, unless --verbose
  const context = yield* Layer.build(NodeMcpGroup.layer({
    reconnect: false,
    connector: {
      stderr: options.verbose ? "forward" : "capture",
      auth: { ...authOptions(), store }
    },
    ...(options.qualify ? { nameHook: qualify } : {})
  })).pipe(Effect.mapError((error) => connectionFailure(error)))
  const group = Context.get(context, McpGroup.McpGroup)
  // connected one by one (concurrently) so that a failure names its server
  yield* Effect.forEach(
    Object.entries(servers),
    ([name, params]) => group.connect(name, params).pipe(Effect.mapError((error) => connectionFailure(error, name))),
    { concurrency: "unbounded", discard: true }
  )
  return { group, json: options.json, order: Object.keys(servers), store } satisfies Connected
})

const connect = connectTo(undefined)

const withGroup = <A>(
  use: (connected: Connected) => Effect.Effect<A, CliFailure>
): Effect.Effect<A, CliFailure, Command.CommandContext<"effect-mcp">> =>
  Effect.scoped(Effect.flatMap(connect, use))

/** Entries in the config's order of their servers (they were connected concurrently). */
const inConfigOrder = <A extends { readonly server: string }>(
  order: ReadonlyArray<string>,
  entries: ReadonlyArray<A>
): ReadonlyArray<A> =>
  entries
    .map((entry, index) => ({ entry, index, rank: order.indexOf(entry.server) }))
    .sort((a, b) => a.rank - b.rank || a.index - b.index)
    .map(({ entry }) => entry)

const request = <A>(effect: Effect.Effect<A, McpError.McpError>) => Effect.mapError(effect, requestFailure)

const listKinds = {
  tools: {
    description: "List the tools of every server",
    run: ({ group, json, order }: Connected) =>
      Effect.map(group.tools, (entries) => {
        const sorted = inConfigOrder(order, entries)
        return json ? Format.json(sorted) : Format.tools(sorted)
      })
  },
  resources: {
    description: "List the resources of every server",
    run: ({ group, json, order }: Connected) =>
      Effect.map(group.resources, (entries) => {
        const sorted = inConfigOrder(order, entries)
        return json ? Format.json(sorted) : Format.resources(sorted)
      })
  },
  templates: {
    description: "List the resource templates of every server",
    run: ({ group, json, order }: Connected) =>
      Effect.map(group.resourceTemplates, (entries) => {
        const sorted = inConfigOrder(order, entries)
        return json ? Format.json(sorted) : Format.resourceTemplates(sorted)
      })
  },
  prompts: {
    description: "List the prompts of every server",
    run: ({ group, json, order }: Connected) =>
      Effect.map(group.prompts, (entries) => {
        const sorted = inConfigOrder(order, entries)
        return json ? Format.json(sorted) : Format.prompts(sorted)
      })
  }
} as const

const listSubcommand = (kind: keyof typeof listKinds) =>
  Command.make(kind, {}, () => withGroup((connected) => Effect.flatMap(listKinds[kind].run(connected), Console.log)))
    .pipe(Command.withDescription(listKinds[kind].description))

const list = Command.make("list").pipe(
  Command.withDescription("List tools, resources, resource templates or prompts"),
  Command.withSubcommands([
    listSubcommand("tools"),
    listSubcommand("resources"),
    listSubcommand("templates"),
    listSubcommand("prompts")
  ])
)

const argsFlag = Flag.String("args").pipe(
  Flag.withMetavar("JSON"),
  Flag.withDescription("The arguments, as a JSON object"),
  Flag.optional
)

const call = Command.make(
  "call",
  {
    tool: Argument.String("tool").pipe(Argument.withDescription("The tool's name (as `list tools` shows it)")),
    args: argsFlag,
    progress: Flag.Boolean("progress").pipe(
      Flag.withDescription("Show a progress bar on stderr when the tool reports progress (--no-progress: never)"),
      Flag.withDefault(true)
    )
  },
  ({ args, progress, tool }) =>
    Effect.gen(function*() {
      // --args is checked before any server is started
      const parsed = yield* Effect.fromResult(parseArgs(Option.getOrUndefined(args)))
      return yield* withGroup(({ group, json }) =>
        Effect.gen(function*() {
          const tools = yield* group.tools
          if (!tools.some((entry) => entry.name === tool)) {
            return yield* unknownName("tool", tool, tools.map((entry) => entry.name))
          }
          // the bar lives as long as the call: its line is erased before the output
          const result = yield* Effect.scoped(Effect.gen(function*() {
            const bar = progress ? yield* Effect.flatMap(Progress.stderr, Progress.make) : undefined
            return yield* request(group.callTool(
              tool,
              parsed,
              bar === undefined ? {} : { onProgress: (update: Progress.Update) => bar.update(update) }
            ))
          }))
          if (json) yield* Console.log(Format.json(result))
          if (result.isError === true) {
            const text = Format.callToolResult(result)
            return yield* new CliFailure({
              kind: "ToolError",
              description: json || text === ""
                ? `tool ${tool} returned an error result`
                : `tool ${tool} returned an error result:\n${text}`
            })
          }
          if (!json) yield* Console.log(Format.callToolResult(result))
        })
      )
    })
).pipe(
  Command.withDescription("Call a tool"),
  Command.withExamples([
    { command: "effect-mcp call weather --args '{\"city\":\"Lisbon\"}'", description: "Call the weather tool" },
    {
      command: "effect-mcp call example_weather --qualify --json --args '{\"city\":\"Oslo\"}'",
      description: "The same by its qualified name, printing the result as JSON"
    }
  ])
)

const read = Command.make(
  "read",
  { uri: Argument.String("uri").pipe(Argument.withDescription("The resource's URI")) },
  ({ uri }) =>
    withGroup(({ group, json }) =>
      Effect.flatMap(
        request(group.readResource(uri)),
        (result) => Console.log(json ? Format.json(result) : Format.readResourceResult(result))
      )
    )
).pipe(Command.withDescription("Read a resource (from the server that lists it or a template matching it)"))

const prompt = Command.make(
  "prompt",
  {
    name: Argument.String("name").pipe(Argument.withDescription("The prompt's name (as `list prompts` shows it)")),
    args: argsFlag
  },
  ({ args, name }) =>
    Effect.gen(function*() {
      const parsed = yield* Effect.fromResult(parsePromptArgs(Option.getOrUndefined(args)))
      return yield* withGroup(({ group, json }) =>
        Effect.gen(function*() {
          const prompts = yield* group.prompts
          if (!prompts.some((entry) => entry.name === name)) {
            return yield* unknownName("prompt", name, prompts.map((entry) => entry.name))
          }
          const result = yield* request(group.getPrompt(name, parsed))
          yield* Console.log(json ? Format.json(result) : Format.getPromptResult(result))
        })
      )
    })
).pipe(Command.withDescription("Get a prompt"))

const serversCommand = Command.make("servers", {}, () =>
  withGroup(({ group, json, order }) =>
    Effect.gen(function*() {
      const views = yield* group.views
      const count = (entries: ReadonlyArray<{ readonly server: string }>, server: string) =>
        entries.filter((entry) => entry.server === server).length
      const servers = (yield* group.servers).map((status) => ({ ...status, server: status.name }))
      const statuses = inConfigOrder(order, servers)
      const rows: Array<Format.ServerRow> = []
      for (const status of statuses) {
        const client = yield* request(group.client(status.name))
        rows.push({
          server: status.name,
          transport: status.params._tag,
          status: status.status,
          serverInfo: client.serverInfo,
          protocolVersion: client.protocolVersion,
          tools: count(views.tools, status.name),
          resources: count(views.resources, status.name),
          resourceTemplates: count(views.resourceTemplates, status.name),
          prompts: count(views.prompts, status.name)
        })
      }
      yield* Console.log(json ? Format.json(rows) : Format.servers(rows))
    })
  )).pipe(Command.withDescription("Connect to every server and show what each is"))

/** The config's HTTP server `server` and its canonical URL (the key of its tokens). */
const httpServer = (server: string) =>
  Effect.gen(function*() {
    const options = yield* root
    const all = yield* NodeMcpGroup.loadConfig(options.config).pipe(Effect.mapError((error) => connectionFailure(error)))
    const params = all[server]
    if (params === undefined) return yield* unknownName("server", server, Object.keys(all))
    if (params._tag !== "StreamableHttp" && params._tag !== "Sse") {
      return yield* usage(`server "${server}" is not an HTTP server: it has no OAuth tokens`)
    }
    return { params, resource: McpAuth.canonicalResource(params.url), json: options.json, authFile: authFile(options.authFile) }
  })

const serverArgument = Argument.String("server").pipe(Argument.withDescription("The server's name in the config"))

const login = Command.make("login", { server: serverArgument }, ({ server }) =>
  Effect.gen(function*() {
    const { json, resource } = yield* httpServer(server)
    const signedIn = yield* Effect.scoped(Effect.flatMap(connectTo(server), ({ store }) =>
      store.getTokens(resource).pipe(
        Effect.map((tokens) => tokens !== undefined),
        Effect.mapError((error) => connectionFailure(error, server))
      )))
    yield* Console.log(
      json
        ? Format.json({ server, resource, signedIn })
        : signedIn
        ? `signed in to ${server} (${resource})`
        : `${server} (${resource}) did not ask for authorization`
    )
  })).pipe(
    Command.withDescription("Connect to an HTTP server, signing in with OAuth unless a stored token still works"),
    Command.withExamples([{ command: "effect-mcp login search", description: "Sign in to the server named search" }])
  )

const logout = Command.make("logout", { server: serverArgument }, ({ server }) =>
  Effect.gen(function*() {
    const { authFile, json, resource } = yield* httpServer(server)
    const store = yield* NodeMcpAuthStore.make({ path: authFile })
    const signedIn = yield* store.getTokens(resource).pipe(
      Effect.map((tokens) => tokens !== undefined),
      Effect.andThen((had) => Effect.as(store.clearTokens(resource), had)),
      Effect.mapError((error) => connectionFailure(error, server))
    )
    yield* Console.log(
      json
        ? Format.json({ server, resource, signedOut: signedIn })
        : signedIn
        ? `signed out of ${server} (${resource})`
        : `${server} (${resource}) had no tokens`
    )
  })).pipe(
    Command.withDescription("Forget the OAuth tokens of a server (the next connection signs in again)"),
    Command.withExamples([{ command: "effect-mcp logout search", description: "Sign out of the server named search" }])
  )

/**
 * The `effect-mcp` command tree (`servers`, `list tools|resources|templates|prompts`,
 * `call`, `read`, `prompt`, `login`, `logout`), for embedding or testing with
 * `Command.runWith`.
 *
 * @category commands
 * @since 0.1.0
 */
export const command = root.pipe(Command.withSubcommands([serversCommand, list, call, read, prompt, login, logout]))

// -----------------------------------------------------------------------------
// Running
// -----------------------------------------------------------------------------

/**
 * Help and version on stdout when asked for; help after a usage error, and
 * the errors, on stderr.
 */
const presenter: CliOutput.Presenter = {
  present: (event) =>
    Effect.gen(function*() {
      const formatter = yield* CliOutput.Formatter
      switch (event._tag) {
        case "Help":
          return yield* event.reason === "Requested"
            ? Console.log(formatter.formatHelpDoc(event.helpDoc))
            : Console.error(formatter.formatHelpDoc(event.helpDoc))
        case "InvalidInvocation":
          yield* Console.error(formatter.formatHelpDoc(event.helpDoc))
          return yield* Console.error(formatter.formatErrors(event.errors))
        case "Version":
          return yield* Console.log(formatter.formatVersion(event.name, event.version))
      }
    })
}

/**
 * The version `effect-mcp --version` prints.
 *
 * @category constants
 * @since 0.1.0
 */
export const version = "0.1.0"

/**
 * Runs `effect-mcp` with these arguments (without the node and script
 * paths). Every failure ends as a {@link CliFailure}, already printed on
 * stderr, whose exit code the runtime uses; logs below `Warn` are dropped
 * unless `--log-level` says otherwise.
 *
 * @category running
 * @since 0.1.0
 */
export const run: (
  args: ReadonlyArray<string>
) => Effect.Effect<void, CliFailure, Command.Environment> = Effect.fn("McpCli.run")(
  function*(args: ReadonlyArray<string>) {
    yield* Command.runWith(command, { version })(args).pipe(
      Effect.catch((error): Effect.Effect<never, CliFailure> => {
        if (error instanceof CliFailure) {
          return Effect.andThen(Console.error(`effect-mcp: ${error.description}`), Effect.fail(error))
        }
        if (CliError.isCliError(error)) {
          // effect/cli printed the help and the errors already
          return Effect.fail(usage(error._tag === "ShowHelp" ? "usage" : error.message))
        }
        return Effect.die(error)
      }),
      Effect.provideService(CliOutput.Presenter, presenter),
      Effect.provideService(References.MinimumLogLevel, "Warn")
    )
  }
)

/**
 * {@link run} with Node's services: what the `effect-mcp` bin runs under
 * `NodeMcpRuntime.runMain`.
 *
 * @category running
 * @since 0.1.0
 */
export const main = (args: ReadonlyArray<string>): Effect.Effect<void, CliFailure> =>
  run(args).pipe(Effect.provide(NodeServices.layer))
