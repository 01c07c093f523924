/**
 * The conformance fixtures in scratchpad/conformance (which `npm run
 * conformance` runs the official suite against): the loopback preload the
 * runner is started with, the server's HTTP mode as `npm run conformance`
 * starts it, and the exact shapes the server's scenarios check, seen by the
 * official SDK client over stdio.
 */
import { assert, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { execFile, spawn } from "node:child_process"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../..", import.meta.url))

const runNode = (args: ReadonlyArray<string>) =>
  new Promise<{ readonly code: number; readonly stdout: string; readonly stderr: string }>((resolve) =>
    execFile(
      process.execPath,
      [...args],
      { cwd: root, timeout: 30_000 },
      (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr })
    )
  )

describe("conformance: loopback.cjs", () => {
  it("binds every listen() without a loopback host to 127.0.0.1, synchronously", async () => {
    const script = `
      const net = require("node:net")
      const calls = {
        "listen(0)": (s) => s.listen(0),
        "listen()": (s) => s.listen(),
        "listen(cb)": (s) => s.listen(() => {}),
        "listen(0, 0.0.0.0)": (s) => s.listen(0, "0.0.0.0"),
        "listen(0, ::)": (s) => s.listen(0, "::"),
        "listen({ port: 0 })": (s) => s.listen({ port: 0 }),
        "listen(0, backlog)": (s) => s.listen(0, 16)
      }
      const out = {}
      for (const [name, call] of Object.entries(calls)) {
        const server = net.createServer()
        call(server)
        out[name] = server.address()?.address ?? null
        server.close()
      }
      console.log(JSON.stringify(out))`
    const { code, stdout } = await runNode(["--require", "./scratchpad/conformance/loopback.cjs", "-e", script])
    assert.strictEqual(code, 0)
    const addresses = JSON.parse(stdout) as Record<string, string | null>
    assert.strictEqual(Object.keys(addresses).length, 7)
    for (const [call, address] of Object.entries(addresses)) assert.strictEqual(address, "127.0.0.1", call)
  })

  it("leaves unix sockets alone", async () => {
    const path = `/tmp/effect-mcp-loopback-${process.pid}.sock`
    const script = `
      const server = require("node:net").createServer()
      server.listen(${JSON.stringify(path)}, () => { console.log(server.address()); server.close() })`
    const { code, stdout } = await runNode(["--require", "./scratchpad/conformance/loopback.cjs", "-e", script])
    assert.strictEqual(code, 0)
    assert.strictEqual(stdout.trim(), path)
  })
})

describe("conformance: the server fixture over Streamable HTTP", () => {
  it("--port 0 binds 127.0.0.1, prints its URL, serves the official SDK client, and stops on SIGTERM", async () => {
    const child = spawn(
      process.execPath,
      ["--conditions=development", "scratchpad/conformance/server.ts", "--port", "0"],
      { cwd: root, stdio: ["ignore", "pipe", "pipe"] }
    )
    const exited = new Promise<number | string | null>((resolve) =>
      child.on("exit", (code, signal) => resolve(signal ?? code))
    )
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let seen = ""
        const timer = setTimeout(() => reject(new Error(`no URL within 20 s: ${seen}`)), 20_000)
        child.stdout.on("data", (chunk: Buffer) => {
          seen += chunk.toString()
          const match = /listening on (\S+)/.exec(seen)
          if (match !== null) {
            clearTimeout(timer)
            resolve(match[1]!)
          }
        })
      })
      assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
      const client = new Client({ name: "official-sdk", version: "1.0.0" })
      await client.connect(new StreamableHTTPClientTransport(new URL(url)))
      try {
        const { tools } = await client.listTools()
        assert.strictEqual(tools.length, 35)
        const result = await client.callTool({ name: "test_simple_text", arguments: {} })
        assert.deepStrictEqual(result.content, [{ type: "text", text: "This is a simple text response for testing." }])
      } finally {
        await client.close()
      }
    } finally {
      child.kill("SIGTERM")
    }
    assert.include([0, "SIGTERM", 130, 143], await exited)
  })
})

describe("conformance: the server fixture over stdio", () => {
  const connectSdkClient = async () => {
    const client = new Client(
      { name: "official-sdk", version: "1.0.0" },
      { capabilities: { elicitation: { form: {} } } }
    )
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ["--conditions=development", "scratchpad/conformance/server.ts", "--stdio"],
      cwd: root,
      stderr: "pipe"
    })
    await client.connect(transport)
    return client
  }

  it("lists every tool, resource and prompt the server scenarios call", async () => {
    const client = await connectSdkClient()
    try {
      const { tools } = await client.listTools()
      // listed in name order (2026-07-28), whatever the order of registration
      assert.deepStrictEqual(tools.map((tool) => tool.name), [
        "confirm_delete",
        "failing_job",
        "greet",
        "json_schema_2020_12_tool",
        "multi_input",
        "protocol_error_job",
        "slow_compute",
        "test_audio_content",
        "test_elicitation",
        "test_elicitation_sep1034_defaults",
        "test_elicitation_sep1330_enums",
        "test_embedded_resource",
        "test_error_handling",
        "test_header_params",
        "test_image_content",
        "test_input_required_result_capabilities",
        "test_input_required_result_elicitation",
        "test_input_required_result_list_roots",
        "test_input_required_result_multi_round",
        "test_input_required_result_multiple_inputs",
        "test_input_required_result_request_state",
        "test_input_required_result_sampling",
        "test_input_required_result_tampered_state",
        "test_logging_tool",
        "test_missing_capability",
        "test_multiple_content_types",
        "test_reconnection",
        "test_sampling",
        "test_simple_text",
        "test_streaming_elicitation",
        "test_tool_with_logging",
        "test_tool_with_progress",
        "test_tool_with_task",
        "test_trigger_prompt_change",
        "test_trigger_tool_change"
      ])
      const schema = tools.find((tool) => tool.name === "json_schema_2020_12_tool")?.inputSchema
      assert.strictEqual(schema?.$schema, "https://json-schema.org/draft/2020-12/schema")
      assert.deepStrictEqual(Object.keys((schema?.$defs ?? {}) as object), ["address"])
      assert.strictEqual(schema?.additionalProperties, false)
      // the 2020-12 keywords are listed as written: $anchor, composition, conditionals
      assert.strictEqual((schema?.$defs as any)?.address?.$anchor, "addressDef")
      assert.deepStrictEqual(Object.keys(schema?.properties ?? {}), [
        "name",
        "address",
        "contactMethod",
        "phone",
        "email"
      ])
      assert.deepStrictEqual(schema?.properties?.address, { $ref: "#/$defs/address" })
      assert.deepStrictEqual(schema?.allOf, [{ anyOf: [{ required: ["phone"] }, { required: ["email"] }] }])
      assert.deepStrictEqual(schema?.if, {
        properties: { contactMethod: { const: "phone" } },
        required: ["contactMethod"]
      })
      assert.deepStrictEqual(schema?.then, { required: ["phone"] })
      assert.deepStrictEqual(schema?.else, { required: ["email"] })
      const { resources } = await client.listResources()
      assert.deepStrictEqual(resources.map((resource) => resource.uri).sort(), [
        "skill://acme/pdf-processing/SKILL.md",
        "skill://code-review/SKILL.md",
        "skill://docs-writer/SKILL.md",
        "test://static-binary",
        "test://static-text",
        "test://watched-resource"
      ])
      const { prompts } = await client.listPrompts()
      assert.deepStrictEqual(prompts.map((prompt) => prompt.name).sort(), [
        "test_input_required_result_prompt",
        "test_prompt_with_arguments",
        "test_prompt_with_embedded_resource",
        "test_prompt_with_image",
        "test_simple_prompt"
      ])
    } finally {
      await client.close()
    }
  })

  it("SEP-1034: the elicitation form carries a default of each primitive kind", async () => {
    const client = await connectSdkClient()
    try {
      let requested: unknown
      client.setRequestHandler(ElicitRequestSchema, (request) => {
        requested = request.params
        return { action: "accept", content: { name: "Jane", age: 25, score: 88, status: "inactive", verified: false } }
      })
      const result = await client.callTool({ name: "test_elicitation_sep1034_defaults", arguments: {} })
      assert.notStrictEqual(result.isError, true)
      assert.deepStrictEqual((requested as { requestedSchema: unknown }).requestedSchema, {
        type: "object",
        properties: {
          name: { type: "string", default: "John Doe" },
          age: { type: "integer", default: 30 },
          score: { type: "number", default: 95.5 },
          status: { type: "string", enum: ["active", "inactive", "pending"], default: "active" },
          verified: { type: "boolean", default: true }
        }
      })
    } finally {
      await client.close()
    }
  })

  it("SEP-1330: the elicitation form has the five enum forms, legacy enumNames included", async () => {
    const client = await connectSdkClient()
    try {
      let requested: { requestedSchema: { properties: Record<string, unknown> } } | undefined
      client.setRequestHandler(ElicitRequestSchema, (request) => {
        requested = request.params as typeof requested
        return { action: "accept", content: { untitledSingle: "option1" } }
      })
      const result = await client.callTool({ name: "test_elicitation_sep1330_enums", arguments: {} })
      assert.notStrictEqual(result.isError, true)
      const properties = requested!.requestedSchema.properties
      assert.deepStrictEqual(Object.keys(properties), [
        "untitledSingle",
        "titledSingle",
        "legacyEnum",
        "untitledMulti",
        "titledMulti"
      ])
      assert.deepStrictEqual(properties.legacyEnum, {
        type: "string",
        enum: ["opt1", "opt2", "opt3"],
        enumNames: ["Option One", "Option Two", "Option Three"]
      })
    } finally {
      await client.close()
    }
  })
})
