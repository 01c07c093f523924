/**
 * The health routes of `NodeMcpHttpServer`: liveness (`200` while the process
 * serves) and readiness (`503` while shutting down, or when the user's check
 * fails or takes too long).
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import type * as NodeMcpHttpServer from "../NodeMcpHttpServer.ts"

/** Whether the server is shutting down; set first when its layer closes. @internal */
export interface Status {
  closing: boolean
}

const headers = { "cache-control": "no-store" }

const answer = (status: number, text: string) => HttpServerResponse.text(text, { status, headers })

/** The routes, none when both paths are `false`. @internal */
export const routes = (
  options: NodeMcpHttpServer.HealthOptions | undefined,
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

/** Marks the server closing when the scope closes: built after the server, so closed before it. @internal */
export const markClosing = (status: Status): Layer.Layer<never> =>
  Layer.effectDiscard(Effect.addFinalizer(() =>
    Effect.sync(() => {
      status.closing = true
    })
  ))
