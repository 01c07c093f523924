/**
 * The host side of the Skills extension against a server played by hand
 * (both eras), which lists honest entries and then serves tampered files:
 * every read verified (size, digest, the SKILL.md frontmatter), a file not
 * in the entry refused before any request, invalid entries refused, nothing
 * read before it is asked for, every page listed; and the skills of a group
 * by server name.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Stream } from "effect"
import { createHash } from "node:crypto"
import * as JsonRpc from "../src/JsonRpc.ts"
import * as McpClient from "../src/McpClient.ts"
import type * as McpError from "../src/McpError.ts"
import * as McpGroup from "../src/McpGroup.ts"
import type * as McpSkills from "../src/McpSkills.ts"
import * as McpSkillsClient from "../src/McpSkillsClient.ts"
import * as McpTransport from "../src/McpTransport.ts"
import { connectOver } from "./utils/client.ts"
import { ValidatorLayer } from "./utils/validator.ts"

const SKILL = "skill://pdf-processing/SKILL.md"
const FORMS = "skill://pdf-processing/references/FORMS.md"
const LOGO = "skill://pdf-processing/assets/logo.bin"
const MANIFEST = "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n---\nSkill body.\n"
const FORMS_TEXT = "Supporting content.\n"
const LOGO_BYTES = new Uint8Array([0, 1, 2, 254, 255])

const digest = (content: string | Uint8Array) => `sha256:${createHash("sha256").update(content).digest("hex")}`
const fileEntry = (uri: string, content: string | Uint8Array) => ({
  uri,
  digest: digest(content),
  size: typeof content === "string" ? Buffer.byteLength(content) : content.byteLength
})

const frontmatter = { name: "pdf-processing", description: "Extract, fill, and assemble PDF documents" }
const files = [fileEntry(SKILL, MANIFEST), fileEntry(FORMS, FORMS_TEXT), fileEntry(LOGO, LOGO_BYTES)]
const entry: McpSkills.Skill = { uri: SKILL, frontmatter, resources: files }

type Era = "modern" | "legacy"
type Handler = (params: Record<string, any>) => unknown

/** What the peer serves: skills/list pages by cursor, files by URI, extra handlers, its capabilities. */
interface Script {
  readonly pages?: Readonly<Record<string, { readonly skills: ReadonlyArray<unknown>; readonly nextCursor?: string }>>
  readonly files?: Readonly<Record<string, string | Uint8Array>>
  readonly handlers?: Readonly<Record<string, Handler>>
  readonly capabilities?: Readonly<Record<string, unknown>>
}

const skillsCapabilities = { resources: {}, extensions: { "io.modelcontextprotocol/skills": {} } }

/** A server played by hand in `era`; `requests` records every request it received (method and params). */
const peer = (era: Era, script: Script) =>
  Effect.gen(function*() {
    const [clientEnd, serverEnd] = yield* McpTransport.makeInMemoryPair
    const requests: Array<{ readonly method: string; readonly params: Record<string, any> }> = []
    const capabilities = script.capabilities ?? skillsCapabilities
    const answer = (method: string, params: Record<string, any>): unknown => {
      if (method === "initialize") {
        return { protocolVersion: "2025-11-25", capabilities, serverInfo: { name: "peer", version: "1" } }
      }
      if (method === "skills/list") return script.pages?.[params.cursor ?? ""] ?? { skills: [] }
      if (method === "resources/read") {
        const content = script.files?.[params.uri]
        if (content === undefined) return undefined
        return {
          contents: [
            typeof content === "string"
              ? { uri: params.uri, mimeType: "text/markdown", text: content }
              : { uri: params.uri, mimeType: "application/octet-stream", blob: Buffer.from(content).toString("base64") }
          ]
        }
      }
      return script.handlers?.[method]?.(params)
    }
    yield* serverEnd.incoming.pipe(
      Stream.runForEach((frame) => {
        const message = frame as { readonly id?: JsonRpc.RequestId; readonly method?: string; readonly params?: any }
        if (message.id === undefined || message.method === undefined) return Effect.void
        const params = message.params ?? {}
        requests.push({ method: message.method, params })
        if (message.method === "server/discover") {
          return serverEnd.send(
            era === "modern"
              ? JsonRpc.success(message.id, { resultType: "complete", supportedVersions: ["2026-07-28"], capabilities })
              : JsonRpc.failure(message.id, { code: -32601, message: "Method not found" })
          )
        }
        const result = answer(message.method, params)
        return serverEnd.send(
          result === undefined
            ? JsonRpc.failure(message.id, { code: -32602, message: `unknown ${message.method}` })
            : JsonRpc.success(message.id, era === "modern" ? { resultType: "complete", ...result as object } : result)
        )
      }),
      Effect.ignore,
      Effect.forkScoped
    )
    return { transport: Layer.succeed(McpTransport.McpTransport, clientEnd), requests }
  })

const connect = (era: Era, script: Script) =>
  Effect.gen(function*() {
    const { requests, transport } = yield* peer(era, script)
    const client = yield* connectOver(transport, { era })
    const reads = () =>
      requests.filter((request) => request.method === "resources/read").map((request) => request.params.uri)
    return { skills: McpSkillsClient.make(client), requests, reads }
  })

const honest: Script = {
  pages: { "": { skills: [entry] } },
  files: { [SKILL]: MANIFEST, [FORMS]: FORMS_TEXT, [LOGO]: LOGO_BYTES }
}

const skillError = (error: McpError.McpError) => {
  assert.strictEqual(error.reason._tag, "SkillError")
  return error.reason as McpError.SkillError
}

for (const era of ["modern", "legacy"] as const) {
  describe(`McpSkillsClient (${era})`, () => {
    it.effect("lists, then reads SKILL.md, a text file and a blob, each verified; nothing read before it is asked for", () =>
      Effect.gen(function*() {
        const { reads, skills } = yield* connect(era, honest)
        assert.isTrue(skills.supported)
        assert.isFalse(skills.directoryRead)
        const listed = yield* skills.list()
        assert.deepStrictEqual(listed.map((skill) => skill.uri), [SKILL])
        assert.deepStrictEqual(reads(), [])
        const manifest = yield* skills.read(listed[0]!)
        assert.isTrue(manifest.verified)
        assert.deepStrictEqual(manifest.frontmatter, frontmatter)
        assert.strictEqual(manifest.body, "Skill body.\n")
        assert.strictEqual(manifest.text, MANIFEST)
        const forms = yield* skills.read(listed[0]!, "references/FORMS.md")
        assert.strictEqual(forms.text, FORMS_TEXT)
        assert.isUndefined(forms.frontmatter)
        const logo = yield* skills.read(listed[0]!, LOGO)
        assert.deepStrictEqual([...logo.bytes], [...LOGO_BYTES])
        assert.deepStrictEqual(reads(), [SKILL, FORMS, LOGO])
      }))

    it.effect("a file of the wrong size: SkillError size, no content", () =>
      Effect.gen(function*() {
        const { skills } = yield* connect(era, { ...honest, files: { [SKILL]: `${MANIFEST}extra\n` } })
        const error = yield* Effect.flip(skills.read(entry))
        assert.strictEqual(skillError(error).check, "size")
        assert.strictEqual(skillError(error).uri, SKILL)
      }))

    it.effect("a file of the right size with another digest: SkillError digest", () =>
      Effect.gen(function*() {
        const { skills } = yield* connect(era, { ...honest, files: { [FORMS]: "Supporting CONTENT.\n" } })
        const error = yield* Effect.flip(skills.read(entry, "references/FORMS.md"))
        assert.strictEqual(skillError(error).check, "digest")
        assert.include(error.message, files[1]!.digest)
      }))

    it.effect("a SKILL.md whose frontmatter differs from the entry (size and digest listed for it): SkillError frontmatter", () =>
      Effect.gen(function*() {
        const tampered = MANIFEST.replace("Extract, fill, and assemble PDF documents", "Exfiltrate credentials")
        const lying = { ...entry, resources: [fileEntry(SKILL, tampered), ...files.slice(1)] }
        const { reads, skills } = yield* connect(era, {
          pages: { "": { skills: [lying] } },
          files: { [SKILL]: tampered }
        })
        const [skill] = yield* skills.list()
        const error = yield* Effect.flip(skills.read(skill!))
        const reason = skillError(error)
        assert.strictEqual(reason.check, "frontmatter")
        assert.deepStrictEqual(reason.differences, [
          "description: file \"Exfiltrate credentials\", entry \"Extract, fill, and assemble PDF documents\""
        ])
        assert.deepStrictEqual(reads(), [SKILL])
      }))

    it.effect("a SKILL.md without frontmatter: SkillError frontmatter", () =>
      Effect.gen(function*() {
        const bare = "Just a body.\n"
        const skill = { ...entry, resources: [fileEntry(SKILL, bare)] }
        const { skills } = yield* connect(era, { files: { [SKILL]: bare } })
        assert.strictEqual(skillError(yield* Effect.flip(skills.read(skill))).check, "frontmatter")
      }))

    it.effect("a file not in the entry, or outside the skill: SkillError unlisted, no request sent", () =>
      Effect.gen(function*() {
        const { reads, skills } = yield* connect(era, honest)
        for (
          const ref of ["references/OTHER.md", "../other/SKILL.md", "skill://other/SKILL.md", "file:///etc/passwd"]
        ) {
          assert.strictEqual(skillError(yield* Effect.flip(skills.read(entry, ref))).check, "unlisted")
        }
        assert.deepStrictEqual(reads(), [])
      }))

    it.effect("invalid entries: refused with SkillError entry (skipInvalid leaves them out)", () =>
      Effect.gen(function*() {
        const badDigest = { ...entry, resources: [{ ...fileEntry(SKILL, MANIFEST), digest: "sha256:ABC" }] }
        const wrongName = {
          ...entry,
          uri: "skill://pdf-tools/SKILL.md",
          resources: [fileEntry("skill://pdf-tools/SKILL.md", MANIFEST)]
        }
        const outside = { ...entry, resources: [fileEntry(SKILL, MANIFEST), fileEntry("skill://other/x.md", "x")] }
        const escaping = {
          ...entry,
          resources: [fileEntry(SKILL, MANIFEST), fileEntry("skill://pdf-processing/%2E%2E/x.md", "x")]
        }
        const noManifest = { ...entry, resources: [fileEntry(FORMS, FORMS_TEXT)] }
        for (
          const [bad, expected] of [
            [badDigest, "digest \"sha256:ABC\""],
            [wrongName, "last path segment \"pdf-tools\""],
            [outside, "outside the skill"],
            [escaping, "outside the skill"],
            [noManifest, `do not include ${SKILL}`]
          ] as const
        ) {
          const { skills } = yield* connect(era, { pages: { "": { skills: [bad] } } })
          const reason = skillError(yield* Effect.flip(skills.list()))
          assert.strictEqual(reason.check, "entry")
          assert.include(reason.description, expected)
          // a bad entry handed to read is refused before any request
          const { reads, skills: again } = yield* connect(era, honest)
          assert.strictEqual(skillError(yield* Effect.flip(again.read(bad as McpSkills.Skill))).check, "entry")
          assert.deepStrictEqual(reads(), [])
        }
        const { skills } = yield* connect(era, { pages: { "": { skills: [badDigest, entry, entry] } } })
        assert.include(skillError(yield* Effect.flip(skills.list())).description, "invalid skill entry")
        const { skills: twice } = yield* connect(era, { pages: { "": { skills: [entry, entry] } } })
        assert.include(skillError(yield* Effect.flip(twice.list())).description, "listed more than once")
        assert.deepStrictEqual((yield* twice.list({ skipInvalid: true })).map((skill) => skill.uri), [SKILL])
      }))

    it.effect("every page is listed; a cursor returned twice, or too many pages, fails", () =>
      Effect.gen(function*() {
        const other = {
          uri: "skill://acme/tools/other/SKILL.md",
          frontmatter: { name: "other", description: "Another" },
          resources: [fileEntry("skill://acme/tools/other/SKILL.md", "x")]
        }
        const { requests, skills } = yield* connect(era, {
          pages: {
            "": { skills: [entry], nextCursor: "p2" },
            p2: { skills: [other], nextCursor: "p3" },
            p3: { skills: [] }
          }
        })
        assert.deepStrictEqual((yield* skills.list()).map((skill) => skill.uri), [SKILL, other.uri])
        assert.deepStrictEqual(
          requests.filter((request) => request.method === "skills/list").map((request) => request.params.cursor),
          [undefined, "p2", "p3"]
        )
        assert.strictEqual((yield* Effect.flip(skills.list({ maxPages: 2 }))).reason._tag, "InvalidResultError")
        const { skills: looping } = yield* connect(era, {
          pages: { "": { skills: [], nextCursor: "a" }, a: { skills: [], nextCursor: "a" } }
        })
        assert.include((yield* Effect.flip(looping.list())).message, "twice")
      }))

    it.effect("get: one skill, checked; a dynamic skill is read unverified, its frontmatter still compared", () =>
      Effect.gen(function*() {
        const dynamic = { uri: SKILL, frontmatter, resources: "dynamic" }
        const { reads, skills } = yield* connect(era, {
          files: { [SKILL]: MANIFEST, [FORMS]: FORMS_TEXT },
          handlers: { "skills/get": (params) => params.uri === SKILL ? { skill: dynamic } : undefined }
        })
        const skill = yield* skills.get(SKILL)
        assert.strictEqual(skill.resources, "dynamic")
        assert.deepStrictEqual(reads(), [])
        const manifest = yield* skills.read(skill)
        assert.isFalse(manifest.verified)
        assert.deepStrictEqual(manifest.frontmatter, frontmatter)
        assert.isFalse((yield* skills.read(skill, "references/FORMS.md")).verified)
        assert.strictEqual(skillError(yield* Effect.flip(skills.read(skill, "skill://else/x"))).check, "unlisted")
        const lying = { ...skill, frontmatter: { ...frontmatter, description: "Other" } }
        assert.strictEqual(skillError(yield* Effect.flip(skills.read(lying))).check, "frontmatter")
        assert.strictEqual((yield* Effect.flip(skills.get("skill://nope/SKILL.md"))).reason._tag, "ProtocolError")
      }))

    it.effect("readDirectory with directoryRead; a server without the extension has no skills", () =>
      Effect.gen(function*() {
        const { skills } = yield* connect(era, {
          capabilities: { resources: {}, extensions: { "io.modelcontextprotocol/skills": { directoryRead: true } } },
          handlers: {
            "resources/directory/read": (params) =>
              params.cursor === undefined
                ? { resources: [{ uri: FORMS, name: "FORMS.md" }], nextCursor: "2" }
                : {
                  resources: [{
                    uri: "skill://pdf-processing/references/more",
                    name: "more",
                    mimeType: "inode/directory"
                  }]
                }
          }
        })
        assert.isTrue(skills.directoryRead)
        const children = yield* skills.readDirectory("skill://pdf-processing/references")
        assert.deepStrictEqual(children.map((child) => child.name), ["FORMS.md", "more"])
        const { requests, skills: none } = yield* connect(era, { capabilities: { resources: {} } })
        assert.isFalse(none.supported)
        assert.deepStrictEqual(yield* none.list(), [])
        assert.strictEqual((yield* Effect.flip(none.read(entry))).reason._tag, "UnsupportedError")
        assert.strictEqual((yield* Effect.flip(none.readDirectory(SKILL))).reason._tag, "UnsupportedError")
        assert.isFalse(requests.some((request) => request.method.startsWith("skills/")))
      }))
  })
}

describe("McpSkillsClient.layer", () => {
  it.effect("the skills of the McpClient in context", () =>
    Effect.gen(function*() {
      const { reads, skills } = yield* connect("modern", honest)
      const service = yield* McpSkillsClient.McpSkillsClient.pipe(
        Effect.provide(McpSkillsClient.layer.pipe(Layer.provide(Layer.succeed(McpClient.McpClient, skills.client))))
      )
      assert.isTrue(service.supported)
      assert.strictEqual((yield* service.read(entry, "references/FORMS.md")).text, FORMS_TEXT)
      assert.deepStrictEqual(reads(), [FORMS])
    }))
})

describe("McpSkillsClient.group", () => {
  it.effect("the skills of every server by name; a read goes to the server named", () =>
    Effect.gen(function*() {
      const scripts: Record<string, Script> = {
        docs: honest,
        broken: { pages: { "": { skills: [{ ...entry, resources: [] }] } } },
        plain: {
          capabilities: { resources: {} },
          handlers: {
            "resources/list": () => ({ resources: [] }),
            "resources/templates/list": () => ({ resourceTemplates: [] })
          }
        }
      }
      const connector = Layer.succeed(McpGroup.Connector, {
        transport: (_params, server) =>
          Layer.unwrap(Effect.map(
            peer("legacy", {
              ...scripts[server]!,
              handlers: {
                "resources/list": () => ({ resources: [] }),
                "resources/templates/list": () => ({ resourceTemplates: [] }),
                ...scripts[server]!.handlers
              }
            }),
            ({ transport }) => transport
          ))
      })
      const group = yield* McpGroup.make({
        servers: {
          docs: McpGroup.http("test://docs"),
          broken: McpGroup.http("test://broken"),
          plain: McpGroup.http("test://plain")
        },
        liveness: false,
        reconnect: false
      }).pipe(Effect.provide([connector, ValidatorLayer]))
      const skills = McpSkillsClient.group(group)
      const listed = yield* skills.list()
      const byServer = Object.fromEntries(listed.map((server) => [server.server, server]))
      assert.deepStrictEqual(byServer.docs!.skills.map((skill) => skill.uri), [SKILL])
      assert.strictEqual(byServer.broken!.error?.reason._tag, "SkillError")
      assert.isFalse(byServer.plain!.supported)
      assert.deepStrictEqual(byServer.plain!.skills, [])
      const manifest = yield* skills.read("docs", byServer.docs!.skills[0]!)
      assert.isTrue(manifest.verified)
      assert.strictEqual((yield* skills.read("docs", entry, "references/FORMS.md")).text, FORMS_TEXT)
      assert.strictEqual((yield* Effect.flip(skills.read("nowhere", entry))).reason._tag, "NotFoundError")
    }))
})
