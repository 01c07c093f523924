/**
 * The official v2 skills client (`SkillsClient` of
 * `@modelcontextprotocol/client/ext/skills`, which verifies every read
 * against the entry: size, digest, frontmatter) against our server serving
 * a folder of skills (`fixtures/skillsServer.ts`), over stdio (a child
 * process) and over Streamable HTTP (in this process, 127.0.0.1, an
 * ephemeral port), in the client's legacy and modern eras.
 */
import { assert, describe, it } from "@effect/vitest"
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client"
import type { Transport } from "@modelcontextprotocol/client"
import { SkillsClient, SkillVerificationError } from "@modelcontextprotocol/client/ext/skills"
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio"
import { Effect, Layer } from "effect"
import type * as Scope from "effect/Scope"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import * as NodeMcpHttpServer from "../src/NodeMcpHttpServer.ts"
import { skillsServer } from "./fixtures/skillsServer.ts"

const root = fileURLToPath(new URL("../../..", import.meta.url))

const SKILL_MD = `---
name: pdf-processing
description: Extract, fill, and assemble PDF documents
license: Apache-2.0
metadata:
  author: example
  version: "1.0"
allowed-tools: Bash(pdftk:*) Read
---
# PDF processing

Read [the forms guide](references/FORMS.md) before filling a form.
`

const FILES: Record<string, string> = {
  "pdf-processing/SKILL.md": SKILL_MD,
  "pdf-processing/references/FORMS.md": "# Forms\n\nFill them in.\n",
  "pdf-processing/scripts/fill.py": "print('filled')\n",
  "acme/code-review/SKILL.md": "---\nname: code-review\ndescription: Review a diff\n---\nLook at it.\n"
}

/** A folder holding the fixture skills, removed with the scope. */
const skillsFolder = Effect.acquireRelease(
  Effect.sync(() => {
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "mcp-skills-interop-"))
    for (const [path, content] of Object.entries(FILES)) {
      Fs.mkdirSync(Path.dirname(Path.join(dir, path)), { recursive: true })
      Fs.writeFileSync(Path.join(dir, path), content)
    }
    return dir
  }),
  (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
)

type Era = "modern" | "legacy"

const connect = (transport: Transport, era: Era) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new Client({ name: "official-v2-skills", version: "2.4.0" }, {
        capabilities: {},
        versionNegotiation: { mode: era === "legacy" ? "legacy" : { pin: "2026-07-28" } }
      })
      await client.connect(transport)
      return client
    }),
    (client) => Effect.promise(() => client.close())
  )

const stdio = (dir: string) => () =>
  new StdioClientTransport({
    command: process.execPath,
    args: ["--conditions=development", "packages/platform-node/test/fixtures/skills-server.mjs", dir],
    cwd: root,
    stderr: "pipe"
  })

const http = (dir: string) =>
  Effect.gen(function*() {
    const context = yield* Layer.build(NodeMcpHttpServer.layer().pipe(Layer.provideMerge(skillsServer(dir))))
    const url = yield* NodeMcpHttpServer.url().pipe(Effect.provideContext(context))
    return () => new StreamableHTTPClientTransport(new URL(url))
  })

const runners: ReadonlyArray<{
  readonly name: string
  readonly transport: (dir: string) => Effect.Effect<() => Transport, unknown, Scope.Scope>
}> = [
  { name: "stdio (child process)", transport: (dir) => Effect.succeed(stdio(dir)) },
  { name: "Streamable HTTP (127.0.0.1)", transport: http }
]

for (const { name, transport } of runners) {
  for (const era of ["legacy", "modern"] as const) {
    describe(`interop: official v2 SkillsClient (${era}) → our skills server over ${name}`, () => {
      it.live("lists the skills, reads SKILL.md and a supporting file, all verified", () =>
        Effect.gen(function*() {
          const dir = yield* skillsFolder
          const open = yield* transport(dir)
          const client = yield* connect(open(), era)
          const skills = new SkillsClient(client)
          assert.isTrue(skills.supported)
          assert.isTrue(skills.directoryRead)
          const listing = yield* Effect.promise(() => skills.list())
          assert.deepStrictEqual(listing.invalid, [])
          assert.deepStrictEqual(listing.skills.map((s) => s.uri), [
            "skill://acme/code-review/SKILL.md",
            "skill://pdf-processing/SKILL.md"
          ])
          if (era === "modern") {
            assert.isNumber(listing.ttlMs)
            assert.isString(listing.cacheScope)
          }
          const pdf = listing.skills[1]!
          const manifest = yield* Effect.promise(() => skills.read(pdf))
          assert.isTrue(manifest.verified)
          assert.strictEqual(manifest.text, SKILL_MD)
          assert.deepStrictEqual(manifest.frontmatter, pdf.frontmatter)
          assert.strictEqual(manifest.mimeType, "text/markdown")
          const forms = yield* Effect.promise(() => skills.read(pdf, "references/FORMS.md"))
          assert.isTrue(forms.verified)
          assert.strictEqual(forms.text, FILES["pdf-processing/references/FORMS.md"])
          const script = yield* Effect.promise(() => skills.read(pdf, "scripts/fill.py"))
          assert.isTrue(script.verified)

          const got = yield* Effect.promise(() => skills.get(pdf.uri))
          assert.deepStrictEqual(got.skill, pdf)
          const directory = yield* Effect.promise(() => skills.readDirectory("skill://pdf-processing"))
          assert.deepStrictEqual(directory.resources.map((r) => [r.name, r.mimeType]), [
            ["SKILL.md", "text/markdown"],
            ["references", "inode/directory"],
            ["scripts", "inode/directory"]
          ])

          // a file not in the entry: refused by the client before any read
          const unlisted = yield* Effect.promise(() =>
            skills.read(pdf, "references/OTHER.md").then(() => undefined, (e) => e)
          )
          assert.instanceOf(unlisted, SkillVerificationError)

          // changed on disk after loading: our server refuses it (never stale or unverified content)
          Fs.writeFileSync(
            Path.join(dir, "pdf-processing/references/FORMS.md"),
            "# Forms\n\nEdited behind the catalog.\n"
          )
          const changed = yield* Effect.promise(() =>
            skills.read(pdf, "references/FORMS.md").then(() => undefined, (e) => e)
          )
          assert.match(String(changed), /changed since the skills catalog was loaded/)
        }).pipe(Effect.scoped), 30_000)
    })
  }
}
