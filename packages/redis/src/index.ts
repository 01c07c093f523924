/**
 * @effect-mcp/redis: Redis-backed stores for @effect-mcp servers that run as
 * many replicas behind a load balancer.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as McpRedis from "./McpRedis.ts"

/** @since 0.1.0 */
export * as McpRedisEventStore from "./McpRedisEventStore.ts"

/** @since 0.1.0 */
export * as McpRedisSessions from "./McpRedisSessions.ts"

/** @since 0.1.0 */
export * as McpRedisChangeBus from "./McpRedisChangeBus.ts"

/** @since 0.1.0 */
export * as McpRedisCluster from "./McpRedisCluster.ts"

/** @since 0.1.0 */
export * as McpRedisTaskStore from "./McpRedisTaskStore.ts"
