/**
 * The host side of the Skills extension: a client lists a server's skills and
 * reads their files, each verified against its entry (size, digest,
 * frontmatter) before it is handed out.
 */
import { McpClient, McpSkillsClient } from "@effect-mcp/core"
import * as Effect from "effect/Effect"

export const readFirstSkill = Effect.gen(function*() {
  const client = yield* McpClient.McpClient
  // #region read
  const skills = McpSkillsClient.make(client) // or McpSkillsClient.layer, over McpClient
  const listed = yield* skills.list() // every page; invalid entries refused
  const manifest = yield* skills.read(listed[0]!) // SKILL.md: size, digest and frontmatter checked
  const forms = yield* skills.read(listed[0]!, "references/FORMS.md")
  // #endregion read
  return { manifest, forms }
})
