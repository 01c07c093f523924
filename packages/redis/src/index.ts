/**
 * @effect-mcp/redis: Redis-backed stores for @effect-mcp servers that run as
 * many replicas behind a load balancer.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as McpRedis from "./McpRedis.ts"
