/**
 * NodeMcpGroup with `auth`: HTTP servers that ask for OAuth sign in
 * (NodeMcpOAuth) through the connector's authorizer and store; `oauth: false`
 * and a static Authorization header leave them alone. A protected MCP server
 * and its authorization server run on 127.0.0.1 (fixtures/authServer.ts).
 */
import { McpAuth, McpGroup } from "@effect-mcp/core"
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer } from "effect"
import * as NodeMcpAuthorizer from "../../src/NodeMcpAuthorizer.ts"
import * as NodeMcpGroup from "../../src/NodeMcpGroup.ts"
import { startAuthServer, startProtectedServer } from "../fixtures/authServer.ts"
import { textOf } from "../utils/client.ts"

describe("NodeMcpGroup with auth", () => {
  it.live("signs in to a protected server on first use; the store keeps the tokens for the next group", () =>
    Effect.gen(function*() {
      const as = yield* startAuthServer()
      const server = yield* startProtectedServer(as)
      const store = McpAuth.makeMemoryStore()
      const auth: NodeMcpGroup.AuthOptions = { store, authorizer: NodeMcpAuthorizer.makeHeadless() }
      const use = (servers: Record<string, McpGroup.ServerParams>) =>
        Effect.gen(function*() {
          const context = yield* Layer.build(NodeMcpGroup.layer({ reconnect: false, connector: { auth } }))
          const group = Context.get(context, McpGroup.McpGroup)
          const exits: Record<string, Exit.Exit<unknown, unknown>> = {}
          for (const [name, params] of Object.entries(servers)) {
            exits[name] = yield* Effect.exit(group.connect(name, params))
          }
          const echo = Exit.isSuccess(exits.secure ?? Exit.void)
            ? yield* group.callTool("echo", { text: "hi" })
            : undefined
          return { exits, echo }
        }).pipe(Effect.scoped)

      const first = yield* use({
        secure: McpGroup.http(server.url),
        off: McpGroup.http(server.url, { oauth: false }),
        keyed: McpGroup.http(server.url, { headers: { Authorization: "Bearer not-a-token" } })
      })
      assert.isTrue(Exit.isSuccess(first.exits.secure!))
      assert.strictEqual(textOf(first.echo!), "hi")
      // no OAuth for these two: the server's 401 fails their connection
      assert.isTrue(Exit.isFailure(first.exits.off!))
      assert.isTrue(Exit.isFailure(first.exits.keyed!))
      assert.strictEqual(as.requestsTo("/authorize").length, 1)
      assert.isDefined(yield* store.getTokens(server.resource))

      // another group on the same store: no new authorization
      const second = yield* use({ secure: McpGroup.http(server.url) })
      assert.isTrue(Exit.isSuccess(second.exits.secure!))
      assert.strictEqual(as.requestsTo("/authorize").length, 1)
    }))

  it.live("the default loopback authorizer: one listener per callback port, closed with the group", () =>
    Effect.gen(function*() {
      const as = yield* startAuthServer()
      const server = yield* startProtectedServer(as)
      const opened: Array<string> = []
      const auth: NodeMcpGroup.AuthOptions = {
        store: McpAuth.makeMemoryStore(),
        loopback: {
          print: false,
          // the "browser": follows the redirects to the loopback callback
          open: (url) =>
            Effect.promise(() => fetch(url).then((res) => res.text())).pipe(
              Effect.tap(() => Effect.sync(() => void opened.push(url.searchParams.get("redirect_uri")!)))
            )
        }
      }
      yield* Effect.gen(function*() {
        const context = yield* Layer.build(
          NodeMcpGroup.layer({ reconnect: false, nameHook: McpGroup.prefixed(), connector: { auth } })
        )
        const group = Context.get(context, McpGroup.McpGroup)
        yield* group.connect("a", McpGroup.http(server.url))
        yield* group.connect("b", McpGroup.http(server.url, { oauth: { scope: "mcp:admin" } }))
        assert.strictEqual(textOf(yield* group.callTool("a__echo", { text: "x" })), "x")
        // b shares a's token (same resource); admin_op needs mcp:admin: a step-up sign-in
        assert.strictEqual(textOf(yield* group.callTool("b__admin_op", {})), "admin done")
      }).pipe(Effect.scoped)
      assert.isAtLeast(opened.length, 2)
      // both sign-ins went through the same listener
      assert.strictEqual(new Set(opened).size, 1)
      const after = yield* Effect.promise(() => fetch(`${opened[0]}?state=x`).then(() => "open", () => "closed"))
      assert.strictEqual(after, "closed")
    }))
})
