/**
 * Next.js (App Router): `app/mcp/route.ts`, the web handler as the route's
 * methods. Legacy sessions live in memory: on serverless hosting pass
 * `stateless: true` (2026-07-28 requests are stateless anyway).
 */
import { McpHttpServer } from "@effect-mcp/core"
import { Notes } from "../../../notes.ts"

const { handler } = McpHttpServer.toWebHandler(Notes, { path: "/mcp", stateless: true })

export { handler as DELETE, handler as GET, handler as POST }
