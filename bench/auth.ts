/**
 * Protected Streamable HTTP `tools/call` echo benchmark (JSON responses): the
 * cost of OAuth bearer-token checks on the server, effect-mcp against the
 * official TypeScript SDK in the same run. This process is the client; each
 * server is a child process on 127.0.0.1 and an ephemeral port, started fresh
 * for every measurement. One ES256 key pair is generated here (jose); the
 * servers get its public JWKS (`BENCH_AUTH_JWKS`), the clients one signed
 * access token (issuer, audience = the resource, `scope: "mcp"`, 1 h expiry)
 * sent with every request.
 *
 * - "ours": `NodeMcpHttpServer.layer({ responseMode: "json", auth: { …,
 *   requiredScopes: ["mcp"], verify: NodeMcpJwtVerifier.make({ jwks, issuer
 *   }) } })` (`servers/http-auth-ours.ts`), with the verifier's cache of
 *   accepted tokens (the default); the client is `NodeMcpHttpClient.layer({
 *   url, auth: McpAuth.bearer(token) })` under `McpClient.callTool`;
 * - "ours-nocache": the same with `cache: false` (jose checks every request);
 * - "ours-noauth": the same server without `auth` (the client still sends the
 *   token, so only the server differs);
 * - "official": express + `requireBearerAuth({ verifier, requiredScopes,
 *   expectedResource })` in front of the stateful `StreamableHTTPServerTransport`
 *   (`enableJsonResponse: true`), the verifier being jose's `jwtVerify`
 *   against the same local JWKS (`servers/http-auth-official.mjs`); the client
 *   is `StreamableHTTPClientTransport` with `requestInit.headers.Authorization`
 *   + `Client.callTool`;
 * - "official-noauth": the same express server without `requireBearerAuth`.
 *
 * Method as in `http.ts` (PERF-BASELINE.md, "C"): warm-up, `gc()`, a closed
 * loop of `c` workers, rounds alternating the order, medians; CPU is this
 * process plus the server child.
 *
 * Usage:
 *   npm run bench:auth
 *   node --conditions=development --expose-gc --no-warnings bench/auth.ts --calls 1000 --rounds 1
 *
 * Options (each also as an environment variable):
 *   --calls N           measured calls per measurement (BENCH_AUTH_CALLS, default 5000)
 *   --rounds R          (BENCH_ROUNDS, default 3)
 *   --concurrency 1,64  (BENCH_CONCURRENCY, default 1,64)
 *   --only LIST         subset of ours,ours-nocache,ours-noauth,official,official-noauth (BENCH_AUTH_ONLY)
 *   --timeout S         hard limit of the whole run (BENCH_AUTH_TIMEOUT, default 300)
 */
import { McpAuth, McpClient } from "@effect-mcp/core"
import { NodeMcpHttpClient } from "@effect-mcp/platform-node"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Context, Effect, Layer } from "effect"
import * as Jose from "jose"
import {
  assertAllGone,
  checkEcho,
  clientInfo,
  gc,
  hardTimeout,
  intList,
  type LineChild,
  measureEffect,
  measurePromise,
  option,
  OURS_DIST,
  positiveInt,
  runMain,
  runRounds,
  type Sample,
  selection,
  SERVER_FLAGS,
  spawnLineChild,
  TEXT,
  TS_FLAGS,
  warmupFor
} from "./harness.ts"

const ALL = ["ours", "ours-nocache", "ours-noauth", "official", "official-noauth"] as const
type Impl = (typeof ALL)[number]

const CALLS = positiveInt(option("calls", "BENCH_AUTH_CALLS"), 5_000, "calls")
const ROUNDS = positiveInt(option("rounds", "BENCH_ROUNDS"), 3, "rounds")
const TIMEOUT_S = positiveInt(option("timeout", "BENCH_AUTH_TIMEOUT"), 300, "timeout")
const CONCURRENCY = intList(option("concurrency", "BENCH_CONCURRENCY") ?? "1,64", "concurrency")
const IMPLS = selection(ALL, option("only", "BENCH_AUTH_ONLY"))
const WARMUP = warmupFor(CALLS)

hardTimeout(TIMEOUT_S, "bench/auth")

// shared with servers/http-auth-ours.ts and servers/http-auth-official.mjs
const ISSUER = "http://127.0.0.1/bench-as"
const RESOURCE = "http://127.0.0.1/mcp"
const SCOPE = "mcp"

const serverArgs: Record<Impl, ReadonlyArray<string>> = {
  ours: [...TS_FLAGS, ...SERVER_FLAGS, "--expose-gc", "bench/servers/http-auth-ours.ts", "cache"],
  "ours-nocache": [...TS_FLAGS, ...SERVER_FLAGS, "--expose-gc", "bench/servers/http-auth-ours.ts", "nocache"],
  "ours-noauth": [...TS_FLAGS, ...SERVER_FLAGS, "--expose-gc", "bench/servers/http-auth-ours.ts", "none"],
  official: [...SERVER_FLAGS, "--expose-gc", "bench/servers/http-auth-official.mjs", "auth"],
  "official-noauth": [...SERVER_FLAGS, "--expose-gc", "bench/servers/http-auth-official.mjs", "none"]
}

interface Credentials {
  readonly jwks: string
  readonly token: string
}

/** One ES256 key pair; the public JWKS for the servers, one access token for the clients. */
const makeCredentials = async (): Promise<Credentials> => {
  const { privateKey, publicKey } = await Jose.generateKeyPair("ES256", { extractable: true })
  const jwk = { ...(await Jose.exportJWK(publicKey)), kid: "bench-key", alg: "ES256", use: "sig" }
  const token = await new Jose.SignJWT({ scope: SCOPE, client_id: "bench-client" })
    .setProtectedHeader({ alg: "ES256", kid: "bench-key", typ: "at+jwt" })
    .setIssuer(ISSUER)
    .setAudience(RESOURCE)
    .setSubject("bench-user")
    .setIssuedAt()
    .setExpirationTime("1h")
    .sign(privateKey)
  return { jwks: JSON.stringify({ keys: [jwk] }), token }
}

const withServer = async <A>(
  impl: Impl,
  credentials: Credentials,
  f: (url: string, pid: number) => Promise<A>
): Promise<A> => {
  // the children inherit the environment
  process.env.BENCH_AUTH_JWKS = credentials.jwks
  const server: LineChild = spawnLineChild(serverArgs[impl])
  try {
    const { url } = JSON.parse(await server.nextLine()) as { url: string }
    return await f(url, server.pid)
  } finally {
    await server.stop()
  }
}

const oursClient = (url: string, pid: number, concurrency: number, token: string): Promise<Sample> =>
  Effect.gen(function*() {
    const context = yield* Layer.build(
      McpClient.layer({ clientInfo }).pipe(
        Layer.provide([NodeMcpHttpClient.layer({ url, auth: McpAuth.bearer(token) })])
      )
    )
    const client = Context.get(context, McpClient.McpClient)
    const call = Effect.map(client.callTool("echo", { text: TEXT }), (result) => checkEcho(result.content))
    return yield* measureEffect(call, { concurrency, calls: CALLS, warmup: WARMUP, serverPid: pid })
  }).pipe(Effect.scoped, Effect.runPromise)

const officialClient = async (url: string, pid: number, concurrency: number, token: string): Promise<Sample> => {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } }
  })
  const client = new Client(clientInfo)
  await client.connect(transport)
  try {
    const call = async (): Promise<void> => {
      const result = await client.callTool({ name: "echo", arguments: { text: TEXT } })
      checkEcho(result.content as ReadonlyArray<unknown> | undefined)
    }
    return await measurePromise(call, { concurrency, calls: CALLS, warmup: WARMUP, serverPid: pid })
  } finally {
    await transport.terminateSession().catch(() => undefined)
    await client.close()
  }
}

/** On a protected server, a request without a token must get 401, so that a row cannot measure an unprotected server by mistake. */
const checkProtected = async (impl: Impl, url: string): Promise<void> => {
  if (impl.endsWith("-noauth")) return
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" })
  })
  await response.arrayBuffer()
  if (response.status !== 401) {
    throw new Error(`${impl}: a request without a token got HTTP ${response.status}, expected 401`)
  }
}

const main = async (): Promise<void> => {
  console.log(
    `Protected Streamable HTTP (JSON responses, ES256 JWT bearer) tools/call echo: ${CALLS} calls (+${WARMUP} warm-up) × ` +
      `${ROUNDS} rounds, concurrency ${CONCURRENCY.join(",")}, ${IMPLS.join(" vs ")}; node ${process.version}, ` +
      `gc ${gc === undefined ? "not exposed" : "forced before each measurement"}; our servers from ` +
      (OURS_DIST ? "dist/ (BENCH_OURS_DIST=1)" : "src/ (--conditions=development)")
  )
  const credentials = await makeCredentials()
  const started = performance.now()
  await runRounds({
    title: `Protected Streamable HTTP, JSON responses, ${CALLS} calls (CPU = client process + server process, µs/call)`,
    impls: IMPLS,
    baseline: "official",
    concurrency: CONCURRENCY,
    rounds: ROUNDS,
    run: (impl, concurrency) =>
      withServer(impl, credentials, async (url, pid) => {
        await checkProtected(impl, url)
        return impl.startsWith("ours")
          ? oursClient(url, pid, concurrency, credentials.token)
          : officialClient(url, pid, concurrency, credentials.token)
      })
  })
  await assertAllGone()
  console.log(`medians over ${ROUNDS} round(s); total ${((performance.now() - started) / 1000).toFixed(1)} s`)
}

runMain(main)
