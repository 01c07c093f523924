/**
 * The Protected Resource Metadata routes (RFC 9728) of a protected MCP
 * endpoint: the document as a CORS-friendly JSON response. Loaded when a
 * server adds the routes, so that `McpResourceServer` stays free of
 * `effect/http`.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import type * as McpResourceServer from "../../McpResourceServer.ts"
import * as Bearer from "./bearer.ts"

const CORS = {
  "access-control-allow-origin": "*",
  "access-control-allow-methods": "GET, OPTIONS",
  "access-control-allow-headers": "*, authorization, mcp-protocol-version",
  "access-control-max-age": "86400"
}

/** The metadata document as a CORS-friendly JSON response (`OPTIONS`: the preflight answer). @internal */
export const metadataResponse = (document: Record<string, unknown>) => {
  const body = JSON.stringify(document)
  return (method: string) =>
    method === "OPTIONS"
      ? HttpServerResponse.empty({ status: 204, headers: CORS })
      : method === "GET" || method === "HEAD"
      ? HttpServerResponse.text(body, {
        contentType: "application/json",
        headers: { ...CORS, "cache-control": "max-age=3600" }
      })
      : HttpServerResponse.text("Method Not Allowed", { status: 405, headers: { ...CORS, allow: "GET, OPTIONS" } })
}

/** The metadata routes, at the path-aware URL and (unless `rootMetadata: false`) the root one. @internal */
export const addRoutes = (
  router: HttpRouter.HttpRouter,
  options: McpResourceServer.Options,
  resource: string
): Effect.Effect<void> => {
  const respond = metadataResponse(Bearer.metadataDocument(options, resource))
  const handler = (request: { readonly method: string }) => Effect.succeed(respond(request.method))
  const paths = new Set<HttpRouter.PathInput>([Bearer.metadataPath(resource) as HttpRouter.PathInput])
  if (options.rootMetadata !== false) paths.add("/.well-known/oauth-protected-resource")
  return Effect.forEach(paths, (path) => router.add("*", path, handler), { discard: true })
}
