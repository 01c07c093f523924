/**
 * The README's examples are the files in scratchpad/ (compiled by `npm run
 * typecheck`), word for word; and they run.
 */
import { assert, describe, it } from "@effect/vitest"
import { execFile, spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../..", import.meta.url))

const node = (args: ReadonlyArray<string>) =>
  new Promise<{ code: number; stdout: string }>((resolve) =>
    execFile(process.execPath, ["--conditions=development", ...args], { cwd: root, timeout: 30_000 }, (error, stdout) =>
      resolve({ code: error === null ? 0 : 1, stdout }))
  )

describe("README examples", () => {
  it("each example block is the file it names", () => {
    const readme = readFileSync(`${root}README.md`, "utf8")
    const blocks = [...readme.matchAll(/<!-- example: (\S+) -->\n```ts\n([\s\S]*?)```/g)]
    assert.isAtLeast(blocks.length, 5)
    for (const [, file, code] of blocks) {
      assert.strictEqual(code, readFileSync(`${root}${file}`, "utf8"), `README block for ${file}`)
    }
  })

  it("the stdio client spawns the example server and talks to it", async () => {
    const { code, stdout } = await node(["scratchpad/stdio-client.ts"])
    assert.strictEqual(code, 0)
    assert.include(stdout, "tools: countdown, weather")
    assert.include(stdout, "weather: {\"city\":\"Lisbon\",\"celsius\":21.5,\"conditions\":\"sunny\"}")
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
      const url = await new Promise<string>((resolve, reject) => {
        let out = ""
        server.stdout.on("data", (chunk) => {
          out += chunk
          const match = /listening on (\S+)/.exec(out)
          if (match) resolve(match[1]!)
        })
        server.on("exit", (code) => reject(new Error(`server exited with ${code}`)))
      })
      assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
      const { code, stdout } = await node(["scratchpad/http-client.ts", url])
      assert.strictEqual(code, 0)
      assert.include(stdout, "connected to adder (2025-11-25)")
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
})
