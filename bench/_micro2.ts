import { McpSchema } from "@effect-mcp/core"
import { Schema } from "effect"
const TEXT = "The quick brown fox jumps over the lazy dog"
const time = (name: string, n: number, f: () => unknown) => {
  for (let i = 0; i < n / 5; i++) f()
  const t0 = performance.now()
  for (let i = 0; i < n; i++) f()
  console.log(name.padEnd(40), ((performance.now() - t0) * 1000 / n).toFixed(3), "µs/op")
}
const params = { name: "echo", arguments: { text: TEXT } }
const result = { content: [{ type: "text", text: TEXT }] }
for (let r = 0; r < 3; r++) {
time("CallTool.validateParams", 300000, () => McpSchema.CallTool.validateParams(params))
time("CallTool.validateResult", 300000, () => McpSchema.CallTool.validateResult(result))
const P2 = Schema.Struct({ name: Schema.String, arguments: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown)) })
const P3 = Schema.Struct({ name: Schema.String, arguments: Schema.optionalKey(Schema.Unknown) })
const is2 = Schema.is(P2), is3 = Schema.is(P3)
time("Struct{name, arguments: Record}", 300000, () => is2(params))
time("Struct{name, arguments: Unknown}", 300000, () => is3(params))
}
