/**
 * The effect-mcp gateway of `bench/gateway.ts`: `McpGateway` over a group of
 * one stdio server, `echo` (the command line after the era: normally
 * `node [flags] bench/servers/stdio-ours.ts`, spawned by the group's Node
 * connector), served by `NodeMcpHttpServer.layer({ port: 0, host:
 * "127.0.0.1" })` (JSON answers, the default) — the composition of
 * `NodeMcpGateway.layer({ servers })` (the group's client options
 * `McpGateway.clientOptions`), with the group kept in context so that the era
 * it settled on with the server can be reported, and with the group's default
 * `startupFailure: "fail"` (a server that cannot start fails the benchmark
 * instead of being retried). With one server, names are not prefixed: the
 * tool is `echo` in front too.
 *
 * The first argument is the era of the group's client with the server:
 * `auto` (the default of `McpGroup.stdio`; it settles on 2026-07-28 with our
 * server), `legacy` or `modern`.
 *
 * Prints `{"url":…,"upstream":{"era":…,"protocolVersion":…}}` on stdout once
 * listening; when stdin ends, it stops as on SIGTERM (`NodeMcpRuntime.runMain`:
 * the HTTP server and the group close, the upstream processes are shut down),
 * so a `--cpu-prof` profile is written.
 *
 *   node --conditions=development bench/servers/gateway-ours.ts auto node --conditions=development bench/servers/stdio-ours.ts
 */
import * as McpGateway from "@effect-mcp/core/McpGateway"
import * as McpGroup from "@effect-mcp/core/McpGroup"
import * as NodeMcpGroup from "@effect-mcp/platform-node/NodeMcpGroup"
import * as NodeMcpHttpServer from "@effect-mcp/platform-node/NodeMcpHttpServer"
import * as NodeMcpRuntime from "@effect-mcp/platform-node/NodeMcpRuntime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

const [era, command, ...args] = process.argv.slice(2)
if (era !== "auto" && era !== "legacy" && era !== "modern") {
  throw new Error(`usage: gateway-ours.ts auto|legacy|modern COMMAND [ARGS…]; got era ${era}`)
}
if (command === undefined) throw new Error("usage: gateway-ours.ts auto|legacy|modern COMMAND [ARGS…]; no command")

// as `NodeMcpGateway.layer` makes it: the group's client options are the gateway's
const Group = NodeMcpGroup.layer({
  servers: { echo: McpGroup.stdio(command, args, { era }) },
  client: McpGateway.clientOptions
})
const Gateway = McpGateway.layer({ name: "bench-gateway", version: "0.0.0" }).pipe(Layer.provideMerge(Group))
const Http = NodeMcpHttpServer.layer({ port: 0, host: "127.0.0.1" }).pipe(Layer.provideMerge(Gateway))

NodeMcpRuntime.runMain(
  Effect.gen(function*() {
    const url = yield* NodeMcpHttpServer.url()
    const group = yield* McpGroup.McpGroup
    const status = (yield* group.servers).find((server) => server.name === "echo")
    yield* Effect.sync(() => {
      process.stdout.write(
        `${JSON.stringify({ url, upstream: { era: status?.era, protocolVersion: status?.protocolVersion } })}\n`
      )
      process.stdin.resume()
      process.stdin.on("end", () => process.kill(process.pid, "SIGTERM"))
    })
    return yield* Effect.never
  }).pipe(Effect.provide(Http))
)
