/**
 * What an idle Streamable HTTP session keeps alive on the server: starts one
 * of the benchmark's HTTP servers, opens 20 sessions, takes a heap snapshot,
 * opens N more (left idle), takes another, and prints the growth per session
 * by object kind (V8 node type and constructor name). With `--retainers NAME`
 * it also prints the shortest retaining path of the last few objects named
 * NAME (e.g. `ServerResponse`).
 *
 * Usage:
 *   node --conditions=development bench/session-heap.ts [ours|official|floor] [--sessions 500] [--retainers ServerResponse]
 *
 * The snapshots go to the OS temp directory and are deleted afterwards.
 */
import { readFileSync, rmSync } from "node:fs"
import * as Http from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { openSession } from "./floor.ts"
import { assertAllGone, option, positiveInt, runMain, spawnLineChild, TS_FLAGS } from "./harness.ts"

const side = process.argv[2] !== undefined && !process.argv[2].startsWith("--") ? process.argv[2] : "ours"
if (!["ours", "official", "floor"].includes(side)) throw new Error(`unknown server ${side}`)
const SESSIONS = positiveInt(option("sessions", "BENCH_HTTP_SESSIONS"), 500, "sessions")
const retainersOf = option("retainers", "BENCH_RETAINERS")

interface Snapshot {
  readonly snapshot: {
    readonly meta: {
      readonly node_fields: ReadonlyArray<string>
      readonly node_types: readonly [ReadonlyArray<string>, ...Array<unknown>]
      readonly edge_fields: ReadonlyArray<string>
      readonly edge_types: readonly [ReadonlyArray<string>, ...Array<unknown>]
    }
  }
  readonly nodes: ReadonlyArray<number>
  readonly edges: ReadonlyArray<number>
  readonly strings: ReadonlyArray<string>
}

const load = (file: string): Snapshot => JSON.parse(readFileSync(file, "utf8")) as Snapshot

/** self size and count by "type:constructor" */
const byKind = (snap: Snapshot): Map<string, readonly [number, number]> => {
  const meta = snap.snapshot.meta
  const nf = meta.node_fields.length
  const types = meta.node_types[0]
  const iType = meta.node_fields.indexOf("type")
  const iName = meta.node_fields.indexOf("name")
  const iSize = meta.node_fields.indexOf("self_size")
  const kinds = new Map<string, readonly [number, number]>()
  for (let i = 0; i < snap.nodes.length; i += nf) {
    const type = types[snap.nodes[i + iType]!]!
    const name = type === "object" || type === "closure" ? `${type}:${snap.strings[snap.nodes[i + iName]!]}` : type
    const [count, size] = kinds.get(name) ?? [0, 0]
    kinds.set(name, [count + 1, size + snap.nodes[i + iSize]!])
  }
  return kinds
}

/** The shortest retaining path (from the GC roots) of the last `count` objects named `target`. */
const retainers = (snap: Snapshot, target: string, count: number): void => {
  const meta = snap.snapshot.meta
  const nf = meta.node_fields.length
  const ef = meta.edge_fields.length
  const types = meta.node_types[0]
  const edgeTypes = meta.edge_types[0]
  const iType = meta.node_fields.indexOf("type")
  const iName = meta.node_fields.indexOf("name")
  const iEdges = meta.node_fields.indexOf("edge_count")
  const eType = meta.edge_fields.indexOf("type")
  const eName = meta.edge_fields.indexOf("name_or_index")
  const eTo = meta.edge_fields.indexOf("to_node")
  const n = snap.nodes.length / nf
  const back: Array<Array<readonly [number, string]>> = Array.from({ length: n }, () => [])
  let e = 0
  for (let node = 0; node < n; node++) {
    const edges = snap.nodes[node * nf + iEdges]!
    for (let k = 0; k < edges; k++, e += ef) {
      const type = edgeTypes[snap.edges[e + eType]!]
      if (type === "weak" || type === "shortcut") continue
      const name = type === "element" || type === "hidden"
        ? `[${snap.edges[e + eName]}]`
        : snap.strings[snap.edges[e + eName]!]!
      back[snap.edges[e + eTo]! / nf]!.push([node, name])
    }
  }
  const label = (node: number) =>
    `${types[snap.nodes[node * nf + iType]!]}:${snap.strings[snap.nodes[node * nf + iName]!]!.slice(0, 50)}`
  const matches: Array<number> = []
  for (let node = 0; node < n; node++) {
    if (types[snap.nodes[node * nf + iType]!] === "object" && snap.strings[snap.nodes[node * nf + iName]!] === target) {
      matches.push(node)
    }
  }
  console.log(`\n${matches.length} objects named ${target}; retaining paths of the last ${count}:`)
  for (const start of matches.slice(-count)) {
    const previous = new Map<number, readonly [number, string] | null>([[start, null]])
    const queue = [start]
    let found = false
    for (let head = 0; head < queue.length && !found; head++) {
      const node = queue[head]!
      for (const [parent, name] of back[node]!) {
        if (previous.has(parent)) continue
        previous.set(parent, [node, name])
        if (parent === 0) {
          found = true
          break
        }
        queue.push(parent)
      }
    }
    const path: Array<string> = []
    for (let node = found ? 0 : start; node !== start;) {
      const [child, name] = previous.get(node)!
      path.push(`${label(node)} --${name}-->`)
      node = child
    }
    path.push(label(start))
    console.log(`  ${path.slice(-24).join("\n    ")}\n`)
  }
}

const main = async (): Promise<void> => {
  const script = side === "ours" ? "bench/servers/http-ours.ts" : `bench/servers/http-${side}.mjs`
  const server = spawnLineChild([...(side === "ours" ? TS_FLAGS : []), "--expose-gc", script])
  const files = [1, 2].map((i) => join(tmpdir(), `session-heap-${process.pid}-${i}.heapsnapshot`))
  try {
    const { url } = JSON.parse(await server.nextLine()) as { url: string }
    const target = new URL(url)
    const agent = new Http.Agent({ keepAlive: true, maxSockets: 4 })
    const open = async (count: number) => {
      let issued = 0
      await Promise.all(Array.from({ length: 4 }, async () => {
        while (issued < count) {
          issued++
          await openSession(agent, target)
        }
      }))
    }
    const command = async (line: string) => {
      server.child.stdin!.write(`${line}\n`)
      return await server.nextLine(120_000)
    }
    await open(20)
    console.log(`before: ${await command("mem")}`)
    await command(`snapshot ${files[0]}`)
    await open(SESSIONS)
    console.log(`after ${SESSIONS} more sessions: ${await command("mem")}`)
    await command(`snapshot ${files[1]}`)
    agent.destroy()
    await server.stop()

    const after = load(files[1]!)
    const a = byKind(load(files[0]!))
    const b = byKind(after)
    const growth = [...b].map(([kind, [count, size]]) =>
      [kind, count - (a.get(kind)?.[0] ?? 0), size - (a.get(kind)?.[1] ?? 0)] as const
    ).sort((x, y) => y[2] - x[2])
    const total = growth.reduce((sum, [, , size]) => sum + size, 0)
    console.log(
      `\n${side}: heap growth ${(total / 1024).toFixed(0)} KB for ${SESSIONS} sessions = ` +
        `${(total / SESSIONS / 1024).toFixed(2)} KB per idle session (self sizes)\n`
    )
    console.log("| B / session | objects / session | kind |")
    console.log("|---:|---:|---|")
    for (const [kind, count, size] of growth.slice(0, 30)) {
      console.log(`| ${(size / SESSIONS).toFixed(0)} | ${(count / SESSIONS).toFixed(2)} | ${kind} |`)
    }
    if (retainersOf !== undefined) retainers(after, retainersOf, 2)
  } finally {
    await server.stop()
    for (const file of files) rmSync(file, { force: true })
  }
  await assertAllGone()
}

runMain(main)
