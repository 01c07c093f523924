/**
 * An MCP client in a web page, as an app author writes it: `McpClient` over
 * Streamable HTTP (`McpHttpClient`) on the browser's `fetch`
 * (`FetchHttpClient`), nothing from Node. The page is told the server and the
 * era in its query string (`?server=http://127.0.0.1:3000/mcp&era=modern`,
 * era `modern`, `legacy` or `auto`); it connects, lists the tools, calls
 * `greet`, then `ask_name`, whose elicitation the page answers with the form
 * it shows the user (the request's message, an input, a Send button), then
 * `add_extra`, which adds a tool: the tools the client keeps follow the
 * change (a `notifications/tools/list_changed` in a legacy session, the
 * `subscriptions/listen` stream in 2026-07-28) and the page calls the new
 * tool. The client stays connected until the user presses Disconnect, which
 * ends its session. Each step is written into the page (`#log`) and into
 * `window.results`, which `runtimes.browser.test.ts` reads; a failure lands
 * in `results.error` and `#error`.
 *
 * Bundled for the browser with rolldown by `packages/platform-node/test/utils/browser.ts`.
 */
// the DOM's types wherever this file is checked (scratchpad/conformance's tsconfig takes ../runtimes/*.ts, for Node)
/// <reference lib="dom" />
import { McpClient, McpContent, McpHttpClient, type McpSchema } from "@effect-mcp/core"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"

/** What the page did, for whoever looks at `window.results`. */
export interface Results {
  era?: string
  protocolVersion?: string
  serverName?: string
  tools?: Array<string>
  greeting?: string
  /** The message the server's elicitation showed, and what the call returned once the user answered. */
  elicitation?: { readonly message: string; readonly answer: string; readonly result: string }
  added?: string
  /** The tools after the list changed (the client's cached list, refreshed by itself). */
  toolsAfterChange?: Array<string>
  extra?: string
  /** Everything above went through; the client is still connected. */
  done?: boolean
  /** The user pressed Disconnect and the client's session ended. */
  closed?: boolean
  error?: string
}

// no global `Window` augmentation: other pages' programs are checked in the same projects
const results: Results = {}
;(window as unknown as { results: Results }).results = results

const params = new URLSearchParams(location.search)
const server = params.get("server") ?? `${location.origin}/mcp`
const era = (params.get("era") ?? "auto") as "modern" | "legacy" | "auto"

const byId = <E extends HTMLElement>(id: string): E => document.getElementById(id) as E

const log = (line: string) =>
  Effect.sync(() => {
    const item = document.createElement("li")
    item.textContent = line
    byId("log").append(item)
  })

/**
 * The elicitation handler: shows the server's message above the form (the
 * input named after the first field the server asks for) and waits for the
 * user to send it; the answer is the input's value, for that field.
 */
const askTheUser = (request: McpSchema.ElicitRequestFormParams) =>
  Effect.callback<McpSchema.ElicitResult>((resume) => {
    const form = byId<HTMLFormElement>("elicitation")
    const input = byId<HTMLInputElement>("answer")
    const field = Object.keys(request.requestedSchema.properties)[0] ?? "answer"
    byId("question").textContent = request.message
    input.placeholder = field
    form.hidden = false
    const onSubmit = (event: SubmitEvent) => {
      event.preventDefault()
      form.hidden = true
      form.removeEventListener("submit", onSubmit)
      const answer = input.value
      results.elicitation = { message: request.message, answer, result: "" }
      resume(Effect.succeed({ action: "accept", content: { [field]: answer } }))
    }
    form.addEventListener("submit", onSubmit)
    return Effect.sync(() => {
      form.hidden = true
      form.removeEventListener("submit", onSubmit)
    })
  })

const Client = McpClient.layer({
  clientInfo: { name: "browser-page", version: "1.0.0" },
  era,
  elicitation: { form: askTheUser }
}).pipe(
  Layer.provide(McpHttpClient.layer({ url: server })),
  Layer.provide(FetchHttpClient.layer)
)

const names = (tools: ReadonlyArray<McpSchema.Tool>) => tools.map((tool) => tool.name).sort()

const program = Effect.gen(function*() {
  const client = yield* McpClient.McpClient
  results.era = client.era
  results.protocolVersion = client.protocolVersion
  results.serverName = client.serverInfo.name
  yield* log(`connected to ${client.serverInfo.name} (${client.era}, ${client.protocolVersion})`)

  results.tools = names(yield* client.tools.get)
  yield* log(`tools: ${results.tools.join(", ")}`)
  // follows the list from now on: the first list that has `extra` in it
  const changed = yield* client.tools.changes.pipe(
    Stream.filter((tools) => tools.some((tool) => tool.name === "extra")),
    Stream.runHead,
    Effect.forkScoped({ startImmediately: true })
  )

  results.greeting = McpContent.textOf(yield* client.callTool("greet", { name: "browser" }))
  yield* log(results.greeting)

  const asked = McpContent.textOf(yield* client.callTool("ask_name", {}))
  if (results.elicitation !== undefined) results.elicitation = { ...results.elicitation, result: asked }
  yield* log(asked)

  results.added = McpContent.textOf(yield* client.callTool("add_extra", {}))
  const after = yield* Fiber.join(changed)
  if (after._tag === "Some") results.toolsAfterChange = names(after.value)
  yield* log(`tools now: ${(results.toolsAfterChange ?? []).join(", ")}`)

  results.extra = McpContent.textOf(yield* client.callTool("extra", {}))
  yield* log(results.extra)
})

/** Waits for the user to press Disconnect. */
const disconnectPressed = Effect.callback<void>((resume) => {
  const button = byId<HTMLButtonElement>("disconnect")
  button.disabled = false
  const onClick = () => resume(Effect.void)
  button.addEventListener("click", onClick, { once: true })
  return Effect.sync(() => button.removeEventListener("click", onClick))
})

Effect.runFork(
  Effect.gen(function*() {
    yield* Effect.scoped(program)
    results.done = true
    byId("status").textContent = "done"
    // the client stays connected (its streams open) until the user disconnects
    yield* disconnectPressed
  }).pipe(
    Effect.provide(Client),
    Effect.matchCause({
      onSuccess: () => {
        results.closed = true
        byId("status").textContent = "disconnected"
      },
      onFailure: (cause) => {
        results.error = Cause.pretty(cause)
        byId("error").textContent = results.error
        byId("status").textContent = "failed"
      }
    })
  )
)
