/**
 * A server's metrics (`McpMetrics`: `mcp_requests_total`,
 * `mcp_request_duration_ms`, ...) and request spans exported through
 * OpenTelemetry with `@effect/opentelemetry`. In-memory exporters here, to
 * print what was exported; in production use an OTLP exporter (or skip the
 * OpenTelemetry SDK: `effect/observability`'s `OtlpMetrics` and
 * `PrometheusMetrics` read the same metrics).
 *
 *   node --conditions=development scratchpad/example-otel.ts
 */
import { McpClient, McpServer, McpTool, McpTransport } from "@effect-mcp/core"
import { NodeMcpRuntime } from "@effect-mcp/platform-node"
import * as OtelMetrics from "@effect/opentelemetry/OtelMetrics"
import * as OtelTracer from "@effect/opentelemetry/OtelTracer"
import * as Resource from "@effect/opentelemetry/Resource"
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  PeriodicExportingMetricReader
} from "@opentelemetry/sdk-metrics"
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Console, Effect, Layer, Schema } from "effect"

const echo = McpTool.make("echo", {
  input: Schema.Struct({ text: Schema.String }),
  handler: ({ text }) => Effect.succeed(text)
})

const Server = McpServer.layer({ name: "otel", version: "1.0.0" }, echo)
const Client = McpClient.layer({ clientInfo: { name: "example-otel", version: "1.0.0" } })

// OpenTelemetry: a metric reader (exported on `forceFlush` here) and a tracer
const metrics = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE)
const reader = new PeriodicExportingMetricReader({ exporter: metrics, exportIntervalMillis: 60_000 })
const spans = new InMemorySpanExporter()
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] })

const Telemetry = Layer.mergeAll(
  OtelMetrics.layer(() => reader),
  OtelTracer.layer.pipe(Layer.provide(Layer.succeed(OtelTracer.OtelTracerProvider, provider)))
).pipe(Layer.provide(Resource.layer({ serviceName: "example-otel" })))

const program = Effect.gen(function*() {
  const client = yield* McpClient.McpClient
  for (const text of ["a", "b", "c"]) yield* client.callTool("echo", { text })
  yield* Effect.ignore(client.callTool("missing", {}))
})

const print = Effect.gen(function*() {
  yield* Effect.promise(() => reader.forceFlush())
  const exported = metrics.getMetrics().flatMap((resource) => resource.scopeMetrics.flatMap((scope) => scope.metrics))
  for (const metric of exported.filter((metric) => metric.descriptor.name.startsWith("mcp_"))) {
    for (const point of metric.dataPoints) {
      const value = point.value as number | { readonly count: number; readonly sum?: number }
      const shown = typeof value === "number" ? value : `count=${value.count}`
      yield* Console.log(`${metric.descriptor.name} ${JSON.stringify(point.attributes)} ${shown}`)
    }
  }
  const names = spans.getFinishedSpans().map((span) => span.name).filter((name) => name.startsWith("McpServer "))
  yield* Console.log(`spans: ${[...new Set(names)].sort().join(", ")}`)
})

const main = Effect.gen(function*() {
  const link = yield* McpTransport.makeInMemoryLink
  yield* Layer.build(McpServer.layerSession.pipe(Layer.provide([link.server, Server])))
  yield* program.pipe(Effect.provide(Client.pipe(Layer.provide(link.client))))
  yield* print
}).pipe(Effect.scoped, Effect.provide(Telemetry))

NodeMcpRuntime.runMain(main)
