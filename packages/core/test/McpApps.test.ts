/**
 * MCP Apps: the same inputs give the same wire as the published helpers
 * (`registerAppTool` / `registerAppResource` of `@modelcontextprotocol/ext-apps`
 * on the official v2 server); a handler answers a client that declared the
 * extension with its app and others with text, per session (legacy) and per
 * request (2026-07-28); a client reads a tool's app; a non-`ui://` URI is
 * refused.
 */
import { assert, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/client"
import {
  EXTENSION_ID as OFFICIAL_EXTENSION_ID,
  getUiCapability,
  registerAppResource,
  registerAppTool,
  RESOURCE_MIME_TYPE,
  RESOURCE_URI_META_KEY
} from "@modelcontextprotocol/ext-apps/server"
import { InMemoryTransport, McpServer as OfficialServer } from "@modelcontextprotocol/server"
import { Cause, Effect, Layer, Schema } from "effect"
import * as McpApps from "../src/McpApps.ts"
import * as McpResource from "../src/McpResource.ts"
import * as McpServer from "../src/McpServer.ts"
import * as McpTest from "../src/McpTest.ts"
import * as McpTool from "../src/McpTool.ts"
import { textOf } from "./utils/client.ts"

const ERAS = ["legacy", "modern"] as const

// -----------------------------------------------------------------------------
// Equivalence with the published helpers
// -----------------------------------------------------------------------------

interface Case {
  readonly label: string
  readonly tool: {
    readonly name: string
    readonly resourceUri: string
    readonly visibility?: ReadonlyArray<McpApps.Visibility>
    readonly meta?: Record<string, unknown>
    /** Given with the flat key only (the older form). */
    readonly flat?: boolean
  }
  readonly resource: {
    readonly uri: string
    readonly name: string
    readonly title?: string
    readonly description?: string
    readonly ui?: McpApps.ResourceUi
    readonly html: string
  }
}

const CASES: ReadonlyArray<Case> = [
  {
    label: "the whole _meta.ui",
    tool: {
      name: "weather",
      resourceUri: "ui://weather/view.html",
      visibility: ["model", "app"],
      meta: { "example.com/owner": "me" }
    },
    resource: {
      uri: "ui://weather/view.html",
      name: "Weather View",
      title: "Weather",
      description: "Interactive weather display",
      ui: {
        csp: {
          connectDomains: ["https://api.example.com"],
          resourceDomains: ["https://cdn.example.com"],
          frameDomains: ["https://player.example.com"],
          baseUriDomains: ["https://base.example.com"]
        },
        permissions: { camera: {}, microphone: {}, geolocation: {}, clipboardWrite: {} },
        domain: "a904794854a047f6.claudemcpcontent.com",
        prefersBorder: false
      },
      html: "<!doctype html><title>weather</title>"
    }
  },
  {
    label: "an app-only tool, a resource with a CSP only",
    tool: { name: "refresh", resourceUri: "ui://shop/cart.html", visibility: ["app"] },
    resource: { uri: "ui://shop/cart.html", name: "Cart", ui: { csp: { connectDomains: [] } }, html: "<p>cart</p>" }
  },
  {
    label: "no visibility, no resource _meta",
    tool: { name: "plain", resourceUri: "ui://plain/app.html" },
    resource: { uri: "ui://plain/app.html", name: "Plain", html: "<p>plain</p>" }
  },
  {
    label: "a tool given with the flat key only",
    tool: { name: "older", resourceUri: "ui://older/app.html", flat: true, meta: { other: 1 } },
    resource: { uri: "ui://older/app.html", name: "Older", ui: { prefersBorder: true }, html: "<p>older</p>" }
  }
]

const handler = () => Effect.succeed("ok")

const registerOfficial = (server: OfficialServer, c: Case) => {
  const { resource, tool } = c
  const toolMeta = tool.flat === true
    ? { ...tool.meta, [RESOURCE_URI_META_KEY]: tool.resourceUri }
    : {
      ...tool.meta,
      ui: { resourceUri: tool.resourceUri, ...(tool.visibility ? { visibility: [...tool.visibility] } : {}) }
    }
  registerAppTool(server, tool.name, { description: "a tool", _meta: toolMeta }, async () => ({
    content: [{ type: "text", text: "ok" }]
  }))
  const meta = resource.ui === undefined ? {} : { _meta: { ui: resource.ui as any } }
  registerAppResource(
    server,
    resource.name,
    resource.uri,
    {
      ...(resource.title === undefined ? {} : { title: resource.title }),
      ...(resource.description === undefined ? {} : { description: resource.description }),
      ...meta
    },
    async () => ({ contents: [{ uri: resource.uri, mimeType: RESOURCE_MIME_TYPE, text: resource.html, ...meta }] })
  )
}

const ours = (c: Case) => {
  const { resource, tool } = c
  const app = McpApps.resource({
    uri: resource.uri,
    name: resource.name,
    title: resource.title,
    description: resource.description,
    ...resource.ui,
    html: resource.html
  })
  const made = McpTool.make(tool.name, {
    description: "a tool",
    _meta: tool.flat === true ? { ...tool.meta, [RESOURCE_URI_META_KEY]: tool.resourceUri } : tool.meta,
    handler
  })
  // the flat form names the resource by URI; the others by the resource itself
  return [
    app,
    McpApps.linkTool(made, { resourceUri: tool.flat === true ? tool.resourceUri : app, visibility: tool.visibility })
  ] as const
}

/** An official v2 client connected in memory to an official v2 server, closed with the scope. */
const official = (register: (server: OfficialServer) => void) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const server = new OfficialServer({ name: "official", version: "2.4.0" })
      register(server)
      const [serverEnd, clientEnd] = InMemoryTransport.createLinkedPair()
      await server.connect(serverEnd)
      const client = new Client({ name: "official-client", version: "2.4.0" })
      await client.connect(clientEnd)
      return client
    }),
    (client) => Effect.promise(() => client.close())
  )

describe("McpApps", () => {
  it("has the published constants", () => {
    assert.strictEqual(McpApps.EXTENSION_ID, OFFICIAL_EXTENSION_ID)
    assert.strictEqual(McpApps.MIME_TYPE, RESOURCE_MIME_TYPE)
    assert.strictEqual(McpApps.RESOURCE_URI_META_KEY, RESOURCE_URI_META_KEY)
  })

  for (const era of ERAS) {
    for (const c of CASES) {
      it.effect(`lists and reads as the published helpers do: ${c.label} (${era})`, () =>
        Effect.gen(function*() {
          const theirs = yield* official((server) => registerOfficial(server, c))
          const client = yield* McpTest.client(McpServer.layer({ name: "ours", version: "1.0.0" }, ...ours(c)), { era })

          const theirTool = (yield* Effect.promise(() => theirs.listTools())).tools.find((t) => t.name === c.tool.name)!
          const ourTool = (yield* client.listTools()).tools.find((t) => t.name === c.tool.name)!
          assert.deepStrictEqual(ourTool._meta, theirTool._meta)

          const pick = (r: any) => ({
            uri: r.uri,
            name: r.name,
            title: r.title,
            description: r.description,
            mimeType: r.mimeType,
            _meta: r._meta
          })
          const theirResource = (yield* Effect.promise(() => theirs.listResources())).resources[0]
          const ourResource = (yield* client.listResources()).resources[0]
          assert.deepStrictEqual(pick(ourResource), pick(theirResource))

          const item = (r: any) => ({ uri: r.uri, mimeType: r.mimeType, _meta: r._meta, text: r.text })
          const theirRead = yield* Effect.promise(() => theirs.readResource({ uri: c.resource.uri }))
          const ourRead = yield* client.readResource(c.resource.uri)
          assert.strictEqual(ourRead.contents.length, 1)
          assert.deepStrictEqual(item(ourRead.contents[0]), item(theirRead.contents[0]))
        }))
    }
  }

  it("reads the client's capability as getUiCapability does, with the MIME type checked", () => {
    const declared = [
      undefined,
      {},
      { [McpApps.EXTENSION_ID]: { mimeTypes: [McpApps.MIME_TYPE] } },
      { [McpApps.EXTENSION_ID]: { mimeTypes: ["text/html; profile=mcp-app", "text/uri-list"] } },
      { [McpApps.EXTENSION_ID]: { mimeTypes: ["text/uri-list"] } },
      { [McpApps.EXTENSION_ID]: {} },
      { "com.example/other": { mimeTypes: [McpApps.MIME_TYPE] } }
    ]
    for (const extensions of declared) {
      const clientCapabilities = extensions === undefined ? {} : { extensions }
      const theirs = getUiCapability(clientCapabilities as any)
      const supported = theirs?.mimeTypes?.some((type) => type.replace(/\s/g, "") === RESOURCE_MIME_TYPE) === true
      assert.deepStrictEqual(
        McpApps.clientCapability({ clientCapabilities }),
        supported ? theirs as McpApps.ClientCapability : undefined
      )
      assert.strictEqual(McpApps.clientSupports({ clientCapabilities }), supported)
    }
  })

  it("gives the client's extensions entry", () => {
    assert.deepStrictEqual(McpApps.clientExtension(), { [McpApps.EXTENSION_ID]: { mimeTypes: [McpApps.MIME_TYPE] } })
    assert.deepStrictEqual(McpApps.clientExtension(["x/y"]), { [McpApps.EXTENSION_ID]: { mimeTypes: ["x/y"] } })
  })

  it("refuses a URI that is not ui://", () => {
    const refused = (f: () => unknown) => {
      try {
        f()
        assert.fail("not refused")
      } catch (error) {
        assert.isTrue(Cause.isIllegalArgumentError(error))
        assert.include((error as Error).message, "ui://")
      }
    }
    refused(() => McpApps.resource({ uri: "https://example.com/app.html", name: "app", html: "<p>" }))
    refused(() => McpApps.resource({ uri: "file:///app.html", name: "app", read: () => Effect.succeed("<p>") }))
    refused(() => McpApps.linkTool(McpTool.make("t", { handler }), { resourceUri: "https://example.com/app.html" }))
    refused(() => McpApps.toolMeta({ resourceUri: "app.html" }))
    // neither html nor read
    assert.throws(() => McpApps.resource({ uri: "ui://x/app.html", name: "app" } as any))
  })
})

// -----------------------------------------------------------------------------
// The app or the text, by what the client declared
// -----------------------------------------------------------------------------

const Forecast = Schema.Struct({ city: Schema.String, celsius: Schema.Finite })

const view = McpApps.resource({
  uri: "ui://weather/view.html",
  name: "weather view",
  prefersBorder: true,
  read: (context) =>
    Effect.succeed({
      html: `<!doctype html><p>rendered for ${context.era}</p>`,
      ui: { csp: { connectDomains: ["https://api.example.com"] } }
    })
})

const weather = McpApps.linkTool(
  McpTool.make("weather", {
    description: "Today's forecast",
    input: Schema.Struct({ city: Schema.String }),
    handler: ({ city }, context) => {
      const forecast = { city, celsius: 21.5 }
      return Effect.succeed(
        McpApps.clientSupports(context)
          ? { content: [{ type: "text" as const, text: `Forecast for ${city} shown.` }], structuredContent: forecast }
          : `${city}: 21.5 °C`
      )
    }
  }),
  { resourceUri: view, visibility: ["model", "app"] }
)

const AppServer = McpServer.layer({ name: "weather", version: "1.0.0" }, view, weather)

const decodeForecast = Schema.decodeUnknownSync(Forecast)

describe("McpApps fallback", () => {
  for (const era of ERAS) {
    it.effect(`a client that declared the extension gets the app, another the text (${era})`, () =>
      Effect.gen(function*() {
        const withApps = yield* McpTest.client(AppServer, { era, extensions: McpApps.clientExtension() })
        const app = yield* withApps.callTool("weather", { city: "Lisbon" })
        assert.deepStrictEqual(decodeForecast(app.structuredContent), { city: "Lisbon", celsius: 21.5 })
        assert.strictEqual(textOf(app), "Forecast for Lisbon shown.")

        const textOnly = yield* McpTest.client(AppServer, { era })
        const text = yield* textOnly.callTool("weather", { city: "Lisbon" })
        assert.isUndefined(text.structuredContent)
        assert.strictEqual(textOf(text), "Lisbon: 21.5 °C")

        // another MIME type only: not an app client
        const other = yield* McpTest.client(AppServer, { era, extensions: McpApps.clientExtension(["text/uri-list"]) })
        assert.strictEqual(textOf(yield* other.callTool("weather", { city: "Porto" })), "Porto: 21.5 °C")
      }))

    it.effect(`one server, two clients declaring differently, calls interleaved (${era})`, () =>
      Effect.gen(function*() {
        // one server, built once, serving both clients
        const shared = Layer.succeedContext(yield* Layer.build(AppServer))
        const withApps = yield* McpTest.client(shared, { era, extensions: McpApps.clientExtension() })
        const textOnly = yield* McpTest.client(shared, { era })
        const results = yield* Effect.all([
          withApps.callTool("weather", { city: "A" }),
          textOnly.callTool("weather", { city: "B" }),
          withApps.callTool("weather", { city: "C" }),
          textOnly.callTool("weather", { city: "D" })
        ], { concurrency: "unbounded" })
        assert.deepStrictEqual(results.map((r) => r.structuredContent === undefined), [false, true, false, true])
        assert.deepStrictEqual(results.map(textOf), [
          "Forecast for A shown.",
          "B: 21.5 °C",
          "Forecast for C shown.",
          "D: 21.5 °C"
        ])
      }))
  }
})

// -----------------------------------------------------------------------------
// readToolApp
// -----------------------------------------------------------------------------

const listingOnly = McpResource.make({
  uri: "ui://plain/listing.html",
  name: "listing only",
  mimeType: McpApps.MIME_TYPE,
  _meta: { ui: { prefersBorder: true, domain: "listing.example" } },
  read: () => Effect.succeed(new TextEncoder().encode("<p>bytes</p>"))
})

const ReadServer = McpServer.layer(
  { name: "apps", version: "1.0.0" },
  view,
  weather,
  listingOnly,
  McpTool.make("flat", { _meta: { [McpApps.RESOURCE_URI_META_KEY]: "ui://plain/listing.html" }, handler }),
  McpTool.make("no_app", { handler }),
  McpTool.make("bad_app", { _meta: { ui: { resourceUri: "https://example.com/app.html" } }, handler })
)

describe("McpApps.readToolApp", () => {
  for (const era of ERAS) {
    it.effect(`reads a tool's app: its HTML and _meta.ui, the content item's first (${era})`, () =>
      Effect.gen(function*() {
        const client = yield* McpTest.client(ReadServer, { era, extensions: McpApps.clientExtension() })
        const app = yield* McpApps.readToolApp(client, "weather")
        assert.strictEqual(app.resourceUri, "ui://weather/view.html")
        assert.deepStrictEqual(app.visibility, ["model", "app"])
        assert.strictEqual(app.html, `<!doctype html><p>rendered for ${era}</p>`)
        assert.strictEqual(app.mimeType, McpApps.MIME_TYPE)
        // the read's own ui laid over the resource's, on the content item
        assert.deepStrictEqual(app.ui, { prefersBorder: true, csp: { connectDomains: ["https://api.example.com"] } })

        // a listed tool, given with the flat key only; a blob; the listing's ui
        const listed = (yield* client.tools.get).find((tool) => tool.name === "flat")!
        assert.deepStrictEqual(McpApps.toolUi(listed), { resourceUri: "ui://plain/listing.html" })
        const flat = yield* McpApps.readToolApp(client, listed)
        assert.strictEqual(flat.html, "<p>bytes</p>")
        assert.isUndefined(flat.visibility)
        assert.deepStrictEqual(flat.ui, { prefersBorder: true, domain: "listing.example" })
      }))

    it.effect(`fails on a tool unknown, without an app, or with a non-ui:// app (${era})`, () =>
      Effect.gen(function*() {
        const client = yield* McpTest.client(ReadServer, { era })
        const unknown = yield* Effect.flip(McpApps.readToolApp(client, "nope"))
        assert.strictEqual(unknown.reason._tag, "NotFoundError")
        const none = yield* Effect.flip(McpApps.readToolApp(client, "no_app"))
        assert.strictEqual(none.reason._tag, "NotFoundError")
        const bad = yield* Effect.flip(McpApps.readToolApp(client, "bad_app"))
        assert.strictEqual(bad.reason._tag, "InvalidResultError")
        assert.include(bad.message, "ui://")
      }))
  }
})
