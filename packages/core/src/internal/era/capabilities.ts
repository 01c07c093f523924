/**
 * The capability checks that depend on the revision: what a declaration
 * means is not always what its path says.
 *
 * - `completion/complete` to a 2024-11-05 server: the `completions`
 *   capability is new in 2025-03-26, and servers of the earlier revision
 *   offered completion without declaring anything, so it is not checked.
 * - Form-mode elicitation (2025-06-18 on): `elicitation.form`, or an
 *   `elicitation` object declaring no mode (`{}`, the 2025-06-18 form, is
 *   form support); `{ url: {} }` alone is URL mode only (2025-11-25 on).
 *
 * @internal
 */
import * as McpMethod from "../../McpMethod.ts"

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null

const declared = (u: unknown) => u !== undefined && u !== null && u !== false

/** `true` when `capabilities` declares `capability`, with the rules above. @internal */
export const declares = (capabilities: unknown, capability: McpMethod.Capability): boolean => {
  const path = capability.path
  if (capability.side === "client" && path.length === 1 && path[0] === "elicitation") {
    const elicitation = isObject(capabilities) ? capabilities.elicitation : undefined
    if (!isObject(elicitation)) return false
    return declared(elicitation.form) || (!declared(elicitation.url) && !declared(elicitation.form))
  }
  return McpMethod.hasCapability(capabilities, capability)
}

/**
 * The server's capabilities as a client checks its requests against them:
 * a 2024-11-05 server is taken to offer `completions`.
 *
 * @internal
 */
export const ofServer = (capabilities: unknown, protocolVersion: string | undefined): unknown =>
  protocolVersion === "2024-11-05" && isObject(capabilities) && !declared(capabilities.completions)
    ? { ...capabilities, completions: {} }
    : capabilities
