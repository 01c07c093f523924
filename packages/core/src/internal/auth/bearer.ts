/**
 * The bearer check of a protected MCP endpoint, shared by the Streamable
 * HTTP and HTTP+SSE server transports: the `Authorization` header, the
 * verifier, expiry, audience, scopes, and the `WWW-Authenticate` challenges
 * (RFC 6750 §3, RFC 9728 §5.1). Transports render a {@link Refusal} in their
 * own error body.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import type * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Option from "effect/Option"
import * as JsonRpc from "../../JsonRpc.ts"
import * as McpAuth from "../../McpAuth.ts"
import type * as McpResourceServer from "../../McpResourceServer.ts"
import * as McpSchema from "../../McpSchema.ts"

/** Why a request is refused. @internal */
export interface Refusal {
  readonly status: 401 | 403 | 500
  /** The `WWW-Authenticate` value (none for `500`). */
  readonly challenge: string | undefined
  readonly message: string
}

/** The bearer check of one protected endpoint. @internal */
export interface Guard {
  /** The canonical resource URL. */
  readonly resource: string
  /** The path-aware protected resource metadata URL. */
  readonly metadataUrl: string
  /** Header → verify → expiry → audience → `requiredScopes`. */
  readonly authenticate: (
    authorization: string | undefined
  ) => Effect.Effect<McpAuth.AuthInfo | Refusal>
  /** The `403` for requests among `messages` the token lacks a scope for, if any. */
  readonly authorize: (auth: McpAuth.AuthInfo, messages: ReadonlyArray<unknown>) => Refusal | undefined
}

/** `true` for a refusal (as opposed to an `AuthInfo`). @internal */
export const isRefusal = (value: McpAuth.AuthInfo | Refusal): value is Refusal => "status" in value

/**
 * Whom a session belongs to: the subject and client of the token that
 * created it (`undefined`: a token that names neither binds nothing).
 *
 * @internal
 */
export const principal = (auth: McpAuth.AuthInfo | undefined): string | undefined =>
  auth === undefined || (auth.subject === undefined && auth.clientId === undefined)
    ? undefined
    : JSON.stringify([auth.subject ?? null, auth.clientId ?? null])

/** `/.well-known/oauth-protected-resource` + the resource's path (RFC 9728 §3.1). @internal */
export const metadataPath = (resource: string): string => {
  const path = new URL(resource).pathname
  return `/.well-known/oauth-protected-resource${path === "/" ? "" : path.replace(/\/$/, "")}`
}

/** The protected resource metadata URL of a resource. @internal */
export const metadataUrl = (resource: string): string => new URL(metadataPath(resource), resource).href

/** The protected resource metadata document (RFC 9728 §2). @internal */
export const metadataDocument = (
  options: McpResourceServer.Options,
  resource: string
): Record<string, unknown> => ({
  ...options.metadata,
  resource,
  authorization_servers: [...options.authorizationServers],
  ...(options.scopesSupported === undefined ? {} : { scopes_supported: [...options.scopesSupported] }),
  bearer_methods_supported: ["header"],
  ...(options.resourceName === undefined ? {} : { resource_name: options.resourceName }),
  ...(options.resourceDocumentation === undefined ? {} : { resource_documentation: options.resourceDocumentation })
})

/** The metadata document as a CORS-friendly JSON response (`OPTIONS`: the preflight answer). @internal */
export const metadataResponse = (document: Record<string, unknown>) => {
  const body = JSON.stringify(document)
  return (method: string) =>
    method === "OPTIONS"
      ? HttpServerResponse.empty({ status: 204, headers: CORS })
      : method === "GET" || method === "HEAD"
      ? HttpServerResponse.text(body, { contentType: "application/json", headers: { ...CORS, "cache-control": "max-age=3600" } })
      : HttpServerResponse.text("Method Not Allowed", { status: 405, headers: { ...CORS, allow: "GET, OPTIONS" } })
}

const CORS = {
  "access-control-allow-origin": "*",
  "access-control-allow-methods": "GET, OPTIONS",
  "access-control-allow-headers": "*, authorization, mcp-protocol-version",
  "access-control-max-age": "86400"
}

// RFC 6750 §3: quoted values, error_description limited to visible ASCII
// without `"` and `\`
const quote = (value: string) => `"${value.replace(/[^\x20-\x21\x23-\x5B\x5D-\x7E]/g, " ")}"`

const challenge = (params: ReadonlyArray<readonly [string, string | undefined]>) =>
  "Bearer " + params.filter(([, value]) => value !== undefined).map(([name, value]) => `${name}=${quote(value!)}`).join(", ")

const union = (...lists: ReadonlyArray<ReadonlyArray<string> | undefined>): Array<string> => {
  const out = new Set<string>()
  for (const list of lists) for (const scope of list ?? []) out.add(scope)
  return [...out]
}

const comparable = (value: string): string | undefined => {
  const url = URL.canParse(value) ? McpAuth.canonicalResource(value) : value
  return url.replace(/\/$/, "")
}

/** The guard of a protected endpoint. @internal */
export const make = (
  options: McpResourceServer.Options,
  resource: string,
  clock: Clock.Clock
): Guard => {
  const metadata = metadataUrl(resource)
  const required = union(options.requiredScopes)
  const requiredText = required.length === 0 ? undefined : required.join(" ")
  const audiences = new Set([resource, ...(options.audiences ?? [])].map(comparable))
  const methodScopes = options.methodScopes ?? {}
  const toolScopes = options.toolScopes ?? {}
  const scoped = Object.keys(methodScopes).length > 0 || Object.keys(toolScopes).length > 0

  const unauthorized = (error: string | undefined, description: string): Refusal => ({
    status: 401,
    challenge: error === undefined
      ? challenge([["resource_metadata", metadata], ["scope", requiredText]])
      : challenge([["error", error], ["error_description", description], ["resource_metadata", metadata], [
        "scope",
        requiredText
      ]]),
    message: `Unauthorized: ${description}`
  })

  const insufficient = (scopes: ReadonlyArray<string>, description: string): Refusal => ({
    status: 403,
    challenge: challenge([
      ["error", "insufficient_scope"],
      ["error_description", description],
      ["scope", scopes.join(" ")],
      ["resource_metadata", metadata]
    ]),
    message: `Forbidden: ${description}`
  })

  const check = (auth: McpAuth.AuthInfo): McpAuth.AuthInfo | Refusal => {
    if (auth.expiresAt !== undefined && auth.expiresAt * 1000 <= clock.currentTimeMillisUnsafe()) {
      return unauthorized("invalid_token", "the token has expired")
    }
    const audience = auth.audience ?? []
    if (audience.length === 0 ? options.requireAudience !== false : !audience.some((aud) => audiences.has(comparable(aud)))) {
      return unauthorized("invalid_token", "the token was not issued for this resource")
    }
    const missing = required.filter((scope) => !auth.scopes.includes(scope))
    if (missing.length > 0) return insufficient(required, `the token lacks the scope ${missing.join(" ")}`)
    return auth
  }

  const authenticate = (authorization: string | undefined): Effect.Effect<McpAuth.AuthInfo | Refusal> => {
    if (authorization === undefined || authorization.trim() === "") {
      return Effect.succeed(unauthorized(undefined, "a bearer token is required"))
    }
    const match = /^\s*bearer\s+([A-Za-z0-9\-._~+/]+=*)\s*$/i.exec(authorization)
    if (match === null) return Effect.succeed(unauthorized("invalid_token", "expected Authorization: Bearer <token>"))
    return Effect.map(Effect.exit(Effect.suspend(() => options.verify(match[1]!))), (exit) => {
      if (Exit.isSuccess(exit)) return check(exit.value)
      const error = Cause.findErrorOption(exit.cause)
      if (Option.isSome(error) && error.value.reason._tag === "AuthError") {
        return unauthorized("invalid_token", error.value.reason.description)
      }
      return {
        status: 500,
        challenge: undefined,
        message: `Internal Server Error: the token could not be verified (${
          Option.isSome(error) ? error.value.message : "the verifier failed"
        })`
      } satisfies Refusal
    })
  }

  const neededFor = (value: unknown): ReadonlyArray<string> | undefined => {
    const classified = JsonRpc.classify(value)
    if (classified._tag !== "Request") return undefined
    const { method, params } = classified.message
    const forMethod = Object.hasOwn(methodScopes, method) ? methodScopes[method] : undefined
    if (method !== McpSchema.CallTool.name) return forMethod
    const name = (params as { readonly name?: unknown } | undefined)?.name
    const forTool = typeof name === "string" && Object.hasOwn(toolScopes, name) ? toolScopes[name] : undefined
    return forTool === undefined ? forMethod : union(forMethod, forTool)
  }

  const authorize = (auth: McpAuth.AuthInfo, messages: ReadonlyArray<unknown>): Refusal | undefined => {
    if (!scoped) return undefined
    const needed: Array<ReadonlyArray<string> | undefined> = []
    for (const message of messages) needed.push(neededFor(message))
    const all = union(...needed)
    const missing = all.filter((scope) => !auth.scopes.includes(scope))
    if (missing.length === 0) return undefined
    return insufficient(union(required, all), `the token lacks the scope ${missing.join(" ")}`)
  }

  return { resource, metadataUrl: metadata, authenticate, authorize }
}
