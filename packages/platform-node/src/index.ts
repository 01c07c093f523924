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

/** @since 0.1.0 */
export * as NodeMcpSseServer from "./NodeMcpSseServer.ts"

/** @since 0.1.0 */
export * as NodeMcpWebSocket from "./NodeMcpWebSocket.ts"

/** @since 0.1.0 */
export * as NodeMcpHttpServer from "./NodeMcpHttpServer.ts"

/** @since 0.1.0 */
export * as NodeMcpHttpClient from "./NodeMcpHttpClient.ts"

/** @since 0.1.0 */
export * as NodeMcpGroup from "./NodeMcpGroup.ts"

/** @since 0.3.0 */
export * as NodeMcpGateway from "./NodeMcpGateway.ts"

/** @since 0.1.0 */
export * as NodeMcpAuthorizer from "./NodeMcpAuthorizer.ts"

/** @since 0.1.0 */
export * as NodeMcpAuthStore from "./NodeMcpAuthStore.ts"

/** @since 0.1.0 */
export * as NodeMcpOAuth from "./NodeMcpOAuth.ts"

/** @since 0.1.0 */
export * as NodeMcpJwtVerifier from "./NodeMcpJwtVerifier.ts"

/** @since 0.3.0 */
export * as NodeMcpSkills from "./NodeMcpSkills.ts"
