/**
 * The `echo` tool of the `effect-ai` rows, written as an Effect user writes it
 * for effect's own MCP server (`effect/ai`, effect 4.1.0): a `Tool.make` with
 * Schema parameters in a `Toolkit`, registered with `McpServer.toolkit`.
 * Shared by `inprocess.ts` (`McpTest.makeClient`), `stdio-effect-ai.ts` and
 * `http-effect-ai.ts`.
 *
 * effect/ai answers a tool call with its success value twice: as
 * `structuredContent` and JSON-encoded in one text block. It has no way to
 * answer a bare text block, so the echo answers `{ text }`: the text block is
 * `{"text":"The quick brown fox …"}` (the other rows' block is the bare text)
 * and `structuredContent` is `{ text }`. A success schema that is not an
 * object (`Schema.String`) would give a `structuredContent` and an
 * `outputSchema` that are not objects, which the spec does not allow.
 *
 * Only 2025-11-25 is offered (`McpProtocol.v2025_11_25`), the revision every
 * other headline row speaks.
 */
import * as McpProtocol from "effect/ai/McpProtocol"
import * as McpServer from "effect/ai/McpServer"
import * as Tool from "effect/ai/Tool"
import * as Toolkit from "effect/ai/Toolkit"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"

export const effectAiInfo = { name: "bench-server", version: "0.0.0" }

export const effectAiProtocols = [McpProtocol.v2025_11_25] as const

const Echo = Tool.make("echo", {
  description: "Echoes text",
  parameters: Schema.Struct({ text: Schema.String }),
  success: Schema.Struct({ text: Schema.String })
})

const kit = Toolkit.make(Echo)

/** The registrations of every effect-ai server of the benchmarks: the echo toolkit. */
export const effectAiRegistrations = McpServer.toolkit(kit).pipe(
  Layer.provide(kit.toLayer({ echo: ({ text }) => Effect.succeed({ text }) }))
)
