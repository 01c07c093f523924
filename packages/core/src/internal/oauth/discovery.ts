/**
 * Discovery: which authorization server protects an MCP server, and which
 * `resource` to ask tokens for. The MCP order is written here (oauth4webapi
 * derives one well-known URL per issuer, MCP asks for three in order and
 * for the protected resource metadata with fallbacks), as are the protected
 * resource metadata `resource` check (MCP allows a parent of the server URL,
 * RFC 9728 processing in oauth4webapi wants an exact match), the 2025-03-26
 * fallback (metadata at the server's origin, whose `issuer` must be on that
 * origin: RFC 8414 §3.3) and a pre-configured authorization server
 * (`Options.authorizationServer`).
 *
 * Every URL a server names is checked before it is fetched (`Egress.check`:
 * a challenge's `resource_metadata`, the chosen `authorization_servers`
 * entry, the endpoints of the metadata), and an endpoint of another scheme
 * than `https` / `http` is refused (the authorization endpoint goes to a
 * browser, which `grants.ts` and the authorizers check again:
 * `McpOAuthPolicy.isBrowsable`). A failure says what was expected, not what answered.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as oauth from "oauth4webapi"
import * as McpAuth from "../../McpAuth.ts"
import * as McpError from "../../McpError.ts"
import type * as McpOAuth from "../../McpOAuth.ts"
import * as McpOAuthPolicy from "../../McpOAuthPolicy.ts"
import type * as Egress from "./egress.ts"
import type { Http } from "./http.ts"

/** What the protected resource metadata says (RFC 9728), as far as the client cares. */
export interface ResourceMetadata {
  readonly resource: string
  readonly authorization_servers?: ReadonlyArray<string>
  readonly scopes_supported?: ReadonlyArray<string>
  readonly [key: string]: unknown
}

/** The authorization server of an MCP server, as discovered. */
export interface Discovered {
  /**
   * The `resource` parameter: the protected resource metadata's `resource`
   * as written (the identifier the server checks audiences against; it may
   * name a parent of the MCP URL), else the canonical MCP server URL.
   */
  readonly resource: string
  readonly resourceMetadata: ResourceMetadata | undefined
  readonly server: oauth.AuthorizationServer
  /** Whether `server` came from a metadata document (else: 2025-03-26 default endpoints). */
  readonly hasMetadata: boolean
}

/** Discovery for one MCP server. */
export interface Discovery {
  /**
   * The authorization server and resource: from the challenge's
   * `resource_metadata` (else the well-known URLs), preferring
   * `preferredIssuer` among the servers the metadata lists.
   */
  readonly discover: (
    fromChallenge: string | undefined,
    preferredIssuer: string | undefined
  ) => Effect.Effect<Discovered, McpError.McpError>
  /**
   * The metadata of an authorization server the user named (`issuer`: RFC
   * 8414 or OpenID Connect, in the MCP order, its `issuer` checked), its
   * endpoints trusted from then on.
   */
  readonly serverMetadata: (issuer: URL) => Effect.Effect<oauth.AuthorizationServer, McpError.McpError>
}

/** `true` when two issuer identifiers are the same URL. */
export const sameIssuer = (a: string, b: string): boolean =>
  URL.canParse(a) && URL.canParse(b) ? new URL(a).href === new URL(b).href : a === b

/** @internal */
export const make = (
  http: Http,
  egress: Egress.Egress,
  serverUrl: URL,
  preset: McpOAuth.Options["authorizationServer"]
): Discovery => {
  const resource = McpAuth.canonicalResource(serverUrl)

  /** The first protected resource metadata document found at `urls`, its `resource` checked. */
  const resourceMetadata = (urls: ReadonlyArray<URL>) =>
    Effect.gen(function*() {
      for (const url of urls) {
        yield* egress.check(url, "the protected resource metadata")
        const response = yield* http.getMetadata(url, "protected resource metadata")
        if (response === undefined) continue
        const json = yield* http.readJson(response, `protected resource metadata ${url.href}`)
        if (typeof json.resource !== "string") {
          return yield* Effect.fail(
            McpError.auth("Discovery", `protected resource metadata ${url.href} has no resource`)
          )
        }
        const metadata = json as unknown as ResourceMetadata
        if (!McpOAuthPolicy.resourceMatches(serverUrl, metadata.resource)) {
          return yield* Effect.fail(McpError.auth(
            "Refused",
            `the protected resource metadata ${url.href} names a resource that is not the MCP server ${resource} (nor a parent of it)`
          ))
        }
        return metadata
      }
      return undefined
    })

  /** One metadata document of the authorization server `issuer`, its `issuer` checked (RFC 8414 §3.3). */
  const metadataDocument = (issuer: URL, url: URL, response: Response) =>
    http.call(
      "Discovery",
      `authorization server metadata ${url.href}`,
      () => oauth.processDiscoveryResponse(issuer, response)
    ).pipe(
      Effect.mapError((error) =>
        error.reason._tag === "AuthError" && isIssuerMismatch(error.reason.cause)
          ? McpError.auth(
            "Discovery",
            `the authorization server metadata ${url.href} does not name ${issuer.href} as its issuer (RFC 8414 §3.3): not used`,
            { cause: error }
          )
          : error
      )
    )

  /** The metadata of the authorization server `issuer`, from the first of its well-known URLs that has it. */
  const fetchServerMetadata = (issuer: URL) =>
    Effect.gen(function*() {
      for (const url of McpOAuthPolicy.authorizationServerMetadataUrls(issuer)) {
        const response = yield* http.getMetadata(url, "authorization server metadata")
        if (response === undefined) continue
        return yield* metadataDocument(issuer, url, response)
      }
      return yield* Effect.fail(
        McpError.auth("Discovery", `no authorization server metadata for ${issuer.href} (RFC 8414 or OpenID Connect)`)
      )
    })

  /**
   * The endpoints the client uses must be `https` (or `http`) URLs it may be
   * sent to: where a server named the authorization server, no further
   * inside the network than the user's hosts (`Egress.check`). Any other
   * scheme (`file:`, `javascript:`, a custom protocol handler) is refused
   * here, whoever named it: the authorization endpoint goes to a browser.
   */
  const checkEndpoints = (server: oauth.AuthorizationServer, trusted: boolean) =>
    Effect.forEach(ENDPOINTS, ([field, what]) => {
      const value: unknown = server[field]
      if (value === undefined) return Effect.void
      if (typeof value !== "string" || !URL.canParse(value)) {
        return Effect.fail(
          McpError.auth("Discovery", `the ${field} of the authorization server ${server.issuer} is not a URL`)
        )
      }
      const url = new URL(value)
      if (url.protocol !== "https:" && url.protocol !== "http:") {
        return Effect.fail(McpError.auth(
          "Refused",
          `${what} of ${server.issuer} is a ${url.protocol} URL: only an https URL (or http on a loopback host) is used${
            field === "authorization_endpoint" ? " or opened in a browser" : ""
          }`
        ))
      }
      return trusted ? http.checkUrl(url, "Refused", what) : egress.check(url, what)
    }, { discard: true })

  const serverMetadata: Discovery["serverMetadata"] = (issuer) =>
    Effect.tap(fetchServerMetadata(issuer), (server) =>
      Effect.andThen(
        egress.trust(ENDPOINTS.map(([field]) => server[field])),
        checkEndpoints(server, true)
      ))

  /**
   * MCP 2025-03-26: the authorization server is the MCP server's origin. Its
   * metadata's `issuer` must be on that origin (RFC 8414 §3.3 wants the
   * origin itself; a path is allowed, as the official conformance suite's
   * 2025-03-26 server names `<origin>/oauth`): an issuer of another origin,
   * another authorization server's, is refused, so neither that server's
   * stored registration nor its secret is used for this one.
   */
  const legacy = Effect.gen(function*() {
    for (const url of McpOAuthPolicy.legacyMetadataUrls(serverUrl)) {
      const response = yield* http.getMetadata(url, "authorization server metadata")
      if (response === undefined) continue
      const json = yield* http.readJson(response, `authorization server metadata ${url.href}`)
      const issuer = json.issuer === undefined ? serverUrl.origin : json.issuer
      if (typeof issuer !== "string" || !McpOAuthPolicy.legacyIssuerMatches(serverUrl, issuer)) {
        return yield* Effect.fail(McpError.auth(
          "Discovery",
          `the authorization server metadata ${url.href} does not name an issuer of the MCP server's origin ${serverUrl.origin} (RFC 8414 §3.3): not used`
        ))
      }
      const server = { ...json, issuer } as oauth.AuthorizationServer
      yield* checkEndpoints(server, false)
      const discovered: Discovered = { resource, resourceMetadata: undefined, server, hasMetadata: true }
      return discovered
    }
    const fallback: Discovered = {
      resource,
      resourceMetadata: undefined,
      server: McpOAuthPolicy.legacyEndpoints(serverUrl),
      hasMetadata: false
    }
    return fallback
  })

  const discovered = (metadata: ResourceMetadata | undefined, server: oauth.AuthorizationServer): Discovered => ({
    resource: metadata?.resource ?? resource,
    resourceMetadata: metadata,
    server,
    hasMetadata: true
  })

  /**
   * A pre-configured authorization server: no choice among the servers the
   * protected resource metadata lists, and no well-known probing for it; a
   * document the challenge names is still read (for its `resource`, checked,
   * and its `scopes_supported`).
   */
  const configured =
    (configuredServer: NonNullable<McpOAuth.Options["authorizationServer"]>) => (fromChallenge: string | undefined) =>
      Effect.gen(function*() {
        const named = McpOAuthPolicy.challengeResourceMetadataUrl(serverUrl, fromChallenge)
        const metadata = named === undefined ? undefined : yield* resourceMetadata([named])
        if (typeof configuredServer === "object" && "metadata" in configuredServer) {
          const server = configuredServer.metadata as oauth.AuthorizationServer
          yield* checkEndpoints(server, true)
          return discovered(metadata, server)
        }
        return discovered(metadata, yield* serverMetadata(new URL(configuredServer)))
      })

  const discover: Discovery["discover"] = preset !== undefined ?
    configured(preset) :
    (fromChallenge, preferredIssuer) =>
      Effect.gen(function*() {
        const metadata = yield* resourceMetadata(McpOAuthPolicy.protectedResourceMetadataUrls(serverUrl, fromChallenge))
        if (metadata === undefined) return yield* legacy
        const servers = (metadata.authorization_servers ?? []).filter((server) => typeof server === "string")
        const chosen = servers.find((server) => preferredIssuer !== undefined && sameIssuer(server, preferredIssuer)) ??
          servers[0]
        if (chosen === undefined || !URL.canParse(chosen)) {
          return yield* Effect.fail(
            McpError.auth("Discovery", `the protected resource metadata of ${resource} names no authorization server`)
          )
        }
        const issuer = new URL(chosen)
        yield* egress.check(issuer, "the authorization server")
        const server = yield* fetchServerMetadata(issuer)
        yield* checkEndpoints(server, false)
        return discovered(metadata, server)
      })

  return { discover, serverMetadata }
}

/** The endpoints of an authorization server the client requests or opens. */
const ENDPOINTS = [
  ["authorization_endpoint", "the authorization endpoint"],
  ["token_endpoint", "the token endpoint"],
  ["registration_endpoint", "the registration endpoint"]
] as const

/** `true` for oauth4webapi's "the issuer is not the one expected" (RFC 8414 §3.3). */
const isIssuerMismatch = (cause: unknown): boolean =>
  cause instanceof oauth.OperationProcessingError && cause.code === oauth.JSON_ATTRIBUTE_COMPARISON &&
  (cause.cause as { readonly attribute?: unknown } | undefined)?.attribute === "issuer"
