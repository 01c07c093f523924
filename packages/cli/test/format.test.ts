import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import * as Format from "../src/internal/format.ts"
import * as McpCli from "../src/McpCli.ts"

describe("output formatting", () => {
  it("aligns columns and leaves the last one unpadded", () => {
    assert.strictEqual(
      Format.table(["TOOL", "SERVER", "DESCRIPTION"], [["weather", "example", "Forecast"], ["echo", "everything", ""]]),
      "TOOL     SERVER      DESCRIPTION\nweather  example     Forecast\necho     everything"
    )
  })

  it("prints tools with their servers, the first line of the description only", () => {
    const text = Format.tools([
      {
        server: "a",
        name: "echo",
        tool: { name: "echo", description: "Echoes\nsecond line", inputSchema: { type: "object" } }
      }
    ])
    assert.strictEqual(text, "TOOL  SERVER  DESCRIPTION\necho  a       Echoes")
    assert.strictEqual(Format.tools([]), "(no tools)")
  })

  it("prints prompts with their arguments, optional ones marked", () => {
    const text = Format.prompts([{
      server: "s",
      name: "explain",
      prompt: { name: "explain", arguments: [{ name: "topic", required: true }, { name: "level" }] }
    }])
    assert.include(text, "explain  s       topic, level?")
  })

  it("prints content blocks: text as is, binary as a size, links as their URI", () => {
    assert.strictEqual(
      Format.callToolResult({
        content: [
          { type: "text", text: "liftoff" },
          { type: "image", data: "aGVsbG8=", mimeType: "image/png" },
          { type: "resource_link", uri: "notes://launch", name: "launch notes" },
          { type: "resource", resource: { uri: "x://y", text: "embedded" } }
        ]
      }),
      "liftoff\n[image image/png, 5 bytes]\n[resource link notes://launch (launch notes)]\nembedded"
    )
    // structured content alone is printed as JSON
    assert.strictEqual(Format.callToolResult({ content: [], structuredContent: { sum: 3 } }), "{\n  \"sum\": 3\n}")
    assert.strictEqual(
      Format.readResourceResult({ contents: [{ uri: "a://b", blob: "AAAA", mimeType: "application/octet-stream" }] }),
      "[blob a://b application/octet-stream, 3 bytes]"
    )
    assert.strictEqual(
      Format.getPromptResult({ messages: [{ role: "user", content: { type: "text", text: "Explain MCP." } }] }),
      "user: Explain MCP."
    )
  })

  it("parses --args: a JSON object, or a usage error naming the problem", () => {
    assert.deepStrictEqual(McpCli.parseArgs(undefined), Result.succeed({}))
    assert.deepStrictEqual(McpCli.parseArgs("{\"a\":1}"), Result.succeed({ a: 1 }))
    const notJson = McpCli.parseArgs("{a:1}")
    assert.isTrue(Result.isFailure(notJson))
    if (Result.isFailure(notJson)) {
      assert.strictEqual(notJson.failure.kind, "Usage")
      assert.include(notJson.failure.message, "--args is not valid JSON")
    }
    const array = McpCli.parseArgs("[1]")
    assert.isTrue(Result.isFailure(array) && array.failure.message.includes("must be a JSON object, got an array"))
    assert.deepStrictEqual(
      McpCli.parsePromptArgs("{\"topic\":\"x\",\"n\":2,\"b\":true}"),
      Result.succeed({ topic: "x", n: "2", b: "true" })
    )
    const nested = McpCli.parsePromptArgs("{\"topic\":{}}")
    assert.isTrue(Result.isFailure(nested) && nested.failure.message.includes("\"topic\""))
  })

  it("exit codes are distinct and carried by the failure", () => {
    const codes = Object.values(McpCli.ExitCode)
    assert.strictEqual(new Set(codes).size, codes.length)
    assert.strictEqual(
      new McpCli.CliFailure({ kind: "Connection", description: "x" })["~effect/Runtime/errorExitCode"],
      3
    )
    assert.strictEqual(
      new McpCli.CliFailure({ kind: "ToolError", description: "x" })["~effect/Runtime/errorExitCode"],
      1
    )
  })
})
