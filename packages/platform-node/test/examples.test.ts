/**
 * The README's examples are the files in scratchpad/ (compiled by `npm run
 * typecheck`), word for word; the documentation site (`docs/`) has no code
 * block of its own: each is a snippet import of such a file (VitePress's
 * `<<< @/../scratchpad/...`), which must exist, with its region; and they run.
 */
import { assert, describe, it } from "@effect/vitest"
import { type ChildProcessByStdio, execFile, spawn } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, relative, resolve } from "node:path"
import type { Readable } from "node:stream"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../..", import.meta.url))

const run = (args: ReadonlyArray<string>) =>
  new Promise<{ code: number; stdout: string }>((resolve) =>
    execFile(
      process.execPath,
      args,
      { cwd: root, timeout: 30_000 },
      (error, stdout) => resolve({ code: error === null ? 0 : 1, stdout })
    )
  )

const node = (args: ReadonlyArray<string>) => run(["--conditions=development", ...args])

/** The documentation site's source folder (`@/` in its snippet imports). */
const docsDir = join(root, "docs")

/** Every page of the site written by hand: not the generated API reference, not VitePress's own folder. */
const docsPages = (): Array<string> => {
  const pages: Array<string> = []
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) {
        if (path !== join(docsDir, "api") && !entry.name.startsWith(".") && entry.name !== "node_modules") walk(path)
      } else if (entry.name.endsWith(".md")) {
        pages.push(path)
      }
    }
  }
  walk(docsDir)
  assert.isAtLeast(pages.length, 20, "the site's pages")
  return pages
}

/** The `effect-mcp` command, as `npx effect-mcp` runs it. */
const cli = (args: ReadonlyArray<string>) => run(["packages/cli/bin/effect-mcp.js", ...args])

/** The URL a server example prints (`listening on <url>`), once it does. */
const listeningUrl = (server: ChildProcessByStdio<null, Readable, null>) =>
  new Promise<string>((resolve, reject) => {
    let out = ""
    server.stdout.on("data", (chunk) => {
      out += chunk
      const match = /listening on (\S+)/.exec(out)
      if (match) resolve(match[1]!)
    })
    server.on("exit", (code) => reject(new Error(`server exited with ${code}`)))
  })

describe("README examples", () => {
  it("each example block is the file it names", () => {
    const readme = readFileSync(`${root}README.md`, "utf8")
    const blocks = [...readme.matchAll(/<!-- example: (\S+) -->\n+```ts\n([\s\S]*?)```/g)]
    assert.isAtLeast(blocks.length, 1)
    for (const [, file, code] of blocks) {
      assert.strictEqual(code, readFileSync(`${root}${file}`, "utf8"), `README block for ${file}`)
    }
  })

  it("each snippet import of the documentation names a file that exists, and its region", () => {
    const imports = docsPages().flatMap((page) =>
      readFileSync(page, "utf8").split("\n").flatMap((line, index) => {
        const match = /^\s*<<<\s+(\S+)/.exec(line)
        return match === null ? [] : [{ where: `${relative(root, page)}:${index + 1}`, target: match[1]! }]
      })
    )
    assert.isAtLeast(imports.length, 30)
    for (const { target, where } of imports) {
      // `@/` is the site's source folder; then an optional `#region`, `{highlights}` and `[title]`
      const match = /^@\/([^#{[\s]+)(?:#([\w-]+))?(?:\{[^}]*\})?(?:\[[^\]]*\])?$/.exec(target)
      assert.isNotNull(match, `${where}: a snippet import from @/…: ${target}`)
      const file = resolve(docsDir, match![1]!)
      assert.isTrue(existsSync(file), `${where}: ${relative(root, file)} exists`)
      const region = match![2]
      if (region !== undefined) {
        const text = readFileSync(file, "utf8")
        const start = text.search(new RegExp(`#region ${region}\\b`))
        assert.isAtLeast(start, 0, `${where}: ${relative(root, file)} has #region ${region}`)
        assert.isAtLeast(text.indexOf("#endregion", start), 0, `${where}: #region ${region} ends`)
      }
    }
  })

  it("no TypeScript or JSON block of the documentation is written inline", () => {
    const inlineForbidden = ["ts", "typescript", "tsx", "mts", "js", "javascript", "json", "jsonc"]
    for (const page of docsPages()) {
      readFileSync(page, "utf8").split("\n").forEach((line, index) => {
        const fence = /^\s*(?:```|~~~)\s*(\w+)/.exec(line)
        const language = fence?.[1]?.toLowerCase()
        assert.isFalse(
          language !== undefined && inlineForbidden.includes(language),
          `${relative(root, page)}:${index + 1}: a ${language} block written inline; import a file (<<< @/../…)`
        )
      })
    }
  })

  it("the tasks example follows a task to its result, answering its question, and cancels another", async () => {
    const { code, stdout } = await node(["scratchpad/example-tasks.ts"])
    assert.strictEqual(code, 0)
    assert.include(stdout, "task started")
    assert.include(stdout, "input_required")
    assert.include(stdout, "result: rendered intro.mp4 (3 frames)")
    assert.include(stdout, "second task: cancelled")
  })

  it("the OpenTelemetry example exports the mcp_ metrics and the server's spans", async () => {
    const { code, stdout } = await node(["scratchpad/example-otel.ts"])
    assert.strictEqual(code, 0)
    assert.include(stdout, `mcp_requests_total {"method":"tools/call","outcome":"ok"} 3`)
    assert.include(stdout, `mcp_requests_total {"method":"tools/call","outcome":"error"} 1`)
    assert.include(stdout, `mcp_request_duration_ms {"method":"tools/call"} count=4`)
    assert.include(stdout, "mcp_sessions_active {} 1")
    assert.include(stdout, "McpServer tools/call")
  })

  it("the gateway example serves two servers as one; the legacy server's question is a held round", async () => {
    const { code, stdout } = await node(["scratchpad/gateway.ts"])
    assert.strictEqual(code, 0)
    assert.include(stdout, "connected (2026-07-28)")
    assert.include(stdout, "tools: example__countdown, example__weather, notes__delete_note")
    assert.include(stdout, "asked: Delete groceries?")
    assert.include(stdout, "notes__delete_note -> deleted groceries (the call behind ran 1 time)")
  })

  it("the stdio client spawns the example server and talks to it", async () => {
    const { code, stdout } = await node(["scratchpad/stdio-client.ts"])
    assert.strictEqual(code, 0)
    assert.include(stdout, "tools: countdown, weather")
    assert.include(stdout, "weather: {\"city\":\"Lisbon\",\"celsius\":21.5,\"conditions\":\"sunny\"}")
  })

  it("the example server, unchanged, answers a 2026-07-28 client over stdio (no initialize)", async () => {
    const child = spawn(process.execPath, ["--conditions=development", "scratchpad/example-server.ts"], {
      cwd: root,
      stdio: ["pipe", "pipe", "ignore"]
    })
    const meta = {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientInfo": { name: "modern", version: "1" },
      "io.modelcontextprotocol/clientCapabilities": {}
    }
    const lines: Array<any> = []
    let buffer = ""
    const answered = new Promise<void>((resolve) =>
      child.stdout.on("data", (chunk: Buffer) => {
        buffer += chunk.toString("utf8")
        for (let end = buffer.indexOf("\n"); end !== -1; end = buffer.indexOf("\n")) {
          lines.push(JSON.parse(buffer.slice(0, end)))
          buffer = buffer.slice(end + 1)
        }
        if (lines.filter((line) => "id" in line).length >= 2) resolve()
      })
    )
    const exited = new Promise<number | null>((resolve) => child.on("exit", resolve))
    const send = (message: object) => child.stdin.write(JSON.stringify(message) + "\n")
    send({ jsonrpc: "2.0", id: 1, method: "server/discover", params: { _meta: meta } })
    send({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "weather", arguments: { city: "Lisbon" }, _meta: meta }
    })
    await answered
    child.stdin.end()
    const discover = lines.find((line) => line.id === 1)
    assert.include(discover.result.supportedVersions, "2026-07-28")
    assert.strictEqual(discover.result._meta["io.modelcontextprotocol/serverInfo"].name, "example-server")
    const weather = lines.find((line) => line.id === 2)
    assert.strictEqual(weather.result.resultType, "complete")
    assert.deepStrictEqual(weather.result.structuredContent, { city: "Lisbon", celsius: 21.5, conditions: "sunny" })
    assert.strictEqual(await exited, 0)
  })

  it("the OAuth demo signs in, steps up, and exits", async () => {
    const { code, stdout } = await node(["scratchpad/oauth-demo.ts"])
    assert.strictEqual(code, 0)
    assert.strictEqual(
      stdout,
      [
        "whoami: user-1 with mcp:read",
        "deploy: deployed",
        "registrations: 1",
        "authorizations: mcp:read | mcp:read mcp:admin",
        "token requests: authorization_code, authorization_code",
        ""
      ].join("\n")
    )
  })

  it("the HTTP client talks to the HTTP server example", async () => {
    const server = spawn(process.execPath, ["--conditions=development", "scratchpad/http-server.ts", "--port", "0"], {
      cwd: root,
      stdio: ["ignore", "pipe", "inherit"]
    })
    try {
      const url = await listeningUrl(server)
      assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
      const { code, stdout } = await node(["scratchpad/http-client.ts", url])
      assert.strictEqual(code, 0)
      // our client and our server settle on the stateless revision
      assert.include(stdout, "connected to adder (2026-07-28)")
      assert.include(stdout, "sum: 42")
    } finally {
      server.kill("SIGTERM")
    }
  })

  it("the client example runs and prints its exchange", async () => {
    const { code, stdout } = await node(["scratchpad/example-client.ts"])
    assert.strictEqual(code, 0)
    assert.include(stdout, "tools: add")
    assert.include(stdout, "progress 1/1")
    assert.include(stdout, "sum: 42")
    assert.include(stdout, "the server logged: {\"type\":\"text\",\"text\":\"forty-two, how true\"}")
  })

  it("the quick-start client starts the quick-start server, saves a note and reads it back", async () => {
    const { code, stdout } = await node([
      "scratchpad/quickstart/client.ts",
      process.execPath,
      "--conditions=development",
      "scratchpad/quickstart/server.ts"
    ])
    assert.strictEqual(code, 0)
    assert.strictEqual(stdout, "tools: add_note, list_notes\nsaved groceries\nnote://groceries: eggs, milk\n")
  })

  it("the quick-start server, bundled as README \"Production\" says, runs with plain node", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mcp-bundle-"))
    try {
      // `npx rolldown server.ts --platform node --minify -d build`, from our packages' dist/
      const bundled = await run([
        "node_modules/rolldown/bin/cli.mjs",
        "scratchpad/quickstart/server.ts",
        "--platform",
        "node",
        "--minify",
        "-d",
        dir
      ])
      assert.strictEqual(bundled.code, 0)
      assert.isTrue(existsSync(join(dir, "server.js")))
      // the lazily loaded modules (the stdio client, the JSON Schema validator) are chunks of their own
      assert.isAbove(readdirSync(dir).length, 1)
      const { code, stdout } = await node([
        "scratchpad/quickstart/client.ts",
        process.execPath,
        join(dir, "server.js")
      ])
      assert.strictEqual(code, 0)
      assert.strictEqual(stdout, "tools: add_note, list_notes\nsaved groceries\nnote://groceries: eggs, milk\n")
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it("the agent's model calls an MCP tool and reads its answer", async () => {
    const { code, stdout } = await node(["scratchpad/agent.ts"])
    assert.strictEqual(code, 0)
    assert.strictEqual(stdout, "The tool said: saved ideas\n")
  })

  it("the effect/ai toolkit is served as MCP tools, with its Schemas and hints", async () => {
    const server = `"${process.execPath}" --conditions=development scratchpad/toolkit-server.ts`
    const listed = await cli(["--json", "--stdio", server, "list", "tools"])
    assert.strictEqual(listed.code, 0)
    const [{ name, tool: search }] = JSON.parse(listed.stdout)
    assert.strictEqual(name, "search")
    assert.strictEqual(search.annotations.readOnlyHint, true)
    assert.deepStrictEqual(search.inputSchema.required, ["query"])
    assert.strictEqual(search.outputSchema.type, "object")
    const called = await cli([
      "--json",
      "--stdio",
      server,
      "call",
      "search",
      "--args",
      JSON.stringify({ query: "mcp" })
    ])
    assert.strictEqual(called.code, 0)
    assert.include(called.stdout, "notes about mcp")
  })

  it("the quick-start HTTP server answers the CLI's call over Streamable HTTP", async () => {
    const server = spawn(process.execPath, ["--conditions=development", "scratchpad/quickstart/http-server.ts"], {
      cwd: root,
      env: { ...process.env, PORT: "0" },
      stdio: ["ignore", "pipe", "inherit"]
    })
    try {
      const url = await listeningUrl(server)
      const { code, stdout } = await cli([
        "--url",
        url,
        "call",
        "add_note",
        "--args",
        "{\"title\":\"a\",\"body\":\"b\"}"
      ])
      assert.strictEqual(code, 0)
      assert.strictEqual(stdout, "saved a\n")
    } finally {
      server.kill("SIGTERM")
    }
  })
})
