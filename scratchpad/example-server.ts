/**
 * An example MCP server over stdio: typed tools (one with structured output,
 * one that reports progress and logs), a static resource, a resource template
 * with typed variables and completion, and a prompt.
 *
 *   node --conditions=development scratchpad/example-server.ts
 */
import { McpContent, McpPrompt, McpResource, McpServer, McpTool } from "@effect-mcp/core"
import { NodeMcpStdio } from "@effect-mcp/platform-node"
import { Effect, Layer, Schema } from "effect"

const Forecast = Schema.Struct({
  city: Schema.String,
  celsius: Schema.Finite,
  conditions: Schema.Literals(["sunny", "cloudy", "rain"])
})

const weather = McpTool.make("weather", {
  title: "Weather",
  description: "Today's forecast for a city",
  input: Schema.Struct({ city: Schema.String.annotate({ description: "City name" }) }),
  output: Forecast,
  annotations: { readOnlyHint: true, openWorldHint: false },
  handler: ({ city }) => Effect.succeed({ city, celsius: 21.5, conditions: "sunny" as const })
})

const countdown = McpTool.make("countdown", {
  description: "Counts down, reporting progress and logging each step",
  input: Schema.Struct({ from: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 10 })) }),
  handler: ({ from }, context) =>
    Effect.gen(function*() {
      for (let n = from; n > 0; n--) {
        yield* context.reportProgress({ progress: from - n + 1, total: from, message: `${n}…` })
        yield* Effect.logInfo(`countdown at ${n}`)
        yield* Effect.sleep("20 millis")
      }
      return [McpContent.text("liftoff"), McpContent.resourceLink("notes://launch", "launch notes")]
    })
})

const readme = McpResource.make({
  uri: "notes://readme",
  name: "readme",
  title: "Read me",
  mimeType: "text/markdown",
  read: () => Effect.succeed("# Example server\n\nTry the `weather` tool.")
})

const notes = McpResource.template({
  uriTemplate: "notes://{topic}{?page}",
  name: "notes",
  mimeType: "text/plain",
  variables: { page: Schema.FiniteFromString },
  complete: { topic: (value) => Effect.succeed(["launch", "landing", "weather"].filter((t) => t.startsWith(value))) },
  read: ({ page, topic }) => Effect.succeed(`Notes on ${topic}, page ${page ?? 1}`)
})

const explain = McpPrompt.make({
  name: "explain",
  description: "Explain a topic at a level",
  arguments: Schema.Struct({
    topic: Schema.String,
    level: Schema.optionalKey(Schema.Literals(["beginner", "expert"]))
  }),
  complete: { level: (value) => Effect.succeed(["beginner", "expert"].filter((l) => l.startsWith(value))) },
  get: ({ level, topic }) => Effect.succeed(`Explain ${topic} to ${level === "expert" ? "an expert" : "a beginner"}.`)
})

const Server = McpServer.register(weather, countdown, readme, notes, explain).pipe(
  Layer.provideMerge(
    McpServer.layer({ name: "example-server", version: "1.0.0", instructions: "Ask for the weather." })
  )
)

// serve stdin/stdout until the client closes stdin, then exit 0 (logs go to stderr,
// and the handlers' Effect.log calls also to the client)
NodeMcpStdio.runServer(Server)
