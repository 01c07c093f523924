/**
 * Keeps a stdio server's stdout for the protocol: while a redirect is held,
 * `globalThis.console`'s stdout methods (`log`, `info`, `debug`, `dir`,
 * `table`, `group`, `count`, `time`, ...) and `process.stdout.write` write to
 * stderr, and Effect's `Console` (which defaults to `globalThis.console`)
 * with them. The transport writes frames with {@link writeProtocol}, which
 * reaches the real stdout. Redirects nest: the outermost release restores.
 *
 * @internal
 */
import type * as EffectConsole from "effect/Console"
import * as Effect from "effect/Effect"
import { Console as NodeConsole } from "node:console"

// the methods of a Node console that write to its stdout
const STDOUT_METHODS = [
  "log",
  "info",
  "debug",
  "dir",
  "dirxml",
  "table",
  "group",
  "groupCollapsed",
  "groupEnd",
  "count",
  "countReset",
  "time",
  "timeEnd",
  "timeLog"
] as const

type Write = typeof process.stdout.write

let holders = 0
let restore: (() => void) | undefined
let protocolWrite: Write | undefined
let stderrConsole: EffectConsole.Console | undefined

/** A console whose every method writes to stderr. @internal */
export const toStderr = (): EffectConsole.Console =>
  stderrConsole ??= new NodeConsole({ stdout: process.stderr, stderr: process.stderr })

/** Writes a protocol frame to the real stdout, redirected or not. @internal */
export const writeProtocol = (chunk: string): boolean =>
  (protocolWrite ?? process.stdout.write).call(process.stdout, chunk)

/** `true` while a redirect is held. @internal */
export const isRedirected = (): boolean => holders > 0

const patch = (): () => void => {
  const target = globalThis.console as unknown as Record<string, unknown>
  const replacement = toStderr() as unknown as Record<string, (...args: ReadonlyArray<unknown>) => void>
  const saved = new Map<string, PropertyDescriptor | undefined>()
  for (const method of STDOUT_METHODS) {
    saved.set(method, Object.getOwnPropertyDescriptor(target, method))
    target[method] = replacement[method]!.bind(replacement)
  }
  const stdout = process.stdout
  const ownWrite = Object.getOwnPropertyDescriptor(stdout, "write")
  protocolWrite = stdout.write
  const stderr = process.stderr
  stdout.write = ((...args: Parameters<Write>) => stderr.write(...(args as [string]))) as Write
  return () => {
    for (const [method, descriptor] of saved) {
      if (descriptor === undefined) delete target[method]
      else Object.defineProperty(target, method, descriptor)
    }
    if (ownWrite === undefined) delete (stdout as { write?: Write }).write
    else Object.defineProperty(stdout, "write", ownWrite)
    protocolWrite = undefined
  }
}

/**
 * Holds a redirect for as long as the scope lasts.
 *
 * @internal
 */
export const redirect = Effect.acquireRelease(
  Effect.sync(() => {
    if (holders++ === 0) restore = patch()
  }),
  () =>
    Effect.sync(() => {
      if (--holders === 0) {
        restore?.()
        restore = undefined
      }
    })
)
