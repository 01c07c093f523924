/**
 * The raw 2026-07-28 client of `modern.ts` and `runtimes.ts`: one POST per
 * `tools/call` of the echo tool, with the modern headers
 * (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`) and the `_meta`
 * envelope in the body, no `initialize`, no session, on a keep-alive
 * `node:http` agent with `concurrency` sockets; each answer checked (status,
 * id, `resultType: "complete"`, the echoed text).
 */
import * as Http from "node:http"
import { post } from "./floor.ts"
import { checkEcho, TEXT } from "./harness.ts"

/** The protocol version of every call. */
export const VERSION = "2026-07-28"

const HEADERS = { "mcp-protocol-version": VERSION, "mcp-method": "tools/call", "mcp-name": "echo" }
const PARAMS = {
  name: "echo",
  arguments: { text: TEXT },
  _meta: {
    "io.modelcontextprotocol/protocolVersion": VERSION,
    "io.modelcontextprotocol/clientInfo": { name: "bench", version: "1" },
    "io.modelcontextprotocol/clientCapabilities": {}
  }
}

interface Answer {
  readonly id?: unknown
  readonly result?: { readonly content?: ReadonlyArray<unknown>; readonly resultType?: unknown }
}

/** A client of the server at `href`: `call` makes one checked call; `close` destroys its sockets. */
export const modernCaller = (href: string, concurrency: number) => {
  const url = new URL(href)
  const agent = new Http.Agent({ keepAlive: true, maxSockets: concurrency })
  let nextId = 0
  const call = async (): Promise<void> => {
    const id = ++nextId
    const reply = await post(agent, url, { jsonrpc: "2.0", id, method: "tools/call", params: PARAMS }, HEADERS)
    const answer = (reply.status === 200 ? JSON.parse(reply.body) : undefined) as Answer | undefined
    if (answer?.id !== id || answer.result?.resultType !== "complete") {
      throw new Error(`unexpected answer (${reply.status}) to request ${id}: ${reply.body.slice(0, 300)}`)
    }
    checkEcho(answer.result.content)
  }
  return { call, close: () => agent.destroy() }
}
