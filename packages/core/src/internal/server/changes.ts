/**
 * Changes of a server's registry and how they are told: its sessions and
 * listeners hear once per kind changed, the other replicas through the
 * change bus if there is one, and the extensions registered are attached
 * or detached.
 *
 * @internal
 */
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import type * as McpChangeBus from "../../McpChangeBus.ts"
import * as McpSchema from "../../McpSchema.ts"
import type * as McpServer from "../../McpServer.ts"
import * as Extensions from "./extensions.ts"
import { applyChanges, type Change, isListed, listChanged, type Listed } from "./registry.ts"
import { withServices } from "./services.ts"
import type { ServerState } from "./state.ts"
import * as Subscriptions from "./subscriptions.ts"

/** How a server's registry changes and what it tells of changes. @internal */
export interface Changes {
  /** Tells this replica's clients and listeners that the list of `kind` changed. */
  readonly broadcast: (kind: Listed) => Effect.Effect<void>
  /** Tells this replica's subscribed clients and listeners that `uri` was updated. */
  readonly resourceUpdated: (uri: string) => Effect.Effect<void>
  /** Applies `changes` to the registry, then tells of each kind changed. */
  readonly update: (changes: ReadonlyArray<Change>) => Effect.Effect<void>
  /** Enables or disables a definition (with its parts). */
  readonly setEnabled: (definition: McpServer.Definition<any>, value: boolean) => Effect.Effect<void>
}

/** The changes of the server of `state`, announced on `bus` too if there is one. @internal */
export const make = (state: ServerState, bus: McpChangeBus.Service | undefined): Changes => {
  const { listeners, registry, sessions } = state

  // what this replica's clients are told of a change; `announce` also tells the other replicas
  const broadcast = (kind: Listed) =>
    Effect.andThen(
      Effect.forEach(sessions, (live) =>
        live.session === undefined
          ? Effect.void
          : Effect.flatMap(
            live.session.state,
            (state) =>
              state._tag === "Initialized" ? Effect.ignore(live.session!.notify(listChanged[kind], {})) : Effect.void
          ), {
        discard: true
      }),
      Subscriptions.listChanged(listeners, kind === "resourceTemplates" ? "resources" : kind, listChanged[kind].name)
    )

  const resourceUpdated = (uri: string) =>
    Effect.andThen(
      Effect.forEach(sessions, (live) =>
        live.session !== undefined && live.subscriptions?.has(uri) === true
          ? Effect.ignore(live.session.notify(McpSchema.ResourceUpdated, { uri }))
          : Effect.void, { discard: true }),
      Subscriptions.resourceUpdated(listeners, uri)
    )

  // with a change bus, the other replicas hear of the changes made here
  const announce = (kind: Listed) =>
    bus === undefined
      ? broadcast(kind)
      : Effect.andThen(
        broadcast(kind),
        bus.publish({ _tag: "ListChanged", kind: kind === "resourceTemplates" ? "resources" : kind })
      )

  // changes of the registry: the sessions and listeners are told once per kind changed
  const update = (changes: ReadonlyArray<Change>) =>
    Effect.flatMap(
      Ref.modify(registry, (current) => {
        const [changed, next] = applyChanges(current, changes)
        return [[changed, current, next] as const, next]
      }),
      ([changed, before, after]) =>
        Effect.forEach(
          changed,
          (kind) => isListed(kind) ? announce(kind) : Effect.sync(() => Extensions.reattach(attached, before, after)),
          { discard: true }
        )
    )

  // the extensions registered, each told how to announce its list changes
  const attached = Extensions.attachments({ listChanged: announce })

  const setEnabled = (definition: McpServer.Definition<any>, value: boolean) =>
    update(
      Extensions.withParts([definition]).map((part): Change => [
        part,
        (entry) => entry === undefined || entry.enabled === value ? entry : { ...entry, enabled: value }
      ])
    )

  return { broadcast, resourceUpdated, update, setEnabled }
}

/** Registrations bound to the services of the registering context. @internal */
export const registering = (
  definitions: ReadonlyArray<McpServer.Definition<any>>,
  services: Context.Context<any>
): Array<Change> =>
  Extensions.withParts(definitions).map((definition) => {
    const entry = { definition: withServices(definition, services), enabled: true }
    return [definition, () => entry]
  })
