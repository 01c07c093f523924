/**
 * A group connector whose connections can be cut and refused: in-memory
 * servers by URL (`McpGroup.http(url)` params), for tests of going down and
 * coming back.
 */
import { Context, Deferred, Effect, Layer, Stream } from "effect"
import * as McpError from "../../src/McpError.ts"
import * as McpGroup from "../../src/McpGroup.ts"
import type * as McpServer from "../../src/McpServer.ts"
import * as McpTransport from "../../src/McpTransport.ts"

export interface Flaky {
  readonly layer: Layer.Layer<McpGroup.Connector>
  /** Cuts the current connection to `url` (its transport fails). */
  readonly cut: (url: string) => Effect.Effect<void>
  /** Refuses (or accepts again) new connections to `url`. */
  readonly setOnline: (url: string, online: boolean) => Effect.Effect<void>
  readonly attempts: (url: string) => Effect.Effect<number>
}

export const makeFlaky = (servers: Record<string, Layer.Layer<McpServer.McpServer>>) =>
  Effect.gen(function*() {
    const cuts = new Map<string, Deferred.Deferred<void>>()
    const offline = new Set<string>()
    const attempts = new Map<string, number>()
    const transport = (url: string): Layer.Layer<McpTransport.McpTransport, McpError.McpError> =>
      Layer.effect(
        McpTransport.McpTransport,
        Effect.gen(function*() {
          attempts.set(url, (attempts.get(url) ?? 0) + 1)
          if (offline.has(url)) return yield* McpError.transport(`connection refused: ${url}`)
          const cut = yield* Deferred.make<void>()
          cuts.set(url, cut)
          const inner = yield* Layer.build(McpGroup.transportInMemory(servers[url]!))
          const base = Context.get(inner, McpTransport.McpTransport)
          return McpTransport.McpTransport.of({
            ...base,
            incoming: base.incoming.pipe(
              Stream.interruptWhen(
                Effect.andThen(Deferred.await(cut), Effect.fail(McpError.transport(`connection reset: ${url}`)))
              )
            )
          })
        })
      )
    const flaky: Flaky = {
      layer: Layer.succeed(McpGroup.Connector, {
        transport: (params) =>
          params._tag === "InMemory"
            ? McpGroup.transportInMemory(params.server)
            : transport((params as { url: string }).url)
      }),
      cut: (url) => Effect.suspend(() => Deferred.succeed(cuts.get(url)!, undefined)).pipe(Effect.asVoid),
      setOnline: (url, online) =>
        Effect.sync(() => {
          if (online) offline.delete(url)
          else offline.add(url)
        }),
      attempts: (url) => Effect.sync(() => attempts.get(url) ?? 0)
    }
    return flaky
  })
