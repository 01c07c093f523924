/**
 * Hono: the web handler mounted in an app, next to the app's own routes.
 * The app is a fetch handler: `export default app` serves it on Bun, Deno or
 * Workers, `@hono/node-server` on Node.
 */
import { McpHttpServer } from "@effect-mcp/core"
import { Hono } from "hono"
import { Notes } from "./notes.ts"

const { dispose, handler } = McpHttpServer.toWebHandler(Notes, { path: "/mcp" })

export const app = new Hono()
app.get("/", (c) => c.text("notes"))
app.all("/mcp", (c) => handler(c.req.raw))

/** Ends the MCP sessions and closes the server: call it when the app stops. */
export { dispose }
