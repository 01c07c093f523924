/**
 * The in-memory storage adapter of a skills catalog: a record of path →
 * content, indexed again at each walk (a `list("")`), contents read live.
 * Keys are split on `/` as they are: a key with `..`, an empty segment or a
 * backslash shows up in the listing as a name the catalog refuses.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as JsonRpc from "../../JsonRpc.ts"
import * as McpError from "../../McpError.ts"
import type * as McpSkills from "../../McpSkills.ts"
import { bytesOf } from "./digest.ts"

interface Index {
  readonly dirs: ReadonlyMap<string, ReadonlyMap<string, McpSkills.FileEntry>>
}

const indexOf = (keys: ReadonlyArray<string>): Index => {
  const dirs = new Map<string, Map<string, McpSkills.FileEntry>>()
  for (const key of keys) {
    const segments = key.split("/")
    let dir = ""
    for (let i = 0; i < segments.length; i++) {
      const name = segments[i]!
      let children = dirs.get(dir)
      if (children === undefined) dirs.set(dir, children = new Map())
      const kind = i < segments.length - 1 ? "directory" : "file"
      if (children.get(name)?.kind !== "directory") children.set(name, { name, kind })
      dir = dir === "" ? name : `${dir}/${name}`
    }
  }
  return { dirs }
}

const missing = (what: string, path: string) =>
  McpError.protocol(JsonRpc.ErrorCode.InvalidParams, `no such ${what}: ${JSON.stringify(path)}`)

/** @internal */
export const memory = (files: Readonly<Record<string, string | Uint8Array>>): McpSkills.Files => {
  let index: Index | undefined
  const current = (fresh: boolean): Index =>
    fresh || index === undefined ? (index = indexOf(Object.keys(files))) : index
  return {
    list: (dir) =>
      Effect.suspend(() => {
        const children = current(dir === "").dirs.get(dir)
        if (children !== undefined) return Effect.succeed(Array.from(children.values()))
        return dir === "" ? Effect.succeed([]) : Effect.fail(missing("folder", dir))
      }),
    read: (path) =>
      Effect.suspend(() => {
        const content = Object.hasOwn(files, path) ? files[path] : undefined
        return content === undefined ? Effect.fail(missing("file", path)) : Effect.succeed(bytesOf(content))
      })
  }
}
