/**
 * The configuration file of MCP hosts (`mcp.json`, `claude_desktop_config.json`,
 * `.cursor/mcp.json`, ...) as Schemas, and its decoding into `McpGroup.ServerParams`.
 *
 * ```json
 * {
 *   "mcpServers": {
 *     "files": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."], "env": { "DEBUG": "1" } },
 *     "search": { "url": "https://example.com/mcp", "headers": { "Authorization": "Bearer ${SEARCH_TOKEN}" } },
 *     "legacy": { "url": "https://example.com/sse", "transport": "sse" },
 *     "socket": { "url": "ws://127.0.0.1:9000/mcp", "era": "legacy" }
 *   }
 * }
 * ```
 *
 * The strings of `command`, `args`, `env`, `url` and `headers` (and
 * `oauth.clientId` / `oauth.clientSecret`) may name variables of the
 * environment given to {@link decode} (`NodeMcpGroup.loadConfig` gives this
 * process's): `${VAR}` (or `${env:VAR}`) and
 * `${VAR:-default}` (the default when `VAR` is unset or empty). A variable
 * that is unset, without a default, makes its server unresolved
 * (`McpGroup.UnresolvedParams`): connecting it fails with a `ConfigError`
 * naming the variable, the server and the field, while the file's other
 * servers connect as usual. The values that come from variables are secrets
 * (see {@link secretsOf}): errors never quote them, and a group masks them
 * (`***`) in the errors and logs about their server.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import type * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import * as Secrets from "./internal/config/secrets.ts"
import { expandEntry, type Expansion, formatPath } from "./internal/config/variables.ts"
import * as McpError from "./McpError.ts"
import type * as McpGroup from "./McpGroup.ts"

// -----------------------------------------------------------------------------
// Schemas
// -----------------------------------------------------------------------------

const StringRecord = Schema.Record(Schema.String, Schema.String)

/**
 * The names a remote server's transport goes by (in `transport`, or `type` as
 * some hosts write it): `"streamable-http"` (or `"http"`), `"sse"`,
 * `"websocket"` (or `"ws"`). Without one, `ws://` and `wss://` URLs are
 * WebSocket and the others Streamable HTTP (whose client falls back to
 * HTTP+SSE by itself).
 *
 * @category schemas
 * @since 0.1.0
 */
export const Transport = Schema.Literals(["streamable-http", "http", "sse", "websocket", "ws"])

/**
 * @category schemas
 * @since 0.1.0
 */
export type Transport = typeof Transport.Type

/**
 * The era a server's client speaks (`"era"` in any entry; see
 * `McpClient.Options`): `"auto"` (the default) probes with `server/discover`
 * and falls back to `initialize`; `"modern"` (2026-07-28) and `"legacy"`
 * (2024-11-05 … 2025-11-25) pin it.
 *
 * @category schemas
 * @since 0.2.0
 */
export const Era = Schema.Literals(["auto", "modern", "legacy"]).annotate({
  expected: `"auto", "modern" or "legacy"`
})

/**
 * @category schemas
 * @since 0.2.0
 */
export type Era = typeof Era.Type

/**
 * A stdio server (an entry with `command`): the command to spawn, its `args`,
 * `env`, `cwd` and {@link Era}. The child gets `env` over a small default set
 * of this process's variables (see `NodeMcpStdio.ClientOptions`), or over all
 * of them with `"inheritEnv": true`.
 *
 * @category schemas
 * @since 0.1.0
 */
export const StdioServer = Schema.Struct({
  command: Schema.String.check(Schema.isNonEmpty({ expected: "a non-empty command" })),
  args: Schema.optionalKey(Schema.Array(Schema.String)),
  env: Schema.optionalKey(StringRecord),
  cwd: Schema.optionalKey(Schema.String),
  inheritEnv: Schema.optionalKey(Schema.Boolean),
  era: Schema.optionalKey(Era),
  type: Schema.optionalKey(Schema.Literal("stdio")),
  transport: Schema.optionalKey(Schema.Literal("stdio"))
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type StdioServer = typeof StdioServer.Type

const isUrl = Schema.makeFilter<string>(
  (url) => URL.canParse(url),
  { expected: "an absolute URL" }
)

/**
 * The OAuth settings of an HTTP server (`"oauth"`: `clientId`, `clientSecret`,
 * `scope`, `clientMetadataUrl`, `callbackPort`; see `McpGroup.OAuthParams`),
 * or `false` to never sign in.
 *
 * @category schemas
 * @since 0.1.0
 */
export const OAuth = Schema.Union([
  Schema.Literal(false),
  Schema.Struct({
    clientId: Schema.optionalKey(Schema.String),
    clientSecret: Schema.optionalKey(Schema.String),
    scope: Schema.optionalKey(Schema.String),
    clientMetadataUrl: Schema.optionalKey(Schema.String.check(isUrl)),
    callbackPort: Schema.optionalKey(
      Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 65535 }, { expected: "a port (0-65535)" }))
    )
  })
])

/**
 * @category schemas
 * @since 0.1.0
 */
export type OAuth = typeof OAuth.Type

/**
 * A remote server (an entry with `url`): its URL, `headers`, transport (see
 * {@link Transport}), {@link Era} and, for HTTP, OAuth settings (see
 * {@link OAuth}).
 *
 * @category schemas
 * @since 0.1.0
 */
export const RemoteServer = Schema.Struct({
  url: Schema.String.check(isUrl),
  headers: Schema.optionalKey(StringRecord),
  transport: Schema.optionalKey(Transport),
  type: Schema.optionalKey(Transport),
  oauth: Schema.optionalKey(OAuth),
  era: Schema.optionalKey(Era)
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type RemoteServer = typeof RemoteServer.Type

/**
 * The file: `mcpServers`, by name. Each entry is checked by {@link decode}
 * (as a {@link StdioServer} or a {@link RemoteServer}), so that an error names
 * its server. Entries with `"disabled": true` are left out; other fields
 * hosts add (`autoApprove`, `timeout`, ...) are ignored.
 *
 * @category schemas
 * @since 0.1.0
 */
export const ConfigFile = Schema.Struct({
  mcpServers: Schema.Record(Schema.String, Schema.Unknown)
})

/**
 * @category schemas
 * @since 0.1.0
 */
export type ConfigFile = typeof ConfigFile.Type

const Filter = Schema.Struct({
  allow: Schema.optionalKey(Schema.Array(Schema.String)),
  deny: Schema.optionalKey(Schema.Array(Schema.String))
})

/**
 * What a gateway serves of a server (`McpGateway.Filters`): `"tools"`,
 * `"prompts"` and `"resources"` in the server's entry, each
 * `{ "allow": [...], "deny": [...] }` of names (or URIs) where `*` stands for
 * any run of characters.
 *
 * @category schemas
 * @since 0.3.0
 */
export const Filters = Schema.Struct({
  tools: Schema.optionalKey(Filter),
  prompts: Schema.optionalKey(Filter),
  resources: Schema.optionalKey(Filter)
})

/**
 * @category schemas
 * @since 0.3.0
 */
export type Filters = typeof Filters.Type

// -----------------------------------------------------------------------------
// Decoding
// -----------------------------------------------------------------------------

const formatter = SchemaIssue.makeFormatterStandardSchemaV1()

const decodeWith = <S extends Schema.Codec<any, unknown>>(
  schema: S,
  value: unknown,
  source: string,
  server: string | undefined,
  prefix: ReadonlyArray<PropertyKey> = []
): Result.Result<S["Type"], McpError.McpError> => {
  const decoded = Schema.decodeUnknownResult(schema as Schema.Codec<S["Type"], unknown>)(value, { reportInput: true })
  if (Result.isSuccess(decoded)) return Result.succeed(decoded.success)
  const issues = formatter(decoded.failure.issue).issues
  const first = issues[0]
  return Result.fail(McpError.config(source, first?.message ?? decoded.failure.message, {
    server,
    field: formatPath([...prefix, ...(first?.path ?? [])])
  }))
}

const describe = (value: unknown): string => value === null ? "null" : Array.isArray(value) ? "an array" : typeof value

const eraOf = (entry: { readonly era?: Era }): McpGroup.CommonParams =>
  entry.era === undefined ? {} : { era: entry.era }

const remoteParams = (
  entry: RemoteServer,
  source: string,
  server: string
): Result.Result<McpGroup.ServerParams, McpError.McpError> => {
  if (entry.transport !== undefined && entry.type !== undefined && entry.transport !== entry.type) {
    return Result.fail(
      McpError.config(source, `"transport" says ${entry.transport} and "type" says ${entry.type}`, {
        server,
        field: "type"
      })
    )
  }
  const protocol = new URL(entry.url).protocol
  const isWs = protocol === "ws:" || protocol === "wss:"
  const isHttp = protocol === "http:" || protocol === "https:"
  const given = entry.transport ?? entry.type
  const transport = given === undefined ? (isWs ? "websocket" : "streamable-http") : given
  const headers = entry.headers === undefined ? {} : { headers: entry.headers }
  const era = eraOf(entry)
  const field = entry.transport !== undefined ? "transport" : "type"
  switch (transport) {
    case "websocket":
    case "ws":
      if (!isWs) {
        return Result.fail(
          McpError.config(source, `a WebSocket URL starts with ws:// or wss://, got ${protocol}//`, {
            server,
            field: "url"
          })
        )
      }
      if (entry.oauth !== undefined && entry.oauth !== false) {
        return Result.fail(
          McpError.config(source, "OAuth is for HTTP servers, not WebSocket ones", { server, field: "oauth" })
        )
      }
      return Result.succeed({ _tag: "WebSocket", url: entry.url, ...headers, ...era })
    case "sse":
    case "streamable-http":
    case "http":
      if (!isHttp) {
        return Result.fail(
          McpError.config(
            source,
            `an HTTP URL starts with http:// or https://, got ${protocol}//${
              given === undefined ? "" : ` (${field}: ${given})`
            }`,
            { server, field: "url" }
          )
        )
      }
      return Result.succeed({
        _tag: transport === "sse" ? "Sse" : "StreamableHttp",
        url: entry.url,
        ...headers,
        ...(entry.oauth === undefined ? {} : { oauth: entry.oauth }),
        ...era
      })
  }
}

// -----------------------------------------------------------------------------
// Variables
// -----------------------------------------------------------------------------

/**
 * The variables `${VAR}` and `${VAR:-default}` are read from (`undefined`:
 * unset).
 *
 * @category decoding
 * @since 0.2.0
 */
export type Environment = Readonly<Record<string, string | undefined>>

/**
 * Options of {@link decode} and {@link parse}.
 *
 * @category decoding
 * @since 0.2.0
 */
export interface DecodeOptions {
  /**
   * Where `${VAR}` and `${VAR:-default}` are read from. Without it, strings
   * are taken as they are written.
   */
  readonly env?: Environment | undefined
}

/**
 * The values that came from variables of the environment when `params` was
 * decoded by {@link decode} (none for params made otherwise, or copied).
 * Whoever prints text about the server (its errors, its stderr) masks them
 * (see {@link mask}); a group masks them in its errors and logs about the
 * server (values shorter than 4 characters excepted).
 *
 * @category decoding
 * @since 0.2.0
 */
export const secretsOf: (params: McpGroup.ServerParams) => ReadonlyArray<Redacted.Redacted<string>> = Secrets.secretsOf

/**
 * `text` with every occurrence of the secrets replaced by `***`, the
 * longest first (so that a secret containing another is masked whole).
 *
 * @category decoding
 * @since 0.2.0
 */
export const mask: (text: string, secrets: ReadonlyArray<string>) => string = Secrets.mask

const serverParams = (
  name: string,
  value: unknown,
  source: string,
  env: Environment | undefined
): Result.Result<McpGroup.ServerParams | undefined, McpError.McpError> => {
  if (!Predicate.isObject(value)) {
    return Result.fail(McpError.config(source, `expected an object, got ${describe(value)}`, { server: name }))
  }
  if (value.disabled === true) return Result.succeed(undefined)
  if (env === undefined) return entryParams(name, value, source)
  const expansion: Expansion = { env, secrets: [] }
  const expanded = expandEntry(value, expansion, source, name)
  // an unset variable concerns its server only: it fails when connected
  if (Result.isFailure(expanded)) return Result.succeed({ _tag: "Unresolved", error: expanded.failure })
  const params = entryParams(name, expanded.success, source)
  if (Result.isFailure(params)) return Result.fail(Secrets.maskError(params.failure, expansion.secrets))
  if (params.success !== undefined) Secrets.remember(params.success, expansion.secrets)
  return params
}

const entryParams = (
  name: string,
  value: Record<PropertyKey, unknown>,
  source: string
): Result.Result<McpGroup.ServerParams | undefined, McpError.McpError> => {
  const hasCommand = "command" in value
  const hasUrl = "url" in value
  if (hasCommand && hasUrl) {
    return Result.fail(
      McpError.config(source, `has both "command" (stdio) and "url" (remote); keep one`, { server: name })
    )
  }
  if (hasCommand) {
    return Result.map(decodeWith(StdioServer, value, source, name), (entry): McpGroup.ServerParams => ({
      _tag: "Stdio",
      command: entry.command,
      ...(entry.args === undefined ? {} : { args: entry.args }),
      ...(entry.env === undefined ? {} : { env: entry.env }),
      ...(entry.cwd === undefined ? {} : { cwd: entry.cwd }),
      ...(entry.inheritEnv === undefined ? {} : { inheritEnv: entry.inheritEnv }),
      ...eraOf(entry)
    }))
  }
  if (hasUrl) {
    const entry = decodeWith(RemoteServer, value, source, name)
    return Result.isFailure(entry) ? Result.fail(entry.failure) : remoteParams(entry.success, source, name)
  }
  return Result.fail(
    McpError.config(source, `needs a "command" (a stdio server) or a "url" (a remote server)`, { server: name })
  )
}

/**
 * Decodes a parsed configuration file into server parameters, by name, in
 * the file's order. `source` names the file in errors: a bad file fails with
 * a `ConfigError` naming the source, the server and the field
 * (`mcp.json: server "files": args[1]: Expected string, got 3`). With
 * `options.env`, `${VAR}` and `${VAR:-default}` are expanded first (see the
 * module's description); an entry naming an unset variable becomes
 * `{ _tag: "Unresolved", error }` (`McpGroup.UnresolvedParams`), whose
 * connection fails with that `ConfigError`
 * (`mcp.json: server "search": headers.Authorization: the variable TOKEN is not set ...`),
 * and its other fields are checked once the variable is set.
 *
 * @category decoding
 * @since 0.1.0
 */
export const decode: (
  json: unknown,
  source: string,
  options?: DecodeOptions
) => Effect.Effect<Record<string, McpGroup.ServerParams>, McpError.McpError> = Effect.fn("McpConfig.decode")(
  function*(json: unknown, source: string, options?: DecodeOptions) {
    if (!Predicate.isObject(json)) {
      return yield* McpError.config(source, `expected a JSON object with "mcpServers", got ${describe(json)}`)
    }
    if (!("mcpServers" in json)) {
      return yield* McpError.config(source, `expected a JSON object with "mcpServers"`, { field: "mcpServers" })
    }
    const file = yield* Effect.fromResult(decodeWith(ConfigFile, json, source, undefined))
    const servers: Record<string, McpGroup.ServerParams> = {}
    for (const [name, value] of Object.entries(file.mcpServers)) {
      const params = yield* Effect.fromResult(serverParams(name, value, source, options?.env))
      if (params !== undefined) servers[name] = params
    }
    return servers
  }
)

/**
 * Parses the text of a configuration file (JSON) and decodes it
 * ({@link decode}). Reading the file is the platform's business
 * (`NodeMcpGroup.loadConfig`).
 *
 * @category decoding
 * @since 0.1.0
 */
export const parse: (
  text: string,
  source: string,
  options?: DecodeOptions
) => Effect.Effect<Record<string, McpGroup.ServerParams>, McpError.McpError> = Effect.fn("McpConfig.parse")(
  function*(text: string, source: string, options?: DecodeOptions) {
    const json = Result.try({
      try: () => JSON.parse(text) as unknown,
      catch: (cause) => McpError.config(source, `not valid JSON: ${McpError.messageOf(cause)}`)
    })
    return yield* decode(yield* Effect.fromResult(json), source, options)
  }
)

/**
 * The gateway filters of a parsed configuration file's servers, by name
 * (servers without any are left out, and so are disabled ones): see
 * {@link Filters}. A bad one fails with a `ConfigError` naming the source,
 * the server and the field.
 *
 * @category decoding
 * @since 0.3.0
 */
export const decodeFilters: (
  json: unknown,
  source: string
) => Effect.Effect<Record<string, Filters>, McpError.McpError> = Effect.fn("McpConfig.decodeFilters")(
  function*(json: unknown, source: string) {
    const file = yield* Effect.fromResult(decodeWith(ConfigFile, json, source, undefined))
    const filters: Record<string, Filters> = {}
    for (const [name, entry] of Object.entries(file.mcpServers)) {
      if (!Predicate.isObject(entry) || entry.disabled === true) continue
      const { prompts, resources, tools } = entry as Record<string, unknown>
      if (tools === undefined && prompts === undefined && resources === undefined) continue
      const given = {
        ...(tools === undefined ? {} : { tools }),
        ...(prompts === undefined ? {} : { prompts }),
        ...(resources === undefined ? {} : { resources })
      }
      filters[name] = yield* Effect.fromResult(decodeWith(Filters, given, source, name))
    }
    return filters
  }
)
