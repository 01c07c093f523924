/**
 * Where the OAuth client may be sent on a server's word (SSRF: the MCP
 * security best practices). The hosts the user named (the MCP server, a
 * pre-configured authorization server, the IdP, and the endpoints their
 * metadata names) are trusted. Any other URL a server hands the client (a
 * challenge's `resource_metadata`, the `authorization_servers` of the
 * protected resource metadata, the endpoints of a discovered authorization
 * server) may not lead further inside the network than the user's own hosts
 * (`McpOAuthPolicy.mayReach`): checked on the URL as written (IP literals,
 * `localhost`) before any request, and on what a name resolves to when the
 * connection is made, where the platform resolves names ({@link Egress.lookup}:
 * the `lookup` of the client's connections on Node; the addresses connected
 * to are the ones checked, so a name that resolves elsewhere the second time
 * gains nothing). Without a resolver (a browser, a worker: their `fetch`
 * connects where it likes) only the URL as written is checked, and a name of
 * the user's own counts as no class (nothing inward is reachable from it).
 *
 * @internal
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import type * as McpAuth from "../../McpAuth.ts"
import * as McpError from "../../McpError.ts"
import * as McpOAuthPolicy from "../../McpOAuthPolicy.ts"

/** One resolved address. */
export interface Resolved {
  readonly address: string
  readonly family: number
}

/** How names resolve and which hosts count as what: the defaults, or a test's. */
export interface Network {
  /** Resolves a name to every address (Node: `dns.lookup`; none in a browser). */
  readonly resolve?:
    | ((
      hostname: string,
      family: number | undefined,
      callback: (error: Error | null, addresses: ReadonlyArray<Resolved>) => void
    ) => void)
    | undefined
  /** A class declared for a host, instead of what it is written as or resolves to (tests: a "remote" host). */
  readonly hostClass?: ((hostname: string) => McpOAuthPolicy.HostClass | undefined) | undefined
}

/** A connection refused by {@link Egress.lookup} (found in a failed request's causes by {@link refusalOf}). */
export class EgressRefused extends Data.TaggedError("EgressRefused")<{ readonly message: string }> {}

/** Where the client may be sent. */
export interface Egress {
  /**
   * Fails with an `AuthError` of kind `"Refused"` unless the client may be
   * sent to `url` on a server's word: `https` (or `http` where
   * `allowInsecureRequests` or a loopback host allow it), and a host as
   * written no further inside than the user's own hosts.
   */
  readonly check: (url: URL, what: string) => Effect.Effect<void, McpError.McpError>
  /** Trusts the hosts of `urls` (named by the user, or by an authorization server the user named). */
  readonly trust: (urls: ReadonlyArray<string | URL | undefined>) => Effect.Effect<void>
  /**
   * The name resolution of the client's connections: the addresses of
   * `hostname` (of `family`, when given), or an {@link EgressRefused} when
   * the host is not trusted and one of its addresses lies further inside the
   * network than the user's own hosts. Fails for every name without a
   * resolver.
   */
  readonly lookup: (
    hostname: string,
    family: 4 | 6 | undefined,
    callback: (error: Error | null, addresses: ReadonlyArray<Resolved>) => void
  ) => void
}

/** A host as compared: lower case, no brackets, no trailing dot. */
const normalize = (hostname: string): string => hostname.toLowerCase().replace(/^\[(.*)\]$/, "$1").replace(/\.$/, "")

const hostOf = (url: string | URL | undefined): string | undefined =>
  url === undefined || !URL.canParse(String(url)) ? undefined : normalize(new URL(url).hostname)

/** Without a resolver: every name fails to resolve (its class is unknown, it connects nowhere through {@link Egress.lookup}). */
const noResolve: NonNullable<Network["resolve"]> = (hostname, _family, callback) =>
  callback(Object.assign(new Error(`${hostname}: no name resolution on this platform`), { code: "ENOTFOUND" }), [])

/** The refusal a failed request carries somewhere in its causes, as an `AuthError` of kind `"Refused"`. */
export const refusalOf = (cause: unknown, what: string): McpError.McpError | undefined => {
  let current: unknown = cause
  // bounded: fetch wraps the connection's error once or twice
  for (let depth = 0; depth < 5 && typeof current === "object" && current !== null; depth++) {
    if (current instanceof EgressRefused) return McpError.auth("Refused", `${what}: ${current.message}`, { cause })
    current = (current as { readonly cause?: unknown }).cause
  }
  return undefined
}

/** @internal */
export const make = (options: {
  readonly serverUrl: URL
  readonly trusted: ReadonlyArray<string | URL | undefined>
  readonly allowInsecure: boolean
  readonly network?: Network | undefined
}): Egress => {
  const resolve = options.network?.resolve ?? noResolve
  const declared = (host: string) => options.network?.hostClass?.(host)
  const trusted = new Set<string>()
  const addTrusted = (urls: ReadonlyArray<string | URL | undefined>) => {
    for (const url of urls) {
      const host = hostOf(url)
      if (host !== undefined) trusted.add(host)
    }
  }
  addTrusted([options.serverUrl, ...options.trusted])
  const serverHost = normalize(options.serverUrl.hostname)

  /** The classes of a host as written (declared first); `undefined` for a name. */
  const literalClass = (host: string): McpOAuthPolicy.HostClass | undefined =>
    declared(host) ?? McpOAuthPolicy.literalHostClass(host)

  /** The classes of a trusted host: as written, else what it resolves to (cached; a failure counts as nothing). */
  const resolvedClasses = new Map<string, ReadonlyArray<McpOAuthPolicy.HostClass>>()
  const classesOf = (host: string, callback: (classes: ReadonlyArray<McpOAuthPolicy.HostClass>) => void): void => {
    const literal = literalClass(host)
    if (literal !== undefined) return callback([literal])
    const known = resolvedClasses.get(host)
    if (known !== undefined) return callback(known)
    resolve(host, undefined, (error, addresses) => {
      const classes = error === null ? addresses.map((resolved) => McpOAuthPolicy.addressClass(resolved.address)) : []
      if (error === null) resolvedClasses.set(host, classes)
      callback(classes)
    })
  }

  /** The classes of the user's own hosts (the trusted ones), the MCP server's first. */
  const anchor = (callback: (classes: ReadonlySet<McpOAuthPolicy.HostClass>) => void): void => {
    const hosts = [serverHost, ...[...trusted].filter((host) => host !== serverHost)]
    const out = new Set<McpOAuthPolicy.HostClass>()
    // one host after the other: bounded by the trusted hosts
    const next = (index: number): void => {
      const host = hosts[index]
      if (host === undefined) return callback(out)
      classesOf(host, (classes) => {
        for (const found of classes) out.add(found)
        next(index + 1)
      })
    }
    next(0)
  }

  const refused = (what: string, detail: string) =>
    McpError.auth("Refused", `${what} ${detail}: a server may not send the client there (${options.serverUrl.host})`)

  const check: Egress["check"] = (url, what) =>
    Effect.gen(function*() {
      if (!McpOAuthPolicy.allowedUrl(url, options.allowInsecure)) {
        return yield* refused(`${what} ${url.protocol}//${url.host}`, "is neither https nor http on a loopback host")
      }
      const host = normalize(url.hostname)
      if (trusted.has(host)) return
      const target = literalClass(host)
      // a name: what it resolves to is checked when the connection is made
      if (target === undefined || target === "public") return
      const from = yield* Effect.callback<ReadonlySet<McpOAuthPolicy.HostClass>>((resume) => {
        anchor((classes) => resume(Effect.succeed(classes)))
      })
      if (!McpOAuthPolicy.mayReach(from, target)) {
        return yield* refused(`${what} ${url.protocol}//${url.host}`, `is a ${target} address`)
      }
    })

  const trust: Egress["trust"] = (urls) => Effect.sync(() => addTrusted(urls))

  const lookup: Egress["lookup"] = (hostname, family, callback) => {
    const host = normalize(hostname)
    resolve(host, family, (error, addresses) => {
      if (error !== null || addresses.length === 0) {
        return callback(error ?? Object.assign(new Error(`${hostname} did not resolve`), { code: "ENOTFOUND" }), [])
      }
      if (trusted.has(host)) return callback(null, addresses)
      const own = declared(host)
      const classes = own !== undefined
        ? [own]
        : addresses.map((resolved) => McpOAuthPolicy.addressClass(resolved.address))
      anchor((from) => {
        const inward = classes.find((target) => !McpOAuthPolicy.mayReach(from, target))
        if (inward === undefined) return callback(null, addresses)
        callback(
          new EgressRefused({
            message: `${hostname} resolves to a ${inward} address: a server may not send the client there`
          }),
          []
        )
      })
    })
  }

  return { check, trust, lookup }
}

/**
 * The egress of the OAuth client whose authorizer is running (see
 * {@link guard}): the headless authorizer requests every hop under it (the
 * authorization endpoint and each redirect it follows). `undefined` outside
 * a client.
 */
export const Current = Context.Reference<Egress | undefined>("@effect-mcp/core/McpOAuth/CurrentEgress", {
  defaultValue: () => undefined
})

/** `authorizer` whose `authorize` runs with `egress` as {@link Current}. */
export const guard = (
  authorizer: McpAuth.McpAuthorizer["Service"],
  egress: Egress
): McpAuth.McpAuthorizer["Service"] => ({
  redirectUri: authorizer.redirectUri,
  authorize: (authorizationUrl) => Effect.provideService(authorizer.authorize(authorizationUrl), Current, egress),
  remember: authorizer.remember
})
