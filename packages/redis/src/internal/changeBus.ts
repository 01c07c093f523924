/**
 * The change bus on one Redis pub/sub channel, `${prefix}changes`. Each
 * message carries the id of the bus that sent it, so a replica never hears
 * its own; whatever else is on the channel is dropped.
 *
 * @internal
 */
import type * as McpChangeBus from "@effect-mcp/core/McpChangeBus"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redis from "effect/persistence/Redis"
import * as PubSub from "effect/PubSub"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type { Options } from "../McpRedisChangeBus.ts"
import * as Subscribe from "./subscription.ts"

const Change = Schema.Union([
  Schema.Struct({
    _tag: Schema.Literal("ListChanged"),
    kind: Schema.Literals(["tools", "resources", "prompts"])
  }),
  Schema.Struct({ _tag: Schema.Literal("ResourceUpdated"), uri: Schema.String })
])

const Message = Schema.fromJsonString(Schema.Struct({ origin: Schema.String, change: Change }))
const encode = Schema.encodeSync(Message)
const decode = Schema.decodeUnknownOption(Message)

/** @internal */
export const make = (options: Options = {}): Effect.Effect<McpChangeBus.Service, never, Redis.Redis | Scope.Scope> =>
  Effect.gen(function*() {
    const redis = yield* Redis.Redis
    const channel = `${options.prefix ?? "mcp:"}changes`
    const origin = globalThis.crypto.randomUUID()
    const pubsub = yield* PubSub.unbounded<McpChangeBus.Change>()
    yield* Effect.addFinalizer(() => PubSub.shutdown(pubsub))

    yield* Subscribe.subscribe(redis, channel, (text) => {
      const message = decode(text)
      if (Option.isNone(message) || message.value.origin === origin) return Effect.void
      return Effect.asVoid(PubSub.publish(pubsub, message.value.change))
    })

    const publish = (change: McpChangeBus.Change): Effect.Effect<void> =>
      redis.send("PUBLISH", channel, encode({ origin, change: toWire(change) })).pipe(
        Effect.tapError((error) => Effect.logWarning(`Redis PUBLISH to ${channel} failed`, error.cause)),
        Effect.ignore
      )

    return { publish, changes: Stream.fromPubSub(pubsub) }
  })

/** Only the fields of the change (no extra properties go on the wire). */
const toWire = (change: McpChangeBus.Change): McpChangeBus.Change =>
  change._tag === "ListChanged"
    ? { _tag: "ListChanged", kind: change.kind }
    : { _tag: "ResourceUpdated", uri: change.uri }
