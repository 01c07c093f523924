/**
 * OAuth end to end, in one process on 127.0.0.1: an authorization server (the
 * test one, packages/platform-node/test/fixtures/authServer.ts), an MCP server
 * protected by it, and a client that signs in by itself (headless: it follows
 * the authorization redirect without a browser), calls a tool, and steps up
 * to a larger scope for another.
 *
 *   npm run example:oauth
 */
import { McpAuth, McpClient, type McpSchema, McpServer, McpTool } from "@effect-mcp/core"
import {
  NodeMcpAuthorizer,
  NodeMcpHttpServer,
  NodeMcpJwtVerifier,
  NodeMcpOAuth,
  NodeMcpRuntime
} from "@effect-mcp/platform-node"
import { Console, Context, Effect, Layer, Schema } from "effect"
import { startAuthServer } from "../packages/platform-node/test/fixtures/authServer.ts"

const whoami = McpTool.make("whoami", {
  description: "Who the token says you are",
  input: Schema.Struct({}),
  handler: () => Effect.map(McpAuth.CurrentAuth, (auth) => `${auth?.subject} with ${auth?.scopes.join(" ")}`)
})

const deploy = McpTool.make("deploy", {
  description: "Needs the mcp:admin scope",
  input: Schema.Struct({}),
  handler: () => Effect.succeed("deployed")
})

const main = Effect.gen(function*() {
  const as = yield* startAuthServer({ scopesSupported: ["mcp:read", "mcp:admin"] })

  // the protected MCP server: tokens from `as`, checked against its JWKS
  const server = yield* Layer.build(
    NodeMcpHttpServer.layer({
      auth: {
        authorizationServers: [as.issuer],
        verify: NodeMcpJwtVerifier.make({ jwksUrl: as.endpoints.jwks, issuer: as.issuer }),
        scopesSupported: ["mcp:read", "mcp:admin"],
        requiredScopes: ["mcp:read"],
        toolScopes: { deploy: ["mcp:admin"] }
      }
    }).pipe(
      Layer.provide(McpServer.register(whoami, deploy)),
      Layer.provide(McpServer.layer({ name: "protected", version: "1.0.0" }))
    )
  )
  const url = yield* Effect.provide(NodeMcpHttpServer.url(), server)

  // the client: signs in on the first 401, steps up on the 403 of `deploy`
  const client = yield* Effect.map(
    Layer.build(
      McpClient.layer({ clientInfo: { name: "oauth-demo", version: "1.0.0" } }).pipe(
        Layer.provide(NodeMcpOAuth.layerTransport({ serverUrl: url, clientMetadata: { clientName: "oauth-demo" } })),
        Layer.provide([McpAuth.layerMemoryStore, NodeMcpAuthorizer.layerHeadless()])
      )
    ),
    Context.get(McpClient.McpClient)
  )
  const text = (result: McpSchema.CallToolResult) =>
    result.content.map((block) => block.type === "text" ? block.text : "").join("")
  yield* Console.log(`whoami: ${text(yield* client.callTool("whoami", {}))}`)
  yield* Console.log(`deploy: ${text(yield* client.callTool("deploy", {}))}`)

  // what the authorization server saw
  const authorizations = as.requestsTo("/authorize").map((request) => request.query.scope)
  const grants = as.requestsTo("/token").map((request) => request.form?.grant_type)
  yield* Console.log(`registrations: ${as.requestsTo("/register").length}`)
  yield* Console.log(`authorizations: ${authorizations.join(" | ")}`)
  yield* Console.log(`token requests: ${grants.join(", ")}`)
})

NodeMcpRuntime.runMain(Effect.scoped(main))
