/**
 * The JSDoc of the public modules, which the API reference is generated from,
 * passes scripts/check-jsdoc.ts (every export has a summary, every
 * `@example` compiles); and the checker does fail on a module that breaks
 * either rule.
 */
import { assert, describe, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../..", import.meta.url))
const checker = join(root, "scripts", "check-jsdoc.ts")

// the checker builds two TypeScript programs: tens of seconds on a loaded machine
const timeout = 240_000

const check = (args: ReadonlyArray<string>) =>
  new Promise<{ code: number; output: string }>((resolve) =>
    execFile(
      process.execPath,
      [checker, ...args],
      { cwd: root, timeout },
      (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, output: stdout + stderr })
    )
  )

describe("check-jsdoc", () => {
  it("passes on the public modules", async () => {
    const { code, output } = await check([])
    assert.strictEqual(code, 0, output)
    assert.match(output, /^\d+ exports, \d+ examples: ok\n$/m)
  }, timeout)

  it("reports an export without a summary and an example that does not compile", async () => {
    const dir = mkdtempSync(join(tmpdir(), "check-jsdoc-"))
    try {
      const module = join(dir, "Fixture.ts")
      writeFileSync(
        module,
        [
          "/**",
          " * A fixture module.",
          " *",
          " * @since 0.1.0",
          " */",
          "import type * as Fs from \"node:fs\"",
          "",
          "/**",
          " * A documented export.",
          " *",
          " * @since 0.1.0",
          " */",
          "export type Stats = Fs.Stats",
          "",
          "/** @since 0.1.0 */",
          "export const undocumented = 1",
          "",
          "/**",
          " * Documented, with an example that does not compile.",
          " *",
          " * @example",
          " * ```ts",
          " * import { Effect } from \"effect\"",
          " *",
          " * const n: number = Effect.succeed(1)",
          " * ```",
          " *",
          " * @since 0.1.0",
          " */",
          "export const documented = 2",
          ""
        ].join("\n")
      )
      const json = join(dir, "result.json")
      const { code, output } = await check(["--modules", module, "--json", json])
      assert.strictEqual(code, 1, output)
      const lines = output.trim().split("\n")
      assert.deepStrictEqual(lines, [
        `${module}:16 Fixture.undocumented: no summary: the first paragraph of its JSDoc is empty`,
        `${module}:25 Fixture.documented: @example does not compile: TS2322 Type 'Effect<number, never, never>' is not assignable to type 'number'.`,
        "2 of 5 checks failed (1 modules, 3 exports, 1 examples)"
      ])
      const result = JSON.parse(readFileSync(json, "utf8"))
      assert.strictEqual(result.passed, 3)
      assert.strictEqual(result.failed, 2)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, timeout)
})
