/**
 * The documentation's own examples (`scratchpad/docs/`, compiled by `npm run
 * typecheck`) that can run here without a network or Redis: a program run as
 * its page says, printing what the page shows; a server run as a child
 * process and driven by our client; a fragment driven against a server in
 * memory; a config file parsed as the CLI parses it. The others run where
 * their peers are: `docs.auth.test.ts` (the Authorization guide's server and
 * client), `runtimes.browser-oauth.test.ts` (its page, in Chromium) and
 * `packages/redis/test/docs.examples.test.ts` (the replicas, on Redis).
 */
import { type McpClient, type McpError, McpServer, McpSkills, type McpSkillsClient, McpTest } from "@effect-mcp/core"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"
import * as NodeMcpGroup from "../src/NodeMcpGroup.ts"
import { connectStdio, textOf } from "./utils/client.ts"

const root = fileURLToPath(new URL("../../..", import.meta.url))

const node = (args: ReadonlyArray<string>) =>
  new Promise<{ code: number; stdout: string }>((resolve) =>
    execFile(
      process.execPath,
      ["--conditions=development", ...args],
      { cwd: root, timeout: 30_000 },
      (error, stdout) => resolve({ code: error === null ? 0 : 1, stdout })
    )
  )

const skillsClientUrl = new URL("../../../scratchpad/docs/skills-client.ts", import.meta.url).href

interface SkillsClientModule {
  readonly readFirstSkill: Effect.Effect<
    { readonly manifest: McpSkillsClient.SkillFile; readonly forms: McpSkillsClient.SkillFile },
    McpError.McpError,
    McpClient.McpClient
  >
}

describe("documentation examples", () => {
  it("registration.ts: definitions registered, hidden, shown and removed at run time; a middleware's caller", async () => {
    const { code, stdout } = await node(["scratchpad/docs/registration.ts"])
    assert.strictEqual(code, 0)
    assert.strictEqual(
      stdout,
      [
        "tools: whoami",
        "after register: shout, whoami",
        "after disable: whoami",
        "shout: HELLO",
        "after unregister: whoami",
        "you are anonymous; you are ada",
        ""
      ].join("\n")
    )
  })

  it.effect("skills-client.ts: lists a server's skills and reads two files of the first, verified", () =>
    Effect.gen(function*() {
      const files = McpSkills.memoryFiles({
        "pdf-processing/SKILL.md": "---\nname: pdf-processing\ndescription: Fills PDF forms\n---\n# PDF processing\n",
        "pdf-processing/references/FORMS.md": "# Forms\n"
      })
      const Server = Layer.unwrap(Effect.map(
        McpSkills.load(files, { strict: true }),
        (catalog) => McpServer.layer({ name: "skills", version: "1.0.0" }, McpSkills.extension(catalog))
      ))
      // imported by URL: the file is compiled with scratchpad/, not with these tests
      const { readFirstSkill } = yield* Effect.promise(() => import(skillsClientUrl) as Promise<SkillsClientModule>)
      const { forms, manifest } = yield* readFirstSkill.pipe(Effect.provide(McpTest.layer(Server)))
      assert.strictEqual(manifest.uri, "skill://pdf-processing/SKILL.md")
      assert.isTrue(manifest.verified)
      assert.strictEqual(manifest.frontmatter?.["description"], "Fills PDF forms")
      assert.strictEqual(forms.text, "# Forms\n")
      assert.isTrue(forms.verified)
    }))

  it.live("apps.ts (Extensions): a stdio server whose app-linked tool answers a client that renders no apps in text", () =>
    Effect.gen(function*() {
      const { client } = yield* connectStdio({
        command: process.execPath,
        args: ["--conditions=development", "scratchpad/docs/apps.ts"],
        cwd: root
      })
      const tools = yield* client.tools.get
      assert.deepStrictEqual(tools.map((tool) => tool.name), ["forecast"])
      assert.deepInclude(tools[0]!._meta?.["ui"] as object, { resourceUri: "ui://forecast/view.html" })
      const result = yield* client.callTool("forecast", { city: "Lisbon" })
      assert.match(textOf(result), /^Forecast for Lisbon: Mon \d+ °C, Tue/)
    }).pipe(Effect.scoped))

  it.effect("mcp.json (The effect-mcp command): every kind of server entry parses, the disabled one left out", () =>
    Effect.gen(function*() {
      const servers = yield* NodeMcpGroup.loadConfig(`${root}scratchpad/docs/mcp.json`)
      assert.deepStrictEqual(Object.keys(servers).sort(), [
        "everything",
        "example",
        "legacy",
        "notes",
        "search",
        "socket"
      ])
    }))
})
