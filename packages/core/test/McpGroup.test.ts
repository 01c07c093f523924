/**
 * McpGroup with in-memory servers (ours, `McpServer`) and a test connector
 * whose connections can be cut and refused: aggregation, collisions and the
 * name hook, atomicity, routing, disconnect, list_changed, failure isolation
 * and reconnection under TestClock, close order, notifications.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Layer, Option, Queue, Ref, Schedule, Schema, Scope, Stream } from "effect"
import { TestClock } from "effect/testing"
import * as McpError from "../src/McpError.ts"
import * as McpGroup from "../src/McpGroup.ts"
import * as McpPrompt from "../src/McpPrompt.ts"
import * as McpResource from "../src/McpResource.ts"
import * as McpServer from "../src/McpServer.ts"
import * as McpTool from "../src/McpTool.ts"
import { textOf } from "./utils/client.ts"
import { makeFlaky } from "./utils/flaky.ts"
import { ValidatorLayer } from "./utils/validator.ts"

// -----------------------------------------------------------------------------
// servers
// -----------------------------------------------------------------------------

const echo = (server: string, name = "echo") =>
  McpTool.make(name, {
    input: Schema.Struct({ text: Schema.String }),
    handler: ({ text }) => Effect.succeed(`${server}:${text}`)
  })

const hang = McpTool.make("hang", { input: Schema.Struct({}), handler: () => Effect.never })

const say = (server: string, name = "say") =>
  McpTool.make(name, {
    input: Schema.Struct({ text: Schema.String }),
    handler: ({ text }, context) => Effect.as(context.log("info", `${server} says ${text}`), "said")
  })

const greet = (server: string, name = "greet") =>
  McpPrompt.make({
    name,
    arguments: Schema.Struct({ who: Schema.String }),
    complete: { who: (value) => Effect.succeed(["ada", "alan"].filter((who) => who.startsWith(value))) },
    get: ({ who }) => Effect.succeed(`${server} greets ${who}`)
  })

const readme = (server: string, uri = "mem://readme") =>
  McpResource.make({ uri, name: "readme", read: () => Effect.succeed(`${server} readme`) })

const notes = (server: string, uriTemplate: "mem://notes/{topic}" = "mem://notes/{topic}") =>
  McpResource.template({
    uriTemplate,
    name: "notes",
    complete: { topic: (value) => Effect.succeed([`${server}-${value}`]) },
    read: ({ topic }) => Effect.succeed(`${server} notes on ${topic}`)
  })

type Events = Ref.Ref<ReadonlyArray<string>>

/** A server layer that records when it starts and stops. */
const serverLayer = (
  name: string,
  definitions: ReadonlyArray<McpServer.Definition<never>>,
  events?: Events
): Layer.Layer<McpServer.McpServer> =>
  Layer.mergeAll(
    McpServer.register(...definitions),
    events === undefined ? Layer.empty : Layer.effectDiscard(Effect.acquireRelease(
      Ref.update(events, (all) => [...all, `open ${name}`]),
      () => Ref.update(events, (all) => [...all, `close ${name}`])
    ))
  ).pipe(Layer.provideMerge(McpServer.layer({ name: `${name}-server`, version: "1.0.0" })))

const makeGroup = (options: McpGroup.Options) =>
  McpGroup.make(options).pipe(Effect.provide([McpGroup.layerConnectorInMemory, ValidatorLayer]))

const reasonOf = (error: McpError.McpError) => error.reason

/** Waits (without time passing) until the group's servers satisfy `ready`. */
const until = (group: McpGroup.Group, ready: (servers: ReadonlyArray<McpGroup.ServerStatus>) => boolean) =>
  group.serverChanges.pipe(Stream.filter(ready), Stream.runHead, Effect.asVoid)

const statusOf = (servers: ReadonlyArray<McpGroup.ServerStatus>, name: string) =>
  servers.find((server) => server.name === name)?.status

// -----------------------------------------------------------------------------

describe("McpGroup: views and routing", () => {
  it.effect("aggregates every server's components in order of connection, each naming its server, and routes calls", () =>
    Effect.gen(function*() {
      const group = yield* makeGroup({
        servers: {
          a: McpGroup.inMemory(serverLayer("a", [echo("a"), greet("a"), readme("a"), notes("a")])),
          b: McpGroup.inMemory(
            serverLayer("b", [echo("b", "shout"), greet("b", "welcome"), readme("b", "mem://b-readme")])
          )
        }
      })
      const servers = yield* group.servers
      assert.deepStrictEqual(servers.map((server) => [server.name, server.status, server.serverInfo?.name]), [
        ["a", "up", "a-server"],
        ["b", "up", "b-server"]
      ])
      assert.deepStrictEqual((yield* group.tools).map((entry) => [entry.server, entry.name, entry.tool.name]), [
        ["a", "echo", "echo"],
        ["b", "shout", "shout"]
      ])
      assert.deepStrictEqual((yield* group.prompts).map((entry) => [entry.server, entry.name]), [
        ["a", "greet"],
        ["b", "welcome"]
      ])
      assert.deepStrictEqual((yield* group.resources).map((entry) => [entry.server, entry.name]), [
        ["a", "mem://readme"],
        ["b", "mem://b-readme"]
      ])
      assert.deepStrictEqual((yield* group.resourceTemplates).map((entry) => [entry.server, entry.name]), [
        ["a", "mem://notes/{topic}"]
      ])

      assert.strictEqual(textOf(yield* group.callTool("echo", { text: "hi" })), "a:hi")
      assert.strictEqual(textOf(yield* group.callTool("shout", { text: "hi" })), "b:hi")
      const prompt = yield* group.getPrompt("welcome", { who: "ada" })
      assert.strictEqual((prompt.messages[0]!.content as { text: string }).text, "b greets ada")
      const listed = yield* group.readResource("mem://b-readme")
      assert.strictEqual((listed.contents[0] as { text: string }).text, "b readme")
      const templated = yield* group.readResource("mem://notes/launch")
      assert.strictEqual((templated.contents[0] as { text: string }).text, "a notes on launch")
      const completion = yield* group.complete({ type: "ref/resource", uri: "mem://notes/{topic}" }, {
        name: "topic",
        value: "la"
      })
      assert.deepStrictEqual(completion.completion.values, ["a-la"])
      const prompted = yield* group.complete({ type: "ref/prompt", name: "welcome" }, { name: "who", value: "a" })
      assert.deepStrictEqual(prompted.completion.values, ["ada", "alan"])
      assert.strictEqual((yield* group.client("b")).serverInfo.name, "b-server")

      // unknown names
      const unknown = yield* Effect.flip(group.callTool("nope"))
      assert.deepStrictEqual(reasonOf(unknown), new McpError.NotFoundError({ kind: "tool", name: "nope" }))
      assert.strictEqual(reasonOf(yield* Effect.flip(group.getPrompt("nope")))._tag, "NotFoundError")
      assert.strictEqual(reasonOf(yield* Effect.flip(group.client("c")))._tag, "NotFoundError")
      // a URI no server lists, with two servers offering resources
      assert.strictEqual(reasonOf(yield* Effect.flip(group.readResource("other://x")))._tag, "NotFoundError")
      // ... unless the server is named
      const direct = yield* Effect.flip(group.readResource("other://x", { server: "a" }))
      assert.strictEqual(reasonOf(direct)._tag, "ProtocolError")
    }))

  it.effect("a URI nobody lists goes to the only server that has resources", () =>
    Effect.gen(function*() {
      const group = yield* makeGroup({
        servers: {
          tools: McpGroup.inMemory(serverLayer("tools", [echo("tools")])),
          docs: McpGroup.inMemory(serverLayer("docs", [readme("docs")]))
        }
      })
      const error = yield* Effect.flip(group.readResource("mem://unlisted"))
      // it reached the docs server, which does not have it
      assert.strictEqual(reasonOf(error)._tag, "ProtocolError")
      assert.include(error.message, "mem://unlisted")
    }))

  it.effect("notifications of every server, tagged with its name; group-wide handlers", () =>
    Effect.gen(function*() {
      const seen = yield* Ref.make<ReadonlyArray<string>>([])
      const group = yield* makeGroup({
        servers: {
          a: McpGroup.inMemory(serverLayer("a", [say("a")])),
          b: {
            params: McpGroup.inMemory(serverLayer("b", [say("b", "say-b")])),
            client: {
              onLoggingMessage: (params) => Ref.update(seen, (all) => [...all, `b-only ${String(params.data)}`])
            }
          }
        },
        client: {
          onLoggingMessage: (params) => Ref.update(seen, (all) => [...all, `group ${String(params.data)}`])
        }
      })
      const stream = yield* group.subscribe
      const collected = yield* stream.pipe(
        Stream.filter((item) => item.notification.method === "notifications/message"),
        Stream.take(2),
        Stream.runCollect,
        Effect.forkChild({ startImmediately: true })
      )
      yield* (yield* group.client("a")).setLoggingLevel("info")
      yield* (yield* group.client("b")).setLoggingLevel("info")
      yield* group.callTool("say", { text: "hi" })
      yield* group.callTool("say-b", { text: "yo" })
      const messages = yield* Fiber.join(collected)
      assert.deepStrictEqual(
        messages.map((item) => [item.server, (item.notification.params as { data: unknown }).data]),
        [["a", "a says hi"], ["b", "b says yo"]]
      )
      // per-server options replace the group's handler for that server
      assert.deepStrictEqual(yield* Ref.get(seen), ["group a says hi", "b-only b says yo"])
    }))
})

describe("McpGroup: eras", () => {
  const eraOf = (servers: ReadonlyArray<McpGroup.ServerStatus>) =>
    servers.map((server) => [server.name, server.status, server.serverInfo?.name, server.era, server.protocolVersion])

  it.effect("each server's era and protocol version once connected: one pinned legacy, one auto (modern with our server); calls routed to each", () =>
    Effect.gen(function*() {
      const group = yield* makeGroup({
        servers: {
          old: McpGroup.inMemory(serverLayer("old", [echo("old"), readme("old")]), { era: "legacy" }),
          new: McpGroup.inMemory(serverLayer("new", [echo("new", "shout"), greet("new")]))
        }
      })
      // our McpServer speaks both eras: auto settles on the modern one
      assert.deepStrictEqual(eraOf(yield* group.servers), [
        ["old", "up", "old-server", "legacy", "2025-11-25"],
        ["new", "up", "new-server", "modern", "2026-07-28"]
      ])
      assert.deepStrictEqual([(yield* group.client("old")).era, (yield* group.client("new")).era], ["legacy", "modern"])

      assert.strictEqual(textOf(yield* group.callTool("echo", { text: "hi" })), "old:hi")
      assert.strictEqual(textOf(yield* group.callTool("shout", { text: "hi" })), "new:hi")
      const read = yield* group.readResource("mem://readme")
      assert.strictEqual((read.contents[0] as { text: string }).text, "old readme")
      const prompt = yield* group.getPrompt("greet", { who: "ada" })
      assert.strictEqual((prompt.messages[0]!.content as { text: string }).text, "new greets ada")

      // connected later, pinned modern; its status shows no era until it is up
      const statuses = yield* group.serverChanges.pipe(
        Stream.map((servers) => servers.find((server) => server.name === "late")),
        Stream.filter((late) => late !== undefined),
        Stream.takeUntil((late) => late.status === "up"),
        Stream.runCollect,
        Effect.forkChild({ startImmediately: true })
      )
      yield* group.connect(
        "late",
        McpGroup.inMemory(serverLayer("late", [echo("late", "echo-late")]), { era: "modern" })
      )
      const seen = yield* Fiber.join(statuses)
      assert.deepStrictEqual(seen.map((late) => [late.status, late.era, late.protocolVersion]), [
        ["connecting", undefined, undefined],
        ["up", "modern", "2026-07-28"]
      ])
      assert.strictEqual(textOf(yield* group.callTool("echo-late", { text: "hi" })), "late:hi")
    }))

  it.effect("a server's era: the group's client options, then its parameters', then its own client options", () =>
    Effect.gen(function*() {
      const group = yield* makeGroup({
        servers: {
          a: McpGroup.inMemory(serverLayer("a", [echo("a")])),
          b: McpGroup.inMemory(serverLayer("b", [echo("b", "b")]), { era: "auto" }),
          c: {
            params: McpGroup.inMemory(serverLayer("c", [echo("c", "c")]), { era: "modern" }),
            client: { era: "legacy" }
          }
        },
        client: { era: "legacy" }
      })
      assert.deepStrictEqual(eraOf(yield* group.servers), [
        ["a", "up", "a-server", "legacy", "2025-11-25"],
        ["b", "up", "b-server", "modern", "2026-07-28"],
        ["c", "up", "c-server", "legacy", "2025-11-25"]
      ])
      assert.deepStrictEqual(
        yield* Effect.forEach(["echo", "b", "c"], (tool) => Effect.map(group.callTool(tool, { text: "x" }), textOf)),
        ["a:x", "b:x", "c:x"]
      )
    }))
})

describe("McpGroup: server→client handlers", () => {
  const ask = (name: string) =>
    McpTool.make(name, {
      input: Schema.Struct({}),
      handler: (_input, context) =>
        Effect.gen(function*() {
          const roots = yield* context.listRoots()
          const answer = yield* context.createMessage({
            messages: [{ role: "user", content: { type: "text", text: "who are you?" } }],
            maxTokens: 10
          })
          return `${roots.map((root) => root.uri).join(",")} ${(answer.content as { text: string }).text}`
        })
    })
  const sampling = (model: string): McpGroup.ClientOptions["sampling"] => ({
    handler: () => Effect.succeed({ role: "assistant", model, content: { type: "text", text: model } })
  })

  it.effect("sampling and roots for the whole group (as a function of the server), overridden per server", () =>
    Effect.gen(function*() {
      const group = yield* makeGroup({
        servers: {
          a: McpGroup.inMemory(serverLayer("a", [ask("ask-a")])),
          b: {
            params: McpGroup.inMemory(serverLayer("b", [ask("ask-b")])),
            client: { sampling: sampling("b-model") }
          }
        },
        client: (server) => ({ roots: [{ uri: `file:///${server}` }], sampling: sampling("group-model") })
      })
      assert.strictEqual(textOf(yield* group.callTool("ask-a")), "file:///a group-model")
      assert.strictEqual(textOf(yield* group.callTool("ask-b")), "file:///b b-model")
      yield* group.connect("c", McpGroup.inMemory(serverLayer("c", [ask("ask-c")])), {
        client: { roots: [{ uri: "file:///elsewhere" }] }
      })
      assert.strictEqual(textOf(yield* group.callTool("ask-c")), "file:///elsewhere group-model")
    }))
})

describe("McpGroup: collisions and the name hook", () => {
  it.effect("a collision fails the connection with an error naming both servers, and changes nothing", () =>
    Effect.gen(function*() {
      const events: Events = yield* Ref.make<ReadonlyArray<string>>([])
      const group = yield* makeGroup({
        servers: { a: McpGroup.inMemory(serverLayer("a", [echo("a"), greet("a")], events)) }
      })
      const before = yield* group.views
      const error = yield* Effect.flip(
        group.connect("b", McpGroup.inMemory(serverLayer("b", [echo("b", "other"), echo("b")], events)))
      )
      assert.deepStrictEqual(
        reasonOf(error),
        new McpError.NameCollisionError({ kind: "tool", name: "echo", servers: ["a", "b"] })
      )
      assert.include(error.message, `tool "echo" of server "b" collides with the one of server "a"`)
      assert.strictEqual(yield* group.views, before, "the views are the very same")
      assert.deepStrictEqual((yield* group.servers).map((server) => server.name), ["a"])
      // b's server was started and stopped again; a's untouched
      assert.deepStrictEqual(yield* Ref.get(events), ["open a", "open b", "close b"])
      assert.strictEqual(textOf(yield* group.callTool("echo", { text: "x" })), "a:x")
      // the name is free again
      yield* group.connect("b", McpGroup.inMemory(serverLayer("b", [echo("b", "other")])))
      assert.deepStrictEqual((yield* group.tools).map((entry) => entry.name), ["echo", "other"])
    }))

  it.effect("prompts collide too, and so do server names; resources and templates never do", () =>
    Effect.gen(function*() {
      const group = yield* makeGroup({
        servers: { a: McpGroup.inMemory(serverLayer("a", [greet("a"), readme("a"), notes("a")])) }
      })
      const prompt = yield* Effect.flip(group.connect("b", McpGroup.inMemory(serverLayer("b", [greet("b")]))))
      assert.deepStrictEqual(
        reasonOf(prompt),
        new McpError.NameCollisionError({ kind: "prompt", name: "greet", servers: ["a", "b"] })
      )
      yield* group.connect("b", McpGroup.inMemory(serverLayer("b", [readme("b"), notes("b")])))
      assert.deepStrictEqual((yield* group.resources).map((entry) => [entry.server, entry.name]), [
        ["a", "mem://readme"],
        ["b", "mem://readme"]
      ])
      const server = yield* Effect.flip(group.connect("a", McpGroup.inMemory(serverLayer("a2", []))))
      assert.strictEqual(reasonOf(server)._tag, "NameCollisionError")
      assert.strictEqual(server.message, `a server named "a" is already in the group`)
      assert.deepStrictEqual((yield* group.servers).map((entry) => entry.name), ["a", "b"])
    }))

  it.effect("the static form fails on a collision (the later server in the order given) and closes everything", () =>
    Effect.gen(function*() {
      const events: Events = yield* Ref.make<ReadonlyArray<string>>([])
      const exit = yield* makeGroup({
        servers: {
          a: McpGroup.inMemory(serverLayer("a", [echo("a")], events)),
          b: McpGroup.inMemory(serverLayer("b", [echo("b")], events)),
          c: McpGroup.inMemory(serverLayer("c", [echo("c", "c-echo")], events))
        }
      }).pipe(Effect.scoped, Effect.exit)
      assert.isTrue(Exit.isFailure(exit))
      const error = Exit.isFailure(exit) ? exit.cause.reasons[0] : undefined
      assert.deepStrictEqual(
        error?._tag === "Fail" ? reasonOf(error.error) : undefined,
        new McpError.NameCollisionError({ kind: "tool", name: "echo", servers: ["a", "b"] })
      )
      const all = yield* Ref.get(events)
      for (const name of ["a", "b", "c"]) assert.include(all, `close ${name}`)
    }))

  it.effect("the name hook namespaces colliding names; calls reach the server with its own name", () =>
    Effect.gen(function*() {
      const group = yield* makeGroup({
        servers: {
          a: McpGroup.inMemory(serverLayer("a", [echo("a"), greet("a")])),
          b: McpGroup.inMemory(serverLayer("b", [echo("b"), greet("b")]))
        },
        nameHook: McpGroup.prefixed()
      })
      assert.deepStrictEqual((yield* group.tools).map((entry) => [entry.server, entry.name, entry.tool.name]), [
        ["a", "a__echo", "echo"],
        ["b", "b__echo", "echo"]
      ])
      assert.strictEqual(textOf(yield* group.callTool("b__echo", { text: "hi" })), "b:hi")
      assert.strictEqual(textOf(yield* group.callTool("a__echo", { text: "hi" })), "a:hi")
      const prompt = yield* group.getPrompt("b__greet", { who: "alan" })
      assert.strictEqual((prompt.messages[0]!.content as { text: string }).text, "b greets alan")
      const completion = yield* group.complete({ type: "ref/prompt", name: "a__greet" }, { name: "who", value: "al" })
      assert.deepStrictEqual(completion.completion.values, ["alan"])
    }))

  it.effect("the hook names tools and prompts only: resources and templates keep their URIs", () =>
    Effect.gen(function*() {
      const kinds = new Set<string>()
      const hook: McpGroup.NameHook = (name, serverInfo, server, kind) => {
        assert.strictEqual(serverInfo.name, `${server}-server`)
        kinds.add(kind)
        return `${server}.${name}`
      }
      const group = yield* makeGroup({
        servers: {
          a: McpGroup.inMemory(serverLayer("a", [echo("a"), greet("a"), readme("a"), notes("a")])),
          b: McpGroup.inMemory(serverLayer("b", [echo("b"), readme("b"), notes("b")]))
        },
        nameHook: hook
      })
      assert.deepStrictEqual(Array.from(kinds).sort(), ["prompt", "tool"])
      assert.deepStrictEqual((yield* group.tools).map((entry) => entry.name), ["a.echo", "b.echo"])
      assert.deepStrictEqual((yield* group.resources).map((entry) => [entry.server, entry.name, entry.resource.uri]), [
        ["a", "mem://readme", "mem://readme"],
        ["b", "mem://readme", "mem://readme"]
      ])
      assert.deepStrictEqual((yield* group.resourceTemplates).map((entry) => [entry.server, entry.name]), [
        ["a", "mem://notes/{topic}"],
        ["b", "mem://notes/{topic}"]
      ])
    }))

  it.effect("a hook that gives two components of one server the same name fails that server", () =>
    Effect.gen(function*() {
      const group = yield* makeGroup({ nameHook: () => "same" })
      const error = yield* Effect.flip(
        group.connect("a", McpGroup.inMemory(serverLayer("a", [echo("a"), echo("a", "other")])))
      )
      assert.deepStrictEqual(
        reasonOf(error),
        new McpError.NameCollisionError({ kind: "tool", name: "same", servers: ["a", "a"] })
      )
      assert.deepStrictEqual(yield* group.servers, [])
    }))
})

describe("McpGroup: one URI, several servers", () => {
  it.effect("a URI two servers list is listed twice; reading it needs its server, a URI one server lists goes there", () =>
    Effect.gen(function*() {
      const group = yield* makeGroup({
        servers: {
          a: McpGroup.inMemory(serverLayer("a", [readme("a"), notes("a")])),
          b: McpGroup.inMemory(
            serverLayer("b", [readme("b"), notes("b"), readme("b", "mem://b-only"), readme("b", "mem://notes/listed")])
          )
        }
      })
      assert.deepStrictEqual((yield* group.resources).map((entry) => [entry.server, entry.name]), [
        ["a", "mem://readme"],
        ["b", "mem://readme"],
        ["b", "mem://b-only"],
        ["b", "mem://notes/listed"]
      ])
      const textOfRead = (result: { readonly contents: ReadonlyArray<unknown> }) =>
        (result.contents[0] as { text: string }).text

      const ambiguous = yield* Effect.flip(group.readResource("mem://readme"))
      assert.deepStrictEqual(
        reasonOf(ambiguous),
        new McpError.AmbiguousError({ kind: "resource", name: "mem://readme", servers: ["a", "b"] })
      )
      assert.include(ambiguous.message, `"a", "b"`)
      assert.strictEqual(textOfRead(yield* group.readResource("mem://readme", { server: "a" })), "a readme")
      assert.strictEqual(textOfRead(yield* group.readResource("mem://readme", { server: "b" })), "b readme")
      assert.strictEqual(textOfRead(yield* group.readResource("mem://b-only")), "b readme")
      // listed by b, though a's template matches it too: listed wins
      assert.strictEqual(textOfRead(yield* group.readResource("mem://notes/listed")), "b readme")

      // templates of both match: ambiguous too
      const templated = yield* Effect.flip(group.readResource("mem://notes/launch"))
      assert.deepStrictEqual(
        reasonOf(templated),
        new McpError.AmbiguousError({ kind: "resource", name: "mem://notes/launch", servers: ["a", "b"] })
      )
      assert.strictEqual(
        textOfRead(yield* group.readResource("mem://notes/launch", { server: "b" })),
        "b notes on launch"
      )
      const unknown = yield* Effect.flip(group.readResource("mem://readme", { server: "c" }))
      assert.deepStrictEqual(reasonOf(unknown), new McpError.NotFoundError({ kind: "server", name: "c" }))

      // completions of a template two servers have
      const ref = { type: "ref/resource", uri: "mem://notes/{topic}" } as const
      assert.strictEqual(
        reasonOf(yield* Effect.flip(group.complete(ref, { name: "topic", value: "x" })))._tag,
        "AmbiguousError"
      )
      const completed = yield* group.complete(ref, { name: "topic", value: "x" }, undefined, { server: "b" })
      assert.deepStrictEqual(completed.completion.values, ["b-x"])

      // subscriptions are routed the same way
      assert.strictEqual(reasonOf(yield* Effect.flip(group.subscribeResource("mem://readme")))._tag, "AmbiguousError")
      yield* group.subscribeResource("mem://readme", { server: "a" })
      yield* group.subscribeResource("mem://b-only")
      yield* group.unsubscribeResource("mem://readme", { server: "a" })
      yield* group.unsubscribeResource("mem://b-only")
      const watch = yield* Effect.flip(Stream.runHead(group.watchResource("mem://readme")))
      assert.strictEqual(reasonOf(watch)._tag, "AmbiguousError")

      // once one of them leaves, the URI is the other's
      yield* group.disconnect("a")
      assert.strictEqual(textOfRead(yield* group.readResource("mem://readme")), "b readme")
      assert.strictEqual(textOfRead(yield* group.readResource("mem://notes/launch")), "b notes on launch")
    }))

  it.effect("watchResource and subscriptions follow the server across reconnections; so do the client's logging level and roots", () =>
    Effect.gen(function*() {
      const requests = yield* Queue.unbounded<string>()
      const server = yield* McpServer.make({
        name: "live",
        version: "1.0.0",
        middleware: [
          (_context, method, params, next) =>
            Effect.tap(next, () =>
              method === "resources/subscribe" || method === "logging/setLevel"
                ? Queue.offer(requests, `${method} ${JSON.stringify(params)}`)
                : Effect.void)
        ]
      })
      yield* server.register(readme("live"))
      const flaky = yield* makeFlaky({ "test://live": Layer.succeed(McpServer.McpServer, server) })
      const group = yield* McpGroup.make({
        servers: { live: McpGroup.http("test://live", { era: "legacy" }) },
        reconnect: Schedule.spaced("1 second"),
        client: { roots: [] }
      }).pipe(Effect.provide([flaky.layer, ValidatorLayer]))
      const next = Queue.take(requests)

      const updates = yield* group.watchResource("mem://readme").pipe(
        Stream.take(3),
        Stream.runCollect,
        Effect.forkChild({ startImmediately: true })
      )
      assert.strictEqual(yield* next, `resources/subscribe {"uri":"mem://readme"}`)
      yield* server.notifyResourceUpdated("mem://readme")
      const client = yield* group.client("live")
      yield* client.setLoggingLevel("warning")
      assert.strictEqual(yield* next, `logging/setLevel {"level":"warning"}`)
      yield* client.setRoots([{ uri: "file:///set" }])
      yield* group.subscribeResource("mem://readme")

      yield* flaky.cut("test://live")
      yield* until(group, (servers) => servers[0]?.status === "down")
      yield* TestClock.adjust("1 second")
      yield* until(group, (servers) => servers[0]?.status === "up")
      // the watch is renewed (and says the resource may have changed), so are the subscription and the level
      const renewed = [yield* next, yield* next, yield* next].sort()
      assert.deepStrictEqual(renewed, [
        `logging/setLevel {"level":"warning"}`,
        `resources/subscribe {"uri":"mem://readme"}`,
        `resources/subscribe {"uri":"mem://readme"}`
      ])
      yield* server.notifyResourceUpdated("mem://readme")
      assert.deepStrictEqual((yield* Fiber.join(updates)).map((update) => update.uri), [
        "mem://readme",
        "mem://readme",
        "mem://readme"
      ])
      assert.deepStrictEqual(yield* client.roots, [{ uri: "file:///set" }])

      // a watch ends when its server leaves the group
      const ended = yield* group.watchResource("mem://readme").pipe(
        Stream.runCollect,
        Effect.forkChild({ startImmediately: true })
      )
      yield* next
      yield* group.disconnect("live")
      assert.deepStrictEqual(yield* Fiber.join(ended), [])
    }))
})

describe("McpGroup: atomicity, disconnect, list_changed", () => {
  it.effect("a server whose listing fails adds nothing and leaves the group as it was", () =>
    Effect.gen(function*() {
      const events: Events = yield* Ref.make<ReadonlyArray<string>>([])
      const group = yield* makeGroup({ servers: { a: McpGroup.inMemory(serverLayer("a", [echo("a")], events)) } })
      const before = yield* group.views
      const broken = Layer.mergeAll(
        McpServer.register(echo("broken", "fine"), greet("broken", "fine-prompt")),
        Layer.effectDiscard(Effect.acquireRelease(
          Ref.update(events, (all) => [...all, "open broken"]),
          () => Ref.update(events, (all) => [...all, "close broken"])
        ))
      ).pipe(Layer.provideMerge(McpServer.layer({
        name: "broken",
        version: "1.0.0",
        // prompts list, tools do not
        middleware: [(_context, method, _params, next) =>
          method === "tools/list" ? Effect.fail(McpError.protocol(-32603, "the tool registry is on fire")) : next]
      })))
      const error = yield* Effect.flip(group.connect("broken", McpGroup.inMemory(broken)))
      assert.strictEqual(reasonOf(error)._tag, "ProtocolError")
      assert.include(error.message, "on fire")
      assert.strictEqual(yield* group.views, before)
      assert.deepStrictEqual(
        (yield* group.servers).map((server) =>
          server.name
        ),
        ["a"]
      )
      assert.deepStrictEqual(yield* Ref.get(events), ["open a", "open broken", "close broken"])
    }))

  it.effect("disconnect removes exactly that server's components and closes only its scope", () =>
    Effect.gen(function*() {
      const events: Events = yield* Ref.make<ReadonlyArray<string>>([])
      const group = yield* makeGroup({
        servers: {
          a: McpGroup.inMemory(serverLayer("a", [echo("a"), readme("a")], events)),
          b: McpGroup.inMemory(serverLayer("b", [echo("b", "shout"), greet("b")], events)),
          c: McpGroup.inMemory(serverLayer("c", [echo("c", "whisper")], events))
        }
      })
      const client = yield* group.client("b")
      yield* group.disconnect("b")
      assert.deepStrictEqual((yield* group.servers).map((server) => server.name), ["a", "c"])
      assert.deepStrictEqual((yield* group.tools).map((entry) => entry.name), ["echo", "whisper"])
      assert.deepStrictEqual(yield* group.prompts, [])
      assert.deepStrictEqual(yield* Ref.get(events), ["open a", "open b", "open c", "close b"])
      assert.isFalse(yield* client.session.isOpen)
      const gone = yield* Effect.flip(group.callTool("shout", { text: "x" }))
      assert.strictEqual(reasonOf(gone)._tag, "NotFoundError")
      assert.strictEqual(textOf(yield* group.callTool("whisper", { text: "x" })), "c:x")
      assert.strictEqual(textOf(yield* group.callTool("echo", { text: "x" })), "a:x")
      const again = yield* Effect.flip(group.disconnect("b"))
      assert.deepStrictEqual(reasonOf(again), new McpError.NotFoundError({ kind: "server", name: "b" }))
    }))

  it.effect("list_changed from a server refreshes its part of the views; changes are a stream", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.make({ name: "live", version: "1.0.0" })
      yield* server.register(echo("live"))
      const group = yield* makeGroup({
        servers: {
          a: McpGroup.inMemory(serverLayer("a", [echo("a", "other")])),
          live: McpGroup.inMemory(Layer.succeed(McpServer.McpServer, server))
        }
      })
      const names = (views: McpGroup.Views) => views.tools.map((entry) => `${entry.server}/${entry.name}`)
      const history = yield* group.changes.pipe(
        Stream.map(names),
        Stream.take(3),
        Stream.runCollect,
        Effect.forkChild({ startImmediately: true })
      )
      const added = echo("live", "added")
      yield* server.register(added)
      yield* group.changes.pipe(Stream.filter((views) => views.tools.length === 3), Stream.runHead)
      assert.strictEqual(textOf(yield* group.callTool("added", { text: "new" })), "live:new")
      yield* server.unregister(added)
      assert.deepStrictEqual(yield* Fiber.join(history), [
        ["a/other", "live/echo"],
        ["a/other", "live/added", "live/echo"],
        ["a/other", "live/echo"]
      ])
      // a refresh that would collide is refused: the server keeps its previous tools, with the error in its status
      yield* server.register(echo("live", "other"))
      const refused = yield* group.serverChanges.pipe(
        Stream.filter((servers) => servers[1]?.error !== undefined),
        Stream.runHead
      )
      const status = Option.getOrThrow(refused)[1]!
      assert.strictEqual(status.status, "up")
      assert.deepStrictEqual(
        status.error && reasonOf(status.error),
        new McpError.NameCollisionError({ kind: "tool", name: "other", servers: ["a", "live"] })
      )
      assert.deepStrictEqual(names(yield* group.views), ["a/other", "live/echo"])
      assert.strictEqual(textOf(yield* group.callTool("other", { text: "x" })), "a:x")
      // once the name is free, the refused list applies
      yield* group.disconnect("a")
      assert.deepStrictEqual(names(yield* group.views), ["live/echo", "live/other"])
      assert.isUndefined((yield* group.servers)[0]!.error)
      assert.strictEqual(textOf(yield* group.callTool("other", { text: "x" })), "live:x")
    }))
})

describe("McpGroup: failures and reconnection", () => {
  it.effect("a server that drops is marked down, its components withdrawn, calls fail naming it; reconnect on the schedule brings it back", () =>
    Effect.gen(function*() {
      const flaky = yield* makeFlaky({
        "test://b": serverLayer("b", [echo("b", "shout"), hang, greet("b")])
      })
      const group = yield* McpGroup.make({
        servers: {
          a: McpGroup.inMemory(serverLayer("a", [echo("a")])),
          b: McpGroup.http("test://b")
        },
        reconnect: Schedule.exponential("1 second")
      }).pipe(Effect.provide([flaky.layer, ValidatorLayer]))
      assert.deepStrictEqual((yield* group.tools).map((entry) => entry.name), ["echo", "hang", "shout"])

      // a call in flight when the connection drops fails naming the server
      const pending = yield* group.callTool("hang").pipe(Effect.flip, Effect.forkChild({ startImmediately: true }))
      yield* flaky.setOnline("test://b", false)
      yield* flaky.cut("test://b")
      const inFlight = yield* Fiber.join(pending)
      assert.strictEqual(reasonOf(inFlight)._tag, "ServerUnavailableError")
      assert.strictEqual((reasonOf(inFlight) as McpError.ServerUnavailableError).server, "b")
      assert.include(inFlight.message, "connection reset")

      yield* until(group, (servers) => statusOf(servers, "b") === "down")
      const down = (yield* group.servers)[1]!
      assert.strictEqual(down.status, "down")
      assert.isTrue(down.reconnecting)
      assert.include(down.error?.message ?? "", "connection reset: test://b")
      assert.deepStrictEqual((yield* group.tools).map((entry) => entry.name), ["echo"])
      assert.deepStrictEqual(yield* group.prompts, [])
      const call = yield* Effect.flip(group.callTool("shout", { text: "x" }))
      const reason = reasonOf(call)
      assert.strictEqual(reason._tag, "ServerUnavailableError")
      assert.strictEqual((reason as McpError.ServerUnavailableError).server, "b")
      assert.strictEqual(reasonOf(yield* Effect.flip(group.getPrompt("greet")))._tag, "ServerUnavailableError")
      assert.strictEqual(reasonOf(yield* Effect.flip(group.client("b")))._tag, "ServerUnavailableError")
      // the other server is untouched
      assert.strictEqual(textOf(yield* group.callTool("echo", { text: "x" })), "a:x")

      // no attempt before the first delay; the first one is refused
      assert.strictEqual(yield* flaky.attempts("test://b"), 1)
      yield* TestClock.adjust("999 millis")
      assert.strictEqual(yield* flaky.attempts("test://b"), 1)
      yield* TestClock.adjust("1 millis")
      yield* until(group, (servers) => servers[1]?.error?.message.includes("refused") === true)
      assert.strictEqual(yield* flaky.attempts("test://b"), 2)
      assert.strictEqual(statusOf(yield* group.servers, "b"), "down")

      // back online: the next attempt (2 s later) reconnects
      yield* flaky.setOnline("test://b", true)
      yield* TestClock.adjust("2 seconds")
      yield* until(group, (servers) => statusOf(servers, "b") === "up")
      assert.strictEqual(yield* flaky.attempts("test://b"), 3)
      const up = (yield* group.servers)[1]!
      assert.isFalse(up.reconnecting)
      assert.isUndefined(up.error)
      assert.deepStrictEqual((yield* group.tools).map((entry) => entry.name), ["echo", "hang", "shout"])
      assert.strictEqual(textOf(yield* group.callTool("shout", { text: "back" })), "b:back")

      // and it is watched again: a second drop is noticed too
      yield* flaky.cut("test://b")
      yield* until(group, (servers) => statusOf(servers, "b") === "down")
      yield* TestClock.adjust("1 second")
      yield* until(group, (servers) => statusOf(servers, "b") === "up")
      assert.strictEqual(textOf(yield* group.callTool("shout", { text: "again" })), "b:again")
    }))

  it.effect("when the schedule ends the server stays down; reconnect: false never retries", () =>
    Effect.gen(function*() {
      const flaky = yield* makeFlaky({
        "test://a": serverLayer("a", [echo("a")]),
        "test://b": serverLayer("b", [echo("b", "shout")])
      })
      const group = yield* McpGroup.make({
        servers: { a: McpGroup.http("test://a") },
        reconnect: Schedule.spaced("1 second").pipe(Schedule.upTo({ times: 2 }))
      }).pipe(Effect.provide([flaky.layer, ValidatorLayer]))
      yield* flaky.setOnline("test://a", false)
      yield* flaky.cut("test://a")
      yield* until(group, (servers) => servers[0]?.status === "down")
      for (let i = 0; i < 4; i++) yield* TestClock.adjust("1 second")
      yield* until(group, (servers) => servers[0]?.reconnecting === false)
      assert.strictEqual(yield* flaky.attempts("test://a"), 3, "the first connection and two attempts")
      assert.include((yield* group.servers)[0]!.error?.message ?? "", "refused")

      const never = yield* McpGroup.make({ servers: { b: McpGroup.http("test://b") }, reconnect: false }).pipe(
        Effect.provide([flaky.layer, ValidatorLayer])
      )
      yield* flaky.cut("test://b")
      yield* until(never, (servers) => servers[0]?.status === "down")
      assert.isFalse((yield* never.servers)[0]!.reconnecting)
      yield* TestClock.adjust("1 hour")
      assert.strictEqual(yield* flaky.attempts("test://b"), 1)
    }))

  it.effect("startupFailure: \"down\" keeps a server that cannot connect, down, and retries it", () =>
    Effect.gen(function*() {
      const flaky = yield* makeFlaky({ "test://b": serverLayer("b", [echo("b", "shout")]) })
      yield* flaky.setOnline("test://b", false)
      const strict = yield* McpGroup.make({
        servers: { a: McpGroup.inMemory(serverLayer("a", [echo("a")])), b: McpGroup.http("test://b") }
      }).pipe(Effect.provide([flaky.layer, ValidatorLayer]), Effect.scoped, Effect.flip)
      assert.include(strict.message, "refused")

      const group = yield* McpGroup.make({
        servers: { a: McpGroup.inMemory(serverLayer("a", [echo("a")])), b: McpGroup.http("test://b") },
        startupFailure: "down"
      }).pipe(Effect.provide([flaky.layer, ValidatorLayer]))
      const [a, b] = yield* group.servers
      assert.strictEqual(a?.status, "up")
      assert.strictEqual(b?.status, "down")
      assert.isTrue(b?.reconnecting)
      assert.include(b?.error?.message ?? "", "refused")
      yield* flaky.setOnline("test://b", true)
      yield* TestClock.adjust("1 second")
      yield* until(group, (servers) => statusOf(servers, "b") === "up")
      assert.strictEqual(textOf(yield* group.callTool("shout", { text: "x" })), "b:x")
    }))
})

describe("McpGroup: scopes", () => {
  it.effect("closing the group's scope closes every server (at once: the order they finish in is not defined), then refuses connections", () =>
    Effect.gen(function*() {
      const events: Events = yield* Ref.make<ReadonlyArray<string>>([])
      const scope = yield* Scope.make()
      const group = yield* makeGroup({
        servers: {
          a: McpGroup.inMemory(serverLayer("a", [echo("a", "a")], events)),
          b: McpGroup.inMemory(serverLayer("b", [echo("b", "b")], events)),
          c: McpGroup.inMemory(serverLayer("c", [echo("c", "c")], events))
        }
      }).pipe(Scope.provide(scope))
      yield* group.connect("d", McpGroup.inMemory(serverLayer("d", [echo("d", "d")], events)))
      yield* group.disconnect("b")
      yield* group.connect("b", McpGroup.inMemory(serverLayer("b", [echo("b", "b")], events)))
      yield* Ref.set(events, [])
      yield* Scope.close(scope, Exit.void)
      assert.deepStrictEqual([...(yield* Ref.get(events))].sort(), ["close a", "close b", "close c", "close d"])
      const closed = yield* Effect.flip(group.connect("e", McpGroup.inMemory(serverLayer("e", []))))
      assert.strictEqual(reasonOf(closed)._tag, "ClosedError")
    }))

  it.effect("a connector that cannot connect a kind of server fails that connection only", () =>
    Effect.gen(function*() {
      const group = yield* makeGroup({ servers: { a: McpGroup.inMemory(serverLayer("a", [echo("a")])) } })
      const error = yield* Effect.flip(group.connect("remote", McpGroup.stdio("some-server", ["--flag"])))
      assert.strictEqual(reasonOf(error)._tag, "TransportError")
      assert.include(error.message, "no transport for Stdio servers")
      assert.deepStrictEqual((yield* group.servers).map((server) => server.name), ["a"])
    }))
})
