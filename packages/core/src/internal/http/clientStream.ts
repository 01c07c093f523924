/**
 * One connection of an SSE stream, for the Streamable HTTP client transport:
 * its events are routed as they arrive (or all at once, for a body of known
 * length), with the cursor a resumed connection starts from.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Stream from "effect/Stream"
import * as ClientCommon from "./clientCommon.ts"

/**
 * Where an SSE stream resumes: the last event id seen and the server's `retry`, in ms.
 *
 * @internal
 */
export interface Cursor {
  lastEventId: string | undefined
  retry: number | undefined
}

/**
 * How one connection of an SSE stream went.
 *
 * @internal
 */
export interface Outcome {
  /** Every response the stream owed has arrived. */
  readonly answered: boolean
  /** How many events it delivered (a connection that delivered none does not reset the backoff). */
  readonly events: number
}

/**
 * Reads one connection of an SSE stream: every message goes to `route`,
 * and reading stops once the `expected` responses have arrived. A body
 * with a (small) declared length is read whole, without a stream.
 *
 * @internal
 */
export const reader = (url: string, maxEventSize: number | undefined) =>
(
  response: HttpClientResponse.HttpClientResponse,
  cursor: Cursor,
  route: (value: unknown) => Effect.Effect<void>,
  expected: number
): Effect.Effect<Outcome> =>
  Effect.suspend(() => {
    let responses = 0
    let events = 0
    const onItem = (item: ClientCommon.SseItem): Effect.Effect<boolean> => {
      switch (item._tag) {
        case "Retry":
          cursor.retry = Duration.toMillis(item.duration)
          return Effect.succeed(true)
        case "TooLarge":
          return Effect.as(Effect.logWarning("an SSE event over the size limit was dropped"), true)
        case "Event": {
          events++
          if (item.id !== undefined) cursor.lastEventId = item.id
          if (!ClientCommon.isMessageEvent(item)) return Effect.succeed(true)
          // an array goes to the session whole: a batch outside 2025-03-26 is refused there
          const value = ClientCommon.parseFrame(item.data)
          for (const member of Array.isArray(value) ? value : [value]) if (ClientCommon.isResponse(member)) responses++
          return Effect.as(route(value), responses < expected)
        }
      }
    }
    const eachWhile = (items: ReadonlyArray<ClientCommon.SseItem>, index: number): Effect.Effect<void> =>
      index === items.length
        ? Effect.void
        : Effect.flatMap(onItem(items[index]!), (more) => more ? eachWhile(items, index + 1) : Effect.void)
    const items = () =>
      ClientCommon.decodeSse(response.stream, maxEventSize).pipe(
        Stream.mapError(ClientCommon.requestError)
      )
    const read = ClientCommon.wholeSseLength(response) !== undefined
      ? Effect.flatMap(
        Effect.mapError(response.text, ClientCommon.requestError),
        (text) => eachWhile(ClientCommon.parseSse(text, maxEventSize), 0)
      )
      : Stream.runForEachWhile(items(), onItem)
    return read.pipe(
      Effect.map(() => ({ answered: responses >= expected, events })),
      // a dropped connection is one more reason to resume, not an error
      Effect.catch((error) =>
        Effect.as(Effect.logDebug(`an SSE stream of ${url} dropped: ${error.message}`), {
          answered: responses >= expected,
          events
        })
      )
    )
  })
