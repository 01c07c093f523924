/**
 * The round-robin proxy of the cluster demo (`scratchpad/cluster/proxy.ts`,
 * no sticky sessions) in a process of its own, for `bench/cluster.ts`: the
 * benchmark's client then shares its event loop with nobody, and the proxy's
 * CPU is read from `/proc` like the servers'. The upstream ports are the
 * argument, comma-separated.
 *
 * Prints `{"url":…}` (the proxied MCP endpoint) on stdout once listening and
 * exits when stdin ends (or on SIGTERM).
 *
 *   node bench/servers/cluster-proxy.ts 40001,40002,40003
 */
import { startProxy } from "../../scratchpad/cluster/proxy.ts"

const ports = (process.argv[2] ?? "").split(",").filter((port) => port !== "").map(Number)
if (ports.length === 0 || ports.some((port) => !Number.isInteger(port) || port <= 0)) {
  throw new Error(`usage: cluster-proxy.ts PORT[,PORT…]; got ${process.argv[2]}`)
}

const proxy = await startProxy(ports)
process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${proxy.port}/mcp` })}\n`)

const stop = (): void => {
  void proxy.close().then(() => process.exit(0))
}
process.stdin.resume()
process.stdin.on("end", stop)
process.on("SIGTERM", stop)
