/**
 * The JWT bearer grant of a workload (RFC 7523 §2.1, workload identity
 * federation, SEP-1933): one token request at the MCP server's
 * authorization server with `assertion` = the workload's JWT (issued by its
 * platform for this authorization server), the `resource` and the `scope`;
 * no registration, no client authentication (a `client_id`, when
 * configured, names the public client). A refusal is the grant's failure:
 * nothing is retried and no other grant is tried, and an assertion once
 * refused is not presented again (the error it got is the answer).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as oauth from "oauth4webapi"
import type * as McpAuth from "../../McpAuth.ts"
import type * as McpError from "../../McpError.ts"
import type * as McpOAuth from "../../McpOAuth.ts"
import type { Discovered } from "./discovery.ts"
import type { Http } from "./http.ts"
import * as Tokens from "./tokens.ts"

export const JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"

/** oauth4webapi checks a `client_id` exists; without a configured one this stands in, and is never sent. */
const ANONYMOUS = "anonymous-workload"

/** No client authentication and no `client_id`. */
const anonymous: oauth.ClientAuth = () => {}

/** The workload JWT bearer grant of one client. */
export interface JwtBearer {
  readonly obtain: (
    discovered: Discovered,
    spec: McpOAuth.JwtBearerGrant,
    scope: string | undefined
  ) => Effect.Effect<McpAuth.Tokens, McpError.McpError>
}

/** @internal */
export const make = (http: Http): JwtBearer => {
  /** The last assertion the authorization server refused, and how. */
  const refused = Ref.makeUnsafe<{ readonly assertion: string; readonly error: McpError.McpError } | undefined>(
    undefined
  )

  const request = (
    discovered: Discovered,
    spec: McpOAuth.JwtBearerGrant,
    assertion: string,
    scope: string | undefined
  ) =>
    Effect.gen(function*() {
      const server = discovered.server
      const endpoint = yield* http.tokenEndpoint(server)
      const client: oauth.Client = { client_id: spec.clientId ?? ANONYMOUS }
      const auth = spec.clientId === undefined ? anonymous : oauth.None()
      const body: Record<string, string> = { assertion, resource: discovered.resource }
      if (scope !== undefined) body.scope = scope
      const response = yield* http.call("Token", `JWT bearer grant at ${endpoint}`, (signal) =>
        oauth.genericTokenEndpointRequest(server, client, auth, JWT_BEARER, body, http.requestOptions(endpoint, signal))
          .then((answer) =>
            oauth.processGenericTokenEndpointResponse(server, client, answer)
          ))
      return yield* Tokens.fromResponse(response, server.issuer, scope)
    })

  const obtain: JwtBearer["obtain"] = (discovered, spec, scope) =>
    Effect.gen(function*() {
      const assertion = typeof spec.assertion === "string" ? spec.assertion : yield* spec.assertion
      const last = yield* Ref.get(refused)
      if (last !== undefined && last.assertion === assertion) return yield* Effect.fail(last.error)
      return yield* request(discovered, spec, assertion, scope).pipe(
        Effect.tapError((error) => isRefusal(error) ? Ref.set(refused, { assertion, error }) : Effect.void)
      )
    })

  return { obtain }
}

/** An answer of the authorization server (an HTTP status), not a failure to reach it. */
const isRefusal = (error: McpError.McpError): boolean =>
  error.reason._tag === "AuthError" && error.reason.status !== undefined
