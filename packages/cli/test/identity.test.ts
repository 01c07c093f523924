/**
 * The built `effect-mcp` over a config naming one third-party server twice:
 * two instances of server-everything over stdio, told apart by their
 * environment. Both connect (`--qualify` names each one's tools); their
 * resources (same URIs) are listed with their servers; `read` of such a URI
 * is a usage error naming both, and `read --server` reads it.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { assertExit, everything, runCli, tempDir } from "./utils/cli.ts"

const instance = (name: string) => ({
  command: process.execPath,
  args: [everything, "stdio"],
  // its gzip tool fetches a URL by default: let it fetch nothing
  env: { GZIP_ALLOWED_DOMAINS: "127.0.0.1", INSTANCE: name }
})

const files = tempDir({ "mcp.json": { mcpServers: { a: instance("a"), b: instance("b") } } })
afterAll(() => files.cleanup())

const cfg = ["--config", files.path("mcp.json")]
const features = "demo://resource/static/document/features.md"

describe("effect-mcp: one server configured twice", () => {
  it.live("list resources shows both; read of a URI both offer exits 2 naming them, read --server reads it; --qualify calls each", () =>
    Effect.gen(function*() {
      const [listed, json, ambiguous, fromB, jsonFromA, echo, env] = yield* Effect.all([
        // both connected: their tools collide unless qualified
        runCli(["list", "resources", "--qualify", ...cfg]),
        runCli(["list", "resources", "--json", "--qualify", ...cfg]),
        runCli(["read", features, "--qualify", ...cfg]),
        runCli(["read", features, "--server", "b", ...cfg]),
        runCli(["read", features, "-s", "a", "--json", ...cfg]),
        runCli(["call", "b_echo", "--qualify", "--args", "{\"message\":\"hi\"}", ...cfg]),
        runCli(["call", "a_get-env", "--qualify", "--json", ...cfg])
      ], { concurrency: "unbounded" })

      assertExit(listed, 0)
      const rows = listed.stdout.split("\n").filter((line) => line.startsWith(`${features} `))
      // in order of connection, which is not fixed: one row per server
      assert.strictEqual(rows.length, 2, listed.stdout)
      assert.isTrue(rows.some((row) => /\sa\s/.test(row)) && rows.some((row) => /\sb\s/.test(row)), listed.stdout)
      assertExit(json, 0)
      const entries = JSON.parse(json.stdout) as ReadonlyArray<{ readonly server: string; readonly name: string }>
      assert.deepStrictEqual(entries.filter((entry) => entry.name === features).map((entry) => entry.server).sort(), [
        "a",
        "b"
      ])

      assertExit(ambiguous, 2)
      assert.strictEqual(ambiguous.stdout, "")
      assert.include(ambiguous.stderr, `resource "${features}" is offered by several servers ("a", "b")`)
      assert.include(ambiguous.stderr, "--server")

      assertExit(fromB, 0)
      assert.include(fromB.stdout, "#")
      assertExit(jsonFromA, 0)
      assert.strictEqual(JSON.parse(jsonFromA.stdout).contents[0].uri, features)

      assertExit(echo, 0)
      assert.strictEqual(echo.stdout, "Echo: hi\n")
      assertExit(env, 0)
      const variables = JSON.parse(JSON.parse(env.stdout).content[0].text) as Record<string, string>
      assert.strictEqual(variables.INSTANCE, "a")
    }))
})
