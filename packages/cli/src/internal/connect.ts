/**
 * How `effect-mcp` connects: the root command and its shared flags, the
 * config, where OAuth tokens are kept and how the browser is opened, and the
 * `McpGroup` of the servers a command uses.
 *
 * @internal
 */
import * as McpAuth from "@effect-mcp/core/McpAuth"
import * as McpConfig from "@effect-mcp/core/McpConfig"
import type * as McpGateway from "@effect-mcp/core/McpGateway"
import * as McpGroup from "@effect-mcp/core/McpGroup"
import { NodeMcpAuthorizer, NodeMcpAuthStore, NodeMcpGateway, NodeMcpGroup } from "@effect-mcp/platform-node"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Console from "effect/Console"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Path from "effect/Path"
import * as Redacted from "effect/Redacted"
import * as Adhoc from "./adhoc.ts"
import * as Failures from "./failures.ts"
import * as Format from "./format.ts"
import * as Questions from "./questions.ts"

/** The version `effect-mcp --version` prints, and the OAuth client announces. */
export const version = "0.1.0"

/** The name hook of `--qualify`: tools and prompts are named `<server>_<name>`. */
export const qualify: McpGroup.NameHook = McpGroup.prefixed({ separator: "_" })

/** `effect-mcp` without its subcommands: the flags every command shares. */
export const root = Command.make("effect-mcp").pipe(
  Command.withSharedFlags({
    config: Flag.String("config").pipe(
      Flag.withAlias("c"),
      Flag.withMetavar("FILE"),
      Flag.withDescription(`The servers to connect to: an mcp.json file (default ${Adhoc.defaultConfig})`),
      Flag.optional
    ),
    stdio: Flag.String("stdio").pipe(
      Flag.withMetavar("COMMAND"),
      Flag.withDescription(
        "Connect to one server without a config: spawn this command line and speak over its stdin and stdout. " +
          "It is split into words like a shell would (quotes, backslashes), but no shell is run: nothing is " +
          "expanded ($VARS, ~, globs) and pipes or redirections are plain characters. Not with --url or --config"
      ),
      Flag.optional
    ),
    url: Flag.String("url").pipe(
      Flag.withMetavar("URL"),
      Flag.withDescription(
        "Connect to one server without a config: this Streamable HTTP endpoint (http:// or https://; falls back " +
          "to HTTP+SSE). Not with --stdio or --config"
      ),
      Flag.optional
    ),
    header: Flag.String("header").pipe(
      Flag.withAlias("H"),
      Flag.withMetavar("'NAME: VALUE'"),
      Flag.withDescription("With --url: send this HTTP header (repeatable; an Authorization header turns OAuth off)"),
      Flag.atLeast(0)
    ),
    env: Flag.String("env").pipe(
      Flag.withAlias("e"),
      Flag.withMetavar("KEY=VALUE"),
      Flag.withDescription(
        "With --stdio: set this variable for the server, over the environment it inherits (PATH, HOME, USER, " +
          "LOGNAME, SHELL, TERM, TMPDIR, TZ, LANG, LANGUAGE, LC_*; not the rest of this shell's) (repeatable)"
      ),
      Flag.atLeast(0)
    ),
    inheritEnv: Flag.Boolean("inherit-env").pipe(
      Flag.withDescription(
        "With --stdio: pass this shell's whole environment to the server, not only the default set listed " +
          "under --env (--env still wins)"
      ),
      Flag.withDefault(false)
    ),
    cwd: Flag.String("cwd").pipe(
      Flag.withMetavar("DIR"),
      Flag.withDescription("With --stdio: the server's working directory"),
      Flag.optional
    ),
    name: Flag.String("name").pipe(
      Flag.withMetavar("NAME"),
      Flag.withDescription(
        "With --stdio or --url: the server's name (default: the program's, e.g. server for \"node server.js\", or the URL's host)"
      ),
      Flag.optional
    ),
    server: Flag.String("server").pipe(
      Flag.withAlias("s"),
      Flag.withMetavar("NAME"),
      Flag.withDescription(
        "Connect to this server of the config only (optional with --stdio or --url: the one server)"
      ),
      Flag.optional
    ),
    era: Flag.Literals("era", ["auto", "modern", "legacy"]).pipe(
      Flag.withMetavar("ERA"),
      Flag.withDescription(
        "The era to speak to every server, over each one's \"era\" in the config: auto probes with " +
          "server/discover and falls back to initialize, modern pins 2026-07-28, legacy initialize (2025-11-25 and before)"
      ),
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
    ),
    answers: Flag.String("answers").pipe(
      Flag.withMetavar("JSON"),
      Flag.withDescription(
        "Answer the servers' elicitations without asking: an object of field values ({\"name\":\"Ada\"}) accepts " +
          "every form with them (and every URL), {\"action\":\"decline\"} or {\"action\":\"cancel\"} answers every " +
          "one so, a JSON array of those answers them one by one in order (then they are declined). Without it a " +
          "terminal asks field by field; without a terminal they are declined"
      ),
      Flag.optional
    ),
    open: Flag.Boolean("open").pipe(
      Flag.withDescription(
        "Open the URL of an accepted URL elicitation in the browser (http: and https: URLs only; " +
          "$EFFECT_MCP_BROWSER, else the platform's opener)"
      ),
      Flag.withDefault(false)
    ),
    root: Flag.String("root").pipe(
      Flag.withMetavar("DIR"),
      Flag.withDescription(
        "Offer this directory to the servers as a root (roots/list: its file:// URI; repeatable). Without it no " +
          "roots are declared"
      ),
      Flag.atLeast(0)
    ),
    samplingCommand: Flag.String("sampling-command").pipe(
      Flag.withMetavar("COMMAND"),
      Flag.withDescription(
        "Answer the servers' sampling requests with this program: it gets the request's params as JSON on stdin " +
          "(and EFFECT_MCP_SERVER) and prints a CreateMessageResult as JSON on stdout (split like --stdio, no " +
          "shell). Without it sampling is declined"
      ),
      Flag.optional
    ),
    samplingTimeout: Flag.Int("sampling-timeout").pipe(
      Flag.withMetavar("SECONDS"),
      Flag.withDescription(
        `How long --sampling-command may take to answer, then it is stopped (default ${Questions.DEFAULT_SAMPLING_TIMEOUT})`
      ),
      Flag.optional
    )
  }),
  Command.withDescription(
    "A command-line MCP client over the servers of an mcp.json config, or one server given by --stdio or --url"
  ),
  Command.withExamples([
    { command: "effect-mcp list tools", description: "The tools of every server of ./mcp.json" },
    {
      command: "effect-mcp --stdio \"node server.js\" list tools",
      description: "The tools of a stdio server, no config"
    },
    {
      command:
        "effect-mcp --url http://127.0.0.1:3000/mcp -H 'Authorization: Bearer t' call echo --args '{\"text\":\"hi\"}'",
      description: "Call a tool of a Streamable HTTP server, no config"
    }
  ])
)

/** The group's service. */
export type Group = McpGroup.McpGroup["Service"]

/** What a command gets once its servers are connected. */
export interface Connected {
  readonly group: Group
  readonly json: boolean
  /** The servers' names, in the config's order. */
  readonly order: ReadonlyArray<string>
  /** Where OAuth tokens are kept. */
  readonly store: McpAuth.McpAuthStore["Service"]
  /** The values masked in what is printed (see {@link secretsOf}). */
  readonly secrets: Secrets
  /** Failed when the command must end at once: `--answers` that do not fit a form. */
  readonly stop: Deferred.Deferred<never, Failures.CliFailure>
}

// -----------------------------------------------------------------------------
// Secrets
// -----------------------------------------------------------------------------

/** The names of variables (and headers) whose values look like secrets. */
const SECRET_NAME =
  /TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|API_?KEY|ACCESS_?KEY|PRIVATE|AUTH|COOKIE|SESSION|KEY$/i

/** Shorter values are not masked: they would mask unrelated text (`DEBUG=1`). */
const MIN_SECRET_LENGTH = 4

/** What the CLI masks: in everything it prints, and also in errors and the servers' stderr. */
export interface Secrets {
  /**
   * Masked in everything: the values that came from `${VAR}` in the config,
   * the values of `env` and `headers` whose names look secret (and the token
   * of an `Authorization: Bearer ...`), OAuth client secrets, and the values
   * of this process's variables whose names look secret (`*TOKEN*`,
   * `*SECRET*`, `*API_KEY*`, `*PASSWORD*`, ...) of 8 characters or more.
   */
  readonly printed: ReadonlyArray<string>
  /** Masked in errors and the servers' stderr: the above, and every value of `env` and `headers`. */
  readonly diagnostics: ReadonlyArray<string>
}

/** The secrets of the servers (values shorter than 4 characters are left alone). */
export const secretsOf = (
  servers: Record<string, McpGroup.ServerParams>,
  env: Readonly<Record<string, string | undefined>>
): Secrets => {
  const printed = new Set<string>()
  const diagnostics = new Set<string>()
  const add = (value: string | undefined, everywhere: boolean) => {
    if (value === undefined || value.length < MIN_SECRET_LENGTH) return
    diagnostics.add(value)
    if (everywhere) printed.add(value)
  }
  const addAll = (record: Readonly<Record<string, string>> | undefined) => {
    for (const [name, value] of Object.entries(record ?? {})) {
      const secret = SECRET_NAME.test(name)
      add(value, secret)
      // the credentials of `Bearer <token>`, `Basic <credentials>`
      add(value.trim().split(/\s+/).slice(1).join(" "), secret)
    }
  }
  for (const params of Object.values(servers)) {
    for (const secret of McpConfig.secretsOf(params)) add(Redacted.value(secret), true)
    if (params._tag === "Stdio") addAll(params.env)
    if (params._tag === "StreamableHttp" || params._tag === "Sse" || params._tag === "WebSocket") addAll(params.headers)
    if (
      (params._tag === "StreamableHttp" || params._tag === "Sse") && params.oauth !== undefined &&
      params.oauth !== false
    ) {
      add(params.oauth.clientSecret, true)
    }
  }
  for (const [name, value] of Object.entries(env)) {
    if (SECRET_NAME.test(name) && value !== undefined && value.length >= 8) add(value, true)
  }
  return { printed: [...printed], diagnostics: [...diagnostics] }
}

/** This process's console, with the secrets masked in what it prints. */
const maskingConsole = (console: Console.Console, secrets: ReadonlyArray<string>): Console.Console => {
  const clean = (args: ReadonlyArray<unknown>) =>
    args.map((arg) => typeof arg === "string" ? Format.mask(arg, secrets) : arg)
  return {
    ...console,
    log: (...args) => console.log(...clean(args)),
    error: (...args) => console.error(...clean(args)),
    info: (...args) => console.info(...clean(args)),
    warn: (...args) => console.warn(...clean(args)),
    debug: (...args) => console.debug(...clean(args))
  }
}

/**
 * `--verbose`: the servers' stderr on this process's stderr, line by line,
 * prefixed with the server's name, made safe for a terminal and with the
 * secrets masked. A line longer than 8 KiB is written in parts.
 */
const verboseStderr = (secrets: () => ReadonlyArray<string>) => {
  const pending = new Map<string, string>()
  const write = (server: string, line: string) =>
    process.stderr.write(
      `[${Format.terminal(server, { line: true })}] ${Format.terminal(Format.mask(line, secrets()))}\n`
    )
  return (server: string, text: string) =>
    Effect.sync(() => {
      const lines = ((pending.get(server) ?? "") + text).split("\n")
      let rest = lines.pop() ?? ""
      for (const line of lines) write(server, line.replace(/\r$/, ""))
      if (rest.length > 8 * 1024) {
        write(server, rest)
        rest = ""
      }
      pending.set(server, rest)
    })
}

/** The auth file: `--auth-file`, else `EFFECT_MCP_AUTH_FILE`, else the store's default. */
export const authFile = (flag: Option.Option<string>): string | undefined => {
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

/** The servers of the command line, and what a gateway serves of each. */
interface Servers {
  readonly all: Record<string, McpGroup.ServerParams>
  /** The config's `"tools"`, `"prompts"` and `"resources"` filters, when asked for. */
  readonly upstreams: Readonly<Record<string, McpGateway.UpstreamOptions>>
}

/**
 * The servers of the command line: the one of `--stdio` or `--url`, else
 * those of the config (`--config`, default `./mcp.json`), with their filters
 * when `filters` is set; a missing or invalid file is a connection failure.
 */
const loadServers = (options: Adhoc.Flags, filters: boolean) =>
  Effect.flatMap(Adhoc.source(options), (source): Effect.Effect<Servers, Failures.CliFailure> => {
    if (source._tag === "AdHoc") return Effect.succeed({ all: { [source.name]: source.params }, upstreams: {} })
    const config = filters
      ? NodeMcpGateway.loadConfig(source.path)
      : Effect.map(NodeMcpGroup.loadConfig(source.path), (servers) => ({ servers, upstreams: {} }))
    return config.pipe(
      Effect.map(({ servers, upstreams }) => ({ all: { ...servers }, upstreams })),
      Effect.mapError((error) => Failures.connectionFailure(error))
    )
  })

/** The servers with `--era`, when given, in place of their own `"era"`. */
const withEra = (
  servers: Record<string, McpGroup.ServerParams>,
  era: Option.Option<NonNullable<McpGroup.CommonParams["era"]>>
): Record<string, McpGroup.ServerParams> =>
  Option.isNone(era)
    ? servers
    : Object.fromEntries(Object.entries(servers).map(([name, params]) => [name, { ...params, era: era.value }]))

/**
 * The servers a command uses: `only`, else `--server`, else all (with
 * `--stdio` or `--url` there is one server, and a name, if given, must be
 * its name), `--era` laid over them; with the command line's flags, their
 * secrets, and (`filters`) the config's filters.
 */
export const selectServers = (only: string | undefined, filters = false) =>
  Effect.gen(function*() {
    const options = yield* root
    // serve passes its clients' questions on to them
    const asking = Questions.given(options)
    if (filters && asking.length > 0) {
      return yield* Failures.usage(
        `${asking.join(", ")}: not for serve, which passes the servers' questions to its clients`
      )
    }
    const { all, upstreams } = yield* loadServers(options, filters)
    let servers = all
    const selected = only !== undefined ? Option.some(only) : options.server
    if (Option.isSome(selected)) {
      const name = selected.value
      const params = all[name]
      if (params === undefined) {
        return yield* Failures.unknownName("server", name, Object.keys(all))
      }
      servers = { [name]: params }
    }
    const secrets = secretsOf(servers, process.env)
    return { options, servers: withEra(servers, options.era), upstreams, secrets }
  })

/**
 * How a command reaches its servers: their stderr kept (for the error that
 * reports their death), or passed through masked with `--verbose`; OAuth
 * with the auth file (`--auth-file`) and the browser.
 */
export const connector = (
  options: { readonly verbose: boolean },
  secrets: Secrets,
  store: McpAuth.McpAuthStore["Service"]
): NodeMcpGroup.ConnectorOptions => ({
  stderr: "capture",
  // a person waits at the terminal: a server that ignores the end of its stdin gets 1 s, then
  // SIGTERM and 1 s more, then SIGKILL (the library's defaults are 2 s and 2 s)
  shutdown: { closeTimeout: "1 second", termTimeout: "1 second" },
  ...(options.verbose ? { onStderr: verboseStderr(() => secrets.diagnostics) } : {}),
  auth: { ...authOptions(), store }
})

/**
 * Connects to the servers: `only`, else `--server`, else all. With `--stdio`
 * or `--url` there is one server, and a name, if given, must be its name.
 */
export const connectTo = (only: string | undefined) =>
  Effect.gen(function*() {
    const { options, secrets, servers } = yield* selectServers(only)
    // the flags of the servers' questions are checked before anything starts
    const settings = yield* Questions.settingsOf(options)
    const store = yield* NodeMcpAuthStore.make({ path: authFile(options.authFile) })
    const stop = yield* Deferred.make<never, Failures.CliFailure>()
    const answering = yield* Questions.clientOptions(settings, stop)
    // one shot: a server that goes down stays down, and no list is followed (2026-07-28: no
    // subscriptions/listen stream; following a task still opens its own)
    const context = yield* Layer.build(NodeMcpGroup.layer({
      reconnect: false,
      client: (server) => ({ followLists: false, ...answering(server) }),
      connector: connector(options, secrets, store),
      ...(options.qualify ? { nameHook: qualify } : {})
    })).pipe(Effect.mapError((error) => Failures.masked(Failures.connectionFailure(error), secrets.diagnostics)))
    const group = Context.get(context, McpGroup.McpGroup)
    // connected one by one (concurrently) so that a failure names its server
    yield* Effect.forEach(
      Object.entries(servers),
      ([name, params]) =>
        group.connect(name, params).pipe(
          Effect.mapError((error) =>
            Failures.masked(
              Failures.connectionFailure(error, name, {
                era: params.era,
                fromFlag: Option.isSome(options.era)
              }),
              secrets.diagnostics
            )
          )
        ),
      { concurrency: "unbounded", discard: true }
    )
    return { group, json: options.json, order: Object.keys(servers), store, secrets, stop } satisfies Connected
  })

/**
 * Runs `use` with the servers connected (`--server`, else all); they are
 * closed when it ends, or when `--answers` do not fit a server's form (that
 * usage error ends it). What it prints and its failure have the secrets
 * masked (see {@link Secrets}).
 */
export const withGroup = <A>(
  use: (connected: Connected) => Effect.Effect<A, Failures.CliFailure>
): Effect.Effect<A, Failures.CliFailure, Command.CommandContext<"effect-mcp"> | FileSystem.FileSystem | Path.Path> =>
  Effect.scoped(
    Effect.flatMap(
      connectTo(undefined),
      (connected) =>
        Effect.raceFirst(use(connected), Deferred.await(connected.stop)).pipe(
          Effect.mapError((error) => Failures.masked(error, connected.secrets.diagnostics)),
          Effect.updateService(Console.Console, (console) => maskingConsole(console, connected.secrets.printed))
        )
    )
  )

/**
 * The HTTP server `server` (optional with `--url`: the one server) and its
 * canonical URL (the key of its tokens).
 */
export const httpServer = (named: string | undefined) =>
  Effect.gen(function*() {
    const options = yield* root
    if (named === undefined && Option.isNone(options.url) && Option.isNone(options.stdio)) {
      return yield* Failures.usage("which server? Name one of the config, or give --url")
    }
    const { all } = yield* loadServers(options, false)
    const server = named ?? Object.keys(all)[0]!
    const params = all[server]
    if (params === undefined) return yield* Failures.unknownName("server", server, Object.keys(all))
    if (params._tag === "Unresolved") return yield* Failures.connectionFailure(params.error, server)
    if (params._tag !== "StreamableHttp" && params._tag !== "Sse") {
      return yield* Failures.usage(`server "${server}" is not an HTTP server: it has no OAuth tokens`)
    }
    return {
      server,
      params,
      resource: McpAuth.canonicalResource(params.url),
      json: options.json,
      authFile: authFile(options.authFile)
    }
  })
