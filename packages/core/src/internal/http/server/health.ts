/**
 * The health routes of an MCP HTTP server (`NodeMcpHttpServer`,
 * `McpHttpServer.toWebHandler`): liveness (`200` while it serves) and
 * readiness (`503` while shutting down, or when the user's check fails or
 * takes too long), with the layer that marks them shutting down, built
 * after the serving layer so that it closes first.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import type * as McpHttpServer from "../../../McpHttpServer.ts"

interface Status {
  closing: boolean
}

const noStore = { "cache-control": "no-store" }

const answer = (status: number, text: string) => HttpServerResponse.text(text, { status, headers: noStore })

// none when both paths are `false`
const routes = (
  options: McpHttpServer.HealthOptions | undefined,
  status: Status
): Layer.Layer<never, never, HttpRouter.HttpRouter> => {
  const healthPath = options?.healthPath ?? "/healthz"
  const readyPath = options?.readyPath ?? "/readyz"
  const check = options?.readiness
  const timeout = Duration.fromInputUnsafe(options?.readinessTimeout ?? Duration.seconds(1))
  const ready: Effect.Effect<HttpServerResponse.HttpServerResponse> = Effect.suspend(() => {
    if (status.closing) return Effect.succeed(answer(503, "shutting down\n"))
    if (check === undefined) return Effect.succeed(answer(200, "ready\n"))
    return check.pipe(
      Effect.timeout(timeout),
      Effect.matchCause({
        onFailure: () => answer(503, "not ready\n"),
        onSuccess: () => status.closing ? answer(503, "shutting down\n") : answer(200, "ready\n")
      })
    )
  })
  const layers: Array<Layer.Layer<never, never, HttpRouter.HttpRouter>> = []
  if (healthPath !== false) layers.push(HttpRouter.add("GET", healthPath, Effect.sync(() => answer(200, "ok\n"))))
  if (readyPath !== false) layers.push(HttpRouter.add("GET", readyPath, ready))
  return Layer.mergeAll(Layer.empty, ...layers)
}

/** `serve` given the health routes; they answer `503` from the moment its layer starts to close. @internal */
export const withHealth = <A, E, R>(
  options: McpHttpServer.HealthOptions | undefined,
  serve: (health: Layer.Layer<never, never, HttpRouter.HttpRouter>) => Layer.Layer<A, E, R>
): Layer.Layer<A, E, R> => {
  const status: Status = { closing: false }
  // built after the serving layer, so closed before it
  const markClosing = Layer.effectDiscard(Effect.addFinalizer(() =>
    Effect.sync(() => {
      status.closing = true
    })
  ))
  return markClosing.pipe(Layer.provideMerge(serve(routes(options, status))))
}
