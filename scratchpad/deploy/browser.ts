/**
 * The browser: a page's MCP client over Streamable HTTP on the browser's
 * `fetch`. It asks the page's user when the server asks (`prompt`), and
 * shows the tools and a call's answer. The server must allow the page's
 * origin (`allowedOrigins`, and `cors` for a page on another origin).
 *
 *   npx rolldown browser.ts --platform browser --file notes.js
 */
import { McpClient, McpHttpClient } from "@effect-mcp/core"
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Layer from "effect/Layer"

const server = new URLSearchParams(location.search).get("server") ?? "http://127.0.0.1:3000/mcp"

const Client = McpClient.layer({
  clientInfo: { name: "notes-page", version: "1.0.0" },
  elicitation: {
    form: (request) =>
      Effect.sync(() => {
        const title = prompt(request.message)
        return title === null ? { action: "cancel" as const } : { action: "accept" as const, content: { title } }
      })
  }
}).pipe(Layer.provide(McpHttpClient.layer({ url: server })), Layer.provide(FetchHttpClient.layer))

const show = (text: string) =>
  Effect.sync(() => document.body.append(Object.assign(document.createElement("p"), { textContent: text })))

const program = Effect.gen(function*() {
  const client = yield* McpClient.McpClient
  yield* show(`tools: ${(yield* client.tools.get).map((tool) => tool.name).join(", ")}`)
  const result = yield* client.callTool("ask_title", {})
  yield* show(result.content.map((item) => item.type === "text" ? item.text : item.type).join(""))
})

Effect.runFork(
  program.pipe(Effect.provide(Client), Effect.scoped, Effect.catchCause((cause) => show(`failed: ${cause}`)))
)
