/**
 * The MCP Apps example (`scratchpad/apps-server.ts`) in a child process over
 * stdio, driven by our client in each era: a client that declared the
 * extension reads the tool's app and gets its data; another gets the text.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { fileURLToPath } from "node:url"
import * as McpApps from "../../core/src/McpApps.ts"
import * as McpClient from "../../core/src/McpClient.ts"
import * as NodeMcpStdio from "../src/NodeMcpStdio.ts"

const root = fileURLToPath(new URL("../../..", import.meta.url))

const connect = (era: "legacy" | "modern", extensions?: McpClient.Options["extensions"]) =>
  Layer.build(
    McpClient.layer({ clientInfo: { name: "apps-test", version: "1.0.0" }, era, extensions }).pipe(
      Layer.provide(NodeMcpStdio.layerClient({
        command: process.execPath,
        args: ["--conditions=development", "scratchpad/apps-server.ts"],
        cwd: root,
        stderr: "capture"
      }))
    )
  ).pipe(Effect.map((context) => Context.get(context, McpClient.McpClient)))

const textOf = (result: { readonly content: ReadonlyArray<unknown> }) => (result.content[0] as { text: string }).text

describe("the MCP Apps example over stdio", () => {
  for (const era of ["legacy", "modern"] as const) {
    it.live(`an app client reads the app and gets its data; another gets text (${era})`, () =>
      Effect.gen(function*() {
        const withApps = yield* connect(era, McpApps.clientExtension())
        const tools = yield* withApps.tools.get
        assert.deepStrictEqual(tools.map((tool) => tool.name), ["forecast"])
        assert.deepStrictEqual(McpApps.toolUi(tools[0]!), { resourceUri: "ui://forecast/view.html" })
        assert.strictEqual(tools[0]!._meta?.[McpApps.RESOURCE_URI_META_KEY], "ui://forecast/view.html")

        const app = yield* McpApps.readToolApp(withApps, "forecast")
        assert.strictEqual(app.mimeType, McpApps.MIME_TYPE)
        assert.include(app.html, "ui/initialize")
        assert.deepStrictEqual(app.ui, { prefersBorder: true })

        const shown = yield* withApps.callTool("forecast", { city: "Lisbon" })
        const data = shown.structuredContent as { city: string; days: ReadonlyArray<{ day: string; celsius: number }> }
        assert.strictEqual(data.city, "Lisbon")
        assert.deepStrictEqual(data.days.map((d) => d.day), ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"])
        assert.match(textOf(shown), /^Forecast for Lisbon shown: \d+–\d+ °C\.$/)

        const textOnly = yield* connect(era)
        const text = yield* textOnly.callTool("forecast", { city: "Lisbon" })
        assert.isUndefined(text.structuredContent)
        assert.match(textOf(text), /^Forecast for Lisbon: Mon \d+ °C, Tue \d+ °C, .*Sun \d+ °C\.$/)
      }), 30_000)
  }
})
