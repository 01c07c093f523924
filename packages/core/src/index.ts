/**
 * @effect-mcp/core: the Model Context Protocol for Effect, platform-free.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as JsonRpc from "./JsonRpc.ts"

/** @since 0.1.0 */
export * as JsonSchemaValidator from "./JsonSchemaValidator.ts"

/** @since 0.3.0 */
export * as McpApps from "./McpApps.ts"

/** @since 0.1.0 */
export * as McpAuth from "./McpAuth.ts"

/** @since 0.1.0 */
export * as McpClient from "./McpClient.ts"

/** @since 0.1.0 */
export * as McpClientSession from "./McpClientSession.ts"

/** @since 0.1.0 */
export * as McpContent from "./McpContent.ts"

/** @since 0.1.0 */
export * as McpError from "./McpError.ts"

/** @since 0.3.0 */
export * as McpExtension from "./McpExtension.ts"

/** @since 0.3.0 */
export * as McpGateway from "./McpGateway.ts"

/** @since 0.1.0 */
export * as McpMethod from "./McpMethod.ts"

/** @since 0.2.0 */
export * as McpMetrics from "./McpMetrics.ts"

/** @since 0.3.0 */
export * as McpOAuth from "./McpOAuth.ts"

/** @since 0.3.0 */
export * as McpOAuthPolicy from "./McpOAuthPolicy.ts"

/** @since 0.3.0 */
export * as McpOAuthRedirect from "./McpOAuthRedirect.ts"

/** @since 0.1.0 */
export * as McpPrompt from "./McpPrompt.ts"

/** @since 0.1.0 */
export * as McpResource from "./McpResource.ts"

/** @since 0.1.0 */
export * as McpSchema from "./McpSchema.ts"

/** @since 0.1.0 */
export * as McpServer from "./McpServer.ts"

/** @since 0.1.0 */
export * as McpServerSession from "./McpServerSession.ts"

/** @since 0.1.0 */
export * as McpSession from "./McpSession.ts"

/** @since 0.3.0 */
export * as McpSkills from "./McpSkills.ts"

/** @since 0.3.0 */
export * as McpSkillsClient from "./McpSkillsClient.ts"

/** @since 0.2.0 */
export * as McpTask from "./McpTask.ts"

/** @since 0.2.0 */
export * as McpTaskStore from "./McpTaskStore.ts"

/** @since 0.2.0 */
export * as McpSessionRegistry from "./McpSessionRegistry.ts"

/** @since 0.2.0 */
export * as McpChangeBus from "./McpChangeBus.ts"

/** @since 0.1.0 */
export * as McpTool from "./McpTool.ts"

/** @since 0.1.0 */
export * as McpTransport from "./McpTransport.ts"

/** @since 0.1.0 */
export * as UriTemplate from "./UriTemplate.ts"

/** @since 0.1.0 */
export * as McpSseServer from "./McpSseServer.ts"

/** @since 0.1.0 */
export * as McpWebSocket from "./McpWebSocket.ts"

/** @since 0.3.0 */
export * as McpWorker from "./McpWorker.ts"

/** @since 0.1.0 */
export * as McpHttpServer from "./McpHttpServer.ts"

/** @since 0.1.0 */
export * as McpHttpClient from "./McpHttpClient.ts"

/** @since 0.1.0 */
export * as McpSseClient from "./McpSseClient.ts"

/** @since 0.1.0 */
export * as McpGroup from "./McpGroup.ts"

/** @since 0.1.0 */
export * as McpConfig from "./McpConfig.ts"

/** @since 0.1.0 */
export * as McpResourceServer from "./McpResourceServer.ts"

/** @since 0.2.0 */
export * as McpAi from "./McpAi.ts"

/** @since 0.2.0 */
export * as McpTest from "./McpTest.ts"
