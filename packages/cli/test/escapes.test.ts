/**
 * The built `effect-mcp` against a server whose text is hostile to
 * terminals, and servers that leak secrets on stderr: nothing it prints
 * holds an ESC byte (or another control character), `--json` escapes them,
 * and the values of `${VAR}`, of `env` and `headers`, and of this process's
 * secret-looking variables are masked in errors and in `--verbose` stderr.
 * The servers get the default environment, not this process's secrets,
 * unless `inheritEnv`.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { fileURLToPath } from "node:url"
import * as Format from "../src/internal/format.ts"
import { processesWith, type Ran, runCli, tempDir } from "./utils/cli.ts"

const fixture = fileURLToPath(new URL("./fixtures/escape-server.mjs", import.meta.url))
const TOKEN = "expanded-token-0123456789"
const PARENT = "parent-secret-abcdefghij"

const files = tempDir({
  "mcp.json": { mcpServers: { evil: { command: process.execPath, args: [fixture] } } },
  "crash.json": {
    mcpServers: {
      crash: {
        command: "${ESCAPE_TEST_NODE}",
        args: [fixture],
        env: { API_TOKEN: "${ESCAPE_TEST_TOKEN}", ESCAPE_FIXTURE_STDERR: "1", ESCAPE_FIXTURE_CRASH: "1" },
        inheritEnv: true
      }
    }
  },
  "noisy.json": {
    mcpServers: {
      noisy: {
        command: process.execPath,
        args: [fixture],
        env: { API_TOKEN: "${ESCAPE_TEST_TOKEN}", ESCAPE_FIXTURE_STDERR: "1", MODE: "visible-mode" }
      }
    }
  },
  "missing-var.json": {
    mcpServers: { gone: { command: process.execPath, args: [fixture], env: { API_TOKEN: "${ESCAPE_TEST_UNSET_VAR}" } } }
  }
})
afterAll(() => files.cleanup())

const cfg = (name: string) => ["--config", files.path(name)]
const env = { ESCAPE_TEST_TOKEN: TOKEN, PARENT_API_KEY: PARENT, ESCAPE_TEST_NODE: process.execPath }

/** No ESC, no C1 CSI, no other control but newline and tab on either stream; no secret either. */
const assertClean = (ran: Ran) => {
  for (const [name, text] of [["stdout", ran.stdout], ["stderr", ran.stderr]] as const) {
    assert.notInclude(text, "\u001b", `ESC on ${name}`)
    assert.notMatch(text, /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/, `a control character on ${name}`)
    assert.notInclude(text, TOKEN, `the expanded token on ${name}`)
    assert.notInclude(text, PARENT, `the parent's secret on ${name}`)
  }
  assert.deepStrictEqual(processesWith(ran.marker), [], "processes left behind")
}

describe("Format: terminal safety", () => {
  it("writes out controls visibly, keeps newlines and tabs (not in a table cell)", () => {
    assert.strictEqual(
      Format.terminal("a\u001b[2Jb\r\nc\td\re\u009bf\u007f\u202eg\u0000"),
      "a\\x1b[2Jb\nc\td\\x0de\\x9bf\\x7f\\u202eg\\x00"
    )
    assert.strictEqual(Format.terminal("a\tb\nc", { line: true }), "a b\\nc")
    assert.strictEqual(Format.table(["A"], [["x\u001b]8;;u\u0007y"]]), "A\nx\\x1b]8;;u\\x07y")
  })

  it("--json escapes what JSON.stringify leaves (C1, bidi) and stays JSON", () => {
    const text = Format.json({ s: "\u001b[2J\u009b\u202e" })
    assert.notMatch(text, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/)
    assert.deepStrictEqual(JSON.parse(text), { s: "\u001b[2J\u009b\u202e" })
  })

  it("masks secrets, the longest first", () => {
    assert.strictEqual(Format.mask("Bearer abcd1234 and abcd", ["abcd", "Bearer abcd1234"]), "*** and ***")
    assert.strictEqual(Format.mask("nothing", []), "nothing")
  })
})

describe("effect-mcp: terminal escapes and secrets", () => {
  it.live("server text is printed with its control characters written out", () =>
    Effect.gen(function*() {
      const [tools, json, call, jsonCall, failed, servers] = yield* Effect.all([
        runCli([...cfg("mcp.json"), "list", "tools"], { env }),
        runCli([...cfg("mcp.json"), "--json", "list", "tools"], { env }),
        runCli([...cfg("mcp.json"), "call", "evil"], { env }),
        runCli([...cfg("mcp.json"), "--json", "call", "evil"], { env }),
        runCli([...cfg("mcp.json"), "call", "evil", "--args", "{\"fail\":true}"], { env }),
        runCli([...cfg("mcp.json"), "servers"], { env })
      ], { concurrency: "unbounded" })
      for (const ran of [tools, json, call, jsonCall, failed, servers]) {
        assert.strictEqual(ran.code, ran === failed ? 4 : 0, ran.stderr)
        assertClean(ran)
      }
      assert.include(failed.stderr, "no tool \\x1b[2J\\x1b]8;;https://evil\\x07here")
      assert.include(tools.stdout, "\\x1b]8;;file:///etc/passwd\\x07click\\x1b]8;;\\x07 here \\x1b[2J and \\u202eeht")
      // --json: JSON escapes, which decode to the server's text
      const listed = JSON.parse(json.stdout) as Array<{ tool: { description: string; title: string } }>
      assert.strictEqual(
        listed[0]!.tool.description,
        "\u001b]8;;file:///etc/passwd\u0007click\u001b]8;;\u0007 here \u001b[2J and \u202eeht"
      )
      assert.strictEqual(listed[0]!.tool.title, "Evil \u009b31m title")
      assert.include(call.stdout, "result \\x1b[2J\\x1b]52;c;cHduZWQ=\\x1b\\ done")
      assert.include(servers.stdout, "escape\\x1b[5m-fixture")
    }))

  it.live("a failing server's error and stderr: control characters written out, secrets masked", () =>
    Effect.gen(function*() {
      const [crash, missing] = yield* Effect.all([
        runCli([...cfg("crash.json"), "list", "tools"], { env }),
        runCli([...cfg("missing-var.json"), "list", "tools"], { env })
      ], { concurrency: "unbounded" })
      assert.strictEqual(crash.code, 3, crash.stderr)
      assertClean(crash)
      // the child did see both (inheritEnv), and the CLI masked them
      assert.include(crash.stderr, "token=*** parent=***")
      assert.include(crash.stderr, "fatal \\x1b[2J token=***")
      assert.include(crash.stderr, "\\x1b[31mred")
      // an unset variable names itself, the server and the field
      assert.strictEqual(missing.code, 3, missing.stderr)
      assert.include(missing.stderr, `server "gone": env.API_TOKEN: the variable ESCAPE_TEST_UNSET_VAR is not set`)
    }))

  it.live("--verbose: the servers' stderr, made safe and masked; the child has not inherited the parent's secret", () =>
    Effect.gen(function*() {
      const ran = yield* runCli([...cfg("noisy.json"), "--verbose", "list", "tools"], { env })
      assert.strictEqual(ran.code, 0, ran.stderr)
      assertClean(ran)
      assert.include(ran.stderr, "[noisy] token=*** parent=(unset)")
      assert.include(ran.stderr, "[noisy] starting \\x1b[31mred\\x1b[0m \\x1b]0;pwned title\\x1b\\")
    }))

  it.live("stdout: a value from ${VAR} is masked, a plain env value is not", () =>
    Effect.gen(function*() {
      const ran = yield* runCli([...cfg("noisy.json"), "call", "env"], { env })
      assert.strictEqual(ran.code, 0, ran.stderr)
      assertClean(ran)
      assert.strictEqual(ran.stdout, "*** visible-mode\n")
    }))
})
