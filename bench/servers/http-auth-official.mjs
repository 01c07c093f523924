// The protected official-SDK Streamable HTTP server of `bench/auth.ts`:
// express (`express.json()`), `requireBearerAuth({ verifier, requiredScopes,
// resourceMetadataUrl, expectedResource })` in front of the MCP endpoint,
// and the stateful `StreamableHTTPServerTransport` (`enableJsonResponse:
// true`, one `McpServer` with one `echo` tool per session) of
// `http-official.mjs`. The verifier is jose's `jwtVerify` against the local
// JWKS in `BENCH_AUTH_JWKS` (JSON), as `NodeMcpJwtVerifier` does; the SDK
// checks expiry, scopes and the resource (the token's `aud`) itself. With the
// argument `none`, the same server without `requireBearerAuth`. Prints
// `{"url":…}` on stdout, answers `mem` on stdin (see control.mjs) and exits
// when stdin ends.
//
//   BENCH_AUTH_JWKS='{"keys":[…]}' node bench/servers/http-auth-official.mjs [auth|none]
import { InvalidTokenError } from "@modelcontextprotocol/sdk/server/auth/errors.js"
import { requireBearerAuth } from "@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js"
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js"
import express from "express"
import * as Jose from "jose"
import { randomUUID } from "node:crypto"
import { z } from "zod"
import { control } from "./control.mjs"

const ISSUER = "http://127.0.0.1/bench-as"
const RESOURCE = "http://127.0.0.1/mcp"
const SCOPE = "mcp"

const mode = process.argv[2] ?? "auth"
if (mode !== "auth" && mode !== "none") throw new Error(`unknown mode ${mode}`)

const keys = Jose.createLocalJWKSet(JSON.parse(process.env.BENCH_AUTH_JWKS ?? ""))

const verifier = {
  verifyAccessToken: async (token) => {
    let payload
    try {
      payload = (await Jose.jwtVerify(token, keys, { issuer: ISSUER })).payload
    } catch (error) {
      throw new InvalidTokenError(`invalid token: ${error.message}`)
    }
    const aud = Array.isArray(payload.aud) ? payload.aud[0] : payload.aud
    return {
      token,
      clientId: typeof payload.client_id === "string" ? payload.client_id : "",
      scopes: typeof payload.scope === "string" ? payload.scope.split(" ") : [],
      expiresAt: payload.exp,
      resource: aud === undefined ? undefined : new URL(aud)
    }
  }
}

const makeServer = () => {
  const server = new McpServer({ name: "bench-server", version: "0.0.0" })
  server.registerTool("echo", { inputSchema: { text: z.string() } }, async ({ text }) => ({
    content: [{ type: "text", text }]
  }))
  return server
}
const transports = new Map()

const sendError = (res, status, message) =>
  res.status(status).json({ jsonrpc: "2.0", error: { code: -32000, message }, id: null })

const handle = async (req, res) => {
  const sessionId = req.headers["mcp-session-id"]
  if (sessionId !== undefined) {
    const transport = transports.get(sessionId)
    if (transport === undefined) return sendError(res, 404, "Session not found")
    return transport.handleRequest(req, res, req.body)
  }
  if (req.method !== "POST" || !isInitializeRequest(req.body)) {
    return sendError(res, 400, "Mcp-Session-Id header is required")
  }
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    enableJsonResponse: true,
    onsessioninitialized: (id) => {
      transports.set(id, transport)
    }
  })
  transport.onclose = () => {
    if (transport.sessionId !== undefined) transports.delete(transport.sessionId)
  }
  await makeServer().connect(transport)
  await transport.handleRequest(req, res, req.body)
}

const app = express()
app.use(express.json())
const guard = mode === "none" ? [] : [
  requireBearerAuth({
    verifier,
    requiredScopes: [SCOPE],
    resourceMetadataUrl: "http://127.0.0.1/.well-known/oauth-protected-resource/mcp",
    expectedResource: new URL(RESOURCE)
  })
]
app.all("/mcp", ...guard, (req, res) => {
  handle(req, res).catch((error) => {
    if (!res.headersSent) sendError(res, 500, String(error))
  })
})

const http = app.listen(0, "127.0.0.1", () => control(`http://127.0.0.1:${http.address().port}/mcp`))
