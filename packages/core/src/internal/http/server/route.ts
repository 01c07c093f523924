/**
 * The Streamable HTTP server's route: the state its pieces share
 * (`state.ts`), then, for each request, the Host/Origin guard, CORS, the
 * bearer check and the method's handler (`post.ts`, `get.ts`,
 * `delete.ts`); the idle-session reaper runs for as long as the layer, and
 * shutdown (`shutdown.ts`) ends the sessions.
 * Sessions live in `sessions.ts`, the routing of frames in `exchange.ts`.
 * `McpHttpServer` loads this module when its layer is built.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServer from "effect/http/HttpServer"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as JsonRpc from "../../../JsonRpc.ts"
import type * as McpAuth from "../../../McpAuth.ts"
import { canonicalResource } from "../../../McpAuth.ts"
import type * as McpHttpServer from "../../../McpHttpServer.ts"
import { addMetadataRoutes } from "../../../McpResourceServer.ts"
import * as Bearer from "../../auth/bearer.ts"
import * as Defects from "../defects.ts"
import * as Guard from "../guard.ts"
import * as Cluster from "./cluster.ts"
import * as Delete from "./delete.ts"
import * as Exchange from "./exchange.ts"
import * as Get from "./get.ts"
import * as Held from "./held.ts"
import * as Post from "./post.ts"
import * as Responses from "./responses.ts"
import * as Sessions from "./sessions.ts"
import * as Shutdown from "./shutdown.ts"
import * as State from "./state.ts"

// the bearer check; the resource defaults to the bound address and the path
const makeBearer = (
  auth: NonNullable<McpHttpServer.Options["auth"]>,
  httpServer: Option.Option<HttpServer.HttpServer["Service"]>,
  path: string
): Effect.Effect<Bearer.Guard> =>
  Clock.clockWith((clock) => {
    if (auth.resource !== undefined) return Effect.succeed(Bearer.make(auth, canonicalResource(auth.resource), clock))
    if (Option.isNone(httpServer) || httpServer.value.address._tag === "UnixPathAddress") {
      return Effect.die(new Error("McpHttpServer: auth.resource is required when no TCP HttpServer is in context"))
    }
    return Effect.succeed(
      Bearer.make(auth, canonicalResource(HttpServer.formatAddress(httpServer.value.address) + path), clock)
    )
  })

/** Adds the endpoint to the router, served until the layer's scope closes. @internal */
export const addRoute = Effect.fnUntraced(function*(
  options: McpHttpServer.Options,
  storeTag: Context.Key<McpHttpServer.EventStore, McpHttpServer.EventStoreShape>
) {
  const router = yield* HttpRouter.HttpRouter
  const httpServer = yield* Effect.serviceOption(HttpServer.HttpServer)
  const path = options.path ?? "/mcp"
  const bearer = options.auth === undefined ? undefined : yield* makeBearer(options.auth, httpServer, path)
  const state = yield* State.make(options, storeTag, bearer)
  const loopback = Option.isSome(httpServer) && Guard.isLoopback(httpServer.value.address)
  const allowed = state.stateless ? "POST, OPTIONS" : "GET, POST, DELETE, OPTIONS"
  const cors = options.cors === undefined ? undefined : Guard.makeCors(options.cors, allowed)
  if (bearer !== undefined) yield* addMetadataRoutes(router, options.auth!, bearer.resource)

  const notAllowed = Responses.error(405, JsonRpc.ErrorCode.ServerError, "Method Not Allowed", {
    headers: { allow: state.stateless ? "POST" : "GET, POST, DELETE" }
  })

  const dispatch = (
    request: HttpServerRequest.HttpServerRequest,
    auth: McpAuth.AuthInfo | undefined
  ): Effect.Effect<HttpServerResponse.HttpServerResponse, never, Scope.Scope> => {
    if (state.closing) return Effect.succeed(Shutdown.refused())
    // with a registry, a session held by another replica is served there, and so is a retry of a call it holds
    if (state.registry !== undefined && request.method !== "OPTIONS") {
      const locate = request.headers[Sessions.SESSION_ID] === undefined ? Held.locate : Cluster.locate
      return Effect.flatMap(
        locate(state, request, auth),
        (elsewhere) => elsewhere === undefined ? byMethod(request, auth) : Effect.succeed(elsewhere)
      )
    }
    return byMethod(request, auth)
  }

  const byMethod = (
    request: HttpServerRequest.HttpServerRequest,
    auth: McpAuth.AuthInfo | undefined
  ): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
    switch (request.method) {
      case "POST":
        return Post.handle(state, request, auth)
      case "GET":
        return state.stateless ? Effect.succeed(notAllowed) : Get.handle(state, request, auth)
      case "DELETE":
        return state.stateless ? Effect.succeed(notAllowed) : Delete.handle(state, request, auth)
      default:
        return Effect.succeed(notAllowed)
    }
  }

  const authenticated = (
    request: HttpServerRequest.HttpServerRequest
  ): Effect.Effect<HttpServerResponse.HttpServerResponse, never, Scope.Scope> => {
    if (bearer === undefined) return dispatch(request, undefined)
    return Effect.flatMap(
      bearer.authenticate(request.headers["authorization"], {
        method: request.method,
        url: request.url,
        proof: request.headers["dpop"]
      }),
      (auth) => Bearer.isRefusal(auth) ? Effect.succeed(Responses.refused(auth)) : dispatch(request, auth)
    )
  }

  // a defect answers a bare 500 (with the CORS headers below); the cause goes to the log
  const answered = (
    request: HttpServerRequest.HttpServerRequest
  ): Effect.Effect<HttpServerResponse.HttpServerResponse, never, Scope.Scope> =>
    Defects.answerDefects(authenticated(request), request, "McpHttpServer: the request failed", Responses.internalError)

  // the guard, then CORS (preflights need no token), then the bearer check
  const handle = (
    request: HttpServerRequest.HttpServerRequest
  ): Effect.Effect<HttpServerResponse.HttpServerResponse, never, Scope.Scope> => {
    const forbidden = Guard.check((name) => request.headers[name], options, loopback, cors?.extraOrigins)
    if (forbidden !== undefined) {
      const response = Responses.error(403, JsonRpc.ErrorCode.ServerError, forbidden)
      return Effect.succeed(cors === undefined ? response : HttpServerResponse.setHeader(response, "vary", "Origin"))
    }
    if (cors === undefined) return answered(request)
    const origin = request.headers["origin"]
    if (request.method === "OPTIONS") {
      return Effect.succeed(HttpServerResponse.empty({
        status: 204,
        headers: { ...cors.preflight(origin, (name) => request.headers[name]), allow: allowed }
      }))
    }
    const headers = cors.headers(origin)
    return Effect.map(answered(request), (response) => HttpServerResponse.setHeaders(response, headers))
  }

  // one long-lived session serves every 2026-07-28 request
  state.modern = yield* Sessions.open(state, undefined, undefined, Exchange.send, true)
  yield* Effect.forkScoped(Sessions.reap(state))
  // shutdown ends the sessions: before the HTTP server closes when the serving
  // layer is wrapped with `withGracefulShutdown`, else when this layer closes
  const drain = Shutdown.drain(state)
  yield* Effect.addFinalizer(() => drain)
  const drains = yield* Effect.serviceOption(State.Drains)
  if (Option.isSome(drains)) {
    drains.value.add(drain)
    yield* Effect.addFinalizer(() => Effect.sync(() => drains.value.delete(drain)))
  }
  // a request counts until its response is written: shutdown waits for that
  const served = (request: HttpServerRequest.HttpServerRequest) =>
    Effect.andThen(Shutdown.track(state), handle(request))
  // requests other replicas forward here are served the same way
  if (state.registry !== undefined) yield* Cluster.serve(state.registry, served)
  yield* router.add("*", path, served)
})
