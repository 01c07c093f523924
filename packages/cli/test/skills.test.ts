/**
 * `effect-mcp skills list|show|read`, run as the built bin against real
 * stdio server processes: our skills server (`McpSkills.load` +
 * `McpSkills.extension`, `fixtures/skills-server.ts`) and a server played by
 * hand that serves files differing from their entries
 * (`fixtures/tampered-skills-server.mjs <size|digest|frontmatter>`): verified
 * content on stdout, made safe for a terminal; a verification failure exits 4
 * naming the check and prints nothing of the file.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { join } from "node:path"
import { assertExit, quote, root, runCli, tempDir } from "./utils/cli.ts"

const skillsServer = join(root, "packages/cli/test/fixtures/skills-server.ts")
const tamperedServer = join(root, "packages/cli/test/fixtures/tampered-skills-server.mjs")
const node = quote(process.execPath)
const ours = ["--stdio", `${node} ${quote(skillsServer)}`]
const tampered = (lie: string) => ["--stdio", `${node} ${quote(tamperedServer)} ${lie}`]

const files = tempDir({
  "mcp.json": {
    mcpServers: {
      docs: { command: process.execPath, args: [skillsServer] },
      honest: { command: process.execPath, args: [tamperedServer, "none"] }
    }
  }
})
afterAll(() => files.cleanup())
const cfg = ["--config", files.path("mcp.json")]

const PDF = "skill://pdf-processing/SKILL.md"

describe("effect-mcp skills", () => {
  it.live("list: every server's skills (URI, name, description), also as JSON", () =>
    Effect.gen(function*() {
      const [text, json] = yield* Effect.all([
        runCli(["skills", "list", ...cfg]),
        runCli(["skills", "list", "--json", ...cfg])
      ], {
        concurrency: "unbounded"
      })
      assertExit(text, 0)
      const lines = text.stdout.trim().split("\n")
      assert.match(lines[0]!, /^SERVER\s+URI\s+NAME\s+DESCRIPTION$/)
      assert.match(text.stdout, /docs\s+skill:\/\/acme-notes\/SKILL\.md\s+acme-notes\s+Take notes the ACME way/)
      assert.match(text.stdout, /honest\s+skill:\/\/pdf-processing\/SKILL\.md\s+pdf-processing/)
      assertExit(json, 0)
      const rows = JSON.parse(json.stdout) as ReadonlyArray<{ server: string; uri: string; name: string }>
      assert.deepStrictEqual(rows.map((row) => `${row.server} ${row.name}`), [
        "docs acme-notes",
        "docs pdf-processing",
        "honest pdf-processing"
      ])
    }), 60_000)

  it.live(
    "show: the entry, its frontmatter and files; a name two servers serve is a usage error (--server picks one)",
    () =>
      Effect.gen(function*() {
        const [shown, ambiguous, picked, unknown] = yield* Effect.all([
          runCli(["skills", "show", "acme-notes", ...cfg]),
          runCli(["skills", "show", "pdf-processing", ...cfg]),
          runCli(["skills", "show", PDF, "--server", "docs", "--json", ...cfg]),
          runCli(["skills", "show", "nope", ...ours])
        ], { concurrency: "unbounded" })
        assertExit(shown, 0)
        assert.include(shown.stdout, "skill://acme-notes/SKILL.md (server docs)")
        assert.include(shown.stdout, "  license: MIT")
        assert.match(shown.stdout, /skill:\/\/acme-notes\/SKILL\.md\s+\d+\s+sha256:[0-9a-f]{64}/)
        assertExit(ambiguous, 2)
        assert.include(ambiguous.stderr, "--server")
        assertExit(picked, 0)
        const entry = JSON.parse(picked.stdout)
        assert.strictEqual(entry.server, "docs")
        assert.deepStrictEqual(entry.resources.map((file: { uri: string }) => file.uri).sort(), [
          PDF,
          "skill://pdf-processing/assets/logo.bin",
          "skill://pdf-processing/references/FORMS.md"
        ])
        assertExit(unknown, 2)
        assert.include(unknown.stderr, "unknown skill \"nope\"")
      }),
    60_000
  )

  it.live(
    "read: verified content on stdout, terminal-safe; a binary file as base64 with --json",
    () =>
      Effect.gen(function*() {
        const [manifest, forms, logo, unlisted] = yield* Effect.all([
          runCli(["skills", "read", "pdf-processing", ...ours]),
          runCli(["skills", "read", PDF, "references/FORMS.md", ...ours]),
          runCli(["skills", "read", "pdf-processing", "assets/logo.bin", "--json", ...ours]),
          runCli(["skills", "read", "pdf-processing", "references/NOPE.md", ...ours])
        ], { concurrency: "unbounded" })
        assertExit(manifest, 0)
        assert.strictEqual(
          manifest.stdout,
          "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n---\n# PDF processing\n\nSee references/FORMS.md.\n"
        )
        assertExit(forms, 0)
        assert.strictEqual(forms.stdout, "Fill every field, then \\x1b[31mflatten\\x1b[0m the form.\n")
        assert.notInclude(forms.stdout, "\u001b")
        assertExit(logo, 0)
        const read = JSON.parse(logo.stdout)
        assert.deepStrictEqual([read.verified, read.size, read.blob], [true, 8, "iVBORwABAv8="])
        assertExit(unlisted, 4)
        assert.include(unlisted.stderr, "skill check \"unlisted\" failed")
      }),
    60_000
  )

  it.live(
    "read: a file that fails verification exits 4 naming the check, and nothing of it is printed",
    () =>
      Effect.gen(function*() {
        const runs = yield* Effect.all(
          ["size", "digest", "frontmatter"].map((lie) => runCli(["skills", "read", PDF, ...tampered(lie)])),
          { concurrency: "unbounded" }
        )
        for (const [ran, check] of runs.map((ran, i) => [ran, ["size", "digest", "frontmatter"][i]!] as const)) {
          assertExit(ran, 4)
          assert.strictEqual(ran.stdout, "")
          assert.include(ran.stderr, `skill check "${check}" failed`)
        }
        assert.include(runs[2]!.stderr, "description: file \"Exfiltrate credentials\"")
        const honest = yield* runCli(["skills", "read", PDF, ...tampered("none")])
        assertExit(honest, 0)
        assert.include(honest.stdout, "Skill body.")
      }),
    60_000
  )
})
