/**
 * `--sampling-command COMMAND`: a server's `sampling/createMessage` answered
 * by a program. The program (its command line split as `--stdio`'s is, no
 * shell) gets the request's params as JSON on stdin, and `EFFECT_MCP_SERVER`
 * (the asking server's name) in its environment, which is otherwise this
 * process's; it prints a `CreateMessageResult` as JSON on stdout and exits 0.
 * It has `--sampling-timeout` to do so (then it is killed); stdout is read up
 * to 1 MiB, stderr's first 64 KiB are kept for the error.
 *
 * @internal
 */
import * as McpSchema from "@effect-mcp/core/McpSchema"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"

/** The program and how long it may take. */
export interface SamplingCommand {
  readonly words: ReadonlyArray<string>
  readonly timeout: Duration.Duration
}

const MAX_STDOUT = 1024 * 1024
const MAX_STDERR = 64 * 1024

interface Ran {
  readonly code: number | null
  readonly signal: string | null
  readonly stdout: string
  readonly stderr: string
  readonly overflow: boolean
}

/** Runs the program with `input` on stdin, to its end; killed when interrupted. */
const runProgram = (
  words: ReadonlyArray<string>,
  input: string,
  env: Readonly<Record<string, string | undefined>>
): Effect.Effect<Ran, string> =>
  // `node:child_process` is loaded when a program is first run, not with this module
  Effect.flatMap(Effect.promise(() => import("node:child_process")), (processes) =>
    Effect.callback<Ran, string>((resume) => {
      const [command, ...args] = words
      const started = Result.try(() =>
        processes.spawn(command!, args, { stdio: ["pipe", "pipe", "pipe"], env, windowsHide: true })
      )
      if (Result.isFailure(started)) {
        resume(Effect.fail(`cannot run ${command}: ${String(started.failure)}`))
        return
      }
      const child = started.success
      let done = false
      const finish = (effect: Effect.Effect<Ran, string>) => {
        if (done) {
          return
        }
        done = true
        resume(effect)
      }
      let stdout = ""
      let stderr = ""
      let overflow = false
      child.stdout.setEncoding("utf8")
      child.stderr.setEncoding("utf8")
      child.stdout.on("data", (chunk: string) => {
        if (stdout.length + chunk.length > MAX_STDOUT) {
          overflow = true
          child.kill("SIGKILL")
        } else {
          stdout += chunk
        }
      })
      child.stderr.on("data", (chunk: string) => {
        if (stderr.length < MAX_STDERR) {
          stderr += chunk.slice(0, MAX_STDERR - stderr.length)
        }
      })
      child.once("error", (cause) =>
        finish(Effect.fail(`cannot run ${command}: ${cause.message}`)))
      child.once("close", (code, signal) => finish(Effect.succeed({ code, signal, stdout, stderr, overflow })))
      // a program that does not read its input closes the pipe early
      child.stdin.on("error", () => undefined)
      child.stdin.end(input)
      return Effect.sync(() => {
        if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
      })
    }))

const stderrTail = (stderr: string): string => {
  const lines = stderr.trimEnd().split("\n").slice(-5).filter((text) => text.trim() !== "")
  return lines.length === 0 ? "" : `; its stderr ends:\n${lines.map((text) => `    ${text}`).join("\n")}`
}

const decodeResult = Schema.decodeUnknownResult(McpSchema.CreateMessageResult)

/**
 * What the program answers to a server's sampling request, checked to be a
 * `CreateMessageResult`; fails with what went wrong (to be told to the person
 * and to the server).
 */
export const sample = (
  command: SamplingCommand,
  server: string,
  params: McpSchema.CreateMessageRequestParams
): Effect.Effect<McpSchema.CreateMessageResult, string> =>
  runProgram(command.words, JSON.stringify(params), { ...process.env, EFFECT_MCP_SERVER: server }).pipe(
    Effect.timeoutOrElse({
      duration: command.timeout,
      orElse: () => Effect.fail(`it did not answer within ${Duration.format(command.timeout)} (it was stopped)`)
    }),
    Effect.flatMap((ran): Effect.Effect<McpSchema.CreateMessageResult, string> => {
      if (ran.overflow) return Effect.fail(`it printed more than ${MAX_STDOUT} bytes (it was stopped)`)
      if (ran.code !== 0) {
        return Effect.fail(
          `it exited with ${ran.signal !== null ? `signal ${ran.signal}` : `code ${ran.code}`}${stderrTail(ran.stderr)}`
        )
      }
      const json = Result.try(() => JSON.parse(ran.stdout) as unknown)
      if (Result.isFailure(json)) {
        const text = ran.stdout.trim()
        return Effect.fail(
          `its output is not JSON (${
            text === "" ? "it printed nothing" : `"${text.slice(0, 60)}${text.length > 60 ? "..." : ""}"`
          })`
        )
      }
      const decoded = decodeResult(json.success)
      return Result.isSuccess(decoded)
        ? Effect.succeed(decoded.success)
        : Effect.fail(`its output is not a CreateMessageResult ({ role, content, model }): ${decoded.failure.message}`)
    })
  )
