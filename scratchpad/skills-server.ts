/**
 * An example skills server over stdio (the Skills extension, SEP-2640): the
 * skills under `scratchpad/skills/` (or the folder given as the first
 * argument), each folder with a `SKILL.md`, served with `skills/list`,
 * `skills/get`, `resources/directory/read` and `resources/read`. Every file
 * is listed with its digest and size; a file edited after the server
 * started is refused on read until the catalog is reloaded (here: on
 * SIGHUP).
 *
 *   node --conditions=development scratchpad/skills-server.ts [folder]
 */
import { McpServer, McpSkills } from "@effect-mcp/core"
import { NodeMcpSkills, NodeMcpStdio } from "@effect-mcp/platform-node"
import { Console, Effect, Layer, Queue, Stream } from "effect"
import { fileURLToPath } from "node:url"

const folder = process.argv[2] ?? fileURLToPath(new URL("./skills", import.meta.url))

const server = Layer.unwrap(Effect.gen(function*() {
  const catalog = yield* NodeMcpSkills.load(folder)
  for (const warning of yield* catalog.warnings) yield* Console.error(`skills: ${warning.path}: ${warning.message}`)
  yield* Console.error(`skills: serving ${(yield* catalog.entries).map((skill) => skill.uri).join(", ")}`)
  // kill -HUP <pid>: walk the folder again; the clients hear of a changed listing
  const reloads = Stream.callback<void>((queue) =>
    Effect.acquireRelease(
      Effect.sync(() => {
        const onHangup = () => void Queue.offerUnsafe(queue, undefined)
        process.on("SIGHUP", onHangup)
        return onHangup
      }),
      (onHangup) => Effect.sync(() => process.off("SIGHUP", onHangup))
    )
  )
  yield* reloads.pipe(
    Stream.runForEach(() =>
      catalog.reload.pipe(
        Effect.flatMap((changes) => Console.error(`skills: reloaded ${JSON.stringify(changes)}`)),
        Effect.catch((error) =>
          Console.error(`skills: reload failed, still serving the last catalog: ${error.message}`)
        )
      )
    ),
    Effect.forkScoped
  )
  return McpServer.layer({ name: "skills-example", version: "1.0.0" }, McpSkills.extension(catalog))
}))

NodeMcpStdio.runServer(server)
