/**
 * McpConfig: `${VAR}` and `${VAR:-default}` in `command`, `args`, `env`,
 * `url`, `headers` (and OAuth client credentials), read from the environment
 * given to `decode`; an unset variable is a `ConfigError` naming it, its
 * server and its field; the values that came from variables are secrets.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import * as McpConfig from "../src/McpConfig.ts"
import * as McpError from "../src/McpError.ts"

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
      const servers = yield* McpConfig.decode({
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
      }, "mcp.json", { env })
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
      assert.deepStrictEqual(McpConfig.secretsOf(servers.remote!).map(Redacted.value).sort(), ["api.example.com", "tok-123456"])
      assert.deepStrictEqual(McpConfig.secretsOf(servers.literal!), [])
      assert.strictEqual(String(McpConfig.secretsOf(servers.remote!)[0]), "<redacted>")
    }))

  it.effect("an unset variable without a default fails, naming the variable, the server and the field", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<readonly [unknown, string]> = [
        [{ command: "${NO_SUCH_BIN}" }, "command"],
        [{ command: "srv", args: ["ok", "--key=${NO_SUCH_KEY}"] }, "args[1]"],
        [{ command: "srv", env: { API_KEY: "${NO_SUCH_KEY}" } }, "env.API_KEY"],
        [{ url: "https://${NO_SUCH_HOST}/mcp" }, "url"],
        [{ url: "https://example.com/mcp", headers: { "X-Api-Key": "${NO_SUCH_KEY}" } }, "headers.X-Api-Key"]
      ]
      for (const [entry, field] of cases) {
        const error = yield* Effect.flip(McpConfig.decode({ mcpServers: { svc: entry } }, "mcp.json", { env }))
        const reason = configError(error)
        assert.strictEqual(reason.server, "svc")
        assert.strictEqual(reason.field, field)
        assert.match(reason.description, /the variable NO_SUCH_\w+ is not set/)
        assert.include(error.message, `mcp.json: server "svc": ${field}: the variable NO_SUCH_`)
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
