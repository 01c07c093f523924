/**
 * The commands of `effect-mcp`: `servers`, `list tools|resources|templates|prompts`,
 * `call`, `read`, `prompt`, `skills` (see `skills.ts`), `tasks` (see `tasks.ts`), `login`, `logout` and
 * `serve` (see `serve.ts`), and the parsing of `--args`.
 *
 * @internal
 */
import type * as McpError from "@effect-mcp/core/McpError"
import type * as McpTask from "@effect-mcp/core/McpTask"
import { NodeMcpAuthStore } from "@effect-mcp/platform-node"
import * as Argument from "effect/cli/Argument"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Result from "effect/Result"
import * as Connect from "./connect.ts"
import * as Failures from "./failures.ts"
import * as Format from "./format.ts"
import * as Progress from "./progress.ts"
import * as Serve from "./serve.ts"
import * as Skills from "./skills.ts"
import * as Tasks from "./tasks.ts"

// -----------------------------------------------------------------------------
// Arguments
// -----------------------------------------------------------------------------

/** The text of `--args`: a JSON object (absent means `{}`). */
export const parseArgs = (text: string | undefined): Result.Result<Record<string, unknown>, Failures.CliFailure> => {
  if (text === undefined) return Result.succeed({})
  const parsed = Result.try({
    try: () => JSON.parse(text) as unknown,
    catch: (error) =>
      Failures.usage(`--args is not valid JSON: ${error instanceof Error ? error.message : String(error)}`)
  })
  return Result.flatMap(parsed, (value) =>
    Predicate.isObject(value)
      ? Result.succeed(value)
      : Result.fail(
        Failures.usage(`--args must be a JSON object, got ${Array.isArray(value) ? "an array" : JSON.stringify(value)}`)
      ))
}

/** The text of a prompt's `--args`: a JSON object of strings (numbers and booleans become strings). */
export const parsePromptArgs = (text: string | undefined): Result.Result<Record<string, string>, Failures.CliFailure> =>
  Result.flatMap(parseArgs(text), (object) => {
    const out: Record<string, string> = {}
    for (const [key, value] of Object.entries(object)) {
      if (typeof value === "string") out[key] = value
      else if (typeof value === "number" || typeof value === "boolean") out[key] = String(value)
      else {
        return Result.fail(
          Failures.usage(`prompt arguments are strings: --args key "${key}" is ${JSON.stringify(value)}`)
        )
      }
    }
    return Result.succeed(out)
  })

const argsFlag = Flag.String("args").pipe(
  Flag.withMetavar("JSON"),
  Flag.withDescription("The arguments, as a JSON object"),
  Flag.optional
)

const request = <A>(effect: Effect.Effect<A, McpError.McpError>) => Effect.mapError(effect, Failures.requestFailure)

/** Entries in the config's order of their servers (they were connected concurrently). */
const inConfigOrder = <A extends { readonly server: string }>(
  order: ReadonlyArray<string>,
  entries: ReadonlyArray<A>
): ReadonlyArray<A> =>
  entries
    .map((entry, index) => ({ entry, index, rank: order.indexOf(entry.server) }))
    .sort((a, b) => a.rank - b.rank || a.index - b.index)
    .map(({ entry }) => entry)

// -----------------------------------------------------------------------------
// list, call, read, prompt, servers
// -----------------------------------------------------------------------------

/** `list <name>`: the entries of every server, in the config's order. */
const listing = <Name extends string, A extends { readonly server: string }>(
  name: Name,
  description: string,
  entries: (group: Connect.Group) => Effect.Effect<ReadonlyArray<A>>,
  format: (entries: ReadonlyArray<A>) => string
) =>
  Command.make(name, {}, () =>
    Connect.withGroup(({ group, json, order }) =>
      Effect.flatMap(entries(group), (all) => {
        const sorted = inConfigOrder(order, all)
        return Console.log(json ? Format.json(sorted) : format(sorted))
      })
    )).pipe(Command.withDescription(description))

const list = Command.make("list").pipe(
  Command.withDescription("List tools, resources, resource templates or prompts"),
  Command.withSubcommands([
    listing("tools", "List the tools of every server", (group) => group.tools, Format.tools),
    listing("resources", "List the resources of every server", (group) => group.resources, Format.resources),
    listing(
      "templates",
      "List the resource templates of every server",
      (group) => group.resourceTemplates,
      Format.resourceTemplates
    ),
    listing("prompts", "List the prompts of every server", (group) => group.prompts, Format.prompts)
  ])
)

const call = Command.make(
  "call",
  {
    tool: Argument.String("tool").pipe(Argument.withDescription("The tool's name (as `list tools` shows it)")),
    args: argsFlag,
    progress: Flag.Boolean("progress").pipe(
      Flag.withDescription(
        "Show a progress bar on stderr when the tool reports progress, and a task's new status messages " +
          "(--no-progress: neither; a task's changes of status still show)"
      ),
      Flag.withDefault(true)
    ),
    task: Flag.Boolean("task").pipe(
      Flag.withDescription(
        "Run the call as a task where the tool allows one (execution.taskSupport \"optional\"; a \"required\" " +
          "one always runs as a task): 2025-11-25 asks the server for a task (a tool that lists no task support " +
          "is a usage error); 2026-07-28 servers decide by themselves, and the call is followed as a task " +
          "whenever the server makes one"
      ),
      Flag.withDefault(false)
    ),
    wait: Flag.Boolean("wait").pipe(
      Flag.withDescription(
        "Wait for a task's end (--no-wait: start the call as a task, as --task does, print the task's id on " +
          "stdout (--json: its state) and exit; a call the server answers at once prints its result). Follow it " +
          "later with `tasks get|result|cancel <id>`"
      ),
      Flag.withDefault(true)
    )
  },
  ({ args, progress, task, tool, wait }) =>
    Effect.gen(function*() {
      // --args is checked before any server is started
      const parsed = yield* Effect.fromResult(parseArgs(Option.getOrUndefined(args)))
      return yield* Connect.withGroup(({ group, json }) =>
        Effect.gen(function*() {
          const tools = yield* group.tools
          const entry = tools.find((candidate) => candidate.name === tool)
          if (entry === undefined) {
            return yield* Failures.unknownName("tool", tool, tools.map((candidate) => candidate.name))
          }
          const client = yield* request(group.client(entry.server))
          const support = entry.tool.execution?.taskSupport ?? "forbidden"
          const asked = task || !wait
          if (asked && client.era === "legacy" && support === "forbidden") {
            return yield* Failures.usage(
              `tool ${tool} cannot run as a task: its server lists no execution.taskSupport "optional" or ` +
                `"required" for it (drop --task / --no-wait)`
            )
          }
          const asTask = client.era === "modern" ? asked || support !== "forbidden" : asked || support === "required"
          // the bar lives as long as the call: its line is erased before the output
          const result = yield* Effect.scoped(Effect.gen(function*() {
            const bar = progress ? yield* Effect.flatMap(Progress.stderr, Progress.make) : undefined
            if (!asTask) {
              return Option.some(
                yield* request(group.callTool(
                  tool,
                  parsed,
                  bar === undefined ? {} : { onProgress: (update: Progress.Update) => bar.update(update) }
                ))
              )
            }
            // 2026-07-28: once a task, its status lines show its messages (the handle would report them as
            // progress too); 2025-11-25 tasks keep reporting progress as such
            let following = false
            const modern = client.era === "modern"
            const handle = yield* request(group.callToolTask(
              tool,
              parsed,
              bar === undefined ? {} : {
                onProgress: (update: Progress.Update) => following ? Effect.void : bar.update(update)
              }
            ))
            // 2026-07-28: answered at once
            if (handle.taskId === "") return Option.some(yield* request(handle.result))
            following = modern
            if (!wait) {
              yield* startedOnly(group, entry.server, handle, json)
              return Option.none()
            }
            const shown = yield* Tasks.stderrDisplay({ messages: progress })
            return Option.some(yield* Tasks.follow(handle, shown, { cancelOnInterrupt: true }))
          }))
          if (Option.isSome(result)) yield* Tasks.printResult(`tool ${tool}`, result.value, json)
        })
      )
    })
).pipe(
  Command.withDescription(
    "Call a tool. A call the server runs as a task (2026-07-28: the server's choice; 2025-11-25: a tool that " +
      "requires one, or --task) shows the task's id and each change of its status on stderr, then prints the " +
      "result; Ctrl-C cancels the task"
  ),
  Command.withExamples([
    { command: "effect-mcp call weather --args '{\"city\":\"Lisbon\"}'", description: "Call the weather tool" },
    {
      command: "effect-mcp call example_weather --qualify --json --args '{\"city\":\"Oslo\"}'",
      description: "The same by its qualified name, printing the result as JSON"
    },
    {
      command: "effect-mcp call build --task --args '{\"target\":\"site\"}'",
      description: "Run a call as a task, showing its status on stderr"
    },
    {
      command:
        "id=$(effect-mcp call build --no-wait --url https://ci.example.com/mcp); effect-mcp tasks result $id --url https://ci.example.com/mcp",
      description: "Start a task, then wait for its result in another run"
    },
    {
      command: "effect-mcp call signup --answers '{\"name\":\"Ada\",\"age\":36}'",
      description: "Answer the form the tool asks for (an elicitation) without a terminal"
    },
    {
      command: "effect-mcp call summarize --sampling-command \"my-llm --json\" --root .",
      description: "Let a program answer the server's sampling requests, and offer it the current directory"
    }
  ])
)

/**
 * `call --no-wait`: the task's id on stdout (`--json`: its state), and on
 * stderr how to follow it; a stdio server ends with this run, and its task
 * with it, which is said too.
 */
const startedOnly = (group: Connect.Group, server: string, handle: McpTask.Task, json: boolean) =>
  Effect.gen(function*() {
    const id = Format.terminal(handle.taskId, { line: true })
    if (json) {
      const state = yield* request(handle.poll)
      yield* Console.log(Format.json({ server, ...state }))
    } else {
      yield* Console.log(id)
    }
    const status = (yield* group.servers).find((candidate) => candidate.name === server)
    yield* Console.error(
      status?.params._tag === "Stdio"
        ? `effect-mcp: task ${id} started on ${server}, a stdio server, which stops as effect-mcp exits: ` +
          `the task most likely ends with it`
        : `effect-mcp: task ${id} started on ${server} (effect-mcp tasks get|result|cancel ${id} follows it)`
    )
  })

/** A URI several servers offer: a usage error naming them, and how to pick one. */
const readFailure = (error: McpError.McpError): Failures.CliFailure => {
  const reason = error.reason
  if (reason._tag !== "AmbiguousError") return Failures.requestFailure(error)
  return Failures.usage(
    `resource "${reason.name}" is offered by several servers (${
      reason.servers.map((server) => `"${server}"`).join(", ")
    }): ` +
      `choose one with --server <name>, e.g. --server ${reason.servers[0]}`
  )
}

const read = Command.make(
  "read",
  { uri: Argument.String("uri").pipe(Argument.withDescription("The resource's URI")) },
  ({ uri }) =>
    Effect.gen(function*() {
      // --server connects that server only, and reads there (even a URI it does not list)
      const server = Option.getOrUndefined((yield* Connect.root).server)
      return yield* Connect.withGroup(({ group, json }) =>
        group.readResource(uri, server === undefined ? undefined : { server }).pipe(
          Effect.mapError(readFailure),
          Effect.flatMap((result) => Console.log(json ? Format.json(result) : Format.readResourceResult(result)))
        )
      )
    })
).pipe(
  Command.withDescription(
    "Read a resource (from the server that lists it or a template matching it; with --server, from that server)"
  ),
  Command.withExamples([
    { command: "effect-mcp read notes://readme", description: "Read a resource from the one server that offers it" },
    {
      command: "effect-mcp read demo://resource/static/document/features.md --server b",
      description: "Read a resource several servers offer from server b"
    }
  ])
)

const prompt = Command.make(
  "prompt",
  {
    name: Argument.String("name").pipe(Argument.withDescription("The prompt's name (as `list prompts` shows it)")),
    args: argsFlag
  },
  ({ args, name }) =>
    Effect.gen(function*() {
      const parsed = yield* Effect.fromResult(parsePromptArgs(Option.getOrUndefined(args)))
      return yield* Connect.withGroup(({ group, json }) =>
        Effect.gen(function*() {
          const prompts = yield* group.prompts
          if (!prompts.some((entry) => entry.name === name)) {
            return yield* Failures.unknownName("prompt", name, prompts.map((entry) => entry.name))
          }
          const result = yield* request(group.getPrompt(name, parsed))
          yield* Console.log(json ? Format.json(result) : Format.getPromptResult(result))
        })
      )
    })
).pipe(Command.withDescription("Get a prompt"))

const servers = Command.make("servers", {}, () =>
  Connect.withGroup(({ group, json, order }) =>
    Effect.gen(function*() {
      const views = yield* group.views
      const count = (entries: ReadonlyArray<{ readonly server: string }>, server: string) =>
        entries.filter((entry) => entry.server === server).length
      const statuses = inConfigOrder(
        order,
        (yield* group.servers).map((status) => ({ ...status, server: status.name }))
      )
      const rows: Array<Format.ServerRow> = []
      for (const status of statuses) {
        // fails for a server that went down since it connected
        const client = yield* request(group.client(status.name))
        rows.push({
          server: status.name,
          transport: status.params._tag,
          status: status.status,
          serverInfo: status.serverInfo ?? client.serverInfo,
          era: status.era ?? client.era,
          protocolVersion: status.protocolVersion ?? client.protocolVersion,
          tools: count(views.tools, status.name),
          resources: count(views.resources, status.name),
          resourceTemplates: count(views.resourceTemplates, status.name),
          prompts: count(views.prompts, status.name)
        })
      }
      yield* Console.log(json ? Format.json(rows) : Format.servers(rows))
    })
  )).pipe(
    Command.withDescription(
      "Connect to every server and show what each is, and the era and protocol version it speaks"
    ),
    Command.withExamples([
      { command: "effect-mcp servers", description: "Every server, each in the era of its config (auto by default)" },
      {
        command: "effect-mcp servers --era legacy",
        description: "Every server over initialize (2025-11-25 and before)"
      }
    ])
  )

// -----------------------------------------------------------------------------
// login, logout
// -----------------------------------------------------------------------------

const serverArgument = Argument.String("server").pipe(
  Argument.withDescription("The server's name in the config (optional with --url: the one server)"),
  Argument.optional
)

const login = Command.make("login", { server: serverArgument }, (args) =>
  Effect.gen(function*() {
    const { json, resource, server } = yield* Connect.httpServer(Option.getOrUndefined(args.server))
    const signedIn = yield* Effect.scoped(Effect.flatMap(Connect.connectTo(server), ({ store }) =>
      store.getTokens(resource).pipe(
        Effect.map((tokens) => tokens !== undefined),
        Effect.mapError((error) => Failures.connectionFailure(error, server))
      )))
    yield* Console.log(
      json
        ? Format.json({ server, resource, signedIn })
        : signedIn
        ? `signed in to ${server} (${resource})`
        : `${server} (${resource}) did not ask for authorization`
    )
  })).pipe(
    Command.withDescription("Connect to an HTTP server, signing in with OAuth unless a stored token still works"),
    Command.withExamples([
      { command: "effect-mcp login search", description: "Sign in to the server named search" },
      { command: "effect-mcp --url https://mcp.example.com/mcp login", description: "Sign in to a server, no config" }
    ])
  )

const logout = Command.make("logout", { server: serverArgument }, (args) =>
  Effect.gen(function*() {
    const { authFile, json, resource, server } = yield* Connect.httpServer(Option.getOrUndefined(args.server))
    const store = yield* NodeMcpAuthStore.make({ path: authFile })
    const signedIn = yield* store.getTokens(resource).pipe(
      Effect.map((tokens) => tokens !== undefined),
      Effect.andThen((had) => Effect.as(store.clearTokens(resource), had)),
      Effect.mapError((error) => Failures.connectionFailure(error, server))
    )
    yield* Console.log(
      json
        ? Format.json({ server, resource, signedOut: signedIn })
        : signedIn
        ? `signed out of ${server} (${resource})`
        : `${server} (${resource}) had no tokens`
    )
  })).pipe(
    Command.withDescription("Forget the OAuth tokens of a server (the next connection signs in again)"),
    Command.withExamples([{ command: "effect-mcp logout search", description: "Sign out of the server named search" }])
  )

/** The command tree. */
export const command = Connect.root.pipe(
  Command.withSubcommands([
    servers,
    list,
    call,
    read,
    prompt,
    Skills.command,
    Tasks.command,
    login,
    logout,
    Serve.command
  ])
)
