/**
 * @effect-mcp/cli: the `effect-mcp` command.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as McpCli from "./McpCli.ts"
