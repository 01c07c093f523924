/**
 * The fields of the `McpError` reasons whose optional keys are left out,
 * rather than set to `undefined`, when not given.
 *
 * @internal
 */
import type { AuthError, ConfigError } from "./errorReasons.ts"

/** The fields of a `ConfigError`. @internal */
export const configFields = (source: string, description: string, where?: {
  readonly server?: string | undefined
  readonly field?: string | undefined
}): ConstructorParameters<typeof ConfigError>[0] => ({
  source,
  description,
  ...(where?.server === undefined ? {} : { server: where.server }),
  ...(where?.field === undefined ? {} : { field: where.field })
})

/** The fields of an `AuthError`. @internal */
export const authFields = (kind: AuthError["kind"], description: string, extra?: {
  readonly status?: number | undefined
  readonly cause?: unknown
}): ConstructorParameters<typeof AuthError>[0] => ({
  kind,
  description,
  ...(extra?.status === undefined ? {} : { status: extra.status }),
  ...(extra?.cause === undefined ? {} : { cause: extra.cause })
})
