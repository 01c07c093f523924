/**
 * The protected resource metadata of a resource (RFC 9728): its well-known
 * path and URL, and the document. Apart from the bearer check (`bearer.ts`)
 * and the DPoP check (`dpop.ts`): `McpResourceServer.metadata` and
 * `metadataUrl` are synchronous, so `McpResourceServer` loads this module
 * with itself, and those two only with a protected server.
 *
 * @internal
 */
import type * as McpResourceServer from "../../McpResourceServer.ts"

/** The algorithms a DPoP proof may be signed with. @internal */
export const DPOP_ALGORITHMS = [
  "ES256",
  "ES384",
  "ES512",
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "EdDSA"
] as const

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
  ...(options.dpop === undefined ? {} : {
    dpop_signing_alg_values_supported: [...DPOP_ALGORITHMS],
    ...(options.dpop.required === true ? { dpop_bound_access_tokens_required: true } : {})
  }),
  ...(options.resourceName === undefined ? {} : { resource_name: options.resourceName }),
  ...(options.resourceDocumentation === undefined ? {} : { resource_documentation: options.resourceDocumentation })
})
