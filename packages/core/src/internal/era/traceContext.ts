/**
 * W3C trace context in `_meta` (`traceparent`, `tracestate`), both eras and
 * both roles: a server reads it as the parent of a handler's span; a client
 * writes the current span into it. Either only when a tracer is installed
 * (a span of the default tracer goes nowhere) or, on the server, when the
 * client sent one.
 *
 * @internal
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as HttpTraceContext from "effect/http/HttpTraceContext"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"
import { MetaKey } from "../schema/stateless.ts"

/** The tracer of a program that installed none. @internal */
export const untraced = Context.get(Context.empty(), Tracer.Tracer)

/** The span a request's `_meta` names as its parent, if any. @internal */
export const parentOf = (meta: Readonly<Record<string, unknown>> | undefined): Tracer.ExternalSpan | undefined => {
  const traceparent = meta?.[MetaKey.traceparent]
  if (typeof traceparent !== "string") return undefined
  return Option.getOrUndefined(HttpTraceContext.w3c({ traceparent } as any))
}

/**
 * The `_meta` keys of the current span (`traceparent`), or `undefined` when
 * there is none or no tracer is installed.
 *
 * @internal
 */
export const current: Effect.Effect<Readonly<Record<string, string>> | undefined> = Effect.withFiber((fiber) => {
  if (fiber.getRef(Tracer.Tracer) === untraced) return Effect.undefined
  return Effect.map(Effect.option(Effect.currentParentSpan), (span) =>
    Option.isNone(span) ? undefined : {
      [MetaKey.traceparent]: `00-${span.value.traceId.padStart(32, "0")}-${span.value.spanId}-${
        span.value.sampled ? "01" : "00"
      }`
    })
})
