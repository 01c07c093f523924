/**
 * The official TypeScript SDK's client against our example server, spawned as
 * a real child process over stdio.
 */
import { assert, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema
} from "@modelcontextprotocol/sdk/types.js"
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../..", import.meta.url))
const serverArgs = ["--conditions=development", "scratchpad/example-server.ts"]

/** The official SDK's client, connected to our server. */
const connectSdkClient = async () => {
  const client = new Client({ name: "official-sdk", version: "1.0.0" })
  const transport = new StdioClientTransport({ command: process.execPath, args: serverArgs, cwd: root, stderr: "pipe" })
  await client.connect(transport)
  return client
}

describe("interop: official SDK client → our stdio server", () => {
  it("initializes, lists and calls tools (structured output checked by the SDK against outputSchema)", async () => {
    const client = await connectSdkClient()
    try {
      assert.strictEqual(client.getServerVersion()?.name, "example-server")
      assert.strictEqual(client.getInstructions(), "Ask for the weather.")
      const { tools } = await client.listTools()
      assert.deepStrictEqual(tools.map((t) => t.name), ["countdown", "weather"])
      const weather = await client.callTool({ name: "weather", arguments: { city: "Oslo" } })
      assert.deepStrictEqual(weather.structuredContent, { city: "Oslo", celsius: 21.5, conditions: "sunny" })
      const invalid = await client.callTool({ name: "weather", arguments: {} })
      assert.isTrue(invalid.isError)
    } finally {
      await client.close()
    }
  })

  it("progress and logging notifications reach the SDK client", async () => {
    const client = await connectSdkClient()
    try {
      const logs: Array<unknown> = []
      client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
        logs.push(n.params.data)
      })
      await client.setLoggingLevel("info")
      const progress: Array<number> = []
      const result = await client.callTool({ name: "countdown", arguments: { from: 3 } }, undefined, {
        onprogress: (p) => progress.push(p.progress)
      })
      assert.deepStrictEqual(progress, [1, 2, 3])
      assert.deepStrictEqual(logs, ["countdown at 3", "countdown at 2", "countdown at 1"])
      assert.deepStrictEqual((result.content as Array<{ type: string }>).map((c) => c.type), ["text", "resource_link"])
    } finally {
      await client.close()
    }
  })

  it("resources, templates, prompts and completions", async () => {
    const client = await connectSdkClient()
    try {
      const { resources } = await client.listResources()
      assert.deepStrictEqual(resources.map((r) => r.uri), ["notes://readme"])
      const { resourceTemplates } = await client.listResourceTemplates()
      assert.deepStrictEqual(resourceTemplates.map((t) => t.uriTemplate), ["notes://{topic}{?page}"])
      const read = await client.readResource({ uri: "notes://launch?page=2" })
      assert.deepStrictEqual(read.contents, [{
        uri: "notes://launch?page=2",
        mimeType: "text/plain",
        text: "Notes on launch, page 2"
      }])
      const prompt = await client.getPrompt({ name: "explain", arguments: { topic: "orbits", level: "expert" } })
      assert.deepStrictEqual(prompt.messages[0]?.content, { type: "text", text: "Explain orbits to an expert." })
      const completion = await client.complete({
        ref: { type: "ref/resource", uri: "notes://{topic}{?page}" },
        argument: { name: "topic", value: "la" }
      })
      assert.deepStrictEqual(completion.completion.values, ["launch", "landing"])
    } finally {
      await client.close()
    }
  })
})

describe("our stdio server as a process", () => {
  it("answers what it read before stdin ended, then exits 0", async () => {
    const child = spawn(process.execPath, serverArgs, { cwd: root, stdio: ["pipe", "pipe", "pipe"] })
    let stdout = ""
    child.stdout.on("data", (chunk) => (stdout += chunk))
    const lines = [
      {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } }
      },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "countdown", arguments: { from: 2 } } }
    ]
    child.stdin.end(lines.map((l) => JSON.stringify(l)).join("\n") + "\n{not json}\n")
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve))
    assert.strictEqual(code, 0)
    const replies = stdout.trim().split("\n").map((l) => JSON.parse(l))
    assert.deepStrictEqual(replies.filter((r) => "id" in r).map((r) => r.id).sort(), [1, 2, null].sort())
    assert.strictEqual(replies.find((r) => r.id === null)?.error.code, -32700)
  })
})

describe("interop: official SDK client answering our server's requests", () => {
  const connectInteractive = async () => {
    const client = new Client(
      { name: "official-sdk", version: "1.0.0" },
      { capabilities: { sampling: { tools: {} }, elicitation: { form: {} }, roots: { listChanged: true } } }
    )
    client.setRequestHandler(CreateMessageRequestSchema, async (request) => ({
      model: "fake-model",
      role: "assistant",
      content: request.params.tools
        ? { type: "tool_use", id: "t1", name: request.params.tools[0]!.name, input: {} }
        : { type: "text", text: `echo ${JSON.stringify(request.params.messages[0]?.content)}` },
      stopReason: request.params.tools ? "toolUse" : "endTurn"
    }))
    const elicited: Array<unknown> = []
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      elicited.push(request.params)
      return { action: "accept", content: { colour: "red", shade: 3 } }
    })
    let roots = [{ uri: "file:///project", name: "project" }]
    client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots }))
    const logs: Array<unknown> = []
    // the first log, whenever it comes (a notification may arrive after the next answer)
    let logged: (data: unknown) => void = () => undefined
    const firstLog = new Promise<unknown>((resolve) => (logged = resolve))
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      logs.push(n.params.data)
      logged(n.params.data)
    })
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ["--conditions=development", "packages/platform-node/test/fixtures/interactive-server.ts"],
      cwd: root,
      stderr: "pipe"
    })
    await client.connect(transport)
    return {
      client,
      elicited,
      logs,
      firstLog,
      setRoots: async (next: typeof roots) => {
        roots = next
        await client.sendRootsListChanged()
      }
    }
  }
  const text = (result: Awaited<ReturnType<Client["callTool"]>>) => (result.content as Array<{ text: string }>)[0]!.text

  it("sampling with tools, elicitation with defaults, roots and roots/list_changed", async () => {
    const { client, elicited, firstLog, logs, setRoots } = await connectInteractive()
    try {
      const asked = text(await client.callTool({ name: "ask", arguments: { question: "weather?" } }))
      assert.isTrue(asked.startsWith("fake-model: "))
      assert.deepStrictEqual(JSON.parse(asked.slice("fake-model: ".length)), {
        type: "tool_use",
        id: "t1",
        name: "lookup",
        input: {}
      })
      assert.strictEqual(text(await client.callTool({ name: "configure", arguments: {} })), "red/3")
      const form = elicited[0] as { requestedSchema: { properties: { colour: { default?: string } } } }
      assert.strictEqual(form.requestedSchema.properties.colour.default, "blue")
      assert.strictEqual(text(await client.callTool({ name: "roots", arguments: {} })), "file:///project")
      await setRoots([{ uri: "file:///a", name: "a" }, { uri: "file:///b", name: "b" }])
      assert.strictEqual(text(await client.callTool({ name: "roots", arguments: {} })), "file:///a,file:///b")
      // the server logs the change from its roots/list_changed handler: at most 10 s
      const timeout = new Promise((_, reject) =>
        AbortSignal.timeout(10_000).addEventListener("abort", () => reject(new Error("no log")))
      )
      assert.strictEqual(await Promise.race([firstLog, timeout]), "roots changed")
      assert.deepStrictEqual(logs, ["roots changed"])
    } finally {
      await client.close()
    }
  })
})
