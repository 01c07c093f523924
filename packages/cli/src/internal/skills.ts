/**
 * `effect-mcp skills list|show|read`: the skills of every server (the Skills
 * extension, SEP-2640) through `McpSkillsClient.group`. A skill is named by
 * its `SKILL.md` URI or its name; `read` prints a file only once it has been
 * verified against the skill's entry (size, digest, and the frontmatter of
 * `SKILL.md`), and a file that fails exits 4 naming the check.
 *
 * @internal
 */
import type * as McpError from "@effect-mcp/core/McpError"
import type * as McpSkills from "@effect-mcp/core/McpSkills"
import * as McpSkillsClient from "@effect-mcp/core/McpSkillsClient"
import * as Argument from "effect/cli/Argument"
import * as Command from "effect/cli/Command"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Base64 from "effect/encoding/Base64"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Connect from "./connect.ts"
import * as Failures from "./failures.ts"
import * as Format from "./format.ts"

/** A skill and the server that serves it. */
interface Located {
  readonly server: string
  readonly skill: McpSkills.Skill
}

/** A failed request; a skill that failed a check names the check (its description names each differing field). */
const skillFailure = (error: McpError.McpError, server?: string): Failures.CliFailure => {
  const reason = error.reason
  if (reason._tag !== "SkillError") return Failures.requestFailure(error)
  const where = server === undefined ? "" : `server "${server}": `
  return new Failures.CliFailure({
    kind: "Request",
    description: Format.terminal(`${where}skill check "${reason.check}" failed: ${reason.description}`)
  })
}

/** The skills of every server, in the config's order; servers that could not list theirs fail the command after the others are shown. */
const listAll = (group: Connect.Group, order: ReadonlyArray<string>) =>
  Effect.map(
    Effect.mapError(McpSkillsClient.group(group).list(), Failures.requestFailure),
    (servers) => [...servers].sort((a, b) => order.indexOf(a.server) - order.indexOf(b.server))
  )

/** The one skill `ref` names (its `SKILL.md` URI, or its name), asking `skills/get` for a URI no server lists. */
const locate = (group: Connect.Group, order: ReadonlyArray<string>, ref: string) =>
  Effect.gen(function*() {
    const servers = yield* listAll(group, order)
    const found: Array<Located> = servers.flatMap(({ server, skills }) =>
      skills.filter((skill) => skill.uri === ref || skill.frontmatter.name === ref).map((skill) => ({ server, skill }))
    )
    if (found.length > 1) {
      const where = found.map(({ server, skill }) => `${skill.uri} on "${server}"`).join(", ")
      return yield* Failures.usage(
        `"${ref}" names several skills (${where}): use its URI, or choose a server with --server <name>`
      )
    }
    if (found.length === 1) return found[0]!
    if (ref.includes("://")) {
      const skills = McpSkillsClient.group(group)
      for (const { server } of servers.filter((candidate) => candidate.supported)) {
        const got = yield* Effect.result(skills.get(server, ref))
        if (Result.isSuccess(got)) return { server, skill: got.success }
      }
    }
    const failed = servers.find((candidate) => candidate.error !== undefined)
    if (failed?.error !== undefined) return yield* skillFailure(failed.error, failed.server)
    return yield* Failures.unknownName("skill", ref, servers.flatMap(({ skills }) => skills.map((skill) => skill.uri)))
  })

const skillArgument = Argument.String("skill").pipe(
  Argument.withDescription("The skill: its SKILL.md URI (skill://…/SKILL.md) or its name")
)

// -----------------------------------------------------------------------------
// Printing
// -----------------------------------------------------------------------------

const show = (value: unknown): string => typeof value === "string" ? value : JSON.stringify(value) ?? String(value)

const listing = (servers: ReadonlyArray<McpSkillsClient.ServerSkills>): string =>
  Format.table(
    ["SERVER", "URI", "NAME", "DESCRIPTION"],
    servers.flatMap(({ server, skills }) =>
      skills.map((skill) => [server, skill.uri, skill.frontmatter.name, skill.frontmatter.description])
    )
  )

const entry = ({ server, skill }: Located): string => {
  const frontmatter = Object.entries(skill.frontmatter).map(([key, value]) =>
    `  ${Format.terminal(key, { line: true })}: ${Format.terminal(show(value), { line: true })}`
  )
  const files = skill.resources === "dynamic"
    ? "  (dynamic: the server does not list them)"
    : Format.table(["URI", "SIZE", "DIGEST"], skill.resources.map((file) => [file.uri, String(file.size), file.digest]))
      .split("\n").map((line) => `  ${line}`).join("\n")
  return [
    `${Format.terminal(skill.uri, { line: true })} (server ${Format.terminal(server, { line: true })})`,
    "frontmatter:",
    ...frontmatter,
    "files:",
    files
  ].join("\n")
}

const decodeUtf8 = (bytes: Uint8Array): string | undefined =>
  Result.getOrUndefined(Result.try(() => new TextDecoder("utf-8", { fatal: true }).decode(bytes)))

/** A verified file as text for a terminal (a final newline left to `Console.log`). */
const content = (file: McpSkillsClient.SkillFile): string => {
  const text = file.text ?? decodeUtf8(file.bytes)
  if (text === undefined) {
    return `(${file.bytes.byteLength} bytes of binary content${
      file.mimeType === undefined ? "" : `, ${Format.terminal(file.mimeType, { line: true })}`
    }; --json prints them as base64)`
  }
  return Format.terminal(text.endsWith("\n") ? text.slice(0, -1) : text)
}

const fileJson = (server: string, file: McpSkillsClient.SkillFile) => {
  const text = file.text ?? decodeUtf8(file.bytes)
  return {
    server,
    uri: file.uri,
    mimeType: file.mimeType,
    verified: file.verified,
    size: file.bytes.byteLength,
    ...(text === undefined ? { blob: Base64.encode(file.bytes) } : { text }),
    ...(file.frontmatter === undefined ? {} : { frontmatter: file.frontmatter })
  }
}

// -----------------------------------------------------------------------------
// Commands
// -----------------------------------------------------------------------------

const list = Command.make("list", {}, () =>
  Connect.withGroup(({ group, json, order }) =>
    Effect.gen(function*() {
      const servers = yield* listAll(group, order)
      yield* Console.log(
        json
          ? Format.json(servers.flatMap(({ server, skills }) =>
            skills.map((skill) => ({
              server,
              uri: skill.uri,
              name: skill.frontmatter.name,
              description: skill.frontmatter.description
            }))
          ))
          : listing(servers)
      )
      const failed = servers.find((candidate) => candidate.error !== undefined)
      if (failed?.error !== undefined) return yield* skillFailure(failed.error, failed.server)
    })
  )).pipe(Command.withDescription("List the skills of every server (URI, name, description)"))

const showCommand = Command.make(
  "show",
  { skill: skillArgument },
  ({ skill }) =>
    Connect.withGroup(({ group, json, order }) =>
      Effect.flatMap(
        locate(group, order, skill),
        (located) => Console.log(json ? Format.json({ server: located.server, ...located.skill }) : entry(located))
      )
    )
).pipe(Command.withDescription("Show a skill's entry: its frontmatter, and its files with their sizes and digests"))

const read = Command.make(
  "read",
  {
    skill: skillArgument,
    file: Argument.String("file").pipe(
      Argument.withDescription("The file: a path in the skill (references/FORMS.md) or its URI. Default: SKILL.md"),
      Argument.optional
    )
  },
  ({ file, skill }) =>
    Connect.withGroup(({ group, json, order }) =>
      Effect.gen(function*() {
        const located = yield* locate(group, order, skill)
        const read = yield* McpSkillsClient.group(group).read(
          located.server,
          located.skill,
          Option.getOrUndefined(file)
        ).pipe(
          Effect.mapError((error) => skillFailure(error, located.server))
        )
        yield* Console.log(json ? Format.json(fileJson(located.server, read)) : content(read))
      })
    )
).pipe(
  Command.withDescription(
    "Print a file of a skill once it is verified against the skill's entry (size, sha256 digest, and for " +
      "SKILL.md its frontmatter); a file that fails a check is not printed, and the command exits 4 naming the check"
  ),
  Command.withExamples([
    { command: "effect-mcp skills read pdf-processing", description: "The SKILL.md of the skill named pdf-processing" },
    {
      command: "effect-mcp skills read skill://pdf-processing/SKILL.md references/FORMS.md",
      description: "A supporting file of a skill"
    }
  ])
)

/** `skills list|show|read`. */
export const command = Command.make("skills").pipe(
  Command.withDescription("The skills the servers offer (the Skills extension): list them, show one, read its files"),
  Command.withSubcommands([list, showCommand, read])
)
