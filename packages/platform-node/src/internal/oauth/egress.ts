/**
 * The OAuth client's egress rule (`McpOAuth.Egress`, platform-free in core)
 * on Node: names resolve through `dns.lookup` (every address), and
 * {@link lookupOf} is the `lookup` of the client's connections (undici's, and
 * the headless authorizer's `node:http` requests), so the addresses
 * connected to are the ones checked: a name that resolves elsewhere the
 * second time gains nothing.
 *
 * @internal
 */
import * as McpOAuth from "@effect-mcp/core/McpOAuth"
import * as Dns from "node:dns"
import type * as Net from "node:net"

/** How names resolve and which hosts count as what: Node's resolver, or a test's. */
export type Network = McpOAuth.Network

/** One resolved address. */
export type Resolved = McpOAuth.Resolved

/** Where the client may be sent. */
export type Egress = McpOAuth.Egress

/** `dns.lookup`, every address. */
export const resolve: NonNullable<Network["resolve"]> = (hostname, family, callback) =>
  Dns.lookup(hostname, { all: true, family: family ?? 0 }, (error, addresses) => callback(error, addresses ?? []))

/** `network` with Node's resolver where it has none. */
export const network = (given?: Network | undefined): Network => ({
  resolve: given?.resolve ?? resolve,
  hostClass: given?.hostClass
})

/** The refusal a failed request carries somewhere in its causes, as an `AuthError` of kind `"Refused"`. */
export const refusalOf = McpOAuth.refusalOf

/** The egress of the OAuth client whose authorizer is running (`McpOAuth.CurrentEgress`). */
export const Current = McpOAuth.CurrentEgress

/** An egress rule resolving names on Node (see `McpOAuth.makeEgress`). */
export const make = (options: {
  readonly serverUrl: URL
  readonly trusted: ReadonlyArray<string | URL | undefined>
  readonly allowInsecure: boolean
  readonly network?: Network | undefined
}): Egress => McpOAuth.makeEgress({ ...options, network: network(options.network) })

/** The `lookup` of a connection: `egress.lookup`, in Node's shape (one address, or `all`). */
export const lookupOf = (egress: Egress): Net.LookupFunction => (hostname, lookupOptions, callback) => {
  const requested = lookupOptions.family
  const family = requested === 4 || requested === "IPv4" ? 4 : requested === 6 || requested === "IPv6" ? 6 : undefined
  egress.lookup(hostname, family, (error, addresses) => {
    const first = addresses[0]
    if (error !== null || first === undefined) {
      return callback(error ?? Object.assign(new Error(`${hostname} did not resolve`), { code: "ENOTFOUND" }), "")
    }
    return lookupOptions.all === true
      ? callback(null, addresses.map((resolved) => ({ address: resolved.address, family: resolved.family })))
      : callback(null, first.address, first.family)
  })
}
