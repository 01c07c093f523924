/**
 * Issue 15, finding 4: the headless authorizer's configured headers (a
 * session cookie for the authorization server, say) go to the authorization
 * endpoint's origin only: a redirect to another origin (here another port
 * on 127.0.0.1) gets none of them, and a redirect back gets them again.
 */
import { NodeMcpAuthorizer } from "@effect-mcp/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import type * as Http from "node:http"
import { createServer } from "node:http"
import { listenLoopback } from "../fixtures/listen.ts"

interface Seen {
  readonly path: string
  readonly cookie: string | undefined
  readonly authorization: string | undefined
  readonly custom: string | undefined
}

/** A node:http server on 127.0.0.1 recording the headers of interest; `handler` answers. */
const start = (handler: (url: URL, res: Http.ServerResponse) => void) =>
  Effect.gen(function*() {
    const seen: Array<Seen> = []
    const server = createServer((req, res) => {
      seen.push({
        path: (req.url ?? "").split("?")[0]!,
        cookie: req.headers.cookie,
        authorization: req.headers.authorization,
        custom: req.headers["x-session"] as string | undefined
      })
      handler(new URL(req.url ?? "/", "http://127.0.0.1"), res)
    })
    const port = yield* listenLoopback(server)
    return { seen, origin: `http://127.0.0.1:${port}` }
  })

describe("issue 15 #4: the headless authorizer sends its headers to the authorization endpoint's origin only", () => {
  it.live("a redirect chain through another origin: no cookie there; back on the AS, the cookie again", () =>
    Effect.gen(function*() {
      let asOrigin = ""
      // another origin (the IdP's login page, or an attacker's): it sends the user back to the AS
      const other = yield* start((url, res) => {
        res.writeHead(302, { location: `${asOrigin}/consent${url.search}` }).end()
      })
      const as = yield* start((url, res) => {
        if (url.pathname === "/authorize") {
          res.writeHead(302, { location: `${other.origin}/login${url.search}` }).end()
          return
        }
        const target = new URL(url.searchParams.get("redirect_uri")!)
        target.searchParams.set("code", "the-code")
        target.searchParams.set("state", url.searchParams.get("state") ?? "")
        res.writeHead(302, { location: target.href }).end()
      })
      asOrigin = as.origin
      const authorizer = NodeMcpAuthorizer.makeHeadless({
        headers: { cookie: "session=s3cret", authorization: "Basic c2Vzc2lvbjpzM2NyZXQ=", "x-session": "s3cret" }
      })
      const url = new URL(`${as.origin}/authorize`)
      url.searchParams.set("redirect_uri", authorizer.redirectUri)
      url.searchParams.set("state", "st")
      const redirected = yield* authorizer.authorize(url)
      assert.strictEqual(redirected.searchParams.get("code"), "the-code")
      assert.deepStrictEqual(other.seen, [{
        path: "/login",
        cookie: undefined,
        authorization: undefined,
        custom: undefined
      }])
      assert.deepStrictEqual(as.seen, [
        { path: "/authorize", cookie: "session=s3cret", authorization: "Basic c2Vzc2lvbjpzM2NyZXQ=", custom: "s3cret" },
        { path: "/consent", cookie: "session=s3cret", authorization: "Basic c2Vzc2lvbjpzM2NyZXQ=", custom: "s3cret" }
      ])
    }))
})
