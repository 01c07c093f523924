/**
 * The per-call `_meta` a caller adds to a request's params.
 *
 * @internal
 */
import type { RequestOptions } from "../../McpClient.ts"

/** `params` with the caller's `meta` merged into its `_meta`. @internal */
export const withMeta = <P extends object>(params: P, options: RequestOptions | undefined): P =>
  options?.meta === undefined
    ? params
    : { ...params, _meta: { ...(params as { readonly _meta?: object })._meta, ...options.meta } }
