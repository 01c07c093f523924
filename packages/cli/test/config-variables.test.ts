/**
 * `${VAR}` in mcp.json as a group sees it, with real stdio children and a
 * real (refused) HTTP connection: a server naming an unset variable is down
 * (or fails the group) with a `ConfigError` naming the variable while the
 * others work, and the values that came from variables never appear in what
 * the group reports about their server (its errors, `servers`, its logs).
 * The CLI over such a file: the unresolved server fails the command naming
 * the variable (exit 3, like any server that cannot connect), `--server`
 * picks the others.
 */
import { McpConfig, McpError, McpGroup } from "@effect-mcp/core"
import { NodeMcpGroup } from "@effect-mcp/platform-node"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Logger } from "effect"
import { assertExit, runCli, tempDir, weatherServer } from "./utils/cli.ts"

const CMD_SECRET = "sk-cmd-9f8e7d6c5b4a"
const KEY_SECRET = "sk-key-1a2b3c4d5e6f"

const env = {
  CMD: `/nonexistent/${CMD_SECRET}/server`,
  KEY: KEY_SECRET,
  NODE: process.execPath
}

/** A logger that records every line: its message parts and its cause, pretty-printed. */
const capture = (lines: Array<string>) =>
  Logger.make(({ cause, message }) => {
    const parts = Array.isArray(message) ? message : [message]
    lines.push([...parts.map(String), cause.reasons.length > 0 ? Cause.pretty(cause) : ""].join(" "))
  })

const assertMasked = (text: string) => {
  assert.notInclude(text, CMD_SECRET)
  assert.notInclude(text, KEY_SECRET)
}

describe("mcp.json variables in a group", () => {
  it.live("an unset variable: its server is down with the variable named, the other server works", () =>
    Effect.gen(function*() {
      const servers = yield* McpConfig.decode(
        {
          mcpServers: {
            rainy: { command: "${NODE}", args: [weatherServer] },
            broken: { command: "${NODE}", args: [weatherServer], env: { API_KEY: "${UNSET_VAR_FOR_TEST}" } }
          }
        },
        "mcp.json",
        { env }
      )
      const group = yield* McpGroup.make({ servers, startupFailure: "down", reconnect: false, liveness: false }).pipe(
        Effect.provide(NodeMcpGroup.layerConnector({ stderr: "capture" }))
      )
      assert.deepStrictEqual((yield* group.tools).map((tool) => `${tool.server}: ${tool.name}`), ["rainy: weather"])
      const result = yield* group.callTool("weather", { city: "Oslo" })
      assert.deepStrictEqual(result.content, [{ type: "text", text: "rain in Oslo" }])
      const statuses = yield* group.servers
      const broken = statuses.find((status) => status.name === "broken")!
      assert.strictEqual(broken.status, "down")
      assert.strictEqual(broken.error?.reason._tag, "ConfigError")
      assert.include(
        broken.error?.message,
        `mcp.json: server "broken": env.API_KEY: the variable UNSET_VAR_FOR_TEST is not set`
      )
      assert.strictEqual(statuses.find((status) => status.name === "rainy")?.status, "up")
      const unavailable = yield* Effect.flip(group.client("broken"))
      assert.strictEqual(unavailable.reason._tag, "ServerUnavailableError")
      assert.include(unavailable.message, "UNSET_VAR_FOR_TEST")
      // with startupFailure "fail" (the default), it fails the group like a server that cannot start
      const failed = yield* Effect.flip(
        McpGroup.make({ servers }).pipe(Effect.provide(NodeMcpGroup.layerConnector({ stderr: "capture" })))
      )
      assert.include(failed.message, "the variable UNSET_VAR_FOR_TEST is not set")
    }))

  it.live("the values of variables are masked in the group's errors, statuses and logs", () =>
    Effect.gen(function*() {
      const lines: Array<string> = []
      const servers = yield* McpConfig.decode(
        {
          mcpServers: {
            spawn: { command: "${CMD}", args: ["--token", "${KEY}"] },
            // nothing listens on port 1
            web: { url: "http://127.0.0.1:1/mcp?key=${KEY}" }
          }
        },
        "mcp.json",
        { env }
      )
      const errors = yield* Effect.gen(function*() {
        const group = yield* McpGroup.make({ servers, startupFailure: "down", reconnect: false, liveness: false })
        const statuses = yield* group.servers
        assert.deepStrictEqual(statuses.map((status) => status.status), ["down", "down"])
        const unavailable = yield* Effect.all([Effect.flip(group.client("spawn")), Effect.flip(group.client("web"))])
        return [...statuses.map((status) => status.error!), ...unavailable]
      }).pipe(
        Effect.scoped,
        Effect.provide(NodeMcpGroup.layerConnector({ stderr: "capture" })),
        Effect.provide(Logger.layer([capture(lines)]))
      )
      const [spawn, web] = errors
      // the texts quoted the command and the URL: the values are masked, the rest is kept
      assert.include(spawn!.message, "could not start *** --token ***")
      assert.strictEqual(spawn!.reason._tag, "TransportError")
      assert.strictEqual(web!.reason._tag, "TransportError")
      for (const error of errors) {
        assert.isTrue(McpError.isMcpError(error))
        assertMasked(error.message)
        assertMasked(Cause.pretty(Cause.fail(error)))
      }
      assert.isAbove(lines.length, 1)
      assert.isTrue(lines.some((line) => line.includes("***")))
      for (const line of lines) assertMasked(line)
      // the default startupFailure: the group's own failure is masked too
      const failed = yield* Effect.flip(
        McpGroup.make({ servers: { spawn: servers.spawn! } }).pipe(
          Effect.scoped,
          Effect.provide(NodeMcpGroup.layerConnector({ stderr: "capture" }))
        )
      )
      assert.include(failed.message, "***")
      assertMasked(Cause.pretty(Cause.fail(failed)))
    }))
})

// -----------------------------------------------------------------------------
// The CLI
// -----------------------------------------------------------------------------

const files = tempDir({
  "unset.json": {
    mcpServers: {
      rainy: { command: process.execPath, args: [weatherServer] },
      broken: { command: process.execPath, args: [weatherServer], env: { API_KEY: "${UNSET_VAR_FOR_TEST}" } }
    }
  }
})
afterAll(() => files.cleanup())

describe("effect-mcp over a config naming an unset variable", () => {
  it.live("the unresolved server fails the command naming the variable (exit 3); --server picks the others", () =>
    Effect.gen(function*() {
      const config = ["--config", files.path("unset.json")]
      const [everyone, rainy, servers] = yield* Effect.all([
        runCli(["list", "tools", ...config]),
        runCli(["list", "tools", "--server", "rainy", ...config]),
        runCli(["servers", "--server", "rainy", ...config])
      ], { concurrency: "unbounded" })
      assertExit(everyone, 3)
      assert.strictEqual(everyone.stdout, "")
      assert.include(everyone.stderr, `server "broken": env.API_KEY: the variable UNSET_VAR_FOR_TEST is not set`)
      assertExit(rainy, 0)
      assert.include(rainy.stdout, "weather")
      assertExit(servers, 0)
      assert.include(servers.stdout, "rainy")
    }))
})
