/**
 * A client that signs in: the OAuth transport (discovery, registration,
 * authorization code with PKCE, refresh, step-up) under an ordinary McpClient.
 * It prints what the server's `whoami` tool (`auth-server.ts`) answers: the
 * first run opens the browser, later runs use the stored tokens.
 *
 *   MCP_URL=https://mcp.example.com/mcp node --conditions=development scratchpad/docs/auth-client.ts
 *
 * Run by `packages/platform-node/test/docs.auth.test.ts`.
 */
// #region client
import { McpClient, McpContent } from "@effect-mcp/core"
import { NodeMcpAuthorizer, NodeMcpAuthStore, NodeMcpOAuth, NodeMcpRuntime } from "@effect-mcp/platform-node"
import { Console, Effect, Layer } from "effect"

const Transport = NodeMcpOAuth.layerTransport({
  serverUrl: process.env.MCP_URL ?? "https://mcp.example.com/mcp",
  clientMetadata: { clientName: "my-agent", softwareVersion: "1.0.0" }
  // client: { clientId, clientSecret }                      a pre-registered client
  // clientMetadataUrl: "https://app.example.com/client.json" a Client ID Metadata Document
  // grant: { type: "client_credentials", clientId, clientSecret | privateKey }   no user at all
  // grant: { type: "cross_app_access", clientId, clientSecret, idp: { issuer, clientId, idToken } }
  // grant: { type: "jwt_bearer", assertion }                  a workload's JWT (workload identity federation)
}).pipe(
  Layer.provide([
    NodeMcpAuthStore.layer(), // tokens in ~/.config/effect-mcp/auth.json (0600); McpAuth.layerMemoryStore in memory
    NodeMcpAuthorizer.layerLoopback() // opens the browser, takes the redirect on http://127.0.0.1:<port>/callback
  ])
)

const Client = McpClient.layer({ clientInfo: { name: "my-agent", version: "1.0.0" } }).pipe(Layer.provide(Transport))

const whoami = Effect.gen(function*() {
  const client = yield* McpClient.McpClient
  yield* Console.log(McpContent.textOf(yield* client.callTool("whoami", {})))
})

NodeMcpRuntime.runMain(whoami.pipe(Effect.provide(Client)))
// #endregion client
