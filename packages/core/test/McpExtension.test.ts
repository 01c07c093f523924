/**
 * Extensions: a server registers one like a tool, declares it under
 * `capabilities.extensions` and serves its requests in both eras; a client
 * declares the extensions it takes and a handler sees whether it did.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Layer, Schema } from "effect"
import * as JsonRpc from "../src/JsonRpc.ts"
import * as McpError from "../src/McpError.ts"
import * as McpExtension from "../src/McpExtension.ts"
import * as McpMethod from "../src/McpMethod.ts"
import * as McpResource from "../src/McpResource.ts"
import * as McpServer from "../src/McpServer.ts"
import * as McpTest from "../src/McpTest.ts"
import * as McpTool from "../src/McpTool.ts"

const ID = "com.example/echo"

const Echo = McpMethod.request({
  name: "echo/say",
  params: Schema.Struct({ text: Schema.String }),
  result: Schema.Struct({ said: Schema.String, declared: Schema.Boolean, era: Schema.String }),
  from: "client",
  capability: McpExtension.capability("server", ID)
})

const Unchecked = McpMethod.request({ name: "echo/say", params: Echo.params, result: Echo.result, from: "client" })

const extension = McpExtension.make({
  id: ID,
  settings: { loud: true },
  requests: [
    McpExtension.request(Echo, (params, context) =>
      params.text === ""
        ? Effect.fail(McpError.protocol(JsonRpc.ErrorCode.InvalidParams, "nothing to say"))
        : Effect.succeed({
          said: params.text.toUpperCase(),
          declared: McpExtension.clientDeclares(context, ID),
          era: context.era
        }))
  ]
})

const Probe = McpTool.make("probe", {
  description: "Whether the caller declared the echo extension",
  input: Schema.Struct({}),
  handler: (_, context) => Effect.succeed(McpExtension.clientDeclares(context, ID) ? "declared" : "not declared")
})

const Server = McpServer.layer({ name: "ext", version: "1.0.0" }, extension, Probe)

describe("McpExtension", () => {
  for (const era of ["legacy", "modern"] as const) {
    it.effect(`is declared and served (${era})`, () =>
      Effect.gen(function*() {
        const client = yield* McpTest.client(Server, { era, extensions: { [ID]: {} } })
        assert.deepStrictEqual((client.serverCapabilities as any).extensions?.[ID], { loud: true })
        const result = yield* client.session.request(Echo, { text: "hi" })
        assert.deepStrictEqual({ ...result, resultType: undefined, _meta: undefined }, {
          said: "HI",
          declared: true,
          era,
          resultType: undefined,
          _meta: undefined
        })
        const refused = yield* Effect.exit(client.session.request(Echo, { text: "" }))
        assert.isTrue(Exit.isFailure(refused))
        const bad = yield* Effect.exit(client.session.request(Echo, { text: 1 } as any))
        assert.isTrue(Exit.isFailure(bad))
        const probed = yield* client.callTool("probe", {})
        assert.deepStrictEqual(probed.content, [{ type: "text", text: "declared" }])
      }).pipe(Effect.scoped))

    it.effect(`a client without the extension is seen as such (${era})`, () =>
      Effect.gen(function*() {
        const client = yield* McpTest.client(Server, { era })
        const probed = yield* client.callTool("probe", {})
        assert.deepStrictEqual(probed.content, [{ type: "text", text: "not declared" }])
        const result = yield* client.session.request(Echo, { text: "x" })
        assert.isFalse(result.declared)
      }).pipe(Effect.scoped))

    it.effect(`an unregistered extension is gone: undeclared, its method unknown (${era})`, () =>
      Effect.gen(function*() {
        const server = yield* McpServer.make({ name: "ext", version: "1.0.0" })
        yield* server.register(extension)
        let attached = 0
        let detached = 0
        const counted = McpExtension.make({
          id: "com.example/counted",
          requests: [],
          attach: () => {
            attached++
            return () => detached++
          }
        })
        yield* server.register(counted)
        yield* server.unregister(extension)
        const client = yield* McpTest.client(Layer.succeed(McpServer.McpServer, server), {
          era,
          extensions: { [ID]: {} }
        })
        assert.isUndefined((client.serverCapabilities as any).extensions?.[ID])
        assert.deepStrictEqual((client.serverCapabilities as any).extensions?.["com.example/counted"], {})
        // refused before sending: the server does not declare it
        const unsupported = yield* Effect.flip(client.session.request(Echo, { text: "hi" }))
        assert.strictEqual(unsupported._tag, "McpError")
        // sent anyway (a method declared without the capability): unknown to the server
        const unknown = yield* Effect.flip(client.session.request(Unchecked, { text: "hi" }))
        assert.strictEqual(
          unknown.reason._tag === "ProtocolError" && unknown.reason.code,
          JsonRpc.ErrorCode.MethodNotFound
        )
        assert.strictEqual(unsupported.reason._tag, "UnsupportedError")
        assert.strictEqual(attached, 1)
        yield* server.unregister(counted)
        assert.strictEqual(detached, 1)
      }).pipe(Effect.scoped))
  }

  it.effect("an extension's own definitions come and go with it", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.make({ name: "ext", version: "1.0.0" })
      const withResource = McpExtension.make({
        id: "com.example/with-resource",
        requests: [],
        definitions: [
          McpResource.make({ uri: "example://readme", name: "readme", read: () => Effect.succeed("hello") })
        ]
      })
      yield* server.register(withResource)
      const client = yield* McpTest.client(Layer.succeed(McpServer.McpServer, server), { era: "legacy" })
      assert.deepStrictEqual((yield* client.listResources()).resources.map((r) => r.uri), ["example://readme"])
      assert.deepStrictEqual((client.serverCapabilities as any).extensions?.["com.example/with-resource"], {})
      yield* server.disable(withResource)
      assert.deepStrictEqual((yield* client.listResources()).resources.map((r) => r.uri), [])
    }).pipe(Effect.scoped))

  it.effect("a hidden extension's requests are unknown to that client; middleware sees them", () =>
    Effect.gen(function*() {
      const seen: Array<string> = []
      const server = McpServer.layer({
        name: "ext",
        version: "1.0.0",
        visible: (definition, context) => definition._tag !== "McpExtension" || context.clientInfo.name === "insider",
        middleware: [(_, method, __, next) => Effect.andThen(Effect.sync(() => seen.push(method)), next)]
      }, extension)
      const outsider = yield* McpTest.client(server, { era: "modern", extensions: { [ID]: {} } })
      const hidden = yield* Effect.flip(outsider.session.request(Echo, { text: "hi" }))
      assert.strictEqual(hidden.reason._tag === "ProtocolError" && hidden.reason.code, JsonRpc.ErrorCode.MethodNotFound)
      const insider = yield* McpTest.client(server, { era: "modern", clientInfo: { name: "insider", version: "1" } })
      assert.strictEqual((yield* insider.session.request(Echo, { text: "hi" })).said, "HI")
      assert.deepStrictEqual(seen.filter((method) => method === "echo/say"), ["echo/say", "echo/say"])
    }).pipe(Effect.scoped))
})
