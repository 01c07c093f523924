import { JsonRpc, McpSchema } from "@effect-mcp/core"
import { Effect, FiberMap, HashMap, Ref, Deferred, Clock, Exit, Fiber } from "effect"
const TEXT = "The quick brown fox jumps over the lazy dog"
const time = (name: string, n: number, f: () => unknown) => {
  for (let i = 0; i < n / 10; i++) f()
  const t0 = performance.now()
  for (let i = 0; i < n; i++) f()
  console.log(name.padEnd(40), ((performance.now() - t0) * 1000 / n).toFixed(3), "µs/op")
}
const loop = (e: Effect.Effect<unknown>, n: number) => Effect.gen(function*() { for (let i = 0; i < n; i++) yield* e })
const timeE = async (name: string, n: number, e: Effect.Effect<unknown>) => {
  await Effect.runPromise(loop(e, n / 10))
  const t0 = performance.now()
  await Effect.runPromise(loop(e, n))
  console.log(name.padEnd(40), ((performance.now() - t0) * 1000 / n).toFixed(3), "µs/op")
}
const params = { name: "echo", arguments: { text: TEXT } }
const result = { content: [{ type: "text", text: TEXT }] }
time("CallTool.validateParams", 200000, () => McpSchema.CallTool.validateParams(params))
time("CallTool.validateResult", 200000, () => McpSchema.CallTool.validateResult(result))
time("JsonRpc.classify request", 200000, () => JsonRpc.classify({ jsonrpc: "2.0", id: 1, method: "tools/call", params }))
time("JSON stringify+parse req", 200000, () => JSON.parse(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params })))
let id = 0
const ref = Ref.makeUnsafe(HashMap.empty<number, unknown>())
await timeE("Pending register+take+remove (HashMap)", 200000, Effect.suspend(() => { const k = id++; return Ref.update(ref, HashMap.set(k, 1)).pipe(Effect.andThen(Ref.modify(ref, (m) => [HashMap.get(m, k), HashMap.remove(m, k)] as const)), Effect.andThen(Ref.update(ref, HashMap.remove(k)))) }))
await timeE("Effect.void baseline", 200000, Effect.void)
await timeE("Clock.currentTimeMillis", 200000, Clock.currentTimeMillis)
await timeE("fork timer(sleep 60s)+interrupt", 100000, Effect.flatMap(Effect.forkChild(Effect.sleep(60000), { startImmediately: true }), Fiber.interrupt))
await timeE("Deferred make+succeed+await", 200000, Effect.suspend(() => { const d = Deferred.makeUnsafe<number>(); return Effect.andThen(Deferred.succeed(d, 1), Deferred.await(d)) }))
await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
  const map = yield* FiberMap.make<number>()
  const t0 = performance.now(); const n = 100000
  for (let i = 0; i < n; i++) { yield* FiberMap.has(map, i); const f = yield* FiberMap.run(map, i, Effect.void); yield* Fiber.await(f) }
  console.log("FiberMap.has+run+await (trivial)".padEnd(40), ((performance.now() - t0) * 1000 / n).toFixed(3), "µs/op")
  const t1 = performance.now()
  for (let i = 0; i < n; i++) { const f = yield* Effect.forkChild(Effect.void); yield* Fiber.await(f) }
  console.log("forkChild+await (trivial)".padEnd(40), ((performance.now() - t1) * 1000 / n).toFixed(3), "µs/op")
})))
void Exit
