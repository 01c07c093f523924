/**
 * @effect-mcp/platform-node: Node.js bindings for @effect-mcp/core.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as NodeJsonSchemaValidator from "./NodeJsonSchemaValidator.ts"

/** @since 0.1.0 */
export * as NodeMcpRuntime from "./NodeMcpRuntime.ts"

/** @since 0.1.0 */
export * as NodeMcpStdio from "./NodeMcpStdio.ts"
