/**
 * The Skills extension (SEP-2640, `io.modelcontextprotocol/skills`): Agent
 * Skills, folders with a `SKILL.md`, served as `skill://` resources with
 * `skills/list`, `skills/get` and `resources/directory/read`, each file
 * listed with its `sha256:` digest and size for the host to verify.
 *
 * @since 0.3.0
 */
export * from "./internal/schema/skills.ts"
