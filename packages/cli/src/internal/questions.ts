/**
 * A server's questions, answered by `effect-mcp`: elicitation (form and URL)
 * at the terminal or from `--answers`, `roots/list` from `--root`, sampling
 * by `--sampling-command`. The client declares `elicitation` (form and URL)
 * and `sampling` always, and `roots` when `--root` is given; the answers are
 * the same in both eras (2026-07-28 input-required rounds, legacy
 * server→client requests).
 *
 * - **A form** is asked field by field on a terminal (stdin and stderr);
 *   with `--answers` nothing is asked (see `answers.ts` for the format); with
 *   neither it is declined, saying so on stderr (stdin is never read).
 *   Answers that do not fit the form end the command (exit 2).
 * - **A URL** is shown on stderr when it is an `http:` or `https:` URL (any
 *   other is declined unseen), with its host; accepting it opens it in the
 *   browser with `--open` (`EFFECT_MCP_BROWSER`, else the platform's opener).
 * - **Sampling** is declined, saying so, without `--sampling-command`.
 * - A server's `notifications/elicitation/complete` is said on stderr.
 *
 * @internal
 */
import * as McpError from "@effect-mcp/core/McpError"
import type * as McpGroup from "@effect-mcp/core/McpGroup"
import type * as McpSchema from "@effect-mcp/core/McpSchema"
import { NodeMcpAuthorizer } from "@effect-mcp/platform-node"
import * as Console from "effect/Console"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Option from "effect/Option"
import * as Path from "effect/Path"
import * as Result from "effect/Result"
import * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import * as Terminal from "effect/Terminal"
import { pathToFileURL } from "node:url"
import * as Adhoc from "./adhoc.ts"
import * as Answers from "./answers.ts"
import * as Failures from "./failures.ts"
import * as Format from "./format.ts"
import * as Prompts from "./prompts.ts"
import * as Sampling from "./sampling.ts"

// -----------------------------------------------------------------------------
// The flags
// -----------------------------------------------------------------------------

/** The flags of the questions, as the root command parses them. */
export interface Flags {
  readonly answers: Option.Option<string>
  readonly open: boolean
  readonly root: ReadonlyArray<string>
  readonly samplingCommand: Option.Option<string>
  readonly samplingTimeout: Option.Option<number>
}

/** The flags checked: what answers the questions. */
export interface Settings {
  readonly answers: Answers.Answers | undefined
  readonly open: boolean
  /** `undefined`: no `--root`, no `roots` capability. */
  readonly roots: ReadonlyArray<McpSchema.Root> | undefined
  readonly sampling: Sampling.SamplingCommand | undefined
}

/** The default of `--sampling-timeout`, in seconds. */
export const DEFAULT_SAMPLING_TIMEOUT = 120

/** The names of the flags given (`serve` takes none of them). */
export const given = (flags: Flags): ReadonlyArray<string> => [
  ...(Option.isSome(flags.answers) ? ["--answers"] : []),
  ...(flags.open ? ["--open"] : []),
  ...(flags.root.length > 0 ? ["--root"] : []),
  ...(Option.isSome(flags.samplingCommand) ? ["--sampling-command"] : []),
  ...(Option.isSome(flags.samplingTimeout) ? ["--sampling-timeout"] : [])
]

/** One `--root`: an existing directory, as a `file://` root named after it. */
const rootOf = (dir: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const absolute = path.resolve(dir)
    const info = yield* fs.stat(absolute).pipe(
      Effect.mapError(() => Failures.usage(`--root ${dir}: no such directory`))
    )
    if (info.type !== "Directory") return yield* Failures.usage(`--root ${dir}: not a directory`)
    const name = path.basename(absolute)
    return { uri: pathToFileURL(absolute).href, ...(name === "" ? {} : { name }) } satisfies McpSchema.Root
  })

/** The flags checked before anything is started: a usage error (exit 2) for any that is wrong. */
export const settingsOf = (
  flags: Flags
): Effect.Effect<Settings, Failures.CliFailure, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const answers = Option.isSome(flags.answers)
      ? yield* Effect.fromResult(Answers.parseAnswers(flags.answers.value))
      : undefined
    const roots = flags.root.length === 0 ? undefined : yield* Effect.forEach(flags.root, rootOf)
    if (Option.isSome(flags.samplingTimeout) && Option.isNone(flags.samplingCommand)) {
      return yield* Failures.usage("--sampling-timeout is for --sampling-command")
    }
    const seconds = Option.getOrElse(flags.samplingTimeout, () => DEFAULT_SAMPLING_TIMEOUT)
    if (!(seconds > 0)) return yield* Failures.usage(`--sampling-timeout must be more than 0 seconds, got ${seconds}`)
    let sampling: Sampling.SamplingCommand | undefined
    if (Option.isSome(flags.samplingCommand)) {
      const words = yield* Effect.fromResult(Adhoc.splitCommandLine(flags.samplingCommand.value)).pipe(
        Effect.mapError((error) => Failures.usage(error.description.replace(/^--stdio/, "--sampling-command")))
      )
      if (words.length === 0) return yield* Failures.usage("--sampling-command is empty")
      sampling = { words, timeout: Duration.seconds(seconds) }
    }
    return { answers, open: flags.open, roots, sampling }
  })

// -----------------------------------------------------------------------------
// URLs
// -----------------------------------------------------------------------------

/** A server's URL, when it is `http:` or `https:`. */
export const safeUrl = (text: string): URL | undefined => {
  const parsed = Result.try(() => new URL(text))
  return Result.isSuccess(parsed) && (parsed.success.protocol === "https:" || parsed.success.protocol === "http:")
    ? parsed.success
    : undefined
}

/**
 * Opens an `http:` or `https:` URL: with `EFFECT_MCP_BROWSER` (its words, the
 * URL in place of a `%s` word or after the last), else the platform's opener.
 */
export const openUrl = (url: URL): Effect.Effect<void, McpError.McpError> => {
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    return Effect.fail(McpError.protocol(-1, "only http: and https: URLs are opened"))
  }
  const browser = (process.env.EFFECT_MCP_BROWSER ?? "").trim().split(/\s+/).filter((word) => word !== "")
  const [command, ...rest] = browser
  if (command === undefined) {
    const [opener, args] = NodeMcpAuthorizer.browserCommand(url)
    return NodeMcpAuthorizer.spawnDetached(opener, args)
  }
  const args = rest.includes("%s") ? rest.map((word) => word === "%s" ? url.href : word) : [...rest, url.href]
  return NodeMcpAuthorizer.spawnDetached(command, args)
}

// -----------------------------------------------------------------------------
// The handlers
// -----------------------------------------------------------------------------

const declined = { action: "decline" as const }

const PAST = { accept: "accepted", decline: "declined", cancel: "cancelled" } as const

/**
 * The client options that answer the servers' questions, by server. `stop`
 * is failed with a usage error when `--answers` does not fit a form (the
 * command ends with it). Questions are answered one at a time (one terminal);
 * the terminal is opened at the first question.
 */
export const clientOptions = (
  settings: Settings,
  stop: Deferred.Deferred<never, Failures.CliFailure>
): Effect.Effect<(server: string) => McpGroup.ClientOptions, never, Scope.Scope | FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const scope = yield* Scope.Scope
    const services = yield* Effect.context<FileSystem.FileSystem | Path.Path>()
    const oneAtATime = yield* Semaphore.make(1)
    const terminal = yield* Effect.cached(Scope.provide(scope)(Prompts.stderrTerminal))
    const nextAnswer = settings.answers === undefined ? undefined : Answers.source(settings.answers)
    const interactive = settings.answers === undefined && Prompts.isInteractive()

    const atTerminal = <A>(effect: Effect.Effect<A, never, FileSystem.FileSystem | Path.Path | Terminal.Terminal>) =>
      Effect.flatMap(
        terminal,
        (term) => effect.pipe(Effect.provideService(Terminal.Terminal, term), Effect.provideContext(services))
      )

    /** The answer of `--answers` for the next question, or `undefined` (declined) once they ran out. */
    const fromAnswers = (ask: string) =>
      Effect.gen(function*() {
        const { answer, index } = nextAnswer!()
        if (answer === undefined) {
          yield* Console.error(`effect-mcp: ${ask}: declined (--answers has no answer ${index + 1})`)
        }
        return answer
      })

    const form = (server: string) => (params: McpSchema.ElicitRequestFormParams) =>
      oneAtATime.withPermits(1)(Effect.gen(function*() {
        const ask = `server "${Prompts.line(server)}" asks: ${Prompts.line(params.message)}`
        if (nextAnswer !== undefined) {
          const answer = yield* fromAnswers(ask)
          if (answer === undefined) return declined
          if (answer.action !== "accept") {
            yield* Console.error(`effect-mcp: ${ask}: ${PAST[answer.action]} (--answers)`)
            return { action: answer.action }
          }
          const checked = Answers.checkContent(params.requestedSchema, answer.content)
          if (Result.isFailure(checked)) {
            yield* Deferred.fail(
              stop,
              Failures.usage(`--answers do not fit the form of ${ask}: ${checked.failure.join("; ")}`)
            )
            return { action: "cancel" as const }
          }
          yield* Console.error(`effect-mcp: ${ask}: accepted (--answers)`)
          return { action: "accept" as const, content: checked.success }
        }
        if (interactive) return yield* atTerminal(Prompts.askForm(server, params))
        yield* Console.error(
          `effect-mcp: ${ask}: declined, as there is no terminal to ask on (--answers answers without one)`
        )
        return declined
      }))

    const url = (server: string) => (params: McpSchema.ElicitRequestURLParams) =>
      oneAtATime.withPermits(1)(Effect.gen(function*() {
        const ask = `server "${Prompts.line(server)}" asks you to go to a URL: ${Prompts.line(params.message)}`
        const target = safeUrl(params.url)
        if (target === undefined) {
          yield* Console.error(`effect-mcp: ${ask}: declined, as it is not an http: or https: URL`)
          return declined
        }
        const shown = Format.terminal(target.href, { line: true })
        const host = Format.terminal(target.host, { line: true })
        yield* Console.error(`${interactive ? "\n" : ""}effect-mcp: ${ask}\n  ${shown}\n  (host: ${host})`)
        let action: "accept" | "decline" | "cancel"
        if (nextAnswer !== undefined) {
          const answer = yield* fromAnswers(ask)
          if (answer === undefined) return declined
          action = answer.action
          yield* Console.error(`effect-mcp: ${PAST[action]} (--answers)`)
        } else if (interactive) {
          action = yield* atTerminal(Prompts.askUrl(settings.open))
        } else {
          yield* Console.error(
            `effect-mcp: declined, as there is no terminal to ask on (--answers answers without one)`
          )
          return declined
        }
        if (action === "accept" && settings.open) {
          yield* openUrl(target).pipe(
            Effect.catch((error) => Console.error(`effect-mcp: could not open it (${error.message}): open it yourself`))
          )
        }
        return { action }
      }))

    const sampling = (server: string) => (params: McpSchema.CreateMessageRequestParams) =>
      Effect.gen(function*() {
        const ask = `server "${Prompts.line(server)}" asks to sample an LLM (${params.messages.length} message${
          params.messages.length === 1 ? "" : "s"
        })`
        const command = settings.sampling
        if (command === undefined) {
          yield* Console.error(`effect-mcp: ${ask}: declined (--sampling-command answers it)`)
          return yield* Effect.fail(McpError.protocol(-1, "User rejected sampling request"))
        }
        return yield* Sampling.sample(command, server, params).pipe(
          Effect.tapError((problem) => Console.error(`effect-mcp: ${ask}: --sampling-command failed: ${problem}`)),
          Effect.mapError((problem) => McpError.protocol(-32603, `the client's sampling failed: ${problem}`))
        )
      })

    return (server: string): McpGroup.ClientOptions => ({
      elicitation: { form: form(server), url: url(server) },
      onElicitationComplete: ({ elicitationId }) =>
        Console.error(
          `effect-mcp: server "${Prompts.line(server)}" says the URL elicitation ${
            Prompts.line(elicitationId)
          } is complete`
        ),
      sampling: { handler: sampling(server) },
      ...(settings.roots === undefined ? {} : { roots: settings.roots })
    })
  })
