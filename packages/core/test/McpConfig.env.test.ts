/**
 * McpConfig: `${VAR}` and `${VAR:-default}` in `command`, `args`, `env`,
 * `url`, `headers` (and OAuth client credentials), read from the environment
 * given to `decode`; an unset variable makes its server unresolved (its
 * connection fails with a `ConfigError` naming the variable, its server and
 * its field) and leaves the others alone; the values that came from
 * variables are secrets.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import * as McpConfig from "../src/McpConfig.ts"
import * as McpError from "../src/McpError.ts"
import * as McpGroup from "../src/McpGroup.ts"

const configError = (error: McpError.McpError) => {
  assert.strictEqual(error.reason._tag, "ConfigError")
  return error.reason as McpError.ConfigError
}

const env = {
  TOKEN: "tok-123456",
  BIN: "/opt/bin/server",
  HOST: "api.example.com",
  EMPTY: "",
  DIR: "/data"
}

describe("McpConfig.decode with env", () => {
  it.effect("expands ${VAR}, ${env:VAR} and ${VAR:-default} in command, args, env, url and headers", () =>
    Effect.gen(function*() {
      const servers = yield* McpConfig.decode(
        {
          mcpServers: {
            local: {
              command: "${BIN}",
              args: ["--dir", "${DIR}/files", "${MISSING:-fallback}", "${EMPTY:-used when empty}", "$NOT_BRACED"],
              env: { API_TOKEN: "${TOKEN}", MODE: "${MODE:-dev}", BOTH: "${env:HOST}:${TOKEN}" },
              inheritEnv: true
            },
            remote: {
              url: "https://${HOST}/mcp",
              headers: { Authorization: "Bearer ${TOKEN}" },
              oauth: { clientId: "${HOST}", clientSecret: "${TOKEN}" }
            },
            literal: { command: "srv", args: ["${nope bad}", "${}"] }
          }
        },
        "mcp.json",
        { env }
      )
      assert.deepStrictEqual(servers.local, {
        _tag: "Stdio",
        command: "/opt/bin/server",
        args: ["--dir", "/data/files", "fallback", "used when empty", "$NOT_BRACED"],
        env: { API_TOKEN: "tok-123456", MODE: "dev", BOTH: "api.example.com:tok-123456" },
        inheritEnv: true
      })
      assert.deepStrictEqual(servers.remote, {
        _tag: "StreamableHttp",
        url: "https://api.example.com/mcp",
        headers: { Authorization: "Bearer tok-123456" },
        oauth: { clientId: "api.example.com", clientSecret: "tok-123456" }
      })
      assert.deepStrictEqual(servers.literal, { _tag: "Stdio", command: "srv", args: ["${nope bad}", "${}"] })
      // the values that came from variables (not the defaults) are the server's secrets
      assert.deepStrictEqual(
        McpConfig.secretsOf(servers.local!).map(Redacted.value).sort(),
        ["/data", "/opt/bin/server", "api.example.com", "tok-123456"]
      )
      assert.deepStrictEqual(McpConfig.secretsOf(servers.remote!).map(Redacted.value).sort(), [
        "api.example.com",
        "tok-123456"
      ])
      assert.deepStrictEqual(McpConfig.secretsOf(servers.literal!), [])
      assert.strictEqual(String(McpConfig.secretsOf(servers.remote!)[0]), "<redacted>")
    }))

  it.effect("an unset variable without a default makes its server unresolved: its error names the variable, the server and the field", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<readonly [unknown, string]> = [
        [{ command: "${NO_SUCH_BIN}" }, "command"],
        [{ command: "srv", args: ["ok", "--key=${NO_SUCH_KEY}"] }, "args[1]"],
        [{ command: "srv", env: { API_KEY: "${NO_SUCH_KEY}" } }, "env.API_KEY"],
        [{ url: "https://${NO_SUCH_HOST}/mcp" }, "url"],
        [{ url: "https://example.com/mcp", headers: { "X-Api-Key": "${NO_SUCH_KEY}" } }, "headers.X-Api-Key"]
      ]
      for (const [entry, field] of cases) {
        const servers = yield* McpConfig.decode({ mcpServers: { svc: entry } }, "mcp.json", { env })
        const params = servers.svc!
        assert.strictEqual(params._tag, "Unresolved")
        const error = (params as McpGroup.UnresolvedParams).error
        const reason = configError(error)
        assert.strictEqual(reason.server, "svc")
        assert.strictEqual(reason.field, field)
        assert.match(reason.description, /the variable NO_SUCH_\w+ is not set/)
        assert.include(error.message, `mcp.json: server "svc": ${field}: the variable NO_SUCH_`)
      }
    }))

  it.effect("an unset variable concerns its server only: the others decode, it fails at connect", () =>
    Effect.gen(function*() {
      const servers = yield* McpConfig.decode(
        {
          mcpServers: {
            good: { command: "srv", env: { API_TOKEN: "${TOKEN}" } },
            bad: { url: "https://example.com/mcp", headers: { Authorization: "Bearer ${UNSET_VAR}" } }
          }
        },
        "mcp.json",
        { env }
      )
      assert.deepStrictEqual(Object.keys(servers), ["good", "bad"])
      assert.deepStrictEqual(servers.good, { _tag: "Stdio", command: "srv", env: { API_TOKEN: "tok-123456" } })
      assert.strictEqual(servers.bad!._tag, "Unresolved")
      // the group fails it at connect, like a server that fails to start (before any connector is asked)
      const group = yield* McpGroup.make({}).pipe(Effect.provide(McpGroup.layerConnectorInMemory))
      const error = yield* Effect.flip(group.connect("bad", servers.bad!))
      const reason = configError(error)
      assert.strictEqual(reason.server, "bad")
      assert.strictEqual(reason.field, "headers.Authorization")
      assert.include(error.message, "the variable UNSET_VAR is not set")
      assert.deepStrictEqual(yield* group.servers, [])
    }))

  it.effect("structural errors still fail the whole file", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<unknown> = [
        { good: { command: "srv" }, unset: { command: "${UNSET_VAR}" }, bad: { command: "srv", args: "x" } },
        { good: { command: "srv" }, both: { command: "${BIN}", url: "https://example.com/mcp" } },
        { good: { command: "srv" }, odd: 3 }
      ]
      for (const mcpServers of cases) {
        const error = yield* Effect.flip(McpConfig.decode({ mcpServers }, "mcp.json", { env }))
        assert.strictEqual(configError(error).source, "mcp.json")
      }
    }))

  it.effect("errors never quote a value that came from a variable", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(McpConfig.decode(
        { mcpServers: { bad: { url: "${TOKEN}", headers: { Authorization: "Bearer ${TOKEN}" } } } },
        "mcp.json",
        { env }
      ))
      const reason = configError(error)
      assert.strictEqual(reason.field, "url")
      assert.notInclude(error.message, "tok-123456")
      assert.notInclude(reason.description, "tok-123456")
    }))

  it.effect("without env, strings are taken as written; parse passes env on", () =>
    Effect.gen(function*() {
      const raw = yield* McpConfig.decode({ mcpServers: { s: { command: "${BIN}" } } }, "mcp.json")
      assert.deepStrictEqual(raw.s, { _tag: "Stdio", command: "${BIN}" })
      const parsed = yield* McpConfig.parse(`{"mcpServers":{"s":{"command":"\${BIN}"}}}`, "mcp.json", { env })
      assert.deepStrictEqual(parsed.s, { _tag: "Stdio", command: "/opt/bin/server" })
    }))
})
