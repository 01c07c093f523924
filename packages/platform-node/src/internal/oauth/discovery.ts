/**
 * Discovery: which authorization server protects an MCP server, and which
 * `resource` to ask tokens for. The MCP order is written here (oauth4webapi
 * derives one well-known URL per issuer, MCP asks for three in order and
 * for the protected resource metadata with fallbacks), as are the protected
 * resource metadata `resource` check (MCP allows a parent of the server URL,
 * RFC 9728 processing in oauth4webapi wants an exact match), the 2025-03-26
 * fallback (metadata at the server's origin whose `issuer` need not match)
 * and a pre-configured authorization server (`Options.authorizationServer`).
 *
 * @internal
 */
import * as McpAuth from "@effect-mcp/core/McpAuth"
import * as McpError from "@effect-mcp/core/McpError"
import * as Effect from "effect/Effect"
import * as oauth from "oauth4webapi"
import type * as NodeMcpOAuth from "../../NodeMcpOAuth.ts"
import type { Http } from "./http.ts"
import * as Policy from "./policy.ts"

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
  /** The metadata of the authorization server `issuer` (RFC 8414 or OpenID Connect, in the MCP order). */
  readonly serverMetadata: (issuer: URL) => Effect.Effect<oauth.AuthorizationServer, McpError.McpError>
}

/** `true` when two issuer identifiers are the same URL. */
export const sameIssuer = (a: string, b: string): boolean =>
  URL.canParse(a) && URL.canParse(b) ? new URL(a).href === new URL(b).href : a === b

/** @internal */
export const make = (
  http: Http,
  serverUrl: URL,
  preset: NodeMcpOAuth.Options["authorizationServer"]
): Discovery => {
  const resource = McpAuth.canonicalResource(serverUrl)

  /** The first protected resource metadata document found at `urls`, its `resource` checked. */
  const resourceMetadata = (urls: ReadonlyArray<URL>) =>
    Effect.gen(function*() {
      for (const url of urls) {
        const response = yield* http.getMetadata(url, "protected resource metadata")
        if (response === undefined) continue
        const json = yield* http.readJson(response, `protected resource metadata ${url.href}`)
        if (typeof json.resource !== "string") {
          return yield* Effect.fail(McpError.auth("Discovery", `protected resource metadata ${url.href} has no resource`))
        }
        const metadata = json as unknown as ResourceMetadata
        if (!Policy.resourceMatches(serverUrl, metadata.resource)) {
          return yield* Effect.fail(McpError.auth(
            "Refused",
            `the protected resource metadata names resource ${metadata.resource}, not the MCP server ${resource}`
          ))
        }
        return metadata
      }
      return undefined
    })

  const serverMetadata: Discovery["serverMetadata"] = (issuer) =>
    Effect.gen(function*() {
      for (const url of Policy.authorizationServerMetadataUrls(issuer)) {
        const response = yield* http.getMetadata(url, "authorization server metadata")
        if (response === undefined) continue
        return yield* http.call(
          "Discovery",
          `authorization server metadata ${url.href}`,
          () => oauth.processDiscoveryResponse(issuer, response)
        )
      }
      return yield* Effect.fail(
        McpError.auth("Discovery", `no authorization server metadata for ${issuer.href} (RFC 8414 or OpenID Connect)`)
      )
    })

  /** MCP 2025-03-26: the authorization server is the MCP server's origin. */
  const legacy = Effect.gen(function*() {
    for (const url of Policy.legacyMetadataUrls(serverUrl)) {
      const response = yield* http.getMetadata(url, "authorization server metadata")
      if (response === undefined) continue
      const json = yield* http.readJson(response, `authorization server metadata ${url.href}`)
      const issuer = typeof json.issuer === "string" ? json.issuer : serverUrl.origin
      const discovered: Discovered = {
        resource,
        resourceMetadata: undefined,
        server: { ...json, issuer } as oauth.AuthorizationServer,
        hasMetadata: true
      }
      return discovered
    }
    const fallback: Discovered = {
      resource,
      resourceMetadata: undefined,
      server: Policy.legacyEndpoints(serverUrl),
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
  const configured = (configuredServer: NonNullable<NodeMcpOAuth.Options["authorizationServer"]>) =>
  (fromChallenge: string | undefined) =>
    Effect.gen(function*() {
      const named = Policy.challengeResourceMetadataUrl(serverUrl, fromChallenge)
      const metadata = named === undefined ? undefined : yield* resourceMetadata([named])
      const server = typeof configuredServer === "object" && "metadata" in configuredServer
        ? configuredServer.metadata as oauth.AuthorizationServer
        : yield* serverMetadata(new URL(configuredServer))
      return discovered(metadata, server)
    })

  const discover: Discovery["discover"] = preset !== undefined ?
    configured(preset) :
    (fromChallenge, preferredIssuer) =>
      Effect.gen(function*() {
        const metadata = yield* resourceMetadata(Policy.protectedResourceMetadataUrls(serverUrl, fromChallenge))
        if (metadata === undefined) return yield* legacy
        const servers = (metadata.authorization_servers ?? []).filter((server) => typeof server === "string")
        const chosen = servers.find((server) => preferredIssuer !== undefined && sameIssuer(server, preferredIssuer)) ??
          servers[0]
        if (chosen === undefined || !URL.canParse(chosen)) {
          return yield* Effect.fail(
            McpError.auth("Discovery", `the protected resource metadata of ${resource} names no authorization server`)
          )
        }
        return discovered(metadata, yield* serverMetadata(new URL(chosen)))
      })

  return { discover, serverMetadata }
}
