/**
 * The legacy upstream of the gateway cluster: a stdio MCP server written with
 * the official v1 SDK (`@modelcontextprotocol/sdk` 1.32, a real third-party
 * 2025-era peer: its questions are requests to its client). Each gateway
 * replica runs its own copies (its group's connection, and a session of its
 * own per call whose client can be asked).
 *
 * Tools, each taking an `id` (the caller's name for the call):
 *
 * - `confirm_twice`: asks two form elicitations in sequence, then answers
 *   `confirm_twice <id>: <first>, <second> (pid <ppid>)`;
 * - `ask_once`: one elicitation, `ask_once <id>: <answer> (pid <ppid>)`;
 * - `echo`: no question, `echo <id> (pid <ppid>)`.
 *
 * `<ppid>` is the pid of the gateway replica that spawned this process. An
 * answer that is not `accept` reads as its action (`decline`, `cancel`).
 * It declares the `logging` capability unless `LEGACY_LOGGING=0`.
 *
 * Every run of every tool appends one line `<tool> <id>` to the file named
 * by `RUNS_FILE` (when set), with one `O_APPEND` write, as soon as the run
 * starts: the tests count runs across every replica's children. The process
 * exits when its stdin ends (its replica died or let it go), even while a
 * question is pending.
 *
 *   node scratchpad/gateway-cluster/legacy-upstream.ts
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js"
import { ElicitResultSchema, type ServerNotification, type ServerRequest } from "@modelcontextprotocol/sdk/types.js"
import { appendFileSync } from "node:fs"
import { z } from "zod"

const runs = process.env.RUNS_FILE

const ran = (tool: string, id: string) => {
  // flag "a": O_APPEND, one write per line, so concurrent writers never interleave a line
  if (runs !== undefined && runs !== "") appendFileSync(runs, `${tool} ${id}\n`, { flag: "a" })
}

// `LEGACY_LOGGING=0`: declares no `logging` capability, as the SDK's servers do by default
const server = new McpServer(
  { name: "legacy-upstream", version: "1.32.2" },
  process.env.LEGACY_LOGGING === "0" ? {} : { capabilities: { logging: {} } }
)

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>

// a form elicitation related to the call (on stdio: a request to the client); the answer's text
const ask = async (extra: Extra, message: string): Promise<string> => {
  const result = await extra.sendRequest(
    {
      method: "elicitation/create",
      params: {
        mode: "form",
        message,
        requestedSchema: { type: "object", properties: { answer: { type: "string" } }, required: ["answer"] }
      }
    },
    ElicitResultSchema,
    { timeout: 120_000 }
  )
  return result.action === "accept" ? String(result.content?.answer) : result.action
}

const text = (value: string) => ({ content: [{ type: "text" as const, text: `${value} (pid ${process.ppid})` }] })

server.registerTool("confirm_twice", {
  description: "Asks two questions in sequence, then answers with both",
  inputSchema: { id: z.string() }
}, async ({ id }, extra) => {
  ran("confirm_twice", id)
  const first = await ask(extra, `First question of ${id}?`)
  const second = await ask(extra, `Second question of ${id}?`)
  return text(`confirm_twice ${id}: ${first}, ${second}`)
})

server.registerTool("ask_once", {
  description: "Asks one question, then answers with it",
  inputSchema: { id: z.string() }
}, async ({ id }, extra) => {
  ran("ask_once", id)
  return text(`ask_once ${id}: ${await ask(extra, `The question of ${id}?`)}`)
})

server.registerTool("echo", {
  description: "Answers at once",
  inputSchema: { id: z.string() }
}, async ({ id }) => {
  ran("echo", id)
  return text(`echo ${id}`)
})

// the replica's end of the pipe closed: nothing can be answered any more, pending questions included
process.stdin.once("end", () => process.exit(0))
process.stdin.once("close", () => process.exit(0))

await server.connect(new StdioServerTransport())
