/**
 * The MCP Apps extension in short: a tool linked to a `ui://` view, answering
 * hosts that render apps with structured content and other clients with text.
 * The whole example, with its view, is `scratchpad/apps-server.ts`.
 */
import { McpApps, McpServer, McpTool } from "@effect-mcp/core"
import { NodeMcpStdio } from "@effect-mcp/platform-node"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

const html = `<!doctype html><title>Forecast</title><div id="bars"></div>`

const week = (city: string) =>
  ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"].map((day, i) => ({
    day,
    celsius: 12 + (city.length * 3 + i * 5) % 14
  }))

// #region app
const view = McpApps.resource({ uri: "ui://forecast/view.html", name: "forecast view", prefersBorder: true, html })

const forecast = McpApps.linkTool(
  McpTool.make("forecast", {
    input: Schema.Struct({ city: Schema.String }),
    handler: ({ city }, context) =>
      Effect.succeed(
        McpApps.clientSupports(context)
          ? {
            content: [{ type: "text" as const, text: `Forecast for ${city} shown.` }],
            structuredContent: { city, days: week(city) }
          }
          : `Forecast for ${city}: ${week(city).map((d) => `${d.day} ${d.celsius} °C`).join(", ")}.`
      )
  }),
  { resourceUri: view }
)

NodeMcpStdio.runServer(McpServer.layer({ name: "apps-server", version: "1.0.0" }, view, forecast))
// #endregion app
