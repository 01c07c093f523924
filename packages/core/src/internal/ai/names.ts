/**
 * Model-safe tool names: the names of MCP tools as a language model may see
 * them. Providers accept `[a-zA-Z0-9_-]`, at most 64 characters (and some
 * want a letter or `_` first), while a server may name a tool anything.
 *
 * @internal
 */

/** The longest name providers accept. @internal */
export const MAX_LENGTH = 64

const SAFE = /^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$/

/** Whether a name may be shown to a model as it is. @internal */
export const isSafe = (name: string): boolean => SAFE.test(name)

// FNV-1a over the UTF-16 code units: 8 hex digits, the same for the same name
const hash = (name: string): string => {
  let h = 0x811c9dc5
  for (let i = 0; i < name.length; i++) {
    h ^= name.charCodeAt(i)
    h = Math.imul(h, 0x01000193) >>> 0
  }
  return h.toString(16).padStart(8, "0")
}

// `read.file` → `read_file_1a2b3c4d`: safe characters, a safe first one, and
// a hash of the whole original so that names differing only in unsafe
// characters (or beyond the cut) stay apart
const rename = (name: string): string => {
  const suffix = `_${hash(name)}`
  const safe = name.replace(/[^a-zA-Z0-9_-]/g, "_")
  const start = /^[a-zA-Z_]/.test(safe) ? safe : `_${safe}`
  return `${start.slice(0, MAX_LENGTH - suffix.length)}${suffix}`
}

/**
 * The model name of each original name, in order: a safe name stays as it
 * is; any other is renamed (safe characters plus a hash of the original);
 * a name that would be taken twice gets a counter. Safe names are placed
 * first, so they never move because of a renamed one. The same list always
 * gives the same names, and a name keeps its model name across lists unless
 * it collides. Duplicate originals get `undefined` after the first.
 *
 * @internal
 */
export const modelNames = (names: ReadonlyArray<string>): Array<string | undefined> => {
  const out: Array<string | undefined> = names.map(() => undefined)
  const taken = new Set<string>()
  const seen = new Set<string>()
  const pending: Array<number> = []
  for (let i = 0; i < names.length; i++) {
    const name = names[i]!
    if (seen.has(name)) continue
    seen.add(name)
    if (isSafe(name) && !taken.has(name)) {
      taken.add(name)
      out[i] = name
    } else {
      pending.push(i)
    }
  }
  for (const i of pending) {
    const base = rename(names[i]!)
    let candidate = base
    // at most `names.length` names are taken, so this ends within that many tries
    for (let n = 2; taken.has(candidate) && n <= names.length + 1; n++) {
      const counter = `_${n}`
      candidate = `${base.slice(0, MAX_LENGTH - counter.length)}${counter}`
    }
    taken.add(candidate)
    out[i] = candidate
  }
  return out
}
