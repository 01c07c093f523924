/**
 * The README's examples are the files in scratchpad/ (compiled by `npm run
 * typecheck`), word for word; and they run.
 */
import { assert, describe, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../..", import.meta.url))

describe("README examples", () => {
  it("each example block is the file it names", () => {
    const readme = readFileSync(`${root}README.md`, "utf8")
    const blocks = [...readme.matchAll(/<!-- example: (\S+) -->\n```ts\n([\s\S]*?)```/g)]
    assert.isAtLeast(blocks.length, 2)
    for (const [, file, code] of blocks) {
      assert.strictEqual(code, readFileSync(`${root}${file}`, "utf8"), `README block for ${file}`)
    }
  })

  it("the client example runs and prints its exchange", async () => {
    const { code, stdout } = await new Promise<{ code: number; stdout: string }>((resolve) =>
      execFile(process.execPath, ["--conditions=development", "scratchpad/example-client.ts"], { cwd: root, timeout: 30_000 }, (error, stdout) =>
        resolve({ code: error === null ? 0 : 1, stdout }))
    )
    assert.strictEqual(code, 0)
    assert.include(stdout, "tools: add")
    assert.include(stdout, "progress 1/1")
    assert.include(stdout, "sum: 42")
    assert.include(stdout, "the server logged: {\"type\":\"text\",\"text\":\"forty-two, how true\"}")
  })
})
