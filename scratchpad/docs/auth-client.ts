/**
 * A client that signs in: the OAuth transport (discovery, registration,
 * authorization code with PKCE, refresh, step-up) under an ordinary McpClient.
 */
// #region client
import { McpClient } from "@effect-mcp/core"
import { NodeMcpAuthorizer, NodeMcpAuthStore, NodeMcpOAuth } from "@effect-mcp/platform-node"
import { Layer } from "effect"

const Transport = NodeMcpOAuth.layerTransport({
  serverUrl: "https://mcp.example.com/mcp",
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
// #endregion client

export { Client }
