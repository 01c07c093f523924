/**
 * JSON-RPC 2.0 batches (2025-03-26 only) for the session engine: the answers
 * to a batch's requests are collected and sent back together, as one array,
 * once the last is known; invalid members and request ids already in use get
 * a `-32600` in that array.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as JsonRpc from "../../JsonRpc.ts"
import type * as McpError from "../../McpError.ts"

interface Batch {
  pending: number
  readonly responses: Array<JsonRpc.SuccessResponse | JsonRpc.ErrorResponse>
}

/** @internal */
export interface Batches {
  /** Every answer to a request goes through here. */
  readonly answer: (response: JsonRpc.SuccessResponse | JsonRpc.ErrorResponse) => Effect.Effect<void>
  /** A batched request that will get no answer (it was cancelled). */
  readonly unanswered: (id: JsonRpc.RequestId) => Effect.Effect<void>
  /** Whether a request of a batch with this id is still unanswered. */
  readonly has: (id: JsonRpc.RequestId) => boolean
  readonly onBatch: (values: ReadonlyArray<unknown>) => Effect.Effect<void>
}

/** @internal */
export const make = (options: {
  readonly send: (frame: JsonRpc.Frame) => Effect.Effect<void, McpError.McpError>
  readonly acceptBatches: () => boolean
  readonly isRunning: (id: JsonRpc.RequestId) => boolean
  readonly dispatch: (classified: JsonRpc.Classified) => Effect.Effect<void>
}): Batches => {
  const { acceptBatches, dispatch, isRunning, send } = options

  // the requests of a batch still unanswered, by id: their answers go back
  // together, as one array, once the last is known (JSON-RPC 2.0 batches)
  // (made at the first batch)
  let batches: Map<JsonRpc.RequestId, Batch> | undefined

  const flush = (batch: Batch) =>
    batch.pending === 0 && batch.responses.length > 0 ? send(batch.responses).pipe(Effect.ignore) : Effect.void

  // every answer to a request goes through here
  const answer = (response: JsonRpc.SuccessResponse | JsonRpc.ErrorResponse): Effect.Effect<void> => {
    const batch = response.id === null || batches === undefined ? undefined : batches.get(response.id)
    if (batch === undefined) {
      const sent = send(response)
      // a transport that sent at once answers with a successful exit: nothing to ignore
      return Exit.isExit(sent) && Exit.isSuccess(sent) ? Effect.void : Effect.ignore(sent)
    }
    batches!.delete(response.id!)
    batch.pending--
    batch.responses.push(response)
    return flush(batch)
  }

  // a batched request that will get no answer (it was cancelled)
  const unanswered = (id: JsonRpc.RequestId): Effect.Effect<void> => {
    const batch = batches?.get(id)
    if (batch === undefined) return Effect.void
    batches!.delete(id)
    batch.pending--
    return flush(batch)
  }

  const reply = (id: JsonRpc.RequestId | null, code: number, message: string) =>
    answer(JsonRpc.failure(id, { code, message }))

  // A batch (JSON-RPC 2.0 §6, 2025-03-26 only) is answered with one array:
  // an answer per request, and a `-32600` per invalid member or request id
  // already in use; sent once the last request is answered. An empty batch,
  // or one in another revision, gets one `-32600` with a null id.
  const onBatch = (values: ReadonlyArray<unknown>): Effect.Effect<void> => {
    if (values.length === 0) return reply(null, JsonRpc.ErrorCode.InvalidRequest, "Invalid Request: empty batch")
    if (!acceptBatches()) {
      return reply(null, JsonRpc.ErrorCode.InvalidRequest, "Invalid Request: JSON-RPC batches are not supported")
    }
    const open = batches ??= new Map()
    const batch: Batch = { pending: 0, responses: [] }
    const members: Array<JsonRpc.Classified> = []
    const refuse = (id: JsonRpc.RequestId | null, reason: string) =>
      batch.responses.push(
        JsonRpc.failure(id, { code: JsonRpc.ErrorCode.InvalidRequest, message: `Invalid Request: ${reason}` })
      )
    for (const value of values) {
      const classified = JsonRpc.classify(value)
      if (classified._tag === "Invalid") {
        refuse(classified.id, classified.reason)
        continue
      }
      if (classified._tag === "Request") {
        const id = classified.message.id
        if (isRunning(id) || open.has(id)) {
          refuse(id, `Duplicate request id ${id}`)
          continue
        }
        open.set(id, batch)
        batch.pending++
      }
      members.push(classified)
    }
    const dispatched = Effect.forEach(members, dispatch, { discard: true })
    // with requests, the last answer sends the array
    return batch.pending === 0 ? Effect.andThen(dispatched, flush(batch)) : dispatched
  }

  return { answer, unanswered, has: (id) => batches !== undefined && batches.has(id), onBatch }
}
