/**
 * The Skills extension's server side: a catalog loaded from memory, served
 * in both eras (skills/list paged with whole entries, skills/get, directory
 * reads, SKILL.md listed and every file read after verification), reloads
 * announcing list changes, and the rules a skill must keep.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import { sha256 } from "../src/internal/skills/digest.ts"
import * as JsonRpc from "../src/JsonRpc.ts"
import type * as McpError from "../src/McpError.ts"
import * as McpServer from "../src/McpServer.ts"
import * as McpSkills from "../src/McpSkills.ts"
import * as McpTest from "../src/McpTest.ts"

const skillMd = (name: string, description: string, extra = "") =>
  `---\nname: ${name}\ndescription: ${description}\n${extra}---\n# ${name}\n\nUse it well.\n`

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0xff, 0xfe, 0x00, 0x01])

const fixture = (): Record<string, string | Uint8Array> => ({
  "acme/pdf-processing/SKILL.md": skillMd(
    "pdf-processing",
    "Extract, fill and assemble PDF documents",
    "license: MIT\n"
  ),
  "acme/pdf-processing/references/FORMS.md": "# Forms\n",
  "acme/pdf-processing/references/deep/NOTES.txt": "notes\n",
  "acme/pdf-processing/assets/logo.png": PNG,
  "acme/pdf-processing/.hidden": "never served",
  "git-review/SKILL.md": skillMd("git-review", "Review a git diff"),
  "zeta/SKILL.md": skillMd("zeta", "The last one")
})

const code = (error: McpError.McpError) => error.reason._tag === "ProtocolError" ? error.reason.code : undefined
const checkOf = (error: McpError.McpError) => error.reason._tag === "SkillError" ? error.reason.check : undefined

const serverOf = (catalog: McpSkills.Catalog, options?: McpSkills.ExtensionOptions) =>
  McpServer.layer({ name: "skills", version: "1.0.0" }, McpSkills.extension(catalog, options))

const PDF = "skill://acme/pdf-processing/SKILL.md"

describe("McpSkills (server)", () => {
  it.effect("loads a catalog: entries sorted by URI, every file with digest and size, hidden files left out", () =>
    Effect.gen(function*() {
      const catalog = yield* McpSkills.load(McpSkills.memoryFiles(fixture()))
      const entries = yield* catalog.entries
      assert.deepStrictEqual(entries.map((skill) => skill.uri), [
        PDF,
        "skill://git-review/SKILL.md",
        "skill://zeta/SKILL.md"
      ])
      assert.deepStrictEqual(yield* catalog.warnings, [])
      const pdf = entries[0]!
      assert.deepStrictEqual(pdf.frontmatter, {
        name: "pdf-processing",
        description: "Extract, fill and assemble PDF documents",
        license: "MIT"
      })
      assert.isTrue(Array.isArray(pdf.resources))
      const resources = pdf.resources as ReadonlyArray<McpSkills.ResourceEntry>
      assert.deepStrictEqual(
        resources.map((r) => r.uri),
        [
          PDF,
          "skill://acme/pdf-processing/assets/logo.png",
          "skill://acme/pdf-processing/references/FORMS.md",
          "skill://acme/pdf-processing/references/deep/NOTES.txt"
        ].sort()
      )
      const forms = resources.find((r) => r.uri.endsWith("FORMS.md"))!
      assert.strictEqual(forms.size, 8)
      assert.strictEqual(forms.digest, yield* sha256(new TextEncoder().encode("# Forms\n")))
      assert.match(forms.digest, /^sha256:[0-9a-f]{64}$/)
    }))

  for (const era of ["legacy", "modern"] as const) {
    it.effect(`serves skills/list paged with whole entries, skills/get and -32602 for an unknown skill (${era})`, () =>
      Effect.gen(function*() {
        const catalog = yield* McpSkills.load(McpSkills.memoryFiles(fixture()), {
          pageSize: 2,
          cache: { ttlMs: 60_000, cacheScope: "public" }
        })
        const client = yield* McpTest.client(serverOf(catalog), { era })
        assert.deepStrictEqual((client.serverCapabilities as any).extensions?.[McpSkills.EXTENSION_ID], {
          directoryRead: true
        })
        assert.isDefined(client.serverCapabilities.resources)
        const first = yield* client.session.request(McpSkills.ListSkills, {})
        assert.deepStrictEqual(first.skills.map((s) => s.uri), [PDF, "skill://git-review/SKILL.md"])
        assert.isString(first.nextCursor)
        const second = yield* client.session.request(McpSkills.ListSkills, { cursor: first.nextCursor! })
        assert.deepStrictEqual(second.skills.map((s) => s.uri), ["skill://zeta/SKILL.md"])
        assert.isUndefined(second.nextCursor)
        assert.deepStrictEqual(first.skills[0], (yield* catalog.entries)[0])
        if (era === "modern") {
          assert.strictEqual(first.ttlMs, 60_000)
          assert.strictEqual(first.cacheScope, "public")
        } else {
          assert.isUndefined(first.ttlMs)
          assert.isUndefined(first.cacheScope)
        }
        const bad = yield* Effect.flip(client.session.request(McpSkills.ListSkills, { cursor: "nonsense" }))
        assert.strictEqual(code(bad), JsonRpc.ErrorCode.InvalidParams)

        const got = yield* client.session.request(McpSkills.GetSkill, { uri: "skill://zeta/SKILL.md" })
        assert.strictEqual(got.skill.frontmatter.name, "zeta")
        assert.isUndefined((got as any).nextCursor)
        if (era === "modern") assert.strictEqual(got.ttlMs, 60_000)
        const unknown = yield* Effect.flip(client.session.request(McpSkills.GetSkill, { uri: "skill://nope/SKILL.md" }))
        assert.strictEqual(code(unknown), JsonRpc.ErrorCode.InvalidParams)
      }).pipe(Effect.scoped))

    it.effect(`reads directories (direct children, subfolders as inode/directory) and -32602 otherwise (${era})`, () =>
      Effect.gen(function*() {
        const catalog = yield* McpSkills.load(McpSkills.memoryFiles(fixture()))
        const client = yield* McpTest.client(serverOf(catalog), { era })
        const root = yield* client.session.request(McpSkills.ReadDirectory, { uri: "skill://acme/pdf-processing" })
        assert.deepStrictEqual(root.resources, [
          { uri: PDF, name: "SKILL.md", mimeType: "text/markdown", size: root.resources[0]!.size! },
          { uri: "skill://acme/pdf-processing/assets", name: "assets", mimeType: McpSkills.DIRECTORY_MIME_TYPE },
          { uri: "skill://acme/pdf-processing/references", name: "references", mimeType: McpSkills.DIRECTORY_MIME_TYPE }
        ])
        const references = yield* client.session.request(McpSkills.ReadDirectory, {
          uri: "skill://acme/pdf-processing/references"
        })
        assert.deepStrictEqual(references.resources.map((r) => [r.uri, r.mimeType]), [
          ["skill://acme/pdf-processing/references/FORMS.md", "text/markdown"],
          ["skill://acme/pdf-processing/references/deep", McpSkills.DIRECTORY_MIME_TYPE]
        ])
        for (const uri of [PDF, "skill://acme/pdf-processing/nope", "skill://acme"]) {
          const error = yield* Effect.flip(client.session.request(McpSkills.ReadDirectory, { uri }))
          assert.strictEqual(code(error), JsonRpc.ErrorCode.InvalidParams, uri)
        }
      }).pipe(Effect.scoped))

    it.effect(`lists each SKILL.md in resources/list and reads every file, verified (${era})`, () =>
      Effect.gen(function*() {
        const files = fixture()
        const catalog = yield* McpSkills.load(McpSkills.memoryFiles(files), { cache: { ttlMs: 5_000 } })
        const client = yield* McpTest.client(serverOf(catalog), { era })
        const { resources } = yield* client.listResources()
        assert.deepStrictEqual(resources.find((r) => r.uri === PDF), {
          uri: PDF,
          name: "pdf-processing",
          description: "Extract, fill and assemble PDF documents",
          mimeType: "text/markdown",
          size: new TextEncoder().encode(files["acme/pdf-processing/SKILL.md"] as string).byteLength
        })
        assert.deepStrictEqual(resources.map((r) => r.uri).filter((uri) => !uri.endsWith("/SKILL.md")), [])
        const manifest = yield* client.readResource(PDF)
        assert.deepStrictEqual(manifest.contents, [
          { uri: PDF, mimeType: "text/markdown", text: files["acme/pdf-processing/SKILL.md"] as string }
        ])
        if (era === "modern") assert.strictEqual((manifest as any).ttlMs, 5_000)
        const logo = yield* client.readResource("skill://acme/pdf-processing/assets/logo.png")
        assert.deepStrictEqual(logo.contents, [{
          uri: "skill://acme/pdf-processing/assets/logo.png",
          mimeType: "image/png",
          blob: Buffer.from(PNG).toString("base64")
        }])
        const missing = yield* Effect.flip(client.readResource("skill://acme/pdf-processing/nope.md"))
        assert.strictEqual(
          code(missing),
          era === "modern" ? JsonRpc.ErrorCode.InvalidParams : JsonRpc.ErrorCode.ResourceNotFound
        )

        // changed on the storage after loading: refused, neither stale nor new content served
        files["acme/pdf-processing/references/FORMS.md"] = "# Forms, edited\n"
        const changed = yield* Effect.flip(client.readResource("skill://acme/pdf-processing/references/FORMS.md"))
        assert.strictEqual(code(changed), JsonRpc.ErrorCode.InternalError)
        assert.match(changed.message, /changed since the skills catalog was loaded/)
        files["acme/pdf-processing/references/FORMS.md"] = "# Forms\n"
        files["zeta/SKILL.md"] = skillMd("zeta", "The last one!")
        const sameSize = yield* Effect.flip(client.readResource("skill://zeta/SKILL.md"))
        assert.match(sameSize.message, /changed since/)
        assert.strictEqual(
          (yield* client.readResource("skill://acme/pdf-processing/references/FORMS.md")).contents.length,
          1
        )
      }).pipe(Effect.scoped))
  }

  it.effect("declares {} without directoryRead, and then does not serve resources/directory/read", () =>
    Effect.gen(function*() {
      const catalog = yield* McpSkills.load(McpSkills.memoryFiles(fixture()))
      const client = yield* McpTest.client(serverOf(catalog, { directoryRead: false }), { era: "legacy" })
      assert.deepStrictEqual((client.serverCapabilities as any).extensions?.[McpSkills.EXTENSION_ID], {})
      const refused = yield* Effect.flip(client.session.request(McpSkills.ReadDirectory, { uri: "skill://zeta" }))
      assert.strictEqual(refused.reason._tag, "UnsupportedError")
    }).pipe(Effect.scoped))

  it.effect("serves dynamic skills with resources: \"dynamic\" and a prefix in every URI", () =>
    Effect.gen(function*() {
      const catalog = yield* McpSkills.load(McpSkills.memoryFiles(fixture()), {
        prefix: "example.com",
        dynamic: ["zeta"]
      })
      const entries = yield* catalog.entries
      assert.deepStrictEqual(entries.map((s) => s.uri), [
        "skill://example.com/acme/pdf-processing/SKILL.md",
        "skill://example.com/git-review/SKILL.md",
        "skill://example.com/zeta/SKILL.md"
      ])
      assert.strictEqual(entries[2]!.resources, "dynamic")
      const client = yield* McpTest.client(serverOf(catalog), { era: "modern" })
      const read = yield* client.readResource("skill://example.com/zeta/SKILL.md")
      assert.strictEqual((read.contents[0] as any).text, skillMd("zeta", "The last one"))
    }).pipe(Effect.scoped))

  it.effect("reload: all or nothing, reports changes, and announces resources/list_changed to the server's clients", () =>
    Effect.gen(function*() {
      const files = fixture()
      const catalog = yield* McpSkills.load(McpSkills.memoryFiles(files), { strict: true })
      const server = yield* McpServer.make({ name: "skills", version: "1.0.0" })
      const extension = McpSkills.extension(catalog)
      yield* server.register(extension)
      const seen: Array<string> = []
      const client = yield* McpTest.client(Layer.succeed(McpServer.McpServer, server), {
        era: "legacy",
        observeNotification: (notification) => void seen.push(notification.method)
      })
      const unchanged = yield* catalog.reload
      assert.deepStrictEqual(unchanged, { added: [], removed: [], changed: [], listChanged: false })

      files["new-skill/SKILL.md"] = skillMd("new-skill", "Freshly added")
      delete files["zeta/SKILL.md"]
      files["acme/pdf-processing/references/FORMS.md"] = "# Forms v2\n"
      const changes = yield* catalog.reload
      assert.deepStrictEqual(changes, {
        added: ["skill://new-skill/SKILL.md"],
        removed: ["skill://zeta/SKILL.md"],
        changed: [PDF],
        listChanged: true
      })
      yield* client.ping()
      assert.deepStrictEqual(seen.filter((m) => m === "notifications/resources/list_changed").length, 1)
      const listed = yield* client.session.request(McpSkills.ListSkills, {})
      assert.deepStrictEqual(listed.skills.map((s) => s.uri), [
        PDF,
        "skill://git-review/SKILL.md",
        "skill://new-skill/SKILL.md"
      ])
      assert.strictEqual(
        (yield* client.readResource("skill://acme/pdf-processing/references/FORMS.md")).contents.length,
        1
      )

      // a content change only: no list change
      files["acme/pdf-processing/references/FORMS.md"] = "# Forms v3\n"
      assert.isFalse((yield* catalog.reload).listChanged)

      // a broken skill under strict: the reload fails, the catalog keeps serving what it served
      files["Broken/SKILL.md"] = skillMd("Broken", "Upper case")
      const failed = yield* Effect.flip(catalog.reload)
      assert.strictEqual(checkOf(failed), "name")
      assert.strictEqual((yield* catalog.entries).length, 3)

      // once unregistered, nothing is announced
      delete files["Broken/SKILL.md"]
      yield* server.unregister(extension)
      seen.length = 0
      files["another/SKILL.md"] = skillMd("another", "One more")
      assert.isTrue((yield* catalog.reload).listChanged)
      yield* client.ping()
      assert.deepStrictEqual(seen, [])
    }).pipe(Effect.scoped))
})

describe("McpSkills (server): rules", () => {
  const loadOnly = (files: Record<string, string | Uint8Array>, options?: McpSkills.Options) =>
    McpSkills.load(McpSkills.memoryFiles(files), options)
  const good = { "ok/SKILL.md": skillMd("ok", "Fine") }

  const refusedWith = (files: Record<string, string | Uint8Array>, check: string, pattern: RegExp) =>
    Effect.gen(function*() {
      const catalog = yield* loadOnly({ ...good, ...files })
      assert.deepStrictEqual((yield* catalog.entries).map((s) => s.uri), ["skill://ok/SKILL.md"])
      const warnings = yield* catalog.warnings
      const skipped = warnings.filter((w) => w.skipped)
      assert.strictEqual(skipped.length, 1, JSON.stringify(warnings))
      assert.strictEqual(skipped[0]!.check, check)
      assert.match(skipped[0]!.message, pattern)
      const strict = yield* Effect.exit(loadOnly({ ...good, ...files }, { strict: true }))
      assert.isTrue(Exit.isFailure(strict))
      const error = yield* Effect.flip(loadOnly({ ...good, ...files }, { strict: true }))
      assert.strictEqual(checkOf(error), check)
      assert.match(error.message, pattern)
    })

  it.effect("a bad name is refused", () =>
    refusedWith({ "Bad_Name/SKILL.md": skillMd("Bad_Name", "x") }, "name", /lowercase/))
  it.effect("a double hyphen is refused", () =>
    refusedWith({ "a--b/SKILL.md": skillMd("a--b", "x") }, "name", /hyphen/))
  it.effect("a name of 65 characters is refused", () =>
    refusedWith({ [`${"a".repeat(65)}/SKILL.md`]: skillMd("a".repeat(65), "x") }, "name", /1-64/))
  it.effect("a name differing from its folder is refused", () =>
    refusedWith({ "folder/SKILL.md": skillMd("other", "x") }, "name", /differs from the folder name "folder"/))
  it.effect("a first segment that is no host name is refused", () =>
    refusedWith({ "under_score/x/SKILL.md": skillMd("x", "x") }, "path", /host name/))
  it.effect("a SKILL.md without frontmatter, or without a description, is refused", () =>
    Effect.gen(function*() {
      yield* refusedWith({ "plain/SKILL.md": "# no frontmatter\n" }, "entry", /frontmatter/)
      yield* refusedWith({ "nodesc/SKILL.md": "---\nname: nodesc\n---\n" }, "entry", /no description/)
    }))
  it.effect("a skill of 20 MiB is refused: limit", () =>
    refusedWith(
      { "big/SKILL.md": skillMd("big", "Too big"), "big/blob.bin": new Uint8Array(20 * 1024 * 1024) },
      "limit",
      /16 MiB/
    ))
  it.effect("a skill of 513 files is refused: limit", () => {
    const files: Record<string, string> = { "many/SKILL.md": skillMd("many", "Too many") }
    for (let i = 0; i < 512; i++) files[`many/f/${i}.txt`] = `${i}`
    return refusedWith(files, "limit", /513 files exceed the limit of 512/)
  })
  it.effect("512 files are fine, and smaller limits are honoured", () =>
    Effect.gen(function*() {
      const files: Record<string, string> = { "many/SKILL.md": skillMd("many", "Just enough") }
      for (let i = 0; i < 511; i++) files[`many/f/${i}.txt`] = `${i}`
      assert.strictEqual((yield* (yield* loadOnly(files)).entries).length, 1)
      const small = yield* loadOnly(files, { limits: { files: 10 } })
      assert.strictEqual((yield* small.entries).length, 0)
    }))
  it.effect("paths escaping the skill are refused: .., encoded separators, backslashes, absolute", () =>
    Effect.gen(function*() {
      yield* refusedWith({ "esc/SKILL.md": skillMd("esc", "x"), "esc/../../etc/passwd": "x" }, "path", /"\.\."/)
      yield* refusedWith({ "enc/SKILL.md": skillMd("enc", "x"), "enc/a%2Fb.md": "x" }, "path", /encoded path separator/)
      yield* refusedWith({ "enc/SKILL.md": skillMd("enc", "x"), "enc/a%5cb.md": "x" }, "path", /encoded path separator/)
      yield* refusedWith({ "bs/SKILL.md": skillMd("bs", "x"), "bs/a\\b.md": "x" }, "path", /separator/)
      yield* refusedWith({ "abs/SKILL.md": skillMd("abs", "x"), "abs//x.md": "x" }, "path", /empty path segment/)
      const catalog = yield* loadOnly({ ...good, "/etc/passwd": "x" })
      assert.deepStrictEqual((yield* catalog.entries).length, 1)
      assert.match((yield* catalog.warnings)[0]!.message, /absolute/)
      const prefix = yield* Effect.flip(loadOnly(good, { prefix: "../up" }))
      assert.strictEqual(checkOf(prefix), "path")
    }))
  it.effect("reserved metadata keys are a warning; the skill is served", () =>
    Effect.gen(function*() {
      const catalog = yield* loadOnly({
        "meta/SKILL.md": skillMd("meta", "x", "metadata:\n  io.modelcontextprotocol/thing: yes\n  author: me\n")
      }, { strict: true })
      assert.strictEqual((yield* catalog.entries).length, 1)
      const warnings = yield* catalog.warnings
      assert.strictEqual(warnings.length, 1)
      assert.isFalse(warnings[0]!.skipped)
      assert.match(warnings[0]!.message, /io\.modelcontextprotocol\/thing.*reserved/)
    }))
  it.effect("a symlink or special file inside a skill refuses it", () =>
    Effect.gen(function*() {
      const base = McpSkills.memoryFiles({ ...good, "link/SKILL.md": skillMd("link", "x") })
      const files: McpSkills.Files = {
        read: base.read,
        list: (dir) =>
          Effect.map(base.list(dir), (entries) =>
            dir === "link" ? [...entries, { name: "escape", kind: "unsupported" as const }] : entries)
      }
      const catalog = yield* McpSkills.load(files)
      assert.deepStrictEqual(
        (yield* catalog.entries).map((s) =>
          s.uri
        ),
        ["skill://ok/SKILL.md"]
      )
      assert.match((yield* catalog.warnings)[0]!.message, /symlink/)
    }))
  it.effect("a SKILL.md at the root, or spelled otherwise, is a warning; a frontmatter is served as written", () =>
    Effect.gen(function*() {
      const catalog = yield* loadOnly({
        ...good,
        "SKILL.md": skillMd("root", "x"),
        "lower/skill.md": skillMd("lower", "x"),
        "rich/SKILL.md": skillMd("rich", "x", "tags: [a, b]\nnested:\n  n: 1\n  t: true\n  z: null\n")
      })
      assert.deepStrictEqual((yield* catalog.entries).map((s) => s.uri), [
        "skill://ok/SKILL.md",
        "skill://rich/SKILL.md"
      ])
      assert.deepStrictEqual((yield* catalog.entries)[1]!.frontmatter, {
        name: "rich",
        description: "x",
        tags: ["a", "b"],
        nested: { n: 1, t: true, z: null }
      })
      const messages = (yield* catalog.warnings).map((w) => w.message)
      assert.isTrue(messages.some((m) => /at the root/.test(m)))
      assert.isTrue(messages.some((m) => /did you mean SKILL\.md/.test(m)))
    }))
  it.effect("a frontmatter value JSON cannot hold refuses the skill", () =>
    refusedWith({ "inf/SKILL.md": skillMd("inf", "x", "weight: .inf\n") }, "entry", /weight cannot be represented/))
  it.effect("a storage failure fails the load (nothing half-loaded)", () =>
    Effect.gen(function*() {
      const base = McpSkills.memoryFiles(good)
      const error = yield* Effect.flip(
        McpSkills.load({ list: base.list, read: (path) => Effect.flatMap(base.read(path), () => base.read("missing")) })
      )
      assert.match(error.message, /no such file/)
    }))
  it.effect("two skills with one name are both served, with a warning", () =>
    Effect.gen(function*() {
      const catalog = yield* loadOnly({ ...good, "team/ok/SKILL.md": skillMd("ok", "Another") })
      assert.strictEqual((yield* catalog.entries).length, 2)
      assert.match((yield* catalog.warnings)[0]!.message, /served more than once/)
    }))
})
