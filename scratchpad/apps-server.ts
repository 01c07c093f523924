/**
 * An example MCP server with an app (MCP Apps, `io.modelcontextprotocol/ui`)
 * over stdio: the `forecast` tool is linked to an HTML view that draws the
 * week's temperatures. A host that declared the extension gets them as
 * `structuredContent` for the view (and a line of text for the model); any
 * other client gets the whole forecast as text.
 *
 *   node --conditions=development scratchpad/apps-server.ts
 */
import { McpApps, McpServer, McpTool } from "@effect-mcp/core"
import { NodeMcpStdio } from "@effect-mcp/platform-node"
import { Effect, Schema } from "effect"

// the view: it greets the host (`ui/initialize`) and draws each tool result it is sent
const html = `<!doctype html>
<meta charset="utf-8">
<title>Forecast</title>
<style>body { font: 14px system-ui; margin: 12px } .bar { background: #4a90d9; color: #fff; margin: 2px 0; padding: 2px 6px }</style>
<h1 id="title">Forecast</h1>
<div id="bars">Waiting for the forecast…</div>
<script>
  const send = (message) => window.parent.postMessage({ jsonrpc: "2.0", ...message }, "*")
  window.addEventListener("message", ({ data }) => {
    if (data?.id === 1 && data.result) send({ method: "ui/notifications/initialized", params: {} })
    if (data?.method !== "ui/notifications/tool-result" || !data.params.structuredContent) return
    const { city, days } = data.params.structuredContent
    document.getElementById("title").textContent = "Forecast for " + city
    document.getElementById("bars").replaceChildren(...days.map(({ day, celsius }) => {
      const bar = document.createElement("div")
      bar.className = "bar"
      bar.style.width = 40 + celsius * 8 + "px"
      bar.textContent = day + " " + celsius + " °C"
      return bar
    }))
  })
  send({ id: 1, method: "ui/initialize", params: {
    appInfo: { name: "forecast-view", version: "1.0.0" }, appCapabilities: {}, protocolVersion: "2026-01-26"
  } })
</script>
`

const view = McpApps.resource({
  uri: "ui://forecast/view.html",
  name: "forecast view",
  description: "The week's temperatures as bars",
  prefersBorder: true,
  html
})

const DAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]

// made-up weather, the same for the same city
const week = (city: string) => DAYS.map((day, i) => ({ day, celsius: 12 + (city.length * 3 + i * 5) % 14 }))

const forecast = McpApps.linkTool(
  McpTool.make("forecast", {
    title: "Forecast",
    description: "The week's forecast for a city",
    input: Schema.Struct({ city: Schema.String }),
    annotations: { readOnlyHint: true, openWorldHint: false },
    handler: ({ city }, context) => {
      const days = week(city)
      const range = `${Math.min(...days.map((d) => d.celsius))}–${Math.max(...days.map((d) => d.celsius))} °C`
      return Effect.succeed(
        McpApps.clientSupports(context)
          // the host renders the view with structuredContent; the text is for the model
          ? {
            content: [{ type: "text" as const, text: `Forecast for ${city} shown: ${range}.` }],
            structuredContent: { city, days }
          }
          : `Forecast for ${city}: ${days.map((d) => `${d.day} ${d.celsius} °C`).join(", ")}.`
      )
    }
  }),
  { resourceUri: view }
)

NodeMcpStdio.runServer(McpServer.layer({ name: "apps-server", version: "1.0.0" }, view, forecast))
