/**
 * effect-mcp's server of `bench/runtimes.ts` as a Cloudflare Worker: the echo
 * tool of `runtime-ours-web.ts` through `McpWorker.make` (the web handler
 * built in the first `fetch`, on effect's sync scheduler, `stateless: true`;
 * JSON answers, Host limited to 127.0.0.1). Bundled by `bench/runtimes.ts`
 * (rolldown) and served on workerd by `runtime-workerd.ts`.
 */
import * as McpServer from "@effect-mcp/core/McpServer"
import * as McpTool from "@effect-mcp/core/McpTool"
import * as McpWorker from "@effect-mcp/core/McpWorker"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"

const echo = McpTool.make("echo", {
  input: Schema.Struct({ text: Schema.String }),
  handler: ({ text }) => Effect.succeed(text)
})

const Server = McpServer.register(echo).pipe(
  Layer.provideMerge(McpServer.layer({ name: "bench-server", version: "0.0.0" }))
)

export default McpWorker.make(Server, { path: "/mcp", responseMode: "json", allowedHosts: ["127.0.0.1"] })
