/**
 * McpGateway and the Skills extension (SEP-2640), in each pair of eras (the
 * client in front, the servers behind): the skills of every server that
 * declares the extension listed (paged, a skill two serve the first's),
 * got, read (SKILL.md and supporting files, verified by the client against
 * the listed digest and size) and their folders read, each routed to the
 * server that serves it; unknown skills refused; servers without the
 * extension contributing nothing; filters and the policy hiding skills and
 * files; a server that does not answer named.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Schema } from "effect"
import { TestClock } from "effect/testing"
import { bytesOf, sha256 } from "../src/internal/skills/digest.ts"
import * as JsonRpc from "../src/JsonRpc.ts"
import * as McpClient from "../src/McpClient.ts"
import * as McpError from "../src/McpError.ts"
import * as McpExtension from "../src/McpExtension.ts"
import * as McpGateway from "../src/McpGateway.ts"
import * as McpGroup from "../src/McpGroup.ts"
import * as McpResource from "../src/McpResource.ts"
import type * as McpSchema from "../src/McpSchema.ts"
import * as McpServer from "../src/McpServer.ts"
import * as McpSkills from "../src/McpSkills.ts"
import * as McpTool from "../src/McpTool.ts"
import * as McpTransport from "../src/McpTransport.ts"
import { clientInfo } from "./utils/client.ts"
import { ValidatorLayer } from "./utils/validator.ts"

type Era = "modern" | "legacy"
const PAIRS: ReadonlyArray<readonly [Era, Era]> = [["legacy", "legacy"], ["legacy", "modern"], ["modern", "legacy"], [
  "modern",
  "modern"
]]
const ID = McpSkills.EXTENSION_ID

/** A skill behind: its path (`<host>/<name>`), and its files by path inside it. */
type Skills = Readonly<Record<string, Readonly<Record<string, string>>>>

const manifest = (name: string, description: string, body = "Do the thing.") =>
  `---\nname: ${name}\ndescription: ${description}\n---\n${body}\n`

const ALPHA: Skills = {
  "a.example/pdf": {
    "SKILL.md": manifest("pdf", "Fills PDF forms"),
    "scripts/run.py": "print('filled')\n",
    "reference/guide.md": "# Guide\n"
  },
  "shared.example/shared": { "SKILL.md": manifest("shared", "Alpha's copy") }
}
const BETA: Skills = {
  "b.example/git": { "SKILL.md": manifest("git", "Writes commit messages"), "notes.txt": "short subjects\n" },
  "shared.example/shared": { "SKILL.md": manifest("shared", "Beta's copy") }
}

const UNLISTED: Skills = {
  "b.example/hidden": { "SKILL.md": manifest("hidden", "Served, not listed"), "data.txt": "hidden data\n" }
}

const notFound = (uri: string) => McpError.protocol(JsonRpc.ErrorCode.InvalidParams, `Unknown: ${uri}`)

/** A server of skills in memory: the extension (pages of `pageSize`), SKILL.md resources listed, a `skill://{+path}` template. */
const skillServer = (
  name: string,
  skills: Skills,
  options: {
    readonly directoryRead?: boolean
    readonly ttlMs?: number
    readonly cacheScope?: "public" | "private"
    readonly pageSize?: number
    readonly hang?: string
    /** Skills served (got, read) but not listed. */
    readonly unlisted?: Skills
  } = {}
) =>
  Effect.gen(function*() {
    const entries: Array<McpSkills.Skill> = []
    const files = new Map<string, string>()
    for (const [path, contents] of [...Object.entries(skills), ...Object.entries(options.unlisted ?? {})]) {
      const resources: Array<McpSkills.ResourceEntry> = []
      for (const [file, text] of Object.entries(contents).sort(([a], [b]) => a.localeCompare(b))) {
        const uri = `skill://${path}/${file}`
        files.set(uri, text)
        resources.push({ uri, digest: yield* sha256(bytesOf(text)), size: bytesOf(text).length })
      }
      const [, description] = /description: (.*)/.exec(contents["SKILL.md"]!)!
      entries.push({
        uri: `skill://${path}/SKILL.md`,
        frontmatter: { name: path.split("/").at(-1)!, description: description! },
        resources
      })
    }
    const listed = entries.slice(0, Object.keys(skills).length)
    const hints = { ttlMs: options.ttlMs ?? 60_000, cacheScope: options.cacheScope ?? "public" } as const
    const pageSize = options.pageSize ?? 1
    const children = (uri: string): Array<McpSchema.Resource> | undefined => {
      const out = new Map<string, McpSchema.Resource>()
      for (const [file, text] of files) {
        if (!file.startsWith(`${uri}/`)) continue
        const [first, ...rest] = file.slice(uri.length + 1).split("/")
        const child = `${uri}/${first}`
        out.set(
          child,
          rest.length > 0
            ? { uri: child, name: first!, mimeType: McpSkills.DIRECTORY_MIME_TYPE }
            : { uri: child, name: first!, mimeType: "text/plain", size: bytesOf(text).length }
        )
      }
      return out.size === 0 ? undefined : [...out.values()]
    }
    const extension = McpExtension.make({
      id: ID,
      settings: options.directoryRead === true ? { directoryRead: true } : {},
      requests: [
        McpExtension.request(McpSkills.ListSkills, ({ cursor }) => {
          const offset = cursor === undefined ? 0 : Number(cursor)
          const end = offset + pageSize
          return Effect.succeed({
            skills: listed.slice(offset, end),
            ...(end < listed.length ? { nextCursor: String(end) } : {}),
            ...hints
          })
        }),
        McpExtension.request(McpSkills.GetSkill, ({ uri }) => {
          if (uri === options.hang) return Effect.never
          const skill = entries.find((entry) => entry.uri === uri)
          return skill === undefined ? Effect.fail(notFound(uri)) : Effect.succeed({ skill, ...hints })
        }),
        ...(options.directoryRead === true
          ? [McpExtension.request(McpSkills.ReadDirectory, ({ uri }) => {
            const resources = children(uri)
            return resources === undefined ? Effect.fail(notFound(uri)) : Effect.succeed({ resources })
          })]
          : [])
      ]
    })
    const manifests = listed.map((entry) =>
      McpResource.make({
        uri: entry.uri,
        name: entry.frontmatter.name,
        mimeType: "text/markdown",
        read: () => Effect.succeed(files.get(entry.uri)!)
      })
    )
    const anyFile = McpResource.template({
      uriTemplate: "skill://{+path}",
      name: `${name} skill files`,
      read: (_, uri) => {
        const text = files.get(uri)
        return text === undefined ? Effect.fail(McpResource.notFound(uri)) : Effect.succeed(text)
      }
    })
    return McpServer.layer({ name, version: "1.0.0" }, extension, ...manifests, anyFile)
  })

/** A server without the extension, with a skill-looking template of its own. */
const plainServer = McpServer.layer(
  { name: "plain", version: "1.0.0" },
  McpTool.make("hello", { handler: () => Effect.succeed("hi") }),
  McpResource.template({
    uriTemplate: "skill://{+path}",
    name: "not skills",
    read: (_, uri) => Effect.succeed(`plain ${uri}`)
  })
)

const setup = (
  front: Era,
  behind: Era,
  options: { readonly gateway?: McpGateway.Options; readonly servers?: Record<string, McpGroup.ServerConfig> } = {}
) =>
  Effect.gen(function*() {
    const servers = options.servers ?? {
      alpha: McpGroup.inMemory(yield* skillServer("alpha", ALPHA, { directoryRead: true, ttlMs: 5_000 }), {
        era: behind
      }),
      beta: McpGroup.inMemory(
        yield* skillServer("beta", BETA, { ttlMs: 1_000, cacheScope: "private", unlisted: UNLISTED }),
        { era: behind }
      ),
      plain: McpGroup.inMemory(plainServer, { era: behind })
    }
    const group = yield* McpGroup.make({ servers, client: McpGateway.clientOptions, liveness: false }).pipe(
      Effect.provide([McpGroup.layerConnectorInMemory, ValidatorLayer])
    )
    const server = yield* McpGateway.make(options.gateway).pipe(Effect.provideService(McpGroup.McpGroup, group))
    const [clientEnd, serverEnd] = yield* McpTransport.makeInMemoryPair
    yield* server.serve.pipe(Effect.provideService(McpTransport.McpTransport, serverEnd))
    const client = yield* McpClient.make({ clientInfo, era: front, extensions: { [ID]: {} } }).pipe(
      Effect.provideService(McpTransport.McpTransport, clientEnd),
      Effect.provide(ValidatorLayer)
    )
    return { client, group }
  })

/** Every page of `skills/list`, and the answers. */
const listAll = (client: McpClient.Client) =>
  Effect.gen(function*() {
    const skills: Array<McpSkills.Skill> = []
    const pages: Array<McpSkills.ListSkillsResult> = []
    let cursor: string | undefined
    do {
      const page = yield* client.session.request(McpSkills.ListSkills, cursor === undefined ? {} : { cursor })
      pages.push(page)
      skills.push(...page.skills)
      cursor = page.nextCursor
    } while (cursor !== undefined && pages.length < 20)
    return { skills, pages }
  })

/** A file of a skill, read through the gateway and verified against its entry as a host must. */
const load = (client: McpClient.Client, skill: McpSkills.Skill, uri: string) =>
  Effect.gen(function*() {
    assert.notStrictEqual(skill.resources, McpSkills.DYNAMIC)
    const listed = (skill.resources as ReadonlyArray<McpSkills.ResourceEntry>).find((file) => file.uri === uri)
    assert.isDefined(listed, `${uri} is listed in its skill`)
    const result = yield* client.readResource(uri)
    const content = result.contents[0] as { readonly text?: string }
    assert.isString(content.text)
    const bytes = bytesOf(content.text!)
    assert.strictEqual(bytes.length, listed!.size)
    assert.strictEqual(yield* sha256(bytes), listed!.digest)
    return content.text!
  })

const codeOf = (error: McpError.McpError) => error.reason._tag === "ProtocolError" ? error.reason.code : undefined

const uris = (skills: ReadonlyArray<McpSkills.Skill>) => skills.map((skill) => skill.uri).sort()

describe("McpGateway: skills", () => {
  for (const [front, behind] of PAIRS) {
    describe(`${front} client, ${behind} servers`, () => {
      it.effect("declares the extension, lists every server's skills (paged, a shared one once: the first server's)", () =>
        Effect.gen(function*() {
          const { client } = yield* setup(front, behind)
          assert.deepStrictEqual((client.serverCapabilities as any).extensions?.[ID], { directoryRead: true })
          const { pages, skills } = yield* listAll(client)
          assert.deepStrictEqual(uris(skills), [
            "skill://a.example/pdf/SKILL.md",
            "skill://b.example/git/SKILL.md",
            "skill://shared.example/shared/SKILL.md"
          ])
          // one skill per page behind: pages in front
          assert.isAbove(pages.length, 1)
          const shared = skills.find((skill) => skill.uri.includes("shared"))!
          assert.strictEqual(shared.frontmatter.description, "Alpha's copy")
          const first = pages[0]!
          if (front === "modern") {
            assert.strictEqual(first.ttlMs, 1_000)
            assert.strictEqual(first.cacheScope, "private")
          } else {
            assert.isUndefined(first.ttlMs)
          }
          // the servers' own skill templates are one in front
          const templates = (yield* client.listResourceTemplates()).resourceTemplates.map((template) =>
            template.uriTemplate
          )
          assert.deepStrictEqual(templates, ["skill://{+path}"])
        }))

      it.effect("gets each skill and reads its files from the server that serves it, verified", () =>
        Effect.gen(function*() {
          const { client } = yield* setup(front, behind)
          const { skills } = yield* listAll(client)
          for (const listed of skills) {
            const { skill } = yield* client.session.request(McpSkills.GetSkill, { uri: listed.uri })
            assert.deepStrictEqual(skill, listed)
            assert.match(yield* load(client, skill, skill.uri), /^---\nname: /)
          }
          const pdf = skills.find((skill) => skill.frontmatter.name === "pdf")!
          const git = skills.find((skill) => skill.frontmatter.name === "git")!
          // supporting files, not listed as resources behind: through the template, to their own server
          assert.strictEqual(yield* load(client, pdf, "skill://a.example/pdf/scripts/run.py"), "print('filled')\n")
          assert.strictEqual(yield* load(client, git, "skill://b.example/git/notes.txt"), "short subjects\n")
        }))

      it.effect("a skill no listing has is found by asking each server in turn", () =>
        Effect.gen(function*() {
          const { client } = yield* setup(front, behind)
          // a file first: each server asked to read it until one has it
          const data = yield* client.readResource("skill://b.example/hidden/data.txt")
          assert.strictEqual((data.contents[0] as { readonly text?: string }).text, "hidden data\n")
          const { skill } = yield* client.session.request(McpSkills.GetSkill, {
            uri: "skill://b.example/hidden/SKILL.md"
          })
          assert.strictEqual(skill.frontmatter.name, "hidden")
          assert.notInclude(uris((yield* listAll(client)).skills), skill.uri)
          // now known: its files go to its server
          assert.strictEqual(yield* load(client, skill, "skill://b.example/hidden/data.txt"), "hidden data\n")
          assert.match(yield* load(client, skill, skill.uri), /Served, not listed/)
        }))

      it.effect("reads a skill's folders on the server that serves it", () =>
        Effect.gen(function*() {
          const { client } = yield* setup(front, behind)
          const root = yield* client.session.request(McpSkills.ReadDirectory, { uri: "skill://a.example/pdf" })
          assert.deepStrictEqual(
            root.resources.map((resource) => [resource.uri, resource.mimeType]).sort(),
            [
              ["skill://a.example/pdf/SKILL.md", "text/plain"],
              ["skill://a.example/pdf/reference", McpSkills.DIRECTORY_MIME_TYPE],
              ["skill://a.example/pdf/scripts", McpSkills.DIRECTORY_MIME_TYPE]
            ]
          )
          const scripts = yield* client.session.request(McpSkills.ReadDirectory, {
            uri: "skill://a.example/pdf/scripts"
          })
          assert.deepStrictEqual(scripts.resources.map((resource) => resource.uri), [
            "skill://a.example/pdf/scripts/run.py"
          ])
          // beta does not read directories
          const refused = yield* Effect.flip(
            client.session.request(McpSkills.ReadDirectory, { uri: "skill://b.example/git" })
          )
          assert.strictEqual(codeOf(refused), JsonRpc.ErrorCode.InvalidParams)
        }))

      it.effect("an unknown skill is -32602; a file of none cannot be read", () =>
        Effect.gen(function*() {
          const { client } = yield* setup(front, behind)
          const refused = yield* Effect.flip(
            client.session.request(McpSkills.GetSkill, { uri: "skill://nowhere.example/x/SKILL.md" })
          )
          assert.strictEqual(codeOf(refused), JsonRpc.ErrorCode.InvalidParams)
          const unread = yield* Effect.flip(client.readResource("skill://nowhere.example/x/SKILL.md"))
          assert.include(
            [JsonRpc.ErrorCode.InvalidParams, JsonRpc.ErrorCode.ResourceNotFound],
            codeOf(unread)
          )
          // the plain server's template is not asked: it does not serve skills
          assert.notInclude(unread.message, "plain")
          const missing = yield* Effect.flip(client.readResource("skill://a.example/pdf/missing.txt"))
          assert.include([JsonRpc.ErrorCode.InvalidParams, JsonRpc.ErrorCode.ResourceNotFound], codeOf(missing))
        }))
    })
  }

  for (const [front, behind] of PAIRS) {
    it.effect(`two McpSkills catalogs behind, both under skill://{+path} (${front} client, ${behind} servers)`, () =>
      Effect.gen(function*() {
        const catalog = (files: Record<string, string>) =>
          Effect.map(
            McpSkills.load(McpSkills.memoryFiles(files), { strict: true }),
            (loaded) => McpSkills.extension(loaded)
          )
        const alpha = yield* catalog({
          "a.example/pdf/SKILL.md": manifest("pdf", "Fills PDF forms"),
          "a.example/pdf/scripts/run.py": "print('filled')\n"
        })
        const beta = yield* catalog({
          "b.example/git/SKILL.md": manifest("git", "Writes commit messages"),
          "b.example/git/docs/notes.txt": "short subjects\n"
        })
        const { client } = yield* setup(front, behind, {
          servers: {
            alpha: McpGroup.inMemory(McpServer.layer({ name: "alpha", version: "1" }, alpha), { era: behind }),
            beta: McpGroup.inMemory(McpServer.layer({ name: "beta", version: "1" }, beta), { era: behind })
          }
        })
        assert.deepStrictEqual((client.serverCapabilities as any).extensions?.[ID], { directoryRead: true })
        const { skills } = yield* listAll(client)
        assert.deepStrictEqual(uris(skills), ["skill://a.example/pdf/SKILL.md", "skill://b.example/git/SKILL.md"])
        for (const listed of skills) {
          const { skill } = yield* client.session.request(McpSkills.GetSkill, { uri: listed.uri })
          assert.deepStrictEqual(skill, listed)
          yield* load(client, skill, skill.uri)
        }
        const [pdf, git] = skills
        assert.strictEqual(yield* load(client, pdf!, "skill://a.example/pdf/scripts/run.py"), "print('filled')\n")
        assert.strictEqual(yield* load(client, git!, "skill://b.example/git/docs/notes.txt"), "short subjects\n")
        // the second catalog's folders are read on it, not on the first
        const docs = yield* client.session.request(McpSkills.ReadDirectory, { uri: "skill://b.example/git/docs" })
        assert.deepStrictEqual(docs.resources.map((resource) => resource.uri), ["skill://b.example/git/docs/notes.txt"])
        const root = yield* client.session.request(McpSkills.ReadDirectory, { uri: "skill://b.example/git" })
        assert.deepStrictEqual(root.resources.map((resource) => resource.uri).sort(), [
          "skill://b.example/git/SKILL.md",
          "skill://b.example/git/docs"
        ])
      }))
  }

  it.effect("a server without the extension contributes nothing; with none, nothing is declared", () =>
    Effect.gen(function*() {
      const { client } = yield* setup("modern", "legacy", {
        servers: { plain: McpGroup.inMemory(plainServer, { era: "legacy" }) }
      })
      assert.isUndefined((client.serverCapabilities as any).extensions?.[ID])
      // its own template passes through as any other
      const templates = (yield* client.listResourceTemplates()).resourceTemplates.map((template) =>
        template.uriTemplate
      )
      assert.deepStrictEqual(templates, ["skill://{+path}"])
      const read = yield* client.readResource("skill://x.example/y/SKILL.md")
      assert.strictEqual((read.contents[0] as { readonly text?: string }).text, "plain skill://x.example/y/SKILL.md")
    }))

  it.effect("a server that comes later adds its skills; one without directoryRead declares none", () =>
    Effect.gen(function*() {
      const { client, group } = yield* setup("modern", "modern", {
        servers: { beta: McpGroup.inMemory(yield* skillServer("beta", BETA), { era: "modern" }) }
      })
      assert.deepStrictEqual((client.serverCapabilities as any).extensions?.[ID], {})
      assert.strictEqual((yield* listAll(client)).skills.length, 2)
      yield* group.connect("alpha", McpGroup.inMemory(yield* skillServer("alpha", ALPHA, { directoryRead: true })))
      // the gateway follows the group's changes in a fiber of its own
      const { skills } = yield* Effect.repeat(listAll(client), {
        until: ({ skills }) => skills.length === 3,
        times: 100
      })
      assert.strictEqual(skills.length, 3)
      // beta came first: the shared skill is its, listed and read
      const shared = skills.find((skill) => skill.uri.includes("shared"))!
      assert.strictEqual(shared.frontmatter.description, "Beta's copy")
      assert.match(yield* load(client, shared, shared.uri), /Beta's copy/)
      const pdf = skills.find((skill) => skill.frontmatter.name === "pdf")!
      assert.strictEqual(yield* load(client, pdf, "skill://a.example/pdf/reference/guide.md"), "# Guide\n")
      yield* group.disconnect("beta")
      const after = yield* Effect.repeat(listAll(client), { until: ({ skills }) => skills.length === 2, times: 100 })
      assert.deepStrictEqual(uris(after.skills), [
        "skill://a.example/pdf/SKILL.md",
        "skill://shared.example/shared/SKILL.md"
      ])
      const alphas = after.skills.find((skill) => skill.uri.includes("shared"))!
      assert.strictEqual(alphas.frontmatter.description, "Alpha's copy")
      assert.match(yield* load(client, alphas, alphas.uri), /Alpha's copy/)
    }))

  for (const era of ["legacy", "modern"] as const) {
    it.effect(`filters hide a server's skills and files (${era})`, () =>
      Effect.gen(function*() {
        const { client } = yield* setup(era, era, {
          gateway: {
            upstreams: {
              alpha: { resources: { deny: ["skill://a.example/pdf/scripts/*"] } },
              beta: { resources: { deny: ["skill://b.example/*"] } }
            }
          }
        })
        const { skills } = yield* listAll(client)
        assert.deepStrictEqual(uris(skills), [
          "skill://a.example/pdf/SKILL.md",
          "skill://shared.example/shared/SKILL.md"
        ])
        const pdf = skills.find((skill) => skill.frontmatter.name === "pdf")!
        assert.deepStrictEqual(
          (pdf.resources as ReadonlyArray<McpSkills.ResourceEntry>).map((file) => file.uri).sort(),
          [
            "skill://a.example/pdf/SKILL.md",
            "skill://a.example/pdf/reference/guide.md"
          ]
        )
        yield* load(client, pdf, "skill://a.example/pdf/reference/guide.md")
        assert.isTrue(
          (yield* Effect.exit(client.readResource("skill://a.example/pdf/scripts/run.py")))._tag === "Failure"
        )
        const hidden = yield* Effect.flip(
          client.session.request(McpSkills.GetSkill, { uri: "skill://b.example/git/SKILL.md" })
        )
        assert.strictEqual(codeOf(hidden), JsonRpc.ErrorCode.InvalidParams)
        assert.isTrue((yield* Effect.exit(client.readResource("skill://b.example/git/notes.txt")))._tag === "Failure")
        const dir = yield* client.session.request(McpSkills.ReadDirectory, { uri: "skill://a.example/pdf/scripts" })
        assert.deepStrictEqual(dir.resources, [])
      }))

    it.effect(`the policy hides skills per request (${era})`, () =>
      Effect.gen(function*() {
        const { client } = yield* setup(era, era, {
          gateway: { policy: (component) => !(component.server === "beta" && component.name.startsWith("skill://")) }
        })
        const { pages, skills } = yield* listAll(client)
        assert.deepStrictEqual(uris(skills), [
          "skill://a.example/pdf/SKILL.md",
          "skill://shared.example/shared/SKILL.md"
        ])
        if (era === "modern") assert.strictEqual(pages[0]!.cacheScope, "private")
        const hidden = yield* Effect.flip(
          client.session.request(McpSkills.GetSkill, { uri: "skill://b.example/git/SKILL.md" })
        )
        assert.strictEqual(codeOf(hidden), JsonRpc.ErrorCode.InvalidParams)
        assert.isTrue((yield* Effect.exit(client.readResource("skill://b.example/git/notes.txt")))._tag === "Failure")
      }))
  }

  it.effect("a server that does not answer is named (-32000)", () =>
    Effect.gen(function*() {
      const hang = "skill://slow.example/slow/SKILL.md"
      const slow = yield* skillServer("slow", {
        "slow.example/slow": { "SKILL.md": manifest("slow", "Never answers") }
      }, { hang })
      const { client } = yield* setup("modern", "legacy", {
        servers: { slow: McpGroup.inMemory(slow, { era: "legacy" }) },
        gateway: { callTimeout: "1 second" }
      })
      yield* listAll(client)
      const fiber = yield* client.session.request(McpSkills.GetSkill, { uri: hang }).pipe(
        Effect.flip,
        Effect.forkChild({ startImmediately: true })
      )
      yield* TestClock.adjust("2 seconds")
      const error = yield* Fiber.join(fiber)
      assert.strictEqual(codeOf(error), JsonRpc.ErrorCode.ServerError)
      assert.include(error.message, "\"slow\"")
    }))

  it.effect("an invalid cursor is -32602", () =>
    Effect.gen(function*() {
      const { client } = yield* setup("legacy", "legacy")
      const refused = yield* Effect.flip(client.session.request(McpSkills.ListSkills, { cursor: "nope" }))
      assert.strictEqual(codeOf(refused), JsonRpc.ErrorCode.InvalidParams)
      assert.isTrue(Schema.is(McpSkills.Skill)((yield* listAll(client)).skills[0]))
    }))
})
