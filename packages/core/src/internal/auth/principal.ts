/**
 * Whom a session belongs to. A module of its own, apart from the bearer
 * check (`bearer.ts`): every server session reads it, and a server without
 * auth (stdio) need not load the bearer check.
 *
 * @internal
 */
import type * as McpAuth from "../../McpAuth.ts"

/**
 * Whom a session belongs to: the subject and client of the token that
 * created it (`undefined`: a token that names neither binds nothing).
 *
 * @internal
 */
export const principal = (auth: McpAuth.AuthInfo | undefined): string | undefined =>
  auth === undefined || (auth.subject === undefined && auth.clientId === undefined)
    ? undefined
    : JSON.stringify([auth.subject ?? null, auth.clientId ?? null])
