/**
 * A server's questions asked at a terminal: the built bin run under a
 * pseudo-terminal (script(1)), keys typed in once the prompt they answer is
 * drawn. A form answered field by field (a string checked and asked again,
 * an integer, a titled enum, a multi-select, a boolean, a legacy enum), a
 * form cancelled with Ctrl-C, one declined, a URL cancelled with Esc, in both
 * eras against fixtures/asking-server.ts.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, type Scope } from "effect"
import { execFileSync, spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import { join } from "node:path"
import { bin, processesWith, quote, root } from "./utils/cli.ts"

const askingServer = join(root, "packages/cli/test/fixtures/asking-server.ts")

const hasScript = (): boolean => {
  try {
    execFileSync("script", ["--version"], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
}

/** Terminal output as text: escape sequences (colours, cursor moves, erasing) left out. */
const plain = (text: string): string =>
  text
    .replace(/\x1b\][^\x07\x1b]*(\x07|\x1b\\)/g, "")
    .replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "")
    .replace(/\x1b[78]/g, "")

interface Terminal {
  /** Waits (up to 20 s) until the output after the last match matches `pattern`, and moves past it. */
  readonly waitFor: (pattern: RegExp) => Effect.Effect<RegExpMatchArray>
  /** Types `keys`. */
  readonly type: (keys: string) => Effect.Effect<void>
  /** Waits for the end (killed after 60 s): the exit code and the whole output, escape sequences left out. */
  readonly exit: Effect.Effect<{ readonly code: number | null; readonly output: string; readonly marker: string }>
}

/** `effect-mcp ...args` under script(1): stdin, stdout and stderr are a pseudo-terminal. */
const underTerminal = (args: ReadonlyArray<string>): Effect.Effect<Terminal, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const id = randomUUID()
      const command = [process.execPath, bin, ...args].map(quote).join(" ")
      const child = spawn("script", ["-qec", command, "/dev/null"], {
        cwd: root,
        env: { ...process.env, NO_COLOR: "1", TERM: "xterm", LC_EFFECT_MCP_CLI_TEST_RUN: id },
        stdio: ["pipe", "pipe", "pipe"]
      })
      let output = ""
      let seen = 0
      const waiters = new Set<() => void>()
      const onData = (chunk: Buffer) => {
        output += chunk.toString("utf8")
        for (const waiter of waiters) waiter()
      }
      child.stdout.on("data", onData)
      child.stderr.on("data", onData)
      const timer = setTimeout(() => child.kill("SIGKILL"), 60_000)
      const ended = new Promise<{ code: number | null; output: string; marker: string }>((resolve) =>
        child.on("close", (code) => {
          clearTimeout(timer)
          for (const waiter of waiters) waiter()
          resolve({ code, output: plain(output), marker: `EFFECT_MCP_CLI_TEST_RUN=${id}` })
        })
      )
      const terminal: Terminal = {
        waitFor: (pattern) =>
          Effect.callback<RegExpMatchArray, Error>((resume) => {
            const check = () => {
              const rest = plain(output).slice(seen)
              const match = rest.match(pattern)
              if (match !== null) {
                waiters.delete(check)
                seen += (match.index ?? 0) + match[0].length
                resume(Effect.succeed(match))
              } else if (child.exitCode !== null || child.signalCode !== null) {
                waiters.delete(check)
                resume(Effect.fail(new Error(`the run ended without ${pattern}:\n${plain(output)}`)))
              }
            }
            waiters.add(check)
            check()
            return Effect.sync(() => waiters.delete(check))
          }).pipe(
            Effect.timeoutOrElse({
              duration: "20 seconds",
              orElse: () => Effect.fail(new Error(`no ${pattern} within 20 seconds:\n${plain(output)}`))
            }),
            Effect.orDie
          ),
        type: (keys) => Effect.sync(() => void child.stdin.write(keys)),
        exit: Effect.promise(() => ended)
      }
      return { terminal, kill: () => child.kill("SIGKILL") }
    }),
    ({ kill }) => Effect.sync(kill)
  ).pipe(Effect.map(({ terminal }) => terminal))

const stdio = ["--stdio", `${quote(process.execPath)} ${quote(askingServer)}`]

/** The tool's answer: the JSON line the run printed. */
const answer = (output: string): unknown => {
  const line = output.match(/\{"action".*\}/)
  assert.isNotNull(line, `no answer in:\n${output}`)
  return JSON.parse(line![0])
}

describe.skipIf(!hasScript())("at a terminal", () => {
  for (const era of ["modern", "legacy"] as const) {
    it.live(`${era}: a form answered field by field, a wrong answer asked again`, () =>
      Effect.scoped(Effect.gen(function*() {
        const term = yield* underTerminal([...stdio, "--era", era, "call", "signup"])
        // the server's text is made safe for the terminal
        yield* term.waitFor(/server "asking-server" asks: Sign up \\x1b\]0;pwned\\x07please/)
        yield* term.waitFor(/Answer the form \(6 fields\)\?/)
        yield* term.type("\r")
        yield* term.waitFor(/Name \(Your \\x1b\[31mname\\x1b\[0m\)/)
        yield* term.type("A\r")
        yield* term.waitFor(/is shorter than 2 characters/)
        yield* term.type("da\r")
        yield* term.waitFor(/Age/)
        yield* term.type("old\r")
        yield* term.waitFor(/expected an integer/)
        // Ctrl-U clears the line
        yield* term.type("\x1536\r")
        yield* term.waitFor(/Colour \[optional\]/)
        // Green, the default, is chosen at first: up to Red
        yield* term.type("k\r")
        yield* term.waitFor(/Tags \[optional\] \(space selects, enter submits\)/)
        // the list starts with "Select All" and "Select None": Ex and Zed
        yield* term.type("jj jj \r")
        yield* term.waitFor(/Subscribe \[optional\]/)
        // "no", the default, is chosen at first
        yield* term.type("k\r")
        yield* term.waitFor(/Pet \[optional\]/)
        yield* term.type("j\r")
        const { code, marker, output } = yield* term.exit
        assert.strictEqual(code, 0, output)
        assert.deepStrictEqual(answer(output), {
          action: "accept",
          content: { name: "Ada", age: 36, color: "r", tags: ["x", "z"], subscribe: true, pet: "dog" }
        })
        assert.deepStrictEqual(processesWith(marker), [])
      })))
  }

  it.live("Ctrl-C at a field cancels the form; the Decline choice declines it; Esc cancels a URL", () =>
    Effect.scoped(Effect.gen(function*() {
      const [cancelled, declined, url] = yield* Effect.all([
        Effect.gen(function*() {
          const term = yield* underTerminal([...stdio, "call", "signup"])
          yield* term.waitFor(/Answer the form \(6 fields\)\?/)
          yield* term.type("\r")
          yield* term.waitFor(/Name/)
          yield* term.type("Ad\x03")
          return yield* term.exit
        }),
        Effect.gen(function*() {
          const term = yield* underTerminal([...stdio, "--era", "legacy", "call", "signup"])
          yield* term.waitFor(/Answer the form \(6 fields\)\?/)
          yield* term.type("j\r")
          return yield* term.exit
        }),
        Effect.gen(function*() {
          const term = yield* underTerminal([
            ...stdio,
            "call",
            "visit",
            "--args",
            "{\"url\":\"https://example.com/sign-in\"}"
          ])
          yield* term.waitFor(/https:\/\/example\.com\/sign-in\s+\(host: example\.com\)/)
          yield* term.waitFor(/Go to it\?/)
          yield* term.type("\x1b")
          return yield* term.exit
        })
      ], { concurrency: "unbounded" })
      assert.strictEqual(cancelled.code, 0, cancelled.output)
      assert.include(cancelled.output, "cancelled")
      assert.deepStrictEqual(answer(cancelled.output), { action: "cancel" })
      assert.strictEqual(declined.code, 0, declined.output)
      assert.deepStrictEqual(answer(declined.output), { action: "decline" })
      assert.strictEqual(url.code, 0, url.output)
      assert.deepStrictEqual(answer(url.output), { action: "cancel" })
      for (const ran of [cancelled, declined, url]) assert.deepStrictEqual(processesWith(ran.marker), [])
    })))
})
