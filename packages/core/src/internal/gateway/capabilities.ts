/**
 * What of a front client's capabilities a gateway passes on: the questions
 * a server may ask it (sampling, elicitation by mode, roots), the way a
 * server behind sees them.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as JsonRpc from "../../JsonRpc.ts"
import type * as McpClient from "../../McpClient.ts"
import * as McpError from "../../McpError.ts"
import type * as McpMethod from "../../McpMethod.ts"
import type * as McpSchema from "../../McpSchema.ts"
import * as McpSchemaValues from "../../McpSchema.ts"
import type * as McpServer from "../../McpServer.ts"
import { missingCapability } from "../era/stateless.ts"
import * as McpSkills from "../schema/skills.ts"

/**
 * The questions a client can be asked, as capabilities, and the extensions
 * it takes that a server behind may answer otherwise (MCP Apps: an app or
 * text), beyond those every gateway connection declares.
 *
 * @internal
 */
export interface Bridged {
  readonly sampling?: { readonly tools?: {}; readonly context?: {} } | undefined
  readonly elicitation?: { readonly form?: {}; readonly url?: {} } | undefined
  readonly roots?: { readonly listChanged: true } | undefined
  readonly extensions?: Readonly<Record<string, Readonly<Record<string, unknown>>>> | undefined
}

/**
 * Every question a gateway can pass on: what its sessions with a legacy
 * server declare for a 2026-07-28 client in front, which answers what it
 * cannot do with `-32021` (so the server behind asks, and the client learns
 * what the request needs).
 *
 * @internal
 */
export const ALL: Bridged = {
  sampling: { tools: {}, context: {} },
  elicitation: { form: {}, url: {} },
  roots: { listChanged: true }
}

/** What the front client can be asked. @internal */
export const bridged = (context: McpServer.RequestContext): Bridged => {
  const has = context.checkClientCapability
  const out: { -readonly [K in keyof Bridged]: Bridged[K] } = {}
  if (has("sampling")) {
    out.sampling = {
      ...(has("sampling", "tools") ? { tools: {} } : {}),
      ...(has("sampling", "context") ? { context: {} } : {})
    }
  }
  if (has("elicitation")) {
    const url = has("elicitation", "url")
    // `{}` (2025-06-18) is form mode; `{ url }` alone is URL mode only
    const form = has("elicitation", "form") || !url
    out.elicitation = { ...(form ? { form: {} } : {}), ...(url ? { url: {} } : {}) }
  }
  if (has("roots")) out.roots = { listChanged: true }
  const extensions = passedExtensions(context)
  if (extensions !== undefined) out.extensions = extensions
  return out
}

// the front client's extensions but those the gateway handles itself (tasks)
// or every connection of its declares (skills)
const passedExtensions = (context: McpServer.RequestContext): Bridged["extensions"] => {
  const declared =
    (context.clientCapabilities as { readonly extensions?: Record<string, Readonly<Record<string, unknown>>> })
      .extensions
  if (declared === undefined) return undefined
  let out: Record<string, Readonly<Record<string, unknown>>> | undefined
  for (const [id, settings] of Object.entries(declared)) {
    if (id !== McpSchemaValues.TASKS_EXTENSION_ID && id !== McpSkills.EXTENSION_ID) (out ??= {})[id] = settings
  }
  return out
}

/** Whether the client can be asked anything. @internal */
export const asks = (bridged: Bridged): boolean =>
  bridged.sampling !== undefined || bridged.elicitation !== undefined || bridged.roots !== undefined

/** A key that is the same for the same capabilities. @internal */
export const keyOf = (bridged: Bridged): string => JSON.stringify(bridged)

/**
 * The capabilities a 2026-07-28 request declares on the front client's
 * behalf: what it can be asked, its experimental ones and extensions, the
 * tasks extension only when the call may become a task in front (`tasks`).
 *
 * @internal
 */
export const onBehalf = (
  context: McpServer.RequestContext,
  bridged: Bridged,
  tasks: boolean
): McpSchema.ClientCapabilities => {
  const { experimental, extensions } = context.clientCapabilities as McpSchema.ClientCapabilities & {
    readonly extensions?: Record<string, unknown>
  }
  const { [McpSchemaValues.TASKS_EXTENSION_ID]: _, ...others } = extensions ?? {}
  const passed = tasks ? { ...others, [McpSchemaValues.TASKS_EXTENSION_ID]: {} } : others
  const { extensions: _extensions, ...questions } = bridged
  return {
    ...questions,
    ...(experimental === undefined ? {} : { experimental }),
    ...(Object.keys(passed).length === 0 ? {} : { extensions: passed })
  } as McpSchema.ClientCapabilities
}

/**
 * The client options of a gateway's group (`McpGateway.clientOptions`):
 * every question declared, so that a server lists what it offers a client
 * that can be asked (some list less to others), and refused with `-32021`:
 * on the group's connection go the calls of clients that can be asked
 * nothing (the others take sessions of their own). The extensions the
 * gateway passes through are declared too (skills).
 *
 * @internal
 */
export const refusing: Pick<McpClient.Options, "sampling" | "elicitation" | "listRoots" | "extensions"> = {
  sampling: { handler: (params) => refuse(McpSchemaValues.CreateMessage, params), tools: true, context: true },
  elicitation: {
    form: (params) => refuse(McpSchemaValues.Elicit, params),
    url: (params) => refuse(McpSchemaValues.Elicit, params),
    applyDefaults: false,
    validate: false
  },
  listRoots: () => refuse(McpSchemaValues.ListRoots, {}),
  extensions: { [McpSkills.EXTENSION_ID]: {} }
}

const refuse = (method: McpMethod.Request, params: unknown): Effect.Effect<never, McpError.McpError> => {
  const capability = method.capability(params)
  return Effect.fail(
    capability === undefined
      ? McpError.protocol(JsonRpc.ErrorCode.MethodNotFound, `${method.name} is not supported`)
      : missingCapability(capability, method.name)
  )
}
