/**
 * Raw JSON-RPC messages of a 2025-11-25 client, for the HTTP route's tests
 * that speak to it without a client: the `accept` a POST sends, `initialize`,
 * `notifications/initialized` and a `tools/call` without arguments.
 */

export const ACCEPT = "application/json, text/event-stream"

export const initialize = {
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } }
}

export const initialized = { jsonrpc: "2.0", method: "notifications/initialized" }

export const call = (id: number, name: string) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: {} }
})
