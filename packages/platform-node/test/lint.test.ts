/**
 * The linter and the formatter (`npm run lint`): oxlint passes on the tree;
 * each of our own rules (scripts/lint/plugin.mjs) fires, with its message, on
 * a violation laid out where .oxlintrc.json applies it, and stays quiet where it
 * does not; dprint with the repository's dprint.json rejects a badly
 * formatted file and accepts a formatted one.
 */
import { assert, describe, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../..", import.meta.url))
const oxlintBin = join(root, "node_modules/oxlint/bin/oxlint")
const dprintBin = join(root, "node_modules/dprint/dprint")

const run = (command: string, args: ReadonlyArray<string>, cwd: string) => {
  const result = spawnSync(command, args, { cwd, encoding: "utf8", timeout: 120_000 })
  return { code: result.status, stdout: result.stdout, stderr: result.stderr }
}

/** oxlint run with the current Node (22: the JS plugin needs it), as `npm run lint` does. */
const oxlint = (cwd: string, args: ReadonlyArray<string> = []) => run(process.execPath, [oxlintBin, ...args], cwd)

/** A temporary directory holding `files`, removed after `use`. */
const withFiles = <A>(files: Record<string, string>, use: (dir: string) => A): A => {
  const dir = mkdtempSync(join(tmpdir(), "effect-mcp-lint-"))
  try {
    for (const [file, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, file)), { recursive: true })
      writeFileSync(join(dir, file), text)
    }
    return use(dir)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** The repository's .oxlintrc.json, its plugin referenced by absolute path. */
const oxlintConfig = () =>
  readFileSync(join(root, ".oxlintrc.json"), "utf8").replace(
    "\"./scripts/lint/plugin.mjs\"",
    JSON.stringify(join(root, "scripts/lint/plugin.mjs"))
  )

/** The repository's dprint.json, its plugins referenced by absolute path. */
const dprintConfig = () =>
  readFileSync(join(root, "dprint.json"), "utf8").replaceAll("\"./node_modules/", `"${join(root, "node_modules")}/`)

interface Diagnostic {
  readonly code: string
  readonly message: string
  readonly filename: string
}

/** One violation per rule, each in a file where .oxlintrc.json applies the rule. */
const violations: ReadonlyArray<{ file: string; code: string; rule: string; message: string }> = [
  {
    file: "packages/core/src/Async.ts",
    code: "export const f = async (x: Promise<number>) => x\n",
    rule: "no-async-await",
    message: "No `async` functions under packages/*/src"
  },
  {
    file: "packages/redis/src/Await.ts",
    code:
      "export function* g(x: Promise<number>) {\n  yield x\n}\nexport const h = async function() {\n  return await Promise.resolve(1)\n}\n",
    rule: "no-async-await",
    message: "No `await` under packages/*/src"
  },
  {
    file: "packages/platform-node/src/Try.ts",
    code:
      "export const f = (s: string): unknown => {\n  try {\n    return JSON.parse(s)\n  } catch {\n    return undefined\n  }\n}\n",
    rule: "no-try",
    message: "No `try` under packages/*/src"
  },
  {
    file: "packages/cli/src/Timer.ts",
    code: "export const f = (g: () => void) => setTimeout(g, 10)\n",
    rule: "no-timers",
    message: "No `setTimeout` under packages/*/src"
  },
  {
    file: "packages/core/src/Now.ts",
    code: "export const f = () => Date.now()\n",
    rule: "no-wall-clock",
    message: "No `Date.now()` under packages/*/src"
  },
  {
    file: "packages/core/src/NewDate.ts",
    code: "export const f = () => new Date()\n",
    rule: "no-wall-clock",
    message: "No `new Date()` without arguments"
  },
  {
    file: "packages/redis/src/Console.ts",
    code: "export const f = (s: string) => console.log(s)\n",
    rule: "no-console",
    message: "No `console.log` under packages/*/src"
  },
  {
    file: "packages/core/src/Barrel.ts",
    code: "import { Effect } from \"effect\"\nexport const f = Effect.void\n",
    rule: "no-barrel-import",
    message: "not the barrel `effect`"
  },
  {
    file: "packages/core/src/Platform.ts",
    code: "import * as NodeFs from \"node:fs\"\nexport const f = NodeFs.existsSync\n",
    rule: "core-no-platform",
    message: "@effect-mcp/core runs on every runtime and imports no platform: not `node:fs`"
  },
  {
    file: "packages/core/src/McpTransport.ts",
    code:
      "import type * as McpServerSession from \"./McpServerSession.ts\"\nexport type S = McpServerSession.ServerSession\n",
    rule: "transport-no-session",
    message: "A transport knows no session: `./McpServerSession.ts` is the server's session"
  },
  {
    file: "packages/platform-node/src/NodeMcpStdio.ts",
    code: "import type * as Engine from \"@effect-mcp/core/McpSession\"\nexport type S = Engine.Session\n",
    rule: "transport-no-session",
    message: "A transport knows no session: `@effect-mcp/core/McpSession` is the session"
  },
  {
    // what internal/task/tasks.ts did before its options type moved to McpTaskStore
    file: "packages/core/src/internal/task/tasks.ts",
    code: "import type * as McpServer from \"../../McpServer.ts\"\nexport type T = McpServer.Options[\"tasks\"]\n",
    rule: "roles-apart",
    message: "`../../McpServer.ts` is the server"
  },
  {
    file: "packages/core/src/internal/session/engine.ts",
    code: "import * as Client from \"../client/client.ts\"\nexport const c = Client\n",
    rule: "roles-apart",
    message: "`../client/client.ts` is the client"
  },
  {
    file: "packages/core/src/internal/server/server.ts",
    code: "import type * as McpClient from \"../../McpClient.ts\"\nexport type C = McpClient.McpClient\n",
    rule: "roles-apart",
    message: "The server and the client stay apart: `../../McpClient.ts` is the client"
  },
  {
    file: "packages/core/src/McpClientSession.ts",
    code: "import * as Context from \"./internal/server/context.ts\"\nexport const c = Context\n",
    rule: "roles-apart",
    message: "The server and the client stay apart: `./internal/server/context.ts` is the server"
  }
]

/** What the rules allow: tests, a date from a value, a parameter named `console`, by-path imports. */
const allowed: Record<string, string> = {
  "packages/core/test/Async.test.ts":
    "export const f = async () => {\n  try {\n    await new Promise((resolve) => setTimeout(resolve, 1))\n  } finally {\n    console.log(Date.now())\n  }\n}\n",
  "packages/core/src/Clean.ts": [
    "import * as Effect from \"effect/Effect\"",
    "import type * as McpSession from \"./McpSession.ts\"",
    "export type S = McpSession.Session",
    "export const at = (millis: number) => new Date(millis)",
    "export const log = (console: { log: (s: string) => void }) => console.log(\"x\")",
    "export const f = Effect.void",
    ""
  ].join("\n"),
  "packages/core/src/internal/task/answers.ts":
    "import type * as McpTaskStore from \"../../McpTaskStore.ts\"\nexport type O = McpTaskStore.TaskOptions\n",
  "packages/core/src/internal/server/task/call.ts":
    "import type * as McpServer from \"../../../McpServer.ts\"\nexport type O = McpServer.Options\n"
}

describe("lint", () => {
  it("oxlint passes on the tree", () => {
    const { code, stdout, stderr } = oxlint(root)
    assert.strictEqual(code, 0, `${stdout}\n${stderr}`)
    assert.match(stdout, /Found 0 warnings and 0 errors/)
  })

  it("each of our rules fires, with its message, where .oxlintrc.json applies it", () => {
    const files: Record<string, string> = { ".oxlintrc.json": oxlintConfig(), ...allowed }
    for (const violation of violations) files[violation.file] = violation.code
    withFiles(files, (dir) => {
      const { stdout } = oxlint(dir, ["--format", "json"])
      const diagnostics: ReadonlyArray<Diagnostic> = JSON.parse(stdout).diagnostics
      const ours = diagnostics.filter((diagnostic) => diagnostic.code.startsWith("effect-mcp("))
      for (const violation of violations) {
        const found = ours.filter((diagnostic) =>
          diagnostic.filename.replaceAll("\\", "/") === violation.file &&
          diagnostic.code === `effect-mcp(${violation.rule})`
        )
        assert.isTrue(
          found.some((diagnostic) => diagnostic.message.includes(violation.message)),
          `${violation.rule} in ${violation.file}: ${JSON.stringify(found)}`
        )
      }
      const rules = new Set(violations.map((violation) => violation.rule))
      assert.strictEqual(rules.size, 9)
      const quiet = ours.filter((diagnostic) => diagnostic.filename.replaceAll("\\", "/") in allowed)
      assert.deepStrictEqual(quiet, [])
    })
  })

  it("dprint check rejects a badly formatted file and accepts a formatted one", () => {
    const formatted = "export const f = (a: number) => {\n  const b = { a, c: \"d\" }\n  return b\n}\n"
    const unformatted = "export const f = (a:number)=>{\n    const b = {a, c: 'd'};\n  return b\n}\n"
    withFiles({ "dprint.json": dprintConfig(), "ok.ts": formatted }, (dir) => {
      const { code, stdout, stderr } = run(dprintBin, ["check", "--config", "dprint.json"], dir)
      assert.strictEqual(code, 0, `${stdout}\n${stderr}`)
    })
    withFiles({ "dprint.json": dprintConfig(), "bad.ts": unformatted }, (dir) => {
      const { code, stdout, stderr } = run(dprintBin, ["check", "--config", "dprint.json"], dir)
      assert.notStrictEqual(code, 0)
      assert.include(`${stdout}${stderr}`, "bad.ts")
    })
  })
})
