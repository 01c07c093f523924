/**
 * The conformance client, run by the conformance runner once per client
 * scenario as `<command> <server-url>` with `MCP_CONFORMANCE_SCENARIO` set
 * (and `MCP_CONFORMANCE_CONTEXT`, JSON, for the scenarios that hand out
 * credentials):
 *
 *   MCP_CONFORMANCE_SCENARIO=tools_call node --conditions=development scratchpad/conformance/client.ts http://127.0.0.1:PORT/mcp
 *
 * (`npm run conformance:client -- <url>`.) Connects over Streamable HTTP, does
 * what the scenario asks (scenarios.ts), exits 0 on success and non-zero on
 * failure. Logs go to stderr.
 *
 * `auth/*` scenarios: the transport's `auth` is `NodeMcpOAuth` with an
 * in-memory store and the headless authorizer (the mock authorization server
 * redirects `/authorize` straight to the redirect URI with a code). The
 * client offers a Client ID Metadata Document URL (used where the server
 * supports them, `auth/basic-cimd`); the context's credentials become a
 * pre-registered client (`auth/pre-registration`), a client credentials
 * grant (`auth/client-credentials-*`), a cross-app access grant
 * (`auth/cross-app-access-complete-flow`, `auth/enterprise-managed-authorization`)
 * or a workload's JWT bearer grant (`auth/wif-jwt-bearer`).
 */
import { McpAuth } from "@effect-mcp/core"
import { NodeMcpAuthorizer, NodeMcpHttpClient, NodeMcpOAuth, NodeMcpRuntime } from "@effect-mcp/platform-node"
import { Effect, Layer } from "effect"
import * as Scenarios from "./scenarios.ts"

const url = process.argv.slice(2).at(-1)
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? ""
const scenarioContext: Scenarios.ScenarioContext = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? "{}")
// the credentials of the auth/* scenarios are strings
const context = scenarioContext as Readonly<Record<string, string | undefined>>

/** The Client ID Metadata Document URL `auth/basic-cimd` expects. */
const CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"

const oauthOptions = (serverUrl: string): NodeMcpOAuth.Options => {
  const base = {
    serverUrl,
    clientMetadata: { clientName: "effect-mcp-conformance-client", softwareVersion: "0.1.0" },
    clientMetadataUrl: CLIENT_METADATA_URL
  }
  switch (scenario) {
    case "auth/pre-registration":
      return { ...base, client: { clientId: context.client_id!, clientSecret: context.client_secret } }
    case "auth/client-credentials-basic":
      return {
        ...base,
        grant: { type: "client_credentials", clientId: context.client_id!, clientSecret: context.client_secret }
      }
    case "auth/client-credentials-jwt":
      return {
        ...base,
        grant: {
          type: "client_credentials",
          clientId: context.client_id!,
          privateKey: context.private_key_pem,
          algorithm: context.signing_algorithm
        }
      }
    case "auth/cross-app-access-complete-flow":
    case "auth/enterprise-managed-authorization":
      return {
        ...base,
        grant: {
          type: "cross_app_access",
          clientId: context.client_id!,
          clientSecret: context.client_secret,
          idp: {
            tokenEndpoint: context.idp_token_endpoint,
            issuer: context.idp_issuer,
            clientId: context.idp_client_id!,
            idToken: context.idp_id_token!
          }
        }
      }
    case "auth/wif-jwt-bearer":
      return {
        ...base,
        grant: { type: "jwt_bearer", clientId: context.client_id, assertion: context.valid_jwt! }
      }
    default:
      return base
  }
}

const transport = (serverUrl: string) =>
  scenario.startsWith("auth/")
    ? NodeMcpOAuth.layerTransport(oauthOptions(serverUrl)).pipe(
      Layer.provide([McpAuth.layerMemoryStore, NodeMcpAuthorizer.layerHeadless()])
    )
    : NodeMcpHttpClient.layer({ url: serverUrl })

const main = url === undefined
  ? Effect.die(new Error("usage: MCP_CONFORMANCE_SCENARIO=<name> client.ts <server-url>"))
  : Effect.gen(function*() {
    yield* Effect.logInfo(`scenario ${scenario} against ${url}`)
    yield* Scenarios.run(scenario, transport(url), scenarioContext)
    yield* Effect.logInfo(`scenario ${scenario} done`)
  })

NodeMcpRuntime.runMain(main)
