/**
 * Changes to what a server offers, shared by its replicas: when one replica
 * registers or removes a tool, prompt or resource, or says a resource was
 * updated, every replica tells its own clients (`notifications/*_changed`
 * and `notifications/resources/updated` to legacy sessions, and to
 * 2026-07-28 `subscriptions/listen` streams).
 *
 * `McpServer` uses the bus in context when it is made; without one, changes
 * stay in the process (the default). `@effect-mcp/redis` has one on Redis
 * pub/sub.
 *
 * The bus carries the news, not the definitions (handlers are code): a
 * replica's lists show what that replica registered, so a change meant for
 * the whole cluster should be made on every replica (from shared
 * configuration, say); clients may then hear of it more than once, which is
 * harmless (they list again).
 *
 * @since 0.2.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Stream from "effect/Stream"

/**
 * One change.
 *
 * @category models
 * @since 0.2.0
 */
export type Change =
  | { readonly _tag: "ListChanged"; readonly kind: "tools" | "resources" | "prompts" }
  | { readonly _tag: "ResourceUpdated"; readonly uri: string }

/**
 * The bus of one replica.
 *
 * @category models
 * @since 0.2.0
 */
export interface Service {
  /** Tells the other replicas (not this one). */
  readonly publish: (change: Change) => Effect.Effect<void>
  /** The changes the other replicas publish, for as long as the stream is consumed. */
  readonly changes: Stream.Stream<Change>
}

/**
 * The change bus `McpServer` uses when one is in context.
 *
 * @category services
 * @since 0.2.0
 */
export class McpChangeBus extends Context.Service<McpChangeBus, Service>()("@effect-mcp/core/McpChangeBus") {}
