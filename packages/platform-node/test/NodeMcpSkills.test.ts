/**
 * Skills from a real folder (a temporary directory): loaded, served, a file
 * changed on disk after loading refused on read, symlinks (inside a skill,
 * or leaving the folder) and escaping paths refused, reload after a skill is
 * added.
 */
import { McpServer, McpSkills, McpTest } from "@effect-mcp/core"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as NodeMcpSkills from "../src/NodeMcpSkills.ts"

const skillMd = (name: string, description: string) =>
  `---\nname: ${name}\ndescription: ${description}\n---\n# ${name}\n`

/** A temporary folder holding `files` (path → content), removed with the scope. */
const tempFolder = (files: Record<string, string>) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const root = Fs.mkdtempSync(Path.join(Os.tmpdir(), "mcp-skills-"))
      for (const [path, content] of Object.entries(files)) write(root, path, content)
      return root
    }),
    (root) => Effect.sync(() => Fs.rmSync(root, { recursive: true, force: true }))
  )

const write = (root: string, path: string, content: string) => {
  Fs.mkdirSync(Path.dirname(Path.join(root, path)), { recursive: true })
  Fs.writeFileSync(Path.join(root, path), content)
}

const fixture = {
  "pdf-processing/SKILL.md": skillMd("pdf-processing", "Work with PDF files"),
  "pdf-processing/references/FORMS.md": "# Forms\n",
  "acme/review/SKILL.md": skillMd("review", "Review code")
}

const serve = (catalog: McpSkills.Catalog) =>
  McpTest.client(McpServer.layer({ name: "skills", version: "1.0.0" }, McpSkills.extension(catalog)), { era: "legacy" })

const checkOf = (error: { readonly reason: { readonly _tag: string } }) =>
  error.reason._tag === "SkillError" ? (error.reason as { readonly check?: string }).check : undefined

describe("NodeMcpSkills", () => {
  it.effect("loads a folder and serves it", () =>
    Effect.gen(function*() {
      const root = yield* tempFolder(fixture)
      const catalog = yield* NodeMcpSkills.load(root)
      assert.deepStrictEqual((yield* catalog.entries).map((s) => s.uri), [
        "skill://acme/review/SKILL.md",
        "skill://pdf-processing/SKILL.md"
      ])
      const client = yield* serve(catalog)
      const listed = yield* client.session.request(McpSkills.ListSkills, {})
      assert.strictEqual(listed.skills.length, 2)
      const read = yield* client.readResource("skill://pdf-processing/references/FORMS.md")
      assert.deepStrictEqual(read.contents, [
        { uri: "skill://pdf-processing/references/FORMS.md", mimeType: "text/markdown", text: "# Forms\n" }
      ])
      const dir = yield* client.session.request(McpSkills.ReadDirectory, { uri: "skill://pdf-processing" })
      assert.deepStrictEqual(dir.resources.map((r) => r.name), ["SKILL.md", "references"])
    }).pipe(Effect.scoped))

  it.effect("a file changed on disk after loading is refused on read", () =>
    Effect.gen(function*() {
      const root = yield* tempFolder(fixture)
      const catalog = yield* NodeMcpSkills.load(root)
      const client = yield* serve(catalog)
      write(root, "pdf-processing/references/FORMS.md", "# Forms, edited behind the catalog's back\n")
      const refused = yield* Effect.flip(client.readResource("skill://pdf-processing/references/FORMS.md"))
      assert.match(refused.message, /changed since the skills catalog was loaded/)
      // the same size, other bytes: the digest tells
      write(root, "pdf-processing/references/FORMS.md", "# FORMS\n")
      const same = yield* Effect.flip(client.readResource("skill://pdf-processing/references/FORMS.md"))
      assert.match(same.message, /digest/)
      // removed: refused too
      Fs.rmSync(Path.join(root, "pdf-processing/references/FORMS.md"))
      const gone = yield* Effect.flip(client.readResource("skill://pdf-processing/references/FORMS.md"))
      assert.match(gone.message, /could not be read/)
    }).pipe(Effect.scoped))

  it.effect("symlinks are never followed: a skill holding one is refused, reads through one fail", () =>
    Effect.gen(function*() {
      const outside = yield* tempFolder({ "secret.txt": "top secret\n", "SKILL.md": skillMd("evil", "x") })
      const root = yield* tempFolder(fixture)
      Fs.symlinkSync(Path.join(outside, "secret.txt"), Path.join(root, "pdf-processing/secret.txt"))
      Fs.mkdirSync(Path.join(root, "evil"))
      Fs.symlinkSync(Path.join(outside, "SKILL.md"), Path.join(root, "evil/SKILL.md"))
      Fs.symlinkSync(outside, Path.join(root, "linked"))
      const catalog = yield* NodeMcpSkills.load(root)
      assert.deepStrictEqual((yield* catalog.entries).map((s) => s.uri), ["skill://acme/review/SKILL.md"])
      const warnings = yield* catalog.warnings
      assert.isTrue(warnings.some((w) => w.skipped && w.path === "pdf-processing" && /symlink/.test(w.message)))
      assert.isTrue(warnings.some((w) => w.path === "linked" && /symlink/.test(w.message)))
      const strict = yield* Effect.flip(NodeMcpSkills.load(root, { strict: true }))
      assert.strictEqual(checkOf(strict), "path")

      const files = NodeMcpSkills.files(root)
      for (const path of ["pdf-processing/secret.txt", "linked/secret.txt", "evil/SKILL.md"]) {
        const error = yield* Effect.flip(files.read(path))
        assert.strictEqual(checkOf(error), "path", path)
      }
      for (const path of ["../etc/passwd", "pdf-processing/../../x", "/etc/passwd", "a%2Fb", "a%5cb", "a\\b", "a//b"]) {
        const error = yield* Effect.flip(files.read(path))
        assert.strictEqual(checkOf(error), "path", path)
      }
      const listedOutside = yield* Effect.flip(files.list("linked"))
      assert.match(listedOutside.message, /outside the skills folder/)
      assert.deepStrictEqual(
        new TextDecoder().decode(yield* files.read("pdf-processing/references/FORMS.md")),
        "# Forms\n"
      )
    }).pipe(Effect.scoped))

  it.effect("reload picks up a skill added on disk and tells the clients", () =>
    Effect.gen(function*() {
      const root = yield* tempFolder(fixture)
      const catalog = yield* NodeMcpSkills.load(root)
      const seen: Array<string> = []
      const client = yield* McpTest.client(
        McpServer.layer({ name: "skills", version: "1.0.0" }, McpSkills.extension(catalog)),
        { era: "legacy", observeNotification: (n) => void seen.push(n.method) }
      )
      write(root, "new-one/SKILL.md", skillMd("new-one", "Just added"))
      const changes = yield* catalog.reload
      assert.deepStrictEqual(changes, {
        added: ["skill://new-one/SKILL.md"],
        removed: [],
        changed: [],
        listChanged: true
      })
      yield* client.ping()
      assert.include(seen, "notifications/resources/list_changed")
      const { resources } = yield* client.listResources()
      assert.include(resources.map((r) => r.uri), "skill://new-one/SKILL.md")
      const read = yield* client.readResource("skill://new-one/SKILL.md")
      assert.strictEqual((read.contents[0] as { text?: string }).text, skillMd("new-one", "Just added"))
    }).pipe(Effect.scoped))
})
