/**
 * The JSON file store on a real temporary directory.
 */
import { McpAuth, type McpError } from "@effect-mcp/core"
import { NodeMcpAuthStore } from "@effect-mcp/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

const tempDir = Effect.acquireRelease(
  Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "effect-mcp-store-"))),
  (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
)

const tokens: McpAuth.Tokens = {
  accessToken: "at-1",
  tokenType: "bearer",
  refreshToken: "rt-1",
  expiresAt: 1_900_000_000,
  scope: "read write",
  issuer: "https://as.example"
}
const client: McpAuth.ClientInformation = { clientId: "client-1", redirectUris: ["http://127.0.0.1:1/callback"] }
const resource = McpAuth.canonicalResource("https://mcp.example/mcp")

describe("NodeMcpAuthStore", () => {
  it.effect("round trip across two store instances on the same file", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const path = Path.join(dir, "nested", "auth.json")
      const one = yield* NodeMcpAuthStore.make({ path })
      const two = yield* NodeMcpAuthStore.make({ path })
      assert.isUndefined(yield* two.getTokens(resource))
      yield* one.setTokens(resource, { ...tokens, scope: undefined })
      yield* one.setClient("https://as.example", client)
      const { scope: _, ...withoutScope } = tokens
      assert.deepStrictEqual(yield* two.getTokens(resource), withoutScope)
      assert.deepStrictEqual(yield* two.getClient("https://as.example"), client)
      // the file holds no `undefined` fields and is plain JSON
      const json = JSON.parse(Fs.readFileSync(path, "utf8"))
      assert.deepStrictEqual(Object.keys(json.tokens[resource]).sort(), [
        "accessToken",
        "expiresAt",
        "issuer",
        "refreshToken",
        "tokenType"
      ])
      yield* two.setTokens(resource, tokens)
      assert.deepStrictEqual(yield* one.getTokens(resource), tokens)
      // no temporary files left behind
      assert.deepStrictEqual(Fs.readdirSync(Path.dirname(path)), ["auth.json"])
    }))

  it.effect("creates the file with mode 0600 and its directory with 0700", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const path = Path.join(dir, "cfg", "auth.json")
      const store = yield* NodeMcpAuthStore.make({ path })
      yield* store.setTokens(resource, tokens)
      assert.strictEqual(Fs.statSync(path).mode & 0o777, 0o600)
      assert.strictEqual(Fs.statSync(Path.dirname(path)).mode & 0o777, 0o700)
      // a file someone widened is rewritten 0600
      Fs.chmodSync(path, 0o644)
      yield* store.setClient("https://as.example", client)
      assert.strictEqual(Fs.statSync(path).mode & 0o777, 0o600)
    }))

  it.effect("clearTokens keeps the client registrations; clearClient removes them", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const store = yield* NodeMcpAuthStore.make({ path: Path.join(dir, "auth.json") })
      yield* store.setTokens(resource, tokens)
      yield* store.setTokens("https://other.example/mcp", tokens)
      yield* store.setClient("https://as.example", client)
      yield* store.clearTokens(resource)
      assert.isUndefined(yield* store.getTokens(resource))
      assert.deepStrictEqual(yield* store.getTokens("https://other.example/mcp"), tokens)
      assert.deepStrictEqual(yield* store.getClient("https://as.example"), client)
      yield* store.clearTokens(resource) // clearing again is fine
      yield* store.clearClient("https://as.example")
      assert.isUndefined(yield* store.getClient("https://as.example"))
    }))

  it.effect("concurrent writes of one store all land", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const store = yield* NodeMcpAuthStore.make({ path: Path.join(dir, "auth.json") })
      yield* Effect.forEach(
        Array.from({ length: 10 }, (_, i) => i),
        (i) => store.setTokens(`https://s${i}.example/mcp`, { ...tokens, accessToken: `at-${i}` }),
        { concurrency: "unbounded" }
      )
      for (let i = 0; i < 10; i++) {
        assert.strictEqual((yield* store.getTokens(`https://s${i}.example/mcp`))?.accessToken, `at-${i}`)
      }
    }))

  it.effect("a corrupt file is a Storage error and is left alone", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const path = Path.join(dir, "auth.json")
      Fs.writeFileSync(path, "{ not json", { mode: 0o600 })
      const store = yield* NodeMcpAuthStore.make({ path })
      const exits: ReadonlyArray<Exit.Exit<unknown, McpError.McpError>> = [
        yield* Effect.exit(store.getTokens(resource)),
        yield* Effect.exit(store.setTokens(resource, tokens))
      ]
      for (const exit of exits) {
        assert.isTrue(Exit.isFailure(exit))
        const failure = Exit.isFailure(exit) ? exit.cause.reasons.find((reason) => reason._tag === "Fail") : undefined
        const reason = failure?._tag === "Fail" ? failure.error.reason : undefined
        assert.strictEqual(reason?._tag, "AuthError")
        if (reason?._tag === "AuthError") {
          assert.strictEqual(reason.kind, "Storage")
          assert.include(reason.description, path)
        }
      }
      assert.strictEqual(Fs.readFileSync(path, "utf8"), "{ not json")
      // a well-formed JSON of the wrong shape too
      Fs.writeFileSync(path, JSON.stringify({ tokens: { [resource]: { accessToken: 1 } } }))
      assert.isTrue(Exit.isFailure(yield* Effect.exit(store.getTokens(resource))))
    }))

  it.effect("the default path follows XDG_CONFIG_HOME", () =>
    Effect.sync(() => {
      const saved = process.env.XDG_CONFIG_HOME
      process.env.XDG_CONFIG_HOME = "/tmp/xdg-test"
      assert.strictEqual(NodeMcpAuthStore.defaultPath(), "/tmp/xdg-test/effect-mcp/auth.json")
      delete process.env.XDG_CONFIG_HOME
      assert.strictEqual(NodeMcpAuthStore.defaultPath(), Path.join(Os.homedir(), ".config", "effect-mcp", "auth.json"))
      if (saved !== undefined) process.env.XDG_CONFIG_HOME = saved
    }))
})
