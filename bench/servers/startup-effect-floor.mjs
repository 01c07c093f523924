// The start-up benchmark's floor under our server: the effect modules that
// effect-mcp's stdio server imports itself (the server, the tool, the session
// engine, the stdio transport, `startup-ours-paths.mjs`'s own graph, by static
// import), loaded the same way, and no module of ours: the echo server is then
// written by hand (newline-delimited JSON-RPC on process.stdin/stdout). What
// `ours-paths` and `ours` take beyond this row is effect-mcp's own share of a
// start: its modules, the effect modules only they pull in, and their top-level
// work.
//
//   node bench/servers/startup-effect-floor.mjs
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Console from "effect/Console"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Base64 from "effect/encoding/Base64"
import * as Base64Url from "effect/encoding/Base64Url"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberMap from "effect/FiberMap"
import * as HttpTraceContext from "effect/http/HttpTraceContext"
import * as JsonPointer from "effect/JsonPointer"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Queue from "effect/Queue"
import * as Redactable from "effect/Redactable"
import * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import * as Result from "effect/Result"
import * as Scheduler from "effect/Scheduler"
import * as Schema from "effect/Schema"
import * as SchemaJITCompiler from "effect/schema/SchemaJITCompiler"
import * as SchemaAST from "effect/SchemaAST"
import * as SchemaIssue from "effect/SchemaIssue"
import * as Scope from "effect/Scope"
import * as Sink from "effect/Sink"
import * as Stdio from "effect/Stdio"
import * as Stream from "effect/Stream"
import * as Tracer from "effect/Tracer"

// every namespace used, so that nothing can be dropped
const modules = [
  NodeRuntime,
  Cause,
  Clock,
  Console,
  Context,
  Deferred,
  Duration,
  Effect,
  Base64,
  Base64Url,
  Exit,
  Fiber,
  FiberMap,
  HttpTraceContext,
  JsonPointer,
  Layer,
  Logger,
  Metric,
  Option,
  Predicate,
  Queue,
  Redactable,
  Redacted,
  Ref,
  Result,
  Scheduler,
  Schema,
  SchemaAST,
  SchemaIssue,
  SchemaJITCompiler,
  Scope,
  Sink,
  Stdio,
  Stream,
  Tracer
]
if (modules.some((module) => module === undefined)) throw new Error("a module failed to load")

const send = (message) => process.stdout.write(JSON.stringify(message) + "\n")
let buffer = ""
process.stdin.setEncoding("utf8")
process.stdin.on("data", (chunk) => {
  buffer += chunk
  let newline
  while ((newline = buffer.indexOf("\n")) >= 0) {
    const message = JSON.parse(buffer.slice(0, newline))
    buffer = buffer.slice(newline + 1)
    if (message.id === undefined) continue
    if (message.method === "initialize") {
      send({
        jsonrpc: "2.0",
        id: message.id,
        result: {
          protocolVersion: message.params.protocolVersion,
          capabilities: { tools: {} },
          serverInfo: { name: "s", version: "1" }
        }
      })
    } else if (message.method === "tools/call") {
      send({
        jsonrpc: "2.0",
        id: message.id,
        result: { content: [{ type: "text", text: message.params.arguments.text }] }
      })
    } else {
      send({ jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "Method not found" } })
    }
  }
})
process.stdin.on("end", () => process.exit(0))
