/**
 * The protected effect-mcp Streamable HTTP server of `bench/auth.ts`:
 * `NodeMcpHttpServer.layer({ port: 0, responseMode: "json", auth })` on
 * 127.0.0.1 serving an `McpServer` with one `echo` tool, its tokens checked
 * by `NodeMcpJwtVerifier.make({ jwks, issuer })` against the local JWKS in
 * `BENCH_AUTH_JWKS` (JSON). The argument picks the variant:
 *
 * - `cache` (default): the verifier with its cache of accepted tokens;
 * - `nocache`: `cache: false` (jose checks every request's token);
 * - `none`: no `auth` at all (the same server as `http-ours.ts`).
 *
 * Prints `{"url":…}` on stdout once listening, answers `mem` on stdin (see
 * `control.mjs`) and exits when stdin ends.
 *
 *   BENCH_AUTH_JWKS='{"keys":[…]}' node --conditions=development bench/servers/http-auth-ours.ts nocache
 */
import * as McpServer from "@effect-mcp/core/McpServer"
import * as McpTool from "@effect-mcp/core/McpTool"
import * as NodeMcpHttpServer from "@effect-mcp/platform-node/NodeMcpHttpServer"
import * as NodeMcpJwtVerifier from "@effect-mcp/platform-node/NodeMcpJwtVerifier"
import * as NodeMcpRuntime from "@effect-mcp/platform-node/NodeMcpRuntime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { control } from "./control.mjs"

/** The issuer, resource (= token audience) and scope shared with `bench/auth.ts` and `http-auth-official.mjs`. */
const ISSUER = "http://127.0.0.1/bench-as"
const RESOURCE = "http://127.0.0.1/mcp"
const SCOPE = "mcp"

const mode = process.argv[2] ?? "cache"
if (mode !== "cache" && mode !== "nocache" && mode !== "none") throw new Error(`unknown mode ${mode}`)

const echo = McpTool.make("echo", {
  input: Schema.Struct({ text: Schema.String }),
  handler: ({ text }) => Effect.succeed(text)
})

const auth = mode === "none" ? undefined : {
  resource: RESOURCE,
  authorizationServers: [ISSUER],
  requiredScopes: [SCOPE],
  verify: NodeMcpJwtVerifier.make({
    jwks: JSON.parse(process.env.BENCH_AUTH_JWKS ?? "") as { keys: Array<Record<string, unknown>> },
    issuer: ISSUER,
    ...(mode === "nocache" ? { cache: false as const } : {})
  })
}

const Http = NodeMcpHttpServer.layer({ port: 0, responseMode: "json", auth }).pipe(
  Layer.provide(
    McpServer.register(echo).pipe(Layer.provideMerge(McpServer.layer({ name: "bench-server", version: "0.0.0" })))
  )
)

NodeMcpRuntime.runMain(
  Effect.gen(function*() {
    const url = yield* NodeMcpHttpServer.url()
    yield* Effect.sync(() => control(url))
    return yield* Effect.never
  }).pipe(Effect.provide(Http))
)
