/**
 * MCP Apps through McpGateway, in each pair of eras (the client in front,
 * the servers behind): a tool's `_meta.ui` and its app resource (listing
 * and content item) pass through unchanged, the tool under the gateway's
 * name and the resource under its upstream URI, reads routed to its server;
 * and whether the client in front declared the extension reaches the
 * server's handler, which answers with the app or with text.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import * as McpApps from "../src/McpApps.ts"
import * as McpClient from "../src/McpClient.ts"
import * as McpGateway from "../src/McpGateway.ts"
import * as McpGroup from "../src/McpGroup.ts"
import * as McpServer from "../src/McpServer.ts"
import * as McpTest from "../src/McpTest.ts"
import * as McpTool from "../src/McpTool.ts"
import * as McpTransport from "../src/McpTransport.ts"
import { clientInfo, textOf } from "./utils/client.ts"
import { ValidatorLayer } from "./utils/validator.ts"

type Era = "modern" | "legacy"
const PAIRS: ReadonlyArray<readonly [Era, Era]> = [["legacy", "legacy"], ["legacy", "modern"], ["modern", "legacy"], [
  "modern",
  "modern"
]]

/** A server with one app tool whose answer depends on whether the caller renders apps. */
const appServer = (name: string) => {
  const view = McpApps.resource({
    uri: `ui://${name}/view.html`,
    name: `${name} view`,
    description: `The ${name} app`,
    csp: { connectDomains: [`https://${name}.example.com`] },
    permissions: { clipboardWrite: {} },
    prefersBorder: true,
    _meta: { "example.com/owner": name },
    html: `<!doctype html><title>${name}</title>`
  })
  const tool = McpApps.linkTool(
    McpTool.make(name, {
      description: `Shows ${name}`,
      input: Schema.Struct({ q: Schema.String }),
      handler: ({ q }, context) =>
        Effect.succeed(
          McpApps.clientSupports(context)
            ? { content: [{ type: "text" as const, text: `${name} app for ${q}` }], structuredContent: { q } }
            : `${name} text for ${q}`
        )
    }),
    { resourceUri: view, visibility: ["model", "app"] }
  )
  return { view, tool, layer: McpServer.layer({ name, version: "1.0.0" }, view, tool) }
}

const weather = appServer("weather")
const clock = appServer("clock")

/** A gateway over `servers` (tools prefixed), and a client speaking `front`. */
const gatewayOver = (
  servers: Readonly<Record<string, McpGroup.ServerConfig>>,
  front: Era,
  client: Partial<McpClient.Options> = {}
) =>
  Effect.gen(function*() {
    const group = yield* McpGroup.make({
      servers,
      nameHook: McpGroup.prefixed(),
      client: McpGateway.clientOptions,
      liveness: false
    }).pipe(Effect.provide([McpGroup.layerConnectorInMemory, ValidatorLayer]))
    const server = yield* McpGateway.make().pipe(Effect.provideService(McpGroup.McpGroup, group))
    const [clientEnd, serverEnd] = yield* McpTransport.makeInMemoryPair
    yield* server.serve.pipe(Effect.provideService(McpTransport.McpTransport, serverEnd))
    return yield* McpClient.make({ clientInfo, era: front, ...client }).pipe(
      Effect.provideService(McpTransport.McpTransport, clientEnd),
      Effect.provide(ValidatorLayer)
    )
  })

/** A gateway over both app servers speaking `behind`, and a client speaking `front`. */
const setup = (front: Era, behind: Era, client: Partial<McpClient.Options> = {}) =>
  gatewayOver(
    {
      weather: McpGroup.inMemory(weather.layer, { era: behind }),
      clock: McpGroup.inMemory(clock.layer, { era: behind })
    },
    front,
    client
  )

/** A server whose app has the same URI as other servers' (`ui://widget/index.html`). */
const sameUri = (name: string) => {
  const view = McpApps.resource({ uri: "ui://widget/index.html", name: `${name} view`, html: `<p>${name}</p>` })
  const tool = McpApps.linkTool(McpTool.make(name, { handler: () => Effect.succeed(name) }), { resourceUri: view })
  return McpServer.layer({ name, version: "1.0.0" }, view, tool)
}

/** What a server of ours lists and reads for itself, through a client connected to it alone. */
const direct = (layer: typeof weather.layer, uri: string) =>
  Effect.gen(function*() {
    const client = yield* McpTest.client(layer)
    return {
      tool: (yield* client.listTools()).tools[0]!,
      resource: (yield* client.listResources()).resources.find((r) => r.uri === uri)!,
      read: yield* client.readResource(uri)
    }
  })

describe("McpGateway and MCP Apps", () => {
  for (const [front, behind] of PAIRS) {
    describe(`${front} client, ${behind} servers`, () => {
      it.effect("the tool's _meta.ui and the app resource pass through; reads are routed", () =>
        Effect.gen(function*() {
          const client = yield* setup(front, behind, { extensions: McpApps.clientExtension() })
          const tools = (yield* client.listTools()).tools
          assert.deepStrictEqual(tools.map((tool) => tool.name).sort(), ["clock__clock", "weather__weather"])
          const resources = (yield* client.listResources()).resources
          assert.deepStrictEqual(resources.map((r) => r.uri).sort(), ["ui://clock/view.html", "ui://weather/view.html"])

          for (const [name, server] of [["weather", weather], ["clock", clock]] as const) {
            const uri = `ui://${name}/view.html`
            const upstream = yield* direct(server.layer, uri)
            const tool = tools.find((t) => t.name === `${name}__${name}`)!
            assert.deepStrictEqual(tool._meta, upstream.tool._meta)
            assert.deepStrictEqual(McpApps.toolUi(tool), { resourceUri: uri, visibility: ["model", "app"] })
            const resource = resources.find((r) => r.uri === uri)!
            assert.deepStrictEqual(resource, upstream.resource)
            assert.strictEqual(resource.mimeType, McpApps.MIME_TYPE)
            const read = yield* client.readResource(uri)
            assert.deepStrictEqual(read.contents, upstream.read.contents)

            // the client's read of the tool's app, through the gateway
            const app = yield* McpApps.readToolApp(client, tool.name)
            assert.strictEqual(app.html, `<!doctype html><title>${name}</title>`)
            assert.deepStrictEqual(app.ui, {
              csp: { connectDomains: [`https://${name}.example.com`] },
              permissions: { clipboardWrite: {} },
              prefersBorder: true
            })
          }
        }))

      // behind a legacy server, which learns a client's extensions only from its session,
      // the call of a client declaring the extension goes on a session of the gateway's
      // own declaring it (the group's connection declares none: text-only clients stay so)
      it.effect("the front client's declaration reaches the server's handler", () =>
        Effect.gen(function*() {
          const withApps = yield* setup(front, behind, { extensions: McpApps.clientExtension() })
          const app = yield* withApps.callTool("weather__weather", { q: "Lisbon" })
          assert.strictEqual(textOf(app), "weather app for Lisbon")
          assert.deepStrictEqual(app.structuredContent, { q: "Lisbon" })

          const textOnly = yield* setup(front, behind)
          const text = yield* textOnly.callTool("weather__weather", { q: "Lisbon" })
          assert.strictEqual(textOf(text), "weather text for Lisbon")
          assert.isUndefined(text.structuredContent)
        }))
    })
  }

  // KNOWN LIMIT (packages/core/src/internal/gateway/): two servers whose apps share a URI are
  // listed as one resource (the first server's), and every read of that URI goes to
  // it: the second server's tool shows the first server's app. Resource URIs are not
  // renamed, so nothing tells the two apart (a gateway could qualify the URIs of
  // colliding ui:// resources and rewrite the tools' `_meta.ui` in step).
  it.effect.fails("each tool's app is its own server's, even when two servers use the same ui:// URI", () =>
    Effect.gen(function*() {
      const client = yield* gatewayOver(
        { a: McpGroup.inMemory(sameUri("a")), b: McpGroup.inMemory(sameUri("b")) },
        "modern"
      )
      assert.strictEqual((yield* McpApps.readToolApp(client, "a__a")).html, "<p>a</p>")
      assert.strictEqual((yield* McpApps.readToolApp(client, "b__b")).html, "<p>b</p>")
    }))
})
