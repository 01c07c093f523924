/**
 * The skills of every server of an `McpGroup`, by server name: each server
 * that is up is listed on its own (one failing server does not hide the
 * others' skills), and a read goes to the server named.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type * as McpGroup from "../../McpGroup.ts"
import type * as McpSkillsClient from "../../McpSkillsClient.ts"
import * as Client from "./client.ts"

/** The group's skills. @internal */
export const make = (group: McpGroup.Group): McpSkillsClient.GroupSkills => {
  const forServer = (server: string) => Effect.map(group.client(server), Client.make)

  const list = (options?: McpSkillsClient.ListOptions) =>
    Effect.gen(function*() {
      const servers = (yield* group.servers).filter((status) => status.status === "up")
      return yield* Effect.forEach(servers, (status) =>
        Effect.map(
          Effect.result(
            Effect.flatMap(
              forServer(status.name),
              (skills) => Effect.map(skills.list(options), (list) => ({ supported: skills.supported, list }))
            )
          ),
          (outcome): McpSkillsClient.ServerSkills =>
            Result.isSuccess(outcome)
              ? { server: status.name, supported: outcome.success.supported, skills: outcome.success.list }
              : { server: status.name, supported: false, skills: [], error: outcome.failure }
        ), { concurrency: 8 })
    })

  return {
    forServer,
    list,
    get: (server, uri, options) => Effect.flatMap(forServer(server), (skills) => skills.get(uri, options)),
    read: (server, skill, ref, options) =>
      Effect.flatMap(forServer(server), (skills) => skills.read(skill, ref, options)),
    readDirectory: (server, uri, options) =>
      Effect.flatMap(forServer(server), (skills) => skills.readDirectory(uri, options))
  }
}
