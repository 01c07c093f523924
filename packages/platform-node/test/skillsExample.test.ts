/**
 * The Skills example (`scratchpad/skills-server.ts`) in a child process over
 * stdio, serving a copy of `scratchpad/skills/`, driven by our skills client
 * in each era: every skill listed and verified; a skill added on disk is
 * served after SIGHUP, and the client hears that the listing changed.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Fiber, Layer, Option, Schedule, Stream } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import * as McpClient from "../../core/src/McpClient.ts"
import * as McpSchema from "../../core/src/McpSchema.ts"
import * as McpSkillsClient from "../../core/src/McpSkillsClient.ts"
import * as NodeMcpStdio from "../src/NodeMcpStdio.ts"

const root = fileURLToPath(new URL("../../..", import.meta.url))

const copyOfSkills = Effect.acquireRelease(
  Effect.sync(() => {
    const folder = Fs.mkdtempSync(Path.join(Os.tmpdir(), "skills-example-"))
    Fs.cpSync(Path.join(root, "scratchpad/skills"), folder, { recursive: true })
    return folder
  }),
  (folder) => Effect.sync(() => Fs.rmSync(folder, { recursive: true, force: true }))
)

// the server's process, by the folder on its command line (from /proc: no pkill needed)
const hangUp = (folder: string) => {
  for (const pid of Fs.readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    const cmdline = Effect.runSync(Effect.orElseSucceed(
      Effect.try(() => Fs.readFileSync(`/proc/${pid}/cmdline`, "utf8")),
      () => ""
    ))
    if (cmdline.split("\0").includes(folder) && Number(pid) !== process.pid) process.kill(Number(pid), "SIGHUP")
  }
}

const connect = (era: "legacy" | "modern", folder: string) =>
  Layer.build(
    McpClient.layer({ clientInfo: { name: "skills-test", version: "1.0.0" }, era }).pipe(
      Layer.provide(NodeMcpStdio.layerClient({
        command: process.execPath,
        args: ["--conditions=development", "scratchpad/skills-server.ts", folder],
        cwd: root,
        stderr: "capture"
      }))
    )
  ).pipe(Effect.map((context) => Context.get(context, McpClient.McpClient)))

describe("the Skills example over stdio", () => {
  for (const era of ["legacy", "modern"] as const) {
    it.live(
      `lists and verifies every skill; a skill added is served after SIGHUP (${era})`,
      () =>
        Effect.gen(function*() {
          const folder = yield* copyOfSkills
          const client = yield* connect(era, folder)
          const skills = McpSkillsClient.make(client)
          assert.isTrue(skills.supported)
          const listed = yield* skills.list()
          assert.deepStrictEqual(listed.map((skill) => skill.uri), [
            "skill://acme/csv-cleanup/SKILL.md",
            "skill://git-commit-messages/SKILL.md"
          ])
          for (const skill of listed) {
            const manifest = yield* skills.read(skill)
            assert.isTrue(manifest.verified)
            assert.strictEqual(manifest.frontmatter?.name, skill.frontmatter.name)
          }
          const script = yield* skills.read(listed[0]!, "scripts/clean.py")
          assert.isTrue(script.verified)

          // a new skill on disk, then SIGHUP: the server walks the folder again and says so
          Fs.mkdirSync(Path.join(folder, "haiku"))
          Fs.writeFileSync(
            Path.join(folder, "haiku/SKILL.md"),
            "---\nname: haiku\ndescription: Writes a haiku\n---\nFive, seven, five.\n"
          )
          const haikuUri = "skill://haiku/SKILL.md"
          if (era === "legacy") {
            // the session hears the change (a 2026-07-28 client hears it on a listen stream, tested in core)
            const changed = yield* Effect.forkScoped(
              Stream.runHead(client.notificationsOf(McpSchema.ResourceListChanged))
            )
            yield* Effect.yieldNow
            hangUp(folder)
            const first = yield* Fiber.join(changed).pipe(Effect.timeout("20 seconds"))
            assert.isTrue(Option.isSome(first))
          } else {
            hangUp(folder)
          }
          // the reload is the server's: asked again until it lists the new skill (at most 20 s)
          const after = yield* skills.list().pipe(
            Effect.repeat({
              until: (skills) => skills.some((skill) => skill.uri === haikuUri),
              schedule: Schedule.spaced("50 millis")
            }),
            Effect.timeout("20 seconds")
          )
          assert.include(after.map((skill) => skill.uri), haikuUri)
          const haiku = yield* skills.read(after.find((skill) => skill.uri === haikuUri)!)
          assert.strictEqual(haiku.body, "Five, seven, five.\n")
        }).pipe(Effect.scoped),
      60_000
    )
  }
})
