/**
 * A protected MCP server: every request's bearer token checked (a JWT
 * against the authorization server's keys), the protected resource metadata
 * served, the verified token handed to the handlers.
 *
 *   node --conditions=development scratchpad/docs/auth-server.ts
 */
// #region server
import { McpAuth, McpServer, McpTool } from "@effect-mcp/core"
import { NodeMcpHttpServer, NodeMcpJwtVerifier } from "@effect-mcp/platform-node"
import { Effect, Layer, Schema } from "effect"

const Whoami = McpTool.make("whoami", {
  description: "Who the token says you are",
  input: Schema.Struct({}),
  // the verified token of this request; also `context.auth` in the handler's context
  handler: () => Effect.map(McpAuth.CurrentAuth, (auth) => `${auth?.subject} (${auth?.scopes.join(" ")})`)
})

const Protected = NodeMcpHttpServer.layer({
  port: 3000,
  auth: {
    resource: "https://mcp.example.com/mcp", // on loopback it defaults to the bound URL
    authorizationServers: ["https://auth.example.com"],
    verify: NodeMcpJwtVerifier.make({ // or McpResourceServer.introspection({ endpoint, clientId, clientSecret })
      jwksUrl: "https://auth.example.com/.well-known/jwks.json", // or any (token) => Effect<AuthInfo, McpError>
      issuer: "https://auth.example.com"
    }),
    scopesSupported: ["mcp:read", "mcp:admin"],
    requiredScopes: ["mcp:read"], // every request
    toolScopes: { deploy: ["mcp:admin"] }, // tools/call of one tool; methodScopes by method
    resourceName: "Example MCP server"
  }
}).pipe(
  Layer.provide(McpServer.register(Whoami)),
  Layer.provide(McpServer.layer({ name: "example", version: "1.0.0" }))
)
// #endregion server

export { Protected }
