/**
 * Tasks in `effect-mcp`, run as the built bin: `call` of a task tool shows
 * the task's id and status lines on stderr and the result on stdout, in both
 * eras, over stdio (a fixture server); `call --no-wait`, `tasks
 * get|cancel|result|list` and Ctrl-C cancelling a task, against a
 * Streamable HTTP server on 127.0.0.1 in this process (tasks outlive a CLI
 * run there; each bearer token is its own principal).
 */
import { McpAuth, McpServer, McpTool } from "@effect-mcp/core"
import { NodeMcpHttpServer } from "@effect-mcp/platform-node"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Layer, Ref, Schema, Scope } from "effect"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import type * as Progress from "../src/internal/progress.ts"
import * as Tasks from "../src/internal/tasks.ts"
import { assertExit, processesWith, quote, type Ran, root, runCli, startCli, tempDir } from "./utils/cli.ts"

const tasksServer = join(root, "packages/cli/test/fixtures/tasks-server.ts")
const stdio = ["--stdio", `${quote(process.execPath)} ${quote(tasksServer)}`]

const files = tempDir({})
afterAll(() => files.cleanup())

const parse = (ran: Ran): any => JSON.parse(ran.stdout)

const all = <const Runs extends ReadonlyArray<Effect.Effect<Ran>>>(...runs: Runs) =>
  Effect.all(runs, { concurrency: "unbounded" })

const UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"

// -----------------------------------------------------------------------------
// An HTTP server whose tasks outlive a run
// -----------------------------------------------------------------------------

/**
 * `build` works (as a task when it may) until `release`, recording its
 * interruption; tasks are polled every 50 ms; a bearer token is its subject.
 */
const startHttpServer = Effect.gen(function*() {
  const started = yield* Deferred.make<void>()
  const release = yield* Deferred.make<void>()
  const interrupted = yield* Deferred.make<void>()
  const build = McpTool.make("build", {
    description: "Works until released",
    input: Schema.Struct({ target: Schema.String }),
    task: "optional",
    handler: ({ target }, context) =>
      Effect.gen(function*() {
        yield* Deferred.succeed(started, undefined)
        yield* context.reportProgress({ progress: 1, total: 2, message: `building ${target}` })
        yield* Deferred.await(release)
        return `built ${target}`
      }).pipe(Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined)))
  })
  const server = yield* McpServer.make({ name: "tasks-http", version: "1.0.0", tasks: { pollInterval: "50 millis" } })
  yield* server.register(build)
  const verify = (token: string) => Effect.succeed<McpAuth.AuthInfo>({ token, subject: token, scopes: [], claims: {} })
  const context = yield* Layer.build(
    NodeMcpHttpServer.layer({
      auth: { authorizationServers: ["http://127.0.0.1/as"], verify, requireAudience: false }
    }).pipe(Layer.provide(Layer.succeed(McpServer.McpServer, server)))
  )
  const url = yield* NodeMcpHttpServer.url().pipe(Effect.provideContext(context))
  const as = (token: string) => ["--url", url, "-H", `Authorization: Bearer ${token}`]
  const wasInterrupted = Deferred.await(interrupted).pipe(
    Effect.timeoutOption("10 seconds"),
    Effect.map((done) => done._tag === "Some")
  )
  return { url, as, started, release, wasInterrupted }
})

// -----------------------------------------------------------------------------

describe("effect-mcp call of a task tool, over stdio", () => {
  for (const era of ["modern", "legacy"] as const) {
    it.live(`${era}: the task's id and its status on stderr while it runs, then the result on stdout`, () =>
      Effect.scoped(Effect.gen(function*() {
        const file = files.path(`go-${era}`)
        // gated may run as a task: 2026-07-28 servers make one; 2025-11-25 ones are asked with --task
        const task = era === "legacy" ? ["--task"] : []
        const running = yield* startCli([
          ...stdio,
          "--era",
          era,
          "call",
          "gated",
          ...task,
          "--args",
          JSON.stringify({ file })
        ])
        // 2026-07-28 reports the task's progress as its status message; 2025-11-25 as progress
        const [, id] = yield* running.stderrMatching(new RegExp(`^task (${UUID}) working`, "m"))
        if (era === "modern") {
          yield* running.stderrMatching(new RegExp(`^task ${id} working: waiting for .*go-modern$`, "m"))
        }
        writeFileSync(file, "")
        const ran = yield* running.exit
        assertExit(ran, 0)
        assert.strictEqual(ran.stdout, `found ${file}\n`)
        assert.match(ran.stderr, new RegExp(`^task ${id} completed`, "m"))
        // one line per change, in order
        const lines = ran.stderr.split("\n").filter((line) => line.startsWith("task "))
        assert.match(lines[0]!, /working/)
        assert.match(lines.at(-1)!, /completed/)
      })))
  }

  it.live("a required task in both eras; a plain tool is no task; --task on a tool that forbids tasks (2025-11-25)", () =>
    Effect.gen(function*() {
      const [modern, legacy, plain, forced, plainModern] = yield* all(
        runCli([...stdio, "call", "render"]),
        runCli([...stdio, "--era", "legacy", "call", "render", "--json"]),
        runCli([...stdio, "--era", "legacy", "call", "plain"]),
        runCli([...stdio, "--era", "legacy", "call", "plain", "--task"]),
        runCli([...stdio, "call", "plain", "--task"])
      )
      assertExit(modern, 0)
      assert.strictEqual(modern.stdout, "rendered\n")
      assert.match(modern.stderr, new RegExp(`^task ${UUID} completed$`, "m"))
      assertExit(legacy, 0)
      assert.deepStrictEqual(parse(legacy).content, [{ type: "text", text: "rendered" }])
      assert.match(legacy.stderr, new RegExp(`^task ${UUID} completed$`, "m"))
      assertExit(plain, 0)
      assert.strictEqual(plain.stdout, "plain\n")
      assert.notInclude(plain.stderr, "task ")
      assertExit(forced, 2)
      assert.include(forced.stderr, "tool plain cannot run as a task")
      // 2026-07-28: the server decides, and answers at once
      assertExit(plainModern, 0)
      assert.strictEqual(plainModern.stdout, "plain\n")
      assert.notInclude(plainModern.stderr, "task ")
    }))

  it.live("a task's hostile status message is written out visibly; its error result exits 1", () =>
    Effect.gen(function*() {
      const ran = yield* runCli([...stdio, "call", "broken"])
      assertExit(ran, 1)
      assert.include(ran.stderr, "working: \\x1b[31mred\\x1b]0;title\\x07")
      assert.notInclude(ran.stderr, "\x1b")
      assert.notInclude(ran.stderr, "\x07")
      assert.include(ran.stderr, "tool broken returned an error result:\nbroken on purpose")
    }))

  it.live("--no-wait on a stdio server prints the id and warns that the task ends with the server", () =>
    Effect.gen(function*() {
      const ran = yield* runCli([
        ...stdio,
        "call",
        "gated",
        "--no-wait",
        "--args",
        JSON.stringify({ file: files.path("never") })
      ])
      assertExit(ran, 0)
      assert.match(ran.stdout, new RegExp(`^${UUID}\n$`))
      assert.include(ran.stderr, "a stdio server, which stops as effect-mcp exits")
    }))
})

describe("effect-mcp tasks, over stdio", () => {
  it.live("a task id needs its server; tasks list: none of a fresh 2025-11-25 server, no list in 2026-07-28", () =>
    Effect.gen(function*() {
      const server = { command: process.execPath, args: [tasksServer] }
      writeFileSync(files.path("two.json"), JSON.stringify({ mcpServers: { a: server, b: server } }))
      // the same tools twice: --qualify keeps the group from refusing the collision
      const two = ["--config", files.path("two.json"), "--qualify"]
      const [ambiguous, legacy, modern, mixed] = yield* all(
        runCli([...two, "tasks", "get", "some-id"]),
        runCli([...stdio, "--era", "legacy", "tasks", "list"]),
        runCli([...stdio, "tasks", "list"]),
        runCli([...two, "tasks", "list", "--era", "modern"])
      )
      assertExit(ambiguous, 2)
      assert.include(
        ambiguous.stderr,
        "task ids are per server: choose one with --server <name> (the servers are: a, b)"
      )
      assertExit(legacy, 0)
      assert.strictEqual(legacy.stdout, "(no tasks)\n")
      assertExit(modern, 2)
      assert.include(modern.stderr, `server "tasks-server" speaks 2026-07-28, whose tasks extension has no task list`)
      assertExit(mixed, 2)
      assert.include(mixed.stderr, "servers a, b speak 2026-07-28")
    }))
})

describe("effect-mcp tasks, over Streamable HTTP", () => {
  it.live("call --no-wait, then tasks get, cancel (interrupting the handler) and get again; list has no list in 2026-07-28", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* startHttpServer
      const alice = server.as("alice")
      const started = yield* runCli([...alice, "call", "build", "--no-wait", "--args", `{"target":"site"}`])
      assertExit(started, 0)
      const id = started.stdout.trim()
      assert.match(id, new RegExp(`^${UUID}$`))
      assert.include(started.stderr, `effect-mcp tasks get|result|cancel ${id} follows it`)
      yield* Deferred.await(server.started)

      const [text, json, bob, list, unknown] = yield* all(
        runCli([...alice, "tasks", "get", id]),
        runCli([...alice, "tasks", "get", id, "--json"]),
        runCli([...server.as("bob"), "tasks", "get", id]),
        runCli([...alice, "tasks", "list"]),
        runCli([...alice, "tasks", "get", "no-such-task"])
      )
      assertExit(text, 0)
      assert.match(text.stdout, new RegExp(`^task\\s+${id}$`, "m"))
      assert.match(text.stdout, /^server\s+127\.0\.0\.1$/m)
      assert.match(text.stdout, /^status\s+working$/m)
      assert.match(text.stdout, /^poll every\s+50 ms$/m)
      assert.match(text.stdout, /^ttl\s+3600000 ms \(1 h\)$/m)
      assertExit(json, 0)
      const state = parse(json)
      assert.strictEqual(state.server, "127.0.0.1")
      assert.strictEqual(state.taskId, id)
      assert.strictEqual(state.status, "working")
      assert.strictEqual(state.pollIntervalMs, 50)
      // another principal finds nothing
      assertExit(bob, 4)
      assertExit(list, 2)
      assert.include(list.stderr, "speaks 2026-07-28, whose tasks extension has no task list")
      assertExit(unknown, 4)

      const cancelled = yield* runCli([...alice, "tasks", "cancel", id])
      assertExit(cancelled, 0)
      assert.match(
        cancelled.stdout,
        new RegExp(`^cancelled task ${id} on 127\\.0\\.0\\.1 \\(status: cancelled\\)$`, "m")
      )
      assert.isTrue(yield* server.wasInterrupted, "the handler was interrupted")
      const after = yield* runCli([...alice, "tasks", "get", id, "--json"])
      assertExit(after, 0)
      assert.strictEqual(parse(after).status, "cancelled")
    })))

  it.live("tasks result waits for a task started by another run, showing its status, and prints its result", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* startHttpServer
      const alice = server.as("alice")
      const started = yield* runCli([...alice, "call", "build", "--no-wait", "--json", "--args", `{"target":"docs"}`])
      assertExit(started, 0)
      const { status, taskId } = parse(started)
      assert.strictEqual(status, "working")
      const waiting = yield* startCli([...alice, "tasks", "result", taskId])
      yield* waiting.stderrMatching(new RegExp(`^task ${taskId} working: building docs`, "m"))
      yield* Deferred.succeed(server.release, undefined)
      const ran = yield* waiting.exit
      assertExit(ran, 0)
      assert.strictEqual(ran.stdout, "built docs\n")
      assert.match(ran.stderr, new RegExp(`^task ${taskId} completed`, "m"))
    })))

  it.live("Ctrl-C while call waits for its task cancels the task (the handler is interrupted) and exits 130", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* startHttpServer
      const running = yield* startCli([...server.as("alice"), "call", "build", "--args", `{"target":"app"}`])
      const [, id] = yield* running.stderrMatching(new RegExp(`^task (${UUID}) working`, "m"))
      yield* running.signal("SIGINT")
      const ran = yield* running.exit
      assertExit(ran, 130)
      assert.include(ran.stderr, `interrupted: cancelling task ${id}`)
      assert.isTrue(yield* server.wasInterrupted, "the handler was interrupted")
      assert.deepStrictEqual(processesWith(ran.marker), [])
    })))

  it.live("2025-11-25: call --no-wait asks for a task, tasks list shows the principal's tasks, tasks get one", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* startHttpServer
      const alice = [...server.as("alice"), "--era", "legacy"]
      const started = yield* runCli([...alice, "call", "build", "--no-wait", "--args", `{"target":"lib"}`])
      assertExit(started, 0)
      const id = started.stdout.trim()
      assert.match(id, new RegExp(`^${UUID}$`))
      const [list, json, get, other] = yield* all(
        runCli([...alice, "tasks", "list"]),
        runCli([...alice, "tasks", "list", "--json"]),
        runCli([...alice, "tasks", "get", id, "--json"]),
        runCli([...server.as("bob"), "--era", "legacy", "tasks", "list", "--json"])
      )
      assertExit(list, 0)
      assert.match(list.stdout, /^TASK\s+SERVER\s+STATUS\s+UPDATED\s+MESSAGE$/m)
      assert.match(list.stdout, new RegExp(`^${id}\\s+127\\.0\\.0\\.1\\s+working\\s`, "m"))
      assertExit(json, 0)
      assert.deepStrictEqual(parse(json).map((row: any) => [row.taskId, row.server, row.status]), [[
        id,
        "127.0.0.1",
        "working"
      ]])
      assertExit(get, 0)
      assert.strictEqual(parse(get).status, "working")
      assertExit(other, 0)
      assert.deepStrictEqual(parse(other), [])
    })))
})

// -----------------------------------------------------------------------------
// The status lines
// -----------------------------------------------------------------------------

const recorder = (isTTY: boolean, columns = 80) =>
  Effect.gen(function*() {
    const writes = yield* Ref.make<ReadonlyArray<string>>([])
    const sink: Progress.Sink = { isTTY, columns, write: (text) => Ref.update(writes, (all) => [...all, text]) }
    return { sink, writes: Ref.get(writes) }
  })

const state = (status: "working" | "input_required" | "completed", statusMessage?: string) => ({
  taskId: "t1",
  status,
  ...(statusMessage === undefined ? {} : { statusMessage }),
  createdAt: "2026-11-25T00:00:00Z",
  lastUpdatedAt: "2026-11-25T00:00:00Z",
  ttlMs: null
})

describe("task status lines", () => {
  it.effect("off a terminal: a line per change, repeats skipped, at most 50 new messages a status", () =>
    Effect.gen(function*() {
      const { sink, writes } = yield* recorder(false)
      const scope = yield* Scope.make()
      const shown = yield* Tasks.display(sink, { messages: true }).pipe(Scope.provide(scope))
      yield* shown.state(state("working"))
      yield* shown.state(state("working"))
      for (let i = 1; i <= 60; i++) yield* shown.state(state("working", `step ${i}\x1b[2J`))
      yield* shown.state(state("completed", "done"))
      yield* Scope.close(scope, Exit.void)
      const all = yield* writes
      assert.strictEqual(all[0], "task t1 working\n")
      assert.strictEqual(all[1], "task t1 working: step 1\\x1b[2J\n")
      assert.strictEqual(all[50], "task t1 working: step 50\\x1b[2J\n")
      assert.strictEqual(all[51], "task t1 working: (more messages, not shown)\n")
      assert.strictEqual(all[52], "task t1 completed: done\n")
      assert.strictEqual(all.length, 53)
    }))

  it.effect("on a terminal: a new message redraws the line, a new status starts a line; --no-progress shows statuses only", () =>
    Effect.gen(function*() {
      const { sink, writes } = yield* recorder(true, 30)
      const scope = yield* Scope.make()
      const shown = yield* Tasks.display(sink, { messages: true }).pipe(Scope.provide(scope))
      yield* shown.state(state("working", "one"))
      yield* shown.state(state("working", "two and a message longer than the terminal"))
      yield* shown.state(state("input_required"))
      yield* Scope.close(scope, Exit.void)
      assert.deepStrictEqual(yield* writes, [
        "\rtask t1 working: one\x1b[K",
        "\rtask t1 working: two and a m…\x1b[K",
        "\n\rtask t1 input_required\x1b[K",
        "\n"
      ])

      const quiet = yield* recorder(false)
      const quietScope = yield* Scope.make()
      const statuses = yield* Tasks.display(quiet.sink, { messages: false }).pipe(Scope.provide(quietScope))
      yield* statuses.state(state("working", "one"))
      yield* statuses.state(state("working", "two"))
      yield* statuses.state(state("completed", "three"))
      yield* Scope.close(quietScope, Exit.void)
      assert.deepStrictEqual(yield* quiet.writes, ["task t1 working: one\n", "task t1 completed: three\n"])
    }))
})
