/**
 * The conformance server's tools for the `tasks-*` server scenarios of
 * `@modelcontextprotocol/conformance` 0.2.0-alpha.12 (the
 * `io.modelcontextprotocol/tasks` extension, SEP-2663): the scenarios call
 * them by name. `task` says whether a call may (`"optional"`), must
 * (`"required"`) or must not (the default) run as a task; the handlers are
 * written as for any other tool (a task's asks become its `input_required`
 * status, a cancelled task interrupts its handler).
 */
import { McpServer, McpTool } from "@effect-mcp/core"
import { Duration, Effect, Schema } from "effect"

const NoInput = Schema.Struct({})

/** Answered `{ confirm: true }` by the scenarios. */
const Confirm = Schema.Struct({ confirm: Schema.Boolean })

/** Answered `{ name: "partial-N", confirm: true }` by `tasks-mrtr-partial-fulfillment`. */
const NameAndConfirm = Schema.Struct({ name: Schema.String, confirm: Schema.Boolean })

export const greet = McpTool.make("greet", {
  description: "Greets someone at once (never a task)",
  input: Schema.Struct({ name: Schema.String }),
  handler: ({ name }) => Effect.succeed(`Hello, ${name}!`)
})

export const slowCompute = McpTool.make("slow_compute", {
  description: "Works for `seconds` seconds, as a task when the client supports tasks",
  input: Schema.Struct({ seconds: Schema.Number, label: Schema.optionalKey(Schema.String) }),
  task: "optional",
  handler: ({ label, seconds }) =>
    Effect.as(
      Effect.sleep(Duration.seconds(seconds)),
      `computed ${label ?? "(no label)"} in ${seconds} second(s)`
    )
})

export const failingJob = McpTool.make("failing_job", {
  description: "A task that fails: its result has isError true",
  input: NoInput,
  task: "required",
  handler: () =>
    Effect.andThen(Effect.sleep(Duration.millis(200)), Effect.fail(new Error("failing_job failed, as it always does")))
})

export const protocolErrorJob = McpTool.make("protocol_error_job", {
  description: "Fails with a JSON-RPC error (a task of it ends failed)",
  input: NoInput,
  task: "optional",
  handler: () => Effect.fail(McpTool.protocolError(-32603, "protocol_error_job failed with a protocol error"))
})

export const confirmDelete = McpTool.make("confirm_delete", {
  description: "Asks for a confirmation, then deletes the file (pretends to)",
  input: Schema.Struct({ filename: Schema.String }),
  task: "optional",
  handler: ({ filename }, context) =>
    Effect.map(
      context.elicit({ message: `Delete ${filename}?`, schema: Confirm }),
      (answer) => answer.action === "accept" && answer.content.confirm ? `deleted ${filename}` : `kept ${filename}`
    )
})

const askPart = (context: McpServer.RequestContext, n: number) =>
  Effect.map(
    context.elicit({ message: `Part ${n}: your name, and confirm`, schema: NameAndConfirm, inputKey: `part_${n}` }),
    (answer) => answer.action === "accept" ? `${answer.content.name} (${answer.content.confirm})` : `part ${n} declined`
  )

export const multiInput = McpTool.make("multi_input", {
  description: "Asks two questions at once, then completes",
  input: NoInput,
  task: "optional",
  handler: (_, context) =>
    Effect.map(
      Effect.all([askPart(context, 1), askPart(context, 2)], { concurrency: "unbounded" }),
      (parts) => `got ${parts.join(" and ")}`
    )
})

export const toolWithTask = McpTool.make("test_tool_with_task", {
  description: "Asks for a name (input-required rounds), then works as a task and greets",
  input: NoInput,
  task: "required",
  taskAfter: "200 millis",
  handler: (_, context) =>
    Effect.gen(function*() {
      const answer = yield* context.elicit({
        message: "What is your name?",
        schema: Schema.Struct({ name: Schema.String }),
        inputKey: "user_name"
      })
      yield* Effect.sleep("1 second")
      return `Hello, ${answer.action === "accept" ? answer.content.name : "stranger"}!`
    })
})

/** Every definition of this file. */
export const definitions = [
  greet,
  slowCompute,
  failingJob,
  protocolErrorJob,
  confirmDelete,
  multiInput,
  toolWithTask
] as const
