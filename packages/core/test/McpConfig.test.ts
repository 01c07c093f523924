/**
 * McpConfig: the `mcpServers` file of MCP hosts decoded into
 * `McpGroup.ServerParams`, and errors that name the file, the server and the
 * field.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as McpConfig from "../src/McpConfig.ts"
import * as McpError from "../src/McpError.ts"

const configError = (error: McpError.McpError) => {
  assert.strictEqual(error.reason._tag, "ConfigError")
  return error.reason as McpError.ConfigError
}

describe("McpConfig.decode", () => {
  it.effect("stdio and remote servers, in the file's order; unknown host fields ignored; disabled entries left out", () =>
    Effect.gen(function*() {
      const servers = yield* McpConfig.decode({
        mcpServers: {
          files: {
            command: "npx",
            args: ["-y", "@modelcontextprotocol/server-filesystem", "."],
            env: { DEBUG: "1" },
            cwd: "/tmp",
            autoApprove: ["read_file"]
          },
          plain: { command: "server" },
          search: { url: "https://example.com/mcp", headers: { Authorization: "Bearer x" } },
          typed: { type: "http", url: "http://127.0.0.1:3000/mcp" },
          legacy: { url: "http://127.0.0.1:3000/sse", transport: "sse" },
          legacyType: { url: "http://127.0.0.1:3000/sse", type: "sse" },
          socket: { url: "ws://127.0.0.1:9000/mcp" },
          socketExplicit: { url: "wss://example.com/mcp", transport: "websocket", headers: { "X-Key": "k" } },
          stdioTyped: { type: "stdio", command: "srv" },
          off: { command: "nope", disabled: true }
        },
        otherHostSetting: true
      }, "mcp.json")
      assert.deepStrictEqual(Object.keys(servers), [
        "files",
        "plain",
        "search",
        "typed",
        "legacy",
        "legacyType",
        "socket",
        "socketExplicit",
        "stdioTyped"
      ])
      assert.deepStrictEqual(servers.files, {
        _tag: "Stdio",
        command: "npx",
        args: ["-y", "@modelcontextprotocol/server-filesystem", "."],
        env: { DEBUG: "1" },
        cwd: "/tmp"
      })
      assert.deepStrictEqual(servers.plain, { _tag: "Stdio", command: "server" })
      assert.deepStrictEqual(servers.search, {
        _tag: "StreamableHttp",
        url: "https://example.com/mcp",
        headers: { Authorization: "Bearer x" }
      })
      assert.deepStrictEqual(servers.typed, { _tag: "StreamableHttp", url: "http://127.0.0.1:3000/mcp" })
      assert.deepStrictEqual(servers.legacy, { _tag: "Sse", url: "http://127.0.0.1:3000/sse" })
      assert.deepStrictEqual(servers.legacyType, { _tag: "Sse", url: "http://127.0.0.1:3000/sse" })
      assert.deepStrictEqual(servers.socket, { _tag: "WebSocket", url: "ws://127.0.0.1:9000/mcp" })
      assert.deepStrictEqual(servers.socketExplicit, {
        _tag: "WebSocket",
        url: "wss://example.com/mcp",
        headers: { "X-Key": "k" }
      })
      assert.deepStrictEqual(servers.stdioTyped, { _tag: "Stdio", command: "srv" })
      assert.deepStrictEqual(yield* McpConfig.decode({ mcpServers: {} }, "empty.json"), {})
    }))

  it.effect("oauth settings of HTTP servers; oauth on a WebSocket server or a bad callback port is an error", () =>
    Effect.gen(function*() {
      const servers = yield* McpConfig.decode({
        mcpServers: {
          signed: {
            url: "https://example.com/mcp",
            oauth: {
              clientId: "id",
              clientSecret: "s",
              scope: "a b",
              clientMetadataUrl: "https://app.example.com/c.json",
              callbackPort: 8765
            }
          },
          legacy: { url: "https://example.com/sse", type: "sse", oauth: false },
          plain: { url: "https://example.com/other" }
        }
      }, "mcp.json")
      assert.deepStrictEqual(servers.signed, {
        _tag: "StreamableHttp",
        url: "https://example.com/mcp",
        oauth: {
          clientId: "id",
          clientSecret: "s",
          scope: "a b",
          clientMetadataUrl: "https://app.example.com/c.json",
          callbackPort: 8765
        }
      } as any)
      assert.deepStrictEqual(servers.legacy, { _tag: "Sse", url: "https://example.com/sse", oauth: false } as any)
      assert.isFalse("oauth" in servers.plain!)
      const ws = configError(
        yield* Effect.flip(McpConfig.decode({ mcpServers: { s: { url: "ws://127.0.0.1:1", oauth: {} } } }, "mcp.json"))
      )
      assert.deepStrictEqual([ws.server, ws.field], ["s", "oauth"])
      const port = configError(
        yield* Effect.flip(
          McpConfig.decode(
            { mcpServers: { h: { url: "http://127.0.0.1:1/mcp", oauth: { callbackPort: 70000 } } } },
            "mcp.json"
          )
        )
      )
      assert.strictEqual(port.server, "h")
      assert.include(port.field ?? "", "oauth")
    }))

  it.effect("era: given to any kind of server, left out when absent; a bad one is an error naming the server and the field", () =>
    Effect.gen(function*() {
      const servers = yield* McpConfig.decode({
        mcpServers: {
          files: { command: "srv", era: "legacy" },
          search: { url: "https://example.com/mcp", era: "modern" },
          legacy: { url: "https://example.com/sse", type: "sse", era: "legacy" },
          socket: { url: "ws://127.0.0.1:9000/mcp", era: "auto" },
          plain: { command: "srv" }
        }
      }, "mcp.json")
      assert.deepStrictEqual(servers.files, { _tag: "Stdio", command: "srv", era: "legacy" })
      assert.deepStrictEqual(servers.search, { _tag: "StreamableHttp", url: "https://example.com/mcp", era: "modern" })
      assert.deepStrictEqual(servers.legacy, { _tag: "Sse", url: "https://example.com/sse", era: "legacy" })
      assert.deepStrictEqual(servers.socket, { _tag: "WebSocket", url: "ws://127.0.0.1:9000/mcp", era: "auto" })
      assert.isFalse("era" in servers.plain!)

      for (
        const [entry, got] of [[{ command: "srv", era: "2026-07-28" }, `"2026-07-28"`], [
          { url: "http://h/", era: 2 },
          "2"
        ]] as const
      ) {
        const error = yield* Effect.flip(McpConfig.decode({ mcpServers: { a: entry } }, "mcp.json"))
        const reason = configError(error)
        assert.deepStrictEqual([reason.source, reason.server, reason.field], ["mcp.json", "a", "era"])
        assert.strictEqual(
          error.message,
          `mcp.json: server "a": era: Expected "auto", "modern" or "legacy", got ${got}`
        )
      }
    }))

  it.effect("errors name the file, the server and the field", () =>
    Effect.gen(function*() {
      type Where = { readonly server?: string | undefined; readonly field?: string | undefined }
      const cases: ReadonlyArray<readonly [unknown, Where, string]> = [
        [
          [],
          { server: undefined, field: undefined },
          `mcp.json: expected a JSON object with "mcpServers", got an array`
        ],
        [{ servers: {} }, { field: "mcpServers" }, `mcp.json: mcpServers: expected a JSON object with "mcpServers"`],
        [{ mcpServers: [] }, { field: "mcpServers" }, "mcp.json: mcpServers: Expected object, got []"],
        [{ mcpServers: { a: "npx" } }, { server: "a" }, `mcp.json: server "a": expected an object, got string`],
        [{ mcpServers: { a: {} } }, { server: "a" }, `needs a "command" (a stdio server) or a "url" (a remote server)`],
        [{ mcpServers: { a: { command: "x", url: "http://h/" } } }, { server: "a" }, `has both "command"`],
        [
          { mcpServers: { a: { command: 3 } } },
          { server: "a", field: "command" },
          `server "a": command: Expected string, got 3`
        ],
        [{ mcpServers: { a: { command: "" } } }, { server: "a", field: "command" }, "a non-empty command"],
        [
          { mcpServers: { github: { command: "npx", args: ["-y", 3] } } },
          { server: "github", field: "args[1]" },
          `mcp.json: server "github": args[1]: Expected string, got 3`
        ],
        [
          { mcpServers: { a: { command: "x", env: { PORT: 3000 } } } },
          { server: "a", field: "env.PORT" },
          "Expected string"
        ],
        [
          { mcpServers: { a: { url: "not a url" } } },
          { server: "a", field: "url" },
          `url: Expected an absolute URL, got "not a url"`
        ],
        [
          { mcpServers: { a: { url: "http://h/", transport: "grpc" } } },
          { server: "a", field: "transport" },
          `"streamable-http"`
        ],
        [
          { mcpServers: { a: { url: "http://h/", headers: ["x"] } } },
          { server: "a", field: "headers" },
          "Expected object"
        ],
        [
          { mcpServers: { a: { url: "http://h/", transport: "websocket" } } },
          { server: "a", field: "url" },
          "ws:// or wss://"
        ],
        [
          { mcpServers: { a: { url: "ws://h/", transport: "sse" } } },
          { server: "a", field: "url" },
          "http:// or https://"
        ],
        [{ mcpServers: { a: { url: "ftp://h/" } } }, { server: "a", field: "url" }, "http:// or https://"],
        [
          { mcpServers: { a: { url: "http://h/", transport: "sse", type: "http" } } },
          { server: "a", field: "type" },
          "says"
        ]
      ]
      for (const [json, where, message] of cases) {
        const error = yield* Effect.flip(McpConfig.decode(json, "mcp.json"))
        const reason = configError(error)
        assert.strictEqual(reason.source, "mcp.json")
        if ("server" in where) assert.strictEqual(reason.server, where.server, JSON.stringify(json))
        if ("field" in where) assert.strictEqual(reason.field, where.field, JSON.stringify(json))
        assert.include(error.message, message, JSON.stringify(json))
      }
    }))
})

describe("McpConfig.parse", () => {
  it.effect("parses JSON text; text that is not JSON fails naming the source", () =>
    Effect.gen(function*() {
      const servers = yield* McpConfig.parse(
        `{ "mcpServers": { "a": { "command": "srv", "args": ["--x"] } } }`,
        "a.json"
      )
      assert.deepStrictEqual(servers, { a: { _tag: "Stdio", command: "srv", args: ["--x"] } })
      const error = yield* Effect.flip(McpConfig.parse(`{ "mcpServers": `, "/etc/mcp.json"))
      const reason = configError(error)
      assert.strictEqual(reason.source, "/etc/mcp.json")
      assert.match(error.message, /^\/etc\/mcp\.json: not valid JSON: /)
    }))
})
