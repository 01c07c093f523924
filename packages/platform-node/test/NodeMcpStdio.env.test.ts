/**
 * The environment of a stdio child, with real processes: by default only a
 * small set of this process's variables (PATH, HOME, locale, ...) and the
 * configured `env`, never this process's other variables (tokens, keys);
 * `inheritEnv` passes them all.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Environment from "../src/internal/environment.ts"
import * as NodeMcpStdio from "../src/NodeMcpStdio.ts"

const SECRET = "EFFECT_MCP_TEST_SECRET_TOKEN"
process.env[SECRET] = "s3cr3t-from-the-parent"
process.env.LC_EFFECT_MCP_TEST = "a-locale-variable"

/** Spawns a child that writes the variables named by `names` as JSON on stderr and exits. */
const childEnv = (options: Partial<NodeMcpStdio.ClientOptions>) =>
  Effect.scoped(Effect.gen(function*() {
    const script = "process.stderr.write(JSON.stringify({ keys: Object.keys(process.env), env: process.env }))"
    const client = yield* NodeMcpStdio.makeClient({
      command: process.execPath,
      args: ["-e", script],
      stderr: "capture",
      stderrTailBytes: 4 * 1024 * 1024,
      ...options
    })
    const status = yield* client.awaitExit
    assert.deepStrictEqual(status, { code: 0, signal: null })
    return JSON.parse(yield* client.stderrTail) as { keys: Array<string>; env: Record<string, string> }
  }))

describe("NodeMcpStdio.makeClient: the child's environment", () => {
  it.live("by default: the default set and the given env, not this process's secrets", () =>
    Effect.gen(function*() {
      const { env, keys } = yield* childEnv({ env: { FROM_CONFIG: "configured", PATH: process.env.PATH } })
      assert.strictEqual(env[SECRET], undefined)
      assert.strictEqual(env.FROM_CONFIG, "configured")
      assert.strictEqual(env.PATH, process.env.PATH)
      assert.strictEqual(env.LC_EFFECT_MCP_TEST, "a-locale-variable")
      if (process.env.HOME !== undefined) assert.strictEqual(env.HOME, process.env.HOME)
      // nothing but the default set, the given env, and what node adds for itself
      const allowed = new Set([...Environment.defaultVariables(process.platform), "FROM_CONFIG"])
      const extra = keys.filter((key) => !allowed.has(key) && !key.startsWith("LC_"))
      assert.isTrue(extra.every((key) => process.env[key] === undefined || key === "NODE_CHANNEL_FD"), extra.join(","))
    }))

  it.live("without env: PATH is there, the secret is not", () =>
    Effect.gen(function*() {
      const { env } = yield* childEnv({})
      assert.strictEqual(env.PATH, process.env.PATH)
      assert.strictEqual(env[SECRET], undefined)
    }))

  it.live("inheritEnv: this process's whole environment, with env laid over it", () =>
    Effect.gen(function*() {
      const { env } = yield* childEnv({
        inheritEnv: true,
        env: { FROM_CONFIG: "configured", LC_EFFECT_MCP_TEST: undefined }
      })
      assert.strictEqual(env[SECRET], "s3cr3t-from-the-parent")
      assert.strictEqual(env.FROM_CONFIG, "configured")
      assert.strictEqual(env.LC_EFFECT_MCP_TEST, undefined)
      assert.strictEqual(env.PATH, process.env.PATH)
    }))

  it("the default set: names by platform (case-insensitive on Windows), no exported shell functions", () => {
    const source = {
      PATH: "/bin",
      HOME: "/home/u",
      LC_ALL: "C",
      GITHUB_TOKEN: "ghp_x",
      AWS_SECRET_ACCESS_KEY: "aws",
      TERM: "() { :; }; echo pwned",
      Path: "C:\\Windows",
      SystemRoot: "C:\\Windows",
      UNSET: undefined
    }
    assert.deepStrictEqual(Environment.defaultEnvironment(source, "linux"), {
      PATH: "/bin",
      HOME: "/home/u",
      LC_ALL: "C"
    })
    assert.deepStrictEqual(Environment.defaultEnvironment(source, "win32"), {
      PATH: "/bin",
      Path: "C:\\Windows",
      SystemRoot: "C:\\Windows"
    })
    assert.deepStrictEqual(
      Object.keys(NodeMcpStdio.defaultEnvironment()).every((key) => process.env[key] !== undefined),
      true
    )
    assert.notProperty(NodeMcpStdio.defaultEnvironment(), SECRET)
  })
})
