/**
 * Tasks in `effect-mcp`: the status lines `call` and `tasks result` show on
 * stderr while a task runs, waiting on a task (and cancelling it when the
 * wait is interrupted), and the `tasks list|get|cancel|result` commands.
 *
 * @internal
 */
import type * as McpClient from "@effect-mcp/core/McpClient"
import type * as McpError from "@effect-mcp/core/McpError"
import * as McpSchema from "@effect-mcp/core/McpSchema"
import * as McpTask from "@effect-mcp/core/McpTask"
import * as Argument from "effect/cli/Argument"
import * as Command from "effect/cli/Command"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Connect from "./connect.ts"
import * as Failures from "./failures.ts"
import * as Format from "./format.ts"
import * as Progress from "./progress.ts"

const request = <A>(effect: Effect.Effect<A, McpError.McpError>) => Effect.mapError(effect, Failures.requestFailure)

// -----------------------------------------------------------------------------
// Status lines
// -----------------------------------------------------------------------------

/** The status lines of one task. @internal */
export interface Display {
  /** Shows a state when its status or message changed. */
  readonly state: (state: McpTask.TaskState) => Effect.Effect<void>
  /** A line of its own (e.g. that the task is being cancelled). */
  readonly note: (text: string) => Effect.Effect<void>
}

const MAX_LINE = 200
/** Off a terminal, the most lines of new messages under one status (a status change always shows). */
const MAX_MESSAGE_LINES = 50

/**
 * Status lines on `sink`: `task <id> <status>: <message>`. A new status is a
 * new line; a new message under the same status redraws the line in place
 * on a terminal, or, off one, is a new line (at most 50 per status). With
 * `messages: false` only new statuses are shown. Text from the server is made
 * safe for a terminal (`Format.terminal`).
 *
 * @internal
 */
export const display = (
  sink: Progress.Sink,
  options: { readonly messages: boolean }
): Effect.Effect<Display, never, Scope.Scope> =>
  Effect.gen(function*() {
    const width = sink.isTTY ? Math.max(10, sink.columns - 1) : MAX_LINE
    let last: { readonly status: string; readonly message: string | undefined } | undefined
    // on a terminal: a line is on screen without its newline yet
    let open = false
    let messageLines = 0
    let muted = false
    const write = (line: string, fresh: boolean): Effect.Effect<void> =>
      Effect.suspend(() => {
        if (!sink.isTTY) return sink.write(`${line}\n`)
        const text = `${fresh && open ? "\n" : ""}\r${line}\x1b[K`
        open = true
        return sink.write(text)
      })
    yield* Effect.addFinalizer(() => Effect.suspend(() => open ? sink.write("\n") : Effect.void))
    const state = (state: McpTask.TaskState): Effect.Effect<void> =>
      Effect.suspend(() => {
        const message = state.statusMessage === "" ? undefined : state.statusMessage
        if (last !== undefined && last.status === state.status && last.message === message) return Effect.void
        const newStatus = last === undefined || last.status !== state.status
        last = { status: state.status, message }
        if (newStatus) {
          messageLines = 0
          muted = false
          return write(Format.taskLine(state, width), true)
        }
        if (!options.messages || muted) return Effect.void
        if (!sink.isTTY && ++messageLines > MAX_MESSAGE_LINES) {
          muted = true
          return write(
            `task ${Format.terminal(state.taskId, { line: true })} ${state.status}: (more messages, not shown)`,
            true
          )
        }
        return write(Format.taskLine(state, width), false)
      })
    return { state, note: (text) => write(Format.taskLine({ ...placeholder, statusMessage: text }, width), true) }
  })

const placeholder: McpTask.TaskState = { taskId: "", status: "working", createdAt: "", lastUpdatedAt: "", ttlMs: null }

/** Status lines on this process's stderr. @internal */
export const stderrDisplay = (options: { readonly messages: boolean }) =>
  Effect.flatMap(Progress.stderr, (sink) => display(sink, options))

// -----------------------------------------------------------------------------
// Waiting
// -----------------------------------------------------------------------------

/**
 * Follows `task` to its end, showing each state, then gets its result. When
 * the wait is interrupted (Ctrl-C) and `cancelOnInterrupt`, the task is
 * cancelled first (best effort, within 5 seconds).
 *
 * @internal
 */
export const follow = (
  task: McpTask.Task,
  shown: Display,
  options: { readonly cancelOnInterrupt: boolean }
): Effect.Effect<McpSchema.CallToolResult, Failures.CliFailure> =>
  Stream.runForEach(task.status, shown.state).pipe(
    Effect.andThen(task.result),
    Effect.mapError(Failures.requestFailure),
    Effect.onInterrupt(() =>
      options.cancelOnInterrupt
        ? Effect.andThen(
          Console.error(`effect-mcp: interrupted: cancelling task ${Format.terminal(task.taskId, { line: true })}`),
          task.cancel.pipe(Effect.timeout("5 seconds"), Effect.ignore)
        )
        : Console.error(
          `effect-mcp: interrupted: task ${Format.terminal(task.taskId, { line: true })} goes on ` +
            `(effect-mcp tasks cancel <id> cancels it)`
        )
    )
  )

/** A tool's result on stdout (`--json`: as JSON); an `isError` result is a `ToolError` failure. @internal */
export const printResult = (
  what: string,
  result: McpSchema.CallToolResult,
  json: boolean
): Effect.Effect<void, Failures.CliFailure> =>
  Effect.gen(function*() {
    if (json) yield* Console.log(Format.json(result))
    if (result.isError === true) {
      const text = Format.callToolResult(result)
      return yield* new Failures.CliFailure({
        kind: "ToolError",
        description: json || text === ""
          ? `${what} returned an error result`
          : `${what} returned an error result:\n${text}`
      })
    }
    if (!json) yield* Console.log(Format.callToolResult(result))
  })

// -----------------------------------------------------------------------------
// tasks list|get|cancel|result
// -----------------------------------------------------------------------------

const idArgument = Argument.String("id").pipe(
  Argument.withDescription("The task's id (as `call` or `tasks list` shows it)")
)

/** The one server a task command talks to: `--server`, or the only one. */
const theServer = (connected: Connect.Connected) =>
  Effect.gen(function*() {
    if (connected.order.length !== 1) {
      return yield* Failures.usage(
        `task ids are per server: choose one with --server <name> (the servers are: ${connected.order.join(", ")})`
      )
    }
    const server = connected.order[0]!
    const client = yield* request(connected.group.client(server))
    return { server, client }
  })

const row = (server: string, state: McpTask.TaskState): Format.TaskRow => ({ server, ...state })

const noList = (server: string) =>
  `server "${server}" speaks 2026-07-28, whose tasks extension has no task list: ` +
  `a task is found by its id (effect-mcp tasks get <id>)`

// a listing ends by itself: 1,000 pages
const MAX_PAGES = 1000

/** Every task of a 2025-11-25 server, page after page. */
const listOf = (client: McpClient.Client) =>
  Effect.gen(function*() {
    const all: Array<McpTask.TaskState> = []
    let cursor: string | undefined
    for (let page = 0; page < MAX_PAGES; page++) {
      const result = yield* client.session.request(McpSchema.ListTasks, cursor === undefined ? {} : { cursor })
      all.push(...result.tasks.map(McpTask.fromLegacyTask))
      cursor = result.nextCursor
      if (cursor === undefined) break
    }
    return all
  })

const list = Command.make("list", {}, () =>
  Connect.withGroup((connected) =>
    Effect.gen(function*() {
      const rows: Array<Format.TaskRow> = []
      const modern: Array<string> = []
      for (const server of connected.order) {
        const client = yield* request(connected.group.client(server))
        if (client.era === "modern") {
          modern.push(server)
          continue
        }
        for (const state of yield* request(listOf(client))) rows.push(row(server, state))
      }
      // only servers without a list: say so as an error
      if (modern.length === connected.order.length) {
        return yield* Failures.usage(
          modern.length === 1
            ? noList(modern[0]!)
            : `servers ${modern.join(", ")} speak 2026-07-28, whose tasks extension has no task list: ` +
              `a task is found by its id (effect-mcp tasks get <id> --server <name>)`
        )
      }
      for (const server of modern) yield* Console.error(`effect-mcp: ${noList(server)}`)
      yield* Console.log(connected.json ? Format.json(rows) : Format.tasks(rows))
    })
  )).pipe(
    Command.withDescription(
      "List the tasks of every server (2025-11-25 servers only: 2026-07-28's tasks extension has no list)"
    )
  )

const get = Command.make(
  "get",
  { id: idArgument },
  ({ id }) =>
    Connect.withGroup((connected) =>
      Effect.gen(function*() {
        const { client, server } = yield* theServer(connected)
        const state = yield* request(client.task(id).poll)
        yield* Console.log(connected.json ? Format.json(row(server, state)) : Format.taskState(row(server, state)))
      })
    )
).pipe(
  Command.withDescription("Show a task's state: status, message, times, ttl and poll interval"),
  Command.withExamples([
    {
      command: "effect-mcp tasks get 786512e2-9e0d-44bd-8f29-789f320fe840 --server build",
      description: "A task of the server build"
    }
  ])
)

const cancel = Command.make(
  "cancel",
  { id: idArgument },
  ({ id }) =>
    Connect.withGroup((connected) =>
      Effect.gen(function*() {
        const { client, server } = yield* theServer(connected)
        const task = client.task(id)
        yield* request(task.cancel)
        // its state now, when the server still shows it
        const state = yield* Effect.option(task.poll)
        yield* Console.log(
          connected.json
            ? Format.json({ server, taskId: id, cancelled: true, ...Option.getOrUndefined(state) })
            : `cancelled task ${Format.terminal(id, { line: true })} on ${server}${
              Option.isSome(state) ? ` (status: ${state.value.status})` : ""
            }`
        )
      })
    )
).pipe(Command.withDescription("Cancel a task"))

const result = Command.make(
  "result",
  { id: idArgument },
  ({ id }) =>
    Connect.withGroup((connected) =>
      Effect.gen(function*() {
        const { client } = yield* theServer(connected)
        const task = client.task(id)
        const answer = yield* Effect.scoped(
          Effect.flatMap(
            stderrDisplay({ messages: true }),
            (shown) => follow(task, shown, { cancelOnInterrupt: false })
          )
        )
        yield* printResult(`task ${id}`, answer, connected.json)
      })
    )
).pipe(
  Command.withDescription(
    "Wait for a task's end, showing its status on stderr, and print its result as `call` does " +
      "(Ctrl-C stops waiting; the task goes on)"
  )
)

/** `tasks list|get|cancel|result`. @internal */
export const command = Command.make("tasks").pipe(
  Command.withDescription(
    "Tasks: calls a server runs on after answering (`call` follows its own). A task's id is the server's: " +
      "give --server NAME with a config of several servers. A stdio server is started for each command, " +
      "so it knows only the tasks of that run: these commands are for HTTP servers"
  ),
  Command.withSubcommands([list, get, cancel, result])
)
