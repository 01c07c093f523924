/**
 * One third-party server twice in one group: two instances of
 * `@modelcontextprotocol/server-everything`, one over stdio and one over
 * Streamable HTTP (spawned in its HTTP mode), with qualified names. Both
 * join; their resources (same URIs) are listed twice, each with its server;
 * a read without a server is ambiguous and names both, a read with one is
 * answered; the qualified tools reach each instance.
 */
import { McpError, McpGroup } from "@effect-mcp/core"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeJsonSchemaValidator from "../src/NodeJsonSchemaValidator.ts"
import * as NodeMcpGroup from "../src/NodeMcpGroup.ts"
import { textOf } from "./utils/client.ts"
import * as Everything from "./utils/everything.ts"

const features = "demo://resource/static/document/features.md"

describe("NodeMcpGroup: one server, two instances", () => {
  it.live("server-everything over stdio and over Streamable HTTP in one group: both join, a URI is listed twice and read by server", () =>
    Effect.gen(function*() {
      const remote = yield* Everything.http("b", yield* Everything.freePort)
      const group = yield* McpGroup.make({
        servers: { a: Everything.stdio("a"), b: McpGroup.http(remote.url) },
        nameHook: McpGroup.prefixed({ separator: "_" })
      }).pipe(Effect.provide([NodeMcpGroup.layerConnector({ stderr: "capture" }), NodeJsonSchemaValidator.layer]))
      assert.deepStrictEqual(
        (yield* group.servers).map((
          server
        ) => [server.name, server.status, server.serverInfo?.name, server.params._tag]),
        [
          ["a", "up", "mcp-servers/everything", "Stdio"],
          ["b", "up", "mcp-servers/everything", "StreamableHttp"]
        ]
      )

      // every resource of one is a resource of the other: listed twice, each with its server
      const resources = yield* group.resources
      const uris = (server: string) => resources.filter((entry) => entry.server === server).map((entry) => entry.name)
      assert.isAbove(uris("a").length, 0)
      assert.includeMembers(uris("b"), uris("a").filter((uri) => uri.startsWith("demo://resource/static/")))
      assert.deepStrictEqual(resources.filter((entry) => entry.name === features).map((entry) => entry.server), [
        "a",
        "b"
      ])
      const templates = (yield* group.resourceTemplates).map((entry) => `${entry.server} ${entry.name}`)
      assert.include(templates, "a demo://resource/dynamic/text/{resourceId}")
      assert.include(templates, "b demo://resource/dynamic/text/{resourceId}")

      // without a server: ambiguous, naming both; with one: read there
      const ambiguous = yield* Effect.flip(group.readResource(features))
      assert.deepStrictEqual(
        ambiguous.reason,
        new McpError.AmbiguousError({ kind: "resource", name: features, servers: ["a", "b"] })
      )
      assert.include(ambiguous.message, `"a", "b"`)
      for (const server of ["a", "b"]) {
        const read = yield* group.readResource(features, { server })
        assert.strictEqual(read.contents[0]?.uri, features)
        assert.include((read.contents[0] as { text: string }).text, "#")
      }
      // a URI only their templates match: ambiguous as well
      const dynamic = "demo://resource/dynamic/text/3"
      assert.strictEqual((yield* Effect.flip(group.readResource(dynamic))).reason._tag, "AmbiguousError")
      assert.strictEqual((yield* group.readResource(dynamic, { server: "b" })).contents[0]?.uri, dynamic)

      // the qualified tools reach each instance
      assert.strictEqual(textOf(yield* group.callTool("a_echo", { message: "hi" })), "Echo: hi")
      assert.strictEqual(textOf(yield* group.callTool("b_echo", { message: "hi" })), "Echo: hi")
      for (const instance of ["a", "b"]) {
        const env = JSON.parse(textOf(yield* group.callTool(`${instance}_get-env`))) as Record<string, string>
        assert.strictEqual(env.INSTANCE, instance)
      }
    }))
})
