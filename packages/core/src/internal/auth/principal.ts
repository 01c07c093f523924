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
 * created it (`undefined`: no auth at all). A token that names neither is
 * refused by the bearer check; should one come another way (a custom
 * transport's `authOf`), it gets a principal of its own that matches no
 * other, not even the next request with the same token: never the
 * principal every such token would share.
 *
 * @internal
 */
export const principal = (auth: McpAuth.AuthInfo | undefined): string | undefined =>
  auth === undefined
    ? undefined
    : auth.subject === undefined && auth.clientId === undefined
    ? JSON.stringify(["anonymous", globalThis.crypto.randomUUID()])
    : JSON.stringify([auth.subject ?? null, auth.clientId ?? null])
