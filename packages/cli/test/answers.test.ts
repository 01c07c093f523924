/**
 * A server's questions answered without a terminal, the built bin run as a
 * process: form and URL elicitations answered by `--answers` (or declined
 * when there is none), sampling by `--sampling-command`, `roots/list` by
 * `--root`, in both eras against a fixture server whose tools ask (see
 * fixtures/asking-server.ts), and against server-everything's elicitation,
 * sampling and roots tools (2025-11-25). The terminal is tested in
 * answers.tty.test.ts.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { existsSync, mkdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { assertExit, everything, quote, type Ran, root, runCli, tempDir } from "./utils/cli.ts"

const askingServer = join(root, "packages/cli/test/fixtures/asking-server.ts")
const sampler = join(root, "packages/cli/test/fixtures/sampler.mjs")
const recorder = join(root, "packages/cli/test/fixtures/record-url.mjs")
const asking = ["--stdio", `${quote(process.execPath)} ${quote(askingServer)}`]
const serverEverything = ["--stdio", `${quote(process.execPath)} ${quote(everything)} stdio`, "--name", "everything"]
const sampling = (mode: string) => ["--sampling-command", `${quote(process.execPath)} ${quote(sampler)} ${mode}`]

const files = tempDir({ "plain.txt": "not a directory" })
afterAll(() => files.cleanup())

const all = <const Runs extends ReadonlyArray<Effect.Effect<Ran>>>(...runs: Runs) =>
  Effect.all(runs, { concurrency: "unbounded" })

/** The tool's text: the JSON of what it got. */
const got = (ran: Ran): any => JSON.parse(ran.stdout)

const ESC = /[\x1b\x07\u202e]/

const ASKS = "server \"asking-server\" asks: Sign up \\x1b]0;pwned\\x07please"

describe("--answers: form elicitations", () => {
  for (const era of ["modern", "legacy"] as const) {
    it.live(`${era}: field values accept every form (defaults filled), an action answers every one, a list one by one`, () =>
      Effect.gen(function*() {
        const on = [...asking, "--era", era]
        const [values, full, declined, list, ranOut, every] = yield* all(
          runCli([
            ...on,
            "call",
            "signup",
            "--answers",
            "{\"name\":\"Ada\",\"age\":36,\"tags\":[\"x\",\"z\"],\"pet\":\"dog\"}"
          ]),
          runCli([
            ...on,
            "call",
            "signup",
            "--answers",
            "{\"action\":\"accept\",\"content\":{\"name\":\"Bo\",\"age\":7}}"
          ]),
          runCli([...on, "call", "signup", "--answers", "{\"action\":\"decline\"}"]),
          runCli([...on, "call", "two_forms", "--answers", "[{\"a\":\"one\"},{\"action\":\"cancel\"}]"]),
          runCli([...on, "call", "two_forms", "--answers", "[{\"a\":\"one\"}]"]),
          runCli([...on, "call", "two_forms", "--answers", "{\"action\":\"decline\"}"])
        )
        assertExit(values, 0)
        assert.deepStrictEqual(got(values), {
          action: "accept",
          content: { name: "Ada", age: 36, color: "g", tags: ["x", "z"], subscribe: false, pet: "dog" }
        })
        // the server's message is made safe for the terminal
        assert.include(values.stderr, `effect-mcp: ${ASKS}: accepted (--answers)`)
        assert.notMatch(values.stderr, ESC)
        assertExit(full, 0)
        assert.deepStrictEqual(got(full), {
          action: "accept",
          content: { name: "Bo", age: 7, color: "g", subscribe: false }
        })
        assertExit(declined, 0)
        assert.deepStrictEqual(got(declined), { action: "decline" })
        assert.include(declined.stderr, `${ASKS}: declined (--answers)`)
        assertExit(list, 0)
        assert.deepStrictEqual(got(list), [{ action: "accept", content: { a: "one" } }, { action: "cancel" }])
        assertExit(ranOut, 0)
        assert.deepStrictEqual(got(ranOut), [{ action: "accept", content: { a: "one" } }, { action: "decline" }])
        assert.include(ranOut.stderr, "server \"asking-server\" asks: Second: declined (--answers has no answer 2)")
        assertExit(every, 0)
        assert.deepStrictEqual(got(every), [{ action: "decline" }, { action: "decline" }])
      }))
  }

  it.live("answers that do not fit the form end the command (exit 2) naming every problem; bad --answers before any start", () =>
    Effect.gen(function*() {
      const [unfit, missing, notJson, notObject, badAction, mixed] = yield* all(
        runCli([...asking, "call", "signup", "--answers", "{\"name\":\"A\",\"age\":\"old\",\"nope\":1}"]),
        runCli([
          ...asking,
          "--era",
          "legacy",
          "call",
          "signup",
          "--answers",
          "{\"name\":\"Ada\",\"tags\":[\"x\",\"y\",\"z\"]}"
        ]),
        runCli([...asking, "call", "signup", "--answers", "{"]),
        runCli([...asking, "call", "signup", "--answers", "[{\"a\":1},2]"]),
        runCli([...asking, "call", "signup", "--answers", "{\"action\":\"maybe\"}"]),
        runCli([...asking, "call", "signup", "--answers", "{\"action\":\"accept\",\"name\":\"Ada\"}"])
      )
      assertExit(unfit, 2)
      assert.strictEqual(unfit.stdout, "")
      assert.include(unfit.stderr, `effect-mcp: --answers do not fit the form of ${ASKS}: `)
      assert.include(
        unfit.stderr,
        "\"nope\" is not a field of the form (its fields: name, age, color, tags, subscribe, pet)"
      )
      assert.include(unfit.stderr, "\"name\" is shorter than 2 characters")
      assert.include(unfit.stderr, "\"age\" expected an integer, got \"old\"")
      assertExit(missing, 2)
      assert.include(missing.stderr, "\"age\" is required")
      assert.include(missing.stderr, "\"tags\" takes at most 2 choices")
      assertExit(notJson, 2)
      assert.include(notJson.stderr, "effect-mcp: --answers is not valid JSON")
      assertExit(notObject, 2)
      assert.include(notObject.stderr, "effect-mcp: --answers: answer 2 must be a JSON object, got 2")
      assertExit(badAction, 2)
      assert.include(badAction.stderr, "has \"action\" \"maybe\"; it is one of \"accept\", \"decline\", \"cancel\"")
      assertExit(mixed, 2)
      assert.include(mixed.stderr, "has \"action\" and \"name\"")
    }))

  it.live("no terminal and no --answers: declined, saying so on stderr (stdin is not read)", () =>
    Effect.gen(function*() {
      const [modern, legacy] = yield* all(
        runCli([...asking, "call", "signup"]),
        runCli([...asking, "--era", "legacy", "call", "signup"])
      )
      for (const ran of [modern, legacy]) {
        assertExit(ran, 0)
        assert.deepStrictEqual(got(ran), { action: "decline" })
        assert.include(
          ran.stderr,
          `effect-mcp: ${ASKS}: declined, as there is no terminal to ask on (--answers answers without one)`
        )
      }
    }))
})

describe("URL elicitations", () => {
  it.live("an http(s) URL is shown with its host and accepted; --open opens it; any other URL is declined unseen", () =>
    Effect.gen(function*() {
      const opened = files.path("opened.txt")
      const browser = { EFFECT_MCP_BROWSER: `${process.execPath} ${recorder} ${opened}` }
      const notOpened = files.path("not-opened.txt")
      const [accepted, legacy, open, script, hostile, declined, none] = yield* all(
        runCli([...asking, "call", "visit", "--args", "{\"url\":\"https://example.com/done?x=1\"}", "--answers", "{}"]),
        runCli([
          ...asking,
          "--era",
          "legacy",
          "call",
          "visit",
          "--args",
          "{\"url\":\"http://127.0.0.1:9/x\"}",
          "--answers",
          "[{}]"
        ]),
        runCli([
          ...asking,
          "call",
          "visit",
          "--open",
          "--args",
          "{\"url\":\"https://example.com/open\"}",
          "--answers",
          "{}"
        ], {
          env: browser
        }),
        runCli(
          [...asking, "call", "visit", "--open", "--args", "{\"url\":\"javascript:alert(1)\"}", "--answers", "{}"],
          {
            env: { EFFECT_MCP_BROWSER: `${process.execPath} ${recorder} ${notOpened}` }
          }
        ),
        runCli([
          ...asking,
          "call",
          "visit",
          "--args",
          JSON.stringify({ url: "https://example.com/\x1b[2J\u202e/x" }),
          "--answers",
          "{}"
        ]),
        runCli([
          ...asking,
          "call",
          "visit",
          "--open",
          "--args",
          "{\"url\":\"https://example.com/no\"}",
          "--answers",
          "{\"action\":\"decline\"}"
        ], {
          env: { EFFECT_MCP_BROWSER: `${process.execPath} ${recorder} ${notOpened}` }
        }),
        runCli([...asking, "call", "visit", "--args", "{\"url\":\"https://example.com/later\"}"])
      )
      assertExit(accepted, 0)
      assert.deepStrictEqual(got(accepted), { action: "accept" })
      assert.include(
        accepted.stderr,
        "effect-mcp: server \"asking-server\" asks you to go to a URL: Finish signing in\n  https://example.com/done?x=1\n  (host: example.com)\neffect-mcp: accepted (--answers)\n"
      )
      assertExit(legacy, 0)
      assert.deepStrictEqual(got(legacy), { action: "accept" })
      assert.include(legacy.stderr, "  http://127.0.0.1:9/x\n  (host: 127.0.0.1:9)")
      assertExit(open, 0)
      assert.deepStrictEqual(got(open), { action: "accept" })
      // the opener runs detached: wait for it
      for (let i = 0; i < 200 && !existsSync(opened); i++) yield* Effect.sleep("50 millis")
      assert.strictEqual(readFileSync(opened, "utf8"), "https://example.com/open")
      assertExit(script, 0)
      assert.deepStrictEqual(got(script), { action: "decline" })
      assert.include(
        script.stderr,
        "asks you to go to a URL: Finish signing in: declined, as it is not an http: or https: URL"
      )
      assert.notInclude(script.stderr, "javascript")
      assertExit(hostile, 0)
      assert.notMatch(hostile.stderr, ESC)
      assert.include(hostile.stderr, "  https://example.com/%1B[2J%E2%80%AE/x\n")
      assertExit(declined, 0)
      assert.deepStrictEqual(got(declined), { action: "decline" })
      assertExit(none, 0)
      assert.deepStrictEqual(got(none), { action: "decline" })
      assert.include(
        none.stderr,
        "  https://example.com/later\n  (host: example.com)\neffect-mcp: declined, as there is no terminal"
      )
      yield* Effect.sleep("300 millis")
      assert.isFalse(existsSync(notOpened), "no opener for a declined or non-http(s) URL")
    }))
})

describe("--sampling-command", () => {
  for (const era of ["modern", "legacy"] as const) {
    it.live(`${era}: the program answers with a CreateMessageResult; without it sampling is declined`, () =>
      Effect.gen(function*() {
        const on = [...asking, "--era", era]
        const [answered, declined] = yield* all(
          runCli([...on, ...sampling("ok"), "call", "haiku"]),
          runCli([...on, "call", "haiku"])
        )
        assertExit(answered, 0)
        assert.deepStrictEqual(got(answered), {
          role: "assistant",
          content: { type: "text", text: "asking-server wants: a haiku about the sea" },
          model: "fixture-model",
          stopReason: "endTurn"
        })
        assert.include(
          declined.stderr,
          "effect-mcp: server \"asking-server\" asks to sample an LLM (1 message): declined (--sampling-command answers it)"
        )
        if (era === "legacy") {
          // the server gets the refusal, and its tool says so
          assertExit(declined, 0)
          assert.match(declined.stdout, /^error: .*User rejected sampling request/)
        } else {
          // 2026-07-28: an input round cannot answer with an error: the call fails
          assertExit(declined, 4)
          assert.include(declined.stderr, "effect-mcp: User rejected sampling request")
        }
      }))
  }

  it.live("a program that fails, prints no result or takes too long is a clear error (and is stopped)", () =>
    Effect.gen(function*() {
      const legacy = [...asking, "--era", "legacy"]
      const [garbage, wrong, fail, slow, missing, modern, unsplit] = yield* all(
        runCli([...legacy, ...sampling("garbage"), "call", "haiku"]),
        runCli([...legacy, ...sampling("wrong"), "call", "haiku"]),
        runCli([...legacy, ...sampling("fail"), "call", "haiku"]),
        runCli([...legacy, ...sampling("slow"), "--sampling-timeout", "1", "call", "haiku"]),
        runCli([...legacy, "--sampling-command", "/nonexistent/llm", "call", "haiku"]),
        runCli([...asking, "--era", "modern", ...sampling("fail"), "call", "haiku"]),
        runCli([...asking, "--sampling-command", "'unterminated", "call", "haiku"])
      )
      const failed =
        "effect-mcp: server \"asking-server\" asks to sample an LLM (1 message): --sampling-command failed: "
      assertExit(garbage, 0)
      assert.match(garbage.stdout, /^error: /)
      assert.include(garbage.stderr, `${failed}its output is not JSON ("certainly! here is a haiku")`)
      assertExit(wrong, 0)
      assert.include(wrong.stderr, `${failed}its output is not a CreateMessageResult`)
      assertExit(fail, 0)
      assert.match(fail.stdout, /^error: /)
      assert.include(fail.stderr, `${failed}it exited with code 3; its stderr ends:\n    no API key`)
      // assertExit: the program, which inherits the run's marker, was stopped
      assertExit(slow, 0)
      // the slow program never answers: the message says the timeout stopped it, and assertExit that no
      // process of the run is left (no wall-clock bound: seven runs at once took 48 s on a loaded machine)
      assert.include(slow.stderr, `${failed}it did not answer within 1s (it was stopped)`)
      assertExit(missing, 0)
      assert.include(missing.stderr, `${failed}cannot run /nonexistent/llm`)
      // 2026-07-28: the call fails with it
      assertExit(modern, 4)
      assert.include(modern.stderr, `${failed}it exited with code 3`)
      assert.include(modern.stderr, "effect-mcp: the client's sampling failed: it exited with code 3")
      assertExit(unsplit, 2)
      assert.include(unsplit.stderr, "--sampling-command has an unterminated ' quote")
    }))
})

describe("--root", () => {
  it.live("roots/list answers the directories as file:// URIs, in both eras; without --root no roots are declared", () =>
    Effect.gen(function*() {
      const a = files.path("alpha")
      const b = files.path("beta")
      mkdirSync(a, { recursive: true })
      mkdirSync(b, { recursive: true })
      const [modern, legacy, none, relative] = yield* all(
        runCli([...asking, "--root", a, "--root", b, "call", "roots"]),
        runCli([...asking, "--era", "legacy", "--root", a, "--root", b, "call", "roots"]),
        runCli([...asking, "call", "roots"]),
        runCli([...asking, "--root", "alpha", "call", "roots"], { cwd: files.dir })
      )
      const expected = [{ uri: pathToFileURL(a).href, name: "alpha" }, { uri: pathToFileURL(b).href, name: "beta" }]
      assertExit(modern, 0)
      assert.deepStrictEqual(got(modern), expected)
      assertExit(legacy, 0)
      assert.deepStrictEqual(got(legacy), expected)
      assertExit(none, 0)
      assert.match(none.stdout, /^error: .*roots/)
      assertExit(relative, 0)
      assert.deepStrictEqual(got(relative), [expected[0]])
    }))

  it.live("a --root that is not an existing directory is a usage error; serve takes none of these flags", () =>
    Effect.gen(function*() {
      const [missing, file, serve] = yield* all(
        runCli([...asking, "--root", files.path("nope"), "call", "roots"]),
        runCli([...asking, "--root", files.path("plain.txt"), "call", "roots"]),
        runCli([...asking, "serve", "--serve-stdio", "--answers", "{}"])
      )
      assertExit(missing, 2)
      assert.include(missing.stderr, `--root ${files.path("nope")}: no such directory`)
      assertExit(file, 2)
      assert.include(file.stderr, `--root ${files.path("plain.txt")}: not a directory`)
      assertExit(serve, 2)
      assert.include(serve.stderr, "--answers: not for serve")
    }))
})

describe("server-everything (2025-11-25)", () => {
  it.live("trigger-elicitation-request: accepted with --answers (its defaults filled), declined, or declined without a terminal", () =>
    Effect.gen(function*() {
      const [accepted, declined, unasked] = yield* all(
        runCli([
          ...serverEverything,
          "call",
          "trigger-elicitation-request",
          "--answers",
          "{\"name\":\"Ada\",\"check\":true}"
        ]),
        runCli([...serverEverything, "call", "trigger-elicitation-request", "--answers", "{\"action\":\"decline\"}"]),
        runCli([...serverEverything, "call", "trigger-elicitation-request"])
      )
      assertExit(accepted, 0)
      assert.include(accepted.stdout, "User provided the requested information!")
      assert.include(accepted.stdout, "- Name: Ada")
      assert.include(accepted.stdout, "- Agreed to terms: true")
      assert.include(accepted.stdout, "- Favorite Integer: 42")
      assertExit(declined, 0)
      assert.include(declined.stdout, "User declined to provide the requested information.")
      assertExit(unasked, 0)
      assert.include(unasked.stdout, "User declined to provide the requested information.")
      assert.include(unasked.stderr, "declined, as there is no terminal to ask on")
    }))

  it.live("trigger-url-elicitation, trigger-sampling-request and get-roots-list", () =>
    Effect.gen(function*() {
      const [url, sampled, listed] = yield* all(
        runCli([
          ...serverEverything,
          "call",
          "trigger-url-elicitation",
          "--args",
          "{\"url\":\"https://example.com/consent\"}",
          "--answers",
          "{}"
        ]),
        runCli([
          ...serverEverything,
          ...sampling("ok"),
          "call",
          "trigger-sampling-request",
          "--args",
          "{\"prompt\":\"hi\"}"
        ]),
        runCli([...serverEverything, "--root", files.dir, "call", "get-roots-list"])
      )
      assertExit(url, 0)
      assert.include(url.stdout, "User completed the URL elicitation flow.")
      assert.include(url.stderr, "  https://example.com/consent\n  (host: example.com)")
      assertExit(sampled, 0)
      assert.include(sampled.stdout, "fixture-model")
      assert.include(sampled.stdout, "everything wants: Resource trigger-sampling-request context: hi")
      assertExit(listed, 0)
      assert.include(listed.stdout, `URI: ${pathToFileURL(files.dir).href}`)
    }))
})
