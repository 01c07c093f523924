/**
 * A protected MCP server: every request's bearer token checked (a JWT
 * against the authorization server's keys), the protected resource metadata
 * served, the verified token handed to the handlers.
 *
 *   MCP_RESOURCE=https://mcp.example.com/mcp AUTH_ISSUER=https://auth.example.com PORT=3000 \
 *     node --conditions=development scratchpad/docs/auth-server.ts
 *
 * Run by `packages/platform-node/test/docs.auth.test.ts` against the tests'
 * authorization server, with `auth-client.ts` signing in to it.
 */
// #region server
import { McpAuth, McpServer, McpTool } from "@effect-mcp/core"
import { NodeMcpHttpServer, NodeMcpJwtVerifier, NodeMcpRuntime } from "@effect-mcp/platform-node"
import { Effect, Layer, Schema } from "effect"

const Whoami = McpTool.make("whoami", {
  description: "Who the token says you are",
  input: Schema.Struct({}),
  // the verified token of this request; also `context.auth` in the handler's context
  handler: () => Effect.map(McpAuth.CurrentAuth, (auth) => `${auth?.subject} (${auth?.scopes.join(" ")})`)
})

// where this server is, and whom it trusts
const env = process.env
const resource = env.MCP_RESOURCE ?? "https://mcp.example.com/mcp" // on loopback it defaults to the bound URL
const issuer = env.AUTH_ISSUER ?? "https://auth.example.com"

const Protected = NodeMcpHttpServer.layer({
  port: Number(env.PORT ?? 3000),
  auth: {
    resource,
    authorizationServers: [issuer],
    verify: NodeMcpJwtVerifier.make({ // or McpResourceServer.introspection({ endpoint, clientId, clientSecret })
      jwksUrl: `${issuer}/.well-known/jwks.json`, // or any (token) => Effect<AuthInfo, McpError>
      issuer
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

NodeMcpRuntime.runMain(Layer.launch(Protected))
// #endregion server
