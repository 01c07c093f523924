/**
 * Interop: our host side of the Skills extension (`McpSkillsClient`) against
 * the official SDK v2 server's own Skills extension
 * (`@modelcontextprotocol/server` 2.4.0, `SkillCatalog` over
 * `memorySkillFiles`, `fixtures/officialSkillsServer.ts`), over stdio (a
 * child process) and Streamable HTTP (127.0.0.1, an ephemeral port), in
 * both eras: every page listed, SKILL.md and supporting files (text and
 * binary) read and verified, `skills/get`, a directory read, and a file
 * not in the entry refused.
 */
import { type McpClient, McpSkillsClient } from "@effect-mcp/core"
import type { McpError } from "@effect-mcp/core"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import type * as Scope from "effect/Scope"
import { fileURLToPath } from "node:url"
import * as NodeMcpHttpClient from "../src/NodeMcpHttpClient.ts"
import { FORMS, listenHttp, LOGO, NOTES_MANIFEST, PDF_MANIFEST } from "./fixtures/officialSkillsServer.ts"
import { connectOver, connectStdio } from "./utils/client.ts"

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url))

type Connect = (era: "modern" | "legacy") => Effect.Effect<McpClient.Client, McpError.McpError, Scope.Scope>

const transports: ReadonlyArray<{ readonly name: string; readonly connect: Connect }> = [
  {
    name: "stdio (child process)",
    connect: (era) =>
      Effect.map(
        connectStdio({ command: process.execPath, args: [fixture("official-skills-server.mjs")], stderr: "capture" }, {
          era
        }),
        ({ client }) => client
      )
  },
  {
    name: "Streamable HTTP (127.0.0.1)",
    connect: (era) =>
      Effect.flatMap(
        Effect.acquireRelease(Effect.promise(() => listenHttp()), (server) => Effect.promise(() => server.close())),
        ({ url }) => connectOver(NodeMcpHttpClient.layer({ url }), { era })
      )
  }
]

const PDF = "skill://pdf-processing/SKILL.md"
const NOTES = "skill://acme-notes/SKILL.md"

for (const transport of transports) {
  for (const era of ["modern", "legacy"] as const) {
    describe(`McpSkillsClient against the official v2 server, ${transport.name}, ${era}`, () => {
      it.live(
        "lists every page, reads SKILL.md and supporting files verified, gets one skill",
        () =>
          Effect.gen(function*() {
            const client = yield* transport.connect(era)
            assert.strictEqual(client.era, era)
            const skills = McpSkillsClient.make(client)
            assert.isTrue(skills.supported)
            const listed = yield* skills.list()
            assert.deepStrictEqual(listed.map((skill) => skill.uri).sort(), [NOTES, PDF])
            const pdf = listed.find((skill) => skill.uri === PDF)!
            const manifest = yield* skills.read(pdf)
            assert.isTrue(manifest.verified)
            assert.strictEqual(manifest.text, PDF_MANIFEST)
            assert.deepStrictEqual(manifest.frontmatter, {
              name: "pdf-processing",
              description: "Extract, fill, and assemble PDF documents"
            })
            const forms = yield* skills.read(pdf, "references/FORMS.md")
            assert.isTrue(forms.verified)
            assert.strictEqual(new TextDecoder().decode(forms.bytes), FORMS)
            const logo = yield* skills.read(pdf, "skill://pdf-processing/assets/logo.bin")
            assert.deepStrictEqual([...logo.bytes], [...LOGO])
            const notes = yield* skills.read(yield* skills.get(NOTES))
            assert.strictEqual(notes.text, NOTES_MANIFEST)
            assert.deepStrictEqual(notes.frontmatter?.metadata, { author: "acme" })
            const unlisted = yield* Effect.flip(skills.read(pdf, "references/MISSING.md"))
            assert.strictEqual(unlisted.reason._tag, "SkillError")
            assert.isTrue(skills.directoryRead)
            const children = yield* skills.readDirectory("skill://pdf-processing")
            assert.includeMembers(children.map((child) => child.uri), [PDF, "skill://pdf-processing/references"])
          }),
        30_000
      )
    })
  }
}
