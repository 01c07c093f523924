/**
 * POST: the checks of a request's headers and body, then one of four paths:
 * a 2026-07-28 request is checked (`modern.ts`) and served by the session
 * all modern requests share; an `initialize` opens a session; in stateless
 * mode each POST is served by a session of its own; otherwise the messages
 * go to the session the `Mcp-Session-Id` header names, their requests
 * answered through an exchange (`exchange.ts`).
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as HttpIncomingMessage from "effect/http/HttpIncomingMessage"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Queue from "effect/Queue"
import * as Result from "effect/Result"
import * as JsonRpc from "../../../JsonRpc.ts"
import type * as McpAuth from "../../../McpAuth.ts"
import * as McpSchema from "../../../McpSchema.ts"
import * as Bearer from "../../auth/bearer.ts"
import { acceptsBatches } from "../../era/stateful.ts"
import * as Guard from "../guard.ts"
import * as Cluster from "./cluster.ts"
import * as Exchange from "./exchange.ts"
import * as Modern from "./modern.ts"
import * as Responses from "./responses.ts"
import * as Sessions from "./sessions.ts"
import * as Shutdown from "./shutdown.ts"
import type * as State from "./state.ts"

const STATELESS_INIT_ID = "effect-mcp/stateless-initialize"

const batchesUnsupported = () =>
  Responses.error(400, JsonRpc.ErrorCode.InvalidRequest, "Invalid Request: JSON-RPC batches are not supported")

const tooManySessions = (id: JsonRpc.RequestId | null = null) =>
  Responses.error(503, JsonRpc.ErrorCode.ServerError, "Service Unavailable: too many sessions", { id })

// JSON text is UTF-8 (RFC 8259 §8.1): a body that is not is a parse error, never
// a text with replacement characters that happens to parse
const utf8 = new TextDecoder("utf-8", { fatal: true })

const readBody = (state: State.State, request: HttpServerRequest.HttpServerRequest) =>
  request.arrayBuffer.pipe(
    Effect.provideService(HttpIncomingMessage.MaxBodySize, state.maxBody),
    Effect.map((bytes) => {
      const text = Result.try(() => utf8.decode(bytes))
      if (Result.isFailure(text)) {
        return Result.fail(
          Responses.error(400, JsonRpc.ErrorCode.ParseError, "Parse error: the body is not valid UTF-8")
        )
      }
      const parsed = Result.try(() => JSON.parse(text.success) as unknown)
      return Result.isSuccess(parsed)
        ? Result.succeed<unknown>(parsed.success)
        : Result.fail(Responses.error(400, JsonRpc.ErrorCode.ParseError, "Parse error: the body is not JSON"))
    }),
    Effect.catch((error) =>
      Effect.succeed(Result.fail(
        error.reason._tag === "RequestParseError" && error.reason.reason === "BodyTooLarge"
          ? Responses.error(413, JsonRpc.ErrorCode.InvalidRequest, "The body is too large")
          : Responses.error(400, JsonRpc.ErrorCode.ParseError, "Parse error: the body could not be read")
      ))
    )
  )

/** Answers a POST. @internal */
export const handle: State.Handler = (state, request, auth) =>
  Effect.gen(function*() {
    const headers = request.headers
    if (!Guard.acceptsPost(headers["accept"])) {
      return Responses.error(
        406,
        JsonRpc.ErrorCode.ServerError,
        "Not Acceptable: accept both application/json and text/event-stream"
      )
    }
    if (Guard.contentType(headers["content-type"]) !== "application/json") {
      return Responses.error(
        415,
        JsonRpc.ErrorCode.ServerError,
        "Unsupported Media Type: the body must be application/json"
      )
    }
    const body = yield* readBody(state, request)
    if (Result.isFailure(body)) return body.failure
    // shutdown began while the body was read
    if (state.closing) return Shutdown.refused()
    const batch = Array.isArray(body.success)
    const values: ReadonlyArray<unknown> = batch ? body.success as ReadonlyArray<unknown> : [body.success]
    if (values.length === 0) {
      return Responses.error(400, JsonRpc.ErrorCode.InvalidRequest, "Invalid Request: empty batch")
    }
    const messages: Array<JsonRpc.Request | JsonRpc.Notification | JsonRpc.SuccessResponse | JsonRpc.ErrorResponse> = []
    let requests = 0
    let initialize: JsonRpc.Request | undefined
    for (const value of values) {
      const classified = JsonRpc.classify(value)
      if (classified._tag === "Invalid") {
        // a batch is refused whole, and no one member's id names it
        return Responses.error(400, JsonRpc.ErrorCode.InvalidRequest, `Invalid Request: ${classified.reason}`, {
          id: batch ? null : classified.id
        })
      }
      messages.push(classified.message)
      if (classified._tag === "Request") {
        requests++
        if (classified.message.method === McpSchema.Initialize.name) initialize = classified.message
      }
    }
    if (initialize !== undefined && batch) {
      return Responses.error(400, JsonRpc.ErrorCode.InvalidRequest, "Invalid Request: initialize must not be batched")
    }
    if (auth !== undefined) {
      const refusal = state.bearer!.authorize(auth, messages)
      if (refusal !== undefined) return Responses.refused(refusal)
    }
    const sessionId = headers[Sessions.SESSION_ID]
    if (!batch && Modern.isModern(headers, messages[0]!, sessionId)) {
      return yield* modern(state, messages[0]!, headers, auth)
    }
    if (state.stateless) {
      return yield* stateless(state, messages, requests, batch, initialize, headers, auth)
    }
    if (initialize !== undefined) {
      return yield* initializeSession(state, initialize, auth)
    }

    const found = Sessions.find(state, headers, auth)
    if (Result.isFailure(found)) return found.failure
    const session = found.success
    Sessions.touch(state, session)
    if (session.record !== undefined) {
      for (const message of messages) yield* Cluster.remember(state, session, message)
    }
    const version = yield* Sessions.versionOf(session)
    if (batch && !acceptsBatches(version)) return batchesUnsupported()
    if (requests === 0) {
      for (const message of messages) Exchange.offer(session, message)
      return Responses.accepted
    }
    // each answer is routed by its id: an id must name one request at a time
    const ids = new Set<JsonRpc.RequestId>()
    for (const message of messages) {
      if (!("method" in message && "id" in message)) continue
      if (session.inflight.has(message.id) || ids.has(message.id)) {
        return Responses.error(
          400,
          JsonRpc.ErrorCode.InvalidRequest,
          `Invalid Request: request id ${message.id} is in use`,
          {
            id: batch ? null : message.id
          }
        )
      }
      ids.add(message.id)
    }
    return yield* Exchange.open(state, session, messages, requests, batch, auth)
  })

// opens a session for the `initialize` request; its id goes out with the
// answer, and a refused handshake closes it again
const initializeSession = (state: State.State, initialize: JsonRpc.Request, auth: McpAuth.AuthInfo | undefined) =>
  Effect.gen(function*() {
    if (Sessions.isFull(state)) return tooManySessions(initialize.id)
    const session = yield* Sessions.open(state, globalThis.crypto.randomUUID(), Bearer.principal(auth), Exchange.send)
    const exchange = Exchange.make(session, false, 1, Deferred.makeUnsafe(), auth)
    session.inflight.set(initialize.id, exchange)
    Exchange.offer(session, initialize)
    const response = yield* Deferred.await(exchange.reply!).pipe(
      Effect.onInterrupt(() => Sessions.close(state, session))
    )
    const answer = exchange.responses?.[0]
    if (answer !== undefined && "error" in answer) {
      yield* Sessions.close(state, session)
      return response
    }
    yield* Cluster.register(state, session, initialize)
    return HttpServerResponse.setHeader(response, Sessions.SESSION_ID, session.id!)
  })

// a 2026-07-28 request: its _meta and headers checked here (a 400 when they
// fail), then served by the session all modern requests share; its JSON
// error answer takes the status of its code (404 for an unknown method)
const modern = (
  state: State.State,
  message: JsonRpc.Message,
  headers: Readonly<Record<string, string | undefined>>,
  auth: McpAuth.AuthInfo | undefined
): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
  if (!("id" in message) || !("method" in message)) return Effect.succeed(Responses.accepted)
  const refused = Modern.check(headers, message, state.server.supportedVersions, state.server.toolHeaders)
  if (refused !== undefined) {
    const status = Modern.statusOfError(refused, true)
    return Effect.succeed(
      Responses.error(status, refused.code, refused.message, { id: message.id, data: refused.data })
    )
  }
  const session = state.modern
  return session === undefined || session.closed
    ? Effect.succeed(
      Responses.error(503, JsonRpc.ErrorCode.ServerError, "Service Unavailable: the server is closing", {
        id: message.id
      })
    )
    : Exchange.openModern(state, session, message, auth)
}

// stateless mode: a session of its own for each POST, closed with its answer
const stateless = (
  state: State.State,
  messages: ReadonlyArray<JsonRpc.Message>,
  requests: number,
  batch: boolean,
  initialize: JsonRpc.Request | undefined,
  headers: Readonly<Record<string, string | undefined>>,
  auth: McpAuth.AuthInfo | undefined
) =>
  Effect.gen(function*() {
    if (requests === 0) return Responses.accepted
    const versionError = Responses.checkVersion(headers)
    if (versionError !== undefined) return versionError
    const version = headers[Guard.PROTOCOL_VERSION] ?? "2025-03-26"
    if (batch && !acceptsBatches(version)) return batchesUnsupported()
    if (Sessions.isFull(state)) return tooManySessions()
    const session = yield* Sessions.open(state, undefined, undefined, Exchange.send)
    if (initialize === undefined) {
      // no session remembers the handshake: each request gets its own
      Queue.offerUnsafe(
        session.inbox,
        JsonRpc.request(STATELESS_INIT_ID, McpSchema.Initialize.name, {
          protocolVersion: version,
          capabilities: {},
          clientInfo: { name: "stateless-http-client", version: "0" }
        })
      )
      Queue.offerUnsafe(session.inbox, JsonRpc.notification(McpSchema.Initialized.name, {}))
    }
    const response = yield* Exchange.open(state, session, messages, requests, batch, auth).pipe(
      Effect.onExit((exit) => Exit.isSuccess(exit) ? Effect.void : Sessions.close(state, session))
    )
    // an SSE answer closes the session when its stream ends
    return response.body._tag === "Stream" ? response : yield* Effect.as(Sessions.close(state, session), response)
  })
