/**
 * The front of `effect-mcp serve`: Streamable HTTP (`--port`, `--host`, and
 * the OAuth resource server of the `--auth-*` flags) or this process's stdio
 * (`--serve-stdio`). Every mistake is a usage error, found before anything
 * is started.
 *
 * @internal
 */
import type * as McpResourceServer from "@effect-mcp/core/McpResourceServer"
import { NodeMcpJwtVerifier } from "@effect-mcp/platform-node"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Failures from "./failures.ts"

/** The flags of the front. */
export interface Flags {
  readonly port: Option.Option<number>
  readonly host: Option.Option<string>
  readonly serveStdio: boolean
  readonly allowUnauthenticated: boolean
  readonly authIssuer: Option.Option<string>
  readonly authJwksUrl: Option.Option<string>
  readonly authAudience: ReadonlyArray<string>
  readonly authScope: ReadonlyArray<string>
  readonly authResource: Option.Option<string>
}

/** Where the gateway is served. */
export type Front =
  | { readonly _tag: "Stdio" }
  | {
    readonly _tag: "Http"
    readonly port: number
    /** The address to bind, without brackets. */
    readonly host: string
    readonly auth: McpResourceServer.Options | undefined
    /** The issuer whose tokens are accepted, with `auth`. */
    readonly issuer: string | undefined
  }

/** `localhost`, `127.0.0.0/8` and `::1`: reachable from this machine only. */
const isLoopback = (host: string): boolean =>
  host === "localhost" || host === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)

/** Every address of the machine: a token's resource cannot be told from it. */
const isWildcard = (host: string): boolean => host === "0.0.0.0" || host === "::"

const httpUrl = (flag: string, text: string): Result.Result<string, Failures.CliFailure> => {
  const url = URL.canParse(text) ? new URL(text) : undefined
  return url !== undefined && (url.protocol === "http:" || url.protocol === "https:")
    ? Result.succeed(text)
    : Result.fail(Failures.usage(`${flag} must be an http:// or https:// URL, got ${JSON.stringify(text)}`))
}

/** The flags of a protected endpoint given: the names of those given. */
const authFlagsGiven = (flags: Flags): ReadonlyArray<string> => [
  ...(Option.isSome(flags.authIssuer) ? ["--auth-issuer"] : []),
  ...(Option.isSome(flags.authJwksUrl) ? ["--auth-jwks-url"] : []),
  ...(flags.authAudience.length > 0 ? ["--auth-audience"] : []),
  ...(flags.authScope.length > 0 ? ["--auth-scope"] : []),
  ...(Option.isSome(flags.authResource) ? ["--auth-resource"] : [])
]

/**
 * The resource server of the `--auth-*` flags: tokens are JWTs signed by a
 * key of `--auth-jwks-url`, issued by `--auth-issuer`, for this endpoint (or
 * an `--auth-audience`), with every `--auth-scope`; `undefined` without
 * them.
 */
const auth = (flags: Flags): Result.Result<McpResourceServer.Options | undefined, Failures.CliFailure> =>
  Result.gen(function*() {
    const given = authFlagsGiven(flags)
    if (given.length === 0) return undefined
    if (Option.isNone(flags.authIssuer) || Option.isNone(flags.authJwksUrl)) {
      return yield* Result.fail(Failures.usage(
        `${given.join(", ")}: protecting the endpoint needs both --auth-issuer URL (the authorization server) and ` +
          `--auth-jwks-url URL (the keys its tokens are signed with)`
      ))
    }
    const issuer = yield* httpUrl("--auth-issuer", flags.authIssuer.value)
    const jwksUrl = yield* httpUrl("--auth-jwks-url", flags.authJwksUrl.value)
    const resource = Option.isSome(flags.authResource)
      ? yield* httpUrl("--auth-resource", flags.authResource.value)
      : undefined
    return {
      authorizationServers: [issuer],
      verify: NodeMcpJwtVerifier.make({ jwksUrl, issuer }),
      ...(resource === undefined ? {} : { resource }),
      ...(flags.authScope.length === 0 ? {} : { requiredScopes: flags.authScope, scopesSupported: flags.authScope }),
      ...(flags.authAudience.length === 0 ? {} : { audiences: flags.authAudience })
    }
  })

/**
 * Checks the front's flags together: exactly one of `--port` and
 * `--serve-stdio`; `--host` and the `--auth-*` flags with `--port` only; a
 * host beyond loopback only with auth or `--allow-unauthenticated`; on a
 * wildcard address, auth needs `--auth-resource`.
 */
export const parse = (flags: Flags): Result.Result<Front, Failures.CliFailure> =>
  Result.gen(function*() {
    if (flags.serveStdio) {
      if (Option.isSome(flags.port)) {
        return yield* Result.fail(Failures.usage(
          "--port and --serve-stdio cannot be used together: serve over Streamable HTTP (--port) or over stdio (--serve-stdio)"
        ))
      }
      const misplaced = [
        ...(Option.isSome(flags.host) ? ["--host"] : []),
        ...(flags.allowUnauthenticated ? ["--allow-unauthenticated"] : []),
        ...authFlagsGiven(flags)
      ]
      if (misplaced.length > 0) {
        return yield* Result.fail(Failures.usage(
          `${misplaced.join(", ")} ${misplaced.length === 1 ? "goes" : "go"} with --port, not --serve-stdio`
        ))
      }
      return { _tag: "Stdio" } as const
    }
    if (Option.isNone(flags.port)) {
      return yield* Result.fail(Failures.usage(
        "serve needs a front: --port PORT (Streamable HTTP, 0 for a free port) or --serve-stdio (be a stdio server)"
      ))
    }
    const port = flags.port.value
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      return yield* Result.fail(Failures.usage(`--port must be a port number from 0 to 65535, got ${port}`))
    }
    const host = Option.getOrElse(flags.host, () => "127.0.0.1").trim().replace(/^\[(.*)\]$/, "$1")
    if (host === "") return yield* Result.fail(Failures.usage("--host needs an address, e.g. --host 127.0.0.1"))
    const protectedBy = yield* auth(flags)
    if (!isLoopback(host) && protectedBy === undefined && !flags.allowUnauthenticated) {
      return yield* Result.fail(Failures.usage(
        `--host ${host} serves beyond this machine: protect the endpoint with --auth-issuer and --auth-jwks-url, ` +
          `or pass --allow-unauthenticated to serve it to anyone who can reach it`
      ))
    }
    if (isWildcard(host) && protectedBy !== undefined && protectedBy.resource === undefined) {
      return yield* Result.fail(Failures.usage(
        `--host ${host} binds every address: give the endpoint's public URL with --auth-resource URL ` +
          `(the audience of its tokens)`
      ))
    }
    return {
      _tag: "Http",
      port,
      host,
      auth: protectedBy,
      issuer: protectedBy?.authorizationServers[0]
    } as const
  })
